"""``score`` on the stream and Dask engines: a :class:`Partial` (counts and the catalogue's metric state)
per record batch or partition, merged, then finished into the same JSON summary as in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...config import Settings
from ...engine.local import DEFAULT_CHUNK_ROWS, iter_batches_of, row_signature
from ...errors import InputError, option

if TYPE_CHECKING:
    from ...engine.options import EngineOptions


class Partial:
    """Counts and the metric state of some rows (one chunk, one partition, or all merged)."""

    def __init__(self) -> None:
        from ...catalogue import states

        self.state = states.init()
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

    def add(self, batch, n_rows: int, settings: Settings, where: str) -> None:

        self.n_rows += n_rows
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
        self.state = self.merge_states(self.state, self.batch_state(batch, settings))

    def merge_states(self, a, b):
        """Two states of this kind of partial combined (:func:`uqeval.catalogue.states.merge`; weighted states:
        :func:`uqeval.catalogue.weighted.merge_weighted`)."""
        from ...catalogue import states

        return states.merge(a, b)

    def batch_state(self, batch, settings: Settings):
        """The metric state of one batch's rows (:class:`uqeval.commands.score.groups.GroupedPartial` also keeps
        one per ``--by`` value)."""
        from ...catalogue import states

        return states.batch_state(batch.prediction, settings)

    def add_second(self, second, group_second: dict[str, Any], kind: str) -> None:
        """Fold a second-pass state of some rows (exact MdAE) into the whole data's (``group_second``: the
        per-group ones of :class:`~uqeval.commands.score.groups.GroupedPartial`; none here)."""
        from ...catalogue import states

        self.second = states.merge_second(self.second, second, kind)

    def merge(self, other: Partial) -> Partial:

        if self.signature is not None and other.signature is not None and self.signature != other.signature:
            raise InputError(
                f"{other.first_file}: per-row shapes {dict(other.signature)} differ from "
                f"{self.first_file}'s {dict(self.signature)}"
            )
        out = type(self)()
        out.state = self.merge_states(self.state, other.state)
        for k in ("n_rows", "n_dropped", "n_members_dropped", "n_fixed"):
            setattr(out, k, getattr(self, k) + getattr(other, k))
        first = self if self.signature is not None else other
        out.columns, out.signature, out.first_file = first.columns, first.signature, first.first_file
        out.undefined = first.undefined
        return out


def new_partial(settings: Settings) -> Partial:
    """An empty :class:`Partial`: a weighted one (:class:`WeightedPartial`) where the
    settings name a weights column."""
    if settings.columns.get("weights"):
        return WeightedPartial()
    return Partial()


def stream_partial(
    spec: str | Path,
    settings: Settings,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Callable[[int], None] | None = None,
) -> tuple[Any, Partial]:
    """Read ``spec`` in record batches of at most ``chunk_rows`` rows and fold them into one :class:`Partial`;
    when a metric needs one (:func:`uqeval.catalogue.states.selection`: exact MdAE), read the rows a second time."""
    from ...catalogue import states

    src, batches = iter_batches_of(spec, settings, chunk_rows, weights_ok=True)
    part = new_partial(settings)
    for f, batch, k, _, _ in batches:
        part.add(batch, k, settings, f)
        if progress is not None:
            progress(part.n_rows)
    part.selection = states.selection(part.state) if part.state["n"] else None
    if part.selection is not None:
        _, batches = iter_batches_of(spec, settings, chunk_rows, weights_ok=True)
        for _, batch, _, _, _ in batches:
            if batch.prediction is not None:
                part.second = states.merge_second(
                    part.second,
                    states.second_state(part.selection, batch.prediction, settings),
                    part.state["kind"],
                )
    return src, part


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
    if weighted:
        from ...catalogue.weighted import finalize_weighted

        metrics, orientation = finalize_weighted(part.state, settings)
    else:
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
    left_out = dict(part.state["not_streamed"]) if weighted else states.not_streamed_in(part.state, settings)
    for path in [] if weighted else states.streamed(kind, settings):  # a two-pass metric whose selection
        # was too large (MdAE)
        group, name = path.split(".", 1)
        if (
            group in metrics
            and name not in metrics[group]
            and not get_family(group).by_level
            and path in states.two_pass(kind, settings)
        ):
            left_out[path] = (
                f"the rows around the median exceed {states.MEDIAN_CAP:,} in one histogram code "
                "(many equal values); score in memory"
            )
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
    return build_summary(info, settings, metrics, orientation, groups, notes, weights)


def score_stream(
    spec: str | Path,
    settings: Settings | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The JSON summary of ``spec`` scored in record batches (bounded memory)."""
    settings = settings or Settings()
    if settings.columns.get("by"):  # score --by: one state per group (uqeval.commands.score.groups)
        from .groups import score_stream_by

        return score_stream_by(spec, settings, chunk_rows, progress)
    src, part = stream_partial(spec, settings, chunk_rows, progress)
    return summary_of(src, part, settings, "stream", {"chunk_rows": int(chunk_rows)})


