"""How often the verdict (issue 39) is right: seeded simulations of every verdict, and what it costs.

    python benchmarks/verdict_sim.py                     # every case, n = 200 .. 20,000, 1000 seeds (minutes)
    python benchmarks/verdict_sim.py --seeds 200 --only gauss
    python benchmarks/verdict_sim.py cost                # the verdict's time against score's on 1e6 rows
    python benchmarks/verdict_sim.py cost-cli            # uqeval score on a 1e6-row file, with and without it

Cases (docs/guide/verdicts.md): Gaussian forecasts that are calibrated, too narrow (σ × 0.7), too wide
(σ × 1.4) and biased (mean + 0.3σ); classifiers that are calibrated, overconfident (temperature 0.5) and
underconfident (temperature 2); two equally good models and two that differ by a known CRPS margin.

"Detectable at n": the rule's deciding test, at its own (Bonferroni or Holm) level, has power >= 97.5%
(Gaussian: the other test's false alarms take at most 2.5% more) or >= 95% (classifier, comparison), by
the normal approximation of its statistic, whose mean and variance under the alternative are computed
by quadrature (Gaussian) or from 400,000 draws of the model (classifier, comparison). Printed per case and
n: detectable or not, the share of seeds with the right label and with a wrong one (its Monte-Carlo
standard error sqrt(p (1 - p) / seeds)). tests/test_verdict.py runs the same code with fewer seeds.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from typing import Any

import numpy as np
from scipy import integrate, stats

ALPHA = 0.05
NS = (200, 1000, 5000, 20000)

# ------------------------------------------------------------------------------------------ Gaussian
GAUSSIAN = {  # case: (std factor k, mean shift b in units of the true σ, the right label)
    "calibrated": (1.0, 0.0, "calibrated"),
    "sigma x 0.7": (0.7, 0.0, "overconfident"),
    "sigma x 1.4": (1.4, 0.0, "underconfident"),
    "bias +0.3 sigma": (1.0, 0.3, "biased"),
}


def gaussian_prediction(rng: np.random.Generator, n: int, k: float, b: float):
    """y ~ N(mu, 1); the forecast N(mu + b, k²)."""
    from uqeval.predictions import Gaussian

    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    return Gaussian(y_true=y, mean=mu + b, std=np.full(n, k))


def _moments(g, k: float, b: float) -> tuple[float, float]:
    """Mean and variance of g(u), u = Φ((Z - b)/k), Z ~ N(0, 1), by quadrature."""

    def e(f):
        return integrate.quad(
            lambda z: f(stats.norm.cdf((z - b) / k)) * stats.norm.pdf(z), -12, 12, limit=200
        )[0]

    m = e(g)
    return m, e(lambda u: g(u) ** 2) - m * m


def gaussian_power(k: float, b: float, n: int) -> float:
    """Power of the deciding test of rule pit-moments (mean test for a bias, else the spread test), each at
    α/2, by the normal approximation; for the calibrated case: 1 (nothing to detect)."""
    crit = stats.norm.ppf(1 - ALPHA / 4)
    if b != 0.0:  # the mean test divides by max(PIT variance, 1/12)
        g, m0, v0 = (lambda u: u), 0.5, max(_moments(lambda u: u, k, b)[1], 1 / 12)
    elif k != 1.0:
        g, m0, v0 = (lambda u: abs(u - 0.5)), 0.25, 1 / 48
    else:
        return 1.0
    m, v = _moments(g, k, b)
    return float(stats.norm.cdf((abs(m - m0) * math.sqrt(n) - crit * math.sqrt(v0)) / math.sqrt(v)))


def judge_gaussian(pred) -> str:
    from uqeval.commands.verdict import score_aspects

    doc = {
        "schema": "uqeval.score/1",
        "input": {"representation": "gaussian", "n_rows": pred.n},
        "metrics": {},
    }
    return score_aspects(doc, pred, None)[0]["label"]


# ------------------------------------------------------------------------------------------ classifier
CLASSIFIER = {  # case: (temperature, the right label)
    "calibrated": (1.0, "calibrated"),
    "temperature 0.5": (0.5, "overconfident"),
    "temperature 2": (2.0, "underconfident"),
}
K, LOGIT_SCALE = 4, 1.5


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def classifier_prediction(rng: np.random.Generator, n: int, temperature: float):
    """Labels drawn from softmax(logits); the forecast softmax(logits / temperature)."""
    from uqeval.predictions import Categorical

    logits = LOGIT_SCALE * rng.normal(size=(n, K))
    p = _softmax(logits)
    y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return Categorical(y_true=np.minimum(y, K - 1), proba=_softmax(logits / temperature))


def classifier_power(temperature: float, n: int) -> float:
    if temperature == 1.0:
        return 1.0
    rng = np.random.default_rng(12345)
    logits = LOGIT_SCALE * rng.normal(size=(400_000, K))
    p, q = _softmax(logits), _softmax(logits / temperature)
    top = np.argmax(q, axis=1)
    conf, right = q.max(axis=1), p[np.arange(len(p)), top]
    drift = float(np.mean(right - conf))
    v0, v1 = float(np.mean(conf * (1 - conf))), float(np.mean(right * (1 - right)))
    crit = stats.norm.ppf(1 - ALPHA / 2)
    shift = abs(drift) * math.sqrt(n) - 0.5 / math.sqrt(n)  # the continuity correction of the rule
    return float(stats.norm.cdf((shift - crit * math.sqrt(v0)) / math.sqrt(v1)))


def judge_classifier(pred) -> str:
    from uqeval.commands.verdict import score_aspects

    doc = {
        "schema": "uqeval.score/1",
        "input": {"representation": "categorical", "n_rows": pred.n},
        "metrics": {},
    }
    return score_aspects(doc, pred, None)[0]["label"]


# ------------------------------------------------------------------------------------------ comparison
COMPARISON = {  # case: ((mean shift, std) of model a, of model b), the right label
    "equal models": (((0.3, 1.0), (-0.3, 1.0)), "not distinguishable"),
    "CRPS margin (std 1 vs 1.3)": (((0.0, 1.0), (0.0, 1.3)), "distinguishable"),
}


def expected_crps(shift: float, s: float) -> float:
    """E CRPS(N(shift, s²), y) for y ~ N(0, 1): E|X - Y| - E|X - X'| / 2 in closed form."""
    v = s * s + 1.0
    e_abs = math.sqrt(v) * math.sqrt(2 / math.pi) * math.exp(-shift * shift / (2 * v)) + shift * (
        1 - 2 * stats.norm.cdf(-shift / math.sqrt(v))
    )
    return e_abs - s / math.sqrt(math.pi)


