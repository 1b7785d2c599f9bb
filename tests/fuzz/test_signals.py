"""SIGTERM / SIGINT at seeded random moments of a real run: no temporary file left, and the output is
either absent or complete (subprocesses, since signals need a process of their own). SIGKILL at each
phase of the commands that start processes (issue 35): nothing they started survives; SIGINT at each
phase of ``score --plot-dir`` and ``report``: exit 130 and one line.

``UQEVAL_FUZZ_SIGNALS=30`` runs more moments by hand (default 3), ``UQEVAL_FUZZ_KILLS=30`` more killed
runs of random commands (default 3), ``UQEVAL_FUZZ_INTERRUPTS=5`` more rounds of interrupted phases
(default 1: 8 runs).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from ..conftest import write_table

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("UQEVAL_FUZZ_SIGNALS", "3"))


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    d = tmp_path_factory.mktemp("sig")
    rng = np.random.default_rng(0)
    n = 400_000
    mean = rng.normal(size=n)
    cols = {
        "y": mean + rng.normal(size=n),
        "mean": mean,
        "std": np.ones(n),
        **{f"x{j}": rng.normal(size=n) for j in range(8)},
    }
    return write_table(d / "calib.parquet", {k: v[:2000] for k, v in cols.items()}), write_table(
        d / "big.parquet", cols
    )


@pytest.mark.parametrize("i", range(RUNS))
def test_signal_at_a_random_moment_leaves_no_temporary_file(tmp_path, big, i):
    calib, apply = big
    r = random.Random(1700 + i)
    sig = r.choice([signal.SIGTERM, signal.SIGINT])
    out, model = tmp_path / "out.parquet", tmp_path / "model.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uqeval",
            "recalibrate",
            str(calib),
            "--method",
            "isotonic",
            "--apply",
            str(apply),
            "--output",
            str(out),
            "--save",
            str(model),
            "-f",
            "json",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(r.uniform(0.3, 6.0))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 130, -sig), err
    assert b"Traceback" not in err
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    written = [p.exists() for p in (out, model)]
    assert all(written) or not any(written)  # both outputs or neither
    if out.exists():
        assert pq.read_table(out).num_rows == 400_000


# --------------------------------------------------------------------------- killed runs (issue 35)
# Every process a run starts (figure workers, multiprocessing's resource tracker, a local Dask cluster's
# workers, the watchdog) inherits the run's environment: each test marks its run with a unique value of
# TAG and finds the run's descendants in /proc/*/environ, before and after killing it.

TAG = "UQEVAL_TEST_RUN"
KILLS = int(os.environ.get("UQEVAL_FUZZ_KILLS", "3"))
#: rounds of the interrupted phases (8 runs each)
INTERRUPTS = int(os.environ.get("UQEVAL_FUZZ_INTERRUPTS", "1"))
#: a descendant still alive this long after its parent was killed fails the test
GRACE = 5.0
#: the phases of a run at which a test interrupts it (see _reach)
PHASES = ("start", "pool", "drawing", "writing")

pytestmark_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def _marked(tag: str) -> dict[int, bytes]:
    """``{pid: command line}`` of the live processes whose environment holds ``TAG=tag``."""
    want = f"{TAG}={tag}".encode()
    found = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ")
        except OSError:  # gone, or not ours
            continue
        if want in environ:  # a zombie's environment reads empty: only live processes match
            found[int(name)] = cmdline
    return found


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Run:
    """``python -m uqeval ARGS`` in ``cwd``, marked with a fresh tag; stderr goes to a file (a pipe would
    stay open while a descendant lives)."""

    def __init__(self, args: list[str], cwd: Path, group: bool = False):
        self.tag = f"{os.getpid()}-{time.monotonic_ns()}"
        self.cwd = cwd
        self.err_path = cwd / "stderr.txt"
        with open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "uqeval", *args],
                cwd=cwd,
                env={**os.environ, "PYTHONPATH": str(ROOT), TAG: self.tag},
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=group,  # a process group of its own: a terminal's Ctrl-C reaches all of it
            )
        self.group = group

    def children(self) -> dict[int, bytes]:
        return {p: c for p, c in _marked(self.tag).items() if p != self.proc.pid}

    def worker(self) -> int | None:
        return next((p for p, c in self.children().items() if b"spawn_main" in c), None)

    def temps(self) -> list[Path]:
        return [p for p in self.cwd.rglob("*.tmp")]

    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    def wait(self, timeout: float = 120.0) -> int:
        """The exit status; a run still going after ``timeout`` seconds is killed and fails the test."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.survivors(0.0)
            pytest.fail(f"the run hangs {timeout:g} s after its signal: {self.stderr()[-2000:]}")

    def survivors(self, grace: float = GRACE) -> dict[int, bytes]:
        """The descendants still alive ``grace`` seconds from now (returns as soon as none is); any
        found are killed, so a failing test leaves nothing behind."""
        deadline = time.monotonic() + grace
        while (left := _marked(self.tag)) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return left


