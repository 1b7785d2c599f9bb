r"""Threshold- and outcome-weighted CRPS (Gneiting & Ranjan 2011; Allen, Ginsbourger & Ziegel 2023;
Allen, Koh, Segers & Ziegel 2023).

The weight is the indicator of a region :math:`R = [a, b]` (``a = -inf``: below ``b``;
``b = inf``: above ``a``), written ``region = (a, b)``.

*Threshold-weighted* CRPS, :math:`w(z) = 1\{a \le z \le b\}` and its chaining function
:math:`v(z) = \min(\max(z, a), b)`:

.. math:: \mathrm{twCRPS}(F, y) = \int_a^b (F(z) - 1\{y \le z\})^2\,dz
          = \mathrm{CRPS}(F \circ v^{-1}, v(y)),

the CRPS of the distribution of :math:`v(X)` (``F`` censored to ``[a, b]``) at the censored
target. Samples: the CRPS of the chained members :math:`v(x_j)` at :math:`v(y)` (the energy
form of Allen et al. 2023, Eq. 11); Gaussians: closed form below.

*Outcome-weighted* CRPS (Holzmann & Klar 2017; Allen et al. 2023, Eq. 13):

.. math:: \mathrm{owCRPS}(F, y) = w(y)\,\mathrm{CRPS}(F_w, y), \qquad
          F_w(z) = \frac{\int_{-\infty}^z w\,dF}{\int w\,dF},

the CRPS of the forecast restricted to ``R`` (a truncated normal for a Gaussian; the members
inside ``R`` for samples), counted only where the target falls in ``R``.

Gaussian closed forms use :math:`B(u) = \int_{-\infty}^u \Phi^2 = u\Phi(u)^2 + 2\Phi(u)\varphi(u) -
\Phi(\sqrt2 u)/\sqrt\pi` and :math:`A(u) = \int_{-\infty}^u \Phi = u\Phi(u) + \varphi(u)`; the
upper tail is handled through :math:`1 - \Phi(u) = \Phi(-u)`, so no term grows with the
threshold and no difference of numbers near 1 is taken.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .normal import ndtr, norm_pdf

_SQRT2 = np.sqrt(2.0)
_INV_SQRT_PI = 1.0 / np.sqrt(np.pi)


def check_region(region) -> tuple[float, float]:
    """``(a, b)`` as floats (None -> -inf / inf) with ``a < b``; InputError otherwise."""
    try:
        a, b = region
    except (TypeError, ValueError):
        raise InputError(f"a weight region is a pair (a, b), got {region!r}") from None
    a = -np.inf if a is None else float(a)
    b = np.inf if b is None else float(b)
    if np.isnan(a) or np.isnan(b) or not a < b or a == np.inf or b == -np.inf:
        raise InputError(f"a weight region needs a < b (one of them may be infinite), got [{a:g}, {b:g}]")
    return a, b


def _B(u: np.ndarray) -> np.ndarray:
    """:math:`\\int_{-\\infty}^u \\Phi(s)^2 ds` (0 at -inf; use for u <= 0 or moderate u)."""
    with np.errstate(invalid="ignore"):
        cdf = ndtr(u)
        out = u * cdf * cdf + 2.0 * cdf * norm_pdf(u) - _INV_SQRT_PI * ndtr(_SQRT2 * u)
    return np.where(np.isneginf(u), 0.0, out)


def _A(u: np.ndarray) -> np.ndarray:
    """:math:`\\int_{-\\infty}^u \\Phi(s) ds` (0 at -inf)."""
    with np.errstate(invalid="ignore"):
        out = u * ndtr(u) + norm_pdf(u)
    return np.where(np.isneginf(u), 0.0, out)


def _sq_from_anchor(lo: np.ndarray, hi: np.ndarray, anchor_low: bool) -> np.ndarray:
    r""":math:`\int_{lo}^{hi} (\Phi(u) - \Phi(c))^2 du` with ``c = lo`` (``anchor_low``) or ``c = hi``.

    ``lo`` may be -inf (then ``c = lo`` means :math:`\Phi(c) = 0`), ``hi`` is finite. Computed
    as is when ``c <= 0``; otherwise on the reflected interval :math:`[-hi, -lo]` with the
    anchor :math:`-c`, because :math:`\Phi(u) - \Phi(c) = \Phi(-c) - \Phi(-u)`: the terms stay small.
    """
    c = lo if anchor_low else hi
    flip = c > 0
    lo2 = np.where(flip, -hi, lo)
    hi2 = np.where(flip, -lo, hi)
    low_anchor = flip != anchor_low  # reflection swaps which end is the anchor
    c2 = np.where(low_anchor, lo2, hi2)
    k = np.where(np.isneginf(c2), 0.0, ndtr(c2))
    width = np.where(np.isneginf(lo2), 0.0, hi2 - lo2)  # k = 0 whenever lo2 = -inf
    out = (_B(hi2) - _B(lo2)) - 2.0 * k * (_A(hi2) - _A(lo2)) + k * k * width
    return np.maximum(out, 0.0)


def _standardise(y_true, mean, std, region):
    a, b = check_region(region)
    y = np.asarray(y_true, dtype=np.float64)
    mu = np.asarray(mean, dtype=np.float64)
    sd = np.asarray(std, dtype=np.float64)
    return (a - mu) / sd, (b - mu) / sd, (y - mu) / sd, sd


def twcrps_gaussian(y_true, mean, std, region=(None, None)) -> np.ndarray:
    r"""Threshold-weighted CRPS of Gaussian forecasts, :math:`w = 1_{[a, b]}`, per row.

    With :math:`a' = (a-\mu)/\sigma`, :math:`b' = (b-\mu)/\sigma`, :math:`c = \min(\max(z, a'), b')`:

    .. math:: \mathrm{twCRPS} = \sigma\Big[\int_{a'}^{c} \Phi(u)^2\,du + \int_{-b'}^{-c} \Phi(u)^2\,du\Big]
              = \sigma\,[B(c) - B(a') + B(-c) - B(-b')],

    since :math:`(\Phi(u) - 1)^2 = \Phi(-u)^2` above the target. With the whole line as the
    region this is the Gaussian CRPS, :math:`\sigma[z(2\Phi(z)-1) + 2\varphi(z) - 1/\sqrt\pi]`.
    It equals the CRPS of the normal censored to ``[a, b]`` at the censored target (scoringrules'
    ``crps_gtcnormal``; Allen et al. 2023, Section 3). Returns an (N,) array >= 0.
    """
    lo, hi, z, sd = _standardise(y_true, mean, std, region)
    c = np.clip(z, lo, hi)
    out = _B(c) - _B(lo) + _B(-c) - _B(-hi)
    return sd * np.maximum(out, 0.0)


def owcrps_gaussian(y_true, mean, std, region=(None, None)) -> np.ndarray:
    r"""Outcome-weighted CRPS of Gaussian forecasts, :math:`w = 1_{[a, b]}`, per row.

    :math:`w(y)` times the CRPS of the normal truncated to ``[a, b]`` (:math:`F_w`) at ``y``:
    with :math:`D = \Phi(b') - \Phi(a')` and the target :math:`z \in [a', b']`,

    .. math:: \mathrm{owCRPS} = \frac{\sigma}{D^2}\Big[\int_{a'}^{z} (\Phi(u) - \Phi(a'))^2 du
              + \int_{-b'}^{-z} (\Phi(u) - \Phi(-b'))^2 du\Big],

    and 0 where the target lies outside the region. Equals scoringrules' ``crps_tnormal`` on
    those rows. Where the region lies so far out that :math:`D^2` underflows (about 26σ) the limit
    :math:`\sigma|z - c|`, c the end of the region nearest the mean, is returned. Returns an (N,) array >= 0.
    """
    lo, hi, z, sd = _standardise(y_true, mean, std, region)
    inside = (z >= lo) & (z <= hi)
    zc = np.clip(z, np.maximum(lo, -1e300), np.minimum(hi, 1e300))  # finite, inside the region
    # D = Phi(b') - Phi(a') without cancellation in either tail
    upper = lo > 0
    d = np.where(upper, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))
    below = _sq_from_anchor(lo, zc, anchor_low=True)
    above = _sq_from_anchor(-hi, -zc, anchor_low=True)
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        out = sd * (below + above) / (d * d)
    # R beyond ~26 sigma: D^2 underflows. F_w then tends to a point mass at the end of R nearest the mean,
    # so the limit |y - that end| is used (finite; the same convention as for an ensemble with no member in R)
    lost = ~np.isfinite(out) | (d * d < 1e-300)
    if np.any(lost & inside):
        out = np.where(lost, sd * np.abs(z - np.clip(0.0, lo, hi)), out)
    return np.where(inside, out, 0.0)


# --------------------------------------------------------------------------- quantiles


def twcrps_quantiles(y_true, quantiles, levels, region=(None, None)) -> np.ndarray:
    r"""Threshold-weighted CRPS of a quantile forecast, per row: the quantile CRPS of the chained forecast.

    .. math:: \mathrm{twCRPS} \approx \frac{2}{Q}\sum_{j=1}^{Q} \rho_{\tau_j}\big(v(y) - v(q_j)\big),
              \qquad v(z) = \min(\max(z, a), b)

    ``v`` is non-decreasing, so the :math:`\tau`-quantile of :math:`v(X)` is :math:`v(q_\tau)`: the chained
    forecast is again a quantile forecast at the same levels, scored with the quantile approximation of
    the CRPS, twice the mean pinball loss :func:`uqeval.metrics.scoring.pinball_loss` over the levels
    (:math:`\mathrm{CRPS} = 2\int_0^1 \rho_\tau\,d\tau`; Berrisch & Ziel 2023; scoringrules'
    ``crps_quantile``). With ``R`` the whole line it is ``2 ×`` ``scoring_rule.pinball``'s per-row score;
    at the midpoint levels :math:`(j - 1/2)/Q` it equals :func:`twcrps_samples` of the quantiles as members.
    """
    from .scoring import pinball_loss

    a, b = check_region(region)
    q = np.clip(np.asarray(quantiles, dtype=np.float64), a, b)
    y = np.clip(np.asarray(y_true, dtype=np.float64), a, b)
    return 2.0 * pinball_loss(y, q, levels).mean(axis=1)


# --------------------------------------------------------------------------- samples


def twcrps_samples(y_true, samples, region=(None, None)) -> np.ndarray:
    r"""Threshold-weighted CRPS of an ensemble, per row: the CRPS of the chained members.

    .. math:: \mathrm{twCRPS} = \frac1M \sum_j |v(x_j) - v(y)| - \frac1{2M^2}\sum_{j,k} |v(x_j) - v(x_k)|,
              \qquad v(z) = \min(\max(z, a), b)

    (Allen, Ginsbourger & Ziegel 2023; scoringrules' ``twcrps_ensemble`` with the default
    chaining function). O(N M log M) through :func:`uqeval.metrics.samples.crps_ensemble`.
    """
    from .samples import crps_ensemble

    a, b = check_region(region)
    s = np.clip(np.asarray(samples, dtype=np.float64), a, b)
    y = np.clip(np.asarray(y_true, dtype=np.float64), a, b)
    return crps_ensemble(y, s)


def owcrps_samples(y_true, samples, region=(None, None)) -> np.ndarray:
    r"""Outcome-weighted CRPS of an ensemble, per row.

    .. math:: \mathrm{owCRPS} = w(y)\Big[\frac{1}{M_R}\sum_{j \in R}|x_j - y|
              - \frac{1}{2M_R^2}\sum_{j,k \in R}|x_j - x_k|\Big]

    over the :math:`M_R` members in ``R = [a, b]`` (closed, as scoringrules'
    ``owcrps_ensemble``). The pair sum uses the sorted identity
    :math:`\sum_{j,k}|x_j - x_k| = 2\sum_k (2r_k - M_R - 1)x_{(k)}` with :math:`r_k` the rank among
    the members in ``R``, so it costs one sort per row (O(N M log M), no (N, M, M) array).

    A row whose target is in ``R`` while no member is has no :math:`F_w`; uqeval then scores the
    chained members :math:`v(x_j)` instead (the point masses at the ends of ``R`` that the
    ensemble piles up at), which is the limit of the Gaussian owCRPS as the forecast moves away
    from ``R``. scoringrules returns NaN for such rows.
    """
    a, b = check_region(region)
    y = np.asarray(y_true, dtype=np.float64)
    x = np.sort(np.asarray(samples, dtype=np.float64), axis=-1)
    w = (x >= a) & (x <= b)
    m_r = w.sum(axis=-1)
    empty = m_r == 0
    if empty.any():  # the convention of the docstring: chained members
        x = np.where(empty[:, None], np.clip(x, a, b), x)
        w = w | empty[:, None]
        m_r = np.where(empty, x.shape[-1], m_r)
    wf = w.astype(np.float64)
    rank = np.cumsum(wf, axis=-1)
    mr = m_r.astype(np.float64)
    e1 = (wf * np.abs(x - y[:, None])).sum(axis=-1) / mr
    pair = 2.0 * (wf * (2.0 * rank - mr[:, None] - 1.0) * x).sum(axis=-1)
    out = e1 - pair / (2.0 * mr * mr)
    inside = (y >= a) & (y <= b)
    return np.where(inside, np.maximum(out, 0.0), 0.0)
