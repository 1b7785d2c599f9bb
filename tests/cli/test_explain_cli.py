"""``uqeval explain METRIC``: the glossary on the command line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.glossary import GLOSSARY, canonical_path
from uqeval.report.html import flatten

from ..conftest import SAMPLE

runner = CliRunner()


def test_explain_crps_by_short_name_and_path():
    short = runner.invoke(app, ["explain", "crps"])
    assert short.exit_code == 0, short.output
    assert short.stdout.startswith("scoring_rule.crps — ")
    assert "Formula:" in short.stdout and "Reference: " in short.stdout and "Gneiting" in short.stdout
    full = runner.invoke(app, ["explain", "scoring_rule.crps"])
    assert full.exit_code == 0 and full.stdout == short.stdout


def test_ambiguous_short_name_shows_every_match():
    r = runner.invoke(app, ["explain", "nll"])
    assert r.exit_code == 0, r.output
    assert "accuracy.nll" in r.stdout and "scoring_rule.nll" in r.stdout


def test_unknown_metric_exits_3_with_close_matches():
    r = runner.invoke(app, ["explain", "crsp"])
    assert r.exit_code == 3, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: unknown metric 'crsp'")
    assert "did you mean" in lines[0] and "crps" in lines[0]
    assert r.stdout == "" and "Traceback" not in r.output


def test_without_a_metric_lists_every_entry():
    r = runner.invoke(app, ["explain"])
    assert r.exit_code == 0, r.output
    keys = [line.split()[0] for line in r.stdout.strip().splitlines()]
    assert keys == list(GLOSSARY)


# Every summary key must have a glossary entry (uqeval/glossary.py).
KNOWN_GAPS: set[str] = set()


@pytest.mark.parametrize("name", ["gaussian.parquet", "quantiles.parquet", "classification.parquet"])
def test_every_metric_of_a_summary_can_be_explained(name):
    r = runner.invoke(app, ["score", str(SAMPLE / name), "--format", "json"])
    assert r.exit_code == 0, r.output
    unexplained = set()
    paths = {canonical_path(p): p for p, _ in flatten(json.loads(r.stdout)["metrics"])}  # one per metric
    for path in paths.values():
        e = runner.invoke(app, ["explain", path])
        if e.exit_code == 3:
            unexplained.add(
                canonical_path(path).rsplit(".", 1)[0] if "histogram." in path else canonical_path(path)
            )
            continue
        assert e.exit_code == 0, (path, e.output)
        assert "Reference: " in e.stdout
    assert unexplained <= KNOWN_GAPS, unexplained
