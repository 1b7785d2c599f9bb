"""Statistical tests of calibration with p-values (the opt-in ``calibration_tests`` group).

A CI gate can ask "is this forecast *significantly* miscalibrated?" with these:

- PIT uniformity of regression forecasts: Kolmogorov–Smirnov, Cramér–von Mises and
  Anderson–Darling tests of the PIT values against U(0, 1) (the hypothesis is fully
  specified, so the classical null distributions apply);
- the rank histogram (Talagrand diagram) of an ensemble with a χ² test against the uniform
  distribution over the M + 1 ranks;
- Spiegelhalter's (1986) z-test and the Hosmer–Lemeshow (1980) test for binary probabilities.

Every function takes arrays and returns numbers; statistics are vectorised over leading axes
where a simulation needs it (``ks_statistic``, ``cvm_statistic``, ``ad_statistic``,
``ad_pvalue``). scipy.stats is imported inside the functions.

Randomised PIT
--------------
Ensembles and quantile (or interval) forecasts give a PIT *interval* per row, not a value:
an ensemble of M members places the observation between two order statistics (or on a tie),
a quantile forecast between two carried levels. :func:`randomised_pit` draws the PIT uniformly
inside that interval (Czado, Gneiting & Held 2009), which is exactly U(0, 1) under the null
hypothesis of calibration (for ensembles: exchangeability of observation and members). The
draws are assigned to rows in the sorted order of their intervals, so the result does not depend
on the order of the rows.

The random numbers come from the seed *and the data*: ``SeedSequence([seed, key])`` with ``key``
= :func:`data_key` of the rows (a 64-bit hash of each row's target and PIT interval, summed modulo
2**64). A p-value must be uniform across data sets under the null; with one fixed stream of random
numbers for every data set it is not (the share of p < 0.05 was 0.12-0.20 for tied ensembles and
90 % intervals, and swung from 0.003 to 0.07 with the seed). The key is cheap (a few integer
operations per row), the same for any row order, and a sum over rows, so the streaming engines
merge it over batches like any other count (:func:`ensemble_rank_counts`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InputError
from .blocks import lerp
from .normal import ndtr
from .rowweights import CodeSums, effective_rows, kish, row_units

__all__ = [
    "ad_pvalue",
    "ad_statistic",
    "binary_calibration_tests",
    "cvm_pvalue",
    "cvm_statistic",
    "data_key",
    "keyed_seed",
    "keyed_seed_sequence",
    "ensemble_rank_counts",
    "hosmer_lemeshow",
    "ks_statistic",
    "merge_keys",
    "monte_carlo_p",
    "pit_generator",
    "pit_uniformity_tests",
    "randomised_pit",
    "rank_counts_test",
    "rank_histogram_test",
    "spiegelhalter",
    "two_sided_normal_p",
    "type7_quantiles",
]

#: PIT values are kept inside [EPS, 1 - EPS] for the logarithms of the Anderson–Darling statistic
EPS = 1e-12
#: Hosmer–Lemeshow groups (deciles of the predicted probability)
HL_GROUPS = 10
#: below this limiting Anderson–Darling tail probability the finite-n correction is not applied
TAIL = 1e-5


# --------------------------------------------------------------------------- PIT statistics (vectorised)


def ks_statistic(u: np.ndarray, weights=None) -> np.ndarray:
    r"""Kolmogorov–Smirnov distance of the PIT values (last axis) to U(0, 1).

    .. math:: D_n = \max_i \max\Big(\frac{i}{n} - u_{(i)},\; u_{(i)} - \frac{i - 1}{n}\Big)

    ``weights`` (N,), for one set of PIT values: the distance of their weighted ECDF, the bin-free maximum
    calibration error (:func:`~uqeval.metrics.reliability.max_calibration_error`).
    """
    from .reliability import ks_gaps, max_calibration_error

    if weights is not None:
        return np.asarray(max_calibration_error(u, weights))
    u = np.sort(np.asarray(u, dtype=np.float64), axis=-1)
    above, below = ks_gaps(np.arange(1, u.shape[-1] + 1), u, u.shape[-1])
    return np.maximum(above.max(axis=-1), below.max(axis=-1))


def _sorted_shares(u: np.ndarray, weights=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    r"""``(u, p, mid, n)``: the PIT values sorted on the last axis, each one's share :math:`p_i` of the weight,
    the midpoint :math:`(C_{i-1} + C_i)/2` of the (weighted) ECDF's jump there, and the number of rows ``n``
    the null distributions take (Kish's :math:`n_\mathrm{eff}` with ``weights``,
    :func:`~uqeval.metrics.rowweights.effective_rows`). ``weights`` (N,): for one set of PIT values."""
    if weights is None:
        u = np.sort(np.asarray(u, dtype=np.float64), axis=-1)
        n = u.shape[-1]
        return u, np.full(n, 1.0 / n), (2 * np.arange(1, n + 1) - 1) / (2 * n), float(n)

    order = np.argsort(np.asarray(u, dtype=np.float64), kind="stable")
    w = row_units(weights)[order]  # (scaled weights: the same numbers, bit for bit)
    total = w.sum()
    # the midpoints from the cumulative weights (exact integers for integer weights), divided once
    return (
        np.asarray(u, dtype=np.float64)[order],
        w / total,
        (np.cumsum(w) - w / 2) / total,
        effective_rows(w),
    )


def cvm_statistic(u: np.ndarray, weights=None) -> np.ndarray:
    r"""Cramér–von Mises statistic of the PIT values (last axis) against U(0, 1).

    .. math:: W^2 = n \int_0^1 (C(x) - x)^2\,dx
              = n \Big[\sum_i p_i \Big(\frac{C_{i-1} + C_i}{2} - u_{(i)}\Big)^2 + \sum_i \frac{p_i^3}{12}\Big]

    with :math:`C` the ECDF, :math:`p_i` the share of row i and :math:`C_i = \sum_{j \le i} p_j`; with
    :math:`p_i = 1/n` the textbook :math:`\frac{1}{12n} + \sum_i (\frac{2i - 1}{2n} - u_{(i)})^2`. The
    integral is exact for tied values too, so the weighted ECDF of integer weights is that of the repeated
    rows. ``weights`` (N,): :math:`p_i = w_i / \sum w` and :math:`n = n_\mathrm{eff}` (:func:`_sorted_shares`).
    """
    us, p, mid, n = _sorted_shares(u, weights)
    return n * ((p * (mid - us) ** 2).sum(axis=-1) + (p**3).sum(axis=-1) / 12)


def ad_statistic(u: np.ndarray, weights=None) -> np.ndarray:
    r"""Anderson–Darling statistic of the PIT values (last axis) against U(0, 1).

    .. math:: A^2 = n \int_0^1 \frac{(C(x) - x)^2}{x(1 - x)}\,dx
              = -n - 2n \sum_i p_i \big[m_i \ln u_{(i)} + (1 - m_i) \ln(1 - u_{(i)})\big],
              \qquad m_i = \frac{C_{i-1} + C_i}{2}

    (from :math:`\frac{(C - x)^2}{x(1-x)} = \frac{C^2}{x} + \frac{(1 - C)^2}{1 - x} - 1` integrated between
    jumps); with :math:`p_i = 1/n` the textbook
    :math:`-n - \frac1n \sum_i (2i - 1)[\ln u_{(i)} + \ln(1 - u_{(n+1-i)})]`. ``weights``: as
    :func:`cvm_statistic`. Values are clipped to [1e-12, 1 − 1e-12] so that a PIT of exactly 0 or 1 gives a
    large, finite statistic.
    """
    us, p, mid, n = _sorted_shares(u, weights)
    us = np.clip(us, EPS, 1.0 - EPS)
    return -n - 2 * n * (p * (mid * np.log(us) + (1 - mid) * np.log1p(-us))).sum(axis=-1)


def cvm_pvalue(w2: float, n: float) -> float:
    """Upper-tail p-value of the Cramér–von Mises statistic ``w2`` of ``n`` rows (Csörgő & Faraway 1996, as
    ``scipy.stats.cramervonmises``, whose finite-n distribution takes a real ``n``)."""
    from scipy.stats._hypotests import _cdf_cvm  # (the function cramervonmises calls; scipy >= 1.6)

    return float(np.clip(1.0 - _cdf_cvm(w2, n), 0.0, 1.0))


def ad_pvalue(a2: np.ndarray | float, n: float) -> np.ndarray:
    r"""Upper-tail p-value of the Anderson–Darling statistic for a fully specified distribution.

    Marsaglia & Marsaglia (2004), "Evaluating the Anderson-Darling distribution", J. Stat.
    Softw. 9(2): the limiting CDF ``ADinf`` (|error| < 2e-6) plus their finite-n correction
    ``errfix``; p = 1 − (ADinf(A²) + errfix(n, ADinf(A²))), clipped to [0, 1]. Where the limiting
    tail 1 − ADinf(A²) is below 1e-5 it is returned as is: there the correction's own fitting
    error (about 6e-4/n at the top of its range) would put a floor under p.
    """
    z = np.asarray(a2, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        zs = np.where(z > 0, z, 1.0)
        small = (
            np.exp(-1.2337141 / zs)
            / np.sqrt(zs)
            * (
                2.00012
                + (0.247105 - (0.0649821 - (0.0347962 - (0.011672 - 0.00168691 * zs) * zs) * zs) * zs) * zs
            )
        )
        tail = np.exp(
            1.0776 - (2.30695 - (0.43424 - (0.082433 - (0.008056 - 0.0003146 * zs) * zs) * zs) * zs) * zs
        )
        x = np.where(z < 2, small, np.exp(-tail))
        p_inf = np.where(z < 2, 1.0 - small, -np.expm1(-tail))  # the limiting upper tail, accurate when tiny
        c = 0.01265 + 0.1757 / n
        t1 = np.clip(x / c, 0.0, None)
        g1 = np.sqrt(t1) * (1 - t1) * (49 * t1 - 102) * (0.0037 / n**2 + 0.00078 / n + 0.00006) / n
        t2 = (x - c) / (0.8 - c)
        g2 = (-0.00022633 + (6.54034 - (14.6538 - (14.458 - (8.259 - 1.91864 * t2) * t2) * t2) * t2) * t2) * (
            0.04213 / n + 0.01365 / n**2
        )
        g3 = (
            -130.2137 + (745.2337 - (1705.091 - (1950.646 - (1116.360 - 255.7844 * x) * x) * x) * x) * x
        ) / n
        cdf = x + np.where(x > 0.8, g3, np.where(x < c, g1, g2))
    p = np.where(p_inf < TAIL, p_inf, 1.0 - cdf)  # far tail: errfix's fitting error (~6e-4/n) would floor p
    p = np.where(z > 0, p, 1.0)
    p = np.where(np.isinf(z), 0.0, p)
    return np.clip(p, 0.0, 1.0)


def pit_uniformity_tests(pit: np.ndarray, weights=None) -> dict[str, float]:
    r"""KS, Cramér–von Mises and Anderson–Darling tests of PIT values against U(0, 1).

    p-values: KS from the exact distribution of :math:`D_n` (``scipy.stats.kstwo``, as
    ``scipy.stats.ks_1samp(method="exact")``), CvM from :func:`cvm_pvalue` (Csörgő & Faraway 1996), AD from
    :func:`ad_pvalue` (Marsaglia & Marsaglia 2004).

    ``weights`` (N,), rows of weight 0 dropped: the statistics of the weighted ECDF, with Kish's
    :math:`n_\mathrm{eff}` (:func:`~uqeval.metrics.rowweights.effective_rows`) as their number of rows, and
    the null distributions at :math:`n_\mathrm{eff}` (rounded to an integer for the exact KS law). The KS
    distance and :math:`W^2 / n`, :math:`A^2 / n` are functions of the weighted ECDF (integer weights: the
    repeated rows); :math:`n_\mathrm{eff}` does not grow when a row is repeated, because a repeated row is
    not an independent draw. Assumed: independent rows, weights fixed apart from the outcomes.

    Returns
    -------
    dict with ``pit_ks_stat``, ``pit_ks_p``, ``pit_cvm_stat``, ``pit_cvm_p``, ``pit_ad_stat``,
    ``pit_ad_p``.
    """
    from scipy import stats

    u = np.asarray(pit, dtype=np.float64)
    if u.ndim != 1 or u.size < 2:
        raise InputError(f"the PIT tests need at least 2 rows, found {u.size}")
    n = float(u.size)
    if weights is not None:
        n = effective_rows(weights)
    d = float(ks_statistic(u, weights))
    w2 = float(cvm_statistic(u, weights))
    a2 = float(ad_statistic(u, weights))
    return {
        "pit_ks_stat": d,
        "pit_ks_p": float(np.clip(stats.kstwo.sf(d, max(round(n), 1)), 0.0, 1.0)),
        "pit_cvm_stat": w2,
        "pit_cvm_p": cvm_pvalue(w2, n),
        "pit_ad_stat": a2,
        "pit_ad_p": float(ad_pvalue(a2, n)),
    }


# --------------------------------------------------------------------------- randomised PIT and ranks


_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser (Steele, Lea & Flood 2014) on uint64 arrays: every input bit moves every output bit."""
    x = x ^ (x >> np.uint64(30))
    x = x * _MIX1
    x = x ^ (x >> np.uint64(27))
    x = x * _MIX2
    return x ^ (x >> np.uint64(31))


