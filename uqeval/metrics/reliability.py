r"""Bin-free reliability of Gaussian forecasts and the ACCRUE score.

Camporeale & Carè, *ACCRUE: accurate and reliable uncertainty estimate in deterministic
models* (Int. J. Uncertainty Quantification, 2021), sections 3-4. With standardized errors
:math:`\eta_i = (y_i - \mu_i)/(\sqrt2\sigma_i)`, the PIT values
:math:`\Phi_i = \tfrac12(\operatorname{erf}\eta_i + 1)` of a calibrated forecast are
uniform, and :math:`\eta` is :math:`N(0, 1/2)` with cdf :math:`\Phi(\eta) = \tfrac12(\operatorname{erf}\eta + 1)`.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import as_float_array, check_nonempty
from .blocks import row_argmax, row_mean, rowwise
from .normal import erf, erfc, ndtr
from .rowweights import weighted_sorted_cdf
from .scoring import _crps_z, _gaussian_arrays

#: :math:`\tfrac12\sqrt{2/\pi} = 1/\sqrt{2\pi}`: ``E|X - X'|/2`` for iid :math:`X, X' \sim N(0, 1/2)`.
_HALF_SQRT_2_OVER_PI = 0.5 * np.sqrt(2.0 / np.pi)
#: :math:`\operatorname{erf}(\sqrt{\ln 2 / 2})`: per-row minimum over sigma of CRPS(eps, sigma) / |eps|.
CRPS_MIN_FACTOR = float(erf(np.sqrt(np.log(2.0) / 2.0)))
#: The paper's printed factor :math:`\sqrt{\ln 4}/2` (about 1% below the true minimum).
CRPS_MIN_FACTOR_PAPER = float(np.sqrt(np.log(4.0)) / 2.0)
#: :math:`\mathrm{RS}_{\min}` as used by the paper's implementation (its Eq. 13 without the constant).
RS_MIN = float(_HALF_SQRT_2_OVER_PI)


def pit_gaussian(y_true, mean, std) -> np.ndarray:
    r"""Probability integral transform of each row under its Gaussian forecast.

    .. math:: \Phi_i = \tfrac12\big(\operatorname{erf}\eta_i + 1\big)
              = \Phi_{N(0,1)}\Big(\frac{y_i-\mu_i}{\sigma_i}\Big),
              \qquad \eta_i = \frac{y_i - \mu_i}{\sqrt2\,\sigma_i}

    (ACCRUE, section 3). Evaluated with ``ndtr`` (:mod:`uqeval.metrics.normal`), which keeps full relative
    precision in the lower tail where ``1 + erf`` cancels. Returns an (N,) array in [0, 1].
    """
    return gaussian_pit(*_gaussian_arrays(y_true, mean, std))


def gaussian_pit(y: np.ndarray, mu: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """:func:`pit_gaussian` of arrays already checked: ``ndtr((y - mu) / sd)``. The one place of the Gaussian PIT:
    :func:`pit_gaussian`, the Gaussian container's ``pit()`` and isotonic recalibration (block by block of
    rows) call it."""
    return ndtr((y - mu) / sd)


def _exp_m_sq(eta: np.ndarray) -> np.ndarray:
    """exp(-eta^2): 0 where eta^2 overflows (|eta| > 1e154), as the limit is, without numpy's overflow warning."""
    with np.errstate(over="ignore"):
        return np.exp(-eta * eta)


def _rs_terms(eta: np.ndarray, rank: np.ndarray | float, d: np.ndarray | float) -> np.ndarray:
    r"""The per-row terms of RS, :math:`\frac{\eta_i}{d_i}\big[(1 + \operatorname{erf}\eta_i) - r_i\big]
    + \frac{e^{-\eta_i^2}}{d_i\sqrt\pi}`, with :math:`1/d_i` the row's share of the weight (:math:`1/N`) and
    :math:`r_i` the ECDF on both sides of its jump (:math:`(2i - 1)/N`; weighted :math:`C_{i-1} + C_i`), as
    :func:`reliability_score` writes them; ``rank=0, d=1``: the rank-free part whose sum the streamed state
    keeps (:class:`uqeval.catalogue.states.ReliabilityScore`). ``1 + erf`` is taken as ``erfc(-eta)``, which
    keeps its digits in the lower tail, and the rank is subtracted inside the bracket, a small difference of
    two O(1) numbers rather than of two O(1) sums."""
    return (eta / d) * (erfc(-eta) - rank) + _exp_m_sq(eta) / (d * np.sqrt(np.pi))


