"""Several inputs read side by side, in record batches of the same global rows: the engine of the
commands that compare models row by row (``compare``, ``ucc``).

:func:`over_aligned` opens the inputs for folds, as :func:`uqeval.engine.fold.over_rows` opens one: the
stream engine cuts every input's batches to common row ranges (:func:`aligned`) on this process; the Dask
engine cuts the rows into ranges at the first input's row groups and reads that range of every input on a
worker (:func:`range_batches`). Each fold's state gets :class:`Rowset` pieces: one validated batch per
input, the same kept rows in each (rows of weight 0, by the first input's weights, are dropped here, once,
before the rows are numbered). The memory engine is the one-batch case (:func:`in_memory`): one state
gets one piece holding every row of every input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np

from ..config import Settings
from ..errors import InputError, UsageError, option
from .local import _prepare, check_columns
from .options import EngineOptions


class Rowset(NamedTuple):
    """The same global rows of every input: their ``files``, one loader ``batches`` entry per input, the
    ``rows`` read, the global row number ``offset`` of the first and, per input, the ``extra`` columns asked
    for (name -> Arrow array of the rows read, as :class:`~uqeval.engine.fold.Piece` carries them)."""

    files: list[str]
    batches: list
    rows: int
    offset: int
    extra: list[dict[str, Any]] = []


def check_same_rows(files: Sequence[str], preds: Sequence) -> None:
    """Every model kept the same rows of an aligned batch (``--nan-policy omit`` drops rows per file)."""
    first = preds[0]
    for f, p in zip(files[1:], preds[1:]):
        ra = np.empty(0, dtype=np.int64) if first is None else first.row_numbers()
        rb = np.empty(0, dtype=np.int64) if p is None else p.row_numbers()
        if ra.size == rb.size and np.array_equal(ra, rb):
            continue
        m = min(ra.size, rb.size)
        i = int(np.flatnonzero(ra[:m] != rb[:m])[0]) if (ra[:m] != rb[:m]).any() else m
        big = np.iinfo(np.int64).max
        row = int(min(ra[i] if i < ra.size else big, rb[i] if i < rb.size else big))
        gone = files[0] if i >= ra.size or (i < rb.size and rb[i] < ra[i]) else f
        raise InputError(
            f"global row {row} was dropped from {gone} (NaN/inf with {option('nan_policy', 'omit')}) but not from "
            f"{f if gone == files[0] else files[0]}; the files must keep the same rows (fix the values "
            "or drop the row from every file)"
        )


def aligned(
    gens: Sequence[Iterator[tuple[str, dict, int]]], specs: Sequence[str], start: int = 0
) -> Iterator[tuple[int, list[str], list[dict], int]]:
    """``(global offset, files, columns per model, rows)``: the models' record batches cut to the same global
    row ranges (each at most as long as the shortest current batch). Unequal lengths raise naming the
    files and the global row where one ends."""
    current: list[list[Any] | None] = [None] * len(gens)  # [file, cols, rows, position]
    offset = start
    while True:
        for j, g in enumerate(gens):
            while (cj := current[j]) is None or cj[3] >= cj[2]:
                item = next(g, None)
                if item is None:
                    current[j] = None
                    break
                current[j] = [item[0], item[1], item[2], 0]
        ended = [j for j in range(len(gens)) if current[j] is None]
        if len(ended) == len(gens):
            return
        if ended:
            j = next(j for j in range(len(gens)) if current[j] is not None)
            rest = cast("list[Any]", current[j])
            total = offset + rest[2] - rest[3] + sum(item[2] for item in gens[j])  # (read on, to count)
            raise InputError(
                f"{specs[ended[0]]} ends at global row {offset} ({offset} rows) but {specs[j]} has {total} rows; "
                "the files must hold the same targets in the same order"
            )
        live = cast("list[list[Any]]", current)  # none ended
        k = min(c[2] - c[3] for c in live)
        cols = [{name: arr.slice(c[3], k) for name, arr in c[1].items()} for c in live]
        yield offset, [c[0] for c in live], cols, k
        for c in live:
            c[3] += k
        offset += k


@dataclass
class ModelSource:
    """One model's input: its source, column plan, the numeric columns of CSV blocks and the ``extra``
    columns read besides the plan's (name asked for -> the file's column: :func:`~.local.check_columns`)."""

    spec: str
    src: Any
    plan: Any
    numeric: frozenset
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def needed(self) -> list[str]:
        return list(dict.fromkeys([*self.plan.needed(), *self.extra.values()]))


def open_models(specs: Sequence[str], settings: Settings, extra: tuple[str, ...] = ()) -> list[ModelSource]:
    """The model sources; ``--weights`` is read from the first file (the weights belong to the rows: the
    other files need not hold the column, as in memory); ``extra``: columns every file must hold, carried
    with the rows (:attr:`Rowset.extra`)."""
    models = []
    for i, s in enumerate(specs):
        src, plan, numeric = _prepare(s, file_settings(settings, i), weights_ok=i == 0)
        models.append(ModelSource(str(s), src, plan, numeric, check_columns(src, extra)))
    return models


def file_settings(settings: Settings, index: int) -> Settings:
    """The settings of the ``index``-th file: ``--weights`` is a column of the first file only."""
    if index == 0 or not settings.columns.get("weights"):
        return settings
    return replace(settings, columns={k: v for k, v in settings.columns.items() if k != "weights"})


def read_whole(
    files: Sequence[str | Path], names: Sequence[str], settings: Settings
) -> Iterator[tuple[str, Any]]:
    """``(name, Loaded)`` of each of ``files`` read whole, in turn (the memory engine's inputs of ``compare``
    and ``ucc``; a file's errors come before the next is read), a progress stage each; ``--weights`` is a
    column of the first file only (:func:`file_settings`)."""
    from ..io.load import load_predictions
    from .progress import stage

    for i, (name, path) in enumerate(zip(names, files)):
        stage(f"reading {name}")
        yield name, load_predictions(path, file_settings(settings, i), weights_ok=i == 0)


def build(
    models: Sequence[ModelSource],
    files: Sequence[str],
    cols: Sequence[dict],
    k: int,
    offset: int,
    settings: Settings,
) -> list:
    from ..io.load import build_batch

    out = [
        build_batch(f, m.plan, c, k, settings, offset=offset, allow_empty=True)
        for m, f, c in zip(models, files, cols)
    ]
    return drop_weightless(out)


def drop_weightless(out: list) -> list:
    """Aligned batches (one per input) without the rows of weight 0 by the first input's weights: they are
    dropped before anything else, as in memory: the kept rows are numbered after dropping them (the
    resampling key), and every input drops the same rows."""
    w = out[0].weights
    if w is None or out[0].prediction is None or (w > 0).all():
        return out
    zero = out[0].prediction.row_numbers()[w == 0]
    for j, b in enumerate(out):
        if b.prediction is None:
            continue
        keep = ~np.isin(b.prediction.row_numbers(), zero)
        out[j] = replace(
            b,
            prediction=b.prediction.subset(keep) if keep.any() else None,
            groups=None if b.groups is None else b.groups[keep],
            weights=None if b.weights is None else b.weights[keep],
        )
    return out


def stream_batches(models: Sequence[ModelSource], settings: Settings, chunk_rows: int) -> Iterator[Rowset]:
    """The aligned built batches of every model, in row order (the stream engine)."""
    from ..io.source import iter_batches

    gens = [iter_batches(m.src, m.needed, chunk_rows, m.numeric) for m in models]
    for offset, files, cols, k in aligned(gens, [m.spec for m in models]):
        yield Rowset(files, build(models, files, cols, k, offset, settings), k, offset, extras(models, cols))


def extras(models: Sequence[ModelSource], cols: Sequence[dict]) -> list[dict[str, Any]]:
    """Each input's ``extra`` columns of an aligned batch."""
    return [{e: c[name] for e, name in m.extra.items()} for m, c in zip(models, cols)]


def row_groups(files: Sequence[str]) -> list[tuple[str, int, int, int]]:
    """``(file, row group, global first row, rows)`` of a Parquet source, in file order (from the footers)."""
    from .dask import footer

    out, at = [], 0
    for f in files:
        meta = footer(f)
        for g in range(meta.num_row_groups):
            k = meta.row_group(g).num_rows
            out.append((f, g, at, k))
            at += k
    return out


def row_range_tasks(
    models: Sequence[ModelSource],
) -> tuple[list[list], list[tuple[str, list[int], int, int]]]:
    """``(row groups of each model, tasks)`` for a Dask run over several aligned Parquet inputs: the tasks
    are the first model's partitions ``(file, row groups, global first row, rows)``, each the range of
    global rows its row groups hold. Inputs that are not Parquet or hold different numbers of rows are
    one-line errors."""
    from .dask import partitions

    for m in models:
        if m.src.fmt != "parquet":
            raise UsageError(
                f"{option('engine', 'dask')} reads Parquet (files, directories, globs), not {m.spec}; "
                f"stream CSV with {option('engine', 'stream')}"
            )
    groups = [row_groups(m.src.files) for m in models]
    totals = [sum(g[3] for g in gs) for gs in groups]
    for m, t in zip(models[1:], totals[1:]):
        if t != totals[0]:
            short, long_ = (m.spec, models[0].spec) if t < totals[0] else (models[0].spec, m.spec)
            raise InputError(
                f"{short} ends at global row {min(t, totals[0])} ({min(t, totals[0])} rows) but {long_} "
                f"has {max(t, totals[0])} rows; the files must hold the same targets in the same order"
            )
    return groups, partitions(models[0].src.files)


def range_batches(
    groups: Sequence[tuple[str, int, int, int]], start: int, stop: int, columns: list[str], chunk_rows: int
) -> Iterator[tuple[str, dict, int]]:
    """``(file, columns, rows)`` record batches of global rows ``[start, stop)`` of a Parquet source."""
    import pyarrow as pa

    from ..io.source import parquet_file

    wanted = [g for g in groups if g[2] < stop and g[2] + g[3] > start]
    by_file: dict[str, list] = {}
    for g in wanted:
        by_file.setdefault(g[0], []).append(g)
    for f, gs in by_file.items():
        pos = gs[0][2]
        try:
            with parquet_file(f) as pf:
                for batch in pf.iter_batches(
                    batch_size=chunk_rows, row_groups=[g[1] for g in gs], columns=columns, use_threads=False
                ):
                    lo, hi = max(start, pos), min(stop, pos + batch.num_rows)
                    if hi > lo:
                        part = batch.slice(lo - pos, hi - lo)
                        yield f, {c: part.column(c) for c in columns}, hi - lo
                    pos += batch.num_rows
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{f}: cannot read Parquet data ({exc})") from None


def _range_task(
    task: tuple[int, int], first_kept: int | None, models, groups, settings: Settings, chunk_rows: int, new
):
    """The state of global rows ``[offset, offset + rows)`` of every input (runs on a Dask worker);
    ``first_kept``: the index of its first kept row among all kept rows, for a keyed fold."""
    offset, rows = task
    gens = [range_batches(g, offset, offset + rows, m.needed, chunk_rows) for m, g in zip(models, groups)]
    state = new() if first_kept is None else new(first_kept)
    for at, files, cols, k in aligned(gens, [m.spec for m in models], offset):
        state.add(Rowset(files, build(models, files, cols, k, at, settings), k, at, extras(models, cols)))
    return state


def _kept(state) -> int:
    return int(state.kept_rows)


class _Replay:
    """An iterator that keeps what it hands out, so that the stream fold can start from the first batch
    after the command planned on the rows it read ahead."""

    def __init__(self, it: Iterator[Rowset]) -> None:
        self.it, self.seen = it, cast("list[Rowset]", [])

    def __iter__(self) -> _Replay:
        return self

    def __next__(self) -> Rowset:
        item = next(self.it)
        self.seen.append(item)
        return item


@dataclass
class Aligned:
    """Several inputs open side by side on an engine (:func:`over_aligned`, :func:`in_memory`).

    ``models``: one :class:`ModelSource` per input (none in memory); ``engine``: ``"memory"``, ``"stream"`` or
    ``"dask"``; ``info``: the
    ``input`` entries of the run (rows per batch; on Dask the partitions and the cluster); ``parts``: as
    :attr:`uqeval.engine.fold.Rows.parts` (on Dask the tasks, the first input's partitions, whose global rows
    every input's state of that task reads; None on the stream and memory engines)."""

    models: list[ModelSource]
    engine: str
    info: dict[str, Any]
    _head: _Replay
    _fold: Callable[[Callable[..., Any], bool], Any] = field(repr=False)
    parts: list[tuple[str, list[int], int, int]] | None = None

    def head(self) -> Iterator[Rowset]:
        """The first rows, read on this process for the command to plan on (the stream fold starts again
        from the first of them; a Dask fold reads its row ranges on the workers)."""
        return self._head

    def fold(self, new: Callable[..., Any], keyed: bool = False) -> Any:
        """The merged state of every row, in row order: ``new()`` per run or task, every :class:`Rowset`
        added, the states merged. ``keyed``: the state numbers the kept rows (its resampling key), so it is
        made as ``new(first kept row)``, a task's first row's index among all kept rows: tasks whose guess (no
        row dropped before them) was wrong run again with the right index (``state.kept_rows`` tells how
        many rows a task kept)."""
        return self._fold(new, keyed)


def in_memory(piece: Any) -> Aligned:
    """The inputs in memory on the memory engine, the one-batch case: a fold gets one ``piece`` holding every
    row of every input (whatever the command made of them, such as its models joined on an id column) into
    one state, never merged (a state that keeps all its rows can finish exactly)."""

    def fold_memory(new, keyed):
        state = new(0) if keyed else new()
        state.add(piece)
        return state

    return Aligned([], "memory", {}, _Replay(iter([piece])), fold_memory)


@contextmanager
def over_aligned(
    specs: Sequence[str | Path],
    settings: Settings,
    engine: EngineOptions,
    progress: Callable[[int], None] | None = None,
    models: list[ModelSource] | None = None,
    extra: tuple[str, ...] = (),
) -> Iterator[Aligned]:
    """The inputs ``specs`` as :class:`Aligned` on ``engine`` (``stream`` or ``dask``; ``chunk_rows``
    defaults to the smallest :func:`~uqeval.engine.local.auto_chunk_rows`), open while the context lasts (on
    Dask: the client). ``progress(rows)``: the rows of the first input folded so far. ``models``: the inputs
    as opened already (:func:`open_models`: ``--weights`` is a column of the first input only); ``extra``:
    columns of every input each :class:`Rowset` carries (with ``models``, give them to :func:`open_models`)."""
    paths = [str(s) for s in specs]
    engine = engine.sized(paths, [file_settings(settings, i) for i in range(len(paths))])
    chunk_rows = cast("int", engine.chunk_rows)
    models = models if models is not None else open_models(paths, settings, extra)
    if engine.engine != "dask":
        head = _Replay(stream_batches(models, settings, chunk_rows))

        def fold_stream(new, keyed):
            state, done = new(0) if keyed else new(), 0
            for piece in [*head.seen, *head.it]:
                state.add(piece)
                done += piece.rows
                if progress is not None:
                    progress(done)
            return state

        yield Aligned(models, "stream", {"chunk_rows": int(chunk_rows)}, head, fold_stream)
        return
    from .dask import cluster_info, dask_client, tree_reduce, wait
    from .fold import _CLIENT

    groups, tasks = row_range_tasks(models)
    ranges = [(t[2], t[3]) for t in tasks]
    head = _Replay(stream_batches(models, settings, chunk_rows))
    held = _CLIENT.get()
    with nullcontext(held) if held is not None else dask_client(engine) as (client, distributed):

        def fold_dask(new, keyed):
            if not tasks:
                return new(0) if keyed else new()

            def submit(i: int, first_kept: int | None):
                return client.submit(
                    _range_task, ranges[i], first_kept, models, groups, settings, chunk_rows, new, pure=False
                )

            # first guess: no row is dropped, so a task's first kept row is its first row
            futures = [submit(i, t[0] if keyed else None) for i, t in enumerate(ranges)]
            wait(distributed, futures, [t[1] for t in ranges], progress)
            if keyed:
                kept = 0
                counts = client.gather([client.submit(_kept, f, pure=False) for f in futures])
                for i, ((first, _), n) in enumerate(zip(ranges, counts)):  # dropped rows: shift later keys
                    if first != kept:
                        futures[i] = submit(i, kept)
                    kept += n
            return tree_reduce(client, futures)  # pairs in row order

        yield Aligned(models, "dask", cluster_info(engine, len(tasks)), head, fold_dask, tasks)
