"""Recompute the reference values frozen in tests/reference/data/weighted_scores.npz.

Used by tests/metrics/test_verification.py (threshold- and outcome-weighted CRPS, threshold
exceedance, Murphy curves). Reference libraries, in a side virtual environment, never in the
project's Python::

    python -m venv /work/venvs/w16scores
    /work/venvs/w16scores/bin/pip install scoringrules==0.10.0 scores==2.7.0 statsmodels==0.15.0 \
        numpy scipy pandas
    /work/venvs/w16scores/bin/python tests/reference/regen_weighted_scores.py

Two data sets:

* ``synth``: seeded Gaussian forecasts (N = 200), a 20-member ensemble drawn from them and their
  quantiles at 0.1, 0.5, 0.9;
* ``sunspots``: the yearly sunspot numbers bundled with statsmodels (1700-2008), forecast one
  year ahead by an AR(2) model fitted by least squares on the whole series, with a Gaussian
  predictive distribution of the residual standard deviation; the ensemble is 20 quantile-matched
  members of it (the (j + 1/2)/20 quantiles) and the quantiles at 0.1, 0.5, 0.9 are the Gaussian's.

Frozen per data set ``<name>_<key>``: the inputs (y, mu, sd, ens, q), the regions, and:
scoringrules' ``crps_cnormal`` at the censored target (= twCRPS of the Gaussian), ``crps_tnormal``
(= owCRPS of the Gaussian on rows whose target is in the region), ``twcrps_ensemble`` and
``owcrps_ensemble`` (default chaining / weight functions of the region), ``crps_normal``;
scores' ``murphy_score`` (expectile 1/2 of the mean, quantile at each level, expectile 1/2 of
the exceedance probability) on ``murphy_thetas`` grids; scipy's ``norm.sf`` for P(Y > t) and
scores' ``brier_score`` of that probability.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "data" / "weighted_scores.npz"
LEVELS = np.array([0.1, 0.5, 0.9])
M = 20


def datasets() -> dict[str, dict[str, np.ndarray]]:
    from scipy.stats import norm

    rng = np.random.default_rng(16)
    n = 200
    mu = rng.normal(size=n) * 2.0
    sd = rng.uniform(0.3, 2.0, n)
    y = mu + sd * rng.standard_t(5, size=n)
    ens = mu[:, None] + sd[:, None] * rng.normal(size=(n, M))
    synth = {"y": y, "mu": mu, "sd": sd, "ens": ens}

    import statsmodels.api as sm

    series = sm.datasets.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(dtype=np.float64)
    X = np.column_stack([np.ones(series.size - 2), series[1:-1], series[:-2]])
    target = series[2:]
    coef, *_ = np.linalg.lstsq(X, target, rcond=None)
    fit = X @ coef
    resid_sd = float(np.sqrt(np.mean((target - fit) ** 2) * target.size / (target.size - 3)))
    z = norm.ppf((np.arange(M) + 0.5) / M)
    real = {"y": target, "mu": fit, "sd": np.full(target.size, resid_sd), "ens": fit[:, None] + resid_sd * z}
    for d in (synth, real):
        d["q"] = d["mu"][:, None] + d["sd"][:, None] * norm.ppf(LEVELS)
        qs = np.quantile(d["y"], [0.1, 0.75, 0.9])
        d["regions"] = np.array([[qs[1], np.inf], [-np.inf, qs[0]], [qs[0], qs[2]]])
        d["thresholds"] = np.array([qs[0], qs[1]])
    return {"synth": synth, "sunspots": real}


def main() -> None:
    import scores
    import scoringrules as sr
    import xarray as xr
    from scipy.stats import norm
    from scores.continuous import murphy_score, murphy_thetas
    from scores.probability import brier_score

    out: dict[str, np.ndarray] = {"levels": LEVELS}
    for name, d in datasets().items():
        y, mu, sd, ens, q = d["y"], d["mu"], d["sd"], d["ens"], d["q"]
        for k in ("y", "mu", "sd", "ens", "q", "regions", "thresholds"):
            out[f"{name}_{k}"] = d[k]
        out[f"{name}_crps_normal"] = np.asarray(sr.crps_normal(y, mu, sd))
        tw_g, ow_g, tw_e, ow_e = [], [], [], []
        for a, b in d["regions"]:
            tw_g.append(np.asarray(sr.crps_cnormal(np.clip(y, a, b), mu, sd, a, b)))
            inside = (y >= a) & (y <= b)
            ow_g.append(np.where(inside, np.asarray(sr.crps_tnormal(y, mu, sd, a, b)), 0.0))
            tw_e.append(np.asarray(sr.twcrps_ensemble(y, ens, a, b)))
            ow_e.append(np.asarray(sr.owcrps_ensemble(y, ens, a, b)))
        out[f"{name}_twcrps_normal"] = np.array(tw_g)
        out[f"{name}_owcrps_normal"] = np.array(ow_g)
        out[f"{name}_twcrps_ensemble"] = np.array(tw_e)
        out[f"{name}_owcrps_ensemble"] = np.array(ow_e)

        obs = xr.DataArray(y, dims="i")
        fmean = xr.DataArray(mu, dims="i")
        th = murphy_thetas([fmean], obs, "expectile")
        out[f"{name}_murphy_mean_thetas"] = np.asarray(th)
        out[f"{name}_murphy_mean"] = murphy_score(fmean, obs, th, functional="expectile", alpha=0.5)[
            "total"
        ].values
        qth = murphy_thetas([xr.DataArray(q[:, j], dims="i") for j in range(q.shape[1])], obs, "quantile")
        out[f"{name}_murphy_quantile_thetas"] = np.asarray(qth)
        out[f"{name}_murphy_quantile"] = np.array(
            [
                murphy_score(
                    xr.DataArray(q[:, j], dims="i"), obs, qth, functional="quantile", alpha=float(a)
                )["total"].values
                for j, a in enumerate(LEVELS)
            ]
        )
        probs, briers, pcurves = [], [], []
        pth = np.linspace(0.0, 1.0, 101)
        for t in d["thresholds"]:
            p = norm.sf(t, mu, sd)
            o = (y > t).astype(np.float64)
            probs.append(p)
            briers.append(float(brier_score(xr.DataArray(p, dims="i"), xr.DataArray(o, dims="i"))))
            pcurves.append(
                murphy_score(
                    xr.DataArray(p, dims="i"),
                    xr.DataArray(o, dims="i"),
                    pth,
                    functional="expectile",
                    alpha=0.5,
                )["total"].values
            )
        out[f"{name}_exceed_prob"] = np.array(probs)
        out[f"{name}_exceed_brier"] = np.array(briers)
        out[f"{name}_murphy_prob_thetas"] = pth
        out[f"{name}_murphy_prob"] = np.array(pcurves)
    out["versions"] = np.array([f"scoringrules {sr.__version__}", f"scores {scores.__version__}"])
    OUT.parent.mkdir(exist_ok=True)
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
