"""``--engine dask``: partitions mapped to partial states on a 2-process LocalCluster, tree-reduced
with the stream engine's merge; the JSON equals the in-memory one (exact metrics to 1e-12)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from .test_states import assert_same

distributed = pytest.importorskip(
    "distributed", reason="the Dask extra is not installed (pip install 'uqeval[dask]')"
)

runner = CliRunner()


@pytest.fixture
def cluster(dask_cluster):
    """The session's 2-process LocalCluster (tests/stream/conftest.py)."""
    return dask_cluster


def _write(tmp_path, n_files: int, bad_row: int | None = None):
    rng = np.random.default_rng(7)
    n = 2400
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, n)
    cols = {"y": mu + sd * rng.normal(size=n), "mu": mu, "sigma": sd}
    if bad_row is not None:
        cols["sigma"][bad_row] = -2.0
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.table(cols), whole)
    d = tmp_path / f"parts{n_files}"
    d.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(n), n_files)):
        pq.write_table(
            pa.table({k: v[idx] for k, v in cols.items()}), d / f"part-{i:02d}.parquet", row_group_size=97
        )
    return whole, d


def test_dask_local_cluster_equals_in_memory_for_1_and_8_partitions(tmp_path, cluster):
    for n_files in (1, 8):
        (tmp_path / str(n_files)).mkdir()
        whole, parts = _write(tmp_path / str(n_files), n_files)
        ref = json.loads(runner.invoke(app, ["score", str(whole), "--engine", "memory", "-f", "json"]).stdout)
        result = runner.invoke(
            app,
            [
                "score",
                str(parts),
                "--engine",
                "dask",
                "--scheduler",
                cluster.scheduler_address,
                "--chunk-rows",
                "50",
                "-f",
                "json",
            ],
        )
        assert result.exit_code == 0, result.output
        got = json.loads(result.stdout)
        assert got["input"]["engine"] == "dask" and got["input"]["n_rows"] == 2400
        assert got["input"]["n_partitions"] == n_files  # one task per file (each far below TASK_ROWS)
        assert_same(
            got["metrics"],
            ref["metrics"],
            got["input"]["not_streamed"],
            got["input"]["approximate"],
            got["input"].get("bounds"),
        )
        # the same adversarial draws as in memory: the merged cover-index counts are the whole data's
        assert got["metrics"]["adv_group_calibration"] == ref["metrics"]["adv_group_calibration"]


def test_dask_bad_row_on_a_worker_exits_3_naming_file_and_global_row(tmp_path, cluster):
    _, parts = _write(tmp_path, 8, bad_row=2000)
    out = tmp_path / "out.json"
    result = runner.invoke(
        app,
        [
            "score",
            str(parts),
            "--engine",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--output",
            str(out),
        ],
    )
    assert result.exit_code == 3, result.output
    assert "part-06.parquet" in result.output and "'sigma'" in result.output and "row 2000" in result.output
    assert not out.exists()


def test_dask_reads_a_uri(tmp_path, cluster):
    # the workers open the files through the same pyarrow filesystem as the stream engine (file:// here;
    # s3://, gs://, ... where their filesystem package is installed on the workers)
    whole, parts = _write(tmp_path, 4)
    ref = json.loads(runner.invoke(app, ["score", str(whole), "--engine", "memory", "-f", "json"]).stdout)
    result = runner.invoke(
        app,
        ["score", parts.as_uri(), "--engine", "dask", "--scheduler", cluster.scheduler_address, "-f", "json"],
    )
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["input"]["path"] == parts.as_uri() and got["input"]["n_partitions"] == 4
    assert_same(
        got["metrics"],
        ref["metrics"],
        got["input"]["not_streamed"],
        got["input"]["approximate"],
        got["input"].get("bounds"),
    )


