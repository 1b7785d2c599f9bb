"""Tests of uqeval.metrics.samples: ensemble CRPS (ECDF and fair), quantiles, PIT."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from scipy import integrate
from scipy.special import ndtri
from scipy.stats import norm

from tests.reference.regen_properscoring import sample_data
from uqeval.errors import InputError
from uqeval.metrics import samples as samples_mod
from uqeval.metrics.samples import (
    crps_ensemble,
    crps_ensemble_and_fair,
    crps_fair,
    empirical_quantiles,
    ensemble_mean_std,
    pit_samples,
)

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)

# Frozen with tests/reference/regen_properscoring.py.
# properscoring 0.1 crps_ensemble
PROPERSCORING_CRPS = {
    "m10": [
        3.9139999999999997,
        3.0619999999999994,
        1.3900000000000001,
        0.514,
        0.3010000000000001,
        1.586,
        0.7160000000000002,
        3.5580000000000003,
        0.0,
        0.5,
    ],
    "m2": [0.25, 0.0, 2.25, 0.25],
    "m3": [0.11111111111111113, 0.3333333333333333, 0.03888888888888888],
}
# scoringrules 0.10.0 crps_ensemble(estimator="fair", backend="numba")
SCORINGRULES_CRPS_FAIR = {
    "m10": [
        3.8422222222222224,
        2.937777777777777,
        1.2822222222222224,
        0.4266666666666664,
        0.21333333333333337,
        1.5066666666666664,
        0.5822222222222226,
        3.466666666666667,
        0.0,
        0.5,
    ],
    "m2": [0.0, 0.0, 1.0, 0.0],
    "m3": [0.0, 0.0, 0.016666666666666663],
}


def naive_crps(y, s, fair=False):
    """O(M^2) definition: mean|X - y| - 1/2 mean|X - X'| (the slow, obviously correct reference)."""
    m = s.shape[1]
    first = np.abs(s - y[:, None]).mean(axis=1)
    pairs = np.abs(s[:, :, None] - s[:, None, :]).sum(axis=(1, 2))
    return first - pairs / (2 * m * (m - 1 if fair else m))


def gaussian_crps(y, mu, sigma):
    z = (y - mu) / sigma
    return sigma * (z * (2 * norm.cdf(z) - 1) + 2 * norm.pdf(z) - 1 / np.sqrt(np.pi))


