"""The house (issue 36): data flows one way, no folder imports a folder that imports it back, no import
runs up a floor. The floors are the ones of docs/architecture.md; a new top-level module or folder must be
placed on one here (the test fails until it is)."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "uqeval"

#: bottom to top; a module may import its own floor and the floors below, never one above
FLOORS: list[set[str]] = [
    {"errors", "validation", "text", "strict", "_version", "_python", "_children", "vocabulary", "names"},
    {"metrics"},
    {"config", "predictions", "resample", "weights"},
    {"glossary", "catalogue"},
    {"io"},
    {"engine"},
    {"recalibration", "commands"},
    {"plots", "report"},
    {"functions", "api", "cli", "__main__", "__init__", "schemas", "configs"},
]
FLOOR = {room: i for i, rooms in enumerate(FLOORS) for room in rooms}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ("uqeval", *path.relative_to(PACKAGE).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _room(module: str) -> str:
    """The folder (or top-level module) a module lives in: ``uqeval.commands.compare.core`` -> commands."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


@functools.cache
def _imports() -> dict[str, set[str]]:
    """module -> the uqeval modules it imports (at module level or inside functions: both count)."""
    mods = _modules()
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in mods.items():
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                subs = [f"{base}.{a.name}" for a in node.names]
                targets = subs if all(s in mods for s in subs) else [base, *subs]
            else:
                continue
            for target in targets:
                while target and target not in mods:
                    target = target.rsplit(".", 1)[0] if "." in target else ""
                if target and target != module:
                    edges[module].add(target)
    return edges


def test_every_room_is_on_a_floor():
    rooms = {_room(m) for m in _modules()}
    assert rooms <= set(FLOOR), (
        f"place these on a floor of FLOORS (and docs/architecture.md): {rooms - set(FLOOR)}"
    )


def test_no_import_runs_up_a_floor():
    up = sorted(
        f"{m} -> {t}"
        for m, targets in _imports().items()
        for t in targets
        if FLOOR[_room(m)] < FLOOR[_room(t)] and _room(t) != "__init__"
    )
    assert not up, "imports from a lower floor to a higher one:\n" + "\n".join(up)


def test_no_two_rooms_import_each_other():
    graph: dict[str, set[str]] = defaultdict(set)
    for m, targets in _imports().items():
        for t in targets:
            if _room(m) != _room(t) and _room(t) != "__init__":
                graph[_room(m)].add(_room(t))
    # depth-first search for a cycle among rooms
    state: dict[str, int] = {}

    def cycle_from(room: str, path: list[str]) -> list[str] | None:
        state[room] = 1
        for nxt in sorted(graph[room]):
            if state.get(nxt) == 1:
                return [*path, room, nxt]
            if nxt not in state:
                found = cycle_from(nxt, [*path, room])
                if found:
                    return found
        state[room] = 2
        return None

    for room in sorted(graph):
        if room not in state:
            found = cycle_from(room, [])
            assert found is None, "rooms import each other: " + " -> ".join(found)


@pytest.mark.parametrize(
    "folder",
    sorted(
        p.parent.name for p in PACKAGE.glob("*/__init__.py") if p.parent.name not in ("schemas", "configs")
    ),
)
def test_each_folder_says_what_it_may_import(folder):
    doc = ast.get_docstring(ast.parse((PACKAGE / folder / "__init__.py").read_text(encoding="utf-8"))) or ""
    assert "may import" in doc.lower(), (
        f"uqeval/{folder}/__init__.py: say in its docstring what it may import"
    )


#: rooms that spell the command line's flags on purpose: the front end itself and the tables the voice reads
_FLAG_ROOMS = ("cli/", "errors.py", "names.py")


def _raised_strings(tree: ast.AST):
    """Every string constant inside the arguments of a ``raise X(...)`` (f-strings' literal parts too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            for arg in [*node.exc.args, *(k.value for k in node.exc.keywords)]:
                for part in ast.walk(arg):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str):
                        yield part.lineno, part.value


def test_core_error_messages_spell_no_flag():
    """Issue 36, one error voice: a message raised below the command line names an option through
    ``errors.option`` (``--weights`` on the command line, ``weights=`` from Python), never as a literal flag."""
    import re

    flag = re.compile(r"(?<![\w-])--[a-z][a-z-]+")
    found = [
        f"{path.relative_to(PACKAGE)}:{line}: {text!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if not str(path.relative_to(PACKAGE)).startswith(_FLAG_ROOMS)
        for line, text in _raised_strings(ast.parse(path.read_text(encoding="utf-8")))
        if flag.search(text)
    ]
    assert not found, "\n".join(found)
