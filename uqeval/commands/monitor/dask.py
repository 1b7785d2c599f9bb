"""``uqeval monitor --engine dask``: Parquet row groups mapped to :class:`~uqeval.commands.monitor.windows.Windows` on
a Dask cluster and tree-reduced with :meth:`~uqeval.commands.monitor.windows.Windows.merge` (window by window), as
``score --engine dask`` reduces its partial states.

Bounded memory: before the tasks run, the window keys each task's rows can fall in are known as an interval
(row windows: from the task's row numbers; time windows: from the Parquet footer's min/max statistics of the
time column, or every key when a row group has none or the column holds strings). A window whose key lies in
no other task's interval has all its rows in this task, so the task finishes it (its metrics computed, its
state merged into the task's total) as the stream engine finishes old windows: while reading (all but the
latest :data:`~uqeval.commands.monitor.windows.MAX_OPEN_WINDOWS`) and at the task's end. Only the windows shared with
other tasks (in time-ordered files, the few at the tasks' edges) travel to the reduction as states, so the
workers and the client hold a bounded number of window states whatever the number of windows; unsorted
files whose tasks' time ranges overlap keep the shared windows open, as before (exact either way).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...config import Settings
from .windows import Layout, Windows

if TYPE_CHECKING:
    from ...engine.options import EngineOptions

#: the key interval of a task whose rows may fall in any window
EVERY = (float("-inf"), float("inf"))


def _time_range(task, layout: Layout) -> tuple[float, float]:
    """The window keys ``[lo, hi]`` of a task's rows from its row groups' statistics, or :data:`EVERY`."""
    import pyarrow as pa

    from ...engine.dask import footer
    from .windows import time_ns

    f, groups, name = task[0], task[1], layout.time or ""
    try:
        meta = footer(f)
        arrow = meta.schema.to_arrow_schema()
        kind = arrow.field(name).type
        if not (pa.types.is_timestamp(kind) or pa.types.is_date(kind)):
            return EVERY  # string times: their byte order need not be their time order
        col = next(j for j in range(meta.num_columns) if meta.schema.column(j).path == name)
        lows, highs = [], []
        for g in groups:
            st = meta.row_group(g).column(col).statistics
            if st is None or not st.has_min_max:
                return EVERY
            lows.append(st.min)
            highs.append(st.max)
        ns = time_ns(pa.array([min(lows), max(highs)], type=kind), name, f, 0)
    except Exception:  # no statistics we can read: this task may hold rows of any window
        return EVERY
    keys = layout.keys(2, 0, ns)
    return float(keys[0]), float(keys[1])


def key_ranges(tasks: list, layout: Layout, base: int) -> list[tuple[float, float]]:
    """Per task, the interval ``[lo, hi]`` of the window keys its rows can fall in."""
    if layout.kind == "rows":
        return [
            (float((base + off) // layout.span), float((base + off + max(rows, 1) - 1) // layout.span))
            for _, _, off, rows in tasks
        ]
    if not layout.time:
        return [EVERY for _ in tasks]
    return [_time_range(t, layout) for t in tasks]


def shared_keys(ranges: list[tuple[float, float]]) -> list[list[tuple[float, float]]]:
    """Per task, the parts of its key interval that other tasks' intervals overlap (windows it must not finish)."""
    out = []
    for i, (lo, hi) in enumerate(ranges):
        out.append(
            [
                (max(lo, a), min(hi, b))
                for j, (a, b) in enumerate(ranges)
                if j != i and max(lo, a) <= min(hi, b)
            ]
        )
    return out


def partition_windows(
    task,
    plan,
    settings: Settings,
    chunk_rows: int,
    columns: list[str],
    layout: Layout,
    base: int,
    shared: list[tuple[float, float]] | None = None,
    prior: int | None = None,
):
    """The :class:`Windows` of one task's row groups (runs on a worker); the windows no other task has rows
    of (not in ``shared``) are finished here. ``prior``: the resumed state's mark (rows at or before it are
    left out, :class:`~uqeval.commands.monitor.windows.Seen`)."""
    from ...engine.dask import task_batches

    def hold(key: int) -> bool:
        return shared is None or any(a <= key <= b for a, b in shared)

    win = Windows(layout, settings)
    win.base = base
    win.seen.prior = prior
    extra = (layout.time,) if layout.time else ()
    for b, rows, offset, cols in task_batches(task, plan, settings, chunk_rows, columns, extra):
        win.add(b, rows, offset, cols, task[0])
        win.close_old(hold=hold)
    win.close_old(keep=0, hold=hold)
    return win


def _merge(a: Windows, b: Windows) -> Windows:
    return a.merge(b)


def monitor_dask(
    spec: str | Path,
    layout: Layout,
    settings: Settings,
    engine: EngineOptions,
    start: Windows | None = None,
    progress=None,
    track: bool = False,
    skip_seen: bool = False,
) -> tuple[Any, Windows]:
    """``(source, Windows)`` of ``spec`` (Parquet) computed on a Dask cluster, added to ``start`` (``engine``: its
    scheduler or workers, and ``chunk_rows`` set: :meth:`~uqeval.engine.options.EngineOptions.sized`); ``track``
    and ``skip_seen`` as :func:`~uqeval.commands.monitor.windows.monitor_windows`'s."""
    from ...engine.dask import dask_client, parquet_tasks, partitions, tree_reduce, wait

    chunk_rows = cast("int", engine.chunk_rows)

    src, plan, tasks, columns = parquet_tasks(spec, settings, allow_by=True)
    if track:
        if start is None:
            start = Windows(layout, settings)
        skip = start.seen.check_inputs(src.files, skip_seen)
        if skip:  # the files the state has read are left out (their row numbers too: row windows)
            tasks = partitions([f for f in src.files if str(f) not in skip])
        if not tasks:
            return src, start
    base = start.n_seen if start is not None else 0
    prior = start.seen.prior if start is not None else None
    ranges = key_ranges(tasks, layout, base)
    shared = shared_keys(ranges)
    last = max((hi for _, hi in ranges), default=float("inf"))
    if last < float("inf"):  # the latest window stays open, as on the stream engine: a later run (--state)
        # may bring more of its rows
        shared = [sh + [(last, last)] for sh in shared]
    if start is not None:  # windows a resumed state left open may get rows here: no task finishes them
        kept = [(float(k), float(k)) for k, w in start.windows.items() if w["state"] is not None]
        shared = [sh + kept for sh in shared]
    with dask_client(engine) as (client, distributed):
        futures = [
            client.submit(
                partition_windows, t, plan, settings, chunk_rows, columns, layout, base, sh, prior, pure=False
            )
            for t, sh in zip(tasks, shared)
        ]
        wait(distributed, futures, [t[3] for t in tasks], progress)
        win = tree_reduce(client, futures, _merge)
    out = start.merge(win) if start is not None else win
    out.base = base
    return src, out
