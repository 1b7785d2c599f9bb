r"""Anytime-valid sequential tests (e-processes) computed from mergeable sums.

Every test here is a *mixture of constant bets*: for a fixed bet :math:`\lambda` the capital
:math:`\prod_{i \le t} (1 + \lambda (x_i - m))` is a non-negative supermartingale under the null
(Waudby-Smith & Ramdas 2024, "Estimating means of bounded random variables by betting"), and an average
of such processes over a fixed grid of bets is one too. A mixture is the same as betting, at every row,
with the posterior-weighted bet given the past rows only (predictable), and it has a property that the
engines need: the capital after ``t`` rows is a function of a few **sums** over those rows, so it is the
same whatever the chunking, the engine (stream, Dask) or a resume from a saved state, and its path at the
end of each window is a cumulative sum over windows (no loop over rows).

By Ville's inequality :math:`P(\sup_t E_t \ge 1/\alpha) \le \alpha` under the null: an alarm raised the
first time an e-value reaches :math:`1/\alpha` keeps the false-alarm probability at most
:math:`\alpha` however often one looks. The monitor looks at the end of each window (a subset of all
times, so the guarantee holds a fortiori).

- :func:`coverage_log_e`: miss indicators :math:`x_i = 1\{y_i \notin [l_i, u_i]\}` at nominal miss rate
  :math:`m = 1 - \text{level}`. A constant bet :math:`\lambda = (p - m) / (m (1 - m))` gives the
  likelihood ratio of Bernoulli(p) to Bernoulli(m), so the capital after ``n`` rows with ``k`` misses is
  :math:`(p/m)^k ((1-p)/(1-m))^{n-k}`. Bets with :math:`p > m` form the e-process against "miss rate
  :math:`\le m`" (under-coverage), bets with :math:`p < m` the one against "miss rate :math:`\ge m`"
  (over-coverage); the two-sided e-value is their average.
- :func:`pit_log_e`: PIT values :math:`u_i`, null "uniform on (0, 1) given the past" (in the spirit of Arnold,
  Henzi & Ziegel 2023, "Sequentially valid tests for forecast calibration": bet with a density estimated
  from past PITs only). A Beta(a, b) density has mean one under the uniform, so
  :math:`\prod_i f_{a,b}(u_i)` is a test martingale, a function of :math:`n`, :math:`\sum \log u_i` and
  :math:`\sum \log(1 - u_i)`; the mixture over a grid of (a, b) bets with the posterior density given the
  past PITs.
- :func:`mean_cs`: differences :math:`d_i` with :math:`|d_i| \le B`: the empirical-Bernstein
  supermartingale :math:`\exp(\lambda S_t - \psi_E(\lambda) V_t)` (Fan, Grama & Liu 2015; Howard et al.
  2021; used for comparing forecasters by Choe & Ramdas 2024), with :math:`x = (d - \mu)/(2B) \ge -1`,
  :math:`S_t = \sum x_i`, :math:`V_t = \sum x_i^2` and :math:`\psi_E(\lambda) = -\log(1 - \lambda) -
  \lambda`, mixed over a grid of :math:`\lambda`; both signs averaged. A function of :math:`n`,
  :math:`\sum d_i`, :math:`\sum d_i^2`; the set of :math:`\mu` it does not reject is a confidence sequence.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

#: relative departures g of the alternative miss rates: p = m + (1 - m) g (under-coverage) and
#: p = m (1 - g) (over-coverage), from a miss rate 0.1 % off to 95 % of the way to 0 or 1
COVERAGE_GRID = np.geomspace(1e-3, 0.95, 40)
#: Beta(a, b) betting densities of the PIT test (a = b = 1, the uniform, is one of them)
PIT_GRID = np.array([0.4, 0.55, 0.7, 0.85, 1.0, 1.2, 1.45, 1.75, 2.1])
#: bets of the mean-difference confidence sequence, fractions of the largest allowed bet
MEAN_GRID = np.geomspace(1e-3, 0.9, 40)
#: PIT values are clipped to [PIT_EPS, 1 - PIT_EPS] before their logarithm (a PIT of exactly 0 or 1 has
#: probability 0 under the null; in floating point it means "beyond 8 standard deviations")
PIT_EPS = 1e-15


def _log_mean_exp(logs: np.ndarray, axis: int = -1) -> np.ndarray:
    top = np.max(logs, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    return np.squeeze(top, axis) + np.log(np.mean(np.exp(logs - top), axis=axis))


#: e-values are computed as logarithms; reported as numbers they are capped at exp(LOG_CAP) (about 1e304)
LOG_CAP = 700.0


def capped_exp(logs: np.ndarray) -> np.ndarray:
    """``exp(logs)`` capped at ``exp(LOG_CAP)``: an e-value as a finite JSON number."""
    return np.exp(np.minimum(logs, LOG_CAP))


def coverage_log_e(n: np.ndarray, k: np.ndarray, miss_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """``(log e_under, log e_over)`` after ``n`` rows with ``k`` misses (arrays of looks, cumulative counts):
    log e-values against "miss rate <= miss_rate" (the intervals cover too little) and against
    "miss rate >= miss_rate" (they cover too much): the mixtures of the bets of :func:`coverage_log_factors`."""
    logs = coverage_log_factors(n, k, miss_rate)
    return _log_mean_exp(logs[..., : COVERAGE_GRID.size]), _log_mean_exp(logs[..., COVERAGE_GRID.size :])


def pit_sums(u: np.ndarray) -> np.ndarray:
    """``[n, sum log u, sum log(1 - u)]`` of PIT values (the sufficient statistics of :func:`pit_log_e`)."""
    u = np.clip(np.asarray(u, dtype=np.float64), PIT_EPS, 1.0 - PIT_EPS)
    return np.array([u.size, np.log(u).sum(), np.log1p(-u).sum()])


def _betaln(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    lg = np.vectorize(math.lgamma)
    return lg(a) + lg(b) - lg(a + b)


def pit_log_e(sums: np.ndarray) -> np.ndarray:
    """Log e-values of "the PIT is uniform" from cumulative :func:`pit_sums` (``(..., 3)``, one per look): the
    mixture of the Beta bets of :func:`pit_log_factors`."""
    return _log_mean_exp(pit_log_factors(sums))


def two_sided_log_e(log_up: np.ndarray, log_down: np.ndarray) -> np.ndarray:
    """The log of the average of two e-values (the two one-sided mixtures of a two-sided test): itself an
    e-value. The one place of this average: :func:`mean_cs` and the monitor's two-sided coverage test."""
    return np.logaddexp(log_up, log_down) - math.log(2.0)


