r"""Statistics for comparing models evaluated on the same targets.

Pure numpy/scipy kernels behind ``uqeval compare`` (the bootstrap and the sign-flip permutation
test are in :mod:`uqeval.resample`: weights and signs keyed by the global row, applied as matrix
products in blocks of rows):

- :func:`diebold_mariano`: statistic of the mean score difference with the Harvey–Leybourne–Newbold
  (1997) small-sample correction and a Student t(N − 1) reference; ``lag`` adds the autocovariances
  of time-ordered rows (Diebold & Mariano 1995).
- :func:`ranks`: rank of each model per metric, 1 = best, ties averaged; the
  rank-consistency view of Kompa, Snoek & Beam (2021, Fig. 11), who compare the
  ordering of methods under coverage, Brier score and ECE.

Per-row scores are losses (lower is better) by convention, but nothing here
depends on that except the sign of the differences ``a - b`` reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..errors import InputError
from ..validation import as_float_array, check_finite, check_same_length
from .blocks import merge_moments


def _check_count(value: int, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _paired_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = as_float_array(a, "a")
    b = as_float_array(b, "b")
    check_same_length([a, b], ["a", "b"])
    check_finite(a, "a")
    check_finite(b, "b")
    return a - b


def diebold_mariano(a: np.ndarray, b: np.ndarray, lag: int = 0) -> dict[str, float]:
    r"""Diebold–Mariano test of equal expected scores with the Harvey–Leybourne–Newbold correction.

    With :math:`d_i = a_i - b_i`, :math:`\bar d` their mean, autocovariances
    :math:`\hat\gamma_k = \frac1N \sum_{i=k+1}^{N} (d_i - \bar d)(d_{i-k} - \bar d)` and
    :math:`h` = ``lag`` + 1 (the forecast horizon: errors of h-step forecasts are correlated up to
    lag h − 1),

    .. math:: \hat V = \frac1N\Big(\hat\gamma_0 + 2\sum_{k=1}^{h-1}\hat\gamma_k\Big),
              \qquad
              \text{DM}^* = \sqrt{\frac{N + 1 - 2h + h(h-1)/N}{N}}\;\frac{\bar d}{\sqrt{\hat V}},
              \qquad p = 2\,P(T_{N-1} > |\text{DM}^*|)

    (Diebold & Mariano 1995; the small-sample factor and the Student t reference with N − 1
    degrees of freedom are Harvey, Leybourne & Newbold 1997, "Testing the equality of prediction
    mean squared errors", Int. J. Forecasting 13, eqs. 5 and 9; ``scores``'
    ``diebold_mariano(method="HLN", statistic_distribution="t")`` computes the same statistic).
    With ``lag=0`` (h = 1) it is exactly the paired t test of the differences. Use ``lag > 0``
    only when rows are ordered in time and neighbouring errors are correlated (``lag = horizon -
    1`` for multi-step forecasts). The variance uses the truncated (uniform) weights of HLN, which
    can make :math:`\hat V` non-positive for ``lag > 0``: statistic and p-value are then NaN.

    Returns
    -------
    dict with ``statistic`` (negative if ``a`` has lower mean score) and
    ``p_value``. If all differences are equal the variance is 0: the statistic is
    0 (p = 1) when they are all 0, else +-inf (p = 0).
    """
    d = _paired_differences(a, b)
    n = d.size
    if n < 2:
        raise InputError(f"diebold_mariano needs at least 2 rows, got {n}")
    lag = _check_count(lag, "lag", minimum=0)
    if lag >= n:
        raise InputError(f"lag must be smaller than the number of rows ({n}), got {lag}")
    return Moments.of(d[:, None], lag, shift=np.array([d.mean()])).dm(0)


def dm_from_moments(dbar: float, acov: float, n: int, max_abs: float, lag: int = 0) -> dict[str, float]:
    r"""The Diebold–Mariano statistic and p-value of :func:`diebold_mariano` from the mean difference
    :math:`\bar d`, the long-run autocovariance sum :math:`\hat\gamma_0 + 2\sum_{k=1}^{h-1} \hat\gamma_k`,
    the row count, :math:`\max_i |d_i|` and the lag h − 1 (the streamed compare merges these over chunks)."""
    from scipy.special import stdtr  # Student t CDF, without importing scipy.stats (~0.5 s)

    scale = max(max_abs, 1e-300)
    var = acov * n / (n - 1)
    if not np.isfinite(var):  # the squares of the differences overflowed float64: no statistic
        return {"statistic": float("nan"), "p_value": float("nan")}
    if (
        np.sqrt(abs(var)) <= 1e-14 * scale
    ):  # every difference the same (roots: (1e-14 * scale) ** 2 overflows)
        if abs(dbar) <= 1e-14 * scale:
            return {"statistic": 0.0, "p_value": 1.0}
        return {"statistic": float(np.copysign(np.inf, dbar)), "p_value": 0.0}
    if not var > 0:  # the truncated long-run variance (lag > 0) is not positive: no test (as HLN)
        return {"statistic": float("nan"), "p_value": float("nan")}
    statistic = dbar / np.sqrt(var / n)  # h = 1: HLN's factor sqrt((N - 1) / N) makes it the paired t
    if lag:
        h = lag + 1
        statistic = dbar / np.sqrt(acov / n) * np.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)
    return {"statistic": float(statistic), "p_value": float(2.0 * stdtr(n - 1, -abs(statistic)))}


def lag_autocovariance(lagged: Any, delta: Any, sum_a: Any, sum_b: Any, n: int, k: int) -> Any:
    r"""The lag-``k`` autocovariance :math:`\hat\gamma_k = \frac1N\sum_{i>k} (d_i - \bar d)(d_{i-k} - \bar d)` from
    sums of the shifted :math:`e = d - c`: :math:`N\hat\gamma_k = S_k - \delta (A_k + B_k) + (N - k)\delta^2`,
    with :math:`S_k = \sum_i e_i e_{i-k}`, :math:`\delta = \bar d - c` and :math:`A_k, B_k` the sums of
    :math:`e` without its first and without its last ``k`` rows (floats, or arrays of one column each). The one
    place of this expansion: :meth:`Moments.dm` and compare's lag-1 note call it."""
    return (lagged - delta * (sum_a + sum_b) + (n - k) * delta * delta) / n


