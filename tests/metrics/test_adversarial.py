"""Tests of adversarial group calibration in uqeval.metrics.calibration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import norm

from tests.reference.regen_toolbox import toolbox_datasets
from uqeval.errors import InputError
from uqeval.metrics.calibration import (
    adversarial_group_calibration,
    adversarial_group_calibration_gaussian,
    avg_calibration_gaussian,
    interval_cover_index,
)

# uncertainty-toolbox 0.1.1, get_all_metrics(...)["adv_group_calibration"], last group size
# (fraction 1: every group is the whole data, so the value is deterministic);
# regenerate with python tests/reference/regen_toolbox.py
TOOLBOX_ADV_FRACTION_1 = {
    "miscal_500": {"ma": 0.27466, "rms": 0.31146584920157017},
    "odd_37": {"ma": 0.22898443898443901, "rms": 0.25637753316783296},
    "offset_201": {"ma": 0.1059535655058043, "rms": 0.1262217349645452},
}

EXPECTED = np.linspace(0, 1, 100)
KEYS = {"group_sizes", "ma_mean", "ma_stderr", "rms_mean", "rms_stderr"}


def _cover(y, mean, std, expected=EXPECTED):
    return interval_cover_index(np.abs(y - mean) / std, expected)


def _brute_errors(y, mean, std, expected=EXPECTED):
    """Slow reference: toolbox-style observed proportions of the given rows -> (ma, rms)."""
    r = (mean - y) / std
    inside = (r[:, None] >= norm.ppf(0.5 - expected / 2.0)) & (r[:, None] <= norm.ppf(0.5 + expected / 2.0))
    gap = expected - inside.mean(axis=0)
    return np.mean(np.abs(gap)), np.sqrt(np.mean(gap**2))


@pytest.mark.parametrize("name", sorted(TOOLBOX_ADV_FRACTION_1))
def test_fraction_one_equals_average_calibration_exactly(name):
    y, mean, std = toolbox_datasets()[name]
    adv = adversarial_group_calibration_gaussian(y, mean, std, seed=7)
    avg = avg_calibration_gaussian(y, mean, std)
    assert set(adv) == KEYS
    assert adv["group_sizes"][-1] == 1.0
    assert adv["ma_mean"][-1] == avg["ma_cal"]
    assert adv["rms_mean"][-1] == avg["rms_cal"]
    assert adv["ma_stderr"][-1] == 0.0 and adv["rms_stderr"][-1] == 0.0
    ref = TOOLBOX_ADV_FRACTION_1[name]
    assert adv["ma_mean"][-1] == pytest.approx(ref["ma"], rel=1e-9)
    assert adv["rms_mean"][-1] == pytest.approx(ref["rms"], rel=1e-9)


def test_defaults_and_shapes():
    y, mean, std = toolbox_datasets()["miscal_500"]
    adv = adversarial_group_calibration_gaussian(y, mean, std)
    np.testing.assert_allclose(adv["group_sizes"], np.linspace(0.01, 1, 10))
    for key in KEYS:
        assert isinstance(adv[key], list) and len(adv[key]) == 10
        assert all(isinstance(v, float) for v in adv[key])
    # worst of 10 small groups is worse than the whole data
    assert adv["ma_mean"][0] > adv["ma_mean"][-1]
    assert all(se > 0 for se in adv["ma_stderr"][:-1])


def test_seed_reproducible_and_seed_dependent():
    y, mean, std = toolbox_datasets()["miscal_500"]
    a = adversarial_group_calibration_gaussian(y, mean, std, seed=0)
    b = adversarial_group_calibration_gaussian(y, mean, std, seed=0)
    c = adversarial_group_calibration_gaussian(y, mean, std, seed=1)
    assert a == b
    assert a["ma_mean"][:-1] != c["ma_mean"][:-1]
    assert a["ma_mean"][-1] == c["ma_mean"][-1]


def test_replay_with_concrete_row_subsets():
    """Rebuild every drawn group as actual rows and compute its calibration directly.

    The function's draws are replayed from the same seed; each draw's per-bin counts are
    turned into a concrete row subset (the first k rows of each bin), whose calibration is
    computed from its rows with the brute-force reference. The worst-of-draws, mean and
    standard error must then agree with the function's output.
    """
    y, mean, std = toolbox_datasets()["odd_37"]
    fractions, trials, draws, seed = [0.2, 0.5, 0.9, 1.0], 4, 3, 11
    got = adversarial_group_calibration_gaussian(
        y, mean, std, group_fractions=fractions, num_trials=trials, num_group_draws=draws, seed=seed
    )
    cover = _cover(y, mean, std)
    counts = np.bincount(cover, minlength=EXPECTED.size + 1)
    rows_by_bin = [np.flatnonzero(cover == j) for j in range(EXPECTED.size + 1)]
    rng = np.random.default_rng(seed)
    n = len(y)
    for f_idx, f in enumerate(fractions):
        size = max(int(round(f * n)), 2)
        sampled = rng.multivariate_hypergeometric(counts, size, size=trials * draws)
        errs = []
        for bin_counts in sampled:
            idx = np.concatenate([rows_by_bin[j][:k] for j, k in enumerate(bin_counts)])
            assert idx.size == size
            errs.append(_brute_errors(y[idx], mean[idx], std[idx]))
        errs = np.array(errs).reshape(trials, draws, 2).max(axis=1)
        for col, key in enumerate(("ma", "rms")):
            worst = errs[:, col]
            assert got[f"{key}_mean"][f_idx] == pytest.approx(worst.mean(), rel=1e-12, abs=1e-15)
            se = worst.std(ddof=1) / np.sqrt(trials)
            assert got[f"{key}_stderr"][f_idx] == pytest.approx(se, rel=1e-9, abs=1e-15)


def test_agrees_in_distribution_with_row_subsets():
    """Brute force: draw actual row subsets with rng.choice(replace=False); compare moments."""
    rng = np.random.default_rng(2024)
    n = 240
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, n)
    y = mean + std * rng.standard_normal(n) * np.where(np.arange(n) < n // 2, 0.6, 1.5)
    fractions, trials, draws = [0.05, 0.3, 0.7], 300, 5

    got = adversarial_group_calibration_gaussian(
        y, mean, std, group_fractions=fractions, num_trials=trials, num_group_draws=draws, seed=5
    )
    brute_rng = np.random.default_rng(99)
    for f_idx, f in enumerate(fractions):
        size = max(int(round(f * n)), 2)
        worst = np.empty((trials, 2))
        for t in range(trials):
            e = [
                _brute_errors(*(a[idx] for a in (y, mean, std)))
                for idx in (brute_rng.choice(n, size, replace=False) for _ in range(draws))
            ]
            worst[t] = np.max(e, axis=0)
        for col, key in enumerate(("ma", "rms")):
            b_mean = worst[:, col].mean()
            b_se = worst[:, col].std(ddof=1) / np.sqrt(trials)
            tol = 4.5 * np.hypot(b_se, got[f"{key}_stderr"][f_idx])
            assert abs(got[f"{key}_mean"][f_idx] - b_mean) < tol, (f, key)
            assert got[f"{key}_stderr"][f_idx] == pytest.approx(b_se, rel=0.25), (f, key)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(2, 60), st.integers(0, 2**32 - 1), st.randoms(use_true_random=False))
def test_row_order_invariance_is_exact(n, seed, rnd):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.1, 2.0, n)
    y = mean + std * rng.standard_normal(n) * 1.3
    perm = np.array(rnd.sample(range(n), n))
    a = adversarial_group_calibration_gaussian(y, mean, std, num_trials=3, num_group_draws=2)
    b = adversarial_group_calibration_gaussian(
        y[perm], mean[perm], std[perm], num_trials=3, num_group_draws=2
    )
    assert a == b
    for key in ("ma_mean", "rms_mean"):
        assert all(0.0 <= v <= 1.0 for v in a[key])


def test_small_n_uses_groups_of_two():
    cover = np.array([0, 50, 100])
    out = adversarial_group_calibration(cover, EXPECTED, group_fractions=[0.01, 1.0], num_trials=2)
    assert out["group_sizes"] == [0.01, 1.0]
    # a group of 2 of these 3 rows has observed proportions in {0, 0.5, 1}: error <= 1
    assert 0.0 < out["ma_mean"][0] <= 1.0


def test_bad_input():
    cover = np.array([0, 3, 5])
    with pytest.raises(InputError, match="at least 2 rows"):
        adversarial_group_calibration(np.array([1]), EXPECTED)
    with pytest.raises(InputError, match="num_trials"):
        adversarial_group_calibration(cover, EXPECTED, num_trials=1)
    with pytest.raises(InputError, match="num_group_draws"):
        adversarial_group_calibration(cover, EXPECTED, num_group_draws=0)
    with pytest.raises(InputError, match="group_fractions"):
        adversarial_group_calibration(cover, EXPECTED, group_fractions=[0.0, 0.5])
    with pytest.raises(InputError, match="integers in 0..100"):
        adversarial_group_calibration(np.array([0, 101]), EXPECTED)
    with pytest.raises(InputError, match="std must be > 0"):
        adversarial_group_calibration_gaussian([1.0, 2.0], [1.0, 2.0], [1.0, -1.0])
