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

    err = y - yhat
    abs_err = np.abs(err)
    denom = np.abs(yhat) + np.abs(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(denom > 0, 2.0 * abs_err / denom, 0.0)
    ss_res = float(np.sum(np.square(err)))

    if n < 2:
        r2 = corr = float("nan")
    else:
        ss_tot = float(np.sum(np.square(y - np.mean(y))))
        if ss_tot > 0:
            r2 = 1.0 - ss_res / ss_tot
        else:
            r2 = 1.0 if ss_res == 0 else 0.0
        yc, pc = y - np.mean(y), yhat - np.mean(yhat)
        sy, sp = np.sqrt(np.sum(yc * yc)), np.sqrt(np.sum(pc * pc))
        corr = float(np.sum(yc * pc) / (sy * sp)) if sy > 0 and sp > 0 else float("nan")
        if np.isfinite(corr):
            corr = min(1.0, max(-1.0, corr))

    return {
        "mae": float(np.mean(abs_err)),
        "rmse": float(np.sqrt(ss_res / n)),
        "mdae": float(np.median(abs_err)),
        "marpd": float(100.0 * np.mean(rel)),
        "r2": float(r2),
        "corr": corr,
    }