def test_dask_by_equals_the_in_memory_by(tmp_path, cluster):
    # one state per --by label on each worker, merged across tasks; MdAE's second pass per group on the workers
    from .test_by_stream import _same_groups

    rng = np.random.default_rng(11)
    n = 1800
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, n)
    cols = {
        "y": mu + sd * rng.normal(size=n),
        "mu": mu,
        "sigma": sd,
        "region": np.array(["eu", "*us*", "asia"], dtype=object)[rng.integers(0, 3, n)],
    }
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.table(cols), whole)
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(n), 5)):
        pq.write_table(
            pa.table({k: v[idx] for k, v in cols.items()}), parts / f"part-{i}.parquet", row_group_size=101
        )
    ref = json.loads(
        runner.invoke(app, ["score", str(whole), "--by", "region", "--engine", "memory", "-f", "json"]).stdout
    )
    result = runner.invoke(
        app,
        [
            "score",
            str(parts),
            "--by",
            "region",
            "--engine",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--chunk-rows",
            "64",
            "-f",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["input"]["engine"] == "dask" and got["input"]["n_partitions"] == 5
    _same_groups(got, ref)
    assert set(got["groups"]["values"]) == {"eu", "*us*", "asia"}
    assert "mdae" in got["groups"]["values"]["eu"]["metrics"]["accuracy"]  # the per-group second pass ran


def test_dask_coverage_equals_in_memory(tmp_path, cluster):
    # each file's row groups map to (facet, point) cells on the workers; cells add (uqeval.commands.coverage.stream)
    from .test_coverage_stream import _same

    rng = np.random.default_rng(4)
    n = 1500
    mean = rng.normal(size=n)
    y = mean + rng.normal(size=n)
    mean[[7, 900]] = np.nan
    cols = {
        "y": y,
        "mean": mean,
        "std": rng.uniform(0.5, 2.0, n),
        "shift": rng.integers(0, 3, n),
        "corruption": np.array(["blur", "noise", "fog"], dtype=object)[rng.integers(0, 3, n)],
    }
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.table(cols), whole)
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(n), 4)):
        pq.write_table(
            pa.table({k: v[idx] for k, v in cols.items()}), parts / f"part-{i}.parquet", row_group_size=150
        )
    args = [
        "--by",
        "shift",
        "--points-by",
        "corruption",
        "--nan-policy",
        "omit",
        "--levels",
        "0.9,0.5",
        "--name",
        "m",
        "-f",
        "json",
    ]
    ref = runner.invoke(app, ["coverage", str(whole), "--engine", "memory", *args])
    got = runner.invoke(
        app,
        [
            "coverage",
            str(parts),
            "--engine",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--chunk-rows",
            "64",
            *args,
        ],
    )
    assert ref.exit_code == 0 and got.exit_code == 0, got.output
    a, b = json.loads(got.stdout), json.loads(ref.stdout)
    for p in a["points"]:  # the file names differ (a directory and a file); everything else is the same
        p.pop("file", None)
    for p in b["points"]:
        p.pop("file", None)
    _same(a, b)
    bad = runner.invoke(app, ["coverage", str(whole), "--engine", "stream", "--workers", "2"])
    assert bad.exit_code == 2 and "--engine dask" in bad.output


def test_dask_ucc_equals_in_memory_within_bounds(tmp_path, cluster):
    # tasks are global row ranges of the first model; each reads that range of every model (partitioned
    # differently here) and compares their targets; the states merge as a union of cells
    from .test_ucc_stream import _same_document, _write

    rng = np.random.default_rng(8)
    n = 1200
    y, mu = rng.normal(size=n), rng.normal(size=n)
    sd_a, sd_b = rng.uniform(0.5, 2.0, n), np.full(n, 1.2)
    files = []
    for name, sd, pieces in (("a", sd_a, 3), ("b", sd_b, 5)):
        d = tmp_path / name
        d.mkdir()
        for i, idx in enumerate(np.array_split(np.arange(n), pieces)):
            pq.write_table(
                pa.table({"y": y[idx], "mu": mu[idx], "sigma": sd[idx]}),
                d / f"part-{i}.parquet",
                row_group_size=77,
            )
        files.append(str(d))
    whole = [_write(tmp_path / f"{name}.parquet", y, mu, sd) for name, sd in (("a", sd_a), ("b", sd_b))]
    ref = json.loads(runner.invoke(app, ["ucc", *whole, "--engine", "memory", "-f", "json"]).stdout)
    result = runner.invoke(
        app,
        [
            "ucc",
            *files,
            "--engine",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--chunk-rows",
            "50",
            "-f",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    for body in got["models"].values():  # the inputs are directories of several files
        assert body["input"].pop("n_files") > 1 and body["input"]["n_partitions"] == 3
        body["input"]["path"] = str(tmp_path / (Path(body["input"]["path"]).name + ".parquet"))
    for body in ref["models"].values():
        body["input"].pop("n_files", None)
    _same_document(got, ref)
    y2 = y.copy()
    y2[1000] += 1.0
    bad = tmp_path / "bad"
    bad.mkdir()
    pq.write_table(pa.table({"y": y2, "mu": mu, "sigma": sd_b}), bad / "part-0.parquet", row_group_size=300)
    result = runner.invoke(
        app, ["ucc", files[0], str(bad), "--engine", "dask", "--scheduler", cluster.scheduler_address]
    )
    assert result.exit_code == 3 and "row 1000" in result.output, result.output


def test_dask_with_weights_equals_memory(tmp_path, cluster):
    """--weights on Dask (two files, two workers) equals the in-memory run to 1e-12 (issue 25)."""
    from ..test_catalogue_invariants import N, _columns
    from .test_weighted_stream import _agree, _json, _weights

    cols = {**_columns("quantiles", "true"), "w": _weights()}
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, rows in enumerate((slice(0, N // 2), slice(N // 2, N))):
        pq.write_table(
            pa.table({k: np.asarray(v)[rows] for k, v in cols.items()}), parts / f"part-{i}.parquet"
        )
    pq.write_table(pa.table(cols), tmp_path / "whole.parquet")
    args = (
        "--weights",
        "w",
        "--engine",
        "dask",
        "--scheduler",
        cluster.scheduler_address,
        "--chunk-rows",
        "60",
    )
    streamed = _json(parts, *args)
    assert streamed["input"]["engine"] == "dask"
    _agree(_json(tmp_path / "whole.parquet", "--weights", "w"), streamed)
