"""Every command × every bundled sample file, pinned in golden JSON files (tests/golden/matrix/).

This is a characterisation test: it records what the CLI does *today* on each sample representation,
failures included (exit code and the one-line error), so that a refactor can show it changed nothing.
A case that fails today is not asserted to be right; it is asserted to be unchanged. After an intended
change, regenerate with

    UQEVAL_UPDATE_GOLDEN=1 python -m pytest -q -p no:cacheprovider tests/cli/test_matrix.py

and review the diff of tests/golden/matrix/*.json.

Each golden file maps a case id (the sample file, plus the varying options) to
``{"exit_code": int, "output": <JSON on stdout, normalised>, "error": "<the error line>",
"stderr": [other stderr lines, e.g. notes]}`` (keys present only when they apply). Normalisation
drops ``uqeval_version`` and replaces this test's tmp directory with ``<tmp>`` and the repository
root with ``<root>``; nothing in the outputs depends on the clock. Plots and reports are binary or
large, so for them the golden holds what was checked (valid PNG written; HTML written, its headings,
figure captions and the score metric paths missing from it).

Cases: score (and --by shift where the file has that column), compare (the file twice, plus two
multi-file cases), check (a small per-representation rules file written by the test, and
configs/ci.toml), ucc, coverage (and --by shift), recalibrate with each of the five methods (accrue
with --model constant --features x), plot with each of the twelve kinds, report, and explain on every
metric path score reports on any sample. Failures recorded as they are today include `compare` on
ensemble_classification/dirichlet ("no metric to compare") and every recalibrate method on samples
and quantiles.

Every JSON output is also validated, as written, against its command's JSON Schema
(uqeval/schemas/<command>.schema.json; tests/test_schemas.py tests the schemas themselves).

Commands run in-process with typer's CliRunner from the repository root, so the relative sample
paths (which appear in the outputs) are stable. Bootstrap and permutation counts are small (50) to
keep the file fast; everything randomised is seeded.
"""

from __future__ import annotations

import functools
import json
import os
import re
import struct
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import GOLDEN, ROOT, assert_tree_close, keep_close

runner = CliRunner()
MATRIX = GOLDEN / "matrix"
UPDATE = bool(os.environ.get("UQEVAL_UPDATE_GOLDEN"))

# Every representation among the bundled samples (file -> what it holds), plus one ACCRUE problem.
FILES = {
    "gaussian.parquet": "gaussian",
    "gaussian.csv": "gaussian",
    "point.csv": "point",
    "intervals.parquet": "intervals",
    "intervals_multi.csv": "intervals",
    "quantiles.parquet": "quantiles",
    "samples.parquet": "samples",
    "samples_list.parquet": "samples",
    "classification.parquet": "categorical",
    "ensemble_classification.parquet": "members",
    "dirichlet.parquet": "dirichlet",
    "loglik.parquet": "loglik",
    "accrue_g.parquet": "point",
    "multivariate.parquet": "multivariate",
}
# Files with a `shift` column (the --by cases).
SHIFT_FILES = [
    "gaussian.parquet",
    "intervals.parquet",
    "quantiles.parquet",
    "samples.parquet",
    "classification.parquet",
    "ensemble_classification.parquet",
    "dirichlet.parquet",
    "loglik.parquet",
    "multivariate.parquet",
]
# Regression files over the same targets, for the multi-file cases.
MIXED = ["gaussian.parquet", "quantiles.parquet", "samples.parquet", "intervals.parquet", "point.csv"]
# Every --kind of `uqeval plot` today (spelled out, not imported, so the golden is independent of where they live).
PLOT_KINDS = [
    "predictions",
    "intervals",
    "calibration",
    "adversarial",
    "sharpness",
    "residuals",
    "reliability",
    "pit",
    "confidence",
    "sets",
    "rejection",
    "ucc",
]
RECAL_METHODS = ["std-scaling", "isotonic", "conformal", "temperature", "accrue"]
FAST = ["--bootstrap", "50", "--permutations", "50", "--seed", "0"]

