"""Tests of uqeval.metrics.reliability (ACCRUE, Camporeale & Carè)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, optimize
from scipy.special import erf, erfinv

from tests.reference.regen_toolbox import toolbox_datasets
from uqeval.errors import InputError
from uqeval.metrics.reliability import (
    CRPS_MIN_FACTOR,
    CRPS_MIN_FACTOR_PAPER,
    RS_MIN,
    accrue_score,
    max_calibration_error,
    pit_gaussian,
    reliability_gaussian,
    reliability_score,
)
from uqeval.metrics.scoring import crps_gaussian

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


def _cdf_eta(x):
    return 0.5 * (erf(x) + 1.0)


def _rs_by_integration(eta):
    """Eq. 6 numerically: integrate (Phi - C)^2 piece by piece between the jumps of C."""
    eta = np.sort(eta)
    n = eta.size
    quad = dict(epsabs=1e-14, epsrel=1e-12, limit=200)
    total = integrate.quad(lambda x: _cdf_eta(x) ** 2, -np.inf, eta[0], **quad)[0]
    total += integrate.quad(lambda x: (1.0 - _cdf_eta(x)) ** 2, eta[-1], np.inf, **quad)[0]
    for k in range(1, n):
        if eta[k] > eta[k - 1]:
            total += integrate.quad(lambda x, c=k / n: (_cdf_eta(x) - c) ** 2, eta[k - 1], eta[k], **quad)[0]
    return total


def _eta(y, mean, std):
    return (np.asarray(y) - np.asarray(mean)) / (np.sqrt(2.0) * np.asarray(std))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 20])
@pytest.mark.parametrize("seed", [0, 1])
def test_rs_closed_form_equals_integral(n, seed):
    rng = np.random.default_rng(seed * 100 + n)
    mean = rng.normal(size=n)
    std = rng.uniform(0.3, 2.0, n)
    y = mean + std * rng.standard_normal(n) * 1.7 + 0.4
    got = reliability_score(y, mean, std)
    assert got == pytest.approx(_rs_by_integration(_eta(y, mean, std)), rel=1e-9, abs=1e-12)


def test_rs_with_ties_equals_integral():
    y = np.array([0.5, 0.5, 0.5, -1.0, 2.0, 2.0, 0.0])
    mean = np.zeros_like(y)
    std = np.ones_like(y)
    got = reliability_score(y, mean, std)
    assert got == pytest.approx(_rs_by_integration(_eta(y, mean, std)), rel=1e-9)


def test_rs_hand_value_single_row():
    # N = 1, eta = 0: int Phi^2 over (-inf, 0) + int (1 - Phi)^2 over (0, inf)
    # = 1/sqrt(pi) - 1/sqrt(2 pi) by the closed form
    assert reliability_score([0.0], [0.0], [1.0]) == pytest.approx(1 / math.sqrt(math.pi) - RS_MIN, rel=1e-14)


def test_rs_paper_sqrt_pi_n_typo_would_fail():
    """The printed exp(-eta^2)/sqrt(pi N) term disagrees with the integral (so N sqrt(pi) is right)."""
    rng = np.random.default_rng(5)
    eta = np.sort(rng.normal(size=10) / np.sqrt(2))
    n = eta.size
    i = np.arange(1, n + 1)
    terms = eta / n * (erf(eta) + 1) - eta / n**2 * (2 * i - 1) + np.exp(-(eta**2)) / np.sqrt(np.pi * n)
    printed = np.sum(terms) - RS_MIN
    assert abs(printed - _rs_by_integration(eta)) > 0.1


@st.composite
def gaussian_data(draw, min_size=1, max_size=40):
    n = draw(st.integers(min_size, max_size))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    mean = rng.normal(size=n) * draw(st.floats(0.0, 100.0))
    std = np.exp(rng.uniform(-3, 3, n))
    y = mean + std * rng.standard_normal(n) * draw(st.floats(0.0, 10.0))
    if draw(st.booleans()):  # ties
        y[: n // 2] = y[0]
        mean[: n // 2] = mean[0]
        std[: n // 2] = std[0]
    return y, mean, std


@SETTINGS
@given(gaussian_data(), st.randoms(use_true_random=False))
def test_properties(data, rnd):
    y, mean, std = data
    rel = reliability_gaussian(y, mean, std)
    assert set(rel) == {"rs", "max_cal_err", "accrue"}
    assert rel["rs"] >= 0.0
    assert 0.0 <= rel["max_cal_err"] <= 1.0
    assert rel["max_cal_err"] >= 1.0 / (2 * len(y)) - 1e-15  # KS distance of N points from uniform
    assert rel["rs"] == pytest.approx(reliability_score(y, mean, std), rel=1e-12, abs=1e-15)
    assert rel["max_cal_err"] == pytest.approx(max_calibration_error(pit_gaussian(y, mean, std)), abs=1e-15)
    assert rel["accrue"] == pytest.approx(accrue_score(y, mean, std)["accrue"], rel=1e-12, abs=1e-15)
    perm = np.array(rnd.sample(range(len(y)), len(y)))
    shuffled = reliability_gaussian(y[perm], mean[perm], std[perm])
    for key in rel:
        assert shuffled[key] == pytest.approx(rel[key], rel=1e-12, abs=1e-14)


def test_perfectly_calibrated_gaussian_large_n():
    rng = np.random.default_rng(777)
    n = 200_000
    mean = rng.normal(size=n) * 3
    std = rng.uniform(0.1, 3.0, n)
    y = mean + std * rng.standard_normal(n)
    rel = reliability_gaussian(y, mean, std)
    assert rel["rs"] < 1e-4
    assert rel["max_cal_err"] < 0.01
    bad = reliability_gaussian(y, mean, 0.5 * std)
    assert bad["rs"] > 0.01 and bad["max_cal_err"] > 0.1


def test_pit_matches_erf_formula():
    y, mean, std = toolbox_datasets()["miscal_500"]
    eta = _eta(y, mean, std)
    np.testing.assert_allclose(pit_gaussian(y, mean, std), 0.5 * (erf(eta) + 1), rtol=1e-12, atol=1e-15)


def _max_cal_err_brute(u):
    """sup |C - phi| on a fine grid plus both sides of every jump of C."""
    u = np.asarray(u)
    grid = np.concatenate([np.linspace(0, 1, 20001), u, np.clip(u - 1e-12, 0, 1), np.clip(u + 1e-12, 0, 1)])
    cdf = (u[None, :] <= grid[:, None]).mean(axis=1)
    left = (u[None, :] < u[:, None]).mean(axis=1)  # C just left of each jump
    return max(np.max(np.abs(cdf - grid)), np.max(np.abs(left - u)))


@pytest.mark.parametrize(
    "pit",
    [
        [0.5],
        [0.0],
        [1.0],
        [0.1, 0.1, 0.1, 0.9],
        [0.2, 0.4, 0.6, 0.8],
        [0.0, 0.0, 1.0, 1.0],
        list(np.random.default_rng(1).uniform(size=50)),
        list(np.random.default_rng(2).beta(0.5, 0.5, size=33)),
    ],
)
def test_max_cal_err_equals_brute_force(pit):
    assert max_calibration_error(pit) == pytest.approx(_max_cal_err_brute(pit), abs=1e-11)


def test_max_cal_err_hand_values():
    assert max_calibration_error([0.5]) == pytest.approx(0.5)
    assert max_calibration_error([0.25, 0.75]) == pytest.approx(0.25)
    assert max_calibration_error([0.1, 0.1, 0.1, 0.9]) == pytest.approx(0.65)  # C(0.1) = 0.75


@SETTINGS
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_max_cal_err_random(pit):
    assert max_calibration_error(pit) == pytest.approx(_max_cal_err_brute(pit), abs=1e-11)


@pytest.mark.parametrize("eps", [1e-3, 0.4, 1.0, -2.5, 37.0])
def test_crps_min_is_the_minimum_over_sigma(eps):
    def crps(log_sigma):
        return crps_gaussian([eps], [0.0], [math.exp(log_sigma)])[0]

    res = optimize.minimize_scalar(crps, bracket=(math.log(abs(eps)) - 1, math.log(abs(eps)) + 1), tol=1e-12)
    assert res.fun == pytest.approx(CRPS_MIN_FACTOR * abs(eps), rel=1e-9)
    # the minimiser is sigma^2 = eps^2 / ln 2 (ACCRUE Eq. 4)
    assert math.exp(2 * res.x) == pytest.approx(eps**2 / math.log(2), rel=1e-4)
    # the paper's printed factor sqrt(ln 4)/2 is about 1.05% below the attainable minimum
    assert CRPS_MIN_FACTOR_PAPER * abs(eps) < res.fun
    assert CRPS_MIN_FACTOR / CRPS_MIN_FACTOR_PAPER == pytest.approx(1.0105, abs=1e-4)


def test_crps_min_of_a_dataset_is_a_lower_bound():
    y, mean, std = toolbox_datasets()["odd_37"]
    acc = accrue_score(y, mean, std)
    eps = y - mean
    assert acc["crps_min"] == pytest.approx(CRPS_MIN_FACTOR * np.mean(np.abs(eps)), rel=1e-14)
    assert acc["crps_min"] <= np.mean(crps_gaussian(y, mean, std))
    # attained with sigma_i = |eps_i| / sqrt(ln 2)
    assert np.mean(crps_gaussian(y, mean, np.abs(eps) / math.sqrt(math.log(2)))) == pytest.approx(
        acc["crps_min"], rel=1e-12
    )


def test_rs_min_is_large_n_limit_of_eq13_sum():
    # Eq. 13 without its constant: (1/(N sqrt(pi))) sum exp(-erfinv((2i-1)/N - 1)^2) -> 1/2 sqrt(2/pi)
    assert RS_MIN == pytest.approx(0.5 * math.sqrt(2 / math.pi), rel=1e-15)
    n = 1_000_000
    i = np.arange(1, n + 1)
    first = np.sum(np.exp(-(erfinv((2 * i - 1) / n - 1) ** 2))) / (n * math.sqrt(math.pi))
    assert first == pytest.approx(RS_MIN, rel=1e-5)


def test_rs_min_exact_eq13_is_attained_minimum():
    """Eq. 13 in full is the RS of the uniform-PIT sample, and no sample of that N does better."""
    n = 25
    i = np.arange(1, n + 1)
    eta = erfinv((2 * i - 1) / n - 1)
    rs13 = np.sum(np.exp(-(eta**2))) / (n * math.sqrt(math.pi)) - RS_MIN
    assert reliability_score(eta * math.sqrt(2), np.zeros(n), np.ones(n)) == pytest.approx(rs13, rel=1e-10)
    rng = np.random.default_rng(0)
    for _ in range(20):
        z = rng.standard_normal(n)
        assert reliability_score(z, np.zeros(n), np.ones(n)) > rs13


def test_accrue_combination():
    y, mean, std = toolbox_datasets()["offset_201"]
    acc = accrue_score(y, mean, std)
    assert set(acc) == {"accrue", "beta", "crps_min", "rs_min"}
    beta = RS_MIN / (acc["crps_min"] + RS_MIN)
    assert acc["beta"] == pytest.approx(beta, rel=1e-14)
    assert acc["rs_min"] == RS_MIN
    expected = beta * np.mean(crps_gaussian(y, mean, std)) + (1 - beta) * reliability_score(y, mean, std)
    assert acc["accrue"] == pytest.approx(expected, rel=1e-12)
    # perfect point forecast: crps_min = 0, beta = 1, accrue = mean CRPS
    perfect = accrue_score(mean, mean, std)
    assert perfect["beta"] == 1.0
    assert perfect["accrue"] == pytest.approx(np.mean(crps_gaussian(mean, mean, std)), rel=1e-12)


def test_bad_input():
    with pytest.raises(InputError, match="std must be > 0"):
        reliability_score([1.0], [1.0], [-1.0])
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        max_calibration_error([0.5, 1.5])
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        max_calibration_error([np.nan])
    with pytest.raises(InputError, match="no rows"):
        max_calibration_error([])
    with pytest.raises(InputError, match="mean must be finite"):
        accrue_score([1.0], [np.inf], [1.0])


def test_rs_terms_give_memory_weighted_and_streamed_rs_alike():
    """RS's per-row terms are written once (reliability._rs_terms): the unweighted kernel, the weighted one at
    integer weights (the repeated rows) and the streamed state's split, rank-free sum minus the Gini part
    -(G + N sum eta)/N^2 (states.ReliabilityScore, here with G exact), give the same RS (1e-12)."""
    from uqeval.metrics.reliability import _HALF_SQRT_2_OVER_PI, _rs_sorted, _rs_terms

    rng = np.random.default_rng(4)
    eta = np.sort(rng.normal(scale=0.8, size=500))
    n = eta.size
    rs = _rs_sorted(eta)
    gini = float(np.sum((2.0 * np.arange(1, n + 1) - n - 1) * eta))  # sum_{i<j} |eta_i - eta_j|
    streamed = (
        float(np.sum(_rs_terms(eta, 0.0, 1.0))) - (gini + n * eta.sum()) / n
    ) / n - _HALF_SQRT_2_OVER_PI
    assert streamed == pytest.approx(rs, rel=1e-12)
    w = rng.integers(1, 4, size=n).astype(np.float64)
    assert _rs_sorted(eta, w_sorted=w) == pytest.approx(_rs_sorted(np.repeat(eta, w.astype(int))), rel=1e-12)
