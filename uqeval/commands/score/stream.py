"""``score``'s fold on every engine: a :class:`Partial` per record batch, partition, or (in memory) the one
piece holding the whole loaded input, merged, then finished into the JSON summary (:func:`score_with_engine`).

A state the memory engine fills (``needs_all_rows``) keeps its one piece whole and no sums: it finishes with
the exact in-memory computation (:func:`uqeval.commands.score.core.score_loaded`: every metric, the exact
order statistics, the ``--by`` groups and the skill scores). Merged with another state it turns into sums
(:meth:`Partial.summed`); a summed state (counts and the catalogue's metric state) finishes as
:func:`summary_of` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ...config import Settings
from ...engine.local import row_signature
from ...errors import InputError, option

if TYPE_CHECKING:
    from ...engine.fold import Piece, Rows
    from ...engine.options import EngineOptions
    from ...io.load import Loaded


class Partial:
    """Counts and the metric state of some rows (one chunk, one partition, or all merged); with
    ``needs_all_rows`` (the memory engine) the one piece of every row, ``kept`` whole and not summed."""

    def __init__(self, settings: Settings | None = None, needs_all_rows: bool = False) -> None:
        self.settings = settings or Settings()
        #: the catalogue's metric state of the rows summed (:mod:`uqeval.catalogue.states`; none while kept)
        self.state: dict[str, Any] = {} if needs_all_rows else _init()
        self.n_rows = self.n_dropped = self.n_members_dropped = self.n_fixed = 0
        self.columns: dict[str, Any] | None = None
        self.signature: tuple | None = None
        self.first_file: str | None = None
        self.selection: dict | None = (
            None  # what the second pass collects (uqeval.catalogue.states.selection)
        )
        self.second: dict | None = None  # the merged second-pass state
        #: families not defined for these rows' shape (uqeval.catalogue.not_defined; every batch has the same)
        self.undefined: list[tuple[str, str]] = []
        self.needs_all_rows = needs_all_rows
        #: needs_all_rows: the memory engine's one piece (its batch the Loaded input), kept for the exact finish
        self.kept: Piece | None = None

    def add(self, piece: Piece) -> None:
        """Fold one record batch in (:class:`~uqeval.engine.fold.Piece`); with ``needs_all_rows`` the first piece
        is kept whole, and a second turns the state into sums."""
        if self.needs_all_rows:
            if self.kept is None:
                self.kept = piece
                return
            # a second piece: no longer the one-batch case, both pieces summed
            self.needs_all_rows, kept, self.kept, self.state = False, self.kept, None, _init()
            self.add(kept)
        batch, where, settings = _batch(piece.batch), piece.file, self.settings
        self.n_rows += piece.rows
        self.n_dropped += batch.n_dropped
        self.n_members_dropped += batch.n_members_dropped
        pred = batch.prediction
        if pred is None:
            return
        sig = row_signature(pred)
        if self.signature is None:
            from ...catalogue import not_defined

            self.signature, self.columns, self.first_file = sig, batch.columns, where
            self.undefined = not_defined(pred, settings)
        elif sig != self.signature:
            raise InputError(
                f"{where}: rows from global row {int(pred.row_numbers()[0])} on have per-row shapes {dict(sig)}, "
                f"but {self.first_file} has {dict(self.signature)}; every row needs the same number "
                "of members, classes and levels"
            )
        self.n_fixed += int(getattr(pred, "n_fixed", 0) or 0)
        from ...catalogue import states

        self.state = states.merge(self.state, self.batch_state(batch, settings))

    def batch_state(self, batch, settings: Settings):
        """The metric state of one batch's rows, weighted where the settings name a weights column
        (:class:`uqeval.commands.score.groups.GroupedPartial` also keeps one per ``--by`` value)."""
        from ...catalogue import states

        return states.batch_state(batch.prediction, settings, weights=batch_weights(batch, settings))

    def selections(self) -> dict[str, Any]:
        """``{label: selection}`` of the ``--by`` groups whose metrics need a second pass (none here)."""
        return {}

    def add_second(
        self, second, group_second: dict[str, Any], kind: str, group_selection: dict | None = None
    ) -> None:
        """Fold a second-pass state of some rows (exact MdAE) into the whole data's (``group_second`` and
        ``group_selection``: the per-group ones of :class:`~uqeval.commands.score.groups.GroupedPartial`; none
        here)."""
        from ...catalogue import states

        self.second = states.merge_second(self.second, second, kind)

    def empty(self) -> Partial:
        """A new state of this kind, for no rows (summed)."""
        return type(self)(self.settings)

    def summed(self) -> Partial:
        """This state as sums: itself, or for a state that kept its piece a new one with the piece folded in."""
        if self.kept is None:
            return self
        out = self.empty()
        out.add(self.kept)
        return out

    def merge(self, other: Partial) -> Partial:
        """Both parts' rows, as sums (associative; neither part changed)."""
        if self.kept is not None or other.kept is not None:
            return self.summed().merge(other.summed())
        return self.merge_sums(other)

    def merge_sums(self, other: Partial) -> Partial:
        """Both summed parts' rows (:meth:`merge`)."""
        if self.signature is not None and other.signature is not None and self.signature != other.signature:
            raise InputError(
                f"{other.first_file}: per-row shapes {dict(other.signature)} differ from "
                f"{self.first_file}'s {dict(self.signature)}"
            )
        from ...catalogue import states

        out = self.empty()
        out.state = states.merge(self.state, other.state)
        for k in ("n_rows", "n_dropped", "n_members_dropped", "n_fixed"):
            setattr(out, k, getattr(self, k) + getattr(other, k))
        first = self if self.signature is not None else other
        out.columns, out.signature, out.first_file = first.columns, first.signature, first.first_file
        out.undefined = first.undefined
        return out


