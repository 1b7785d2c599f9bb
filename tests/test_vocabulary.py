"""Issue 40: one vocabulary (uqeval/vocabulary.py) for the command line, the settings files and Python.

The roles and options each front end takes are enumerated from the front end itself (the Typer app's
parameters, the settings file's tables, the signatures of the Python functions) and checked against the
vocabulary: every spelling it declares is accepted everywhere, and means the same thing."""

import inspect

import numpy as np
import pytest
import typer

import uqeval
from uqeval import vocabulary
from uqeval.api.inputs import _ROLES
from uqeval.cli import app
from uqeval.config import _TABLES, COLUMN_ROLES, Settings, load_config, make_settings
from uqeval.errors import InputError, UsageError
from uqeval.names import OPTIONS, ROLES, SETTINGS, canonical, cli_flags, names_of

#: every command that reads prediction files
READERS = ("score", "ucc", "coverage", "monitor", "check", "compare", "recalibrate", "plot", "report")


def _commands():
    return typer.main.get_command(app).commands  # type: ignore[attr-defined]


def _cli_names(command) -> dict[str, tuple[str, ...]]:
    """{canonical name: flags} of the options of one command that the vocabulary names."""
    out = {}
    for p in command.params:
        name = canonical(p.name)
        if name in ROLES or name in SETTINGS:
            out[name] = tuple(p.opts)
    return out


def test_the_three_front_ends_take_the_same_roles():
    # the settings file's [columns] table: every role
    assert _TABLES["columns"] == set(ROLES) == set(COLUMN_ROLES)
    # Python: evaluate takes every role but by (a file's grouping column, monitor's by=)
    keywords = set(inspect.signature(uqeval.evaluate).parameters)
    assert set(ROLES) - {"by"} <= keywords
    assert set(_ROLES) - {"loglik"} <= set(ROLES)
    # the command line: every shared role option is a vocabulary role, under all its spellings
    for name in READERS:
        found = _cli_names(_commands()[name])
        for role in ("y_true", "mean", "std", "var", "lower", "upper", "proba", "logits", "weights"):
            assert role in found, (name, role)
        for role, flags in found.items():
            assert set(flags) == set(cli_flags(role)), (name, role, flags)
        for p in _commands()[name].params:  # compare's and ucc's options: the Python keyword is a flag too
            if canonical(p.name) in OPTIONS:
                assert {f for f in p.opts if f.startswith("--")} <= set(cli_flags(p.name)), (name, p.opts)
                assert "--" + canonical(p.name).replace("_", "-") in p.opts, (name, p.opts)


def test_every_setting_of_a_file_is_a_settings_field_and_a_keyword():
    fields = set(Settings.__dataclass_fields__)
    assert _TABLES["metrics"] | _TABLES["input"] <= fields
    for canonical_name in SETTINGS:
        assert canonical_name in fields
    # the command line's metric flags name settings fields (or aliases of them)
    score = _commands()["score"]
    for p in score.params:
        if canonical(p.name) in SETTINGS:
            assert set(p.opts) == set(cli_flags(p.name))


@pytest.mark.parametrize("role", sorted(ROLES))
def test_a_settings_file_takes_every_spelling_of_a_role(tmp_path, role):
    for spelling in names_of(role):
        path = tmp_path / f"{spelling}.toml"
        path.write_text(f'[columns]\n{spelling} = "col"\n')
        assert load_config(path) == {"columns": {role: "col"}}
        project = tmp_path / "pyproject.toml"
        project.write_text(f'[tool.uqeval.columns]\n{spelling} = "col"\n')
        assert load_config(project) == {"columns": {role: "col"}}


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_settings_take_every_spelling_in_files_and_keywords(tmp_path, setting):
    value = {"class_bins": 7, "thresholds": [0.5]}[setting]
    want = make_settings(None, **{setting: value})
    for spelling in names_of(setting):
        path = tmp_path / f"{spelling}.toml"
        path.write_text(f"[metrics]\n{spelling} = {value!r}\n")
        assert make_settings(path) == want
        assert make_settings(None, **{spelling: value}) == want


