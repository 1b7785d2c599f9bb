"""The progress bar of streamed runs: on a terminal only, off with --quiet."""

from __future__ import annotations

import io

from uqeval.stream.progress import row_progress


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
