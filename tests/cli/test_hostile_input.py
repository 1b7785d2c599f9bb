"""Regression tests for issue 17: unusual but valid input is read, bad input is one clean line (exit 3),
bad options are usage errors (exit 2), numerics never leak warnings, tampered files are refused by field."""

from __future__ import annotations

import decimal
import json
import time

import numpy as np
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import SAMPLE, write_table

runner = CliRunner()


def _one_error_line(r, *needles: str) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.exit_code == 3, r.output
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.output
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def _gauss(n: int = 40, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    return {"y": mean + rng.normal(size=n), "mean": mean, "std": np.ones(n)}


def _score_json(*args) -> dict:
    r = runner.invoke(app, ["score", *map(str, args), "-f", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


# --------------------------------------------------------------------------- valid input that was refused


def test_bom_and_spaces_after_commas_in_the_header(tmp_path):
    ref = _score_json(write_table(tmp_path / "ref.csv", _gauss()))
    text = (tmp_path / "ref.csv").read_text().replace('"', "")
    head, body = text.split("\n", 1)
    p = tmp_path / "excel.csv"
    p.write_bytes(b"\xef\xbb\xbf" + (head.replace(",", ", ") + "\n" + body).encode())
    got = _score_json(p)
    assert got["input"]["columns"] == {"y_true": "y", "mean": "mean", "std": "std"}
    assert got["metrics"] == ref["metrics"]


def test_header_name_with_newline_is_usable_and_escaped_in_messages(tmp_path):
    p = tmp_path / "nl.csv"
    p.write_text('"y\nnew",mean,std\n1,0,1\n2,1,1\n0,0,2\n')
    out = _score_json(p, "--y", "y\nnew")
    assert out["input"]["columns"]["y_true"] == "y\nnew"
    r = runner.invoke(
        app, ["score", str(p), "--y", "y\nnew", "--std", "mean"]
    )  # mean has a 0: std must be > 0
    _one_error_line(r, "nl.csv")


def test_parquet_decimal_and_big_uint64_are_read_as_float(tmp_path):
    g = _gauss(10)
    cols = {
        "y": pa.array([decimal.Decimal(f"{v:.3f}") for v in g["y"]], pa.decimal128(10, 3)),
        "mean": g["mean"],
        "std": pa.array(np.full(10, 2**63 + 1, dtype=np.uint64)),
    }
    out = _score_json(write_table(tmp_path / "d.parquet", cols))
    assert out["metrics"]["sharpness"]["mean_std"] == pytest.approx(2.0**63)


@pytest.mark.parametrize("column", ["y", "std"])
def test_boolean_columns_are_refused_naming_the_column(tmp_path, column):
    g = _gauss(10)
    g[column] = g[column] > 0
    r = runner.invoke(app, ["score", str(write_table(tmp_path / "b.parquet", g))])
    _one_error_line(r, "b.parquet", f"column '{column}'", "boolean")


def test_true_among_labels_is_refused_naming_the_column(tmp_path):
    p = tmp_path / "c.csv"  # 0, True, 1: only words are booleans, so the column is text and the row is named
    p.write_text("label,p_0,p_1\n0,0.5,0.5\nTrue,0.4,0.6\n1,0.3,0.7\n")
    _one_error_line(runner.invoke(app, ["score", str(p)]), "c.csv", "'label'", "boolean", "row 1", "'True'")
    q = tmp_path / "b.csv"  # a column of words only is boolean: the first row is named too
    q.write_text("label,p_0,p_1\nfalse,0.5,0.5\ntrue,0.4,0.6\n")
    _one_error_line(runner.invoke(app, ["score", str(q)]), "b.csv", "'label'", "boolean", "row 0")


def test_by_group_of_one_row_reports_what_is_defined(tmp_path):
    g = _gauss(41)
    g["site"] = np.array(["a"] * 40 + ["lonely"])
    r = runner.invoke(
        app, ["score", str(write_table(tmp_path / "g.parquet", g)), "--by", "site", "-f", "json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    lonely = out["groups"]["values"]["lonely"]
    assert lonely["n_rows"] == 1 and "accuracy" in lonely["metrics"]
    assert "adv_group_calibration" not in lonely["metrics"]
    assert any("site=lonely" in n and "adv_group_calibration" in n for n in out["notes"])


def test_nan_in_logit_2_is_reported_in_logit_2(tmp_path):
    rng = np.random.default_rng(0)
    cols = {"label": rng.integers(0, 3, 10), **{f"logit_{k}": rng.normal(size=10) for k in range(3)}}
    cols["logit_2"][4] = np.nan
    _one_error_line(
        runner.invoke(app, ["score", str(write_table(tmp_path / "l.parquet", cols))]),
        "l.parquet",
        "logit_2",
        "row 4",
    )


# --------------------------------------------------------------------------- broken files: exit 3, one line


def test_truncated_gzip_names_the_file(tmp_path):
    p = write_table(tmp_path / "t.csv.gz", _gauss(2000))
    p.write_bytes(p.read_bytes()[:300])
    _one_error_line(runner.invoke(app, ["score", str(p)]), "t.csv.gz")


def test_corrupt_parquet_and_invalid_utf8(tmp_path):
    p = write_table(tmp_path / "c.parquet", _gauss())
    p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])
    _one_error_line(runner.invoke(app, ["score", str(p)]), "c.parquet")
    u = tmp_path / "u.csv"
    u.write_bytes(b"y,mean,std\n1,\xff\xfe,1\n")
    _one_error_line(runner.invoke(app, ["score", str(u)]), "u.csv")


def test_unwritable_output_is_one_line():
    r = runner.invoke(app, ["score", str(SAMPLE / "gaussian.csv"), "--output", "/dev/full"])
    _one_error_line(r, "/dev/full")


def test_output_to_dev_stdout_is_written_through(tmp_path):
    import os
    import stat

    r = runner.invoke(app, ["score", str(SAMPLE / "gaussian.csv"), "--output", "/dev/null", "-f", "json"])
    assert r.exit_code == 0 and stat.S_ISCHR(os.stat("/dev/null").st_mode)


# --------------------------------------------------------------------------- numerics


def test_extreme_values_give_a_note_naming_the_metrics_and_no_raw_warning(tmp_path):
    rng = np.random.default_rng(1)
    cols = {
        "y": rng.uniform(-1, 1, 50) * 1e308,
        "mean": rng.uniform(-1, 1, 50) * 1e308,
        "std": np.full(50, 1e307),
    }
    r = runner.invoke(app, ["score", str(write_table(tmp_path / "x.parquet", cols)), "-f", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(c))
    assert out["metrics"]["accuracy"]["rmse"] is None
    assert any("accuracy.rmse" in n and "reported as null" in n for n in out["notes"])
    assert "Warning" not in r.stderr and "Traceback" not in r.stderr  # at most one note line about warnings
    assert all(line.startswith("note: ") for line in r.stderr.splitlines())


# --------------------------------------------------------------------------- options, config, limits


@pytest.mark.parametrize(
    "args",
    [
        ["--seed", "-1"],
        ["--num-bins", "100000000"],
        ["--resolution", "1"],
        ["--levels", "1.5"],
        ["--bins", "10000000"],
    ],
)
def test_bad_flag_values_are_usage_errors(args):
    t0 = time.perf_counter()
    r = runner.invoke(app, ["score", str(SAMPLE / "gaussian.csv"), *args])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and time.perf_counter() - t0 < 10  # refused before any work


@pytest.mark.parametrize(
    "body,needle",
    [
        ("[metrics]\nseed = -1\n", "seed"),
        ("[columns]\ny_true = 5\n", "y_true"),
        ("[metrics]\nnum_bins = 100000000\n", "num_bins"),
        ('[metrics]\nlevels = ["a"]\n', "levels"),
        ("[input]\nnan_policy = 3\n", "nan_policy"),
        ("a = " + "[" * 2000 + "]" * 2000 + "\n", "nested"),
    ],
)
def test_bad_config_values_are_bad_input_naming_the_file(tmp_path, body, needle):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(body)
    _one_error_line(
        runner.invoke(app, ["score", str(SAMPLE / "gaussian.csv"), "--config", str(cfg)]), "bad.toml", needle
    )


def test_every_problem_of_a_config_file_is_one_error_in_line_order(tmp_path):
    # issue 35: one problem per run, not in line order
    cfg = tmp_path / "uqeval.toml"
    cfg.write_text("[metrics]\nseed = -1\nnum_bin = 3\n\n[columns]\ny_true = 5\n[input]\nnan_policy = 3\n")
    r = runner.invoke(app, ["score", str(SAMPLE / "gaussian.csv"), "--config", str(cfg)])
    line = _one_error_line(r, "uqeval.toml", "4 problems, in line order")
    at = [
        line.index(s)
        for s in ("seed (line 2)", "unknown key 'num_bin'", "y_true (line 6)", "nan_policy (line 8)")
    ]
    assert at == sorted(at), line


def test_too_many_by_groups_is_refused_before_scoring(tmp_path):
    g = _gauss(1500)
    g["id"] = np.arange(1500)
    r = runner.invoke(app, ["score", str(write_table(tmp_path / "many.parquet", g)), "--by", "id"])
    _one_error_line(r, "many.parquet", "1,500 distinct values")


def test_bootstrap_and_permutation_counts_have_limits():
    f = str(SAMPLE / "gaussian.parquet")
    assert runner.invoke(app, ["compare", f, f, "--bootstrap", "1000000000"]).exit_code == 2
    assert runner.invoke(app, ["ucc", f, "--permutation-test", "1000000000"]).exit_code == 2


# --------------------------------------------------------------------------- tampered saved models, baselines, rules


def _model(tmp_path, state: str) -> str:
    p = tmp_path / "model.json"
    p.write_text(
        '{"format": "uqeval.recalibrator/1", "uqeval_version": "0.1.0", "method": "conformal", '
        f'"state": {state}}}'
    )
    return str(p)


@pytest.mark.parametrize(
    "state,needle",
    [
        (
            '{"method": "conformal", "normalized": null, "levels": [0.9], "score_quantile": [1.6]}',
            "state.normalized",
        ),
        ('{"method": "conformal", "normalized": true, "levels": [0.9], "score_quantile": [1e999]}', "1e999"),
        (
            '{"method": "conformal", "normalized": true, "levels": "0.9", "score_quantile": [1.6]}',
            "state.levels",
        ),
        (
            '{"method": "conformal", "normalized": true, "levels": [1.5], "score_quantile": [1.6]}',
            "state.levels[0]",
        ),
        (
            '{"method": "conformal", "normalized": true, "levels": [0.9, 0.5], "score_quantile": [1.6]}',
            "same length",
        ),
        ('{"method": "conformal", "x": ' + "[" * 3000 + "]" * 3000 + "}", "nested"),
    ],
)
def test_tampered_recalibrator_is_refused_naming_file_and_field(tmp_path, state, needle):
    out = tmp_path / "out.parquet"
    r = runner.invoke(
        app,
        [
            "recalibrate",
            "--load",
            _model(tmp_path, state),
            "--apply",
            str(SAMPLE / "gaussian.parquet"),
            "--output",
            str(out),
        ],
    )
    _one_error_line(r, "model.json", needle)
    assert not out.exists()


@pytest.mark.parametrize(
    "text", ["[" * 5000 + "]" * 5000, '{"schema": "uqeval.score/1", "metrics": {"a": {"b": 1e999}}}']
)
def test_tampered_baseline_is_one_line(tmp_path, text):
    base = tmp_path / "base.json"
    base.write_text(text)
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"accuracy.mae" = { max_regression = 0.1 }\n')
    r = runner.invoke(
        app, ["check", str(SAMPLE / "gaussian.parquet"), "--rules", str(rules), "--baseline", str(base)]
    )
    _one_error_line(r, "base.json")


def test_deeply_nested_rules_are_one_line(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    r = runner.invoke(app, ["check", str(SAMPLE / "gaussian.parquet"), "--rules", str(rules)])
    _one_error_line(r, "rules.toml")


def test_baseline_with_wrong_setting_types_is_bad_input_naming_it(tmp_path):
    base = tmp_path / "base.json"
    base.write_text(
        json.dumps(
            {
                "schema": "uqeval.score/1",
                "input": {},
                "settings": {"num_bins": "x"},
                "metrics": {"accuracy": {"mae": 0.8}},
                "orientation": {"accuracy.mae": "lower"},
            }
        )
    )
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"accuracy.mae" = { max = 10.0 }\n')
    r = runner.invoke(
        app, ["check", str(SAMPLE / "gaussian.csv"), "--rules", str(rules), "--baseline", str(base)]
    )
    _one_error_line(r, "base.json", "num_bins")


def test_plot_of_a_file_named_like_mathtext_and_controls(tmp_path):
    p = write_table(tmp_path / "$\\frac{x$\x1b[31m.parquet", _gauss())
    out = tmp_path / "c.png"
    r = runner.invoke(app, ["plot", str(p), "--kind", "calibration", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and r.stderr == ""  # no glyph warning note either
