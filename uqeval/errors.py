"""The one exception hierarchy of uqeval, and the one voice its messages speak in.

Core code raises these; only :mod:`uqeval.cli` catches them, prints one line and exits with
:attr:`UqevalError.exit_code`. A message names an option through :func:`option` and carries the setting
that fixes it as :attr:`UqevalError.fix`; both are spelled for the *front end* reading the message, the
command line (``--mean COLUMN``) or Python (``mean='COLUMN'``). Python is the default: a library call, a
notebook, a container built directly. The command line says so for its run (:func:`front_end` with
``process=True``), which its threads and the worker processes it starts see too.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar

from .names import cli_flag, keyword

#: The front end of this call (set by :func:`front_end`); None: the process's (``UQEVAL_FRONT_END``,
#: default ``"python"``), which the command line sets for its run so that threads and spawned workers
#: (figure workers, a local Dask cluster) inherit it.
_FRONT_END: ContextVar[str | None] = ContextVar("uqeval_front_end", default=None)
_PROCESS_VARIABLE = "UQEVAL_FRONT_END"


def voice() -> str:
    """The front end whose spelling messages use now: ``"cli"`` or ``"python"``."""
    return _FRONT_END.get() or os.environ.get(_PROCESS_VARIABLE, "python")


def option(name: str, value: object = None) -> str:
    """How the running front end spells option ``name`` (with a placeholder for its ``value``).

    The one place that phrases options: core messages call ``option("mean", "COLUMN")`` and read
    ``--mean COLUMN`` on the command line, ``mean='COLUMN'`` from the Python API
    (:func:`front_end`). Without a value: ``--seed`` or ``seed=``.
    """
    if voice() == "python":
        kw = keyword(name)
        return f"{kw}={value!r}" if value is not None else f"{kw}="
    flag = cli_flag(name)
    return f"{flag} {value}" if value is not None else flag


#: Fixes that are more than one option, as each front end spells them
_PHRASES = {
    "cli": {
        "accrue": "`uqeval recalibrate FILE --method accrue`",
        "join_ids": "pass --id COLUMN to join the files on an id column",
        "summary": "a summary written by `uqeval score PREDICTIONS --output summary.json`",
    },
    "python": {
        "accrue": "the ACCRUE recalibration (uqeval.recalibration.accrue)",
        "join_ids": "pass ids= (each model's row ids) to join the models' rows on them",
        "summary": "the document of uqeval.evaluate(...).to_json()",
    },
}


def phrase(name: str) -> str:
    """How the running front end spells a fix that is more than one option (``"accrue"``: fit a std to
    point predictions; ``"join_ids"``: join the models' rows on ids; ``"summary"``: where a score summary comes from)."""
    return _PHRASES[voice()][name]


def labelled(name: str, what: str | None = None) -> str:
    """``what`` (default: the option's name) with the option that sets it: ``seed (--seed)`` on the
    command line; from Python ``seed`` where the argument is ``what`` itself, else
    ``coverage level (levels=)``."""
    what = name if what is None else what
    if voice() == "python" and keyword(name) == what:
        return what
    return f"{what} ({option(name)})"


@contextlib.contextmanager
def front_end(name: str, process: bool = False) -> Iterator[None]:
    """Phrase the options named in errors raised (and read) inside this block for ``name`` (``"cli"``,
    ``"python"``); ``process``: for the whole process while the block runs, its threads and the processes
    it starts included (the command line's run)."""
    before = os.environ.get(_PROCESS_VARIABLE)
    if process:
        os.environ[_PROCESS_VARIABLE] = name
    token = _FRONT_END.set(name)
    try:
        yield
    finally:
        _FRONT_END.reset(token)
        if process and before is None:
            os.environ.pop(_PROCESS_VARIABLE, None)
        elif process and before is not None:
            os.environ[_PROCESS_VARIABLE] = before


#: The setting that fixes an error (:attr:`UqevalError.fix`), as each front end spells it: the one table
FIXES = {
    "nan_policy": {
        "cli": "; clean the data or pass --nan-policy omit to drop those rows",
        "python": "; drop those rows first, or pass nan_policy='omit' (uqeval.evaluate drops them)",
    },
    "targets": {"cli": " (pass --y COLUMN)", "python": " (pass y_true)"},
    "fix_crossing": {
        "cli": "; fix the model or pass --fix-crossing to sort each row",
        "python": "; fix the model or pass fix_crossing=True to sort each row",
    },
    "renormalize": {
        "cli": "; pass --renormalize to rescale small drift (or name them with --logits if they are logits)",
        "python": "; pass renormalize=True to rescale small drift (or logits= if they are logits)",
    },
    "logits": {
        "cli": " or name them with --logits COLS if the columns are logits",
        "python": " or pass logits= if the values are logits",
    },
}


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

    @property
    def message(self) -> str:
        """The message without its fix."""
        return str(self.args[0]) if self.args else ""

    def __str__(self) -> str:
        """The message and, where there is one, the setting that fixes it, spelled for the front end that
        reads it (:func:`voice`: the command line's one error line, or a Python traceback)."""
        return self.message + FIXES.get(self.fix or "", {}).get(voice(), "")

    def at(self, where: str) -> UqevalError:
        """The same error with its message prefixed by where it happened (a file name)."""
        return type(self)(f"{where}: {self.message}", fix=self.fix)


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
        raise exc.at(str(path)) from None
