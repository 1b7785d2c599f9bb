"""Tests of uqeval.metrics.intervals: level keys, Gaussian intervals, coverage, central pairs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate
from scipy.special import ndtri
from scipy.stats import norm

from uqeval.errors import InputError
from uqeval.metrics.intervals import central_pairs, coverage_metrics, level_key
from uqeval.predictions import Gaussian


def gaussian_interval(mean, std, level: float) -> tuple[np.ndarray, np.ndarray]:
    """The central ``level`` interval of N(mean, std²) as the package makes it, :meth:`Gaussian.intervals_at`."""
    lo, hi = Gaussian(mean=mean, std=std).intervals_at(np.array([level]))
    return lo[:, 0], hi[:, 0]


SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


# --- level_key ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "level, key",
    [
        (0.95, "0.95"),
        (0.9, "0.9"),
        (1 - 2 * 0.05, "0.9"),
        (0.95 - 0.05, "0.9"),  # 0.8999999999999999
        (1 - 2 * 0.025, "0.95"),
        (0.5, "0.5"),
        (1 - 2 * 0.25, "0.5"),
        (0.99, "0.99"),
        (0.999, "0.999"),
        (0.1 + 0.2, "0.3"),  # 0.30000000000000004
        (0.123456789012, "0.123456789"),
        (1e-5, "0.00001"),
        (0.8, "0.8"),
    ],
)
def test_level_key(level, key):
    assert level_key(level) == key


def test_level_key_rejects_nan():
    with pytest.raises(InputError, match="finite"):
        level_key(float("nan"))


# --- gaussian_interval -------------------------------------------------------------------


def test_gaussian_interval_known_z():
    lo, hi = gaussian_interval(np.array([0.0, 1.0]), np.array([1.0, 2.0]), 0.95)
    z = 1.959963984540054  # Phi^-1(0.975)
    np.testing.assert_allclose(lo, [-z, 1 - 2 * z], rtol=1e-14)
    np.testing.assert_allclose(hi, [z, 1 + 2 * z], rtol=1e-14)


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99])
def test_gaussian_interval_holds_level_mass_by_integration(level):
    mu, sigma = 1.3, 0.7
    lo, hi = gaussian_interval(np.array([mu]), np.array([sigma]), level)
    mass, _ = integrate.quad(lambda x: norm.pdf(x, mu, sigma), lo[0], hi[0])
    assert mass == pytest.approx(level, abs=1e-10)
    assert mu - lo[0] == pytest.approx(hi[0] - mu, rel=1e-14)  # central


# --- coverage_metrics --------------------------------------------------------------------


def test_coverage_hand_case_bounds_inclusive():
    y = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, -1.0, 10.0])
    lower = np.array([0.0, 0.5, 2.5, 3.0, 3.0, 0.0, 0.0, 0.0])
    upper = np.array([1.0, 1.0, 3.5, 3.0, 4.0, 4.0, 1.0, 2.0])
    # covered: rows 0 (on lower), 1 (on upper), 3 (degenerate, equal), 4 (on upper) -> 4/8
    # below: rows 2, 6 -> 2/8; above: rows 5, 7 -> 2/8
    out = coverage_metrics(y, lower, upper, 0.9, y_std=2.0)
    width = np.mean(upper - lower)
    assert out == pytest.approx(
        {
            "coverage": 0.5,
            "width": width,
            "width_norm": width / 2.0,
            "coverage_error": 0.5 - 0.9,
            "miss_below": 0.25,
            "miss_above": 0.25,
        }
    )
    assert list(out) == ["coverage", "width", "width_norm", "coverage_error", "miss_below", "miss_above"]


def test_coverage_width_norm_omitted_without_y_std():
    out = coverage_metrics(np.zeros(3), -np.ones(3), np.ones(3), 0.95)
    assert "width_norm" not in out
    assert out["coverage"] == 1.0 and out["width"] == 2.0
    assert out["coverage_error"] == pytest.approx(0.05)


def test_coverage_of_true_gaussian_intervals_is_level():
    rng = np.random.default_rng(7)
    n = 200_000
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, size=n)
    y = mean + std * rng.normal(size=n)
    for level in (0.5, 0.9, 0.95):
        out = coverage_metrics(y, *gaussian_interval(mean, std, level), level)
        se = np.sqrt(level * (1 - level) / n)
        assert abs(out["coverage_error"]) < 4 * se
        # symmetric misses
        assert abs(out["miss_below"] - out["miss_above"]) < 6 * np.sqrt((1 - level) / n)
        assert out["width"] == pytest.approx(2 * ndtri(0.5 + level / 2) * std.mean())


def test_gaussian_as_quantiles_gives_same_coverage_as_gaussian_interval():
    rng = np.random.default_rng(3)
    n = 5000
    mean = rng.normal(size=n)
    std = rng.uniform(0.2, 1.5, size=n)
    y = rng.normal(scale=1.3, size=n)
    levels = np.array([0.025, 0.975])
    quantiles = mean[:, None] + std[:, None] * ndtri(levels)[None, :]
    ((i, j, level),) = central_pairs(levels)
    assert level_key(level) == "0.95"
    from_quantiles = coverage_metrics(y, quantiles[:, i], quantiles[:, j], level, y_std=1.3)
    from_gaussian = coverage_metrics(y, *gaussian_interval(mean, std, 0.95), 0.95, y_std=1.3)
    assert from_quantiles == pytest.approx(from_gaussian, rel=1e-12, abs=1e-12)
    assert from_gaussian["coverage"] < 0.95  # the data are not from the forecast: not trivial


def test_coverage_bad_input_names_row():
    with pytest.raises(InputError, match=r"lower must be <= upper: 1 row\(s\).*row 2"):
        coverage_metrics(np.zeros(3), np.array([0.0, 0.0, 2.0]), np.ones(3), 0.9)
    with pytest.raises(InputError, match="y_true must be finite"):
        coverage_metrics(np.array([0.0, np.nan]), np.zeros(2), np.ones(2), 0.9)
    with pytest.raises(InputError, match="level"):
        coverage_metrics(np.zeros(2), np.zeros(2), np.ones(2), 0.0)
    with pytest.raises(InputError, match="y_std"):
        coverage_metrics(np.zeros(2), np.zeros(2), np.ones(2), 0.9, y_std=0.0)
    with pytest.raises(InputError, match="inconsistent"):
        coverage_metrics(np.zeros(2), np.zeros(3), np.ones(3), 0.9)
    with pytest.raises(InputError, match="no rows"):
        coverage_metrics(np.zeros(0), np.zeros(0), np.zeros(0), 0.9)


@SETTINGS
@given(
    data=st.lists(
        st.tuples(st.floats(-10, 10), st.floats(-10, 10), st.floats(0, 5)),
        min_size=1,
        max_size=30,
    ),
    seed=st.integers(0, 2**16),
)
def test_coverage_row_order_invariant_and_shares_sum_to_one(data, seed):
    arr = np.array(data)
    y, lower, upper = arr[:, 0], arr[:, 1], arr[:, 1] + arr[:, 2]
    out = coverage_metrics(y, lower, upper, 0.8, y_std=1.5)
    perm = np.random.default_rng(seed).permutation(len(y))
    assert coverage_metrics(y[perm], lower[perm], upper[perm], 0.8, y_std=1.5) == pytest.approx(out)
    assert out["coverage"] + out["miss_below"] + out["miss_above"] == pytest.approx(1.0)
    assert 0 <= out["coverage"] <= 1 and out["width"] >= 0


# --- central_pairs -----------------------------------------------------------------------


def test_central_pairs_cases():
    assert central_pairs([0.05, 0.25, 0.5, 0.75, 0.95]) == [(0, 4, pytest.approx(0.9)), (1, 3, 0.5)]
    # unpaired 0.1 and 0.6, median alone gives nothing
    assert central_pairs([0.025, 0.1, 0.5, 0.6, 0.975]) == [(0, 4, pytest.approx(0.95))]
    assert central_pairs([0.5]) == []
    assert central_pairs([0.1, 0.2]) == []
    # mirrors within 1e-9 pair; further off do not
    assert [p[:2] for p in central_pairs([0.05, 0.95 + 5e-10])] == [(0, 1)]
    assert central_pairs([0.05, 0.95 + 1e-6]) == []


def test_central_pairs_levels_print_as_written():
    keys = [level_key(p) for _, _, p in central_pairs([0.025, 0.05, 0.1, 0.25, 0.75, 0.9, 0.95, 0.975])]
    assert keys == ["0.95", "0.9", "0.8", "0.5"]


def test_central_pairs_rejects_unsorted_or_out_of_range():
    with pytest.raises(InputError, match="increasing"):
        central_pairs([0.9, 0.1])
    with pytest.raises(InputError, match="between 0 and 1"):
        central_pairs([0.0, 0.5])


def test_bound_levels_are_the_mirror_of_central_pairs():
    """bound_levels (the one map from central levels p to their bounds' quantile levels (1 -/+ p)/2) and
    central_pairs (the map back) invert each other."""
    from uqeval.metrics.intervals import bound_levels, central_pairs

    p = np.array([0.5, 0.8, 0.95])
    b = bound_levels(p)
    assert b.tolist() == [0.25, (1 - 0.8) / 2, (1 - 0.95) / 2, 0.75, 0.9, 0.975]
    back = sorted(lv for _, _, lv in central_pairs(np.sort(b)))
    np.testing.assert_allclose(back, p, rtol=1e-12)
