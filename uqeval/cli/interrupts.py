"""SIGINT and SIGTERM in the ``uqeval`` process: an interrupted run exits 130 with one line, in every
phase of the run, and a run whose outcome is settled is not interrupted any more.

:func:`install` (called by :func:`uqeval.cli.main`) makes SIGINT raise ``KeyboardInterrupt`` through
:func:`on_interrupt`; :func:`uqeval.cli.common.handle_errors` turns that into ``interrupted`` and exit
130, and does the same with SIGTERM while a command runs. Two holes of Python's own handling are closed:

* An interrupt raised inside a destructor or a weakref callback (the garbage collector runs them
  between any two bytecodes) is not raised to the command: Python prints ``Exception ignored in:
  ... KeyboardInterrupt`` and goes on, and the run finished as if never interrupted. Here such an
  interrupt is not printed but kept (:func:`_unraisable`), and :func:`check` raises it before the
  outputs are written: the run ends interrupted, once its work is done.
* Once the outcome is settled (the outputs written, or a failure or an interrupt being reported:
  :func:`settle`), SIGINT is ignored until the process exits: an interrupt in the exit path landed
  in ``threading._shutdown`` or an atexit hook as ``Exception ignored in: ...``, or, once Python had
  put the default action back while finalizing, ended the process by the signal. An interrupted run
  exits without finalizing the interpreter (:func:`exit_now`).

A library caller (or ``typer.testing.CliRunner``) keeps its own handlers: only the state below
changes there.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer


class _Run:
    """Where the running command stands."""

    #: the command's outcome is decided: its outputs are written, or its failure is being reported
    settled = False
    #: an interrupt arrived (raised, or swallowed by a destructor) and the run is not settled
    pending = False
    #: "interrupted" was printed
    reported = False


def install() -> None:
    """In the ``uqeval`` process, before anything else: SIGINT -> :func:`on_interrupt`, and an interrupt
    swallowed by a destructor kept (:func:`_unraisable`)."""
    import signal

    signal.signal(signal.SIGINT, on_interrupt)
    sys.unraisablehook = _unraisable


def start() -> None:
    """A command starts (in a process that may have run others: CliRunner). An interrupt a destructor
    swallowed before it (while importing or parsing) stays pending."""
    if _Run.settled:
        _Run.settled = _Run.pending = _Run.reported = False


def on_interrupt(signum, frame) -> None:  # noqa: ARG001
    """SIGINT (and SIGTERM while a command runs): ``KeyboardInterrupt`` until the outcome is settled."""
    if not _Run.settled:
        _Run.pending = True
        raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    """``sys.unraisablehook`` of the ``uqeval`` process: an interrupt that a destructor or callback
    swallowed is not printed and stays pending (:func:`check`); anything else as Python prints it.

    (Raising it again at once, ``_thread.interrupt_main()``, ran the handler inside this hook, where
    Python swallowed it once more.)"""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        _Run.pending = _Run.pending or not _Run.settled
        return
    sys.__unraisablehook__(unraisable)


def caused(exc: BaseException) -> bool:
    """True when an interrupt is behind ``exc``: a ``KeyboardInterrupt`` raised inside a C extension's import
    comes out as ``ImportError: initialization failed`` caused by it (1 run in ~200 interrupted at start,
    while matplotlib imported), and a wrapper may raise its own error from one."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        if isinstance(cur, KeyboardInterrupt):
            return True
        seen.add(id(cur))
        cur = cur.__cause__ or cur.__context__
    return False


def check() -> None:
    """Raise ``KeyboardInterrupt`` if an interrupt arrived and was swallowed on its way (before the
    outputs are written)."""
    if _Run.pending and not _Run.settled:
        raise KeyboardInterrupt


def settle() -> None:
    """The outcome is decided: an interrupt changes nothing any more. In the ``uqeval`` process SIGINT
    is ignored from now on (Python puts a Python-level handler back to the default action while it
    finalizes, so SIGINT would then end the process by the signal)."""
    import signal
    import threading

    _Run.settled = True
    if (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is on_interrupt
    ):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def exit_now(code: int) -> NoReturn:
    """End the ``uqeval`` process with ``code`` now: the atexit hooks run (multiprocessing unlinks its
    semaphores there, or its resource tracker warns of leaked ones), the streams are flushed, and the
    interpreter is not finalized. An interrupted run exits so (its outputs are discarded and its
    children ended already), as finalizing after an interrupt went wrong: CPython marks an interrupt
    raised inside exec() of a string (dataclasses make their methods so, while uqeval imports) as
    unhandled even once handled, and ``python -m uqeval`` then ended by the signal (exit -2, 1 run in
    ~15 interrupted while importing); and 1 run in ~200 aborted while finalizing (``Fatal Python
    error: PyThreadState_Get``, exit -6, seen before this module too)."""
    import atexit
    import os

    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def report() -> None:
    """The one line of an interrupted run (printed once); the outcome is settled."""
    settle()
    if not _Run.reported:
        _Run.reported = True
        typer.echo("interrupted", err=True)