def comparison_models(rng: np.random.Generator, n: int, a: tuple[float, float], b: tuple[float, float]):
    from uqeval.predictions import Gaussian

    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    return {
        "a": Gaussian(y_true=y, mean=mu + a[0], std=np.full(n, a[1])),
        "b": Gaussian(y_true=y, mean=mu + b[0], std=np.full(n, b[1])),
    }


def comparison_power(a: tuple[float, float], b: tuple[float, float], n: int) -> float:
    if math.isclose(expected_crps(*a), expected_crps(*b), rel_tol=1e-12):
        return 1.0  # nothing to detect: judged by its false alarms
    from uqeval.metrics.scoring import crps_gaussian

    rng = np.random.default_rng(54321)
    y = rng.normal(size=400_000)
    d = crps_gaussian(y, np.full_like(y, b[0]), np.full_like(y, b[1])) - crps_gaussian(
        y, np.full_like(y, a[0]), np.full_like(y, a[1])
    )
    crit = stats.norm.ppf(1 - ALPHA / 2)  # Holm over one test (metrics=crps)
    return float(stats.norm.cdf(abs(d.mean()) * math.sqrt(n) / d.std() - crit))


def judge_comparison(models: dict[str, Any], seed: int, n_permutations: int) -> tuple[str, str]:
    """The comparison label and its sentence (``uqeval.compare(..., metrics=["crps"])``)."""
    import uqeval

    doc = uqeval.compare(models, metrics=["crps"], n_boot=0, n_permutations=n_permutations, seed=seed)
    aspect = doc["verdict"]["aspects"][0]
    return aspect["label"], aspect["sentence"]


# ------------------------------------------------------------------------------------------ runs
def run_case(group: str, case: str, n: int, seeds: int, n_permutations: int = 0) -> dict[str, Any]:
    """Share of ``seeds`` seeded data sets on which the verdict gives the right label (and a wrong one)."""
    right_count = wrong_count = 0
    if group == "gaussian":
        k, b, want = GAUSSIAN[case]
        power = gaussian_power(k, b, n)
    elif group == "classifier":
        t, want = CLASSIFIER[case]
        power = classifier_power(t, n)
    else:
        (a, bb), want = COMPARISON[case]
        power = comparison_power(a, bb, n)
    need = 0.975 if group == "gaussian" else 0.95
    for seed in range(seeds):
        rng = np.random.default_rng([39, n, seed, zlib.crc32(case.encode())])
        if group == "gaussian":
            got = judge_gaussian(gaussian_prediction(rng, n, k, b))
        elif group == "classifier":
            got = judge_classifier(classifier_prediction(rng, n, t))
        else:
            label, sentence = judge_comparison(comparison_models(rng, n, a, bb), seed, n_permutations)
            got = (
                label if label != "distinguishable" or sentence.startswith("a better than b") else "wrong way"
            )
        right_count += got == want
        wrong_count += got != want
    return {
        "group": group,
        "case": case,
        "n": n,
        "seeds": seeds,
        "power": power,
        "detectable": power >= need,
        "right": right_count / seeds,
        "wrong": wrong_count / seeds,
        "want": want,
    }


def cases(only: str | None = None):
    for group, table in (("gaussian", GAUSSIAN), ("classifier", CLASSIFIER), ("comparison", COMPARISON)):
        for case in table:
            if only is None or only in group or only in case:
                yield group, case