def _init() -> dict[str, Any]:
    """The metric state of no rows (:func:`uqeval.catalogue.states.init`)."""
    from ...catalogue import states

    return states.init()


def _batch(batch):
    """A piece's record batch; the memory engine's piece holds a :class:`~uqeval.io.load.Loaded` input,
    summed as the one batch of its rows."""
    from ...io.load import Loaded, batch_of

    if not isinstance(batch, Loaded):
        return batch
    return batch_of(batch.prediction, batch.info, batch.groups, batch.weights)


def batch_weights(batch, settings: Settings, idx=None):
    """The row weights of a batch (``idx``: of these rows) where the settings name a weights column, else None."""
    if not settings.columns.get("weights"):
        return None
    if batch.weights is None:
        raise InputError("weighted streaming needs the weights column in every batch")
    return batch.weights if idx is None else batch.weights[idx]


def new_partial(settings: Settings, needs_all_rows: bool = False) -> Partial:
    """An empty :class:`Partial` (weighted where the settings name a weights column), one per ``--by`` group
    too (:class:`~.groups.GroupedPartial`) where they name a ``by`` column."""
    if settings.columns.get("by"):
        from .groups import GroupedPartial

        return GroupedPartial(settings, needs_all_rows)
    return Partial(settings, needs_all_rows)


class SecondPass:
    """The second pass of the rows (exact MdAE): the second-pass states of the whole data and of each
    ``--by`` group (:func:`~.groups.second_states`) for the selections the first pass made."""

    def __init__(self, settings: Settings, selection: dict | None, group_selection: dict, kind: str) -> None:
        self.settings, self.selection, self.group_selection, self.kind = (
            settings,
            selection,
            group_selection,
            kind,
        )
        self.second: Any = None
        self.group_second: dict[str, Any] = {}

    def add(self, piece: Piece) -> None:
        from .groups import second_states

        second, group_second = second_states(
            [piece.batch], self.settings, self.selection, self.group_selection
        )
        self.fold_in(second, group_second)

    def fold_in(self, second, group_second: dict[str, Any]) -> None:
        from ...catalogue import states

        self.second = states.merge_second(self.second, second, self.kind)
        for label, st in group_second.items():
            self.group_second[label] = states.merge_second(self.group_second.get(label), st, self.kind)

    def merge(self, other: SecondPass) -> SecondPass:
        out = SecondPass(self.settings, self.selection, self.group_selection, self.kind)
        out.fold_in(self.second, self.group_second)
        out.fold_in(other.second, other.group_second)
        return out


class Scored(NamedTuple):
    """What :func:`score_with_engine` returns: the JSON ``summary``; on the memory engine the ``loaded`` input
    (its rows in memory, for the verdict and the figures; None when streamed) and, when asked for, its
    ``per_row`` uncertainty table (:func:`~uqeval.commands.score.core.per_row_table`)."""

    summary: dict[str, Any]
    loaded: Loaded | None = None
    per_row: Any = None

    def judged(self) -> dict[str, Any]:
        """The summary with its verdict (issue 39), judged on the rows still in memory if any."""
        from ..verdict import with_verdict

        if self.loaded is None:
            return with_verdict(self.summary)
        return with_verdict(self.summary, self.loaded.prediction, self.loaded.weights)