# `uqeval check` rules per representation: required metrics and limits that today's samples pass.
RULES = {
    "gaussian": (
        'require = ["accuracy.mae", "scoring_rule.crps"]\n[rules]\n'
        '"avg_calibration.ma_cal" = { max = 0.5 }\n"coverage.0.95.coverage" = { min = 0.5, max = 1.0 }\n'
    ),
    "point": 'require = ["accuracy.mae"]\n[rules]\n"accuracy.rmse" = { max = 10.0 }\n',
    "intervals": (
        'require = ["coverage.0.95.coverage"]\n[rules]\n'
        '"scoring_rule.interval" = { max = 100.0 }\n"coverage.0.95.width" = { min = 0.0 }\n'
    ),
    "quantiles": (
        'require = ["scoring_rule.wis", "coverage.0.9.coverage"]\n[rules]\n'
        '"scoring_rule.pinball" = { max = 10.0 }\n"avg_calibration.ma_cal" = { max = 0.5 }\n'
    ),
    "samples": (
        'require = ["scoring_rule.crps", "scoring_rule.crps_fair"]\n[rules]\n'
        '"reliability.max_cal_err" = { max = 0.5 }\n"rejection.auc_rejection" = { max = 10.0 }\n'
    ),
    "categorical": (
        'require = ["accuracy.accuracy", "spce.spce"]\n[rules]\n'
        '"calibration.ece" = { max = 0.5 }\n"prediction_sets.0.95.coverage" = { min = 0.5 }\n'
    ),
    "members": (
        'require = ["diversity.disagreement", "information_criteria.waic1"]\n[rules]\n'
        '"calibration.ece" = { max = 0.5 }\n"ensemble_uncertainty.epistemic" = { min = 0.0 }\n'
    ),
    "dirichlet": (
        'require = ["ensemble_uncertainty.knowledge"]\n[rules]\n'
        '"calibration.ece" = { max = 0.5 }\n"accuracy.accuracy" = { min = 0.5 }\n'
    ),
    "loglik": (
        'require = ["information_criteria.waic1"]\n[rules]\n"information_criteria.iscv" = { min = -10.0 }\n'
    ),
    "multivariate": 'require = ["multivariate.energy"]\n[rules]\n"multivariate.variogram" = { max = 10.0 }\n',
}


def sample(name: str) -> str:
    return f"sample_data/{name}"


# ----------------------------------------------------------------------------------------------
# Cases: command -> {case id: argv after the command}. "{tmp}" is replaced by the test's tmp dir.


def _cases() -> dict[str, dict[str, list[str]]]:
    cases: dict[str, dict[str, list[str]]] = {
        c: {} for c in ("score", "compare", "check", "ucc", "coverage", "recalibrate")
    }
    for f, _rep in FILES.items():
        p = sample(f)
        cases["score"][f] = [p, "--format", "json"]
        cases["compare"][f] = [p, p, "--format", "json", *FAST]
        cases["check"][f] = [p, "--rules", "{tmp}/rules.toml", "--format", "json"]
        cases["check"][f"{f} --rules configs/ci.toml"] = [p, "--rules", "configs/ci.toml", "--format", "json"]
        cases["ucc"][f] = [p, "--format", "json"]
        cases["coverage"][f] = [p, "--format", "json"]
        for m in RECAL_METHODS:
            extra = ["--model", "constant", "--features", "x"] if m == "accrue" else []
            cases["recalibrate"][f"{f} --method {m}"] = [p, "--method", m, "--format", "json", *extra]
    for f in SHIFT_FILES:
        cases["score"][f"{f} --by shift"] = [sample(f), "--format", "json", "--by", "shift"]
        cases["coverage"][f"{f} --by shift"] = [sample(f), "--format", "json", "--by", "shift"]
    two = ["gaussian.parquet", "gaussian_const.parquet"]
    cases["compare"][" ".join(two)] = [*map(sample, two), "--format", "json", *FAST]
    cases["compare"][" ".join(MIXED)] = [*map(sample, MIXED), "--format", "json", *FAST]
    cases["ucc"][" ".join(MIXED[:4])] = [*map(sample, MIXED[:4]), "--format", "json"]
    cases["coverage"][" ".join(MIXED[:4]) + " --by shift"] = [
        *map(sample, MIXED[:4]),
        "--format",
        "json",
        "--by",
        "shift",
    ]
    return cases


