"""Regenerate the inputs and reference values of tests/metrics/test_calibration_tests.py.

Writes ``tests/reference/data/diagnostics_inputs.npz`` (two data sets: a seeded synthetic
one and real predictions of scikit-learn models on its bundled diabetes, breast-cancer and
digits data) and ``tests/reference/data/calibration_tests_reference.json``. The reference
libraries live in a side environment, never in the project's::

    python -m venv /work/venvs/w15b
    /work/venvs/w15b/bin/pip install mapie==1.6.0 scores==2.7.0 xarray statsmodels scikit-learn numpy scipy pandas
    /work/venvs/w15b/bin/python tests/reference/regen_calibration_tests.py
    /work/venvs/w15b/bin/python tests/reference/regen_conditional_coverage.py

Versions used for the frozen files: scipy 1.17.1, scores 2.7.0, pandas (see the JSON),
scikit-learn 1.9.1, numpy 2.4.6. Reference per number:

- PIT KS statistic and p-value: ``scipy.stats.ks_1samp(u, uniform.cdf, method="exact")``;
- PIT Cramér–von Mises statistic and p-value: ``scipy.stats.cramervonmises(u, "uniform")``;
- PIT Anderson–Darling statistic: the textbook sum written out here with a Python loop
  (Anderson & Darling 1954); its p-value is checked by simulation in the test;
- rank histogram counts: ``scores.probability.rank_histogram`` (relative frequencies x N);
  its χ² statistic and p-value: ``scipy.stats.chisquare``;
- Spiegelhalter's z and p: the closed form written out here with ``math``;
- Hosmer–Lemeshow: a hand computation with ``pandas.cut`` (edges = numpy type-7 quantiles,
  include_lowest, as R's ``ResourceSelection::hoslem.test``) and ``groupby``, p from
  ``scipy.stats.chi2.sf`` with G degrees of freedom (hoslem.test uses G − 2, meant for a model
  fitted on the same rows; see uqeval.metrics.calibration_tests.hosmer_lemeshow).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "data"
INPUTS = HERE / "diagnostics_inputs.npz"
M_MEMBERS = 19


def _softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def build_inputs() -> dict[str, np.ndarray]:
    """Both data sets, as flat arrays keyed ``<what>_<dataset>_<array>``."""
    from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
    from sklearn.linear_model import LinearRegression, LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    out: dict[str, np.ndarray] = {}
    rng = np.random.default_rng(15)
    # --- synthetic: a slightly over-confident Gaussian model (sigma x 0.9), its ensemble, binary and 4-class
    n = 300
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 1.5, n)
    y = mu + sd * rng.normal(size=n)
    out.update(reg_synthetic_y=y, reg_synthetic_mu=mu, reg_synthetic_sigma=0.9 * sd)
    out.update(
        ens_synthetic_y=y,
        ens_synthetic_samples=mu[:, None] + 0.9 * sd[:, None] * rng.normal(size=(n, M_MEMBERS)),
    )
    p = rng.uniform(0.02, 0.98, n)
    out.update(bin_synthetic_p=p, bin_synthetic_y=(rng.uniform(size=n) < 0.9 * p + 0.05).astype(np.int64))
    logits = 1.5 * rng.normal(size=(n, 4))
    proba = _softmax(logits)
    labels = (rng.uniform(size=n)[:, None] > np.cumsum(_softmax(0.8 * logits), axis=1)[:, :-1]).sum(axis=1)
    out.update(cls_synthetic_proba=proba, cls_synthetic_y=labels.astype(np.int64))

    # --- real: diabetes (linear model, heteroscedastic Gaussian std from a linear model of |residual|)
    X, t = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, t, test_size=0.35, random_state=0)
    lin = LinearRegression().fit(Xtr, ytr)
    res = np.abs(ytr - lin.predict(Xtr))
    scale = LinearRegression().fit(Xtr, res)
    sigma = np.maximum(scale.predict(Xte), 5.0) * math.sqrt(math.pi / 2)  # E|N(0, s²)| = s·sqrt(2/pi)
    out.update(reg_real_y=yte, reg_real_mu=lin.predict(Xte), reg_real_sigma=sigma)
    # its ensemble: 19 bootstrap refits, each member with its own Gaussian noise draw
    boot = rng.integers(0, len(ytr), size=(M_MEMBERS, len(ytr)))
    members = np.column_stack([LinearRegression().fit(Xtr[b], ytr[b]).predict(Xte) for b in boot])
    out.update(ens_real_y=yte, ens_real_samples=members + sigma[:, None] * rng.normal(size=members.shape))
    # breast cancer: logistic regression on standardised features, P(benign)
    X, t = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, t, test_size=0.4, random_state=0)
    sc = StandardScaler().fit(Xtr)
    clf = LogisticRegression(C=0.05, max_iter=5000).fit(sc.transform(Xtr), ytr)
    out.update(bin_real_p=clf.predict_proba(sc.transform(Xte))[:, 1], bin_real_y=yte.astype(np.int64))
    # digits: 10-class logistic regression (prediction sets)
    X, t = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, t, test_size=0.4, random_state=0)
    sc = StandardScaler().fit(Xtr)
    clf = LogisticRegression(C=0.01, max_iter=5000).fit(sc.transform(Xtr), ytr)
    out.update(cls_real_proba=clf.predict_proba(sc.transform(Xte)), cls_real_y=yte.astype(np.int64))
    return out


def ad_statistic_loop(u) -> float:
    """A² = -n - (1/n) Σ (2i - 1)[ln u_(i) + ln(1 - u_(n+1-i))], written out."""
    s = sorted(float(v) for v in u)
    n = len(s)
    total = 0.0
    for i in range(1, n + 1):
        total += (2 * i - 1) * (math.log(s[i - 1]) + math.log(1.0 - s[n - i]))
    return -n - total / n


def spiegelhalter_closed_form(p, y) -> tuple[float, float]:
    num = sum((yi - pi) * (1 - 2 * pi) for pi, yi in zip(p.tolist(), y.tolist()))
    var = sum((1 - 2 * pi) ** 2 * pi * (1 - pi) for pi in p.tolist())
    z = num / math.sqrt(var)
    return z, math.erfc(abs(z) / math.sqrt(2))


def hosmer_lemeshow_pandas(p, y, g: int = 10) -> tuple[float, float, int]:
    import pandas as pd
    from scipy.stats import chi2

    edges = np.quantile(p, np.linspace(0, 1, g + 1))
    df = pd.DataFrame({"p": p, "y": y, "g": pd.cut(p, np.unique(edges), include_lowest=True)})
    agg = df.groupby("g", observed=True).agg(o1=("y", "sum"), e1=("p", "sum"), n=("y", "size"))
    agg = agg[agg.n > 0]
    stat = float(
        (
            ((agg.o1 - agg.e1) ** 2) / agg.e1 + ((agg.n - agg.o1) - (agg.n - agg.e1)) ** 2 / (agg.n - agg.e1)
        ).sum()
    )
    return stat, float(chi2.sf(stat, len(agg))), int(len(agg))  # G df: out-of-sample predictions


def main() -> None:
    import pandas as pd
    import scipy
    import scores
    import xarray as xr
    from scipy import stats
    from scores.probability import rank_histogram

    HERE.mkdir(exist_ok=True)
    data = build_inputs()
    np.savez_compressed(INPUTS, **data)
    ref: dict = {
        "versions": {
            "scipy": scipy.__version__,
            "scores": scores.__version__,
            "pandas": pd.__version__,
            "numpy": np.__version__,
        }
    }
    for ds in ("synthetic", "real"):
        y, mu, sigma = data[f"reg_{ds}_y"], data[f"reg_{ds}_mu"], data[f"reg_{ds}_sigma"]
        u = stats.norm.cdf(y, mu, sigma)
        ks = stats.ks_1samp(u, stats.uniform.cdf, method="exact")
        cvm = stats.cramervonmises(u, "uniform")
        gauss = {
            "pit_ks_stat": float(ks.statistic),
            "pit_ks_p": float(ks.pvalue),
            "pit_cvm_stat": float(cvm.statistic),
            "pit_cvm_p": float(cvm.pvalue),
            "pit_ad_stat": ad_statistic_loop(u),
        }
        s, ye = data[f"ens_{ds}_samples"], data[f"ens_{ds}_y"]
        freq = rank_histogram(
            xr.DataArray(s, dims=["row", "member"]), xr.DataArray(ye, dims=["row"]), "member"
        )
        counts = np.rint(freq.values * len(ye)).astype(int)
        chi = stats.chisquare(counts)
        ens = {
            "rank_histogram": counts.tolist(),
            "rank_hist_chi2": float(chi.statistic),
            "rank_hist_chi2_p": float(chi.pvalue),
        }
        p, yb = data[f"bin_{ds}_p"], data[f"bin_{ds}_y"]
        z, zp = spiegelhalter_closed_form(p, yb)
        hl, hlp, groups = hosmer_lemeshow_pandas(p, yb)
        binary = {
            "spiegelhalter_z": z,
            "spiegelhalter_p": zp,
            "hosmer_lemeshow_stat": hl,
            "hosmer_lemeshow_p": hlp,
            "hl_groups": groups,
        }
        ref[ds] = {"gaussian": gauss, "samples": ens, "binary": binary}
    (HERE / "calibration_tests_reference.json").write_text(json.dumps(ref, indent=1) + "\n")
    print(json.dumps(ref, indent=1))


if __name__ == "__main__":
    main()
