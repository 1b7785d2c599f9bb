"""Recompute the reference values of the calibration diagnostics (CORP, spread calibration, smooth ECE).

Frozen in ``tests/reference/data/diagnostics.npz`` (the inputs) and ``diagnostics.json`` (the values
and the library versions), read by ``tests/metrics/test_diagnostics.py``. Needs the reference
libraries in a side venv (CI never runs this)::

    python -m venv /work/venvs/w15a
    /work/venvs/w15a/bin/pip install model-diagnostics netcal relplot scikit-learn numpy scipy pandas
    /work/venvs/w15a/bin/python tests/reference/regen_corp.py

Frozen with model-diagnostics 1.5.0, netcal 1.4.0, relplot 1.0.3, scikit-learn 1.9.1.

Data sets (two per quantity, one of them real predictions of a fitted model):

* ``cancer``: logistic regression on scikit-learn's breast-cancer data, P(malignant) on the
  held-out half; ``binary``: seeded probabilities with ties (two decimals), outcomes from a
  miscalibrated truth.
* ``wine``: multinomial logistic regression on the wine data (3 classes), held-out half:
  top-label and one-vs-rest; ``multi``: seeded 4-class probabilities.
* ``diabetes``: linear regression (mean), Gaussian quantiles from its residual std and
  Bayesian ridge σ on the held-out half of scikit-learn's diabetes data; ``reg``: seeded
  regression with σ on an even grid (so that netcal's equal-width σ bins hold equal counts and
  its ENCE is Levi et al.'s equal-count ENCE).

References: ``model_diagnostics.scoring.decompose`` with ``SquaredError``, ``LogLoss`` and
``PinballLoss(level)``; ``netcal.metrics.ENCE`` and ``UCE`` (``bins``); ``relplot.smECE``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent / "data"
QUANTILE_LEVELS = (0.1, 0.5, 0.9)
BINS = 10


def _datasets() -> dict[str, np.ndarray]:
    from scipy import special, stats
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
    from sklearn.linear_model import BayesianRidge, LinearRegression, LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    out: dict[str, np.ndarray] = {}
    X, y = load_breast_cancer(return_X_y=True)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=2000)).fit(Xa, ya)
    out["cancer_p"], out["cancer_y"] = model.predict_proba(Xb)[:, 1], yb.astype(np.float64)

    rng = np.random.default_rng(15)
    p = np.round(rng.beta(2.0, 3.0, 1500), 2)
    out["binary_p"], out["binary_y"] = p, (rng.uniform(size=p.size) < p**1.4).astype(np.float64)

    X, y = load_wine(return_X_y=True)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.5, random_state=0, stratify=y)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.02, max_iter=2000)).fit(Xa, ya)
    out["wine_proba"], out["wine_labels"] = model.predict_proba(Xb), yb.astype(np.int64)

    logits = 1.5 * rng.normal(size=(1200, 4))
    proba = special.softmax(logits / 0.7, axis=1)
    truth = special.softmax(logits, axis=1)
    out["multi_proba"] = proba
    out["multi_labels"] = (rng.uniform(size=(1200, 1)) > np.cumsum(truth, axis=1)[:, :-1]).sum(axis=1)

    X, y = load_diabetes(return_X_y=True)
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=0.5, random_state=0)
    lin = LinearRegression().fit(Xa, ya)
    mean = lin.predict(Xb)
    s = float(np.std(ya - lin.predict(Xa), ddof=Xa.shape[1] + 1))
    out["diabetes_y"], out["diabetes_mean"] = yb, mean
    out["diabetes_q"] = mean[:, None] + s * stats.norm.ppf(QUANTILE_LEVELS)[None, :]
    br = BayesianRidge().fit(Xa, ya)
    out["diabetes_br_mean"], out["diabetes_br_std"] = br.predict(Xb, return_std=True)

    n = 1000
    sd = 1.0 + (rng.permutation(n) + 0.5) / n
    mu = rng.normal(size=n)
    yy = mu + 1.2 * sd * rng.normal(size=n)
    out["reg_y"], out["reg_mean"], out["reg_std"] = yy, mu, sd
    out["reg_q"] = np.round(mu[:, None] + 0.8 * sd[:, None] * stats.norm.ppf(QUANTILE_LEVELS)[None, :], 1)
    return out


def _decompose(y, x, fn) -> dict[str, float]:
    from model_diagnostics.scoring import decompose

    d = decompose(y, x, scoring_function=fn)
    return {
        "mcb": float(d["miscalibration"][0]),
        "dsc": float(d["discrimination"][0]),
        "unc": float(d["uncertainty"][0]),
        "score": float(d["score"][0]),
    }


def _binary(p, y) -> dict:
    import relplot
    from model_diagnostics.scoring import LogLoss, SquaredError

    return {
        "brier": _decompose(y, p, SquaredError()),
        "log": _decompose(y, p, LogLoss()),
        "smece": float(relplot.smECE(p, y)),
        "bandwidth": float(relplot.smECE(p, y, return_width=True)[1]),
    }


def _multiclass(proba, labels) -> dict:
    from model_diagnostics.scoring import LogLoss, SquaredError

    top = proba.argmax(axis=1)
    out = {f"{k}_top_label": v for k, v in _binary(proba.max(axis=1), (top == labels).astype(float)).items()}
    for name, fn in (("brier_ovr", SquaredError()), ("log_ovr", LogLoss())):
        parts = [_decompose((labels == k).astype(float), proba[:, k], fn) for k in range(proba.shape[1])]
        out[name] = {key: float(sum(p[key] for p in parts)) for key in parts[0]}
    return out


def _regression(y, mean, q, std=None) -> dict:
    from model_diagnostics.scoring import PinballLoss, SquaredError

    out = {"mse": _decompose(y, mean, SquaredError())}
    for j, t in enumerate(QUANTILE_LEVELS):
        out[f"pinball_{t:g}"] = _decompose(y, q[:, j], PinballLoss(level=t))
    if std is not None:
        from netcal.metrics import ENCE, UCE

        out["netcal_ence"] = float(ENCE(bins=BINS).measure((mean, std), y))
        out["netcal_uce"] = float(UCE(bins=BINS).measure((mean, std), y))
    return out


def main() -> None:
    from importlib.metadata import version

    data = _datasets()
    HERE.mkdir(exist_ok=True)
    np.savez_compressed(HERE / "diagnostics.npz", **data)
    ref = {
        "versions": {
            k: version(k) for k in ("model-diagnostics", "netcal", "relplot", "scikit-learn", "numpy")
        },
        "cancer": _binary(data["cancer_p"], data["cancer_y"]),
        "binary": _binary(data["binary_p"], data["binary_y"]),
        "wine": _multiclass(data["wine_proba"], data["wine_labels"]),
        "multi": _multiclass(data["multi_proba"], data["multi_labels"]),
        "diabetes": _regression(data["diabetes_y"], data["diabetes_mean"], data["diabetes_q"]),
        "diabetes_br": {
            "netcal_uce": float(
                __import__("netcal.metrics", fromlist=["UCE"])
                .UCE(bins=BINS)
                .measure((data["diabetes_br_mean"], data["diabetes_br_std"]), data["diabetes_y"])
            )
        },
        "reg": _regression(data["reg_y"], data["reg_mean"], data["reg_q"], data["reg_std"]),
    }
    (HERE / "diagnostics.json").write_text(json.dumps(ref, indent=1, sort_keys=True) + "\n")
    print(json.dumps(ref["versions"]))


if __name__ == "__main__":
    main()
