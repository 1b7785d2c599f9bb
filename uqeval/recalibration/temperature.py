"""Temperature scaling of a classifier (Guo, Pleiss, Sun, Weinberger 2017).

One scalar :math:`T > 0` divides the logits, :math:`p = \\operatorname{softmax}(z / T)`,
and is chosen to minimise the negative log-likelihood on a calibration set.
``fit_temperature`` returns a JSON-serialisable state, ``apply_temperature``
uses it; neither touches files.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError
from ..validation import as_float_array, check_nonempty

__all__ = ["fit_temperature", "apply_temperature", "TEMPERATURE_BOUNDS"]

#: Search interval of the temperature; the optimum is clipped to it.
TEMPERATURE_BOUNDS = (1e-2, 1e2)

_KINDS = ("logits", "proba")


#: rows per block of the kernels below: the (block, K) work buffer stays in cache between the
#: passes (log, max, shift; multiply, exp, row sum) instead of streaming the (N, K) block through
#: memory once per pass
_BLOCK_ROWS = 8192


#: up to this many classes :func:`_row_max` takes the maximum column by column
_COLUMNWISE_MAX = 32


def _row_max(a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``np.max(a, axis=1, out=out)`` (NaN propagates): for a few classes as K - 1 element-wise maxima
    of whole columns, ~4x faster than numpy's reduction over a short row (a loop over classes)."""
    if a.shape[1] > _COLUMNWISE_MAX:
        return np.max(a, axis=1, out=out)
    np.copyto(out, a[:, 0])
    for j in range(1, a.shape[1]):  # classes, not rows
        np.maximum(out, a[:, j], out=out)
    return out


def _log_scores(values, kind: str) -> np.ndarray:
    """(N, K) logits, or log-probabilities from ``kind="proba"`` (0 -> -inf), shifted so that each
    row's maximum is 0; a new array, computed in blocks of rows."""
    if kind not in _KINDS:
        raise InputError(f"kind must be one of {_KINDS}, got {kind!r}")
    z = as_float_array(values, "proba" if kind == "proba" else "logits", ndim=2)
    check_nonempty(z.shape[0], "input")
    if z.shape[1] < 2:
        raise InputError(f"temperature scaling needs at least 2 classes, got {z.shape[1]} column(s)")
    out = np.empty_like(z)
    zmax = np.empty(min(z.shape[0], _BLOCK_ROWS))
    n_bad, first = 0, -1
    for start in range(0, z.shape[0], _BLOCK_ROWS):  # blocks of rows, not rows
        part, dst = z[start : start + _BLOCK_ROWS], out[start : start + _BLOCK_ROWS]
        if kind == "proba":
            if np.isnan(part).any() or (part < 0).any():
                raise InputError("probabilities must be finite and >= 0; run validate_proba first")
            with np.errstate(divide="ignore"):
                np.log(part, out=dst)
        else:
            dst[...] = part
        m = _row_max(dst, zmax[: len(dst)])
        bad_row = ~np.isfinite(m)  # the row max is NaN with any NaN, +inf with any +inf, -inf if all are -inf
        if bad_row.any():
            first = first if n_bad else start + int(np.flatnonzero(bad_row)[0])
            n_bad += int(bad_row.sum())
        with np.errstate(invalid="ignore"):  # bad rows (reported below) may give inf - inf
            np.subtract(dst, m[:, None], out=dst)  # softmax is shift-invariant
    if n_bad:
        raise InputError(
            f"logits must be finite (-inf allowed) with a finite value in every row: "
            f"{n_bad} bad row(s) (first at row {first})"
        )
    return out


