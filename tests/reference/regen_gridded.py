"""Regenerate the reference values of tests/io/test_labelled_reference.py (issue 41: gridded forecasts).

Writes ``tests/reference/data/gridded_inputs.npz`` (a seeded ensemble on a time x lat x lon grid and its
observations) and ``tests/reference/data/gridded_reference.json``: scores computed by the ``scores`` package
and by ``xskillscore`` on the same arrays. The reference libraries live in a side environment, never in the
project's::

    python -m venv /work/venv-ref41
    /work/venv-ref41/bin/pip install scores==2.7.0 xskillscore==0.0.29 xarray
    /work/venv-ref41/bin/python tests/reference/regen_gridded.py

Versions used for the frozen files: scores 2.7.0, xskillscore 0.0.29, xarray 2026.9.0, numpy 2.4.6
(also written into the JSON). Reference per number:

- CRPS of the ensemble, ecdf and fair: ``scores.probability.crps_for_ensemble(method="ecdf"|"fair")``,
  fully reduced and with ``preserve_dims=["lat"]``; ``xskillscore.crps_ensemble`` (ecdf, via properscoring);
- MSE, RMSE and MAE of the ensemble mean with cos(lat) weights: ``scores.continuous.mse/rmse/mae``
  (``weights=``, fully reduced and ``preserve_dims=["lat", "lon"]`` (no weighting within one latitude)),
  and ``xskillscore.mse/rmse/mae`` with ``weights=`` over every dimension;
- rank histogram: ``scores.probability.rank_histogram`` (relative frequencies; x N rows = counts) and
  ``xskillscore.rank_histogram`` (counts; the data have no ties, so its random tie-breaking never acts);
- Brier score of the exceedance of ``THRESHOLD`` from the ensemble (the share of members above it):
  ``scores.probability.brier_score_for_ensemble`` with ``event_threshold_operator=operator.gt`` and
  ``fair_correction=False`` (uqeval's convention: P(Y > t), the plain ensemble fraction) and with its
  defaults (``operator.ge``, ``fair_correction=True``), on the data and on the data rounded to one decimal
  (values equal to the threshold: where ``>`` and ``>=`` differ); ``xskillscore.threshold_brier_score``
  (properscoring: ``>``, plain fraction);
- threshold-weighted CRPS with the weight 1{z > THRESHOLD} (chaining function max(z, t)):
  ``scores.probability.tail_tw_crps_for_ensemble(tail="upper", method="ecdf"|"fair")``.
"""

from __future__ import annotations

import json
import operator
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "data"
INPUTS = HERE / "gridded_inputs.npz"
OUT = HERE / "gridded_reference.json"
T, LAT, LON, M = 8, 4, 5, 6
LATS = np.array([-60.0, -20.0, 10.0, 50.0])
LONS = np.array([0.0, 72.0, 144.0, 216.0, 288.0])
THRESHOLD = 0.5


def make_inputs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(41)
    y = rng.normal(size=(T, LAT, LON))
    ens = y[..., None] + 0.3 + rng.normal(scale=1.4, size=(T, LAT, LON, M))
    return {"y": y, "ens": ens, "lat": LATS, "lon": LONS, "time": np.arange(T)}


