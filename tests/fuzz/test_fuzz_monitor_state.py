"""Seeded fuzz family for ``monitor --state`` fed again (issue 35), judged by the harness's invariants
(:func:`tests.fuzz.harness.check_case`: one error line naming a file, nothing written on failure, so the state
is unchanged, no traceback, no temporary file) plus the expected outcome of each case.

A case saves a state from the first part of a data set (a CSV, gzipped CSV or Parquet file; time or row
windows), then runs again, with or without ``--skip-seen``, on

* **same**: the same file, or a copy at another path: refused (exit 3, "already counted"); with
  ``--skip-seen`` the document equals the first run's (its notes apart);
* **overlap**: a file that repeats some counted rows before the new ones (time windows);
* **straddle**: new rows plus a few late rows older than the latest time counted (time windows);
* **tie**: new rows the first of which have exactly the latest time counted (time windows);
* **grow**: a directory of parts that gained a part (row and time windows);
* **new**: only new rows: counted, with or without ``--skip-seen``;
* **tamper**: the state file cut short, with a byte flipped or bytes appended, emptied, replaced by JSON or
  a foreign pickle, or rewritten with a wrong field and a valid checksum: refused (exit 3) naming the state
  file; a state of the earlier format (/1, no mark) loads.

Overlap, straddle and tie without ``--skip-seen`` are refused ("at or before"); with it the rows counted
are left out and every window holds the rows of one run over the rows counted once. ``UQEVAL_FUZZ_CASES=300``
runs more by hand (``UQEVAL_FUZZ_SEED`` picks another seed).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import random
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from uqeval.cli import app

from .harness import Case, run_case, write_data

CASES = int(os.environ.get("UQEVAL_FUZZ_CASES", "12"))
SEED = int(os.environ.get("UQEVAL_FUZZ_SEED", "17"))
T0 = np.datetime64("2024-03-01T00:00:00", "s")
TIME_SCENARIOS = ["same", "overlap", "straddle", "tie", "grow", "new", "tamper"]
ROW_SCENARIOS = ["same", "grow", "new", "tamper"]
#: every (row windows, scenario) in turn, so that a dozen cases meet each once
COMBOS = [(False, s) for s in TIME_SCENARIOS] + [(True, s) for s in ROW_SCENARIOS]
FIELD_EDITS = [
    (["layout"], None),
    (["settings"], [1]),
    (["single", "windows"], {"x": 1}),
    (["single", "n_seen"], -1),
    (["single", "levels"], "0.95"),
    (["single", "mark"], 1.5),
    (["single", "inputs"], [{"path": 1}]),
    (["single", "total"], None),
    (["single", "kind"], 3),
    (["single", "signature"], "x"),
]


def _rows(rng: np.random.Generator, secs: np.ndarray) -> dict:
    n = secs.size
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    return {
        "t": T0 + secs.astype("timedelta64[s]"),
        "y": mean + std * rng.normal(size=n),
        "mean": mean,
        "std": std,
    }


def _take(cols: dict, idx) -> dict:
    return {k: np.array(np.asarray(v)[idx]) for k, v in cols.items()}


def _cat(*parts: dict) -> dict:
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _write(cols: dict, path: Path) -> Path:
    write_data(path, cols, "parquet" if path.suffix == ".parquet" else "csv")
    return path


def _rewrap(data: bytes, path: list, value) -> bytes:
    outer = pickle.loads(data)
    inner = pickle.loads(outer["payload"])
    d = inner
    for k in path[:-1]:
        d = d[k]
    if value is None:
        d.pop(path[-1], None)
    else:
        d[path[-1]] = value
    body = pickle.dumps(inner)
    return pickle.dumps({**outer, "sha256": hashlib.sha256(body).hexdigest(), "payload": body})


def _tamper(r: random.Random, good: bytes) -> tuple[bytes, str]:
    how = r.choice(["truncate", "flip", "append", "empty", "json", "foreign", "field", "field", "legacy"])
    if how == "truncate":
        return good[: r.randrange(0, len(good))], how
    if how == "flip":
        i = r.randrange(len(good))
        return good[:i] + bytes([good[i] ^ (1 << r.randrange(8))]) + good[i + 1 :], how
    if how == "append":
        return good + r.choice([b"\x00", b"junk", good[:40]]), how
    if how == "empty":
        return b"", how
    if how == "json":
        return json.dumps({"format": "uqeval.monitor-state/2", "single": {}}).encode(), how
    if how == "foreign":
        return pickle.dumps(r.choice([[1, 2], Counter(a=1), {"format": "uqeval.monitor-state/2"}])), how
    if how == "field":
        path, value = r.choice(FIELD_EDITS)
        return _rewrap(good, path, value), f"field:{'.'.join(path)}"
    inner = pickle.loads(pickle.loads(good)["payload"])  # legacy: the state as format /1 wrote it
    for key in ("mark", "inputs"):
        inner["single"].pop(key)
    return pickle.dumps({**inner, "format": "uqeval.monitor-state/1"}), how


def _case(r: random.Random, rng: np.random.Generator, d: Path, i: int) -> tuple[list[str], dict, str]:
    """Save a state in ``d``; ``(argv of the second run, expected outcome, label)`` of case ``i``."""
    rows, scenario = COMBOS[i % len(COMBOS)]
    fmt = r.choice([".csv", ".parquet", ".csv.gz"])
    n = r.choice([40, 90, 150])
    secs = np.cumsum(rng.integers(1, 4000, n))  # strictly increasing: no two rows share a time
    cols = _rows(rng, secs)
    k = r.randrange(n // 4, 3 * n // 4)
    window = (
        ["--window", r.choice(["25", "40"])] if rows else ["--time", "t", "--window", r.choice(["1D", "6h"])]
    )
    state = d / "mon.state"
    first_doc = d / "first.json"
    runner = CliRunner()
    grow = scenario == "grow"
    if grow:
        parts = d / "parts"
        parts.mkdir()
        first = _write(_take(cols, slice(0, k)), parts / f"p1{fmt}")
        first_arg = str(parts)
    else:
        first = _write(_take(cols, slice(0, k)), d / f"first{fmt}")
        first_arg = str(first)
    base = ["monitor", "-q", "-f", "json", *window, "--state", str(state)]
    res = runner.invoke(app, [*base, first_arg, "-o", str(first_doc)])
    assert res.exit_code == 0, res.output
    skip = r.random() < 0.5
    expect: dict = {"skip": skip, "first": json.loads(first_doc.read_text())}
    label = f"{'rows' if rows else 'time'}/{fmt}/{scenario}/{'skip' if skip else 'plain'}"
    if scenario == "same":
        target = first
        if r.random() < 0.5:  # a copy elsewhere: the same input by its size and content
            target = d / f"copy of first{fmt}"
            shutil.copyfile(first, target)
        arg = str(target)
        expect.update(code=0 if skip else 3, same=True, says="already counted")
    elif scenario == "grow":
        _write(_take(cols, slice(k, n)), parts / f"p2{fmt}")
        arg = str(parts)
        expect.update(code=0 if skip else 3, n_rows=n, says="already counted", union=cols)
    elif scenario == "new":
        arg = str(_write(_take(cols, slice(k, n)), d / f"new{fmt}"))
        expect.update(code=0, n_rows=n, union=cols)
    elif scenario == "tamper":
        bad, how = _tamper(r, state.read_bytes())
        state.write_bytes(bad)
        arg = str(_write(_take(cols, slice(k, n)), d / f"new{fmt}"))
        label += f"/{how}"
        if how == "legacy":
            expect.update(code=0, n_rows=n, union=cols)
        else:  # a flipped bit may leave the state intact (the pickle protocol's number, say): then it counts
            expect.update(code={0, 3} if how == "flip" else 3, names=state, n_rows=n, union=cols)
    else:
        new = _take(cols, slice(k, n))
        if scenario == "overlap":
            j = r.randrange(0, k)
            sent, n_old = _take(cols, slice(j, n)), k - j
        elif scenario == "straddle":  # late rows: new, but older than the latest time counted
            late = _rows(rng, np.sort(rng.integers(0, secs[k - 1] + 1, r.choice([1, 3]))))
            sent, n_old = _cat(late, new), len(late["t"])
        else:  # tie: the first new rows have exactly the latest time counted
            m = r.choice([1, 2])
            new["t"][:m] = cols["t"][k - 1]
            sent, n_old = new, m
            new = _take(new, slice(m, None))
        arg = str(_write(sent, d / f"second{fmt}"))
        expect.update(
            code=0 if skip else 3,
            n_rows=k + len(new["t"]),
            says="at or before",
            n_old=n_old,
            union=_cat(_take(cols, slice(0, k)), new),
        )
    argv = [*base, arg, "-o", str(d / "second.json")] + (["--skip-seen"] if skip else [])
    return argv, expect, label


def _check(d: Path, outcome, expect: dict) -> list[str]:
    problems = []
    error = [ln for ln in outcome.stderr.splitlines() if ln.startswith("error:")]
    codes = expect["code"] if isinstance(expect["code"], set) else {expect["code"]}
    if outcome.exit_code not in codes:
        return [f"exit {outcome.exit_code}, expected {expect['code']}"]
    if outcome.exit_code == 3:
        if "says" in expect and expect["says"] not in error[0]:
            problems.append(f"error does not say {expect['says']!r}")
        if "names" in expect and not error[0].startswith(f"error: {expect['names']}: "):
            problems.append("error does not name the state file first")
        if "--skip-seen" not in error[0] and "names" not in expect:
            problems.append("error does not suggest --skip-seen")
        return problems
    doc = json.loads((d / "second.json").read_text())
    first = expect["first"]
    if expect.get("same"):  # the document of one run: its notes and a copy's path apart

        def numbers(x: dict) -> dict:
            return {**{k: v for k, v in x.items() if k != "notes"}, "input": {**x["input"], "path": None}}

        if numbers(doc) != numbers(first):
            problems.append("--skip-seen on the same input changed the document")
    else:
        if doc["cumulative"]["n_rows"] != expect["n_rows"]:
            problems.append(f"counted {doc['cumulative']['n_rows']} rows, expected {expect['n_rows']}")
        once = d / "once.parquet"
        _write(expect["union"], once)
        window = first["input"]
        args = ["--window", window["window"]] + (["--time", "t"] if window["time"] else [])
        ref = json.loads(CliRunner().invoke(app, ["monitor", str(once), "-q", "-f", "json", *args]).stdout)
        if [w["n_rows"] for w in doc["windows"]] != [w["n_rows"] for w in ref["windows"]]:
            problems.append("windows differ from one run over the rows counted once")
    skipped = [n for n in doc.get("notes", []) if "--skip-seen: left out" in n]
    if expect["skip"] and "n_old" in expect and f"left out {expect['n_old']} row(s)" not in " ".join(skipped):
        problems.append(f"no note of {expect['n_old']} rows left out: {skipped}")
    return problems


def test_fuzz_monitor_state_fed_again(tmp_path):
    runner = CliRunner()
    r = random.Random(SEED * 11 + 3)
    rng = np.random.default_rng(SEED + 35)
    failures, labels = [], Counter()
    for i in range(CASES):
        d = tmp_path / f"m{i:04d}"
        d.mkdir()
        argv, expect, label = _case(r, rng, d, i)
        labels[label.split("/")[2]] += 1
        case = Case(seed=i, command="monitor", args=argv, label=label)
        case.inputs = sorted(
            p for p in d.rglob("*") if p.is_file() and p.name not in ("mon.state", "first.json")
        )
        case.outputs = [d / "second.json"]
        outcome = run_case(runner, app, case, d)
        problems = list(outcome.problems) + _check(d, outcome, expect)
        if problems:
            failures.append((i, label, argv, problems, outcome.stderr[-400:]))
    print(f"\nmonitor state fuzz: {CASES} cases, seed {SEED}: {dict(sorted(labels.items()))}")
    assert not failures, "\n\n".join(map(repr, failures[:10]))


def test_the_family_is_seeded(tmp_path):
    """The same seed builds the same case."""
    built = []
    for k in range(2):
        d = tmp_path / str(k)
        d.mkdir()
        argv, expect, label = _case(random.Random(5), np.random.default_rng(5), d, 3)
        data = {p.name: p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and p.suffix != ".json"}
        data.pop("mon.state")  # holds the paths and times of the files it read
        built.append(([a.replace(str(d), "D") for a in argv], label, data))
    assert built[0] == built[1]
