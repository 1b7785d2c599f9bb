"""Spread–skill ratio (Fortin et al. 2014) and the finite-ensemble correction of spread calibration (issue 25).

References: closed forms and hand-computed cases; a Monte-Carlo check that a calibrated M-member ensemble
scores 1 (within its Monte-Carlo error) only with the (M + 1)/M correction; frozen values of the
community convention built from xskillscore 0.0.29 (``rmse`` of the ensemble mean) and xarray's member
standard deviation (``tests/reference/regen_spread_skill.py``: neither xskillscore 0.0.29 nor scores 2.7.0
ships a spread–skill function), whose relation to uqeval's ratio is checked numerically.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from uqeval.catalogue import compute, get_family, target
from uqeval.config import Settings
from uqeval.metrics.spread import ence, ensemble_std, spread_skill, spread_skill_from_sums, uce
from uqeval.predictions import Gaussian, Samples

REF = json.loads(
    (Path(__file__).parents[1] / "reference" / "data" / "spread_skill_reference.json").read_text()
)
FAMILY = get_family("spread_skill")


def _ensemble(n: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """y and m members drawn iid from N(mu_i, sigma_i): a perfectly calibrated ensemble (and its truth)."""
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sigma = np.exp(rng.normal(scale=0.5, size=n))
    y = rng.normal(mu, sigma)
    members = rng.normal(mu[:, None], sigma[:, None], size=(n, m))
    return y, members, mu, sigma


def _log_ratio_se(spread_sq: np.ndarray, err_sq: np.ndarray) -> float:
    """Delta-method standard error of log √(mean a / mean b) for iid rows."""
    a, b = spread_sq / spread_sq.mean(), err_sq / err_sq.mean()
    return 0.5 * float(np.sqrt((np.var(a) + np.var(b) - 2 * np.cov(a, b, ddof=0)[0, 1]) / a.size))


def test_hand_computed_gaussian_and_samples():
    # Gaussian: spread √((1 + 1 + 4)/3) = √2, RMSE √((0 + 1 + 4)/3): ratio √(6/5)
    got = spread_skill([0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [1.0, 1.0, 2.0])
    assert got["ratio"] == pytest.approx(np.sqrt(6 / 5), rel=1e-15)
    assert got == {
        "ratio": got["ratio"],
        "spread": pytest.approx(np.sqrt(2)),
        "rmse": pytest.approx(np.sqrt(5 / 3)),
    }
    # samples [0, 2, 4] and [1, 1, 1], y = 2, 3: means 2, 1; s² (ddof 1) 4, 0; times 4/3 -> mean 8/3;
    # squared errors 0, 4 -> mean 2: ratio √(4/3)
    pred = Samples(np.array([[0.0, 2.0, 4.0], [1.0, 1.0, 1.0]]), y_true=np.array([2.0, 3.0]))
    assert compute(FAMILY, pred, Settings())["ratio"] == pytest.approx(np.sqrt(4 / 3), rel=1e-15)
    assert target("spread_skill", "ratio") == 1.0
    assert FAMILY.metrics[0].orientation == "target"


def test_ragged_ensembles_correct_each_row_by_its_own_member_count():
    members = np.array([[0.0, 2.0, 4.0, np.nan], [1.0, 2.0, 4.0, 5.0], [3.0, -1.0, np.nan, np.nan]])
    y = np.array([1.0, 0.0, 2.0])
    pred = Samples(members, y_true=y, allow_missing=True)
    m = np.array([3.0, 4.0, 2.0])
    s2 = np.array([np.nanvar(r, ddof=1) for r in members])
    err = y - np.nanmean(members, axis=1)
    want = np.sqrt(np.mean(s2 * (m + 1) / m) / np.mean(err**2))
    assert compute(FAMILY, pred, Settings())["ratio"] == pytest.approx(want, rel=1e-14)
    np.testing.assert_array_equal(pred.member_counts(), m)


def test_degenerate_errors():
    assert spread_skill_from_sums(2.0, 0.0, 3)["ratio"] == np.inf
    assert np.isnan(spread_skill_from_sums(0.0, 0.0, 3)["ratio"])
    assert spread_skill_from_sums(0.0, 1.0, 3)["ratio"] == 0.0


def test_a_calibrated_five_member_ensemble_scores_one_only_with_the_correction():
    """y and M = 5 members iid from N(mu_i, sigma_i): E[(y − x̄)²] = (M + 1)/M σ² = E[s̃²]. The corrected
    ratio is 1 within 4 Monte-Carlo standard errors; the uncorrected one sits at √(M/(M + 1)) = 0.913."""
    m = 5
    y, members, mu, sigma = _ensemble(20_000, m, seed=25)
    pred = Samples(members, y_true=y)
    ratio = compute(FAMILY, pred, Settings())["ratio"]
    s = members.std(axis=1, ddof=1)
    err_sq = (y - members.mean(axis=1)) ** 2
    se = _log_ratio_se(s**2 * (m + 1) / m, err_sq)
    assert se < 0.01
    assert abs(np.log(ratio)) < 4 * se, (ratio, se)
    raw = spread_skill(y, members.mean(axis=1), s)["ratio"]  # without the factor
    assert raw == pytest.approx(ratio * np.sqrt(m / (m + 1)), rel=1e-12)
    assert abs(np.log(raw)) > 8 * se
    # the same rows as Gaussians with the true sigma: 1 within the Monte-Carlo error too
    g = compute(FAMILY, Gaussian(mu, std=sigma, y_true=y), Settings())["ratio"]
    assert abs(np.log(g)) < 4 * _log_ratio_se(sigma**2, (y - mu) ** 2)


def test_ence_and_uce_of_a_calibrated_ensemble_use_the_corrected_spread():
    """ENCE/UCE on samples see s·√((M + 1)/M). Without bins (one bin) a calibrated 5-member ensemble then has
    ENCE ≈ 0 like the Gaussian rows; with 15 bins formed on the noisy sample spread a gap remains that
    shrinks with M (documented in uqeval.metrics.spread), and the correction moves ENCE towards the
    Gaussian-rows value."""
    from uqeval.catalogue import get_family as fam

    spread_cal = fam("spread_calibration")
    on = Settings(diagnostics=True)
    for m in (5, 50):
        y, members, mu, sigma = _ensemble(4000, m, seed=m)
        got = compute(spread_cal, Samples(members, y_true=y), on)
        s, xbar = members.std(axis=1, ddof=1), members.mean(axis=1)
        corrected = ensemble_std(s, m)
        assert got["ence"] == pytest.approx(ence(y, xbar, corrected, 15), rel=1e-12)
        assert got["uce"] == pytest.approx(uce(y, xbar, corrected, 15), rel=1e-12)
        gauss = ence(y, mu, sigma, 15)
        assert abs(got["ence"] - gauss) < abs(ence(y, xbar, s, 15) - gauss)
        # one bin: ENCE = |1 − RMSE/RMV|, 0 within the Monte-Carlo error only with the correction
        se = _log_ratio_se(corrected**2, (y - xbar) ** 2)
        one_bin = ence(y, xbar, corrected, 1)
        assert one_bin < 4 * se
        if m == 5:  # √(6/5) = 1.095: far beyond the Monte-Carlo error
            assert ence(y, xbar, s, 1) > 4 * se
        if m == 50:
            assert got["ence"] == pytest.approx(gauss, abs=0.03)


@pytest.mark.parametrize("case", sorted(REF["cases"]))
def test_relation_to_the_uncorrected_community_convention(case):
    """xskillscore.rmse(ensemble mean) with xarray's member std (ddof 0, its default, or ddof 1) gives
    √(mean s₀²)/RMSE; uqeval's ratio is that times √((M + 1)/(M − 1)) (ddof 0) or √((M + 1)/M) (ddof 1)."""
    c = REF["cases"][case]
    members, y = np.asarray(c["members"]), np.asarray(c["y"])
    m = members.shape[1]
    ours = compute(FAMILY, Samples(members, y_true=y), Settings())["ratio"]
    assert ours == pytest.approx(c["xs_ratio_ddof0"] * np.sqrt((m + 1) / (m - 1)), rel=1e-12)
    assert ours == pytest.approx(c["xs_ratio_ddof1"] * np.sqrt((m + 1) / m), rel=1e-12)
    rmse = np.sqrt(np.mean((y - members.mean(axis=1)) ** 2))
    assert rmse == pytest.approx(c["xs_rmse"], rel=1e-12)


