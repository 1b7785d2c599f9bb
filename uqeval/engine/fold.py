"""The one way a command runs on every engine: it hands the engine a *fold*.

A fold is a picklable callable ``new()`` returning an empty state. A state has ``add(piece)``, which folds
one record batch (a :class:`Piece`) into it, and ``merge(other)``, which returns the state of both parts'
rows without changing either (associative: the engines merge in row order, pairwise). The command then
finishes the merged state into its document.

:func:`over_rows` opens one input for any number of folds over its rows (a command that needs a second
pass, such as the exact median of ``score``, folds twice): the stream engine reads record batches in
order on this process; the Dask engine maps Parquet row groups to states on the workers and tree-reduces
them there. Both hand a state the same pieces, built and validated by the loader, so a state's code is
the same on every engine and nothing here knows a metric or a command. The memory engine is the one-batch
case (:func:`in_memory`): one state gets one piece holding the whole loaded input, and is never merged.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypeVar, cast

from ..config import Settings
from .local import iter_batches_of
from .options import EngineOptions


class Piece(NamedTuple):
    """One record batch of an input: its ``file``, the loader's ``batch`` (a validated prediction, targets,
    weights and groups), its ``rows`` read (kept or dropped), the global row number ``offset`` of its first
    row, and the ``extra`` columns asked for (name -> Arrow array)."""

    file: str
    batch: Any
    rows: int
    offset: int
    extra: dict[str, Any]


class State(Protocol):
    """What a fold's state does: fold one piece in (in place), and merge with another (a new state)."""

    def add(self, piece: Piece) -> None: ...

    def merge(self, other: Any) -> Any: ...


S = TypeVar("S", bound=State)


@dataclass
class Rows:
    """The rows of one input on an engine (:func:`over_rows`, :func:`in_memory`).

    ``src``: the opened source (its spec, format, files and notes; None in memory); ``engine``: ``"memory"``,
    ``"stream"`` or ``"dask"``;
    ``info``: the entries the document's ``input`` block records of the run (rows per batch; on Dask the
    partitions and the cluster); ``parts``: on Dask the tasks, ``(file, row groups, global first row,
    rows)`` in row order, one state each (a fold whose states finish parts of their work early, such as a
    monitor's windows, plans on them); None on the stream and memory engines (one state reads every row)."""

    src: Any
    engine: str
    info: dict[str, Any]
    _fold: Callable[[Callable[[], Any], bool], Any] = field(repr=False)
    parts: list[tuple[str, list[int], int, int]] | None = None

    def fold(self, new: Callable[[], S], report: bool = True) -> S:
        """The merged state of every row: ``new()`` per batch run (stream) or per task (Dask), each piece
        added in row order, the states merged. ``report``: count the rows on the progress bar (the first
        pass; a second pass over the same rows does not)."""
        return cast("S", self._fold(new, report))


#: the Dask client a :func:`session` holds open, as ``(client, distributed)``
_CLIENT: ContextVar[tuple[Any, Any] | None] = ContextVar("uqeval_dask_client", default=None)


@contextmanager
def session(engine: EngineOptions) -> Iterator[None]:
    """Hold one Dask client open (``engine.engine == "dask"``) for the folds of several inputs, so that a
    command over many files starts one local cluster, not one per file; nothing on the stream engine."""
    if engine.engine != "dask" or _CLIENT.get() is not None:
        yield
        return
    from .dask import dask_client

    with dask_client(engine) as opened:
        token = _CLIENT.set(opened)
        try:
            yield
        finally:
            _CLIENT.reset(token)


def in_memory(loaded: Any) -> Rows:
    """The rows of an input loaded in memory (a :class:`~uqeval.io.load.Loaded`) on the memory engine: a fold
    gets one piece, ``batch`` the :class:`~uqeval.io.load.Loaded` itself, holding every row, into one state
    (never merged: a state that keeps all its rows can finish exactly)."""
    piece = Piece(str(loaded.info.get("path")), loaded, int(loaded.info.get("n_rows", 0)), 0, loaded.extra)

    def fold_memory(new, report):
        state = new()
        state.add(piece)
        return state

    return Rows(None, "memory", {}, fold_memory)


