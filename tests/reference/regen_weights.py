"""Recompute the reference values frozen in tests/reference/data/weights.json (weighted metrics, issue 25).

Used by tests/test_weights.py. The reference library runs in a side virtual environment, never in the
project's Python::

    /work/venv/bin/uv venv /work/venv-ref-weights
    VIRTUAL_ENV=/work/venv-ref-weights /work/venv/bin/uv pip install scikit-learn numpy
    /work/venv-ref-weights/bin/python tests/reference/regen_weights.py

Data: seeded (N = 257) targets, Gaussian means (point predictions), their quantiles at five levels, 4-class
probabilities with labels drawn from them, and weights uniform on [0, 3] with every 7th row 0. Frozen with
``sample_weight=w``: scikit-learn's ``mean_absolute_error``, ``root_mean_squared_error``, ``r2_score``,
``mean_pinball_loss`` per level, ``median_absolute_error`` (its weighted median averages the two middle
values where the half of the total weight falls on a boundary, as uqeval's), ``accuracy_score``,
``log_loss`` and multiclass ``brier_score_loss`` (summed over the classes, as uqeval's Brier score).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "data" / "weights.json"
LEVELS = [0.05, 0.25, 0.5, 0.75, 0.95]


def data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20261126)
    n, k = 257, 4
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 1.5, n)
    y = mu + sd * rng.normal(size=n)
    z = np.array([-1.6448536269514729, -0.6744897501960817, 0.0, 0.6744897501960817, 1.6448536269514729])
    q = mu[:, None] + 1.2 * sd[:, None] * z  # a little too wide, so the pinball loss is not the Gaussian's
    logits = 1.5 * rng.normal(size=(n, k))
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = (rng.uniform(size=n)[:, None] > np.cumsum(proba, axis=1)[:, :-1]).sum(axis=1)
    w = rng.uniform(0.0, 3.0, n)
    w[::7] = 0.0
    return {"y": y, "mu": mu, "q": q, "levels": np.array(LEVELS), "proba": proba, "labels": labels, "w": w}


def main() -> None:
    import sklearn
    from sklearn import metrics as skm

    d = data()
    y, mu, w = d["y"], d["mu"], d["w"]
    out = {
        "library": f"scikit-learn {sklearn.__version__}, numpy {np.__version__}",
        "data": {k: v.tolist() for k, v in d.items()},
        "regression": {
            "mean_absolute_error": skm.mean_absolute_error(y, mu, sample_weight=w),
            "root_mean_squared_error": skm.root_mean_squared_error(y, mu, sample_weight=w),
            "r2_score": skm.r2_score(y, mu, sample_weight=w),
            "mean_pinball_loss": [
                skm.mean_pinball_loss(y, d["q"][:, j], alpha=a, sample_weight=w) for j, a in enumerate(LEVELS)
            ],
            "median_absolute_error": skm.median_absolute_error(y, mu, sample_weight=w),
        },
        "classification": {
            "accuracy_score": skm.accuracy_score(d["labels"], d["proba"].argmax(axis=1), sample_weight=w),
            "log_loss": skm.log_loss(d["labels"], d["proba"], sample_weight=w, labels=[0, 1, 2, 3]),
            "brier_score_loss": skm.brier_score_loss(
                d["labels"], d["proba"], sample_weight=w, labels=[0, 1, 2, 3]
            ),
        },
    }
    OUT.write_text(json.dumps(out) + "\n")  # one line: the data are 257 rows of numbers
    print(f"wrote {OUT} ({out['library']})")


if __name__ == "__main__":
    main()
