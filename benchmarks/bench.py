"""Benchmarks: generate N-row files and time whole `uqeval` processes (wall time, peak memory).

    python benchmarks/bench.py                 # every benchmark at its default size
    python benchmarks/bench.py score --n 1e6   # one of them
    python benchmarks/bench.py recalibrate samples_anchor --repeat 3 --anchor-python /path/to/venv/bin/python
                                               # best of 3 runs; anchors run in a venv with the reference libraries

Figures are printed, never asserted: speed targets live here, not in timed tests.
Data files are written under benchmarks/data/ (git-ignored) and reused.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
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
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(p.returncode, wall, r.ru_maxrss, r.ru_utime + r.ru_stime)\n"
)


#: runs per whole-process measurement (--repeat); the best wall time and the lowest peak are kept,
#: since the machine may be shared
REPEAT = 1


def _child_env() -> dict[str, str]:
    """The environment of a measured process: bytecode cached (under benchmarks/data/pycache), as after
    ``pip install``, which compiles it, even where the shell sets PYTHONDONTWRITEBYTECODE (compiling
    uqeval's modules afresh costs ~0.1 s a process, which no installed uqeval pays)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(DATA / "pycache")
    return env


def run_cli(args: list[str], repeat: int | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of a `python -m uqeval ...` process (measured by a wrapper),
    the best of ``repeat`` runs (default :data:`REPEAT`)."""
    wall, mb, _ = run_cli_cpu(args, repeat)
    return wall, mb


def run_cli_cpu(args: list[str], repeat: int | None = None) -> tuple[float, float, float]:
    """:func:`run_cli` and the process's CPU seconds (user + sys, the lowest of the runs): on a
    shared machine the CPU time is the steadier figure."""
    walls, peaks, cpus = [], [], []
    # compile uqeval once, unmeasured (a no-op once its bytecode is cached); the libraries come compiled
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "uqeval"], cwd=ROOT, env=_child_env(), check=True
    )
    for _ in range(repeat or REPEAT):
        proc = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env=_child_env(),
        )
        code, wall, rss, cpu = proc.stdout.split()
        if int(code) != 0:
            raise SystemExit(f"uqeval {' '.join(args)} failed:\n{proc.stderr}")
        walls.append(float(wall))
        peaks.append(int(rss) / 1024.0)
        cpus.append(float(cpu))
    return min(walls), min(peaks), min(cpus)


def run_cli_bare(repeat: int | None = None) -> tuple[float, float]:
    """:func:`run_cli` of the libraries the CLI cannot do without (the interpreter, numpy, pyarrow.parquet,
    typer): the start-up floor of any ``uqeval score`` on a Parquet file."""
    walls = []
    for _ in range(repeat or REPEAT):
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-c", "import numpy, pyarrow.parquet, typer"],
            cwd=ROOT,
            check=True,
            env={**_child_env(), "OPENBLAS_NUM_THREADS": "1"},
        )
        walls.append(time.perf_counter() - t0)
    return min(walls), 0.0


def best_of(fn, repeats: int, clock=time.perf_counter) -> float:
    """Best wall seconds (``clock``: e.g. ``time.process_time`` for CPU seconds) of ``repeats`` in-process
    calls of ``fn()``."""
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


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


def gaussian_weighted_file(n: int) -> Path:
    """:func:`gaussian_file`'s rows with a weights column ``w`` (uniform on [0, 2], every 10th row 0)."""
    import pyarrow.parquet as pq

    path = DATA / f"gaussian_weighted_{n}.parquet"
    if not path.exists():
        table = pq.read_table(gaussian_file(n))
        w = np.random.default_rng(1).uniform(0.0, 2.0, n)
        w[::10] = 0.0
        pq.write_table(table.append_column("w", [w]), path)
    return path


def _with_and_without_weights(args: list[str], runs: int) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """``uqeval ARGS`` without and with ``--weights w``, runs alternated: the medians of (wall, CPU) seconds of
    each (``"plain"``, ``"weighted"``) and their ratio weighted / plain."""
    times: dict[str, list[tuple[float, float]]] = {"plain": [], "weighted": []}
    for _ in range(runs):
        for name, extra in (("plain", []), ("weighted", ["--weights", "w"])):
            wall, _, cpu = run_cli_cpu([*args, *extra], repeat=1)
            times[name].append((wall, cpu))
    med = {k: np.median(np.array(v), axis=0) for k, v in times.items()}
    return med, med["weighted"] / med["plain"]


def bench_weights(n: int, runs: int = 5) -> None:
    """`uqeval score` of N Gaussian rows without and with `--weights` (issue 25: at most +15%), runs
    alternated on the same file, medians of wall and CPU seconds. With weights, the metrics that take none
    (reliability, adversarial group calibration, ...) are left out, and the weighted ones go through their
    per-row forms."""
    path = gaussian_weighted_file(n)
    med, ratio = _with_and_without_weights(["score", str(path), "--format", "json"], runs)
    for k in ("plain", "weighted"):
        print(
            f"score gaussian {k:<9} N={n:>9,d}  wall {med[k][0]:6.2f} s  cpu {med[k][1]:6.2f} s  (median of {runs})"
        )
    print(f"weights cost: wall x{ratio[0]:.3f}, cpu x{ratio[1]:.3f}   (target: <= x1.15)")


def classification_weighted_file(n: int, k: int = 10) -> Path:
    """:func:`classification_file`'s rows with a weights column ``w`` (uniform on [0, 2], every 10th row 0)."""
    import pyarrow.parquet as pq

    path = DATA / f"classification_weighted_{n}_{k}.parquet"
    if not path.exists():
        table = pq.read_table(classification_file(n, k))
        w = np.random.default_rng(1).uniform(0.0, 2.0, n)
        w[::10] = 0.0
        pq.write_table(table.append_column("w", [w]), path)
    return path


def bench_weights_classification(n: int, runs: int = 5) -> None:
    """`uqeval score --diagnostics` of N 10-class rows without and with `--weights` (issue 37: at most +10%),
    runs alternated on the same file, medians of wall and CPU seconds. The weighted run leaves out the
    metrics that draw at random (SPCE, Bayesian ECE: named in weights.not_weighted), so the families both
    compute are also timed one by one in this process (CPU seconds, best of 3 each: on a shared machine wall
    times of one kernel swing by 2x), plain against weighted kernel."""
    import pyarrow.parquet as pq

    path = classification_weighted_file(n)
    med, ratio = _with_and_without_weights(["score", str(path), "--diagnostics", "--format", "json"], runs)
    for k in ("plain", "weighted"):
        print(
            f"score --diagnostics classif. {k:<9} N={n:>9,d}  wall {med[k][0]:6.2f} s  cpu {med[k][1]:6.2f} s  "
            f"(median of {runs})"
        )
    print(f"weights cost (whole runs): wall x{ratio[0]:.3f}, cpu x{ratio[1]:.3f}   (target: <= x1.10)")

    sys.path.insert(0, str(ROOT))
    from uqeval.catalogue import families_for
    from uqeval.config import make_settings
    from uqeval.predictions import Categorical

    t = pq.read_table(path)
    proba = np.column_stack([t.column(f"p_{j}").to_numpy() for j in range(10)])
    label, wt = t.column("label").to_numpy(), t.column("w").to_numpy()
    keep = wt > 0  # (the weighted run drops the rows of weight 0 first; both kernels get the same rows)
    proba, label, wt = proba[keep], label[keep], wt[keep]
    settings = make_settings(diagnostics=True)
    total = [0.0, 0.0]
    for f in families_for("categorical", settings):
        if "categorical" not in f.weighted:
            continue
        fn = f.compute["categorical"]
        plain = best_of(lambda: fn(Categorical(proba, y_true=label), settings), 3, time.process_time)  # noqa: B023
        weighted = best_of(lambda: fn(Categorical(proba, y_true=label), settings, wt), 3, time.process_time)  # noqa: B023
        total[0] += plain
        total[1] += weighted
        print(
            f"  kernel {f.name:<24} plain {plain:6.3f} s  weighted {weighted:6.3f} s  x{weighted / plain:.2f}"
        )
    print(
        f"  kernels with a weighted form: plain {total[0]:.2f} s, weighted {total[1]:.2f} s, x{total[1] / total[0]:.2f}"
    )


def bench_classification(n: int, k: int = 10) -> None:
    path = classification_file(n, k)
    wall, mb = run_cli(["score", str(path), "--format", "json", "--levels", "0.5,0.9,0.95"])
    print(
        f"score classif.   N={n:>9,d} K={k}  {wall:7.2f} s  peak {mb:7.0f} MB   (target N=1e6, K=10: <= 10 s)"
    )


def bench_crps_samples(n: int, m: int = 50, repeats: int = 5) -> None:
    """Sample CRPS kernel vs properscoring's numba crps_ensemble, same data, same run (best of `repeats`)."""
    sys.path.insert(0, str(ROOT))
    from uqeval.metrics.samples import crps_ensemble, crps_ensemble_and_fair

    rng = np.random.default_rng(0)
    y = rng.normal(size=n)
    s = rng.normal(size=(n, m))

    def best(fn) -> float:
        return best_of(fn, repeats)

    ours = best(lambda: crps_ensemble(y, s))
    both = best(lambda: crps_ensemble_and_fair(y, s))
    line = f"crps samples     N={n:>9,d} M={m}  uqeval {ours:6.3f} s (crps+fair {both:6.3f} s)"
    try:
        import numba  # noqa: F401  (properscoring is O(M^2) in memory without it)
        import properscoring

        properscoring.crps_ensemble(y[:10], s[:10])  # compile
        ref = best(lambda: properscoring.crps_ensemble(y, s))
        line += f"  properscoring+numba {ref:6.3f} s  ratio {ours / ref:4.2f} (target <= 1.5)"
    except ImportError:
        line += "  (install properscoring and numba to compare; target <= 1.5x its time)"
    print(line)


def ensemble_file(n: int, members: int = 10, classes: int = 10) -> Path:
    """An N x M x K ensemble of classifiers (m{j}_p_{k} columns), labels and per-member log-likelihoods."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    DATA.mkdir(exist_ok=True)
    path = DATA / f"ensemble_{n}x{members}x{classes}.parquet"
    if not path.exists():
        rng = np.random.default_rng(0)
        logits = 2.0 * rng.normal(size=(n, 1, classes)) + rng.normal(size=(n, members, classes))
        logits -= logits.max(axis=2, keepdims=True)
        logp = logits - np.log(np.exp(logits).sum(axis=2, keepdims=True))
        p = np.exp(logp)
        label = np.argmax(p.mean(axis=1) + 0.3 * rng.uniform(size=(n, classes)), axis=1)
        cols = {"label": label}
        cols.update({f"m{j}_p_{k}": p[:, j, k] for j in range(members) for k in range(classes)})
        cols.update({f"loglik_{j}": logp[np.arange(n), j, label] for j in range(members)})
        pq.write_table(pa.table(cols), path)
    return path


def bench_ensembles(n: int) -> None:
    """Every classification and ensemble group (incl. information criteria) on an N x 10 x 10 ensemble."""
    path = ensemble_file(n)
    wall, mb = run_cli(["score", str(path), "--format", "json"])
    print(
        f"score ensemble   N={n:>9,d} M=10 K=10  {wall:7.2f} s  peak {mb:7.0f} MB   (target N=1e5: <= 10 s)"
    )


def bench_ucc(n: int) -> None:
    """`uqeval ucc`: one file (JSON), then two models on the same targets with --plot.

    N=1e7: python benchmarks/bench.py ucc --n 1e7
    """
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = gaussian_file(n)
    const = DATA / f"gaussian_const_{n}.parquet"
    if not const.exists():  # the same targets and means, constant std
        t = pq.read_table(path)
        std = t.column("std").to_numpy()
        pq.write_table(
            t.set_column(t.schema.get_field_index("std"), "std", pa.array(np.full(n, std.mean()))), const
        )
    target = "(target N=1e6: <= 5 s; N=1e7: <= 60 s)"
    wall, mb = run_cli(["ucc", str(path), "--format", "json"])
    print(f"ucc 1 model      N={n:>9,d}  {wall:7.2f} s  peak {mb:7.0f} MB   {target}")
    with tempfile.TemporaryDirectory() as tmp:
        wall, mb = run_cli(
            ["ucc", str(path), str(const), "--plot", str(Path(tmp) / "ucc.png"), "--format", "json"]
        )
    print(f"ucc 2 models+png N={n:>9,d}  {wall:7.2f} s  peak {mb:7.0f} MB   {target}")


def samples_file(n: int, m: int = 50) -> Path:
    """N rows of M samples around a Normal mean, and a target."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    DATA.mkdir(exist_ok=True)
    path = DATA / f"samples_{n}_{m}.parquet"
    if not path.exists():
        rng = np.random.default_rng(0)
        mu = rng.normal(size=n)
        s = mu[:, None] + rng.normal(size=(n, m))
        pq.write_table(
            pa.table({"y": mu + rng.normal(size=n), **{f"s_{j}": s[:, j] for j in range(m)}}), path
        )
    return path


def bench_score_samples(n: int, m: int = 50) -> None:
    """Whole `uqeval score` on an M-member ensemble file (CRPS, fair CRPS, PIT calibration, coverage...)."""
    path = samples_file(n, m)
    wall, mb = run_cli(["score", str(path), "--format", "json"])
    print(
        f"score samples    N={n:>9,d} M={m}  {wall:7.2f} s  peak {mb:7.0f} MB   (no target; input alone is {n * m * 8 / 1e6:.0f} MB)"
    )


# --- issue 18: kernel workloads (ensemble classification, recalibration, samples, classification)


def classification_file(n: int, k: int = 10) -> Path:
    """N rows of K-class probabilities (p_0..p_{K-1}) and a label drawn from them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    DATA.mkdir(exist_ok=True)
    path = DATA / f"classification_{n}_{k}.parquet"
    if not path.exists():
        rng = np.random.default_rng(0)
        logits = 2.0 * rng.normal(size=(n, k))
        p = np.exp(logits - logits.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        label = (rng.uniform(size=(n, 1)) > np.cumsum(p, 1)).sum(1).clip(0, k - 1)
        pq.write_table(pa.table({"label": label, **{f"p_{j}": p[:, j] for j in range(k)}}), path)
    return path


def bench_ensemble_classification(n: int, members: int = 5, classes: int = 10) -> None:
    """`uqeval score` on an N x 5 x 10 ensemble of classifiers, without and with `--by` (4 groups)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    src = ensemble_file(n, members, classes)
    path = DATA / f"ensemble_by_{n}x{members}x{classes}.parquet"
    if not path.exists():
        t = pq.read_table(src)
        pq.write_table(
            t.append_column(
                "shift", pc.cast(pc.bit_wise_and(pc.cast(t.column("label"), "int64"), 3), "int64")
            ),
            path,
        )
    target = "(target N=1e6: <= 5 s)"
    wall, mb = run_cli(["score", str(path), "--format", "json"])
    print(f"score ens. cls.  N={n:>9,d} M={members} K={classes}  {wall:7.2f} s  peak {mb:7.0f} MB   {target}")
    wall, mb = run_cli(["score", str(path), "--format", "json", "--by", "shift"])
    print(f"  same, --by     N={n:>9,d} M={members} K={classes}  {wall:7.2f} s  peak {mb:7.0f} MB   {target}")


def bench_recalibrate(n: int) -> None:
    """`uqeval recalibrate` (fit + before/after scores) on N rows: std-scaling, isotonic (Gaussian file),
    temperature (10-class file); anchor: scikit-learn's IsotonicRegression on the same N PIT values."""
    gauss, cls = gaussian_file(n), classification_file(n)
    target = "(target N=1e6: <= 3 s each)"
    for method, path in (("std-scaling", gauss), ("isotonic", gauss), ("temperature", cls)):
        wall, mb = run_cli(["recalibrate", str(path), "--method", method, "--format", "json"])
        print(f"recalibrate {method:<12s} N={n:>9,d}  {wall:7.2f} s  peak {mb:7.0f} MB   {target}")
    import pyarrow.parquet as pq
    from scipy.special import ndtr

    pit_file = DATA / f"pit_{n}.npy"
    if not pit_file.exists():
        t = pq.read_table(gauss)
        np.save(
            pit_file,
            ndtr((t.column("y").to_numpy() - t.column("mean").to_numpy()) / t.column("std").to_numpy()),
        )
    print(
        run_anchor(
            "scikit-learn IsotonicRegression.fit on the N PIT values (their empirical cdf)",
            """
from sklearn.isotonic import IsotonicRegression
pit = np.load(sys.argv[1]); ecdf = (np.argsort(np.argsort(pit)) + 1.0) / pit.size
sec = best_of(lambda: IsotonicRegression(out_of_bounds="clip").fit(pit, ecdf))
""",
            pit_file,
        )
    )


#: interpreter of the anchors (reference libraries, maybe in another venv): --anchor-python
ANCHOR_PYTHON = sys.executable

_ANCHOR_PRELUDE = (
    "import sys, time\nimport numpy as np\n"
    "def best_of(fn, repeats=3):\n"
    "    times = []\n"
    "    for _ in range(repeats):\n"
    "        t0 = time.perf_counter(); fn(); times.append(time.perf_counter() - t0)\n"
    "    return min(times)\n"
)


def anchor_seconds(code: str, *files: Path) -> tuple[float | None, str]:
    """Run an anchor snippet (which sets ``sec``) in :data:`ANCHOR_PYTHON`, in-process timing, no I/O
    timed: ``(seconds, "")``, or ``(None, why)`` when its library is missing or it failed."""
    proc = subprocess.run(
        [ANCHOR_PYTHON, "-c", _ANCHOR_PRELUDE + code + "\nprint(sec)\n", *map(str, files)],
        capture_output=True,
        text=True,
    )
    if proc.returncode < 0:
        return (
            None,
            f"killed by signal {-proc.returncode} (out of memory? properscoring without numba builds N x M x M)",
        )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        if "ModuleNotFoundError" in last or "ImportError" in last:
            return None, f"skipped ({last}; install it or pass --anchor-python)"
        return None, f"failed ({last})"
    return float(proc.stdout.split()[-1]), ""


def run_anchor(what: str, code: str, *files: Path) -> str:
    """The line of an anchor (see :func:`anchor_seconds`)."""
    sec, why = anchor_seconds(code, *files)
    return (
        f"  anchor: {what}: {why}"
        if sec is None
        else f"  anchor: {what}  {sec:7.2f} s (in-process, best of its runs)"
    )


def bench_samples_anchor(n: int, m: int = 50) -> None:
    """Whole `uqeval score` on N x M samples (see bench_score_samples) and the sample-CRPS anchors
    (properscoring, scoringrules) on the same arrays, in-process."""
    bench_score_samples(n, m)
    import pyarrow.parquet as pq

    y_file, s_file = DATA / f"samples_{n}_{m}_y.npy", DATA / f"samples_{n}_{m}_s.npy"
    if not s_file.exists():
        t = pq.read_table(DATA / f"samples_{n}_{m}.parquet")
        np.save(y_file, t.column("y").to_numpy())
        np.save(s_file, np.column_stack([t.column(f"s_{j}").to_numpy() for j in range(m)]))
    load = "y, s = np.load(sys.argv[1]), np.load(sys.argv[2])\n"
    print(
        run_anchor(
            "scoringrules crps_ensemble (numpy backend) on the same arrays",
            load
            + """
import scoringrules as sr
sr.crps_ensemble(y[:10], s[:10])
sec = best_of(lambda: sr.crps_ensemble(y, s))
""",
            y_file,
            s_file,
        )
    )
    print(
        run_anchor(
            "properscoring crps_ensemble on the same arrays",
            load
            + """
import properscoring
properscoring.crps_ensemble(y[:10], s[:10])
sec = best_of(lambda: properscoring.crps_ensemble(y, s))
""",
            y_file,
            s_file,
        )
    )
    sys.path.insert(0, str(ROOT))
    from uqeval.metrics.samples import crps_ensemble

    y, s = np.load(y_file), np.load(s_file)
    print(
        f"  uqeval crps_ensemble on the same arrays  {best_of(lambda: crps_ensemble(y, s), 3):7.2f} s (in-process, best of 3)"
    )


# --------------------------------------------------------------------------- issue 18: start-up, compare, ucc, report


def bench_startup(n: int) -> None:
    """`uqeval --help` and `uqeval score` on N Gaussian rows (whole processes), and the Uncertainty
    Toolbox's `get_all_metrics` on the same rows as the anchor (in-process, the toolbox's own cost)."""
    path = gaussian_file(n)
    wall, mb = run_cli(["--help"])
    print(f"--help                          {wall:7.2f} s  peak {mb:7.0f} MB   (target <= 0.15 s)")
    wall, mb = run_cli(["score", str(path), "--format", "json"])
    print(
        f"score gaussian   N={n:>9,d}  {wall:7.2f} s  peak {mb:7.0f} MB   (target N=1e4: <= 0.5 s; "
        f">= 100x the toolbox at 1e5)"
    )
    what = "Uncertainty Toolbox get_all_metrics on the same rows"
    sec, why = anchor_seconds(
        """
import pyarrow.parquet as pq
import uncertainty_toolbox as uct
t = pq.read_table(sys.argv[1]); y, mu, sd = (t.column(c).to_numpy() for c in ("y", "mean", "std"))
sec = best_of(lambda: uct.get_all_metrics(mu, sd, y, verbose=False), 1)
""",
        path,
    )
    if sec is None:
        print(f"  anchor: {what}: {why}")
    else:
        print(
            f"  anchor: {what}  {sec:7.2f} s (in-process, one run): uqeval's whole process is "
            f"{sec / wall:.0f}x faster (target >= 100x at 1e5)"
        )
    wall, _ = run_cli_bare()
    print(f"  floor: python -c 'import numpy, pyarrow.parquet, typer'  {wall:7.2f} s")


def three_models(n: int) -> list[Path]:
    """Three Gaussian models on the same N targets (shifted mean, scaled std)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    DATA.mkdir(exist_ok=True)
    paths = [DATA / f"model{i}_{n}.parquet" for i in range(3)]
    if not all(p.exists() for p in paths):
        rng = np.random.default_rng(0)
        mean = rng.normal(size=n)
        std = rng.uniform(0.5, 2.0, n)
        y = mean + 1.1 * std * rng.normal(size=n)
        for i, (p, f) in enumerate(zip(paths, (1.0, 1.1, 0.9))):
            pq.write_table(pa.table({"y": y, "mean": mean + 0.01 * i, "std": std * f}), p)
    return paths


def bench_compare(n: int) -> None:
    paths = [str(p) for p in three_models(n)]
    wall, mb = run_cli(["compare", *paths, "--format", "json"])
    print(
        f"compare 3 models N={n:>9,d}  {wall:7.2f} s  peak {mb:7.0f} MB   (defaults: bootstrap 1000, "
        f"permutations 5000; target N=1e6: <= 20 s)"
    )


def _alternating(n: int, base: list[str], labels: tuple[str, str], extra: list[str], runs: int) -> None:
    """``uqeval compare`` as ``base`` and as ``base + extra``, alternated ``runs`` times each (the machine may be
    loaded); the medians of wall and CPU seconds, their ratio (target <= 1.15) and the peak memory of each."""
    plain, other = [], []
    for _ in range(runs):
        plain.append(run_cli_cpu(base))
        other.append(run_cli_cpu([*base, *extra]))
    for what, i in (("wall", 0), ("cpu", 2)):
        a, b = float(np.median([r[i] for r in plain])), float(np.median([r[i] for r in other]))
        print(
            f"compare 3 models N={n:>9,d}  {what}: {labels[0]} {a:7.2f} s  {' '.join(extra)} {b:7.2f} s  "
            f"ratio {b / a:5.2f} (medians of {runs} alternating runs; target ratio <= 1.15)"
        )
    print(
        f"  peak MB: {labels[0]} {max(r[1] for r in plain):.0f}, {labels[1]} {max(r[1] for r in other):.0f}"
    )


def bench_compare_blocks(n: int, runs: int = 5) -> None:
    """`uqeval compare` of 3 models with ``--block-size 10`` (circular block bootstrap, block sign flip) against
    the same command without it (issue 25: blocks cost at most 15 %)."""
    paths = [str(p) for p in three_models(n)]
    _alternating(n, ["compare", *paths, "--format", "json"], ("rows", "blocks"), ["--block-size", "10"], runs)


def bench_compare_weights(n: int, runs: int = 3) -> None:
    """`uqeval compare` of 3 models without and with ``--weights w`` (a column of the first file, uniform on
    [0.1, 2]: no row is dropped), default bootstrap and permutations (issue 25: weights cost at most 15 %)."""
    import pyarrow.parquet as pq

    paths = [str(p) for p in three_models(n)]
    first = DATA / f"model0_weighted_{n}.parquet"
    if not first.exists():
        table = pq.read_table(paths[0])
        pq.write_table(table.append_column("w", [np.random.default_rng(2).uniform(0.1, 2.0, n)]), first)
    base = ["compare", str(first), *paths[1:], "--format", "json"]
    _alternating(n, base, ("plain", "weighted"), ["--weights", "w"], runs)


def bench_ucc_permutation(n: int) -> None:
    """`uqeval ucc A B --permutation-test 1000`: two models with the same point prediction (the test swaps
    their bands), one with an informative std and one with a constant std."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    DATA.mkdir(exist_ok=True)
    paths = [DATA / f"ucc{i}_{n}.parquet" for i in range(2)]
    if not all(p.exists() for p in paths):
        rng = np.random.default_rng(0)
        mean = rng.normal(size=n)
        std = rng.uniform(0.5, 2.0, n)
        y = mean + std * rng.normal(size=n)
        for p, sd in zip(paths, (std, np.full(n, std.mean()))):
            pq.write_table(pa.table({"y": y, "mean": mean, "std": sd}), p)
    wall, mb = run_cli(["ucc", *map(str, paths), "--permutation-test", "1000", "--format", "json"])
    print(
        f"ucc --permutation-test 1000 N={n:>9,d}  {wall:7.2f} s  peak {mb:7.0f} MB   (target N=1e5: <= 5 s)"
    )


def bench_report(n: int) -> None:
    """`uqeval report A B`: two Gaussian models on the same N targets (every figure, the UCC)."""
    out = DATA / "report.html"
    paths = [str(p) for p in three_models(n)[:2]]
    wall, mb, cpu = run_cli_cpu(["report", *paths, "--output", str(out)])
    print(
        f"report 2 models  N={n:>9,d}  {wall:7.2f} s  cpu {cpu:6.2f} s  peak {mb:7.0f} MB   (target N=1e5: <= 3 s)"
    )


def interval_quantile_files(n: int) -> tuple[Path, Path]:
    """The Gaussian file's rows as a 95 % interval (with its mean) and as 7 quantiles of the same Normal."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from scipy.special import ndtri

    src = gaussian_file(n)
    paths = DATA / f"intervals_{n}.parquet", DATA / f"quantiles_{n}.parquet"
    if not all(p.exists() for p in paths):
        t = pq.read_table(src)
        y, mean, std = (t.column(c).to_numpy() for c in ("y", "mean", "std"))
        z = float(ndtri(0.975))
        pq.write_table(
            pa.table({"y": y, "pred": mean, "lower": mean - z * std, "upper": mean + z * std}), paths[0]
        )
        taus = (0.025, 0.05, 0.25, 0.5, 0.75, 0.95, 0.975)
        pq.write_table(
            pa.table({"y": y, **{f"q_{tau}": mean + float(ndtri(tau)) * std for tau in taus}}), paths[1]
        )
    return paths


def bench_report_large(n: int) -> None:
    """`uqeval report FILE` on N rows of each representation: Gaussian, 95 % intervals, 7 quantiles,
    50 samples, 10-class probabilities, an ensemble of 5 classifiers (10 classes)."""
    out = DATA / "report.html"
    samples = samples_file(n)
    intervals, quantiles = interval_quantile_files(n)
    files = (
        ("gaussian", gaussian_file(n)),
        ("intervals", intervals),
        ("quantiles", quantiles),
        ("samples M=50", samples),
        ("classif. K=10", classification_file(n)),
        ("ens. cls. 5x10", ensemble_file(n, 5, 10)),
    )
    for name, path in files:
        wall, mb, cpu = run_cli_cpu(["report", str(path), "--output", str(out)])
        print(
            f"report {name:<14s} N={n:>9,d}  {wall:7.2f} s  cpu {cpu:6.2f} s  peak {mb:7.0f} MB   "
            "(target N=1e6: <= 6 s)"
        )


def bench_score_large(n: int) -> None:
    path = gaussian_file(n)
    wall, mb = run_cli(["score", str(path), "--format", "json"])
    print(f"score gaussian   N={n:>9,d}  {wall:7.2f} s  peak {mb:7.0f} MB   (target N=1e7: <= 6 s, <= 1 GB)")


#: substrings of the memory cases to run (``--case``); all when empty
MEMORY_CASES: list[str] = []


def bench_memory(n: int, floor_rows: int = 1000) -> None:
    """Peak RSS of every command on N rows against the same command on 1,000 rows (the interpreter, the
    libraries and their buffers): ``copies`` = (peak - floor) / the input columns as float64, the
    issue-18 target being about 2."""
    out = DATA / "memory_report.html"

    def inputs(m: int) -> dict[str, list[Path]]:
        intervals, quantiles = interval_quantile_files(m)
        return {
            "gaussian": [gaussian_file(m)],
            "intervals": [intervals],
            "quantiles": [quantiles],
            "samples": [samples_file(m)],
            "classes": [classification_file(m)],
            "ensemble": [ensemble_file(m, 5, 10)],
            "models": three_models(m),
        }

    widths = {
        "gaussian": 3,
        "intervals": 4,
        "quantiles": 8,
        "samples": 51,
        "classes": 11,
        "ensemble": 51,
        "models": 9,
    }
    cases = [
        (f"score {k}", k, ["score"], ["--format", "json"])
        for k in ("gaussian", "intervals", "quantiles", "samples", "classes", "ensemble")
    ]
    cases += [
        ("coverage gaussian", "gaussian", ["coverage"], ["--format", "json"]),
        ("ucc gaussian", "gaussian", ["ucc"], ["--format", "json"]),
        (
            "recalibrate std-scaling",
            "gaussian",
            ["recalibrate"],
            ["--method", "std-scaling", "--format", "json"],
        ),
        ("recalibrate isotonic", "gaussian", ["recalibrate"], ["--method", "isotonic", "--format", "json"]),
        (
            "recalibrate temperature",
            "classes",
            ["recalibrate"],
            ["--method", "temperature", "--format", "json"],
        ),
        ("compare 3 gaussian", "models", ["compare"], ["--format", "json"]),
    ]
    cases += [
        (f"report {k}", k, ["report"], ["--output", str(out)]) for k in ("gaussian", "samples", "ensemble")
    ]
    cases = [c for c in cases if not MEMORY_CASES or any(k in c[0] for k in MEMORY_CASES)]
    small, large = inputs(floor_rows), inputs(n)
    for label, kind, head, tail in cases:
        _, floor = run_cli([*head, *map(str, small[kind]), *tail])
        wall, mb = run_cli([*head, *map(str, large[kind]), *tail])
        size = n * widths[kind] * 8 / 1e6
        print(
            f"memory {label:<24s} N={n:>9,d}  {wall:6.2f} s  peak {mb:6.0f} MB  floor {floor:4.0f} MB  "
            f"input {size:5.0f} MB  copies {(mb - floor) / size:4.1f}   (target ~2)"
        )


BENCHES = {
    "score": (bench_score, 1_000_000),
    "weights": (bench_weights, 1_000_000),
    "weights_classification": (bench_weights_classification, 1_000_000),
    "crps": (bench_crps_samples, 1_000_000),
    "samples": (bench_score_samples, 1_000_000),
    "classification": (bench_classification, 1_000_000),
    "ensembles": (bench_ensembles, 100_000),
    "ucc": (bench_ucc, 1_000_000),
    "ensemble_classification": (bench_ensemble_classification, 1_000_000),
    "recalibrate": (bench_recalibrate, 1_000_000),
    "samples_anchor": (bench_samples_anchor, 1_000_000),
    "startup": (bench_startup, 10_000),
    "toolbox": (bench_startup, 100_000),
    "compare": (bench_compare, 1_000_000),
    "compare_blocks": (bench_compare_blocks, 1_000_000),
    "compare_weights": (bench_compare_weights, 1_000_000),
    "ucc_permutation": (bench_ucc_permutation, 100_000),
    "report": (bench_report, 100_000),
    "report_large": (bench_report_large, 1_000_000),
    "score_large": (bench_score_large, 10_000_000),
    "memory": (bench_memory, 1_000_000),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", nargs="*", default=list(BENCHES), help=f"any of {', '.join(BENCHES)}")
    ap.add_argument("--n", type=float, default=None, help="rows (default: each benchmark's own)")
    ap.add_argument(
        "--repeat", type=int, default=1, help="whole-process runs per figure; the best is printed"
    )
    ap.add_argument(
        "--anchor-python",
        default=sys.executable,
        help="python with the anchor libraries (scikit-learn, scoringrules, properscoring)",
    )
    ap.add_argument(
        "--case",
        action="append",
        default=[],
        help="memory: run only the cases whose label contains this (repeatable), e.g. --case report",
    )
    a = ap.parse_args()
    global REPEAT, ANCHOR_PYTHON
    REPEAT, ANCHOR_PYTHON = a.repeat, a.anchor_python
    MEMORY_CASES[:] = a.case
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cpu(s)")
    for name in a.which:
        fn, n = BENCHES[name]
        fn(int(a.n) if a.n else n)


if __name__ == "__main__":
    main()
