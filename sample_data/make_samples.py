"""Generate the bundled sample files (seeded, deterministic). Run: python sample_data/make_samples.py

Every representation uqeval reads has a small example here. The regression
files share one synthetic problem: x ~ U[0, 1], y = 2 sin(2 pi x) + noise with
std 0.5 + x/2 (the ACCRUE "G" problem) and a `shift` column with three levels
of increasing input shift (the targets of shifted rows get extra noise the
models do not know about, as in Kompa et al.'s dataset-shift experiments).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from scipy.stats import norm

HERE = Path(__file__).resolve().parent
N = 2000


def write(name: str, cols: dict) -> None:
    table = pa.table(cols)
    if name.endswith(".csv"):
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, HERE / name)
    else:
        pq.write_table(table, HERE / name)


def regression(rng: np.random.Generator, n: int = N) -> dict:
    x = rng.uniform(0, 1, n)
    shift = rng.integers(0, 3, n)
    true_sd = 0.5 + x / 2
    noise_sd = true_sd * (1 + 0.5 * shift)  # shifted rows are noisier than the model believes
    f = 2 * np.sin(2 * np.pi * x)
    y = f + rng.normal(0, 1, n) * noise_sd
    mean = f + rng.normal(0, 0.1, n)  # a slightly imperfect model
    std = true_sd * 0.9  # and slightly over-confident
    return dict(x=x, shift=shift, y=y, mean=mean, std=std)


def main() -> None:
    rng = np.random.default_rng(20240601)
    r = regression(rng)
    x, shift, y, mean, std = r["x"], r["shift"], r["y"], r["mean"], r["std"]
    write("gaussian.parquet", {"x": x, "shift": shift, "y": y, "mu": mean, "sigma": std})
    write("gaussian.csv", {"x": x, "y": y, "mean": mean, "std": std})
    write("point.csv", {"x": x, "y": y, "pred": mean})
    # a second model on the same targets: constant (homoscedastic) std
    write(
        "gaussian_const.parquet",
        {"x": x, "shift": shift, "y": y, "mu": mean, "sigma": np.full(N, std.mean())},
    )
    # intervals: one 90% pair (asymmetric: skewed model), and several levels
    z90 = norm.ppf(0.95)
    write(
        "intervals.parquet",
        {
            "x": x,
            "shift": shift,
            "y": y,
            "pred": mean,
            "lower": mean - z90 * std * 0.8,
            "upper": mean + z90 * std * 1.2,
        },
    )
    multi = {"x": x, "y": y, "pred": mean}
    for lv in (0.5, 0.9, 0.95):
        z = norm.ppf(0.5 + lv / 2)
        multi[f"lower_{lv}"] = mean - z * std
        multi[f"upper_{lv}"] = mean + z * std
    write("intervals_multi.csv", multi)
    # quantiles
    q = {"x": x, "shift": shift, "y": y}
    for lv in (0.025, 0.05, 0.25, 0.5, 0.75, 0.95, 0.975):
        q[f"q_{lv}"] = mean + norm.ppf(lv) * std
    write("quantiles.parquet", q)
    # samples: a 20-member ensemble (columns) and 50 draws (list column)
    ens = mean[:, None] + std[:, None] * rng.standard_normal((N, 20))
    write("samples.parquet", {"x": x, "shift": shift, "y": y, **{f"s_{j}": ens[:, j] for j in range(20)}})
    draws = mean[:, None] + std[:, None] * rng.standard_normal((N, 50))
    write("samples_list.parquet", {"y": y, "samples": pa.array(list(draws), type=pa.list_(pa.float64()))})
    # training targets for width_norm
    write("train.parquet", {"y": regression(np.random.default_rng(7), 5000)["y"]})
    # classification: K = 4, a softmax model with temperature miscalibration
    k = 4
    logits = rng.normal(0, 1, (N, k)) * 2.0
    true_p = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    label = (rng.uniform(size=(N, 1)) > np.cumsum(true_p, 1)).sum(1)
    over = np.exp(1.6 * logits)
    proba = over / over.sum(1, keepdims=True)  # over-confident
    write(
        "classification.parquet",
        {"label": label, "shift": shift, **{f"p_{j}": proba[:, j] for j in range(k)}},
    )


def _log_softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    z = z - z.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def ensembles() -> None:
    """Ensemble and Bayesian outputs (issue 7), from their own seed so the files above never change.

    * ensemble_classification.parquet: a 5-member ensemble of K = 4 classifiers (columns
      m{j}_p_{k}) whose members disagree more on shifted rows, plus each member's
      log-likelihood of the label (loglik_{j}) for the information criteria;
    * dirichlet.parquet: Dirichlet outputs alpha_{k} of a prior network whose precision
      drops on shifted rows;
    * loglik.parquet: log-likelihoods alone, log N(y | mu_s, sd_s) of 20 posterior draws of a
      heteroscedastic regression (no target column: it is already inside the log-likelihoods).
    """
    rng = np.random.default_rng(20240607)
    n, m, k = N, 5, 4
    shift = rng.integers(0, 3, n)
    logits = rng.normal(0, 1, (n, k)) * 2.0
    true_p = np.exp(_log_softmax(logits))
    label = (rng.uniform(size=(n, 1)) > np.cumsum(true_p, 1)).sum(1)
    spread = (0.4 + 0.6 * shift)[:, None, None]  # members disagree more under shift
    member_logp = _log_softmax(1.3 * (logits[:, None, :] + spread * rng.normal(0, 1, (n, m, k))), axis=2)
    member_p = np.exp(member_logp)
    cols = {"label": label, "shift": shift}
    cols.update({f"m{j}_p_{c}": member_p[:, j, c] for j in range(m) for c in range(k)})
    cols.update({f"loglik_{j}": member_logp[np.arange(n), j, label] for j in range(m)})
    write("ensemble_classification.parquet", cols)

    precision = np.exp(rng.normal(3.0, 0.5, n)) / (1.0 + 2.0 * shift)  # less evidence on shifted rows
    alpha = precision[:, None] * np.exp(_log_softmax(1.2 * logits))
    write(
        "dirichlet.parquet", {"label": label, "shift": shift, **{f"alpha_{c}": alpha[:, c] for c in range(k)}}
    )

    r = regression(rng)
    draws = 20
    mu = r["mean"][:, None] + 0.1 * rng.normal(0, 1, (n, draws))
    sd = r["std"][:, None] * np.exp(0.1 * rng.normal(0, 1, (n, draws)))
    loglik = norm.logpdf(r["y"][:, None], mu, sd)
    write("loglik.parquet", {"shift": r["shift"], **{f"loglik_{j}": loglik[:, j] for j in range(draws)}})


def accrue_samples(n: int = 2000) -> None:
    """The ACCRUE paper's synthetic problems G, Y, W and 5D (accrue_problems.py), point predictions only.

    ``accrue_<p>.parquet`` is a fit (calibration) split and ``accrue_<p>_test.parquet`` a
    fresh test split, each with its own seed: ``x`` (5D: ``x1..x5``), ``y``, ``pred`` (the
    oracle mean f(x), no std) and ``true_std`` (the noise sigma(x), for reference only).
    """
    import sys

    sys.path[:0] = [str(HERE), str(HERE.parent)]  # accrue_problems.py here, uqeval above
    from accrue_problems import make_problem

    for k, name in enumerate(("G", "Y", "W", "5D")):
        for split, seed in (("", 100 * (k + 1) + 1), ("_test", 100 * (k + 1) + 2)):
            d = make_problem(name, n, seed=seed)
            x = d["x"]
            xs = {"x": x} if x.ndim == 1 else {f"x{j + 1}": x[:, j] for j in range(x.shape[1])}
            write(
                f"accrue_{name.lower()}{split}.parquet",
                {**xs, "y": d["y"], "pred": d["mean"], "true_std": d["true_std"]},
            )


def verification() -> None:
    """Forecast verification (issue 16), from its own seed so the files above never change.

    * multivariate.parquet: 500 rows of a 3-component target (y_1..y_3, correlated 0.7 between
      neighbouring components, heteroscedastic) and a 20-member ensemble m<j>_<k> (member j,
      component k) with the right means and spreads but independent components, so the
      variogram score sees the missing correlation.
    """
    rng = np.random.default_rng(20261123)
    n, m, d = 500, 20, 3
    shift = rng.integers(0, 3, n)
    mu = rng.normal(0, 1, (n, 1)) + np.linspace(-1, 1, d)
    sd = (0.5 + 0.25 * shift)[:, None] * np.ones(d)
    corr = 0.7 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    chol = np.linalg.cholesky(corr)
    y = mu + sd * (rng.normal(0, 1, (n, d)) @ chol.T)
    members = mu[:, None, :] + sd[:, None, :] * rng.normal(0, 1, (n, m, d))
    cols = {"shift": shift, **{f"y_{k + 1}": y[:, k] for k in range(d)}}
    cols.update({f"m{j}_{k + 1}": members[:, j, k] for j in range(m) for k in range(d)})
    write("multivariate.parquet", cols)


if __name__ == "__main__":
    main()
    ensembles()
    accrue_samples()
    verification()