def _mean_bets(n: Any, s1: Any, s2: Any, mu: Any, bound: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Log capitals of the bets :math:`\pm\lambda` of :func:`mean_cs` (``MEAN_GRID`` on the last axis) at "mean
    difference = ``mu``" from ``n``, :math:`\sum d` and :math:`\sum d^2` (broadcast):
    :math:`\pm\lambda S - \psi_E(\lambda) V` with :math:`x = (d - \mu)/(2B)`, :math:`S = \sum x`, :math:`V = \sum x^2`.
    The one place of the empirical-Bernstein bet: :func:`mean_cs` (its e-values and confidence sequence) and
    :func:`mean_log_factors` (the e-detector's per-window factors, ``mu = 0``) call it."""
    c = 2.0 * float(bound)
    s = (s1 - n * mu) / c
    v = (s2 - 2.0 * mu * s1 + n * mu * mu) / (c * c)
    lam = MEAN_GRID
    psi = -np.log1p(-lam) - lam
    return lam * s - psi * v, -lam * s - psi * v


def _mean_logs(sums: np.ndarray, mu: np.ndarray, bound: float) -> np.ndarray:
    """Log e-values (looks x mu) of "mean difference = mu" from cumulative ``[n, sum d, sum d^2]``."""
    n, s1, s2 = (np.asarray(sums, dtype=np.float64)[..., j, None, None] for j in range(3))
    up, down = _mean_bets(n, s1, s2, np.asarray(mu, dtype=np.float64)[None, :, None], bound)
    return two_sided_log_e(_log_mean_exp(up), _log_mean_exp(down))


def mean_sums(d: np.ndarray) -> np.ndarray:
    """``[n, sum d, sum d^2]`` of score differences (the sufficient statistics of :func:`mean_cs`)."""
    d = np.asarray(d, dtype=np.float64)
    return np.array([d.size, d.sum(), np.dot(d, d)])


def mean_cs(sums: np.ndarray, bound: float, threshold: float, grid: int = 4001) -> dict[str, np.ndarray]:
    """The log e-value (``log_e``) of "mean difference = 0" and the confidence sequence (``lower``, ``upper``) at each look
    from cumulative :func:`mean_sums` (``(looks, 3)``) of differences bounded by ``|d| <= bound``: the
    differences ``mu`` on a grid of ``grid`` points over ``[-bound, bound]`` whose e-value stays below
    ``threshold``, widened by one grid step (NaN bounds when every ``mu`` is rejected)."""
    sums = np.atleast_2d(np.asarray(sums, dtype=np.float64))
    log_e0 = _mean_logs(sums, np.zeros(1), bound)[:, 0]
    mus = np.linspace(-bound, bound, grid)
    step = mus[1] - mus[0]
    lower = np.full(len(sums), np.nan)
    upper = np.full(len(sums), np.nan)
    for i in range(len(sums)):  # a loop over looks (windows), not rows
        keep = _mean_logs(sums[i : i + 1], mus, bound)[0] < math.log(threshold)
        if keep.any():
            lower[i] = max(-bound, mus[keep][0] - step)
            upper[i] = min(bound, mus[keep][-1] + step)
    return {"log_e": log_e0, "lower": lower, "upper": upper}


# --------------------------------------------------------------------------- change detection (e-detectors)
#
# Every e-process above is a mixture, with equal weights, of K constant bets whose log capital after a window
# adds that window's log factor. Restarting the same mixture at the start of every window j and summing the
# restarts gives the Shiryaev-Roberts e-detector of Shin, Ramdas & Rinaldo (2024, "E-detectors: a
# nonparametric framework for sequential change detection", Sec. 3):
#
#     M_t = sum_{j <= t} E_{j,t},   E_{j,t} = (1/K) sum_k prod_{s=j}^{t} L_{s,k},
#
# and, as the mixture is linear, M_t = (1/K) sum_k R_{t,k} with R_{t,k} = (R_{t-1,k} + 1) L_{t,k}, one
# Shiryaev-Roberts recursion per bet. Under the null each E_{j,.} is a (super)martingale from 1, so M_t - t is
# a supermartingale and the first t with M_t >= A has expected value at least A (the average run length to a
# false alarm, ARL, counted in windows): optional stopping, E[M_tau] <= E[tau] and M_tau >= A.


def coverage_log_factors(n: np.ndarray, k: np.ndarray, miss_rate: float) -> np.ndarray:
    """Log factors ``(..., 2 * len(COVERAGE_GRID))`` of the bets of :func:`coverage_log_e` (the under- then the
    over-coverage ones) after ``n`` rows with ``k`` misses: of each window's rows and misses (not cumulative),
    the per-window factors of the e-detector; of cumulative ones, the log capital of each bet.

    ``k`` may be fractional (a finite ensemble's randomised-PIT miss chances, in [0, 1] per row): for a row
    with miss chance :math:`x` the bet's factor :math:`(p/m)^x ((1-p)/(1-m))^{1-x}` is at most the betting
    factor :math:`1 + \\lambda (x - m)` (the logarithm of the latter is concave in :math:`x`), so the product
    stays below a test supermartingale and keeps its level."""
    n = np.asarray(n, dtype=np.float64)[..., None]
    k = np.asarray(k, dtype=np.float64)[..., None]
    m = float(miss_rate)
    g = COVERAGE_GRID
    p = np.concatenate([m + (1.0 - m) * g, m * (1.0 - g)])
    return k * np.log(p / m) + (n - k) * np.log((1.0 - p) / (1.0 - m))


def pit_log_factors(sums: np.ndarray) -> np.ndarray:
    """Log factors ``(..., len(PIT_GRID) ** 2)`` of the Beta bets of :func:`pit_log_e` from :func:`pit_sums`
    (each window's: the e-detector's per-window factors; cumulative: each bet's log capital)."""
    sums = np.asarray(sums, dtype=np.float64)
    a, b = (g.ravel() for g in np.meshgrid(PIT_GRID, PIT_GRID))
    n, s1, s2 = (sums[..., j, None] for j in range(3))
    return (a - 1.0) * s1 + (b - 1.0) * s2 - n * _betaln(a, b)


def mean_log_factors(sums: np.ndarray, bound: float) -> np.ndarray:
    """Per-window log factors ``(windows, 2 * len(MEAN_GRID))`` of the bets of :func:`mean_cs` at "mean difference
    = 0" (both signs) from each window's :func:`mean_sums` ``[n, sum d, sum d^2]`` (not cumulative)."""
    sums = np.asarray(sums, dtype=np.float64)
    n, s1, s2 = (sums[..., j, None] for j in range(3))
    return np.concatenate(_mean_bets(n, s1, s2, 0.0, bound), axis=-1)


def log_mean_exp(logs: np.ndarray, axis: int = -1) -> np.ndarray:
    """``log(mean(exp(logs), axis))`` without overflow."""
    return _log_mean_exp(np.asarray(logs, dtype=np.float64), axis)


def process_log_path(factors: np.ndarray) -> np.ndarray:
    """Log e-values of the mixture e-process (started at the first window) at the end of every window."""
    return log_mean_exp(np.cumsum(factors, axis=0))


def detector_log_path(factors: np.ndarray) -> np.ndarray:
    """Log values of the Shiryaev-Roberts e-detector (the mixture restarted at every window, summed) at the end
    of every window, from per-window log factors ``(windows, bets)``.

    With :math:`C_{t,k}` the cumulative log factors, :math:`\\log R_{t,k} = C_{t,k} +
    \\log \\sum_{j \\le t} e^{-C_{j-1,k}}` (a running log-sum-exp: no loop over windows)."""
    f = np.asarray(factors, dtype=np.float64)
    if f.shape[0] == 0:
        return np.zeros(0)
    c = np.cumsum(f, axis=0)
    before = np.vstack([np.zeros((1, f.shape[1])), c[:-1]])
    return log_mean_exp(c + np.logaddexp.accumulate(-before, axis=0))


def change_window(factors: np.ndarray, t: int) -> int:
    """The window ``j <= t`` whose restart has the largest e-value at the end of window ``t``: the e-detector's
    estimate of the first window after the change (the maximum-likelihood change point of the mixture)."""
    f = np.asarray(factors, dtype=np.float64)[: t + 1]
    c = np.cumsum(f, axis=0)
    before = np.vstack([np.zeros((1, f.shape[1])), c[:-1]])
    return int(np.argmax(log_mean_exp(c[-1][None, :] - before)))


# --------------------------------------------------------------------------- PIT of discrete forecasts

#: a bin's Beta probability is floored here before its logarithm (a bet that gives a bin no mass loses all)
BIN_FLOOR = 1e-300


def pit_bin_log_sums(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    r"""Summed log factors of the Beta bets of :func:`pit_log_e` for PIT values known only to lie in
    ``[low, high]`` (an ensemble's rank bin, the bin between two carried quantiles):

    .. math:: \sum_i \log \frac{F_{a,b}(h_i) - F_{a,b}(l_i)}{h_i - l_i}

    for every bet (``(len(PIT_GRID) ** 2,)``, the order of :func:`pit_log_factors`), with :math:`F_{a,b}` the
    Beta CDF. Each factor is the Beta density's mean over the row's bin, the expectation of :math:`f_{a,b}(U)`
    for the randomised PIT :math:`U \sim U(l_i, h_i)` given the bin (Rao-Blackwellised: no random draw, the same
    on every run, engine and batching). Under calibration the randomised PIT is uniform, so each factor has
    mean one and the mixture stays a test martingale, as for a continuous PIT. Rows are grouped by their bin
    (an ensemble of M members has at most (M + 1)(M + 2)/2 of them): one Beta CDF per bin and bet."""
    from scipy.special import betainc

    lo = np.asarray(low, dtype=np.float64)
    hi = np.asarray(high, dtype=np.float64)
    if lo.size == 0:
        return np.zeros(PIT_GRID.size**2)
    bins, counts = np.unique(np.stack([lo, hi], axis=1), axis=0, return_counts=True)
    a, b = (g.ravel()[:, None] for g in np.meshgrid(PIT_GRID, PIT_GRID))
    mass = betainc(a, b, bins[None, :, 1]) - betainc(a, b, bins[None, :, 0])
    logs = np.log(np.maximum(mass, BIN_FLOOR)) - np.log(bins[:, 1] - bins[:, 0])[None, :]
    return cast("np.ndarray", logs @ counts.astype(np.float64))


def pit_mean_sums(low: np.ndarray, high: np.ndarray | None = None) -> np.ndarray:
    r"""``[n, sum d, sum d^2]`` for the two-sided test of the mean PIT (:func:`mean_log_factors` with bound 1/2):
    :math:`d_i = u_i - 1/2` of PIT values ``low`` (``high`` None), or, for PIT values known only to lie in
    ``[low, high]``, the randomised PIT's conditional moments :math:`E[d_i] = (l_i + h_i)/2 - 1/2` and
    :math:`E[d_i^2] = E[d_i]^2 + (h_i - l_i)^2/12`. The empirical-Bernstein factor
    :math:`\exp(\lambda E[d] - \psi E[d^2])` is at most :math:`E[\exp(\lambda d - \psi d^2)] \le 1 + \lambda E[d]`
    (Jensen, then Fan et al.'s bound), whose mean is one when the PIT has mean 1/2: the test stays valid."""
    lo = np.asarray(low, dtype=np.float64)
    if high is None:
        d = lo - 0.5
        return np.array([d.size, d.sum(), np.dot(d, d)])
    hi = np.asarray(high, dtype=np.float64)
    d = 0.5 * (lo + hi) - 0.5
    w = hi - lo
    return np.array([d.size, d.sum(), np.dot(d, d) + np.dot(w, w) / 12.0])
