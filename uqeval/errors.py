"""The one exception hierarchy of uqeval.

Core code raises these; only :mod:`uqeval.cli` catches them, prints one line
and exits with :attr:`UqevalError.exit_code`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class UqevalError(Exception):
    """Base class of every error uqeval reports to a user.

    The message says what is wrong with the data. ``fix`` optionally names the setting that
    would fix it (``"nan_policy"``, ``"targets"``, ``"fix_crossing"``, ``"renormalize"``,
    ``"logits"``); the caller's edge phrases it: the CLI as a flag (``--nan-policy omit``),
    the Python API as an argument.
    """

    exit_code: int = 3

    def __init__(self, message: str = "", *, fix: str | None = None) -> None:
        super().__init__(message)
        self.fix = fix

    def at(self, where: str) -> UqevalError:
        """The same error with its message prefixed by where it happened (a file name)."""
        return type(self)(f"{where}: {self}", fix=self.fix)


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
