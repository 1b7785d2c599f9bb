"""uqeval._children: child processes end with their parent, however it ends (issue 35).

The command-level guarantees (SIGKILL and SIGINT at every phase of a real run) are in
tests/fuzz/test_signals.py; here each mechanism alone, in a small parent process of the test's own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from uqeval import _children

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not count)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(pid)


def _parent(script: str) -> tuple[subprocess.Popen, int]:
    """A parent process running ``script``, which prints the pid of the child it started; (parent, pid)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip().isdigit(), f"the parent printed {line!r}"
    return proc, int(line)


POOL = """
    import multiprocessing, os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from uqeval import _children

    if __name__ == "__main__":
        pool = ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn"),
            initializer=_children.init_child, initargs=(os.getpid(), {pdeathsig}),
        )
        print(pool.submit(os.getpid).result(), flush=True)
        time.sleep(120)
"""


@pytest.mark.parametrize("pdeathsig", [True, False], ids=["parent-death-signal", "polling-thread"])
def test_a_pool_worker_ends_when_its_parent_is_killed(pdeathsig):
    """A spawned pool worker blocks reading its call queue, whose write end it holds itself: without
    init_child it never saw its parent die (it was reparented to init and ran for good)."""
    parent, worker = _parent(POOL.format(pdeathsig=pdeathsig))
    assert _alive(worker)
    parent.kill()
    parent.wait()
    assert _gone_within(worker, 5.0)


def test_a_worker_whose_parent_died_before_it_started_exits_at_once():
    """The race of the parent-death signal: a parent already gone when init_child runs."""
    code = "import os; from uqeval import _children; _children.init_child(os.getppid() + 10**6)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1


def test_a_pool_worker_ignores_sigint():
    """A terminal's Ctrl-C reaches the whole process group: the parent alone handles it."""
    parent, worker = _parent(POOL.format(pdeathsig=True))
    try:
        os.kill(worker, signal.SIGINT)
        time.sleep(0.5)
        assert _alive(worker)
    finally:
        parent.kill()
        parent.wait()
    assert _gone_within(worker, 5.0)


def _big(n: int) -> bytes:
    return b"x" * n


def _blocked_writing(pid: int) -> bool:
    """``pid`` waits in a write to a pipe (a result larger than the pipe, being read by the parent)."""
    try:
        with open(f"/proc/{pid}/wchan") as f:
            return "pipe_write" in f.read()
    except OSError:
        return False


@pytest.mark.parametrize("i", range(3))
def test_killing_a_pool_while_a_worker_sends_its_result_does_not_hang(i):
    """A worker killed in the middle of sending a result left the pool's manager thread waiting for the
    rest of that message for ever (the parent holds the pipe's other write end), and with it the
    shutdown: the CLI, interrupted while a figure came back, hung."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_children.init_child,
        initargs=(os.getpid(), True),
    )
    worker = pool.submit(os.getpid).result(timeout=60)
    pool.submit(_big, 400_000_000)
    deadline = time.monotonic() + 60
    while not _blocked_writing(worker) and time.monotonic() < deadline:
        time.sleep(0.0005)  # until the result is being sent
    time.sleep(0.01 * i)
    stopper = threading.Thread(target=_children.stop_pool, args=(pool, True), daemon=True)
    stopper.start()
    stopper.join(30)
    assert not stopper.is_alive(), "the pool's shutdown hangs"
    assert not _alive(worker)


WATCHED = """
    import subprocess, sys, time
    from uqeval import _children

    _children.WATCHDOG = True
    with _children.watchdog():
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        print(child.pid, flush=True)
        time.sleep({stay})
"""


def test_the_watchdog_kills_what_was_started_when_the_parent_is_killed():
    parent, child = _parent(WATCHED.format(stay=120))
    assert _alive(child)
    parent.kill()
    parent.wait()
    assert _gone_within(child, 5.0)


def test_the_watchdog_kills_what_is_left_when_the_block_ends():
    parent, child = _parent(WATCHED.format(stay=0))
    parent.wait(timeout=60)
    assert parent.returncode == 0
    assert _gone_within(child, 5.0)


def test_the_watchdog_is_off_outside_the_command_line(monkeypatch):
    """A library caller's processes are left alone: no mark in the environment, no watchdog."""
    monkeypatch.setattr(_children, "WATCHDOG", False)
    with _children.watchdog():
        assert _children.MARK not in os.environ
