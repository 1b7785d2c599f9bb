"""Proper scoring rules (negatively oriented: lower is better).

Generic kernels for quantile and interval forecasts live here; the Gaussian
closed forms build on them.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import (
    check_nonempty,
    finite_arrays,
)
from .blocks import row_mean
from .normal import central_z, ndtr, ndtri, norm_pdf
from .search import searchsorted_fixed


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


# --------------------------------------------------------------------------------------
# Gaussian predictive distributions N(mean, std^2)
# --------------------------------------------------------------------------------------

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_INV_SQRT_PI = 1.0 / np.sqrt(np.pi)


def _gaussian_arrays(y_true, mean, std) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate ``(y_true, mean, std)`` of a Gaussian forecast and return float64 arrays.

    Shared by every Gaussian kernel of :mod:`uqeval.metrics`: 1-d, equal length,
    non-empty, finite, ``std > 0``. Raises :class:`uqeval.errors.InputError`.
    """
    y, mu, sd = finite_arrays(y_true=y_true, mean=mean, std=std, positive=("std",))
    check_nonempty(y.size)
    return y, mu, sd


def toolbox_levels(resolution: int) -> np.ndarray:
    """``linspace(0.01, 0.99, resolution)``, the Uncertainty Toolbox's level grid of the check and interval
    scores: the one place of this grid, for the metrics, ``compare`` and ``recalibrate``."""
    if isinstance(resolution, bool) or int(resolution) != resolution or resolution < 1:
        raise InputError(f"resolution must be a positive integer, got {resolution!r}")
    return np.linspace(0.01, 0.99, int(resolution))


def _nll_z(z: np.ndarray, sd: np.ndarray) -> np.ndarray:
    return _LOG_SQRT_2PI + np.log(sd) + 0.5 * z * z


def _crps_z(z: np.ndarray, sd: np.ndarray) -> np.ndarray:
    return sd * (z * (2.0 * ndtr(z) - 1.0) + 2.0 * norm_pdf(z) - _INV_SQRT_PI)


def _crps_z_dsd(z: np.ndarray) -> np.ndarray:
    r""":math:`\partial\,\mathrm{CRPS}/\partial\sigma = 2\varphi(z) - 1/\sqrt\pi` at a fixed error (z = error / σ),
    the derivative of :func:`_crps_z` (ACCRUE's gradient; std-scaling's CRPS root sums it in log form,
    :func:`uqeval.recalibration.std_scaling.crps_scale`)."""
    return 2.0 * norm_pdf(z) - _INV_SQRT_PI


def _check_profile(z: np.ndarray, levels: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
    r"""Mean pinball loss over ``levels`` of the standard normal quantiles, as a function of z.

    For a Gaussian forecast the pinball loss at level :math:`\tau` is
    :math:`\sigma\,\rho_\tau(z; q_\tau)` with :math:`z = (y-\mu)/\sigma` and
    :math:`q_\tau = \Phi^{-1}(\tau)`, so the level average depends on ``z`` only:

    .. math:: g(z) = \frac1K \sum_k (z - q_k)(\tau_k - \mathbb 1[z < q_k])
              = \frac1K\Big[z\,(T - K + m) - \sum_k \tau_k q_k + \sum_{k \ge m} q_k\Big]

    with :math:`T=\sum_k\tau_k` and :math:`m = \#\{k: q_k \le z\}` (``q`` ascending).
    One ``searchsorted`` (:func:`~uqeval.metrics.search.searchsorted_fixed`) and prefix sums: O(N log K) time, O(N) memory (no (N, K) array).
    ``q``: other non-decreasing standard quantiles at ``levels`` (default :math:`\Phi^{-1}(\tau)`),
    e.g. those of an isotonically recalibrated forecast.
    """
    tau = np.asarray(levels, dtype=np.float64)
    q = ndtri(tau) if q is None else np.asarray(q, dtype=np.float64)  # ascending
    k = tau.size
    suffix_q = np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]])  # suffix_q[m] = sum_{k>=m} q_k
    m = searchsorted_fixed(q, z, side="right")
    return (z * (tau.sum() - k + m) - np.dot(tau, q) + suffix_q[m]) / k


