"""End-to-end `uqeval score` on the bundled samples, compared with golden JSON files.

The golden numbers were produced by this code and cross-checked: the metric kernels are tested
against uncertainty-toolbox 0.1.1 (frozen values in tests/metrics) and closed forms. Regenerate
after an intended change with  UQEVAL_UPDATE_GOLDEN=1 python -m pytest tests/cli/test_score_golden.py
"""

import json

import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import ROOT, SAMPLE, assert_tree_close, check_golden

runner = CliRunner()

CASES = {
    "gaussian_parquet": ["sample_data/gaussian.parquet"],
    "gaussian_csv": ["sample_data/gaussian.csv"],
    "gaussian_by_shift": ["sample_data/gaussian.parquet", "--by", "shift"],
    "point": ["sample_data/point.csv"],
}


def _run(args, tmp_path):
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["score", *args, "--format", "json", "--output", str(out)])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert json.loads(out.read_text()) == printed
    return printed


def _strip(summary):
    summary = dict(summary)
    summary["input"] = {k: v for k, v in summary["input"].items() if k != "path"}
    summary.pop("uqeval_version")
    if "verdict" in summary:  # its block carries the version too (uqeval.verdict/1): not pinned either
        summary["verdict"] = {k: v for k, v in summary["verdict"].items() if k != "uqeval_version"}
    return summary


@pytest.mark.parametrize("case", sorted(CASES))
def test_score_matches_golden(case, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    check_golden(f"score_{case}", _strip(_run(CASES[case], tmp_path)))


def test_csv_and_parquet_give_the_same_metrics(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    a = _run(CASES["gaussian_parquet"], tmp_path)["metrics"]
    b = _run(CASES["gaussian_csv"], tmp_path)["metrics"]
    assert_tree_close(a, b)


def test_orientation_covers_every_metric_key(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    s = _run(CASES["gaussian_parquet"], tmp_path)
    data_keys = {"group_sizes", "pit_histogram", "size_histogram"}  # curve axes and histograms, not metrics
    for group, body in s["metrics"].items():
        for key, value in body.items():
            keys = value.keys() if group in ("coverage", "prediction_sets") else [key]
            for k in keys:
                if k not in data_keys:
                    assert s["orientation"][f"{group}.{k}"] in ("lower", "higher", "target"), (group, k)


def test_table_and_markdown_render(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = runner.invoke(app, ["score", "sample_data/gaussian.parquet"])
    assert r.exit_code == 0, r.output
    assert "ma_cal" in r.stdout and "↓ lower" in r.stdout and "↑ higher" in r.stdout
    r = runner.invoke(app, ["score", "sample_data/gaussian.parquet", "--format", "markdown"])
    assert r.exit_code == 0 and "| avg_calibration | ma_cal |" in r.stdout


def test_nan_policy_omit_reports_dropped(tmp_path):
    src = (SAMPLE / "gaussian.csv").read_text().splitlines()
    cells = src[5].split(",")
    src[5] = ",".join(cells[:1] + ["nan"] + cells[2:])  # the target column y
    f = tmp_path / "g.csv"
    f.write_text("\n".join(src) + "\n")
    r = runner.invoke(app, ["score", str(f), "--format", "json"])
    assert r.exit_code == 3
    r = runner.invoke(app, ["score", str(f), "--format", "json", "--nan-policy", "omit"])
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["input"]["n_dropped"] == 1 and s["input"]["n_rows"] == 2000


def test_seed_changes_only_adversarial(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    a = _run(["sample_data/gaussian.parquet", "--seed", "1"], tmp_path)["metrics"]
    b = _run(["sample_data/gaussian.parquet", "--seed", "2"], tmp_path)["metrics"]
    assert a["scoring_rule"] == b["scoring_rule"]
    assert a["adv_group_calibration"]["ma_mean"] != b["adv_group_calibration"]["ma_mean"]


def test_by_renders_one_column_per_group_value(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = runner.invoke(app, ["score", "sample_data/gaussian.parquet", "--by", "shift", "--format", "markdown"])
    assert r.exit_code == 0, r.output
    header = next(line for line in r.stdout.splitlines() if line.startswith("| group"))
    assert header == "| group | metric | all | shift=0 n=649 | shift=1 n=654 | shift=2 n=697 | direction |"
    row = next(line for line in r.stdout.splitlines() if line.startswith("| avg_calibration | ma_cal |"))
    assert len(row.split("|")) == len(header.split("|"))
    r = runner.invoke(app, ["score", "sample_data/gaussian.parquet", "--by", "shift"])
    assert r.exit_code == 0 and "shift=2" in r.stdout and "n=697" in r.stdout
