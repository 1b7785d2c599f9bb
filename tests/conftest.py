from __future__ import annotations

import os

# BLAS on one thread, as the command line runs it (uqeval.cli.single_threaded_blas), set before numpy is
# first imported: uqeval's products are many small blocks, where OpenBLAS's threads cost more than they
# give, and the suite runs one pytest-xdist worker per core. The ACCRUE MLP fit of 2000 rows took 23-32 s
# wall (9 s CPU) with the default threads on a busy 2-core machine, 1.5-2 s (0.6 s CPU) on one.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import functools
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
import typer.testing

# typer's CliRunner converts the Typer app into a click command on every invoke (~20 ms; ~140 ms on a busy
# machine) and the suite invokes the CLI thousands of times: convert each app once, as `uqeval` itself
# does once per process. No test changes the app after building it. If typer renames the helper, nothing
# is patched and the tests are only slower.
if hasattr(typer.testing, "_get_command"):
    typer.testing._get_command = functools.lru_cache(maxsize=None)(typer.testing._get_command)

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch):
    """The command line finds a config through UQEVAL_CONFIG (issue 26): a developer's own must not
    change what the tests see."""
    monkeypatch.delenv("UQEVAL_CONFIG", raising=False)


def softmax(logits) -> np.ndarray:
    """Softmax over the last axis (test data only; the package reads probabilities or applies temperature)."""
    z = np.asarray(logits, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def write_table(path: Path, cols: dict) -> Path:
    table = pa.table(cols)
    if str(path).endswith((".csv", ".csv.gz")):
        pacsv.write_csv(table, path)
    else:
        pq.write_table(table, path)
    return path


@pytest.fixture
def gaussian_cols() -> dict:
    rng = np.random.default_rng(0)
    n = 300
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    y = mean + std * rng.normal(size=n)
    return {"y": y, "mu": mean, "sigma": std}


@pytest.fixture
def gaussian_file(tmp_path, gaussian_cols) -> Path:
    return write_table(tmp_path / "preds.parquet", gaussian_cols)


GOLDEN = ROOT / "tests" / "golden"


def assert_tree_close(got, want, where="$", rel=1e-9, abs_=1e-12, nan_ok=False):
    """Compare nested JSON-like data: same keys and types, floats to ``rel``/``abs_`` (``nan_ok``: NaN equals
    NaN), the rest exactly."""
    numbers = (int, float)
    assert type(got) is type(want) or (isinstance(got, numbers) and isinstance(want, numbers)), where
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for k in want:
            assert_tree_close(got[k], want[k], f"{where}.{k}", rel, abs_, nan_ok)
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_tree_close(g, w, f"{where}[{i}]", rel, abs_, nan_ok)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=rel, abs=abs_, nan_ok=nan_ok), where
    else:
        assert got == want, where
    return True


def keep_close(new, old, rel=1e-9, abs_=1e-12):
    """``new`` with every number that :func:`assert_tree_close` would accept replaced by ``old``'s: a golden
    file regenerated after a change moves only the values that really changed, not float noise in the last
    digits of the others."""
    if isinstance(new, dict) and isinstance(old, dict):
        return {k: keep_close(v, old[k], rel, abs_) if k in old else v for k, v in new.items()}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [keep_close(n, o, rel, abs_) for n, o in zip(new, old)]
    if (
        isinstance(new, float)
        and isinstance(old, (int, float))
        and not isinstance(old, bool)
        and new == pytest.approx(old, rel=rel, abs=abs_)
    ):
        return old
    return new


def write_golden(path: Path, got, **dumps) -> None:
    """Write a golden file (UQEVAL_UPDATE_GOLDEN=1), keeping the old value of every number still within
    tolerance (:func:`keep_close`)."""
    import json

    if path.exists():
        got = keep_close(got, json.loads(path.read_text()))
    path.write_text(json.dumps(got, indent=2, **dumps) + "\n")


def check_golden(name: str, got) -> None:
    """Compare ``got`` with ``tests/golden/<name>.json``; with UQEVAL_UPDATE_GOLDEN=1 rewrite the file first
    (after an intended change; review the diff)."""
    import json
    import os

    path = GOLDEN / f"{name}.json"
    if os.environ.get("UQEVAL_UPDATE_GOLDEN"):
        write_golden(path, got)
    assert_tree_close(got, json.loads(path.read_text()))


@pytest.fixture
def cli_voice():
    """Messages spelled for the command line (``--mean``), as inside a ``uqeval`` run: for tests that call
    core functions directly and check the flags their messages name (the default voice is Python's)."""
    from uqeval.errors import front_end

    with front_end("cli"):
        yield
