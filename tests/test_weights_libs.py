"""Weighted metrics against the libraries that weight them (issue 25): ``scores`` 2.7.0 (``weights=``, an
xarray weighted mean normalised by the weights' sum) and ``model-diagnostics`` 1.5.0 (``weights=``, numpy's
``np.average``), frozen by ``tests/reference/regen_weights_libs.py`` on the seeded data of
``regen_weights.py`` (257 rows, weights on [0, 3], every 7th row 0). scikit-learn's ``sample_weight``
values are in ``tests/test_weights.py``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import uqeval

REFERENCE = Path(__file__).parent / "reference" / "data" / "weights_libs.json"
REL = 1e-12


@pytest.fixture(scope="module")
def ref():
    r = json.loads(REFERENCE.read_text())
    assert r["library"].startswith("scores 2.7.0, model-diagnostics 1.5.0")
    r["data"] = {k: np.asarray(v) for k, v in r["data"].items()}
    d = r["data"]
    assert (d["w"][::7] == 0).all() and d["w"].max() > 2.0  # zeros and fractional weights both occur
    return r


def _close(got: float, want: float, what: str, rel: float = REL) -> None:
    assert got == pytest.approx(want, rel=rel, abs=1e-15), what


def test_point_predictions(ref):
    d, s, md = ref["data"], ref["scores"], ref["model_diagnostics"]
    got = uqeval.evaluate(d["y"], mean=d["mu"], weights=d["w"])
    _close(got["accuracy.rmse"], s["rmse"], "scores.continuous.rmse")
    _close(got["accuracy.rmse"] ** 2, s["mse"], "scores.continuous.mse")
    _close(got["accuracy.rmse"] ** 2, md["SquaredError"], "model_diagnostics SquaredError")
    _close(
        got["accuracy.rmse"] ** 2, md["HomogeneousExpectileScore_2_0.5"], "HomogeneousExpectileScore(2, 0.5)"
    )
    _close(got["accuracy.mae"], s["mae"], "scores.continuous.mae")
    # HomogeneousQuantileScore(degree=1, level=0.5) is the pinball loss at 0.5: half the absolute error
    _close(got["accuracy.mae"] / 2, md["HomogeneousQuantileScore_1_0.5"], "HomogeneousQuantileScore(1, 0.5)")


def test_r2_and_scores_weighted_nse_differ_only_in_the_centring(ref):
    """scores' weighted NSE centres the targets at their *unweighted* mean (rows of weight 0 included);
    uqeval's R² (as scikit-learn's r2_score with sample_weight) at the weighted mean, so that integer weights
    equal repeated rows. On these data: R² 0.527618, scores' NSE 0.529832. Both are 1 - (weighted MSE) /
    (weighted mean square about the centre)."""
    d, s = ref["data"], ref["scores"]
    y, w = d["y"], d["w"]
    r2 = uqeval.evaluate(y, mean=d["mu"], weights=w)["accuracy.r2"]
    assert r2 == pytest.approx(0.527618, abs=1e-6) and s["nse"] == pytest.approx(0.529832, abs=1e-6)
    about_mean = np.sum(w * (y - y.mean()) ** 2)
    about_weighted_mean = np.sum(w * (y - np.average(y, weights=w)) ** 2)
    _close(1 - r2, (1 - s["nse"]) * about_mean / about_weighted_mean, "R² from scores' NSE")


def test_quantiles_pinball_and_wis(ref):
    d, s, md = ref["data"], ref["scores"], ref["model_diagnostics"]
    got = uqeval.evaluate(d["y"], quantiles=d["q"], levels=d["levels"], weights=d["w"])
    # per level, scores' quantile_score is model-diagnostics' PinballLoss (no factor 2)
    np.testing.assert_allclose(s["quantile_score"], md["PinballLoss"], rtol=REL)
    _close(got["scoring_rule.pinball"], np.mean(s["quantile_score"]), "scores.continuous.quantile_score")
    _close(got["scoring_rule.pinball"], np.mean(md["PinballLoss"]), "model_diagnostics PinballLoss")
    # the weighted interval score of a median and the 50% and 90% intervals, from scores' interval_score
    # (the 0.5 weight of |y - median| is scores' quantile_score at 0.5), and = 2 x the mean pinball loss
    wis = (s["quantile_score"][2] + 0.25 * s["interval_score_50"] + 0.05 * s["interval_score_90"]) / 2.5
    _close(got["scoring_rule.wis"], wis, "WIS from scores.continuous.interval_score")
    _close(got["scoring_rule.wis"], 2 * np.mean(s["quantile_score"]), "WIS = 2 x mean pinball")


def test_intervals(ref):
    d, s = ref["data"], ref["scores"]
    q = d["q"]
    got = uqeval.evaluate(d["y"], lower=q[:, [0, 1]], upper=q[:, [4, 3]], levels=[0.9, 0.5], weights=d["w"])
    # uqeval's interval score is averaged over the levels; scores' interval_score is one interval's
    _close(
        got["scoring_rule.interval"], (s["interval_score_90"] + s["interval_score_50"]) / 2, "interval_score"
    )


def test_ensemble_crps_both_estimators(ref):
    d, s = ref["data"], ref["scores"]
    got = uqeval.evaluate(d["y"], samples=d["ens"], weights=d["w"])
    # uqeval's crps is scores' method="ecdf" (the CRPS of the members' empirical CDF), crps_fair its "fair"
    _close(got["scoring_rule.crps"], s["crps_for_ensemble_ecdf"], "crps_for_ensemble(method='ecdf')")
    _close(got["scoring_rule.crps_fair"], s["crps_for_ensemble_fair"], "crps_for_ensemble(method='fair')")
    assert s["crps_for_ensemble_fair"] < s["crps_for_ensemble_ecdf"] - 0.01  # the two estimators differ


@pytest.mark.parametrize(
    "region,key",
    [
        ((0.5, None), "tail_tw_crps_for_ensemble_upper_0.5"),
        ((-0.5, 1.0), "interval_tw_crps_for_ensemble_-0.5_1"),
    ],
)
def test_threshold_weighted_ensemble_crps(ref, region, key):
    """scores' tail_ / interval_tw_crps_for_ensemble (method="ecdf"): the weight region of the threshold
    (uqeval's tw_threshold) and the rows' case weights together."""
    d = ref["data"]
    got = uqeval.evaluate(d["y"], samples=d["ens"], weights=d["w"], tw_threshold=region)
    _close(got["weighted_scoring.twcrps"], ref["scores"][key], key)


def test_gaussian_crps_against_a_discretised_cdf(ref):
    """scores has no closed-form Gaussian CRPS: crps_cdf integrates the Gaussian CDF given on 4001 thresholds
    over mu ± 10 sd, piecewise linear, so it differs from the closed form by the discretisation (4.4e-8 here,
    O(h²) with h = sd / 200); the tolerance is 2e-7, well below any weighting mistake (unweighted: 1.5e-2)."""
    d, s = ref["data"], ref["scores"]
    got = uqeval.evaluate(d["y"], mean=d["mu"], std=d["sd"], weights=d["w"])["scoring_rule.crps"]
    assert got == pytest.approx(s["crps_cdf_gaussian"], abs=2e-7)
    plain = uqeval.evaluate(d["y"], mean=d["mu"], std=d["sd"])["scoring_rule.crps"]
    assert abs(plain - s["crps_cdf_gaussian"]) > 1e-3


def test_binary_event(ref):
    d, s, md = ref["data"], ref["scores"], ref["model_diagnostics"]
    y, p, w = d["is0"], d["p0"], d["w"]
    got = uqeval.evaluate(y, proba=p, weights=w)
    _close(got["accuracy.nll"], md["LogLoss_binary"], "model_diagnostics LogLoss")
    _close(uqeval.log_loss(y, p, weights=w), md["LogLoss_binary"], "uqeval.log_loss vs LogLoss")
    # uqeval's accuracy.brier sums over both classes: twice the one-class Brier score of scores/model-diagnostics
    _close(got["accuracy.brier"] / 2, s["brier_score"], "scores.probability.brier_score")
    _close(got["accuracy.brier"] / 2, md["SquaredError_binary"], "model_diagnostics SquaredError")
    _close(uqeval.brier_score(y, p, convention="binary", weights=w), s["brier_score"], "uqeval.brier_score")


def test_multiclass_brier_is_the_sum_of_the_per_class_squared_errors(ref):
    d, md = ref["data"], ref["model_diagnostics"]
    got = uqeval.evaluate(d["labels"], proba=d["proba"], weights=d["w"])
    _close(got["accuracy.brier"], sum(md["SquaredError_per_class"]), "sum of SquaredError per class")
    _close(got["accuracy.brier_um"], sum(md["SquaredError_per_class"]) - 1, "brier_um")
    brier = uqeval.brier_score(d["labels"], d["proba"], weights=d["w"])
    _close(brier, sum(md["SquaredError_per_class"]), "uqeval.brier_score")


def test_inputs_are_the_scikit_learn_references(ref):
    """The same rows as tests/reference/data/weights.json, so the three libraries score one data set."""
    sk = json.loads((REFERENCE.parent / "weights.json").read_text())["data"]
    for k, v in sk.items():
        np.testing.assert_array_equal(ref["data"][k], np.asarray(v), err_msg=k)
