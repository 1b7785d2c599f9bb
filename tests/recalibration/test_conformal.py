"""Split-conformal intervals: ranks, guarantees, held-out coverage, bad input."""

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.special import ndtr

from uqeval.errors import InputError
from uqeval.recalibration.conformal import apply_conformal, fit_conformal, min_rows


def test_hand_case_raw_residuals():
    y = np.arange(1.0, 10.0)  # residuals 1..9, n = 9
    state = fit_conformal(y, np.zeros(9), levels=[0.5, 0.9])
    assert state["normalized"] is False
    assert state["rank"] == [5, 9]  # ceil(10 * 0.5), ceil(10 * 0.9)
    assert state["score_quantile"] == [5.0, 9.0]
    assert state["coverage_guaranteed"] == [0.5, 0.9]
    assert state["coverage_upper"] == [0.6, 1.0]
    out = apply_conformal(state, np.array([0.0, 10.0]))
    np.testing.assert_array_equal(out[0.9][0], [-9.0, 1.0])
    np.testing.assert_array_equal(out[0.9][1], [9.0, 19.0])


def test_rank_uses_exact_decimal_arithmetic():
    # (n + 1) * 0.7 = 7 exactly: k = 7, not 8 (float 10 * 0.7 ceil would be fine, 0.7 * 10 too;
    # 0.1 * 30 = 3.0000000000000004 in floats would give 4)
    state = fit_conformal(np.arange(1.0, 30.0), np.zeros(29), levels=[0.1, 0.7])
    assert state["rank"] == [3, 21]


def test_normalised_scores_scale_with_std():
    rng = np.random.default_rng(0)
    sd = rng.uniform(0.5, 3.0, size=200)
    y = rng.normal(scale=sd)
    state = fit_conformal(y, np.zeros(200), sd, levels=[0.8])
    assert state["normalized"] is True
    k = state["rank"][0]
    assert state["score_quantile"][0] == np.sort(np.abs(y) / sd)[k - 1]
    lo, hi = apply_conformal(state, np.ones(3), np.array([1.0, 2.0, 4.0]))[0.8]
    np.testing.assert_allclose(hi - 1.0, state["score_quantile"][0] * np.array([1.0, 2.0, 4.0]))
    np.testing.assert_allclose(1.0 - lo, hi - 1.0)


def test_min_rows():
    assert min_rows(0.9) == 9
    assert min_rows(0.95) == 19
    assert min_rows(0.99) == 99
    assert min_rows(0.5) == 1
    for level in (0.6, 0.75, 0.8, 0.9, 0.95, 0.975):
        n = min_rows(level)
        fit_conformal(np.arange(1.0, n + 1), np.zeros(n), levels=[level])
        with pytest.raises(InputError):
            fit_conformal(np.arange(1.0, n), np.zeros(n - 1), levels=[level])