def cost(rows: int = 1_000_000, repeat: int = 2) -> None:
    """The verdict's time against ``uqeval score``'s (in memory) on ``rows`` rows: Gaussian and classifier,
    calibrated and not (a miscalibrated one also fits its recalibration)."""
    from uqeval.commands.score.core import score_prediction
    from uqeval.commands.verdict import verdict_of
    from uqeval.config import Settings

    makers = (
        ("gaussian calibrated", lambda rng: gaussian_prediction(rng, rows, 1.0, 0.0)),
        ("gaussian sigma x 0.7", lambda rng: gaussian_prediction(rng, rows, 0.7, 0.0)),
        ("classifier calibrated", lambda rng: classifier_prediction(rng, rows, 1.0)),
        ("classifier temperature 0.5", lambda rng: classifier_prediction(rng, rows, 0.5)),
    )
    for name, make in makers:
        best_score = best_verdict = math.inf
        for _ in range(repeat):
            pred = make(np.random.default_rng(1))  # a fresh container: nothing memoised from the last round
            # CPU time of this process (BLAS and the family threads included): on a shared machine wall time
            # measures the other users as much as uqeval
            t0 = time.process_time()
            metrics, _ = score_prediction(pred, Settings())
            t1 = time.process_time()
            doc = {"schema": "uqeval.score/1", "input": {"representation": pred.kind, "n_rows": pred.n}}
            verdict_of({**doc, "metrics": metrics}, pred)
            t2 = time.process_time()
            best_score, best_verdict = min(best_score, t1 - t0), min(best_verdict, t2 - t1)
        print(
            f"{name:28s} score {best_score:7.2f} s CPU   verdict {best_verdict:6.3f} s CPU   "
            f"{100 * best_verdict / best_score:5.2f}% of score",
            flush=True,
        )


def cost_cli(rows: int = 1_000_000, repeat: int = 2) -> None:
    """``uqeval score FILE --format json`` end to end on a ``rows``-row Parquet file (under /tmp), with and
    without ``--no-verdict``: what the verdict adds to the command a user runs."""
    import subprocess
    import tempfile
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(2)
    mu = rng.normal(size=rows)
    y = mu + rng.normal(size=rows)
    logits = LOGIT_SCALE * rng.normal(size=(rows, K))
    p = _softmax(logits)
    labels = np.minimum((rng.random(rows)[:, None] > np.cumsum(p, axis=1)).sum(axis=1), K - 1)
    q = _softmax(logits / 0.5)
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "gaussian sigma x 0.7": Path(tmp) / "g.parquet",
            "classifier temperature 0.5": Path(tmp) / "c.parquet",
        }
        pq.write_table(
            pa.table({"y": y, "mu": mu, "sigma": np.full(rows, 0.7)}), files["gaussian sigma x 0.7"]
        )
        pq.write_table(
            pa.table({"label": labels, **{f"p_{j}": q[:, j] for j in range(K)}}),
            files["classifier temperature 0.5"],
        )
        for name, path in files.items():
            best: dict[bool, float] = {True: math.inf, False: math.inf}
            for _ in range(repeat):
                for verdict in (True, False):
                    argv = [sys.executable, "-m", "uqeval", "score", str(path), "--format", "json"]
                    t0 = time.perf_counter()
                    subprocess.run(
                        argv + ([] if verdict else ["--no-verdict"]), check=True, capture_output=True
                    )
                    best[verdict] = min(best[verdict], time.perf_counter() - t0)
            extra = best[True] - best[False]
            print(
                f"{name:28s} uqeval score {best[False]:7.2f} s, with the verdict {best[True]:7.2f} s: "
                f"{100 * extra / best[False]:+5.1f}%",
                flush=True,
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", nargs="?", default="sim", choices=["sim", "cost", "cost-cli"])
    ap.add_argument("--seeds", type=int, default=1000)
    ap.add_argument("--only", default=None)
    ap.add_argument("--n", type=int, nargs="*", default=list(NS))
    ap.add_argument(
        "--permutations", type=int, default=999, help="compare's permutations (0: Diebold-Mariano)"
    )
    ap.add_argument("--rows", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    if args.what == "cost":
        cost(args.rows)
        return 0
    if args.what == "cost-cli":
        cost_cli(args.rows)
        return 0
    print(
        f"{'case':34s} {'n':>6s} {'power':>6s} {'detect':>6s} {'right':>6s} {'wrong':>6s} {'±se':>6s}  seeds"
    )
    for group, case in cases(args.only):
        for n in args.n:
            seeds = args.seeds if group != "comparison" else max(1, args.seeds // 5)
            r = run_case(group, case, n, seeds, args.permutations)
            se = math.sqrt(max(r["right"] * (1 - r["right"]), 1e-12) / seeds)
            print(
                f"{group + ': ' + case:34s} {n:6d} {r['power']:6.3f} {'yes' if r['detectable'] else 'no':>6s} "
                f"{r['right']:6.3f} {r['wrong']:6.3f} {se:6.3f}  {seeds}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