def _rs_sorted(
    eta_sorted: np.ndarray, out: np.ndarray | None = None, w_sorted: np.ndarray | None = None
) -> float:
    """RS of sorted standardized errors; ``out``: an (N,) buffer for the per-row terms; ``w_sorted``: their
    weights (then :math:`1/N` is each row's share :math:`p_i` of the weight and :math:`(2i - 1)/N` is
    :math:`C_{i-1} + C_i`, the weighted ECDF on both sides of its jump)."""
    if w_sorted is not None:
        c, p = weighted_sorted_cdf(w_sorted)
        d = w_sorted.sum() / w_sorted  # 1/p_i (the total of weighted_sorted_cdf)
        return float(np.sum(_rs_terms(eta_sorted, 2.0 * c - p, d)) - _HALF_SQRT_2_OVER_PI)
    n = eta_sorted.size

    def terms(i: np.ndarray, eta: np.ndarray) -> np.ndarray:  # i: 1-based ranks
        return _rs_terms(eta, (2.0 * i - 1.0) / n, n)

    return float(np.sum(rowwise(terms, eta_sorted, out=out, positions=True)) - _HALF_SQRT_2_OVER_PI)


def reliability_score(y_true, mean, std) -> float:
    r"""Reliability score RS (ACCRUE, Eqs. 6-8): squared distance of the error cdf from N(0, 1/2).

    .. math::
        \mathrm{RS} = \int_{-\infty}^{\infty} \big[\Phi(\eta) - C(\eta)\big]^2 d\eta
        = \sum_{i=1}^N \Big[\frac{\eta_i}{N}(\operatorname{erf}\eta_i + 1)
          - \frac{\eta_i}{N^2}(2i - 1) + \frac{e^{-\eta_i^2}}{N\sqrt\pi}\Big]
          - \frac12\sqrt{\frac2\pi}

    with :math:`\eta_1 \le \dots \le \eta_N` sorted and :math:`C` their empirical cdf.
    One sort: O(N log N). RS >= 0, lower is better.

    Notes
    -----
    The paper prints the last term of the sum as :math:`e^{-\eta_i^2}/\sqrt{\pi N}`;
    the integral gives :math:`e^{-\eta_i^2}/(N\sqrt\pi)` (it is
    :math:`\tfrac1N\sum_i E|X-\eta_i|` minus the two half mean differences, the energy
    form of the CRPS), which the tests check against numerical integration.
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    return _rs_sorted(np.sort((y - mu) / sd) / np.sqrt(2.0))


def ks_gaps(i: np.ndarray, u: np.ndarray, n: float) -> tuple[np.ndarray, np.ndarray]:
    """The gaps of the ECDF of ``n`` sorted PIT values ``u`` (1-based ranks ``i``) to the diagonal on both sides
    of each jump: ``(i/n - u, u - (i - 1)/n)``, whose largest is the Kolmogorov-Smirnov distance. The one place
    of these gaps: :func:`max_calibration_error` (block by block, with where it is attained) and
    :func:`uqeval.metrics.calibration_tests.ks_statistic` (over the last axis of many sets) call it."""
    return i / n - u, u - (i - 1.0) / n


def _max_cal_err_sorted(u: np.ndarray, w_sorted: np.ndarray | None = None) -> tuple[float, float, float]:
    """``(value, phi, c)`` of sorted PIT values: the largest gap, where it is and the ECDF value there;
    ``w_sorted``: their weights (the weighted ECDF)."""
    if w_sorted is not None:
        c, p = weighted_sorted_cdf(w_sorted)
        gaps_above, gaps_below = c - u, u - (c - p)
        ka, kb = int(np.argmax(gaps_above)), int(np.argmax(gaps_below))
        if gaps_above[ka] >= gaps_below[kb]:
            return float(gaps_above[ka]), float(u[ka]), float(c[ka])
        return float(gaps_below[kb]), float(u[kb]), float(c[kb] - p[kb])
    n = u.size
    ka, above = row_argmax(
        lambda i, u: ks_gaps(i, u, n)[0], u, positions=True
    )  # C just right of each jump (C(u_i) with ties: last of a run)
    kb, below = row_argmax(lambda i, u: ks_gaps(i, u, n)[1], u, positions=True)  # C just left of each jump
    if above >= below:
        return above, float(u[ka]), float((ka + 1) / n)
    return below, float(u[kb]), float(kb / n)


def max_calibration_error_at(pit, weights=None) -> tuple[float, float, float]:
    r""":func:`max_calibration_error` and where the bin-free reliability diagram attains it.

    Returns ``(value, phi, c)``: the gap :math:`\max_\varphi |C(\varphi) - \varphi|`, the PIT
    value :math:`\varphi` of the jump where it occurs and the ECDF value :math:`C` there (the
    end of the jump farthest from the diagonal), so a plot can mark the gap exactly. ``weights`` (N,): of the
    weighted ECDF :math:`C(\varphi) = \sum_i w_i H(\varphi - \Phi_i) / \sum_i w_i`.
    """
    u = as_float_array(pit, "pit")
    check_nonempty(u.size, "pit")
    if not np.all((u >= 0.0) & (u <= 1.0)):
        raise InputError("pit values must lie in [0, 1] (no NaN); compute them with pit_gaussian")
    if weights is None:
        return _max_cal_err_sorted(np.sort(u))
    order = np.argsort(u, kind="stable")
    return _max_cal_err_sorted(u[order], np.asarray(weights, dtype=np.float64)[order])


def max_calibration_error(pit, weights=None) -> float:
    r"""Largest vertical gap of the bin-free reliability diagram (ACCRUE, Table 1 "Cal. err.").

    .. math:: \sup_{\varphi\in[0,1]} |C(\varphi) - \varphi|, \qquad
              C(\varphi) = \frac1N\sum_i H(\varphi - \Phi_i)

    the Kolmogorov-Smirnov distance of the PIT values from uniform. Evaluated at both
    sides of every jump of :math:`C` (sorted :math:`u_{(i)}`):
    :math:`\max_i \max\big(i/N - u_{(i)},\ u_{(i)} - (i-1)/N\big)`. O(N log N).

    Parameters
    ----------
    pit : (N,) PIT values in [0, 1], e.g. from :func:`pit_gaussian`

    Returns
    -------
    float in [0, 1], lower is better.
    """
    return max_calibration_error_at(pit, weights)[0]


def _accrue(crps_mean: float, rs: float, mean_abs_err: float) -> dict[str, float]:
    crps_min = CRPS_MIN_FACTOR * mean_abs_err
    beta = RS_MIN / (crps_min + RS_MIN)
    return {
        "accrue": float(beta * crps_mean + (1.0 - beta) * rs),
        "beta": float(beta),
        "crps_min": float(crps_min),
        "rs_min": RS_MIN,
    }


def accrue_score(y_true, mean, std) -> dict[str, float]:
    r"""ACCRUE cost (Eqs. 11-13): accuracy (mean CRPS) and reliability (RS) traded off.

    .. math::
        \mathrm{ACCRUE} = \beta\,\overline{\mathrm{CRPS}} + (1-\beta)\,\mathrm{RS}, \qquad
        \beta = \frac{\mathrm{RS}_{\min}}{\overline{\mathrm{CRPS}}_{\min} + \mathrm{RS}_{\min}}

    with

    .. math::
        \overline{\mathrm{CRPS}}_{\min} = \operatorname{erf}\big(\sqrt{\ln 2/2}\big)\,
        \frac1N\sum_i |\varepsilon_i| \approx 0.5946\,\overline{|\varepsilon|}, \qquad
        \mathrm{RS}_{\min} = \tfrac12\sqrt{2/\pi} \approx 0.3989

    where :math:`\varepsilon_i = y_i - \mu_i`. Lower is better.

    Returns
    -------
    ``{"accrue", "beta", "crps_min", "rs_min"}`` (floats).

    Notes
    -----
    * :math:`\overline{\mathrm{CRPS}}_{\min}` is the exact minimum of the mean CRPS over a
      free :math:`\sigma_i` per row: :math:`\partial\mathrm{CRPS}/\partial\sigma = 0` at
      :math:`\sigma^2 = \varepsilon^2/\ln 2` (Eq. 4), where
      :math:`\mathrm{CRPS} = |\varepsilon|\operatorname{erf}(\sqrt{\ln 2/2})`. The paper
      prints :math:`(\sqrt{\ln 4}/2)\,\overline{|\varepsilon|}` (the value of
      :math:`|\eta|` at the minimum, not of the CRPS), about 1.0% lower than the minimum.
    * :math:`\mathrm{RS}_{\min}`: the paper's Eq. 13 is the exact minimum of RS over
      standardized errors for a sample of size N; it tends to 0 as N grows. Its
      section 4 states that the implementation drops the constant term of Eq. 13, so
      that :math:`\mathrm{RS}_{\min} \simeq \tfrac12\sqrt{2/\pi}` for large N (the large-N
      limit of the remaining sum). We use that constant, as the paper's experiments do.
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    eps = y - mu
    z = eps / sd
    rs = _rs_sorted(np.sort(z) / np.sqrt(2.0))
    return _accrue(float(np.mean(_crps_z(z, sd))), rs, float(np.mean(np.abs(eps))))


