"""Isotonic recalibration: toolbox fixture, conventional direction, held-out coverage."""

import json

import numpy as np
import pytest
from scipy.special import ndtri

from uqeval.errors import InputError
from uqeval.metrics.calibration import avg_calibration_gaussian
from uqeval.metrics.reliability import max_calibration_error, pit_gaussian
from uqeval.recalibration.isotonic import (
    _inverse,
    fit_isotonic,
    isotonic_cdf,
    isotonic_equivalent_std,
    isotonic_intervals,
    isotonic_quantiles,
)


def issue_fixture_5000():
    y_pred = np.arange(5000) / 5000
    return y_pred + 0.5, y_pred, np.arange(50, 5050) / 1000


def toolbox_fixture_100():
    y_pred = np.arange(100) / 100.0
    return y_pred + 0.5, y_pred, np.arange(1, 101) / 20.0


def interval_mace(state, y, mu, sd):
    """Interval-mode MACE of the recalibrated forecasts on the toolbox's 100-level grid.

    Levels 0 and 1 contribute 0 (the empty and the whole-line interval), as in the toolbox.
    """
    p = np.linspace(0.0, 1.0, 100)
    lo, hi = isotonic_intervals(state, mu, sd, p[1:-1])
    inside = (lo <= y[:, None]) & (y[:, None] <= hi)
    observed = np.concatenate([[0.0], inside.mean(axis=0), [1.0]])
    return float(np.mean(np.abs(observed - p)))


def test_issue_fixture_mace_drops():
    y, mu, sd = issue_fixture_5000()
    # uncertainty-toolbox 0.1.1: MACE 0.24615860606060605 before, 0.0011466060606060357 after
    # its interval-mode iso_recal (tests/reference/regen_recalibration.py). The issue quotes
    # the toolbox test's 100-row values, 0.242 -> 0.003.
    assert avg_calibration_gaussian(y, mu, sd)["ma_cal"] == pytest.approx(0.24615860606060605, abs=1e-12)
    state = fit_isotonic(y, mu, sd)
    assert interval_mace(state, y, mu, sd) <= 0.0011466060606060357


def test_toolbox_fixture_mace_drops():
    y, mu, sd = toolbox_fixture_100()
    # uncertainty-toolbox 0.1.1 tests: 0.24206060606060598 -> 0.003035353535353514. With 100
    # rows every observed proportion is a multiple of 0.01, so ~0.005 is the granularity.
    assert avg_calibration_gaussian(y, mu, sd)["ma_cal"] == pytest.approx(0.24206060606060598, abs=1e-12)
    assert interval_mace(fit_isotonic(y, mu, sd), y, mu, sd) <= 0.006


def test_conventional_direction_on_biased_forecast():
    # every target lies above its mean: recalibrated medians must move up, not down
    # (the toolbox's mirrored quantile mode moves them the wrong way).
    y, mu, sd = issue_fixture_5000()
    state = fit_isotonic(y, mu, sd)
    med = isotonic_quantiles(state, mu, sd, [0.5])[:, 0]
    assert np.all(med > mu)
    q = isotonic_quantiles(state, mu, sd, [0.1, 0.5, 0.9])
    np.testing.assert_allclose((y[:, None] <= q).mean(axis=0), [0.1, 0.5, 0.9], atol=0.01)


def _misspecified(rng, m):
    x = rng.uniform(size=m)
    mu = np.sin(3 * x)
    scale = 0.3 + x
    y = mu + 0.2 + scale * rng.standard_t(5, size=m)  # biased, heavy-tailed
    return y, mu, 0.5 * scale  # and overconfident


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_held_out_quantile_coverage(seed):
    rng = np.random.default_rng(seed)
    state = fit_isotonic(*_misspecified(rng, 20_000))
    y, mu, sd = _misspecified(rng, 100_000)
    levels = np.array([0.02, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.98])
    q = isotonic_quantiles(state, mu, sd, levels)
    coverage = (y[:, None] <= q).mean(axis=0)
    # sup of the calibration ECDF error is ~1/sqrt(20000) = 0.007
    np.testing.assert_allclose(coverage, levels, atol=0.02)
    # the uncalibrated quantiles are far off, so this test can fail
    raw = (y[:, None] <= mu[:, None] + sd[:, None] * ndtri(levels)).mean(axis=0)
    assert np.max(np.abs(raw - levels)) > 0.15
    # central intervals and the recalibrated PIT
    lo, hi = isotonic_intervals(state, mu, sd, [0.5, 0.9])
    inside = ((lo <= y[:, None]) & (y[:, None] <= hi)).mean(axis=0)
    np.testing.assert_allclose(inside, [0.5, 0.9], atol=0.03)
    assert max_calibration_error(isotonic_cdf(state, y, mu, sd)) < 0.02
    assert max_calibration_error(pit_gaussian(y, mu, sd)) > 0.15


def test_in_sample_quantiles_hit_their_level():
    rng = np.random.default_rng(5)
    y, mu, sd = _misspecified(rng, 3000)
    state = fit_isotonic(y, mu, sd)
    levels = np.linspace(0.01, 0.99, 99)
    coverage = (y[:, None] <= isotonic_quantiles(state, mu, sd, levels)).mean(axis=0)
    # the knots include the 1%-quantiles of the PIT: exact up to one row per 1% cell
    np.testing.assert_allclose(coverage, levels, atol=0.011)


