"""Seeded fuzz family for ``--scheduler`` addresses: bogus strings, servers on 127.0.0.1 that answer with
garbage (random bytes, an HTTP response, a Dask-like frame header that lies), silent servers and refused
ports. Every case ends with exactly one ``error:`` line and exit code 2 (a scheduler that cannot be used
is a usage problem), within a few seconds, with no traceback and no raw control character.

Nothing is sent beyond the loopback: a bogus string is checked to be rejected before any lookup, and
every server is started here on 127.0.0.1. ``UQEVAL_FUZZ_REMOTE=200`` runs more cases by hand
(``UQEVAL_FUZZ_SEED`` picks another seed).
"""

from __future__ import annotations

import collections
import contextlib
import os
import random
import struct
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..stream.servers import closed_port, server
from .harness import CONTROL, HOSTILE, TRACEBACK

pytest.importorskip("distributed", reason="the Dask extra is not installed (pip install 'uqeval[dask]')")

CASES = int(os.environ.get("UQEVAL_FUZZ_REMOTE", "16"))
SEED = int(os.environ.get("UQEVAL_FUZZ_SEED", "17"))
TIMEOUT = 0.3  # --connect-timeout of every case
SLOWEST = 10.0  # seconds any case may take (the silent server: one 0.3 s wait)


def bogus(r: random.Random) -> str:
    """An address that is not ``[scheme://]host:port``: rejected before any name is looked up."""
    host = r.choice(["127.0.0.1", "localhost", "[::1]", "sched"])
    forms = [
        "",
        " ",
        host,  # no port
        f"tcp://{host}",
        f"tcp://{host}:",
        f"tcp://{host}:0",
        f"tcp://{host}:{r.randint(65536, 10**7)}",
        f"tcp://{host}:-{r.randint(1, 9)}",
        f"{r.choice(['http', 'udp', 'ftp', 's3'])}://{host}:{r.randint(1, 65535)}",
        f"tcp://:{r.randint(1, 65535)}",
        f"tcp://{host}:{r.randint(1, 65535)}/path",
        f"tcp://{host} :{r.randint(1, 65535)}",
        f"tcp://{r.choice(HOSTILE)}:{r.randint(1, 65535)}",
        "".join(r.choice("abc:/.[]%@\x00\n") for _ in range(r.randint(1, 20))),
    ]
    return r.choice(forms)


def garbage(r: random.Random) -> bytes:
    """What a server that is not a Dask scheduler might send first."""
    kind = r.choice(["random", "http", "huge length", "lying frames"])
    if kind == "random":
        return bytes(r.getrandbits(8) for _ in range(r.randint(1, 512)))
    if kind == "http":
        return b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
    if kind == "huge length":
        return struct.pack("<Q", r.randint(1 << 17, (1 << 64) - 1)) + b"x" * 32
    body = struct.pack("<QQ", 1, r.randint(100, 10_000)) + b"y" * 20  # frame length larger than the body
    return struct.pack("<Q", len(body)) + body


@contextlib.contextmanager
def target(r: random.Random):
    """``(family, address)`` of one case, with its server running while the case runs."""
    family = r.choice(["bogus", "garbage", "silent", "refused"])
    if family == "bogus":
        yield family, bogus(r)
    elif family == "refused":
        yield family, f"tcp://127.0.0.1:{closed_port()}"
    else:
        with server(garbage(r) if family == "garbage" else None) as port:
            yield family, r.choice(["tcp://", ""]) + f"127.0.0.1:{port}"


def test_fuzz_scheduler_addresses(tmp_path):
    from uqeval.engine.dask import scheduler_address
    from uqeval.errors import UsageError

    rng = np.random.default_rng(SEED)
    mean = rng.normal(size=100)
    data = tmp_path / "k.parquet"
    pq.write_table(pa.table({"y": mean + rng.normal(size=100), "mean": mean, "std": np.ones(100)}), data)
    runner = CliRunner()
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    for i in range(CASES):
        r = random.Random(SEED * 100_000 + i)
        with target(r) as (family, address):
            if family == "bogus":  # never looked up: the address check comes first
                with pytest.raises(UsageError):
                    scheduler_address(address)
            start = time.monotonic()
            res = runner.invoke(
                app,
                ["score", str(data), "--engine", "dask", "--scheduler", address]
                + ["--connect-timeout", str(TIMEOUT), "-f", "json"],
            )
            took = time.monotonic() - start
        counts[family] += 1
        err = res.stderr
        lines = [line for line in err.splitlines() if line.strip()]
        problems = []
        if res.exit_code != 2:
            problems.append(f"exit {res.exit_code}")
        if len(lines) != 1 or not lines[0].startswith("error: --scheduler"):
            problems.append("not one error line")
        if TRACEBACK in err or res.exception not in (None,) and not isinstance(res.exception, SystemExit):
            problems.append(f"exception {res.exception!r}")
        if CONTROL.search(err):
            problems.append("raw control character")
        if res.stdout:
            problems.append("stdout not empty")
        if took > SLOWEST:
            problems.append(f"took {took:.1f} s")
        if problems:
            failures.append((i, family, address, problems, err[-300:]))
    print(f"\nremote fuzz: {CASES} cases, seed {SEED}: {dict(sorted(counts.items()))}")
    assert not failures, "\n".join(map(repr, failures[:10]))


def test_generator_covers_every_family():
    seen = set()
    for i in range(CASES):
        with target(random.Random(SEED * 100_000 + i)) as (family, _):
            seen.add(family)
    assert seen == {"bogus", "garbage", "silent", "refused"}
