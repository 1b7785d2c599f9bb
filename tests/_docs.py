"""Run the code blocks of the README and the documentation pages (tests/test_docs_examples.py,
tests/test_readme_examples.py).

A page's blocks run in order: ```` ```python ```` blocks in one namespace; ```` ```bash ```` blocks made of
plain ``uqeval ...`` lines through the Typer app in this process, other shell blocks with ``bash -euo
pipefail`` and an ``uqeval`` on the PATH that is ``python -m uqeval`` of the running interpreter; blocks with
a ``title="FILE"`` (a rules file, say) are written to FILE first.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

FENCE = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)


def blocks(path: Path) -> list[tuple[str, str, str]]:
    """(language, attributes, code) of every fenced block of a Markdown file, in order."""
    return FENCE.findall(path.read_text(encoding="utf-8"))


def title(attrs: str) -> str | None:
    found = re.search(r'title="([^"]+)"', attrs)
    return found.group(1) if found else None


def shim(workdir: Path) -> dict[str, str]:
    """An environment whose ``uqeval`` is ``python -m uqeval`` of this interpreter (installed or not)."""
    bin_dir = workdir / ".bin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "uqeval"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m uqeval "$@"\n')
    exe.chmod(0o755)
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", COLUMNS="120")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    env.pop("UQEVAL_CONFIG", None)
    return env


@contextmanager
def chdir(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


SIMPLE = re.compile(r"^uqeval [^|;&<>$`()!]*?(?: > ([\w./-]+))?\s*(?:#.*)?$")


def _in_process(code: str) -> list[tuple[list[str], str | None]] | None:
    """``[(argv, stdout file)]`` when every line of ``code`` is a plain ``uqeval ...`` command (optionally
    ``> FILE``), else None: those run in this process, through the same Typer app (no interpreter start-up
    per command); anything else (``if``, pipes, ``||``) runs in bash."""
    import shlex

    lines = [line for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    out = []
    for line in lines:
        found = SIMPLE.match(line)
        if found is None:
            return None
        command = line[: found.start(1) - 3] if found.group(1) else line
        out.append((shlex.split(command, comments=True)[1:], found.group(1)))
    return out


def run_bash(code: str, workdir: Path, env: dict[str, str], where: str) -> str:
    simple = _in_process(code)
    if simple is not None:
        from typer.testing import CliRunner

        from uqeval.cli import app

        runner = CliRunner()
        output = []
        with chdir(workdir):
            for argv, redirect in simple:
                result = runner.invoke(app, argv, env={"COLUMNS": "120"})
                assert result.exit_code == 0, (
                    f"{where}: uqeval {' '.join(argv)}: exit {result.exit_code}\n{result.output[-3000:]}"
                )
                if redirect:
                    (workdir / redirect).write_text(result.stdout)
                output.append(result.output)
        return "".join(output)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code], cwd=workdir, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, (
        f"{where}: exit {proc.returncode}\n{code}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    )
    return proc.stdout


def run_page(path: Path, workdir: Path, languages=("python", "bash"), namespace: dict | None = None) -> dict:
    """Run the blocks of ``path`` in ``workdir``; returns the Python namespace."""
    namespace = {} if namespace is None else namespace
    env: dict[str, str] | None = None  # the shim is written only where a bash block runs
    for i, (lang, attrs, code) in enumerate(blocks(path)):
        where = f"{path.name} block {i + 1} ({lang})"
        name = title(attrs)
        if name is not None:
            (workdir / name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / name).write_text(code, encoding="utf-8")
        elif lang == "python" and "python" in languages:
            with chdir(workdir):
                exec(compile(code, where, "exec"), namespace)  # noqa: S102 - our own documentation
        elif lang == "bash" and "bash" in languages:
            env = env or shim(workdir)
            run_bash(code, workdir, env, where)
    return namespace
