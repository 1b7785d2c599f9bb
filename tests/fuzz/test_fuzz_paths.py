"""Seeded fuzz families for what an input argument names (issue 31, items 3 and 4), judged by the
harness's invariants (:func:`tests.fuzz.harness.check_case`) plus the expected outcome of each case:

* **directories with disagreeing parts**: 2-5 parts of one data set, one later part damaged (a column
  renamed, dropped or added, a number column stored as text, a CSV part among Parquet ones) or decorated
  with writer metadata and other files (``_SUCCESS``, ``.crc``, ``_temporary/``, ``README.txt``). A
  damaged directory is refused (exit 3) by one error line naming the part (and the column); a decorated
  one reads exactly the data parts' rows.
* **glob characters in real names**: a file whose name holds ``*``, ``?`` or ``[...]`` beside a file
  the same name would match as a pattern. Every command reads the named file; once it is removed, the
  name is a pattern and reads what it matches.

``UQEVAL_FUZZ_PATH_CASES=200`` runs more by hand (``UQEVAL_FUZZ_SEED`` picks another seed).
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from uqeval.cli import app

from .harness import DATASETS, Case, run_case, write_data

CASES = int(os.environ.get("UQEVAL_FUZZ_PATH_CASES", "16"))
SEED = int(os.environ.get("UQEVAL_FUZZ_SEED", "17"))
FLAT = ["gaussian", "quantiles", "intervals", "samples", "point", "classes"]
STREAMING = ["score", "score-stream", "check", "compare", "ucc", "coverage"]
MEMORY_ONLY = ["plot", "report", "recalibrate"]
RULES = '[rules]\n"accuracy.mae" = { max = 1e9 }\n'
RULES_CLASSES = '[rules]\n"accuracy.accuracy" = { min = 0 }\n'


def _argv(command: str, spec: str, d: Path, kind: str) -> list[str]:
    regression = kind not in ("classes",)
    if command in ("score", "score-stream"):
        extra = ["--engine", "stream", "--chunk-rows", "7"] if command == "score-stream" else []
        return ["score", spec, *extra, "-f", "json"]
    if command == "check":
        (d / "rules.toml").write_text(RULES if regression else RULES_CLASSES)
        return ["check", spec, "--rules", str(d / "rules.toml"), "-f", "json"]
    if command == "compare":
        return ["compare", spec, spec, "--bootstrap", "0", "-f", "json"]
    if command == "ucc":
        return ["ucc", spec, "-f", "json"]
    if command == "coverage":
        return ["coverage", spec, "-f", "json"]
    if command == "plot":
        return ["plot", spec, "--kind", "pit" if regression else "confidence", "-o", str(d / "fig.png")]
    if command == "report":
        return ["report", spec, "-o", str(d / "report.html"), "--max-points", "50"]
    return ["recalibrate", spec, "--method", "std-scaling" if regression else "temperature", "-f", "json"]


KINDS = {  # the data sets each command reads as written here (the options above)
    "recalibrate": {"gaussian", "classes"},
    "ucc": {"gaussian", "samples", "intervals"},
    "coverage": {"gaussian", "samples", "intervals"},
    "plot": {"gaussian", "quantiles", "samples", "classes"},
    "report": {"gaussian", "quantiles", "samples", "intervals", "classes"},
}


def _applies(command: str, kind: str) -> bool:
    return kind in KINDS.get(command, FLAT)


def _rows(command: str, out: str) -> int | None:
    if command in ("check", "plot", "report"):
        return None
    doc = json.loads(out)
    if command in ("score", "score-stream"):
        return doc["input"]["n_rows"]
    if command in ("compare", "ucc"):
        return doc["n_rows"]
    if command == "coverage":
        return doc["points"][0]["n_rows"]
    if command == "recalibrate":
        return doc["files"]["calibration"]["n_rows"]
    return None


def _slice(cols: dict, rows: np.ndarray) -> dict:
    return {k: np.asarray(v)[rows] for k, v in cols.items()}


DAMAGE = ["rename", "drop", "add", "text", "csv_part"]
DECORATE = ["_SUCCESS", ".part-0.crc", "_temporary", "README.txt", "_metadata"]


def _disagreeing_dir(r: random.Random, rng: np.random.Generator, d: Path):
    """``(dir, kind, fmt, expected)``: expected is ``("rows", n)`` or ``("error", part, column or None)``."""
    kind = r.choice([k for k in FLAT if k != "point"])
    n_parts = r.choice([2, 3, 5])
    n = 12 * n_parts
    cols = DATASETS[kind](rng, n)
    fmt = r.choice(["parquet", "parquet", "csv"])
    parts = d / "parts"
    parts.mkdir()
    names = []
    for i, rows in enumerate(np.array_split(np.arange(n), n_parts)):
        name = parts / f"part-{i:03d}.{fmt}"
        write_data(name, _slice(cols, rows), fmt)
        names.append(name)
    for junk in r.sample(DECORATE, r.choice([0, 1, 3])):
        if junk == "_temporary":
            (parts / junk).mkdir()
            write_data(parts / junk / "x.parquet", {"other": np.ones(2)}, "parquet")
        else:
            (parts / junk).write_text("not data")
    if r.random() < 0.3:
        return parts, kind, fmt, ("rows", n)
    damage = r.choice(DAMAGE if fmt == "parquet" else ["rename", "drop", "add"])
    k = r.randrange(1, n_parts)
    victim = names[k]
    part = _slice(cols, np.array_split(np.arange(n), n_parts)[k])
    column = r.choice(sorted(part))
    if damage == "csv_part":
        victim.unlink()
        victim = victim.with_suffix(".csv")
        write_data(victim, part, "csv")
        return parts, kind, fmt, ("error", victim.name, None)
    if damage == "rename":
        part[column + "_v2"] = part.pop(column)
    elif damage == "drop":
        part.pop(column)
        if not part:
            part = {"other": np.ones(1)}
    elif damage == "add":
        column = "extra"
        part[column] = np.zeros(len(next(iter(part.values()))))
    else:  # a number column stored as text in this part only
        part[column] = pa.array([str(v) for v in part[column]])
    write_data(victim, part, fmt)
    return parts, kind, fmt, ("error", victim.name, column)


def test_fuzz_directories_with_disagreeing_parts(tmp_path):
    runner = CliRunner()
    r = random.Random(SEED * 7 + 1)
    rng = np.random.default_rng(SEED)
    failures = []
    for i in range(CASES):
        d = tmp_path / f"d{i:04d}"
        d.mkdir()
        parts, kind, fmt, expected = _disagreeing_dir(r, rng, d)
        command = r.choice([c for c in STREAMING + MEMORY_ONLY if _applies(c, kind)])
        args = _argv(command, str(parts), d, kind)
        case = Case(seed=i, command=command.split("-")[0], args=args, label=f"{kind}/{fmt}/{expected}")
        case.inputs = sorted(p for p in parts.rglob("*") if p.is_file())
        outcome = run_case(runner, app, case, d)
        problems = list(outcome.problems)
        error = [ln for ln in outcome.stderr.splitlines() if ln.startswith("error:")]
        if command in MEMORY_ONLY:  # the in-memory readers take one file: several parts are refused
            if outcome.exit_code != 3:
                problems.append(f"exit {outcome.exit_code}, expected 3 (several parts in memory)")
        elif expected[0] == "error":
            if outcome.exit_code != 3:
                problems.append(f"exit {outcome.exit_code}, expected 3")
            elif expected[1] not in error[0] or (expected[2] and f"'{expected[2]}'" not in error[0]):
                problems.append(
                    f"error does not name part {expected[1]} and column {expected[2]}: {error[0]!r}"
                )
        elif outcome.exit_code != 0:
            problems.append(f"exit {outcome.exit_code}, expected 0")
        elif _rows(command, outcome.stdout) not in (None, expected[1]):
            problems.append(f"read {_rows(command, outcome.stdout)} rows, expected {expected[1]}")
        if problems:
            failures.append((i, command, case.label, args, problems, outcome.stderr[-300:]))
    assert not failures, "\n\n".join(map(repr, failures[:10]))


GLOBBY = ["b*", "a[1]", "q?", "[x]", "*", "c[!0]"]


def _sibling(stem: str) -> str:
    """A name the glob ``stem`` matches, other than ``stem`` itself."""
    return {"b*": "b1", "a[1]": "a1", "q?": "qa", "[x]": "x", "*": "z", "c[!0]": "c1"}[stem]


def test_fuzz_glob_characters_in_real_names(tmp_path):
    runner = CliRunner()
    r = random.Random(SEED * 7 + 2)
    rng = np.random.default_rng(SEED + 1)
    failures = []
    for i in range(CASES):
        d = tmp_path / f"g{i:04d}"
        d.mkdir()
        kind = r.choice(FLAT)
        fmt = r.choice(["parquet", "csv", "csv.gz"])
        stem = r.choice(GLOBBY)
        literal = d / f"{stem}.{fmt}"
        sibling = d / f"{_sibling(stem)}.{fmt}"
        n_lit, n_sib = r.choice([(10, 17), (23, 9)])
        write_data(literal, DATASETS[kind](rng, n_lit), "parquet" if fmt == "parquet" else "csv")
        write_data(sibling, DATASETS[kind](rng, n_sib), "parquet" if fmt == "parquet" else "csv")
        removed = r.random() < 0.3  # then the name is a pattern: it matches the sibling only
        if removed:
            literal.unlink()
        command = r.choice([c for c in STREAMING + MEMORY_ONLY if _applies(c, kind)])
        args = _argv(command, str(literal), d, kind)
        case = Case(seed=i, command=command.split("-")[0], args=args, label=f"{kind}/{fmt}/{stem}/{removed}")
        case.inputs = [p for p in (literal, sibling) if p.exists()]
        outcome = run_case(runner, app, case, d)
        problems = list(outcome.problems)
        want = n_sib if removed else n_lit
        if outcome.exit_code != 0:
            problems.append(f"exit {outcome.exit_code}, expected 0")
        elif _rows(command, outcome.stdout) not in (None, want):
            problems.append(f"read {_rows(command, outcome.stdout)} rows, expected {want}")
        if problems:
            failures.append((i, command, case.label, args, problems, outcome.stderr[-300:]))
    assert not failures, "\n\n".join(map(repr, failures[:10]))


def test_families_are_seeded(tmp_path):
    """The same seed builds the same directory (the families are reproducible)."""
    trees = []
    for k in range(2):
        d = tmp_path / str(k)
        d.mkdir()
        _disagreeing_dir(random.Random(5), np.random.default_rng(5), d)
        trees.append(
            {
                p.relative_to(d).as_posix(): (
                    pq.read_table(p).to_pydict()
                    if p.suffix == ".parquet" and "_" not in p.name[:1]
                    else p.read_bytes()
                )
                for p in sorted(d.rglob("*"))
                if p.is_file() and p.parent.name != "_temporary"
            }
        )
    assert trees[0] == trees[1] and trees[0]
