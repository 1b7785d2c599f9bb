"""Regenerate the reference values of tests/metrics/test_conditional_coverage.py.

Reference library: MAPIE 1.6.0 (``mapie.metrics.classification.classification_ssc`` /
``classification_ssc_score`` and ``mapie.metrics.regression.regression_ssc`` /
``regression_ssc_score``), on the inputs written by ``regen_calibration_tests.py`` (run that
first; same side environment)::

    /work/venvs/w15b/bin/python tests/reference/regen_conditional_coverage.py

Prediction sets and intervals are built here independently of uqeval: the smallest set of
top classes whose probability reaches the level (classes sorted by decreasing probability),
and the Gaussian central interval mu ± Φ⁻¹(½ + level/2)·sigma. MAPIE gives the coverage of each
stratum (set size; 3 equal-count width bins); ``ssc_violation`` is max |coverage − level|
over the non-empty strata, ``worst_stratum_coverage`` MAPIE's ``*_ssc_score``. The worst class
is a pandas ``groupby`` of the per-row coverage by label.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "data"
LEVELS = (0.5, 0.9)
SET_TOL = 1e-10  # uqeval.metrics.classification._SET_TOL: cumulative mass below level - tol does not reach it


def top_k_sets(proba: np.ndarray, level: float) -> np.ndarray:
    order = np.argsort(-proba, axis=1, kind="stable")
    csum = np.cumsum(np.take_along_axis(proba, order, axis=1), axis=1)
    size = np.minimum((csum < level - SET_TOL).sum(axis=1) + 1, proba.shape[1])
    sets = np.zeros(proba.shape, dtype=bool)
    for i in range(proba.shape[0]):
        sets[i, order[i, : size[i]]] = True
    return sets


def main() -> None:
    import mapie
    import pandas as pd
    from mapie.metrics.classification import classification_ssc, classification_ssc_score
    from mapie.metrics.regression import regression_ssc, regression_ssc_score
    from scipy.stats import norm

    data = np.load(HERE / "diagnostics_inputs.npz")
    ref: dict = {"versions": {"mapie": mapie.__version__, "pandas": pd.__version__}}
    for ds in ("synthetic", "real"):
        ref[ds] = {"intervals": {}, "sets": {}}
        y, mu, sigma = data[f"reg_{ds}_y"], data[f"reg_{ds}_mu"], data[f"reg_{ds}_sigma"]
        for level in LEVELS:
            half = norm.ppf(0.5 + level / 2) * sigma
            intervals = np.stack([mu - half, mu + half], axis=1)  # (n, 2)
            cov = regression_ssc(y, intervals, num_bins=3)[0]
            ref[ds]["intervals"][str(level)] = {
                "stratum_coverage": cov.tolist(),
                "ssc_violation": float(np.max(np.abs(cov - level))),
                "worst_stratum_coverage": float(regression_ssc_score(y, intervals, num_bins=3)[0]),
            }
        proba, labels = data[f"cls_{ds}_proba"], data[f"cls_{ds}_y"]
        for level in LEVELS:
            sets = top_k_sets(proba, level)
            with np.errstate(invalid="ignore"):
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cov = classification_ssc(labels, sets)[0]  # one stratum per size 0..K, NaN when empty
                    worst = float(classification_ssc_score(labels, sets)[0])
            covered = pd.Series(sets[np.arange(len(labels)), labels].astype(float))
            by_class = covered.groupby(labels).mean()
            ref[ds]["sets"][str(level)] = {
                "stratum_coverage": [None if np.isnan(c) else float(c) for c in cov],
                "ssc_violation": float(np.nanmax(np.abs(cov - level))),
                "worst_stratum_coverage": worst,
                "worst_class": str(int(by_class.idxmin())),
                "worst_class_coverage": float(by_class.min()),
            }
    (HERE / "conditional_coverage_reference.json").write_text(json.dumps(ref, indent=1) + "\n")
    print(json.dumps(ref, indent=1))


if __name__ == "__main__":
    main()
