"""Typer's option coercion without pydantic for the plain option types uqeval declares.

Typer >= 0.2x coerces every option value through a pydantic ``TypeAdapter``, built when the
command runs: importing pydantic and building ~40 adapters costs ~80 ms of every ``uqeval``
process (``score`` on 1e4 rows takes ~0.4 s in all). :func:`install` wraps typer's
``build_runtime_param`` so that a value of an option typed ``str``, an ``Enum``, ``Path``,
``int``/``float`` (given as plain decimal text) or a list of those is coerced by the same typer
functions the adapters call (``coerce_cli_choice``, ``coerce_cli_path``) or by the plain
conversion pydantic performs, and anything else -- and every value these fast paths would reject --
goes to typer's own adapter, so results and error messages are typer's
(``tests/cli/test_lean_typer.py`` compares the two on every option of every command).

Private internals, so typer is capped (issue 29): pyproject.toml allows ``typer>=0.15.4,<0.30``.
Measured (CPU seconds of whole processes, typer 0.29.2, best of 7-9 on a shared 2-core machine):
``uqeval --help`` 0.085 with this module and 0.088 without (help builds no adapter: the public route
meets the 0.15 s budget either way), but ``uqeval score`` of 1e4 Gaussian rows 0.215 with it and
0.342 without (pydantic imported, ~40 adapters built), which would leave ``score``'s 0.5 s budget
(~0.4 s wall with it) no margin. Typer offers no public switch for its coercion, so the choice was
to keep this wrapper and cap typer at the releases it is tested on: 0.15.4-0.28 have no
``typer._coercion`` (``install`` is a no-op, click coerces, no pydantic at all) and 0.29.0-0.29.2
pass ``test_lean_typer.py``; on a release that renames the internals ``install`` stays a no-op
(correct, ~0.1 s slower). To lift the cap: run ``tests/cli/test_lean_typer.py`` on the new release
and raise ``<0.30`` in pyproject.toml.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Any

_MISS = object()
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def fast_value(annotation: Any, info: Any, value: Any, ctx: Any = None, param: Any = None) -> Any:
    """``value`` coerced as typer's adapter for ``annotation`` would, or ``_MISS`` when that needs the adapter."""
    from typer._param_types import coerce_cli_choice, coerce_cli_path

    if info.parser is not None:
        return _MISS
    if annotation is str:
        return value if type(value) is str else _MISS
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        try:
            return coerce_cli_choice(
                value, choices=tuple(annotation), case_sensitive=info.case_sensitive, ctx=ctx
            )
        except Exception:  # the adapter raises typer's own error for it
            return _MISS
    if annotation is Path and info.path_type is None:
        if type(value) is not str:
            return _MISS
        try:
            return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
        except Exception:
            return _MISS
    if annotation in (int, float) and type(value) is str and not info.clamp:
        pattern = _INT if annotation is int else _FLOAT
        if pattern.fullmatch(value):
            number = annotation(value)
            if (info.min is None or number >= info.min) and (info.max is None or number <= info.max):
                return number
        return _MISS
    origin = getattr(annotation, "__origin__", None)
    if origin is list and isinstance(value, (list, tuple)):
        (item_type,) = annotation.__args__
        items = [fast_value(item_type, info, item, ctx, param) for item in value]
        return _MISS if any(item is _MISS for item in items) else items
    return _MISS


def install() -> None:
    """Wrap typer's ``build_runtime_param`` (once); a no-op on typer versions without it (click-based ones)."""
    try:
        from dataclasses import dataclass

        import typer.core as core
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer._param_types import coerce_cli_choice, coerce_cli_path  # noqa: F401 - present on this typer
    except ImportError:  # pragma: no cover - typer without pydantic coercion
        return
    if getattr(core.build_runtime_param, "_uqeval_lean", False):
        return

    @dataclass(frozen=True)
    class LeanRuntimeParam(RuntimeParam):
        descriptor: Any = None

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            out = fast_value(self.annotation, self.parameter_info, value, ctx, param)
            if out is not _MISS:
                return out
            full = self.__dict__.get("_full")
            if full is None:
                full = build_runtime_param(self.descriptor)
                object.__setattr__(self, "_full", full)
            return full._coerce_value(value, param=param, ctx=ctx)

    def lean_build(descriptor):
        if descriptor.file_annotation is not None:
            return build_runtime_param(descriptor)
        return LeanRuntimeParam(
            annotation=descriptor.annotation, parameter_info=descriptor.parameter_info, descriptor=descriptor
        )

    lean_build._uqeval_lean = True  # type: ignore[attr-defined]
    core.build_runtime_param = lean_build
