"""Streaming and Dask benchmarks (issue 14): whole `uqeval score` processes on data larger than memory.

    python benchmarks/stream.py                      # 1e8-row Gaussian: stream, then Dask LocalCluster
    python benchmarks/stream.py --n 1e7 --memory     # also the in-memory engine (the throughput to beat)
    python benchmarks/stream.py --case samples --n 1e7      # 1e7 rows x 50 samples
    python benchmarks/stream.py --case classification --n 1e8  # 1e8 rows x 10 class probabilities
    python benchmarks/stream.py --command compare --n 1e7 --memory  # `uqeval compare` of 3 Gaussian models (defaults:
                                                                    # bootstrap 1000, permutations 5000)
    python benchmarks/stream.py --command ucc --n 1e7 --memory      # uqeval ucc (stream vs memory; no Dask)

Data is generated in chunks (never whole in memory) under $UQEVAL_BENCH_DIR (default
/tmp/uqeval_bench; not committed) and reused. Prints rows/s and peak RSS of the whole process
(the Dask figure is the client process; its workers run in their own processes). Figures are
indicative on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import run_cli  # noqa: E402  (the same whole-process wrapper as the other benchmarks)

DATA = Path(os.environ.get("UQEVAL_BENCH_DIR", "/tmp/uqeval_bench"))
CHUNK = 5_000_000


def _write(path: Path, n: int, make) -> Path:
    """Write ``n`` rows made ``CHUNK`` at a time by ``make(rng, rows) -> {column: array}`` (row groups of 1e6)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.exists():
        return path
    DATA.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    writer = None
    for start in range(0, n, CHUNK):
        table = pa.table(make(rng, min(CHUNK, n - start)))
        writer = writer or pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table, row_group_size=1_000_000)
    writer.close()
    tmp.rename(path)
    print(
        f"generated {path} ({path.stat().st_size / 2**30:.2f} GiB) in {time.perf_counter() - t0:.0f} s",
        flush=True,
    )
    return path


def gaussian(rng, m):
    mean = rng.normal(size=m)
    std = rng.uniform(0.5, 2.0, m)
    return {"y": mean + 1.1 * std * rng.normal(size=m), "mean": mean, "std": std}


def samples(rng, m, s=50):
    import pyarrow as pa

    mean = rng.normal(size=m)
    draws = mean[:, None] + rng.normal(size=(m, s))
    return {
        "y": mean + 1.1 * rng.normal(size=m),
        "samples": pa.FixedSizeListArray.from_arrays(pa.array(draws.ravel()), s),
    }


def classification(rng, m, k=10):
    logits = 2.0 * rng.normal(size=(m, k))
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    label = (rng.uniform(size=(m, 1)) > np.cumsum(p, 1)).sum(1).clip(0, k - 1)
    return {"label": label, **{f"p_{j}": p[:, j].astype(np.float64) for j in range(k)}}


CASES = {"gaussian": gaussian, "samples": samples, "classification": classification}


def gaussian_model(i: int):
    """The ``gaussian`` rows (the same targets: the same generator draws first), mean shifted and std scaled."""

    def make(rng, m):
        cols = gaussian(rng, m)
        return {**cols, "mean": cols["mean"] + 0.01 * i, "std": cols["std"] * (1.0, 1.1, 0.9)[i]}

    return make


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", choices=sorted(CASES), default="gaussian")
    ap.add_argument("--n", type=float, default=1e8)
    ap.add_argument(
        "--chunk-rows", type=int, default=None, help="default: uqeval's (about 4e6 numbers per batch)"
    )
    ap.add_argument("--memory", action="store_true", help="also run the in-memory engine")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--command",
        choices=("score", "compare", "ucc"),
        default="score",
        help="compare: three Gaussian models of --n rows",
    )
    a = ap.parse_args()
    n = int(a.n)
    if a.command == "compare":
        paths = [str(_write(DATA / f"gaussian_{n}_model{i}.parquet", n, gaussian_model(i))) for i in range(3)]
        command, label = ["compare", *paths], "compare x3"
    else:
        command, label = (
            [a.command, str(_write(DATA / f"{a.case}_{n}.parquet", n, CASES[a.case]))],
            f"{a.command} {a.case}",
        )
    chunk = ["--chunk-rows", str(a.chunk_rows)] if a.chunk_rows else []
    runs = [("stream", ["--engine", "stream", *chunk])]
    if a.memory:
        runs.insert(0, ("memory", ["--engine", "memory"]))
    if not a.no_dask and a.command != "ucc":
        runs.append((f"dask x{a.workers}", ["--engine", "dask", "--workers", str(a.workers), *chunk]))
    for name, extra in runs:
        quiet = [] if a.command == "ucc" else ["--quiet"]
        wall, mb = run_cli([*command, "--format", "json", *quiet, *extra])
        print(
            f"{label:<20} N={n:>11,d}  {name:<9} {wall:8.1f} s  {n / wall:>12,.0f} rows/s  peak RSS {mb:7.0f} MB",
            flush=True,
        )


if __name__ == "__main__":
    main()