def score_with_engine(
    spec: str | Path,
    settings: Settings,
    engine: EngineOptions,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The JSON summary of ``spec`` on a streaming engine (``engine``: ``stream`` or ``dask``, as
    :meth:`~uqeval.engine.options.EngineOptions.choose` chose it)."""
    engine = engine.sized([spec], settings)
    if engine.engine == "dask":
        return score_dask(spec, settings, engine, progress)
    return score_stream(spec, settings, cast("int", engine.chunk_rows), progress)


def partition_partial(
    task: tuple[str, list[int], int, int],
    plan,
    settings: Settings,
    chunk_rows: int,
    columns: list[str],
    grouped: bool = False,
):
    """The :class:`Partial` of one task's row groups (runs on a worker); ``grouped``:
    a :class:`~uqeval.commands.score.groups.GroupedPartial` that also keeps one state per ``--by`` label."""
    from ...engine.dask import task_batches
    from .groups import GroupedPartial

    part = GroupedPartial(task[0]) if grouped else new_partial(settings)
    for b, rows, _, _ in task_batches(task, plan, settings, chunk_rows, columns):
        part.add(b, rows, settings, task[0])
    return part


def partition_second(
    task,
    plan,
    settings: Settings,
    chunk_rows: int,
    columns: list[str],
    sel: dict | None,
    group_sel: dict | None = None,
):
    """``(second-pass state, {label: second-pass state})`` of one task's rows (:func:`uqeval.catalogue.states.selection`
    of the whole data and of each ``--by`` group; runs on a worker)."""
    from ...engine.dask import task_batches
    from .groups import second_states

    return second_states(
        (b for b, _, _, _ in task_batches(task, plan, settings, chunk_rows, columns)),
        settings,
        sel,
        group_sel or {},
    )


def _merge(a, b):
    return a.merge(b)


def score_dask(
    spec: str | Path,
    settings: Settings,
    engine: EngineOptions,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The JSON summary of ``spec`` (Parquet file, directory or glob) computed on a Dask cluster (``engine``:
    its scheduler or workers, and ``chunk_rows`` set: :meth:`~uqeval.engine.options.EngineOptions.sized`)."""
    from ...engine.dask import cluster_info, dask_client, parquet_tasks, tree_reduce, wait

    chunk_rows = cast("int", engine.chunk_rows)
    grouped = settings.columns.get("by") is not None
    src, plan, tasks, columns = parquet_tasks(spec, settings, allow_by=grouped)
    with dask_client(engine) as (client, distributed):
        futures = [
            client.submit(partition_partial, t, plan, settings, chunk_rows, columns, grouped, pure=False)
            for t in tasks
        ]
        wait(distributed, futures, [t[3] for t in tasks], progress)
        part = tree_reduce(client, futures, _merge)  # pairs in file order (merge is associative)
        from ...catalogue import states

        part.selection = states.selection(part.state) if part.state["n"] else None
        group_sel = part.group_selection = part.selections() if grouped else {}
        if (
            part.selection is not None or group_sel
        ):  # exact order statistics: a second map over the same tasks
            seconds = client.gather(
                [
                    client.submit(
                        partition_second,
                        t,
                        plan,
                        settings,
                        chunk_rows,
                        columns,
                        part.selection,
                        group_sel,
                        pure=False,
                    )
                    for t in tasks
                ]
            )
            for second, group_second in seconds:
                part.add_second(second, group_second, part.state["kind"])
    info = cluster_info(engine, len(tasks))
    if grouped:
        from .groups import groups_of

        return summary_of(
            src, part, settings, "dask", info, groups_of(part, settings) if part.state["n"] else None
        )
    return summary_of(src, part, settings, "dask", info)


class WeightedPartial(Partial):
    """A :class:`Partial` whose state is a weighted one (:func:`uqeval.catalogue.weighted.weighted_state`)."""

    def batch_state(self, batch, settings: Settings):
        if batch.weights is None:
            raise InputError("weighted streaming needs the weights column in every batch")
        from ...catalogue.weighted import weighted_state

        return weighted_state(batch.prediction, settings, batch.weights)

    def merge_states(self, a, b):
        from ...catalogue.weighted import merge_weighted

        return merge_weighted(a, b)
