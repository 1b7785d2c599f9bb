"""Gridded forecasts (issue 41) against ``scores`` 2.7.0 and ``xskillscore`` 0.0.29 (values frozen in
tests/reference/data/gridded_reference.json by tests/reference/regen_gridded.py, with the versions): the same
ensemble written as NetCDF and scored by the command line, fully reduced, with ``--preserve-dims`` and with
``--weights lat`` (cos-latitude weights): CRPS (ecdf and fair), MSE/RMSE/MAE, the rank histogram, the Brier
score of a threshold exceedance and the threshold-weighted CRPS (conventions that differ: in the tests)."""

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


@pytest.fixture(scope="module")
def rounded(tmp_path_factory):
    """The reference ensemble and observations rounded to one decimal: values equal to the threshold 0.5."""
    d = np.load(DATA / "gridded_inputs.npz")
    coords = {"time": d["time"], "lat": d["lat"], "lon": d["lon"]}
    ds = xr.Dataset(
        {
            "y": (("time", "lat", "lon"), np.round(d["y"], 1)),
            "t2m": (("time", "lat", "lon", "member"), np.round(d["ens"], 1)),
        },
        coords={**coords, "member": np.arange(d["ens"].shape[-1])},
    )
    path = tmp_path_factory.mktemp("gridded") / "rounded.nc"
    ds.to_netcdf(path)
    return str(path)


def test_brier_of_the_exceedance(forecast, rounded):
    """uqeval's exceedance Brier score is P(Y > t) from the plain ensemble fraction: scores'
    ``brier_score_for_ensemble`` with ``operator.gt`` and ``fair_correction=False`` and xskillscore's
    ``threshold_brier_score`` (properscoring: ``>``), also where members equal the threshold.

    The documented differences: scores' defaults (``>=`` and the fair correction) give 0.121667 on these data
    (uqeval 0.157465: the fair correction), and on the rounded data ``>=`` without the correction gives
    0.155729 against uqeval's 0.151042 (events at the threshold counted)."""
    t = REF["scores"]["threshold"]
    key = f"{t:g}"
    got = _score(forecast, "--threshold", key)["metrics"]["exceedance"][key]["brier"]
    assert got == pytest.approx(REF["scores"]["brier_gt"], **TOL)
    assert got == pytest.approx(REF["xskillscore"]["threshold_brier_score"], **TOL)
    assert got - REF["scores"]["brier_default"] == pytest.approx(0.157465 - 0.121667, abs=1e-6)
    tied = _score(rounded, "--threshold", key)["metrics"]["exceedance"][key]["brier"]
    assert tied == pytest.approx(REF["scores"]["brier_gt_rounded"], **TOL)
    assert tied == pytest.approx(REF["xskillscore"]["threshold_brier_score_rounded"], **TOL)
    assert REF["scores"]["brier_ge_rounded"] - tied == pytest.approx(0.155729 - 0.151042, abs=1e-6)


def test_threshold_weighted_crps(forecast):
    """weighted_scoring.twcrps with ``--tw-threshold t`` (weight 1{z > t}, chaining function max(z, t)) is
    scores' ``tail_tw_crps_for_ensemble(tail="upper", method="ecdf")`` (its fair form differs: 0.140813
    against 0.198905 on these data)."""
    t = f"{REF['scores']['threshold']:g}"
    got = _score(forecast, "--tw-threshold", t)["metrics"]["weighted_scoring"]["twcrps"]
    assert got == pytest.approx(REF["scores"]["twcrps_upper_ecdf"], **TOL)
    assert REF["scores"]["twcrps_upper_fair"] == pytest.approx(0.1408129835, abs=1e-9)