def _interval_profile(
    z: np.ndarray, levels: np.ndarray, lo: np.ndarray | None = None, hi: np.ndarray | None = None
) -> np.ndarray:
    r"""Mean interval score over central ``levels`` of a standard normal, as a function of z.

    With :math:`l_k = \Phi^{-1}(1/2 - p_k/2)`, :math:`u_k = \Phi^{-1}(1/2 + p_k/2)` and
    :math:`w_k = 2/(1-p_k)`,

    .. math:: h(z) = \frac1K \sum_k \Big[(u_k - l_k) + w_k (l_k - z)\,\mathbb 1[z < l_k]
              + w_k (z - u_k)\,\mathbb 1[z > u_k]\Big]

    evaluated with prefix sums over the sorted bounds (O(N log K), no (N, K) array).
    The bounds are computed as ``ndtri(0.5 -/+ p/2)`` exactly as the toolbox does
    (they are not bitwise symmetric), and the strict inequalities are the toolbox's.
    ``lo``/``hi``: other standard bounds (non-increasing / non-decreasing in p), e.g. those of
    an isotonically recalibrated forecast.
    """
    p = np.asarray(levels, dtype=np.float64)
    k = p.size
    lo = ndtri(0.5 - p / 2.0) if lo is None else np.asarray(lo, dtype=np.float64)  # descending in p
    hi = central_z(p) if hi is None else np.asarray(hi, dtype=np.float64)  # ascending in p
    w = 2.0 / (1.0 - p)
    width = np.sum(hi - lo)
    # above: sum over {k: u_k < z} = the first m_u levels (hi ascending)
    cw_hi = np.concatenate([[0.0], np.cumsum(w)])
    cwu_hi = np.concatenate([[0.0], np.cumsum(w * hi)])
    m_u = searchsorted_fixed(hi, z, side="left")
    above = z * cw_hi[m_u] - cwu_hi[m_u]
    # below: sum over {k: l_k > z}; lo reversed is ascending, the set is its tail
    lo_a, w_a = lo[::-1], w[::-1]
    sw_lo = np.concatenate([np.cumsum(w_a[::-1])[::-1], [0.0]])
    swl_lo = np.concatenate([np.cumsum((w_a * lo_a)[::-1])[::-1], [0.0]])
    m_l = searchsorted_fixed(lo_a, z, side="right")
    below = swl_lo[m_l] - z * sw_lo[m_l]
    return (width + above + below) / k


def nll_gaussian(y_true, mean, std) -> np.ndarray:
    r"""Negative log-likelihood of each row under :math:`N(\mu_i, \sigma_i^2)`.

    .. math:: \mathrm{NLL}_i = \tfrac12\log(2\pi) + \log\sigma_i + \frac{(y_i-\mu_i)^2}{2\sigma_i^2}

    Returns an (N,) array; its mean is the toolbox's ``nll`` (Uncertainty Toolbox,
    ``metrics_scoring_rule.nll_gaussian``; Gneiting & Raftery 2007, logarithmic score).
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    return _nll_z((y - mu) / sd, sd)


def crps_gaussian(y_true, mean, std) -> np.ndarray:
    r"""Continuous ranked probability score of each row, closed form for a Gaussian.

    .. math:: \mathrm{CRPS}_i = \int (F_i(x) - \mathbb 1[x \ge y_i])^2\,dx
              = \sigma_i\Big[z_i\,(2\Phi(z_i) - 1) + 2\varphi(z_i) - \frac1{\sqrt\pi}\Big],
              \qquad z_i = \frac{y_i - \mu_i}{\sigma_i}

    (Gneiting et al. 2005; Camporeale & Carè, ACCRUE, Eq. 3). Returns an (N,) array, >= 0.
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    return _crps_z((y - mu) / sd, sd)