def test_equivalent_std_of_scaled_model():
    rng = np.random.default_rng(6)
    true_sd = rng.uniform(0.5, 2.0, size=50_000)
    y = rng.normal(scale=true_sd)
    state = fit_isotonic(y, np.zeros_like(y), true_sd / 2.0)  # twice too confident
    factors = isotonic_equivalent_std(state, [0.5, 0.8, 0.9, 0.95])
    assert set(factors) == {0.5, 0.8, 0.9, 0.95}
    for v in factors.values():
        assert v == pytest.approx(2.0, rel=0.03)
    # a calibrated model is (nearly) left alone
    state = fit_isotonic(y, np.zeros_like(y), true_sd)
    for v in isotonic_equivalent_std(state, [0.5, 0.9]).values():
        assert v == pytest.approx(1.0, rel=0.03)


def test_quantiles_monotone_and_intervals_nested():
    rng = np.random.default_rng(7)
    y, mu, sd = _misspecified(rng, 500)
    state = fit_isotonic(y, mu, sd)
    q = isotonic_quantiles(state, mu[:50], sd[:50], np.linspace(0.01, 0.99, 30))
    assert q.shape == (50, 30)
    assert np.all(np.diff(q, axis=1) >= 0)
    assert np.all(np.isfinite(q))
    lo, hi = isotonic_intervals(state, mu[:50], sd[:50], [0.5, 0.9])
    assert lo.shape == hi.shape == (50, 2)
    assert np.all(lo[:, 1] <= lo[:, 0]) and np.all(hi[:, 0] <= hi[:, 1])


def test_inverse_hand_cases():
    x = np.array([0.0, 0.25, 0.5, 1.0])
    r = np.array([0.0, 0.5, 0.5, 1.0])  # flat at 0.5 on [0.25, 0.5]
    got = _inverse(x, r, np.array([0.25, 0.5, 0.75]))
    np.testing.assert_allclose(got, [0.125, 0.375, 0.75])  # 0.5: middle of the flat part


def test_extreme_pit_gives_finite_quantiles():
    # standardised residuals of 10 give PIT == 1.0 in floating point
    y = np.r_[np.full(50, 10.0), np.linspace(-1, 1, 50)]
    state = fit_isotonic(y, np.zeros(100), np.ones(100))
    q = isotonic_quantiles(state, np.zeros(3), np.ones(3), [0.001, 0.999])
    assert np.all(np.isfinite(q))


def test_state_is_json_with_valid_knots():
    y, mu, sd = toolbox_fixture_100()
    state = fit_isotonic(y, mu, sd)
    assert json.loads(json.dumps(state)) == state
    assert state["direction"] == "quantile"
    x, r = np.array(state["expected"]), np.array(state["observed"])
    assert x[0] == 0.0 and x[-1] == 1.0 and np.all(np.diff(x) > 0)
    assert r[0] == 0.0 and r[-1] == 1.0 and np.all(np.diff(r) >= 0)
    assert len(x) <= 2 * (state["num_bins"] + 1)


def test_bad_input():
    y, mu, sd = toolbox_fixture_100()
    with pytest.raises(InputError, match="finite"):
        fit_isotonic(np.r_[np.nan, y[1:]], mu, sd)
    with pytest.raises(InputError, match="at least 2"):
        fit_isotonic([1.0], [0.0], [1.0])
    state = fit_isotonic(y, mu, sd)
    with pytest.raises(InputError, match="levels"):
        isotonic_quantiles(state, mu, sd, [0.0, 0.5])
    with pytest.raises(InputError, match="levels"):
        isotonic_intervals(state, mu, sd, [1.5])
    with pytest.raises(InputError, match="std"):
        isotonic_quantiles(state, mu, -sd, [0.5])
    bad = dict(state, observed=state["observed"][::-1])
    with pytest.raises(InputError, match="knots"):
        isotonic_quantiles(bad, mu, sd, [0.5])
    with pytest.raises(InputError, match="expected"):
        isotonic_equivalent_std({"method": "isotonic"}, [0.5])


def test_quantiles_and_cdf_are_bitwise_the_whole_array_formulas():
    # level by level (quantiles) and block by block (cdf): the bits of the broadcast formulas
    from uqeval.metrics.normal import ndtr

    rng = np.random.default_rng(8)
    n = 40_000  # more than one block
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    y = mu + 1.5 * sd * rng.standard_normal(n)
    state = fit_isotonic(y, mu, sd)
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    x, r = np.asarray(state["expected"]), np.asarray(state["observed"])
    q = isotonic_quantiles(state, mu, sd, levels)
    np.testing.assert_array_equal(
        q, mu[:, None] + sd[:, None] * ndtri(_inverse(x, r, np.asarray(levels)))[None, :]
    )
    assert all(q[:, j].flags.c_contiguous for j in range(len(levels)))
    np.testing.assert_array_equal(isotonic_cdf(state, y, mu, sd), np.interp(ndtr((y - mu) / sd), x, r))