def test_in_memory_ratio_is_the_per_row_forms_finish():
    """The spread-skill ratio is one formula (metrics.spread.spread_skill_ratio): the kernel's ratio equals the
    catalogue's per-row form (the bootstrap's, the weights', the streamed one) finished on the same sums, bit for
    bit, with its inf / NaN conventions; the per-row terms' own sums agree to rounding."""
    from uqeval.catalogue import METRICS, rows

    rng = np.random.default_rng(9)
    y, mean, std = rng.normal(size=300), rng.normal(size=300), rng.uniform(0.5, 2.0, size=300)
    pred = Gaussian(y_true=y, mean=mean, std=std, columns={"y_true": "y", "mean": "mu", "std": "sd"})
    stat = rows(METRICS["spread_skill.ratio"], pred, Settings(), None)
    ratio = spread_skill(y, mean, std)["ratio"]
    same_sums = np.array([[np.dot(std, std), np.sum(np.square(y - mean))]])
    assert float(stat.finish(same_sums, np.array([300.0]))[0]) == ratio
    own = float(stat.finish(stat.terms.sum(axis=0)[None, :], np.array([300.0]))[0])
    assert own == pytest.approx(ratio, rel=1e-14)
    for errors, expected in ((0.0, np.inf), (np.nan, np.nan)):
        zero = np.array([[0.0 if np.isnan(errors) else 1.0, 0.0]])
        got = float(stat.finish(zero, np.array([1.0]))[0])
        assert got == expected or (np.isnan(expected) and np.isnan(got))
        assert spread_skill_from_sums(float(zero[0, 0]), 0.0, 1)["ratio"] == got or np.isnan(got)
