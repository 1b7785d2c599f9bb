"""Calibration diagnostics: CORP decompositions, spread calibration (ENCE, C_v, UCE), smooth ECE.

Reference values are frozen in ``tests/reference/data/diagnostics.json`` (inputs in
``diagnostics.npz``) by ``tests/reference/regen_corp.py`` from model-diagnostics 1.5.0
(``scoring.decompose``), netcal 1.4.0 (``metrics.ENCE``, ``metrics.UCE``) and relplot 1.0.3
(``smECE``), on real predictions (scikit-learn 1.9.1 models on its breast-cancer, wine and diabetes
data) and seeded synthetic data.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from uqeval.metrics.corp import (
    corp_binary,
    corp_classification,
    corp_mean,
    corp_quantile,
    isotonic_mean,
    isotonic_quantile,
    log_score,
    pinball_score,
    reliability_curve,
)
from uqeval.metrics.smooth_ece import smooth_ece, smooth_reliability_curve
from uqeval.metrics.spread import coefficient_of_variation, ence, spread_bins, spread_calibration, uce

DATA = Path(__file__).parents[1] / "reference" / "data"
REF = json.loads((DATA / "diagnostics.json").read_text())
ARR = dict(np.load(DATA / "diagnostics.npz"))
QUANTILE_LEVELS = (0.1, 0.5, 0.9)
PARTS = ("mcb", "dsc", "unc")


def _close(got: dict, want: dict, what: str) -> None:
    for k in PARTS:
        assert got[k] == pytest.approx(want[k], rel=1e-9, abs=1e-12), (what, k, got[k], want[k])


# --------------------------------------------------------------------------- CORP against model-diagnostics


@pytest.mark.parametrize("name", ["cancer", "binary"])
def test_corp_binary_matches_model_diagnostics(name):
    got = corp_binary(ARR[f"{name}_p"], ARR[f"{name}_y"])
    for score in ("brier", "log"):
        _close(got[score], REF[name][score], f"{name} {score}")


@pytest.mark.parametrize("name", ["wine", "multi"])
def test_corp_multiclass_top_label_and_one_vs_rest(name):
    got = corp_classification(ARR[f"{name}_proba"], ARR[f"{name}_labels"])
    assert set(got) == {"brier_top_label", "log_top_label", "brier_ovr", "log_ovr"}
    for score, parts in got.items():
        _close(parts, REF[name][score], f"{name} {score}")


def test_two_class_probabilities_decompose_p_of_class_1():
    p, y = ARR["cancer_p"], ARR["cancer_y"]
    got = corp_classification(np.column_stack([1 - p, p]), y.astype(int))
    assert set(got) == {"brier", "log"}
    _close(got["brier"], REF["cancer"]["brier"], "two columns")


@pytest.mark.parametrize("name", ["diabetes", "reg"])
def test_corp_mean_and_pinball_match_model_diagnostics(name):
    y = ARR[f"{name}_y"]
    _close(corp_mean(y, ARR[f"{name}_mean"]), REF[name]["mse"], f"{name} mse")
    for j, t in enumerate(QUANTILE_LEVELS):
        _close(
            corp_quantile(y, ARR[f"{name}_q"][:, j], t), REF[name][f"pinball_{t:g}"], f"{name} pinball {t}"
        )


# --------------------------------------------------------------------------- CORP identities


def _cases():
    for name in ("cancer", "binary"):
        p, y = ARR[f"{name}_p"], ARR[f"{name}_y"]
        yield f"{name} brier", corp_binary(p, y)["brier"], np.mean((p - y) ** 2)
        yield f"{name} log", corp_binary(p, y)["log"], np.mean(log_score(p, y))
    for name in ("wine", "multi"):
        proba, labels = ARR[f"{name}_proba"], ARR[f"{name}_labels"]
        onehot = np.eye(proba.shape[1])[labels]
        yield (
            f"{name} brier_ovr",
            corp_classification(proba, labels)["brier_ovr"],
            np.mean(np.sum((proba - onehot) ** 2, axis=1)),
        )
    for name in ("diabetes", "reg"):
        y = ARR[f"{name}_y"]
        yield f"{name} mse", corp_mean(y, ARR[f"{name}_mean"]), np.mean((y - ARR[f"{name}_mean"]) ** 2)
        for j, t in enumerate(QUANTILE_LEVELS):
            q = ARR[f"{name}_q"][:, j]
            yield f"{name} pinball {t}", corp_quantile(y, q, t), np.mean(pinball_score(q, y, t))


@pytest.mark.parametrize("what,parts,score", list(_cases()), ids=[c[0] for c in _cases()])
def test_mcb_minus_dsc_plus_unc_is_the_mean_score(what, parts, score):
    assert parts["mcb"] - parts["dsc"] + parts["unc"] == pytest.approx(score, rel=1e-12, abs=1e-12)
    assert parts["mcb"] >= -1e-12 and parts["dsc"] >= -1e-12  # PAV is optimal; the climatology is isotonic


def test_mcb_is_zero_for_an_isotonic_calibrated_forecast():
    for name in ("cancer", "binary"):
        p, y = ARR[f"{name}_p"], ARR[f"{name}_y"]
        calibrated = isotonic_mean(p, y)
        got = corp_binary(calibrated, y)
        assert got["brier"]["mcb"] == pytest.approx(0.0, abs=1e-12)
        assert got["log"]["mcb"] == pytest.approx(0.0, abs=1e-12)  # 0 log 0 = 0 where the PAV gives 0 or 1
        assert got["brier"]["dsc"] == pytest.approx(corp_binary(p, y)["brier"]["dsc"], rel=1e-12)
    y = ARR["diabetes_y"]
    assert corp_mean(y, isotonic_mean(ARR["diabetes_mean"], y))["mcb"] == pytest.approx(0.0, abs=1e-9)
    for j, t in enumerate(QUANTILE_LEVELS):
        q = isotonic_quantile(ARR["diabetes_q"][:, j], y, t)
        assert corp_quantile(y, q, t)["mcb"] == pytest.approx(0.0, abs=1e-12)


def test_pav_pools_equal_forecasts_and_is_monotone():
    x = np.array([0.2, 0.2, 0.5, 0.1, 0.5, 0.9])
    y = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    fit = isotonic_mean(x, y)
    # x = 0.1 (y=1) pools with x = 0.2 (mean 0.5): 2/3; x = 0.5 (mean 0.5) pools on: 3/5 ... then 0.9
    np.testing.assert_allclose(fit, [0.6, 0.6, 0.6, 0.6, 0.6, 1.0])
    q = isotonic_quantile(x, y, 0.5)
    assert q[0] == q[1] and q[2] == q[4]
    assert np.all(np.diff(q[np.argsort(x, kind="stable")]) >= 0)


def test_isotonic_quantile_is_optimal_against_brute_force():
    """Every monotone step function on 6 rows with values in the data: none scores better."""
    import itertools

    rng = np.random.default_rng(4)
    for _ in range(20):
        x = rng.integers(0, 4, 6).astype(float)
        y = rng.integers(0, 5, 6).astype(float)
        tau = float(rng.choice([0.2, 0.5, 0.7]))
        got = np.sum(pinball_score(isotonic_quantile(x, y, tau), y, tau))
        ux = np.unique(x)
        best = min(
            np.sum(pinball_score(np.array(v)[np.searchsorted(ux, x)], y, tau))
            for v in itertools.combinations_with_replacement(np.unique(y), ux.size)
        )
        assert got == pytest.approx(best, abs=1e-12)


def test_constant_outcomes_and_single_rows():
    got = corp_binary(np.array([0.2, 0.7, 0.7]), np.ones(3))
    assert got["brier"]["unc"] == 0.0 and got["log"]["unc"] == 0.0  # 0 log 0 = 0
    assert got["log"]["mcb"] == pytest.approx(np.mean(-np.log([0.2, 0.7, 0.7])))
    one = corp_mean(np.array([3.0]), np.array([1.0]))
    assert one == {"mcb": 4.0, "dsc": 0.0, "unc": 0.0}
    assert corp_quantile(np.array([3.0]), np.array([1.0]), 0.9)["mcb"] == pytest.approx(1.8)


# --------------------------------------------------------------------------- CORP reliability diagram


def test_consistency_band_holds_the_curve_at_the_nominal_rate_under_calibration():
    inside, diagonal = [], []
    for seed in range(12):
        rng = np.random.default_rng(seed)
        p = rng.uniform(size=400)
        y = (rng.uniform(size=400) < p).astype(float)
        r = reliability_curve(p, y, num_resamples=200, level=0.9, seed=seed)
        w = r["counts"]
        inside.append(
            np.average((r["lower"] <= r["calibrated"]) & (r["calibrated"] <= r["upper"]), weights=w)
        )
        diagonal.append(np.average((r["lower"] <= r["x"]) & (r["x"] <= r["upper"]), weights=w))
    assert np.mean(inside) == pytest.approx(0.9, abs=0.04)
    assert np.mean(diagonal) >= 0.9  # the band is drawn around the diagonal


def test_consistency_band_flags_an_overconfident_forecast_and_is_seeded():
    rng = np.random.default_rng(0)
    p = rng.uniform(size=1000)
    y = (rng.uniform(size=1000) < 0.5 + 0.5 * (p - 0.5)).astype(float)  # truth flatter than the forecast
    r = reliability_curve(p, y, seed=3)
    outside = ~((r["lower"] <= r["calibrated"]) & (r["calibrated"] <= r["upper"]))
    assert np.average(outside, weights=r["counts"]) > 0.5
    again = reliability_curve(p, y, seed=3)
    np.testing.assert_array_equal(r["lower"], again["lower"])
    assert not np.array_equal(r["lower"], reliability_curve(p, y, seed=4)["lower"])


# --------------------------------------------------------------------------- smooth ECE against relplot


@pytest.mark.parametrize(
    "name,key", [("cancer", ""), ("binary", ""), ("wine", "_top_label"), ("multi", "_top_label")]
)
def test_smooth_ece_matches_relplot(name, key):
    if key:
        proba, labels = ARR[f"{name}_proba"], ARR[f"{name}_labels"]
        f, y = proba.max(axis=1), (proba.argmax(axis=1) == labels).astype(float)
    else:
        f, y = ARR[f"{name}_p"], ARR[f"{name}_y"]
    got = smooth_ece(f, y)
    assert got["bandwidth"] == REF[name][f"bandwidth{key}"]  # the same bisection step, exactly
    assert got["smece"] == pytest.approx(REF[name][f"smece{key}"], rel=1e-9)


def test_smooth_ece_is_small_for_calibrated_and_large_for_overconfident():
    rng = np.random.default_rng(1)
    p = rng.uniform(size=20000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    assert smooth_ece(p, y)["smece"] < 0.02
    hot = np.clip(0.5 + 1.8 * (p - 0.5), 0, 1)
    assert smooth_ece(hot, y)["smece"] > 0.1
    curve = smooth_reliability_curve(p, y, 0.05)
    inner = (curve["t"] > 0.1) & (curve["t"] < 0.9)
    np.testing.assert_allclose(curve["mu"][inner], curve["t"][inner], atol=0.03)


# --------------------------------------------------------------------------- spread calibration


def _ence_by_hand(y, mean, std, bins):
    """Levi et al. Eq. 6 written out: sort by sigma, split into equal-count bins."""
    order = np.argsort(std, kind="stable")
    terms = []
    for idx in np.array_split(order, bins):
        rmv = np.sqrt(np.mean(std[idx] ** 2))
        rmse = np.sqrt(np.mean((y[idx] - mean[idx]) ** 2))
        terms.append(abs(rmv - rmse) / rmv)
    return float(np.mean(terms))


def test_ence_and_uce_match_netcal_where_the_binnings_agree():
    # sigma on an even grid: netcal's equal-width sigma bins hold equal counts, so its ENCE is Levi's
    y, mean, std = ARR["reg_y"], ARR["reg_mean"], ARR["reg_std"]
    assert ence(y, mean, std, 10) == pytest.approx(REF["reg"]["netcal_ence"], rel=1e-9)
    assert uce(y, mean, std, 10) == pytest.approx(REF["reg"]["netcal_uce"], rel=1e-9)


def test_uce_matches_netcal_and_ence_the_paper_on_real_predictions():
    y, mean, std = ARR["diabetes_y"], ARR["diabetes_br_mean"], ARR["diabetes_br_std"]
    assert uce(y, mean, std, 10) == pytest.approx(REF["diabetes_br"]["netcal_uce"], rel=1e-9)
    for bins in (1, 7, 10, 15, 221):
        assert ence(y, mean, std, bins) == pytest.approx(_ence_by_hand(y, mean, std, bins), rel=1e-12)


def test_cv_is_the_unbiased_coefficient_of_variation():
    import statistics

    std = ARR["diabetes_br_std"]
    assert coefficient_of_variation(std) == pytest.approx(
        statistics.stdev(std) / statistics.fmean(std), rel=1e-12
    )
    assert coefficient_of_variation(np.full(5, 2.0)) == 0.0
    assert coefficient_of_variation(np.array([1.0])) == 0.0


def test_spread_calibration_edge_cases():
    rng = np.random.default_rng(2)
    mean, std = rng.normal(size=300), np.full(300, 1.5)
    y = mean + std * rng.normal(size=300)
    out = spread_calibration(y, mean, std, num_bins=15)  # constant sigma: one UCE bin, 15 ENCE bins
    assert out["uce"] == pytest.approx(abs(np.mean((y - mean) ** 2) - 2.25), rel=1e-12)
    assert out["cv"] == 0.0
    one = spread_calibration(np.array([1.0]), np.array([0.0]), np.array([2.0]), num_bins=15)
    assert one["ence"] == pytest.approx(0.5) and one["uce"] == pytest.approx(3.0)
    b = spread_bins(y, mean, std, 15)
    assert b["counts"].sum() == 300 and b["rmv"].shape == (15,)
    # calibrated sigma scores far better than a sigma 2.5 times too wide
    sd = rng.uniform(0.5, 2.0, 5000)
    m = rng.normal(size=5000)
    yy = m + sd * rng.normal(size=5000)
    good, wide = spread_calibration(yy, m, sd), spread_calibration(yy, m, 2.5 * sd)
    assert good["ence"] < 0.1 < wide["ence"] and good["uce"] < wide["uce"]


def test_ence_leaves_out_bins_without_spread_as_netcal():
    y = np.array([0.0, 1.0, 2.0, 3.0])
    mean = np.zeros(4)
    std = np.array([0.0, 0.0, 1.0, 1.0])
    # two bins: sigma 0 (left out), sigma 1 with RMSE sqrt((4 + 9)/2)
    assert ence(y, mean, std, 2) == pytest.approx(abs(1 - np.sqrt(6.5)))
    assert np.isnan(ence(y, mean, np.zeros(4), 2))


def test_log_score_of_certain_forecasts():
    y = np.array([1.0, 1.0, 0.0, 0.0])
    right = corp_binary(np.array([1.0, 1.0, 0.0, 0.0]), y)["log"]
    assert right == {"mcb": 0.0, "dsc": right["unc"], "unc": pytest.approx(np.log(2))}  # exact 0 log 0 = 0
    wrong = corp_binary(np.array([0.0, 1.0, 0.0, 1.0]), y)["log"]  # two certain failures: 36.04 each, finite
    assert wrong["mcb"] - wrong["dsc"] + wrong["unc"] == pytest.approx(-np.log(np.finfo(float).eps) / 2)


def test_dsc_keeps_the_ranking_and_mcb_sees_the_scale():
    """DSC depends on the forecast only through its ranking: an increasing transformation leaves it
    unchanged (the PAV fit is the same) and moves only MCB."""
    p, y = ARR["cancer_p"], ARR["cancer_y"]
    for f in (np.sqrt(p), p**3, 0.2 + 0.6 * p):
        for score in ("brier", "log"):
            a, b = corp_binary(p, y)[score], corp_binary(f, y)[score]
            assert b["dsc"] == pytest.approx(a["dsc"], rel=1e-12) and b["unc"] == a["unc"]
            assert b["mcb"] > a["mcb"]  # the transformed forecast is worse calibrated
    yy, m = ARR["diabetes_y"], ARR["diabetes_mean"]
    assert corp_mean(yy, m + 30.0)["dsc"] == pytest.approx(corp_mean(yy, m)["dsc"], rel=1e-12)
    q = ARR["diabetes_q"][:, 2]
    assert corp_quantile(yy, 2.0 * q - 5.0, 0.9)["dsc"] == pytest.approx(
        corp_quantile(yy, q, 0.9)["dsc"], rel=1e-12
    )
    # a forecast that ranks worse (noise added) discriminates less
    noisy = np.clip(p + np.random.default_rng(0).normal(0, 0.3, p.size), 0, 1)
    assert corp_binary(noisy, y)["brier"]["dsc"] < corp_binary(p, y)["brier"]["dsc"]
