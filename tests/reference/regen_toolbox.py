"""Recompute the Uncertainty Toolbox reference values frozen in tests/metrics/.

Usage (needs ``pip install uncertainty-toolbox==0.1.1``; CI never runs this)::

    python tests/reference/regen_toolbox.py

It prints one literal dict per test file; paste each over the dict of the same name:

* ``TOOLBOX_ACCURACY``        -> tests/metrics/test_accuracy.py
* ``TOOLBOX_AVG_CALIBRATION``, ``TOOLBOX_MISCAL_CURVES`` -> tests/metrics/test_calibration.py
* ``TOOLBOX_ADV_FRACTION_1``  -> tests/metrics/test_adversarial.py
* ``TOOLBOX_SHARPNESS``       -> tests/metrics/test_sharpness.py
* ``TOOLBOX_SCORING_RULE``    -> tests/metrics/test_scoring_gaussian.py

The datasets come from :func:`toolbox_datasets`, which the tests import too (this module
imports only numpy at import time; the toolbox is imported inside :func:`main`).
"""

from __future__ import annotations

import pprint

import numpy as np


def _mean_function(x: np.ndarray) -> np.ndarray:
    # the synthetic benchmark of the toolbox paper, appendix A.1
    return np.sin(x / 2.0) + x * np.cos(0.8 * x)


def _noise_std(x: np.ndarray) -> np.ndarray:
    # quadrant-wise noise levels of the toolbox paper, appendix A.1 (0.01 raised to 0.05)
    return np.select([x < -5, x < 0, x < 5], [1.0, 0.05, 1.5], default=0.5)


def toolbox_datasets() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Seeded ``{name: (y_true, mean, std)}`` datasets used for the frozen reference values.

    * ``miscal_500``: N=500, biased mean and over-confident std (0.6 x the true noise).
    * ``odd_37``: N=37 (odd size), unbiased mean, under-confident std (2.5 x).
    * ``offset_201``: N=201, targets offset by +100 (relative errors), one constant std
      for heteroscedastic noise, mean with a slope error.
    """
    out = {}

    rng = np.random.default_rng(20240501)
    x = rng.uniform(-10, 10, 500)
    s = _noise_std(x)
    y = _mean_function(x) + s * rng.standard_normal(500)
    out["miscal_500"] = (y, _mean_function(x) + 0.2, 0.6 * s + 0.01)

    rng = np.random.default_rng(37)
    x = rng.uniform(-10, 10, 37)
    s = _noise_std(x)
    y = _mean_function(x) + s * rng.standard_normal(37)
    out["odd_37"] = (y, _mean_function(x), 2.5 * s)

    rng = np.random.default_rng(201)
    x = rng.uniform(-10, 10, 201)
    s = _noise_std(x)
    y = 100.0 + _mean_function(x) + s * rng.standard_normal(201)
    out["offset_201"] = (y, 100.0 + 1.05 * _mean_function(x), np.full(201, 0.9))
    return out


def miscal_curves() -> list[tuple[np.ndarray, np.ndarray]]:
    """Hand-made (expected, observed) curves that cross and touch the diagonal."""
    e11 = np.linspace(0.0, 1.0, 11)
    zigzag = e11 + 0.07 * np.array([0, 1, -1, 1, -1, 0.5, 0, -0.3, 0.2, -1, 0])
    touching = np.clip(e11 + np.array([0, 0.1, 0, -0.1, -0.05, 0, 0, 0.2, 0.1, 0, 0]), 0, 1)
    e5 = np.array([0.0, 0.1, 0.5, 0.55, 1.0])  # uneven spacing
    uneven = np.array([0.0, 0.3, 0.2, 0.9, 1.0])
    return [(e11, zigzag), (e11, touching), (e5, uneven)]


def main() -> None:
    import uncertainty_toolbox as uct  # noqa: PLC0415 - reference library, only here

    acc, cal, adv, sharp, sr = {}, {}, {}, {}, {}
    np.random.seed(0)  # the toolbox's adversarial draws use the global RNG
    for name, (y, mean, std) in toolbox_datasets().items():
        m = uct.metrics.get_all_metrics(mean, std, y, num_bins=100, resolution=99, verbose=False)
        acc[name] = {k: float(v) for k, v in m["accuracy"].items()}
        cal[name] = {k: float(v) for k, v in m["avg_calibration"].items()}
        a = m["adv_group_calibration"]
        # its group-size grid is linspace(0, 1, 10): the last entry is fraction 1 (deterministic)
        adv[name] = {
            "ma": float(a["ma_adv_group_cal"]["adv_group_cali_mean"][-1]),
            "rms": float(a["rms_adv_group_cal"]["adv_group_cali_mean"][-1]),
        }
        sharp[name] = {k: float(v) for k, v in m["sharpness"].items()}
        sr[name] = {k: float(v) for k, v in m["scoring_rule"].items()}

    from uncertainty_toolbox.metrics_calibration import miscalibration_area_from_proportions

    curves = [float(miscalibration_area_from_proportions(e, o)) for e, o in miscal_curves()]

    header = f"# uncertainty-toolbox {uct.__version__ if hasattr(uct, '__version__') else '0.1.1'}"
    for var, val in (
        ("TOOLBOX_ACCURACY", acc),
        ("TOOLBOX_AVG_CALIBRATION", cal),
        ("TOOLBOX_ADV_FRACTION_1", adv),
        ("TOOLBOX_SHARPNESS", sharp),
        ("TOOLBOX_SCORING_RULE", sr),
        ("TOOLBOX_MISCAL_CURVES", curves),
    ):
        print(header)
        print(f"{var} = {pprint.pformat(val, sort_dicts=False, width=100)}\n")


if __name__ == "__main__":
    main()
