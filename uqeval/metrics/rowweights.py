r"""Row weights for the kernels that sort or bin rows: how many rows a weighted row stands for.

A weight is how many times a row counts, so a kernel given weights must equal the same kernel on the rows
repeated that often (integer weights), and scaling every weight must change nothing. Most weighted metrics
are ratios of weighted sums and get both for free. Equal-count bins (ENCE), equal-mass bin edges at
``round(m n / M)`` (ACE, TACE, RMSCE), ``floor(f n)`` rejected rows and unbiased (``n - 1``) variances
depend on the number of rows ``n`` itself: there the kernels count a row of weight :math:`w_i` as

.. math:: u_i = w_i / \min_{j: w_j > 0} w_j

rows (:func:`row_units`), so that equal weights are the unweighted metric, a common factor changes nothing,
and integer weights that include a 1 (a row counted once) are the repeated rows exactly. Where every weight
is a multiple of a larger unit (all weights even, say) the edges are those of the rows repeated ``u_i``
times; such a metric is not duplication invariant unweighted either (doubling every row moves
``round(m n / M)``), so no definition can be both scale-free and equal to every repetition.

The positions of the repeated rows are cumulative sums: row ``i`` of a sorted array holds the repeated
positions ``[C_{i-1}, C_i)``, ``C = cumsum(u)`` (:func:`row_at`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: relative distance from an integer within which a ratio of weights is taken as that integer (weights
#: scaled by a factor such as 0.37 give ratios like 3.0000000000000004)
_SNAP = 1e-9


def row_units(weights) -> np.ndarray:
    """``(N,)`` weights in units of rows: divided by the smallest positive weight, and ratios within 1e-9 of
    an integer taken as that integer (so that 0.37 x integer weights count as the integers). Weights must be
    finite and >= 0 with a positive one (:func:`uqeval.weights.check_weights`)."""
    w = np.asarray(weights, dtype=np.float64)
    u = w / np.min(w[w > 0])
    r = np.rint(u)
    return np.where(np.abs(u - r) <= _SNAP * u, r, u)


def split_bounds(n: float, parts: int) -> np.ndarray:
    """The ``(parts + 1,)`` boundaries of ``numpy.array_split`` of ``n`` sorted rows (repeated rows: a float
    ``n``) into ``parts`` runs of equal count, the first ``n - parts * floor(n / parts)`` one row larger:
    ``[0, ..., n]``. The one place of this equal-count rule: the spread bins of ENCE
    (:func:`uqeval.metrics.spread.spread_bins`) and the width strata of the SSC
    (:func:`uqeval.metrics.conditional_coverage.interval_ssc`) call it."""
    q = np.floor(n / parts)
    j = np.arange(parts + 1)
    return j * q + np.minimum(j, n - q * parts)


def repeated_prefix_sums(units: np.ndarray, values: np.ndarray, positions: np.ndarray) -> np.ndarray:
    r"""Sums of ``values`` over the first ``positions`` repeated rows of sorted rows, row :math:`i` counting
    ``units[i]`` rows (:func:`row_units`) and a row that straddles a position counted in part:
    :math:`S(p) = \sum_{j < i} u_j x_j + (p - C_i)\,x_i` with :math:`C_i = \sum_{j < i} u_j \le p < C_{i+1}`
    (exactly the cumulative sum where :math:`p = C_i`). The one place of this rule: the equal-count bins of
    ENCE (:func:`uqeval.metrics.spread.spread_bins`) and the oracle of the rejection curves
    (:func:`uqeval.metrics.ensembles.rejection_curve`) call it."""
    cum = np.concatenate([[0.0], np.cumsum(units)])
    sums = np.concatenate([[0.0], np.cumsum(units * values)])
    row = np.minimum(np.searchsorted(cum, positions, side="right") - 1, units.size - 1)
    return sums[row] + (positions - cum[row]) * values[row]


def weighted_sorted_cdf(weights_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(C_i, p_i)`` of rows sorted by value: the weighted ECDF just right of each row (the share of weight
    at or before it) and each row's share of the weight."""
    w = np.asarray(weights_sorted, dtype=np.float64)
    total = w.sum()
    return np.cumsum(w) / total, w / total


def kish(total: Any, sq: Any) -> Any:
    r"""Kish's effective number of rows from the sum of the weights and the sum of their squares,
    :math:`n_\mathrm{eff} = (\sum_i w_i)^2 / \sum_i w_i^2` (floats or arrays: one per group). The one place of the
    formula: :func:`effective_rows` (of the weights themselves), the information criteria's streamed standard
    errors (:func:`uqeval.metrics.blocks.sem_from_moments`, of merged sums) and the Hosmer-Lemeshow groups
    (:func:`uqeval.metrics.calibration_tests.hosmer_lemeshow`, per group) call it."""
    return total * total / sq