CASES = _cases()
PLOT_CASES = {f"{f} --kind {k}": (f, k) for f in FILES for k in PLOT_KINDS}
ALL_IDS = {**{c: sorted(v) for c, v in CASES.items()}, "plot": sorted(PLOT_CASES), "report": sorted(FILES)}


# ----------------------------------------------------------------------------------------------
# Running and normalising


def _normalise(obj, tmp: Path):
    if isinstance(obj, dict):
        return {k: _normalise(v, tmp) for k, v in obj.items() if k != "uqeval_version"}
    if isinstance(obj, list):
        return [_normalise(v, tmp) for v in obj]
    if isinstance(obj, str):
        return obj.replace(str(tmp), "<tmp>").replace(str(ROOT), "<root>")
    return obj


_WARNING = re.compile(r"^\S.*:\d+: \w*Warning: ")


def _invoke(argv: list[str], tmp: Path, keep_version: bool = False) -> dict:
    """Run ``uqeval argv`` and record exit code, JSON output, the error line and the other stderr lines.

    ``keep_version``: the JSON output is returned as written (the caller normalises it)."""
    argv = [a.replace("{tmp}", str(tmp)) for a in argv]
    result = runner.invoke(app, argv)
    rec: dict = {"exit_code": result.exit_code}
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        exc = result.exception
        rec["exception"] = _normalise(f"{type(exc).__name__}: {exc}", tmp)
    stdout = result.stdout.strip()
    if stdout:
        try:
            out = json.loads(stdout)
            rec["output"] = out if keep_version else _normalise(out, tmp)
        except json.JSONDecodeError:
            rec["stdout"] = _normalise(stdout, tmp)
    lines = [ln.rstrip() for ln in result.stderr.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _WARNING.match(ln) and not ln.startswith(" ")]
    errors = [ln for ln in lines if ln.startswith("error:")]
    if result.exit_code != 0:
        if errors:
            rec["error"] = _normalise(errors[0], tmp)
        elif lines:  # click usage errors: a boxed message
            rec["error"] = _normalise(" ".join(ln.strip("│╭╮╰╯─ ") for ln in lines).strip(), tmp)
    other = [_normalise(ln, tmp) for ln in lines if ln not in errors[:1]]
    if other:
        rec["stderr"] = other
    return rec


def _valid_png(path: Path) -> bool:
    """A PNG signature, chunks with correct CRCs, IHDR first with a non-empty image, and IEND last."""
    data = path.read_bytes()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    pos, names = 8, []
    while pos + 12 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        name, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        if len(body) != length or zlib.crc32(name + body) != crc:
            return False
        if not names and (name != b"IHDR" or min(struct.unpack(">II", body[:8])) < 1):
            return False
        names.append(name)
        pos += 12 + length
    return pos == len(data) and names[-1:] == [b"IEND"] and b"IDAT" in names


def _metric_paths(summary: dict) -> dict[str, object]:
    """Every leaf under ``metrics`` of a score summary as 'group.key[.level].key' -> value."""
    out: dict[str, object] = {}

    def walk(prefix: str, node) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        else:
            out[prefix] = node

    walk("", summary.get("metrics", {}))
    return out


@functools.cache
def _score_summary(name: str) -> dict:
    """`uqeval score SAMPLE --format json` (every sample scores today; the score golden pins the output)."""
    r = runner.invoke(app, ["score", sample(name), "--format", "json"])
    assert r.exit_code == 0, (name, r.output)
    return json.loads(r.stdout)


@functools.cache
def _golden(command: str) -> dict:
    path = MATRIX / f"{command}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _check(command: str, case: str, got: dict) -> None:
    """Compare one case with its entry in tests/golden/matrix/<command>.json (UQEVAL_UPDATE_GOLDEN=1: rewrite it)."""
    path = MATRIX / f"{command}.json"
    if UPDATE:
        MATRIX.mkdir(parents=True, exist_ok=True)
        data = json.loads(path.read_text()) if path.exists() else {}
        data[case] = keep_close(got, data[case]) if case in data else got
        data = {k: data[k] for k in sorted(data) if k in ALL_IDS.get(command, data)}
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        _golden.cache_clear()
    want = _golden(command)
    assert case in want, f"no golden entry for {command} {case!r}; regenerate with UQEVAL_UPDATE_GOLDEN=1"
    assert_tree_close(got, want[case], where=f"{command}[{case}]")


