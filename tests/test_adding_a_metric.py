"""Issue 36's acceptance item: adding a metric touches its kernel, its catalogue entry and its glossary entry
and then works in every route, with nothing else edited (CONTRIBUTING.md, "Adding a metric").

The test copies the ``uqeval`` package to a temporary directory, edits only those three places of the copy
textually, and runs the copy's command line in subprocesses (``PYTHONPATH`` the copy's parent, the current
directory the temporary one, so that the tree under test is never imported): ``score`` in memory, streamed
in several batches, on Dask (three parts on a one-worker ``LocalCluster`` on 127.0.0.1 that the copy's
command starts, so that its worker imports the copy too), each also with ``--weights``; ``compare`` (bootstrap
intervals, and the paired tests where the metric has them); ``check`` (rules on the new paths against a
baseline); ``monitor`` (the metric per window); and ``explain``. Every value is checked against numpy on the
same rows. ``monitor A B`` compares one score per representation (``PAIR_SCORES`` in
``uqeval/commands/monitor/windows.py``, documented by ``uqeval monitor --help``), not a chosen metric, so it
is not a route of a new metric.

Two metrics are added in the one copy, so that both kinds of entry are proved:

- ``scoring_rule.dss``, the Dawid-Sebastiani score of a Gaussian (Dawid & Sebastiani 1999; Gneiting &
  Raftery 2007, Eq. 27: ``(y - mu)^2 / sigma^2 + 2 log sigma``), a new metric of an existing family,
  lower is better, a per-row score (so compare's paired tests apply);
- ``standardized_error.mean_abs_z``, the mean absolute standardized error ``|y - mu| / sigma``, a new
  family of one metric, oriented to a target: ``sqrt(2 / pi)``, the mean of ``|Z|`` for a standard normal
  ``Z``, declared in its catalogue entry.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import uqeval

N_ROWS = 3000
WINDOW_ROWS = 1000  # monitor: three windows of rows
CHUNK_ROWS = 700  # streamed: five batches
PART_ROWS = 1000  # Dask: three parts (tasks), each folding two batches
TARGET_ABS_Z = math.sqrt(2.0 / math.pi)  # E|Z|, Z ~ N(0, 1)

# --------------------------------------------------------------------------- the three edits

KERNEL = '''

def dss_gaussian(y_true, mean, std) -> np.ndarray:
    r"""Dawid-Sebastiani score of each row, ``((y - mu) / sigma)^2 + 2 log sigma`` (Gneiting & Raftery 2007,
    Eq. 27): a proper score of the first two moments. Returns an (N,) array."""
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    return np.square((y - mu) / sd) + 2.0 * np.log(sd)


def abs_z(y_true, mean, std) -> np.ndarray:
    """The absolute standardized error ``|y - mu| / sigma`` of each row. Returns an (N,) array."""
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    return np.abs(y - mu) / sd
'''

#: the new family's compute and per-row functions, before the tuple of families
CATALOGUE_FUNCTIONS = """

def _standardized_error(p, s: Settings) -> dict:
    return {"mean_abs_z": float(_rows_standardized_error(p, s, None)["mean_abs_z"].score.mean())}


def _rows_standardized_error(p, s, level) -> dict[str, RowStat]:
    from ..metrics.scoring import abs_z

    return {"mean_abs_z": RowStat(score=abs_z(p.y_true, p.mean, p.std))}


