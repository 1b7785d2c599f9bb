"""Benchmarks: generate N-row files and time whole `uqeval` processes (wall time, peak memory).

    python benchmarks/bench.py                 # every benchmark at its default size
    python benchmarks/bench.py score --n 1e6   # one of them

Figures are printed, never asserted: speed targets live here, not in timed tests.
Data files are written under benchmarks/data/ (git-ignored) and reused.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
ROOT = HERE.parent


_WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t0 = time.perf_counter()\n"
    "p = subprocess.run([sys.executable, '-m', 'uqeval', *sys.argv[1:]], capture_output=True, text=True)\n"
    "wall = time.perf_counter() - t0\n"
    "sys.stderr.write(p.stderr)\n"
    "print(p.returncode, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def run_cli(args: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `python -m uqeval ...` process (measured by a wrapper)."""
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args], cwd=ROOT, capture_output=True, text=True)
    code, wall, rss = proc.stdout.split()
    if int(code) != 0:
        raise SystemExit(f"uqeval {' '.join(args)} failed:\n{proc.stderr}")
    return float(wall), int(rss) / 1024.0


def gaussian_file(n: int) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    DATA.mkdir(exist_ok=True)
    path = DATA / f"gaussian_{n}.parquet"
    if not path.exists():
        rng = np.random.default_rng(0)
        mean = rng.normal(size=n)
        std = rng.uniform(0.5, 2.0, n)
        y = mean + 1.1 * std * rng.normal(size=n)
        pq.write_table(pa.table({"y": y, "mean": mean, "std": std}), path)
    return path


def bench_score(n: int) -> None:
    path = gaussian_file(n)
    wall, mb = run_cli(["score", str(path), "--format", "json"])
    print(f"score gaussian   N={n:>9,d}  {wall:7.2f} s  peak {mb:7.0f} MB   (target N=1e6: <= 10 s, <= 2 GB)")


BENCHES = {"score": (bench_score, 1_000_000)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", nargs="*", default=list(BENCHES), help=f"any of {', '.join(BENCHES)}")
    ap.add_argument("--n", type=float, default=None, help="rows (default: each benchmark's own)")
    a = ap.parse_args()
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cpu(s)")
    for name in a.which:
        fn, n = BENCHES[name]
        fn(int(a.n) if a.n else n)


if __name__ == "__main__":
    main()
