"""SIGTERM / SIGINT at seeded random moments of a real run: no temporary file left, and the output is
either absent or complete (subprocesses, since signals need a process of their own).

``UQEVAL_FUZZ_SIGNALS=30`` runs more moments by hand (default 3).
"""

from __future__ import annotations

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
