"""The bootstrap and the sign-flip tests of a comparison (:mod:`uqeval.resample`): the Poisson bootstrap of
rows or clusters, the circular block bootstrap, and the paired sign-flip permutation test, all on the rows'
per-row forms, made block by block."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from ...catalogue import RowStat

if TYPE_CHECKING:
    pass


#: rows per block of the passes over the rows (bounded temporaries: a block's per-row scores, differences and
#: their temporaries are a few MB; a multiple of resample.BLOCK, so blocks never split a generator block)
BLOCK_ROWS = 1 << 16


def spans(n: int, step: int):
    """``(start, stop)`` of the blocks of ``step`` rows that cover ``n`` rows; a last block of one row joins
    the one before. A score made on one row can differ in the last bit from the same row of a larger
    block: numpy sums a (1, L) array, which is C- and F-contiguous at once, in another order."""
    for start in range(0, n, step):
        stop = n if n - start <= step + 1 else start + step
        yield start, stop
        if stop == n:
            return


#: a per-row score made block by block: ``score(start, stop)`` gives rows ``start .. stop - 1``
BlockScore = Callable[[int, int], np.ndarray]


def _width(terms: np.ndarray | BlockScore) -> int:
    return 1 if callable(terms) else terms.shape[1]


def poisson_bootstrap(
    stats: Sequence[RowStat | BlockScore],
    n: int,
    replicates: int,
    seed: int,
    units: np.ndarray | None = None,
    block_size: int | None = None,
    weights: np.ndarray | None = None,
) -> list[np.ndarray]:
    """``(replicates,)`` Poisson-bootstrap values of each metric (:mod:`uqeval.resample`), all on the
    same replicates: one pass over the rows for every metric with a sums form, weight matrices in
    blocks of replicates for the others (order statistics). A :data:`BlockScore` resamples as the mean
    of its score, asked for once per block of rows, in row order. ``units`` (n,): the cluster of each row
    (:func:`uqeval.resample.resampling_units`), whose rows share one weight; None: rows. ``block_size``
    (rows in time order): the circular block bootstrap (:func:`circular_bootstrap`) instead; ``units`` is
    then ignored. ``weights`` (n,): the rows' own weights (``--weights``): every resample counts row ``i``
    its resampling weight (Poisson count, its unit's count, or the number of blocks covering it) times
    ``weights[i]``, so a replicate is the metric's resampler at that product."""
    from ...resample import Accumulator, poisson_weights

    mean = cast("tuple", RowStat(score=np.empty(0)).sums_form)[3]  # the catalogue's finish of a mean score
    forms = [(st, None, 0, mean) if callable(st) else st.sums_form for st in stats]
    if block_size is not None and block_size > 1 and n:
        return circular_bootstrap(stats, forms, n, replicates, seed, int(block_size), weights)
    if units is not None:
        return _unit_bootstrap(stats, forms, n, replicates, seed, units, weights)
    dense = [f[0] for f in forms if f is not None and f[0] is not None]
    codes = [f[1] for f in forms if f is not None and f[1] is not None]
    acc = Accumulator(
        seed,
        replicates,
        n_terms=sum(_width(t) for t in dense),
        n_categories=tuple(f[2] for f in forms if f is not None and f[1] is not None),
    )
    from ...engine.progress import stage

    if dense or codes:
        advance = stage(f"bootstrap ({replicates:,} resamples)", n)
        for start, stop in spans(n, BLOCK_ROWS):  # the same sums in the same order as in one update
            advance(stop - start)
            block = (
                np.column_stack([t(start, stop) if callable(t) else t[start:stop] for t in dense])
                if dense
                else None
            )
            acc.update(
                start,
                block,
                [c[start:stop] for c in codes],
                weights=None if weights is None else weights[start:stop],
            )
    out = _finished(forms, acc, acc.total, replicates)
    _order_statistics(
        stats,
        forms,
        out,
        n,
        replicates,
        _times(lambda r0, r1: poisson_weights(seed, 0, n, r1)[r0:r1], weights),
    )
    return out


def _times(
    draw: Callable[[int, int], np.ndarray], weights: np.ndarray | None
) -> Callable[[int, int], np.ndarray]:
    """``draw`` (replicates r0 .. r1 - 1 -> their (r1 - r0, n) resampling weights) times the rows' own
    ``weights`` (None: ``draw`` itself)."""
    if weights is None:
        return draw
    return lambda r0, r1: draw(r0, r1) * weights


def _unit_bootstrap(
    stats, forms, n: int, replicates: int, seed: int, units: np.ndarray, weights: np.ndarray | None = None
) -> list[np.ndarray]:
    """:func:`poisson_bootstrap` with one weight per unit: the weighted sums over rows are the weighted sums
    of the units' sums, so the units' sums of the terms, their counts per category (sparse) and their row
    counts (the weights' total) go through the same accumulator as rows would, keyed by the unit's index.
    ``weights``: the rows' own weights, folded into the units' sums, counts and totals."""
    from scipy.sparse import csr_matrix

    from ...resample import Accumulator, unit_sums, unit_weights

    count = int(units.max()) + 1 if n else 0
    dense = [f[0] for f in forms if f is not None and f[0] is not None]
    codes = [f for f in forms if f is not None and f[1] is not None]
    sums = np.zeros((count, sum(_width(t) for t in dense) + 1))
    sums[:, -1] = np.bincount(units, weights=weights, minlength=count)
    if dense:
        for start, stop in spans(n, BLOCK_ROWS):
            block = np.column_stack([t(start, stop) if callable(t) else t[start:stop] for t in dense])
            if weights is not None:
                block *= weights[start:stop, None]
            sums[:, :-1] += unit_sums(units[start:stop], count, block)
    counts = [
        csr_matrix(
            (np.ones(n) if weights is None else weights, (units, np.asarray(f[1], dtype=np.intp))),
            shape=(count, f[2]),
        )
        for f in codes
    ]  # duplicates add up: each unit's rows (their weights) per category
    acc = Accumulator(seed, replicates, n_terms=sums.shape[1], n_categories=tuple(f[2] for f in codes))
    if count:
        acc.update(0, sums, counts)
    out = _finished(forms, acc, acc.sums[-1], replicates)
    _order_statistics(
        stats,
        forms,
        out,
        n,
        replicates,
        _times(lambda r0, r1: unit_weights(seed, units, count, r0, r1), weights),
    )
    return out


def circular_bootstrap(
    stats, forms, n: int, replicates: int, seed: int, size: int, weights: np.ndarray | None = None
) -> list[np.ndarray]:
    r""":func:`poisson_bootstrap` by the circular block bootstrap (:mod:`uqeval.resample`; Politis & Romano
    1992): replicate ``r`` is the :math:`K = \lceil n / L \rceil` circular blocks of ``L = size`` rows that
    start at :func:`~uqeval.resample.block_starts`, i.e. row weights that count the blocks covering a row
    (total :math:`K L`). The weighted sums of dense terms are sums of the drawn starts' window sums (a
    gather of K values per replicate), category counts one bincount of the drawn rows' codes; order
    statistics use the (r, n) row weights (:func:`~uqeval.resample.circular_block_weights`). ``weights``: the
    rows' own weights, folded into the terms (plus a column of them, whose window sums give each replicate's
    total), the category counts and the order statistics' row weights."""
    from types import SimpleNamespace

    from ...engine.progress import stage
    from ...resample import block_starts, circular_block_weights, window_sums

    k = -(-n // size)
    dense = [f[0] for f in forms if f is not None and f[0] is not None]
    codes = [f for f in forms if f is not None and f[1] is not None]
    rest = [i for i, f in enumerate(forms) if f is None]
    width = sum(_width(t) for t in dense)
    extra = 0 if weights is None else 1  # a last column of the weights: its sums are the replicates' totals
    advance = stage(f"bootstrap ({replicates:,} resamples of {k:,} circular blocks)", replicates)
    sums = np.zeros((width + extra, replicates))
    if dense or extra:
        x = np.empty((n, width + extra))
        for start, stop in spans(n, BLOCK_ROWS):  # in row order: a BlockScore adds up its mean as it goes
            if dense:
                x[start:stop, :width] = np.column_stack(
                    [t(start, stop) if callable(t) else t[start:stop] for t in dense]
                )
        if weights is not None:
            x[:, :width] *= weights[:, None]
            x[:, width] = weights
        windows = window_sums(x, size)
        del x
        for r0 in range(0, replicates, 64):
            r1 = min(replicates, r0 + 64)
            for r, starts in enumerate(block_starts(seed, n, size, r0, r1), start=r0):
                sums[:, r] = windows.take(starts, axis=0).sum(
                    axis=0
                )  # (K, width): cheaper than one 3-d gather
            if not codes and not rest:
                advance(r1 - r0)
    total = np.full(replicates, float(k * size)) if weights is None else sums[width].copy()
    sums = sums[:width]
    # category counts: per replicate, its row weights (a moving sum of its start counts) and one weighted
    # bincount per code column (a gather of the K L drawn rows' codes costs more)
    counts = [np.zeros((f[2], replicates)) for f in codes]
    if codes:
        columns = [np.asarray(f[1], dtype=np.intp) for f in codes]
        for r0 in range(0, replicates, 64):
            r1 = min(replicates, r0 + 64)
            starts = block_starts(seed, n, size, r0, r1)
            for r in range(r1 - r0):  # a loop over replicates: each step is vectorised over the rows
                w = circular_block_weights(starts[r : r + 1], n, size)[0]
                if weights is not None:
                    w = w * weights
                for column, f, c in zip(columns, codes, counts):
                    c[:, r0 + r] = np.bincount(column, weights=w, minlength=f[2])
            if not rest:
                advance(r1 - r0)
    out = None
    if rest:
        out = [np.empty(replicates) for _ in forms]
        step = max(1, (1 << 22) // n)
        for r0 in range(0, replicates, step):
            r1 = min(replicates, r0 + step)
            w = circular_block_weights(block_starts(seed, n, size, r0, r1), n, size)
            if weights is not None:
                w = w * weights
            for i in rest:
                out[i][r0:r1] = stats[i].weighted(w)
            advance(r1 - r0)
    done = _finished(forms, SimpleNamespace(sums=sums, counts=counts), total, replicates)
    if out is not None:
        for i in rest:
            done[i] = out[i]
    return done


def _finished(forms, acc, total: np.ndarray, replicates: int) -> list[np.ndarray]:
    """Each metric's replicates from the accumulator's weighted sums of its terms and counts per category
    (``total``: the weights' sum per replicate); an empty (replicates,) array for a metric without a sums
    form, filled by :func:`_order_statistics`."""
    out: list[np.ndarray] = []
    col = cat = 0
    for form in forms:
        if form is None:
            out.append(np.empty(replicates))
            continue
        terms, code, _, finish = form
        parts = []
        if terms is not None:
            parts.append(acc.sums[col : col + _width(terms)].T)
            col += _width(terms)
        if code is not None:
            parts.append(acc.counts[cat].T)
            cat += 1
        out.append(np.asarray(finish(np.concatenate(parts, axis=1), total), dtype=np.float64))
    return out


def _order_statistics(stats, forms, out: list[np.ndarray], n: int, replicates: int, weights) -> None:
    """Fill ``out`` for the metrics without a sums form (order statistics): ``weights(r0, r1)`` gives the
    (r1 - r0, n) weight matrix of replicates ``r0 .. r1 - 1``, made in blocks of about 4M weights."""
    from ...engine.progress import stage

    rest = [i for i, f in enumerate(forms) if f is None]
    if not rest:
        return
    step = max(1, (1 << 22) // max(n, 1))
    advance = stage(f"bootstrap ({replicates:,} resamples, order statistics)", replicates)
    for r0 in range(0, replicates, step):
        r1 = min(replicates, r0 + step)
        advance(r1 - r0)
        w = weights(r0, r1)
        for i in rest:
            out[i][r0:r1] = stats[i].weighted(w)


def sign_flip_tests(
    diffs: np.ndarray | Callable[[int, int, np.ndarray], None],
    permutations: int,
    seed: int,
    shape: tuple[int, int] | None = None,
    units: np.ndarray | None = None,
) -> np.ndarray:
    r"""Two-sided paired sign-flip permutation tests of zero mean difference, one per column of
    ``diffs`` (N, t), all on the same random signs (:mod:`uqeval.resample`): with
    :math:`T = |\sum_i d_i|` and :math:`T_p = |\sum_i \varepsilon_{pi} d_i|`,
    :math:`p = (1 + \#\{p: T_p \ge T\}) / (1 + P)` (Phipson & Smyth 2010).

    ``diffs`` may also be a function ``(start, stop, out)`` that writes the differences of rows
    ``start .. stop - 1`` into ``out`` (stop - start, t), with ``shape = (N, t)``: the differences are
    then made BLOCK_ROWS rows at a time and the (N, t) matrix never exists (the same p-values, bit for bit).

    ``units`` (N,): the cluster or block of each row (:func:`uqeval.resample.resampling_units`): one sign
    per unit, i.e. the test of the units' sums of differences."""
    from ...engine.progress import stage
    from ...metrics.blocks import PairwiseSum
    from ...resample import Accumulator, permutation_p_values, unit_sums

    if callable(diffs):
        assert shape is not None  # a function of the rows comes with shape=
        n, t = shape
    else:
        n, t = diffs.shape
    if units is not None:
        count = int(units.max()) + 1 if n else 0
        if not callable(diffs):
            return sign_flip_tests(unit_sums(units, count, diffs), permutations, seed)
        totals = np.zeros((count, t))
        buf = np.empty((min(n, BLOCK_ROWS + 1), t))
        for start, stop in spans(n, BLOCK_ROWS):
            diffs(start, stop, buf[: stop - start])
            totals += unit_sums(units[start:stop], count, buf[: stop - start])
        return sign_flip_tests(totals, permutations, seed)
    acc = Accumulator(seed, permutations=permutations, n_diffs=t)
    advance = stage(f"permutation tests ({permutations:,} sign flips)", n)
    if not callable(diffs):
        for start in range(0, n, BLOCK_ROWS):
            advance(min(n, start + BLOCK_ROWS) - start)
            acc.update(start, diffs=diffs[start : start + BLOCK_ROWS])
        return permutation_p_values(acc.flipped, diffs.sum(axis=0), np.abs(diffs).sum(axis=0))
    # the column sums of the (N, t) matrix. One column: numpy's pairwise sums of the whole column
    # (PairwiseSum). t >= 2: numpy adds the rows in order, so the running sums go first in each
    # block's buffer and the same additions happen in the same order
    observed, scale = np.zeros(t), np.zeros(t)
    pairwise = (PairwiseSum(n), PairwiseSum(n)) if t == 1 else None
    whole = np.empty((min(n, BLOCK_ROWS + 1) + 1, t))  # one buffer for every block
    for start, stop in spans(n, BLOCK_ROWS):
        advance(stop - start)
        buf = whole[: stop - start + 1]
        diffs(start, stop, buf[1:])
        acc.update(start, diffs=buf[1:])
        if pairwise is not None:
            pairwise[0].add(buf[1:, 0])
            pairwise[1].add(np.abs(buf[1:, 0]))
            continue
        buf[0] = observed
        observed = np.add.reduce(buf, axis=0)
        np.abs(buf[1:], out=buf[1:])
        buf[0] = scale
        scale = np.add.reduce(buf, axis=0)
    if pairwise is not None:
        observed, scale = np.array([pairwise[0].total()]), np.array([pairwise[1].total()])
    return permutation_p_values(acc.flipped, observed, scale)


def auto_block_size(series: Sequence[np.ndarray]) -> int:
    """``block_size="auto"``: the largest :func:`uqeval.resample.optimal_block_size` of the models' per-row
    scores ``series`` (those of the first compared metric that has them); none is an :class:`InputError`."""
    from ...errors import InputError
    from ...resample import optimal_block_size

    if not series:
        raise InputError(
            "block_size 'auto' needs a per-row score (crps, nll, pinball, ...) to choose the block size: "
            "compare such a metric too, or give the block size"
        )
    return max(optimal_block_size(s) for s in series)
