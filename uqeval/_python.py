"""The Python API's edge: errors phrased for a Python caller (keyword arguments, not CLI flags).

:func:`python_api` wraps every public function of :mod:`uqeval.api` and :mod:`uqeval.functions`:
inside, :func:`uqeval.errors.option` spells options as keyword arguments (``mean=``), and an error's
:attr:`~uqeval.errors.UqevalError.fix` is phrased from :data:`PYTHON_FIXES`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import UqevalError, front_end

F = TypeVar("F", bound=Callable[..., Any])

#: How an error's fix (:attr:`uqeval.errors.UqevalError.fix`) is phrased for a Python caller.
PYTHON_FIXES = {
    "nan_policy": "; drop those rows first, or pass nan_policy='omit'",
    "targets": " (pass y_true)",
    "fix_crossing": "; fix the model or pass fix_crossing=True to sort each row",
    "renormalize": "; pass renormalize=True to rescale small drift (or logits= if they are logits)",
    "logits": " or pass logits= if the values are logits",
}


#: The fixes phrased differently for a container built directly (``uqeval.Point(...)``: no nan_policy there)
CONTAINER_FIXES = {
    **PYTHON_FIXES,
    "nan_policy": "; drop those rows first (uqeval.evaluate(..., nan_policy='omit') drops them)",
}


def python_error(exc: UqevalError, fixes: dict[str, str] = PYTHON_FIXES) -> UqevalError:
    """``exc`` with its fix phrased for Python (the same error when it has none)."""
    hint = fixes.get(exc.fix or "", "")
    return type(exc)(f"{exc}{hint}") if hint else exc


def python_api(fn: F) -> F:
    """Run ``fn`` with Python phrasing of options and fixes (see the module docstring)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with front_end("python"):
            try:
                return fn(*args, **kwargs)
            except UqevalError as exc:
                raise python_error(exc) from None

    return wrapper  # type: ignore[return-value]
