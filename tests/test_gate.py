"""Tests of the CI rule gate (uqeval.commands.check): parsing, evaluation, renderers."""

from __future__ import annotations

import copy
import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from uqeval.commands import check as gate
from uqeval.errors import InputError
from uqeval.report import check as render

ROOT = Path(__file__).resolve().parents[1]


def make_summary() -> dict:
    return {
        "schema": "uqeval.score/1",
        "uqeval_version": "0.1.0",
        "input": {
            "path": "preds.parquet",
            "format": "parquet",
            "n_rows": 1000,
            "n_dropped": 0,
            "representation": "gaussian",
            "columns": {"y_true": "y", "mean": "mu", "std": "sigma"},
        },
        "settings": {"num_bins": 100, "resolution": 99, "seed": 0, "levels": [0.9, 0.95]},
        "metrics": {
            "accuracy": {"mae": 0.50, "rmse": 0.70, "r2": 0.80},
            "avg_calibration": {"ma_cal": 0.030, "rms_cal": 0.035},
            "coverage": {
                "0.9": {"coverage": 0.89, "width": 1.6, "coverage_error": -0.01},
                "0.95": {"coverage": 0.94, "width": 2.0, "coverage_error": -0.01},
            },
            "adv_group_calibration": {"group_sizes": [0.1, 0.5, 1.0], "ma_mean": [0.2, 0.1, 0.03]},
            "scoring": {"nll": 1.2, "crps": None},
        },
        "orientation": {
            "accuracy.mae": "lower",
            "accuracy.rmse": "lower",
            "accuracy.r2": "higher",
            "avg_calibration.ma_cal": "lower",
            "avg_calibration.rms_cal": "lower",
            "coverage.coverage": "target",
            "coverage.width": "lower",
            "coverage.coverage_error": "target",
            "scoring.nll": "lower",
            "scoring.crps": "lower",
        },
    }


