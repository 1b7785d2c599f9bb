"""The one exception hierarchy of uqeval.

Core code raises these; only :mod:`uqeval.cli` catches them, prints one line
and exits with :attr:`UqevalError.exit_code`.
"""

from __future__ import annotations

import contextlib
from typing import Iterator


class UqevalError(Exception):
    """Base class of every error uqeval reports to a user."""

    exit_code: int = 3


class InputError(UqevalError, ValueError):
    """Bad data: NaN, non-positive std, off-simplex probabilities, malformed files.

    The message says what, where (file, column, first row), what was found and
    how to fix it.
    """

    exit_code = 3


class SchemaError(InputError):
    """Missing, ambiguous or non-numeric columns, unsupported file formats."""

    exit_code = 3


class UsageError(UqevalError, ValueError):
    """A command-line option combination that cannot work."""

    exit_code = 2


class GateFailure(UqevalError):
    """A CI rule failed (``uqeval check``)."""

    exit_code = 1


@contextlib.contextmanager
def naming(path: object) -> Iterator[None]:
    """Prefix ``path: `` to an :class:`InputError` raised inside that does not name the file yet.

    For core code that knows arrays, not files (fitting a recalibrator, drawing a plot).
    """
    try:
        yield
    except InputError as exc:
        if str(path) in str(exc):
            raise
        raise type(exc)(f"{path}: {exc}") from None
