r"""Murphy diagrams: mean elementary scores over a grid of thresholds θ (Ehm, Gneiting, Jordan & Krüger 2016).

Every consistent scoring function of a quantile or an expectile is a mixture of elementary scores
(Ehm et al. 2016, Theorem 1). With forecast ``x`` and target ``y``:

* quantile at level α: :math:`S_\theta(x, y) = (1\{y < x\} - \alpha)(1\{\theta < x\} - 1\{\theta < y\})`,
  i.e. :math:`1-\alpha` when :math:`y \le \theta < x`, :math:`\alpha` when :math:`x \le \theta < y`, else 0;
* expectile at level α (the mean: α = 1/2):
  :math:`S_\theta(x, y) = |1\{y < x\} - \alpha|\,|y - \theta|` on the same two cases, else 0.

The Murphy curve is :math:`\theta \mapsto \frac1N \sum_i S_\theta(x_i, y_i)` (the convention of the
``scores`` package's ``murphy_score``). Integrated over θ it gives the consistent score: the
pinball loss :math:`(1\{y < x\} - \alpha)(x - y)` for quantiles, and
:math:`\tfrac12 |1\{y < x\} - \alpha|(x - y)^2` for expectiles, so :math:`(x - y)^2/4` for the mean
(a quarter of the squared error: the normalisation of Ehm et al. and of ``scores``). A probability
forecast of a binary event is its mean, so its curve is the expectile one on :math:`\theta \in [0, 1]`
and integrates to a quarter of the Brier score.

A forecast dominates another when its curve is nowhere above and somewhere below it: it is then
preferred under every consistent scoring function (Ehm et al. 2016, Corollary 1). Between neighbouring
forecast and target values (:func:`jump_points`) a curve is constant (quantile) or linear (expectile), so
comparing two curves there, from the right and from the left (``left_limit``), decides dominance exactly.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

#: Thresholds of the grid of ``uqeval score --murphy``.
GRID_POINTS = 201


def theta_grid(
    *arrays: np.ndarray, points: int = GRID_POINTS, bounds: tuple[float, float] | None = None
) -> np.ndarray:
    """``points`` evenly spaced thresholds from the smallest to the largest value of ``arrays``
    (forecasts and targets), or over ``bounds`` (probabilities: ``(0, 1)``)."""
    if bounds is None:
        lo = min(float(np.min(a)) for a in arrays)
        hi = max(float(np.max(a)) for a in arrays)
    else:
        lo, hi = bounds
    if not hi > lo:
        hi = lo + 1.0 if lo == hi else hi
    return np.linspace(lo, hi, points)


def _suffix_sums(
    keys: np.ndarray, weights: np.ndarray, thetas: np.ndarray, side: Literal["left", "right"]
) -> np.ndarray:
    """``sum(weights[keys > θ])`` (``side="right"``) or ``sum(weights[keys >= θ])`` (``"left"``) for every θ:
    one sort of the keys, then a search per threshold. ``weights`` may be (N,) or (k, N)."""
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    w = np.atleast_2d(weights)[:, order]
    suffix = np.concatenate([np.cumsum(w[:, ::-1], axis=1)[:, ::-1], np.zeros((w.shape[0], 1))], axis=1)
    return suffix[:, np.searchsorted(k, thetas, side=side)]


def murphy_curve(
    forecast,
    y_true,
    thetas,
    functional: str = "expectile",
    alpha: float = 0.5,
    left_limit: bool = False,
    weights=None,
) -> np.ndarray:
    r"""Mean elementary score of ``forecast`` (N,) against ``y_true`` (N,) at each of ``thetas`` (G,).

    ``functional``: ``"quantile"`` or ``"expectile"`` (level ``alpha``). With
    :math:`c_i = 1\{y_i < x_i\} - \alpha` and :math:`D_i(\theta) = 1\{\theta < x_i\} - 1\{\theta < y_i\}`:

    .. math:: S^{q}_\theta = c_i D_i(\theta), \qquad
              S^{e}_\theta = c_i (\theta - y_i) |D_i(\theta)|, \quad
              |D_i| = 1\{\theta < \max(x_i, y_i)\} - 1\{\theta < \min(x_i, y_i)\},

    so each curve is a few suffix sums over the rows sorted by :math:`x` and :math:`y` (quantiles) or
    by :math:`\max(x, y)` and :math:`\min(x, y)` (expectiles): O((N + G) log N) time and O(N + G)
    memory at any grid (no (N, G) array). The sums of :math:`1\{y < x\}` are counts, so quantile curves
    are exact up to one rounding; expectile curves carry rounding of order :math:`10^{-16}\sum_i |y_i|/N`.
    ``left_limit``: the limits from the left (:math:`1\{\theta \le \cdot\}`), where the curves jump.
    ``weights`` (N,): the weighted mean elementary score (each row's terms in the suffix sums weighted).
    Returns a (G,) array.
    """
    if functional not in ("quantile", "expectile"):
        raise ValueError(f"functional must be 'quantile' or 'expectile', got {functional!r}")
    x = np.asarray(forecast, dtype=np.float64)
    y = np.asarray(y_true, dtype=np.float64)
    th = np.asarray(thetas, dtype=np.float64)
    n = x.shape[0]
    side: Literal["left", "right"] = "left" if left_limit else "right"
    below = (y < x).astype(np.float64)  # c = below - alpha: counts are summed exactly, alpha applied once
    ones = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    total = n if weights is None else float(ones.sum())
    if weights is not None:
        below = below * ones
    if functional == "quantile":
        kx, nx = _suffix_sums(x, np.stack([below, ones]), th, side)
        ky, ny = _suffix_sums(y, np.stack([below, ones]), th, side)
        out = (kx - ky) - alpha * (nx - ny)
        return np.maximum(out, 0.0) / total
    # |D| = 1{theta < max(x, y)} - 1{theta < min(x, y)}: the rows whose interval [min, max) holds theta
    w = np.stack([below, ones, below * y, ones * y if weights is not None else y])
    hi = _suffix_sums(np.maximum(x, y), w, th, side)
    lo = _suffix_sums(np.minimum(x, y), w, th, side)
    d = hi - lo
    c_sum = d[0] - alpha * d[1]
    cy_sum = d[2] - alpha * d[3]
    out = th * c_sum - cy_sum
    return np.maximum(out, 0.0) / total


def jump_points(*arrays: np.ndarray) -> np.ndarray:
    """Every value of ``arrays`` (forecasts and targets), sorted and unique, with one point below them: the
    curves of these forecasts are constant (quantile) or linear (expectile) between neighbouring points."""
    v = np.unique(np.concatenate([np.ravel(a) for a in arrays]))
    return np.concatenate([[v[0] - 1.0], v]) if v.size else v


def dominates(curve_a, curve_b, rtol: float = 1e-12) -> bool:
    """True when ``curve_a`` is <= ``curve_b`` at every threshold and < at one at least (rounding
    differences of ``rtol`` times the curves' scale count as ties)."""
    a = np.asarray(curve_a, dtype=np.float64)
    b = np.asarray(curve_b, dtype=np.float64)
    tol = rtol * max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)), 1e-300)
    return bool(np.all(a <= b + tol) and np.any(a < b - tol))