def test_too_few_rows_says_how_many():
    with pytest.raises(InputError, match="need at least 19"):
        fit_conformal(np.arange(10.0), np.zeros(10), levels=[0.5, 0.95])


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_marginal_coverage_at_least_level(seed):
    # Exchangeable data: a misspecified Gaussian (true std = 1.7 * predicted). The coverage
    # of a new row given the calibration set is exactly 2 Phi(q / 1.7) - 1, so averaging it
    # over many calibration draws estimates the marginal coverage without test noise.
    # Theory: E[coverage] = k / (n + 1) >= level for continuous scores.
    rng = np.random.default_rng(seed)
    n, reps, level = 50, 2000, 0.9
    cov = np.empty(reps)
    for r in range(reps):
        sd = rng.uniform(0.5, 2.0, size=n)
        y = rng.normal(scale=1.7 * sd)
        q = fit_conformal(y, np.zeros(n), sd, levels=[level])["score_quantile"][0]
        cov[r] = 2.0 * ndtr(q / 1.7) - 1.0
    k = int(np.ceil((n + 1) * level))
    se = cov.std(ddof=1) / np.sqrt(reps)
    assert cov.mean() == pytest.approx(k / (n + 1), abs=4 * se)
    assert cov.mean() >= level - 1 * se


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_held_out_coverage_raw_residuals(seed):
    # point predictions, heavy-tailed heteroscedastic noise; a large calibration set and test set
    rng = np.random.default_rng(seed)

    def draw(m):
        x = rng.uniform(size=m)
        return np.sin(4 * x) + (0.2 + x) * rng.standard_t(4, size=m), np.sin(4 * x)

    y, mu = draw(2000)
    levels = [0.5, 0.8, 0.9, 0.95]
    state = fit_conformal(y, mu, levels=levels)
    y2, mu2 = draw(100_000)
    out = apply_conformal(state, mu2)
    for level, guaranteed in zip(levels, state["coverage_guaranteed"]):
        lo, hi = out[level]
        coverage = np.mean((lo <= y2) & (y2 <= hi))
        assert guaranteed >= level
        # the conditional coverage given 2000 calibration rows has sd ~ sqrt(l(1-l)/2000) <= 0.011
        assert coverage >= level - 0.03
        assert coverage <= level + 0.03


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(20, 200),
    level=st.sampled_from([0.5, 0.8, 0.9, 0.95]),
    seed=st.integers(0, 10_000),
)
def test_in_sample_coverage_at_least_level(n, level, seed):
    # at least k = ceil((n+1) level) of the n scores are <= the k-th order statistic
    rng = np.random.default_rng(seed)
    y = rng.standard_cauchy(size=n)
    sd = rng.uniform(0.1, 3.0, size=n)
    state = fit_conformal(y, np.zeros(n), sd, levels=[level])
    assert np.mean(np.abs(y) / sd <= state["score_quantile"][0]) >= level
    # the row defining the quantile sits on the interval's edge, up to rounding of q * sd
    lo, hi = apply_conformal(state, np.zeros(n), sd)[level]
    tol = 1e-12 * (1.0 + np.abs(y))
    assert np.mean((lo <= y + tol) & (y - tol <= hi)) >= level


def test_state_is_json():
    state = fit_conformal(np.arange(1.0, 40.0), np.zeros(39), np.ones(39), levels=(0.9, 0.95))
    assert json.loads(json.dumps(state)) == state


def test_bad_input():
    y = np.arange(1.0, 40.0)
    with pytest.raises(InputError, match="levels"):
        fit_conformal(y, np.zeros(39), levels=[1.0])
    with pytest.raises(InputError, match="levels"):
        fit_conformal(y, np.zeros(39), levels=[])
    with pytest.raises(InputError, match="finite"):
        fit_conformal(np.r_[np.nan, y[1:]], np.zeros(39))
    with pytest.raises(InputError, match="> 0"):
        fit_conformal(y, np.zeros(39), np.r_[-1.0, np.ones(38)])
    with pytest.raises(InputError, match="rows"):
        fit_conformal(y, np.zeros(38))
    normalised = fit_conformal(y, np.zeros(39), np.ones(39))
    with pytest.raises(InputError, match="pass std"):
        apply_conformal(normalised, np.zeros(3))
    raw = fit_conformal(y, np.zeros(39))
    with pytest.raises(InputError, match="raw residuals"):
        apply_conformal(raw, np.zeros(3), np.ones(3))
    with pytest.raises(InputError, match="score_quantile"):
        apply_conformal({"method": "conformal", "normalized": False}, np.zeros(3))


def test_central_pit_from_the_score_sample():
    from uqeval.recalibration.conformal import SCORE_SAMPLE_SIZE, conformal_central_pit

    rng = np.random.default_rng(11)
    n = 5000
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2, n)
    y = mu + 1.7 * sd * rng.normal(size=n)  # miscalibrated by a factor 1.7; conformal fixes it
    state = fit_conformal(y, mu, sd, levels=(0.9,))
    assert len(state["score_sample"]) == SCORE_SAMPLE_SIZE  # large n: a quantile summary, not every score
    m2 = rng.normal(size=n)
    s2 = rng.uniform(0.5, 2, n)
    c = conformal_central_pit(state, m2 + 1.7 * s2 * rng.normal(size=n), m2, s2)
    # exchangeable new data: the central PIT is close to uniform
    assert np.max(np.abs(np.sort(c) - (np.arange(n) + 0.5) / n)) < 0.03
    small = fit_conformal(y[:50], mu[:50], sd[:50], levels=(0.9,))
    assert small["score_sample"] == sorted(small["score_sample"]) and len(small["score_sample"]) == 50
    legacy = {k: v for k, v in state.items() if k != "score_sample"}
    assert conformal_central_pit(legacy, y, mu, sd) is None
