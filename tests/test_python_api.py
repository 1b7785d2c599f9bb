"""The Python API (uqeval.evaluate, Scores, array functions): doctests, reference ports, equivalences."""

from __future__ import annotations

import doctest
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.cli import app

from .conftest import ROOT, SAMPLE
from .metrics.test_accuracy import TOOLBOX_ACCURACY
from .metrics.test_calibration import TOOLBOX_AVG_CALIBRATION
from .metrics.test_scoring_gaussian import TOOLBOX_SCORING_RULE
from .metrics.test_sharpness import TOOLBOX_SHARPNESS
from .reference.regen_toolbox import toolbox_datasets


@pytest.mark.parametrize("module", ["uqeval", "uqeval.api.score", "uqeval.api.commands", "uqeval.functions"])
def test_docstring_examples_run(module):
    import importlib

    mod = importlib.import_module(module)
    # the package's own docstring only: its lazy attributes import submodules while doctest walks it
    finder = doctest.DocTestFinder(recurse=module != "uqeval")
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(mod, module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 and result.failed == 0


def test_everything_public_is_listed_and_importable():
    names = dir(uqeval)
    for name in uqeval.__all__:
        assert name in names
        assert getattr(uqeval, name) is not None
    assert {"evaluate", "Scores", "crps_normal", "Gaussian", "list_metrics", "explain"} <= set(names)


# --------------------------------------------------------------------------- reference ports


@pytest.mark.parametrize("name", sorted(TOOLBOX_SCORING_RULE))
def test_uncertainty_toolbox_get_all_metrics_example(name):
    # uct.metrics.get_all_metrics(pred_mean, pred_std, y) of uncertainty-toolbox 0.1.1, frozen in
    # tests/metrics (regenerate with tests/reference/regen_toolbox.py), as one uqeval.evaluate call
    y, mean, std = toolbox_datasets()[name]
    scores = uqeval.evaluate(y, mean=mean, std=std)
    expected = {
        **{f"accuracy.{k}": v for k, v in TOOLBOX_ACCURACY[name].items()},
        **{f"avg_calibration.{k}": v for k, v in TOOLBOX_AVG_CALIBRATION[name].items()},
        **{f"sharpness.{k}": v for k, v in TOOLBOX_SHARPNESS[name].items()},
        **{f"scoring_rule.{k}": v for k, v in TOOLBOX_SCORING_RULE[name].items()},
    }
    for key, value in expected.items():
        assert scores[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key


# scoringrules 0.10.0 quick-start calls (estimator='nrg' is named there: its default is 'pwm', the same value), frozen by tests/reference/regen_scoringrules_api.py
SCORINGRULES = {
    "crps_normal(0.1, 0.0, 1.0)": 0.2376810788616731,
    "logs_normal(0.1, 0.0, 1.0)": 0.9239385332046727,
    "crps_ensemble(0.3, [0.1, 0.5, -0.2, 1.1])": 0.15625,
    "crps_ensemble(0.3, [0.1, 0.5, -0.2, 1.1], estimator='fair')": 0.06666666666666671,
}


@pytest.mark.parametrize("call", sorted(SCORINGRULES))
def test_scoringrules_quickstart_examples(call):
    got = eval(f"uqeval.{call}")  # the same call, spelled the scoringrules way
    assert float(got) == pytest.approx(SCORINGRULES[call], rel=1e-12)


def test_array_functions_broadcast_scalars_and_shapes():
    y = np.array([[0.0, 1.0], [2.0, -1.0]])
    out = uqeval.crps_normal(y, 0.0, np.array([1.0, 2.0]), reduce=None)
    assert out.shape == (2, 2)
    assert out[1, 0] == pytest.approx(uqeval.crps_normal(2.0, 0.0, 1.0))
    assert isinstance(uqeval.crps_normal(0.3, 0.0, 1.0), float)
    ens = np.random.default_rng(0).normal(size=(5, 3, 10))
    a = uqeval.crps_ensemble(np.zeros((5, 3)), ens, reduce=None)
    b = uqeval.crps_ensemble(np.zeros((5, 3)), np.moveaxis(ens, -1, 0), member_axis=0, reduce=None)
    np.testing.assert_allclose(a, b, rtol=1e-15)


def test_brier_conventions_and_log_loss_match_scikit_learn_definitions():
    y = np.array([1, 0, 1, 1])
    p = np.array([0.9, 0.2, 0.4, 0.7])
    # scikit-learn brier_score_loss and log_loss, written out
    assert uqeval.brier_score(y, p, convention="binary") == pytest.approx(np.mean((p - y) ** 2))
    assert uqeval.brier_score(y, p) == pytest.approx(2 * np.mean((p - y) ** 2))
    assert uqeval.log_loss(y, p) == pytest.approx(-np.mean(np.log(np.where(y == 1, p, 1 - p))))


# --------------------------------------------------------------------------- evaluate


def test_arrays_dataframe_and_file_give_the_same_scores(monkeypatch):
    monkeypatch.chdir(ROOT)
    df = pd.read_parquet(SAMPLE / "gaussian.parquet")
    a = uqeval.evaluate(df["y"].to_numpy(), mean=df["mu"].to_numpy(), std=df["sigma"].to_numpy())
    b = uqeval.evaluate(df, y="y", mean="mu", std="sigma")
    c = uqeval.evaluate_file("sample_data/gaussian.parquet")
    d = uqeval.evaluate(df)  # columns detected as for a file
    assert dict(a) == dict(b) == dict(c) == dict(d)
    assert a.orientation == c.orientation


def test_to_json_is_the_cli_document(monkeypatch):
    monkeypatch.chdir(ROOT)
    cli = CliRunner().invoke(app, ["score", "sample_data/quantiles.parquet", "--format", "json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(uqeval.evaluate_file("sample_data/quantiles.parquet").to_json()) == json.loads(
        cli.stdout
    )


def test_scores_mapping_short_names_frame_and_repr():
    rng = np.random.default_rng(1)
    y = rng.normal(size=200)
    s = uqeval.evaluate(
        y, samples=y[:, None] + rng.normal(size=(200, 20)), settings=uqeval.Settings(levels=(0.9, 0.95))
    )
    assert s["crps"] == s["scoring_rule.crps"]
    assert s["coverage.0.9.coverage"] <= s["coverage.0.95.coverage"]
    with pytest.raises(KeyError, match="ambiguous"):
        s["coverage"]
    frame = s.to_frame()
    assert list(frame.columns) == ["metric", "group", "value", "orientation"] and len(frame) == len(s)
    assert s.orientation["scoring_rule.crps"] == "lower" and "rejection.values" not in s.orientation
    assert "scoring_rule.crps" in repr(s) and "<table>" in s._repr_html_()
    assert s.nested()["scoring_rule"]["crps"] == s["crps"]


def test_representation_is_inferred_from_the_arguments():
    y = np.array([0.0, 1.0, 2.0, 1.5])
    assert uqeval.evaluate(y, mean=y).representation == "point"
    assert uqeval.evaluate(y, mean=y, var=np.ones(4)).representation == "gaussian"
    assert uqeval.evaluate(y, lower=y - 1, upper=y + 1, level=0.9).representation == "intervals"
    assert (
        uqeval.evaluate(
            y, quantiles=np.column_stack([y - 1, y, y + 1]), levels=[0.1, 0.5, 0.9]
        ).representation
        == "quantiles"
    )
    binary = uqeval.evaluate(np.array([0, 1, 1, 0]), proba=np.array([0.2, 0.9, 0.6, 0.4]))
    assert binary.representation == "categorical" and binary["accuracy.accuracy"] == 1.0
    assert (
        uqeval.evaluate(np.array([0, 1]), logits=np.array([[2.0, 0.0], [0.0, 1.0]])).representation
        == "categorical"
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(mean=np.zeros(3), std=np.ones(2)), "rows"),
        (
            dict(mean=np.array([0.0, np.nan, 1.0, np.nan]), std=np.ones(4)),
            r"2 row\(s\).*first at row 1.*nan_policy='omit'",
        ),
        (dict(mean=np.zeros(4), std=np.array([1.0, 0.0, -1.0, 1.0])), r"std must be > 0: 2 .*first at row 1"),
        (
            dict(proba=np.array([[0.5, 0.6], [0.5, 0.5], [0.1, 0.1], [0.2, 0.8]])),
            r"simplex.*first at row 0.*renormalize=True",
        ),
    ],
)
def test_bad_arguments_raise_value_errors_naming_argument_row_and_count(kwargs, message):
    y = np.array([0, 1, 0, 1], dtype=float)[: len(next(iter(kwargs.values())))]
    with pytest.raises(ValueError, match=message) as err:
        uqeval.evaluate(y, **kwargs)
    assert "--" not in str(err.value)  # a Python caller gets no CLI flags


def test_list_metrics_and_explain():
    names = {m["path"] for m in uqeval.list_metrics("gaussian")}
    assert {"scoring_rule.crps", "avg_calibration.ma_cal", "coverage.coverage"} <= names
    assert "accuracy.brier" not in names
    assert "CRPS" in uqeval.explain("crps") or "ranked probability" in uqeval.explain("crps")
    with pytest.raises(ValueError, match="unknown representation"):
        uqeval.list_metrics("nope")


def test_containers_take_data_first_and_leave_the_callers_data_alone():
    rng = np.random.default_rng(2)
    y = rng.normal(size=50)
    g = uqeval.Gaussian(np.zeros(50), np.ones(50), y_true=y)
    assert g.kind == "gaussian" and g.mean.shape == (50,)
    cols = {"quantiles": ["q_0.9", "q_0.1"]}
    q = uqeval.Quantiles(np.column_stack([y + 1, y - 1]), [0.9, 0.1], y_true=y, columns=cols)
    assert cols == {"quantiles": ["q_0.9", "q_0.1"]}  # sorted by level inside, the caller's dict untouched
    assert q.columns["quantiles"] == ["q_0.1", "q_0.9"]
    s = uqeval.Samples(rng.normal(size=(8, 50)), y_true=y, member_axis=0)
    assert s.samples.shape == (50, 8)
    c = uqeval.Categorical(np.full(50, 0.3), y_true=(y > 0).astype(int))
    assert c.proba.shape == (50, 2) and np.allclose(c.proba[:, 1], 0.3)
    assert uqeval.evaluate(g)["crps"] == uqeval.evaluate(y, mean=np.zeros(50), std=np.ones(50))["crps"]
    with pytest.raises(ValueError, match="num_bins"):
        uqeval.Settings(num_bins=1)


def test_the_array_functions_are_top_level_not_under_metrics():
    # uqeval.metrics holds the kernels only (no import runs from it up to uqeval.functions)
    import uqeval.metrics

    assert uqeval.crps_normal.__module__ == "uqeval.functions"
    assert not hasattr(uqeval.metrics, "crps_normal")