def data_key(*columns: np.ndarray) -> int:
    r"""A 64-bit key of a set of rows: :math:`\sum_i h(x_{i1}, \dots, x_{ik}) \bmod 2^{64}`.

    ``h`` chains splitmix64's finaliser over the float64 bit patterns of a row's values (-0.0 counted
    as 0.0). A sum does not depend on the order of the rows and adds over batches of rows
    (:func:`merge_keys`); two data sets that differ in any value get unrelated keys.
    """
    h = row_hashes(*columns)
    if h.size == 0:
        return 0
    return int(np.add.reduce(h, dtype=np.uint64))


def row_hashes(*columns: np.ndarray) -> np.ndarray:
    """The per-row terms ``h`` (uint64) whose sum modulo 2**64 is :func:`data_key` (sums of them per group of
    rows are the groups' keys: ``score --preserve-dims``' rank histogram per cell)."""
    h: np.ndarray | None = None
    for c in columns:
        bits = (np.asarray(c, dtype=np.float64).ravel() + 0.0).view(np.uint64)
        h = _mix64(bits + _GOLDEN) if h is None else _mix64((h ^ bits) + _GOLDEN)
    return np.zeros(0, dtype=np.uint64) if h is None else h


def merge_keys(a: int, b: int) -> int:
    """The :func:`data_key` of two sets of rows together."""
    return (a + b) % (1 << 64)


