"""The JSON Schemas of uqeval's documents (uqeval/schemas/*.schema.json, issue 27).

Every schema is a valid draft 2020-12 schema; every document tag the package writes has one; every JSON
output validates: the golden files (tests/golden and tests/golden/matrix, which tests/cli/test_matrix.py
also validates live: every command on every sample file), and the options that add optional parts
(diagnostics, Murphy curves, a baseline, a permutation test, a saved recalibrator, the streaming engine,
a directory input, the Python API), run here on 300-row cuts of the samples. Mutated documents must fail,
so the schemas are not vacuous.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval import schemas
from uqeval.cli import app

from .cli.test_matrix import FILES as MATRIX_FILES, SHIFT_FILES
from .conftest import GOLDEN, ROOT, SAMPLE

jsonschema = pytest.importorskip("jsonschema")
Draft202012Validator = jsonschema.Draft202012Validator

runner = CliRunner()
NAMES = sorted(schemas.catalogue())
#: matrix command -> its schema
COMMAND_SCHEMA = {c: c for c in ("score", "compare", "check", "ucc", "coverage", "recalibrate")}


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(schemas.load(name))


def assert_valid(name: str, doc: dict, where: str = "") -> None:
    """Validate ``doc`` against schema ``name``; a golden (``uqeval_version`` dropped) gets it back."""
    schema = schemas.load(name)
    if "uqeval_version" in schema.get("required", ()) and "uqeval_version" not in doc:
        doc = {**doc, "uqeval_version": uqeval.__version__}
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.absolute_path))
    shown = "; ".join(f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message[:160]}" for e in errors[:5])
    assert not errors, f"{where} does not match the {name} schema: {shown}"


# ---------------------------------------------------------------------------------------- the schemas


@pytest.mark.parametrize("name", NAMES)
def test_schema_is_valid_draft_2020_12(name):
    schema = schemas.load(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["type"] == "object" and schema["required"] and schema["title"] and schema["description"]
    assert re.fullmatch(r"uqeval\.[a-z_]+/[0-9]+", schemas.document_tag(schema) or ""), name
    # every $ref points into the file itself: a consumer needs no other file
    refs = re.findall(r'"\$ref": "([^"]*)"', json.dumps(schema))
    assert all(r.startswith("#/$defs/") and r[8:] in schema["$defs"] for r in refs), name


def test_every_document_the_package_writes_has_a_schema():
    """Every 'uqeval.<name>/<n>' tag in the package's source has a schema file pinning it, and back."""
    tags = set()
    for path in (ROOT / "uqeval").rglob("*.py"):
        tags |= set(re.findall(r"""["'](uqeval\.[a-z_]+/[0-9]+)["']""", path.read_text(encoding="utf-8")))
    pinned = {v["document"] for v in schemas.catalogue().values()}
    assert tags and tags == pinned, (sorted(tags - pinned), sorted(pinned - tags))


@pytest.mark.parametrize("name", NAMES)
def test_every_document_requires_the_writing_version(name):
    """Every document carries ``uqeval_version`` (check, coverage and recalibrate too): the schema requires it."""
    schema = schemas.load(name)
    assert "uqeval_version" in schema["required"] and "uqeval_version" in schema["properties"], name


@pytest.mark.parametrize("command", ["check", "coverage", "recalibrate"])
def test_check_coverage_and_recalibrate_write_the_version(cuts, tmp_path, command):
    gaussian = str(cuts["gaussian.parquet"])
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"scoring_rule.crps" = { max = 1e9 }\n')
    argv = {
        "check": ["check", gaussian, "--rules", str(rules)],
        "coverage": ["coverage", gaussian],
        "recalibrate": ["recalibrate", gaussian, "--method", "std-scaling"],
    }[command]
    doc = run_json([*argv, "--format", "json"])
    assert doc["uqeval_version"] == uqeval.__version__ and list(doc)[:2] == ["schema", "uqeval_version"]
    assert_valid(command, doc)


def test_schema_command_lists_and_prints(tmp_path):
    r = runner.invoke(app, ["schema"])
    assert r.exit_code == 0, r.output
    listed = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines()}
    assert listed == {n: v["document"] for n, v in schemas.catalogue().items()}
    for name in ("score", "uqeval.score/1", "score.schema.json"):
        r = runner.invoke(app, ["schema", name])
        assert r.exit_code == 0 and json.loads(r.stdout) == schemas.load("score"), name
    assert r.stdout == (ROOT / "uqeval" / "schemas" / "score.schema.json").read_text(encoding="utf-8")
    r = runner.invoke(app, ["schema", "scroe"])
    assert r.exit_code == 2 and "no schema 'scroe'" in r.stderr and "score" in r.stderr and not r.stdout