def score_state(
    source: str | Path | Loaded,
    settings: Settings,
    engine: EngineOptions,
    progress: Callable[[int], None] | None = None,
    extra: Sequence[str] = (),
) -> tuple[Rows, Partial]:
    """The rows of ``source`` on ``engine`` (as :meth:`~uqeval.engine.options.EngineOptions.choose` chose it; a
    :class:`~uqeval.io.load.Loaded` input is in memory already) and their merged :class:`Partial`; when a
    summed state's metric needs one (:func:`uqeval.catalogue.states.selection`: exact MdAE, of the whole data
    and of each ``--by`` group), the rows are folded a second time. ``extra``: further columns read in
    memory (``--x``)."""
    from contextlib import nullcontext
    from functools import partial

    from ...engine.fold import in_memory, over_rows
    from ...io.load import Loaded
    from .cells import CellPartial, many_cells

    grouped = bool(settings.columns.get("by"))
    memory = isinstance(source, Loaded) or engine.engine == "memory"
    with (
        nullcontext(in_memory(source))
        if isinstance(source, Loaded)
        else over_rows(
            source,
            settings,
            engine,
            progress,
            extra=tuple(extra) if memory else (),
            allow_by=grouped,
            weights_ok=True,
        )
    ) as rows:
        spec = source.info.get("path") if isinstance(source, Loaded) else source
        new = CellPartial if grouped and many_cells(spec, settings) else new_partial
        part = rows.fold(partial(new, settings, memory))
        if part.kept is not None:  # every row kept: the exact order statistics need no second pass
            return rows, part
        from ...catalogue import states

        part.selection = states.selection(part.state) if part.state["n"] else None
        group_selection = part.selections() if part.state["n"] else {}
        if part.selection is not None or group_selection:
            kind = part.state["kind"]
            second = rows.fold(
                partial(SecondPass, settings, part.selection, group_selection, kind), report=False
            )
            part.add_second(second.second, second.group_second, kind, group_selection)
    return rows, part


def score_with_engine(
    source: str | Path | Loaded,
    settings: Settings,
    engine: EngineOptions,
    progress: Callable[[int], None] | None = None,
    reference=None,
    extra: Sequence[str] = (),
    per_row: bool = False,
) -> Scored:
    """``score`` of ``source`` (a path, or a :class:`~uqeval.io.load.Loaded` input) on ``engine`` (``memory``,
    ``stream`` or ``dask``, as :meth:`~uqeval.engine.options.EngineOptions.choose` chose it): its fold
    (:func:`score_state`) finished into the JSON summary. ``reference``: a
    :class:`uqeval.commands.compare.skill.Reference` (memory only), for the ``skill`` group; ``extra``: further
    columns read with the input in memory (``--x``); ``per_row``: the per-row uncertainty table too (memory
    only)."""
    rows, part = score_state(source, settings, engine, progress, extra)
    if part.kept is not None:  # the one-batch case: every row in memory, the exact computation
        from .core import per_row_table, score_loaded

        loaded = part.kept.batch
        table = per_row_table(loaded.prediction) if per_row else None
        return Scored(score_loaded(loaded, settings, reference), loaded, table)
    assert reference is None and not per_row  # the front ends refuse them on a streaming engine
    groups = None
    if settings.columns.get("by") and part.state["n"]:
        from .cells import CellPartial, cell_groups, with_cell_note

        if isinstance(part, CellPartial):  # score --preserve-dims on many cells
            groups = cell_groups(part.cells, settings, settings.columns["by"])
            summary = summary_of(rows.src, part, settings, rows.engine, rows.info, groups)
            return Scored(with_cell_note(summary, groups), None)
        from .groups import GroupedPartial, groups_of

        groups = groups_of(cast("GroupedPartial", part), settings)
    return Scored(summary_of(rows.src, part, settings, rows.engine, rows.info, groups), None)


