"""Recompute the properscoring / scoringrules reference values frozen in tests/metrics/.

Usage (CI never runs this)::

    python -m venv /tmp/ref && /tmp/ref/bin/pip install numpy numba properscoring==0.1 scoringrules==0.10.0
    /tmp/ref/bin/python tests/reference/regen_properscoring.py

numba is required: scoringrules 0.10.0's numpy backend of ``weighted_interval_score``
adds ``w_median * median`` instead of ``w_median * |obs - median|`` (its numba gufunc
is right), so the WIS references are taken with ``backend="numba"``. The script checks
that the two backends agree on everything else.

It prints literal dicts; paste each over the dict of the same name:

* ``PROPERSCORING_CRPS``, ``SCORINGRULES_CRPS_FAIR`` -> tests/metrics/test_samples.py
* ``SCORINGRULES_QUANTILE``                          -> tests/metrics/test_quantiles.py

The data come from :func:`sample_data` and :func:`quantile_data`, which the tests import
too (this module imports only numpy at import time).
"""

from __future__ import annotations

import pprint

import numpy as np


def sample_data() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Small ensembles with ties, duplicate members, y equal to a member, y outside all members."""
    s10 = np.array(
        [
            [0.8, 2.0, -1.7, -0.4, 0.5, 0.3, 0.6, 0.4, -0.7, 2.6],
            [-4.0, 1.0, 1.2, -0.7, 2.6, -0.2, 3.0, -0.8, -2.1, -0.8],
            [2.8, 3.0, -1.2, 0.0, 2.8, 0.5, 2.0, -1.4, 1.2, 3.7],
            [-0.7, 1.6, -0.6, 1.0, -2.3, 1.7, 1.8, -0.6, 1.0, -1.7],
            [2.8, 0.6, 0.7, -1.6, 0.6, 1.0, 2.6, -1.4, 1.2, -0.8],
            [-0.1, 2.4, 2.9, -1.0, 2.4, -0.3, 1.3, 0.9, 2.0, 0.5],
            [0.3, 1.0, 5.4, -0.9, -1.1, 6.2, 0.0, -0.1, -0.8, -0.2],
            [-0.3, 1.7, 0.6, -0.5, 3.1, 2.2, 0.4, 0.2, 4.3, 0.1],
            [1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5],
            [1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5],
        ]
    )
    y10 = np.array([5.0, 4.1, 3.7, 0.4, 0.6, -1.2, -0.9, -3.2, 1.5, 2.0])
    s2 = np.array([[0.0, 1.0], [1.0, 1.0], [-2.0, 3.0], [0.5, -0.5]])
    y2 = np.array([0.5, 1.0, 4.0, -0.5])
    s3 = np.array([[0.0, 0.0, 1.0], [2.0, -1.0, 2.0], [0.1, 0.2, 0.3]])
    y3 = np.array([0.0, 2.0, 0.25])
    return {"m10": (y10, s10), "m2": (y2, s2), "m3": (y3, s3)}


def quantile_data() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(y_true, quantiles, levels): non-crossing quantiles with ties and y on bounds."""
    levels = np.array([0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95])
    q = np.array(
        [
            [-2.0, -1.5, -0.6, 0.0, 0.6, 1.5, 2.0],
            [-2.0, -1.5, -0.6, 0.0, 0.6, 1.5, 2.0],
            [0.5, 0.8, 1.0, 1.0, 1.0, 1.4, 2.2],
            [3.0, 3.2, 3.5, 4.0, 4.4, 5.0, 5.5],
            [1.1, 1.1, 1.1, 1.1, 1.1, 1.1, 1.1],
            [-0.4, 0.1, 0.7, 1.2, 1.6, 2.4, 3.1],
            [10.0, 10.5, 11.0, 12.0, 13.0, 14.0, 15.0],
        ]
    )
    y = np.array([0.3, 2.0, -1.0, 6.5, 1.1, 0.7, 14.5])
    # no median, one unpaired level (0.1): WIS uses the 0.25/0.75 and 0.05/0.95 pairs only
    levels_nomed = np.array([0.05, 0.1, 0.25, 0.75, 0.95])
    q_nomed = q[:, [0, 1, 2, 4, 6]]
    return {"full": (y, q, levels), "nomed": (y, q_nomed, levels_nomed)}


def _pairs(levels: np.ndarray) -> list[tuple[int, int]]:
    # independent of uqeval: pair tau with 1 - tau by exact search on the literal levels
    out = []
    for i, t in enumerate(levels):
        if t < 0.5:
            j = np.flatnonzero(np.isclose(levels, 1 - t, rtol=0, atol=1e-12))
            if j.size:
                out.append((i, int(j[0])))
    return out


def main() -> None:
    import properscoring as ps
    import scoringrules as sr

    crps = {}
    fair = {}
    for name, (y, s) in sample_data().items():
        crps[name] = ps.crps_ensemble(y, s).tolist()
        f_numba = sr.crps_ensemble(y, s, estimator="fair", backend="numba")
        f_numpy = sr.crps_ensemble(y, s, estimator="fair", backend="numpy")
        np.testing.assert_allclose(f_numba, f_numpy, rtol=1e-12, atol=1e-12)
        fair[name] = np.asarray(f_numba).tolist()

    quant = {}
    for name, (y, q, levels) in quantile_data().items():
        entry: dict = {}
        entry["quantile_score"] = [
            float(np.mean(sr.quantile_score(y, q[:, j], levels[j]))) for j in range(levels.size)
        ]
        pairs = _pairs(levels)
        lo = [i for i, _ in pairs]
        hi = [j for _, j in pairs]
        alpha = np.array([2 * levels[i] for i in lo])
        entry["interval_score"] = [
            float(np.mean(sr.interval_score(y, q[:, i], q[:, j], 2 * levels[i]))) for i, j in pairs
        ]
        med = np.flatnonzero(np.isclose(levels, 0.5))
        if med.size:
            wis = sr.weighted_interval_score(y, q[:, med[0]], q[:, lo], q[:, hi], alpha, backend="numba")
        else:
            # median weight 0 and K + 1/2 -> K renormalisation: uqeval's documented no-median form
            wis0 = sr.weighted_interval_score(
                y, np.zeros_like(y), q[:, lo], q[:, hi], alpha, w_median=0.0, backend="numba"
            )
            wis = np.asarray(wis0) * (len(pairs) + 0.5) / len(pairs)
        entry["wis"] = np.asarray(wis).tolist()
        quant[name] = entry

    print("# properscoring 0.1 crps_ensemble")
    print("PROPERSCORING_CRPS = " + pprint.pformat(crps, width=100))
    print('# scoringrules 0.10.0 crps_ensemble(estimator="fair", backend="numba")')
    print("SCORINGRULES_CRPS_FAIR = " + pprint.pformat(fair, width=100))
    print("# scoringrules 0.10.0 quantile_score / interval_score (row means) and")
    print('# weighted_interval_score(backend="numba") per row')
    print("SCORINGRULES_QUANTILE = " + pprint.pformat(quant, width=100))


if __name__ == "__main__":
    main()
