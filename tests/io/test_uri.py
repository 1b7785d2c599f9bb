"""Inputs named by URI (issue 14: "any path pyarrow or fsspec can open"): ``file://`` through pyarrow's
own LocalFileSystem, ``memory://`` through fsspec's in-memory filesystem (where fsspec is installed, as
with the Dask extra). Local paths stand in for object stores: the code path is the same
(``pyarrow.fs`` listing, ``open_input_file`` / ``open_input_stream``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.io.source import open_source
from uqeval.io.uri import as_spec, is_uri

from ..stream.test_states import assert_same

runner = CliRunner()


def _cols(n: int = 1500, seed: int = 3) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, n)
    return {"y": mu + sd * rng.normal(size=n), "mu": mu, "sigma": sd}


def _memory_score(tmp_path: Path, cols) -> dict:
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.table(cols), whole)
    res = runner.invoke(app, ["score", str(whole), "--engine", "memory", "-f", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _check(res, ref, n_rows: int, path: str) -> None:
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["input"]["n_rows"] == n_rows and got["input"]["path"] == path
    assert_same(
        got["metrics"],
        ref["metrics"],
        got["input"]["not_streamed"],
        got["input"]["approximate"],
        got["input"].get("bounds"),
    )


def test_as_spec_restores_a_uri_folded_by_path(tmp_path):
    assert as_spec(Path("s3://bucket/preds/x.parquet")) == "s3://bucket/preds/x.parquet"
    assert as_spec("memory://data/x.parquet") == "memory://data/x.parquet"
    assert as_spec(Path("C:/data/x.parquet")) != "C://data/x.parquet"  # a drive letter, not a scheme
    local = tmp_path / "gs:"  # a local directory that happens to look like a scheme wins
    local.mkdir()
    assert as_spec(local / "x") == str(local / "x")
    assert is_uri("file:///tmp/x.parquet") and not is_uri("/tmp/x.parquet") and not is_uri("C:/x.parquet")


def test_file_uri_file_and_directory_equal_in_memory(tmp_path):
    cols = _cols()
    ref = _memory_score(tmp_path, cols)
    parts = tmp_path / "parts"
    (parts / "region=eu").mkdir(parents=True)
    (parts / "region=us").mkdir()
    (parts / "_SUCCESS").write_text("")  # hidden files are skipped, as for local directories
    idx = np.array_split(np.arange(1500), 3)
    for i, (sub, rows) in enumerate(zip(("region=eu", "region=eu", "region=us"), idx)):
        pq.write_table(pa.table({k: v[rows] for k, v in cols.items()}), parts / sub / f"part-{i}.parquet")
    uri = (parts).as_uri()
    src = open_source(uri)
    assert len(src.files) == 3 and all(f.startswith("file:///") for f in src.files)
    res = runner.invoke(app, ["score", uri, "--engine", "stream", "--chunk-rows", "77", "-f", "json"])
    _check(res, ref, 1500, uri)
    one = (tmp_path / "whole.parquet").as_uri()
    # --engine auto streams a URI (the in-memory loader reads local files only)
    _check(runner.invoke(app, ["score", one, "-f", "json", "--quiet"]), ref, 1500, one)
    glob = uri + "/region=eu/part-*.parquet"
    assert len(open_source(glob).files) == 2


def test_memory_uri_through_fsspec_parquet_and_csv(tmp_path):
    fsspec = pytest.importorskip("fsspec", reason="fsspec is not installed (it comes with the Dask extra)")
    cols = _cols(seed=4)
    ref = _memory_score(tmp_path, cols)
    mem = fsspec.filesystem("memory")
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(cols), sink, row_group_size=200)
    mem.pipe("/uqeval-test/preds/a.parquet", sink.getvalue().to_pybytes())
    res = runner.invoke(
        app,
        ["score", "memory://uqeval-test/preds", "--engine", "stream", "--chunk-rows", "101", "-f", "json"],
    )
    _check(res, ref, 1500, "memory://uqeval-test/preds")
    csv_sink = pa.BufferOutputStream()
    pacsv.write_csv(pa.table(cols), csv_sink)
    mem.pipe("/uqeval-test/preds.csv", csv_sink.getvalue().to_pybytes())
    res = runner.invoke(app, ["score", "memory://uqeval-test/preds.csv", "-f", "json"])
    _check(res, ref, 1500, "memory://uqeval-test/preds.csv")
    # a bad value in a later block names the URI, the column and the global row
    bad = dict(cols)
    bad["sigma"] = bad["sigma"].copy()
    bad["sigma"][1234] = -1.0
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(bad), sink, row_group_size=200)
    mem.pipe("/uqeval-test/bad.parquet", sink.getvalue().to_pybytes())
    out = tmp_path / "out.json"
    res = runner.invoke(
        app, ["score", "memory://uqeval-test/bad.parquet", "--chunk-rows", "100", "-o", str(out)]
    )
    assert res.exit_code == 3, res.output
    assert "memory://uqeval-test/bad.parquet" in res.output and "1234" in res.output and "sigma" in res.output
    assert not out.exists()
    mem.rm("/uqeval-test", recursive=True)


def test_uri_errors_are_one_line(tmp_path):
    res = runner.invoke(app, ["score", "nosuchscheme://bucket/x.parquet"])
    assert res.exit_code == 3, res.output
    assert "nosuchscheme://" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["score", (tmp_path / "absent.parquet").as_uri()])
    assert res.exit_code == 3 and "no such file" in res.output
    res = runner.invoke(app, ["score", (tmp_path / "absent.parquet").as_uri(), "--engine", "memory"])
    assert res.exit_code == 2 and "--engine stream" in res.output


def test_compare_and_coverage_take_uris(tmp_path):
    """``str()`` of the CLI's Path folds ``file:///x`` to ``file:/x``; the streamed specs keep the URI."""
    cols = _cols()
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    pq.write_table(pa.table(cols), a)
    pq.write_table(pa.table({**cols, "mu": cols["mu"] + 0.1}), b)
    for command in (["compare", a, b], ["coverage", a, b]):
        local = runner.invoke(app, [command[0], *map(str, command[1:]), "--engine", "stream", "-f", "json"])
        remote = runner.invoke(
            app, [command[0], *(p.as_uri() for p in command[1:]), "--engine", "stream", "-f", "json"]
        )
        assert local.exit_code == 0 and remote.exit_code == 0, remote.output
        got, want = json.loads(remote.stdout), json.loads(local.stdout)
        assert got.get("n_rows") == want.get("n_rows") and len(got.get("points", [])) == len(
            want.get("points", [])
        )
        assert "file:///" in remote.stdout