def check_score_gaussian(y_true, mean, std, resolution: int = 99) -> np.ndarray:
    r"""Check (pinball) score of each row, averaged over ``linspace(0.01, 0.99, resolution)``.

    .. math:: \mathrm{Check}_i = \frac1K\sum_{k=1}^K \rho_{\tau_k}\big(y_i,\ \mu_i + \sigma_i\Phi^{-1}(\tau_k)\big),
              \qquad \rho_\tau(y, q) = (\mathbb 1[y \le q] - \tau)(q - y)

    Same level grid and definition as the Uncertainty Toolbox's ``check_score``; because
    :math:`\rho_\tau(y, \mu + \sigma q) = \sigma\rho_\tau(z, q)`, the level average is
    computed in closed form from ``z`` (O(N log K), no (N, K) array).
    Returns an (N,) array.
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    return sd * _check_profile((y - mu) / sd, toolbox_levels(resolution))


def interval_score_gaussian(y_true, mean, std, resolution: int = 99) -> np.ndarray:
    r"""Interval score of each row, averaged over central levels ``linspace(0.01, 0.99, resolution)``.

    For central level :math:`p` the interval is
    :math:`[l, u] = [\mu + \sigma\Phi^{-1}(\tfrac12 - \tfrac p2),\ \mu + \sigma\Phi^{-1}(\tfrac12 + \tfrac p2)]`
    and, with :math:`\alpha = 1 - p` (Gneiting & Raftery 2007, Eq. 43),

    .. math:: S_\alpha(l, u; y) = (u - l) + \frac2\alpha (l - y)\mathbb 1[y < l]
              + \frac2\alpha (y - u)\mathbb 1[y > u]

    averaged with equal weights over the K levels. This is exactly the Uncertainty
    Toolbox's ``interval_score`` (levels are the *covered* probabilities ``p``, so
    :math:`\alpha` runs from 0.99 down to 0.01). Computed in closed form from
    :math:`z = (y-\mu)/\sigma` (O(N log K), no (N, K) array). Returns an (N,) array.
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    return sd * _interval_profile((y - mu) / sd, toolbox_levels(resolution))


def crps_gaussian_mean(y_true, mean, std) -> float:
    """The mean over rows of :func:`crps_gaussian`, block by block (no (N,) temporaries)."""
    return row_mean(lambda y, mu, sd: _crps_z((y - mu) / sd, sd), *_gaussian_arrays(y_true, mean, std))


def scoring_rules_gaussian(
    y_true, mean, std, resolution: int = 99, crps: float | None = None
) -> dict[str, float]:
    """Means over rows of the four Gaussian scoring rules (all lower-is-better).

    Returns ``{"nll", "crps", "check", "interval"}``; see :func:`nll_gaussian`,
    :func:`crps_gaussian`, :func:`check_score_gaussian`, :func:`interval_score_gaussian`.
    Matches the Uncertainty Toolbox's ``get_all_scoring_rule_metrics`` (scaled=True).
    ``crps``: the mean CRPS when the caller already has it (:func:`crps_gaussian_mean`; the catalogue
    shares it with :func:`~uqeval.metrics.reliability.reliability_gaussian`).
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    levels = toolbox_levels(resolution)
    z = np.subtract(y, mu)
    z /= sd
    q, lo, hi = ndtri(levels), ndtri(0.5 - levels / 2.0), central_z(levels)  # the profiles' defaults
    buf = np.empty_like(z)  # each rule's per-row values, block by block, then their mean
    return {
        "nll": row_mean(_nll_z, z, sd, out=buf),
        "crps": row_mean(_crps_z, z, sd, out=buf) if crps is None else crps,
        "check": row_mean(lambda z, sd: sd * _check_profile(z, levels, q), z, sd, out=buf),
        "interval": row_mean(lambda z, sd: sd * _interval_profile(z, levels, lo, hi), z, sd, out=buf),
    }