# ----------------------------------------------------------------------------------------------
# Tests

# (typer's CliRunner builds the click command from the app once per process: tests/conftest.py)


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@functools.cache
def _validator(command: str):
    """The draft 2020-12 validator of the command's JSON document (uqeval/schemas/<command>.schema.json)."""
    from jsonschema import Draft202012Validator

    from uqeval.schemas import load

    return Draft202012Validator(load(command))


@pytest.mark.parametrize(("command", "case"), [(c, k) for c, v in CASES.items() for k in v])
def test_command_on_sample(command, case, tmp_path):
    if command == "check" and "--rules configs/ci.toml" not in case:
        (tmp_path / "rules.toml").write_text(RULES[FILES[case]])
    rec = _invoke([command, *CASES[command][case]], tmp_path, keep_version=True)
    if "output" in rec:  # the JSON as written (uqeval_version included) matches the command's schema
        errors = [
            f"{list(e.absolute_path)}: {e.message[:200]}"
            for e in _validator(command).iter_errors(rec["output"])
        ]
        assert not errors, f"{command} {case}: the JSON does not match its schema: {errors[:5]}"
        rec["output"] = _normalise(rec["output"], tmp_path)
    _check(command, case, rec)


@pytest.mark.parametrize("case", sorted(PLOT_CASES))
def test_plot_on_sample(case, tmp_path):
    f, kind = PLOT_CASES[case]
    out = tmp_path / "plot.png"
    rec = _invoke(["plot", sample(f), "--kind", kind, "-o", str(out)], tmp_path)
    rec["written"] = out.exists()
    if out.exists():
        rec["valid_png"] = _valid_png(out)
    _check("plot", case, rec)


@pytest.mark.parametrize("case", sorted(FILES))
def test_report_on_sample(case, tmp_path):
    out = tmp_path / "report.html"
    rec = _invoke(["report", sample(case), "-o", str(out)], tmp_path)
    rec["written"] = out.exists()
    if out.exists():
        html = out.read_text()
        rec["headings"] = re.findall(r"<h[23][^>]*>(.*?)</h[23]>", html)
        rec["figures"] = re.findall(r'<img [^>]*alt="([^"]*)"', html)
        paths = sorted(_metric_paths(_score_summary(case)))
        rec["score_metric_paths"] = len(paths)
        rec["metric_paths_missing_from_html"] = [p for p in paths if p not in html]
    _check("report", case, rec)


def _explain_cases() -> dict[str, list[str]]:
    """Every metric path `uqeval score` reports on any sample -> the samples that report it."""
    seen: dict[str, list[str]] = {}
    for f in FILES:
        for p in _metric_paths(_score_summary(f)):
            seen.setdefault(p, []).append(f)
    return seen


def test_explain_every_reported_metric(tmp_path):
    """`uqeval explain PATH` for every metric path score reports (and the bare listing), as one golden."""
    got: dict[str, dict] = {}
    for path, files in sorted(_explain_cases().items()):
        rec = _invoke(["explain", path], tmp_path)
        rec["reported_by"] = files
        got[path] = rec
    got["(no argument: the list)"] = _invoke(["explain"], tmp_path)
    bad = {p: r["exit_code"] for p, r in got.items() if r["exit_code"] != 0 or not r.get("stdout")}
    path = MATRIX / "explain.json"
    if UPDATE:
        MATRIX.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n")
    want = json.loads(path.read_text())
    assert sorted(got) == sorted(want), "the set of reported metric paths changed"
    for p in want:
        assert_tree_close(got[p], want[p], where=f"explain[{p}]")
    assert not bad, f"explain failed or printed nothing for {bad}"


def test_golden_files_hold_exactly_the_cases():
    """No stale or missing entries: every golden file has one entry per case of this module."""
    for command, ids in ALL_IDS.items():
        path = MATRIX / f"{command}.json"
        assert path.exists(), path
        assert sorted(json.loads(path.read_text())) == ids, command
