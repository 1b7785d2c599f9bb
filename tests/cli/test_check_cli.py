"""``uqeval check``: the CI gate on predictions or summaries, exit codes, reports, settings mismatch."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import ROOT, SAMPLE, write_table

runner = CliRunner()

RULES = """\
# a small gate
require = ["accuracy.mae", "avg_calibration.ma_cal"]

[rules]
"avg_calibration.ma_cal" = { max = 0.2, max_regression = 0.01 }
"scoring_rule.crps"      = { max_regression_rel = 0.05 }
"accuracy.r2"            = { min = 0.1 }
"""


@pytest.fixture
def rules(tmp_path):
    p = tmp_path / "rules.toml"
    p.write_text(RULES)
    return p


@pytest.fixture
def baseline(tmp_path, gaussian_file):
    out = tmp_path / "baseline.json"
    r = runner.invoke(app, ["score", str(gaussian_file), "--output", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture
def degraded(tmp_path, gaussian_cols):
    cols = dict(gaussian_cols)
    cols["sigma"] = cols["sigma"] * 0.4  # over-confident: worse calibration and CRPS
    return write_table(tmp_path / "degraded.parquet", cols)


def check(*args: str):
    return runner.invoke(app, ["check", *args])


def test_identical_input_passes(gaussian_file, baseline, rules, tmp_path):
    junit = tmp_path / "report.xml"
    r = check(str(gaussian_file), "--rules", str(rules), "--baseline", str(baseline), "--junit", str(junit))
    assert r.exit_code == 0, r.output
    assert "uqeval check PASSED: 6 passed, 0 failed of 6 checks" in r.stdout
    assert "FAIL" not in r.stdout and "scoring_rule.crps" in r.stdout
    assert "scored with the baseline's settings" in r.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "6" and suite.get("failures") == "0"


def test_an_input_name_with_terminal_controls_is_escaped_in_the_notes(gaussian_file, baseline, rules):
    hostile = gaussian_file.with_name("g\x1b]0;owned\x07\x1b[2J.parquet")
    hostile.write_bytes(gaussian_file.read_bytes())
    r = check(str(hostile), "--rules", str(rules), "--baseline", str(baseline))
    assert r.exit_code == 0, r.output
    flat = "".join(r.stdout.split())  # the note may be wrapped to the console's width
    assert "note:" in r.stdout and "\\x1b]0;owned\\x07\\x1b[2J.parquetscoredwiththebaseline's" in flat
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout


def test_summary_json_input_passes(baseline, rules):
    r = check(str(baseline), "--rules", str(rules), "--baseline", str(baseline), "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["schema"] == "uqeval.check/1" and out["passed"] is True
    assert out["counts"] == {"pass": 6, "fail": 0, "skip": 0}
    assert out["input"] == str(baseline) and out["baseline"] == str(baseline)


def test_degraded_file_fails_with_exit_1_naming_the_rule(degraded, baseline, rules, tmp_path):
    junit, report = tmp_path / "report.xml", tmp_path / "check.json"
    r = check(
        str(degraded),
        "--rules",
        str(rules),
        "--baseline",
        str(baseline),
        "--junit",
        str(junit),
        "--output",
        str(report),
        "--format",
        "markdown",
    )
    assert r.exit_code == 1, r.output
    assert "### ❌ uqeval check FAILED" in r.stdout
    assert "| ❌ FAIL | `avg_calibration.ma_cal` | max_regression |" in r.stdout
    assert "| ❌ FAIL | `scoring_rule.crps` | max_regression_rel |" in r.stdout
    assert "3 of 6 checks failed" in r.stderr and "avg_calibration.ma_cal max_regression" in r.stderr
    assert "Traceback" not in r.output
    # the reports are written before the exit code
    root = ET.parse(junit).getroot()
    suite = root.find("testsuite")
    failures = [c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None]
    assert "avg_calibration.ma_cal max_regression" in failures and suite.get("failures") == str(len(failures))
    saved = json.loads(report.read_text())
    assert saved["passed"] is False
    assert {row["path"] for row in saved["rows"] if row["status"] == "FAIL"} >= {"avg_calibration.ma_cal"}


def test_failure_still_prints_the_table_and_json_is_clean(degraded, baseline, rules):
    r = check(str(degraded), "--rules", str(rules), "--baseline", str(baseline))
    assert r.exit_code == 1
    assert "FAILED" in r.stdout and "FAIL" in r.stdout and "max_regression" in r.stdout
    r = check(str(degraded), "--rules", str(rules), "--baseline", str(baseline), "--format", "json")
    assert r.exit_code == 1
    assert json.loads(r.stdout)["passed"] is False  # stdout is only JSON; the error line went to stderr


def test_without_baseline_regression_checks_are_skipped(gaussian_file, rules):
    r = check(str(gaussian_file), "--rules", str(rules), "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["counts"]["skip"] == 2
    assert any("no baseline given" in n for n in out["notes"])


@pytest.mark.parametrize(
    "text,needle",
    [
        ('[rules]\n"accuracy.mae" = { max = 1.0 }\n"accuracy.rmse" = { maxx = 1 }\n', "line 3"),
        ('[rules]\n"accuracy.mae" = { max = = 1.0 }\n"accuracy.rmse" = { max = 2.0 }\n', "line 2"),
        ('[rules]\n"accuracy.mae" = { max = "big" }\n', "line 2"),
        ('[rules]\n"accuracy.mea" = { max = 1.0 }\n', "line 2"),
    ],
)
def test_malformed_rules_exit_3_with_the_line(gaussian_file, tmp_path, text, needle):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = check(str(gaussian_file), "--rules", str(p))
    assert r.exit_code == 3, r.output
    assert needle in r.stderr and "bad.toml" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.output


def test_unknown_rule_path_lists_close_matches(gaussian_file, tmp_path):
    p = tmp_path / "r.toml"
    p.write_text('[rules]\n"accuracy.mea" = { max = 1.0 }\n')
    r = check(str(gaussian_file), "--rules", str(p))
    assert r.exit_code == 3 and '"accuracy.mae"' in r.stderr


def test_junit_not_written_when_the_rules_are_bad(gaussian_file, tmp_path):
    p = tmp_path / "r.toml"
    p.write_text("[rules\n")
    junit = tmp_path / "report.xml"
    r = check(str(gaussian_file), "--rules", str(p), "--junit", str(junit))
    assert r.exit_code == 3 and not junit.exists() and not list(tmp_path.glob(".report.xml.*"))


def test_settings_mismatch_is_an_error_unless_allowed(gaussian_file, baseline, rules, tmp_path):
    r = check(str(gaussian_file), "--rules", str(rules), "--baseline", str(baseline), "--num-bins", "30")
    assert r.exit_code == 3, r.output
    assert (
        "settings.num_bins: candidate 30, baseline 100" in r.stderr
        and "--allow-settings-mismatch" in r.stderr
    )
    r = check(
        str(gaussian_file),
        "--rules",
        str(rules),
        "--baseline",
        str(baseline),
        "--num-bins",
        "30",
        "--allow-settings-mismatch",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    assert (
        "settings mismatch (allowed): settings.num_bins: candidate 30, baseline 100"
        in json.loads(r.stdout)["notes"]
    )
    allow = tmp_path / "allow.toml"
    allow.write_text(RULES.replace("[rules]", "[settings]\nallow_settings_mismatch = true\n\n[rules]"))
    r = check(str(gaussian_file), "--rules", str(allow), "--baseline", str(baseline), "--num-bins", "30")
    assert r.exit_code == 0, r.output


def test_only_result_settings_count(baseline, rules, tmp_path):
    doc = json.loads(baseline.read_text())
    other = dict(
        doc,
        settings={**doc["settings"], "nan_policy": "omit", "columns": {"y_true": "y"}},
        input={**doc["input"], "path": "elsewhere.parquet"},
    )
    cand = tmp_path / "cand.json"
    cand.write_text(json.dumps(other))
    assert check(str(cand), "--rules", str(rules), "--baseline", str(baseline)).exit_code == 0
    other["input"]["n_rows"] = 10
    cand.write_text(json.dumps(other))
    r = check(str(cand), "--rules", str(rules), "--baseline", str(baseline))
    assert r.exit_code == 3 and "input.n_rows: candidate 10, baseline 300" in r.stderr


def test_predictions_are_scored_with_the_baseline_settings(gaussian_file, rules, tmp_path):
    base = tmp_path / "b50.json"
    r = runner.invoke(
        app, ["score", str(gaussian_file), "--num-bins", "50", "--output", str(base), "-f", "json"]
    )
    assert r.exit_code == 0, r.output
    r = check(str(gaussian_file), "--rules", str(rules), "--baseline", str(base), "--format", "json")
    assert r.exit_code == 0, r.output
    rows = {(x["path"], x["check"]): x for x in json.loads(r.stdout)["rows"]}
    row = rows[("avg_calibration.ma_cal", "max_regression")]
    assert row["value"] == row["baseline"]


def test_sep_and_decimal_read_a_predictions_input_as_score_reads_it(tmp_path):
    """--sep and --decimal apply to check's predictions INPUT (check took them but read the file with ',')."""
    import numpy as np

    rng = np.random.default_rng(3)
    y = rng.normal(size=100)
    rows = [f"{a:.6f};{a + b:.6f};0,5".replace(".", ",") for a, b in zip(y, 0.5 * rng.normal(size=100))]
    f = tmp_path / "semicolons.csv"
    f.write_text("y;mean;std\n" + "\n".join(rows) + "\n")
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"accuracy.rmse" = { max = 10 }\n')
    args = ["--sep", ";", "--decimal", ",", "-f", "json"]
    scored = runner.invoke(app, ["score", str(f), *args])
    assert scored.exit_code == 0, scored.output
    r = check(str(f), "--rules", str(rules), *args)
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.stdout)["rows"]
    assert row["value"] == json.loads(scored.stdout)["metrics"]["accuracy"]["rmse"]


