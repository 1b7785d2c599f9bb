"""``score --preserve-dims`` on many kept cells (issue 41, :mod:`uqeval.commands.score.cells`): above
``LIMITS["groups"]`` cells every per-cell metric comes from per-row sums per cell. Each per-cell number must
equal the ``--by`` loop's (every metric run on the group's rows) on the flattened table to 1e-12, weighted
and not, on the memory and stream engines; the metrics not given per cell are named in a note.

The threshold is lowered in these tests (``LIMITS["groups"]``) so that a small grid takes the per-cell path
while the table's ``--by`` takes the loop."""

from __future__ import annotations

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("h5netcdf")
pytest.importorskip("zarr")
pytest.importorskip("pandas")

from uqeval.catalogue.paths import flatten  # noqa: E402
from uqeval.config import LIMITS  # noqa: E402

from .test_labelled import LAT, LON, T, _dataset, _flat_table, _score, runner  # noqa: E402

#: the metrics every cell of an ensemble gets (--diagnostics adds the rank histogram and its test)
PER_CELL = {
    "accuracy.mae",
    "accuracy.marpd",
    "avg_calibration.rms_cal",
    "avg_calibration.ma_cal",
    "avg_calibration.miscal_area",
    "sharpness.sharp",
    "sharpness.mean_std",
    "spread_skill.ratio",
    "scoring_rule.crps",
    "scoring_rule.crps_fair",
    "coverage.0.95.coverage",
    "coverage.0.95.width",
    "coverage.0.95.coverage_error",
    "coverage.0.95.miss_below",
    "coverage.0.95.miss_above",
    "calibration_tests.rank_histogram",
    "calibration_tests.rank_hist_chi2",
    "calibration_tests.rank_hist_chi2_p",
}


@pytest.fixture
def files(tmp_path):
    ds = _dataset(3)
    ds.to_netcdf(tmp_path / "fc.nc")
    ds.chunk({"time": 2}).to_zarr(tmp_path / "fc.zarr", mode="w", consolidated=False)
    table = _flat_table(ds, tmp_path / "flat.parquet")
    table["cell"] = [f"lat={la:g},lon={lo:g}" for la, lo in zip(table["lat"], table["lon"])]
    table.to_parquet(tmp_path / "flat.parquet", index=False)
    return tmp_path


@pytest.fixture
def few_groups(monkeypatch):
    """Cells above 5 take the per-cell path (the grid has 12)."""
    monkeypatch.setitem(LIMITS, "groups", 5)


