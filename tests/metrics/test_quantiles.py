"""Tests of uqeval.metrics.quantiles: pinball, interval score, WIS, calibration, PIT histograms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from scipy.special import ndtr, ndtri
from scipy.stats import norm

from tests.metrics.test_intervals import gaussian_interval
from tests.reference.regen_properscoring import quantile_data
from uqeval.errors import InputError
from uqeval.metrics.intervals import coverage_metrics
from uqeval.metrics.quantiles import (
    check_quantiles_sorted,
    interval_calibration_curve_from_pit,
    pit_histogram,
    pit_histogram_quantiles,
    quantile_calibration_curve,
    quantile_scores,
    weighted_interval_score,
)
from uqeval.metrics.samples import pit_samples

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

# Frozen with tests/reference/regen_properscoring.py.
# scoringrules 0.10.0 quantile_score / interval_score (row means) and
# weighted_interval_score(backend="numba") per row
SCORINGRULES_QUANTILE = {
    "full": {
        "interval_score": [10.1, 8.171428571428573, 4.885714285714285],
        "quantile_score": [
            0.31357142857142856,
            0.42000000000000004,
            0.5714285714285714,
            0.7000000000000001,
            0.6499999999999998,
            0.3971428571428572,
            0.19142857142857148,
        ],
        "wis": [
            0.27142857142857146,
            1.0571428571428572,
            1.8414285714285714,
            1.8228571428571427,
            0.0,
            0.25142857142857145,
            1.2428571428571427,
        ],
    },
    "nomed": {
        "interval_score": [10.1, 4.885714285714285],
        "quantile_score": [
            0.31357142857142856,
            0.42000000000000004,
            0.5714285714285714,
            0.6499999999999998,
            0.19142857142857148,
        ],
        "wis": [0.25, 0.95, 1.7925, 1.7249999999999999, 0.0, 0.2, 1.125],
    },
}

INTERVAL_KEYS = {"full": ["0.9", "0.8", "0.5"], "nomed": ["0.9", "0.5"]}


# --- reference values --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCORINGRULES_QUANTILE))
def test_scores_match_scoringrules(name):
    y, q, levels = quantile_data()[name]
    ref = SCORINGRULES_QUANTILE[name]
    np.testing.assert_allclose(weighted_interval_score(y, q, levels), ref["wis"], rtol=1e-12, atol=1e-14)
    out = quantile_scores(y, q, levels)
    assert list(out["pinball_by_level"]) == [f"{t:g}" for t in levels]
    assert list(out["pinball_by_level"].values()) == pytest.approx(ref["quantile_score"], rel=1e-12)
    assert out["pinball"] == pytest.approx(np.mean(ref["quantile_score"]), rel=1e-12)
    assert list(out["interval_by_level"]) == INTERVAL_KEYS[name]
    assert list(out["interval_by_level"].values()) == pytest.approx(ref["interval_score"], rel=1e-12)
    assert out["wis"] == pytest.approx(np.mean(ref["wis"]), rel=1e-12)


def test_wis_hand_case():
    # levels 0.25, 0.5, 0.75 (K = 1, alpha = 0.5); y = 3 above u = 2, m = 1:
    # IS = (2 - 0) + 2/0.5 * (3 - 2) = 6; WIS = (0.5*|3 - 1| + 0.25*6) / 1.5 = 2.5 / 1.5
    wis = weighted_interval_score([3.0], [[0.0, 1.0, 2.0]], [0.25, 0.5, 0.75])
    assert wis[0] == pytest.approx(2.5 / 1.5)
    # median only (K = 0): WIS is the absolute error
    assert weighted_interval_score([3.0], [[1.0]], [0.5])[0] == pytest.approx(2.0)
    # no median: (1/K) * alpha/2 * IS = 0.25 * 6
    assert weighted_interval_score([3.0], [[0.0, 2.0]], [0.25, 0.75])[0] == pytest.approx(1.5)


def test_wis_is_twice_mean_pinball_for_symmetric_levels_with_median():
    rng = np.random.default_rng(4)
    levels = np.array([0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975])
    q = np.sort(rng.normal(size=(50, levels.size)), axis=1)
    y = rng.normal(size=50)
    out = quantile_scores(y, q, levels)
    # (1/(K+1/2)) * sum over 2K+1 pinball losses = 2 * mean pinball
    np.testing.assert_allclose(out["wis"], 2 * out["pinball"], rtol=1e-12)


def test_wis_of_dense_gaussian_quantiles_approaches_crps():
    mu, sigma = 0.5, 2.0
    y = np.array([-3.0, 0.0, 0.5, 2.5, 7.0])
    tau = np.arange(1, 200) / 200  # 0.005 .. 0.995 with median, K = 99 pairs
    q = mu + sigma * ndtri(tau)[None, :].repeat(y.size, axis=0)
    z = (y - mu) / sigma
    crps = sigma * (z * (2 * norm.cdf(z) - 1) + 2 * norm.pdf(z) - 1 / np.sqrt(np.pi))
    np.testing.assert_allclose(weighted_interval_score(y, q, tau), crps, rtol=0.02)


def test_wis_needs_median_or_pair():
    with pytest.raises(InputError, match="median"):
        weighted_interval_score([0.0], [[0.0, 1.0]], [0.1, 0.3])
    out = quantile_scores([0.0], [[0.0, 1.0]], [0.1, 0.3])
    assert "wis" not in out and out["interval_by_level"] == {}


# --- calibration curve and PIT histograms ------------------------------------------------


def test_calibration_curve_hand_case():
    y = np.array([0.0, 1.0, 2.0, 3.0])
    q = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [5.0, 6.0]])
    expected, observed = quantile_calibration_curve(y, q, [0.2, 0.8])
    np.testing.assert_array_equal(expected, [0.2, 0.8])
    np.testing.assert_allclose(observed, [2 / 4, 3 / 4])  # y <= q counts ties: rows 0, 3 and 0, 1, 3


def test_calibration_curve_of_true_gaussian_quantiles_is_diagonal():
    rng = np.random.default_rng(9)
    n = 50_000
    mean = rng.normal(size=n)
    y = mean + rng.normal(size=n)
    levels = np.array([0.05, 0.2, 0.5, 0.8, 0.95])
    q = mean[:, None] + ndtri(levels)[None, :]
    expected, observed = quantile_calibration_curve(y, q, levels)
    assert np.abs(observed - expected).max() < 4 * np.sqrt(0.25 / n)


def test_pit_histogram_quantiles_hand_case():
    y = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    q = np.tile([0.0, 1.0], (5, 1))
    out = pit_histogram_quantiles(y, q, [0.25, 0.75])
    np.testing.assert_array_equal(out["edges"], [0.0, 0.25, 0.75, 1.0])
    # bins: y <= q_.25 -> 0 (-1, 0); q_.25 < y <= q_.75 -> 1 (0.5, 1); above -> 2 (2)
    np.testing.assert_array_equal(out["counts"], [2, 2, 1])
    np.testing.assert_allclose(out["expected_counts"], [1.25, 2.5, 1.25])


def test_pit_histogram_quantiles_consistent_with_calibration_curve():
    y, q, levels = quantile_data()["full"]
    out = pit_histogram_quantiles(y, q, levels)
    _, observed = quantile_calibration_curve(y, q, levels)
    np.testing.assert_allclose(np.cumsum(out["counts"])[:-1] / y.size, observed)
    assert out["counts"].sum() == y.size
    assert out["expected_counts"].sum() == pytest.approx(y.size)


def test_pit_histogram():
    pit = np.array([0.0, 0.05, 0.1, 0.5, 0.95, 1.0, 1.0])
    out = pit_histogram(pit, bins=10)
    np.testing.assert_allclose(out["edges"], np.linspace(0, 1, 11))
    expected = np.zeros(10, dtype=int)
    expected[[0, 1, 5]] = 1, 1, 1
    expected[0] += 1  # 0.05 is in [0, 0.1)
    expected[9] = 3  # 0.95, 1.0, 1.0: last bin closed
    np.testing.assert_array_equal(out["counts"], expected)
    np.testing.assert_allclose(out["expected_counts"], np.full(10, 0.7))
    with pytest.raises(InputError, match=r"within \[0, 1\]"):
        pit_histogram(np.array([0.5, 1.2]))
    with pytest.raises(InputError, match="bins"):
        pit_histogram(pit, bins=0)


def test_interval_curve_from_pit_hand_case():
    pit = np.array([0.5, 0.025, 0.975, 0.01, 0.3, 1.0])
    # |2u - 1| = 0, 0.95, 0.95, 0.98, 0.4, 1.0
    observed = interval_calibration_curve_from_pit(pit, [0.0, 0.4, 0.95, 0.99])
    np.testing.assert_allclose(observed, [1 / 6, 2 / 6, 4 / 6, 5 / 6])


def test_interval_curve_from_gaussian_pit_equals_gaussian_coverage():
    rng = np.random.default_rng(12)
    n = 3000
    mean, std = rng.normal(size=n), rng.uniform(0.5, 2, size=n)
    y = rng.normal(scale=1.5, size=n)
    levels = np.array([0.5, 0.8, 0.9, 0.95])
    observed = interval_calibration_curve_from_pit(ndtr((y - mean) / std), levels)
    direct = [coverage_metrics(y, *gaussian_interval(mean, std, p), p)["coverage"] for p in levels]
    np.testing.assert_allclose(observed, direct)


def test_interval_curve_from_sample_pit_matches_member_intervals():
    # y inside [x_(k), x_(M+1-k)] (k-th order statistics) <=> |2u - 1| <= (M + 1 - 2k) / M
    rng = np.random.default_rng(13)
    n, m = 2000, 20
    s = np.round(rng.normal(size=(n, m)), 1)
    y = np.round(rng.normal(size=n), 1)
    xs = np.sort(s, axis=1)
    u = pit_samples(y, s)
    for k in (1, 2, 5):
        lo, hi = xs[:, k - 1], xs[:, m - k]
        p = (m + 1 - 2 * k) / m
        inside = np.mean((y > lo) & (y < hi))  # strictly inside: no tie ambiguity at the ends
        observed = interval_calibration_curve_from_pit(u, [p])[0]
        # mid-point ties at the ends count as half-in, so the curve is between strict and closed
        closed = np.mean((y >= lo) & (y <= hi))
        assert inside - 1e-12 <= observed <= closed + 1e-12


# --- crossing ----------------------------------------------------------------------------


def test_check_quantiles_sorted_names_row_and_columns(cli_voice):
    q = np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 1.0], [0.0, 2.0, 1.5], [3.0, 2.0, 1.0]])
    with pytest.raises(InputError) as err:
        check_quantiles_sorted(q, [0.1, 0.5, 0.9])
    msg = str(err.value)
    assert "2 row(s)" in msg and "row 2" in msg and "'q_0.5'" in msg and "'q_0.9'" in msg
    assert "--fix-crossing" in msg
    with pytest.raises(InputError, match="'lo' = 3 > column 'mid'"):
        check_quantiles_sorted(q[3:], [0.1, 0.5, 0.9], columns=["lo", "mid", "hi"])
    check_quantiles_sorted(q[:2], [0.1, 0.5, 0.9])  # ties are fine


def test_bad_levels_and_shapes():
    y, q = np.zeros(2), np.zeros((2, 2))
    with pytest.raises(InputError, match="increasing"):
        quantile_scores(y, q, [0.9, 0.1])
    with pytest.raises(InputError, match="between 0 and 1"):
        quantile_scores(y, q, [0.0, 0.5])
    with pytest.raises(InputError, match="2 column"):
        quantile_scores(y, q, [0.1, 0.5, 0.9])
    with pytest.raises(InputError, match="inconsistent"):
        quantile_scores(np.zeros(3), q, [0.1, 0.9])
    with pytest.raises(InputError, match="quantiles must be finite"):
        quantile_scores(y, np.array([[0.0, np.nan], [0.0, 1.0]]), [0.1, 0.9])


# --- properties --------------------------------------------------------------------------

LEVELS = np.array([0.05, 0.25, 0.5, 0.75, 0.95])


def _flat(scores: dict) -> dict:
    out = {}
    for key, value in scores.items():
        if isinstance(value, dict):
            out.update({f"{key}/{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


@st.composite
def quantile_forecasts(draw):
    n = draw(st.integers(1, 10))
    q = draw(arrays(np.float64, (n, LEVELS.size), elements=st.floats(-50, 50)))
    y = draw(arrays(np.float64, (n,), elements=st.floats(-50, 50)))
    return y, np.sort(q, axis=1)


@SETTINGS
@given(data=quantile_forecasts(), seed=st.integers(0, 2**16))
def test_scores_nonnegative_and_row_order_invariant(data, seed):
    y, q = data
    wis = weighted_interval_score(y, q, LEVELS)
    assert (wis >= 0).all()
    rows = np.random.default_rng(seed).permutation(y.size)
    np.testing.assert_allclose(weighted_interval_score(y[rows], q[rows], LEVELS), wis[rows])
    out = _flat(quantile_scores(y, q, LEVELS))
    assert _flat(quantile_scores(y[rows], q[rows], LEVELS)) == pytest.approx(out, rel=1e-12, abs=1e-12)
    # a perfect (degenerate) forecast scores zero
    assert weighted_interval_score(y, np.repeat(y[:, None], LEVELS.size, axis=1), LEVELS) == pytest.approx(
        0.0
    )


def test_pit_cover_index_reproduces_the_interval_curve():
    from uqeval.metrics.quantiles import interval_calibration_curve_from_pit, pit_cover_index

    rng = np.random.default_rng(5)
    pit = np.r_[rng.uniform(size=500), 0.0, 1.0, 0.5, 0.75]
    expected = np.linspace(0, 1, 21)
    idx = pit_cover_index(pit, expected)
    counts = np.cumsum(np.bincount(idx, minlength=len(expected) + 1))[:-1] / pit.size
    np.testing.assert_array_equal(counts, interval_calibration_curve_from_pit(pit, expected))