def _wait(run: Run, until, limit: float = 90.0) -> bool:
    """Poll ``until()`` while the run is alive; False if it ended (or ``limit`` passed) first."""
    deadline = time.monotonic() + limit
    while run.proc.poll() is None and time.monotonic() < deadline:
        if until():
            return True
        time.sleep(0.01)
    return False


def _reach(run: Run, phase: str, r: random.Random) -> None:
    """Return at a seeded moment of ``phase``, or when the run is over (a phase it never reached):

    start    the interpreter is up and importing or reading (0.1-0.5 s of its CPU time)
    pool     the figure worker (or a Dask worker) process exists: starting up
    drawing  the figure worker, idle after its start-up, draws again (its CPU time grows); where the
             figures reach it before it is idle, this falls through to writing
    writing  a temporary output file exists (figures encoded, outputs being written)
    """
    if phase == "start":
        cpu = r.uniform(0.1, 0.5)
        _wait(run, lambda: _cpu_seconds(run.proc.pid) >= cpu)
    elif phase == "pool":
        _wait(run, lambda: run.worker() is not None)
        time.sleep(r.uniform(0.0, 0.15))
    elif phase == "drawing":
        worker = None
        state = {"cpu": -1.0, "since": time.monotonic(), "idle": False}

        def busy_again() -> bool:
            nonlocal worker
            if run.temps():
                return True  # too late for drawing: writing already
            worker = worker or run.worker()
            if worker is None:
                return False
            cpu, now = _cpu_seconds(worker), time.monotonic()
            if cpu != state["cpu"]:
                if state["idle"] and cpu - state["cpu"] >= 0.03:
                    return True
                state["cpu"], state["since"] = cpu, now
            elif now - state["since"] >= 0.1:
                state["idle"] = True
            return False

        _wait(run, busy_again)
        time.sleep(r.uniform(0.0, 0.1))
    else:
        _wait(run, lambda: bool(run.temps()))
        time.sleep(r.uniform(0.0, 0.06))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Two Gaussian prediction files of 5e4 rows (enough that drawing the figures takes a while)."""
    d = tmp_path_factory.mktemp("kill")
    rng = np.random.default_rng(35)
    n = 50_000
    mean = rng.normal(size=n)
    y = mean + rng.normal(size=n)
    a = write_table(d / "a.parquet", {"y": y, "mean": mean, "std": np.ones(n)})
    b = write_table(d / "b.parquet", {"y": y, "mean": 0.9 * mean, "std": np.full(n, 1.2)})
    return a, b


def _command(name: str, files: tuple[Path, Path]) -> list[str]:
    a, b = (str(f) for f in files)
    return {
        "score": ["score", a, "--plot-dir", "plots", "-f", "json"],
        "report": ["report", a, "-o", "report.html"],
        "plot": ["plot", a, "-k", "calibration", "-o", "plot.png"],
        "compare": ["compare", a, b, "--plot", "compare.png", "-b", "200", "-f", "json"],
        "monitor": ["monitor", a, "--window", "5000", "--plot", "monitor.png", "-f", "json"],
        "dask": ["score", a, "--engine", "dask", "--workers", "2", "-f", "json"],
    }[name]


def _killed_leaves_nothing(run: Run, expect_children: bool) -> None:
    seen = run.children()
    run.proc.kill()
    run.wait(30)
    left = run.survivors()
    assert not left, f"alive {GRACE} s after the parent was killed: {left}"
    if expect_children and run.proc.returncode == -signal.SIGKILL:
        assert seen, "no descendant was running when the parent was killed: the phase was missed"


needs_workers = pytest.mark.skipif(
    not sys.platform.startswith("linux") or (os.cpu_count() or 1) < 2,
    reason="the figure workers start on Linux with two or more cores",
)


@pytestmark_linux
@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("command", ["score", "report"])
def test_sigkill_in_every_phase_leaves_no_process(tmp_path, small, command, phase):
    """SIGKILL (a CI timeout, the OOM killer, kill -9) at each phase: no figure worker, no resource
    tracker left running (they were reparented to init and lived on for good)."""
    r = random.Random(f"{command}-{phase}")
    run = Run(_command(command, small), tmp_path)
    _reach(run, phase, r)
    _killed_leaves_nothing(run, expect_children=phase != "start" and (os.cpu_count() or 1) >= 2)


@pytestmark_linux
@pytest.mark.parametrize("phase", ["pool", "running"])
def test_sigkill_of_a_dask_run_leaves_no_process(tmp_path, small, phase):
    """``--engine dask --workers 2``: the local cluster's processes end too, also while they start
    (Dask's own watch begins only once a worker has imported distributed)."""
    pytest.importorskip("distributed")
    r = random.Random(f"dask-{phase}")
    run = Run(_command("dask", small), tmp_path)
    _wait(run, lambda: run.worker() is not None)
    time.sleep(r.uniform(0.0, 0.1) if phase == "pool" else r.uniform(1.0, 1.5))
    _killed_leaves_nothing(run, expect_children=True)


@pytestmark_linux
@pytest.mark.parametrize("i", range(KILLS))
def test_sigkill_at_a_random_moment_of_any_command(tmp_path, small, i):
    """The fuzz family: a seeded command killed at a seeded moment; nothing it started survives.
    ``UQEVAL_FUZZ_KILLS=30`` runs more by hand (default 3)."""
    r = random.Random(3500 + i)
    command = r.choice(["score", "report", "plot", "compare", "monitor", "dask"])
    if command == "dask":
        pytest.importorskip("distributed")
    run = Run(_command(command, small), tmp_path)
    _wait(run, lambda: False, limit=r.uniform(0.2, 3.0))
    _killed_leaves_nothing(run, expect_children=False)


@pytestmark_linux
@pytest.mark.parametrize("i", range(INTERRUPTS))
@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("command", ["score", "report"])
def test_sigint_in_every_phase_exits_130_with_one_line(tmp_path, small, command, phase, i):
    """SIGINT (to the process, or Ctrl-C to its whole process group) at a seeded moment of each phase:
    exit 130, the one line ``interrupted``, no output and no temporary file; or, when it came after
    the outputs were written (the outcome settled), exit 0 with the outputs complete. Never a traceback
    or ``Exception ignored`` (from the pool's shutdown at interpreter exit, a destructor, a worker)."""
    r = random.Random(f"int-{command}-{phase}-{i}")
    group = r.random() < 0.5
    run = Run(_command(command, small), tmp_path, group=group)
    out = tmp_path / ("plots" if command == "score" else "report.html")
    _reach(run, phase, r)
    # nothing written yet (no temporary file, no output): the run must end interrupted
    early = not run.temps() and not (out.is_file() or any(out.glob("*.png")))
    if run.proc.poll() is None:
        if group:
            os.killpg(run.proc.pid, signal.SIGINT)
        else:
            run.proc.send_signal(signal.SIGINT)
    run.wait()
    err = run.stderr()
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert not run.temps()
    if run.proc.returncode == 130:
        assert err == "interrupted\n", err
        assert not out.exists() if command == "report" else not any(out.glob("*"))
    else:  # the signal came once the outputs were written: it changes nothing
        assert run.proc.returncode == 0, (run.proc.returncode, err)
        assert not early, f"phase {phase}: exit 0, though interrupted before anything was written"
        assert "interrupted" not in err
        if command == "report":
            assert out.read_text().rstrip().endswith("</html>")
        else:
            assert all(p.read_bytes().startswith(b"\x89PNG") for p in out.iterdir()) and any(out.iterdir())
    assert not run.survivors(), "a descendant outlived the interrupted run"
