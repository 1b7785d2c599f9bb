"""Remote opens and scheduler connects are bounded (``--connect-timeout``) and stay interruptible.

Every server here is a socket on 127.0.0.1 started by the test (:mod:`tests.stream.servers`); S3 runs
with fake keys and the EC2 metadata service disabled, so nothing is sent beyond the loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.errors import InputError, UsageError, front_end
from uqeval.io import remote

from ..stream.servers import FAKE_AWS, closed_port, s3_uri, server

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_aws(monkeypatch):
    for k, v in FAKE_AWS.items():
        monkeypatch.setenv(k, v)


@pytest.fixture
def local_file(tmp_path):
    rng = np.random.default_rng(3)
    mean = rng.normal(size=200)
    path = tmp_path / "k.parquet"
    pq.write_table(pa.table({"y": mean + rng.normal(size=200), "mean": mean, "std": np.ones(200)}), path)
    return path


def _one_error_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), text
    assert "Traceback" not in text
    return lines[0]


# --------------------------------------------------------------------------- helper threads


def test_call_returns_raises_and_gives_up_at_its_limit():
    assert remote.call("x", lambda a: a + 1, 1) == 2
    with pytest.raises(KeyError):
        remote.call("x", {}.__getitem__, "k")
    start = time.monotonic()
    with (
        front_end("cli"),
        pytest.raises(InputError, match=r"^slow: no answer within 0\.2 s.*--connect-timeout"),
    ):
        remote.call("slow", time.sleep, 1.0, limit=0.2)
    assert time.monotonic() - start < 0.8
    assert remote.in_flight()  # the abandoned call still sleeps ...
    time.sleep(1.0)
    assert not remote.in_flight()  # ... and is counted out when it ends


def test_iterate_yields_every_item_and_passes_errors_on():
    assert list(remote.iterate("x", iter(range(5)))) == [0, 1, 2, 3, 4]

    def broken():
        yield 1
        raise OSError("lost")

    got = []
    with pytest.raises(OSError, match="lost"):
        for item in remote.iterate("x", broken()):
            got.append(item)
    assert got == [1]


def test_connect_timeout_is_scoped():
    before = remote.timeout()
    with remote.connect_timeout(1.5):
        assert remote.timeout() == 1.5
        assert remote.deadline() == pytest.approx(3 * (remote.ATTEMPTS + 1) + 5)
    assert remote.timeout() == before == remote.DEFAULT_TIMEOUT


# --------------------------------------------------------------------------- S3 against a silent endpoint


def test_s3_silent_endpoint_fails_in_bounded_time(fake_aws):
    with server() as port:
        start = time.monotonic()
        res = runner.invoke(app, ["score", s3_uri(port), "--connect-timeout", "0.5", "-f", "json"])
        took = time.monotonic() - start
    assert res.exit_code == 3, res.output
    line = _one_error_line(res.stderr)
    assert "--connect-timeout" in line and f"127.0.0.1:{port}" in line
    assert "Timeout was reached" in line or "no answer within" in line  # pyarrow's timeout, or the backstop
    assert took < 25  # 3 attempts of 0.5 s, at worst the 13 s backstop (the default would take a minute)


def test_s3_filesystem_gets_the_timeouts(fake_aws):
    from uqeval.io.source import filesystem

    with remote.connect_timeout(2.5):
        fs, path = filesystem(s3_uri(closed_port()))
    options = fs.__reduce__()[1][0]
    assert options["connect_timeout"] == 2.5 and options["request_timeout"] == 2.5
    assert options["endpoint_override"].startswith("127.0.0.1:") and path == "bucket/k.parquet"


def test_scheme_pyarrow_knows_reports_its_own_error_not_install_advice(monkeypatch):
    import pyarrow.fs as pafs

    class Offline:  # pyarrow's FileSystem.from_uri on a machine without network (no host is resolved)
        @staticmethod
        def from_uri(uri):
            raise OSError(
                "When resolving region for bucket 'b': AWS Error NETWORK_CONNECTION during HeadBucket "
                "operation: curlCode: 6, Couldn't resolve host name"
            )

    monkeypatch.setattr(pafs, "FileSystem", Offline)
    res = runner.invoke(app, ["score", "s3://b/k.parquet"])
    assert res.exit_code == 3, res.output
    line = _one_error_line(res.stderr)
    assert "Couldn't resolve host name" in line and "install" not in line and "s3fs" not in line


def test_unknown_scheme_still_says_what_to_install():
    res = runner.invoke(app, ["score", "nosuchscheme://bucket/x.parquet"])
    assert res.exit_code == 3
    assert "install" in _one_error_line(res.stderr)


# --------------------------------------------------------------------------- scheduler addresses


@pytest.mark.parametrize(
    "address",
    [
        "bogus",
        "tcp://",
        "tcp://host",
        "127.0.0.1",
        ":8786",
        "tcp://h:0",
        "tcp://h:65536",
        "http://h:1",
        "a b:1",
    ],
)
def test_bad_scheduler_address_is_a_usage_error(address):
    from uqeval.engine.dask import scheduler_address

    with pytest.raises(UsageError, match="is not a scheduler address"):
        scheduler_address(address)


@pytest.mark.parametrize(
    "address, want",
    [
        ("tcp://127.0.0.1:8786", ("tcp", "127.0.0.1", 8786)),
        ("h:1", ("tcp", "h", 1)),
        ("tls://[::1]:9", ("tls", "::1", 9)),
    ],
)
def test_good_scheduler_address_parses(address, want):
    from uqeval.engine.dask import scheduler_address

    assert scheduler_address(address) == want


@pytest.mark.parametrize(
    "answer, why",
    [
        (None, "no answer within 0.5 s"),
        (b"\xff" * 64 + b"garbage", "does not speak the Dask protocol"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", "does not speak the Dask protocol"),
    ],
)
def test_scheduler_that_is_not_dask_is_one_line(local_file, answer, why):
    pytest.importorskip("distributed")
    with server(answer) as port:
        start = time.monotonic()
        res = runner.invoke(
            app,
            [
                "score",
                str(local_file),
                "--engine",
                "dask",
                "--scheduler",
                f"tcp://127.0.0.1:{port}",
                "--connect-timeout",
                "0.5",
            ],
        )
    assert res.exit_code == 2, res.output
    assert why in _one_error_line(res.stderr)
    assert time.monotonic() - start < 15


def test_probe_accepts_a_real_scheduler():
    distributed = pytest.importorskip("distributed")
    from uqeval.engine.dask import probe

    with distributed.LocalCluster(
        n_workers=0,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=50,
    ) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        probe(cluster.scheduler_address, 5.0)  # no error


def test_connect_timeout_is_in_the_help_of_every_engine_command():
    for command in ("score", "compare", "coverage", "ucc", "check"):
        res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert res.exit_code == 0 and "--connect-timeout" in res.output, command
    res = runner.invoke(app, ["score", "x.parquet", "--connect-timeout", "0"])
    assert res.exit_code == 2


# --------------------------------------------------------------------------- signals (a process of their own)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("target", ["s3", "scheduler"])
def test_signal_ends_a_run_blocked_on_a_silent_remote(tmp_path, local_file, sig, target):
    if target == "scheduler":
        pytest.importorskip("distributed")
    with server() as port:
        args = (
            [s3_uri(port)]
            if target == "s3"
            else [str(local_file), "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}"]
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "uqeval", "score", *args],  # default --connect-timeout: 20 s per attempt
            cwd=ROOT,
            env={**os.environ, **FAKE_AWS, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        start = time.monotonic()
        while not port.accepted and time.monotonic() - start < 30:  # the run reached the remote
            time.sleep(0.05)
        assert port.accepted, "the run never connected"
        time.sleep(1.0)
        sent = time.monotonic()
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"{sig!r} did not end the run within 5 s")
    assert time.monotonic() - sent < 5
    assert proc.returncode == 130, err
    assert b"Traceback" not in err and b"interrupted" in err


def test_dask_workers_get_the_connect_timeout():
    pytest.importorskip("distributed")
    from uqeval.engine.dask import dask_client
    from uqeval.engine.options import EngineOptions

    with remote.connect_timeout(7.0), dask_client(EngineOptions(workers=1)) as (client, _):
        assert set(client.run(remote.timeout).values()) == {7.0}


def test_abandoned_native_call_does_not_hold_the_exit(tmp_path):
    """The backstop: pyarrow left without timeouts blocks forever on a silent S3 endpoint (and its
    shutdown hook waits for the call); the run gives up at the deadline and the process exits at once."""
    with server() as port:
        code = (
            "import sys\n"
            "from uqeval.io import remote\n"
            "remote.deadline = lambda: 1.0\n"
            "remote.bounded = lambda fs: fs\n"
            f"sys.argv = ['uqeval', 'score', {s3_uri(port)!r}]\n"
            "from uqeval.cli import main\n"
            "main()\n"
        )
        start = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**os.environ, **FAKE_AWS, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            timeout=60,
        )
    assert proc.returncode == 3, proc.stderr
    assert b"no answer within 1 s" in proc.stderr and b"Traceback" not in proc.stderr
    assert time.monotonic() - start < 30  # without os._exit: ~100 s in pyarrow's S3 finalizer
