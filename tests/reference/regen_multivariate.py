"""Regenerate the data and reference values of tests/metrics/test_multivariate.py (issue 16).

Reference library: scoringrules 0.10.0 (``es_ensemble`` with ``estimator="nrg"``, the energy score
with the member term divided by 2 M^2, and ``vs_ensemble`` with ``p=0.5``, unit weights, summed over
every ordered pair of components); axes: members ``m_axis=-2``, components ``v_axis=-1``, as uqeval.
The real data set is statsmodels' bundled US macro data. Run in a side venv::

    /work/venvs/w16scores/bin/python tests/reference/regen_multivariate.py

It writes ``tests/reference/data/multivariate_ref.npz`` with, per data set, the inputs (``y``,
``x``) and scoringrules' per-row ``energy`` and ``variogram`` scores.

Data sets
---------
* ``macro`` (real): quarterly growth (100 x log difference) of US real GDP, consumption and
  investment, 1959-2009 (d = 3); each quarter from the 21st on is forecast by the 20 previous
  quarters' growth vectors as ensemble members (a moving-window climatology, M = 20, N = 182).
* ``sim`` (simulated): 60 rows, 7 members, d = 4, members and outcomes standard normal with a
  shifted mean (seed 16).
* ``sim1``: the same with d = 1 (the energy score is the sample CRPS there).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "data"


def macro() -> tuple[np.ndarray, np.ndarray]:
    import statsmodels.api as sm

    d = sm.datasets.macrodata.load_pandas().data
    levels = d[["realgdp", "realcons", "realinv"]].to_numpy(dtype=float)
    g = 100.0 * np.diff(np.log(levels), axis=0)  # (202, 3)
    m = 20
    y = g[m:]
    x = np.stack([g[t - m : t] for t in range(m, len(g))])  # (N, M, d)
    return y, x


def simulated(d: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(16)
    y = rng.normal(size=(60, d))
    x = 0.3 + 1.2 * rng.normal(size=(60, 7, d))
    return y, x


def main() -> None:
    import scoringrules as sr

    out = {}
    for name, (y, x) in {"macro": macro(), "sim": simulated(4), "sim1": simulated(1)}.items():
        out[f"{name}_y"], out[f"{name}_x"] = y, x
        out[f"{name}_energy"] = np.asarray(sr.es_ensemble(y, x, m_axis=-2, v_axis=-1, estimator="nrg"))
        out[f"{name}_variogram"] = np.asarray(sr.vs_ensemble(y, x, m_axis=-2, v_axis=-1, p=0.5))
    HERE.mkdir(exist_ok=True)
    np.savez_compressed(HERE / "multivariate_ref.npz", **out)
    print({k: float(v.mean()) for k, v in out.items() if k.endswith(("energy", "variogram"))})


if __name__ == "__main__":
    main()
