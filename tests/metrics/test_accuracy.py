"""Tests of uqeval.metrics.accuracy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.reference.regen_toolbox import toolbox_datasets
from uqeval.errors import InputError
from uqeval.metrics.accuracy import regression_accuracy

# uncertainty-toolbox 0.1.1, get_all_metrics(...)["accuracy"]; regenerate with
# python tests/reference/regen_toolbox.py
TOOLBOX_ACCURACY = {
    "miscal_500": {
        "mae": 0.6969531102288384,
        "rmse": 0.9856129345276289,
        "mdae": 0.44345947275700526,
        "marpd": 55.40900781516939,
        "r2": 0.9163864290144736,
        "corr": 0.9601131254662764,
    },
    "odd_37": {
        "mae": 0.6056784365352325,
        "rmse": 0.8393358662329047,
        "mdae": 0.5110392227057523,
        "marpd": 37.52302528747038,
        "r2": 0.9366221656700294,
        "corr": 0.967808191577176,
    },
    "offset_201": {
        "mae": 0.5840762950428345,
        "rmse": 0.8472182913400471,
        "mdae": 0.3632469215223324,
        "marpd": 0.5894050899447553,
        "r2": 0.9316722915481186,
        "corr": 0.9661052051050031,
    },
}

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)
KEYS = ("mae", "rmse", "mdae", "marpd", "r2", "corr")


@pytest.mark.parametrize("name", sorted(TOOLBOX_ACCURACY))
def test_matches_uncertainty_toolbox(name):
    y, mean, _ = toolbox_datasets()[name]
    got = regression_accuracy(y, mean)
    assert set(got) == set(KEYS)
    for key, ref in TOOLBOX_ACCURACY[name].items():
        assert got[key] == pytest.approx(ref, rel=1e-9), key
        assert isinstance(got[key], float)


def test_hand_computed():
    y = np.array([1.0, 2.0, 3.0, 4.0])
    mean = np.array([1.5, 2.0, 2.0, 5.0])  # errors 0.5, 0, -1, ... -> |e| = 0.5, 0, 1, 1
    got = regression_accuracy(y, mean)
    assert got["mae"] == pytest.approx(2.5 / 4)
    assert got["rmse"] == pytest.approx(math.sqrt((0.25 + 0 + 1 + 1) / 4))
    assert got["mdae"] == pytest.approx(0.75)
    marpd = 100 / 4 * (2 * 0.5 / 2.5 + 0 + 2 * 1 / 5 + 2 * 1 / 9)
    assert got["marpd"] == pytest.approx(marpd)
    assert got["r2"] == pytest.approx(1 - 2.25 / 5.0)
    assert got["corr"] == pytest.approx(np.corrcoef(y, mean)[0, 1])


def test_perfect_prediction():
    y = np.array([-3.0, 0.0, 2.0, 7.5])
    got = regression_accuracy(y, y.copy())
    assert got["mae"] == got["rmse"] == got["mdae"] == got["marpd"] == 0.0
    assert got["r2"] == 1.0 and got["corr"] == pytest.approx(1.0)


def test_edge_cases():
    # y = mean = 0 in a row: that row contributes 0 to marpd instead of NaN
    got = regression_accuracy([0.0, 1.0], [0.0, 2.0])
    assert got["marpd"] == pytest.approx(100 / 2 * (2 * 1 / 3))
    # constant targets: scikit-learn's force_finite convention
    assert regression_accuracy([2.0, 2.0, 2.0], [2.0, 2.0, 2.0])["r2"] == 1.0
    const = regression_accuracy([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])
    assert const["r2"] == 0.0 and math.isnan(const["corr"])
    one = regression_accuracy([1.0], [2.0])
    assert one["mae"] == 1.0 and math.isnan(one["r2"]) and math.isnan(one["corr"])


def test_bad_input():
    with pytest.raises(InputError, match="mean must be finite"):
        regression_accuracy([1.0, 2.0], [1.0, np.nan])
    with pytest.raises(InputError, match="inconsistent numbers of rows"):
        regression_accuracy([1.0, 2.0], [1.0])
    with pytest.raises(InputError, match="no rows"):
        regression_accuracy([], [])


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@st.composite
def pairs(draw, min_size=3):
    n = draw(st.integers(min_size, 40))
    y = np.array(draw(st.lists(finite, min_size=n, max_size=n)))
    mean = np.array(draw(st.lists(finite, min_size=n, max_size=n)))
    return y, mean


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


@SETTINGS
@given(pairs(), st.randoms(use_true_random=False))
def test_row_order_invariance(data, rnd):
    y, mean = data
    perm = np.array(rnd.sample(range(len(y)), len(y)))
    a, b = regression_accuracy(y, mean), regression_accuracy(y[perm], mean[perm])
    for key in KEYS:
        assert _close(a[key], b[key]), key


@SETTINGS
@given(pairs(), st.floats(-1e3, 1e3))
def test_shift_equivariance(data, c):
    """Shifting targets and predictions by c leaves every metric but marpd unchanged."""
    y, mean = data
    # keep the spread of y well above the rounding of the shift so r2/corr stay defined
    if np.ptp(y) < 1e-3 or np.ptp(mean) < 1e-3:
        return
    a, b = regression_accuracy(y, mean), regression_accuracy(y + c, mean + c)
    scale = 1e-9 * (1 + abs(c) + np.max(np.abs(y)) + np.max(np.abs(mean)))
    for key in ("mae", "rmse", "mdae"):
        assert b[key] == pytest.approx(a[key], abs=10 * scale)
    assert b["r2"] == pytest.approx(a["r2"], abs=1e-6 * max(1.0, abs(a["r2"])))
    assert b["corr"] == pytest.approx(a["corr"], abs=1e-6)


@SETTINGS
@given(pairs(min_size=1))
def test_ranges(data):
    y, mean = data
    got = regression_accuracy(y, mean)
    assert got["mdae"] <= got["rmse"] * math.sqrt(2) * (1 + 1e-12) + 1e-12  # half the |e| are >= median
    assert got["mae"] <= got["rmse"] * (1 + 1e-12) + 1e-12
    assert 0.0 <= got["marpd"] <= 200.0 + 1e-9
    assert got["r2"] <= 1.0 or math.isnan(got["r2"])
    assert math.isnan(got["corr"]) or -1.0 <= got["corr"] <= 1.0
