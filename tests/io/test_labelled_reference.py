"""Gridded forecasts (issue 41) against ``scores`` 2.7.0 and ``xskillscore`` 0.0.29 (values frozen in
tests/reference/data/gridded_reference.json by tests/reference/regen_gridded.py, with the versions): the same
ensemble written as NetCDF and scored by the command line, fully reduced, with ``--preserve-dims`` and with
``--weights lat`` (cos-latitude weights)."""

from __future__ import annotations

import json

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("h5netcdf")

from ..conftest import ROOT  # noqa: E402
from .test_labelled import _score  # noqa: E402

DATA = ROOT / "tests" / "reference" / "data"
REF = json.loads((DATA / "gridded_reference.json").read_text())
TOL = dict(rel=1e-12, abs=1e-12)


@pytest.fixture(scope="module")
def forecast(tmp_path_factory):
    d = np.load(DATA / "gridded_inputs.npz")
    coords = {"time": d["time"], "lat": d["lat"], "lon": d["lon"]}
    ds = xr.Dataset(
        {"y": (("time", "lat", "lon"), d["y"]), "t2m": (("time", "lat", "lon", "member"), d["ens"])},
        coords={**coords, "member": np.arange(d["ens"].shape[-1])},
    )
    path = tmp_path_factory.mktemp("gridded") / "forecast.nc"
    ds.to_netcdf(path)
    return str(path)


def test_crps_ecdf_and_fair(forecast):
    rule = _score(forecast)["metrics"]["scoring_rule"]
    assert rule["crps"] == pytest.approx(REF["scores"]["crps_ecdf"], **TOL)
    assert rule["crps"] == pytest.approx(REF["xskillscore"]["crps_ensemble"], **TOL)
    assert rule["crps_fair"] == pytest.approx(REF["scores"]["crps_fair"], **TOL)


def test_crps_per_latitude(forecast):
    groups = _score(forecast, "--preserve-dims", "lat")["groups"]["values"]
    for lat, want in REF["scores"]["crps_ecdf_per_lat"].items():
        assert groups[f"lat={lat}"]["metrics"]["scoring_rule"]["crps"] == pytest.approx(want, **TOL)
    for lat, want in REF["scores"]["crps_fair_per_lat"].items():
        assert groups[f"lat={lat}"]["metrics"]["scoring_rule"]["crps_fair"] == pytest.approx(want, **TOL)


def test_latitude_weighted_errors(forecast):
    acc = _score(forecast, "--weights", "lat")["metrics"]["accuracy"]
    for lib in ("scores", "xskillscore"):
        assert acc["mae"] == pytest.approx(REF[lib]["mae_coslat"], **TOL), lib
        assert acc["rmse"] == pytest.approx(REF[lib]["rmse_coslat"], **TOL), lib
        assert acc["rmse"] ** 2 == pytest.approx(REF[lib]["mse_coslat"], **TOL), lib


def test_errors_per_grid_point(forecast, tmp_path):
    out = tmp_path / "metrics.nc"
    _score(forecast, "--preserve-dims", "lat,lon", "-o", str(out))
    with xr.open_dataset(out) as m:
        np.testing.assert_allclose(m["accuracy.mae"].values, REF["scores"]["mae_per_cell"], rtol=1e-12)
        np.testing.assert_allclose(m["accuracy.rmse"].values, REF["scores"]["rmse_per_cell"], rtol=1e-12)


def test_rank_histogram(forecast):
    counts = _score(forecast, "--diagnostics")["metrics"]["calibration_tests"]["rank_histogram"]
    assert counts == pytest.approx(REF["scores"]["rank_histogram_counts"], **TOL)
    assert counts == REF["xskillscore"]["rank_histogram_counts"]
