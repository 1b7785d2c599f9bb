"""``compare --cluster`` and ``--block-size`` on the stream and Dask engines (issue 25): the per-cluster and
per-block sums merge over chunks and partitions, so the intervals and p-values equal the in-memory ones for
the same seed; the circular block bootstrap and ``--block-size auto`` keep the per-row forms and run memory's
functions on them when every row is in (issue 37)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("units")
    rng = np.random.default_rng(9)
    n = 1200
    y = rng.normal(size=n)
    site = np.array([f"s{v}" for v in rng.integers(0, 37, size=n)], dtype=object)
    site[5] = 17  # mixed label types: numbers and strings group by their text, as in memory
    out = {"csv": [], "parquet": []}
    for name in ("a", "b"):
        e = rng.normal(size=n + 1)
        cols = {"y": y, "mean": y + 0.4 * (e[1:] + 0.9 * e[:-1]), "std": np.ones(n), "site": site.astype(str)}
        pq.write_table(pa.table(cols), d / f"{name}.parquet", row_group_size=97)
        import pandas as pd

        pd.DataFrame(cols).to_csv(d / f"{name}.csv", index=False)
        out["csv"].append(str(d / f"{name}.csv"))
        out["parquet"].append(str(d / f"{name}.parquet"))
    return out


def _run(paths, *args):
    r = runner.invoke(
        app,
        ["compare", *paths, "-f", "json", "-m", "crps,nll,ma_cal", "--permutations", "499", *args],
    )
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _assert_same(got, want):
    assert got["settings"]["resampling"] == want["settings"]["resampling"]
    for metric, entry in want["metrics"].items():
        for model, v in entry["values"].items():
            w = got["metrics"][metric]["values"][model]
            for key in ("estimate", "low", "high", "p_best"):
                if v[key] is None:  # no bootstrap (-b 0): null in both
                    assert w[key] is None, (metric, model, key)
                    continue
                assert w[key] == pytest.approx(v[key], rel=1e-12, abs=1e-14, nan_ok=True), (
                    metric,
                    model,
                    key,
                )
    assert [t["permutation_p"] for t in got["tests"]] == [t["permutation_p"] for t in want["tests"]]
    assert [t["dm_p"] for t in got["tests"]] == pytest.approx([t["dm_p"] for t in want["tests"]], rel=1e-10)


@pytest.mark.parametrize(
    "args",
    [
        ("--cluster", "site", "-b", "200"),
        ("--block-size", "7", "-b", "0"),
        ("--block-size", "1", "-b", "50"),
        ("--block-size", "7", "-b", "200"),  # the circular block bootstrap (issue 37)
        ("--block-size", "auto", "-b", "200"),
        ("--block-size", "auto", "-b", "0"),
    ],
)
def test_stream_equals_memory(files, args):
    want = _run(files["csv"], *args)
    assert want["settings"]["resampling"]["unit"] in ("cluster", "block")
    for chunk in ("150", "1000"):  # a cluster and a block straddle chunks
        _assert_same(_run(files["csv"], *args, "--engine", "stream", "--chunk-rows", chunk), want)
    _assert_same(_run(files["parquet"], *args, "--engine", "stream", "--chunk-rows", "64"), want)


def test_clusters_change_the_answer(files):
    rows = _run(files["csv"], "-b", "200")
    clusters = _run(files["csv"], "--cluster", "site", "-b", "200", "--engine", "stream")
    assert rows["metrics"]["crps"]["values"]["a"]["low"] != clusters["metrics"]["crps"]["values"]["a"]["low"]
    assert clusters["settings"]["resampling"] == {"unit": "cluster", "clusters": 38}


@pytest.mark.parametrize(
    "args,message",
    [
        (("--cluster", "nosuch"), "column 'nosuch' not found"),
    ],
)
def test_stream_refusals(files, args, message):
    r = runner.invoke(app, ["compare", *files["csv"], "-m", "crps", "--engine", "stream", *args])
    assert r.exit_code in (2, 3), r.output
    assert message in r.output


def test_dask_equals_memory(files, scheduler):
    for args in (
        ("--cluster", "site", "-b", "200"),
        ("--block-size", "7", "-b", "0"),
        ("--block-size", "7", "-b", "200"),
        ("--block-size", "auto", "-b", "100"),
    ):
        want = _run(files["parquet"], *args)
        got = _run(
            files["parquet"], *args, "--engine", "dask", "--scheduler", scheduler, "--chunk-rows", "50"
        )
        assert got["input"]["engine"] == "dask"
        _assert_same(got, want)
