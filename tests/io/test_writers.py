"""Output writing: special files written through, links followed, inputs refused, batches all-or-none,
temporary files removed on errors and signals."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from uqeval.errors import GateFailure, InputError
from uqeval.io.writers import (
    _INPUTS,
    atomic_write_bytes,
    atomic_write_text,
    check_output_path,
    output_batch,
    register_input,
)

ROOT = Path(__file__).resolve().parents[2]


def _temps(d: Path) -> list[str]:
    return [p.name for p in d.iterdir() if p.name.endswith(".tmp")]


def test_regular_file_is_replaced_atomically(tmp_path):
    out = tmp_path / "a.json"
    out.write_text("old")
    atomic_write_text(out, "new")
    assert out.read_text() == "new" and not _temps(tmp_path)


def test_dev_null_is_written_through_not_replaced():
    before = os.stat("/dev/null")
    atomic_write_text("/dev/null", "x")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_dev_full_is_a_clean_error_naming_it():
    with pytest.raises(InputError, match="/dev/full: cannot write output"):
        atomic_write_text("/dev/full", "x" * 100_000)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(Path(fifo).read_bytes()))
    reader.start()
    atomic_write_text(fifo, "through the pipe")
    reader.join(5)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_dash_is_stdout(capsysbinary):
    atomic_write_text("-", "to stdout")
    assert capsysbinary.readouterr().out == b"to stdout"


def test_symlink_stays_a_link_and_its_target_is_replaced(tmp_path):
    target = tmp_path / "real" / "out.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"
    assert not _temps(tmp_path) and not _temps(target.parent)


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "new.json")
    atomic_write_text(link, "x")
    assert link.is_symlink() and (tmp_path / "new.json").read_text() == "x"


def test_link_into_missing_directory_is_refused(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "nowhere" / "x.json")
    with pytest.raises(InputError, match="does not exist"):
        check_output_path(link)


def test_directory_and_input_are_refused(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        atomic_write_text(tmp_path, "x")
    src = tmp_path / "in.csv"
    src.write_text("y\n1\n")
    link = tmp_path / "alias.csv"
    link.symlink_to(src)
    hard = tmp_path / "hard.csv"
    os.link(src, hard)
    with output_batch():
        register_input(src)
        for p in (src, link, hard):
            with pytest.raises(InputError, match="refusing to overwrite an input"):
                atomic_write_text(p, "clobbered")
    assert src.read_text() == "y\n1\n" and not _INPUTS


def test_batch_writes_all_or_nothing(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    with pytest.raises(RuntimeError):
        with output_batch():
            atomic_write_text(a, "a")
            atomic_write_text(b, "b")
            assert not a.exists() and len(_temps(tmp_path)) == 2  # staged, not yet visible
            raise RuntimeError("later failure")
    assert not a.exists() and not b.exists() and not _temps(tmp_path)
    with output_batch():
        atomic_write_text(a, "a")
        atomic_write_text(b, "b")
    assert a.read_text() == "a" and b.read_text() == "b" and not _temps(tmp_path)


def test_batch_commits_before_a_failed_check(tmp_path):
    junit = tmp_path / "junit.xml"
    with pytest.raises(GateFailure):
        with output_batch(commit_on=(GateFailure,)):
            atomic_write_text(junit, "<testsuites/>")
            raise GateFailure("1 check failed")
    assert junit.read_text() == "<testsuites/>"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_directory_is_a_clean_error(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        with pytest.raises(InputError, match="cannot write output"):
            atomic_write_bytes(ro / "x.json", b"x")
    finally:
        ro.chmod(0o755)


_SIGNAL_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from uqeval.cli import app
    sig = getattr(signal, sys.argv[1])
    where = sys.argv[2]
    if where == "write":  # the signal arrives while the temporary file is being written
        os.fsync = lambda fd: os.kill(os.getpid(), sig)
    else:  # the signal arrives right after the temporary file is created
        real = os.open
        def create(path, *a, **k):
            fd = real(path, *a, **k)
            if str(path).endswith(".tmp"):
                os.kill(os.getpid(), sig)
            return fd
        os.open = create
    app(["score", sys.argv[3], "--output", sys.argv[4], "-f", "json"])
""")


def _sigint_by_default() -> None:
    """The child starts with SIGINT at its default, as from a terminal: a shell's background job (nohup,
    ``&``) inherits it ignored, and Python then never raises KeyboardInterrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
@pytest.mark.parametrize("where", ["write", "create"])
def test_signals_leave_no_temporary_file(tmp_path, sig, where):
    out = tmp_path / "summary.json"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _SIGNAL_SCRIPT,
            sig,
            where,
            str(ROOT / "sample_data" / "gaussian.csv"),
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=_sigint_by_default,
    )
    assert r.returncode == 130, r.stderr
    assert "interrupted" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists() and not _temps(tmp_path)