def keyed_seed_sequence(seed: int, key: int) -> np.random.SeedSequence:
    """The seed sequence of the random draws of rows with :func:`data_key` ``key`` under ``seed``: reproducible
    for one data set and seed, independent between data sets (the randomised PIT, compare's sign flips, the
    UCC permutation test)."""
    return np.random.SeedSequence([int(seed), int(key)])


def keyed_seed(seed: int, key: int) -> int:
    """A 64-bit seed from :func:`keyed_seed_sequence` (for the counter-based draws of :mod:`uqeval.resample`)."""
    return int(keyed_seed_sequence(seed, key).generate_state(1, np.uint64)[0])


def pit_generator(seed: int, key: int) -> np.random.Generator:
    """The generator of the randomised PIT of rows with :func:`data_key` ``key`` under ``seed``."""
    return np.random.default_rng(keyed_seed_sequence(seed, key))


def randomised_pit(low: np.ndarray, high: np.ndarray, seed: int, key: int | None = None) -> np.ndarray:
    r"""A PIT value drawn uniformly in each row's PIT interval ``[low, high]``.

    .. math:: u_i = a_i + V_i\,(b_i - a_i), \qquad V_i \sim U(0, 1)

    The uniforms come from :func:`pit_generator` of ``seed`` and ``key`` (the :func:`data_key` of the
    rows; default: of ``low`` and ``high``; callers add the targets) and go to the rows in the
    lexicographic order of ``(low, high)``: rows with the same interval are interchangeable, so the
    multiset of PIT values (and every statistic of it) does not depend on row order, and two data
    sets get independent draws (p-values uniform across data sets under the null).
    """
    a = np.asarray(low, dtype=np.float64)
    b = np.asarray(high, dtype=np.float64)
    if key is None:
        key = data_key(a, b)
    order = np.lexsort((b, a))
    v = np.empty(a.size)
    v[order] = pit_generator(seed, key).random(a.size)
    return a + v * (b - a)


