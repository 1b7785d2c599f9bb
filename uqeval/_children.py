"""Child processes that end with their parent, however the parent ends (issue 35).

The ``uqeval`` command starts child processes in two places: the figure workers
(:func:`uqeval.plots.kinds.render_workers`, a spawn-context ``ProcessPoolExecutor``) and the Dask
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

* :func:`watchdog`, for children whose start this process does not control (Dask's nanny starts
  the ``--workers N`` processes): a watchdog process kills them when this one dies. Dask's workers
  watch their parent themselves (``distributed.process.AsyncProcess``), but only once their
  start-up is over: a worker starting when its parent was killed lived on 1-2 s, 6.7 s on a loaded
  2-core machine.
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


#: the ``-W`` option that keeps multiprocessing's resource tracker from warning, at its exit, of the semaphores
#: a process it served left behind (a run interrupted while its figure workers' queues were open): it
#: unlinks them all the same, and a Ctrl-C stays one line on the terminal
QUIET_TRACKER = "ignore:resource_tracker:UserWarning"


def quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker, if this process starts it later, with its clean-up warnings
    off (it takes this interpreter's ``-W`` options from :data:`sys.warnoptions`). Call before creating
    a pool's queues; the filters of this process are not changed."""
    if QUIET_TRACKER not in sys.warnoptions:
        sys.warnoptions.append(QUIET_TRACKER)


#: the environment variable that marks the processes a :func:`watchdog` kills
MARK = "UQEVAL_WATCHDOG"

#: the watchdog's program: wait for the end of its standard input (a pipe only the parent holds),
#: then kill every process that inherited the mark, but for multiprocessing's resource tracker (it
#: exits by itself once its last holder has, after unlinking what they leaked)
_WATCH = r"""
import os, signal, sys, time
mark = sys.argv[1].encode()
sys.stdin.buffer.read()
for sweep in range(3):
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open("/proc/" + name + "/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue
        if mark in environ and b"resource_tracker" not in cmdline:
            try:
                os.kill(int(name), signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.1)
"""

#: the watchdog processes started, until seen to have ended
_DOGS: list = []

#: :func:`watchdog` starts one (only the ``uqeval`` process sets this: it starts no other process while
#: a watchdog's mark is in its environment)
WATCHDOG = False


@contextlib.contextmanager
def watchdog() -> Iterator[None]:
    """Every process started inside the block (and its descendants) is killed when the block ends or
    when this process dies, however it dies: for children whose start this process does not control
    (Dask's nanny starts the ``--workers N`` processes). Linux only (``/proc``), and only where
    :data:`WATCHDOG` is set; elsewhere a no-op.

    A small watchdog process (``python -I -S``, its own session: a terminal's Ctrl-C does not reach
    it) reads a pipe whose write end only this process holds; at end-of-file (this process closed it
    at the end of the block, or died) it kills, three sweeps 0.1 s apart, every process whose
    environment holds the mark (:data:`MARK`, set in ``os.environ`` for the block), and exits. Dask's
    workers watch their parent too, but from the end of their start-up only (importing distributed:
    1-2 s, 6.7 s measured on a loaded 2-core machine)."""
    if not WATCHDOG or not os.path.isdir("/proc"):
        yield
        return
    import subprocess

    tag = f"{os.getpid()}.{os.urandom(8).hex()}"
    read, write = os.pipe()
    try:
        dog = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCH, f"{MARK}={tag}"],
            stdin=read,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={k: v for k, v in os.environ.items() if k != MARK},
        )
    except BaseException:
        os.close(write)
        raise
    finally:
        os.close(read)
    _DOGS[:] = [d for d in _DOGS if d.poll() is None] + [dog]  # kept (not waited for), reaped later
    before = os.environ.get(MARK)
    os.environ[MARK] = tag
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(MARK, None)
        else:
            os.environ[MARK] = before
        os.close(write)  # the watchdog kills what is left, and exits


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
    worker took ~90 ms to exit, killed ~6 ms); for workers that hold no output and no state.

    A worker killed while it sent a result left the pool's manager thread reading the rest of that
    message for ever (the parent holds the pipe's other write end), and the shutdown waiting for that
    thread: the parent's write end is closed once the workers are killed, so the read ends there."""
    if kill:
        killer = getattr(pool, "kill_workers", None)  # Python >= 3.14
        if killer is not None:
            killer()
        else:
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                with contextlib.suppress(Exception):
                    process.kill()
        writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
        if writer is not None:  # only the (now dead) workers write results
            with contextlib.suppress(Exception):
                writer.close()
    pool.shutdown(wait=True, cancel_futures=True)
