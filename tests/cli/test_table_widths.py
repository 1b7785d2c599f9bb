"""Issue 26: every command's table fits the terminal. At 80 columns no status disappears and no number
is cut (tables wrap between words or stack their rows); at 160 columns the full table is drawn.

The commands run in-process with a terminal of COLUMNS columns (rich's Console is made to believe
stdout is a terminal); every number of the command's Markdown output and every status must appear
whole in the terminal output.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from uqeval.cli import app

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_data"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: a number standing alone (not part of a name such as coverage.0.95.width)
NUMBER = re.compile(r"(?<![\w.#=-])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?(?![\w.])")
STATUSES = re.compile(r"\b(PASS|FAIL|SKIP)\b")


def _args(tmp_path: Path) -> dict[str, list[str]]:
    g, gp, q = (str(SAMPLES / f) for f in ("gaussian.csv", "gaussian.parquet", "quantiles.parquet"))
    return {
        "score": ["score", g],
        "check": ["check", g, "--rules", str(ROOT / "configs" / "ci.toml")],
        "compare": [
            "compare",
            g,
            str(SAMPLES / "samples.parquet"),
            gp,
            "--bootstrap",
            "50",
            "--permutations",
            "50",
        ],
        "ucc": ["ucc", g, gp, "--permutation-test", "20"],
        "coverage": ["coverage", q],
        "recalibrate": ["recalibrate", g, "--method", "isotonic"],
    }


def _terminal(monkeypatch, width: int, args: list[str]) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(Console, "is_terminal", property(lambda self: True))
    r = runner.invoke(app, args)
    assert r.exit_code in (0, 1), r.output
    return ANSI.sub("", r.stdout)


@pytest.mark.parametrize("width", [80, 160])
@pytest.mark.parametrize("command", ["score", "check", "compare", "ucc", "coverage", "recalibrate"])
def test_tables_fit_the_terminal_without_cutting(tmp_path, monkeypatch, command, width):
    args = _args(tmp_path)[command]
    md = runner.invoke(app, [*args, "-f", "markdown"])
    assert md.exit_code in (0, 1), md.output
    shown = _terminal(monkeypatch, width, args)
    lines = shown.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width, shown
    assert shown.count("…") == md.stdout.count("…"), shown  # no "…" of rich's: no cut cell
    words = shown.split()
    want_numbers = NUMBER.findall(md.stdout.replace("**", " ").replace("|", " ").replace("\\", ""))
    assert want_numbers, md.stdout
    missing = sorted({n for n in want_numbers if n not in words and f"{n}," not in words})
    # a number may close a bracket or carry a rank: "[0.668," "0.724]" "(#1)"
    missing = [n for n in missing if not re.search(rf"(?<![\w.]){re.escape(n)}(?![\w.])", shown)]
    assert not missing, f"numbers cut or missing at {width} columns: {missing}\n{shown}"
    want_status = STATUSES.findall(md.stdout)
    assert sorted(STATUSES.findall(shown)) == sorted(want_status)
    if command == "check":
        assert want_status and {"PASS", "FAIL"} <= set(want_status)


def test_wide_terminal_draws_one_table_and_narrow_one_stacks_or_wraps(monkeypatch):
    args = _args(Path("."))["check"]
    wide = _terminal(monkeypatch, 160, args)
    assert "┃ status ┃" in wide  # the full table: a header row
    narrow = _terminal(monkeypatch, 80, args)
    assert "┃ status ┃" not in narrow and "status   FAIL" in narrow  # stacked: one block per row
