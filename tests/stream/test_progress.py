"""The progress bar of streamed runs: on a terminal only, off with --quiet."""

from __future__ import annotations

import io

from uqeval.engine.progress import row_progress


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_on_a_terminal_shows_rows_and_rate():
    out = Tty()
    with row_progress(1000, stream=out) as update:
        assert update is not None
        for done in (250, 500, 1000):
            update(done)
    text = out.getvalue()
    assert "1000/1000" in text and "rows/s" in text


def test_no_bar_when_quiet_or_not_a_terminal():
    with row_progress(10, quiet=True, stream=Tty()) as update:
        assert update is None
    plain = io.StringIO()
    with row_progress(10, stream=plain) as update:
        assert update is None
    assert plain.getvalue() == ""


def test_ucc_and_coverage_streams_report_rows_read():
    # the progress bar's callback: rows of the first file read (ucc reads its files side by side) and rows
    # of every file in turn (coverage)
    from uqeval.commands.coverage.stream import coverage_points_with_engine
    from uqeval.commands.ucc.core import UccOptions
    from uqeval.commands.ucc.stream import ucc_with_engine
    from uqeval.config import Settings
    from uqeval.engine.options import EngineOptions

    from ..conftest import SAMPLE

    seen: list[int] = []
    files = [str(SAMPLE / "gaussian.parquet"), str(SAMPLE / "quantiles.parquet")]
    doc = ucc_with_engine(
        files, ["g", "q"], Settings(), EngineOptions("stream", 300), UccOptions(), progress=seen.append
    )
    assert seen == sorted(seen) and seen[-1] == doc["n_rows"] and len(seen) > 2
    seen.clear()
    records, _ = coverage_points_with_engine(
        [("g", files[0]), ("q", files[1])], Settings(), EngineOptions("stream", 300), progress=seen.append
    )
    assert records and seen == sorted(seen) and seen[-1] == 2 * doc["n_rows"]
