"""Smoke tests: every command once on the bundled samples, asserting exit 0 and a plausible output.

Selected with ``python -m pytest -m smoke`` (about 10 s): CI runs them on the lowest versions of the
dependencies that pyproject.toml allows (``uv pip install --resolution lowest-direct``), where the
full suite's golden files would differ in the last digits. They are part of the full suite too.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from .conftest import SAMPLE

pytestmark = pytest.mark.smoke

runner = CliRunner()
GAUSSIAN = str(SAMPLE / "gaussian.parquet")


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, (args, result.output)
    return result.stdout


def _json(args: list[str]) -> dict:
    return json.loads(_ok([*args, "--format", "json"]))


def test_score():
    doc = _json(["score", GAUSSIAN])
    assert doc["schema"] == "uqeval.score/1"
    assert 0 < doc["metrics"]["scoring_rule"]["crps"] < 10


def test_coverage():
    doc = _json(["coverage", GAUSSIAN])
    assert 0 < json.dumps(doc).count('"coverage"')
    assert doc["schema"].startswith("uqeval.coverage")


def test_ucc():
    doc = _json(["ucc", GAUSSIAN])
    (model,) = doc["models"].values()
    assert 0 < model["ucc"]["auucc"] < 1


def test_recalibrate():
    doc = _json(["recalibrate", GAUSSIAN, "--method", "std-scaling"])
    assert doc["schema"].startswith("uqeval.recalibrate")
    assert "std-scaling" in json.dumps(doc) or "std_scaling" in json.dumps(doc)


def test_compare():
    doc = _json(
        [
            "compare",
            GAUSSIAN,
            str(SAMPLE / "gaussian_const.parquet"),
            "--bootstrap",
            "50",
            "--permutations",
            "50",
        ]
    )
    assert len(doc["metrics"]["crps"]["best"]) >= 1


def test_check(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"scoring_rule.crps" = { max = 100 }\n"accuracy.mae" = { min = 0 }\n')
    doc = _json(["check", GAUSSIAN, "--rules", str(rules)])
    assert doc["passed"] is True and doc["counts"]["pass"] == 2


def test_plot(tmp_path):
    out = tmp_path / "calibration.png"
    _ok(["plot", GAUSSIAN, "--kind", "calibration", "-o", str(out)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report(tmp_path):
    out = tmp_path / "report.html"
    _ok(["report", GAUSSIAN, "-o", str(out)])
    html = out.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html") and "gaussian.parquet" in html


def test_explain():
    assert "CRPS" in _ok(["explain", "crps"]).upper()


def test_config():
    assert "[metrics]" in _ok(["config", "show", "default"])


def test_schema():
    assert '"uqeval.score/1"' in _ok(["schema", "score"]) and "uqeval.check/1" in _ok(["schema"])
