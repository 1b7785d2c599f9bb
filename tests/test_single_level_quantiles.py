"""Quantiles at a single level (issue 26): the metrics defined for one level are computed, the average
calibration curve (which needs two levels) is left out with a note, in memory, streamed and from Python."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.cli import app

runner = CliRunner()
NOTE = "avg_calibration not computed: its calibration curve needs at least two quantile levels"


@pytest.fixture
def median_file(tmp_path):
    rng = np.random.default_rng(11)
    y = rng.normal(size=400)
    q = 0.3 * y + rng.normal(size=400) * 0.5
    path = tmp_path / "median.csv"
    path.write_text(
        "y,q0.5\n" + "".join(f"{a!r},{b!r}\n" for a, b in zip(y.tolist(), q.tolist(), strict=True))
    )
    return path, y, q


def _pinball(y, q, tau):  # by hand: the quantile score at one level
    d = y - q
    return float(np.mean(np.maximum(tau * d, (tau - 1) * d)))


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_single_quantile_level_scores_with_a_note(median_file, engine):
    path, y, q = median_file
    chunks = ["--chunk-rows", "150"] if engine == "stream" else []  # several chunks: the note is said once
    r = runner.invoke(app, ["score", str(path), "--engine", engine, *chunks, "-f", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert "avg_calibration" not in doc["metrics"]
    assert [n for n in doc["notes"] if n.startswith(NOTE)] == [n for n in doc["notes"] if "(0.5)" in n]
    assert sum(n.startswith(NOTE) for n in doc["notes"]) == 1, doc["notes"]
    assert doc["metrics"]["scoring_rule"]["pinball"] == pytest.approx(_pinball(y, q, 0.5), rel=1e-12)
    assert doc["metrics"]["scoring_rule"]["pinball_by_level"]["0.5"] == pytest.approx(_pinball(y, q, 0.5))
    assert doc["metrics"]["accuracy"]["mae"] == pytest.approx(float(np.mean(np.abs(y - q))), rel=1e-12)
    table = runner.invoke(app, ["score", str(path), "--engine", engine])
    assert table.exit_code == 0 and "pinball" in table.stdout and NOTE in table.stderr


def test_stream_and_memory_agree_on_a_single_level(median_file):
    path = median_file[0]
    docs = [
        json.loads(runner.invoke(app, ["score", str(path), "--engine", e, "-f", "json"]).stdout)
        for e in ("memory", "stream")
    ]
    assert docs[0]["metrics"].keys() == docs[1]["metrics"].keys()
    for key in ("pinball", "wis"):
        assert docs[0]["metrics"]["scoring_rule"][key] == pytest.approx(
            docs[1]["metrics"]["scoring_rule"][key]
        )


def test_the_python_api_scores_a_single_level(median_file):
    _, y, q = median_file
    s = uqeval.evaluate(y, quantiles=q[:, None], levels=[0.3])
    assert s["scoring_rule.pinball"] == pytest.approx(_pinball(y, q, 0.3), rel=1e-12)
    assert not any(k.startswith("avg_calibration") for k in s)
    assert any(n.startswith(NOTE) and "(0.3)" in n for n in s._summary["notes"])
    file_scores = uqeval.evaluate_file(median_file[0])
    assert file_scores["pinball"] == pytest.approx(_pinball(y, q, 0.5), rel=1e-12)


def test_calibration_plot_of_a_single_level_says_why(median_file, tmp_path):
    r = runner.invoke(app, ["plot", str(median_file[0]), "-k", "calibration", "-o", str(tmp_path / "c.png")])
    assert r.exit_code == 3 and NOTE in r.stderr, r.output
    two = uqeval.evaluate(
        median_file[1], quantiles=np.column_stack([median_file[2] - 1, median_file[2] + 1]), levels=[0.2, 0.8]
    )
    assert "avg_calibration.ma_cal" in two  # two levels: the family is back
