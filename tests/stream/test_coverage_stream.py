"""``uqeval coverage --engine stream``: the same points as in memory (each is a mean over its cell's rows)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import SAMPLE, write_table

runner = CliRunner()


def _json(args):
    r = runner.invoke(app, ["coverage", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _same(a: dict, b: dict) -> None:
    assert len(a["points"]) == len(b["points"])
    for p, q in zip(a["points"], b["points"]):
        assert {k: v for k, v in p.items() if not isinstance(v, float)} == {
            k: v for k, v in q.items() if not isinstance(v, float)
        }
        for k, v in p.items():
            if isinstance(v, float):
                assert v == pytest.approx(q[k], rel=1e-12, abs=1e-15), k
    assert a["fit"].keys() == b["fit"].keys()
    for facet, by_level in a["fit"].items():
        for lv, fit in by_level.items():
            ref = b["fit"][facet][lv]
            assert fit["fraction_above"] == ref["fraction_above"] and fit["n_points"] == ref["n_points"]
            assert fit["slope"] == pytest.approx(ref["slope"], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "files",
    [
        ["gaussian.parquet", "samples.parquet", "quantiles.parquet"],
        ["classification.parquet", "dirichlet.parquet"],
    ],
)
def test_coverage_streamed_equals_memory(files):
    args = [str(SAMPLE / f) for f in files] + ["--by", "shift", "--levels", "0.9,0.5"]
    ref = _json([*args, "--engine", "memory"])
    for chunk in ("29", "100000"):
        _same(_json([*args, "--engine", "stream", "--chunk-rows", chunk]), ref)


def test_coverage_streamed_points_by_and_nan_omit(tmp_path):
    rng = np.random.default_rng(1)
    n = 600
    mean = rng.normal(size=n)
    y = mean + rng.normal(size=n)
    mean[[5, 300]] = np.nan
    cols = {
        "y": y,
        "mean": mean,
        "std": np.ones(n),
        "shift": rng.integers(0, 2, n),
        "corruption": rng.choice(["blur", "noise", "fog"], n),
    }
    a = write_table(tmp_path / "run1.parquet", cols)
    args = [str(a), "--by", "shift", "--points-by", "corruption", "--nan-policy", "omit"]
    ref = _json([*args, "--engine", "memory"])
    got = _json([*args, "--engine", "stream", "--chunk-rows", "11"])
    _same(got, ref)
    assert sum(p["n_rows"] for p in got["points"]) == n - 2
