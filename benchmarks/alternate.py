"""Two installs of uqeval timed in alternating runs on the same files: did a change move the speed?

    python benchmarks/alternate.py --before /path/to/old/venv/bin/python --after .venv/bin/python
    python benchmarks/alternate.py --before ... --after ... --runs 5 --case score --case stream

Each case runs ``before``, ``after``, ``before``, ... (``--runs`` each), so load that comes and goes
hits both alike; the median wall time of each is printed with their ratio. The cases are the redesign's
yardsticks (issue 36): ``score`` of 1e6 Gaussian rows, ``compare`` of 3 x 1e6, ``ucc`` of 2 x 1e6 (in
memory), ``report`` of 2 x 1e5, ``monitor`` of 1e7 rows in 300 windows and ``stream`` (``score --engine
stream``) of 1e7 rows. Files are written under benchmarks/data/ (git-ignored) and reused. Figures are
printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def _gaussian(path: Path, n: int, seed: int, scale: float = 1.0, time_column: bool = False) -> Path:
    """A Gaussian forecast file (the same targets and means for the same seed; ``scale`` widens the std)."""
    if path.exists():
        return path
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    cols = {"y": mean + std * rng.normal(size=n), "mean": mean, "std": scale * std}
    if time_column:  # 300 daily windows
        cols["t"] = pa.array(np.sort(rng.integers(0, 300 * 86_400, n)).astype("datetime64[s]"))
    DATA.mkdir(exist_ok=True)
    pq.write_table(pa.table(cols), path, row_group_size=1_000_000)
    return path


def cases() -> dict[str, list[str]]:
    one = [
        str(_gaussian(DATA / f"alt_gaussian_1e6_{i}.parquet", 1_000_000, 0, 1 + 0.2 * i)) for i in range(3)
    ]
    small = [
        str(_gaussian(DATA / f"alt_gaussian_2e5_{i}.parquet", 200_000, 10, 1 + 0.3 * i)) for i in range(2)
    ]
    big = str(_gaussian(DATA / "alt_gaussian_1e7.parquet", 10_000_000, 20))
    timed = str(_gaussian(DATA / "alt_gaussian_1e7_t.parquet", 10_000_000, 21, time_column=True))
    return {
        "score": ["score", one[0], "--format", "json"],
        "compare": ["compare", *one, "--format", "json"],
        "ucc": ["ucc", *one[:2], "--format", "json"],
        "report": ["report", *small, "--output", str(DATA / "alt_report.html")],
        "monitor": ["monitor", timed, "--time", "t", "--window", "1D", "--format", "json"],
        "stream": ["score", big, "--engine", "stream", "--format", "json"],
    }


#: the runs' environment: bytecode written and read, as an installed uqeval runs (with PYTHONDONTWRITEBYTECODE
#: set, every run compiled its sources again: some 70 ms of a 0.5 s score, more for the tree with more modules)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run(python: str, args: list[str]) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([python, "-m", "uqeval", *args], capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        raise SystemExit(f"{python} {' '.join(args)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="python of the install to compare against")
    ap.add_argument("--after", required=True, help="python of the install under test")
    ap.add_argument("--runs", type=int, default=3, help="runs of each install per case (alternating)")
    ap.add_argument("--case", action="append", help="only these cases (repeatable)")
    a = ap.parse_args()
    todo = cases()
    for name, args in todo.items():
        if a.case and name not in a.case:
            continue
        times: dict[str, list[float]] = {"before": [], "after": []}
        for python in (a.before, a.after):  # warm the page cache and the bytecode of both once
            run(python, args)
        for _ in range(a.runs):
            for label, python in (("before", a.before), ("after", a.after)):
                times[label].append(run(python, args))
        b, f = statistics.median(times["before"]), statistics.median(times["after"])
        print(
            f"{name:8s} before {b:7.2f} s  after {f:7.2f} s  after/before {f / b:5.3f}  "
            f"(medians of {a.runs}; before {min(times['before']):.2f}-{max(times['before']):.2f}, "
            f"after {min(times['after']):.2f}-{max(times['after']):.2f})",
            flush=True,
        )


if __name__ == "__main__":
    sys.exit(main())
