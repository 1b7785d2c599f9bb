"""Row-wise kernels evaluated block by block: the same numbers with block-sized temporaries.

A kernel such as the Gaussian CRPS builds several full-size temporaries before its mean is
taken (``z * z``, ``exp``, ``ndtr``, ...): at 1e7 rows each is 80 MB, and allocating and
page-faulting them costs more than the arithmetic. :func:`rowwise` evaluates an element-wise
function on blocks of rows and writes each block into one output array, so every row goes
through exactly the same operations (the result is bitwise that of ``fn(*arrays)``) while the
temporaries stay in cache. Reductions (``np.mean``) are then taken over the whole output, in
the same order as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .rowweights import kish

#: rows per block: 16 Ki rows, 128 KiB per float64 temporary -- cache-sized, and small enough for malloc to
#: reuse heap memory (larger blocks are mmap-ed and page-faulted afresh each time: ~0.1 s of system time per
#: pass at 1e7 rows); 611 Python iterations per pass at 1e7 rows
BLOCK = 1 << 14


def _blocks(n: int, block: int):
    for start in range(0, n, block):
        yield start, min(start + block, n)


def _args(arrays, start: int, stop: int, positions: bool) -> list:
    args = [a[start:stop] for a in arrays]
    if positions:  # 1-based row numbers as float64: the same values as np.arange(1, n + 1.0)[start:stop]
        args.insert(0, np.arange(start + 1, stop + 1, dtype=np.float64))
    return args


def rowwise(
    fn: Callable[..., np.ndarray],
    *arrays: np.ndarray,
    out: np.ndarray | None = None,
    dtype=np.float64,
    positions: bool = False,
    block: int | None = None,
) -> np.ndarray:
    """``fn(*arrays)`` for an element-wise (row by row) ``fn`` of (N,) arrays, computed block by block.

    ``out``: an (N,) array to write into (e.g. a buffer reused by several kernels); a new
    array of ``dtype`` by default. ``positions``: ``fn`` also receives, first, the 1-based row
    numbers of the block (float64), for terms that depend on a row's rank in sorted data.
    Returns the (N,) result. A loop over blocks of rows, not rows.
    """
    n, block = len(arrays[0]), block or BLOCK
    if out is None:
        if n <= block:
            return np.asarray(fn(*_args(arrays, 0, n, positions)), dtype=dtype)
        out = np.empty(n, dtype=dtype)
    for start, stop in _blocks(n, block):
        out[start:stop] = fn(*_args(arrays, start, stop, positions))
    return out


def row_argmax(
    fn: Callable[..., np.ndarray], *arrays: np.ndarray, positions: bool = False, block: int | None = None
) -> tuple[int, float]:
    """``(i, v)``: ``np.argmax`` of the element-wise ``fn(*arrays)`` (its first maximum) and the value
    there, without the full-size array (see :func:`rowwise`)."""
    best_i, best_v = -1, None
    for start, stop in _blocks(len(arrays[0]), block or BLOCK):
        values = fn(*_args(arrays, start, stop, positions))
        k = int(np.argmax(values))
        if best_v is None or values[k] > best_v:  # strictly: ties keep the earlier row, as np.argmax
            best_i, best_v = start + k, values[k]
    # no rows: best_v stays None and float(None) raises TypeError, as before
    return best_i, float(best_v)  # type: ignore[arg-type]


def row_mean(
    fn: Callable[..., np.ndarray], *arrays: np.ndarray, out: np.ndarray | None = None, weights=None
) -> float:
    """``float(np.mean(fn(*arrays)))`` with block-sized temporaries (see :func:`rowwise`); ``weights`` (N,): the
    weighted mean."""
    values = rowwise(fn, *arrays, out=out)
    return float(np.mean(values) if weights is None else np.average(values, weights=weights))


#: rows per leaf of :class:`PairwiseSum` (numpy sums a leaf itself; larger ranges are split as numpy splits them)
PAIRWISE_LEAF = 1 << 13


def _halves(n: int) -> tuple[int, int]:
    """How numpy's pairwise summation splits ``n > 128`` values: halves, the first a multiple of 8."""
    half = n // 2
    half -= half % 8
    return half, n - half


