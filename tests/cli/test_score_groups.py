"""``score --groups`` / ``groups=``: only the named metric groups are computed, on every engine, and their
numbers are those of the full run (the setting is applied in one place, ``catalogue.families_for``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.catalogue import families_for
from uqeval.config import Settings, make_settings, parse_groups
from uqeval.errors import InputError, UsageError

from ..conftest import SAMPLE

runner = CliRunner()


def _score(path, *flags) -> dict:
    r = runner.invoke(app_(), ["score", str(path), "--format", "json", *flags])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def app_():
    from uqeval.cli import app

    return app


def test_parse_groups_and_the_settings_block():
    assert parse_groups(" scoring_rule, ,accuracy,scoring_rule") == ("scoring_rule", "accuracy")
    assert parse_groups(["coverage"]) == ("coverage",)
    assert parse_groups(None) is None
    for bad in ("", ",", 3, ["a", 1]):
        with pytest.raises(InputError):
            parse_groups(bad)
    assert "groups" not in Settings().to_json()  # written only when given: documents without it are unchanged
    assert make_settings(None, groups="accuracy,coverage").to_json()["groups"] == ["accuracy", "coverage"]


def test_families_for_keeps_the_named_groups_and_turns_on_a_named_switch():
    s = Settings(groups=("scoring_rule", "corp"))
    assert [f.name for f in families_for("gaussian", s)] == [
        "scoring_rule",
        "corp",
    ]  # corp without --diagnostics
    assert [
        f.name for f in families_for("gaussian", Settings(groups=("weighted_scoring",)))
    ] == []  # needs a value
    named = Settings(groups=("weighted_scoring",), tw_threshold=(0.0, None))
    assert [f.name for f in families_for("gaussian", named)] == ["weighted_scoring"]
    with pytest.raises(UsageError, match=r"unknown metric group 'scoring_rul'.*did you mean scoring_rule"):
        families_for("gaussian", Settings(groups=("scoring_rul",)))


@pytest.mark.parametrize(
    "name,groups",
    [
        ("gaussian.parquet", "scoring_rule,coverage"),
        ("samples.parquet", "scoring_rule,calibration_tests"),
        ("classification.parquet", "calibration,accuracy"),
    ],
)
def test_score_groups_is_the_full_run_restricted_on_every_engine(name, groups):
    full = _score(SAMPLE / name, "--diagnostics")
    wanted = groups.split(",")
    for engine in ("memory", "stream"):
        got = _score(SAMPLE / name, "--groups", groups, "--engine", engine)
        assert got["settings"]["groups"] == wanted
        assert set(got["metrics"]) <= set(wanted)
        ref = full if engine == "memory" else _score(SAMPLE / name, "--diagnostics", "--engine", "stream")
        for g in got["metrics"]:
            assert got["metrics"][g] == ref["metrics"][g], (engine, g)
    assert set(_score(SAMPLE / name, "--groups", groups)["metrics"]) == set(wanted)


def test_score_groups_unknown_is_a_usage_error_naming_the_groups():
    r = runner.invoke(app_(), ["score", str(SAMPLE / "gaussian.csv"), "--groups", "crps"])
    assert r.exit_code == 2
    assert "unknown metric group 'crps'" in r.stderr and "scoring_rule" in r.stderr


def test_python_groups_keyword():
    rng = np.random.default_rng(0)
    mu = rng.normal(size=300)
    y = mu + rng.normal(size=300)
    s = uqeval.evaluate(y, mean=mu, std=np.ones(300), groups="scoring_rule")
    assert set(json.loads(s.to_json())["metrics"]) == {"scoring_rule"}
    assert s["crps"] == uqeval.evaluate(y, mean=mu, std=np.ones(300))["crps"]


def test_config_file_groups(tmp_path):
    good = tmp_path / "g.toml"
    good.write_text('[metrics]\ngroups = ["accuracy", "coverage"]\n')
    assert set(_score(SAMPLE / "gaussian.csv", "--config", str(good))["metrics"]) == {"accuracy", "coverage"}
    bad = tmp_path / "bad.toml"
    bad.write_text("[metrics]\ngroups = 3\n")
    r = runner.invoke(app_(), ["score", str(SAMPLE / "gaussian.csv"), "--config", str(bad)])
    assert r.exit_code == 3 and "metrics.groups (line 2)" in r.stderr
