"""The calibration diagnostics (corp, spread_calibration, smooth_calibration) through the CLI: opt-in in
``score``, turned on by a ``check`` rule that names them, ``explain``, ``plot --kind`` and ``--plot-dir``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.config import make_settings
from uqeval.io.load import load_predictions
from uqeval.metrics.corp import corp_classification, corp_mean, corp_quantile
from uqeval.metrics.smooth_ece import smooth_ece
from uqeval.metrics.spread import spread_calibration

from ..conftest import SAMPLE, write_table

runner = CliRunner()
GROUPS = ("corp", "spread_calibration", "smooth_calibration")


def _score(path, *flags) -> dict:
    r = runner.invoke(app, ["score", str(path), "--format", "json", *flags])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize(
    "name,groups",
    [
        ("classification.parquet", ("corp", "smooth_calibration")),
        ("gaussian.parquet", ("corp", "spread_calibration")),
        ("samples.parquet", ("corp", "spread_calibration")),
        ("quantiles.parquet", ("corp",)),
        ("point.csv", ("corp",)),
    ],
)
def test_score_computes_the_groups_only_with_diagnostics(name, groups):
    plain = _score(SAMPLE / name)
    assert not set(GROUPS) & set(plain["metrics"])
    assert plain["settings"]["diagnostics"] is False
    out = _score(SAMPLE / name, "--diagnostics")
    assert {g for g in GROUPS if g in out["metrics"]} == set(groups)
    # the default groups do not change (the other --diagnostics groups, calibration tests and conditional
    # coverage, are tested in tests/metrics/test_calibration_tests.py)
    from uqeval.catalogue import FAMILIES

    opt_in = {f.name for f in FAMILIES if f.option == "diagnostics"}
    assert {k: v for k, v in out["metrics"].items() if k not in opt_in} == plain["metrics"]
    orient = out["orientation"]
    if "corp" in groups:
        assert orient["corp.mcb"] == "lower" and orient["corp.dsc"] == "higher" and "corp.unc" not in orient
    if "spread_calibration" in groups:
        assert orient["spread_calibration.ence"] == "lower" and "spread_calibration.cv" not in orient


def test_score_values_are_the_kernels():
    settings = make_settings()
    pred = load_predictions(SAMPLE / "classification.parquet", settings).prediction
    out = _score(SAMPLE / "classification.parquet", "--diagnostics")["metrics"]
    want = corp_classification(pred.proba, pred.labels)
    for score, parts in want.items():
        for k, v in parts.items():
            assert out["corp"][score][k] == pytest.approx(v, rel=1e-12)
    conf, correct = pred.top_label()
    assert out["smooth_calibration"]["smece"] == pytest.approx(smooth_ece(conf, correct)["smece"], rel=1e-12)

    g = load_predictions(SAMPLE / "gaussian.parquet", settings).prediction
    out = _score(SAMPLE / "gaussian.parquet", "--diagnostics", "--bins", "10")["metrics"]
    assert out["corp"]["mse"]["mcb"] == pytest.approx(corp_mean(g.y_true, g.mean)["mcb"], rel=1e-12)
    sc = spread_calibration(g.y_true, g.mean, g.std, num_bins=10)
    for k in ("ence", "cv", "uce"):
        assert out["spread_calibration"][k] == pytest.approx(sc[k], rel=1e-12)

    q = load_predictions(SAMPLE / "quantiles.parquet", settings).prediction
    out = _score(SAMPLE / "quantiles.parquet", "--diagnostics")["metrics"]["corp"]
    assert sorted(out) == sorted(f"pinball_{t:g}" for t in q.levels)
    j = int(np.flatnonzero(np.isclose(q.levels, 0.25))[0])
    assert out["pinball_0.25"]["dsc"] == pytest.approx(
        corp_quantile(q.y_true, q.quantiles[:, j], 0.25)["dsc"]
    )


def test_check_turns_diagnostics_on_for_a_rule_on_an_opt_in_group(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(
        'require = ["corp.brier_top_label.dsc"]\n[rules]\n'
        '"corp.brier_top_label.mcb" = { max = 0.5 }\n"smooth_calibration.smece" = { max = 0.01 }\n'
    )
    r = runner.invoke(
        app, ["check", str(SAMPLE / "classification.parquet"), "--rules", str(rules), "--format", "json"]
    )
    assert r.exit_code == 1, r.output  # smece 0.11 > 0.01: a real check, not a skip
    report = json.loads(r.stdout)
    status = {(row["path"], row["check"]): row["status"] for row in report["rows"]}
    assert status == {
        ("corp.brier_top_label.dsc", "require"): "PASS",
        ("corp.brier_top_label.mcb", "max"): "PASS",
        ("smooth_calibration.smece", "max"): "FAIL",
    }
    # a summary scored without --diagnostics: the error names the flag
    summary = tmp_path / "summary.json"
    assert (
        runner.invoke(
            app, ["score", str(SAMPLE / "classification.parquet"), "--output", str(summary)]
        ).exit_code
        == 0
    )
    r = runner.invoke(app, ["check", str(summary), "--rules", str(rules)])
    assert r.exit_code == 3
    assert "--diagnostics" in r.output and "corp.brier_top_label" in r.output


@pytest.mark.parametrize(
    "path",
    [
        "corp.mcb",
        "corp.brier.mcb",
        "corp.pinball_0.9.dsc",
        "spread_calibration.ence",
        "spread_calibration.cv",
        "spread_calibration.uce",
        "smooth_calibration.smece",
    ],
)
def test_explain(path):
    r = runner.invoke(app, ["explain", path])
    assert r.exit_code == 0, r.output
    assert "Formula: " in r.stdout and "Reference: " in r.stdout


@pytest.mark.parametrize(
    "name,kind",
    [
        ("classification.parquet", "corp"),
        ("ensemble_classification.parquet", "smooth_reliability"),
        ("samples.parquet", "spread_reliability"),
    ],
)
def test_plot_kind_writes_a_png_without_the_flag(tmp_path, name, kind):
    out = tmp_path / f"{kind}.png"
    r = runner.invoke(app, ["plot", str(SAMPLE / name), "--kind", kind, "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_kind_that_does_not_apply_is_an_error(tmp_path):
    r = runner.invoke(
        app,
        [
            "plot",
            str(SAMPLE / "quantiles.parquet"),
            "--kind",
            "spread_reliability",
            "--output",
            str(tmp_path / "x.png"),
        ],
    )
    assert r.exit_code == 3
    assert "does not apply to quantiles" in r.output


def test_plot_dir_holds_the_diagnostic_plots_with_the_flag(tmp_path):
    rng = np.random.default_rng(0)
    p = rng.uniform(size=150)
    small = write_table(
        tmp_path / "binary.parquet",
        {"label": (rng.uniform(size=150) < p).astype(int), "p_0": 1 - p, "p_1": p},
    )
    for flags, want in (([], set()), (["--diagnostics"], {"corp.png", "smooth_reliability.png"})):
        d = tmp_path / ("on" if flags else "off")
        r = runner.invoke(app, ["score", str(small), "--plot-dir", str(d), *flags])
        assert r.exit_code == 0, r.output
        assert {p.name for p in d.iterdir()} & {"corp.png", "smooth_reliability.png"} == want


def test_a_typo_under_a_computed_opt_in_group_gets_close_matches(tmp_path):
    summary = tmp_path / "summary.json"
    r = runner.invoke(
        app, ["score", str(SAMPLE / "classification.parquet"), "--diagnostics", "--output", str(summary)]
    )
    assert r.exit_code == 0, r.output
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"smooth_calibration.smec" = { max = 0.5 }\n')
    r = runner.invoke(app, ["check", str(summary), "--rules", str(rules)])
    assert r.exit_code == 3
    assert "smooth_calibration.smece" in r.output and "--diagnostics" not in r.output
