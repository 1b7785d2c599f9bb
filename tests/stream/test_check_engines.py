"""``uqeval check --weights`` gives the same rows (paths, values, statuses) on the memory, stream and Dask engines
(issue 37): check scores through the one score fold, so its numbers are score's on every engine."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import write_table

runner = CliRunner()

RULES = """\
require = ["accuracy.mae", "scoring_rule.crps"]
[rules]
"accuracy.mae" = { max = 5 }
"scoring_rule.crps" = { max = 0.5 }
"scoring_rule.nll" = { max = 9 }
"coverage.0.95.coverage" = { min = 0.9 }
"""


def _rows(*args: str) -> list[tuple]:
    r = runner.invoke(app, ["check", *args, "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    doc = json.loads(r.stdout)
    return [(row["path"], row["check"], row["status"], row["value"]) for row in doc["rows"]]


def test_weighted_check_is_one_result_on_every_engine(tmp_path):
    pytest.importorskip("distributed", reason="the Dask extra is not installed")
    rng = np.random.default_rng(3)
    n = 3000
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 1.5, n)
    path = write_table(
        tmp_path / "w.parquet",
        {"y": mu + sd * rng.normal(size=n), "mean": mu, "std": sd, "w": rng.integers(0, 4, n).astype(float)},
    )
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES)
    base = (str(path), "--rules", str(rules), "--weights", "w")
    memory = _rows(*base)
    assert {s for *_, s, _ in memory} >= {"PASS", "FAIL"}  # the crps rule fails: both outcomes compared
    for engine in ("stream", "dask"):
        got = _rows(*base, "--engine", engine, "--chunk-rows", "700")
        assert [r[:3] for r in got] == [r[:3] for r in memory], engine
        for (p, _, _, v), (_, _, _, want) in zip(got, memory):
            assert v == pytest.approx(want, rel=1e-12, abs=1e-12), (engine, p)
