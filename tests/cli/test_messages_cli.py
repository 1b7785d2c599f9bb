"""Finite extremes, outputs and messages (issue 31, items 6 and 7): one test per reported case."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.metrics.comparison import dm_from_moments

from ..conftest import write_table

runner = CliRunner()


def _gauss(n: int = 40, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    return {"y": mean + std * rng.normal(size=n), "mean": mean, "std": std}


def _error(r) -> str:
    assert r.exit_code == 3, r.output
    assert "Traceback" not in r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith("note:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


# --------------------------------------------------------------------------- item 6: finite extremes


def test_compare_one_huge_mean_gives_finite_tests(tmp_path):
    g = _gauss()
    h = dict(g, mean=g["mean"].copy())
    h["mean"][3] = 1e308  # one row: its CRPS is ~1e308, the mean CRPS still finite
    a, b = write_table(tmp_path / "a.csv", g), write_table(tmp_path / "b.csv", h)
    r = runner.invoke(app, ["compare", str(a), str(b), "-f", "json", "--bootstrap", "20"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    crps = next(t for t in doc["tests"] if t["metric"] == "crps")
    # one outlier D among n rows: mean D/n, sample sd D/sqrt(n): the t statistic is 1 (in any unit)
    assert crps["mean_diff"] == pytest.approx(1e308 / 40, rel=1e-3)
    assert crps["dm_statistic"] == pytest.approx(1.0, rel=1e-6)
    nll = next(t for t in doc["tests"] if t["metric"] == "nll")  # (1e308)^2 overflows: null, with a note
    assert nll["dm_statistic"] is None
    assert any("nll: the Diebold–Mariano test" in n and "not computed" in n for n in doc["notes"])


def test_compare_without_any_finite_estimate_skips_the_tests_with_a_note(tmp_path):
    g = dict(_gauss(), mean=np.full(40, 1e308))
    a, b = write_table(tmp_path / "a.csv", g), write_table(tmp_path / "b.csv", g)
    r = runner.invoke(app, ["compare", str(a), str(b), "-f", "json", "--bootstrap", "0"])
    assert r.exit_code == 0, r.output  # was IndexError: no best model to test against
    doc = json.loads(r.stdout, parse_constant=lambda c: pytest.fail(f"non-strict {c}"))
    assert any("no paired tests: no model has a finite estimate" in n for n in doc["notes"])


def test_dm_from_moments_does_not_overflow():
    # (1e-14 * 1e308) ** 2 raised OverflowError; a variance that overflowed gives no statistic
    # (a variance negligible against the largest difference: 0, p = 1, as for all-equal differences)
    assert dm_from_moments(1.0, 4.0, 10, 1e200) == {"statistic": 0.0, "p_value": 1.0}
    out = dm_from_moments(2.0, 4.0, 10, 3.0)  # ordinary values: unchanged, 2 / sqrt(4 * 10 / 9 / 10)
    assert out["statistic"] == pytest.approx(2.0 / math.sqrt(4.0 / 9.0))
    assert all(math.isnan(v) for v in dm_from_moments(1e300, math.inf, 10, 1e308).values())
    assert dm_from_moments(0.0, 0.0, 10, 1e308) == {"statistic": 0.0, "p_value": 1.0}


def test_report_of_targets_near_the_float_limit_leaves_the_band_figures_out(tmp_path):
    n = 40
    f = write_table(
        tmp_path / "h.csv", {"y": np.full(n, 1e308), "mean": np.full(n, 1e308), "std": np.ones(n)}
    )
    out = tmp_path / "r.html"
    r = runner.invoke(app, ["report", str(f), "-o", str(out)])
    assert r.exit_code == 0, r.output  # was a matplotlib ValueError traceback
    assert "predictions: figure left out" in r.stderr and "too large" in r.stderr
    assert out.read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    p = runner.invoke(app, ["plot", str(f), "--kind", "predictions", "-o", str(tmp_path / "p.png")])
    assert "h.csv" in _error(p) and "too large" in p.stderr
    assert not (tmp_path / "p.png").exists()


def test_report_with_a_spread_near_the_float_limit_notes_the_interval(tmp_path):
    g = dict(_gauss(), std=np.full(40, 1e308))  # mean +- 1.96 std overflows
    f = write_table(tmp_path / "s.csv", g)
    r = runner.invoke(app, ["report", str(f), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    assert "interval is not finite in 40 row(s)" in r.stderr
    p = runner.invoke(app, ["plot", str(f), "--kind", "intervals", "-o", str(tmp_path / "p.png")])
    assert "s.csv" in _error(p) and "not finite" in p.stderr


# --------------------------------------------------------------------------- item 7: outputs


@pytest.mark.parametrize(
    "command",
    [["score"], ["ucc"], ["coverage"], ["compare", "SECOND"], ["check", "--rules", "RULES"]],
)
@pytest.mark.parametrize("fmt", ["json", "table"])
def test_json_to_stdout_is_written_once(tmp_path, command, fmt):
    f = write_table(tmp_path / "a.csv", _gauss())
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"accuracy.mae" = { max = 10.0 }\n')
    second = write_table(tmp_path / "b.csv", dict(_gauss(), mean=_gauss()["mean"] + 0.1))
    extra = [{"SECOND": str(second), "RULES": str(rules)}.get(a, a) for a in command[1:]]
    r = runner.invoke(app, [command[0], str(f), *extra, "-f", fmt, "-o", "-"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # exactly one document: a second one (or a table) would not parse
    assert doc["schema"].startswith("uqeval.")


def test_saved_model_to_stdout_is_the_only_stdout(tmp_path):
    f = write_table(tmp_path / "a.csv", _gauss())
    r = runner.invoke(app, ["recalibrate", str(f), "--method", "std-scaling", "--save", "-", "-f", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["format"] == "uqeval.recalibrator/1"
    assert "saved the recalibrator to -" in r.stderr


def test_two_outputs_to_stdout_are_a_usage_error(tmp_path):
    f = write_table(tmp_path / "a.csv", _gauss())
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"accuracy.mae" = { max = 10.0 }\n')
    r = runner.invoke(app, ["check", str(f), "--rules", str(rules), "-o", "-", "--junit", "-"])
    assert r.exit_code == 2, r.output
    assert "only one output can go to stdout" in r.stderr
    assert r.stdout == ""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("how", ["report", "save"])
def test_wrote_is_printed_only_after_the_write_succeeded(tmp_path, how):
    f = write_table(tmp_path / "a.csv", _gauss())
    if how == "report":
        args = ["report", str(f), "-o", "/dev/full"]
    else:
        args = ["recalibrate", str(f), "--method", "std-scaling", "--save", "/dev/full"]
    r = runner.invoke(app, args)
    line = _error(r)
    assert "/dev/full" in line and "No space left" in line
    assert "wrote" not in r.stderr and "saved the recalibrator" not in r.stderr


# --------------------------------------------------------------------------- item 7: messages


def test_list_of_lists_samples_with_a_scalar_target_blames_samples(tmp_path):
    rng = np.random.default_rng(0)
    rows = [[list(rng.normal(size=3)) for _ in range(2)] for _ in range(10)]
    path = tmp_path / "lol.parquet"
    pq.write_table(pa.table({"y": rng.normal(size=10), "samples": pa.array(rows)}), path)
    line = _error(runner.invoke(app, ["score", str(path)]))
    assert "lol.parquet: column 'samples' holds a list of lists" in line
    assert "one list of numbers per row" in line


def test_temperature_model_without_its_temperature_names_the_file(tmp_path):
    model = tmp_path / "model.json"
    model.write_text(
        json.dumps(
            {
                "format": "uqeval.recalibrator/1",
                "uqeval_version": "0.1.0",
                "method": "temperature",
                "state": {"method": "temperature"},
            }
        )
    )
    data = tmp_path / "c.csv"
    data.write_text("label,p_0,p_1\n0,0.3,0.7\n1,0.4,0.6\n1,0.2,0.8\n")
    r = runner.invoke(
        app, ["recalibrate", "--load", str(model), "--apply", str(data), "-o", str(tmp_path / "o.csv")]
    )
    line = _error(r)
    assert "model.json" in line and "missing temperature" in line


def test_forced_gaussian_without_a_spread_names_std(tmp_path):
    f = write_table(tmp_path / "p.csv", {"y": np.arange(5.0), "mean": np.arange(5.0)})
    line = _error(runner.invoke(app, ["score", str(f), "--representation", "gaussian"]))
    assert "p.csv" in line and "std" in line and "--std" in line and "var" in line


def _config_error(tmp_path: Path, text: str, name: str = "cfg.toml") -> str:
    f = write_table(tmp_path / "p.csv", _gauss())
    cfg = tmp_path / name
    cfg.write_bytes(text.encode("utf-8"))
    return _error(runner.invoke(app, ["score", str(f), "--config", str(cfg)]))


def test_config_key_is_found_within_its_table(tmp_path):
    text = "[metrics]\nseed = 1\n\n# input options\n[input]\nseed = 2\n"
    line = _config_error(tmp_path, text)  # was: line 2, the seed under [metrics]
    assert "unknown key 'seed' in [input] (line 6)" in line


def test_config_nested_table_gets_its_line(tmp_path):
    line = _config_error(tmp_path, "[metrics]\nnum_bins = 20\n\n[metrics.extra]\nx = 1\n")
    assert "unknown key 'extra' in [metrics] (line 4)" in line
    line = _config_error(tmp_path, "[metrics]\nseed = 1\n[foo.bar]\nx = 1\n")
    assert "unknown table [foo] (line 3)" in line


def test_config_bad_value_names_key_and_line(tmp_path):
    line = _config_error(tmp_path, "[input]\nnan_policy = 'omit'\n[metrics]\nlevel = 0.9\nnum_bins = 1\n")
    assert "metrics.num_bins (line 5)" in line and ">= 2" in line


def test_config_with_a_byte_order_mark_is_valid_toml(tmp_path):
    f = write_table(tmp_path / "p.csv", _gauss())
    cfg = tmp_path / "bom.toml"
    cfg.write_bytes(b"\xef\xbb\xbf[metrics]\nnum_bins = 20\n")
    r = runner.invoke(app, ["score", str(f), "--config", str(cfg), "-f", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["settings"]["num_bins"] == 20
    line = _config_error(tmp_path, "\ufeff[metrics]\nnum_bins = 20\nnum_bins = 30\n", "dup.toml")
    assert "dup.toml" in line and "line 3" in line


def test_rules_file_with_a_byte_order_mark_is_read(tmp_path):
    f = write_table(tmp_path / "p.csv", _gauss())
    rules = tmp_path / "rules.toml"
    rules.write_bytes(b'\xef\xbb\xbf[rules]\n"accuracy.mae" = { max = 10.0 }\n')
    r = runner.invoke(app, ["check", str(f), "--rules", str(rules), "-f", "json"])
    assert r.exit_code == 0, r.output
