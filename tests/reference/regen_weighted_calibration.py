"""Recompute the reference values frozen in tests/reference/data/weighted_calibration.json (issue 37: weighted
calibration errors and CORP decompositions).

Used by tests/test_weights.py. The reference library runs in a side virtual environment, never in the
project's Python (it does not import uqeval)::

    python -m venv /work/venv-ref37
    /work/venv-ref37/bin/pip install scikit-learn numpy
    /work/venv-ref37/bin/python tests/reference/regen_weighted_calibration.py

Data: seeded (N = 311) 4-class probabilities rounded to two decimals (ties in the scores and at bin edges),
labels drawn from a sharpened version of them (miscalibrated), a binary forecast with its outcomes, a
regression mean with targets; two weight sets: integer weights 0..3 and fractional weights uniform on
[0, 2.5] with every 9th row 0.

* **CORP** (Dimitriadis, Gneiting & Jordan 2021): the weighted PAV is scikit-learn's
  ``IsotonicRegression(increasing=True).fit(x, y, sample_weight=w)`` (it pools equal ``x`` by their weighted
  mean outcome); MCB, DSC and UNC are weighted means (``numpy.average``) of the Brier score, the log score
  (0 log 0 = 0) and the squared error of the forecast, the recalibrated forecast and the weighted mean of the
  outcomes.
* **Binned calibration errors** (Nixon et al. 2019, as Uncertainty Metrics' GCE), built directly here: even
  bins ``numpy.digitize(score, linspace(0, 1, M + 1)[1:])``; equal-mass bins with upper edges the order
  statistics at repeated-row positions ``r_m = min(round(m n / M), n - 1)``, ``m = 1..M-1``, where a row of
  weight w counts ``w / min(positive weights)`` rows and ``n`` is their sum (found by walking the sorted rows'
  cumulative weight in a Python loop); per-bin weighted counts, score sums and hits by a loop over bins.
  ECE, MCE (top label, even), RMSCE (top label, equal mass), SCE, ACE and TACE (every class, scores > 0,
  resp. > 0.01 for TACE).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "data" / "weighted_calibration.json"
BINS = 15
TACE_THRESHOLD = 0.01


def data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20261128)
    n, k = 311, 4
    logits = 1.3 * rng.normal(size=(n, k))
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    proba = np.round(proba, 2)
    proba[:, -1] = 1.0 - proba[:, :-1].sum(axis=1)
    proba = np.clip(proba, 0.0, 1.0)
    proba /= proba.sum(axis=1, keepdims=True)
    sharp = proba**2 / (proba**2).sum(axis=1, keepdims=True)
    labels = (rng.uniform(size=n)[:, None] > np.cumsum(sharp, axis=1)[:, :-1]).sum(axis=1)
    p1 = np.round(rng.uniform(0.02, 0.98, n), 2)
    outcome = (rng.uniform(size=n) < p1**1.5).astype(float)
    mean = np.round(rng.normal(size=n), 1)
    y = mean + 0.3 * mean**2 + rng.normal(size=n)
    w_int = rng.integers(0, 4, n).astype(float)
    w_frac = rng.uniform(0.0, 2.5, n)
    w_frac[::9] = 0.0
    return {
        "proba": proba,
        "labels": labels,
        "p1": p1,
        "outcome": outcome,
        "mean": mean,
        "y": y,
        "w_int": w_int,
        "w_frac": w_frac,
    }


# --------------------------------------------------------------------------- CORP with scikit-learn


def _pav(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    from sklearn.isotonic import IsotonicRegression

    return IsotonicRegression(increasing=True).fit(x, y, sample_weight=w).predict(x)


def _log(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(y > 0, -y * np.log(p), 0.0)
        b = np.where(y < 1, -(1 - y) * np.log(1 - p), 0.0)
    return a + b


def _decompose(score, x: np.ndarray, y: np.ndarray, w: np.ndarray) -> dict[str, float]:
    keep = w > 0
    x, y, w = x[keep], y[keep], w[keep]
    recal = _pav(x, y, w)
    ref = np.full_like(y, np.average(y, weights=w))
    s_x, s_hat, s_ref = (float(np.average(score(z, y), weights=w)) for z in (x, recal, ref))
    return {"mcb": s_x - s_hat, "dsc": s_ref - s_hat, "unc": s_ref}


def corp(d: dict[str, np.ndarray], w: np.ndarray) -> dict[str, dict[str, float]]:
    def brier(p, y):
        return (p - y) ** 2

    return {
        "binary_brier": _decompose(brier, d["p1"], d["outcome"], w),
        "binary_log": _decompose(_log, d["p1"], d["outcome"], w),
        "mean_mse": _decompose(brier, d["mean"], d["y"], w),
    }


# --------------------------------------------------------------------------- weighted bins, directly


def _units(w: np.ndarray) -> np.ndarray:
    return w / w[w > 0].min()


def _equal_mass_upper_edges(scores: np.ndarray, units: np.ndarray, m_bins: int) -> np.ndarray:
    order = np.argsort(scores, kind="stable")
    xs, us = scores[order], units[order]
    n = us.sum()
    edges = []
    for m in range(1, m_bins):
        r = min(np.round(m * n / m_bins), n - 1)
        acc = 0.0
        for x, u in zip(xs, us):  # the row whose repeated copies hold position r
            acc += u
            if acc > r:
                edges.append(x)
                break
        else:
            edges.append(xs[-1])
    return np.array(edges)


def _bins(scores, hits, w, upper) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    b = np.digitize(scores, upper, right=False)
    counts, s_conf, s_hit = (np.zeros(upper.size + 1) for _ in range(3))
    for j in range(upper.size + 1):
        inside = b == j
        counts[j] = w[inside].sum()
        s_conf[j] = (w[inside] * scores[inside]).sum()
        s_hit[j] = (w[inside] * hits[inside]).sum()
    return counts, s_conf, s_hit


def _l1(scores, hits, w, upper) -> tuple[float, float]:
    counts, s_conf, s_hit = _bins(scores, hits, w, upper)
    nz = counts > 0
    gap = np.abs(s_hit - s_conf)
    return float(gap.sum() / counts.sum()), float(np.max(gap[nz] / counts[nz]))


def calibration(d: dict[str, np.ndarray], w: np.ndarray) -> dict[str, float]:
    p, y = d["proba"], d["labels"]
    keep = w > 0
    p, y, w = p[keep], y[keep], w[keep]
    u = _units(w)
    even = np.linspace(0.0, 1.0, BINS + 1)[1:]
    top = np.argmax(p, axis=1)
    conf = p[np.arange(len(y)), top]
    hit = (top == y).astype(float)
    ece, mce = _l1(conf, hit, u, even)
    counts, s_conf, s_hit = _bins(conf, hit, u, _equal_mass_upper_edges(conf, u, BINS))
    nz = counts > 0
    rmsce = float(np.sqrt(np.sum((s_hit[nz] - s_conf[nz]) ** 2 / counts[nz]) / u.sum()))
    sce = ace = tace = 0.0
    for k in range(p.shape[1]):
        x, h = p[:, k], (y == k).astype(float)
        for thr, name in ((0.0, "ace"), (TACE_THRESHOLD, "tace")):
            kept = x > thr
            if not kept.any():
                continue
            value = _l1(x[kept], h[kept], u[kept], _equal_mass_upper_edges(x[kept], u[kept], BINS))[0]
            if name == "ace":
                ace += value
                sce += _l1(x[kept], h[kept], u[kept], even)[0]
            else:
                tace += value
    k = p.shape[1]
    return {"ece": ece, "rmsce": rmsce, "mce": mce, "sce": sce / k, "ace": ace / k, "tace": tace / k}


def main() -> None:
    import sklearn

    d = data()
    out = {
        "library": f"scikit-learn {sklearn.__version__}, numpy {np.__version__}",
        "bins": BINS,
        "tace_threshold": TACE_THRESHOLD,
        "data": {k: v.tolist() for k, v in d.items()},
        "corp": {name: corp(d, d[name]) for name in ("w_int", "w_frac")},
        "calibration": {name: calibration(d, d[name]) for name in ("w_int", "w_frac")},
    }
    # a check of the construction itself: integer weights are the repeated rows (unit weights)
    idx = np.repeat(np.arange(len(d["labels"])), d["w_int"].astype(int))
    repeated = {**d, "proba": d["proba"][idx], "labels": d["labels"][idx]}
    again = calibration(repeated, np.ones(idx.size))
    for key, value in out["calibration"]["w_int"].items():
        assert abs(again[key] - value) < 1e-12, (key, again[key], value)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT} ({out['library']})")


if __name__ == "__main__":
    main()