def _ranks(u: np.ndarray, m: int) -> np.ndarray:
    """Randomised ranks 0..m of PIT values ``u`` of an m-member ensemble."""
    return unit_bins(u, m + 1)


def unit_bins(u: np.ndarray, bins: int) -> np.ndarray:
    """The bin ``floor(u * bins)`` of each value ``u`` in [0, 1] among ``bins`` equal bins, 1 in the last one.
    The one place of this rule: the randomised ranks of an ensemble and the streamed max_cal_err's PIT
    histogram (:class:`uqeval.catalogue.states.PitKS`) call it."""
    return np.minimum(np.floor(u * bins).astype(np.int64), bins - 1)


#: uniforms drawn per block by :func:`ensemble_rank_counts` (bounded memory for any row count)
RANK_BLOCK = 1 << 20


def ensemble_rank_counts(groups: np.ndarray, m: int, seed: int, key: int) -> np.ndarray:
    r"""The rank histogram of :func:`rank_histogram_test` (of :func:`randomised_pit` of
    :func:`uqeval.metrics.samples.pit_bounds_samples`) from the number of rows with each (members below, members tied).

    ``groups[l, t]``: rows with :math:`\ell` members below the target and :math:`t` equal to it; ``key``:
    the rows' :func:`data_key`. The rows sorted by PIT interval are these groups in (l, t) order, so
    the uniforms of :func:`randomised_pit` fall to them in that order: the same M + 1 counts, bit for
    bit, from an (M + 1) × (M + 1) table that adds over batches (the streaming engines' state).
    """
    g = np.asarray(groups, dtype=np.int64)
    idx = np.flatnonzero(g)  # row-major: (l, t) order, the lexicographic order of (low, high)
    size = g.ravel()[idx]
    ell, t = np.divmod(idx, g.shape[1])
    lo = ell / (m + 1.0)
    hi = (ell + t + 1.0) / (m + 1.0)
    ends = np.cumsum(size)
    total = int(ends[-1]) if ends.size else 0
    rng = pit_generator(seed, key)
    counts = np.zeros(m + 1, dtype=np.int64)
    for start in range(0, total, RANK_BLOCK):
        v = rng.random(min(RANK_BLOCK, total - start))
        j = np.searchsorted(ends, np.arange(start, start + v.size), side="right")
        u = lo[j] + v * (hi[j] - lo[j])
        counts += np.bincount(_ranks(u, m), minlength=m + 1)
    return counts


