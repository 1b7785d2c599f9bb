"""Regenerate the data and reference values of tests/metrics/test_skill.py (skill scores, issue 16).

Reference libraries (never imported by uqeval or its tests): ``scores`` 2.7.0 (Bureau of
Meteorology: ``crps_for_ensemble`` with ``method="ecdf"``, ``quantile_score``, ``mse``, ``mae``,
``brier_score``) and scoringrules 0.10.0 (``crps_normal``, ``interval_score``,
``weighted_interval_score``); the real data set is statsmodels' bundled yearly sunspot numbers.
Neither library has a skill-score function: each computes the per-row scores of the model and of
the reference, and the skill is ``1 - mean(S) / mean(S_ref)`` of those (the log score's:
``mean(S_ref) - mean(S)``, issue 25). Run in a side venv::

    python -m venv /work/venvs/w16scores
    /work/venvs/w16scores/bin/pip install scores==2.7.0 scoringrules==0.10.0 statsmodels xarray numpy scipy pandas
    /work/venvs/w16scores/bin/python tests/reference/regen_skill.py

It writes ``tests/reference/data/skill_*.csv`` (inputs) and ``skill_expected.json`` (values).

Data sets
---------
1. *sunspots* (real): yearly sunspot numbers 1700-2008; an AR(1) model fitted by least squares on
   1700-1899 forecasts each year of 1900-2008 one step ahead as N(c + phi y_{t-1}, s^2) (s: residual
   std). References: the climatology of 1700-1899 and persistence (last year's number).
2. *simulated*: 400 rows, y ~ N(mu, sd); a quantile model (levels 0.05 .. 0.95 of a too-narrow
   normal) against the true Gaussian as a reference file, against the climatology of 1000 training
   draws of the same process; and a binary classifier with base rates as the reference.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "data"
LEVELS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
TOOLBOX = np.linspace(0.01, 0.99, 99)


def sunspots() -> dict:
    import statsmodels.api as sm

    d = sm.datasets.sunspots.load_pandas().data
    year, y = d["YEAR"].to_numpy().astype(int), d["SUNACTIVITY"].to_numpy(dtype=float)
    train = year < 1900
    x0, x1 = y[:-1][train[1:]], y[1:][train[1:]]
    phi, c = np.polyfit(x0, x1, 1)
    s = float(np.std(x1 - (c + phi * x0), ddof=2))
    test = np.flatnonzero(~train)
    mu = c + phi * y[test - 1]
    return {"year": year[test], "y": y[test], "mu": mu, "sigma": np.full(test.size, s), "train": y[train]}


def simulated() -> dict:
    from scipy.stats import norm

    rng = np.random.default_rng(16)
    n = 400
    mu = rng.normal(0, 2, n)
    sd = rng.uniform(0.5, 1.5, n)
    y = mu + sd * rng.normal(size=n)
    q = mu[:, None] + 0.7 * sd[:, None] * norm.ppf(LEVELS)
    train_mu = rng.normal(0, 2, 1000)
    train = train_mu + rng.uniform(0.5, 1.5, 1000) * rng.normal(size=1000)
    p1 = 1 / (1 + np.exp(-1.5 * mu))
    label = (rng.uniform(size=n) < 1 / (1 + np.exp(-2.0 * mu))).astype(int)
    train_label = (rng.uniform(size=1000) < 0.4).astype(int)
    return {
        "y": y,
        "mu": mu,
        "sd": sd,
        "q": q,
        "train": train,
        "p1": p1,
        "label": label,
        "train_label": train_label,
    }


def write_csv(name: str, cols: dict) -> None:
    import pandas as pd

    pd.DataFrame(cols).to_csv(HERE / name, index=False, float_format="%.17g")


def main() -> None:
    import scores
    import scoringrules as sr
    import xarray as xr
    from scipy.stats import norm
    from scores.continuous import mae, mse, quantile_score
    from scores.probability import brier_score, crps_for_ensemble

    HERE.mkdir(exist_ok=True)

    def da(a, *dims):
        return xr.DataArray(np.asarray(a, dtype=float), dims=dims)

    def crps_clim(y, train):  # the training targets as every row's ensemble, scores' ECDF CRPS
        ens = np.broadcast_to(train, (y.size, train.size))
        return crps_for_ensemble(
            da(ens, "t", "m"), da(y, "t"), "m", method="ecdf", preserve_dims="all"
        ).values

    def pinball(q, y, levels):  # (N, Q) quantiles -> per-row mean quantile score
        return np.mean(
            [
                quantile_score(da(q[:, j], "t"), da(y, "t"), float(t), preserve_dims="all").values
                for j, t in enumerate(levels)
            ],
            axis=0,
        )

    def skill(s, r):
        return float(1.0 - np.mean(s) / np.mean(r))

    def gain(s, r):  # the log score's skill: the mean score difference (issue 25), not the ratio
        return float(np.mean(r) - np.mean(s))

    out: dict = {"libraries": {"scores": scores.__version__, "scoringrules": "0.10.0"}}

    # 1. sunspots: Gaussian AR(1) vs climatology and persistence
    d = sunspots()
    write_csv("skill_sunspots.csv", {"year": d["year"], "y": d["y"], "mu": d["mu"], "sigma": d["sigma"]})
    write_csv("skill_sunspots_train.csv", {"y": d["train"]})
    y, mu, sg, train = d["y"], d["mu"], d["sigma"], d["train"]
    crps_model = np.asarray(sr.crps_normal(y, mu, sg))
    q_model = mu[:, None] + sg[:, None] * norm.ppf(TOOLBOX)
    pin_model = pinball(q_model, y, TOOLBOX)
    mse_model = mse(da(mu, "t"), da(y, "t"), preserve_dims="all").values
    q_clim = np.broadcast_to(np.quantile(train, TOOLBOX), (y.size, TOOLBOX.size))
    mean_clim = np.full(y.size, train.mean())
    out["sunspots_climatology"] = {
        "crps": skill(crps_model, crps_clim(y, train)),
        "pinball": skill(pin_model, pinball(q_clim, y, TOOLBOX)),
        "mse": skill(mse_model, mse(da(mean_clim, "t"), da(y, "t"), preserve_dims="all").values),
    }
    order = np.argsort(d["year"], kind="stable")
    prev = np.empty_like(y)
    prev[order[1:]] = y[order[:-1]]
    keep = np.ones(y.size, bool)
    keep[order[0]] = False  # the first year has no previous year in the file
    ae_pers = mae(da(prev, "t"), da(y, "t"), preserve_dims="all").values  # CRPS of a point mass
    q_pers = np.broadcast_to(prev[:, None], q_model.shape)
    alpha = 1 - TOOLBOX
    lo_m, hi_m = (
        norm.ppf(0.5 - TOOLBOX / 2, mu[:, None], sg[:, None]),
        norm.ppf(0.5 + TOOLBOX / 2, mu[:, None], sg[:, None]),
    )
    is_model = np.mean(np.asarray(sr.interval_score(y[:, None], lo_m, hi_m, alpha[None, :])), axis=1)
    is_pers = np.mean(
        np.asarray(
            sr.interval_score(
                y[:, None], prev[:, None] + 0 * alpha, prev[:, None] + 0 * alpha, alpha[None, :]
            )
        ),
        axis=1,
    )
    out["sunspots_persistence"] = {
        "crps": skill(crps_model[keep], ae_pers[keep]),
        "pinball": skill(pin_model[keep], pinball(q_pers, y, TOOLBOX)[keep]),
        "interval": skill(is_model[keep], is_pers[keep]),
        "mse": skill(mse_model[keep], ((y - prev) ** 2)[keep]),
    }

    # 2. simulated: quantile model vs the true Gaussian (a file) and vs climatology; classifier vs base rates
    s = simulated()
    write_csv(
        "skill_sim.csv",
        {
            "y": s["y"],
            "mu": s["mu"],
            "sigma": s["sd"],
            **{f"q_{t:g}": s["q"][:, j] for j, t in enumerate(LEVELS)},
        },
    )
    write_csv("skill_sim_train.csv", {"y": s["train"]})
    write_csv("skill_sim_cls.csv", {"label": s["label"], "p_0": 1 - s["p1"], "p_1": s["p1"]})
    write_csv("skill_sim_cls_train.csv", {"label": s["train_label"]})
    y, q = s["y"], s["q"]
    q_true = s["mu"][:, None] + s["sd"][:, None] * norm.ppf(LEVELS)

    def wis(qq):
        # Bracher et al. (2021) eq. 2 from scoringrules' interval_score. Not sr.weighted_interval_score:
        # its numpy backend (0.10.0, no numba installed) adds w_median * median instead of
        # w_median * |y - median| (sr.weighted_interval_score(obs=1, median=5, [4, 6], alpha=0.5) gives
        # 4.0 instead of 3.667)
        a = np.array([0.1, 0.5])
        lower, upper = qq[:, [0, 1]], qq[:, [4, 3]]
        iscore = np.asarray(sr.interval_score(y[:, None], lower, upper, a[None, :]))
        return (0.5 * np.abs(y - qq[:, 2]) + iscore @ (a / 2)) / (a.size + 0.5)

    q_clim = np.broadcast_to(np.quantile(s["train"], LEVELS), q.shape)
    out["sim_vs_gaussian"] = {
        "pinball": skill(pinball(q, y, LEVELS), pinball(q_true, y, LEVELS)),
        "wis": skill(wis(q), wis(q_true)),
        "mse": skill((y - q[:, 2]) ** 2, (y - s["mu"]) ** 2),
    }
    out["sim_vs_climatology"] = {
        "pinball": skill(pinball(q, y, LEVELS), pinball(q_clim, y, LEVELS)),
        "wis": skill(wis(q), wis(np.ascontiguousarray(q_clim))),
        "mse": skill((y - q[:, 2]) ** 2, (y - s["train"].mean()) ** 2),
    }
    gauss_crps = np.asarray(sr.crps_normal(y, s["mu"], s["sd"]))
    out["sim_gaussian_vs_climatology"] = {"crps": skill(gauss_crps, crps_clim(y, s["train"]))}
    rate = s["train_label"].mean()
    lab = s["label"]
    bs = brier_score(
        da(s["p1"], "t"), da(lab, "t"), preserve_dims="all"
    ).values  # binary: half the 2-class sum
    bs_ref = brier_score(da(np.full(lab.size, rate), "t"), da(lab, "t"), preserve_dims="all").values
    ll = -np.log(np.where(lab == 1, s["p1"], 1 - s["p1"]))  # log loss: closed form
    ll_ref = -np.log(np.where(lab == 1, rate, 1 - rate))
    out["sim_classifier_vs_base_rates"] = {"brier": skill(bs, bs_ref), "nll": gain(ll, ll_ref)}
    (HERE / "skill_expected.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
