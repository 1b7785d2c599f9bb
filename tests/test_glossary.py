"""Glossary: coverage of every metric key, sources, lookup and `explain` behaviour."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.integrate import trapezoid
from typer.testing import CliRunner

from uqeval.catalogue import METRICS, compute_metrics, get_family
from uqeval.catalogue.explain import explain
from uqeval.cli import app
from uqeval.config import make_settings
from uqeval.errors import InputError
from uqeval.glossary import GLOSSARY, canonical_path, find_entry, matches
from uqeval.io.load import load_predictions

from .conftest import SAMPLE

REQUIRED = {
    "accuracy": ["mae", "rmse", "mdae", "marpd", "r2", "corr", "accuracy", "nll", "brier", "brier_um"],
    "avg_calibration": ["rms_cal", "ma_cal", "miscal_area", "pit_histogram"],
    "adv_group_calibration": ["group_sizes", "ma_mean", "ma_stderr", "rms_mean", "rms_stderr"],
    "sharpness": ["sharp", "mean_std"],
    "scoring_rule": ["nll", "crps", "check", "interval", "crps_fair", "pinball", "wis"],
    "reliability": ["rs", "max_cal_err", "accrue"],
    "coverage": ["coverage", "width", "width_norm", "coverage_error", "miss_below", "miss_above"],
    "brier_decomposition": ["uncertainty", "resolution", "reliability"],
    "calibration": ["ece", "rmsce", "mce", "sce", "ace", "tace"],
    "prediction_sets": ["coverage", "mean_size", "size_histogram"],
    "ensemble_uncertainty": ["total", "aleatoric", "epistemic"],
    "information_criteria": ["waic1", "waic2", "iscv", "waic1_se", "waic2_se", "iscv_se"],
    "diversity": ["disagreement", "kl", "cosine_similarity", "double_fault"],
    "rejection": [
        "auc_rejection",
        "auc_oracle",
        "oracle_collaborative_accuracy",
        "fractions",
        "values",
        "oracle_values",
    ],
    "bayesian_ece": ["mean", "q10", "q50", "q90"],
    "spce": ["spce", "ci_low", "ci_high"],
    "ucc": ["auucc", "auucc_const", "gain", "op", "op_min"],
}
REQUIRED_KEYS = [f"{g}.{k}" for g, ks in REQUIRED.items() for k in ks] + ["spce"]

# Where each family comes from (a word every reference of the family must contain).
SOURCES = {
    "accuracy.mae": "Chung",
    "avg_calibration.": "Chung",
    "adv_group_calibration.": "Zhao",
    "sharpness.": "Chung",
    "scoring_rule.nll": "Gneiting",
    "scoring_rule.crps": "Gneiting",
    "scoring_rule.crps_fair": "Ferro",
    "scoring_rule.check": "Gneiting",
    "scoring_rule.interval": "Gneiting",
    "scoring_rule.wis": "Bracher",
    "reliability.": "Camporeale",
    "coverage.": "Kompa",
    "prediction_sets.": "Kompa",
    "calibration.ece": "Guo",
    "calibration.sce": "Nixon",
    "calibration.ace": "Nixon",
    "calibration.tace": "Nixon",
    "calibration.rmsce": "Nixon",
    "brier_decomposition.": "Murphy",
    "information_criteria.": "Uncertainty Metrics",
    "ensemble_uncertainty.": "Uncertainty Metrics",
    "bayesian_ece.": "Uncertainty Metrics",
    "spce": "Uncertainty Metrics",
    "spce.": "Uncertainty Metrics",
    "rejection.": "Uncertainty Metrics",
    "ucc.": "Navrátil",
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
    # the HTML report links any key of a group to the group's entry; explain does not guess
    assert find_entry("rejection.oracle_curve")[0] == "rejection"
    assert find_entry("rejection.oracle_curve", group_fallback=False) is None
    assert find_entry("rejection", group_fallback=False)[0] == "rejection"
    assert find_entry("information_criteria.waic1_se")[0] == "information_criteria.waic1_se"
    assert find_entry("spce.ci_low")[0] == "spce.ci_low"
    assert find_entry("made_up.metric") is None


def test_every_catalogue_metric_has_its_own_entry():
    """No catalogue path falls back to its group's text (the HTML report and explain show the metric's own)."""
    borrowed = {
        p: find_entry(p) and find_entry(p)[0] for p in METRICS if not find_entry(p) or find_entry(p)[0] != p
    }
    assert borrowed == {}
    assert set(REQUIRED_KEYS) - {"spce"} - {k for k in REQUIRED_KEYS if k.startswith("ucc.")} <= set(METRICS)


@pytest.mark.parametrize("name", ["rejection.bogus", "spce.ci_middle", "information_criteria.waic3_se"])
def test_unknown_key_under_a_known_group_is_an_error(name):
    group = name.split(".")[0]
    with pytest.raises(InputError, match=rf"unknown metric '{re.escape(name)}': did you mean {group}\."):
        explain(name)
    r = CliRunner().invoke(app, ["explain", name])
    assert r.exit_code == 3 and r.stdout == "", r.output
    assert f"did you mean {group}." in r.stderr


def test_close_matches_under_a_group_come_first():
    with pytest.raises(InputError, match=r"did you mean rejection\.values,"):
        explain("rejection.valuse")
    with pytest.raises(InputError, match=r"did you mean information_criteria\.waic1_se,"):
        explain("information_criteria.waic1_sd")


@pytest.mark.parametrize(
    "name,key",
    [
        ("rejection", "rejection"),
        ("ucc", "ucc"),
        ("crps", "scoring_rule.crps"),
        ("coverage.0.95.width", "coverage.width"),
        ("spce.spce", "spce.spce"),
        ("rejection.oracle_values", "rejection.oracle_values"),
        ("waic2_se", "information_criteria.waic2_se"),
    ],
)
def test_names_that_keep_working(name, key):
    r = CliRunner().invoke(app, ["explain", name])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"{key} — {GLOSSARY[key]['title']}\n")


# The formulas of the new entries, checked against what the kernels compute.


def _classification():
    settings = make_settings()
    pred = load_predictions(SAMPLE / "classification.parquet", settings).prediction
    return pred, settings


def test_rejection_entries_match_the_kernel():
    pred, settings = _classification()
    out = compute_metrics(pred, settings)[0]["rejection"]
    assert np.allclose(out["fractions"], np.arange(100) / 100)  # f = 0, 0.01, ..., 0.99
    conf, correct = pred.top_label()
    assert out["values"][0] == pytest.approx(correct.mean())
    r = np.floor(0.5 * pred.n).astype(int)  # at f = 0.5: accuracy of the N - r least uncertain rows
    keep = np.argsort(1.0 - conf, kind="stable")[: pred.n - r]
    assert out["values"][50] == pytest.approx(correct[keep].mean(), abs=1e-3)  # ties split by expectation
    assert out["oracle_values"][50] == pytest.approx(np.sort(correct)[::-1][: pred.n - r].mean())
    assert np.all(np.asarray(out["oracle_values"]) >= np.asarray(out["values"]) - 1e-12)
    assert out["auc_oracle"] == pytest.approx(trapezoid(out["oracle_values"], out["fractions"]))
    assert out["auc_rejection"] == pytest.approx(trapezoid(out["values"], out["fractions"]))


def test_information_criteria_se_entries_match_the_kernel():
    from uqeval.metrics.ensembles import information_criteria, information_criteria_rows

    ll = np.random.default_rng(0).normal(-1.0, 0.5, size=(300, 6))
    out, rows = information_criteria(ll), information_criteria_rows(ll)
    for key in ("waic1", "waic2", "iscv"):
        assert out[f"{key}_se"] == pytest.approx(rows[key].std(ddof=1) / np.sqrt(300), rel=1e-12)
    # the per-row terms are the formulas of the entries
    lpd = np.log(np.exp(ll).mean(axis=1))
    assert np.allclose(rows["waic1"], lpd - ll.var(axis=1, ddof=1))
    assert np.allclose(rows["waic2"], 2 * ll.mean(axis=1) - lpd)
    assert np.allclose(rows["iscv"], -np.log(np.exp(-ll).mean(axis=1)))


def test_spce_entries_match_the_kernel():
    pred, settings = _classification()
    out = compute_metrics(pred, settings)[0]["spce"]
    assert 0 <= out["ci_low"] <= out["spce"] <= out["ci_high"]
    # sqrt(theta -/+ z se) around theta = spce^2: symmetric in squared units when ci_low > 0
    if out["ci_low"] > 0:
        assert out["spce"] ** 2 - out["ci_low"] ** 2 == pytest.approx(out["ci_high"] ** 2 - out["spce"] ** 2)


def test_histogram_entries_match_the_kernels():
    pred, settings = _classification()
    sets = compute_metrics(pred, settings)[0]["prediction_sets"]
    for body in sets.values():
        hist = body["size_histogram"]  # count_k = #{i : |S_i| = k}, k = 1..K
        assert len(hist) == pred.proba.shape[1] and sum(hist) == pred.n
        assert body["mean_size"] == pytest.approx(np.dot(np.arange(1, len(hist) + 1), hist) / pred.n)
    q = load_predictions(SAMPLE / "quantiles.parquet", settings).prediction
    h = compute_metrics(q, settings)[0]["avg_calibration"]["pit_histogram"]
    bins = (q.quantiles < q.y_true[:, None]).sum(axis=1)  # b_i = #{j : q_j < y_i}
    assert list(h["counts"]) == np.bincount(bins, minlength=q.levels.size + 1).tolist()
    assert np.allclose(h["expected_counts"], q.n * np.diff(h["edges"]))
    g = load_predictions(SAMPLE / "gaussian.parquet", settings).prediction
    adv = get_family("adv_group_calibration").compute["gaussian"](g, settings)
    assert np.allclose(adv["group_sizes"], np.linspace(0.01, 1.0, 10))  # s in {0.01, 0.12, ..., 1.0}


def test_conventions_say_the_same_in_code_readme_and_explain():
    """Issue 25: where a confidence of exactly 1.0 goes, the other libraries' ECE bins and scikit-learn's
    binary Brier are stated alike by the Conventions list (docs/conventions.md) and `uqeval explain`, and the code
    does it."""
    import uqeval
    from uqeval.metrics.classification import calibration_errors, reliability_bins

    from .conftest import ROOT

    page = (ROOT / "docs" / "conventions.md").read_text(encoding="utf-8")
    conventions = page[page.index("\n## Conventions\n") :]
    conventions = conventions[: conventions.index("\n## ", 1)]
    ece = GLOSSARY["calibration.ece"]["text"]
    for text in (conventions, ece):
        for name in ("netcal", "scikit-learn", "torchmetrics", "Uncertainty Metrics"):
            assert name in text, name
        assert "of its own" in text and "[b/B, (b+1)/B)" in text
    # the code: 1.0 in an extra bin of its own (0.95 right, 1.0 wrong: 0.5·0.05 + 0.5·1.0)
    p = np.array([[0.05, 0.95], [0.0, 1.0]])
    y = np.array([1, 0])
    assert calibration_errors(p, y)["ece"] == pytest.approx(0.525)
    assert reliability_bins(p, y)["counts"][-1] == 1
    # Brier: scikit-learn's binary score is half of uqeval's, in both texts and in the code
    assert (
        "**half** of uqeval's" in conventions and "twice scikit-learn's" in GLOSSARY["accuracy.brier"]["text"]
    )
    rng = np.random.default_rng(0)
    p1 = rng.uniform(size=50)
    labels = (rng.uniform(size=50) < p1).astype(int)
    proba = np.column_stack([1 - p1, p1])
    assert uqeval.brier_score(labels, proba) == pytest.approx(2 * np.mean((p1 - labels) ** 2), rel=1e-14)
    assert uqeval.brier_score(labels, proba, convention="binary") == pytest.approx(
        np.mean((p1 - labels) ** 2), rel=1e-14
    )
