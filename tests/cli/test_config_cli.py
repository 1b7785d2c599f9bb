"""uqeval config list / show: the example files shipped inside the package."""

from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.config import Settings, bundled_config, make_settings
from uqeval.strict import tomllib

from ..conftest import ROOT

runner = CliRunner()


def test_bundled_files_equal_the_top_level_configs():
    """uqeval/configs/*.toml (installed) and configs/*.toml (the repository's examples) are the same files."""
    bundled = sorted(p.name for p in (ROOT / "uqeval" / "configs").glob("*.toml"))
    top = sorted(p.name for p in (ROOT / "configs").glob("*.toml"))
    assert bundled == top == ["ci.toml", "default.toml"]
    for name in top:
        assert (ROOT / "uqeval" / "configs" / name).read_bytes() == (ROOT / "configs" / name).read_bytes(), (
            name
        )


def test_config_list_names_every_bundled_file():
    result = runner.invoke(app, ["config", "list"])
    assert result.exit_code == 0, result.output
    names = [line.split()[0] for line in result.output.splitlines()]
    assert names == ["ci", "default"]


def test_config_show_default_prints_the_defaults(tmp_path):
    result = runner.invoke(app, ["config", "show", "default"])
    assert result.exit_code == 0, result.output
    assert result.output == (ROOT / "configs" / "default.toml").read_text()
    copy = tmp_path / "my.toml"
    copy.write_text(result.output)
    assert make_settings(copy) == Settings()  # a valid --config file spelling out the defaults


def test_config_show_ci_is_a_rules_file():
    result = runner.invoke(app, ["config", "show", "ci.toml"])
    assert result.exit_code == 0, result.output
    assert "rules" in tomllib.loads(result.output)
    assert result.output == bundled_config("ci")


def test_config_show_unknown_name_is_a_usage_error():
    result = runner.invoke(app, ["config", "show", "nope"])
    assert result.exit_code == 2
    assert "no bundled config 'nope'" in result.output and "ci, default" in result.output


def test_config_help_points_at_config_show():
    result = runner.invoke(app, ["score", "--help"])
    assert result.exit_code == 0, result.output
    assert "uqeval config show default" in " ".join(result.output.split())