class PairwiseSum:
    """``np.add.reduce(x)`` of an (N,) float64 array fed as consecutive pieces of any sizes, bit for bit.

    numpy sums a contiguous float64 array pairwise: a range of more than 128 values is split into
    two halves (the first a multiple of 8) summed recursively and then added; a shorter one is
    summed in 8 interleaved partial sums (``pairwise_sum`` in numpy's ``loops_utils.h.src``). The
    split depends only on the length, so the sum of the whole array is the same tree over ranges
    of at most :data:`PAIRWISE_LEAF` values, each of which numpy sums itself. Only one leaf is
    held at a time: a per-row score made block by block (``uqeval compare``) has the mean
    ``np.mean`` of the whole array would give, without the array.
    """

    def __init__(self, n: int, leaf: int = PAIRWISE_LEAF) -> None:
        if leaf < 128:
            raise ValueError("leaf must be >= 128 (numpy sums up to 128 values without splitting)")
        self.n, self._leaf = int(n), int(leaf)
        self._lengths: list[int] = []
        todo = [self.n]  # depth first, left half first: the leaves in row order
        while todo:
            m = todo.pop()
            if m <= self._leaf:
                self._lengths.append(m)
            else:
                left, right = _halves(m)
                todo += [right, left]
        self._sums: list[float] = []
        self._pending: list[np.ndarray] = []
        self._have = 0

    @property
    def leaves(self) -> list[int]:
        """The lengths of the leaves numpy sums itself, in row order (pieces of these sizes are not copied)."""
        return list(self._lengths)

    def add(self, x: np.ndarray) -> None:
        """Add the next ``len(x)`` values (in row order)."""
        x = np.ascontiguousarray(x, dtype=np.float64).ravel()
        at = 0
        while at < x.size:
            if len(self._sums) == len(self._lengths):
                raise ValueError(f"more than {self.n} values added")
            need = self._lengths[len(self._sums)] - self._have
            take = min(need, x.size - at)
            if not self._have and take == need:  # a whole leaf inside this piece
                self._sums.append(np.add.reduce(x[at : at + take]))
            else:
                self._pending.append(x[at : at + take].copy())
                self._have += take
                if take == need:  # the leaf is complete
                    self._sums.append(np.add.reduce(np.concatenate(self._pending)))
                    self._pending, self._have = [], 0
            at += take

    def total(self) -> float:
        """The sum of all ``n`` values (all must have been added)."""
        if self.n == 0:
            return 0.0
        if len(self._sums) != len(self._lengths):
            raise ValueError(f"{self.n} values expected, not all were added")
        sums = iter(self._sums)

        def combine(m: int) -> float:
            if m <= self._leaf:
                return next(sums)
            left, right = _halves(m)
            return combine(left) + combine(right)

        return float(combine(self.n))


def trapezoid(x: np.ndarray, y: np.ndarray) -> float:
    """The trapezoid rule: the area under the polyline through ``(x, y)``, 0 for fewer than two points.

    The value of ``scipy.integrate.trapezoid(y, x)`` (halving the sum rather than each term is exact),
    without importing scipy.integrate (~0.15 s: it loads scipy.optimize and scipy.sparse). The terms are
    made block by block and summed as ``np.sum`` of the whole array would sum them (:class:`PairwiseSum`)."""
    if x.size < 2:
        return 0.0
    m = x.size - 1
    total = PairwiseSum(m)
    for start, stop in _blocks(m, BLOCK):
        total.add(np.diff(x[start : stop + 1]) * (y[start + 1 : stop + 1] + y[start:stop]))
    return float(total.total() * 0.5)


