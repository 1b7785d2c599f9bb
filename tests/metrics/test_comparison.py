"""Tests of the model-comparison statistics (uqeval.metrics.comparison)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from uqeval.errors import InputError
from uqeval.metrics.comparison import diebold_mariano, ranks

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


def test_average_ranks_equal_scipy_rankdata():
    """ranks() does without scipy.stats (its import costs ~0.5 s and ~30 MB): scipy's algorithm, the same numbers."""
    from uqeval.metrics.comparison import _average_ranks

    rng = np.random.default_rng(0)
    for _ in range(300):
        x = rng.integers(0, 4, size=int(rng.integers(1, 12))) * rng.choice([1.0, 0.1, -2.5])
        np.testing.assert_array_equal(_average_ranks(x), stats.rankdata(x, method="average"))


def test_dm_p_value_is_scipy_norm_sf():
    from uqeval.metrics.comparison import dm_from_moments

    for dbar in (0.01, -0.3, 2.0, 1e-5):
        out = dm_from_moments(dbar, 0.7, 500, 5.0)
        # uqeval.metrics.normal.ndtr: scipy's algorithm, within a few ulps
        assert out["p_value"] == pytest.approx(2.0 * stats.norm.sf(abs(out["statistic"])), rel=1e-14)
