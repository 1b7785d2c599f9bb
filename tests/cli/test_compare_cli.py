"""``uqeval compare``: side-by-side metrics, intervals, ranks, tests; alignment errors; outputs."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import SAMPLE, write_table

runner = CliRunner()
A = str(SAMPLE / "gaussian.parquet")
B = str(SAMPLE / "gaussian_const.parquet")
FAST = ["--bootstrap", "200", "--permutations", "500"]


def compare_json(*args: str) -> dict:
    result = runner.invoke(app, ["compare", *args, *FAST, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_sample_files_give_ranks_intervals_and_tests():
    out = compare_json(A, B, "--metrics", "crps,nll,ma_cal", "--seed", "0")
    assert out["schema"] == "uqeval.compare/1" and out["n_rows"] == 2000
    assert [m["name"] for m in out["models"]] == ["gaussian", "gaussian_const"]
    assert list(out["metrics"]) == ["crps", "nll", "avg_calibration.ma_cal"]
    for name, body in out["metrics"].items():
        assert body["bootstrap"], name
        ranks = sorted(v["rank"] for v in body["values"].values())
        assert ranks == [1.0, 2.0], name
        for v in body["values"].values():
            assert v["low"] < v["high"]
    # the heteroscedastic model is better by CRPS and NLL, the constant-std one by ma_cal
    assert out["metrics"]["crps"]["best"] == ["gaussian"]
    assert out["metrics"]["avg_calibration.ma_cal"]["best"] == ["gaussian_const"]
    assert any("rank consistency" in n for n in out["notes"])
    tests = {(t["metric"], t["model"], t["reference"]): t for t in out["tests"]}
    assert set(tests) == {("crps", "gaussian_const", "gaussian"), ("nll", "gaussian_const", "gaussian")}
    t = tests[("crps", "gaussian_const", "gaussian")]
    assert t["mean_diff"] > 0 and 0 < t["permutation_p"] < 0.05 and 0 < t["dm_p"] < 0.05


def test_crps_matches_uqeval_score():
    out = compare_json(A, B, "--metrics", "crps,nll")
    for path, name in ((A, "gaussian"), (B, "gaussian_const")):
        r = runner.invoke(app, ["score", path, "--format", "json"])
        assert r.exit_code == 0, r.output
        s = json.loads(r.stdout)["metrics"]["scoring_rule"]
        assert out["metrics"]["crps"]["values"][name]["estimate"] == pytest.approx(s["crps"], rel=1e-12)
        assert out["metrics"]["nll"]["values"][name]["estimate"] == pytest.approx(s["nll"], rel=1e-12)


def test_seed_makes_runs_reproducible():
    a = compare_json(A, B, "--metrics", "crps", "--seed", "5")
    b = compare_json(A, B, "--metrics", "crps", "--seed", "5")
    c = compare_json(A, B, "--metrics", "crps", "--seed", "6")
    assert a == b
    assert (
        a["metrics"]["crps"]["values"]["gaussian"]["low"] != c["metrics"]["crps"]["values"]["gaussian"]["low"]
    )


def test_table_markdown_output_and_plot(tmp_path):
    out, plot = tmp_path / "cmp.json", tmp_path / "cmp.png"
    r = runner.invoke(
        app, ["compare", A, B, "-m", "crps,ma_cal", *FAST, "--output", str(out), "--plot", str(plot)]
    )
    assert r.exit_code == 0, r.output
    assert (
        "gaussian_const" in r.stdout and "avg_calibration.ma_cal" in r.stdout and "Paired tests" in r.stdout
    )
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    saved = json.loads(out.read_text())
    assert saved["metrics"]["crps"]["values"]["gaussian"]["rank"] == 1.0
    r = runner.invoke(
        app, ["compare", A, B, "-m", "crps", *FAST, "--format", "markdown", "--names", "hetero,const"]
    )
    assert r.exit_code == 0, r.output
    assert "| `crps` | lower is better |" in r.stdout and "`hetero`" in r.stdout and "`const`" in r.stdout


def test_three_representations_on_shared_targets():
    out = compare_json(
        A, str(SAMPLE / "quantiles.parquet"), str(SAMPLE / "samples.parquet"), "-m", "pinball,crps"
    )
    assert out["settings"]["pinball_levels"] == [0.025, 0.05, 0.25, 0.5, 0.75, 0.95, 0.975]
    v = out["metrics"]["pinball"]["values"]
    # the quantile file holds the Gaussian's own quantiles: the same pinball loss, tied
    assert v["gaussian"]["estimate"] == pytest.approx(v["quantiles"]["estimate"], rel=1e-9)
    assert v["gaussian"]["rank"] == v["quantiles"]["rank"]
    assert out["metrics"]["crps"]["values"]["quantiles"]["estimate"] is None
    assert any("crps: not available for quantiles (quantiles)" in n for n in out["notes"])


def test_mismatched_targets_exit_3_naming_the_first_row(tmp_path):
    table = pq.read_table(B).to_pydict()
    y = np.asarray(table["y"])
    y[42] += 0.5
    table["y"] = y
    bad = write_table(tmp_path / "bad.parquet", table)
    r = runner.invoke(app, ["compare", A, str(bad), *FAST])
    assert r.exit_code == 3, r.output
    assert "targets differ" in r.stderr and "first at row 42" in r.stderr and "--id" in r.stderr
    assert "Traceback" not in r.output and len(r.stderr.strip().splitlines()) == 1


def test_different_lengths_exit_3(tmp_path):
    table = pq.read_table(B).to_pydict()
    short = write_table(tmp_path / "short.parquet", {k: v[:100] for k, v in table.items()})
    r = runner.invoke(app, ["compare", A, str(short), *FAST])
    assert r.exit_code == 3 and "has 100 rows" in r.stderr


def test_join_on_id_column(tmp_path):
    base = pq.read_table(B).to_pydict()
    n = len(base["y"])
    perm = np.random.default_rng(0).permutation(n)
    ordered = write_table(tmp_path / "a.parquet", {**pq.read_table(A).to_pydict(), "key": np.arange(n)})
    shuffled = write_table(
        tmp_path / "b.parquet",
        {**{k: np.asarray(v)[perm] for k, v in base.items()}, "key": np.arange(n)[perm]},
    )
    r = runner.invoke(app, ["compare", str(ordered), str(shuffled), *FAST])
    assert r.exit_code == 3 and "targets differ" in r.stderr
    joined = compare_json(str(ordered), str(shuffled), "--id", "key", "-m", "crps,ma_cal")
    plain = compare_json(A, B, "-m", "crps,ma_cal")
    for metric in ("crps", "avg_calibration.ma_cal"):
        for a, b in zip(
            joined["metrics"][metric]["values"].values(), plain["metrics"][metric]["values"].values()
        ):
            assert a["estimate"] == pytest.approx(b["estimate"], rel=1e-12)
    r = runner.invoke(app, ["compare", str(ordered), str(shuffled), "--id", "nokey", *FAST])
    assert r.exit_code == 3 and "nokey" in r.stderr


def test_unknown_metric_exit_3_with_close_matches():
    r = runner.invoke(app, ["compare", A, B, "-m", "crps,macal", *FAST])
    assert r.exit_code == 3, r.output
    assert "unknown metric 'macal'" in r.stderr and "ma_cal" in r.stderr


@pytest.mark.parametrize(
    "args",
    [
        [A],
        [A, B, "--pairs", "some"],
        [A, B, "--plot", "out.gif"],
        [A, B, "--bootstrap", "-1"],
        [A, B, "--metrics", ","],
    ],
)
def test_usage_errors_exit_2(args):
    r = runner.invoke(app, ["compare", *args])
    assert r.exit_code == 2, r.output


def test_output_is_never_an_input(tmp_path):
    r = runner.invoke(app, ["compare", A, B, *FAST, "--output", A])
    assert r.exit_code == 3 and "refusing to overwrite an input" in r.stderr


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_a_file_name_with_terminal_controls_is_escaped_in_the_notes_too(tmp_path, fmt):
    # residuals at the exact normal quantiles: ma_cal ~0, outside its bootstrap interval, so a note
    # names the model, i.e. the file name (issue 35: the note printed ESC[2J raw and cleared the screen)
    from scipy.special import ndtri

    n = 400
    z = ndtri((np.arange(n) + 0.5) / n)
    hostile = write_table(tmp_path / "in_\x1b[2J\x1b[H.csv", {"y": z, "mean": np.zeros(n), "std": np.ones(n)})
    wide = write_table(tmp_path / "wide.csv", {"y": z, "mean": np.zeros(n), "std": np.full(n, 3.0)})
    r = runner.invoke(app, ["compare", str(hostile), str(wide), "-m", "ma_cal", *FAST, "-f", fmt])
    assert r.exit_code == 0, r.output
    note = next(ln for ln in r.stdout.splitlines() if "lies outside its bootstrap interval" in ln)
    assert "\\x1b" in note
    assert "\x1b" not in r.stdout and "\x1b" not in r.stderr
