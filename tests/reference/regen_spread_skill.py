"""Recompute the reference values of the spread–skill ratio (issue 25).

Frozen in ``tests/reference/data/spread_skill_reference.json`` (inputs and values), read by
``tests/metrics/test_spread_skill.py``. Needs the reference libraries in a side venv (CI never runs this)::

    uv venv /work/venv-ref-spread && uv pip install --python /work/venv-ref-spread xskillscore scores
    /work/venv-ref-spread/bin/python tests/reference/regen_spread_skill.py

Frozen with xskillscore 0.0.29, scores 2.7.0 and xarray 2026.9.0. Neither ships a spread–skill function
(searched: no ``spread`` in their APIs), so the reference is the convention that verification code built
on them uses: ``xskillscore.rmse`` of the ensemble mean against the observations, and the root mean of
xarray's member variance, ``ens.var("member")`` (ddof 0, xarray's default) or with ``ddof=1``. Neither
applies the (M + 1)/M correction; the test checks the relation
``uqeval = xs_ratio_ddof0 · √((M + 1)/(M − 1)) = xs_ratio_ddof1 · √((M + 1)/M)``. ``scores.continuous.rmse``
of the ensemble mean is frozen as a second, independent RMSE (it must equal xskillscore's).

Data sets: ``calibrated``: y and 5 members iid from N(mu_i, sigma_i) (seeded, 200 rows);
``underdispersed``: 10 members with half the spread of the truth (seeded, 150 rows).
"""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent / "data"


def cases() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(2025)
    out = {}
    for name, n, m, shrink in (("calibrated", 200, 5, 1.0), ("underdispersed", 150, 10, 0.5)):
        mu = rng.normal(size=n)
        sigma = np.exp(rng.normal(scale=0.4, size=n))
        y = rng.normal(mu, sigma)
        members = rng.normal(mu[:, None], shrink * sigma[:, None], size=(n, m))
        out[name] = (np.round(members, 12), np.round(y, 12))
    return out


def main() -> None:
    import scores
    import xarray as xr
    import xskillscore as xs

    result: dict = {
        "libraries": {
            "xskillscore": version("xskillscore"),
            "scores": version("scores"),
            "xarray": version("xarray"),
        },
        "cases": {},
    }
    for name, (members, y) in cases().items():
        ens = xr.DataArray(members, dims=("row", "member"))
        obs = xr.DataArray(y, dims=("row",))
        mean = ens.mean("member")
        rmse = float(xs.rmse(mean, obs, dim="row"))
        rmse_scores = float(scores.continuous.rmse(mean, obs))
        spread0 = float(np.sqrt(ens.var("member").mean("row")))
        spread1 = float(np.sqrt(ens.var("member", ddof=1).mean("row")))
        result["cases"][name] = {
            "members": members.tolist(),
            "y": y.tolist(),
            "xs_rmse": rmse,
            "scores_rmse": rmse_scores,
            "xs_ratio_ddof0": spread0 / rmse,
            "xs_ratio_ddof1": spread1 / rmse,
        }
    HERE.mkdir(exist_ok=True)
    (HERE / "spread_skill_reference.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
