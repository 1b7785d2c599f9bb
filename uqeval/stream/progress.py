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
