"""The CSV dialect read now: the field separator and the decimal mark (issue 40: ``--sep``/``--decimal``,
``[input] sep``/``decimal``, ``sep=``/``decimal=``).

The readers (:mod:`uqeval.io.readers`, :mod:`uqeval.io.source`) ask :func:`csv_dialect`; a front end sets it
for a block (:func:`reading_csv`) or, on the command line, for the run (:func:`set_csv_dialect` with
``process=True``, inside the run's :func:`reading_csv` that restores the process's afterwards). Standard
library only: the command line's error edge imports it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from contextvars import ContextVar

#: ``(sep, decimal)`` set for this context; None: the process's (:data:`_VARIABLES`, which the command line's
#: run sets for its threads and worker processes), default ``(",", ".")``
_DIALECT: ContextVar[tuple[str, str] | None] = ContextVar("uqeval_csv_dialect", default=None)
_VARIABLES = ("UQEVAL_CSV_SEP", "UQEVAL_CSV_DECIMAL")


def csv_dialect() -> tuple[str, str]:
    """The field separator and decimal mark of the CSV files read now (default ``(",", ".")``)."""
    given = _DIALECT.get()
    if given is not None:
        return given
    sep, decimal = (os.environ.get(v) for v in _VARIABLES)
    return sep or ",", decimal or "."


def set_csv_dialect(sep: str | None, decimal: str | None, process: bool = False) -> None:
    """Read CSV files with ``sep`` and ``decimal`` (None: ``","`` (``";"`` with ``decimal=","``), ``"."``)
    from now on in this context
    (``process``: in the process, its threads and the processes it starts too); call it inside
    :func:`reading_csv`, which restores what was before."""
    dialect = (sep or (";" if decimal == "," else ","), decimal or ".")  # decimal commas: fields split by ;
    _DIALECT.set(dialect)
    if process:
        os.environ.update(zip(_VARIABLES, dialect))


@contextlib.contextmanager
def reading_csv(sep: str | None = None, decimal: str | None = None, process: bool = False) -> Iterator[None]:
    """Read CSV files with the field separator ``sep`` and the decimal mark ``decimal`` inside this block;
    the dialect before it (of the context and of the process) is restored after it."""
    token = _DIALECT.set(_DIALECT.get())
    before = [os.environ.get(v) for v in _VARIABLES]
    try:
        set_csv_dialect(sep, decimal, process)
        yield
    finally:
        _DIALECT.reset(token)
        for name, value in zip(_VARIABLES, before):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
