"""Recompute the reference values frozen in tests/reference/data/weights_libs.json (weighted metrics from
``scores`` and ``model-diagnostics``, issue 25; scikit-learn's are in regen_weights.py).

Used by tests/test_weights_libs.py. The reference libraries run in a side virtual environment, never in the
project's Python::

    /work/venv/bin/uv venv /work/venv-ref-weights2
    VIRTUAL_ENV=/work/venv-ref-weights2 /work/venv/bin/uv pip install scores model-diagnostics numpy scipy \
        xarray pandas
    /work/venv-ref-weights2/bin/python tests/reference/regen_weights_libs.py

Frozen with scores 2.7.0 and model-diagnostics 1.5.0 (numpy 2.4.6, xarray 2026.9.0, scipy 1.17.1; the exact
versions are written into the JSON).

Data: the seeded data of regen_weights.py (its ``data()``: N = 257 targets, point predictions ``mu``,
quantiles at 0.05, 0.25, 0.5, 0.75, 0.95, 4-class probabilities and labels, weights uniform on [0, 3] with
every 7th row 0), plus, from a second seeded generator, a Gaussian standard deviation ``sd`` and a 12-member
ensemble ``ens``; the binary event is "class 0" with probability ``proba[:, 0]``. All inputs are written
into the JSON, so the test does not regenerate them.

Frozen, every one with the weights ``w`` (scores: an ``xarray.DataArray`` over the row dimension, reduced
over it; scores 2.x takes the weighted mean Σ wᵢ Sᵢ / Σ wᵢ, normalised by the weights' sum, as uqeval):

* scores: ``mse``, ``rmse``, ``mae``, ``nse`` of ``mu``; ``quantile_score`` per level; ``interval_score``
  of the 90% (0.05–0.95) and 50% (0.25–0.75) quantile intervals; ``crps_for_ensemble`` with
  ``method="ecdf"`` and ``method="fair"``; the threshold-weighted ensemble CRPS
  ``tail_tw_crps_for_ensemble`` (upper tail above 0.5) and ``interval_tw_crps_for_ensemble`` (on
  [-0.5, 1]), ``method="ecdf"``; ``brier_score`` of the binary event; ``crps_cdf`` of the Gaussian
  N(mu, sd²), given as its CDF on a 4001-point threshold grid over mu ± 10 sd (exact integration of the
  piecewise-linear CDF: a discretisation, not the closed form);
* model-diagnostics: ``SquaredError`` and ``HomogeneousExpectileScore(degree=2, level=0.5)`` of ``mu``,
  ``HomogeneousQuantileScore(degree=1, level=0.5)`` of ``mu``, ``PinballLoss(level)`` per level,
  ``LogLoss`` and ``SquaredError`` of the binary event's probability, and ``SquaredError`` of each class's
  one-hot indicator against its probability (one value per class).
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from regen_weights import LEVELS, data  # noqa: E402  (the same seeded inputs as the scikit-learn values)

OUT = Path(__file__).parent / "data" / "weights_libs.json"
M = 12  # ensemble members
GRID = 4001  # thresholds of crps_cdf's CDF


def inputs() -> dict[str, np.ndarray]:
    d = data()
    rng = np.random.default_rng(20261128)
    n = d["y"].size
    d["sd"] = rng.uniform(0.5, 1.5, n)
    d["ens"] = d["mu"][:, None] + d["sd"][:, None] * rng.normal(size=(n, M))
    d["is0"] = (d["labels"] == 0).astype(np.int64)
    d["p0"] = d["proba"][:, 0]
    return d


def scores_values(d: dict[str, np.ndarray]) -> dict:
    import xarray as xr
    from scipy.stats import norm
    from scores import continuous as sc, probability as sp
    from scores.processing import aggregate

    def da(a: np.ndarray) -> xr.DataArray:
        return xr.DataArray(a, dims=["row"])

    y, mu, w, q = da(d["y"]), da(d["mu"]), da(d["w"]), d["q"]
    kw = {"reduce_dims": ["row"], "weights": w}
    ens = xr.DataArray(d["ens"], dims=["row", "member"])
    t = d["mu"][:, None] + d["sd"][:, None] * np.linspace(-10.0, 10.0, GRID)  # per-row thresholds
    cdf = norm.cdf(t, d["mu"][:, None], d["sd"][:, None])
    # crps_cdf wants one threshold coordinate: the union of the rows' grids would be too large, so each row
    # is scored on its own grid and the weighted mean is taken by scores' aggregate (the same weighted mean).
    per_row = np.array(
        [
            float(
                sp.crps_cdf(
                    xr.DataArray(cdf[i], dims=["x"], coords={"x": t[i]}),
                    xr.DataArray(d["y"][i]),
                    threshold_dim="x",
                )["total"]
            )
            for i in range(d["y"].size)
        ]
    )
    return {
        "mse": float(sc.mse(mu, y, **kw)),
        "rmse": float(sc.rmse(mu, y, **kw)),
        "mae": float(sc.mae(mu, y, **kw)),
        "nse": float(sc.nse(mu, y, **kw)),
        "quantile_score": [float(sc.quantile_score(da(q[:, j]), y, a, **kw)) for j, a in enumerate(LEVELS)],
        "interval_score_90": float(sc.interval_score(da(q[:, 0]), da(q[:, 4]), y, 0.9, **kw)["total"]),
        "interval_score_50": float(sc.interval_score(da(q[:, 1]), da(q[:, 3]), y, 0.5, **kw)["total"]),
        "crps_for_ensemble_ecdf": float(sp.crps_for_ensemble(ens, y, "member", method="ecdf", **kw)),
        "crps_for_ensemble_fair": float(sp.crps_for_ensemble(ens, y, "member", method="fair", **kw)),
        "tail_tw_crps_for_ensemble_upper_0.5": float(
            sp.tail_tw_crps_for_ensemble(ens, y, "member", 0.5, tail="upper", method="ecdf", **kw)
        ),
        "interval_tw_crps_for_ensemble_-0.5_1": float(
            sp.interval_tw_crps_for_ensemble(ens, y, "member", -0.5, 1.0, method="ecdf", **kw)
        ),
        "brier_score": float(sp.brier_score(da(d["p0"].astype(float)), da(d["is0"].astype(float)), **kw)),
        "crps_cdf_gaussian": float(aggregate(da(per_row), reduce_dims=["row"], weights=w)),
    }


def model_diagnostics_values(d: dict[str, np.ndarray]) -> dict:
    from model_diagnostics import scoring as ms

    y, mu, w = d["y"], d["mu"], d["w"]
    onehot = (d["labels"][:, None] == np.arange(d["proba"].shape[1])).astype(float)
    return {
        "SquaredError": float(ms.SquaredError()(y, mu, weights=w)),
        "HomogeneousExpectileScore_2_0.5": float(
            ms.HomogeneousExpectileScore(degree=2, level=0.5)(y, mu, weights=w)
        ),
        "HomogeneousQuantileScore_1_0.5": float(
            ms.HomogeneousQuantileScore(degree=1, level=0.5)(y, mu, weights=w)
        ),
        "PinballLoss": [
            float(ms.PinballLoss(level=a)(y, d["q"][:, j], weights=w)) for j, a in enumerate(LEVELS)
        ],
        "LogLoss_binary": float(ms.LogLoss()(d["is0"], d["p0"], weights=w)),
        "SquaredError_binary": float(ms.SquaredError()(d["is0"], d["p0"], weights=w)),
        "SquaredError_per_class": [
            float(ms.SquaredError()(onehot[:, k], d["proba"][:, k], weights=w))
            for k in range(onehot.shape[1])
        ],
    }


def main() -> None:
    d = inputs()
    libs = ("scores", "model-diagnostics", "numpy", "xarray", "scipy")
    out = {
        "library": ", ".join(f"{p} {version(p)}" for p in libs),
        "data": {k: v.tolist() for k, v in d.items()},
        "scores": scores_values(d),
        "model_diagnostics": model_diagnostics_values(d),
    }
    OUT.write_text(json.dumps(out) + "\n")  # one line: the data are 257 rows of numbers
    print(f"wrote {OUT} ({out['library']})")


if __name__ == "__main__":
    main()
