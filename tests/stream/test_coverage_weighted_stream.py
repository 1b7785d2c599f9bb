"""``uqeval coverage --weights`` on every engine (issue 37): the stream and Dask engines fold each (facet,
point) cell's row count, total weight and weighted sums, and give the memory document to 1e-12."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..cli.test_coverage_weights import _frame

runner = CliRunner()


@pytest.mark.parametrize("classes", [False, True])
def test_weighted_points_equal_on_every_engine(tmp_path, classes, dask_cluster):
    """Weighted coverage streamed in batches of 37 rows and on a local Dask cluster equals memory to 1e-12
    (rows of weight 0 in every batch, a facet of weight 0, a points-by column)."""
    n = 300
    df = _frame(n, 4, classes)
    df["g"] = np.arange(n) % 3
    df["pt"] = np.where(np.arange(n) % 2 == 0, "a", "b")
    w = np.random.default_rng(5).integers(0, 4, n).astype(float)
    w[df["g"].to_numpy() == 2] = 0.0
    df["w"] = w
    path = tmp_path / "m.parquet"
    df.to_parquet(path, row_group_size=70)
    base = ["coverage", str(path), "--by", "g", "--points-by", "pt", "--weights", "w", "--levels", "0.5,0.9"]
    docs = {}
    for engine in (
        ["memory"],
        ["stream", "--chunk-rows", "37"],
        ["dask", "--scheduler", dask_cluster.scheduler_address],
    ):
        r = runner.invoke(app, [*base, "--engine", *engine, "--format", "json"])
        assert r.exit_code == 0, r.output
        docs[engine[0]] = json.loads(r.stdout)
    ref = docs.pop("memory")
    for name, doc in docs.items():
        assert doc["weights"] == ref["weights"], name
        assert len(doc["points"]) == len(ref["points"]) > 0
        for got, want in zip(doc["points"], ref["points"]):
            assert {k: v for k, v in got.items() if not isinstance(v, float)} == {
                k: v for k, v in want.items() if not isinstance(v, float)
            }
            for key, v in want.items():
                if isinstance(v, float):
                    assert got[key] == pytest.approx(v, rel=1e-12, abs=1e-15), (name, key)