def _labels(labels, n: int, k: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1 or len(y) != n:
        raise InputError(f"labels must be (N,) with N = {n}, got shape {y.shape}")
    if y.dtype.kind not in "iu":
        yf = y.astype(np.float64)
        if not np.all(np.isfinite(yf) & (yf == np.floor(yf))):
            raise InputError("labels must be integer class ids; run validate_proba first")
        y = yf.astype(np.int64)
    bad = (y < 0) | (y >= k)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(f"labels must lie in 0..{k - 1}: found {y[first]} at row {first}")
    return y.astype(np.intp, copy=False)


def _nll(
    zc: np.ndarray,
    z_y: np.ndarray,
    temperature: float,
    work: np.ndarray | None = None,
    lse: np.ndarray | None = None,
) -> float:
    r"""Mean of :math:`\log\sum_k e^{z_k/T} - z_y/T` for row-max-shifted logits (exact, no clipping).

    ``work`` (a (block, K) buffer) and ``lse`` (N,): scratch space reused across the ~20 calls of
    the optimiser. Computed in blocks of rows; the mean is taken over the whole (N,) array, so the
    value does not depend on the block size.
    """
    beta = 1.0 / temperature
    n, k = zc.shape
    work = np.empty((min(n, _BLOCK_ROWS), k)) if work is None else work
    lse = np.empty(n) if lse is None else lse
    ones = np.ones(k)
    for start in range(0, n, _BLOCK_ROWS):  # blocks of rows, not rows
        part = zc[start : start + _BLOCK_ROWS]
        w = np.multiply(part, beta, out=work[: len(part)])
        np.exp(w, out=w)
        # zc <= 0 with a 0 in each row: no overflow, sum >= 1; the row sums as one matrix-vector product
        np.matmul(w, ones, out=lse[start : start + _BLOCK_ROWS])
    np.log(lse, out=lse)
    lse -= beta * z_y
    return float(np.mean(lse))


def _slope(
    zc: np.ndarray, zf: np.ndarray, z_y: np.ndarray, beta: float, work: np.ndarray
) -> tuple[float, float]:
    r"""The first two derivatives in :math:`\beta = 1/T` of the mean NLL (:func:`_nll`): the means over the
    rows of :math:`E_\beta[z] - z_y` and of :math:`\operatorname{Var}_\beta[z]` under
    :math:`\operatorname{softmax}(\beta z)`, in blocks of rows like :func:`_nll`; ``zf`` is ``zc`` with its
    ``-inf`` (classes of probability 0, of weight 0) set to 0."""
    n, k = zc.shape
    ones = np.ones(k)
    first = second = 0.0
    for start in range(0, n, _BLOCK_ROWS):  # blocks of rows, not rows
        stop = min(start + _BLOCK_ROWS, n)
        w = np.multiply(zc[start:stop], beta, out=work[: stop - start])
        np.exp(w, out=w)
        total = w @ ones
        np.multiply(w, zf[start:stop], out=w)
        mean = (w @ ones) / total
        square = np.einsum("ij,ij->i", w, zf[start:stop]) / total
        first += float(mean.sum() - z_y[start:stop].sum())
        second += float(square.sum() - np.dot(mean, mean))
    return first / n, second / n


def _slope_root(zc: np.ndarray, z_y: np.ndarray, low: float, high: float, work: np.ndarray) -> float:
    r"""The :math:`\beta` in ``[low, high]`` that minimises the convex mean NLL (:func:`fit_temperature`): the
    root of its slope by Newton's method safeguarded as Numerical Recipes' ``rtsafe`` (a geometric
    bisection of the bracket when a step would leave it or not halve the step before it), or the end of
    ``[low, high]`` that the bracket closes on when the slope keeps its sign."""
    zf = zc if np.isfinite(zc).all() else np.where(np.isfinite(zc), zc, 0.0)
    beta, last = min(max(1.0, low), high), math.log(high / low)
    for _ in range(200):  # a bisection halves log(high / low): 45 of them reach 1e-12 from [0.01, 100]
        slope, curvature = _slope(zc, zf, z_y, beta, work)
        if slope == 0.0:
            return beta
        if slope > 0.0:
            high = beta
        else:
            low = beta
        step = beta - slope / curvature if curvature > 0.0 else math.nan
        if not low < step < high or abs(math.log(step / beta)) > last / 2.0:
            step = math.sqrt(low * high)
        last = abs(math.log(step / beta))
        if last <= 1e-12 or high <= low * (1.0 + 1e-12):
            return step
        beta = step
    return beta


def fit_temperature(
    logits_or_log_proba,
    labels,
    *,
    kind: str = "logits",
    bounds: tuple[float, float] = TEMPERATURE_BOUNDS,
) -> dict[str, Any]:
    r"""Fit the temperature that minimises the negative log-likelihood (Guo et al. 2017).

    .. math::
        T^\star = \arg\min_{T \in [T_{lo}, T_{hi}]} \frac1N \sum_i
        \Big(\log \sum_k e^{z_{ik}/T} - z_{i y_i}/T\Big)

    The objective is convex in :math:`\beta = 1/T` (its second derivative is the mean variance of
    :math:`z` under :math:`\operatorname{softmax}(\beta z)`), so its slope is increasing and the
    minimiser over :math:`\beta \in [1/T_{hi}, 1/T_{lo}]` is the end where the slope keeps its sign, or
    the slope's root, found by a safeguarded Newton's method to a relative :math:`10^{-12}`. No scipy: the
    verdict of ``score`` fits it too, and ``score`` does not load scipy's optimisers.
    The NLL here is exact (no clipping), unlike ``classification_accuracy``'s
    ``nll``, which clips probabilities at machine epsilon as scikit-learn does.

    Parameters
    ----------
    logits_or_log_proba : (N, K) logits or log-probabilities (the same thing up to a
        per-row constant), or probabilities with ``kind="proba"`` (their log is used).
    labels : (N,) integer class ids.
    kind : ``"logits"`` (default) or ``"proba"``.
    bounds : search interval of :math:`T` (default ``(0.01, 100)``); an optimum at
        an end means the data want a more extreme temperature.

    Returns
    -------
    dict, JSON-serialisable: ``method`` ("temperature"), ``temperature`` (:math:`T^\star`),
    ``nll_before`` (NLL at T = 1), ``nll_after`` (NLL at :math:`T^\star`, never above
    ``nll_before`` when 1 lies in ``bounds``).

    Raises
    ------
    InputError
        Bad shapes or labels, or a label with probability 0 (its NLL is infinite at
        every temperature).
    """
    zc = _log_scores(logits_or_log_proba, kind)
    n, k = zc.shape
    y = _labels(labels, n, k)
    z_y = np.take_along_axis(zc, y[:, None], axis=1)[:, 0]  # the label's score (no (N,) row index)
    if not np.isfinite(z_y).all():
        first = int(np.flatnonzero(~np.isfinite(z_y))[0])
        raise InputError(
            f"the label has probability 0 in {int((~np.isfinite(z_y)).sum())} row(s) (first at row {first}); "
            "no temperature gives it a finite log-likelihood: pass logits, or clip the probabilities"
        )
    lo, hi = float(bounds[0]), float(bounds[1])
    if not (0.0 < lo < hi < math.inf):
        raise InputError(f"bounds must satisfy 0 < low < high < inf, got {bounds}")
    work, lse = np.empty((min(n, _BLOCK_ROWS), k)), np.empty(n)
    temperature = 1.0 / _slope_root(zc, z_y, 1.0 / hi, 1.0 / lo, work)
    nll_after = _nll(zc, z_y, temperature, work, lse)
    nll_before = _nll(zc, z_y, 1.0, work, lse)
    if lo <= 1.0 <= hi and nll_before < nll_after:  # the root's rounding; T = 1 is a candidate too
        temperature, nll_after = 1.0, nll_before
    return {
        "method": "temperature",
        "temperature": temperature,
        "nll_before": nll_before,
        "nll_after": nll_after,
    }


def apply_temperature(proba_or_logits, state: dict[str, Any], *, kind: str = "logits") -> np.ndarray:
    r"""Rescale predictions with a fitted temperature: :math:`p = \operatorname{softmax}(z / T)`.

    For probabilities (``kind="proba"``) this is :math:`p_k^{1/T} / \sum_j p_j^{1/T}`;
    zero probabilities stay zero.

    Parameters
    ----------
    proba_or_logits : (N, K) logits (``kind="logits"``, default) or probabilities (``kind="proba"``).
    state : the dict returned by :func:`fit_temperature` (e.g. read back from JSON).

    Returns
    -------
    (N, K) float64 probabilities, rows summing to 1.
    """
    if not isinstance(state, dict) or state.get("method") != "temperature":
        raise InputError("state is not a temperature-scaling state (expected method 'temperature')")
    try:
        temperature = float(state["temperature"])
    except (KeyError, TypeError, ValueError):
        raise InputError("temperature-scaling state has no numeric 'temperature'") from None
    if not (math.isfinite(temperature) and temperature > 0):
        raise InputError(f"temperature must be finite and > 0, got {temperature:g}")
    e = _log_scores(proba_or_logits, kind)  # a new array: rescaled in place, in blocks of rows
    for start in range(0, e.shape[0], _BLOCK_ROWS):  # blocks of rows, not rows
        part = e[start : start + _BLOCK_ROWS]
        np.divide(part, temperature, out=part)
        np.exp(part, out=part)
        part /= part.sum(axis=1, keepdims=True)
    return e