def test_python_api_schema():
    assert uqeval.schema("compare") == schemas.load("uqeval.compare/1")
    assert uqeval.list_schemas() == schemas.catalogue()
    with pytest.raises(uqeval.UsageError, match="no schema 'nope'"):
        uqeval.schema("nope")


MUTATIONS = {
    "a metric written as a string": lambda d: d["metrics"]["accuracy"].__setitem__("mae", "NaN"),
    "an unknown orientation": lambda d: d["orientation"].__setitem__("accuracy.mae", "down"),
    "a setting the schema does not know": lambda d: d["settings"].__setitem__("new_setting", 1),
    "no metrics": lambda d: d.pop("metrics"),
    "another version of the document": lambda d: d.__setitem__("schema", "uqeval.score/2"),
    "a group that is a number": lambda d: d["metrics"].__setitem__("accuracy", 0.5),
    "a negative row count": lambda d: d["input"].__setitem__("n_rows", -1),
    "an unknown top-level key": lambda d: d.__setitem__("extra", {}),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_score_schema_rejects_drift(mutation):
    doc = {**json.loads((GOLDEN / "score_point.json").read_text()), "uqeval_version": uqeval.__version__}
    assert validator("score").is_valid(doc)
    MUTATIONS[mutation](doc)
    assert not validator("score").is_valid(doc)


def test_other_schemas_reject_drift():
    matrix = {c: json.loads((GOLDEN / "matrix" / f"{c}.json").read_text()) for c in COMMAND_SCHEMA}
    cases = [
        ("compare", "gaussian.parquet gaussian_const.parquet", lambda d: d["metrics"]["crps"].pop("best")),
        (
            "compare",
            "gaussian.parquet gaussian_const.parquet",
            lambda d: d["settings"].__setitem__("pairs", "x"),
        ),
        ("check", "gaussian.parquet", lambda d: d["rows"][0].__setitem__("status", "OK")),
        ("check", "gaussian.parquet", lambda d: d["counts"].__setitem__("fail", 1)),  # passed with a failure
        ("ucc", "gaussian.parquet", lambda d: d["settings"].__setitem__("x_axis", "width")),
        ("coverage", "gaussian.parquet", lambda d: d["points"][0].__setitem__("coverage", 1.5)),
        ("recalibrate", "gaussian.parquet --method conformal", lambda d: d.__setitem__("method", "platt")),
    ]
    for command, case, mutate in cases:
        doc = {**matrix[command][case]["output"], "uqeval_version": uqeval.__version__}
        assert validator(command).is_valid(doc), (command, case)
        doc = copy.deepcopy(doc)
        mutate(doc)
        assert not validator(command).is_valid(doc), (command, case)


def test_recalibrator_schema_follows_the_loader():
    """The per-method fields of the recalibrator schema are the ones uqeval checks on --load."""
    from uqeval.recalibration import serialize

    branches = schemas.load("recalibrator")["properties"]["state"]["allOf"]
    by_method = {b["if"]["properties"]["method"]["const"]: b["then"] for b in branches}
    assert set(by_method) == set(serialize._SCHEMAS)
    for method, fields in serialize._SCHEMAS.items():
        assert set(by_method[method]["properties"]) == set(fields), method
        assert set(by_method[method]["required"]) == set(serialize.REQUIRED_KEYS[method]), method
    assert schemas.load("recalibrator")["properties"]["format"]["const"] == serialize.FORMAT


# ---------------------------------------------------------------------------------------- the documents


def _golden_documents():
    for command, name in COMMAND_SCHEMA.items():
        for case, rec in json.loads((GOLDEN / "matrix" / f"{command}.json").read_text()).items():
            if "output" in rec:
                yield pytest.param(name, rec["output"], id=f"matrix {command} {case}")
    for path in sorted(GOLDEN.glob("*.json")):
        doc = json.loads(path.read_text())
        yield pytest.param(doc["schema"].split(".")[1].split("/")[0], doc, id=path.name)


@pytest.mark.parametrize(("name", "doc"), list(_golden_documents()))
def test_golden_document_matches_its_schema(name, doc):
    assert_valid(name, doc)


def test_every_matrix_command_has_golden_documents():
    ids = [p.id for p in _golden_documents()]
    for command in COMMAND_SCHEMA:
        assert sum(i.startswith(f"matrix {command} ") for i in ids) >= 5, command


# Each sample file (one of each representation, tests/cli/test_matrix.py) cut to its first 300 rows: the
# optional parts below run on every representation.
CUT = 300
FILES = sorted(MATRIX_FILES)


@pytest.fixture(scope="module")
def cuts(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("cuts")
    paths = {}
    for name in FILES:
        if name.endswith(".csv"):
            table = pacsv.read_csv(SAMPLE / name).slice(0, CUT)
            pacsv.write_csv(table, out / name)
        else:
            pq.write_table(pq.read_table(SAMPLE / name).slice(0, CUT), out / name)
        paths[name] = out / name
    return paths


def run_json(argv: list[str], codes=(0,)) -> dict:
    r = runner.invoke(app, argv)
    assert r.exit_code in codes, (argv, r.output)
    return json.loads(r.stdout)


@pytest.mark.parametrize("name", FILES)
def test_score_with_every_optional_group(cuts, name):
    """--diagnostics, --murphy, exceedance thresholds and a weighted region add groups (and --by)."""
    argv = ["score", str(cuts[name]), "--format", "json", "--diagnostics", "--murphy"]
    argv += ["--threshold", "0", "--tw-threshold", ">0"]
    if name in SHIFT_FILES:
        argv += ["--by", "shift"]
    assert_valid("score", run_json(argv), name)


@pytest.mark.parametrize("command", ["score", "compare", "ucc", "coverage"])
def test_streamed_documents(cuts, command):
    """--engine stream adds what was read in chunks and what is approximate."""
    files = [str(cuts["gaussian.parquet"])] + ([] if command == "score" else [str(cuts["quantiles.parquet"])])
    argv = [command, *files, "--engine", "stream", "--chunk-rows", "70", "--format", "json"]
    doc = run_json([*argv, "--bootstrap", "20", "--permutations", "20"] if command == "compare" else argv)
    assert_valid(command, doc, f"{command} --engine stream")


def test_score_of_a_directory(cuts, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    table = pq.read_table(cuts["gaussian.parquet"])
    for i in range(2):
        pq.write_table(table.slice(150 * i, 150), folder / f"part{i}.parquet")
    doc = run_json(["score", str(folder), "--format", "json"])
    assert len(doc["input"]["files"]) == 2
    assert_valid("score", doc, "a directory")


@pytest.mark.parametrize("engine", ["memory", "stream"])
def test_weighted_score(cuts, tmp_path, engine):
    """--weights adds the weights block (column, total, zero rows, the metrics left out and why)."""
    table = pq.read_table(cuts["gaussian.parquet"])
    weighted = tmp_path / "weighted.parquet"
    pq.write_table(
        table.append_column("w", pa.array([i % 3 for i in range(table.num_rows)], pa.float64())), weighted
    )
    doc = run_json(["score", str(weighted), "--weights", "w", "--engine", engine, "--format", "json"])
    assert doc["weights"]["column"] == "w" and doc["weights"]["not_weighted"]
    assert_valid("score", doc, f"score --weights, {engine}")


@pytest.mark.parametrize(
    "command, extra",
    [
        ("compare", ["quantiles.parquet", "--bootstrap", "20", "--permutations", "20"]),
        ("ucc", ["quantiles.parquet"]),
        ("coverage", []),
    ],
)
def test_weighted_outputs(cuts, tmp_path, command, extra):
    """compare / ucc (--weights from the first file) and coverage (a column of every file) add the weights
    block."""
    table = pq.read_table(cuts["gaussian.parquet"])
    weighted = tmp_path / "weighted.parquet"
    pq.write_table(
        table.append_column("w", pa.array([i % 3 for i in range(table.num_rows)], pa.float64())), weighted
    )
    extra = [str(cuts[a]) if a.endswith(".parquet") else a for a in extra]
    doc = run_json([command, str(weighted), *extra, "--weights", "w", "--format", "json"])
    assert doc["weights"]["column"] == "w" and doc["weights"]["n_zero"] > 0
    assert_valid(command, doc, f"{command} --weights")


def test_compare_with_murphy_and_all_pairs(cuts):
    files = [str(cuts[n]) for n in ("gaussian.parquet", "quantiles.parquet", "samples.parquet")]
    doc = run_json(["compare", *files, "--format", "json", "--murphy", "--pairs", "all", "--bootstrap", "20"])
    doc2 = run_json(["compare", *files, "--format", "json", "--block-size", "auto", "--bootstrap", "20"])
    assert "murphy" in doc and "resampling" in doc2["settings"]
    assert_valid("compare", doc, "--murphy --pairs all")
    assert_valid("compare", doc2, "--block-size auto")


def test_ucc_with_permutation_test_and_partial_range(cuts):
    files = [str(cuts[n]) for n in ("gaussian.parquet", "quantiles.parquet")]
    argv = ["ucc", *files, "--format", "json", "--permutation-test", "20", "--partial-x", "0,0.5"]
    doc = run_json(argv)
    assert doc["permutation_test"] is not None and doc["models"]["gaussian"]["ucc"]["partial"] is not None
    assert_valid("ucc", doc)


def test_coverage_with_y_std(cuts):
    doc = run_json(
        ["coverage", str(cuts["gaussian.parquet"]), "--format", "json", "--y-std", "2", "--by", "shift"]
    )
    assert doc["y_std"] == 2
    assert_valid("coverage", doc)


def test_check_with_a_baseline(cuts, tmp_path):
    base = tmp_path / "base.json"
    run_json(["score", str(cuts["gaussian.parquet"]), "--format", "json", "-o", str(base)])
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[rules]\n"scoring_rule.crps" = { max_increase = 0.0 }\n"accuracy.mae" = { max = 1e-9 }\n'
        '"coverage.0.95.coverage" = { max_regression = 0.01 }\n'
    )
    argv = ["check", str(cuts["gaussian.parquet"]), "--rules", str(rules), "--format", "json"]
    doc = run_json([*argv, "--baseline", str(base)], codes=(1,))
    assert doc["baseline"] is not None and doc["counts"]["fail"] >= 1 and doc["passed"] is False
    assert_valid("check", doc, "with a baseline")


#: method -> (sample, extra options) it fits on
RECALIBRATE = {
    "std-scaling": ("gaussian.parquet", []),
    "isotonic": ("gaussian.parquet", ["--quantiles", "--equivalent-std"]),
    "conformal": ("intervals.parquet", []),
    "temperature": ("classification.parquet", []),
    "accrue": ("gaussian.parquet", ["--model", "poly", "--features", "x"]),
}


@pytest.mark.parametrize("method", sorted(RECALIBRATE))
def test_recalibrate_summary_and_saved_recalibrator(cuts, tmp_path, method):
    name, extra = RECALIBRATE[method]
    saved, applied = tmp_path / "recal.json", tmp_path / f"applied{Path(name).suffix}"
    argv = ["recalibrate", str(cuts[name]), "--method", method, *extra, "--format", "json"]
    doc = run_json([*argv, "--save", str(saved), "--apply", str(cuts[name]), "--output", str(applied)])
    assert set(doc["files"]) == {"calibration", "applied"}
    assert_valid("recalibrate", doc, method)
    assert_valid("recalibrator", json.loads(saved.read_text()), f"{method} --save")
    argv = [
        "recalibrate",
        "--load",
        str(saved),
        "--apply",
        str(cuts[name]),
        "-o",
        str(applied),
        "--format",
        "json",
    ]
    again = run_json(argv)
    assert again["loaded_from"] == str(saved)
    assert_valid("recalibrate", again, f"{method} --load")


def test_python_api_documents():
    rng = np.random.default_rng(0)
    y, mu, sd = rng.normal(size=200), np.zeros(200), np.ones(200)
    assert_valid("score", json.loads(uqeval.evaluate(y, mean=mu, std=sd).to_json()), "evaluate")
    models = {
        "a": uqeval.Gaussian(y_true=y, mean=mu, std=sd),
        "b": uqeval.Gaussian(y_true=y, mean=mu + 0.1, std=2 * sd),
    }
    assert_valid("compare", uqeval.compare(models, n_boot=20, n_permutations=20), "uqeval.compare")
    assert_valid("ucc", uqeval.ucc(models), "uqeval.ucc")
