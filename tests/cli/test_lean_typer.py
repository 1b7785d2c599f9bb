"""uqeval.cli._lean: option values coerced without pydantic are exactly typer's own coercion.

For every option of every command and a set of awkward values, whatever the fast path returns
must equal what typer's pydantic adapter returns; values it hands over are coerced by typer.
"""

from enum import Enum

import pytest

from uqeval.cli import app
from uqeval.cli._lean import _MISS, fast_value

typer_coercion = pytest.importorskip("typer._coercion")
import typer  # noqa: E402

VALUES = {
    "str": ["abc", "", " x ", "0.5", "a\nb", "é"],
    "path": ["sample_data/gaussian.parquet", "sample_data", "no/such/file.csv", "", "-", "~/x", " a "],
    "int": [
        "0",
        "5",
        "-3",
        "007",
        "1e3",
        "1.5",
        " 5",
        "+5",
        "99999999999999999999",
        "1_000",
        "",
        "x",
        "1",
        "2",
        "100000",
        "100001",
        "10000",
        "10001",
        "256",
        "257",
        "29",
        "30",
        "1200",
        "1201",
    ],
    "float": [
        "0.5",
        "1",
        "-2.5e-3",
        "1e400",
        "nan",
        "inf",
        ".5",
        "5.",
        "0x10",
        "1_0.5",
        "",
        "0",
        "1.0",
        "1.00000000000000000001",
        "2.2250738585072014e-308",
    ],
}


def _values(annotation):
    if annotation is str:
        return VALUES["str"]
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        members = list(annotation)
        return [m.value for m in members] + [m.value.upper() for m in members] + members + ["zzz", ""]
    name = getattr(annotation, "__name__", "")
    if name == "Path":
        return VALUES["path"]
    if annotation in (int, float):
        return VALUES[name]
    if getattr(annotation, "__origin__", None) is list:
        inner = _values(annotation.__args__[0])
        return [tuple(inner[:2]), tuple(inner[-2:]), ()]
    return []


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - compared, not swallowed
        return type(exc).__name__, str(exc)


def test_fast_coercion_equals_typer_coercion_on_every_option():
    command = typer.main.get_command(app)
    checked = 0
    for name, sub in command.commands.items():
        ctx = sub.context_class(sub)
        for param in sub.params:
            desc = param.type_descriptor
            if desc.annotation is bool or desc.file_annotation is not None:
                continue
            original = typer_coercion.build_runtime_param(desc)
            for value in _values(desc.annotation):
                fast = fast_value(desc.annotation, desc.parameter_info, value, ctx, param)
                if fast is _MISS:
                    continue
                kind, expected = _outcome(lambda: original._coerce_value(value, param=param, ctx=ctx))
                assert kind == "ok", (name, param.name, value, expected)
                assert type(fast) is type(expected) and fast == expected, (
                    name,
                    param.name,
                    value,
                    fast,
                    expected,
                )
                checked += 1
    assert checked > 300  # the fast path is taken for most values


def test_score_runs_without_pydantic(tmp_path):
    """The lean path is what `uqeval score` uses: typer never builds a pydantic adapter for it."""
    import subprocess
    import sys

    from ..conftest import ROOT

    code = (
        "import sys, runpy\n"
        f"sys.argv = ['uqeval', 'score', 'sample_data/gaussian.parquet', '--format', 'json', '--seed', '3', "
        f"'--levels', '0.5,0.9', '--num-bins', '50', '--output', {str(tmp_path / 'o.json')!r}]\n"
        "try:\n    runpy.run_module('uqeval', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('PYDANTIC', 'pydantic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "PYDANTIC False"
