"""Glossary: coverage of every metric key, sources, lookup and `explain` behaviour."""

from __future__ import annotations

import re

import pytest

from uqeval.errors import InputError
from uqeval.glossary import GLOSSARY, canonical_path, explain, find_entry, matches

REQUIRED = {
    "accuracy": ["mae", "rmse", "mdae", "marpd", "r2", "corr",
                 "accuracy", "nll", "brier", "brier_um"],
    "avg_calibration": ["rms_cal", "ma_cal", "miscal_area"],
    "adv_group_calibration": ["group_sizes", "ma_mean", "ma_stderr", "rms_mean", "rms_stderr"],
    "sharpness": ["sharp", "mean_std"],
    "scoring_rule": ["nll", "crps", "check", "interval", "crps_fair", "pinball", "wis"],
    "reliability": ["rs", "max_cal_err", "accrue"],
    "coverage": ["coverage", "width", "width_norm", "coverage_error", "miss_below", "miss_above"],
    "brier_decomposition": ["uncertainty", "resolution", "reliability"],
    "calibration": ["ece", "rmsce", "mce", "sce", "ace", "tace"],
    "prediction_sets": ["coverage", "mean_size"],
    "ensemble_uncertainty": ["total", "aleatoric", "epistemic"],
    "information_criteria": ["waic1", "waic2", "iscv"],
    "diversity": ["disagreement", "kl", "cosine_similarity", "double_fault"],
    "rejection": ["auc_rejection", "oracle_collaborative_accuracy"],
    "bayesian_ece": ["mean", "q10", "q50", "q90"],
    "ucc": ["auucc", "auucc_const", "gain", "op", "op_min"],
}
REQUIRED_KEYS = [f"{g}.{k}" for g, ks in REQUIRED.items() for k in ks] + ["spce"]

# Where each family comes from (a word every reference of the family must contain).
SOURCES = {
    "accuracy.mae": "Chung", "avg_calibration.": "Chung", "adv_group_calibration.": "Zhao",
    "sharpness.": "Chung", "scoring_rule.nll": "Gneiting", "scoring_rule.crps": "Gneiting",
    "scoring_rule.crps_fair": "Ferro", "scoring_rule.check": "Gneiting",
    "scoring_rule.interval": "Gneiting", "scoring_rule.wis": "Bracher",
    "reliability.": "Camporeale", "coverage.": "Kompa", "prediction_sets.": "Kompa",
    "calibration.ece": "Guo", "calibration.sce": "Nixon", "calibration.ace": "Nixon",
    "calibration.tace": "Nixon", "calibration.rmsce": "Nixon", "brier_decomposition.": "Murphy",
    "information_criteria.": "Uncertainty Metrics", "ensemble_uncertainty.": "Uncertainty Metrics",
    "bayesian_ece.": "Uncertainty Metrics", "spce": "Uncertainty Metrics", "ucc.": "Navrátil",
    "avg_calibration.rms_cal": "Kuleshov",
}


@pytest.mark.parametrize("key", REQUIRED_KEYS)
def test_every_metric_has_a_complete_entry(key):
    entry = GLOSSARY[key]
    assert set(entry) == {"title", "text", "formula", "reference"}
    for field, value in entry.items():
        assert isinstance(value, str) and len(value.strip()) > 3, (key, field)
    assert re.search(r"\(\d{4}\)|Uncertainty Metrics", entry["reference"]), key


def test_references_name_the_right_papers():
    for prefix, word in SOURCES.items():
        family = prefix.endswith(".")
        keys = [k for k in GLOSSARY if k == prefix or (family and k.startswith(prefix))]
        assert keys, prefix
        for k in keys:
            assert word in GLOSSARY[k]["reference"], (k, word)


def test_no_urls_in_glossary():
    for entry in GLOSSARY.values():
        for value in entry.values():
            assert "http://" not in value and "https://" not in value


def test_explain_full_and_short_name_agree():
    text = explain("crps")
    assert text == explain("scoring_rule.crps") == explain("  Scoring_Rule.CRPS ")
    assert text.startswith("scoring_rule.crps — Continuous ranked probability score")
    assert "Formula: " in text and "Reference: Gneiting & Raftery (2007)" in text


def test_explain_ambiguous_short_name_lists_all_matches():
    text = explain("nll")
    first = text.splitlines()[0]
    assert "2 metrics" in first
    assert "scoring_rule.nll" in first and "accuracy.nll" in first
    assert "scoring_rule.nll — " in text and "accuracy.nll — " in text
    assert set(matches("coverage")) >= {"coverage.coverage", "prediction_sets.coverage"}
    # a group name lists its members too
    assert {"reliability.rs", "brier_decomposition.reliability"} <= set(matches("reliability"))


def test_explain_unknown_name_suggests_close_matches():
    with pytest.raises(InputError, match=r"unknown metric 'crsp'.*did you mean .*crps"):
        explain("crsp")
    with pytest.raises(InputError, match="unknown metric 'zzz_nothing'"):
        explain("zzz_nothing")
    with pytest.raises(InputError):
        explain("")


def test_level_parts_are_ignored_in_paths():
    assert canonical_path("coverage.0.95.coverage") == "coverage.coverage"
    assert canonical_path("prediction_sets.0.9.mean_size") == "prediction_sets.mean_size"
    assert explain("coverage.0.95.width") == explain("coverage.width")


def test_find_entry_fallbacks():
    assert find_entry("scoring_rule.pinball_by_level.0.9")[0] == "scoring_rule.pinball_by_level"
    assert find_entry("ucc.op.cost")[0] == "ucc.op"
    assert find_entry("ucc.partial.gain")[0] == "ucc.gain"
    assert find_entry("rejection.oracle_curve")[0] == "rejection"
    assert find_entry("information_criteria.waic1_se")[0] == "information_criteria"
    assert find_entry("spce.ci_low")[0] == "spce"
    assert find_entry("made_up.metric") is None
