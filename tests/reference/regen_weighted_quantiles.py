"""Recompute the reference values frozen in tests/reference/data/weighted_quantiles.npz.

Used by tests/metrics/test_verification.py (threshold-weighted CRPS of quantile forecasts). The inputs
(targets, Gaussian forecasts, their quantiles and the regions) are those frozen in
``weighted_scores.npz`` by ``regen_weighted_scores.py`` (a seeded set and statsmodels' sunspots forecast
by an AR(2) model), so this script needs only scoringrules, in a side virtual environment::

    python -m venv /work/venv-w16
    /work/venv-w16/bin/pip install scoringrules==0.10.0 numpy scipy
    /work/venv-w16/bin/python tests/reference/regen_weighted_quantiles.py

scoringrules 0.10.0 has no ``twcrps_quantile``; the reference is its ``crps_quantile`` (twice the mean
pinball loss over the levels, Berrisch & Ziel 2023) of the chained forecast: the quantiles and the target
clipped to the region (v(z) = min(max(z, a), b) is non-decreasing, so v(q_tau) is the tau-quantile of v(X)).
Frozen per data set ``<name>_<key>``: ``q7`` (the Gaussian's quantiles at the seven levels ``levels7``, as in
sample_data/quantiles.parquet) and, per region, ``twcrps_q3`` (at 0.1, 0.5, 0.9) and ``twcrps_q7``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data"
OUT = DATA / "weighted_quantiles.npz"
LEVELS7 = np.array([0.025, 0.05, 0.25, 0.5, 0.75, 0.95, 0.975])


def main() -> None:
    import scoringrules as sr
    from scipy.stats import norm

    ref = np.load(DATA / "weighted_scores.npz")
    out: dict[str, np.ndarray] = {"levels7": LEVELS7, "levels3": ref["levels"]}
    for name in ("synth", "sunspots"):
        y, mu, sd, q3 = (ref[f"{name}_{k}"] for k in ("y", "mu", "sd", "q"))
        q7 = mu[:, None] + sd[:, None] * norm.ppf(LEVELS7)
        out[f"{name}_q7"] = q7
        for key, q, lv in (("q3", q3, ref["levels"]), ("q7", q7, LEVELS7)):
            out[f"{name}_twcrps_{key}"] = np.array(
                [
                    np.asarray(sr.crps_quantile(np.clip(y, a, b), np.clip(q, a, b), lv, backend="numpy"))
                    for a, b in ref[f"{name}_regions"]
                ]
            )
    out["versions"] = np.array([f"scoringrules {sr.__version__}"])
    np.savez_compressed(OUT, **out)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