STANDARD_FAMILIES: tuple[Family, ...] = ("""

#: the new family, at the end of the tuple of families
CATALOGUE_FAMILY = """    _family(
        "standardized_error",
        [
            _m(
                "mean_abs_z",
                "target",
                "mean absolute standardized error |y - mean| / std (target: sqrt(2/pi))",
                "mean",
                target=math.sqrt(2.0 / math.pi),
            ),
        ],
        {"gaussian": _standardized_error},
        rows=_rows_standardized_error,
    ),
)
"""

GLOSSARY = """    "scoring_rule.dss": _e(
        "Dawid-Sebastiani score",
        "Squared standardized error plus twice the log of the predicted standard deviation: a proper score "
        "of the predictive mean and variance alone.",
        "DSS = (1/N) Σᵢ [ (yᵢ − μᵢ)² / σᵢ² + 2 log σᵢ ]",
        "Dawid & Sebastiani (1999), Coherent dispersion criteria for optimal experimental design, Annals of "
        f"Statistics 27(1):65-81; {GR}",
    ),
    "standardized_error.mean_abs_z": _e(
        "Mean absolute standardized error",
        "Mean distance of the targets from the predicted mean in predicted standard deviations; a calibrated "
        "Gaussian forecast gives √(2/π) ≈ 0.798.",
        "mean_abs_z = (1/N) Σᵢ |yᵢ − μᵢ| / σᵢ",
        f"{GR}",
    ),
"""


def _replace_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{path.name}: {old!r} found {text.count(old)} times"
    path.write_text(text.replace(old, new), encoding="utf-8")


def add_metrics(package: Path) -> None:
    """The three places of CONTRIBUTING.md's "Adding a metric", edited in the copy ``package``: the kernels
    (``metrics/scoring.py``), the catalogue entries (``catalogue/standard.py``) and the glossary texts."""
    kernels = package / "metrics" / "scoring.py"
    kernels.write_text(kernels.read_text(encoding="utf-8") + KERNEL, encoding="utf-8")

    standard = package / "catalogue" / "standard.py"
    _replace_once(
        standard,
        "from __future__ import annotations\n",
        "from __future__ import annotations\n\nimport math\n",
    )
    # the metric of an existing family: its entry, its value in the family's result, its per-row form
    _replace_once(
        standard,
        '            _m("wis", "lower", "weighted interval score", "mean", representations=("quantiles",)),\n',
        '            _m("wis", "lower", "weighted interval score", "mean", representations=("quantiles",)),\n'
        '            _m("dss", "lower", "Dawid-Sebastiani score", "mean", representations=("gaussian",)),\n',
    )
    _replace_once(
        standard,
        "    return scoring_rules_gaussian(\n"
        "        p.y_true, p.mean, p.std, resolution=s.resolution, crps=_crps_gaussian_mean(p)\n"
        "    )\n",
        "    from ..metrics.scoring import dss_gaussian\n\n"
        "    return {\n"
        "        **scoring_rules_gaussian(p.y_true, p.mean, p.std, resolution=s.resolution, crps=_crps_gaussian_mean(p)),\n"
        '        "dss": float(dss_gaussian(p.y_true, p.mean, p.std).mean()),\n'
        "    }\n",
    )
    _replace_once(
        standard,
        '            "nll": RowStat(score=scoring.nll_gaussian(y, p.mean, p.std)),\n',
        '            "nll": RowStat(score=scoring.nll_gaussian(y, p.mean, p.std)),\n'
        '            "dss": RowStat(score=scoring.dss_gaussian(y, p.mean, p.std)),\n',
    )
    # the new family
    _replace_once(standard, "\n\nSTANDARD_FAMILIES: tuple[Family, ...] = (", CATALOGUE_FUNCTIONS)
    text = standard.read_text(encoding="utf-8")
    assert text.endswith("    ),\n)\n")
    standard.write_text(text[: -len(")\n")] + CATALOGUE_FAMILY, encoding="utf-8")

    _replace_once(
        package / "glossary.py",
        "GLOSSARY: dict[str, dict[str, str]] = {\n",
        "GLOSSARY: dict[str, dict[str, str]] = {\n" + GLOSSARY,
    )


# --------------------------------------------------------------------------- the copy and its data


def _dss(y, mean, std):
    """The Dawid-Sebastiani score of each row, written again here with numpy: the reference values."""
    return np.square((y - mean) / std) + 2.0 * np.log(std)


def _abs_z(y, mean, std):
    return np.abs(y - mean) / std


class Copy:
    """The edited copy of the package, its data (two Gaussian models of the same targets) and its runner."""

    def __init__(self, root: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.root = root
        self.package = root / "copy" / "uqeval"
        shutil.copytree(
            Path(uqeval.__file__).parent, self.package, ignore=shutil.ignore_patterns("__pycache__")
        )
        add_metrics(self.package)
        self.work = root / "work"
        self.work.mkdir()
        rng = np.random.default_rng(36)
        mu, sigma = rng.normal(size=N_ROWS), rng.uniform(0.5, 2.0, N_ROWS)
        self.y = mu + sigma * rng.normal(size=N_ROWS)
        self.w = rng.integers(0, 4, N_ROWS).astype(np.float64)  # some rows of weight 0
        # a: too wide (mean |z| below the target), b: too narrow, nearer the target from above
        self.models = {"a": (mu, sigma * 1.15), "b": (mu, sigma / 1.05)}
        for name, (mean, std) in self.models.items():
            table = pa.table({"y": self.y, "mean": mean, "std": std, "w": self.w, "order": np.arange(N_ROWS)})
            pq.write_table(table, self.work / f"{name}.parquet")
        # the same rows of a as a directory of parts: the Dask engine maps each part to a partial state
        parts = self.work / "a_parts"
        parts.mkdir()
        table = pq.read_table(self.work / "a.parquet")
        for k, start in enumerate(range(0, N_ROWS, PART_ROWS)):
            pq.write_table(table.slice(start, PART_ROWS), parts / f"part-{k}.parquet")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "UQEVAL"))}
        return {**env, "PYTHONPATH": str(self.package.parent)}

    def run(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "uqeval", *args],
            cwd=self.work,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, (args, done.stderr[-3000:])
        return done.stdout

    def json(self, *args: str) -> dict:
        return json.loads(self.run(*args, "--format", "json"))

    def rows(self, model: str, fn) -> np.ndarray:
        mean, std = self.models[model]
        return fn(self.y, mean, std)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Copy:
    return Copy(tmp_path_factory.mktemp("adding_a_metric"))


def _close(got, want, rtol: float = 1e-12) -> None:
    assert got == pytest.approx(want, rel=rtol, abs=1e-14)


def _valid(copy: Copy, doc: dict, schema: str) -> None:
    """``doc`` holds by the copy's own JSON Schema (the schemas are not edited either)."""
    import jsonschema  # (the test extra)

    jsonschema.validate(doc, json.loads((copy.package / "schemas" / f"{schema}.schema.json").read_text()))