def main() -> None:
    import scores
    import xarray as xr
    import xskillscore as xs
    from scores.continuous import mae, mse, rmse
    from scores.probability import (
        brier_score_for_ensemble,
        crps_for_ensemble,
        rank_histogram,
        tail_tw_crps_for_ensemble,
    )

    data = make_inputs()
    HERE.mkdir(exist_ok=True)
    np.savez(INPUTS, **data)
    coords = {"time": data["time"], "lat": data["lat"], "lon": data["lon"]}
    obs = xr.DataArray(data["y"], dims=("time", "lat", "lon"), coords=coords)
    fc = xr.DataArray(
        data["ens"], dims=("time", "lat", "lon", "member"), coords={**coords, "member": np.arange(M)}
    )
    mean = fc.mean("member")
    w = np.cos(np.deg2rad(obs["lat"]))
    wfull = w.broadcast_like(obs)

    def brier(f, o, op, fair) -> float:
        value = brier_score_for_ensemble(
            f, o, "member", THRESHOLD, event_threshold_operator=op, fair_correction=fair
        )
        return float(value.squeeze())

    def tw(f, o, method) -> float:
        return float(tail_tw_crps_for_ensemble(f, o, "member", THRESHOLD, tail="upper", method=method))

    fc_r, obs_r = fc.round(1), obs.round(1)

    def per_lat(da) -> dict[str, float]:
        return {f"{float(la):g}": float(v) for la, v in zip(da["lat"].values, da.values)}

    ref: dict[str, object] = {
        "versions": {
            "scores": scores.__version__,
            "xskillscore": xs.__version__,
            "xarray": xr.__version__,
            "numpy": np.__version__,
        },
        "scores": {
            "crps_ecdf": float(crps_for_ensemble(fc, obs, "member", method="ecdf")),
            "crps_fair": float(crps_for_ensemble(fc, obs, "member", method="fair")),
            "crps_ecdf_per_lat": per_lat(
                crps_for_ensemble(fc, obs, "member", method="ecdf", preserve_dims=["lat"])
            ),
            "crps_fair_per_lat": per_lat(
                crps_for_ensemble(fc, obs, "member", method="fair", preserve_dims=["lat"])
            ),
            "mse_coslat": float(mse(mean, obs, weights=w)),
            "rmse_coslat": float(rmse(mean, obs, weights=w)),
            "mae_coslat": float(mae(mean, obs, weights=w)),
            "mae_per_cell": mae(mean, obs, preserve_dims=["lat", "lon"]).values.tolist(),
            "rmse_per_cell": rmse(mean, obs, preserve_dims=["lat", "lon"]).values.tolist(),
            "rank_histogram_counts": (rank_histogram(fc, obs, "member").values * obs.size).tolist(),
            "threshold": THRESHOLD,
            "brier_gt": brier(fc, obs, operator.gt, False),
            "brier_default": brier(fc, obs, operator.ge, True),
            "brier_gt_rounded": brier(fc_r, obs_r, operator.gt, False),
            "brier_ge_rounded": brier(fc_r, obs_r, operator.ge, False),
            "brier_default_rounded": brier(fc_r, obs_r, operator.ge, True),
            "twcrps_upper_ecdf": tw(fc, obs, "ecdf"),
            "twcrps_upper_fair": tw(fc, obs, "fair"),
        },
        "xskillscore": {
            "crps_ensemble": float(xs.crps_ensemble(obs, fc, member_dim="member")),
            "mse_coslat": float(xs.mse(obs, mean, dim=["time", "lat", "lon"], weights=wfull)),
            "rmse_coslat": float(xs.rmse(obs, mean, dim=["time", "lat", "lon"], weights=wfull)),
            "mae_coslat": float(xs.mae(obs, mean, dim=["time", "lat", "lon"], weights=wfull)),
            "rank_histogram_counts": xs.rank_histogram(
                obs, fc, dim=["time", "lat", "lon"], member_dim="member"
            )
            .values.astype(float)
            .tolist(),
            "threshold_brier_score": float(
                xs.threshold_brier_score(obs, fc, THRESHOLD, member_dim="member", dim=["time", "lat", "lon"])
            ),
            "threshold_brier_score_rounded": float(
                xs.threshold_brier_score(
                    obs_r, fc_r, THRESHOLD, member_dim="member", dim=["time", "lat", "lon"]
                )
            ),
        },
    }
    OUT.write_text(json.dumps(ref, indent=1) + "\n")
    print(json.dumps(ref, indent=1))


if __name__ == "__main__":
    main()
