"""Simulations of ``uqeval monitor``'s anytime-valid tests, against the naive daily fixed-sample tests; and its
speed against ``score --engine stream``.

    python benchmarks/monitor_sim.py                    # false alarms and detection delays (about a minute)
    python benchmarks/monitor_sim.py --streams 2000     # more Monte-Carlo streams
    python benchmarks/monitor_sim.py --speed --n 1e6    # CPU time of monitor vs score --engine stream

(Written for the tests of issue 30. Since issue 38 ``uqeval monitor`` also runs ``pit_mean`` and defaults to
change detectors, ``--detect``; ``benchmarks/monitor_delay.py`` measures those with the monitor's own code.)

Each simulated day has ``--rows`` Gaussian forecasts N(mu, sigma^2) of y ~ N(mu, sigma^2) (calibrated), scored
at level 0.95; the monitor's tests are the ones ``uqeval monitor`` reports for a Gaussian input (coverage@0.95
two-sided and pit_uniform, Bonferroni over the two: each alarms at e >= 2/alpha), computed by the same
functions (:mod:`uqeval.metrics.sequential`) from the same per-window sums. The naive monitor tests each
day's rows alone (exact binomial test of the misses, KS test of the PIT; Bonferroni over the two) and alarms
the first day either p-value is below its share of alpha. Figures are printed with their Monte-Carlo standard
errors, never asserted.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from uqeval.metrics import sequential

Z95 = 1.959963984540054


def simulate(streams: int, days: int, rows: int, shrink_day: int | None, factor: float, seed: int):
    """Per stream and day: misses at 0.95, PIT sums, and the naive p-values (the smaller of an exact two-sided
    binomial test of the misses and a KS test of the PIT, both of that day's rows alone)."""
    from scipy.stats import binomtest, kstwo, norm

    binom_p = np.array([binomtest(k, rows, 0.05).pvalue for k in range(rows + 1)])  # by the day's misses
    grid = np.arange(1, rows + 1) / rows
    rng = np.random.default_rng(seed)
    miss = np.zeros((streams, days))
    pit = np.zeros((streams, days, 3))
    p_naive = np.ones((streams, days))
    for d in range(days):
        z = rng.standard_normal((streams, rows))  # (y - mu) / sigma
        f = factor if shrink_day is not None and d + 1 >= shrink_day else 1.0  # forecast sigma x f
        zf = z / f
        u = norm.cdf(zf)
        k = (np.abs(zf) > Z95).sum(axis=1)
        miss[:, d] = k
        clipped = np.clip(u, sequential.PIT_EPS, 1 - sequential.PIT_EPS)
        pit[:, d] = np.column_stack(
            [np.full(streams, rows), np.log(clipped).sum(1), np.log1p(-clipped).sum(1)]
        )
        us = np.sort(u, axis=1)
        ks = np.maximum((grid - us).max(axis=1), (us - (grid - 1 / rows)).max(axis=1))
        p_naive[:, d] = np.minimum(binom_p[k], kstwo.sf(ks, rows))
    return miss, pit, p_naive


def e_alarm_day(miss, pit, rows: int, alpha: float, after: int = 1) -> np.ndarray:
    """First day (1-based, from day ``after`` on) either e-process reaches 2/alpha, or 0 when none does."""
    n = np.cumsum(np.full(miss.shape, rows, dtype=float), axis=1)
    under, over = sequential.coverage_log_e(n, np.cumsum(miss, axis=1), 0.05)
    log_cov = np.logaddexp(under, over) - np.log(2.0)
    log_pit = sequential.pit_log_e(np.cumsum(pit, axis=1))
    hit = (log_cov >= np.log(2 / alpha)) | (log_pit >= np.log(2 / alpha))
    hit[:, : after - 1] = False
    return np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, 0)


def naive_alarm_day(p_naive, alpha: float, after: int = 1) -> np.ndarray:
    hit = p_naive < alpha / 2
    hit[:, : after - 1] = False
    return np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, 0)


