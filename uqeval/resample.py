r"""Resampling by weights: the Poisson bootstrap and sign-flip permutations, in blocks of rows.

``uqeval compare`` (and the streamed engines) resample rows without index arrays:

- **Bootstrap.** Replicate :math:`b` gives row :math:`i` the weight :math:`w_{bi} \sim
  \text{Poisson}(1)` (the Poisson bootstrap; Hanley & MacGibbon 2006, Chamandy et al. 2012),
  and a metric of the replicate is the same function of *weighted* per-row terms, e.g. the
  weighted mean :math:`\sum_i w_{bi} s_i / \sum_i w_{bi}` of a per-row score. Weighted sums of
  every column at once are one ``(k, n) @ (n, B)`` product per block of rows.
- **Permutations.** Permutation :math:`p` flips the sign of row :math:`i`'s paired difference
  with a fair coin :math:`\varepsilon_{pi} = 2 b_{pi} - 1`; the flipped sums of every test are one
  ``(t, n) @ (n, P)`` product per block of rows.

**Keyed by the row's global index.** The draws of rows ``[g*BLOCK, (g+1)*BLOCK)`` and replicates
``[c*CHUNK, (c+1)*CHUNK)`` come from a counter-based generator (Philox 4x64, Salmon et al. 2011)
keyed by ``(seed, stream, c, g)``, so a row's weights depend only on the seed and its global row
number, never on how the rows are chunked, partitioned or how many replicates are drawn.

**The Poisson table.** Weights are drawn by inverse transform from 16 random bits: the table maps
the 65,536 cells to Poisson(1) counts, so each count's probability is the Poisson probability
rounded to a multiple of :math:`2^{-16}` (largest count 8; mean 1 and variance 1 to within
:math:`4 \cdot 10^{-5}`). Memory: the 16-bit cells of one block
(4 MiB) and the float64 weights of 256 of its rows at a time.

**Dependent rows** (issue 25): resampling units other than the row.

- **Clusters** (``cluster=``): every row of a cluster (a location, a patient, a day) shares one
  Poisson weight and one sign. The weighted sums of the rows are the weighted sums of the *cluster
  totals*, so the cluster bootstrap is the Poisson bootstrap of the clusters' sums (a multiplier cluster
  bootstrap, Field & Welsh 2007; Cameron, Gelbach & Miller 2008) and the cluster sign flip flips the
  clusters' sums of differences (valid when the clusters' sums are symmetric under the null, as for
  exchangeable models).
- **Blocks** (``block_size=L``, rows in time order): the bootstrap is the *circular block bootstrap*
  (Politis & Romano 1992): a replicate is :math:`K = \lceil N/L \rceil` blocks of ``L`` consecutive rows
  whose starts are drawn uniformly from the ``N`` rows, the rows wrapped around the end (row ``N`` is row
  0), so every row has expected weight 1. Row ``i``'s weight is the number of drawn blocks that cover it
  (:func:`circular_block_weights`); a weighted sum is the sum of the ``K`` drawn blocks' sums
  (:func:`window_sums`). It assumes a stationary series whose dependence fades within about ``L`` rows;
  its variance is that of the moving-block bootstrap (Künsch 1989), 2/3 of the non-overlapping block
  bootstrap's (Lahiri 1999). The starts of replicate ``r`` come from a generator keyed by ``(seed, r)``
  (:func:`block_starts`). ``L = 1`` is the row bootstrap (Poisson weights, as without blocks).
  The **sign flip** cannot flip overlapping blocks: it flips the consecutive *non-overlapping* blocks of
  ``L`` rows (the last one shorter), each block a cluster.
- ``block_size="auto"``: :func:`optimal_block_size` (Politis & White 2004, with the correction of
  Patton, Politis & White 2009), for the circular block bootstrap.

Unit ``g``'s draws are those of global row ``g`` (the same generator keyed by the unit's index).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .errors import InputError, UsageError, option
from .metrics.calibration_tests import data_key, keyed_seed, monte_carlo_p
from .validation import is_count

#: rows per generator block (the unit of the global key)
BLOCK = 4096
#: replicates (or permutations) per generator chunk
CHUNK = 512
_BOOTSTRAP, _SIGNS, _STARTS = 1, 2, 3
#: rows per weighted product inside a block (keeps the float64 weights in cache)
_SUB = 256


def _poisson_table() -> np.ndarray:
    """Poisson(1) count of each of the 2**16 equally likely cells (inverse CDF at the cell midpoint)."""
    cdf, term, k = [], math.exp(-1.0), 0
    total = 0.0
    while total < 1.0 - 2.0**-18 and k < 30:
        total += term
        cdf.append(total)
        k += 1
        term /= k
    mid = (np.arange(1 << 16, dtype=np.float64) + 0.5) / (1 << 16)
    return np.searchsorted(np.asarray(cdf), mid).astype(np.float64)


_TABLE: np.ndarray | None = None


def _table() -> np.ndarray:
    global _TABLE
    if _TABLE is None:
        _TABLE = _poisson_table()
    return _TABLE


def _raw(seed: int, stream: int, chunk: int, block: int, words: int) -> np.ndarray:
    """``words`` uint64 draws of generator block ``block``, chunk ``chunk`` of ``stream``."""
    key = np.array([int(seed) & 0xFFFFFFFFFFFFFFFF, (stream << 60) | (chunk << 40) | block], dtype=np.uint64)
    return np.random.Philox(key=key).random_raw(words)


def _blocks(start: int, stop: int):
    """``(block, lo, hi)``: the generator blocks that rows ``[start, stop)`` touch, with the slice of
    each block they cover (offsets within the block)."""
    g = start // BLOCK
    while g * BLOCK < stop:
        lo = max(start, g * BLOCK) - g * BLOCK
        hi = min(stop, (g + 1) * BLOCK) - g * BLOCK
        yield g, lo, hi
        g += 1


def _block_uniforms(seed: int, block: int, chunk: int) -> np.ndarray:
    """(BLOCK, CHUNK) uint16 cells of one generator block and replicate chunk (weight: ``_table()[cell]``)."""
    return _raw(seed, _BOOTSTRAP, chunk, block, BLOCK * CHUNK // 4).view(np.uint16).reshape(BLOCK, CHUNK)


def _block_bits(seed: int, block: int, chunk: int) -> np.ndarray:
    """(BLOCK, CHUNK // 8) packed sign bits of one generator block and permutation chunk."""
    return _raw(seed, _SIGNS, chunk, block, BLOCK * CHUNK // 64).view(np.uint8).reshape(BLOCK, CHUNK // 8)


def poisson_weights(seed: int, start: int, stop: int, replicates: int) -> np.ndarray:
    """Poisson(1) bootstrap weights of global rows ``start .. stop-1``: ``(replicates, stop - start)``
    float64. The same seed and row give the same weights whatever the chunking."""
    n = stop - start
    out = np.empty((n, replicates))
    for c in range(-(-replicates // CHUNK)):
        r0, r1 = c * CHUNK, min(replicates, (c + 1) * CHUNK)
        for g, lo, hi in _blocks(start, stop):
            at = g * BLOCK + lo - start
            out[at : at + hi - lo, r0:r1] = np.take(_table(), _block_uniforms(seed, g, c)[lo:hi, : r1 - r0])
    return out.T


@dataclass
class Accumulator:
    """Weighted sums over rows for ``replicates`` Poisson-bootstrap replicates and sign flips of
    paired differences for ``permutations`` permutations: a mergeable state.

    :meth:`update` adds rows ``[start, start + n)`` (any chunking, any order); :meth:`merge`
    adds another accumulator's rows (disjoint rows). Per replicate ``b``:

    - ``total[b]`` = :math:`\\sum_i w_{bi}`;
    - ``sums[:, b]`` = :math:`\\sum_i w_{bi} x_{i\\cdot}` of the dense per-row terms;
    - ``counts[j][:, b]``: weighted count of the rows in each category of code array ``j``.

    Per permutation ``p``: ``flipped[:, p]`` = :math:`\\sum_i \\varepsilon_{pi} d_{i\\cdot}`.
    """

    seed: int
    replicates: int = 0
    permutations: int = 0
    n_terms: int = 0
    n_categories: tuple[int, ...] = ()
    n_diffs: int = 0
    #: the seed of the sign flips (None: ``seed``); compare derives it from the seed and the data
    #: (:func:`flip_seed`), so every data set gets its own flips
    flip_seed: int | None = None
    total: np.ndarray = field(init=False)
    sums: np.ndarray = field(init=False)
    counts: list[np.ndarray] = field(init=False)
    flipped: np.ndarray = field(init=False)
    rows: int = field(init=False, default=0)
    #: the draws of the generator block a batch ended inside (the next batch starts there): batches of
    #: any size draw each block once (not pickled, not merged)
    _cache: dict = field(init=False, default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        b, p = self.replicates, self.permutations
        self.total = np.zeros(b)
        self.sums = np.zeros((self.n_terms, b))
        self.counts = [np.zeros((k, b)) for k in self.n_categories]
        self.flipped = np.zeros((self.n_diffs, p))

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_cache"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _cache={})

    def _draws(self, make, g: int, c: int, partial: bool) -> np.ndarray:
        """``make(seed, g, c)``, kept while the rows of block ``g`` come in several batches."""
        key = (make, g, c)
        out = self._cache.get(key)
        if out is None:
            seed = self.seed if make is _block_uniforms or self.flip_seed is None else self.flip_seed
            out = make(seed, g, c)
            if partial:
                for k in [k for k in self._cache if k[1] != g]:
                    del self._cache[k]
                self._cache[key] = out
        return out

    def update(
        self,
        start: int,
        terms: np.ndarray | None = None,
        codes: Sequence[Any] = (),
        diffs: np.ndarray | None = None,
        weights: np.ndarray | None = None,
    ) -> None:
        """Add rows ``start .. start + n - 1``: ``terms`` (n, n_terms), ``codes`` (one (n,) int
        array per category set, values in ``[0, k)``, or a scipy.sparse (n, k) matrix of counts per
        category when a "row" is a cluster or block of rows), ``diffs`` (n, n_diffs). ``weights`` (n,): the
        rows' own weights (``--weights``): a replicate counts row ``i`` its Poisson count times its weight
        (the sums of weighted terms, the weighted counts and the total; the sign flips are not weighted)."""
        n = next((len(a) for a in (terms, diffs, *codes) if a is not None), 0)
        if n == 0:
            return
        stop = start + n
        if self.replicates:
            self._bootstrap(start, stop, terms, list(codes), weights)
        if self.permutations and self.n_diffs:
            self._flip(start, stop, np.asarray(diffs, dtype=np.float64).reshape(n, self.n_diffs))
        self.rows += n

    def _bootstrap(self, start: int, stop: int, terms, codes, weights=None) -> None:
        n = stop - start
        x = None if terms is None else np.asarray(terms, dtype=np.float64).reshape(n, self.n_terms)
        # the rows' own weights are folded into the terms, the category counts and the total, so the
        # (rows, replicates) Poisson counts are used as drawn (with weights of 1 the sums are bit for bit)
        uw = None if weights is None else np.asarray(weights, dtype=np.float64).reshape(n)
        buf = np.empty((_SUB, CHUNK))  # the weights of one slice of rows, kept in cache
        for g, lo, hi in _blocks(start, stop):
            at = g * BLOCK + lo - start
            slices = []
            for s in range(lo, hi, _SUB):  # per slice of rows: its terms and its rows grouped by category
                e = min(hi, s + _SUB)
                rows = slice(at + s - lo, at + e - lo)
                wr = None if uw is None else uw[rows]
                groups = [
                    _grouping(np.asarray(c[rows], dtype=np.intp), k, wr)
                    if isinstance(c, np.ndarray)
                    else (
                        c[rows] if wr is None else c[rows].multiply(wr[:, None])
                    ).T.tocsr()  # a unit's counts per category (sparse (n, k))
                    for c, k in zip(codes, self.n_categories)
                ]
                xt = (
                    None
                    if x is None
                    else np.ascontiguousarray((x[rows] if wr is None else x[rows] * wr[:, None]).T)
                )
                slices.append((s, e, xt, groups, wr))
            for c in range(-(-self.replicates // CHUNK)):
                r0, r1 = c * CHUNK, min(self.replicates, (c + 1) * CHUNK)
                u = self._draws(_block_uniforms, g, c, hi - lo < BLOCK)
                for s, e, xt, groups, wr in slices:
                    w = buf[: e - s, : r1 - r0]
                    np.take(_table(), u[s:e, : r1 - r0], out=w)
                    self.total[r0:r1] += w.sum(axis=0) if wr is None else wr @ w
                    if xt is not None:
                        self.sums[:, r0:r1] += xt @ w
                    for j, onehot in enumerate(groups):
                        self.counts[j][:, r0:r1] += onehot @ w

    def _flip(self, start: int, stop: int, d: np.ndarray) -> None:
        total = d.sum(axis=0)[:, None]
        buf = np.empty((_SUB, CHUNK))  # reused: a fresh float64 array per product costs page faults
        for c in range(-(-self.permutations // CHUNK)):
            r0, r1 = c * CHUNK, min(self.permutations, (c + 1) * CHUNK)
            acc = np.zeros((self.n_diffs, r1 - r0))
            for g, lo, hi in _blocks(start, stop):
                bits = self._draws(_block_bits, g, c, hi - lo < BLOCK)
                at = g * BLOCK + lo - start
                for s in range(lo, hi, _SUB):
                    e = min(hi, s + _SUB)
                    b = buf[: e - s, : r1 - r0]
                    np.copyto(b, np.unpackbits(bits[s:e], axis=1, count=r1 - r0))
                    acc += d[at + s - lo : at + e - lo].T @ b
            # sum_i eps_i d_i = 2 * sum_{b=1} d_i - sum_i d_i
            self.flipped[:, r0:r1] += 2.0 * acc - total

    def merge(self, other: Accumulator) -> Accumulator:
        """Add the rows of ``other`` (same seed and sizes, disjoint rows)."""
        self.total += other.total
        self.sums += other.sums
        for a, b in zip(self.counts, other.counts):
            a += b
        self.flipped += other.flipped
        self.rows += other.rows
        return self


def _grouping(code: np.ndarray, k: int, weights: np.ndarray | None = None):
    """The (k, n) 0/1 matrix (sparse) that sums a slice's rows per category (``weights``: the rows' weights
    in place of the ones)."""
    from scipy.sparse import csr_matrix

    n = code.size
    data = np.ones(n) if weights is None else weights
    return csr_matrix((data, (code, np.arange(n))), shape=(k, n))


#: the first rows hashed into the key of the sign flips (both engines have them before the pass over the rows)
KEY_ROWS = 4096


def rows_key(preds: Sequence[Any], stop: int = KEY_ROWS) -> int:
    """The :func:`~uqeval.metrics.calibration_tests.data_key` of rows ``0 .. stop - 1`` of every prediction
    (targets and every per-row array, in field order); a sum over rows, so batches add up with
    :func:`~uqeval.metrics.calibration_tests.merge_keys`."""
    columns: list[np.ndarray] = []
    for p in preds:
        for name in p._array_fields():
            a = np.asarray(getattr(p, name))[:stop]
            columns.extend(a.reshape(a.shape[0], -1).T)
    return data_key(*columns)


def flip_seed(seed: int, key: int) -> int:
    """The seed of the sign flips of a data set with :func:`rows_key` ``key`` under ``seed`` (STYLE: draws
    reproducible for one data set and seed, different between data sets)."""
    return keyed_seed(seed, key)


def permutation_p_values(flipped: np.ndarray, observed: np.ndarray, scale: np.ndarray) -> np.ndarray:
    r"""Two-sided Monte-Carlo p-values :math:`(1 + \#\{p: |T_p| \ge |T|\}) / (1 + P)` per test
    (Phipson & Smyth 2010), ``flipped`` (t, P) flipped sums, ``observed`` (t,) the unflipped sums;
    statistics within ``1e-9 * scale`` of ``|T|`` count as ties (summation rounding)."""
    obs = np.abs(observed)[:, None]
    exceed = np.count_nonzero(np.abs(flipped) >= obs - 1e-9 * np.asarray(scale)[:, None], axis=1)
    return cast("np.ndarray", monte_carlo_p(exceed, flipped.shape[1]))


# --------------------------------------------------------------------------- dependent rows (issue 25)


#: how ``block_size="auto"`` chose the size (the JSON's ``settings.resampling.block_size_rule``)
AUTO_RULE = "auto (Politis & White 2004, Patton, Politis & White 2009)"


def _bad_block_size(value: Any) -> UsageError:
    return UsageError(f"{option('block_size')} takes an integer >= 1 or 'auto', got {value!r}")


@dataclass(frozen=True)
class Resampling:
    """What the bootstrap resamples and the sign-flip test flips (issue 25): rows, clusters or blocks.

    ``cluster``: the column that holds each row's cluster label (the Python API, which is given the labels
    themselves, names it ``"cluster"``): every cluster is resampled and flipped as a whole. ``block_size``: rows
    in time order, resampled in circular blocks and flipped in non-overlapping blocks of this many rows;
    ``"auto"``: the size :func:`optimal_block_size` picks from the per-row scores (the command resolves it:
    :meth:`units`). Neither: independent rows. At most one of them; a value checks itself when made, and
    :meth:`parse` makes it from the command line's text or the Python API's keywords.
    """

    cluster: str | None = None
    block_size: int | str | None = None

    def __post_init__(self) -> None:
        if self.cluster is not None and self.block_size is not None:
            raise UsageError(f"give either {option('cluster')} or {option('block_size')}, not both")
        if self.block_size is not None and self.block_size != "auto" and not is_count(self.block_size):
            raise _bad_block_size(self.block_size)

    @classmethod
    def parse(cls, cluster: str | None = None, block_size: int | str | None = None) -> Resampling:
        """The resampling of ``cluster`` and ``block_size`` given as text (``"12"``, ``"auto"`` in any case)
        or as a number."""
        if isinstance(block_size, str):
            text = block_size.strip().lower()
            if text != "auto":
                try:
                    size = int(text)
                except ValueError:
                    size = 0
                if size < 1:
                    raise _bad_block_size(block_size)
            return cls(cluster, "auto" if text == "auto" else size)
        return cls(cluster, block_size)

    def __bool__(self) -> bool:
        """Anything but independent rows."""
        return self.cluster is not None or self.block_size is not None

    def describe(self, count: int, auto: bool = False) -> dict[str, Any]:
        """The JSON's ``settings.resampling`` of ``count`` units (clusters or blocks; a number of rows per
        block, ``auto``: chosen by ``block_size="auto"``)."""
        info = _unit_info(self.cluster is not None, self.block_size, count)
        if auto:
            info["block_size_rule"] = AUTO_RULE
        if self.block_size is not None:
            info["bootstrap"] = "circular blocks" if int(self.block_size) > 1 else "rows"
            info["sign_flip"] = "non-overlapping blocks"
        return info

    def units(
        self, n: int, clusters: Any = None, auto_size: Callable[[], int] | None = None
    ) -> tuple[Resampling, np.ndarray | None, dict[str, Any]]:
        """``(this resampling with its block size chosen, unit of each of the n rows, its description)``
        (:func:`resampling_units`, :meth:`describe`). ``clusters``: the label of each row (the values of
        the ``cluster`` column); ``auto_size()``: the block size of ``block_size="auto"``."""
        if self.cluster is not None and clusters is None:
            raise ValueError("clusters: the cluster labels of the rows are needed")  # a bug, not bad input
        auto = self.block_size == "auto"
        if auto and auto_size is None:
            raise ValueError("auto_size: the rule of block_size='auto' is needed")  # a bug, not bad input
        done = Resampling(block_size=auto_size()) if auto and auto_size is not None else self
        size = cast("int | None", done.block_size)  # a number: "auto" is resolved
        units, info = resampling_units(n, clusters if self.cluster is not None else None, size)
        return done, units, done.describe(int(info.get("clusters", info.get("blocks", 0))), auto)


#: independent rows: every row resampled and flipped alone
ROWS = Resampling()


def _unit_info(clustered: bool, size: Any, count: int) -> dict[str, Any]:
    """What :func:`resampling_units` resamples: ``count`` clusters, blocks of ``size`` rows, or rows."""
    if clustered:
        return {"unit": "cluster", "clusters": count}
    if size is None:
        return {"unit": "row"}
    return {"unit": "block", "block_size": int(size), "blocks": count}


def resampling_units(n: int, cluster=None, block_size: int | None = None) -> tuple[np.ndarray | None, dict]:
    """``(unit of each row, description)``: ``cluster`` (n,) labels, or ``block_size`` consecutive rows per
    unit (at most one of them: :class:`Resampling`), or neither (``None``: every row its own unit). Units
    are numbered ``0 .. G-1`` in order of first appearance, so a cluster's draws do not depend on how its
    label sorts."""
    Resampling(None if cluster is None else "cluster", block_size)  # checks the pair and the block size
    if block_size == "auto":
        raise ValueError("block_size 'auto' is chosen by the caller (Resampling.units)")  # a bug
    if cluster is not None:
        labels = np.asarray(cluster)
        if labels.ndim != 1 or labels.shape[0] != n:
            raise InputError(f"cluster must give one label per row: got shape {labels.shape} for {n} rows")
        if labels.dtype.kind == "f" and np.isnan(labels).any():
            first_row = int(np.flatnonzero(np.isnan(labels))[0])
            raise InputError(
                f"cluster labels must not be missing: NaN at row {first_row}; drop or label those rows"
            )
        if labels.dtype.kind == "O":
            missing = [i for i, v in enumerate(labels.tolist()) if v is None or v != v]
            if missing:
                raise InputError(
                    f"cluster labels must not be missing: {len(missing)} missing (first at row {missing[0]}); "
                    "drop or label those rows"
                )
            labels = labels.astype(str)
        _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # unit numbers in order of first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        units = rank[inverse.ravel()].astype(np.intp)
        return units, _unit_info(True, None, int(order.size))
    if block_size is not None:
        size = int(block_size)
        units = np.arange(n, dtype=np.intp) // size
        return units, _unit_info(False, size, int(-(-n // size)) if n else 0)
    return None, _unit_info(False, None, n)


def unit_sums(units: np.ndarray, count: int, x: np.ndarray) -> np.ndarray:
    """``(count, k)`` sums of the rows of ``x`` (n, k) per unit."""
    out = np.empty((count, x.shape[1]))
    for j in range(x.shape[1]):
        out[:, j] = np.bincount(units, weights=x[:, j], minlength=count)
    return out


def unit_weights(seed: int, units: np.ndarray, count: int, r0: int, r1: int) -> np.ndarray:
    """Poisson weights ``(r1 - r0, n)`` of replicates ``r0 .. r1-1`` for rows whose units are ``units``."""
    return poisson_weights(seed, 0, count, r1)[r0:r1][:, units]


def block_starts(seed: int, n: int, size: int, r0: int, r1: int) -> np.ndarray:
    """``(r1 - r0, ceil(n / size))`` int64 starts (in ``[0, n)``) of the circular blocks of replicates
    ``r0 .. r1 - 1``; replicate ``r``'s starts depend on the seed, ``r``, ``n`` and ``size`` only."""
    k = -(-n // size)
    out = np.empty((r1 - r0, k), dtype=np.int64)
    for r in range(r0, r1):  # one generator per replicate (not per row): any chunking of replicates agrees
        key = np.array([int(seed) & 0xFFFFFFFFFFFFFFFF, (_STARTS << 60) | r], dtype=np.uint64)
        out[r - r0] = np.random.Generator(np.random.Philox(key=key)).integers(0, n, k)
    return out


def circular_block_weights(starts: np.ndarray, n: int, size: int) -> np.ndarray:
    """``(r, n)`` row weights of circular blocks of ``size`` rows starting at ``starts`` (r, K): the number
    of blocks that cover each row. A difference array (+1 at a start, -1 ``size`` rows later) on the rows
    extended past the end, summed cumulatively, then folded back modulo ``n``."""
    r = starts.shape[0]
    if size <= n:  # a moving sum of the start counts, wrapped: w_i = sum_{k < L} c_{(i - k) mod n}
        out = np.empty((r, n))
        for j in range(r):
            c = np.bincount(starts[j], minlength=n)
            cs = np.cumsum(np.concatenate([c[n - size + 1 :], c]))
            out[j] = cs[size - 1 :]
            out[j, 1:] -= cs[: n - 1]
        return out
    length = n + size
    offsets = (np.arange(r, dtype=np.int64) * (length + 1))[:, None]
    flat = starts + offsets
    diff = np.bincount(flat.ravel(), minlength=r * (length + 1)).astype(np.int64)
    diff -= np.bincount((flat + size).ravel(), minlength=r * (length + 1))
    ext = np.cumsum(diff.reshape(r, length + 1)[:, :length], axis=1)
    folds = -(-length // n)
    padded = np.zeros((r, folds * n), dtype=np.int64)
    padded[:, :length] = ext
    return padded.reshape(r, folds, n).sum(axis=1).astype(np.float64)


def window_sums(x: np.ndarray, size: int) -> np.ndarray:
    r"""``(n, k)`` sums of the circular windows of ``size`` rows of ``x`` (n, k): row ``s`` is
    :math:`\sum_{j < L} x_{(s + j) \bmod n}`. Cumulative sums restart at every block of ``size`` rows (a
    window is the tail of one block and the head of the next), so rounding stays that of one window."""
    n, k = x.shape
    g = -(-n // size)
    e = x[np.arange((g + 1) * size) % n].reshape(g + 1, size, k)
    p = np.zeros((g + 1, size + 1, k))
    np.cumsum(e, axis=1, out=p[:, 1:])
    return (p[:g, size:] - p[:g, :size] + p[1:, :size]).reshape(g * size, k)[:n]


def optimal_block_size(x: np.ndarray) -> int:
    r"""Block length for the circular block bootstrap of the mean of the series ``x``.

    Politis & White (2004, "Automatic block-length selection for the dependent bootstrap", Econometric
    Reviews 23) with the correction of Patton, Politis & White (2009, Econometric Reviews 28): with sample
    autocovariances :math:`\hat R(k)`, the flat-top lag window :math:`\lambda(t) = 1` for :math:`|t| \le 1/2`,
    :math:`2(1 - |t|)` for :math:`1/2 < |t| \le 1`, and :math:`M = 2\hat m` where :math:`\hat m` is the
    smallest lag after which :math:`K_N = \max(5, \lceil\sqrt{\log_{10} N}\rceil)` autocorrelations in a row
    are within :math:`2\sqrt{\log_{10} N / N}`,

    .. math:: \hat G = \sum_{|k| \le M} \lambda(k/M)\,|k|\,\hat R(k), \qquad
              \hat g = \sum_{|k| \le M} \lambda(k/M)\,\hat R(k), \qquad
              \hat b = \Big(\frac{2 \hat G^2}{\hat D}\Big)^{1/3} N^{1/3}

    with :math:`\hat D = \tfrac43 \hat g^2` for circular (and moving) blocks, so :math:`\hat b = (\tfrac32)^{1/3}
    (\hat G / \hat g)^{2/3} N^{1/3}`; rounded up, at least 1 and at most :math:`\min(3\sqrt N, N/3)`. Lags up to
    :math:`\lceil\sqrt N\rceil + K_N` are examined (O(N^{3/2}) products: a second for 10^6 rows)."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    if n < 4:
        return 1
    c = x - x.mean()
    r0 = float(c @ c) / n
    if not r0 > 0:
        return 1
    kn = max(5, math.ceil(math.sqrt(math.log10(n))))
    mmax = min(math.ceil(math.sqrt(n)) + kn, n - 1)
    acov = np.array([r0] + [float(c[k:] @ c[:-k]) / n for k in range(1, mmax + 1)])
    rho = acov / r0
    band = 2.0 * math.sqrt(math.log10(n) / n)
    small = np.abs(rho[1:]) < band  # small[k-1]: lag k inside the band
    m_hat = mmax  # no run of K_N small autocorrelations: the largest lag examined
    for m in range(0, mmax - kn + 1):
        if small[m : m + kn].all():
            m_hat = m
            break
    big_m = min(2 * max(m_hat, 1), mmax)
    k = np.arange(-big_m, big_m + 1)
    t = np.abs(k) / big_m
    lam = np.where(t <= 0.5, 1.0, np.where(t <= 1.0, 2.0 * (1.0 - t), 0.0))
    r = acov[np.abs(k)]
    g_big = float(np.sum(lam * np.abs(k) * r))
    g_small = float(np.sum(lam * r))
    if not g_small > 0 or g_big == 0:
        return 1
    b = (1.5 * (g_big / g_small) ** 2) ** (1.0 / 3.0) * n ** (1.0 / 3.0)
    return int(min(max(1, math.ceil(b)), max(1, math.floor(min(3 * math.sqrt(n), n / 3)))))
