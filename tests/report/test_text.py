"""Input strings are data in all four sinks: terminal (plain and rich), Markdown, HTML and JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.text import markup, md_cell, plain, xml_text

from ..conftest import write_table

runner = CliRunner()
HOSTILE = "\x1b[31mA\x1b]0;T\x07\rB\x9bC\u202e[bold]D[/bold][/x]|E\nF<b>G</b>"
CONTROL = [chr(c) for c in [*range(0, 9), *range(11, 32), 127, *range(0x80, 0xA0)]] + ["\u202e"]


def _no_controls(text: str, keep: str = "\n") -> None:
    bad = [c for c in CONTROL if c in text and c not in keep]
    assert not bad, bad


def test_plain_shows_every_control_character():
    s = plain("a\x1b[1m\r\n\t\x00\x7f\x9b\u202eb")
    assert s == "a\\x1b[1m\\x0d\\x0a\\x09\\x00\\x7f\\x9b\\u202eb"
    _no_controls(s, keep="")


def test_markup_is_literal_in_rich():
    from rich.console import Console

    console = Console(record=True, width=200, force_terminal=False)
    console.print(markup("[bold]x[/bold] [/x] \x1b[31m"))
    assert console.export_text().strip() == "[bold]x[/bold] [/x] \\x1b[31m"


def test_md_cell_keeps_the_table_shape():
    cell = md_cell("a|b\nc<script>&amp;")
    assert "\n" not in cell and "|" not in cell.replace("\\|", "")
    assert "<script>" not in cell and "&amp;amp;" in cell


def test_md_cell_shows_inline_markup_as_written():
    # a --by label or model name is data: no emphasis, code span, link or strikethrough
    assert md_cell("*a*") == "\\*a\\*"
    assert md_cell("_x_ [t](http://e) `c` ~~s~~") == "\\_x\\_ \\[t\\](http://e) \\`c\\` \\~\\~s\\~\\~"
    assert md_cell("ma_cal") == "ma_cal"  # GitHub ignores _ inside a word: metric names stay readable
    # every escaped character is a CommonMark backslash escape: the rendered text is the input
    import re

    assert re.sub(r"\\(.)", r"\1", md_cell("*a* _b_ [c] `d` ~e~")) == "*a* _b_ [c] `d` ~e~"


def test_xml_text_parses():
    doc = f"<a>{xml_text(chr(0) + chr(0x1B) + 'x' + chr(0xFFFE))}</a>"
    assert ET.fromstring(doc).text == "\\x00\\x1bx\\ufffe"


@pytest.fixture
def hostile_file(tmp_path):
    rng = np.random.default_rng(0)
    n = 60
    mean = rng.normal(size=n)
    groups = np.array([HOSTILE, "[/x]", "ok"])[np.arange(n) % 3]
    return write_table(
        tmp_path / "h.parquet",
        {"y": mean + rng.normal(size=n), HOSTILE: mean, "std": np.ones(n), "grp": groups},
    )


def test_terminal_sink(hostile_file):
    r = runner.invoke(app, ["score", str(hostile_file), "--mean", HOSTILE, "--by", "grp"])
    assert r.exit_code == 0, r.output
    _no_controls(r.stdout + r.stderr)
    assert "[bold]D[/bold][/x]" in r.stdout.replace("\n", "")  # printed, not rendered (and no MarkupError)


def test_markdown_sink(hostile_file):
    r = runner.invoke(app, ["score", str(hostile_file), "--mean", HOSTILE, "--by", "grp", "-f", "markdown"])
    assert r.exit_code == 0, r.output
    _no_controls(r.stdout)
    rows = [line for line in r.stdout.splitlines() if line.startswith("|")]
    counts = {line.replace("\\|", "").count("|") for line in rows}
    assert len(counts) == 1 and "<b>" not in r.stdout


def test_html_sink(hostile_file, tmp_path):
    out = tmp_path / "r.html"
    r = runner.invoke(
        app,
        ["report", str(hostile_file), "--mean", HOSTILE, "--by", "grp", "-o", str(out), "--title", HOSTILE],
    )
    assert r.exit_code == 0, r.output
    html = out.read_text()
    assert "<b>G</b>" not in html and "&lt;b&gt;G&lt;/b&gt;" in html
    _no_controls(html)


def test_junit_sink(hostile_file, tmp_path):
    rules = tmp_path / ("rules" + HOSTILE.replace("/", "_") + ".toml")  # its name is in the XML
    rules.write_text('[rules]\n"accuracy.mae" = { max = 0.0 }\n')
    summary = tmp_path / "s.json"
    assert (
        runner.invoke(app, ["score", str(hostile_file), "--mean", HOSTILE, "-o", str(summary)]).exit_code == 0
    )
    doc = json.loads(summary.read_text())
    assert doc["input"]["columns"]["mean"] == HOSTILE  # JSON keeps the data as it is
    junit = tmp_path / "j.xml"
    r = runner.invoke(app, ["check", str(summary), "--rules", str(rules), "--junit", str(junit)])
    assert r.exit_code == 1, r.output
    root = ET.fromstring(junit.read_bytes())
    assert "\\x1b[31mA" in root.find("testsuite/properties/property").get("value")
    _no_controls(junit.read_text())


def test_markdown_cells_keep_the_renderers_own_markup_and_escape_the_data():
    from uqeval.report.format import md_table
    from uqeval.text import md_bold, md_code_span

    line = md_table(["m"], [[md_code_span("a`b|c")], [md_bold("*x*")], ["**not bold**"]])[2:]
    assert line == ["| `a'b\\|c` |", "| **\\*x\\*** |", "| \\*\\*not bold\\*\\* |"]
