"""``coverage --weights`` (issue 25): each point's coverage and mean width (set size) are the catalogue's
weighted values; integer weights equal repeated rows, weights of 0 drop rows (a point whose weights are all
0 has no record); the stream and Dask engines give the memory document (issue 37)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

runner = CliRunner()


def _frame(n: int, seed: int, classes: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if classes:
        p = rng.dirichlet(np.ones(3), n)
        return pd.DataFrame({"y": rng.integers(0, 3, n), "p_0": p[:, 0], "p_1": p[:, 1], "p_2": p[:, 2]})
    mu = rng.normal(size=n)
    return pd.DataFrame({"y": mu + rng.normal(size=n) * 1.2, "mu": mu, "sigma": rng.uniform(0.5, 2.0, n)})


def _points(doc: dict) -> dict:
    return {(r["method"], r["facet"], r["level"]): r for r in doc["points"]}


@pytest.mark.parametrize("classes", [False, True])
def test_integer_weights_are_repeated_rows(tmp_path, classes):
    n = 240
    df = _frame(n, 1, classes)
    df["g"] = np.arange(n) % 3
    w = np.random.default_rng(2).integers(0, 4, n)
    w[df["g"].to_numpy() == 2] = 0  # group 2 has no weight: no point
    df["w"] = w.astype(float)
    df.to_csv(tmp_path / "m.csv", index=False)
    df.loc[df.index.repeat(w)].drop(columns="w").to_csv(tmp_path / "r_m.csv", index=False)
    base = ["coverage", "--by", "g", "--levels", "0.5,0.9", "--format", "json"]
    r = runner.invoke(app, [*base, str(tmp_path / "m.csv"), "--weights", "w"])
    assert r.exit_code == 0, r.output
    weighted = json.loads(r.stdout)
    r = runner.invoke(app, [*base, str(tmp_path / "r_m.csv")])
    assert r.exit_code == 0, r.output
    repeated = json.loads(r.stdout)
    assert weighted["weights"] == {
        "column": "w",
        "sum": float(w.sum()),
        "n_zero": int((w == 0).sum()),
        "not_weighted": {},
    }
    got, want = _points(weighted), _points(repeated)
    assert {k[1] for k in got} == {"0", "1"}  # the group of weight 0 has no point
    assert len(got) == 4
    for (_, facet, level), rec in got.items():
        other = want[("r_m", facet, level)]
        for key in ("coverage", "width"):
            assert rec[key] == pytest.approx(other[key], rel=1e-12), (facet, level, key)


def test_the_table_says_weighted(tmp_path):
    df = _frame(50, 3)
    df["w"] = 1.0
    df.to_csv(tmp_path / "m.csv", index=False)
    r = runner.invoke(app, ["coverage", str(tmp_path / "m.csv"), "--weights", "w", "--format", "markdown"])
    assert r.exit_code == 0 and "| coverage (weighted) | width (weighted) |" in r.output, r.output


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_a_file_whose_rows_kept_all_weigh_0_is_refused_on_every_engine(tmp_path, engine):
    """After --nan-policy omit only rows of weight 0 are left: exit 3 with one line on every engine (memory
    wrote an empty document, and drew nothing but a traceback with --plot; stream blamed NaN)."""
    f = tmp_path / "mix.csv"
    pd.DataFrame({"y": [1.0, np.nan, 3.0], "mean": [1.0, 2.0, 3.0], "std": 1.0, "w": [0.0, 1.0, 0.0]}).to_csv(
        f, index=False
    )
    args = ["coverage", str(f), "--weights", "w", "--nan-policy", "omit", "--engine", engine]
    for extra in ([], ["--plot", str(tmp_path / "p.png")]):
        res = runner.invoke(app, args + extra)
        assert res.exit_code == 3, res.output
        assert res.stderr.strip().splitlines() == [
            f"error: {f}: the weights are all 0 on the rows kept: no row counts; give some rows a positive weight"
        ]
        assert not (tmp_path / "p.png").exists()
