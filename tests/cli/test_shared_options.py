"""Issue 26 (command line): one shared input option set, --proba, the "no prediction columns" message,
wider column detection, --help panels and the direction line of `uqeval explain`."""

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

import uqeval
from uqeval.cli import COMMANDS, app
from uqeval.cli.common import INPUT_OPTIONS, INPUT_PANEL, METRIC_OPTIONS, METRICS_PANEL
from uqeval.errors import SchemaError, front_end
from uqeval.io.columns import plan_columns

from ..conftest import softmax, write_table

runner = CliRunner()

#: every command that reads prediction files (explain, config and schema read none)
READERS = ("score", "ucc", "coverage", "monitor", "check", "compare", "recalibrate", "plot", "report")
SCORERS = ("score", "monitor", "check", "compare", "plot", "report")


def _commands():
    group = typer.main.get_command(app)
    return group.commands  # type: ignore[attr-defined]


def _flag(annotation):
    info = annotation.__metadata__[0]  # in Annotated, typer.Option's first flag is its "default"
    return info.default if str(info.default).startswith("-") else info.param_decls[0]


def test_every_command_that_reads_predictions_has_the_full_shared_input_option_set():
    commands = _commands()
    assert set(READERS) == set(COMMANDS) - {"explain", "config", "schema"}
    shared = {_flag(a) for _, a, _ in INPUT_OPTIONS}
    assert {"--y", "--mean", "--std", "--var", "--lower", "--upper", "--proba", "--level"} <= shared
    assert {"--fix-crossing", "--seed", "--nan-policy", "--config", "--representation"} <= shared
    reference = {o.opts[0]: o for o in commands["score"].params if o.opts[0] in shared}
    ctx = typer.Context(commands["score"])
    for name in READERS:
        options = {o.opts[0]: o for o in commands[name].params if getattr(o, "opts", None)}
        missing = shared - set(options)
        assert not missing, f"{name} lacks {sorted(missing)}"
        for flag in shared:  # the same declaration: type, flag-ness, limits, panel
            got, want = options[flag], reference[flag]
            assert (got.opts, got.is_flag, got.multiple) == (want.opts, want.is_flag, want.multiple), (
                name,
                flag,
            )
            g, w = got.get_help_record(typer.Context(commands[name])), want.get_help_record(ctx)
            assert g[0] == w[0], (name, flag)  # flag and metavar (the type)
            assert g[1].partition("  [")[2] == w[1].partition("  [")[2], (name, flag)  # range, default
            assert (got.min, got.max, got.default) == (want.min, want.max, want.default), (name, flag)
            assert got.rich_help_panel == INPUT_PANEL, (name, flag)
    metric_flags = {_flag(a) for _, a, _ in METRIC_OPTIONS}
    for name in SCORERS:
        flags = {o.opts[0]: o for o in commands[name].params if getattr(o, "opts", None)}
        assert metric_flags <= set(flags), name
        # monitor shows its time column with its windows (--window, --origin, --state)
        panels = {f: "Windows" if (name, f) == ("monitor", "--time") else METRICS_PANEL for f in metric_flags}
        assert all(flags[f].rich_help_panel == panels[f] for f in metric_flags), name


def test_a_command_cannot_redeclare_a_shared_option():
    from uqeval.cli.common import input_options

    def cmd(seed: int = 0, flags=None):  # noqa: ARG001
        return None

    with pytest.raises(TypeError, match="seed"):
        input_options(cmd)


# --------------------------------------------------------------------------- coverage takes the shared set


