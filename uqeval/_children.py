"""Child processes that end with their parent, however the parent ends (issue 35).

The ``uqeval`` command starts child processes in two places: the figure workers
(:func:`uqeval.tasks.plot.render_workers`, a spawn-context ``ProcessPoolExecutor``) and the Dask
``--workers N`` local cluster. A spawned pool worker holds the write end of its own call queue, so
it never reads end-of-file when its parent dies: a parent killed with SIGKILL (a CI timeout, the
OOM killer, ``kill -9``) left it, and with it ``multiprocessing``'s resource tracker, running for
good. Hence, in this module:

* :func:`init_child`, the first thing a child runs: it ignores SIGINT (a terminal's Ctrl-C reaches
  the whole process group; the parent alone handles it) and ends when its parent does: on Linux by
  the parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), elsewhere by a daemon thread
  that polls :func:`os.getppid`. The resource tracker exits by itself once the last holder of its
  pipe (the parent, the workers) is gone.
* :func:`interrupts_blocked`, around starting children: they inherit the blocked SIGINT, so even a
  Ctrl-C during their start-up (before :func:`init_child` runs) is the parent's alone
  (``multiprocessing.resource_tracker`` starts its process the same way).
* :func:`track` and :func:`stop_children`: the CLI ends every child of a command before the
  command's outcome is settled (:func:`uqeval.cli.common.handle_errors`), so none is joined at
  interpreter exit, where an interrupt would land in ``threading._shutdown``.

Dask's worker processes end with their parent by Dask's own doing (each watches a pipe from the
process that started it, ``distributed.process.AsyncProcess``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

#: ``PR_SET_PDEATHSIG`` of ``<linux/prctl.h>``
PR_SET_PDEATHSIG = 1

#: how often the fallback thread looks at the parent's pid, in seconds
POLL_SECONDS = 0.2


def init_child(parent: int, pdeathsig: bool = True) -> None:
    """In a new child process: ignore SIGINT, and end (at once, no clean-up) when ``parent`` ends.

    ``parent`` is the pid of the process that started this one, passed from there: read here, the
    parent may already be gone (then :func:`os.getppid` is 1 or a subreaper's pid) and this process
    exits at once. ``pdeathsig``: use Linux's parent-death signal. It fires when the *thread* that
    started the child ends, so pass True only when that is the parent's main thread; otherwise (and
    where ``prctl`` is missing) a daemon thread polls the parent's pid every
    :data:`POLL_SECONDS`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    armed = pdeathsig and _parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the signal was armed (or before this ran)
        os._exit(1)
    if not armed:
        threading.Thread(target=_watch, args=(parent,), name="uqeval-parent-watch", daemon=True).start()


def _parent_death_signal(sig: int) -> bool:
    """Ask Linux to send ``sig`` to this process when its parent (thread) ends; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os._exit(1)


@contextlib.contextmanager
def interrupts_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread while the body starts child processes (a child inherits the
    signal mask across ``exec``). An interrupt that arrives meanwhile is delivered when the body ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


#: how to stop each group of children started and not yet stopped (:func:`track`)
_STOPS: list[Callable[[], None]] = []


def track(stop: Callable[[], None]) -> None:
    """Remember how to stop a group of children: ``stop()`` ends them at once and waits until they are
    gone (:func:`stop_pool`)."""
    _STOPS.append(stop)


def stop_children(raise_errors: bool = True) -> None:
    """Stop every group of children :func:`track` knows, newest first; each is forgotten once stopped
    (one whose stop was interrupted is not, and is stopped again next time).

    ``raise_errors=False`` after a failure or an interrupt: the run is failing already."""
    while _STOPS:
        stop = _STOPS[-1]
        if raise_errors:
            stop()
        else:
            with contextlib.suppress(Exception):
                stop()
        with contextlib.suppress(ValueError):
            _STOPS.remove(stop)


def stop_pool(pool, kill: bool = False) -> None:
    """Shut a ``concurrent.futures.ProcessPoolExecutor`` down and wait for its processes. ``kill``: kill
    them first, not waiting for a task under way nor for their interpreters to finalize (an idle figure
    worker took ~90 ms to exit, killed ~6 ms); for workers that hold no output and no state."""
    if kill:
        killer = getattr(pool, "kill_workers", None)  # Python >= 3.14
        if killer is not None:
            killer()
        else:
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                with contextlib.suppress(Exception):
                    process.kill()
    pool.shutdown(wait=True, cancel_futures=True)
