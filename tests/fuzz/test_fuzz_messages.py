"""Seeded families for outputs and messages (issue 31, items 6 and 7), judged by the invariants of
:func:`tests.fuzz.harness.check_case` plus one per family:

* ``-o -``: every command that writes JSON, with its JSON output on stdout and any ``--format``:
  stdout is exactly one strict JSON document, and nothing says "wrote -";
* extreme values through ``compare`` and ``report`` (1e308, -1e308, 5e-324, huge and tiny mixed,
  in targets, means or spreads): exit 0, or 3 with one error line naming a file; never a traceback;
  JSON strict (what overflows is null);
* config layouts (keys in several tables, a byte-order mark, nested tables, dotted keys, duplicate
  keys, comments): a valid file is accepted, and an error names the line of the planted fault.

The fast subset runs in the suite; ``UQEVAL_FUZZ_CASES=300`` (per family) and ``UQEVAL_FUZZ_SEED``
run more by hand, as for :mod:`tests.fuzz.test_fuzz`.
"""

from __future__ import annotations

import collections
import json
import os
import random
import re
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from uqeval.cli import app

from .harness import Case, _strict_json, run_case, write_data

CASES = int(os.environ.get("UQEVAL_FUZZ_CASES", "12"))
SEED = int(os.environ.get("UQEVAL_FUZZ_SEED", "31"))

runner = CliRunner()


def _report(failures: list, counts: collections.Counter, family: str) -> None:
    print(f"\nfuzz {family}: {CASES} cases, seed {SEED}: {dict(sorted(counts.items()))}")
    assert not failures, "\n\n".join(
        f"case {i} [{label}]\n  args: {args!r}\n  problems: {probs}\n  stderr: {err!r}"
        for i, label, args, probs, err in failures[:10]
    )


def _gaussian(rng: np.random.Generator, n: int, y: np.ndarray | None = None) -> dict:
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    return {"y": mean + std * rng.normal(size=n) if y is None else y, "mean": mean, "std": std}


def _classes(rng: np.random.Generator, n: int, label: np.ndarray | None = None) -> dict:
    z = rng.normal(size=(n, 3))
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    label = rng.integers(0, 3, n) if label is None else label
    return {"label": label, **{f"p_{k}": p[:, k] for k in range(3)}}


# --------------------------------------------------------------------------- -o - (stdout)


def _stdout_case(r: random.Random, rng: np.random.Generator, d: Path, i: int) -> Case:
    command = r.choice(["score", "ucc", "coverage", "compare", "check", "recalibrate"])
    fmt = r.choice(["json", "json", "table", "markdown"])
    ext = r.choice(["csv", "parquet"])
    n = r.choice([24, 40])  # (split-conformal at 0.95 needs 19 rows)
    g = _gaussian(rng, n)
    f = write_data(d / f"pred.{ext}", g, ext)
    case = Case(seed=i, command=command, inputs=[f], label=f"{command} -f {fmt}")
    if command in ("score", "ucc", "coverage"):
        args = [command, str(f), "-f", fmt, "-o", "-"]
    elif command == "compare":
        h = write_data(d / f"other.{ext}", {**_gaussian(rng, n, g["y"])}, ext)
        case.inputs.append(h)
        args = ["compare", str(f), str(h), "-f", fmt, "-o", "-", "--bootstrap", r.choice(["0", "20"])]
    elif command == "check":
        rules = d / "rules.toml"
        rules.write_text(
            r.choice(
                ['[rules]\n"accuracy.mae" = { max = 10.0 }\n', '[rules]\n"accuracy.mae" = { max = 0.0 }\n']
            )
        )
        case.inputs.append(rules)
        args = ["check", str(f), "--rules", str(rules), "-f", fmt, "-o", "-"]
    else:  # the saved model is the JSON on stdout
        args = ["recalibrate", str(f), "--method", r.choice(["std-scaling", "isotonic", "conformal"])]
        args += ["--save", "-", "-f", fmt]
    case.args = args
    return case


def test_fuzz_json_to_stdout_is_one_document(tmp_path):
    r, rng = random.Random(SEED), np.random.default_rng(SEED)
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    for i in range(CASES * 2):
        d = tmp_path / f"s{i:04d}"
        d.mkdir()
        case = _stdout_case(r, rng, d, i)
        outcome = run_case(runner, app, case, d)
        problems = list(outcome.problems)
        counts[f"{case.command} exit {outcome.exit_code}"] += 1
        if outcome.exit_code in (0, 1):
            try:
                doc = _strict_json(outcome.stdout)  # the whole of stdout: exactly one document
            except ValueError as exc:
                problems.append(f"stdout is not one strict JSON document: {exc}")
            else:
                if not isinstance(doc, dict):
                    problems.append(f"stdout holds a {type(doc).__name__}, not a JSON object")
        else:
            problems.append(f"exit {outcome.exit_code} on valid input")
        if re.search(r"^wrote -", outcome.stderr, re.M):
            problems.append("printed 'wrote -'")
        if problems:
            failures.append((i, case.label, case.args, problems, outcome.stderr[-400:]))
    _report(failures, counts, "-o -")


