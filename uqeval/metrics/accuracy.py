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

    out = accuracy_batch(y, yhat)
    return {k: float(v[0]) for k, v in out.items()}


ACCURACY_KEYS = ("mae", "rmse", "mdae", "marpd", "r2", "corr")


def accuracy_batch(
    y: np.ndarray,
    yhat: np.ndarray,
    keys=ACCURACY_KEYS,
    weights: np.ndarray | None = None,
    blas: bool = True,
) -> dict[str, np.ndarray]:
    """The metrics of :func:`regression_accuracy` for B sets of rows at once -> (B,) each.

    ``y``, ``yhat``: (N,) arrays; ``weights``: (B, N) row weights (set ``b`` counts row ``i``
    ``weights[b, i]`` times: a bootstrap replicate), or None for the rows themselves (B = 1).
    The one place the formulas live: :func:`regression_accuracy` calls it without weights and
    the bootstrap with them; integer weights give the metric of the rows repeated that often.
    ``blas=False``: weighted sums of (N,) terms by :func:`numpy.einsum` rather than a BLAS product (one set of
    user weights: :meth:`uqeval.catalogue.RowStat.resampler`).
    """
    from .blocks import rowwise

    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(y.shape[-1]) if w is None else w.sum(axis=-1)
    buf = (
        np.empty(y.shape[-1]) if w is None else None
    )  # unweighted: per-row terms block by block, then summed

    def wsum(fn, *arrays: np.ndarray) -> np.ndarray:  # per-row terms fn(*arrays), (N,) or (B, N) -> (B,) sums
        if w is None:
            x = arrays[0] if fn is None else rowwise(fn, *arrays, out=buf)
            return x.sum(axis=-1).reshape(-1)
        x = arrays[0] if fn is None else fn(*arrays)
        if x.ndim > 1:
            return np.einsum("bi,bi->b", w, x)
        return w @ x if blas else np.einsum("bi,i->b", w, x)

    def wmean(fn, *arrays: np.ndarray) -> np.ndarray:
        return wsum(fn, *arrays) / total

    def rel(y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        denom = np.abs(yhat) + np.abs(y)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(denom > 0, 2.0 * np.abs(y - yhat) / denom, 0.0)

    def abs_err(y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        return np.abs(y - yhat)

    def sq_err(y: np.ndarray, yhat: np.ndarray) -> np.ndarray:
        return np.square(y - yhat)

    out: dict[str, np.ndarray] = {}
    if "mae" in keys:
        out["mae"] = wmean(abs_err, y, yhat)
    if "rmse" in keys:
        out["rmse"] = np.sqrt(wmean(sq_err, y, yhat))
    if "mdae" in keys:
        out["mdae"] = _weighted_median(rowwise(abs_err, y, yhat), w, overwrite=True)  # a copy of ours
    if "marpd" in keys:
        out["marpd"] = 100.0 * wmean(rel, y, yhat)
    if "r2" in keys or "corr" in keys:
        my = wmean(None, y)[:, None]
        ss_tot = wsum(lambda y: np.square(y - my), y)
    if "r2" in keys:
        out["r2"] = r2_from_sums(wsum(sq_err, y, yhat), ss_tot, total)
    if "corr" in keys:
        mp = wmean(None, yhat)[:, None]
        ss_pred = wsum(lambda yhat: np.square(yhat - mp), yhat)
        cross = wsum(lambda y, yhat: (y - my) * (yhat - mp), y, yhat)
        out["corr"] = corr_from_sums(cross, ss_tot, ss_pred, total)
    return out


def r2_from_sums(ss_res, ss_tot, total) -> np.ndarray:
    r"""R² from the (weighted) sum of squared errors, the targets' centred sum of squares and the number of rows
    (total weight): :math:`1 - SS_\mathrm{res}/SS_\mathrm{tot}`, scikit-learn's ``force_finite`` convention
    (1 for constant targets predicted exactly, else 0) and NaN below 2 rows. The one place of these
    conventions: :func:`accuracy_batch` and the streamed state (:class:`uqeval.catalogue.states.AccuracyMoments`,
    from merged moments) call it."""
    ss_res, ss_tot = np.asarray(ss_res, dtype=np.float64), np.asarray(ss_tot, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        r2 = np.where(ss_tot > 0, 1.0 - ss_res / ss_tot, np.where(ss_res == 0, 1.0, 0.0))
    return np.where(np.asarray(total) >= 2, r2, np.nan)


def corr_from_sums(cross, ss_tot, ss_pred, total) -> np.ndarray:
    r"""Pearson's r from the centred cross product and the two centred sums of squares,
    :math:`S_{yp}/(\sqrt{S_{yy}}\sqrt{S_{pp}})` (each root taken apart: their product would overflow where
    the sums pass ~1e154), clipped to [-1, 1]; NaN when either side is constant or below 2 rows
    (:func:`accuracy_batch` and :class:`uqeval.catalogue.states.AccuracyMoments` call it)."""
    sy = np.sqrt(np.asarray(ss_tot, dtype=np.float64))
    sp = np.sqrt(np.asarray(ss_pred, dtype=np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.asarray(cross, dtype=np.float64) / (sy * sp)
    r = np.clip(np.where((sy > 0) & (sp > 0), r, np.nan), -1.0, 1.0)
    return np.where(np.asarray(total) >= 2, r, np.nan)


def _weighted_median(x: np.ndarray, w: np.ndarray | None, overwrite: bool = False) -> np.ndarray:
    """Median of ``x`` (N,) -> (1,), or per row of weights ``w`` (B, N) -> (B,).

    With integer weights, the median of the rows repeated ``w[b, i]`` times (mean of the two middle
    values of an even count). Any non-negative weights: the mean of the smallest value whose cumulative
    weight reaches half the total and the smallest whose cumulative weight exceeds it (the two coincide
    unless the half falls on a boundary), so that scaling the weights leaves it unchanged.
    ``overwrite``: ``x`` may be reordered (no copy)."""
    if w is None:  # np.median's selection and mean of the middle pair, without its masked-array NaN check
        # (numpy.ma, ~10 ms of start-up; x is finite here): O(N)
        n, h = x.size, x.size // 2
        part = x if overwrite else x.copy()
        part.partition([h - 1, h] if n % 2 == 0 else [h])
        return np.atleast_1d(np.mean(part[h - 1 : h + 1]) if n % 2 == 0 else part[h])
    if w.shape[0] == 1:  # one set of weights (--weights): selection in O(N), no sort
        return np.array([weighted_median_select(x, w[0], float(w[0].sum()) / 2.0)])
    # any order of ties gives the same values at the crossing (a block of equal values has one cumulative
    # weight at its end): quicksort, ~5x faster than a stable sort on 1e6 rows
    order = np.argsort(x)
    xs = x[order]
    cum = np.cumsum(w[:, order], axis=1)  # O(B N)
    half = cum[:, -1:] / 2.0
    # integer weights, total T: the first row whose count reaches T/2 holds the lower middle value (0-based
    # position ceil(T/2) - 1), the first whose count exceeds T/2 the upper one (position floor(T/2))
    i_lo = np.minimum((cum < half).sum(axis=1), x.size - 1)
    i_hi = np.minimum((cum <= half).sum(axis=1), x.size - 1)
    return 0.5 * (xs[i_lo] + xs[i_hi])


def weighted_median_select(x: np.ndarray, w: np.ndarray, mid: float, below: float = 0.0) -> float:
    """The weighted median of :func:`_weighted_median` in O(N): the mean of the smallest value whose cumulative
    weight reaches ``mid`` (half the total) and the smallest whose cumulative weight exceeds it. ``below``:
    the weight of rows left out below ``x`` (the streamed MdAE's second pass keeps the rows of the median's
    histogram codes only, :class:`uqeval.catalogue.states.MedianAbsErr`)."""
    lo = _weighted_select(x, w, mid, strict=False, below=below)
    hi = lo if below + w[x <= lo].sum() > mid else _weighted_select(x, w, mid, strict=True, below=below)
    return 0.5 * (lo + hi)


def _weighted_select(x: np.ndarray, w: np.ndarray, target: float, strict: bool, below: float = 0.0) -> float:
    """The smallest value ``v`` of ``x`` whose weight at or below it, W(x <= v), reaches ``target`` (exceeds
    it: ``strict``): the value at that crossing of the cumulative weights of the sorted rows, found by
    quickselect on median pivots (each step keeps at most half of the rows: O(N) in all). ``below``: the
    weight of rows below ``x`` that are not in it."""

    def reaches(total: float) -> bool:
        return total > target if strict else total >= target

    while x.size > 64:
        pivot = np.partition(x, x.size // 2)[x.size // 2]
        left = x < pivot
        w_left = below + float(w[left].sum())  # W(x < pivot)
        if reaches(w_left):  # the crossing is below the pivot
            x, w = x[left], w[left]
            continue
        w_upto = w_left + float(w[x == pivot].sum())  # W(x <= pivot)
        if reaches(w_upto):
            return float(pivot)
        right = x > pivot
        x, w, below = x[right], w[right], w_upto
    order = np.argsort(x)
    cum = below + np.cumsum(w[order])
    i = int(np.count_nonzero(~(cum > target) if strict else cum < target))
    return float(x[order][min(i, x.size - 1)])


def accuracy_rows(y_true: np.ndarray, mean: np.ndarray) -> dict[str, tuple[np.ndarray | None, object]]:
    """Per-row form of each accuracy metric: ``{key: (score, resample)}``.

    ``score`` is a per-row array whose mean is the metric (mae, marpd), else None;
    ``resample(weights)`` gives the metric of weighted rows ``(B, N) -> (B,)`` (see :func:`accuracy_batch`).
    """
    y, yhat = np.asarray(y_true, dtype=np.float64), np.asarray(mean, dtype=np.float64)
    abs_err = np.abs(y - yhat)
    denom = np.abs(yhat) + np.abs(y)
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = 100.0 * np.where(denom > 0, 2.0 * abs_err / denom, 0.0)
    out: dict[str, tuple[np.ndarray | None, object]] = {"mae": (abs_err, None), "marpd": (rel, None)}
    for key in ("rmse", "mdae", "r2", "corr"):
        out[key] = (
            None,
            (lambda k: lambda w, blas=True: accuracy_batch(y, yhat, (k,), weights=w, blas=blas)[k])(key),
        )
    return out