# --- reference values --------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PROPERSCORING_CRPS))
def test_crps_matches_properscoring(name):
    y, s = sample_data()[name]
    np.testing.assert_allclose(crps_ensemble(y, s), PROPERSCORING_CRPS[name], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", sorted(SCORINGRULES_CRPS_FAIR))
def test_crps_fair_matches_scoringrules(name):
    y, s = sample_data()[name]
    np.testing.assert_allclose(crps_fair(y, s), SCORINGRULES_CRPS_FAIR[name], rtol=1e-12, atol=1e-14)


def test_hand_cases():
    # M = 2 members {0, 1}, y = 0.5: mean|x - y| = 0.5, pair term 1/2 * (2 * 1) / 4 = 0.25
    assert crps_ensemble([0.5], [[0.0, 1.0]])[0] == pytest.approx(0.25)
    # fair: pair term 1/2 * 2 / (2 * 1) = 0.5
    assert crps_fair([0.5], [[0.0, 1.0]])[0] == pytest.approx(0.0)
    # identical members: CRPS is the absolute error, for both estimators
    assert crps_ensemble([3.0], [[1.0, 1.0, 1.0]])[0] == pytest.approx(2.0)
    assert crps_fair([3.0], [[1.0, 1.0, 1.0]])[0] == pytest.approx(2.0)


def test_crps_is_integral_of_squared_ecdf_difference():
    y, s = sample_data()["m10"]
    for yi, si in zip(y[:4], s[:4]):
        xs = np.sort(si)
        ecdf = lambda x: np.searchsorted(xs, x, side="right") / xs.size  # noqa: E731
        lo, hi = min(xs[0], yi) - 1, max(xs[-1], yi) + 1
        pts = np.unique(np.append(xs, yi))
        val, _ = integrate.quad(lambda x: (ecdf(x) - (x >= yi)) ** 2, lo, hi, points=pts, limit=200)
        assert crps_ensemble([yi], [si])[0] == pytest.approx(val, abs=1e-9)


@pytest.mark.parametrize("m", [2, 3, 7, 50])
def test_crps_matches_naive_pairs(m):
    rng = np.random.default_rng(m)
    s = np.round(rng.normal(size=(40, m)), 1)  # rounding makes ties
    y = np.round(rng.normal(size=40), 1)
    np.testing.assert_allclose(crps_ensemble(y, s), naive_crps(y, s), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(crps_fair(y, s), naive_crps(y, s, fair=True), rtol=1e-12, atol=1e-13)
    both = crps_ensemble_and_fair(y, s)
    np.testing.assert_array_equal(both[0], crps_ensemble(y, s))
    np.testing.assert_array_equal(both[1], crps_fair(y, s))


def test_crps_blocks_give_same_result(monkeypatch):
    rng = np.random.default_rng(11)
    s = rng.normal(size=(1003, 6))
    y = rng.normal(size=1003)
    whole = crps_ensemble(y, s)
    monkeypatch.setattr(samples_mod, "_BLOCK_BYTES", 7 * 6 * 8)  # 7 rows a block, last block short
    np.testing.assert_allclose(crps_ensemble(y, s), whole, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(whole, naive_crps(y, s), rtol=1e-12)


def test_crps_input_not_modified():
    y, s = sample_data()["m10"]
    s0, y0 = s.copy(), y.copy()
    crps_ensemble(y, s)
    crps_fair(y, s)
    empirical_quantiles(s, [0.1, 0.5])
    np.testing.assert_array_equal(s, s0)
    np.testing.assert_array_equal(y, y0)


# --- closed forms ------------------------------------------------------------------------


def test_gaussian_crps_closed_form_by_integration():
    mu, sigma = 0.3, 1.7
    for y in (-2.0, 0.3, 4.0):
        val, _ = integrate.quad(
            lambda x: (norm.cdf(x, mu, sigma) - (x >= y)) ** 2, -30, 30, points=[y], limit=200
        )
        assert gaussian_crps(y, mu, sigma) == pytest.approx(val, rel=1e-8)


def test_crps_of_gaussian_quantile_ensemble_approaches_closed_form():
    mu, sigma = 0.3, 1.7
    y = np.array([-2.0, 0.0, 0.3, 1.0, 4.0])
    m = 4000
    members = mu + sigma * ndtri((np.arange(m) + 0.5) / m)
    s = np.tile(members, (y.size, 1))
    np.testing.assert_allclose(crps_ensemble(y, s), gaussian_crps(y, mu, sigma), atol=1e-6)


def test_crps_of_gaussian_draws_unbiased_for_fair():
    rng = np.random.default_rng(5)
    mu, sigma = 0.3, 1.7
    n, m = 400, 200
    s = rng.normal(mu, sigma, size=(n, m))
    y = rng.normal(mu, sigma, size=n)
    exact = gaussian_crps(y, mu, sigma)
    fair = crps_fair(y, s)
    se = (fair - exact).std() / np.sqrt(n)
    assert abs(fair.mean() - exact.mean()) < 4 * se
    # the ECDF estimator is biased up by E|X - X'| / (2M) = sigma / (sqrt(pi) M)
    bias = (crps_ensemble(y, s) - fair).mean()
    assert bias == pytest.approx(sigma / (np.sqrt(np.pi) * m), rel=0.1)


# --- empirical quantiles -----------------------------------------------------------------


@pytest.mark.parametrize("m", [2, 3, 10, 51])
def test_empirical_quantiles_equal_numpy(m):
    rng = np.random.default_rng(m)
    s = np.round(rng.normal(size=(30, m)), 1)
    levels = np.array([0.0, 0.01, 0.025, 0.1, 0.25, 1 / 3, 0.5, 0.6, 0.75, 0.9, 0.975, 0.999, 1.0])
    np.testing.assert_array_equal(empirical_quantiles(s, levels), np.quantile(s, levels, axis=-1).T)


@SETTINGS
@given(
    s=arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(2, 12)), elements=st.floats(-1e6, 1e6)),
    levels=st.lists(st.floats(0, 1), min_size=1, max_size=6),
)
def test_empirical_quantiles_equal_numpy_property(s, levels):
    np.testing.assert_array_equal(empirical_quantiles(s, levels), np.quantile(s, levels, axis=-1).T)


def test_empirical_quantiles_bad_levels():
    with pytest.raises(InputError, match="within"):
        empirical_quantiles(np.zeros((2, 3)), [0.5, 1.5])


# --- PIT and moments ---------------------------------------------------------------------


def test_pit_mid_point_ties():
    s = np.array(
        [
            [1.0, 2.0, 3.0, 4.0],
            [1.0, 2.0, 2.0, 4.0],
            [1.0, 2.0, 3.0, 4.0],
            [1.0, 2.0, 3.0, 4.0],
            [5.0, 5.0, 5.0, 5.0],
        ]
    )
    y = np.array([2.5, 2.0, 0.0, 9.0, 5.0])
    np.testing.assert_allclose(pit_samples(y, s), [0.5, (1 + 0.5 * 2) / 4, 0.0, 1.0, 0.5])


def test_pit_uniform_for_draws_from_forecast():
    rng = np.random.default_rng(2)
    n, m = 20_000, 19
    s = rng.normal(size=(n, m))
    y = rng.normal(size=n)
    u = pit_samples(y, s)
    # the rank of y among M + 1 exchangeable draws is uniform on {0..M}: u = rank / M
    counts = np.bincount(np.rint(u * m).astype(int), minlength=m + 1)
    expected = n / (m + 1)
    assert np.abs(counts - expected).max() < 5 * np.sqrt(expected)


def test_ensemble_mean_std_ddof1():
    s = np.array([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 0.0, 0.0]])
    mean, std = ensemble_mean_std(s)
    np.testing.assert_allclose(mean, [3.0, 0.0])
    np.testing.assert_allclose(std, [np.sqrt(14.0 / 3.0), 0.0])


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "func", [crps_ensemble, crps_fair, pit_samples, lambda y, s: empirical_quantiles(s, [0.5])]
)
def test_single_member_is_an_input_error(func):
    with pytest.raises(InputError, match="at least 2 members"):
        func(np.zeros(3), np.zeros((3, 1)))