def test_two_spellings_of_one_name_are_refused(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[columns]\ny = "a"\ny_true = "b"\n')
    with pytest.raises(InputError, match=r"names y_true twice \(line 3\): as y and y_true"):
        load_config(path)
    with pytest.raises(UsageError, match="weights= and sample_weight= name the same thing"):
        uqeval.evaluate([0.0, 1.0], mean=[0.0, 1.0], weights=[1, 1], sample_weight=[1, 1])


def test_an_unknown_key_suggests_the_close_one(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[columns]\nsample_weights = "w"\n')
    with pytest.raises(InputError, match="did you mean one of 'sample_weight', 'weights'"):
        load_config(path)
    with pytest.raises(InputError, match="did you mean 'num_bins'"):
        uqeval.evaluate([0.0, 1.0], mean=[0.0, 1.0], nm_bins=3)


def _gaussian(n=300, seed=0):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    return mu + rng.normal(size=n), mu, np.full(n, 1.3), rng.uniform(0.5, 2.0, size=n)


@pytest.mark.parametrize(
    "role, value_of",
    [("y_true", 0), ("mean", 1), ("std", 2), ("weights", 3)],
)
def test_python_takes_every_spelling_of_a_role(role, value_of):
    arrays = _gaussian()
    base = {"y_true": arrays[0], "mean": arrays[1], "std": arrays[2], "weights": arrays[3]}
    want = uqeval.evaluate(**base).to_json()
    for spelling in names_of(role):
        given = {k: v for k, v in base.items() if k != role} | {spelling: arrays[value_of]}
        assert uqeval.evaluate(**given).to_json() == want, spelling


def test_the_command_line_takes_every_spelling(tmp_path):
    import pandas as pd
    from typer.testing import CliRunner

    y, mu, sd, w = _gaussian()
    path = tmp_path / "p.csv"
    pd.DataFrame({"obs": y, "m": mu, "s": sd, "w": w}).to_csv(path, index=False)
    runner = CliRunner()
    outputs = set()
    for args in (
        ["--y", "obs", "--mean", "m", "--std", "s", "--weights", "w"],
        ["--y-true", "obs", "--y-pred", "m", "--sigma", "s", "--sample-weight", "w"],
        ["--target", "obs", "--mean", "m", "--std", "s", "--weights", "w"],
    ):
        result = runner.invoke(app, ["score", str(path), "-f", "json", *args])
        assert result.exit_code == 0, result.output
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_window_takes_the_pandas_spellings():
    assert vocabulary.window_span("D") == "1D"
    assert vocabulary.window_span("30T") == "30min"
    assert vocabulary.window_span("15S") == "15s"
    assert vocabulary.window_span("1d") == "1d"
    assert vocabulary.window_span("1000") == "1000"
    assert vocabulary.window_span(1000) == 1000
    rng = np.random.default_rng(0)
    t = np.datetime64("2024-01-01T00:00:00", "ns") + np.arange(96) * np.timedelta64(1, "h")
    y = rng.normal(size=96)
    docs = [
        uqeval.monitor(y_true=y, mean=0.0, std=1.0, time=t, window=w)["windows"] for w in ("D", "1d", "24h")
    ]
    assert [len(d) for d in docs] == [4, 4, 4]


def test_one_function_resolves_metric_names():
    paths = ["scoring_rule.crps", "skill.crps", "avg_calibration.ma_cal", "accuracy.mae", "x.mae"]
    assert vocabulary.resolve_metric("crps", paths) == "scoring_rule.crps"
    assert vocabulary.resolve_metric("skill.crps", paths) == "skill.crps"
    assert vocabulary.resolve_metric("ma_cal", paths) == "avg_calibration.ma_cal"
    with pytest.raises(vocabulary.AmbiguousName, match="accuracy.mae, x.mae"):
        vocabulary.resolve_metric("mae", paths)
    with pytest.raises(vocabulary.UnknownName, match="close matches: scoring_rule.crps"):
        vocabulary.resolve_metric("crsp", paths)


def test_scores_name_metrics_as_the_rules_do():
    y, mu, sd, _ = _gaussian()
    scores = uqeval.evaluate(y, mean=mu, std=sd)
    assert scores["crps"] == scores["scoring_rule.crps"]
    with pytest.raises(KeyError, match="close matches: scoring_rule.crps") as caught:
        scores["crsp"]
    assert isinstance(caught.value, ValueError)  # an InputError too: one line, no bare KeyError
    assert "crsp" not in scores
    assert scores.get("crsp") is None


def test_the_docs_table_is_the_vocabulary():
    import re
    from pathlib import Path

    text = (Path(__file__).parent.parent / "docs" / "guide" / "python-api.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| (.+?) \| (.+?) \|$", text, re.M)
    table = {
        name: (re.findall(r"`(\w+)`", aliases), re.findall(r"`(--[\w-]+)`", flags))
        for name, aliases, flags in rows
    }
    declared = {k: v for k, v in (*ROLES.items(), *SETTINGS.items(), *OPTIONS.items()) if v}
    assert set(table) == set(declared)
    for name, (aliases, flags) in table.items():
        assert tuple(aliases) == declared[name], name
        assert tuple(flags) == cli_flags(name), name


def test_compare_options_under_both_names():
    rng = np.random.default_rng(0)
    y = rng.normal(size=200)
    models = {
        "a": uqeval.Gaussian(y_true=y, mean=np.zeros(200), std=np.ones(200)),
        "b": uqeval.Gaussian(y_true=y, mean=np.zeros(200), std=np.full(200, 2.0)),
    }
    want = uqeval.compare(models, metrics=["crps"], n_boot=30, n_permutations=40)
    got = uqeval.compare(models, metrics=["crps"], bootstrap=30, permutations=40)
    assert got.to_json() == want.to_json()


def test_ucc_takes_the_permutation_tests_other_names():
    """``uqeval.ucc`` takes the permutation test's command-line words (``permutations=``,
    ``permutation_test=``) as ``compare`` does; both spellings at once, or an unknown keyword, is one error."""
    rng = np.random.default_rng(0)
    y = rng.normal(size=200)
    models = {
        "a": uqeval.Gaussian(y_true=y, mean=np.zeros(200), std=np.ones(200)),
        "b": uqeval.Gaussian(y_true=y, mean=np.zeros(200), std=np.full(200, 1.5)),
    }
    want = uqeval.ucc(models, n_permutations=9)["permutation_test"]
    assert want is not None
    for alias in ("permutations", "permutation_test"):
        assert uqeval.ucc(models, **{alias: 9})["permutation_test"] == want
    with pytest.raises(UsageError, match="name the same thing"):
        uqeval.ucc(models, n_permutations=9, permutation_test=9)
    with pytest.raises(UsageError, match="did you mean 'n_permutations'"):
        uqeval.ucc(models, permutaton_test=9)


def test_messages_spell_the_flag_and_keyword_the_front_ends_have():
    # one table (uqeval.names): a message's option is the command line's main flag, or the Python keyword
    from uqeval.errors import front_end, option

    for name in [*ROLES, *SETTINGS, *OPTIONS, *(a for v in OPTIONS.values() for a in v), "label"]:
        with front_end("cli"):
            assert option(name) == cli_flags(name)[0]
        with front_end("python"):
            assert option(name) == canonical(name if name != "label" else "y_true") + "="
    with front_end("cli"):
        assert (option("label"), option("class_bins"), option("bootstrap")) == (
            "--y",
            "--bins",
            "--bootstrap",
        )
