"""``uqeval monitor --engine stream|dask``: a monitor run is one fold of
:class:`~uqeval.commands.monitor.windows.Windows` (one input, :func:`uqeval.engine.fold.over_rows`) or of
:class:`~uqeval.commands.monitor.windows.Pair` (two inputs side by side, :func:`uqeval.engine.aligned.over_aligned`),
run by the engine as every command's fold is, then merged into the resumed state.

Bounded memory: a state finishes its windows as it goes (all but the latest
:data:`~uqeval.commands.monitor.windows.MAX_OPEN_WINDOWS`), but never one that another state of the run may
hold rows of (:class:`~uqeval.commands.monitor.windows.RunPlan`). On the stream engine one state reads every
row, so only a resumed state's open windows are held. On Dask the window keys each task's rows can fall in are
known before the tasks run, as an interval (row windows: from the task's row numbers; time windows: from the
Parquet footer's min/max statistics of the time column, or every key when a row group has none or the column
holds strings): a window is finished by the first merge that holds every task whose interval holds it, so in
time-ordered files only the few windows at the tasks' edges travel to the reduction as states, and the
workers and the client hold a bounded number of window states whatever the number of windows (exact either
way; unsorted files whose tasks' time ranges overlap keep their shared windows open until the merge).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...config import Settings
from .windows import Layout, Pair, RunPlan, Windows, _pair_inputs, time_ns

if TYPE_CHECKING:
    from ...engine.options import EngineOptions

#: the key interval of a task whose rows may fall in any window
EVERY = (float("-inf"), float("inf"))


def _time_range(task, layout: Layout) -> tuple[float, float]:
    """The window keys ``[lo, hi]`` of a task's rows from its row groups' statistics, or :data:`EVERY`."""
    import pyarrow as pa

    from ...engine.dask import footer

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


def key_ranges(tasks: Sequence, layout: Layout, base: int) -> list[tuple[float, float]]:
    """Per task ``(file, row groups, global first row, rows)``, the interval ``[lo, hi]`` of the window keys its
    rows can fall in."""
    if layout.kind == "rows":
        return [
            (float((base + off) // layout.span), float((base + off + max(rows, 1) - 1) // layout.span))
            for _, _, off, rows in tasks
        ]
    if not layout.time:
        return [EVERY for _ in tasks]
    return [_time_range(t, layout) for t in tasks]


def other_ranges(tasks: Sequence, files: Sequence[str], layout: Layout) -> list[tuple[float, float]]:
    """Per task (global rows of the first input of ``monitor A B``), the window keys the same rows of another
    input (``files``) can fall in: from the statistics of its row groups that hold any of those rows."""
    from ...engine.aligned import row_groups

    groups = row_groups(files)
    out = []
    for _, _, first, rows in tasks:
        by_file: dict[str, list[int]] = {}
        for f, g, at, k in groups:
            if at < first + rows and at + k > first:
                by_file.setdefault(f, []).append(g)
        spans = [_time_range((f, gs), layout) for f, gs in by_file.items()]
        out.append((min(a for a, _ in spans), max(b for _, b in spans)) if spans else EVERY)
    return out


def plan_run(
    layout: Layout,
    start: Windows | None,
    parts: Sequence | None,
    ranges: list[tuple[float, float]] | None = None,
) -> RunPlan:
    """The :class:`~uqeval.commands.monitor.windows.RunPlan` of a run added to ``start`` (a resumed state, or
    None) over the engine's ``parts`` (Dask tasks; None on the stream engine). ``ranges``: the window keys of
    each task's rows, when the tasks' own statistics do not tell them (:func:`other_ranges`)."""
    base = start.n_seen if start is not None else 0
    held = [k for k, w in start.windows.items() if w["state"] is not None] if start is not None else []
    finished = [k for k, w in start.windows.items() if w["state"] is None] if start is not None else []
    starts: tuple[int, ...] = ()
    if parts:
        starts = tuple(int(t[2]) for t in parts)
        ranges = key_ranges(parts, layout, base) if ranges is None or layout.kind == "rows" else ranges
        last = max(hi for _, hi in ranges)
        if last < float("inf"):  # the latest window stays open: a later run (--state) may bring more rows
            held.append(int(last))
    return RunPlan(
        base,
        start.seen.prior if start is not None else None,
        frozenset(held),
        frozenset(finished),
        starts,
        tuple(ranges or ()),
    )


def _new_pair(
    layout: Layout, settings: Settings, plans: tuple[RunPlan, RunPlan], bound: float | None
) -> Pair:
    return Pair(Windows(layout, settings, plans[0]), Windows(layout, settings, plans[1]), bound)


def windows_with_engine(
    spec: str | Path,
    layout: Layout,
    settings: Settings,
    engine: EngineOptions,
    start: Windows | None = None,
    progress: Callable[[int], None] | None = None,
    skip_seen: bool = False,
) -> tuple[Any, Windows]:
    """``(source, Windows)`` of ``spec`` folded on ``engine`` (stream or dask) and added to
    ``start`` (a resumed state: the input files it has read are refused, or left out with ``skip_seen``)."""
    from ...engine.fold import over_rows

    def skip(src) -> set[str]:
        return start.seen.check_inputs(src.files, skip_seen) if start is not None else set()

    extra = (layout.time,) if layout.time else ()
    with over_rows(
        spec, settings, engine, progress, extra=extra, allow_by=True, weights_ok=True, skip=skip
    ) as rows:
        plan = plan_run(layout, start, rows.parts)
        win = rows.fold(partial(Windows, layout, settings, plan))
    out = start.merge(win) if start is not None else win
    out.base = plan.base
    out.close_old()  # the resumed state's windows this run held open: all but the latest finished now
    return rows.src, out


def pair_with_engine(
    specs: Sequence[str | Path],
    layout: Layout,
    settings: Settings,
    engine: EngineOptions,
    bound: float | None,
    start: Pair | None = None,
    progress: Callable[[int], None] | None = None,
    skip_seen: bool = False,
) -> tuple[Any, Any, Pair]:
    """``(source A, source B, Pair)``: both inputs folded side by side on ``engine`` (rows
    matched by row number: a row dropped in either is left out of the difference), added to ``start`` (files
    it has read: as :func:`windows_with_engine`, both inputs alike)."""
    from ...engine.aligned import over_aligned

    extra = (layout.time,) if layout.time else ()
    with over_aligned([str(s) for s in specs], settings, engine, progress, extra=extra) as run:
        src_a, src_b = run.models[0].src, run.models[1].src
        read = not (start is not None and _pair_inputs(start, src_a, src_b, skip_seen))
        plans = (
            plan_run(layout, start.a if start else None, run.parts),
            plan_run(
                layout,
                start.b if start else None,
                run.parts,
                other_ranges(run.parts, src_b.files, layout) if run.parts and layout.time else None,
            ),
        )
        given = bound if bound is not None else start.bound if start is not None else None
        new = partial(_new_pair, layout, settings, plans, given)
        pair = run.fold(new) if read else new()
    out = start.merge(pair) if start is not None else pair
    out.bound = pair.bound if pair.bound is not None else out.bound
    for win, plan in zip((out.a, out.b), plans):
        win.base = plan.base
        win.close_old()  # (as windows_with_engine)
    return src_a, src_b, out