def test_scoring_flags_with_a_summary_input_are_a_usage_error(baseline, rules):
    r = check(str(baseline), "--rules", str(rules), "--num-bins", "10", "--y", "target")
    assert r.exit_code == 2, r.output
    assert "--num-bins, --y" in r.stderr


@pytest.mark.parametrize("which", ["input", "rules", "baseline"])
def test_missing_files_exit_3(gaussian_file, baseline, rules, tmp_path, which):
    args = {"input": str(gaussian_file), "rules": str(rules), "baseline": str(baseline)}
    args[which] = str(tmp_path / ("missing.json" if which != "rules" else "missing.toml"))
    r = check(args["input"], "--rules", args["rules"], "--baseline", args["baseline"])
    assert r.exit_code == 3, r.output
    assert "missing" in r.stderr


def test_not_a_summary_exit_3(gaussian_file, rules, tmp_path):
    p = tmp_path / "other.json"
    p.write_text('{"a": 1}')
    r = check(str(gaussian_file), "--rules", str(rules), "--baseline", str(p))
    assert r.exit_code == 3 and "not a uqeval summary" in r.stderr


def test_rules_option_is_required(gaussian_file):
    assert check(str(gaussian_file)).exit_code == 2


def test_example_ci_rules_apply_to_sample_data(tmp_path):
    src = SAMPLE / "gaussian.parquet"
    base = tmp_path / "baseline.json"
    assert runner.invoke(app, ["score", str(src), "--output", str(base), "-f", "json"]).exit_code == 0
    junit = tmp_path / "report.xml"
    r = check(
        str(src),
        "--rules",
        str(ROOT / "configs" / "ci.toml"),
        "--baseline",
        str(base),
        "--junit",
        str(junit),
        "--format",
        "markdown",
    )
    assert r.exit_code in (0, 1), r.output  # never 3: every path of the example exists
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    assert len(cases) == r.stdout.count("\n| ") - 1  # one test case per table row
    assert all(
        c.find("failure") is None
        for c in cases
        if "regression" in c.get("name") or "max_increase" in c.get("name")
    )
