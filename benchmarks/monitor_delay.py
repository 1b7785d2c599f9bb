"""Issue 38's delay table: days from a change to the first alarm of ``uqeval monitor --test`` (anytime-valid tests
of "calibrated all along") and ``--detect`` (e-detectors), after H calibrated days; and the detectors' false
alarms over calibrated years.

    python benchmarks/monitor_delay.py                        # 20 streams per H, 2000 calibrated years (~2 min)
    python benchmarks/monitor_delay.py --streams 100 --calibrated 500
    python benchmarks/monitor_delay.py --speed --n 1e6        # wall time of a whole run, --test vs --detect

Each day has ``--rows`` (300) Gaussian forecasts N(mu, sigma^2) of y ~ N(mu, sigma^2): calibrated for H days, then
the forecast sigma x 0.6 (95% intervals cover ~76%). A day's rows give the sums the monitor keeps per window
(:func:`uqeval.commands.monitor.windows.test_sums`: misses at 0.95, the PIT's log-sums, the mean PIT's moments),
computed here by the same kernels on the same draws of the PIT; the tests and detectors are then built from them
by the monitor's own code (``_test_specs`` and ``_test_entry`` of ``uqeval/commands/monitor/core.py``): the
three tests of a Gaussian input (coverage@0.95 two-sided, pit_uniform, pit_mean), at alpha = 0.05 (``--test``,
threshold 3 / alpha) or ARL = 3650 windows (``--detect``, threshold 3 x 3650). The delay of a stream is the day of
its first alarm at or after the change, counted from the change (an alarm at the end of the first changed day is
a delay of 1); a stream with an alarm before the change is counted in the false-alarm column, not in the delays.
Medians carry a bootstrap standard error, means their standard error.

The false-alarm run: ``--calibrated`` streams of ``--days`` (365) calibrated days at the default ARL; the share
with any alarm, next to Doob's bound (days / ARL: P(max_t M_t >= A) <= E[M_T] / A = T / A for the detector sum
M_t, a non-negative submartingale with mean t).
"""

from __future__ import annotations

import argparse
import time
from types import SimpleNamespace

import numpy as np

from uqeval.commands.monitor.core import DEFAULT_ARL, _test_entry, _test_specs
from uqeval.metrics import sequential

Z95 = 1.959963984540054
H_VALUES = (10, 100, 365, 730)


def day_sums(rng: np.random.Generator, rows: int, factor: float) -> dict:
    """One day's test sums (as ``test_sums`` of a Gaussian window) with the forecast sigma x ``factor``."""
    from scipy.special import ndtr

    z = rng.standard_normal(rows) / factor  # (y - mu) / forecast sigma
    u = ndtr(z)
    return {
        "n": rows,
        "miss": np.array([float(np.count_nonzero(np.abs(z) > Z95))]),
        "pit": sequential.pit_sums(u),
        "pit_mean": sequential.pit_mean_sums(u),
    }


def first_alarms(sums: list[dict], detect: bool, alpha: float, arl: float) -> np.ndarray:
    """Per window: does any test alarm there (its e-value at or above its threshold)."""
    windows = {k: {"tests": s} for k, s in enumerate(sums)}
    win = SimpleNamespace(windows=windows, levels=[0.95])
    specs = _test_specs(win, list(windows))  # type: ignore[arg-type]
    threshold = len(specs) * arl if detect else len(specs) / alpha
    looks = [{"start": k, "end": k + 1} for k in windows]
    hit = np.zeros(len(sums), dtype=bool)
    for spec in specs:
        entry = _test_entry(spec, threshold, looks, detect)
        hit |= np.asarray(entry["log_e_values"], dtype=float) >= np.log(threshold)
    return hit


def stream(rng, h: int, after: int, rows: int, factor: float) -> list[dict]:
    return [day_sums(rng, rows, 1.0 if d < h else factor) for d in range(h + after)]


def median_se(x: np.ndarray, rng, reps: int = 2000) -> float:
    boot = np.median(rng.choice(x, size=(reps, x.size)), axis=1)
    return float(np.std(boot))


