"""End-to-end `uqeval ucc` on the bundled samples: golden JSON, tables, plot, errors and exit codes.

The golden numbers were produced by this code; the UCC kernels are checked against an O(N^2)
brute force and frozen IBM UQ360 values in tests/metrics/test_ucc.py, and the Gaussian case is
recomputed here from the raw columns (scipy's normal quantile, not the band glue). Regenerate after
an intended change with  UQEVAL_UPDATE_GOLDEN=1 python -m pytest tests/cli/test_ucc_cli.py
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.metrics.ucc import ucc_summary

from ..conftest import ROOT, SAMPLE, assert_tree_close, check_golden, write_table

runner = CliRunner()
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

CASES = {
    "gaussian_pair": [
        "sample_data/gaussian.parquet",
        "sample_data/gaussian_const.parquet",
        "--permutation-test",
        "200",
        "--seed",
        "0",
    ],
    "intervals_excess_deficit": [
        "sample_data/intervals.parquet",
        "--x-axis",
        "excess",
        "--y-axis",
        "deficit",
        "--partial-y",
        "0,0.5",
        "--cost",
        "0.1",
    ],
    "quantiles_raw": [
        "sample_data/quantiles.parquet",
        "--level",
        "0.9",
        "--normalize",
        "none",
        "--partial-x",
        "0,2",
    ],
    "samples": ["sample_data/samples.parquet"],
}


def _run(args, tmp_path):
    out = tmp_path / "ucc.json"
    result = runner.invoke(app, ["ucc", *args, "--format", "json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert json.loads(out.read_text()) == printed
    return printed


def _strip(summary):
    summary = json.loads(json.dumps(summary))
    summary.pop("uqeval_version")
    for m in summary["models"].values():
        m["input"].pop("path")
    return summary


@pytest.mark.parametrize("case", sorted(CASES))
def test_ucc_matches_golden(case, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    check_golden(f"ucc_{case}", _strip(_run(CASES[case], tmp_path)))


def test_json_layout_and_independent_gaussian_values(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    s = _run(CASES["gaussian_pair"] + ["--cost", "0.3"], tmp_path)
    assert s["schema"] == "uqeval.ucc/1" and list(s["models"]) == ["gaussian", "gaussian_const"]
    t = pq.read_table(SAMPLE / "gaussian.parquet").to_pydict()
    y, mu, sigma = (np.asarray(t[c]) for c in ("y", "mu", "sigma"))
    half = stats.norm.ppf(0.975) * sigma
    want = ucc_summary(y, mu, mu - half, mu + half, cost=0.3)
    got = s["models"]["gaussian"]["ucc"]
    assert set(got) == {
        "x_axis",
        "y_axis",
        "normalize",
        "auucc",
        "auucc_const",
        "gain",
        "partial",
        "op",
        "op_min",
    }
    assert_tree_close(got, want)
    assert s["models"]["gaussian"]["input"]["representation"] == "gaussian"
    assert s["models"]["gaussian"]["band"]["level"] == 0.95
    pt = s["permutation_test"]
    assert pt["n_permutations"] == 200 and pt["names"] == ["gaussian", "gaussian_const"]
    assert pt["pairs"][0]["auucc_a"] == pytest.approx(got["auucc"], rel=1e-10)
    assert 0 < pt["p_values"][0][1] <= 1 and pt["p_values"][0][0] == 1.0


def test_permutation_test_is_reproducible_with_seed(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    files = CASES["gaussian_pair"][:2]
    p = [
        _run([*files, "--permutation-test", "99", "--seed", str(seed)], tmp_path)["permutation_test"]
        for seed in (3, 3, 4)
    ]
    assert p[0] == p[1]
    assert p[0]["seed"] == 3 and p[2]["seed"] == 4
    # a different seed draws other permutations (the p-value is a multiple of 1/100 either way)
    assert p[0]["pairs"][0]["p_value"] != p[2]["pairs"][0]["p_value"]
    for q in (p[0], p[2]):
        assert q["pairs"][0]["p_value"] * 100 == pytest.approx(
            round(q["pairs"][0]["p_value"] * 100), abs=1e-9
        )


def test_table_and_markdown_render(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    r = runner.invoke(
        app, ["ucc", *CASES["gaussian_pair"][:2], "--permutation-test", "20", "--partial-x", "0,1"]
    )
    assert r.exit_code == 0, r.output
    for needle in (
        "gaussian_const",
        "AUUCC",
        "const",
        "gain",
        "partial",
        "k=1",
        "k*",
        "missrate",
        "bandwidth",
        "cost c = 0.5",
        "Paired permutation test",
        "p-value",
        "higher is better",
    ):
        assert needle in r.stdout, needle
    s = _run([*CASES["gaussian_pair"][:2], "--partial-x", "0,1"], tmp_path)
    assert f"{s['models']['gaussian']['ucc']['auucc']:.4g}" in r.stdout
    assert f"{100 * s['models']['gaussian']['ucc']['partial']['gain']:+.1f}%" in r.stdout
    r = runner.invoke(app, ["ucc", "sample_data/intervals.parquet", "--format", "markdown"])
    assert r.exit_code == 0, r.output
    assert "| model | AUUCC | AUUCC const | gain |" in r.stdout and "| intervals |" in r.stdout
    assert "p-value" not in r.stdout


def test_plot_is_a_png_and_json_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    png, out = tmp_path / "ucc.png", tmp_path / "ucc.json"
    r = runner.invoke(
        app,
        [
            "ucc",
            *CASES["gaussian_pair"][:2],
            "sample_data/quantiles.parquet",
            "--plot",
            str(png),
            "--output",
            str(out),
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    data = png.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 400 and height > 300 and len(data) > 20_000
    assert json.loads(out.read_text())["models"].keys() == {"gaussian", "gaussian_const", "quantiles"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ucc.json", "ucc.png"]  # no temporary leftovers


def test_several_files_need_the_same_targets(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    t = pq.read_table(SAMPLE / "gaussian_const.parquet").to_pydict()
    t = {k: np.asarray(v) for k, v in t.items()}
    t["y"][42] += 0.5
    other = write_table(tmp_path / "other.parquet", t)
    out, png = tmp_path / "o.json", tmp_path / "o.png"
    r = runner.invoke(
        app, ["ucc", "sample_data/gaussian.parquet", str(other), "--output", str(out), "--plot", str(png)]
    )
    assert r.exit_code == 3, r.output
    assert "other.parquet: target at row 42" in r.stderr and "same targets in the same order" in r.stderr
    assert not out.exists() and not png.exists() and sorted(tmp_path.iterdir()) == [other]
    short = write_table(tmp_path / "short.parquet", {k: v[:-1] for k, v in t.items()})
    r = runner.invoke(app, ["ucc", "sample_data/gaussian.parquet", str(short)])
    assert r.exit_code == 3 and "1999 rows but sample_data/gaussian.parquet has 2000" in r.stderr


@pytest.mark.parametrize(
    "args,needle",
    [
        (["sample_data/point.csv"], "needs prediction intervals"),
        (
            ["sample_data/gaussian.parquet", "sample_data/samples.parquet", "--permutation-test", "10"],
            "share the point prediction: at row 0",
        ),
        (["sample_data/quantiles.parquet", "--level", "0.8"], "levels 0.5, 0.9, 0.95"),
        (["sample_data/classification.parquet"], "categorical"),
        (["sample_data/missing.parquet"], "missing.parquet"),
    ],
)
def test_bad_inputs_exit_3_and_write_nothing(args, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out, png = tmp_path / "o.json", tmp_path / "o.png"
    r = runner.invoke(app, ["ucc", *args, "--output", str(out), "--plot", str(png)])
    assert r.exit_code == 3, r.output
    assert needle in r.stderr and "Traceback" not in r.output
    assert len(r.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_centre_outside_intervals_names_file_and_row(tmp_path):
    n = 50
    pred = np.linspace(-1, 1, n)
    lower, upper = pred - 1, pred + 1
    pred[17] = upper[17] + 0.25
    f = write_table(tmp_path / "iv.csv", {"y": np.sin(pred), "pred": pred, "lower": lower, "upper": upper})
    r = runner.invoke(app, ["ucc", str(f)])
    assert r.exit_code == 3, r.output
    assert "iv.csv" in r.stderr and "first at row 17" in r.stderr and "inside [lower, upper]" in r.stderr


def test_intervals_without_point_prediction_use_the_midpoint(tmp_path):
    rng = np.random.default_rng(0)
    mid = rng.normal(size=200)
    y = mid + rng.normal(size=200)
    f = write_table(tmp_path / "bounds.csv", {"y": y, "lower": mid - 1.5, "upper": mid + 2.5})
    r = runner.invoke(app, ["ucc", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert "note:" in r.stderr and "midpoint" in r.stderr
    s = json.loads(r.stdout)
    assert s["models"]["bounds"]["band"]["centre"].startswith("midpoint") and s["notes"]
    # centre (lower + upper) / 2 = mid + 0.5: widths 2 below and 2 above
    want = ucc_summary(y, mid + 0.5, mid - 1.5, mid + 2.5)
    assert_tree_close(s["models"]["bounds"]["ucc"], want)


def test_hand_computed_file(tmp_path):
    # widths 1 on both sides around pred 0; critical scales 0.5, 1, 2, 0
    f = write_table(
        tmp_path / "hand.csv",
        {"y": [0.5, -1.0, 2.0, 0.0], "pred": [0.0] * 4, "lower": [-1.0] * 4, "upper": [1.0] * 4},
    )
    r = runner.invoke(app, ["ucc", str(f), "--normalize", "none", "--format", "json"])
    assert r.exit_code == 0, r.output
    u = json.loads(r.stdout)["models"]["hand"]["ucc"]
    assert u["auucc"] == pytest.approx(0.625, abs=1e-15)
    assert u["op"] == {"k": 1.0, "x": 1.0, "y": 0.25, "cost": 0.625}
    assert u["op_min"] == {"k": 0.0, "x": 0.0, "y": 0.75, "cost": 0.375}


@pytest.mark.parametrize(
    "args",
    [
        ["--x-axis", "width"],
        ["--y-axis", "bandwidth"],
        ["--partial-x", "1,0"],
        ["--partial-y", "0.5"],
        ["--partial-x", "0,1", "--partial-y", "0,1"],
        ["--cost", "1.5"],
        ["--level", "1.2"],
        ["--normalize", "mad"],
        ["--permutation-test", "10"],
        ["--permutation-test", "-1"],
        ["--plot", "ucc.jpg"],
    ],
)
def test_usage_errors_exit_2(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["ucc", str(SAMPLE / "gaussian.parquet"), *args])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and list(tmp_path.iterdir()) == []


def test_help_lists_the_options():
    r = runner.invoke(app, ["ucc", "--help"])
    assert r.exit_code == 0, r.output
    for flag in (
        "--level",
        "--x-axis",
        "--y-axis",
        "--normalize",
        "--partial-x",
        "--partial-y",
        "--cost",
        "--permutation-test",
        "--seed",
        "--plot",
        "--format",
        "--output",
        "--y",
    ):
        assert flag in r.output, flag


def test_same_file_twice_gets_distinct_names(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    s = _run(["sample_data/gaussian.parquet", "sample_data/gaussian.parquet"], tmp_path)
    assert list(s["models"]) == ["sample_data/gaussian", "sample_data/gaussian#2"]


def test_wide_table_is_split_to_fit_the_console(tmp_path):
    long = tmp_path / ("a_model_with_a_remarkably_long_descriptive_name_" * 2 + "v1.parquet")
    long.write_bytes((SAMPLE / "gaussian.parquet").read_bytes())
    r = runner.invoke(app, ["ucc", str(long), str(SAMPLE / "gaussian_const.parquet"), "--partial-x", "0,1"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(line) for line in lines) <= 200
    assert "…" not in r.stdout  # nothing truncated: the columns went to a second table
    assert sum(line.count(long.stem) for line in lines) == 2  # one row in each table
    assert "partial" in r.stdout and "missrate" in r.stdout


def test_a_centre_outside_its_band_is_an_error(tmp_path):
    f = write_table(
        tmp_path / "iv.parquet",
        {"y": [0.0, 1.0, 2.0], "pred": [0.0, 5.0, 2.0], "lower": [-1.0, 0.0, 1.0], "upper": [1.0, 2.0, 3.0]},
    )
    r = runner.invoke(app, ["ucc", str(f)])
    assert r.exit_code == 3 and "lies outside" in r.stderr and "row 1" in r.stderr


def test_markdown_notes_escape_input_names(tmp_path):
    # the midpoint note names the bound columns; in Markdown it is data like every cell (issue 35)
    rng = np.random.default_rng(0)
    m = rng.normal(size=200)
    lo = "lo|\x1b[2J*x*"
    p = write_table(tmp_path / "iv.parquet", {"y": m + rng.normal(size=200), lo: m - 1.96, "hi": m + 1.96})
    r = runner.invoke(app, ["ucc", str(p), "--lower", lo, "--upper", "hi", "-f", "markdown"])
    assert r.exit_code == 0, r.output
    note = next(ln for ln in r.stdout.splitlines() if ln.startswith("note: "))
    assert "'lo\\|\\\\x1b\\[2J\\*x\\*'" in note
    assert "\x1b" not in r.stdout