def test_single_member_in_moments():
    with pytest.raises(InputError, match="at least 2 members"):
        ensemble_mean_std(np.zeros((3, 1)))


@pytest.mark.parametrize("func", [crps_ensemble, crps_fair, pit_samples])
def test_non_finite_is_an_input_error(func):
    s = np.zeros((4, 3))
    s[2, 1] = np.nan
    with pytest.raises(InputError, match=r"samples must be finite.*row 2"):
        func(np.zeros(4), s)
    s[2, 1] = np.inf
    with pytest.raises(InputError, match=r"samples must be finite.*row 2"):
        func(np.zeros(4), s)
    with pytest.raises(InputError, match="y_true must be finite"):
        func(np.array([0.0, np.inf, 0.0, 0.0]), np.zeros((4, 3)))


def test_shape_errors():
    with pytest.raises(InputError, match="inconsistent"):
        crps_ensemble(np.zeros(3), np.zeros((4, 3)))
    with pytest.raises(InputError, match="dimension"):
        crps_ensemble(np.zeros(3), np.zeros(3))
    with pytest.raises(InputError, match="no rows"):
        crps_ensemble(np.zeros(0), np.zeros((0, 3)))


# --- properties --------------------------------------------------------------------------

finite = st.floats(-100, 100, allow_nan=False).map(lambda v: round(v, 1))  # ties likely


@st.composite
def forecasts(draw):
    n = draw(st.integers(1, 8))
    m = draw(st.integers(2, 9))
    s = draw(arrays(np.float64, (n, m), elements=finite))
    y = draw(arrays(np.float64, (n,), elements=finite))
    return y, s


@SETTINGS
@given(data=forecasts(), seed=st.integers(0, 2**16))
def test_crps_properties(data, seed):
    y, s = data
    rng = np.random.default_rng(seed)
    crps = crps_ensemble(y, s)
    fair = crps_fair(y, s)
    assert (crps >= -1e-12).all()
    assert (fair <= crps + 1e-12).all()
    np.testing.assert_allclose(crps, naive_crps(y, s), rtol=1e-10, atol=1e-10)
    rows = rng.permutation(y.size)
    np.testing.assert_allclose(crps_ensemble(y[rows], s[rows]), crps[rows], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(crps_fair(y[rows], s[rows]), fair[rows], rtol=1e-12, atol=1e-12)
    members = rng.permutation(s.shape[1])
    np.testing.assert_allclose(crps_ensemble(y, s[:, members]), crps, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(crps_fair(y, s[:, members]), fair, rtol=1e-12, atol=1e-12)
    u = pit_samples(y, s[:, members])
    np.testing.assert_array_equal(u, pit_samples(y, s))
    assert ((u >= 0) & (u <= 1)).all()


@SETTINGS
@given(data=forecasts(), shift=finite)
def test_crps_shift_invariant_and_perfect_forecast_scores_zero(data, shift):
    y, s = data
    np.testing.assert_allclose(crps_ensemble(y + shift, s + shift), crps_ensemble(y, s), atol=1e-9)
    point = np.repeat(y[:, None], s.shape[1], axis=1)
    np.testing.assert_allclose(crps_ensemble(y, point), 0.0, atol=1e-12)
