"""``uqeval monitor --engine dask``: Parquet row groups mapped to :class:`~uqeval.stream.monitor.Windows` on
a Dask cluster and tree-reduced with :meth:`~uqeval.stream.monitor.Windows.merge` (window by window), as
``score --engine dask`` reduces its partial states."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import UsageError
from .monitor import Layout, Windows


def partition_windows(
    task, plan, settings: Settings, chunk_rows: int, columns: list[str], layout: Layout, base: int
):
    """The :class:`Windows` of one task's row groups (runs on a worker)."""
    from .dask_engine import _task_batches

    win = Windows(layout, settings)
    win.base = base
    extra = (layout.time,) if layout.time else ()
    for b, rows, offset, cols in _task_batches(task, plan, settings, chunk_rows, columns, extra):
        win.add(b, rows, offset, cols, task[0])
    return win


def _merge(a: Windows, b: Windows) -> Windows:
    return a.merge(b)


def monitor_dask(
    spec: str | Path,
    layout: Layout,
    settings: Settings,
    chunk_rows: int,
    scheduler: str | None,
    workers: int | None,
    start: Windows | None = None,
    progress=None,
) -> tuple[Any, Windows]:
    """``(source, Windows)`` of ``spec`` (Parquet) computed on a Dask cluster, added to ``start``."""
    from .dask_engine import dask_client, partitions, tree_reduce, wait
    from .engine import _prepare

    src, plan, _ = _prepare(spec, settings, allow_by=True)
    if src.fmt != "parquet":
        raise UsageError(
            "--engine dask reads Parquet (files, directories, globs); stream CSV with --engine stream"
        )
    tasks = partitions(src.files)
    columns = list(dict.fromkeys(plan.needed()))
    base = start.n_seen if start is not None else 0
    with dask_client(scheduler, workers) as (client, distributed):
        futures = [
            client.submit(partition_windows, t, plan, settings, chunk_rows, columns, layout, base, pure=False)
            for t in tasks
        ]
        wait(distributed, futures, [t[3] for t in tasks], progress)
        win = tree_reduce(client, futures, _merge)
    out = start.merge(win) if start is not None else win
    out.base = base
    return src, out
