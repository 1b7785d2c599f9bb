"""Tests of the model-comparison statistics (uqeval.metrics.comparison)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from uqeval.errors import InputError
from uqeval.metrics.comparison import (
    bootstrap_ci,
    bootstrap_samples,
    bootstrap_stat,
    diebold_mariano,
    paired_permutation_test,
    ranks,
)

# --------------------------------------------------------------------------- bootstrap


def slow_bootstrap_mean(x: np.ndarray, n_boot: int, level: float, seed: int) -> tuple[float, float]:
    """Obviously correct reference: one resample at a time, same random stream."""
    rng = np.random.default_rng(seed)
    means = [x[rng.integers(0, len(x), size=len(x))].mean() for _ in range(n_boot)]
    a = 1 - level
    return float(np.quantile(means, a / 2)), float(np.quantile(means, 1 - a / 2))


def test_bootstrap_matches_slow_reference():
    x = np.random.default_rng(3).gamma(2.0, size=57)
    res = bootstrap_ci(x, n_boot=300, level=0.9, seed=11)
    low, high = slow_bootstrap_mean(x, 300, 0.9, 11)
    assert res["estimate"] == pytest.approx(x.mean(), rel=1e-15)
    assert res["low"] == pytest.approx(low, rel=1e-12)
    assert res["high"] == pytest.approx(high, rel=1e-12)
    assert res["low"] < res["estimate"] < res["high"]


@pytest.mark.parametrize("chunk_size", [1, 7, 64, 5000])
def test_bootstrap_does_not_depend_on_chunk_size(chunk_size):
    x = np.random.default_rng(0).normal(size=101)
    assert bootstrap_ci(x, n_boot=250, chunk_size=chunk_size) == bootstrap_ci(x, n_boot=250)


def test_bootstrap_is_reproducible_and_seed_dependent():
    x = np.random.default_rng(1).normal(size=80)
    assert bootstrap_ci(x, seed=5) == bootstrap_ci(x, seed=5)
    assert bootstrap_ci(x, seed=5)["low"] != bootstrap_ci(x, seed=6)["low"]


def test_bootstrap_rows_of_2d_input_share_resamples():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 90))
    res = bootstrap_ci(x, n_boot=400, seed=4)
    assert res["estimate"].shape == res["low"].shape == res["high"].shape == (3,)
    for f in range(3):
        single = bootstrap_ci(x[f], n_boot=400, seed=4)
        assert res["low"][f] == pytest.approx(single["low"], rel=1e-12)
        assert res["high"][f] == pytest.approx(single["high"], rel=1e-12)
    # paired: the interval of a difference equals the interval of the differenced rows
    diff = bootstrap_ci(x[0] - x[1], n_boot=400, seed=4)
    samples = bootstrap_samples(lambda idx: (x[0][idx] - x[1][idx]).mean(-1), 90, n_boot=400, seed=4)
    assert diff["low"] == pytest.approx(np.quantile(samples, 0.025), rel=1e-12)


def test_bootstrap_constant_scores_give_a_degenerate_interval():
    res = bootstrap_ci(np.full(20, 2.5), n_boot=50)
    assert res == {"estimate": 2.5, "low": 2.5, "high": 2.5}


def test_bootstrap_median_and_generic_statistic():
    x = np.arange(11.0)
    res = bootstrap_ci(x, stat=np.median, n_boot=200, seed=0)
    assert res["estimate"] == 5.0 and res["low"] <= 5.0 <= res["high"]
    # bootstrap_stat with a mean fn is bootstrap_ci
    gen = bootstrap_stat(lambda idx: x[idx].mean(-1), x.size, n_boot=200, seed=0)
    assert gen == bootstrap_ci(x, n_boot=200, seed=0)


def test_bootstrap_stat_of_a_non_additive_metric():
    """A vector-valued, non-additive statistic: fn returns (B, 2)."""
    rng = np.random.default_rng(8)
    y, mu = rng.normal(size=150), rng.normal(size=150)

    def fn(idx):
        err = np.abs(y[idx] - mu[idx])
        return np.stack([err.mean(-1), np.sqrt((err**2).mean(-1))], axis=-1)

    res = bootstrap_stat(fn, 150, n_boot=300, seed=1)
    assert res["estimate"].shape == (2,)
    assert np.all(res["low"] < res["estimate"]) and np.all(res["estimate"] < res["high"])
    assert res["estimate"][1] == pytest.approx(np.sqrt(np.mean((y - mu) ** 2)))


def test_bootstrap_coverage_is_near_nominal():
    """200 seeded replications of N=200 from a skewed law: the 95% interval covers the true mean."""
    rng = np.random.default_rng(2024)
    true_mean = 1.0
    hits = 0
    for rep in range(200):
        x = rng.exponential(true_mean, size=200)
        res = bootstrap_ci(x, n_boot=1000, level=0.95, seed=rep)
        hits += res["low"] <= true_mean <= res["high"]
    assert 0.90 <= hits / 200 <= 0.99


def test_bootstrap_interval_narrows_with_lower_level():
    x = np.random.default_rng(0).normal(size=100)
    wide, narrow = bootstrap_ci(x, level=0.99), bootstrap_ci(x, level=0.5)
    assert wide["low"] < narrow["low"] < narrow["high"] < wide["high"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"per_row": [1.0, np.nan, 2.0]}, "per_row must be finite.*row 1"),
        ({"per_row": [[1.0, 2.0], [3.0, np.inf]]}, "per_row must be finite.*row 1"),
        ({"per_row": []}, "no rows"),
        ({"per_row": [1.0, 2.0], "n_boot": 0}, "n_boot must be an integer >= 1"),
        ({"per_row": [1.0, 2.0], "level": 1.0}, "level must be strictly between 0 and 1"),
        ({"per_row": [1.0, 2.0], "stat": "median"}, "stat must be 'mean' or a callable"),
        ({"per_row": np.ones((2, 2, 2))}, "per_row must have 1 or 2 dimension"),
    ],
)
def test_bootstrap_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        bootstrap_ci(**kwargs)


def test_bootstrap_fn_with_wrong_shape_is_reported():
    with pytest.raises(InputError, match="one statistic per resample"):
        bootstrap_samples(lambda idx: idx.mean(), 5, n_boot=10)


# --------------------------------------------------------------------------- permutation test


def test_permutation_exact_small_case():
    """d = (1, 2, 3): of the 8 sign vectors only all-plus and all-minus reach |mean| >= 2: p = 1/4."""
    res = paired_permutation_test(np.array([1.0, 2.0, 3.0]), np.zeros(3), n_permutations=40000, seed=0)
    assert res["mean_diff"] == 2.0
    assert res["p_value"] == pytest.approx(0.25, abs=0.01)


def test_permutation_counts_ties_with_the_observed_statistic():
    # |d| all equal: the observed |mean| = 1 is reached only by the two constant sign vectors
    res = paired_permutation_test(np.full(2, 0.3), np.full(2, 0.1), n_permutations=20000, seed=0)
    assert res["p_value"] == pytest.approx(0.5, abs=0.02)


def test_permutation_identical_scores_give_p_one():
    x = np.random.default_rng(0).normal(size=30)
    assert paired_permutation_test(x, x) == {"mean_diff": 0.0, "p_value": 1.0}


def test_permutation_p_value_is_uniform_under_the_null():
    rng = np.random.default_rng(7)
    p = np.array(
        [
            paired_permutation_test(rng.normal(size=40), rng.normal(size=40), n_permutations=400, seed=i)[
                "p_value"
            ]
            for i in range(300)
        ]
    )
    assert 0.01 <= np.mean(p <= 0.05) <= 0.10
    assert 0.40 <= np.mean(p <= 0.5) <= 0.60
    assert stats.kstest(p, "uniform").pvalue > 0.001


def test_permutation_detects_a_shift():
    rng = np.random.default_rng(1)
    a = rng.normal(size=200)
    b = a + 0.3 + rng.normal(scale=0.5, size=200)  # b is worse by 0.3 on average
    res = paired_permutation_test(a, b, n_permutations=2000, seed=0)
    assert res["mean_diff"] < 0
    assert res["p_value"] == pytest.approx(1 / 2001)  # smallest possible p


def test_permutation_reproducible_symmetric_and_chunk_free():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=50), rng.normal(0.1, size=50)
    r1 = paired_permutation_test(a, b, n_permutations=999, seed=2)
    assert r1 == paired_permutation_test(a, b, n_permutations=999, seed=2)
    assert r1 == paired_permutation_test(a, b, n_permutations=999, seed=2, chunk_size=13)
    r2 = paired_permutation_test(b, a, n_permutations=999, seed=2)
    assert r2["mean_diff"] == -r1["mean_diff"] and r2["p_value"] == r1["p_value"]
    assert r1["p_value"] >= 1 / 1000


def test_permutation_bad_input():
    with pytest.raises(InputError, match="inconsistent numbers of rows"):
        paired_permutation_test(np.ones(3), np.ones(4))
    with pytest.raises(InputError, match="b must be finite"):
        paired_permutation_test(np.ones(3), np.array([1.0, np.nan, 1.0]))
    with pytest.raises(InputError, match="n_permutations"):
        paired_permutation_test(np.ones(3), np.ones(3), n_permutations=0)


# --------------------------------------------------------------------------- Diebold-Mariano


def test_dm_lag0_equals_paired_t_statistic():
    rng = np.random.default_rng(5)
    a, b = rng.gamma(2.0, size=300), rng.gamma(2.1, size=300)
    dm = diebold_mariano(a, b)
    t = stats.ttest_rel(a, b)
    assert dm["statistic"] == pytest.approx(t.statistic, rel=1e-10)
    assert dm["p_value"] == pytest.approx(2 * stats.norm.sf(abs(t.statistic)), rel=1e-10)
    assert dm["p_value"] == pytest.approx(t.pvalue, abs=2e-3)  # t(299) is close to normal


def slow_dm(d: np.ndarray, lag: int) -> float:
    """Loop-over-everything reference of the Newey-West DM statistic."""
    n = len(d)
    m = sum(d) / n
    gam = [sum((d[i] - m) * (d[i - k] - m) for i in range(k, n)) / n for k in range(lag + 1)]
    lrv = gam[0] + 2 * sum((1 - k / (lag + 1)) * gam[k] for k in range(1, lag + 1))
    return m / np.sqrt(lrv * n / (n - 1) / n)


@pytest.mark.parametrize("lag", [1, 2, 5])
def test_dm_hac_matches_slow_reference(lag):
    rng = np.random.default_rng(lag)
    a, b = rng.normal(size=60), rng.normal(0.2, size=60)
    assert diebold_mariano(a, b, lag=lag)["statistic"] == pytest.approx(slow_dm(a - b, lag), rel=1e-12)


def test_dm_hand_computed_lag1():
    # d = (1, 3, 2, 4): mean 2.5, centred (-1.5, .5, -.5, 1.5); g0 = 5/4, g1 = (-.75 - .25 - .75)/4
    a, b = np.array([1.0, 3.0, 2.0, 4.0]), np.zeros(4)
    g0, g1 = 5.0 / 4, -1.75 / 4
    var = (g0 + 2 * 0.5 * g1) * 4 / 3
    assert diebold_mariano(a, b, lag=1)["statistic"] == pytest.approx(2.5 / np.sqrt(var / 4), rel=1e-14)


def test_dm_hac_widens_for_autocorrelated_differences():
    rng = np.random.default_rng(0)
    e = rng.normal(size=2000)
    d = np.convolve(e, np.ones(5), mode="same") + 0.1  # MA(4): positively autocorrelated
    t0 = diebold_mariano(d, np.zeros_like(d), lag=0)["statistic"]
    t4 = diebold_mariano(d, np.zeros_like(d), lag=4)["statistic"]
    assert abs(t4) < abs(t0) / 1.5


def test_dm_degenerate_cases():
    x = np.arange(5.0)
    assert diebold_mariano(x, x) == {"statistic": 0.0, "p_value": 1.0}
    assert diebold_mariano(x, x + 1.0) == {"statistic": -np.inf, "p_value": 0.0}
    with pytest.raises(InputError, match="at least 2 rows"):
        diebold_mariano(np.ones(1), np.ones(1))
    with pytest.raises(InputError, match="lag must be smaller"):
        diebold_mariano(x, x[::-1], lag=5)
    with pytest.raises(InputError, match="lag must be an integer >= 0"):
        diebold_mariano(x, x[::-1], lag=-1)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-100, 100, allow_nan=False), min_size=3, max_size=40),
    st.integers(0, 2),
)
def test_dm_is_antisymmetric(values, lag):
    a = np.array(values)
    b = np.roll(a, 1) * 0.5
    r1, r2 = diebold_mariano(a, b, lag=lag), diebold_mariano(b, a, lag=lag)
    assert r1["statistic"] == pytest.approx(-r2["statistic"], rel=1e-9, abs=1e-12)
    assert r1["p_value"] == pytest.approx(r2["p_value"], rel=1e-9, abs=1e-12)
    assert 0.0 <= r1["p_value"] <= 1.0


# --------------------------------------------------------------------------- ranks


def test_ranks_orientations_and_ties():
    vals = {"a": 0.3, "b": 0.1, "c": 0.3, "d": 0.5}
    assert ranks(vals, "lower") == {"a": 2.5, "b": 1.0, "c": 2.5, "d": 4.0}
    assert ranks(vals, "higher") == {"a": 2.5, "b": 4.0, "c": 2.5, "d": 1.0}
    cov = {"under": 0.25, "over": 0.625, "exact": 0.5, "way_over": 0.75}  # dyadic: exact ties
    assert ranks(cov, "target", target=0.5) == {"under": 3.5, "over": 2.0, "exact": 1.0, "way_over": 3.5}


def test_ranks_nan_is_unranked():
    r = ranks({"a": 1.0, "b": float("nan"), "c": 0.5, "d": None}, "lower")
    assert r["a"] == 2.0 and r["c"] == 1.0
    assert np.isnan(r["b"]) and np.isnan(r["d"])


def test_ranks_bad_input():
    with pytest.raises(InputError, match="need a finite target"):
        ranks({"a": 1.0}, "target")
    with pytest.raises(InputError, match="orientation must be"):
        ranks({"a": 1.0}, "best")  # type: ignore[arg-type]
