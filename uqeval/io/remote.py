"""Bounded, interruptible waits on remote stores (``s3://``, ``gs://``, ...) and Dask schedulers.

Every remote open and every scheduler connect waits at most ``--connect-timeout`` seconds per
attempt (:data:`DEFAULT_TIMEOUT` unless given), with at most :data:`ATTEMPTS` attempts. A native
call that blocks (pyarrow's S3/GCS clients, a socket read) never returns to Python's signal
handler, so such calls run in a helper thread while the main thread waits in short, interruptible
steps: SIGINT/SIGTERM end the process within a fraction of a second whatever the native code does.
Imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..errors import InputError, option

#: seconds one connection attempt or one request may wait for an answer (``--connect-timeout``)
DEFAULT_TIMEOUT = 20.0
#: attempts at one remote request (pyarrow's S3 retry strategy; GCS retries for this many timeouts)
ATTEMPTS = 3

T = TypeVar("T")
_timeout = DEFAULT_TIMEOUT
_lock = threading.Lock()
_in_flight = 0  # helper threads still inside a call (a native call that ignored its deadline)
_END = object()


def timeout() -> float:
    """The seconds a connection attempt or request may wait (``--connect-timeout``)."""
    return _timeout


def deadline() -> float:
    """The longest a whole remote operation may take (every attempt, plus slack) before it is abandoned.

    curl counts a stalled request in whole seconds, and retries back off in between: a second more per
    attempt keeps this backstop behind pyarrow's own timeouts, whose message is the more precise one."""
    return (math.ceil(_timeout) + 1.0) * (ATTEMPTS + 1) + 5.0


@contextlib.contextmanager
def connect_timeout(seconds: float | None) -> Iterator[None]:
    """Within this block remote opens and scheduler connects wait at most ``seconds`` per attempt
    (None: keep the current value)."""
    global _timeout
    old = _timeout
    if seconds is not None:
        _timeout = float(seconds)
    try:
        yield
    finally:
        _timeout = old


def set_timeout(seconds: float) -> None:
    """Set ``--connect-timeout`` for this process (run on each Dask worker, which opens remote files
    itself)."""
    global _timeout
    _timeout = float(seconds)


def in_flight() -> bool:
    """A helper thread is still blocked in a native call (the CLI then exits without waiting for it)."""
    return _in_flight > 0


def call(what: str, fn: Callable[..., T], *args: Any, limit: float | None = None) -> T:
    """``fn(*args)`` run in a helper thread while this (main) thread waits interruptibly.

    ``limit``: seconds after which the call is abandoned and an :class:`InputError` naming ``what``
    is raised (None: no limit, only interruptible). Off the main thread (a Dask worker) the call
    runs directly."""
    global _in_flight
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    box: dict[str, Any] = {}

    def run() -> None:
        global _in_flight
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc
        finally:
            with _lock:
                _in_flight -= 1

    with _lock:
        _in_flight += 1
    worker = threading.Thread(target=run, name="uqeval-remote", daemon=True)
    worker.start()
    end = None if limit is None else time.monotonic() + limit
    while worker.is_alive():
        step = 0.1
        if end is not None:
            left = end - time.monotonic()
            if left <= 0:
                raise InputError(
                    f"{what}: no answer within {limit:g} s; check the address and the network, "
                    f"or give more time with {option('connect_timeout', 'SECONDS')}"
                )
            step = min(step, left)
        worker.join(step)
    if "error" in box:
        raise box.pop("error")
    return box["value"]


def iterate(what: str, items: Iterator[T]) -> Iterator[T]:
    """The items of ``items``, each fetched in a helper thread (remote reads stay interruptible)."""
    while True:
        item = call(what, next, items, _END)
        if item is _END:
            return
        yield item


def bounded(fs):
    """``fs`` (a pyarrow filesystem) with the connect/request timeouts and a retry limit applied."""
    import datetime

    import pyarrow.fs as pafs

    seconds = timeout()
    kind = type(fs).__name__
    if kind == "S3FileSystem":
        options = fs.__reduce__()[1][0]
        options.update(
            connect_timeout=seconds,
            request_timeout=seconds,
            retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=ATTEMPTS),
        )
        return pafs.S3FileSystem(**options)
    if kind == "GcsFileSystem":
        options = fs.__reduce__()[1][0]
        options["retry_time_limit"] = datetime.timedelta(seconds=seconds * ATTEMPTS)
        return pafs.GcsFileSystem(**options)
    return fs