def _fold_task(task, plan, settings: Settings, chunk_rows: int, columns: list[str], extra, new) -> Any:
    """The state of one Dask task's row groups (runs on a worker)."""
    from .dask import task_batches

    state = new()
    for batch, rows, offset, cols in task_batches(task, plan, settings, chunk_rows, columns, extra):
        state.add(Piece(task[0], batch, rows, offset, cols))
    return state


@contextmanager
def over_rows(
    spec: str | Path,
    settings: Settings,
    engine: EngineOptions,
    progress: Callable[[int], None] | None = None,
    *,
    extra: tuple[str, ...] = (),
    allow_by: bool = False,
    weights_ok: bool = False,
    skip: Callable[[Any], Collection[str]] | None = None,
) -> Iterator[Rows]:
    """The :class:`Rows` of ``spec`` on ``engine`` (``memory``, ``stream`` or ``dask``, chosen by
    :meth:`~uqeval.engine.options.EngineOptions.choose`; in memory the file loaded whole, :func:`in_memory`,
    ``extra`` columns read when the file has them; ``chunk_rows`` defaults to
    :func:`~uqeval.engine.local.auto_chunk_rows`), open for folds while the context lasts (on Dask: the
    client). ``extra``: further columns each piece carries; ``allow_by``: the ``by`` role is read (into the
    batches' groups); ``weights_ok``: the fold uses the weights (else a weights column is refused);
    ``skip(source)``: the files of the opened source to leave out, asked once before any row is read (their
    rows are not numbered: the rows of the files read are numbered from 0; not in memory)."""
    if engine.engine == "memory":
        from ..io.load import load_predictions

        assert skip is None  # a file in memory is read whole
        yield in_memory(load_predictions(spec, settings, extra=extra, weights_ok=weights_ok))
        return
    engine = engine.sized([spec], settings)
    chunk_rows = cast("int", engine.chunk_rows)
    if engine.engine != "dask":
        left: set[str] = set()  # read lazily: filled before the first batch
        src, first = iter_batches_of(spec, settings, chunk_rows, extra, allow_by, weights_ok, left)
        if skip is not None:
            left |= {str(f) for f in skip(src)}
        pending = [first]

        def fold_stream(new, report):
            batches = (
                pending.pop()
                if pending
                else iter_batches_of(spec, settings, chunk_rows, extra, allow_by, weights_ok, left)[1]
            )
            state, done = new(), 0
            for piece in batches:
                state.add(Piece(*piece))
                done += piece[2]
                if report and progress is not None:
                    progress(done)
            return state

        yield Rows(src, "stream", {"chunk_rows": int(chunk_rows)}, fold_stream)
        return
    from .dask import cluster_info, dask_client, parquet_tasks, partitions, tree_reduce, wait

    src, plan, tasks, columns, names = parquet_tasks(spec, settings, allow_by, weights_ok, extra)
    if skip is not None and (gone := {str(f) for f in skip(src)}):
        tasks = partitions([f for f in src.files if str(f) not in gone])
    held = _CLIENT.get()
    with nullcontext(held) if held is not None else dask_client(engine) as (client, distributed):

        def fold_dask(new, report):
            if not tasks:  # no row group: the empty state, as a stream of no batch
                return new()
            futures = [
                client.submit(_fold_task, t, plan, settings, chunk_rows, columns, names, new, pure=False)
                for t in tasks
            ]
            wait(distributed, futures, [t[3] for t in tasks], progress if report else None)
            return tree_reduce(client, futures)  # pairs in file order

        yield Rows(src, "dask", cluster_info(engine, len(tasks)), fold_dask, tasks)