# --------------------------------------------------------------------------- extreme values

EXTREMES = {
    "huge": lambda n, r: np.full(n, 1e308),
    "-huge": lambda n, r: np.full(n, -1e308),
    "tiny": lambda n, r: np.full(n, 5e-324),
    "mixed": lambda n, r: np.array(
        [r.choice([1e308, -1e308, 5e-324, -5e-324, 1e-300, 1.0]) for _ in range(n)]
    ),
    "one": lambda n, r: np.where(np.arange(n) == r.randrange(n), r.choice([1e308, -1e308]), 0.5),
}


def _extreme(cols: dict, r: random.Random, keys: list[str]) -> tuple[dict, str]:
    """``cols`` with one column (of ``keys``) replaced by extreme values (a spread stays positive)."""
    cols = dict(cols)
    key, kind = r.choice(keys), r.choice(list(EXTREMES))
    v = EXTREMES[kind](len(cols[key]), r)
    cols[key] = np.abs(v) if key == "std" or key.startswith("p_") else v
    if key.startswith("p_"):  # probabilities: only tiny ones are valid, the rest is refused cleanly
        cols[key] = np.minimum(cols[key], 1.0)
    return cols, f"{kind}:{key}"


def _extreme_case(r: random.Random, rng: np.random.Generator, d: Path, i: int) -> Case:
    command = r.choice(["compare", "compare", "report"])
    ext = r.choice(["csv", "parquet"])
    n = r.choice([3, 12, 40])
    kind = r.choice(["gaussian", "gaussian", "gaussian", "classes"])
    base = _gaussian(rng, n) if kind == "gaussian" else _classes(rng, n)
    keys = ["y", "mean", "std"] if kind == "gaussian" else ["p_0"]
    case = Case(seed=i, command=command)
    if command == "report":
        cols, label = _extreme(base, r, keys)
        f = write_data(d / f"pred.{ext}", cols, ext)
        case.inputs.append(f)
        out = d / "report.html"
        case.outputs.append(out)
        case.args, case.label = ["report", str(f), "-o", str(out)], f"report {kind} {label}"
        return case
    if r.random() < 0.3 and kind == "gaussian":  # the targets themselves extreme, shared by both models
        base, label = _extreme(base, r, ["y"])
        cols_a = base
    else:
        cols_a, label = dict(base), "plain"
    cols_b, label_b = _extreme(base, r, [k for k in keys if k != "y"])
    if r.random() < 0.4:
        cols_a, _ = _extreme(cols_a, r, [k for k in keys if k != "y"])
    files = [write_data(d / f"a.{ext}", cols_a, ext), write_data(d / f"b.{ext}", cols_b, ext)]
    case.inputs += files
    args = ["compare", *map(str, files), "-f", r.choice(["json", "table", "markdown"])]
    args += ["--bootstrap", r.choice(["0", "20"]), "--permutations", r.choice(["0", "20"])]
    if r.random() < 0.3:
        args += ["--pairs", "all"]
    if r.random() < 0.3:
        out = d / "cmp.json"
        case.outputs.append(out)
        args += ["--output", str(out)]
    case.args, case.label = args, f"compare {kind} {label} / {label_b}"
    return case


def test_fuzz_extreme_values_through_compare_and_report(tmp_path):
    r, rng = random.Random(SEED + 1), np.random.default_rng(SEED + 1)
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    for i in range(CASES * 2):
        d = tmp_path / f"x{i:04d}"
        d.mkdir()
        case = _extreme_case(r, rng, d, i)
        outcome = run_case(runner, app, case, d)
        problems = list(outcome.problems)
        counts[f"{case.command} exit {outcome.exit_code}"] += 1
        if outcome.exit_code not in (0, 3):
            problems.append(f"exit {outcome.exit_code}")
        fmt = case.args[case.args.index("-f") + 1] if "-f" in case.args else None
        if outcome.exit_code == 0 and fmt == "json":
            doc = _strict_json(outcome.stdout)
            for t in doc["tests"]:  # a test is a number or null, never a string or a crash
                for key in ("mean_diff", "dm_statistic", "dm_p"):
                    if t[key] is not None and not isinstance(t[key], (int, float)):
                        problems.append(f"tests.{key} is {t[key]!r}")
        if outcome.exit_code == 0 and case.command == "report":
            html = (d / "report.html").read_text(encoding="utf-8")
            if "<html" not in html.lower():
                problems.append("report.html is not an HTML document")
        if problems:
            failures.append((i, case.label, case.args, problems, outcome.stderr[-400:]))
    _report(failures, counts, "extremes")