# --------------------------------------------------------------------------- the copy under test


def test_only_the_three_places_differ_and_the_copy_is_what_runs(copy):
    real = Path(uqeval.__file__).parent
    edited = sorted(
        str(p.relative_to(copy.package))
        for p in copy.package.rglob("*.py")
        if p.read_bytes() != (real / p.relative_to(copy.package)).read_bytes()
    )
    assert edited == ["catalogue/standard.py", "glossary.py", "metrics/scoring.py"]
    assert sorted(
        str(p.relative_to(real)) for p in real.rglob("*") if "__pycache__" not in p.parts
    ) == sorted(
        str(p.relative_to(copy.package)) for p in copy.package.rglob("*") if "__pycache__" not in p.parts
    )
    done = subprocess.run(
        [sys.executable, "-c", "import uqeval; print(uqeval.__file__)"],
        cwd=copy.work,
        env=copy.env(),
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(done.stdout.strip()) == copy.package / "__init__.py"


# --------------------------------------------------------------------------- score on every engine


ENGINES = {
    "memory": ("--engine", "memory"),
    "stream": ("--engine", "stream", "--chunk-rows", str(CHUNK_ROWS)),
    # a LocalCluster on 127.0.0.1 started by the copy's command, whose worker process imports the copy
    "dask": ("--engine", "dask", "--workers", "1", "--chunk-rows", str(CHUNK_ROWS)),
}


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weights"])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_score(copy, engine, weighted):
    if engine == "dask":
        pytest.importorskip("distributed", reason="the Dask extra is not installed")
    source = "a_parts" if engine == "dask" else "a.parquet"
    doc = copy.json("score", source, *ENGINES[engine], *(("--weights", "w") if weighted else ()))
    _valid(copy, doc, "score")
    info = doc["input"]
    assert info.get("engine", "memory") == engine and info["n_rows"] == N_ROWS
    if engine != "memory":
        assert info["chunk_rows"] == CHUNK_ROWS  # several batches folded into one state
    if engine == "dask":
        assert info["n_partitions"] == N_ROWS // PART_ROWS  # partial states on the worker, merged
    for path in ("scoring_rule.dss", "standardized_error.mean_abs_z"):
        assert path not in info.get("not_streamed", {}), path
        assert path not in doc.get("weights", {}).get("not_weighted", {}), path
    w = copy.w if weighted else None
    _close(doc["metrics"]["scoring_rule"]["dss"], np.average(copy.rows("a", _dss), weights=w))
    _close(doc["metrics"]["standardized_error"]["mean_abs_z"], np.average(copy.rows("a", _abs_z), weights=w))
    assert doc["orientation"]["scoring_rule.dss"] == "lower"
    assert doc["orientation"]["standardized_error.mean_abs_z"] == "target"


def test_score_table_names_the_metrics(copy):
    table = copy.run("score", "a.parquet", "--format", "markdown")
    assert "| scoring_rule | dss |" in table and "| standardized_error | mean_abs_z |" in table


# --------------------------------------------------------------------------- compare: bootstrap and tests


@pytest.mark.parametrize(
    "extra",
    [(), ("--engine", "stream", "--chunk-rows", str(CHUNK_ROWS)), ("--weights", "w")],
    ids=["memory", "stream", "weights"],
)
def test_compare(copy, extra):
    doc = copy.json(
        "compare",
        "a.parquet",
        "b.parquet",
        "--metrics",
        "dss,mean_abs_z",
        "--bootstrap",
        "400",
        "--permutations",
        "999",
        *extra,
    )
    _valid(copy, doc, "compare")
    w = copy.w if "--weights" in extra else None
    keep = np.ones(N_ROWS, dtype=bool) if w is None else w > 0
    n = int(keep.sum())

    dss = doc["metrics"]["scoring_rule.dss"]
    assert dss["orientation"] == "lower" and dss["bootstrap"] is True
    rows = {m: copy.rows(m, _dss) for m in copy.models}
    means = {m: float(np.average(r, weights=w)) for m, r in rows.items()}
    for m, body in dss["values"].items():
        _close(body["estimate"], means[m])
        # the percentile interval of the row bootstrap: about the mean -/+ 1.96 standard errors
        se = math.sqrt(np.cov(rows[m][keep], aweights=None if w is None else w[keep]) / n)
        assert body["low"] < body["estimate"] < body["high"]
        assert 0.8 < (body["high"] - body["low"]) / (2 * 1.96 * se) < 1.25, (m, body)
    best = min(means, key=means.__getitem__)
    assert dss["best"] == [best]
    # the paired tests of the per-row score: the other model against the best
    (test,) = [t for t in doc["tests"] if t["metric"] == "scoring_rule.dss"]
    other = next(m for m in copy.models if m != best)
    assert (test["model"], test["reference"]) == (other, best)
    _close(test["mean_diff"], means[other] - means[best], 1e-9)
    assert 0 < test["permutation_p"] <= 1 and 0 <= test["dm_p"] <= 1
    if w is None:  # Diebold-Mariano at lag 0: the mean difference over its standard error
        d = rows[other] - rows[best]
        assert test["dm_statistic"] == pytest.approx(d.mean() / (d.std(ddof=0) / math.sqrt(N_ROWS)), rel=1e-3)

    absz = doc["metrics"]["standardized_error.mean_abs_z"]
    assert absz["orientation"] == "target" and absz["bootstrap"] is True
    _close(absz["target"], TARGET_ABS_Z)  # declared in the entry
    values = {m: float(np.average(copy.rows(m, _abs_z), weights=w)) for m in copy.models}
    for m, body in absz["values"].items():
        _close(body["estimate"], values[m])
        assert body["low"] < body["estimate"] < body["high"]
    nearest = min(values, key=lambda m: abs(values[m] - TARGET_ABS_Z))
    assert nearest != min(values, key=values.__getitem__)  # ranked by the target, not as lower is better
    assert absz["best"] == [nearest]
    # by design no paired test of a metric with a target (a mean difference says nothing about closeness)
    assert not [t for t in doc["tests"] if t["metric"] == "standardized_error.mean_abs_z"]


# --------------------------------------------------------------------------- check: rules on the new paths


def test_check(copy):
    copy.run("score", "a.parquet", "--output", "a.json", "--quiet")
    (copy.work / "rules.toml").write_text(
        '[rules]\n"standardized_error.mean_abs_z" = { max_regression = 0.0 }\n"scoring_rule.dss" = { max = 5.0 }\n',
        encoding="utf-8",
    )
    doc = copy.json("check", "b.parquet", "--baseline", "a.json", "--rules", "rules.toml")
    _valid(copy, doc, "check")
    rows = {(r["path"], r["check"]): r for r in doc["rows"]}
    absz = rows["standardized_error.mean_abs_z", "max_regression"]
    # b is nearer the target than a although its mean |z| is larger: no regression for a target metric
    assert absz["status"] == "PASS" and absz["orientation"] == "target", absz
    assert f"target {TARGET_ABS_Z:g}" in absz["limit"]
    _close(absz["value"], float(copy.rows("b", _abs_z).mean()))
    _close(absz["baseline"], float(copy.rows("a", _abs_z).mean()))
    assert absz["value"] > absz["baseline"]
    dss = rows["scoring_rule.dss", "max"]
    assert dss["status"] == "PASS"
    _close(dss["value"], float(copy.rows("b", _dss).mean()))


# --------------------------------------------------------------------------- monitor: per window


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weights"])
def test_monitor(copy, weighted):
    doc = copy.json(
        "monitor", "a.parquet", "--window", str(WINDOW_ROWS), *(("--weights", "w") if weighted else ())
    )
    _valid(copy, doc, "monitor")
    assert doc["orientation"]["scoring_rule.dss"] == "lower"
    assert doc["orientation"]["standardized_error.mean_abs_z"] == "target"
    windows = doc["windows"]
    assert len(windows) == N_ROWS // WINDOW_ROWS
    dss, absz = copy.rows("a", _dss), copy.rows("a", _abs_z)
    for window in windows:
        rows = slice(window["start"], window["end"])
        w = copy.w[rows] if weighted else None
        _close(window["metrics"]["scoring_rule"]["dss"], np.average(dss[rows], weights=w))
        _close(window["metrics"]["standardized_error"]["mean_abs_z"], np.average(absz[rows], weights=w))
    w = copy.w if weighted else None
    _close(doc["cumulative"]["metrics"]["scoring_rule"]["dss"], np.average(dss, weights=w))
    _close(doc["cumulative"]["metrics"]["standardized_error"]["mean_abs_z"], np.average(absz, weights=w))


# --------------------------------------------------------------------------- explain


def test_explain(copy):
    text = copy.run("explain", "standardized_error.mean_abs_z")
    assert text.startswith("standardized_error.mean_abs_z — Mean absolute standardized error\n")
    assert f"Direction: closest to {TARGET_ABS_Z:g} is best\n" in text
    assert "a calibrated Gaussian forecast gives √(2/π) ≈ 0.798" in text
    assert "Formula: mean_abs_z = (1/N) Σᵢ |yᵢ − μᵢ| / σᵢ" in text

    text = copy.run("explain", "dss")  # by its short name
    assert text.startswith("scoring_rule.dss — Dawid-Sebastiani score\nDirection: lower is better\n")
    assert "Reference: Dawid & Sebastiani (1999)" in text

    listing = copy.run("explain")
    assert "scoring_rule.dss" in listing and "standardized_error.mean_abs_z" in listing
