"""Issue 26: long in-memory work (compare, report, ucc --permutation-test) shows a progress display on a
terminal's stderr; never on a pipe, never with --quiet, never on stdout."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.engine import progress

runner = CliRunner()
SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
G, GP = str(SAMPLES / "gaussian.csv"), str(SAMPLES / "gaussian.parquet")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_stage_draws_on_a_terminal_only():
    tty = FakeTerminal()
    with progress.work_progress(stream=tty):
        advance = progress.stage("bootstrap (50 resamples)", 10)
        advance(10)
    assert "bootstrap (50 resamples)" in tty.getvalue()
    for stream, quiet in ((io.StringIO(), False), (FakeTerminal(), True)):
        with progress.work_progress(quiet=quiet, stream=stream):
            progress.stage("bootstrap", 10)(5)
        assert stream.getvalue() == ""
    assert progress.stage("no display open", 3)(1) is None  # the Python API: a no-op


CASES = {
    "compare": (["compare", G, GP, "--bootstrap", "50", "--permutations", "50"], "bootstrap (50 resamples"),
    "ucc": (["ucc", G, GP, "--permutation-test", "50"], "UCC permutation test"),
    "report": (["report", G, "-o", "{tmp}/r.html"], "report: gaussian.csv"),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_long_commands_show_progress_on_a_terminal(tmp_path, monkeypatch, command):
    args, text = CASES[command]
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    piped = runner.invoke(app, args)  # CliRunner's stderr is no terminal
    assert piped.exit_code == 0, piped.output
    assert text not in piped.stderr
    monkeypatch.setattr(progress, "is_terminal", lambda stream: True)
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert text in shown.stderr and text not in shown.stdout
    quiet = runner.invoke(app, [*args, "--quiet"])
    assert quiet.exit_code == 0, quiet.output
    assert text not in quiet.stderr
    if command != "report":
        json_out = runner.invoke(app, [*args, "-f", "json"])
        json.loads(json_out.stdout)  # the display never reaches stdout
