"""The threaded family path of :func:`uqeval.catalogue.compute_metrics` under stress (issue 31).

``uqeval score classification.parquet --diagnostics`` once failed in ~15% of runs with ``ImportError:
cannot import name 'Polynomial' from 'numpy.polynomial'``: the two family threads imported scipy.stats
while the CLI's lazily executed numpy modules (``uqeval.cli._defer_numpy_extras``) were half-executed by
the other thread. Now every module the families' kernels import (``Family.imports``) is imported before
the second thread starts, and the worker thread imports nothing.

Each case runs in a fresh interpreter (imports happen once per process), set up as the CLI sets itself
up: an audit hook records every module imported or executed in a thread other than the main one (the
first computation is where the imports happen), then the families are computed again and again in two
threads, each time compared with the results computed one family at a time. Before the fix the first
case failed every time (~500 modules imported or executed in the worker thread), where the CLI's
symptom showed in 2 of 30 runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np

#: threaded computations per representation: 4 x 60 >= 200 in all
ROUNDS = 60


def _prediction(kind: str, n: int = 30, seed: int = 0):
    from uqeval.predictions import Categorical, Dirichlet, MemberCategorical

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2 if kind == "binary" else 4, n).astype(float)
    if kind == "binary":
        return Categorical(y_true=y, proba=rng.uniform(0.05, 0.95, n))
    if kind == "categorical":
        return Categorical(y_true=y, proba=rng.dirichlet(np.ones(4), n))
    if kind == "members":
        return MemberCategorical(y_true=y, member_proba=rng.dirichlet(np.ones(4), (n, 3)))
    return Dirichlet(y_true=y, alpha=rng.uniform(0.5, 5.0, (n, 4)))


def probe(kinds: list[str], rounds: int, declared: bool = False) -> dict:
    """Run in a fresh interpreter (``python tests/test_thread_stress.py ROUNDS [declared] KIND...``): the
    modules imported or executed in other threads, the errors, and how many threaded computations
    matched. With ``declared``, first the modules that computing the families in one thread loads beyond
    their ``Family.imports`` (which a threaded computation would have imported in its worker thread)."""
    from uqeval.cli import _defer_numpy_extras, single_threaded_blas

    single_threaded_blas()
    _defer_numpy_extras()  # as the CLI process: numpy's extras are executed on first use

    events: list[str] = []  # modules imported or executed in another thread
    executed: list[str] = []  # module files executed in any thread

    def audit(event: str, args: tuple) -> None:
        if event not in ("import", "exec"):
            return
        name = args[0] if event == "import" else getattr(args[0], "co_filename", "?")
        if event == "exec" and name.endswith(".py"):
            executed.append(name)
        if threading.current_thread() is not threading.main_thread():
            events.append(f"{event} {name} in {threading.current_thread().name}")

    sys.addaudithook(audit)
    import uqeval.catalogue as catalogue
    from uqeval.config import Settings

    settings = Settings(diagnostics=True, murphy=True)
    errors: list[str] = []
    matched, families = 0, {}

    def threaded(kind: str):
        catalogue.FAMILY_THREADS = 2  # two threads even on a one-core machine
        try:
            return catalogue.compute_metrics(_prediction(kind), settings, [])[0]
        except Exception as exc:  # the race's symptom: counted, not raised
            errors.append(f"{kind}: {type(exc).__name__}: {exc}")
            return None

    undeclared: list[str] = []
    if declared:  # the families' Family.imports, then every family in this thread: nothing more is loaded
        from importlib import import_module

        for kind in kinds:
            for f in catalogue.families_for(_prediction(kind).kind, settings):
                for module in f.imports:
                    import_module(module)
        before, executed[:] = set(sys.modules), []
        catalogue.FAMILY_THREADS = 1
        for kind in kinds:
            catalogue.compute_metrics(_prediction(kind), settings, [])
        undeclared = sorted(set(sys.modules) - before) + executed

    for kind in kinds:
        first = threaded(kind)  # without ``declared``, the imports happen here
        catalogue.FAMILY_THREADS = 1
        expected = repr(catalogue.compute_metrics(_prediction(kind), settings, [])[0])
        families[kind] = [
            f.name for f in catalogue.families_for(_prediction(kind).kind, settings) if f.background
        ] + [name for name in ("calibration_tests", "smooth_calibration") if name in expected]
        matched += repr(first) == expected
        matched += sum(repr(threaded(kind)) == expected for _ in range(rounds - 1))
    return {
        "events": events,
        "undeclared": undeclared,
        "errors": errors,
        "matched": matched,
        "families": families,
    }


def test_threaded_families_import_nothing_and_agree():
    """Two fresh interpreters at once, 2 x 2 representations, ``ROUNDS`` threaded computations each: in
    the first the threaded computation imports (the worker thread must not); the second checks that
    ``Family.imports`` lists everything the families load (one thread, so no luck of scheduling)."""
    groups = (["members", "dirichlet"], ["declared", "binary", "categorical"])
    runs = [
        subprocess.Popen(
            [sys.executable, __file__, str(ROUNDS), *kinds], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for kinds in groups
    ]
    for kinds, run in zip(groups, runs):
        stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, stderr.decode()[-3000:]
        out = json.loads(stdout.decode().splitlines()[-1])
        kinds = [k for k in kinds if k != "declared"]
        for kind in kinds:  # the threaded path, with the diagnostics that import scipy.stats
            assert out["families"][kind] == ["spce", "calibration_tests", "smooth_calibration"]
        assert out["events"] == [], "modules imported in a worker thread: add them to Family.imports"
        assert out["undeclared"] == [], "modules missing from Family.imports"
        assert out["errors"] == []
        assert out["matched"] == ROUNDS * len(kinds)


def test_score_diagnostics_in_fresh_processes(tmp_path):
    """The reported command, as a user runs it: two fresh ``uqeval score --diagnostics`` processes of
    an ensemble of classifiers (all of its families, two threads), each without an error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(3)
    n, m, k = 400, 3, 3
    p = rng.dirichlet(np.ones(k), (n, m))
    cols = {f"m{j}_p_{c}": p[:, j, c] for j in range(m) for c in range(k)}
    path = tmp_path / "ens.parquet"
    pq.write_table(pa.table({"label": rng.integers(0, k, n), **cols}), path)
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "uqeval", "score", str(path), "--diagnostics", "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0 and "Error" not in err, err[-3000:]
        doc = json.loads(out)
        assert "spce" in json.dumps(doc) and "hosmer_lemeshow_p" in json.dumps(doc)


if __name__ == "__main__":
    names = [a for a in sys.argv[2:] if a != "declared"]
    print(json.dumps(probe(names, int(sys.argv[1]), declared="declared" in sys.argv[2:])))