# --------------------------------------------------------------------------- config layouts

#: Valid ``key = value`` lines per table (a key may appear under several tables, not all valid in each).
VALID = {
    "metrics": ["num_bins = 20", "seed = 3", "level = 0.9", "levels = [0.5, 0.9]", "resolution = 19"],
    "input": ['nan_policy = "raise"', "fix_crossing = false", "renormalize = false"],
    "columns": ['y_true = "y"', 'mean = "mean"', 'std = "std"'],
}


def _config(r: random.Random) -> tuple[str, int | None, str]:
    """A TOML config, the (1-based) line of its one planted fault (None: a valid file) and the fault."""
    fault = r.choice(["none", "none", "foreign_key", "nested", "unknown_table", "dup", "bad_value", "dotted"])
    tables = r.sample(list(VALID), r.randint(1, 3))
    if (
        fault == "foreign_key"
    ):  # seed under [metrics] first, then under [input] (the old scan found the first)
        tables = ["metrics"] + [t for t in tables if t not in ("metrics", "input")]
    if fault == "bad_value" and "metrics" not in tables:
        tables.append("metrics")
    dotted = [
        d
        for d in ("metrics.nope = 1", "input.seed = 1", 'columns."y y" = 3')
        if d.split(".")[0] not in tables
    ]
    if fault == "dotted" and not dotted:
        fault = "nested"
    body: list[tuple[str, bool]] = []  # (line, is the fault)

    def pad() -> None:
        for _ in range(r.choice([0, 0, 1, 2])):
            body.append((r.choice(["", "# a comment", "   ", "# seed = 1 (a comment)"]), False))

    def header(name: str) -> str:
        return r.choice([f"[{name}]", f"[ {name} ]", f'["{name}"]', f"[{name}]  # the {name} table"])

    last_keys: list[str] = []
    for name in tables:
        pad()
        body.append((header(name), False))
        first = len(body)
        last_keys = r.sample(VALID[name], r.randint(1, len(VALID[name])))
        if fault == "foreign_key" and name == "metrics" and "seed = 3" not in last_keys:
            last_keys.append("seed = 3")
        for line in last_keys:
            pad()
            body.append((line, False))
        if fault == "bad_value" and name == "metrics":
            bad = f"{r.choice(['class_bins', 'adv_num_trials'])} = {r.choice(['1', '-3', '0', '100000000'])}"
            body.insert(r.randint(first, len(body)), (bad, True))
    pad()
    if fault == "foreign_key":
        body += [("[input]", False), ("seed = 5", True)]
    elif fault == "nested":
        body += [(r.choice(["[metrics.extra]", "[input.extra]", '[metrics."x y"]']), True), ("a = 1", False)]
    elif fault == "unknown_table":
        body += [(r.choice(["[foo]", "[foo.bar]", "[[foo]]", "[Metrics]"]), True), ("x = 1", False)]
    elif fault == "dup":  # a key of the last table again, or the first table declared again
        body.append((r.choice(last_keys), True) if r.random() < 0.6 else (header(tables[0]), True))
    elif fault == "dotted":  # a dotted key at the top, before any table
        body.insert(0, (r.choice(dotted), True))
    text = "\n".join(line for line, _ in body) + "\n"
    line_no = next((i for i, (_, bad) in enumerate(body, 1) if bad), None)
    if r.random() < 0.3:
        text = "\ufeff" + text
        fault += "+bom"
    return text, line_no, fault


def test_fuzz_config_errors_name_the_line(tmp_path):
    r, rng = random.Random(SEED + 2), np.random.default_rng(SEED + 2)
    data = write_data(tmp_path / "pred.csv", _gaussian(rng, 40), "csv")
    counts: collections.Counter[str] = collections.Counter()
    failures = []
    for i in range(CASES * 3):
        text, line, fault = _config(r)
        cfg = tmp_path / f"cfg{i:04d}.toml"
        cfg.write_text(text, encoding="utf-8")
        result = runner.invoke(app, ["score", str(data), "--config", str(cfg), "-f", "json"])
        counts[f"{fault.split('+')[0]} exit {result.exit_code}"] += 1
        problems = []
        err = [ln for ln in result.stderr.splitlines() if ln.startswith("error:")]
        if line is None:
            if result.exit_code != 0:
                problems.append(f"a valid config was refused: {err}")
            else:
                json.loads(result.stdout)
        elif result.exit_code != 3 or len(err) != 1:
            problems.append(f"exit {result.exit_code}, error lines {err}")
        elif not re.search(rf"\bline {line}\b", err[0]) or cfg.name not in err[0]:
            problems.append(f"the fault is on line {line}: {err[0]}")
        if "Traceback" in result.output:
            problems.append("traceback")
        if problems:
            failures.append((i, fault, text, problems, result.stderr[-300:]))
    _report(failures, counts, "config")
