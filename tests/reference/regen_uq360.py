"""Recompute the IBM UQ360 reference values frozen in tests/metrics/test_ucc.py.

UQ360 0.2 (the last release) pins numpy<1.21 and scikit-learn<1.0 and has no wheel, so a
plain ``pip install uq360`` fails on Python 3.11. What worked (a separate venv; only the
UCC module is used, which needs numpy, scipy<1.14 for ``scipy.integrate.simps/trapz``,
matplotlib and the package import chain: pandas, scikit-learn)::

    python -m venv /work/venvs/uq360
    /work/venvs/uq360/bin/pip install "setuptools<70" wheel
    /work/venvs/uq360/bin/pip install --no-build-isolation --no-deps uq360==0.2
    /work/venvs/uq360/bin/pip install "numpy<2" "scipy<1.14" scikit-learn matplotlib "pandas<2.3"
    /work/venvs/uq360/bin/python tests/reference/regen_uq360.py

(frozen with uq360 0.2, numpy 1.26.4, scipy 1.13.1; CI never runs this). It prints the
literal dict ``UQ360_REF``; paste it over the dict of that name in the test file.

The dataset comes from :func:`uq360_dataset`, which the tests import too (this module
imports only numpy at import time; UQ360 is imported inside :func:`main`).

Conventions of UQ360 that the printed values keep as they are (the test converts):

* ``get_AUUCC`` integrates in order of increasing scale, so a decreasing x axis
  (miss rate, deficit) gives a negative area;
* ``auucc_gain`` is ``(A_const - A_model) / A_model`` on excess/miss-rate axes,
  normalised, with a constant band of width ``std(pred)``;
* partial areas snap the range ends to the closest points (the ranges used here are
  exact point values, where snapping and interpolation agree).
"""

from __future__ import annotations

import contextlib
import io
import pprint

import numpy as np


def uq360_dataset() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(y_true, pred, lower, upper)``, 16 rows with asymmetric bands and tied scales.

    No zero widths (UQ360 replaces them by the smallest positive width, uqeval does not);
    row 5 has ``y == pred`` (critical scale 0); rows 0, 3 and 9 share critical scale 2.
    """
    y = np.array([1.5, -0.3, 2.2, 0.0, 3.1, 1.0, -1.7, 0.4, 2.9, -0.6, 1.8, 0.75, -2.4, 1.1, 0.2, 2.6])
    pred = np.array([1.0, 0.1, 1.4, 1.0, 2.0, 1.0, -0.9, 0.9, 3.3, -1.6, 1.2, 0.5, -1.2, 1.6, 0.6, 1.9])
    zl = np.array([0.3, 0.8, 0.5, 0.5, 1.2, 0.4, 0.6, 0.2, 0.7, 0.9, 0.25, 1.5, 0.8, 0.35, 0.6, 0.45])
    zu = np.array([0.25, 0.4, 0.9, 0.7, 0.5, 0.6, 1.1, 0.3, 0.2, 0.5, 0.6, 0.5, 0.4, 0.8, 1.0, 0.3])
    return y, pred, pred - zl, pred + zu


#: (x_axis, y_axis) pairs whose AUUCC is frozen.
AXIS_PAIRS: tuple[tuple[str, str], ...] = (
    ("bandwidth", "missrate"),
    ("excess", "missrate"),
    ("missrate", "bandwidth"),
    ("excess", "deficit"),
    ("deficit", "excess"),
)


def main() -> None:
    import importlib.metadata

    from uq360.metrics.regression_metrics import auucc_gain
    from uq360.metrics.uncertainty_characteristics_curve.uncertainty_characteristics_curve import (
        UncertaintyCharacteristicsCurve,
    )

    y, pred, lower, upper = uq360_dataset()
    X = np.c_[pred, pred - lower, upper - pred]
    X_const = X.copy()
    X_const[:, 1:] = np.std(pred)  # UQ360's constant band (utils.misc.fitted_ucc_w_nullref)
    quiet = contextlib.redirect_stdout(io.StringIO())  # UQ360 prints INFO/WARN lines
    with quiet:
        u = UncertaintyCharacteristicsCurve(normalize=True).fit([X, X_const], y)
        ref: dict = {"version": importlib.metadata.version("uq360"), "std_unit": float(u.std_unit)}
        plot = np.array(u.plotdata_for_scale[0])  # (k, missrate, bandwidth, excess, deficit)
        ref["curve"] = {
            name: plot[:, i].tolist()
            for i, name in enumerate(("k", "missrate", "bandwidth", "excess", "deficit"))
        }
        ref["auucc"] = {}
        for xa, ya in AXIS_PAIRS:
            u.set_coordinates(x_axis_name=xa, y_axis_name=ya, normalize=True)
            model, const = u.get_AUUCC()
            ref["auucc"][f"{xa}/{ya}"] = [float(model), float(const)]
        ref["auucc_gain_uq360"] = float(auucc_gain(y, pred, lower, upper))
        u.set_coordinates(x_axis_name="bandwidth", y_axis_name="missrate", normalize=True)
        ref["op_bandwidth_missrate"] = [float(v) for v in u.get_OP()[0][:2]]
        ref["min_cost"] = {}
        for c in (0.5, 0.1):
            r = u.minimize_cost(x_axis_cost=c, y_axis_cost=1 - c, search="scale")[0]
            # UQ360 divides the x weight by std_unit and keeps raw x: the same number
            ref["min_cost"][str(c)] = [float(r["modvalue"]), float(r["cost"])]
        # partial areas with range ends at exact point coordinates (normalised bandwidth)
        xs = np.array(ref["curve"]["bandwidth"]) / u.std_unit
        ys = np.array(ref["curve"]["missrate"])
        ref["partial_x"] = [float(xs[3]), float(xs[11]), float(u.get_AUUCC(partial_x=(xs[3], xs[11]))[0])]
        ref["partial_y"] = [float(ys[12]), float(ys[4]), float(u.get_AUUCC(partial_y=(ys[12], ys[4]))[0])]
    print("UQ360_REF = ", end="")
    pprint.pprint(ref, width=100, sort_dicts=False)


if __name__ == "__main__":
    main()
