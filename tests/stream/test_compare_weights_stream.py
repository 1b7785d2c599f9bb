"""``compare --weights`` on the stream and Dask engines (issue 25): the weighted sums of the per-row forms, the
Poisson counts times the weights and the sign flips of w_i d_i merge over chunks and partitions, so the
estimates, intervals and p-values equal the in-memory ones for the same seed; rows of weight 0 are dropped
per batch before the rows are numbered, as memory drops them before anything else."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

runner = CliRunner()
N = 900


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("wcompare")
    rng = np.random.default_rng(25)
    y = rng.normal(size=N)
    w = rng.uniform(0.2, 3.0, N)
    w[rng.random(N) < 0.15] = 0.0  # rows of weight 0, scattered over chunks and row groups
    w[291:485] = 0.0  # a whole CSV chunk (150 rows) and a whole row group (97 rows: a Dask partition)
    site = np.array([f"s{v}" for v in rng.integers(0, 23, size=N)], dtype=object)
    out = {"csv": [], "parquet": []}
    for name in ("a", "b"):
        e = rng.normal(size=N + 1)
        cols = {"y": y, "mean": y + 0.4 * (e[1:] + 0.9 * e[:-1]), "std": np.full(N, 0.9), "site": site}
        if name == "a":
            cols["w"] = w  # the weights belong to the rows: the first file holds them
        pq.write_table(pa.table(cols), d / f"{name}.parquet", row_group_size=97)
        pd.DataFrame(cols).to_csv(d / f"{name}.csv", index=False)
        out["csv"].append(str(d / f"{name}.csv"))
        out["parquet"].append(str(d / f"{name}.parquet"))
    return out


def _run(paths, *args, metrics="crps,nll,ma_cal,pinball,coverage"):
    r = runner.invoke(
        app,
        ["compare", *paths, "-f", "json", "-m", metrics, "--weights", "w", "--permutations", "499", *args],
    )
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _assert_same(got, want):
    assert got["weights"]["n_zero"] == want["weights"]["n_zero"] > 194
    assert got["weights"]["sum"] == pytest.approx(want["weights"]["sum"], rel=1e-12)
    assert got["weights"]["not_weighted"] == want["weights"]["not_weighted"]
    assert got["n_rows"] == want["n_rows"] == N
    assert got["settings"].get("resampling") == want["settings"].get("resampling")
    assert list(got["metrics"]) == list(want["metrics"])
    for metric, entry in want["metrics"].items():
        assert got["metrics"][metric]["target"] == entry["target"]
        for model, v in entry["values"].items():
            g = got["metrics"][metric]["values"][model]
            for key in ("estimate", "low", "high", "p_best"):
                if v[key] is None:  # no bootstrap (-b 0): null in both
                    assert g[key] is None, (metric, model, key)
                    continue
                assert g[key] == pytest.approx(v[key], rel=1e-12, abs=1e-14), (metric, model, key)
    assert len(got["tests"]) == len(want["tests"]) > 0
    for g, t in zip(got["tests"], want["tests"]):
        assert (g["metric"], g["model"], g["reference"]) == (t["metric"], t["model"], t["reference"])
        assert g["mean_diff"] == pytest.approx(t["mean_diff"], rel=1e-12, abs=1e-15)
        assert g["permutation_p"] == t["permutation_p"]
        assert g["dm_statistic"] == pytest.approx(t["dm_statistic"], rel=1e-10)
        assert g["dm_p"] == pytest.approx(t["dm_p"], rel=1e-10)
    assert any("row(s) of weight 0 were dropped" in note for note in got["notes"])


CASES = [
    ("-b", "100"),
    ("--cluster", "site", "-b", "100"),
    ("--block-size", "7", "-b", "0"),
    ("--block-size", "1", "-b", "50"),
]


@pytest.mark.parametrize("args", CASES)
def test_stream_equals_memory(files, args):
    want = _run(files["csv"], *args)
    _assert_same(_run(files["csv"], *args, "--engine", "stream", "--chunk-rows", "150"), want)
    _assert_same(_run(files["parquet"], *args, "--engine", "stream", "--chunk-rows", "64"), want)


def test_weights_change_the_answer(files):
    weighted = _run(files["csv"], "-b", "50", "--engine", "stream", "--chunk-rows", "150")
    r = runner.invoke(
        app, ["compare", *files["csv"], "-f", "json", "-m", "crps", "-b", "50", "--engine", "stream"]
    )
    assert r.exit_code == 0, r.output
    plain = json.loads(r.stdout)
    a, b = (x["metrics"]["crps"]["values"]["a"] for x in (weighted, plain))
    assert a["estimate"] != pytest.approx(b["estimate"], rel=1e-6)
    assert "weights" not in plain


def test_order_statistics_are_not_streamed_with_weights(files):
    want = _run(files["csv"], "-b", "0", metrics="crps,mdae")
    got = _run(files["csv"], "-b", "0", "--engine", "stream", "--chunk-rows", "150", metrics="crps,mdae")
    assert "accuracy.mdae" in want["metrics"] and "accuracy.mdae" not in got["metrics"]
    assert "accuracy.mdae" in got["input"]["not_streamed"]
    assert got["metrics"]["crps"]["values"]["a"]["estimate"] == pytest.approx(
        want["metrics"]["crps"]["values"]["a"]["estimate"], rel=1e-12
    )


def test_all_zero_weights_are_an_input_error(tmp_path, files):
    df = pd.read_csv(files["csv"][0])
    df["w"] = 0.0
    df.to_csv(tmp_path / "a.csv", index=False)
    r = runner.invoke(
        app,
        [
            "compare",
            str(tmp_path / "a.csv"),
            files["csv"][1],
            "-m",
            "crps",
            "--weights",
            "w",
            "--engine",
            "stream",
        ],
    )
    assert r.exit_code == 3, r.output
    assert "are all 0" in r.output


def test_dask_equals_memory(files, dask_cluster):
    for args in CASES[:3]:
        want = _run(files["parquet"], *args)
        got = _run(
            files["parquet"],
            *args,
            "--engine",
            "dask",
            "--scheduler",
            dask_cluster.scheduler_address,
            "--chunk-rows",
            "50",
        )
        assert got["input"]["engine"] == "dask"
        _assert_same(got, want)