def _close(cell: dict, loop: dict) -> None:
    for path, value in flatten(cell):
        want = dict(flatten(loop))[path]
        np.testing.assert_allclose(np.asarray(value, float), np.asarray(want, float), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("engine", ["memory", "stream"])
@pytest.mark.parametrize("weights", [(), ("--weights", "lat")])
def test_per_cell_sums_equal_the_by_loop(files, monkeypatch, engine, weights):
    table_weights = ("--weights", "cos_lat") if weights else ()
    loop = _score(str(files / "flat.parquet"), "--by", "cell", "--diagnostics", *table_weights)
    monkeypatch.setitem(LIMITS, "groups", 5)
    doc = _score(
        str(files / "fc.nc"), "--preserve-dims", "lat,lon", "--diagnostics", "--engine", engine, *weights
    )
    values = doc["groups"]["values"]
    assert set(values) == set(loop["groups"]["values"]) and len(values) == LAT * LON
    rank = {p for p in PER_CELL if p.startswith("calibration_tests.")}
    want = PER_CELL - rank if weights else PER_CELL  # (the rank histogram takes no weights)
    for label, entry in values.items():
        assert entry["n_rows"] == T
        assert {p for p, _ in flatten(entry["metrics"])} == want
        _close(entry["metrics"], loop["groups"]["values"][label]["metrics"])
    note = next(n for n in doc["notes"] if "given for the whole data only" in n)
    assert "12 cells" in note and (
        "accuracy.mdae" in note or bool(weights)
    )  # (MdAE: not streamed with weights)


def test_rank_histogram_per_cell_as_the_loop_draws_it(files, few_groups):
    """Ties between members and the target are broken at random per cell from the cell's own data key, as the
    --by loop breaks them: members rounded to one decimal tie with the rounded targets."""
    ds = _dataset(5)
    ds["y"] = ds["y"].round(1)
    ds["forecast"] = ds["forecast"].round(1)
    ds.to_netcdf(files / "ties.nc")
    _flat_table(ds, files / "ties.parquet")
    LIMITS["groups"] = 1_000
    loop = _score(str(files / "ties.parquet"), "--by", "lat", "--diagnostics")
    LIMITS["groups"] = 2
    cells = _score(str(files / "ties.nc"), "--preserve-dims", "lat", "--diagnostics", "--engine", "stream")
    for label, entry in cells["groups"]["values"].items():
        got = entry["metrics"]["calibration_tests"]
        want = loop["groups"]["values"][label.removeprefix("lat=")]["metrics"]["calibration_tests"]
        assert got["rank_histogram"] == want["rank_histogram"]
        assert got["rank_hist_chi2"] == pytest.approx(want["rank_hist_chi2"], rel=1e-12)


def test_stream_chunks_and_zarr_equal_memory(files, few_groups):
    memory = _score(str(files / "fc.nc"), "--preserve-dims", "lat,lon", "--diagnostics", "--engine", "memory")
    chunked = _score(
        str(files / "fc.zarr"),
        "--preserve-dims",
        "lat,lon",
        "--diagnostics",
        "--engine",
        "stream",
        "--chunk-rows",
        "7",
    )
    assert chunked["input"]["format"] == "zarr" and memory["input"]["format"] == "netcdf"
    for label, entry in chunked["groups"]["values"].items():
        _close(entry["metrics"], memory["groups"]["values"][label]["metrics"])


def test_writes_netcdf_zarr_and_maps(files, few_groups):
    nc, store, maps = files / "m.nc", files / "m.zarr", files / "maps"
    doc = _score(
        str(files / "fc.nc"),
        "--preserve-dims",
        "lat,lon",
        "--diagnostics",
        "-o",
        str(nc),
        "--engine",
        "stream",
        "--plot-dir",
        str(maps),
    )
    _score(str(files / "fc.nc"), "--preserve-dims", "lat,lon", "--diagnostics", "-o", str(store))
    for path in (nc, store):
        with xr.open_dataset(path, engine=None if path == nc else "zarr") as m:
            assert m["scoring_rule.crps"].dims == ("lat", "lon")
            assert m["calibration_tests.rank_histogram"].dims == ("lat", "lon", "rank")
            hist = m["calibration_tests.rank_histogram"].sel(lat=-30.0, lon=90.0).values
            want = doc["groups"]["values"]["lat=-30,lon=90"]["metrics"]["calibration_tests"]["rank_histogram"]
            assert hist.tolist() == want
    assert (maps / "map_scoring_rule.crps.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again = runner.invoke(
        __import__("uqeval.cli", fromlist=["app"]).app,
        ["score", str(files / "fc.nc"), "--preserve-dims", "lat,lon", "-o", str(store)],
    )
    assert again.exit_code == 2 and "is a directory" in again.output  # a store is never overwritten


def test_too_many_cells_is_one_clear_error(files, monkeypatch):
    monkeypatch.setitem(LIMITS, "cells", 10)
    from uqeval.cli import app

    result = runner.invoke(app, ["score", str(files / "fc.nc"), "--preserve-dims", "lat,lon"])
    assert result.exit_code != 0
    assert "keeps 12 cells; at most 10" in result.output and "Traceback" not in result.output


def test_curvilinear_latitude_weights(tmp_path):
    """A 2-D latitude coordinate (a curvilinear grid, dims j, i) weights each row by cos(lat) as a column would."""
    ds = _dataset(7).rename({"lat": "j", "lon": "i"})
    lat2d = np.array([[10.0, 20.0, 30.0, 40.0], [-5.0, 0.0, 5.0, 15.0], [60.0, 61.0, 62.0, 63.0]])
    ds = ds.assign_coords(lat=(("j", "i"), lat2d))
    ds.to_netcdf(tmp_path / "curv.nc")
    table = ds.drop_vars("lat")
    flat = _flat_table(table.rename({"j": "lat", "i": "lon"}), tmp_path / "flat.parquet")
    flat["w"] = np.cos(np.deg2rad(np.tile(lat2d.ravel(), T)))
    flat.to_parquet(tmp_path / "flat.parquet", index=False)
    want = _score(str(tmp_path / "flat.parquet"), "--weights", "w")
    got = _score(str(tmp_path / "curv.nc"), "--weights", "lat")
    assert got["input"]["weights"] == "cos(lat)"
    np.testing.assert_allclose(
        got["metrics"]["scoring_rule"]["crps"], want["metrics"]["scoring_rule"]["crps"], rtol=1e-12
    )


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_groups_keeps_the_named_groups_per_cell(files, few_groups, engine):
    """``--groups scoring_rule,calibration_tests`` (what scores and xskillscore compute) gives every cell the CRPS
    and the rank histogram (named, so without --diagnostics) with the numbers of the full run, and nothing else."""
    full = _score(str(files / "fc.nc"), "--preserve-dims", "lat,lon", "--diagnostics", "--engine", engine)
    doc = _score(
        str(files / "fc.nc"),
        "--preserve-dims",
        "lat,lon",
        "--groups",
        "scoring_rule,calibration_tests",
        "--engine",
        engine,
    )
    want = {p for p in PER_CELL if p.split(".")[0] in ("scoring_rule", "calibration_tests")}
    for label, entry in doc["groups"]["values"].items():
        assert {p for p, _ in flatten(entry["metrics"])} == want
        _close(entry["metrics"], full["groups"]["values"][label]["metrics"])
    assert set(doc["metrics"]) <= {"scoring_rule", "calibration_tests"}
