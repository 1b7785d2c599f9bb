"""Accuracy of point predictions (the mean of a predictive distribution)."""

from __future__ import annotations

import numpy as np

from ..validation import as_float_array, check_finite, check_nonempty, check_same_length


def regression_accuracy(y_true, mean) -> dict[str, float]:
    r"""Accuracy metrics of point predictions :math:`\hat y_i` (here the predictive mean).

    With :math:`e_i = y_i - \hat y_i`:

    .. math::
        \text{mae} = \frac1N\sum_i |e_i|, \quad
        \text{rmse} = \Big(\frac1N\sum_i e_i^2\Big)^{1/2}, \quad
        \text{mdae} = \operatorname{median}_i |e_i|,

        \text{marpd} = \frac{100}N\sum_i \frac{2|e_i|}{|\hat y_i| + |y_i|}, \quad
        \text{r2} = 1 - \frac{\sum_i e_i^2}{\sum_i (y_i - \bar y)^2}, \quad
        \text{corr} = \text{Pearson}(y, \hat y)

    as in the Uncertainty Toolbox's ``get_all_accuracy_metrics`` (0.1.1), which uses
    scikit-learn's ``r2_score`` and ``numpy.corrcoef``.

    Returns
    -------
    ``{"mae", "rmse", "mdae", "marpd", "r2", "corr"}`` (floats). mae, rmse, mdae and marpd
    are lower-is-better; r2 and corr higher-is-better.

    Notes
    -----
    Edge cases: a row with :math:`y_i = \hat y_i = 0` contributes 0 to marpd (the
    toolbox gives NaN for the whole metric). r2 follows scikit-learn's default
    ``force_finite=True``: for constant targets it is 1.0 if every prediction is exact,
    else 0.0; with fewer than 2 rows it is NaN. corr is NaN when the targets or the
    predictions are constant or N < 2 (Pearson's coefficient is undefined there).
    """
    y = as_float_array(y_true, "y_true")
    yhat = as_float_array(mean, "mean")
    n = check_same_length([y, yhat], ["y_true", "mean"])
    check_nonempty(n)
    check_finite(y, "y_true")
    check_finite(yhat, "mean")

    out = accuracy_batch(y[None, :], yhat[None, :])
    return {k: float(v[0]) for k, v in out.items()}


ACCURACY_KEYS = ("mae", "rmse", "mdae", "marpd", "r2", "corr")


def accuracy_batch(y: np.ndarray, yhat: np.ndarray, keys=ACCURACY_KEYS) -> dict[str, np.ndarray]:
    """The metrics of :func:`regression_accuracy` for B sets of rows at once: (B, N) arrays -> (B,) each.

    The one place the formulas live: :func:`regression_accuracy` calls it with B = 1 and
    the bootstrap with resampled rows.
    """
    n = y.shape[-1]
    err = y - yhat
    out: dict[str, np.ndarray] = {}
    if "mae" in keys:
        out["mae"] = np.abs(err).mean(axis=-1)
    if "rmse" in keys:
        out["rmse"] = np.sqrt(np.square(err).mean(axis=-1))
    if "mdae" in keys:
        out["mdae"] = np.median(np.abs(err), axis=-1)  # O(N) selection per set
    if "marpd" in keys:
        denom = np.abs(yhat) + np.abs(y)
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = np.where(denom > 0, 2.0 * np.abs(err) / denom, 0.0)
        out["marpd"] = 100.0 * rel.mean(axis=-1)
    if "r2" in keys:
        ss_res = np.square(err).sum(axis=-1)
        ss_tot = np.square(y - y.mean(axis=-1, keepdims=True)).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            r2 = np.where(ss_tot > 0, 1.0 - ss_res / ss_tot, np.where(ss_res == 0, 1.0, 0.0))
        out["r2"] = r2 if n >= 2 else np.full_like(r2, np.nan)
    if "corr" in keys:
        yc = y - y.mean(axis=-1, keepdims=True)
        pc = yhat - yhat.mean(axis=-1, keepdims=True)
        sy = np.sqrt(np.square(yc).sum(axis=-1))
        sp = np.sqrt(np.square(pc).sum(axis=-1))
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (yc * pc).sum(axis=-1) / (sy * sp)
        r = np.clip(np.where((sy > 0) & (sp > 0), r, np.nan), -1.0, 1.0)
        out["corr"] = r if n >= 2 else np.full_like(r, np.nan)
    return out


def accuracy_rows(y_true: np.ndarray, mean: np.ndarray) -> dict[str, tuple[np.ndarray | None, object]]:
    """Per-row form of each accuracy metric: ``{key: (score, resample)}``.

    ``score`` is a per-row array whose mean is the metric (mae, marpd), else None;
    ``resample(idx)`` gives the metric of resampled rows ``(B, N) -> (B,)``.
    """
    y, yhat = np.asarray(y_true, dtype=np.float64), np.asarray(mean, dtype=np.float64)
    abs_err = np.abs(y - yhat)
    denom = np.abs(yhat) + np.abs(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = 100.0 * np.where(denom > 0, 2.0 * abs_err / denom, 0.0)
    out: dict[str, tuple[np.ndarray | None, object]] = {"mae": (abs_err, None), "marpd": (rel, None)}
    for key in ("rmse", "mdae", "r2", "corr"):
        out[key] = (None, (lambda k: lambda idx: accuracy_batch(y[idx], yhat[idx], (k,))[k])(key))
    return out
