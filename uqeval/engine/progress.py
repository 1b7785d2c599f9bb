"""A rich progress bar for streamed and Dask runs: rows done, rows/s, ETA; on stderr, only on a terminal."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def row_progress(
    total: int | None, quiet: bool = False, stream=None
) -> Iterator[Callable[[int], None] | None]:
    """A callback ``update(rows_done)``, or None when ``quiet`` or stderr is not a terminal."""
    stream = stream if stream is not None else sys.stderr
    if quiet or not (hasattr(stream, "isatty") and stream.isatty()):
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    class Rate(TextColumn):
        def render(self, task):  # rows/s over the whole run
            speed = task.finished_speed or task.speed
            from rich.text import Text

            return Text(f"{speed:,.0f} rows/s" if speed else "- rows/s")

    columns = [
        TextColumn("scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(""),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=Console(file=stream), transient=True) as bar:
        task = bar.add_task("rows", total=total)
        yield lambda done: bar.update(task, completed=done)


# --------------------------------------------------------------------------- long in-memory work (issue 26)
# The command line opens one display around a long in-memory command (compare, report, ucc
# --permutation-test); the tasks announce their stages with :func:`stage`, which does nothing when no
# display is open (a pipe, --quiet, the Python API). The display is on stderr and only on a terminal.

_ACTIVE: list = []  # [(rich Progress, its task id)] while a display is open


def _noop(n: int = 1) -> None:
    return None


def is_terminal(stream) -> bool:
    return bool(hasattr(stream, "isatty") and stream.isatty())


@contextlib.contextmanager
def work_progress(quiet: bool = False, stream=None) -> Iterator[None]:
    """A progress display for the stages of in-memory work, on ``stream`` (stderr) when it is a
    terminal and not ``quiet``; removed when the work ends (transient)."""
    stream = stream if stream is not None else sys.stderr
    if quiet or _ACTIVE or not is_terminal(stream):
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=Console(file=stream, force_terminal=True), transient=True) as bar:
        _ACTIVE.append((bar, bar.add_task("working", total=None)))
        try:
            yield
        finally:
            _ACTIVE.clear()


def stage(description: str, total: int | None = None) -> Callable[[int], None]:
    """Show ``description`` (with a bar of ``total`` steps) on the open display; returns
    ``advance(steps)``. Without an open display: a function that does nothing."""
    if not _ACTIVE:
        return _noop
    bar, task = _ACTIVE[-1]
    bar.update(task, description=description, total=total, completed=0, refresh=True)  # each stage is seen

    def advance(n: int = 1) -> None:
        bar.advance(task, n)

    return advance