def quantile_pit_bounds(
    y_true: np.ndarray, quantiles: np.ndarray, levels: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""PIT interval of each observation between the carried quantile levels.

    With :math:`b = \#\{j : q_{\tau_j} < y\}` the PIT lies in :math:`(\tau_b, \tau_{b+1}]`
    (:math:`\tau_0 = 0`, :math:`\tau_{Q+1} = 1`), the bins of
    :func:`uqeval.metrics.quantiles.pit_histogram_quantiles`.
    """
    edges = np.concatenate(([0.0], np.asarray(levels, dtype=np.float64), [1.0]))
    b = quantile_pit_bins(y_true, quantiles)
    return edges[b], edges[b + 1]


def quantile_pit_bins(y_true: np.ndarray, quantiles: np.ndarray) -> np.ndarray:
    r"""The bin :math:`b_i = \#\{j : q_{\tau_j, i} < y_i\}` of each row's PIT between the carried quantile levels
    (bin :math:`b` is :math:`(\tau_b, \tau_{b+1}]`, :math:`\tau_0 = 0`, :math:`\tau_{Q+1} = 1`). The one place of
    this rule: :func:`quantile_pit_bounds` and the PIT histogram
    (:func:`uqeval.metrics.quantiles.pit_histogram_quantiles`) call it."""
    y = np.asarray(y_true, dtype=np.float64)
    return np.count_nonzero(np.asarray(quantiles, dtype=np.float64) < y[:, None], axis=1)


def rank_histogram_test(u: np.ndarray, m: int) -> dict:
    r"""Rank histogram (Talagrand diagram) of an M-member ensemble and its χ² test of uniformity.

    ``u`` is the randomised ensemble PIT (:func:`uqeval.metrics.samples.pit_bounds_samples`, :func:`randomised_pit`):
    the randomised rank is :math:`r = \lfloor (M + 1) u \rfloor \in \{0, \dots, M\}` (ties
    between observation and members broken at random). Under calibration the ranks are
    uniform over the M + 1 values:

    .. math:: X^2 = \sum_{r=0}^{M} \frac{(c_r - N/(M+1))^2}{N/(M+1)} \sim \chi^2_M

    The χ² approximation needs expected counts of about 5 or more (N ≥ 5 (M + 1)).

    Returns
    -------
    dict with ``rank_histogram`` (M + 1 counts), ``rank_hist_chi2`` and ``rank_hist_chi2_p``.
    """
    return rank_counts_test(_ranks(np.asarray(u, dtype=np.float64), m), m)


def rank_counts_test(ranks: np.ndarray, m: int) -> dict:
    """:func:`rank_histogram_test` of integer ranks ``0..m`` (e.g. multivariate average ranks,
    :func:`uqeval.metrics.multivariate.average_ranks`): the M + 1 counts and their χ² test."""
    counts = np.bincount(np.asarray(ranks, dtype=np.int64), minlength=m + 1)
    chi2, p = rank_counts_chi2(counts)
    return {"rank_histogram": counts.tolist(), "rank_hist_chi2": float(chi2), "rank_hist_chi2_p": float(p)}


def rank_counts_chi2(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X², p)`` of :func:`rank_histogram_test` from rank counts ``(..., M + 1)`` (one test per leading index:
    ``score --preserve-dims`` tests each cell's histogram)."""
    from scipy import stats

    c = np.asarray(counts, dtype=np.float64)
    expected = c.sum(axis=-1, keepdims=True) / c.shape[-1]
    chi2 = ((c - expected) ** 2).sum(axis=-1) / expected[..., 0]
    return chi2, stats.chi2.sf(chi2, c.shape[-1] - 1)


# --------------------------------------------------------------------------- binary probabilities


def spiegelhalter(p: np.ndarray, y: np.ndarray, weights=None) -> tuple[float, float]:
    r"""Spiegelhalter's (1986) z-test of calibration of binary probabilities.

    .. math:: Z = \frac{\sum_i (y_i - p_i)(1 - 2p_i)}{\sqrt{\sum_i (1 - 2p_i)^2\,p_i(1 - p_i)}}
              = \sqrt{n}\,\frac{\bar a}{\sqrt{\bar b}}

    (:math:`\bar a`, :math:`\bar b` the means of the numerator's and the variance's terms), standard normal
    under calibration; two-sided p-value :math:`2\Phi(-|Z|)`. ``weights`` (N,): weighted means and Kish's
    :math:`n_\mathrm{eff}` for n (:func:`~uqeval.metrics.rowweights.effective_rows`; :math:`Z/\sqrt{n}` is a
    function of the weighted rows). Z and p are NaN when the variance is 0 (every probability is 0, ½ or 1).
    """
    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(p.size) if weights is None else np.asarray(weights, dtype=np.float64)
    total = w.sum()
    num = float(np.dot(w, (y - p) * (1.0 - 2.0 * p)) / total)
    var = float(np.dot(w, (1.0 - 2.0 * p) ** 2 * p * (1.0 - p)) / total)
    if not var > 0:
        return float("nan"), float("nan")
    if weights is None:
        n = float(p.size)
    else:
        n = effective_rows(w)
    z = np.sqrt(n) * num / np.sqrt(var)
    return float(z), two_sided_normal_p(float(z))


def monte_carlo_p(hits: Any, draws: Any) -> Any:
    r"""The Monte-Carlo p-value :math:`(1 + h) / (1 + P)` of ``hits`` :math:`h` among ``draws`` :math:`P`
    statistics drawn under the null as extreme as the observed one (Phipson & Smyth 2010: never 0, valid at
    every P; scalars or arrays). The one place of this conversion: the sign-flip tests
    (:func:`uqeval.resample.permutation_p_values`) and the UCC permutation test call it."""
    return (1.0 + hits) / (1.0 + draws)


def two_sided_normal_p(z: float) -> float:
    r"""The two-sided p-value of a standard normal statistic, :math:`2\Phi(-|z|)` (``ndtr`` keeps its full
    relative precision far in the tail). The one place of this conversion: :func:`spiegelhalter` and the
    verdict's z-tests call it."""
    return float(2.0 * ndtr(np.array(-abs(z))))


def type7_quantiles(x: np.ndarray, q: np.ndarray, weights=None) -> np.ndarray:
    """``np.quantile(x, q)`` (type 7, linear) of the rows, a row of weight :math:`w_i` counted as
    :func:`~uqeval.metrics.rowweights.row_units` rows: integer weights with a 1 among them give the quantiles
    of the repeated rows, and scaling every weight changes nothing. With weights ``x`` must be >= 0 (the
    order statistics come from :class:`~uqeval.metrics.rowweights.CodeSums`, in O(N))."""
    if weights is None:
        return np.quantile(x, q)

    sums = CodeSums(np.asarray(x, dtype=np.float64), row_units(weights))  # (x >= 0: probabilities; no sort)
    h = (sums.total - 1.0) * np.asarray(q, dtype=np.float64)
    lo = np.floor(h)
    a, b = sums.order_statistics(lo), sums.order_statistics(lo + 1.0)
    t = h - lo
    return lerp(a, b, t)


def hosmer_lemeshow(
    p: np.ndarray, y: np.ndarray, groups: int = HL_GROUPS, weights=None
) -> tuple[float, float, int]:
    r"""Hosmer–Lemeshow goodness-of-fit test with groups by deciles of the predicted probability.

    Group edges are the (type 7) quantiles of p at 0, 1/g, ..., 1; a row goes to the group
    :math:`(e_{k-1}, e_k]` (the lowest closed), as ``ResourceSelection::hoslem.test`` in R. Empty
    groups (tied edges) are dropped; with :math:`G` non-empty groups

    .. math:: \hat C = \sum_{k=1}^{G} \frac{(O_k - E_k)^2}{E_k} + \frac{(n_k - O_k - (n_k - E_k))^2}{n_k - E_k}
              \sim \chi^2_{G},

    :math:`O_k` the events and :math:`E_k = \sum p_i` the expected events of group k. A term
    with expectation 0 counts 0 if nothing was observed there, else makes the statistic infinite.

    Degrees of freedom: G, not the G − 2 of the in-sample test. Hosmer & Lemeshow's G − 2 accounts
    for a logistic model fitted on the same rows; probabilities scored on data they were not fitted
    to estimate nothing, and the statistic is χ²_G under calibration (Hosmer, Lemeshow & Sturdivant
    2013, Applied Logistic Regression, 3rd ed., section 5.5 on external validation). With G − 2 the
    p-values of calibrated forecasts are far from uniform (a test checks both).

    ``weights`` (N,): the edges are weighted quantiles (:func:`type7_quantiles`) and each group's term is
    taken on its weighted shares :math:`o_k = O_k / W_k`, :math:`e_k = E_k / W_k` at its effective number of
    rows (Kish, :func:`~uqeval.metrics.rowweights.effective_rows` of the group's weights):

    .. math:: \hat C = \sum_k n_{\mathrm{eff},k} \Big[\frac{(o_k - e_k)^2}{e_k} + \frac{(o_k - e_k)^2}{1 - e_k}\Big],

    the formula above with equal weights. (One n_eff for all the groups over-rejects when the weights are
    uneven: 0.063 at the 5 % level with log-normal weights, against 0.052 per group; benchmarks/null_sizes.py.)

    Returns ``(statistic, p_value, G)``; NaN statistic and p-value when G < 3.
    """
    from scipy import stats

    p = np.asarray(p, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    w = np.ones(p.size) if weights is None else np.asarray(weights, dtype=np.float64)
    edges = type7_quantiles(p, np.linspace(0.0, 1.0, groups + 1), weights)
    g = np.clip(np.searchsorted(edges, p, side="left"), 1, groups)

    def by_group(values):
        return np.bincount(g, weights=values, minlength=groups + 1)[1:]

    total = by_group(w)
    keep = total > 0
    total = total[keep]
    n_k = total if weights is None else kish(total, by_group(w * w)[keep])  # (equal weights: the row counts)
    o1, e1 = by_group(w * y)[keep] / total, by_group(w * p)[keep] / total
    o0, e0 = 1.0 - o1, 1.0 - e1

    def term(o, e):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(e > 0, (o - e) ** 2 / np.where(e > 0, e, 1.0), np.where(o > 0, np.inf, 0.0))

    n_groups = int(keep.sum())
    if n_groups < 3:
        return float("nan"), float("nan"), n_groups
    stat = float((n_k * (term(o1, e1) + term(o0, e0))).sum())
    return stat, float(stats.chi2.sf(stat, n_groups)), n_groups


def binary_calibration_tests(p: np.ndarray, y: np.ndarray, weights=None) -> dict[str, float]:
    """Spiegelhalter's z and p and the Hosmer–Lemeshow statistic and p of P(event) ``p``, events ``y``
    (``weights``: of the rows, see :func:`spiegelhalter` and :func:`hosmer_lemeshow`)."""
    z, zp = spiegelhalter(p, y, weights)
    hl, hlp, _ = hosmer_lemeshow(p, y, weights=weights)
    return {"spiegelhalter_z": z, "spiegelhalter_p": zp, "hosmer_lemeshow_stat": hl, "hosmer_lemeshow_p": hlp}