def effective_rows(weights) -> float:
    r"""Kish's effective number of rows of weighted rows, :math:`n_\mathrm{eff} = (\sum_i w_i)^2 / \sum_i w_i^2`.

    The variance of a weighted mean of independent rows with a common variance :math:`\sigma^2` is
    :math:`\sigma^2 / n_\mathrm{eff}`; it is scale-free and equals ``n`` for equal weights (Kish 1965, Survey
    Sampling, section 11.7). The calibration tests' null distributions and the information criteria's
    standard errors take it where the unweighted ones take the number of rows."""
    w = np.asarray(weights, dtype=np.float64)
    scale = w.max()  # (squares of large or tiny weights stay finite)
    v = w / scale
    return float(kish(v.sum(), np.dot(v, v)))


#: float64 bit pattern >> _CODE_SHIFT: histogram codes of non-negative numbers (monotone in the value; a code
#: spans a relative width of 2**-8)
_CODE_SHIFT = 44


def float_codes(x: np.ndarray, shift: int = _CODE_SHIFT) -> np.ndarray:
    """Histogram codes of non-negative doubles: their float64 bit patterns ``>> shift``, increasing with the
    value (a code spans a relative width of ``2**-(52 - shift)``). The one place of these codes: the weighted
    order statistics (:class:`CodeSums`), the streamed median (:class:`uqeval.catalogue.states.MedianAbsErr`)
    and the streamed UCC's cells of critical scales call it."""
    return np.ascontiguousarray(x, dtype=np.float64).view(np.int64) >> shift


class CodeSums:
    """The weighted counts, score sums and hits of non-negative scores ``x`` per code of their float64 bit
    patterns (monotone in the value), from which the weighted bins of any edges and the order statistics of
    the repeated rows (a row counting ``units`` rows) follow in O(N), sorting only the rows of the codes that
    hold an edge."""

    def __init__(self, x: np.ndarray, units: np.ndarray, hit: np.ndarray | None = None) -> None:
        codes = float_codes(x)
        self.low = int(codes.min())
        self.x, self.units = x, units
        self.hit = np.zeros(x.size, dtype=bool) if hit is None else hit
        self.codes = (codes - self.low).astype(np.intp)
        self.count = np.bincount(self.codes, weights=units)
        self.cum = np.cumsum(self.count)
        self.total = float(self.cum[-1])
        self._sums: np.ndarray | None = None

    def _code_of(self, values: np.ndarray) -> np.ndarray:
        c = float_codes(values) - self.low
        return np.clip(c, -1, self.count.size)

    def _rows_in(self, codes: np.ndarray) -> np.ndarray:
        """Indices of the rows in ``codes`` (valid codes only)."""
        need = np.zeros(self.count.size, dtype=bool)
        need[codes[(codes >= 0) & (codes < self.count.size)]] = True
        return np.flatnonzero(need[self.codes])

    def bins(self, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Weighted ``(counts, score sums, hits)`` per bin of non-decreasing ``edges``, a score in bin
        ``#{edges <= score}`` (as :func:`uqeval.metrics.classification.calibration_errors` bins them)."""
        if self._sums is None:  # the score sums and hits per code, once
            u = self.units
            self._sums = np.stack(
                [
                    self.count,
                    np.bincount(self.codes, weights=u * self.x, minlength=self.count.size),
                    np.bincount(self.codes, weights=np.where(self.hit, u, 0.0), minlength=self.count.size),
                ]
            )
        held = self._code_of(edges)
        nb = edges.size + 1
        exact = np.zeros(self.count.size, dtype=bool)
        exact[held[(held >= 0) & (held < self.count.size)]] = True
        # a code without an edge lies in one bin: the number of edges in lower codes
        code_bin = np.searchsorted(held, np.arange(self.count.size), side="left")
        out = np.zeros((3, nb))  # (float: bincount of no rows gives integers)
        out += np.stack([np.bincount(code_bin[~exact], weights=v[~exact], minlength=nb) for v in self._sums])
        rows = self._rows_in(held)
        if rows.size:
            b = np.searchsorted(edges, self.x[rows], side="right")
            u = self.units[rows]
            out += np.stack(
                [
                    np.bincount(b, weights=v, minlength=nb)
                    for v in (u, u * self.x[rows], np.where(self.hit[rows], u, 0.0))
                ]
            )
        return out[0], out[1], out[2]

    def order_statistics(self, positions: np.ndarray) -> np.ndarray:
        """The scores at ``positions`` (0-based, in sorted order) of the rows repeated ``units`` times:
        :func:`~uqeval.metrics.rowweights.row_at` of the sorted rows."""
        held = np.minimum(np.searchsorted(self.cum, positions, side="right"), self.cum.size - 1)
        rows = self._rows_in(held)
        xs, us, cs = self.x[rows], self.units[rows], self.codes[rows]
        order = np.argsort(xs, kind="stable")
        xs, us, cs = xs[order], us[order], cs[order]  # sorted by value, so grouped by code
        within = np.cumsum(us)
        first = np.searchsorted(cs, cs, side="left")  # each row's first row of its code
        base = np.where(cs > 0, self.cum[np.maximum(cs - 1, 0)], 0.0)
        at = (
            base + within - (within[first] - us[first])
        )  # the cumulative units of the sorted rows at each row
        return xs[np.minimum(np.searchsorted(at, positions, side="right"), xs.size - 1)]