def merge_moments(
    n_a: Any, mean_a: Any, m2_a: Any, n_b: Any, mean_b: Any, m2_b: Any, comoments: bool = False
) -> tuple[Any, Any, Any]:
    r"""``(n, mean, m2)`` of two disjoint sets of rows from each one's count (or total weight), mean and centred
    sum of squares: Chan, Golub & LeVeque's pairwise update (1979; weighted: West 1979),

    .. math:: \delta = \bar x_b - \bar x_a, \quad \bar x = \bar x_a + \delta\,\frac{n_b}{n}, \quad
              M_2 = M_{2,a} + M_{2,b} + \delta^2\,\frac{n_a n_b}{n},

    exact far from zero where raw sums of squares lose every digit. ``mean`` and ``m2`` may be arrays (one
    column each); ``comoments``: ``m2`` is the co-moment matrix and :math:`\delta^2` the outer product
    :math:`\delta\delta^\top`. The one place of this update: the catalogue's moment states
    (:func:`uqeval.catalogue.states.chan_merge`), the Diebold-Mariano moments
    (:class:`uqeval.metrics.comparison.Moments`) and the UCC's target moments call it."""
    n = n_a + n_b
    delta = mean_b - mean_a
    cross = np.outer(delta, delta) if comoments else delta * delta
    return n, mean_a + delta * (n_b / n), m2_a + m2_b + cross * (n_a * n_b / n)


def sem_moments(t: np.ndarray, weights: np.ndarray | None = None) -> dict[str, Any]:
    """The moments :func:`sem_from_moments` takes, of per-row terms ``t`` (N, k) and row weights (N,) (unit
    weights where None): ``{"n": sum w, "sq": sum w^2, "mean": (k,) weighted means, "m2": (k,) sums of
    w (t - mean)^2}``. Two such states of disjoint rows merge with the weighted form of Chan, Golub &
    LeVeque's pairwise update (West 1979; :func:`merge_moments`, ``sq`` added): centred
    sums, exact far from zero where raw sums of squares lose every digit."""
    t = np.asarray(t, dtype=np.float64)
    w = np.ones(t.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    total = float(w.sum())
    mean = w @ t / total
    return {"n": total, "sq": float(np.dot(w, w)), "mean": mean, "m2": w @ np.square(t - mean)}


def sem_from_moments(st: dict[str, Any]) -> np.ndarray:
    r"""``(k,)`` standard errors of weighted means from :func:`sem_moments` (of all rows, or merged):

    .. math:: \mathrm{se} = \sqrt{\frac{\sum_i w_i (t_i - \bar t_w)^2 / \sum_i w_i}{n_\mathrm{eff} - 1}},
              \qquad n_\mathrm{eff} = \frac{(\sum_i w_i)^2}{\sum_i w_i^2}

    (Kish's effective number of rows, :func:`~uqeval.metrics.rowweights.kish`): with unit weights
    :math:`s / \sqrt N` (ddof = 1), scale-free, and :math:`\mathrm{se}^2 (n_\mathrm{eff} - 1)` is the
    weighted variance of the rows (integer weights: that of the repeated rows). NaN where
    :math:`n_\mathrm{eff} \le 1` (one row). Assumes independent rows with weights fixed apart from the outcomes.
    The one place of the standard error of a mean: the information criteria's ``*_se`` (in memory and
    streamed) and the adversarial group calibration's ``*_stderr`` call it.
    """
    total, sq, m2 = st["n"], st["sq"], np.asarray(st["m2"], dtype=np.float64)
    n_eff = kish(total, sq) if sq > 0 else 0.0
    if not n_eff > 1.0 + 1e-12:
        return np.full(m2.shape, np.nan)
    return np.sqrt(m2 / total / (n_eff - 1.0))


def lerp(a: np.ndarray, b: np.ndarray, t: Any) -> Any:
    """numpy's ``_lerp`` of ``np.quantile(method="linear")``: ``a + (b - a) t``, but ``b - (b - a)(1 - t)`` where
    ``t >= 0.5`` (exact at ``t == 1``), so type-7 quantiles equal numpy's bit for bit. ``t`` a scalar or an
    array along the last axis of ``a`` and ``b``. The one place of this rule: the ensembles' quantiles
    (:func:`uqeval.metrics.samples.empirical_quantiles`) and the weighted type-7 quantiles
    (:func:`uqeval.metrics.calibration_tests.type7_quantiles`) call it."""
    diff = b - a
    out = a + diff * t
    upper = np.asarray(t) >= 0.5
    if upper.ndim == 0:
        return b - diff * (1.0 - t) if upper else out
    if upper.any():
        out[..., upper] = b[..., upper] - diff[..., upper] * (1.0 - t[upper])
    return out