def reliability_gaussian(y_true, mean, std, weights=None, crps_mean: float | None = None) -> dict[str, float]:
    """Reliability group: ``{"rs", "max_cal_err", "accrue"}`` (floats, lower is better).

    ``rs`` is :func:`reliability_score`, ``max_cal_err`` is :func:`max_calibration_error`
    of :func:`pit_gaussian`, ``accrue`` is :func:`accrue_score`'s ``accrue``. One sort
    serves all three (the PIT is monotone in :math:`\\eta`). ``weights`` (N,): weighted means and the
    weighted ECDF of the standardized errors (integer weights equal the repeated rows). ``crps_mean``: the
    unweighted mean CRPS when the caller already has it (:func:`~uqeval.metrics.scoring.crps_gaussian_mean`).
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        z = (y - mu) / sd
        order = np.argsort(z, kind="stable")
        zs, ws = z[order], w[order]
        rs = _rs_sorted(zs / np.sqrt(2.0), w_sorted=ws)
        mean_abs = float(np.average(np.abs(y - mu), weights=w))
        acc = _accrue(float(np.average(_crps_z(z, sd), weights=w)), rs, mean_abs)
        mce = _max_cal_err_sorted(ndtr(zs), ws)[0]
        return {"rs": rs, "max_cal_err": mce, "accrue": acc["accrue"]}
    buf = np.empty(y.size)  # per-row values of one quantity at a time (block by block), then reduced
    mean_abs_err = row_mean(lambda y, mu: np.abs(y - mu), y, mu, out=buf)
    z = rowwise(lambda y, mu, sd: (y - mu) / sd, y, mu, sd)
    if crps_mean is None:
        crps_mean = row_mean(_crps_z, z, sd, out=buf)
    z.sort()  # ours: sorted in place
    mce = _max_cal_err_sorted(rowwise(ndtr, z, out=buf))[0]
    z /= np.sqrt(2.0)
    rs = _rs_sorted(z, out=buf)
    acc = _accrue(crps_mean, rs, mean_abs_err)
    return {"rs": rs, "max_cal_err": mce, "accrue": acc["accrue"]}
