"""Strict parsing of the small JSON and TOML documents uqeval reads (saved models, baselines, rules, configs).

Strict means: ``NaN``/``Infinity`` and numbers that overflow to infinity (``1e999``)
are refused in JSON, and nesting deeper than :data:`MAX_DEPTH` is an error instead of a
``RecursionError``. Errors are :class:`InputError` naming the source file. ``tomllib`` is the standard library's on Python >= 3.11
and its backport ``tomli`` on 3.10.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable
from typing import Any

from .errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10: the backport tomli (a conditional dependency)
    import tomli as tomllib

#: Deepest nesting of objects/arrays/tables accepted (uqeval's own files stay below 8).
MAX_DEPTH = 32


def _finite_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise ValueError(f"number {text} overflows to infinity")
    return v


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name}")


def depth(obj: Any) -> int:
    """Nesting depth of dicts/lists, computed without recursion."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        node, d = stack.pop()
        children: Iterable[Any]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, d)
        if d > MAX_DEPTH:
            break
        stack.extend((c, d + 1) for c in children)
    return deepest


def _check_depth(obj: Any, source: str) -> Any:
    if depth(obj) > MAX_DEPTH:
        raise InputError(
            f"{source}: nested more than {MAX_DEPTH} levels deep; this is not a file uqeval wrote"
        )
    return obj


def loads_json(text: str | bytes, source: str) -> Any:
    """Parse JSON strictly (see the module docstring)."""
    try:
        obj = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise InputError(f"{source}: nested too deeply; this is not a file uqeval wrote") from None
    except (ValueError, TypeError) as exc:  # our hooks, huge integers, bytes that are not UTF-8
        why = str(exc).strip("'\" ").splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{source}: invalid JSON: {why}") from None
    return _check_depth(obj, source)


def loads_toml(text: str, source: str) -> dict[str, Any]:
    """Parse TOML; deep nesting is an error naming ``source``. ``TOMLDecodeError`` is left to the caller."""
    try:
        doc = tomllib.loads(text)
    except RecursionError:
        raise InputError(f"{source}: nested too deeply") from None
    return _check_depth(doc, source)