def with_metric(summary: dict, path: tuple[str, ...], value) -> dict:
    out = copy.deepcopy(summary)
    node = out["metrics"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


RULES = """\
require = ["accuracy.mae", "coverage.0.95.coverage"]

[rules]
"avg_calibration.ma_cal" = { max = 0.05 }
"coverage.0.95.coverage" = { min = 0.93, max = 0.97 }
"accuracy.mae" = { max_regression_rel = 0.05 }
"accuracy.r2" = { max_regression = 0.02 }
"""


# --------------------------------------------------------------------------- paths


def test_flatten_metrics_keeps_dotted_level_keys_and_skips_lists_and_null():
    flat = gate.flatten_metrics(make_summary())
    assert flat["coverage.0.95.coverage"] == 0.94
    assert flat["coverage.0.9.width"] == 1.6
    assert flat["accuracy.mae"] == 0.5
    assert not any(k.startswith("adv_group_calibration") for k in flat)
    assert "scoring.crps" not in flat  # null is not a numeric leaf
    assert len(flat) == 3 + 2 + 6 + 1


def test_resolve_longest_key_first_with_backtracking():
    s = make_summary()
    # "0.9" is a prefix of "0.95..." only textually; the walk must pick the right level
    assert gate.resolve_path(s, "coverage.0.95.coverage") == (0.94, ("coverage", "0.95", "coverage"))
    assert gate.resolve_path(s, "coverage.0.9.coverage") == (0.89, ("coverage", "0.9", "coverage"))
    # a key "a.b" and a nested "a" -> "b.c" both exist: longest key tried first, then backtrack
    s["metrics"]["g"] = {"a.b": {"x": 1.0}, "a": {"b.c": 2.0, "b": {"y": 3.0}}}
    assert gate.resolve_path(s, "g.a.b.x")[0] == 1.0
    assert gate.resolve_path(s, "g.a.b.c")[0] == 2.0
    assert gate.resolve_path(s, "g.a.b.y")[0] == 3.0
    # ambiguous: both "a.b" -> "z" and "a" -> "b.z" exist; the longest key wins
    s["metrics"]["g"]["a.b"]["z"] = 4.0
    s["metrics"]["g"]["a"]["b.z"] = 5.0
    assert gate.resolve_path(s, "g.a.b.z") == (4.0, ("g", "a.b", "z"))


def test_orientation_ignores_level_keys():
    s = make_summary()
    assert gate.orientation_of(s, "coverage.0.95.width") == "lower"
    assert gate.orientation_of(s, "coverage.0.9.coverage") == "target"
    assert gate.orientation_of(s, "accuracy.r2") == "higher"
    s["orientation"]["coverage.0.9.width"] = "higher"  # an exact entry wins
    assert gate.orientation_of(s, "coverage.0.9.width") == "higher"
    with pytest.raises(InputError, match='no orientation for "accuracy.new"'):
        gate.orientation_of(with_metric(s, ("accuracy", "new"), 1.0), "accuracy.new")


def test_target_of_coverage_is_its_level_and_zero_otherwise():
    s = make_summary()
    assert gate.target_of(s, "coverage.0.95.coverage") == 0.95
    assert gate.target_of(s, "coverage.0.9.coverage") == 0.9
    assert gate.target_of(s, "coverage.0.95.coverage_error") == 0.0
    assert gate.target_of(s, "coverage.0.95.coverage", override=0.9) == 0.9
    s["targets"] = {"coverage.coverage_error": 0.5}
    assert gate.target_of(s, "coverage.0.95.coverage_error") == 0.5


# --------------------------------------------------------------------------- summaries


def test_summary_from_json_accepts_a_summary():
    s = make_summary()
    assert gate.summary_from_json(json.dumps(s), "s.json") == s


@pytest.mark.parametrize(
    "text, match",
    [
        ("{not json", r"s\.json: invalid JSON at line 1, column 2"),
        ("[1, 2]", "not a uqeval summary: expected a JSON object"),
        ('{"metrics": {}}', "no 'schema' key"),
        ('{"schema": "uqeval.compare/1"}', "schema is 'uqeval.compare/1'"),
        ('{"schema": "uqeval.score/2", "metrics": {}, "orientation": {}}', "unsupported summary schema"),
        ('{"schema": "uqeval.score/1", "orientation": {}}', "'metrics' must be a JSON object, found missing"),
    ],
)
def test_summary_from_json_rejects_non_summaries(text, match):
    with pytest.raises(InputError, match=match):
        gate.summary_from_json(text, "s.json")


def test_settings_mismatch_describes_each_difference():
    a = make_summary()
    assert gate.settings_mismatch(a, copy.deepcopy(a)) == []
    b = copy.deepcopy(a)
    b["settings"].update(num_bins=50, seed=1, levels=[0.95])
    b["input"].update(representation="quantiles", n_rows=999)
    diffs = gate.settings_mismatch(a, b)
    assert len(diffs) == 5
    joined = "\n".join(diffs)
    for text in (
        "settings.num_bins: candidate 100, baseline 50",
        "settings.seed",
        "settings.levels",
        "input.representation: candidate 'gaussian', baseline 'quantiles'",
        "input.n_rows: candidate 1000, baseline 999",
    ):
        assert text in joined
    del b["settings"]["resolution"]
    assert any("settings.resolution: missing in the baseline" in d for d in gate.settings_mismatch(a, b))


# --------------------------------------------------------------------------- rules parsing


def test_load_rules_layout():
    rules = gate.load_rules(RULES, "ci.toml")
    assert rules.require == ("accuracy.mae", "coverage.0.95.coverage")
    assert [(c.path, c.option, c.threshold, c.line) for c in rules.checks] == [
        ("avg_calibration.ma_cal", "max", 0.05, 4),
        ("coverage.0.95.coverage", "min", 0.93, 5),
        ("coverage.0.95.coverage", "max", 0.97, 5),
        ("accuracy.mae", "max_regression_rel", 0.05, 6),
        ("accuracy.r2", "max_regression", 0.02, 7),
    ]
    assert rules.settings == {"require_baseline": False, "allow_settings_mismatch": False}
    assert rules.source == "ci.toml"


def test_bare_dotted_keys_and_sub_tables_give_the_same_paths():
    text = """\
[rules]
coverage.0.95.coverage = { min = 0.9 }

[rules."accuracy.mae"]
max = 1.0
max_regression = 0.1
"""
    rules = gate.load_rules(text)
    assert [(c.path, c.option, c.line) for c in rules.checks] == [
        ("coverage.0.95.coverage", "min", 2),
        ("accuracy.mae", "max", 5),
        ("accuracy.mae", "max_regression", 6),
    ]


def test_example_config_parses_and_passes_on_identical_summaries():
    text = (ROOT / "configs" / "ci.toml").read_text()
    rules = gate.load_rules(text, "configs/ci.toml")
    assert len(rules.checks) >= 5 and rules.require
    s = make_summary()
    result = gate.evaluate(rules, s, copy.deepcopy(s))
    assert result.passed, render.to_markdown(result)
    assert result.counts["SKIP"] == 0
    assert all(r.status == "PASS" for r in result.rows)


def test_malformed_toml_names_the_line():
    text = '[rules]\n"accuracy.mae" = { max = 0.5 }\n"avg_calibration.ma_cal" = { max = }\n'
    with pytest.raises(InputError, match=r"ci\.toml: invalid TOML at line 3, column \d+"):
        gate.load_rules(text, "ci.toml")


def test_unknown_option_names_rule_line_and_suggestion():
    text = '[rules]\n"accuracy.mae" = { max = 0.5 }\n\n"avg_calibration.ma_cal" = { mx = 0.05 }\n'
    with pytest.raises(InputError) as err:
        gate.load_rules(text, "ci.toml")
    msg = str(err.value)
    assert "ci.toml, line 4" in msg
    assert '"avg_calibration.ma_cal"' in msg
    assert "unknown option 'mx'" in msg and "did you mean 'max'" in msg


def test_unknown_option_in_sub_table_names_its_own_line():
    text = '[rules."accuracy.mae"]\nmax = 1\nmax_incrase = 2\n'
    with pytest.raises(InputError, match=r"line 3: .*max_incrase.*did you mean 'max_increase'"):
        gate.load_rules(text)


@pytest.mark.parametrize(
    "text, line",
    [
        # the same last key (mae) in two rule tables: the second one is at fault
        ("[rules.accuracy]\nmae = { max = 1.0 }\n\n[rules.scoring_rule]\nmae = { max = 2.0, mx = 1 }\n", 5),
        # an option name (max) that is also a rule key of another table
        ("[rules.a]\nmax = { max = 1 }\n[rules.b]\nmax = { mux = 1 }\n", 4),
        # a rule path written once bare-dotted, the other rule's option below its own sub-table header
        ('[rules]\naccuracy.rmse = { max = 1.0 }\n\n[rules."accuracy.mae"]\nmax = 1\nmx = 2\n', 6),
        # a setting named like a rule option, below the rules
        ('[rules]\n"accuracy.mae" = { max = 1.0 }\n\n[settings]\nmax = true\n', 5),
    ],
)
def test_a_key_defined_in_two_tables_is_reported_at_the_one_at_fault(text, line):
    """The rules file's lines come from :func:`uqeval.config.key_lines` (a key's full path, not its last part)."""
    with pytest.raises(InputError, match=rf"^ci\.toml, line {line}: "):
        gate.load_rules(text, "ci.toml")


def test_check_lines_point_at_each_option_of_a_sub_table():
    text = '[rules."accuracy.mae"]\nmax = 1.0\n\n[rules."scoring_rule.crps"]\nmax = 2.0\nmin = 0.5\n'
    rules = gate.load_rules(text, "ci.toml")
    assert [(c.path, c.option, c.line) for c in rules.checks] == [
        ("accuracy.mae", "max", 2),
        ("scoring_rule.crps", "max", 5),
        ("scoring_rule.crps", "min", 6),
    ]


@pytest.mark.parametrize(
    "text, match",
    [
        ('[rules]\n"accuracy.mae" = { max = "0.5" }\n', r"line 2: .*'max' must be a finite number"),
        ('[rules]\n"accuracy.mae" = { max = nan }\n', r"'max' must be a finite number"),
        ('[rules]\n"accuracy.mae" = { max = true }\n', r"'max' must be a finite number"),
        ('[rules]\n"accuracy.mae" = { max_increase = -1 }\n', r"line 2: .*must be >= 0"),
        ('[rules]\n"accuracy.mae" = { min = 2, max = 1 }\n', r"min \(2\) is greater than max \(1\)"),
        ('[rules]\n"accuracy.mae" = { target = 1 }\n', r"'target' is only used by max_regression"),
        ('[rules]\n"accuracy.mae" = {}\n', r"has no options"),
        ('[rules]\n"accuracy.mae" = 0.5\n', r'line 2: rule "accuracy.mae" must be a table'),
        ('[rules]\n"a" = { max = 1 }\nrequire = ["a"]\n', r"must come before the first \[table\]"),
        ('[rule]\n"accuracy.mae" = { max = 1 }\n', r"line 1: unknown top-level key 'rule' .*'rules'"),
        ('"accuracy.mae" = { max = 1 }\n', r"unknown top-level key 'accuracy.mae'"),
        ('require = "accuracy.mae"\n', r"line 1: 'require' must be a list"),
        ('require = ["a"]\n[settings]\nrequire_baseline = 1\n', r"line 3: .*must be true or false"),
        ('require = ["a"]\n[settings]\nallow_mismatch = true\n', r"unknown setting 'allow_mismatch'"),
        ("# nothing here\n", r"defines no checks"),
    ],
)
def test_bad_rules_raise_input_error(text, match):
    with pytest.raises(InputError, match=match):
        gate.load_rules(text)


def test_unknown_path_lists_close_matches_and_the_line():
    rules = gate.load_rules('[rules]\n"accuracy.mea" = { max = 1 }\n', "ci.toml")
    with pytest.raises(InputError) as err:
        gate.evaluate(rules, make_summary())
    msg = str(err.value)
    assert msg.startswith("ci.toml, line 2: ")
    assert 'no metric at path "accuracy.mea"' in msg and '"accuracy.mae"' in msg


def test_a_unique_short_name_is_the_metric_and_a_misspelt_one_suggests_it():
    # issue 40: a rules file names a metric as Scores[...] and compare(metrics=) do (uqeval.vocabulary)
    rules = gate.load_rules('[rules]\n"ma_cal" = { max = 1 }\n')
    by_path = gate.load_rules('[rules]\n"avg_calibration.ma_cal" = { max = 1 }\n')
    assert [r.value for r in gate.evaluate(rules, make_summary()).rows] == [
        r.value for r in gate.evaluate(by_path, make_summary()).rows
    ]
    misspelt = gate.load_rules('[rules]\n"ma_cla" = { max = 1 }\n')
    with pytest.raises(InputError, match='"avg_calibration.ma_cal"'):
        gate.evaluate(misspelt, make_summary())


def test_wrong_level_suggests_existing_levels():
    rules = gate.load_rules('[rules]\n"coverage.0.99.coverage" = { min = 0.9 }\n')
    with pytest.raises(InputError, match=r'"coverage\.0\.9\.coverage"|"coverage\.0\.95\.coverage"'):
        gate.evaluate(rules, make_summary())


@pytest.mark.parametrize(
    "path, match",
    [("adv_group_calibration.ma_mean", "is a list"), ("coverage.0.95", "is a group of metrics")],
)
def test_rules_on_lists_or_groups_are_input_errors(path, match):
    rules = gate.load_rules(f'[rules]\n"{path}" = {{ max = 1 }}\n')
    with pytest.raises(InputError, match=match):
        gate.evaluate(rules, make_summary())


# --------------------------------------------------------------------------- evaluation


def test_identical_summaries_pass():
    s = make_summary()
    result = gate.evaluate(gate.load_rules(RULES), s, copy.deepcopy(s))
    assert result.passed
    assert len(result.rows) == 2 + 5
    assert result.counts == {"PASS": 7, "FAIL": 0, "SKIP": 0}


def test_degraded_summary_fails_and_names_the_rule():
    s = make_summary()
    bad = with_metric(s, ("avg_calibration", "ma_cal"), 0.08)
    result = gate.evaluate(gate.load_rules(RULES), bad, s)
    assert not result.passed
    assert [r.name for r in result.failures] == ["avg_calibration.ma_cal max"]
    row = result.failures[0]
    assert row.value == 0.08 and row.limit == "<= 0.05" and row.line == 4
    assert "0.08 > max 0.05" in row.message


def test_no_baseline_skips_regression_checks_or_fails_them_when_required():
    s = make_summary()
    result = gate.evaluate(gate.load_rules(RULES), s)
    assert result.passed
    assert result.counts == {"PASS": 5, "FAIL": 0, "SKIP": 2}
    assert any("2 regression check(s) skipped" in n for n in result.notes)
    strict = gate.load_rules(RULES.replace("[rules]", "[settings]\nrequire_baseline = true\n\n[rules]"))
    result = gate.evaluate(strict, s)
    assert not result.passed and result.counts["FAIL"] == 2


def _one(option: str, path: str, candidate: float, base: float, *, extra: str = ""):
    rules = gate.load_rules(f'[rules]\n"{path}" = {{ {option}{extra} }}\n')
    s = make_summary()
    _, keys = gate.resolve_path(s, path)
    result = gate.evaluate(rules, with_metric(s, keys, candidate), with_metric(s, keys, base))
    (row,) = result.rows
    return row


@pytest.mark.parametrize(
    "path, candidate, base, status",
    [
        ("accuracy.mae", 0.52, 0.50, "PASS"),  # lower is better: +0.02 <= 0.03
        ("accuracy.mae", 0.54, 0.50, "FAIL"),  # +0.04 > 0.03
        ("accuracy.mae", 0.10, 0.50, "PASS"),  # a big improvement is fine
        ("accuracy.r2", 0.78, 0.80, "PASS"),  # higher is better: a decrease of 0.02 <= 0.03
        ("accuracy.r2", 0.76, 0.80, "FAIL"),  # a decrease of 0.04 regresses
        ("accuracy.r2", 0.99, 0.80, "PASS"),  # an increase is an improvement
        ("coverage.0.95.coverage", 0.97, 0.94, "PASS"),  # distance to 0.95: 0.01 -> 0.02, +0.01
        ("coverage.0.95.coverage", 0.90, 0.94, "FAIL"),  # distance 0.01 -> 0.05: +0.04
        ("coverage.0.95.coverage", 0.995, 0.94, "FAIL"),  # overshoot is also a regression: +0.035
    ],
)
def test_max_regression_honours_orientation(path, candidate, base, status):
    row = _one("max_regression = 0.03", path, candidate, base)
    assert row.status == status, row.message
    assert row.baseline == base and row.value == candidate


def test_max_regression_target_override_and_relative():
    row = _one("max_regression = 0.005", "coverage.0.95.coverage", 0.94, 0.93, extra=", target = 0.9")
    assert row.status == "FAIL" and "target 0.9" in row.limit  # moved from 0.03 to 0.04 away from 0.9
    row = _one("max_regression_rel = 0.05", "accuracy.mae", 0.52, 0.50)
    assert row.status == "PASS" and "+4%" in row.message
    row = _one("max_regression_rel = 0.05", "accuracy.r2", 0.75, 0.80)
    assert row.status == "FAIL" and "+6.25%" in row.message


@pytest.mark.parametrize(
    "option, candidate, base, status",
    [
        ("max_increase = 0.1", 0.55, 0.50, "PASS"),
        ("max_increase = 0.1", 0.65, 0.50, "FAIL"),
        ("max_increase = 0.1", 0.10, 0.50, "PASS"),
        ("max_decrease = 0.1", 0.45, 0.50, "PASS"),
        ("max_decrease = 0.1", 0.30, 0.50, "FAIL"),
        ("max_decrease = 0.1", 0.90, 0.50, "PASS"),
        ("max_increase_rel = 0.1", 0.549, 0.50, "PASS"),
        ("max_increase_rel = 0.1", 0.551, 0.50, "FAIL"),
        ("max_decrease_rel = 0.1", 0.451, 0.50, "PASS"),
        ("max_decrease_rel = 0.1", 0.449, 0.50, "FAIL"),
    ],
)
def test_raw_increase_and_decrease(option, candidate, base, status):
    assert _one(option, "accuracy.mae", candidate, base).status == status


def test_raw_increase_on_higher_is_better_metric_explains_itself():
    row = _one("max_increase = 0.01", "accuracy.r2", 0.9, 0.8)
    assert row.status == "FAIL"
    assert "improvement" in row.message and "max_regression" in row.message


def test_floating_point_rounding_is_forgiven():
    # 0.11 - 0.10 = 0.010000000000000009 > 0.01 in binary floating point
    assert _one("max_increase = 0.01", "accuracy.mae", 0.11, 0.10).status == "PASS"
    assert _one("max_increase = 0.01", "accuracy.mae", 0.1101, 0.10).status == "FAIL"


def test_zero_baseline_relative_change():
    assert _one("max_increase_rel = 10", "accuracy.mae", 1e-9, 0.0).status == "FAIL"
    assert _one("max_increase_rel = 0", "accuracy.mae", 0.0, 0.0).status == "PASS"


def test_nan_null_and_missing_baseline_fail():
    s = make_summary()
    rules = gate.load_rules(
        'require = ["scoring.crps"]\n[rules]\n"accuracy.mae" = { max = 1, max_increase = 1 }\n'
        '"scoring.nll" = { max_regression = 1 }\n'
    )
    cand = with_metric(s, ("accuracy", "mae"), float("nan"))
    base = copy.deepcopy(s)
    del base["metrics"]["scoring"]["nll"]
    result = gate.evaluate(rules, cand, base)
    status = {r.name: (r.status, r.message) for r in result.rows}
    assert status["scoring.crps require"] == (
        "FAIL",
        "present but value is null (not computed for this input)",
    )
    assert status["accuracy.mae max"] == ("FAIL", "value is NaN")
    assert status["accuracy.mae max_increase"][0] == "FAIL"
    assert status["scoring.nll max_regression"][0] == "FAIL"
    assert "baseline has no metric" in status["scoring.nll max_regression"][1]


def test_missing_required_metric_is_a_fail_row_with_close_matches():
    rules = gate.load_rules('require = ["accuracy.mae", "scoring.crsp"]\n')
    result = gate.evaluate(rules, make_summary())
    assert [r.status for r in result.rows] == ["PASS", "FAIL"]
    assert '"scoring.crps"' in result.rows[1].message


@settings(max_examples=60, deadline=None)
@given(base=st.integers(-80, 80), delta=st.integers(-40, 40), limit=st.integers(0, 40))
def test_regression_direction_is_mirrored_between_orientations(base, delta, limit):
    """A lower-is-better metric rising by delta regresses like a higher-is-better one falling by delta."""
    base, delta, limit = base / 8, delta / 8, limit / 8  # dyadic: the arithmetic is exact
    lo = _one(f"max_regression = {limit!r}", "accuracy.mae", base + delta, base)
    hi = _one(f"max_regression = {limit!r}", "accuracy.r2", base - delta, base)
    assert lo.status == hi.status == ("PASS" if delta <= limit else "FAIL")


# --------------------------------------------------------------------------- renderers


def _failing_result() -> gate.GateResult:
    s = make_summary()
    bad = with_metric(s, ("avg_calibration", "ma_cal"), 0.08)
    bad = with_metric(bad, ("accuracy", "r2"), 0.70)
    rules = gate.load_rules(RULES + '"scoring.nll" = { max_increase = 0.1 }\n')
    return gate.evaluate(rules, bad, s)


def test_junit_parses_with_the_right_counts():
    result = _failing_result()
    xml = render.to_junit(result)
    root = ET.fromstring(xml.encode())
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == len(result.rows) == 8
    failures = [c for c in cases if c.find("failure") is not None]
    names = sorted(c.get("name") for c in failures)
    assert names == ["accuracy.r2 max_regression", "avg_calibration.ma_cal max"]
    assert suite.get("tests") == "8" and suite.get("failures") == "2" and suite.get("skipped") == "0"
    assert root.get("failures") == "2"
    by_name = {c.get("name"): c for c in failures}
    assert "0.08 > max 0.05" in by_name["avg_calibration.ma_cal max"].find("failure").get("message")


def test_junit_marks_skipped_checks():
    s = make_summary()
    result = gate.evaluate(gate.load_rules(RULES), s)
    suite = ET.fromstring(render.to_junit(result, name="my.gate")).find("testsuite")
    assert suite.get("name") == "my.gate" and suite.get("skipped") == "2"
    assert len([c for c in suite.findall("testcase") if c.find("skipped") is not None]) == 2


def test_markdown_has_headline_and_one_row_per_check():
    result = _failing_result()
    md = render.to_markdown(result)
    assert "FAILED: 6 passed, 2 failed of 8 checks" in md.splitlines()[0]
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert len(table) == 1 + len(result.rows)  # header + one per check
    assert sum("❌ FAIL" in line for line in table) == 2
    assert any("`avg_calibration.ma_cal`" in line and "<= 0.05" in line for line in table)


def test_markdown_escapes_pipes():
    row = gate.GateRow("a|b", "max", 1.0, None, "<= 0", "FAIL", "x | y")
    md = render.to_markdown(gate.GateResult((row,)))
    assert "a\\|b" in md and "x \\| y" in md


def test_to_dict_is_json_serialisable_and_nan_becomes_null():
    s = make_summary()
    rules = gate.load_rules('[rules]\n"accuracy.mae" = { max = 1 }\n')
    d = render.to_dict(gate.evaluate(rules, with_metric(s, ("accuracy", "mae"), float("nan")), s))
    text = json.dumps(d, allow_nan=False)
    back = json.loads(text)
    assert back["schema"] == "uqeval.check/1" and back["passed"] is False
    assert back["counts"] == {"pass": 0, "fail": 1, "skip": 0}
    assert back["rows"][0]["value"] is None and back["rows"][0]["line"] == 2


def test_with_notes_appends_settings_mismatch():
    s = make_summary()
    b = copy.deepcopy(s)
    b["settings"]["num_bins"] = 10
    result = gate.evaluate(gate.load_rules(RULES), s, b).with_notes(*gate.settings_mismatch(s, b))
    assert "settings.num_bins: candidate 100, baseline 10" in render.to_markdown(result)
    assert math.isclose(result.rows[0].value, 0.5)


def test_targets_come_from_the_registry():
    from uqeval.commands.check import target_of

    summary = {
        "metrics": {
            "coverage": {
                "0.9": {"coverage": 0.8, "miss_below": 0.1, "miss_above": 0.1, "coverage_error": -0.1}
            },
            "prediction_sets": {"0.95": {"coverage": 0.9}},
        }
    }
    assert target_of(summary, "coverage.0.9.coverage") == 0.9
    assert target_of(summary, "coverage.0.9.miss_below") == pytest.approx(0.05)
    assert target_of(summary, "coverage.0.9.coverage_error") == 0.0
    assert target_of(summary, "prediction_sets.0.95.coverage") == 0.95


def test_every_problem_of_a_rules_file_is_reported_at_once_in_line_order():
    # issue 35: three mistakes needed three runs, and line 4 came before line 2
    text = (
        "[rules]\n"
        '"accuracy.mae" = { mx = 1 }\n'  # 2: unknown option
        "[settings]\n"
        'require_baseline = "yes"\n'  # 4: not a boolean
        "[rule]\n"  # 5: unknown top-level key
        '"accuracy.rmse" = { max = 1 }\n'
    )
    with pytest.raises(InputError) as err:
        gate.load_rules(text, "ci.toml")
    msg = str(err.value)
    assert msg.startswith("ci.toml: 3 problems, in line order: line 2: ") and "\n" not in msg
    at = [msg.index(f"line {n}: ") for n in (2, 4, 5)]
    assert at == sorted(at)
    assert (
        "unknown option 'mx'" in msg
        and "must be true or false" in msg
        and "unknown top-level key 'rule'" in msg
    )
    # one problem: the message as before
    with pytest.raises(InputError, match=r"^ci\.toml, line 2: rule \"accuracy.mae\": unknown option 'mx'"):
        gate.load_rules('[rules]\n"accuracy.mae" = { mx = 1 }\n', "ci.toml")


def test_every_rule_on_an_unknown_path_is_reported_at_once():
    text = '[rules]\n"accuracy.mae" = { max = 1 }\n"accuracy.mea" = { max = 1, min = 0 }\n"ma_call" = { max = 1 }\n'
    rules = gate.load_rules(text, "ci.toml")
    with pytest.raises(InputError) as err:
        gate.evaluate(rules, make_summary())
    msg = str(err.value)
    assert msg.startswith('ci.toml: 2 problems, in line order: line 3: no metric at path "accuracy.mea"'), msg
    assert '; line 4: no metric at path "ma_call"' in msg and msg.count("accuracy.mea") == 1
