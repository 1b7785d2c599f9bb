"""Issue 26: shell completion (``uqeval --install-completion``), answered by the real entry point."""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner

from uqeval.cli import app

runner = CliRunner()


def _complete(words: str, cword: int) -> list[str]:
    env = {**os.environ, "_UQEVAL_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    code = "import sys; sys.argv[0] = 'uqeval'; from uqeval.cli import main; main()"
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_root_help_offers_completion_and_the_script_names_uqeval():
    helped = runner.invoke(app, ["--help"])
    assert "--install-completion" in helped.output and "--show-completion" in helped.output
    shown = runner.invoke(app, ["--show-completion", "bash"])
    assert shown.exit_code == 0, shown.output
    assert "_UQEVAL_COMPLETE" in shown.output and "complete " in shown.output


def test_the_shell_gets_commands_and_options():
    assert _complete("uqeval sc", 1) == ["score", "schema"]
    assert _complete("uqeval sco", 1) == ["score"]
    assert set(_complete("uqeval c", 1)) == {"coverage", "check", "compare", "config"}
    assert "--num-bins" in _complete("uqeval score --nu", 2)
