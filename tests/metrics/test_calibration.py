"""Tests of average calibration in uqeval.metrics.calibration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate
from scipy.stats import norm

from tests.reference.regen_toolbox import miscal_curves, toolbox_datasets
from uqeval.errors import InputError
from uqeval.metrics.calibration import (
    avg_calibration_gaussian,
    calibration_errors,
    interval_cover_index,
    observed_from_cover_index,
)

# uncertainty-toolbox 0.1.1, get_all_metrics(..., num_bins=100)["avg_calibration"];
# regenerate with python tests/reference/regen_toolbox.py
TOOLBOX_AVG_CALIBRATION = {
    "miscal_500": {
        "rms_cal": 0.31146584920157017,
        "ma_cal": 0.27466000000000007,
        "miscal_area": 0.27743434343434353,
    },
    "odd_37": {
        "rms_cal": 0.25637753316783296,
        "ma_cal": 0.22898443898443901,
        "miscal_area": 0.23124836812718236,
    },
    "offset_201": {
        "rms_cal": 0.12622173496454522,
        "ma_cal": 0.1059535655058043,
        "miscal_area": 0.10700080181033622,
    },
}
# uncertainty-toolbox 0.1.1, metrics_calibration.miscalibration_area_from_proportions on
# regen_toolbox.miscal_curves() (curves that cross and touch the diagonal)
TOOLBOX_MISCAL_CURVES = [0.02716000000000003, 0.055, 0.14892307692307694]

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)
EXPECTED = np.linspace(0, 1, 100)


def _brute_observed(y, mean, std, expected):
    """Toolbox-style observed proportions: share of rows inside each central interval."""
    r = (mean - y) / std
    lo = norm.ppf(0.5 - expected / 2.0)
    hi = norm.ppf(0.5 + expected / 2.0)
    inside = (r[:, None] >= lo[None, :]) & (r[:, None] <= hi[None, :])
    return inside.mean(axis=0)


@pytest.mark.parametrize("name", sorted(TOOLBOX_AVG_CALIBRATION))
def test_matches_uncertainty_toolbox(name):
    y, mean, std = toolbox_datasets()[name]
    got = avg_calibration_gaussian(y, mean, std, num_bins=100)
    assert set(got) == {"rms_cal", "ma_cal", "miscal_area"}
    for key, ref in TOOLBOX_AVG_CALIBRATION[name].items():
        assert got[key] == pytest.approx(ref, rel=1e-9), key


@pytest.mark.parametrize("i", range(len(TOOLBOX_MISCAL_CURVES)))
def test_miscal_area_matches_toolbox_polygon_method(i):
    expected, observed = miscal_curves()[i]
    got = calibration_errors(expected, observed)["miscal_area"]
    assert got == pytest.approx(TOOLBOX_MISCAL_CURVES[i], rel=1e-9)


def _area_by_quadrature(expected, observed):
    def gap(p):
        return abs(np.interp(p, expected, observed) - p)

    total = 0.0
    for a, b in zip(expected[:-1], expected[1:]):
        if b > a:
            total += integrate.quad(gap, a, b, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    return total


@pytest.mark.parametrize("i", range(3))
def test_miscal_area_equals_integral(i):
    expected, observed = miscal_curves()[i]
    got = calibration_errors(expected, observed)["miscal_area"]
    assert got == pytest.approx(_area_by_quadrature(expected, observed), rel=1e-9, abs=1e-12)


def test_miscal_area_hand_computed():
    # one segment from (0, 0.5 gap) to (1, -0.5 gap): two triangles of area 1/8 each
    assert calibration_errors([0.0, 1.0], [0.5, 0.5])["miscal_area"] == pytest.approx(0.25)
    # no crossing: trapezoid
    assert calibration_errors([0.0, 0.5, 1.0], [0.0, 0.7, 1.0])["miscal_area"] == pytest.approx(0.1)
    # the mean absolute gap of the same curve is different
    assert calibration_errors([0.0, 0.5, 1.0], [0.0, 0.7, 1.0])["ma_cal"] == pytest.approx(0.2 / 3)


@SETTINGS
@given(st.lists(st.floats(0, 1), min_size=2, max_size=30))
def test_miscal_area_random_curves(obs):
    observed = np.array(obs)
    expected = np.linspace(0, 1, observed.size)
    got = calibration_errors(expected, observed)
    assert got["miscal_area"] == pytest.approx(_area_by_quadrature(expected, observed), rel=1e-7, abs=1e-10)
    assert 0.0 <= got["ma_cal"] <= got["rms_cal"] + 1e-15


def test_calibration_errors_batch_equals_single():
    rng = np.random.default_rng(3)
    obs = np.sort(rng.uniform(size=(5, 100)), axis=1)
    batch = calibration_errors(EXPECTED, obs)
    for m in range(5):
        single = calibration_errors(EXPECTED, obs[m])
        for key in single:
            assert batch[key][m] == single[key]


def test_cover_index_hand_computed():
    expected = np.array([0.0, 0.5, 0.9, 1.0])
    t = norm.ppf(0.5 + expected / 2.0)  # 0, 0.674.., 1.644.., inf
    z_abs = np.array([0.0, 1e-300, t[1], np.nextafter(t[1], 2), 1.0, t[2], 5.0, 1e300])
    got = interval_cover_index(z_abs, expected)
    assert got.tolist() == [0, 1, 1, 2, 2, 2, 3, 3]
    assert observed_from_cover_index(got, 4).tolist() == [1 / 8, 3 / 8, 6 / 8, 1.0]


def test_cover_index_never_covered():
    expected = np.array([0.0, 0.5])
    assert interval_cover_index(np.array([0.2, 3.0]), expected).tolist() == [1, 2]
    assert observed_from_cover_index(np.array([1, 2]), 2).tolist() == [0.0, 0.5]


@pytest.mark.parametrize("name", sorted(TOOLBOX_AVG_CALIBRATION))
def test_observed_equals_brute_force(name):
    y, mean, std = toolbox_datasets()[name]
    cover = interval_cover_index(np.abs(y - mean) / std, EXPECTED)
    observed = observed_from_cover_index(cover, EXPECTED.size)
    np.testing.assert_array_equal(observed, _brute_observed(y, mean, std, EXPECTED))


def test_perfectly_calibrated_gaussian_large_n():
    rng = np.random.default_rng(12345)
    n = 200_000
    mean = rng.normal(size=n)
    std = rng.uniform(0.1, 3.0, n)
    y = mean + std * rng.standard_normal(n)
    got = avg_calibration_gaussian(y, mean, std)
    assert got["ma_cal"] < 0.005 and got["rms_cal"] < 0.005 and got["miscal_area"] < 0.005
    bad = avg_calibration_gaussian(y, mean, 0.5 * std)  # over-confident: clearly worse
    assert bad["ma_cal"] > 0.1


@st.composite
def gaussian_data(draw, min_size=1):
    n = draw(st.integers(min_size, 40))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n) * draw(st.floats(0.1, 100))
    std = rng.uniform(0.01, 3.0, n)
    y = mean + std * rng.standard_normal(n) * draw(st.floats(0.2, 3.0))
    return y, mean, std


@SETTINGS
@given(gaussian_data(), st.randoms(use_true_random=False))
def test_row_order_invariance(data, rnd):
    y, mean, std = data
    perm = np.array(rnd.sample(range(len(y)), len(y)))
    assert avg_calibration_gaussian(y, mean, std) == avg_calibration_gaussian(y[perm], mean[perm], std[perm])


@SETTINGS
@given(gaussian_data(), st.integers(2, 120))
def test_matches_brute_force_any_num_bins(data, num_bins):
    y, mean, std = data
    expected = np.linspace(0, 1, num_bins)
    ref = calibration_errors(expected, _brute_observed(y, mean, std, expected))
    got = avg_calibration_gaussian(y, mean, std, num_bins=num_bins)
    for key in ref:
        assert got[key] == pytest.approx(ref[key], rel=1e-12, abs=1e-15)
    assert 0.0 <= got["ma_cal"] <= got["rms_cal"] + 1e-15 <= 1.0 + 1e-15


def test_bad_input():
    with pytest.raises(InputError, match="std must be > 0"):
        avg_calibration_gaussian([1.0, 2.0], [1.0, 2.0], [1.0, 0.0])
    with pytest.raises(InputError, match="num_bins"):
        avg_calibration_gaussian([1.0], [1.0], [1.0], num_bins=1)
    with pytest.raises(InputError, match="ascending"):
        interval_cover_index(np.array([0.1]), np.array([0.5, 0.2]))
    with pytest.raises(InputError, match="non-negative"):
        interval_cover_index(np.array([-0.1]), EXPECTED)
    with pytest.raises(InputError, match="integers in 0..3"):
        observed_from_cover_index(np.array([0, 4]), 3)
    with pytest.raises(InputError, match="columns"):
        calibration_errors(EXPECTED, np.zeros(99))
