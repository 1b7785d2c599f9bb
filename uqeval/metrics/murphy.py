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
preferred under every consistent scoring function (Ehm et al. 2016, Corollary 1).
"""

from __future__ import annotations

import numpy as np

#: Elements of the (N, block) buffer per threshold block: memory stays bounded for any N and grid.
_BLOCK_ELEMENTS = 1 << 20
#: Thresholds of the grid of ``uqeval score --murphy``.
GRID_POINTS = 201


def theta_grid(*arrays: np.ndarray, points: int = GRID_POINTS, bounds: tuple[float, float] | None = None) -> np.ndarray:
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


def murphy_curve(forecast, y_true, thetas, functional: str = "expectile", alpha: float = 0.5) -> np.ndarray:
    r"""Mean elementary score of ``forecast`` (N,) against ``y_true`` (N,) at each of ``thetas`` (G,).

    ``functional``: ``"quantile"`` or ``"expectile"`` (level ``alpha``). Returns a (G,) array.
    The thresholds are processed in blocks so the (N, block) buffer has at most ``2**20``
    elements: O(N G) time, bounded memory.
    """
    x = np.asarray(forecast, dtype=np.float64)[:, None]
    y = np.asarray(y_true, dtype=np.float64)[:, None]
    th = np.asarray(thetas, dtype=np.float64)
    n = x.shape[0]
    out = np.empty(th.shape[0])
    block = max(1, _BLOCK_ELEMENTS // max(n, 1))
    for start in range(0, th.shape[0], block):  # blocks of thresholds, not rows
        t = th[None, start:start + block]
        over = (x > t) & (y <= t)
        under = (x <= t) & (y > t)
        if functional == "quantile":
            s = np.where(over, 1.0 - alpha, 0.0) + np.where(under, alpha, 0.0)
        elif functional == "expectile":
            s = (np.where(over, 1.0 - alpha, 0.0) + np.where(under, alpha, 0.0)) * np.abs(y - t)
        else:
            raise ValueError(f"functional must be 'quantile' or 'expectile', got {functional!r}")
        out[start:start + block] = s.mean(axis=0)
    return out


def dominates(curve_a, curve_b, rtol: float = 1e-12) -> bool:
    """True when ``curve_a`` is <= ``curve_b`` at every threshold and < at one at least (rounding
    differences of ``rtol`` times the curves' scale count as ties)."""
    a = np.asarray(curve_a, dtype=np.float64)
    b = np.asarray(curve_b, dtype=np.float64)
    tol = rtol * max(float(np.max(np.abs(a), initial=0.0)), float(np.max(np.abs(b), initial=0.0)), 1e-300)
    return bool(np.all(a <= b + tol) and np.any(a < b - tol))