def share(x: np.ndarray) -> str:
    p = float(np.mean(x))
    return f"{p:.3f} ± {np.sqrt(p * (1 - p) / x.size):.3f}"


def delay(first: np.ndarray, change: int) -> str:
    hit = first >= change
    d = (first[hit] - change + 1).astype(float)  # days of changed rows seen when it alarms
    if d.size == 0:
        return "never"
    return (
        f"mean {d.mean():.2f} ± {d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else float('nan'):.2f} days, "
        f"median {np.median(d):.0f}, detected {share(hit)}"
    )


def speed(n: float, windows: list[str]) -> None:
    import os

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import pyarrow as pa
    import pyarrow.parquet as pq

    from uqeval.commands.monitor.core import monitor_file
    from uqeval.commands.score.stream import score_with_engine
    from uqeval.config import Settings
    from uqeval.engine.options import EngineOptions

    def score_stream(path: Path, settings: Settings) -> dict:
        return score_with_engine(path, settings, EngineOptions("stream")).summary

    rows = int(n)
    path = Path(__file__).resolve().parent / "data" / f"monitor_gaussian_{rows}.parquet"
    path.parent.mkdir(exist_ok=True)
    if not path.exists():
        rng = np.random.default_rng(0)
        secs = np.sort(rng.uniform(0, 30 * 86400, rows))
        t = np.datetime64("2024-01-01", "ns") + (secs * 1e9).astype("timedelta64[ns]")
        mu = rng.normal(size=rows)
        sd = rng.uniform(0.5, 2.0, rows)
        pq.write_table(pa.table({"t": t, "y": mu + sd * rng.normal(size=rows), "mu": mu, "sigma": sd}), path)
    score_stream(path, Settings())  # imports
    for rep in range(2):
        t0 = time.process_time()
        score_stream(path, Settings())
        base = time.process_time() - t0
        out = [f"score --engine stream {base:.2f} s CPU"]
        for w in windows:
            t0 = time.process_time()
            doc, _ = monitor_file(path, Settings(), window=w, time="t" if not w.isdigit() else None)
            took = time.process_time() - t0
            out.append(f"monitor {w} ({len(doc['windows'])} windows) {took:.2f} s = {took / base:.2f}x")
        print(f"n={rows:.0e} run {rep + 1}: " + "; ".join(out), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--rows", type=int, default=300, help="rows per day")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=20240)
    ap.add_argument("--speed", action="store_true", help="time monitor against score --engine stream instead")
    ap.add_argument("--n", type=float, default=1e6, help="--speed: rows")
    args = ap.parse_args()
    if args.speed:
        speed(args.n, ["30D", "7D", "1D", str(-(-int(args.n) // 30)), str(-(-int(args.n) // 300))])
        return
    a = args.alpha
    print(f"{args.streams} streams, {args.rows} rows a day, alpha {a} (coverage@0.95 + PIT, Bonferroni)")
    for days in (60, 365):
        miss, pit, p = simulate(args.streams, days, args.rows, None, 1.0, args.seed + days)
        e, nv = e_alarm_day(miss, pit, args.rows, a), naive_alarm_day(p, a)
        print(f"calibrated, {days} days: P(any alarm) e-process {share(e > 0)}; naive daily {share(nv > 0)}")
    miss, pit, p = simulate(args.streams, 60, args.rows, 40, 0.6, args.seed + 1)
    e, nv = e_alarm_day(miss, pit, args.rows, a), naive_alarm_day(p, a)
    e40, nv40 = e_alarm_day(miss, pit, args.rows, a, 40), naive_alarm_day(p, a, 40)
    print(
        "sigma x 0.6 from day 40 of 60 (delay: days of changed rows seen at the first alarm from day 40 on):"
    )
    print(f"  e-process: false alarm before day 40 {share((e > 0) & (e < 40))}; delay {delay(e40, 40)}")
    print(f"  naive daily: false alarm before day 40 {share((nv > 0) & (nv < 40))}; delay {delay(nv40, 40)}")


if __name__ == "__main__":
    main()