@dataclass
class Moments:
    r"""Mergeable moments of paired differences :math:`d` (one column per test) for the Diebold--Mariano
    test: count, mean and centred sum of squares (Chan et al.'s pairwise merge), the lag products
    :math:`S_k = \sum_i e_i e_{i-k}` of :math:`e = d - c` for a fixed ``shift`` :math:`c`, the first and last
    ``lag`` rows of :math:`e` (products across a merge), the sums of :math:`d` and :math:`|d|` and
    :math:`\max |d|`.

    A shift near the mean keeps the lag products as accurate as products of centred values (with
    :math:`c = 0` they cancel when the mean is large against the spread); every partial that is
    merged must use the same shift. ``uqeval compare`` folds blocks of rows (in memory) or batches
    (``--engine stream|dask``) into one; :func:`diebold_mariano` is one block."""

    lag: int
    shift: np.ndarray | float = 0.0
    n: int = 0
    # the arrays are None only in the empty Moments (n == 0, the identity of merge, which merge returns
    # past); typed as arrays, as the prediction containers' required arrays, so the code that reads them
    # needs no None checks (reading them from an empty Moments fails as before)
    mean: np.ndarray = None  # type: ignore[assignment]
    m2: np.ndarray = None  # type: ignore[assignment]
    lagged: np.ndarray = None  # type: ignore[assignment]
    head: np.ndarray = None  # type: ignore[assignment]
    tail: np.ndarray = None  # type: ignore[assignment]
    total: np.ndarray = None  # type: ignore[assignment]
    total_abs: np.ndarray = None  # type: ignore[assignment]
    max_abs: np.ndarray = None  # type: ignore[assignment]

    @classmethod
    def of(cls, d: np.ndarray, lag: int, shift: np.ndarray | float = 0.0) -> Moments:
        """The moments of the rows of ``d`` (n, t)."""
        mean = d.mean(axis=0)
        c = d - mean
        m2 = np.einsum("ij,ij->j", c, c)
        np.abs(d, out=c)
        e = d - shift if lag and np.any(shift) else d
        lagged = np.array([np.einsum("ij,ij->j", e[k:], e[:-k]) for k in range(1, lag + 1)]).reshape(
            lag, d.shape[1]
        )
        return cls(
            lag,
            shift,
            d.shape[0],
            mean,
            m2,
            lagged,
            e[:lag].copy(),
            e[max(0, len(e) - lag) :].copy(),
            d.sum(axis=0),
            c.sum(axis=0),
            c.max(axis=0),
        )

    def merge(self, other: Moments) -> Moments:
        """The moments of this partial's rows followed by ``other``'s (order matters for the lag products)."""
        if not self.n:
            return other
        if not other.n:
            return self
        if not np.array_equal(self.shift, other.shift):
            raise ValueError("moments with different shifts cannot be merged")  # a bug, not bad input
        n, mean, m2 = merge_moments(self.n, self.mean, self.m2, other.n, other.mean, other.m2)
        lagged = self.lagged + other.lagged
        x = np.concatenate([self.tail, other.head])
        la = len(self.tail)
        for k in range(1, self.lag + 1):  # products of rows k apart across the boundary: a loop over lags
            lo, hi = max(0, la - k), min(la, len(x) - k)
            if hi > lo:
                lagged[k - 1] += np.einsum("ij,ij->j", x[lo:hi], x[lo + k : hi + k])
        return Moments(
            self.lag,
            self.shift,
            n,
            mean,
            m2,
            lagged,
            np.concatenate([self.head, other.head])[: self.lag],
            np.concatenate([self.tail, other.tail])[max(0, la + len(other.tail) - self.lag) :],
            self.total + other.total,
            self.total_abs + other.total_abs,
            np.maximum(self.max_abs, other.max_abs),
        )

    def dm(self, j: int) -> dict[str, float]:
        r"""The Diebold--Mariano test of column ``j`` (:func:`dm_from_moments`): with :math:`\delta = \bar d - c`,
        :math:`N\hat\gamma_k = S_k - \delta (A_k + B_k) + (N - k)\delta^2`, where :math:`A_k, B_k` are the sums
        of :math:`e` without its first and without its last ``k`` rows."""
        n, dbar = self.n, float(self.mean[j])
        shift = float(np.broadcast_to(self.shift, self.mean.shape)[j])
        delta, sum_e = dbar - shift, float(self.total[j]) - n * shift
        acov = float(self.m2[j]) / n
        for k in range(1, self.lag + 1):
            a = sum_e - float(self.head[:k, j].sum())
            b = sum_e - float(self.tail[len(self.tail) - k :, j].sum())
            gamma = lag_autocovariance(float(self.lagged[k - 1, j]), delta, a, b, n, k)
            acov += 2.0 * gamma  # uniform weights up to lag h - 1 (HLN 1997, eq. 5)
        return dm_from_moments(dbar, acov, n, float(self.max_abs[j]), self.lag)


