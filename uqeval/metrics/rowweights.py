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


def row_at(cum: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Index of the row that holds repeated position ``position`` (0-based) given the cumulative row units
    ``cum`` of sorted rows: the first ``i`` with ``cum[i] > position`` (clipped to the last row)."""
    return np.minimum(np.searchsorted(cum, position, side="right"), cum.size - 1)


def weighted_sorted_cdf(weights_sorted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(C_i, p_i)`` of rows sorted by value: the weighted ECDF just right of each row (the share of weight
    at or before it) and each row's share of the weight."""
    w = np.asarray(weights_sorted, dtype=np.float64)
    total = w.sum()
    return np.cumsum(w) / total, w / total


def effective_rows(weights) -> float:
    r"""Kish's effective number of rows of weighted rows, :math:`n_\mathrm{eff} = (\sum_i w_i)^2 / \sum_i w_i^2`.

    The variance of a weighted mean of independent rows with a common variance :math:`\sigma^2` is
    :math:`\sigma^2 / n_\mathrm{eff}`; it is scale-free and equals ``n`` for equal weights (Kish 1965, Survey
    Sampling, section 11.7). The calibration tests' null distributions and the information criteria's
    standard errors take it where the unweighted ones take the number of rows."""
    w = np.asarray(weights, dtype=np.float64)
    scale = w.max()  # (squares of large or tiny weights stay finite)
    v = w / scale
    return float(v.sum() ** 2 / np.dot(v, v))
