"""Size of every p-value family of uqeval under its null hypothesis (issue 25), with Monte-Carlo errors.

    python benchmarks/null_sizes.py                 # 4000 replicates per family (a few minutes)
    python benchmarks/null_sizes.py --reps 1000     # quicker
    python benchmarks/null_sizes.py --seed 7 --alpha 0.01
    python benchmarks/null_sizes.py --only pit       # families whose name contains "pit"
    python benchmarks/null_sizes.py --only dependent --reps 1000   # compare on MA(1) / clustered rows
    python benchmarks/null_sizes.py --only weighted  # the tests with --weights (Kish's n_eff)

Each replicate is one data set drawn under the null (calibrated forecasts, exchangeable models, equal
expected scores), analysed exactly as ``uqeval`` analyses one file with ``--seed`` 0 (the CLI default):
the catalogue's ``calibration_tests`` family, compare's sign-flip and Diebold–Mariano tests, compare on
dependent rows (MA(1) and clustered differences: the independent-rows sign flip and bootstrap interval next to
their block and cluster versions; the independent-rows lines are *expected* to be flagged) and the UCC
permutation test. Prints, per p-value, the share of p < alpha, its Monte-Carlo standard error
sqrt(alpha (1 - alpha) / R) and z = (size - alpha) / se. |z| > 3.5 flags a test that does not hold
its size (the suite, tests/test_null_sizes.py, asserts that with fewer replicates).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Iterator

import numpy as np

Row = tuple[str, str, int, np.ndarray]  # (family, p-value, n, p-values of the replicates)


def _catalogue(make: Callable, keys: tuple[str, ...], reps: int, rng) -> dict[str, np.ndarray]:
    from uqeval.catalogue import compute, get_family
    from uqeval.config import make_settings

    settings = make_settings(diagnostics=True)
    family = get_family("calibration_tests")
    out: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(reps):
        res = compute(family, make(rng), settings)
        for k in keys:
            out[k].append(res[k])
    return {k: np.array(v) for k, v in out.items()}


def pit_families(reps: int, rng) -> Iterator[Row]:
    from scipy.stats import norm

    from uqeval.predictions import Gaussian, Intervals, Quantiles, Samples

    levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    pit = ("pit_ks_p", "pit_cvm_p", "pit_ad_p")

    def gaussian(r, n=40):
        mu = r.normal(size=n)
        return Gaussian(mu, std=np.ones(n), y_true=mu + r.normal(size=n))

    def tied(r, n=60, m=9, digits=0):
        mu = r.normal(size=n)
        y = np.round(mu + r.normal(size=n), digits)
        return Samples(np.round(mu[:, None] + r.normal(size=(n, m)), digits), y_true=y)

    def tied_small(r, n=60):
        return tied(r, n, m=4)

    def quantiles(r, n=60):
        mu = r.normal(size=n)
        return Quantiles(mu[:, None] + norm.ppf(levels), levels=levels, y_true=mu + r.normal(size=n))

    def interval90(r, n=60):
        mu = r.normal(size=n)
        h = norm.ppf(0.95)
        return Intervals(mu - h, mu + h, levels=[0.9], y_true=mu + r.normal(size=n))

    cases = [
        ("PIT gaussian", gaussian, pit, 40),
        ("PIT tied ensemble M=9", tied, pit + ("rank_hist_chi2_p",), 60),
        ("PIT tied ensemble M=4", tied_small, pit + ("rank_hist_chi2_p",), 60),
        ("PIT quantiles (5 levels)", quantiles, pit, 60),
        ("PIT 90% interval", interval90, pit, 60),
    ]
    for name, make, keys, n in cases:
        for k, p in _catalogue(make, keys, reps, rng).items():
            yield name, k, n, p


def binary_families(reps: int, rng) -> Iterator[Row]:
    from uqeval.predictions import Categorical

    def binary(r, n=300):
        p = r.uniform(0.05, 0.95, size=n)
        return Categorical(p, y_true=(r.uniform(size=n) < p).astype(float))

    for k, p in _catalogue(binary, ("spiegelhalter_p", "hosmer_lemeshow_p"), reps, rng).items():
        yield "binary calibration", k, 300, p


def compare_families(reps: int, rng) -> Iterator[Row]:
    from uqeval.commands.compare.core import sign_flip_tests
    from uqeval.metrics.comparison import diebold_mariano

    n = 30
    d = rng.standard_t(4, size=(n, reps))
    yield "compare sign-flip (t4 differences)", "permutation_p", n, sign_flip_tests(d, 999, seed=0)
    skewed = rng.gamma(2.0, size=(reps, n)) - rng.gamma(2.0, size=(reps, n))
    yield (
        "compare DM lag 0 (skewed iid)",
        "dm_p",
        n,
        np.array([diebold_mariano(x, 0 * x)["p_value"] for x in skewed]),
    )
    e = rng.normal(size=(reps, n + 1))
    ma1 = e[:, 1:] + 0.5 * e[:, :-1]
    yield (
        "compare DM lag 1 (MA(1))",
        "dm_p",
        n,
        np.array([diebold_mariano(x, 0 * x, lag=1)["p_value"] for x in ma1]),
    )
    e = rng.normal(size=(reps, 200 + 2))
    ma2 = e[:, 2:] + 0.8 * e[:, 1:-1] + 0.5 * e[:, :-2]
    yield (
        "compare DM lag 2 (MA(2))",
        "dm_p",
        200,
        np.array([diebold_mariano(x, 0 * x, lag=2)["p_value"] for x in ma2]),
    )


#: the nominal level (``--alpha``): the bootstrap intervals below are (1 - alpha) intervals
_ALPHA = 0.05


def dependent_families(reps: int, rng) -> Iterator[Row]:
    """Compare on dependent rows (issue 25): MA(1) differences in row order and clustered differences
    (a random effect per cluster of 10 rows), each with the independent-rows version (oversized) and the
    block or cluster version (``block_size=10`` / ``cluster=``): the sign-flip test (non-overlapping blocks)
    and the (1 - alpha) bootstrap percentile interval (circular blocks; blocks of 5 and the non-overlapping
    blocks used before for comparison) of the mean difference (size: the share of intervals that exclude 0)."""
    from uqeval.catalogue import RowStat
    from uqeval.commands.compare.core import poisson_bootstrap, sign_flip_tests
    from uqeval.resample import optimal_block_size, resampling_units

    def ma1(n: int) -> np.ndarray:
        e = rng.normal(size=(n + 1, reps))
        return e[1:] + 0.8 * e[:-1]

    def clustered(n: int) -> np.ndarray:
        groups = np.arange(n) // 10
        return rng.normal(size=(n // 10, reps))[groups] + rng.normal(size=(n, reps))

    cases = (("MA(1) theta=0.8", ma1, "block_size", 10), ("clusters of 10", clustered, "cluster", None))
    for label, make, kind, size in cases:
        n = 200
        d = make(n)
        units, _ = resampling_units(n, np.arange(n) // 10 if kind == "cluster" else None, size)
        unit = "blocks of 10" if kind == "block_size" else "20 clusters"
        yield f"sign-flip {label}, iid rows", "permutation_p", n, sign_flip_tests(d, 999, seed=0)
        yield f"sign-flip {label}, {unit}", "permutation_p", n, sign_flip_tests(d, 999, seed=0, units=units)
        n = 1000
        d = make(n)
        units, _ = resampling_units(n, np.arange(n) // 10 if kind == "cluster" else None, size)
        unit = "blocks of 10" if kind == "block_size" else "100 clusters"
        variants = [(None, None, "iid rows"), (units, size, unit)]
        if kind == "block_size":  # circular blocks (the bootstrap) next to short blocks and fixed blocks
            circular = "circular blocks of 10"
            variants = [
                (None, None, "iid rows"),
                (units, size, circular),
                (units, 5, "circular blocks of 5"),
                (units, None, "non-overlapping blocks of 10 (before)"),
            ]
        for u, b, what in variants:
            excluded = []
            for r in range(reps):  # seed r: each data set its own draws, as ``--seed`` varied per file
                rep = poisson_bootstrap([RowStat(score=d[:, r])], n, 499, r, u, b)[0]
                lo, hi = np.quantile(rep, [_ALPHA / 2, 1 - _ALPHA / 2])
                excluded.append(1.0 if lo <= 0.0 <= hi else 0.0)  # as a p-value: 0 = 0 excluded (rejected)
            yield f"bootstrap CI {label}, {what}", "0 outside the CI", n, np.array(excluded)
    # block_size="auto": each data set's own block size (Politis-White), as compare chooses it
    n = 1000
    d = ma1(n)
    sizes = [optimal_block_size(d[:, r]) for r in range(reps)]
    p, excluded = [], []
    for r, size in enumerate(sizes):
        units, _ = resampling_units(n, None, size)
        p.append(sign_flip_tests(d[:, [r]], 999, seed=r, units=units)[0])
        rep = poisson_bootstrap([RowStat(score=d[:, r])], n, 499, r, units, size)[0]
        lo, hi = np.quantile(rep, [_ALPHA / 2, 1 - _ALPHA / 2])
        excluded.append(1.0 if lo <= 0.0 <= hi else 0.0)
    label = f"MA(1) theta=0.8, auto blocks (median {int(np.median(sizes))})"
    yield f"sign-flip {label}", "permutation_p", n, np.array(p)
    yield f"bootstrap CI {label}", "0 outside the CI", n, np.array(excluded)


def ucc_family(reps: int, rng) -> Iterator[Row]:
    from uqeval.metrics.ucc import permutation_test

    n, p = 40, []
    for _ in range(reps):
        pred = rng.normal(size=n)
        y = pred + rng.normal(size=n)
        w1, w2 = rng.gamma(3.0, 1 / 3, size=(2, n))
        bands = [(pred - w1, pred + w1), (pred - w2, pred + w2)]
        p.append(permutation_test(y, pred, bands, n_permutations=199, seed=0)["pairs"][0]["p_value"])
    yield "ucc permutation (exchangeable bands)", "p_value", n, np.array(p)


def _weights(kind: str, r, n: int) -> np.ndarray:
    """Row weights drawn apart from the outcomes: uniform on [0.2, 3] or log-normal (sigma 1, n_eff ~ n / e)."""
    return r.uniform(0.2, 3.0, n) if kind == "uniform" else r.lognormal(0.0, 1.0, n)


def weighted_families(reps: int, rng) -> Iterator[Row]:
    """The tests that take weights (issue 37): statistics of the weighted rows, the null at Kish's n_eff
    (Hosmer-Lemeshow: per group); and the information criteria's standard error as a z test of a weighted
    mean (p = 2 Phi(-|mean / se|) of iid N(0, 1) terms)."""
    from uqeval.catalogue import get_family
    from uqeval.config import make_settings
    from uqeval.metrics.ensembles import sem_from_moments, sem_moments
    from uqeval.metrics.normal import ndtr
    from uqeval.predictions import Categorical, Gaussian

    settings = make_settings(diagnostics=True)
    family = get_family("calibration_tests")
    for kind in ("uniform", "lognormal"):
        pit: dict[str, list[float]] = {k: [] for k in ("pit_ks_p", "pit_cvm_p", "pit_ad_p")}
        binary: dict[str, list[float]] = {k: [] for k in ("spiegelhalter_p", "hosmer_lemeshow_p")}
        se_p = []
        for _ in range(reps):
            mu = rng.normal(size=40)
            g = Gaussian(mu, std=np.ones(40), y_true=mu + rng.normal(size=40))
            res = family.compute["gaussian"](g, settings, _weights(kind, rng, 40))
            for k in pit:
                pit[k].append(res[k])
            p = rng.uniform(0.05, 0.95, size=300)
            c = Categorical(p, y_true=(rng.uniform(size=300) < p).astype(float))
            res = family.compute["categorical"](c, settings, _weights(kind, rng, 300))
            for k in binary:
                binary[k].append(res[k])
            t, w = rng.normal(size=(200, 1)), _weights(kind, rng, 200)
            st = sem_moments(t, w)
            se_p.append(2.0 * ndtr(-abs(st["mean"][0] / sem_from_moments(st)[0])))
        label = f"weighted ({kind} weights)"
        # the exact KS law at n_eff is conservative for very uneven weights (0.037 at 5 % with log-normal
        # weights, n_eff ~ 15): below alpha is expected there, above would not be
        for k, v in pit.items():
            conservative = " (conservative)" if k == "pit_ks_p" and kind == "lognormal" else ""
            yield f"PIT gaussian, {label}{conservative}", k, 40, np.array(v)
        for k, v in binary.items():
            yield f"binary calibration, {label}", k, 300, np.array(v)
        yield f"information criteria se, {label}", "z test of the mean", 200, np.array(se_p)


FAMILIES = {
    "pit": pit_families,
    "binary": binary_families,
    "compare": compare_families,
    "dependent": dependent_families,
    "ucc": ucc_family,
    "weighted": weighted_families,
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--reps", type=int, default=4000, help="replicates (data sets) per family (default 4000)")
    ap.add_argument(
        "--seed", type=int, default=2025, help="seed of the simulated data (uqeval's own --seed stays 0)"
    )
    ap.add_argument("--alpha", type=float, default=0.05, help="nominal level (default 0.05)")
    ap.add_argument(
        "--only",
        default="",
        help="run the families whose name contains this (pit, binary, compare, dependent, ucc, weighted)",
    )
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    a = args.alpha
    global _ALPHA
    _ALPHA = a
    se = math.sqrt(a * (1 - a) / args.reps)
    print(f"alpha = {a}, R = {args.reps} replicates per family, Monte-Carlo se = {se:.4f}")
    print(f"{'family':52s} {'p-value':20s} {'n':>5s} {'size':>7s} {'se':>7s} {'z':>6s}")
    bad = 0
    for name, fam in FAMILIES.items():
        if args.only not in name:
            continue
        t0 = time.perf_counter()
        for family, key, n, p in fam(args.reps, rng):
            size = float(np.mean(p < a))
            z = (size - a) / se
            # the independent-rows versions on dependent rows, and blocks shorter than the dependence (blocks
            # of 5 on MA(1) theta=0.8) or non-overlapping ones (larger variance): expected to be oversized
            expected = any(k in family for k in ("iid rows", "blocks of 5", "(before)")) or (
                "(conservative)" in family and z < 0
            )
            bad += abs(z) > 3.5 and not expected
            flag = (
                (
                    f"  <-- {'over' if z > 0 else 'under'}sized, as expected"
                    if expected
                    else "  <-- outside 3.5 se"
                )
                if abs(z) > 3.5
                else ""
            )
            print(f"{family:52s} {key:20s} {n:5d} {size:7.4f} {se:7.4f} {z:6.2f}{flag}")
        print(f"  ({name}: {time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
