"""Issue 40 (the command line): --help fits 80 columns, long choice lists are summarised, ranges are shown
where they mean something, the top level gives each command's first sentence whole, every enumerated
option names the close choice of a misspelt value, and the recalibrate table's title does not wrap."""

import pytest
import typer
from typer.testing import CliRunner

from uqeval.cli import COMMANDS, app
from uqeval.cli.panels import _choices

runner = CliRunner()


def _commands():
    return typer.main.get_command(app).commands  # type: ignore[attr-defined]


def _help(*args: str) -> str:
    result = runner.invoke(app, [*args, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("command", ["", *COMMANDS, "config list", "config show"])
def test_help_fits_80_columns(command):
    text = _help(*command.split())
    long = [line for line in text.splitlines() if len(line) > 80]
    assert not long, long
    assert "9223372036854775807" not in text  # --seed: no range that means nothing
    assert "it was a switch" not in text


def test_long_choice_lists_are_summarised_in_the_help_text():
    text = _help("plot")
    assert "--kind <choice>" in text
    assert "One of: predictions, intervals, calibration" in " ".join(text.split())
    assert "--representation <choice>" in _help("score")
    assert "--nan-policy <raise|omit>" in _help("score")  # short lists stay where they are


def test_top_level_help_gives_each_command_its_first_sentence_whole():
    text = _help()
    commands = text.split("Commands:", 1)[1]
    assert "..." not in commands
    for name in COMMANDS:
        command = _commands()[name]
        first = command.get_short_help_str(limit=10_000)
        assert " ".join(first.split()) in " ".join(commands.split()), name


def _enumerated():
    for name, command in _commands().items():
        for param in getattr(command, "params", ()):
            choices = _choices(param)
            if choices and param.opts[0].startswith("-"):
                yield name, param.opts[-1], choices


@pytest.mark.parametrize("command, flag, choices", list(_enumerated()), ids=lambda v: str(v)[:30])
def test_every_enumerated_option_names_the_close_choice(command, flag, choices):
    for choice in choices[:3] + choices[-1:]:
        result = runner.invoke(app, [command, flag, choice + "x", "in.csv"])
        assert result.exit_code == 2, result.output
        assert f"{choice + 'x'!r} is not" in result.stderr
        assert "did you mean" in result.stderr and repr(choice) in result.stderr, result.stderr
        assert "Value error" not in result.stderr


def test_plot_kind_calibraton():
    result = runner.invoke(app, ["plot", "in.csv", "--kind", "calibraton", "-o", "x.png"])
    assert result.exit_code == 2
    assert "'calibraton' is not a choice; did you mean 'calibration'?" in result.stderr


def test_the_recalibrate_title_is_one_line(tmp_path, monkeypatch):
    import numpy as np
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    pd.DataFrame({"y": rng.normal(size=200), "mean": 0.0, "std": 2.0}).to_csv("cal.csv", index=False)
    result = runner.invoke(
        app, ["recalibrate", "cal.csv", "-m", "std-scaling"], env={"COLUMNS": "80"}, terminal_width=80
    )
    assert result.exit_code == 0, result.output
    # the title over a table of two narrow columns: one line, not wrapped to the table's width
    assert result.stdout.splitlines()[0].strip() == "recalibrate --method std-scaling (fitted on cal.csv)"