def test_coverage_fix_crossing_level_and_interval_columns(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    y = rng.normal(size=n)
    q = np.sort(rng.normal(size=(n, 3)), axis=1) + y[:, None]
    q[0] = q[0][::-1]  # one crossing row
    f = write_table(tmp_path / "q.csv", {"y": y, "q_0.05": q[:, 0], "q_0.5": q[:, 1], "q_0.95": q[:, 2]})
    bad = runner.invoke(app, ["coverage", str(f)])
    assert bad.exit_code == 3 and "--fix-crossing" in bad.stderr
    ok = runner.invoke(app, ["coverage", str(f), "--fix-crossing", "-f", "json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["points"][0]["level"] == "0.9"

    lo, hi = y - 1.0, y + 1.0
    g = write_table(tmp_path / "iv.csv", {"truth": y, "a": lo, "b": hi})
    out = runner.invoke(
        app,
        ["coverage", str(g), "--lower", "a", "--upper", "b", "--level", "0.8", "--seed", "3", "-f", "json"],
    )
    assert out.exit_code == 0, out.output
    point = json.loads(out.stdout)["points"][0]
    assert point["level"] == "0.8" and point["coverage"] == 1.0 and point["width"] == pytest.approx(2.0)


def test_ucc_and_recalibrate_keep_their_own_wording_of_shared_options():
    commands = _commands()
    helps = {c: {o.opts[0]: o.help for o in commands[c].params if getattr(o, "opts", None)} for c in READERS}
    assert "band" in helps["ucc"]["--level"]
    assert helps["recalibrate"]["--seed"].startswith("accrue:")
    assert helps["score"]["--seed"] == helps["coverage"]["--seed"]


# --------------------------------------------------------------------------- --proba / [columns] proba, logits


@pytest.fixture
def classes(tmp_path):
    rng = np.random.default_rng(1)
    n, k = 60, 3
    logits = rng.normal(size=(n, k))
    p = softmax(logits)
    labels = rng.integers(0, k, n)
    cols = {"label": labels, **{f"p{j}": p[:, j] for j in range(k)}}
    cols.update({f"z{j}": logits[:, j] for j in range(k)})
    return write_table(tmp_path / "cls.csv", cols)


def _score(args):
    r = runner.invoke(app, ["score", *args, "-f", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_proba_names_class_columns_by_glob_list_config_and_logits(classes, tmp_path):
    glob = _score([str(classes), "--proba", "p*"])
    assert glob["input"]["representation"] == "categorical"
    assert glob["input"]["columns"] == {"y_true": "label", "proba": ["p0", "p1", "p2"]}
    listed = _score([str(classes), "--proba", "p0, p1,p2"])
    assert listed["metrics"] == glob["metrics"]
    assert glob["settings"]["logits"] is False
    logit = _score([str(classes), "--logits", "z*"])
    assert logit["metrics"]["accuracy"]["nll"] == pytest.approx(glob["metrics"]["accuracy"]["nll"], rel=1e-9)
    assert logit["input"]["columns"]["proba"] == ["z0", "z1", "z2"]
    assert (logit["settings"]["logits"], logit["settings"]["columns"]) == (True, {"logits": "z*"})
    assert _score([str(classes), "--logits", "z0,z1, z2"])["metrics"] == logit["metrics"]
    cfg = tmp_path / "c.toml"
    cfg.write_text('[columns]\nlogits = ["z0", "z1", "z2"]\n')
    from_config = _score([str(classes), "--config", str(cfg)])
    assert from_config["metrics"]["accuracy"]["nll"] == pytest.approx(
        glob["metrics"]["accuracy"]["nll"], rel=1e-9
    )
    # the settings say the class columns are logits and where they were named (the config, named too)
    assert (from_config["settings"]["logits"], from_config["settings"]["columns"]) == (
        True,
        {"logits": ["z0", "z1", "z2"]},
    )
    assert from_config["settings"]["config"]["path"] == str(cfg)
    # a flag naming the class columns replaces the config's naming, whichever role either used
    over = _score([str(classes), "--config", str(cfg), "--proba", "p*"])
    assert over["metrics"] == glob["metrics"] and over["settings"]["logits"] is False
    cfg.write_text('[columns]\nproba = "p*"\n')
    assert _score([str(classes), "--config", str(cfg)])["metrics"] == glob["metrics"]
    assert _score([str(classes), "--config", str(cfg), "--logits", "z*"])["metrics"] == logit["metrics"]


def test_logits_takes_columns_and_says_so_when_used_as_the_old_switch(classes):
    r = runner.invoke(app, ["score", str(classes), "--logits", "--diagnostics"])
    assert r.exit_code == 2
    assert "--logits takes the logit columns" in r.stderr and "--logits 'p_*'" in r.stderr, r.stderr
    r = runner.invoke(app, ["score", str(classes), "--logits"])
    assert r.exit_code == 2 and "requires an argument" in r.output
    r = runner.invoke(app, ["score", str(classes), "--logits", "q*"])
    assert r.exit_code == 3
    assert "no column matches 'q*' given for logits (--logits)" in r.stderr, r.stderr
    r = runner.invoke(app, ["score", str(classes), "--logits", "z*", "--proba", "p*"])
    assert r.exit_code == 3 and "named twice" in r.stderr, r.stderr


def test_proba_glob_orders_by_number_and_unknown_names_fail(tmp_path):
    names = ["label"] + [f"p{j}" for j in (10, 2, 0, 1, 3, 4, 5, 6, 7, 8, 9)]
    plan = plan_columns(names, explicit={"proba": "p*"})
    assert plan.roles["proba"] == [f"p{j}" for j in range(11)]
    with (
        front_end("cli"),
        pytest.raises(SchemaError, match=r"no column matches 'q\*' given for proba \(--proba\)"),
    ):
        plan_columns(names, explicit={"proba": "q*"})
    with front_end("python"), pytest.raises(SchemaError, match=r"proba=\)"):
        plan_columns(names, explicit={"proba": "p0,nope"})


# --------------------------------------------------------------------------- "no prediction columns found"


def test_no_prediction_columns_lists_them_and_suggests_flags(tmp_path):
    f = write_table(tmp_path / "a.csv", {"obs": [1.0, 2.0], "guess": [1.0, 2.5], "unc": [0.5, 0.5]})
    r = runner.invoke(app, ["score", str(f)])
    assert r.exit_code == 3
    assert "'obs', 'guess', 'unc'" in r.stderr
    assert "--y obs --mean guess --std unc" in r.stderr
    ok = runner.invoke(app, ["score", str(f), "--y", "obs", "--mean", "guess", "--std", "unc"])
    assert ok.exit_code == 0, ok.output
    with front_end("python"), pytest.raises(SchemaError, match="y_true='obs' mean='guess' std='unc'"):
        plan_columns(["obs", "guess", "unc"])


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_the_column_hint_goes_by_names_and_types_never_by_position(tmp_path, ext):
    # issue 35: `coverage grouped.csv --by region` suggested `--y date --mean obs --std fcst`
    import datetime

    days = [datetime.datetime(2024, 1, d) for d in (1, 2, 3)]
    cols = {
        # a time, never the target
        "observed_at": days if ext == "parquet" else [d.isoformat() for d in days],
        "region": ["north", "south", "north"],
        "forecast_model": ["ecmwf", "gfs", "gfs"],  # text, never the mean
        "obs": [1.5, 2.0, 0.5],
        "fcst": [1.2, 2.1, 0.7],
    }
    f = write_table(tmp_path / f"grouped.{ext}", cols)
    r = runner.invoke(app, ["coverage", str(f), "--by", "region"])
    assert r.exit_code == 3, r.output
    assert "e.g. --y obs --mean fcst (" in r.stderr
    # no name to go by: placeholders, not the first columns
    g = write_table(tmp_path / f"abc.{ext}", {"a": [1.0, 2.0], "b": [1.0, 2.5], "c": [0.5, 0.5]})
    r = runner.invoke(app, ["score", str(g)])
    assert r.exit_code == 3 and "e.g. --y COLUMN --mean COLUMN (" in r.stderr, r.output
    with front_end("python"), pytest.raises(SchemaError, match="y_true='COLUMN' mean='COLUMN'"):
        plan_columns(["a", "b", "c"])


def test_the_column_hint_reads_the_files_separator_and_decimal_mark(tmp_path):
    # the hint's number test reads the file with --sep and --decimal (it read every CSV with ',' and '.',
    # so in a ';' file no column held numbers and the hint fell back to placeholders)
    f = tmp_path / "semi.csv"
    f.write_text("region;obs;fcst\nnorth;1,5;1,2\nsouth;2,0;2,1\n")
    r = runner.invoke(app, ["coverage", str(f), "--sep", ";", "--decimal", ","])
    assert r.exit_code == 3, r.output
    assert "e.g. --y obs --mean fcst (" in r.stderr


def test_no_prediction_columns_suggests_proba_for_numbered_columns(tmp_path):
    f = tmp_path / "p.csv"
    f.write_text("label,p0,p1,p2\n0,0.2,0.3,0.5\n2,0.1,0.1,0.8\n")
    r = runner.invoke(app, ["score", str(f)])
    assert r.exit_code == 3 and "--y label --proba 'p*'" in r.stderr


def test_wrong_delimiter_and_decimal_comma_are_recognised(tmp_path):
    semi = tmp_path / "semi.csv"
    semi.write_text("y;mean;std\n1,0;2,0;0,5\n2,0;2,5;0,5\n")
    r = runner.invoke(app, ["score", str(semi)])
    assert r.exit_code == 3 and "separated by semicolons" in r.stderr and "decimal" in r.stderr
    comma = tmp_path / "comma.csv"
    comma.write_text('y,mean,std\n"1,5",2.0,0.5\n2.0,2.5,0.5\n')
    r = runner.invoke(app, ["score", str(comma)])
    assert r.exit_code == 3 and "decimal comma: pass --decimal ','" in r.stderr


def test_sep_and_decimal_read_the_files_of_a_decimal_comma_locale(tmp_path):
    # issue 40: the messages above name the options, and the options (or the settings) read the files
    semi = tmp_path / "semi.csv"
    semi.write_text("y;mean;std\n1,5;2,0;0,5\n2,0;2,5;0,5\n-0,25;0,5;1,5\n")
    plain = tmp_path / "plain.csv"
    plain.write_text("y,mean,std\n1.5,2.0,0.5\n2.0,2.5,0.5\n-0.25,0.5,1.5\n")
    r = runner.invoke(app, ["score", str(semi)])
    assert r.exit_code == 3 and "pass --sep ';' (and --decimal ',' for decimal commas)" in r.stderr
    want = json.loads(runner.invoke(app, ["score", str(plain), "-f", "json"]).stdout)["metrics"]
    config = tmp_path / "semi.toml"
    config.write_text('[input]\nsep = ";"\ndecimal = ","\n')
    for args in (
        ["--sep", ";", "--decimal", ","],
        ["--decimal", ","],  # decimal commas: fields split by ';' unless --sep says otherwise
        ["--config", str(config)],
        ["--sep", ";", "--decimal", ",", "--engine", "stream"],
    ):
        r = runner.invoke(app, ["score", str(semi), "-f", "json", *args])
        assert r.exit_code == 0, (args, r.output)
        got = json.loads(r.stdout)
        assert got["metrics"]["scoring_rule"] == pytest.approx(want["scoring_rule"]), args
        assert got["settings"]["decimal"] == ","
    assert "sep" not in json.loads(runner.invoke(app, ["score", str(plain), "-f", "json"]).stdout)["settings"]
    tab = tmp_path / "tab.csv"
    tab.write_text(plain.read_text().replace(",", "\t"))
    r = runner.invoke(app, ["score", str(tab), "-f", "json", "--sep", "\\t"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["metrics"]["scoring_rule"] == pytest.approx(want["scoring_rule"])
    r = runner.invoke(app, ["score", str(semi), "--sep", ",", "--decimal", ","])
    assert r.exit_code == 2 and "is the field separator too" in r.stderr
    r = runner.invoke(app, ["score", str(semi), "--decimal", ";"])
    assert r.exit_code == 2 and "must be '.' or ','" in r.stderr
    assert uqeval.evaluate_file(semi, sep=";", decimal=",")["crps"] == pytest.approx(
        want["scoring_rule"]["crps"]
    )


# --------------------------------------------------------------------------- wider detection


def test_more_names_are_detected_when_unambiguous():
    plan = plan_columns(["actual", "prediction", "sd"])
    assert plan.representation == "gaussian"
    assert plan.roles == {"y_true": "actual", "mean": "prediction", "std": "sd"}
    assert plan_columns(["truth", "yhat", "stddev"]).roles["mean"] == "yhat"
    assert plan_columns(["target", "y_hat", "pred_std"]).roles["std"] == "pred_std"
    # a name of the first tier wins; two of the second are ambiguous; a wide spread name never competes
    assert plan_columns(["y", "truth", "mean", "std"]).roles["y_true"] == "y"
    with pytest.raises(SchemaError, match="ambiguous y_true column: 'truth', 'actual'"):
        plan_columns(["truth", "actual", "mean", "std"])
    iv = plan_columns(["y", "lower", "upper", "sd"])
    assert iv.representation == "intervals"
    assert plan_columns(["y", "mean", "var", "sd"]).roles["var"] == "var"


# --------------------------------------------------------------------------- --help panels, explain direction


def test_help_groups_options_into_panels():
    r = runner.invoke(app, ["score", "--help"])
    assert r.exit_code == 0, r.output
    text = r.output
    heads = ["Input columns:", "Metrics:", "Plots:", "Output:", "Engine:"]
    at = [text.index(h) for h in heads]
    assert at == sorted(at)
    sections = dict(zip(heads, [text[a:b] for a, b in zip(at, at[1:] + [len(text)])]))
    assert "--proba" in sections["Input columns:"] and "--num-bins" in sections["Metrics:"]
    assert "--plot-dir" in sections["Plots:"] and "--format" in sections["Output:"]
    assert "--chunk-rows" in sections["Engine:"] and "--num-bins" not in sections["Input columns:"]
    cov = runner.invoke(app, ["coverage", "--help"]).output
    assert "Input columns:" in cov and "--fix-crossing" in cov.split("Input columns:")[1]


@pytest.mark.parametrize(
    "name, direction",
    [
        ("crps", "Direction: lower is better"),
        ("accuracy.accuracy", "Direction: higher is better"),
        ("coverage.coverage_error", "Direction: closest to 0 is best"),
        ("coverage.coverage", "Direction: closest to its nominal level is best"),
    ],
)
def test_explain_says_which_way_is_better(name, direction):
    r = runner.invoke(app, ["explain", name])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[1] == direction


def test_recalibrate_reads_class_columns_named_with_proba(classes):
    r = runner.invoke(
        app,
        ["recalibrate", str(classes), "--method", "temperature", "--logits", "z*", "-f", "json"],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["parameters"]["temperature"] > 0
    out = classes.parent / "recal.csv"
    r = runner.invoke(
        app,
        ["recalibrate", str(classes), "--method", "temperature", "--logits", "z*", "--apply", str(classes)]
        + ["-o", str(out), "-f", "json"],
    )
    assert r.exit_code == 0, r.output
    header = [h.strip('"') for h in out.read_text().splitlines()[0].split(",")]
    assert {"p_0", "p_1", "p_2"} <= set(header)  # logits in (named with --logits), probabilities out


def _quiet_cases(tmp_path):
    from ..conftest import SAMPLE

    a, b = str(SAMPLE / "gaussian.parquet"), str(SAMPLE / "gaussian_const.parquet")
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"accuracy.mae" = { max = 10 }\n')
    return {
        "score": ["score", a],
        "ucc": ["ucc", a],
        "coverage": ["coverage", a],
        "monitor": ["monitor", a, "--window", "1000"],
        "check": ["check", a, "--rules", str(rules)],
        "compare": ["compare", a, b, "--bootstrap", "20", "--permutations", "20"],
    }


@pytest.mark.parametrize("command", ["score", "ucc", "coverage", "monitor", "check", "compare"])
@pytest.mark.parametrize("fmt", ["table", "json"])
def test_quiet_with_an_output_file_prints_nothing_on_stdout(tmp_path, command, fmt):
    # issue 35: -q -o FILE still printed the whole document on stdout
    args = _quiet_cases(tmp_path)[command] + ["-f", fmt]
    out = tmp_path / "doc.json"
    loud = runner.invoke(app, [*args, "-o", str(out)])
    assert loud.exit_code == 0, loud.output
    assert loud.stdout.strip()  # without -q: the document on stdout and in the file
    quiet = runner.invoke(app, [*args, "-o", str(out), "-q"])
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout == ""
    assert json.loads(out.read_text())["schema"].startswith("uqeval.")
    alone = runner.invoke(app, [*args, "-q"])  # -q without a file: the document is still shown
    assert alone.exit_code == 0 and alone.stdout.strip(), alone.output
    to_stdout = runner.invoke(app, [*args, "-q", "-o", "-"])  # -o -: the document on stdout, once
    assert to_stdout.exit_code == 0 and json.loads(to_stdout.stdout)["schema"].startswith("uqeval.")


def test_quiet_help_says_what_it_silences():
    for name in ("score", "ucc", "coverage", "monitor", "check", "compare", "report"):
        help_text = " ".join(runner.invoke(app, [name, "--help"], terminal_width=200).stdout.split())
        assert "with --output FILE, nothing on standard output either" in help_text, name
