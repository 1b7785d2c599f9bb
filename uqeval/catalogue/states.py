"""Mergeable states of the catalogue metrics: ``init / update(batch) / merge(a, b) / finalize(state)``.

The same code serves every engine: in memory a single batch is the whole file; the stream
engine updates one state per record batch; the Dask engine maps partitions to partial
states and tree-reduces them with :func:`merge` (torchmetrics' ``update``/``compute``,
Dask's chunk/combine/aggregate). States are plain dicts of numbers and numpy arrays, so
they pickle cheaply between processes.

One state per metric (issue 36), by the first of these routes that applies (:func:`_plan`):

- a Special state of :data:`SPECIAL` (below), where sums cannot express the metric;
- **the sums of its per-row form** (:meth:`uqeval.catalogue.RowStat.sums`: plain sums and counts of codes at unit
  weights, weighted sums with ``--weights``), finished by the form's own ``finish``: the state of weighted
  streaming, the bootstrap and ``score --preserve-dims`` cells too (MAE, the scoring rules, coverage, the PIT
  calibration errors, sharpness, the spread–skill ratio, ...). **Exact.**
- a family's fixed-cell sums (:attr:`uqeval.catalogue.Family.weighted_sums` at unit weights, its ``from_sums``):
  the even-bin ECE/MCE/SCE and the Brier decomposition. **Exact.**
- no per-row form (per-level pinball and interval scores, the PIT and set-size histograms, ensemble diversity):
  the family's own kernel runs on the batch, every value weighted by the batch's row count (``"mean"``) or
  summed (``"histogram"``, fixed edges). **Exact.**

The Special states: (target, point) moments (RMSE, R², correlation) and the WAIC/ISCV term moments (``*_se``,
finished by the kernel's own :func:`~uqeval.metrics.blocks.sem_from_moments`), both centred and merged with
Chan et al.'s pairwise update, weighted (West 1979) with ``--weights`` and at unit weights without: one state
each, weighted or not; cover-index counts feeding the adversarial group calibration's seeded draws; the
ensemble rank histogram. Order statistics: MdAE exact in two passes (:class:`MedianAbsErr`); max_cal_err from a
2^20-bin PIT histogram within 1/(2B) (:class:`PitKS`); RS and ACCRUE from per-row sums plus a
code histogram for the Gini pair sum, within a bound computed from the data
(:class:`ReliabilityScore`). The rest (adaptive-bin RMSCE/ACE/TACE, rejection curves,
Bayesian ECE, SPCE) is **not streamed**: left out of the result and named with the reason
(:func:`not_streamed`); run in memory (``--engine memory``) for those.

A weighted state (:func:`uqeval.catalogue.weighted.weighted_state`) has the same layout, so :func:`merge`,
:func:`selection`, :func:`second_state` and :func:`finalize` serve both.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator
from typing import Any, NamedTuple, cast

import numpy as np

from ..errors import InputError
from ..predictions import Prediction
from ..validation import trusted
from . import FAMILIES, METRICS, Family, RowStat, Settings, compute, families_for, orientation_of, rows
from .core import _cover_index, _expected

State = dict[str, Any]

# --------------------------------------------------------------------------- sparse histograms

#: arrays of at least this many elements are kept sparse between batches when at most a quarter is non-zero
SPARSE_MIN = 1 << 16


class Packed:
    """A mostly-zero array (a histogram of the PIT, RS or MdAE states: 2**19-2**20 bins) as its non-zeros.

    The states merge these histograms with ``+`` only, so :meth:`__add__` is all a packed state needs: two
    packed arrays add sparsely (a union of indices), and the sum turns dense once a quarter is non-zero."""

    __slots__ = ("index", "values", "shape", "dtype")
    __array_ufunc__ = None  # ndarray + Packed defers to Packed.__radd__

    def __init__(self, index: np.ndarray, values: np.ndarray, shape: tuple, dtype) -> None:
        self.index, self.values, self.shape, self.dtype = index, values, shape, dtype

    @classmethod
    def of(cls, a: np.ndarray) -> Packed:
        flat = a.ravel()
        index = np.flatnonzero(flat)
        return cls(index, flat[index], a.shape, a.dtype)

    def array(self) -> np.ndarray:
        out = np.zeros(self.shape, dtype=self.dtype)
        out.ravel()[self.index] = self.values
        return out

    def __add__(self, other: Any) -> Any:
        if isinstance(other, Packed):
            # both indices are sorted: a stable sort of the two runs merges them in linear time (timsort), a
            # monitor adds many small windows into a large sum (union1d hashed both each time, ~20x slower)
            both = np.concatenate([self.index, other.index])
            order = np.argsort(both, kind="stable")
            both = both[order]
            first = np.ones(both.size, dtype=bool)
            first[1:] = both[1:] != both[:-1]
            starts = np.flatnonzero(first)
            if starts.size > int(np.prod(self.shape)) // 4:
                return self.array() + other
            dtype = np.result_type(self.values, other.values)
            values = np.concatenate([self.values, other.values]).astype(dtype, copy=False)[order]
            values = np.add.reduceat(values, starts) if starts.size else values
            return Packed(both[starts], values, self.shape, dtype)
        out = np.array(other, dtype=np.result_type(other, self.values))
        out.ravel()[self.index] += self.values
        return out

    __radd__ = __add__


def pack(x: Any) -> Any:
    """A state with its large mostly-zero arrays :class:`Packed`: a group of a few rows then holds kilobytes,
    not the 28 MB of a Gaussian state's dense histograms (1,000 groups would need 28 GB)."""
    if isinstance(x, dict):
        return {k: pack(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(pack(v) for v in x)
    if isinstance(x, np.ndarray) and x.size >= SPARSE_MIN and np.count_nonzero(x) <= x.size // 4:
        return Packed.of(x)
    return x


def unpack(x: Any) -> Any:
    """The state :func:`pack` packed, with dense arrays again."""
    if isinstance(x, dict):
        return {k: unpack(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(unpack(v) for v in x)
    return x.array() if isinstance(x, Packed) else x


def nonzero_bins(x: Any, weights: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(bins, counts, weights)`` of a histogram of counts (dense or :class:`Packed`): its non-zero bins in
    increasing order, their counts and, with ``weights`` (a histogram of sums over the same codes), their
    sums; O(non-zero bins) for a packed histogram."""
    if isinstance(x, Packed):
        keep = x.values != 0
        idx, c = x.index[keep], x.values[keep]
    else:
        idx = np.flatnonzero(x)
        c = x[idx]
    if weights is None:
        return idx, c, None
    if isinstance(weights, Packed):
        pos = np.minimum(np.searchsorted(weights.index, idx), max(weights.index.size - 1, 0))
        hit = weights.index[pos] == idx if weights.index.size else np.zeros(idx.size, dtype=bool)
        w = np.where(hit, weights.values[pos] if weights.index.size else 0.0, 0.0)
    else:
        w = weights[idx]
    return idx, c, w


def histogram(codes: np.ndarray, bins: int, weights: np.ndarray | None = None) -> Any:
    """``numpy.bincount(codes, weights, minlength=bins)``, as a :class:`Packed` when the rows are far fewer
    than the bins (a small batch or a ``--by`` group of a few rows): no 8 MB array per 2**20-bin histogram
    of a handful of rows. The states add histograms with ``+`` only, which both forms support; the
    finishing steps see dense arrays (:func:`unpack`)."""
    if codes.size * 16 >= bins:
        return np.bincount(codes, weights=weights, minlength=bins)
    index, inverse = np.unique(codes, return_inverse=True)
    values = np.bincount(inverse.reshape(-1), weights=weights, minlength=index.size)
    return Packed(index, values, (bins,), values.dtype)


# --------------------------------------------------------------------------- linear (mean / histogram) leaves


def _tag_leaves(value: Any, n: int, reduction: str, key: str | None = None) -> Any:
    """A chunk value as a tree of tagged leaves: ("m", n * v) mean, ("s", v) sum, ("k", v) kept as is."""
    if isinstance(value, dict):
        return {k: _tag_leaves(v, n, reduction, k) for k, v in value.items()}
    if reduction == "histogram":
        if key == "edges" or value is None:
            return ("k", np.asarray(value) if value is not None else None)
        return ("s", np.asarray(value))
    if value is None:
        return ("k", None)
    return ("m", n * np.asarray(value, dtype=np.float64))


def _merge_tree(a: Any, b: Any) -> Any:
    if isinstance(a, dict):
        return (
            {k: _merge_tree(a[k], b[k]) if k in b else a[k] for k in {**a, **b}} if isinstance(b, dict) else a
        )
    tag, va = a
    _, vb = b
    if tag == "k":
        return a
    return (tag, va + vb)


def _finish_tree(t: Any, n: int) -> Any:
    if isinstance(t, dict):
        return {k: _finish_tree(v, n) for k, v in t.items()}
    tag, v = t
    if tag == "m":
        return float(v / n) if np.ndim(v) == 0 else (v / n).tolist()
    if tag == "s":
        return v.tolist()
    return v.tolist() if isinstance(v, np.ndarray) else v


# --------------------------------------------------------------------------- sufficient statistics


class Special:
    """A mergeable state of some metrics of one family: ``update(pred, s) -> state``,
    ``merge(a, b) -> state``, ``finalize(state, s) -> {metric: value}``."""

    metrics: tuple[str, ...] = ()
    kinds: tuple[str, ...] | None = None  # None: every representation of the family
    #: metrics this state gives approximately: {metric: the stated bound on |streamed - in memory|}
    approximate: dict[str, str] = {}
    #: finalize reads :class:`Packed` histograms as they are (their non-zero bins, :func:`nonzero_bins`):
    #: a monitor finishes many windows of few rows, and unpacking 2**20 bins each time dominated
    sparse = False

    #: update/update2 take ``(N,)`` row weights (``w``; rows of weight 0 dropped): the weighted streaming engines
    #: keep this state beside the weighted sums (:mod:`uqeval.catalogue.weighted`)
    weighted = False

    def update(self, p: Prediction, s: Settings, w: np.ndarray | None = None) -> State | None: ...

    def merge(self, a: State, b: State) -> State:
        return {k: a[k] + b[k] for k in a}

    # an interface: every Special overrides finalize; update2/merge2/finalize2 those whose select() keeps rows
    def finalize(self, st: State, s: Settings) -> dict[str, Any]: ...  # type: ignore[empty-body]

    # a second pass over the rows, for exact order statistics: select() reads the merged first-pass
    # state and says which rows to keep; update2/merge2 collect them; finalize2 finishes the metrics
    def select(self, st: State) -> Any | None:
        return None

    def update2(self, sel: Any, p: Prediction, s: Settings, w: np.ndarray | None = None) -> State: ...  # type: ignore[empty-body]

    def merge2(self, a: State, b: State) -> State: ...  # type: ignore[empty-body]

    def finalize2(self, st: State, sel: Any, st2: State, s: Settings) -> dict[str, Any]: ...  # type: ignore[empty-body]


class Composite(Special):
    """Several states of one family side by side."""

    def __init__(self, *parts: Special) -> None:
        self.parts = parts
        self.metrics = tuple(m for p in parts for m in p.metrics)
        self.approximate = {k: v for p in parts for k, v in p.approximate.items()}
        self.sparse = all(p.sparse for p in parts)
        self.weighted = all(p.weighted for p in parts)

    def update(self, p, s, w=None):
        out = {i: part.update(p, s, w) for i, part in enumerate(self.parts)}
        return None if all(v is None for v in out.values()) else out

    def merge(self, a, b):
        return {i: part.merge(a[i], b[i]) for i, part in enumerate(self.parts)}

    def finalize(self, st, s):
        return {k: v for i, part in enumerate(self.parts) for k, v in part.finalize(st[i], s).items()}

    def select(self, st):
        out = {i: part.select(st[i]) for i, part in enumerate(self.parts)}
        out = {i: v for i, v in out.items() if v is not None}
        return out or None

    def update2(self, sel, p, s, w=None):
        return {i: self.parts[i].update2(v, p, s, w) for i, v in sel.items()}

    def merge2(self, a, b):
        return {i: self.parts[i].merge2(a[i], b[i]) for i in a}

    def finalize2(self, st, sel, st2, s):
        return {k: v for i, v in sel.items() for k, v in self.parts[i].finalize2(st[i], v, st2[i], s).items()}


#: float64 bit pattern >> MEDIAN_SHIFT: 1M histogram codes for non-negative values (11 exponent bits and the
#: top 8 mantissa bits: a code spans a relative width of 2**-8)
MEDIAN_SHIFT = 44
MEDIAN_CODES = 1 << 19
#: most rows the second pass collects (the rows in the median's histogram code); above it mdae is left out
MEDIAN_CAP = 20_000_000


class MedianAbsErr(Special):
    """Exact MdAE in two passes: a histogram of |y - point| over the float64 bit patterns (monotone for
    non-negative numbers) finds the codes holding the middle order statistics; the second pass collects
    the rows in those codes, and their sort gives the median exactly (the mean of the two middle values
    for even N, as ``numpy.median``). With row weights the histogram also sums the weights per code; the
    codes are those where the cumulative weight reaches and passes half the total, and the collected rows'
    weighted selection (:func:`uqeval.metrics.accuracy.weighted_median_select`, as in memory) gives the
    weighted median exactly."""

    metrics = ("mdae",)
    sparse = True  # finalize reads nothing; select unpacks
    weighted = True

    @staticmethod
    def _abs_err(p) -> np.ndarray | None:
        point = p.point()
        return None if point is None else np.abs(p.y_true - point)

    @staticmethod
    def _codes(a: np.ndarray) -> np.ndarray:
        from ..metrics.rowweights import float_codes

        return float_codes(a, MEDIAN_SHIFT).astype(np.intp)

    def update(self, p, s, w=None):
        a = self._abs_err(p)
        if a is None:
            return None
        codes = self._codes(a)
        out = {"hist": histogram(codes, MEDIAN_CODES)}
        if w is not None:
            out["whist"] = histogram(codes, MEDIAN_CODES, w)
        return out

    def merge(self, a, b):
        return {k: a[k] + b[k] for k in a}

    def finalize(self, st, s):
        return {}

    def select(self, st):
        hist = unpack(st["hist"])
        cum = np.cumsum(hist)
        if "whist" in st:  # the codes where the cumulative weight reaches half the total, and exceeds it
            wcum = np.cumsum(unpack(st["whist"]))
            mid = float(wcum[-1]) / 2.0
            last = int(np.flatnonzero(hist)[-1])
            lo = min(int(np.searchsorted(wcum, mid, side="left")), last)
            hi = min(int(np.searchsorted(wcum, mid, side="right")), last)
            where: dict[str, Any] = {"below_w": float(wcum[lo - 1]) if lo else 0.0, "mid": mid}
        else:
            n = int(cum[-1])
            k1, k2 = (n - 1) // 2, n // 2
            lo, hi = int(np.searchsorted(cum, k1, side="right")), int(np.searchsorted(cum, k2, side="right"))
            where = {"below": int(cum[lo - 1]) if lo else 0, "k": (k1, k2)}
        if int(hist[lo : hi + 1].sum()) > MEDIAN_CAP:
            return None
        return {"lo": lo, "hi": hi, **where}

    def update2(self, sel, p, s, w=None):
        # the first pass had a point for this kind, else there is no selection
        a = cast("np.ndarray", self._abs_err(p))
        c = self._codes(a)
        keep = (c >= sel["lo"]) & (c <= sel["hi"])
        return {"values": a[keep]} if w is None else {"values": a[keep], "weights": w[keep]}

    def merge2(self, a, b):
        return {k: np.concatenate([a[k], b[k]]) for k in a}

    def finalize2(self, st, sel, st2, s):
        if "weights" in st2:
            from ..metrics.accuracy import weighted_median_select

            return {"mdae": weighted_median_select(st2["values"], st2["weights"], sel["mid"], sel["below_w"])}
        v = np.sort(st2["values"])
        k1, k2 = sel["k"]
        pair = v[[k1 - sel["below"], k2 - sel["below"]]]
        return {"mdae": float(np.mean(pair))}


def chan_merge(a: State, b: State, comoments: bool) -> State:
    """Two ``{"n", "mean", "m2"}`` moment states of some columns combined (Chan, Golub & LeVeque's pairwise
    update; ``n`` a row count or a total weight): ``m2`` the co-moment matrix (``comoments``) or the
    columns' second central moments."""
    from ..metrics.blocks import merge_moments

    n, mean, m2 = merge_moments(a["n"], a["mean"], a["m2"], b["n"], b["mean"], b["m2"], comoments)
    return {"n": n, "mean": mean, "m2": m2}


class AccuracyMoments(Special):
    """(target, point) means and co-moments, merged with Chan, Golub & LeVeque's pairwise update,
    plus the sum of squared errors: rmse, r2 and corr as :func:`uqeval.metrics.accuracy.accuracy_batch`."""

    metrics = ("rmse", "r2", "corr")
    kinds = ("gaussian", "point", "intervals", "quantiles", "samples")
    sparse = True  # moments: no histogram
    weighted = True  # with row weights: "n" is the total weight, the moments weighted (West 1979)

    def update(self, p, s, w=None):
        point = p.point()
        if point is None:
            return None
        x = np.column_stack([p.y_true, point])
        if w is None:
            mu = x.mean(axis=0)
            d = x - mu
            return {
                "n": x.shape[0],
                "mean": mu,
                "m2": d.T @ d,
                "sse": float(np.square(x[:, 0] - x[:, 1]).sum()),
            }
        total = float(w.sum())
        mu = w @ x / total
        d = x - mu
        return {
            "n": total,
            "mean": mu,
            "m2": (d * w[:, None]).T @ d,
            "sse": float(w @ np.square(x[:, 0] - x[:, 1])),
        }

    def merge(self, a, b):
        return {**chan_merge(a, b, comoments=True), "sse": a["sse"] + b["sse"]}

    def finalize(self, st, s):
        from ..metrics.accuracy import corr_from_sums, r2_from_sums

        n, sse, m2 = st["n"], st["sse"], st["m2"]
        return {
            "rmse": float(np.sqrt(sse / n)),
            "r2": float(r2_from_sums(sse, m2[0, 0], n)),
            "corr": float(corr_from_sums(m2[0, 1], m2[0, 0], m2[1, 1], n)),
        }


def _cover_counts(p: Prediction, s: Settings) -> np.ndarray:
    return np.bincount(_cover_index(p, s), minlength=s.num_bins + 1)


class Adversarial(Special):
    """Cover-index counts: the merged counts feed the same multivariate-hypergeometric draws."""

    metrics = ("ma_mean", "ma_stderr", "rms_mean", "rms_stderr", "group_sizes")

    def update(self, p, s, w=None):
        return {"counts": _cover_counts(p, s)}

    def finalize(self, st, s):
        from ..metrics.calibration import adversarial_group_calibration_counts

        return adversarial_group_calibration_counts(
            st["counts"],
            _expected(s),
            group_fractions=np.linspace(0.01, 1.0, s.adv_num_group_sizes),
            num_trials=s.adv_num_trials,
            num_group_draws=s.adv_num_group_draws,
            seed=s.seed,
        )


class RowTermMoments(Special):
    """Weighted means and second central moments of the per-row WAIC/ISCV terms
    (:func:`uqeval.metrics.ensembles.information_criteria_rows`) with the sum of the squared weights
    (:func:`~uqeval.metrics.blocks.sem_moments`; unit weights without ``--weights``), merged with Chan's
    pairwise update (weighted: West 1979) and finished by :func:`~uqeval.metrics.blocks.sem_from_moments`:
    the ``*_se`` of :func:`~uqeval.metrics.ensembles.information_criteria`, and with weights those of memory's
    weighted kernel, from the same two functions."""

    metrics = ("waic1_se", "waic2_se", "iscv_se")
    sparse = True  # moments: no histogram
    weighted = True

    def update(self, p, s, w=None):
        from ..metrics.blocks import sem_moments
        from ..metrics.ensembles import IC_TERMS, information_criteria_rows

        if p.loglik is None:
            return None
        rows = information_criteria_rows(p.loglik)
        return sem_moments(np.column_stack([rows[t] for t in IC_TERMS]), w)

    def merge(self, a, b):
        return {**chan_merge(a, b, comoments=False), "sq": a["sq"] + b["sq"]}

    def finalize(self, st, s):
        from ..metrics.blocks import sem_from_moments
        from ..metrics.ensembles import IC_TERMS

        return {f"{t}_se": float(v) for t, v in zip(IC_TERMS, sem_from_moments(st))}


#: PIT histogram bins of the streamed max_cal_err: |streamed - exact| <= 1 / (2 * PIT_BINS)
PIT_BINS = 1 << 20


class PitKS(Special):
    r"""max_cal_err (the KS distance of the PIT from uniform) from a PIT histogram of B = 2**20 bins.

    With :math:`C_j` the share of PIT values below edge :math:`j/B`, the exact distance D lies in
    :math:`[L, L + 1/B]`, :math:`L = \max_j |C_j - j/B|` (D is at least the gap at each edge's left
    limit; within a bin the ECDF moves between :math:`C_j` and :math:`C_{j+1}`). The midpoint
    :math:`L + 1/(2B)` is within :math:`1/(2B) \approx 4.8 \cdot 10^{-7}` of D. 8 MB of counts.
    """

    metrics = ("max_cal_err",)
    approximate = {
        "max_cal_err": f"within 1/(2*{PIT_BINS}) = {0.5 / PIT_BINS:.2g} of the exact value "
        f"(PIT histogram of {PIT_BINS} bins)"
    }

    def update(self, p, s, w=None):
        u = p.pit()
        from ..metrics.calibration_tests import unit_bins

        j = unit_bins(u, PIT_BINS)
        return {"counts": histogram(j, PIT_BINS)}

    sparse = True

    def finalize(self, st, s):
        # C_j is constant between non-empty bins, so |C_j - j/B| peaks at their edges: evaluated at j = i and
        # j = i + 1 of each non-empty bin i (the same numbers as over all B + 1 edges, in a fraction of the time;
        # a monitor finishes one such state per window)
        i, ci, _ = nonzero_bins(st["counts"])
        after = np.cumsum(ci)
        total = after[-1] if after.size else 1
        before = (after - ci) / total
        gaps = np.concatenate(
            [np.abs(before - i / PIT_BINS), np.abs(after / total - (i + 1) / PIT_BINS), [0.0]]
        )
        return {"max_cal_err": float(np.max(gaps)) + 0.5 / PIT_BINS}


_SIGN_FREE = np.int64(0x7FFFFFFFFFFFFFFF)
#: signed float64 -> monotone int64 key >> RS_SHIFT: 2**20 codes (sign, 11 exponent and 8 mantissa bits)
RS_SHIFT = 44
RS_CODES = 1 << 20


def _monotone_key(x: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.int64)
    return np.where(bits < 0, bits ^ _SIGN_FREE, bits)


@functools.lru_cache(maxsize=1)
def _code_edges() -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) float edges of every code (values v in a code satisfy lower <= v < upper)."""
    with np.errstate(invalid="ignore", over="ignore"):
        key = (np.arange(RS_CODES + 1, dtype=np.int64) - RS_CODES // 2) << RS_SHIFT
        bits = np.where(key < 0, key ^ _SIGN_FREE, key)
        edges = bits.view(np.float64)
    edges.flags.writeable = False  # cached: shared by every finalize
    return edges[:-1], edges[1:]


class ReliabilityScore(Special):
    r"""RS and ACCRUE (:mod:`uqeval.metrics.reliability`) from per-row sums and a histogram of
    :math:`\eta = z/\sqrt2` over monotone float codes (relative width 2**-8).

    RS is a sum of per-row terms except :math:`-\sum_i \eta_{(i)}(2i-1)/N^2 = -(G + N\sum_i\eta_i)/N^2`,
    with :math:`G = \sum_{i<j} |\eta_i - \eta_j|` the Gini mean difference sum. Pairs in different codes are
    ordered by their codes, so their part of G is exact from per-code counts and sums; a code holding
    :math:`c` values within width :math:`w` adds between 0 and :math:`\lfloor c^2/4\rfloor w` more. The
    midpoint is used, so :math:`|RS_{stream} - RS| \le \sum_b \lfloor c_b^2/4\rfloor w_b / (2N^2)`,
    a bound computed from the data and written to the JSON (``input.approximate``); ACCRUE's error is
    :math:`(1-\beta)` times it.
    """

    metrics = ("rs", "accrue")
    sparse = True
    approximate = {
        "rs": "within the data-dependent bound in input.bounds (the Gini pairs inside one of 2^20 "
        "float codes, relative width 2^-8)",
        "accrue": "within the data-dependent bound in input.bounds ((1 - beta) x that of rs)",
    }

    def update(self, p, s, w=None):
        from ..metrics.reliability import _rs_terms
        from ..metrics.scoring import _crps_z

        eps = p.y_true - p.mean
        z = eps / p.std
        eta = z / np.sqrt(2.0)
        code = ((_monotone_key(eta) >> RS_SHIFT) + RS_CODES // 2).astype(np.intp)
        return {
            "n": eta.size,
            "counts": histogram(code, RS_CODES),
            "sums": histogram(code, RS_CODES, weights=eta),
            "t13": float(np.sum(_rs_terms(eta, 0.0, 1.0))),
            "sum_eta": float(eta.sum()),
            "crps": float(_crps_z(z, p.std).sum()),
            "abs_eps": float(np.abs(eps).sum()),
        }

    def finalize(self, st, s):
        from ..metrics.reliability import _HALF_SQRT_2_OVER_PI, _accrue

        n = st["n"]
        # empty codes add nothing to the sums below (the same running sums without them)
        nz, c, sm = nonzero_bins(st["counts"], st["sums"])
        c, sm = c.astype(np.float64), cast("np.ndarray", sm)
        lo, hi = (e[nz] for e in _code_edges())
        cum_c = np.cumsum(c) - c
        cum_s = np.cumsum(sm) - sm
        between = float(np.sum(sm * cum_c - c * cum_s))
        many = c > 1  # a code with one value has no pair inside it
        half = float(np.sum(np.floor(c[many] * c[many] / 4.0) * (hi[many] - lo[many]))) / 2.0
        g = between + half
        rs = (st["t13"] - (g + n * st["sum_eta"]) / n) / n - _HALF_SQRT_2_OVER_PI
        acc = _accrue(st["crps"] / n, rs, st["abs_eps"] / n)
        bound = half / (n * n)
        return {
            "rs": float(rs),
            "accrue": acc["accrue"],
            "_rs_bound": bound,
            "_accrue_bound": (1.0 - acc["beta"]) * bound,
        }


class RankHistogram(Special):
    """calibration_tests.rank_histogram of an ensemble: rows per (members below, members tied) and the rows'
    :func:`~uqeval.metrics.calibration_tests.data_key`, both sums over rows; the randomised ranks are drawn
    at the end from the seed and that key (:func:`~uqeval.metrics.calibration_tests.ensemble_rank_counts`),
    so ties are broken exactly as in memory, whatever the batches. Ragged ensembles have no rank histogram."""

    metrics = ("rank_histogram",)

    def update(self, p, s, w=None):
        from ..metrics import calibration_tests as ct

        if p.ragged:
            return {"ragged": True}
        m = p.samples.shape[1]
        lo, hi = p.pit_bounds()  # (memoised: the calibration tests use the same)
        ell = np.rint(lo * (m + 1)).astype(np.int64)
        t = np.rint(hi * (m + 1)).astype(np.int64) - ell - 1
        return {
            "ragged": False,
            "m": m,
            "n": p.n,
            "key": ct.data_key(p.y_true, lo, hi),
            "groups": histogram(ell * (m + 1) + t, (m + 1) ** 2),
        }

    def merge(self, a, b):
        from ..metrics.calibration_tests import merge_keys

        if a["ragged"] or b["ragged"]:
            return {"ragged": True}
        return {
            "ragged": False,
            "m": a["m"],
            "n": a["n"] + b["n"],
            "key": merge_keys(a["key"], b["key"]),
            "groups": a["groups"] + b["groups"],
        }

    def finalize(self, st, s):
        from ..metrics.calibration_tests import ensemble_rank_counts

        if st["ragged"] or st["n"] < 2:  # as in memory: no test of one row, no histogram of ragged members
            return {}
        m = st["m"]
        groups = np.asarray(unpack(st["groups"])).reshape(m + 1, m + 1)
        return {"rank_histogram": ensemble_rank_counts(groups, m, s.seed, st["key"]).tolist()}


#: family -> its sufficient-statistic states (by representation where they differ)
SPECIAL: dict[str, Callable[[str], Special | None]] = {
    "accuracy": lambda kind: (
        Composite(AccuracyMoments(), MedianAbsErr()) if kind in AccuracyMoments.kinds else None
    ),
    "adv_group_calibration": lambda kind: Adversarial(),
    "information_criteria": lambda kind: RowTermMoments(),
    "reliability": lambda kind: Composite(PitKS(), ReliabilityScore()) if kind == "gaussian" else PitKS(),
    "calibration_tests": lambda kind: RankHistogram() if kind == "samples" else None,
}

#: why a metric is not streamed, by reduction
WHY = {
    "order": "needs order statistics (a sort or median over all rows)",
    "resampling": "draws over the rows themselves",
    "curve": "a curve over sorted rows",
    "moments": "its moment form is not streamed yet",
    "counts": "its count form is not streamed yet",
}


class Plan(NamedTuple):
    """How a family's metrics stream for a representation (each metric by one route)."""

    #: the sums of the metric's per-row form (:meth:`uqeval.catalogue.RowStat.sums`; unit weights), finished
    #: by the form's own ``finish``: the state of weighted streaming and of the bootstrap too
    summed: list[str]
    #: the family's fixed-cell sums (:attr:`uqeval.catalogue.Family.weighted_sums`, unit weights), finished by
    #: its ``from_sums`` (the even-bin ECE/MCE/SCE, the Brier decomposition)
    cells: list[str]
    #: no per-row form: the family's kernel on each batch, weighted by its rows (means) or summed (histograms)
    linear: list[str]
    #: a state of :data:`SPECIAL` (order statistics, histograms, Chan-merged moments, count draws)
    special: Special | None
    #: not streamed
    skipped: list[str]

    @property
    def streams(self) -> bool:
        return bool(self.summed or self.cells or self.linear or self.special is not None)


#: the reductions whose metrics stream as the sums of their per-row form where they have one
SUMMED = ("mean", "moments", "counts")


def _plan(family: Family, kind: str) -> Plan:
    """How the metrics of a family stream for a representation (:class:`Plan`)."""
    make = SPECIAL.get(family.name)
    special = make(kind) if make else None
    covered = set(special.metrics) if special else set()
    plan = Plan([], [], [], special, [])
    for m in family.metrics:
        if not m.applies_to(kind) or m.name in covered:
            continue
        if m.rows_fn is not None and m.reduction in SUMMED:
            plan.summed.append(m.name)
        elif family.weighted_sums is not None and kind in m.weighted_kinds and m.reduction == "counts":
            plan.cells.append(m.name)
        elif m.reduction in ("mean", "histogram"):
            plan.linear.append(m.name)
        else:
            plan.skipped.append(m.name)
    return plan


def not_streamed(kind: str, settings: Settings | None = None) -> dict[str, str]:
    """``{"group.name": reason}`` of the metrics of ``kind`` that the streaming engines leave out."""
    out = {}
    for f in families_for(kind, settings):
        by_name = {m.name: m for m in f.metrics}
        for name in _plan(f, kind).skipped:
            out[f"{f.name}.{name}"] = WHY.get(by_name[name].reduction, "not mergeable")
    return out


def _specials(kind: str, settings: Settings | None) -> Iterator[tuple[Family, Special]]:
    """``(family, its mergeable state)`` of every family of ``kind`` that has one."""
    for f in families_for(kind, settings):
        special = _plan(f, kind).special
        if special is not None:
            yield f, special


def _applies(f: Family, name: str, kind: str) -> bool:
    return any(x.name == name and x.applies_to(kind) for x in f.metrics)


def _two_pass_metrics(special: Special) -> list[str]:
    """The metrics of a state (or of its parts) that a second pass over the rows finishes (MdAE)."""
    parts = getattr(special, "parts", (special,))
    return [m for sp in parts if type(sp).select is not Special.select for m in sp.metrics]


def approximate(kind: str, settings: Settings | None = None) -> dict[str, str]:
    """``{"group.name": bound}`` of the streamed metrics of ``kind`` that are approximate (the rest are exact)."""
    return {
        f"{f.name}.{m}": b
        for f, special in _specials(kind, settings)
        for m, b in special.approximate.items()
        if _applies(f, m, kind)
    }


def two_pass(kind: str, settings: Settings | None = None) -> list[str]:
    """Paths of the metrics of ``kind`` that a second pass over the rows makes exact (MdAE)."""
    return [
        f"{f.name}.{m}"
        for f, special in _specials(kind, settings)
        for m in _two_pass_metrics(special)
        if _applies(f, m, kind)
    ]


def streamed(kind: str, settings: Settings | None = None) -> list[str]:
    """Paths of the metrics of ``kind`` that stream (exactly, or within the bound :func:`approximate` states)."""
    out = []
    for f in families_for(kind, settings):
        plan = _plan(f, kind)
        special = plan.special
        out += [f"{f.name}.{m}" for m in plan.summed + plan.cells + plan.linear]
        if special is not None:
            out += [m.path for m in f.metrics if m.name in special.metrics and m.applies_to(kind)]
    return out


# --------------------------------------------------------------------------- the protocol


def init() -> State:
    """The empty state (the identity of :func:`merge`)."""
    return {"n": 0, "families": {}}


def update(state: State, pred: Prediction, settings: Settings) -> State:
    """``state`` merged with the state of one batch of rows."""
    return merge(state, batch_state(pred, settings))


def batch_state(
    pred: Prediction,
    settings: Settings,
    families: Collection[str] | None = None,
    weights: np.ndarray | None = None,
) -> State:
    """The state of one batch of rows (a validated prediction container); ``families``: only these groups
    (``compare`` keeps the states of the metrics it compares); ``weights`` (N,): the weighted state of the
    metrics that take weights (:func:`uqeval.catalogue.weighted.weighted_state`, the same layout)."""
    if weights is not None:
        from .weighted import weighted_state

        assert families is None  # (compare streams no weighted state of its own families)
        return weighted_state(pred, settings, weights)

    fams: dict[str, Any] = {}
    # named families are computed whether or not the settings turn them on (compare names them explicitly)
    for f in (
        families_for(pred.kind, settings)
        if families is None
        else [f for f in families_for(pred.kind) if f.name in families]
    ):
        if (
            f.why_undefined(pred) is not None
        ):  # not defined for this data: left out, as in memory (a note says why)
            continue
        plan = _plan(f, pred.kind)
        entry: dict[str, Any] = {}
        result = None
        if plan.linear:
            with trusted():
                result = compute(f, pred, settings)
            if result is not None:
                entry["linear"] = _linear_tree(f, plan.linear, result, pred.n)
        if plan.summed:
            sums = _row_sums(f, plan.summed, pred, settings, result)
            if sums is not None:
                entry["sums"] = sums
        if plan.cells:
            assert f.weighted_sums is not None  # (_plan names cells of such families only)
            with trusted():
                cells = f.weighted_sums(pred, settings, None)
            if cells is not None:
                entry["cells"] = cells
        if plan.special is not None:
            with trusted():
                st = plan.special.update(pred, settings)
            if st is not None:
                entry["special"] = st
        if entry:
            fams[f.name] = entry
    out = {"n": pred.n, "kind": pred.kind, "families": fams}
    if any(not mean for e in fams.values() for _, _, mean in e.get("sums", ())):  # (finalize: finish_sums)
        out["probe"] = pred.subset(np.arange(min(pred.n, 2)))
    return out


def _linear_tree(f: Family, linear: list[str], result: dict[str, Any], n: int) -> dict[str, Any]:
    """The kernel's ``result`` of a batch of ``n`` rows as tagged leaves (:func:`_tag_leaves`) of the
    ``linear`` metrics."""
    by_name = {m.name: m for m in f.metrics}
    tree: dict[str, Any] = {}
    for key, value in result.items():
        if f.by_level and isinstance(value, dict):
            tree[key] = {k: _tag_leaves(v, n, by_name[k].reduction) for k, v in value.items() if k in linear}
        elif key in linear:
            tree[key] = _tag_leaves(value, n, by_name[key].reduction, key)
    return tree


def _row_sums(
    f: Family, names: list[str], pred: Prediction, settings: Settings, result: dict[str, Any] | None
) -> dict[SumsKey, np.ndarray] | None:
    """``{(level key, metric, mean): sums}`` (:func:`sums_key`) of the per-row forms of ``names`` (:meth:`RowStat.sums`, unit weights),
    each form summed once, or None where none applies; a by-level family at the level keys of its kernel's
    ``result`` (else its :attr:`~uqeval.catalogue.Family.levels`, or the result of a probe of two rows: the
    keys do not depend on the rows), empty where the kernel gives no level (as in memory: the family is there,
    with no value)."""
    keys: list[str | None] = [None]
    if f.by_level:
        if result is None and f.levels is not None:
            result = dict.fromkeys(f.levels(pred, settings))
        elif result is None:
            with trusted():
                result = compute(f, pred.subset(np.arange(min(pred.n, 2))), settings)
        keys = list(result or {})
    out: dict[SumsKey, np.ndarray] = {}
    made: dict[tuple[int, int, int], np.ndarray] = {}
    for key in keys:
        for name in names:
            stat = rows(METRICS[f"{f.name}.{name}"], pred, settings, key)
            if stat is None or stat.sums_form is None:
                continue
            ident = (id(stat.terms), id(stat.codes), id(stat.score))  # metrics sharing one form: summed once
            if ident not in made:
                made[ident] = stat.sums()
            out[sums_key(key, name, stat)] = made[ident]
    return out if out or f.by_level and result is not None else None


#: a metric's key in a family's ``sums``: (level key or None, metric, whether its finish is the mean of a score)
SumsKey = tuple["str | None", str, bool]


def sums_key(key: str | None, name: str, stat: RowStat) -> SumsKey:
    """The key of a metric's sums in a state: a form of a per-row score alone finishes as its mean, without
    rebuilding the form (:func:`finish_sums`)."""
    return key, name, stat.finish is None


def finish_sums(
    family: str,
    key: str | None,
    name: str,
    sums: np.ndarray,
    total: float,
    probe: Prediction,
    settings: Settings,
) -> float:
    """A metric of its summed per-row form (``total``: the rows' total weight): the form's own ``finish``,
    rebuilt from ``probe`` (rows of the same representation and levels; the forms are memoised on it: give a
    copy of a state's probe, :func:`_probe`), as in memory and the bootstrap."""
    stat = rows(METRICS[f"{family}.{name}"], probe, settings, key)
    form = None if stat is None else stat.sums_form
    assert form is not None  # the probe's rows have the form the batches had
    return float(form[3](np.asarray(sums, dtype=np.float64)[None, :], np.array([total], dtype=np.float64))[0])


def merge(a: State, b: State) -> State:
    """Two states combined (associative; :func:`init` is the identity)."""
    if not a["n"] or not b["n"]:
        out = b if not a["n"] else a
        if "n_zero" in a or "n_zero" in b:  # (weighted: the rows of weight 0 count even without others)
            out = {**out, "n_zero": a.get("n_zero", 0) + b.get("n_zero", 0)}
        return out
    fams = dict(a["families"])
    kind = a["kind"]
    for name, eb in b["families"].items():
        ea = fams.get(name)
        if ea is None:
            fams[name] = eb
            continue
        out = dict(ea)
        if "linear" in eb:
            out["linear"] = _merge_tree(ea["linear"], eb["linear"]) if "linear" in ea else eb["linear"]
        if "sums" in eb:
            sa = dict(ea.get("sums", {}))
            for k, v in eb["sums"].items():
                sa[k] = sa[k] + v if k in sa else v
            out["sums"] = sa
        if "cells" in eb:
            out["cells"] = ea["cells"] + eb["cells"] if "cells" in ea else eb["cells"]
        if "special" in eb:
            sp = cast("Special", SPECIAL[name](kind))  # a "special" entry: the family has one for this kind
            out["special"] = sp.merge(ea["special"], eb["special"]) if "special" in ea else eb["special"]
        fams[name] = out
    out_state = {**b, **a, "n": a["n"] + b["n"], "families": fams}  # (the first probe)
    if "w" in a:  # weighted states: total weight, rows of weight 0, the metrics named
        out_state.update(w=a["w"] + b["w"], n_zero=a["n_zero"] + b["n_zero"])
        for k in ("not_weighted", "not_streamed"):
            out_state[k] = {**a[k], **b[k]}
    return out_state


def selection(state: State) -> dict[str, Any] | None:
    """What a second pass over the rows must collect (exact order statistics), or None when nothing needs one."""
    state = unpack(state)
    kind = cast("str", state.get("kind"))  # a state with families has its kind
    out = {}
    for name, entry in state["families"].items():
        if "special" in entry:
            sel = cast("Special", SPECIAL[name](kind)).select(entry["special"])  # as in merge
            if sel is not None:
                out[name] = sel
    return out or None


def second_state(
    sel: dict[str, Any], pred: Prediction, settings: Settings, weights: np.ndarray | None = None
) -> State:
    """The second-pass state of one batch (:func:`selection` says what to keep); ``weights``: of a weighted
    state (rows of weight 0 dropped, as in the first pass)."""
    w = None
    if weights is not None:
        from ..weights import drop_zero

        w, (pred,), _ = drop_zero(weights, pred)
    # the selection names families with a Special for this kind (as in merge)
    return {
        name: cast("Special", SPECIAL[name](pred.kind)).update2(v, pred, settings, w)
        for name, v in sel.items()
    }


def merge_second(a: State | None, b: State | None, kind: str) -> State | None:
    if a is None or b is None:
        return b if a is None else a
    return {name: cast("Special", SPECIAL[name](kind)).merge2(a[name], b[name]) for name in a}  # as in merge


def finalize(
    state: State,
    settings: Settings,
    sel: dict[str, Any] | None = None,
    second: State | None = None,
    bounds: dict[str, float] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """``(metrics, orientation)`` as :func:`uqeval.catalogue.compute_metrics` gives them, without the
    metrics that are not streamed (:func:`not_streamed`) and, without a second pass (``sel``, ``second``),
    without those that need one (MdAE)."""
    n, kind = state["n"], cast("str", state.get("kind"))  # a state with rows has its kind
    if not n:
        raise InputError("no rows to evaluate")
    state = {  # dense arrays again, except the histograms of the states that read them packed (Special.sparse)
        **state,
        "families": {
            name: {
                k: v if k == "special" and cast("Special", SPECIAL[name](kind)).sparse else unpack(v)
                for k, v in entry.items()
            }
            for name, entry in state["families"].items()
        },
    }
    metrics: dict[str, Any] = {}
    orientation: dict[str, str] = {}
    probe = _probe(state)
    for f in FAMILIES:
        entry = state["families"].get(f.name)
        if entry is None:
            continue
        result: dict[str, Any] = _finish_tree(entry["linear"], n) if "linear" in entry else {}
        total = float(state["w"] if "w" in state else n)
        for (key, name, mean), sums in entry.get("sums", {}).items():
            if mean:  # (the finish of a per-row score's form, RowStat.sums_form)
                value = float(sums[0] / total)
            else:
                value = finish_sums(f.name, key, name, sums, total, cast("Prediction", probe), settings)
            (result.setdefault(cast("str", key), {}) if f.by_level else result)[name] = value
        if "cells" in entry:
            assert f.from_sums is not None  # (a family with cells has its finish)
            cells = {
                m.name for m in f.metrics if kind in m.weighted_kinds
            }  # (of the rest, some need all rows)
            result.update({k: v for k, v in f.from_sums(entry["cells"], settings).items() if k in cells})
        if "special" in entry:
            sp = cast("Special", SPECIAL[f.name](kind))  # as in merge
            result.update(sp.finalize(entry["special"], settings))
            if sel and second and f.name in sel:
                result.update(sp.finalize2(entry["special"], sel[f.name], second[f.name], settings))
            for key in [
                k for k in result if k.startswith("_") and k.endswith("_bound")
            ]:  # data-dependent bounds
                value = result.pop(key)
                if bounds is not None:
                    bounds[f"{f.name}.{key[1 : -len('_bound')]}"] = value
        result = (
            {k: _in_order(v, f) if isinstance(v, dict) else v for k, v in result.items()}
            if f.by_level
            else _in_order(result, f)
        )
        metrics[f.name] = result
        orientation.update(orientation_of(result, f, kind))
    return metrics, orientation


def _probe(state: State) -> Prediction | None:
    """A copy of the state's probe (None without): :func:`finish_sums` memoises the forms on the prediction it is
    given, and the state's own probe must stay picklable (monitor state files, Dask)."""
    probe = state.get("probe")
    return None if probe is None else probe.subset(np.arange(probe.n))


def _in_order(body: dict[str, Any], f: Family) -> dict[str, Any]:
    """A family's results in catalogue order (other keys last)."""
    order = [m.name for m in f.metrics]
    return {k: body[k] for k in sorted(body, key=lambda k: order.index(k) if k in order else len(order))}


def not_streamed_in(state: State, settings: Settings) -> dict[str, str]:
    """:func:`not_streamed` restricted to what the in-memory run would have reported: families the
    batches gave results for, and families with no streamed metric at all."""
    kind = state.get("kind")
    if kind is None:
        return {}
    out = {}
    for f in families_for(kind, settings):
        plan = _plan(f, kind)
        if not plan.skipped or (f.name not in state["families"] and plan.streams):
            continue
        by_name = {m.name: m for m in f.metrics}
        out.update({f"{f.name}.{n}": WHY.get(by_name[n].reduction, "not mergeable") for n in plan.skipped})
    return out


def streaming_table(extra_rows: Collection[tuple[str, str, str]] = ()) -> str:
    """The table of docs/guide/scaling.md (and the metrics reference): per catalogue metric, streamed exactly
    or not and why; ``extra_rows`` (path, how, why) follow (the ``ucc`` command's summary:
    :data:`uqeval.commands.ucc.stream.UCC_TABLE`)."""
    exact: dict[str, str | None] = {}
    left: dict[str, str] = {}
    approx: dict[str, str] = {}
    two: set[str] = set()
    for f in FAMILIES:  # every family, opt-in ones included (their option may be a threshold, not a flag)
        by_name = {m.name: m for m in f.metrics}
        for kind in f.representations:
            plan = _plan(f, kind)
            special, skipped = plan.special, plan.skipped
            applies = [m.name for m in f.metrics if m.applies_to(kind)]
            for name in plan.linear + plan.cells:
                exact.setdefault(f"{f.name}.{name}", None)
            for name in plan.summed:
                exact[f"{f.name}.{name}"] = "summed"
            if special is not None:
                for name in special.metrics:
                    if name in applies:
                        exact.setdefault(f"{f.name}.{name}", None)
                approx.update({f"{f.name}.{m}": v for m, v in special.approximate.items() if m in applies})
                two.update(f"{f.name}.{m}" for m in _two_pass_metrics(special) if m in applies)
            for name in skipped:
                left.setdefault(f"{f.name}.{name}", WHY.get(by_name[name].reduction, "not mergeable"))
    how = {
        "summed": "sums of its per-row form (RowStat, unit weights)",
        "mean": "count-weighted batch means of its family's kernel (no per-row form)",
        "histogram": "summed bin counts",
        "moments": "moment sums (Chan's pairwise merge)",
        "counts": "summed fixed-bin / cell counts",
        "resampling": "summed cover-index counts, the same seeded draws",
        "curve": "from the summed counts",
    }
    rows = ["| metric | streamed | how (state) or why not |", "|---|---|---|"]
    for path, m in METRICS.items():
        if path in approx:
            rows.append(f"| `{path}` | approximate | {approx[path]} |")
        elif path in two:
            rows.append(
                f"| `{path}` | exact (two passes) | a histogram of float bit patterns finds the median's "
                "bin; a second pass collects its rows |"
            )
        elif path in exact and path not in left:
            rows.append(f"| `{path}` | exact | {how.get(exact[path] or m.reduction, m.reduction)} |")
        elif path in left:
            rows.append(f"| `{path}` | not streamed | {left[path]} |")
    rows += [f"| `{path}` | {how} | {why} |" for path, how, why in extra_rows]
    return "\n".join(rows)
