r"""``uqeval compare``'s fold: on the stream and Dask engines several model files read in aligned record
batches (the same global rows), folded into one mergeable :class:`ComparePartial`.

Per batch and model: the metric states of the compared families (:func:`uqeval.catalogue.states.batch_state`),
and the per-row forms of every compared metric (:func:`uqeval.commands.compare.core.row_form`: per-row scores,
terms and codes) folded into one :class:`uqeval.resample.Accumulator` keyed by the row's global index among
the kept rows (Poisson-bootstrap weights, and sign flips of the paired differences of every pair of models),
plus the moments of the differences for the Diebold--Mariano test. Every part adds up over disjoint rows, so
the stream engine folds batches and the Dask engine tree-reduces partition partials with the same
:meth:`ComparePartial.merge`; the JSON is then assembled by :func:`uqeval.commands.compare.core.assemble`, as in
memory. Nothing depends on the chunking: the draws of a row depend on the seed and its index only.

``--weights`` (the first file's column): each batch drops its rows of weight 0 before its rows are numbered
(memory drops them first), every column's unit sums and bootstrap sums are weighted (the Poisson counts, or
the clusters' counts, times the weights: :meth:`uqeval.resample.Accumulator.update`), every estimate is its
per-row form's finish of the weighted sums (as memory's resampler at the weights), and the paired tests run
on :math:`w_i d_i` (memory's :math:`w_i d_i / \bar w`: the same p-values and DM statistic, a constant
apart); a metric weighted by its family's kernels streams where those are functions of weighted bin sums
(:attr:`uqeval.catalogue.Family.weighted_sums`: ECE, MCE, SCE, the Brier decomposition); metrics whose
weighted form is not a function of sums are not compared (``input.not_streamed``).

Clusters and the block sign flip fold the units' sums (:class:`UnitSums`). The circular block bootstrap and
``block_size="auto"`` need every row (blocks start anywhere; the size comes from the whole series): the state
keeps the rows' per-row forms (:class:`KeptRows`) and runs the in-memory resampling on them at the end.

The memory engine is the one-batch case of this fold: its one piece (:class:`Whole`) holds every row of the
aligned models, and its state (:class:`KeptCompare`) keeps it and finishes with the in-memory computation
(:func:`uqeval.commands.compare.core.compare_models`); given a second piece or merged, it turns into a
:class:`ComparePartial` (:meth:`KeptCompare.summed`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from ...config import Settings
from ...engine.aligned import ModelSource, Rowset, check_same_rows, drop_weightless
from ...errors import InputError, option
from ...metrics.comparison import Moments
from ...resample import Resampling
from .core import NO_RESAMPLER, CompareOptions, MetricRef, Model, Plan
from .paired import test_entry

if TYPE_CHECKING:
    from ...predictions import Prediction
    from .skill import Reference

#: why the bootstrap of a metric is not streamed
NO_STREAMED_BOOTSTRAP = (
    "its resampler needs order statistics over all rows (not streamed; compare in memory for an interval)"
)
#: why a two-pass metric is not compared when streamed
TWO_PASS = "needs a second pass over the rows (the streamed score computes it)"


@dataclass
class Layout:
    """What every batch contributes (decided on the first batch; sent to the Dask workers).

    ``columns``: the bootstrap columns ``(metric, model, n_terms, n_codes)`` in accumulator order;
    ``pairs``: the paired-test columns ``(metric, a, b)``, ``a < b``, every pair of models with per-row scores."""

    plan: Plan
    families: tuple[str, ...]
    columns: list[tuple[str, int, int, int]]
    pairs: list[tuple[str, int, int]]
    not_streamed: dict[str, str]
    skip: set[tuple[str, int]]  # (metric, model) whose estimate is not streamed
    #: dependent rows (issue 25): clusters (the column as the first file spells it) or blocks (a number of
    #: rows or "auto"); None: independent rows
    units: Resampling | None = None
    #: ``block_size="auto"``: the metric whose per-row scores choose the size (as in memory: the first
    #: compared metric that has them); None: the size is given
    auto_ref: MetricRef | None = None
    #: the seed of the sign flips, from the seed and the first rows (:func:`uqeval.resample.flip_seed`)
    flip_seed: int | None = None
    #: ``--weights``: the first model's column (None: unweighted); ``not_weighted``: as in memory
    weights: str | None = None
    not_weighted: dict[str, str] = field(default_factory=dict)
    #: weighted: the family result of each target-oriented ``(metric, model)`` on the first batch (its target)
    target_results: dict[tuple[str, int], Any] = field(default_factory=dict)
    #: weighted: the ``(metric, model)`` pairs computed from their family's weighted cell sums (the family)
    cells: dict[tuple[str, int], str] = field(default_factory=dict)
    #: weighted: the ``(metric, model)`` pairs computed from their family's weighted mergeable state (the
    #: family and the model's representation): the weighted moments of RMSE, R² and the correlation, as the weighted score streams them
    specials: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)

    @property
    def keeps_rows(self) -> bool:
        """Whether the states keep the per-row forms (:class:`KeptRows`): the circular block bootstrap (its
        blocks start anywhere in the N rows) and ``block_size="auto"`` (the size comes from the whole series)."""
        size = None if self.units is None else self.units.block_size
        return size == "auto" or (size is not None and int(size) > 1 and self.plan.options.n_boot > 0)


def _results(preds: Sequence, plan: Plan):
    from .core import Results

    return Results([Model(n, p) for n, p in zip(plan.names, preds)], plan.settings, plan.grids)


def make_layout(
    plan: Plan, preds: Sequence, not_weighted: dict[str, str] | None = None
) -> tuple[Layout, dict[tuple[str, int], Callable]]:
    """The :class:`Layout` of ``plan`` from the first batch's predictions, and the ``finish(sums, total)`` of
    each bootstrap column (a function of the settings and the level, not of the rows; kept on the client).
    ``not_weighted`` (weighted rows): every estimate is its per-row form's finish of the weighted sums (as
    in memory), so a summary metric streams where its per-row form has a sums form."""
    from ...catalogue import states
    from .core import row_form, row_score

    results = _results(preds, plan)
    weighted = not_weighted is not None
    # summary refs name their family; weighted estimates come from the per-row forms, not the families
    families = (
        () if weighted else tuple(sorted({cast("str", r.group) for r in plan.refs if r.source == "summary"}))
    )
    from ...catalogue import METRICS
    from .core import no_row_form

    columns, pairs, not_streamed, skip, finishes = [], [], {}, set(), {}
    cells: dict[tuple[str, int], str] = {}
    specials: dict[tuple[str, int], tuple[str, str]] = {}
    target_results: dict[tuple[str, int], Any] = {}
    # block_size="auto" reads the per-row scores of the first compared metric that has them (as in memory)
    auto_ref = next(
        (r for r in plan.refs if any(row_score(results, k, r) is not None for k in range(len(preds)))), None
    )
    for ref in list(plan.refs):
        if ref.source == "summary" and weighted:
            for k, p in enumerate(preds):
                how = _weighted_form(results, k, ref, plan.settings)
                if how in ("sums", "cells", "special") and ref.orientation == "target":
                    target_results[(ref.name, k)] = results.get(k, cast("str", ref.group))
                if how == "cells":
                    cells[(ref.name, k)] = cast("str", ref.group)
                elif how == "special":
                    specials[(ref.name, k)] = (cast("str", ref.group), p.kind)
                elif how != "sums":
                    skip.add((ref.name, k))
                    if how is not None:
                        not_streamed[ref.name] = how
                    elif METRICS[f"{ref.group}.{ref.keys[-1]}"].applies_to(p.kind):
                        cast("dict", not_weighted).setdefault(ref.name, no_row_form(p.kind, plan.names[k]))
            if all((ref.name, k) in skip for k in range(len(preds))):
                plan.refs.remove(ref)
                continue
        elif ref.source == "summary":
            path = f"{ref.group}.{ref.keys[-1]}"
            for k, p in enumerate(preds):
                why = states.not_streamed(p.kind).get(path)
                if why is None and path in states.two_pass(p.kind):
                    why = TWO_PASS
                if why is not None:
                    skip.add((ref.name, k))
                    not_streamed[
                        ref.name
                        if len(preds) == sum(1 for x in preds if x.kind == p.kind)
                        else f"{ref.name} ({plan.names[k]})"
                    ] = why
            if all((ref.name, k) in skip for k in range(len(preds))):  # no model has it: not compared at all
                plan.refs.remove(ref)
                continue
        for k in range(len(preds)):
            stat = (
                row_form(results, k, ref)
                if plan.options.n_boot or weighted or ref.source == "per_row"
                else None
            )
            form = None if stat is None else stat.sums_form
            if form is not None and (ref.name, k) not in skip:
                terms, codes, n_codes, finishes[(ref.name, k)] = form
                columns.append(
                    (ref.name, k, 0 if terms is None else terms.shape[1], 0 if codes is None else n_codes)
                )
        if ref.orientation != "target":
            avail = [k for k in range(len(preds)) if row_score(results, k, ref) is not None]
            pairs += [(ref.name, a, b) for i, a in enumerate(avail) for b in avail[i + 1 :]]
    layout = Layout(plan, families, columns, pairs, not_streamed, skip, auto_ref=auto_ref)
    if weighted:
        layout.not_weighted, layout.target_results = cast("dict", not_weighted), target_results
        layout.cells, layout.specials = cells, specials
    return layout, finishes


def _weighted_form(results: Any, k: int, ref: MetricRef, settings: Settings) -> str | None:
    """How model ``k``'s metric ``ref`` streams with weights: ``"sums"`` (its per-row form's weighted sums),
    ``"cells"`` (its family's weighted cell sums: :attr:`uqeval.catalogue.Family.weighted_sums`, as the
    weighted score streams ECE, MCE, SCE and the Brier decomposition), ``"special"`` (its family's weighted
    mergeable state: the weighted moments of RMSE, R², the correlation and the information criteria's
    standard errors, as the weighted score streams them), why it is not streamed (its weighted form needs
    every row), or None (it takes no weights for this representation)."""
    from ...catalogue import METRICS, get_family
    from ...catalogue.weighted import (
        NOT_STREAMED,
        NOT_STREAMED_KERNEL,
        NOT_STREAMED_TWO_PASS,
        TWO_PASS,
        weighted_special,
    )
    from .core import row_form

    stat = row_form(results, k, ref)
    if stat is not None:
        if stat.sums_form is not None:
            return "sums"
        if weighted_special(cast("str", ref.group), results.models[k].prediction.kind, ref.keys[-1]) is None:
            return NOT_STREAMED
        return NOT_STREAMED_TWO_PASS if ref.keys[-1] in TWO_PASS else "special"
    pred, group = results.models[k].prediction, cast("str", ref.group)
    if pred.kind not in METRICS[f"{group}.{ref.keys[-1]}"].weighted_kinds:
        return None
    if weighted_special(group, pred.kind, ref.keys[-1]) is not None:  # the information criteria's *_se
        return "special"
    family = get_family(group)
    if family.weighted_sums is None or family.from_sums is None or family.by_level:
        return NOT_STREAMED_KERNEL
    sums = family.weighted_sums(pred, results.settings, np.ones(pred.n))
    if sums is None:  # (the family gives no sums for this prediction)
        return NOT_STREAMED_KERNEL
    return "cells" if ref.keys[-1] in family.from_sums(sums, settings) else NOT_STREAMED_KERNEL


@dataclass
class ComparePartial:
    """The comparison state of some consecutive rows of every model (a batch, a partition, or all merged)."""

    layout: Layout
    start: int = 0  # index of the first kept row among all kept rows (the resampling key)
    n: int = 0  # kept rows
    n_rows: list[int] = field(default_factory=list)  # rows read per model
    n_dropped: list[int] = field(default_factory=list)
    columns: list[Any] = field(default_factory=list)
    kinds: list[tuple | None] = field(default_factory=list)  # per model: representation and per-row shapes
    states: list[dict] = field(default_factory=list)
    # unit and moments are None only as dataclass defaults: __post_init__ always sets them
    unit: np.ndarray = None  # type: ignore[assignment]  # unit-weight sums of the columns' terms and code counts
    acc: Any = None
    moments: Moments = None  # type: ignore[assignment]
    #: with clusters or blocks: the units' keys in order of first appearance, and their sums (terms, row
    #: count, code counts; differences), a mergeable state (:class:`UnitSums`)
    by_unit: Any = None
    #: ``--weights``: the total weight of the kept rows (the rows of weight 0 are not kept)
    w: float = 0.0
    #: the circular block bootstrap or ``block_size="auto"``: the per-row forms of every kept row
    #: (:class:`KeptRows`), resampled when every row is in
    kept: KeptRows | None = None
    #: weighted: per ``(family, model)`` of :attr:`Layout.cells`, the family's weighted cell sums
    cells: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    #: weighted: per ``(family, representation, model)`` of :attr:`Layout.specials`, the family's weighted
    #: mergeable state
    specials: dict[tuple[str, str, int], Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        from ...catalogue import states
        from ...resample import Accumulator

        m = len(self.layout.plan.names)
        self.n_rows = self.n_rows or [0] * m
        self.n_dropped = self.n_dropped or [0] * m
        self.columns = self.columns or [None] * m
        self.kinds = self.kinds or [None] * m
        self.states = self.states or [states.init() for _ in range(m)]
        cols, plan = self.layout.columns, self.layout.plan
        if self.unit is None:
            self.unit = np.zeros(sum(t + c for _, _, t, c in cols))
        if self.kept is None and self.layout.keeps_rows:
            self.kept = KeptRows()
        if self.by_unit is None and self.layout.units is not None and not self.layout.keeps_rows:
            self.by_unit = UnitSums(
                sum(t for _, _, t, _ in cols) + 1, [c for _, _, _, c in cols if c], len(self.layout.pairs)
            )
        if self.acc is None and self.layout.units is None:
            self.acc = Accumulator(
                plan.options.seed or 0,
                plan.options.n_boot,
                plan.options.n_permutations if self.layout.pairs else 0,
                n_terms=sum(t for _, _, t, _ in cols),
                n_categories=tuple(c for _, _, _, c in cols if c),
                n_diffs=len(self.layout.pairs),
                flip_seed=self.layout.flip_seed,
            )
        if self.moments is None:
            self.moments = Moments(plan.options.dm_lag)

    @property
    def kept_rows(self) -> int:
        """The rows kept (the resampling keys this state used: ``start`` to ``start + kept_rows``)."""
        return self.n

    def add(self, piece: Rowset) -> None:
        """Fold one aligned batch (one :class:`~uqeval.io.load.Batch` per model, the same global rows)."""
        from ...catalogue import states

        files, batches, n_rows = piece.files, piece.batches, piece.rows
        from .core import align_models, row_form, row_score

        lay, plan = self.layout, self.layout.plan
        for k, b in enumerate(batches):
            self.n_rows[k] += n_rows
            self.n_dropped[k] += b.n_dropped
            if self.columns[k] is None and b.prediction is not None:
                self.columns[k] = b.columns
        preds = [b.prediction for b in batches]
        check_same_rows(files, preds)
        if preds[0] is None:
            return
        from ...engine.local import row_signature

        for k, p in enumerate(preds):
            sig = (p.kind, row_signature(p))
            known = self.kinds[k]
            if known is None:
                self.kinds[k] = sig
            elif sig != known:
                raise InputError(
                    f"{files[k]}: rows from global row {int(p.row_numbers()[0])} on are {p.kind} predictions "
                    f"with per-row shapes {dict(sig[1])}, the rows before {known[0]} with "
                    f"{dict(known[1])}; every row needs the same columns, members and levels"
                )
        align_models(
            [Model(name, p, {"path": f}) for name, p, f in zip(plan.names, preds, files)],
            first_row=self.start + self.n,
        )  # the same targets
        results = _results(preds, plan)
        refs = {r.name: r for r in plan.refs}
        n = preds[0].n
        w = None
        if lay.weights is not None:
            w = cast("np.ndarray", batches[0].weights)
            self.w += float(w.sum())
        dense, codes, unit = [], [], []
        for name, k, width, n_codes in lay.columns:
            # the layout's columns are the (metric, model) pairs that have a sums form (make_layout)
            terms, code, _, _ = row_form(results, k, refs[name]).sums_form  # type: ignore[union-attr, misc]
            if terms is not None:
                t = np.asarray(terms, dtype=np.float64).reshape(n, width)
                dense.append(t)
                unit.append(t.sum(axis=0) if w is None else w @ t)
            if code is not None:
                codes.append(np.asarray(code, dtype=np.intp))
                unit.append(np.bincount(codes[-1], weights=w, minlength=n_codes).astype(np.float64))
        diffs = None
        if lay.pairs:
            from .core import without_rounding_noise

            cols = []
            for name, a, b in lay.pairs:
                # the pairs are of models with per-row scores (make_layout)
                sa = cast("np.ndarray", row_score(results, a, refs[name]))
                sb = cast("np.ndarray", row_score(results, b, refs[name]))
                cols.append(sa - without_rounding_noise(sa, sb))
            diffs = np.column_stack(cols)
            if w is not None:  # the paired tests run on w_i d_i (over the mean weight, a constant: finish)
                diffs *= w[:, None]
            self.moments = self.moments.merge(Moments.of(diffs, plan.options.dm_lag))
        if unit:
            self.unit += np.concatenate(unit)
        for group, k in sorted({(g, k) for (_, k), g in lay.cells.items()}):
            from ...catalogue import get_family

            sums = cast("Any", get_family(group).weighted_sums)(preds[k], plan.settings, w)
            self.cells[(group, k)] = self.cells[(group, k)] + sums if (group, k) in self.cells else sums
        for group, kind, k in sorted({(*gk, k) for (_, k), gk in lay.specials.items()}):
            from ...catalogue.weighted import weighted_special_of

            sp = weighted_special_of(group, kind)
            st = sp.update(preds[k], plan.settings, w)
            if st is not None:  # (None: the family gives nothing for these rows, as in memory)
                prior = self.specials.get((group, kind, k))
                self.specials[(group, kind, k)] = st if prior is None else sp.merge(prior, st)
        if self.kept is not None:
            series = (
                None
                if lay.auto_ref is None
                else [row_score(results, k, lay.auto_ref) for k in range(len(preds))]
            )
            self.kept.add(n, dense, codes, diffs, w, series)
        elif self.by_unit is not None:
            self.by_unit.add(self._unit_keys(files, batches, n), dense, codes, diffs, w)
        else:
            self.acc.update(
                self.start + self.n, np.column_stack(dense) if dense else None, codes, diffs, weights=w
            )
        for k, p in enumerate(preds):
            if lay.families:
                self.states[k] = states.merge(
                    self.states[k], states.batch_state(p, plan.settings, lay.families)
                )
        self.n += n

    def _unit_keys(self, files: Sequence[str], batches: Sequence, n: int) -> np.ndarray:
        """The unit of each kept row of a batch: its block (global kept row // size) or its cluster label
        (as a string, as :func:`uqeval.resample.resampling_units` keys object labels)."""
        units = cast("Resampling", self.layout.units)
        first = self.start + self.n
        if units.block_size is not None:
            return (first + np.arange(n, dtype=np.int64)) // int(units.block_size)
        labels = batches[0].groups
        missing = [i for i, v in enumerate(labels.tolist()) if v is None or v != v]
        if missing:
            row = int(batches[0].prediction.row_numbers()[missing[0]])
            raise InputError(
                f"{files[0]}: cluster labels must not be missing: {len(missing)} missing in column '{units.cluster}' "
                f"(first at row {row}); drop or label those rows"
            )
        return labels.astype(str)

    def merge(self, other: ComparePartial) -> ComparePartial:
        """The partial of this one's rows followed by ``other``'s (the next rows); neither is changed (the
        Dask engine may hold either, and a retried task must not add twice)."""
        import copy

        return copy.deepcopy(self)._merge_into(other)

    def _merge_into(self, other: ComparePartial) -> ComparePartial:
        from ...catalogue import states

        if other.start != self.start + self.n:
            raise ValueError("partials must be merged in row order")  # a bug, not bad input
        if self.kept is not None:
            self.kept.merge(cast("KeptRows", other.kept))
        elif self.by_unit is not None:
            self.by_unit.merge(other.by_unit)
        else:
            self.acc.merge(other.acc)
        self.unit = self.unit + other.unit
        for key, sums in other.cells.items():
            self.cells[key] = self.cells[key] + sums if key in self.cells else sums
        for spec, st in other.specials.items():
            if spec in self.specials:
                from ...catalogue.weighted import weighted_special_of

                st = weighted_special_of(spec[0], spec[1]).merge(self.specials[spec], st)
            self.specials[spec] = st
        self.w += other.w
        self.moments = self.moments.merge(other.moments)
        for k in range(len(self.states)):
            self.n_rows[k] += other.n_rows[k]
            self.n_dropped[k] += other.n_dropped[k]
            self.columns[k] = self.columns[k] if self.columns[k] is not None else other.columns[k]
            mine, theirs = self.kinds[k], other.kinds[k]
            if mine is None:
                self.kinds[k] = theirs
            elif theirs is not None and theirs != mine:
                raise InputError(
                    f"model {self.layout.plan.names[k]}: {mine[0]} predictions with per-row "
                    f"shapes {dict(mine[1])} and {theirs[0]} with "
                    f"{dict(theirs[1])} in different partitions; every row needs the same "
                    "columns, members and levels"
                )
            self.states[k] = states.merge(self.states[k], other.states[k])
        self.n += other.n
        return self


class Whole(NamedTuple):
    """``compare``'s one piece on the memory engine (:func:`uqeval.engine.aligned.in_memory`): every row of the
    aligned ``models`` (``joined``: on an id column), with the first model's ``clusters`` and ``weights``
    (``weights_column``: their column, None for Python's arrays), the ``reference`` and its ``times``, as
    :func:`~uqeval.commands.compare.core.compare_models` takes them."""

    models: list[Model]
    clusters: np.ndarray | None = None
    weights: np.ndarray | None = None
    weights_column: str | None = None
    reference: Reference | None = None
    times: np.ndarray | None = None
    joined: bool = False

    @property
    def rows(self) -> int:
        """The rows read of the first model (those dropped for NaN/inf included)."""
        first = self.models[0]
        return first.prediction.n + int(first.info.get("n_dropped", 0))

    def compared(self, settings: Settings, options: CompareOptions) -> dict[str, Any]:
        """The comparison document of every row in memory: the exact in-memory computation."""
        from .core import compare_models

        return compare_models(
            self.models,
            settings,
            options,
            clusters=self.clusters,
            weights=self.weights,  # one a row of the first model, whose rows keep their order
            weights_column=self.weights_column,
            reference=self.reference,
            reference_times=self.times,
        )

    def rowset(self, offset: int) -> Rowset:
        """These rows as one aligned record batch of the stream engine, its global rows from ``offset`` (for a
        state that turns into sums: :meth:`KeptCompare.summed`). What the stream engine does not fold (a join
        on an id column, a reference, Python's weights without a column) is refused as there."""
        from ...engine.options import not_streamed
        from ...io.load import batch_of
        from ...weights import check_weights

        no_column = self.weights is not None and not self.weights_column
        for name, given in (
            ("id", self.joined),
            ("reference", self.reference is not None),
            ("weights", no_column),
        ):
            if given:
                raise not_streamed(name)
        n = self.models[0].prediction.n
        w = None if self.weights is None else check_weights(self.weights, self.weights_column, n=n)
        batches = [
            batch_of(m.prediction, m.info, self.clusters if k == 0 else None, w if k == 0 else None)
            for k, m in enumerate(self.models)
        ]
        return Rowset([m.source for m in self.models], drop_weightless(batches), self.rows, offset)


class KeptCompare:
    """``compare``'s fold state that needs all rows (the memory engine): it keeps its one piece, a
    :class:`Whole`, and computes no sums; :meth:`Whole.compared` finishes it with the exact in-memory
    computation. Given a second piece, or merged with another state, it turns into sums: a
    :class:`ComparePartial` planned on the kept rows as the stream engine plans on its first batch
    (:func:`plan_stream`), the kept rows its first batch (:meth:`summed`). ``start``: as
    :attr:`ComparePartial.start`."""

    def __init__(
        self, names: Sequence[str], settings: Settings, options: CompareOptions, start: int = 0
    ) -> None:
        self.names, self.settings, self.options, self.start = list(names), settings, options, start
        self.kept: Whole | None = None
        self.sums: ComparePartial | None = None
        #: the ``finish`` of each bootstrap column of the sums (:func:`make_layout`)
        self.finishes: dict[tuple[str, int], Callable] = {}

    @property
    def kept_rows(self) -> int:
        """The rows kept (:attr:`ComparePartial.kept_rows`)."""
        return 0 if self.kept is None and self.sums is None else self.summed().kept_rows

    def add(self, piece: Whole | Rowset) -> None:
        """Keep the first piece; a second turns the state into sums and folds it in."""
        if self.kept is None and self.sums is None and isinstance(piece, Whole):
            self.kept = piece
            return
        self.sums, self.kept = self.summed(), None
        self.sums.add(piece.rowset(self.sums.start + self.sums.n) if isinstance(piece, Whole) else piece)

    def summed(
        self, planned: tuple[Layout, dict[tuple[str, int], Callable]] | None = None, start: int | None = None
    ) -> ComparePartial:
        """This state as sums: its sums, or the kept piece folded into a new :class:`ComparePartial` (its rows
        from ``start``, by default :attr:`start`; ``planned``: the layout and finishes to use, by default
        planned on the kept rows); neither part changed but :attr:`finishes`."""
        if self.sums is not None:
            return self.sums
        start = self.start if start is None else start
        piece = None if self.kept is None else self.kept.rowset(start)
        if planned is None:
            if piece is None:
                raise ValueError("an empty state has no plan: merge it after one that has rows")  # a bug
            units = units_of(self.options.resampling)
            specs = list(piece.files)
            planned = plan_stream(specs, units, iter([piece]), self.names, self.settings, self.options)
        self.finishes = planned[1]
        out = ComparePartial(planned[0], start)
        if piece is not None:
            out.add(piece)
        return out

    def merge(self, other: KeptCompare | ComparePartial) -> KeptCompare:
        """Both parts' rows, ``other``'s following, as sums (neither part changed)."""
        mine = self.summed()
        theirs = (
            other
            if isinstance(other, ComparePartial)
            else other.summed((mine.layout, self.finishes), mine.start + mine.n)
        )
        out = KeptCompare(self.names, self.settings, self.options, self.start)
        out.sums, out.finishes = mine.merge(theirs), self.finishes
        return out


class KeptRows:
    """The per-row forms of the kept rows, in row order: the bootstrap columns' terms and codes, the paired
    differences, the weights and (``block_size="auto"``) each model's per-row scores that choose the size.
    The circular block bootstrap draws blocks that start anywhere in the N rows and ``auto`` reads the whole
    series, so this state grows with the rows (a few floats a row per metric and model, not the predictions:
    "needs every row" in the design's words); :meth:`resample` then runs the in-memory functions on them, so
    the replicates and p-values are memory's."""

    def __init__(self) -> None:
        self.parts: list[tuple[Any, ...]] = []

    def add(self, n: int, dense: list, codes: list, diffs: Any, w: Any, series: Any) -> None:
        """Keep one batch's ``n`` rows."""
        self.parts.append((n, np.column_stack(dense) if dense else None, codes, diffs, w, series))

    def merge(self, other: KeptRows) -> None:
        """Append ``other``'s rows (the next ones)."""
        self.parts += other.parts

    def _joined(self, i: int) -> Any:
        """Item ``i`` of every kept batch in one array (None where the batches have none), each batch's copy
        let go as it is copied (the rows are held once, not twice)."""
        if not self.parts or self.parts[0][i] is None:
            return None
        first = self.parts[0][i]
        out = np.empty((sum(p[0] for p in self.parts), *first.shape[1:]), dtype=first.dtype)
        at = 0
        for j, part in enumerate(self.parts):
            out[at : at + part[0]] = part[i]
            at += part[0]
            self.parts[j] = (*part[:i], None, *part[i + 1 :])
        return out

    def resample(
        self, lay: Layout, columns: list, finishes: dict[tuple[str, int], Callable]
    ) -> tuple[dict[tuple[str, str], np.ndarray], np.ndarray | None, dict[str, Any]]:
        """``(replicates, sign-flip p-values of the pairs or None, the resampling's description)``: the block
        size (``auto``: :func:`~uqeval.commands.compare.resampling.auto_block_size` of the per-row scores),
        memory's :func:`~uqeval.commands.compare.resampling.poisson_bootstrap` of the ``columns`` that
        :func:`~uqeval.commands.compare.assemble.estimate_metrics` kept, and its sign flips of the blocks' sums
        of differences."""
        from ...catalogue import RowStat
        from .resampling import auto_block_size, poisson_bootstrap, sign_flip_tests

        plan, opts = lay.plan, lay.plan.options
        n, dense, diffs, w = sum(p[0] for p in self.parts), self._joined(1), self._joined(3), self._joined(4)
        series = [
            np.concatenate([p[5][k] for p in self.parts])
            for k in range(len(plan.names))
            if self.parts and self.parts[0][5] is not None and self.parts[0][5][k] is not None
        ]
        units_of = cast("Resampling", lay.units)
        done, units, info = units_of.units(n, None, lambda: auto_block_size(series))
        size = cast("int", done.block_size)
        uw = None if w is None or (w == w[0]).all() else w  # constant weights are no weights (as in memory)
        replicates: dict[tuple[str, str], np.ndarray] = {}
        if opts.n_boot and columns:
            at, stats = _offsets(lay), []
            for _, _, key in columns:
                c0, width, ci, n_codes = at[key]
                code = None if ci is None else np.concatenate([p[2][ci] for p in self.parts])
                terms = None if not width else dense[:, c0 : c0 + width]
                stats.append(RowStat(terms=terms, codes=code, n_codes=n_codes, finish=finishes[key]))
            reps = poisson_bootstrap(stats, n, opts.n_boot, opts.seed or 0, units, size, uw)
            replicates = {(metric, model): rep for (metric, model, _), rep in zip(columns, reps)}
        p_values = None
        if opts.n_permutations and lay.pairs:
            seed = opts.seed or 0 if lay.flip_seed is None else lay.flip_seed
            p_values = sign_flip_tests(diffs, opts.n_permutations, seed, units=units)
        return replicates, p_values, info


def _offsets(lay: Layout) -> dict[tuple[str, int], tuple[int, int, int | None, int]]:
    """Per bootstrap column: ``(first dense column, width, its code column or None, n_codes)`` in the batches'
    dense terms and code list."""
    out, col, cat = {}, 0, 0
    for name, k, width, n_codes in lay.columns:
        out[(name, k)] = (col, width, cat if n_codes else None, n_codes)
        col += width
        cat += 1 if n_codes else 0
    return out


class UnitSums:
    """Per-unit sums of the bootstrap columns (dense terms, then the row count) and of the paired differences,
    keyed by the unit (a block index or a cluster label) in order of first appearance: batches and partitions
    added in row order number the units as :func:`uqeval.resample.resampling_units` numbers them in memory."""

    def __init__(self, width: int, n_codes: Sequence[int], n_diffs: int) -> None:
        self.index: dict[Any, int] = {}
        self.width, self.n_codes, self.n_diffs = width, list(n_codes), n_diffs
        self.sums = np.zeros((0, width))
        self.codes = [np.zeros((0, k)) for k in self.n_codes]
        self.diffs = np.zeros((0, n_diffs))

    def _grow(self, keys: Sequence[Any]) -> np.ndarray:
        """The unit numbers of ``keys`` (unique), new keys appended in the order given."""
        out = np.empty(len(keys), dtype=np.intp)
        for j, key in enumerate(keys):  # one lookup per unit of the batch, not per row
            out[j] = self.index.setdefault(key, len(self.index))
        extra = len(self.index) - self.sums.shape[0]
        if extra:
            self.sums = np.vstack([self.sums, np.zeros((extra, self.width))])
            self.codes = [np.vstack([c, np.zeros((extra, c.shape[1]))]) for c in self.codes]
            self.diffs = np.vstack([self.diffs, np.zeros((extra, self.n_diffs))])
        return out

    def add(
        self,
        keys: np.ndarray,
        dense: Sequence[np.ndarray],
        codes: Sequence[np.ndarray],
        diffs,
        weights: np.ndarray | None = None,
    ) -> None:
        """Add rows whose units are ``keys`` (n,): ``dense`` (n, k) terms, ``codes`` (n,) ints, ``diffs``;
        ``weights`` (n,): the rows' own weights, folded into the terms, the row count and the code counts
        (as the in-memory unit bootstrap folds them; ``diffs`` come weighted)."""
        from ...resample import unit_sums

        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # this batch's units in order of first appearance
        at = np.empty(order.size, dtype=np.intp)
        at[order] = self._grow([uniq[i].item() for i in order])
        rows = at[inverse.ravel()]
        count = len(self.index)
        ones = np.ones(rows.size) if weights is None else weights
        x = np.column_stack([*dense, ones])
        if weights is not None:
            x[:, :-1] *= weights[:, None]
        self.sums += unit_sums(rows, count, x)
        for c, code in zip(self.codes, codes):
            np.add.at(c, (rows, code), ones)
        if diffs is not None:
            self.diffs += unit_sums(rows, count, diffs)

    def merge(self, other: UnitSums) -> None:
        """Add ``other``'s units (the next rows): shared keys add up, new ones follow."""
        keys = list(other.index)
        at = self._grow(keys)
        src = np.array([other.index[k] for k in keys], dtype=np.intp)
        self.sums[at] += other.sums[src]
        for a, b in zip(self.codes, other.codes):
            a[at] += b[src]
        self.diffs[at] += other.diffs[src]


# --------------------------------------------------------------------------- planning on the first rows


def first_rows_key(seen: list, batches) -> int:
    """:func:`uqeval.resample.rows_key` of the first :data:`~uqeval.resample.KEY_ROWS` kept rows of every model:
    the batches read so far (``seen``), and more read ahead from ``batches`` (appended to ``seen``, folded
    later) until that many rows are kept or the input ends."""
    from ...metrics.calibration_tests import merge_keys
    from ...resample import KEY_ROWS, rows_key

    key, kept, i = 0, 0, 0
    while kept < KEY_ROWS:
        if i == len(seen):
            nxt = next(batches, None)
            if nxt is None:
                break
            seen.append(nxt)
        preds = [b.prediction for b in seen[i][1]]
        check_same_rows(seen[i][0], preds)  # misaligned rows: the error folding them would raise
        i += 1
        if preds[0] is None:
            continue
        take = min(preds[0].n, KEY_ROWS - kept)
        key = merge_keys(key, rows_key(preds, take))
        kept += take
    return key


def first_batch(batches) -> tuple[list, list]:
    """The first aligned batch with kept rows, and every batch read up to it (folded after planning)."""
    seen = []
    for piece in batches:
        seen.append(piece)
        check_same_rows(piece.files, [b.prediction for b in piece.batches])
        if piece.batches[0].prediction is not None:
            return [b.prediction for b in piece.batches], seen
    return [], seen


def plan_on(
    specs: Sequence[str],
    preds: Sequence,
    names: Sequence[str],
    settings: Settings,
    options: CompareOptions,
    seen: Sequence = (),
) -> tuple[Layout, dict]:
    from .core import align_models, plan_comparison

    column = settings.columns.get("weights")
    if not preds and column and any(p.rows > p.batches[0].n_dropped for p in seen):
        from ...weights import check_weights

        check_weights(np.zeros(1), column)  # raises: rows were kept, and every one has weight 0
    if not preds:
        raise InputError(f"{specs[0]}: every row has NaN/inf in a used column; nothing left to compare")
    chunk = align_models([Model(n, p, {"path": spec}) for n, p, spec in zip(names, preds, specs)])
    if settings.murphy:
        from ...engine.options import not_streamed

        raise not_streamed("murphy", "it draws curves over all rows")
    not_weighted: dict[str, str] | None = {} if column else None
    plan, _ = plan_comparison(chunk, settings, options, not_weighted)
    layout, finishes = make_layout(plan, preds, not_weighted)
    layout.weights = column
    return layout, finishes


def _flip_seed(layout: Layout, seen: list, batches) -> int | None:
    """The sign flips' seed of the data (None: no permutation test)."""
    from ...resample import flip_seed

    plan = layout.plan
    if not (plan.options.n_permutations and layout.pairs):
        return None
    return flip_seed(plan.options.seed or 0, first_rows_key(seen, batches))


def units_of(resampling: Resampling, cluster: str | None = None) -> Resampling | None:
    """The :attr:`Layout.units` of ``resampling``: blocks (the sign-flip test alone sums the non-overlapping
    blocks as they come; the circular block bootstrap and ``auto`` keep the rows' per-row forms:
    :attr:`Layout.keeps_rows`), clusters of the column ``cluster`` (by default the name given), or None."""
    if resampling.block_size is not None:
        return resampling
    return None if resampling.cluster is None else Resampling(cluster=cluster or resampling.cluster)


def stream_units(models: Sequence[ModelSource], resampling: Resampling) -> Resampling | None:
    """:func:`units_of` ``resampling``, its clusters those of the first model's column (matched by
    :func:`~uqeval.io.columns.match_column`, read as its "by" role)."""
    if resampling.cluster is None:
        return units_of(resampling)
    from ...errors import SchemaError
    from ...io.columns import match_column

    m = models[0]
    names = list(m.src.info.columns)
    cluster = resampling.cluster
    name = match_column(names, cluster)
    if name is None:
        raise SchemaError(
            f"{m.spec}: column '{cluster}' not found; available columns: {', '.join(names[:20])}"
        )
    m.plan.roles["by"] = name  # build_batch hands its values, aligned with the kept rows, to Batch.groups
    return units_of(resampling, name)


def finish(
    models: Sequence[ModelSource],
    part: ComparePartial,
    finishes: dict[tuple[str, int], Callable],
    engine: str,
    extra_info: dict[str, Any],
) -> dict[str, Any]:
    """The comparison JSON (schema ``uqeval.compare/1``) of a merged :class:`ComparePartial`."""
    from .core import assemble, estimate_metrics

    lay, plan = part.layout, part.layout.plan
    n = part.n
    n_zero = part.n_rows[0] - part.n_dropped[0] - n  # rows of weight 0 (0 without weights)
    if n == 0:
        raise InputError(f"{models[0].spec}: every row has NaN/inf in a used column; nothing left to compare")
    merged = _Merged(part, finishes)
    estimates, targets, columns, notes = estimate_metrics(plan, merged.value, merged.at_full)
    notes = list(dict.fromkeys(n for m in models for n in m.src.notes())) + list(notes)
    replicates, flipped, info = _resampled(part, columns, finishes)
    if info is not None:
        plan = replace(plan, units_info=info)
    available: dict[str, list[int]] = {}
    for name, a, b in lay.pairs:
        available[name] = sorted({*available.get(name, []), a, b})
    tests = _MergedTests(part, plan, merged.total_w, flipped)
    info_models = [
        Model(
            name,
            # a stand-in: only its kind is read
            cast("Prediction", _Kind(kd[0] if (kd := part.kinds[k]) else None)),
            {
                "path": m.spec,
                **m.src.record(),
                "n_rows": part.n_rows[k],
                "n_dropped": part.n_dropped[k],
                "columns": part.columns[k],
            },
        )
        for k, (name, m) in enumerate(zip(plan.names, models))
    ]
    approx = _approximate(part, plan)
    notes += _engine_notes(lay, engine, approx)
    extra, last = {}, []
    if lay.weights is not None:
        from ...weights import weights_block
        from .core import weight_notes

        extra["weights"] = weights_block(lay.weights, merged.total_w, n_zero, lay.not_weighted)
        last = weight_notes(
            n_zero, lay.units is not None and lay.units.block_size is not None, lay.not_weighted
        )
    out = assemble(
        plan, info_models, n, estimates, targets, replicates, notes, available, tests.run, extra, last
    )
    if lay.weights is not None:
        out["n_rows"] = n + n_zero  # as in memory: the rows read, those of weight 0 included
    out["input"] = {
        "engine": engine,
        **extra_info,
        "n_files": [len(m.src.files) for m in models],
        "not_streamed": dict(lay.not_streamed),
        "approximate": approx,
    }
    return out


class _Merged:
    """The estimates of a merged :class:`ComparePartial`: what :func:`~.core.estimate_metrics` asks of each
    metric and model (:meth:`value`, :meth:`at_full`), from the merged states and the per-row forms' sums."""

    def __init__(self, part: ComparePartial, finishes: dict[tuple[str, int], Callable]) -> None:
        from ...catalogue import states

        self.part, self.finishes = part, finishes
        lay, plan = part.layout, part.layout.plan
        self.lay, self.plan = lay, plan
        # the total weight of the kept rows: the denominator of every mean (the number of rows without weights)
        self.total_w = float(part.n) if lay.weights is None else part.w
        self.results = [states.finalize(st, plan.settings)[0] if st["n"] else {} for st in part.states]
        self.offsets: dict[tuple[str, int], tuple[int, int, int]] = {}
        at = 0
        for name, k, width, n_codes in lay.columns:
            self.offsets[(name, k)] = (at, width, n_codes)
            at += width + n_codes

    def at_unit(self, k: int, ref: MetricRef) -> float:
        """The per-row form of metric ``ref`` for model ``k`` at unit weights (each row once, or its weight)."""
        o, width, n_codes = self.offsets[(ref.name, k)]
        full = self.finishes[(ref.name, k)](
            self.part.unit[None, o : o + width + n_codes], np.array([self.total_w])
        )
        return float(np.asarray(full, dtype=np.float64)[0])

    def value(self, k: int, ref: MetricRef):
        from .core import as_number, value_at

        if ref.source == "per_row":
            if (ref.name, k) not in self.offsets:
                return None, None
            return float(self.part.unit[self.offsets[(ref.name, k)][0]] / self.total_w), None
        if (ref.name, k) in self.lay.skip:
            return None, None
        if (ref.name, k) in self.lay.cells:  # the family's finish of its weighted cell sums
            from ...catalogue import get_family

            family = get_family(self.lay.cells[(ref.name, k)])
            cells = self.part.cells.get((family.name, k))
            value = (
                None
                if cells is None
                else cast("Any", family.from_sums)(cells, self.plan.settings).get(ref.keys[-1])
            )
            return as_number(value), self.lay.target_results.get((ref.name, k))
        if (ref.name, k) in self.lay.specials:  # the family's finish of its weighted mergeable state
            from ...catalogue.weighted import weighted_special_of

            group, kind = self.lay.specials[(ref.name, k)]
            st = self.part.specials.get((group, kind, k))
            value = None if st is None else weighted_special_of(group, kind).finalize(st, self.plan.settings)
            return as_number(None if value is None else value.get(ref.keys[-1])), self.lay.target_results.get(
                (ref.name, k)
            )
        if self.lay.weights is not None:  # the per-row form at the weights (as in memory: one definition)
            return as_number(self.at_unit(k, ref)), self.lay.target_results.get((ref.name, k))
        res = self.results[k].get(ref.group)  # type: ignore[arg-type]  # a ref without a group finds None
        return as_number(value_at(res, ref.keys)), res

    def at_full(self, k: int, ref: MetricRef):
        if ref.source == "summary" and not self.plan.options.n_boot:
            return None, None, NO_RESAMPLER
        if (ref.name, k) in self.lay.specials:
            return None, None, NO_STREAMED_BOOTSTRAP
        if (ref.name, k) in self.lay.cells:
            return None, None, NO_RESAMPLER
        if (ref.name, k) not in self.offsets:
            return None, None, NO_STREAMED_BOOTSTRAP
        if ref.source == "per_row":
            return (ref.name, k), None, None
        return (ref.name, k), self.at_unit(k, ref), None


def _resampled(
    part: ComparePartial, columns: list, finishes: dict[tuple[str, int], Callable]
) -> tuple[dict[tuple[str, str], np.ndarray], Any, dict[str, Any] | None]:
    """``(bootstrap replicates, the units' sign-flip p-values or None, the resampling's description or None)``
    of a merged partial: from the kept rows (:class:`KeptRows`), the units' sums (:class:`UnitSums`), or the
    rows' accumulator."""
    if part.kept is not None:
        return part.kept.resample(part.layout, columns, finishes)
    acc, total, flipped, info = part.acc, None if part.acc is None else part.acc.total, None, None
    if part.by_unit is not None:
        acc, total, flipped, info = _unit_resampling(part)
    if not (part.layout.plan.options.n_boot and columns):
        return {}, flipped, info
    at = _offsets(part.layout)
    replicates: dict[tuple[str, str], np.ndarray] = {}
    for metric, model, key in columns:
        c0, width, c, _ = at[key]
        parts = [acc.sums[c0 : c0 + width].T] if width else []
        if c is not None:
            parts.append(acc.counts[c].T)
        replicates[(metric, model)] = np.asarray(
            finishes[key](np.concatenate(parts, axis=1), total), dtype=np.float64
        )
    return replicates, flipped, info


class _MergedTests:
    """The paired tests of a merged :class:`ComparePartial` (:meth:`run`): the merged moments' mean
    differences and Diebold-Mariano statistics, and the sign flips' p-values (``flipped``: those of the
    units' sums, else the accumulated flips)."""

    def __init__(self, part: ComparePartial, plan: Plan, total_w: float, flipped: Any) -> None:
        self.part, self.plan, self.total_w, self.flipped = part, plan, total_w, flipped
        self.index = {(name, a, b): j for j, (name, a, b) in enumerate(part.layout.pairs)}

    def run(self, todo: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
        from ...resample import permutation_p_values

        part, plan, n = self.part, self.plan, self.part.n
        mom = part.moments
        p_values = self.flipped
        if p_values is None and plan.options.n_permutations and part.layout.pairs:
            p_values = permutation_p_values(part.acc.flipped, mom.total, mom.total_abs)
        out = []
        for name, a, b in todo:
            sign = 1.0
            j = self.index.get((name, a, b))
            if j is None:
                j, sign = self.index[(name, b, a)], -1.0
            entry = test_entry(name, plan.names[a], plan.names[b])
            entry["mean_diff"] = sign * float(mom.total[j]) / self.total_w + 0.0
            if n >= 2 and plan.options.dm_lag < n:
                dm = mom.dm(j)
                entry["dm_statistic"], entry["dm_p"] = sign * dm["statistic"] + 0.0, dm["p_value"]
            if p_values is not None:
                entry["permutation_p"] = float(p_values[j])
            out.append(entry)
        return out


def _approximate(part: ComparePartial, plan: Plan) -> dict[str, str]:
    """``{path: bound}`` of the compared summary metrics that stream approximately."""
    from ...catalogue import states

    approx = {}
    for sig in part.kinds:
        if sig is None:
            continue
        for path, bound in states.approximate(sig[0]).items():
            if any(r.source == "summary" and f"{r.group}.{r.keys[-1]}" == path for r in plan.refs):
                approx[path] = bound
    return approx


def _engine_notes(lay, engine: str, approx: dict[str, str]) -> list[str]:
    """The notes of a streamed comparison: the metrics left out and the approximate ones."""
    notes = []
    if lay.not_streamed:
        notes.append(
            f"{option('engine', engine)}: {len(lay.not_streamed)} metric(s) not compared because they do not "
            "merge over chunks: "
            + "; ".join(f"{k} ({why})" for k, why in lay.not_streamed.items())
            + f"; use {option('engine', 'memory')} for them"
        )
    notes += [f"{option('engine', engine)}: {path} is approximate: {bound}" for path, bound in approx.items()]
    return notes


def _unit_resampling(part: ComparePartial):
    """``(accumulator, totals, p-values, resampling info)`` of the units' sums: the Poisson bootstrap of the
    units (clusters) and the sign flip of their sums of differences, by the in-memory functions."""
    from scipy.sparse import csr_matrix

    from ...resample import Accumulator
    from .core import sign_flip_tests

    lay, plan, units = part.layout, part.layout.plan, part.by_unit
    count = len(units.index)
    info = cast("Resampling", lay.units).describe(count)
    acc, total = None, None
    if plan.options.n_boot:  # clusters, or blocks of one row (longer blocks keep the rows: KeptRows)
        acc = Accumulator(
            plan.options.seed or 0,
            plan.options.n_boot,
            n_terms=units.width,
            n_categories=tuple(units.n_codes),
        )
        if count:
            acc.update(0, units.sums, [csr_matrix(c) for c in units.codes])
        total = acc.sums[-1]
    p_values = None
    if plan.options.n_permutations and lay.pairs:
        seed = plan.options.seed or 0 if lay.flip_seed is None else lay.flip_seed
        p_values = sign_flip_tests(units.diffs, plan.options.n_permutations, seed)
    return acc, total, p_values, info


class _Kind:
    """A stand-in prediction that only names its representation (the JSON's model list)."""

    def __init__(self, kind: str | None) -> None:
        self.kind = kind


def plan_stream(
    specs: Sequence[str],
    units: Resampling | None,
    head: Iterator[Rowset],
    names: Sequence[str],
    settings: Settings,
    options: CompareOptions,
) -> tuple[Layout, dict[tuple[str, int], Callable]]:
    """The :class:`Layout` of a comparison of ``specs`` and the ``finish`` of each bootstrap column
    (:func:`make_layout`), planned on the first aligned batches of ``head`` (read on this process; those read
    are folded after, :meth:`~uqeval.engine.aligned.Aligned.head`): what is compared and how, as in memory
    (``options``), resampling rows, clusters or blocks (``units``: :func:`stream_units`)."""
    preds, seen = first_batch(head)
    layout, finishes = plan_on(specs, preds, names, settings, options, seen)
    layout.units = units
    if units is None or units.block_size != "auto":
        layout.auto_ref = None
    elif layout.auto_ref is None:
        from .resampling import auto_block_size

        auto_block_size([])  # raises: no compared metric has a per-row score
    layout.flip_seed = _flip_seed(layout, seen, head)
    return layout, finishes