def ranks(
    values: Mapping[str, float],
    orientation: Literal["lower", "higher", "target"],
    target: float | None = None,
) -> dict[str, float]:
    r"""Rank models by one metric: 1 = best, ties share the average rank.

    ``"lower"`` ranks by value ascending, ``"higher"`` descending and
    ``"target"`` by :math:`|v - \text{target}|` ascending (``target`` is
    required, e.g. the nominal level for coverage). Models whose value is NaN get
    rank NaN and do not take a rank from the others. Comparing the ranks of the
    same models across metrics is the rank-consistency view of Kompa, Snoek &
    Beam (2021, Fig. 11).

    Examples
    --------
    >>> ranks({"a": 0.3, "b": 0.1, "c": 0.3}, "lower")
    {'a': 2.5, 'b': 1.0, 'c': 2.5}
    >>> ranks({"a": 0.93, "b": 0.99}, "target", target=0.95)
    {'a': 1.0, 'b': 2.0}
    """
    names = list(values)
    v = np.array([np.nan if values[k] is None else float(values[k]) for k in names], dtype=np.float64)
    if orientation == "lower":
        key = v
    elif orientation == "higher":
        key = -v
    elif orientation == "target":
        if target is None or not np.isfinite(target):
            raise InputError("ranks with orientation 'target' need a finite target value (e.g. the level)")
        key = np.abs(v - float(target))
    else:
        raise InputError(f"orientation must be 'lower', 'higher' or 'target', got {orientation!r}")
    out = np.full(v.shape, np.nan)
    ok = ~np.isnan(key)
    if ok.any():
        out[ok] = _average_ranks(key[ok])
    return {k: float(r) for k, r in zip(names, out)}


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x``, ties sharing the mean of their ranks (``scipy.stats.rankdata(x, "average")``,
    the same algorithm, without importing scipy.stats: ~0.5 s and ~30 MB)."""
    order = np.argsort(x, kind="mergesort")
    inverse = np.empty(x.size, dtype=np.intp)
    inverse[order] = np.arange(x.size)
    s = x[order]
    first = np.r_[True, s[1:] != s[:-1]]
    dense = first.cumsum()[inverse]
    count = np.r_[np.nonzero(first)[0], first.size]
    return 0.5 * (count[dense] + count[dense - 1] + 1)
