"""The Python API's edge: errors phrased for a Python caller (keyword arguments, not CLI flags).

:func:`python_api` wraps every public function of :mod:`uqeval.api` and :mod:`uqeval.functions`:
inside, :func:`uqeval.errors.option` spells options as keyword arguments (``mean=``) whatever the
process's front end (:func:`uqeval.errors.voice`); an error's fix is spelled when it is read
(:data:`uqeval.errors.FIXES`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .errors import front_end

F = TypeVar("F", bound=Callable[..., Any])


def python_api(fn: F) -> F:
    """Run ``fn`` with Python phrasing of options and fixes (see the module docstring)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with front_end("python"):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