def delays(args) -> None:
    rng = np.random.default_rng(args.seed)
    print(
        f"Delay (days) from the change (forecast sigma x {args.factor}) to the first alarm, {args.streams} streams "
        f"per H, {args.rows} rows a day"
    )
    print(f"{'H':>5} {'mode':>7} {'median (SE)':>13} {'mean (SE)':>13} {'max':>5} {'missed':>7} {'early':>6}")
    for h in args.h:
        found: dict[str, list[int]] = {"test": [], "detect": []}
        early = {"test": 0, "detect": 0}
        missed = {"test": 0, "detect": 0}
        for _ in range(args.streams):
            sums = stream(rng, h, args.after, args.rows, args.factor)
            for mode in ("test", "detect"):
                hit = first_alarms(sums, mode == "detect", args.alpha, args.arl)
                if hit[:h].any():
                    early[mode] += 1
                    continue
                after = np.flatnonzero(hit[h:])
                if after.size:
                    found[mode].append(int(after[0]) + 1)
                else:
                    missed[mode] += 1
        for mode in ("test", "detect"):
            d = np.asarray(found[mode], dtype=float)
            if d.size:
                med = f"{np.median(d):.1f} ({median_se(d, rng):.2f})"
                mean = f"{d.mean():.2f} ({d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else 0:.2f})"
                top = f"{d.max():.0f}"
            else:
                med = mean = top = "-"
            print(f"{h:>5} {mode:>7} {med:>13} {mean:>13} {top:>5} {missed[mode]:>7} {early[mode]:>6}")


def false_alarms(args) -> None:
    rng = np.random.default_rng(args.seed + 1)
    t0 = time.perf_counter()
    any_alarm = []
    first = []
    for _ in range(args.calibrated):
        sums = stream(rng, args.days, 0, args.rows, 1.0)
        hit = first_alarms(sums, True, args.alpha, args.arl)
        any_alarm.append(bool(hit.any()))
        if hit.any():
            first.append(int(np.argmax(hit)) + 1)
    share = float(np.mean(any_alarm))
    se = np.sqrt(max(share * (1 - share), 1.0 / args.calibrated) / args.calibrated)
    print(
        f"\nFalse alarms of --detect (ARL {args.arl:g} windows) over {args.calibrated} calibrated streams of "
        f"{args.days} days: share with any alarm {share:.4f} (SE {se:.4f}); Doob's bound days / ARL = "
        f"{args.days / args.arl:.3f}" + (f"; first alarms on days {sorted(first)[:10]}" if first else "")
    )
    print(f"({time.perf_counter() - t0:.0f} s)")


def speed(args) -> None:
    """Wall time of ``monitor_file`` on one generated Parquet file, --test and --detect (best of 3)."""
    import tempfile
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    from uqeval.commands.monitor.core import monitor_file
    from uqeval.config import Settings

    n = int(float(args.n))
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "g.parquet"
        mu = rng.normal(size=n)
        sd = rng.uniform(0.5, 2.0, n)
        pq.write_table(pa.table({"y": mu + sd * rng.normal(size=n), "mu": mu, "sigma": sd}), f)
        window = max(1, n // args.windows)
        times = {}
        for mode in ("test", "detect"):
            best = np.inf
            for _ in range(3):
                t0 = time.perf_counter()
                monitor_file(f, Settings(), window=window, detect=mode == "detect")
                best = min(best, time.perf_counter() - t0)
            times[mode] = best
    print(
        f"monitor of {n:,} rows in {args.windows} windows: --test {times['test']:.2f} s, --detect "
        f"{times['detect']:.2f} s ({100 * (times['detect'] / times['test'] - 1):+.1f}%)"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--streams", type=int, default=20, help="streams per H")
    p.add_argument(
        "--h", type=int, nargs="+", default=list(H_VALUES), help="calibrated days before the change"
    )
    p.add_argument("--after", type=int, default=15, help="days simulated after the change")
    p.add_argument("--rows", type=int, default=300)
    p.add_argument("--factor", type=float, default=0.6)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--arl", type=float, default=DEFAULT_ARL)
    p.add_argument(
        "--calibrated", type=int, default=2000, help="calibrated streams for the false-alarm share"
    )
    p.add_argument("--days", type=int, default=365, help="days of each calibrated stream")
    p.add_argument("--seed", type=int, default=38)
    p.add_argument("--speed", action="store_true", help="time whole runs instead")
    p.add_argument("--n", default="1e6", help="--speed: rows")
    p.add_argument("--windows", type=int, default=300, help="--speed: windows")
    args = p.parse_args()
    if args.speed:
        speed(args)
        return
    delays(args)
    if args.calibrated:
        false_alarms(args)


if __name__ == "__main__":
    main()