def summary_of(
    src,
    part: Partial,
    settings: Settings,
    engine: str,
    extra_info: dict | None = None,
    groups: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON summary (schema ``uqeval.score/1``) of a merged :class:`Partial`."""
    from ...catalogue import get_family, not_computed_notes, states
    from .summary import build_summary

    if part.n_rows == 0:
        raise InputError(f"{src.spec}: no data rows")
    weighted = bool(settings.columns.get("weights"))
    if weighted and part.state["n"] == 0 and part.state.get("n_zero"):
        raise InputError(
            f"{src.spec}: weights in column '{settings.columns['weights']}' are all 0 on the rows kept: no row "
            "counts; give some rows a positive weight"
        )
    if part.state["n"] == 0:
        raise InputError(f"{src.spec}: every row has NaN/inf in a used column; nothing left to evaluate")
    bounds: dict[str, float] = {}
    metrics, orientation = states.finalize(part.state, settings, part.selection, part.second, bounds)
    kind = part.state["kind"]
    info: dict[str, Any] = {
        "path": str(src.spec),
        "format": src.fmt,
        "n_rows": part.n_rows,
        "n_dropped": part.n_dropped,
        "representation": kind,
        "columns": part.columns,
        "engine": engine,
        "n_files": len(src.files),
        **src.record(),
        **(extra_info or {}),
    }
    if part.n_fixed:
        info["n_fixed_crossing"] = part.n_fixed
    if part.n_members_dropped:
        info["n_members_dropped"] = part.n_members_dropped
    notes = src.notes() + not_computed_notes(part.undefined)
    left_out = (
        _weighted_left_out(part.state["not_streamed"], metrics)
        if weighted
        else states.not_streamed_in(part.state, settings)
    )
    for path in [] if weighted else states.streamed(kind, settings):  # a two-pass metric whose selection
        # was too large (MdAE)
        group, name = path.split(".", 1)
        if (
            group in metrics
            and name not in metrics[group]
            and not get_family(group).by_level
            and path in states.two_pass(kind, settings)
        ):
            left_out[path] = median_too_wide()
    info["not_streamed"] = dict(left_out)
    approx = (
        {}
        if weighted
        else {k: v for k, v in states.approximate(kind, settings).items() if k.split(".")[0] in metrics}
    )
    info["approximate"] = approx  # every other metric is exact
    if bounds:
        info["bounds"] = {k: v for k, v in bounds.items() if k.split(".")[0] in metrics}
    if left_out:
        notes.append(
            f"{option('engine', engine)}: {len(left_out)} metric(s) not computed because they do not merge over "
            f"chunks: "
            + "; ".join(f"{k} ({why})" for k, why in left_out.items())
            + f"; use {option('engine', 'memory')} for them"
        )
    for path, bound in approx.items():
        notes.append(f"{option('engine', engine)}: {path} is approximate: {bound}")
    if part.n_fixed:
        notes.append(
            f"{part.n_fixed} row(s) had crossing quantiles and were sorted ({option('fix_crossing')})"
        )
    if groups is not None:  # score --by (uqeval.commands.score.groups)
        info["columns"] = {**(info["columns"] or {}), "by": groups["column"]}
    weights = None
    if weighted:
        from ...weights import weights_block

        st = part.state
        info["weights"] = settings.columns.get("weights")
        weights = weights_block(info["weights"], st["w"], st["n_zero"], st["not_weighted"])
        if st["not_weighted"]:
            notes.append(
                f"{len(st['not_weighted'])} metric(s) take no weights and were not computed (listed with the "
                "reason under weights.not_weighted)"
            )
    if groups is not None and any(k.startswith("conditional_coverage.") for k in left_out):
        # the diagnostics asked for the conditional coverage: its worst --by group is exact from the groups
        # (as in memory), though the stratified values are not streamed
        from .core import worst_groups

        levels = {
            level
            for body in groups["values"].values()
            for family in ("coverage", "prediction_sets")
            for level in body["metrics"].get(family, {})
        }
        metrics["conditional_coverage"] = {level: {} for level in sorted(levels)}
        worst_groups(metrics, orientation, groups)
        metrics["conditional_coverage"] = {k: v for k, v in metrics["conditional_coverage"].items() if v}
        if not metrics["conditional_coverage"]:
            del metrics["conditional_coverage"]
    return build_summary(info, settings, metrics, orientation, groups, notes, weights)


def median_too_wide() -> str:
    """Why a two-pass metric (MdAE) was not streamed after all."""
    from ...catalogue import states

    return (
        f"the rows around the median exceed {states.MEDIAN_CAP:,} in one histogram code (many equal values); "
        "score in memory"
    )


def _weighted_left_out(not_streamed: dict[str, str], metrics: dict[str, Any]) -> dict[str, str]:
    """The weighted state's not-streamed metrics, less the two-pass ones the second pass computed (one the
    second pass of the whole data could not compute: :func:`median_too_wide`)."""
    from ...catalogue.weighted import NOT_STREAMED_TWO_PASS

    out = {}
    for path, why in not_streamed.items():
        group, name = path.split(".", 1)
        if why == NOT_STREAMED_TWO_PASS:
            if name in metrics.get(group, {}):
                continue
            why = median_too_wide()
        out[path] = why
    return out
