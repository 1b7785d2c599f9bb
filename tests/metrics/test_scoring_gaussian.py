"""Tests of the Gaussian scoring rules in uqeval.metrics.scoring."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate
from scipy.special import ndtri
from scipy.stats import norm

from tests.reference.regen_toolbox import toolbox_datasets
from uqeval.errors import InputError
from uqeval.metrics.scoring import (
    check_score_gaussian,
    crps_gaussian,
    interval_score,
    interval_score_gaussian,
    nll_gaussian,
    pinball_loss,
    scoring_rules_gaussian,
)

# uncertainty-toolbox 0.1.1, get_all_metrics(..., resolution=99)["scoring_rule"];
# regenerate with python tests/reference/regen_toolbox.py
TOOLBOX_SCORING_RULE = {
    "miscal_500": {
        "nll": 4.599250626466719,
        "crps": 0.5261241158291803,
        "check": 0.2654324215717645,
        "interval": 3.0144887639985507,
    },
    "odd_37": {
        "nll": 1.107137291999673,
        "crps": 0.5696853790844517,
        "check": 0.28761777551562095,
        "interval": 3.3617215832718403,
    },
    "offset_201": {
        "nll": 1.2566513713623704,
        "crps": 0.46100750137892244,
        "check": 0.2327669851786312,
        "interval": 2.4103196917928393,
    },
}

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)
ROW_FUNCS = {
    "nll": nll_gaussian,
    "crps": crps_gaussian,
    "check": check_score_gaussian,
    "interval": interval_score_gaussian,
}


@pytest.mark.parametrize("name", sorted(TOOLBOX_SCORING_RULE))
def test_matches_uncertainty_toolbox(name):
    y, mean, std = toolbox_datasets()[name]
    got = scoring_rules_gaussian(y, mean, std, resolution=99)
    assert set(got) == {"nll", "crps", "check", "interval"}
    for key, ref in TOOLBOX_SCORING_RULE[name].items():
        assert got[key] == pytest.approx(ref, rel=1e-9), key
        rows = ROW_FUNCS[key](y, mean, std)
        assert rows.shape == y.shape
        assert np.mean(rows) == pytest.approx(ref, rel=1e-9), key


def _direct_check(y, mean, std, resolution):
    """Materialise the (N, K) quantiles and use the generic pinball kernel."""
    levels = np.linspace(0.01, 0.99, resolution)
    q = mean[:, None] + std[:, None] * ndtri(levels)[None, :]
    return pinball_loss(y, q, levels).mean(axis=1)


def _direct_interval(y, mean, std, resolution):
    """Materialise the (N, K) central intervals and use the generic interval-score kernel."""
    p = np.linspace(0.01, 0.99, resolution)
    lo = mean[:, None] + std[:, None] * ndtri(0.5 - p / 2.0)[None, :]
    hi = mean[:, None] + std[:, None] * ndtri(0.5 + p / 2.0)[None, :]
    return interval_score(y, lo, hi, p).mean(axis=1)


@st.composite
def gaussian_data(draw, min_size=1, max_size=40):
    n = draw(st.integers(min_size, max_size))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mean = rng.normal(size=n) * draw(st.floats(0.0, 100.0))
    std = np.exp(rng.uniform(-3, 3, n))
    y = mean + std * rng.standard_normal(n) * draw(st.floats(0.0, 20.0))
    return y, mean, std


@SETTINGS
@given(gaussian_data(), st.integers(1, 120))
def test_check_and_interval_closed_forms_equal_direct_sums(data, resolution):
    y, mean, std = data
    np.testing.assert_allclose(
        check_score_gaussian(y, mean, std, resolution),
        _direct_check(y, mean, std, resolution),
        rtol=1e-10,
        atol=1e-12 * (1 + np.abs(y).max()),
    )
    np.testing.assert_allclose(
        interval_score_gaussian(y, mean, std, resolution),
        _direct_interval(y, mean, std, resolution),
        rtol=1e-10,
        atol=1e-12 * (1 + np.abs(y).max()),
    )


def test_check_and_interval_at_level_boundaries():
    """Targets exactly on a predicted quantile / interval bound (the indicator ties)."""
    levels = np.linspace(0.01, 0.99, 99)
    z = np.concatenate([ndtri(levels), ndtri(0.5 - levels / 2), ndtri(0.5 + levels / 2), [0.0, 40.0, -40.0]])
    mean = np.zeros_like(z)
    std = np.ones_like(z)
    np.testing.assert_allclose(
        check_score_gaussian(z, mean, std), _direct_check(z, mean, std, 99), rtol=1e-12, atol=1e-14
    )
    np.testing.assert_allclose(
        interval_score_gaussian(z, mean, std), _direct_interval(z, mean, std, 99), rtol=1e-12, atol=1e-14
    )


def test_nll_equals_scipy_logpdf():
    y, mean, std = toolbox_datasets()["miscal_500"]
    np.testing.assert_allclose(nll_gaussian(y, mean, std), -norm.logpdf(y, loc=mean, scale=std), rtol=1e-13)


def _crps_by_integration(y, mean, std):
    def below(x):
        return norm.cdf(x, mean, std) ** 2

    def above(x):
        return norm.sf(x, mean, std) ** 2

    return (
        integrate.quad(below, -np.inf, y, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
        + integrate.quad(above, y, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
    )


@pytest.mark.parametrize(
    "y, mean, std",
    [
        (0.0, 0.0, 1.0),
        (1.3, 0.2, 0.5),
        (-4.0, 1.0, 2.0),
        (10.0, 9.99, 0.01),
        (3.0, -2.0, 7.0),
        (0.0, 5.0, 0.3),
    ],
)
def test_crps_equals_integral(y, mean, std):
    got = crps_gaussian([y], [mean], [std])[0]
    assert got == pytest.approx(_crps_by_integration(y, mean, std), rel=1e-8, abs=1e-12)


def test_crps_hand_values():
    # CRPS(N(0,1), 0) = 2 phi(0) - 1/sqrt(pi) = (sqrt(2) - 1)/sqrt(pi)
    assert crps_gaussian([0.0], [0.0], [1.0])[0] == pytest.approx(
        (np.sqrt(2) - 1) / np.sqrt(np.pi), rel=1e-14
    )
    # tends to |y - mu| as sigma -> 0
    assert crps_gaussian([2.0], [0.5], [1e-9])[0] == pytest.approx(1.5, rel=1e-8)


@SETTINGS
@given(gaussian_data())
def test_scores_nonnegative_and_consistent(data):
    y, mean, std = data
    assert np.all(crps_gaussian(y, mean, std) >= 0.0)
    assert np.all(check_score_gaussian(y, mean, std) >= 0.0)
    assert np.all(interval_score_gaussian(y, mean, std) > 0.0)
    got = scoring_rules_gaussian(y, mean, std)
    for key, fn in ROW_FUNCS.items():
        assert got[key] == pytest.approx(float(np.mean(fn(y, mean, std))), rel=1e-12, abs=1e-300)


@SETTINGS
@given(
    gaussian_data(min_size=2), st.randoms(use_true_random=False), st.floats(-1e3, 1e3), st.floats(0.01, 100)
)
def test_row_order_invariance_and_equivariance(data, rnd, shift, scale):
    y, mean, std = data
    perm = np.array(rnd.sample(range(len(y)), len(y)))
    a = scoring_rules_gaussian(y, mean, std)
    b = scoring_rules_gaussian(y[perm], mean[perm], std[perm])
    for key in a:
        assert b[key] == pytest.approx(a[key], rel=1e-12, abs=1e-12)
    # CRPS, check and interval are shift invariant and scale equivariant; NLL shifts by log(scale)
    c = scoring_rules_gaussian(scale * y + shift, scale * mean + shift, scale * std)
    tol = dict(rel=1e-8, abs=1e-9 * (1 + abs(shift) + scale * np.abs(y).max()))
    for key in ("crps", "check", "interval"):
        assert c[key] == pytest.approx(scale * a[key], **tol)
    assert c["nll"] == pytest.approx(a["nll"] + np.log(scale), rel=1e-8, abs=1e-6)


def test_expected_score_smallest_at_true_distribution():
    rng = np.random.default_rng(8)
    n = 20_000
    mean = rng.normal(size=n)
    y = mean + rng.standard_normal(n)
    true = scoring_rules_gaussian(y, mean, np.ones(n))
    for factor in (0.7, 1.4):
        wrong = scoring_rules_gaussian(y, mean, factor * np.ones(n))
        for key in true:
            assert true[key] < wrong[key], (factor, key)


def test_bad_input():
    with pytest.raises(InputError, match="std must be > 0"):
        crps_gaussian([1.0], [1.0], [0.0])
    with pytest.raises(InputError, match="y_true must be finite"):
        nll_gaussian([np.nan], [1.0], [1.0])
    with pytest.raises(InputError, match="inconsistent numbers of rows"):
        scoring_rules_gaussian([1.0, 2.0], [1.0], [1.0])
    with pytest.raises(InputError, match="resolution"):
        check_score_gaussian([1.0], [1.0], [1.0], resolution=0)
    with pytest.raises(InputError, match="resolution"):
        interval_score_gaussian([1.0], [1.0], [1.0], resolution=2.5)
