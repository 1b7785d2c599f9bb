"""Proper scoring rules (negatively oriented: lower is better).

Generic kernels for quantile and interval forecasts live here; the Gaussian
closed forms build on them.
"""

from __future__ import annotations

import numpy as np


def pinball_loss(y_true: np.ndarray, quantiles: np.ndarray, levels: np.ndarray) -> np.ndarray:
    r"""Pinball (check, quantile) loss of each row at each level.

    .. math:: \rho_\tau(y, q) = (\mathbb{1}[y < q] - \tau)(q - y)
              = \max(\tau (y - q), (\tau - 1)(y - q))

    Parameters
    ----------
    y_true : (N,) array
    quantiles : (N, Q) array, predicted quantile of each row at each level
    levels : (Q,) array of levels in (0, 1)

    Returns
    -------
    (N, Q) array of losses (Koenker & Bassett 1978; Gneiting & Raftery 2007, Eq. 40).
    """
    y = np.asarray(y_true, dtype=np.float64)[:, None]
    q = np.asarray(quantiles, dtype=np.float64)
    tau = np.asarray(levels, dtype=np.float64)
    diff = y - q
    return np.maximum(tau * diff, (tau - 1.0) * diff)


def interval_score(
    y_true: np.ndarray, lower: np.ndarray, upper: np.ndarray, level: float | np.ndarray
) -> np.ndarray:
    r"""Interval score of central ``level`` prediction intervals (Gneiting & Raftery 2007, Eq. 43).

    With :math:`\alpha = 1 - \text{level}`,

    .. math:: S_\alpha(l, u; y) = (u - l) + \frac{2}{\alpha}(l - y)\mathbb{1}[y < l]
              + \frac{2}{\alpha}(y - u)\mathbb{1}[y > u]

    ``lower``/``upper`` may be (N,) with a scalar level, or (N, L) with ``level`` of shape (L,).
    Returns an array shaped like ``lower``.
    """
    y = np.asarray(y_true, dtype=np.float64)
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if lo.ndim == 2:
        y = y[:, None]
    alpha = 1.0 - np.asarray(level, dtype=np.float64)
    below = np.maximum(lo - y, 0.0)
    above = np.maximum(y - hi, 0.0)
    return (hi - lo) + (2.0 / alpha) * (below + above)
