"""A Zarr store on the Dask engine (issue 41): its flattened row groups are the partitions, and the per-cell
metrics of --preserve-dims equal the stream engine's to 1e-12."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from uqeval.cli import app

pytest.importorskip("distributed", reason="the Dask extra is not installed (pip install 'uqeval[dask]')")
pytest.importorskip("xarray", reason="the xarray extra is not installed (pip install 'uqeval[xarray]')")
pytest.importorskip("zarr")

from ..io.test_labelled import _dataset, _same  # noqa: E402

runner = CliRunner()


def test_zarr_on_dask_equals_stream(tmp_path, dask_cluster):
    store = tmp_path / "fc.zarr"
    _dataset().chunk({"time": 2}).to_zarr(store, mode="w", consolidated=False)

    def run(*engine: str) -> dict:
        result = runner.invoke(app, ["score", str(store), "--preserve-dims", "lat", *engine, "-f", "json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout[result.stdout.index("{") :])

    memory = run("--engine", "stream", "--chunk-rows", "12")
    dask = run("--engine", "dask", "--chunk-rows", "12", "--scheduler", dask_cluster.scheduler_address)
    assert dask["input"]["engine"] == "dask"
    for key, entry in dask["groups"]["values"].items():
        _same(
            entry["metrics"],
            {k: v for k, v in memory["groups"]["values"][key]["metrics"].items() if k in entry["metrics"]},
        )


def test_many_cells_on_dask_equal_stream(tmp_path, dask_cluster, monkeypatch):
    """Above ``LIMITS["groups"]`` kept cells (lowered here: the choice is made before the workers run) each
    task keeps per-cell sums; the tree-reduced sums give the stream engine's numbers to 1e-12."""
    from uqeval.config import LIMITS

    monkeypatch.setitem(LIMITS, "groups", 5)
    store = tmp_path / "fc.zarr"
    _dataset(2).chunk({"time": 2}).to_zarr(store, mode="w", consolidated=False)

    def run(*engine: str) -> dict:
        result = runner.invoke(
            app, ["score", str(store), "--preserve-dims", "lat,lon", "--diagnostics", *engine, "-f", "json"]
        )
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout[result.stdout.index("{") :])

    stream = run("--engine", "stream", "--chunk-rows", "12")
    dask = run("--engine", "dask", "--chunk-rows", "12", "--scheduler", dask_cluster.scheduler_address)
    assert dask["input"]["engine"] == "dask" and len(dask["groups"]["values"]) == 12
    for key, entry in dask["groups"]["values"].items():
        _same(entry["metrics"], stream["groups"]["values"][key]["metrics"])
