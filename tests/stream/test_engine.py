"""``--engine stream``: files, Parquet directories (hive partitions) and globs in record batches.

Reference: the in-memory ``uqeval score`` JSON of the same rows; exact metrics agree to 1e-12.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import SAMPLE, write_table
from .test_states import assert_same

runner = CliRunner()

FILES = [
    "gaussian.parquet",
    "gaussian.csv",
    "point.csv",
    "intervals_multi.csv",
    "quantiles.parquet",
    "samples.parquet",
    "samples_list.parquet",
    "classification.parquet",
    "ensemble_classification.parquet",
    "dirichlet.parquet",
]


def score_json(args: list[str]) -> dict:
    result = runner.invoke(app, ["score", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("name", FILES)
def test_stream_equals_memory_for_every_chunk_size(name):
    ref = score_json([str(SAMPLE / name), "--engine", "memory"])
    # chunk size 7 for every representation is in test_states.py (same code path below the reader)
    for chunk in ("97", "100000"):
        got = score_json([str(SAMPLE / name), "--engine", "stream", "--chunk-rows", chunk])
        assert got["input"]["engine"] == "stream" and got["input"]["n_rows"] == ref["input"]["n_rows"]
        assert got["input"]["representation"] == ref["input"]["representation"]
        assert got["input"]["columns"] == ref["input"]["columns"]
        assert_same(
            got["metrics"],
            ref["metrics"],
            got["input"]["not_streamed"],
            got["input"]["approximate"],
            got["input"].get("bounds"),
        )
        assert got["orientation"] == {k: v for k, v in ref["orientation"].items() if k in got["orientation"]}
        if got["input"]["not_streamed"]:
            assert any("not computed because they do not merge" in n for n in got["notes"])


def _gaussian(n: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, n)
    return {
        "y": mu + sd * rng.normal(size=n),
        "mu": mu,
        "sigma": sd,
        "region": np.array(["a", "b", "c"])[np.arange(n) % 3],
    }


def test_hive_partitioned_directory_and_glob_equal_the_single_file(tmp_path):
    import pyarrow.dataset as ds

    cols = _gaussian(1000)
    table = pa.table(cols)
    whole = tmp_path / "whole.parquet"
    pq.write_table(table.drop(["region"]), whole)
    ds.write_dataset(
        table, tmp_path / "parts", format="parquet", partitioning=["region"], partitioning_flavor="hive"
    )
    for i, idx in enumerate(np.array_split(np.arange(1000), 8)):
        pq.write_table(table.take(idx), tmp_path / f"piece-{i}.parquet")
    ref = score_json([str(whole), "--engine", "memory"])
    # rows are read partition by partition: another order, the same metrics
    for spec in (str(tmp_path / "parts"), str(tmp_path / "piece-*.parquet")):
        for chunk in ("7", "1000000"):
            got = score_json([spec, "--chunk-rows", chunk])  # a directory or glob streams by itself (auto)
            assert got["input"]["engine"] == "stream"
            assert got["input"]["n_rows"] == 1000
            assert got["input"]["n_files"] == (3 if spec.endswith("parts") else 8)
            assert_same(
                got["metrics"],
                ref["metrics"],
                got["input"]["not_streamed"],
                got["input"]["approximate"],
                got["input"].get("bounds"),
            )


def test_bad_value_in_a_later_chunk_names_file_column_and_global_row(tmp_path):
    cols = _gaussian(500)
    cols.pop("region")
    cols["sigma"][321] = -1.0
    parts = tmp_path / "parts"
    parts.mkdir()
    pq.write_table(pa.table({k: v[:300] for k, v in cols.items()}), parts / "a.parquet")
    pq.write_table(pa.table({k: v[300:] for k, v in cols.items()}), parts / "b.parquet")
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["score", str(parts), "--chunk-rows", "7", "--output", str(out)])
    assert result.exit_code == 3, result.output
    assert "b.parquet" in result.output and "'sigma'" in result.output and "row 321" in result.output
    assert not out.exists()


def test_non_numeric_csv_value_in_a_later_block(tmp_path):
    n = 200_000  # beyond the first CSV block, so the reader has fixed the column types already
    rows = ["y,mean,std"] + [f"{i % 7},{i % 5},1" for i in range(n)]
    rows[150_001] = "1,abc,1"  # data row 150000
    f = tmp_path / "bad.csv"
    f.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out.json"
    result = runner.invoke(
        app, ["score", str(f), "--engine", "stream", "--chunk-rows", "1000", "--output", str(out)]
    )
    assert result.exit_code == 3, result.output
    assert "bad.csv" in result.output and "'mean'" in result.output and "row 150000" in result.output
    assert not out.exists()


def test_csv_integers_first_then_floats_stream(tmp_path):
    n = 200_000
    rng = np.random.default_rng(1)
    mean = np.round(rng.normal(size=n) * 3)
    mean[n // 2 :] += 0.25  # integers in the first block, decimals later
    f = write_table(
        tmp_path / "mixed.csv", {"y": mean + rng.normal(size=n), "mean": mean, "std": np.full(n, 1.5)}
    )
    ref = score_json([str(f), "--engine", "memory"])
    got = score_json([str(f), "--engine", "stream", "--chunk-rows", "70000"])
    assert_same(
        got["metrics"],
        ref["metrics"],
        got["input"]["not_streamed"],
        got["input"]["approximate"],
        got["input"].get("bounds"),
    )


def test_nan_policy_omit_counts_dropped_rows_across_chunks(tmp_path):
    cols = _gaussian(400)
    cols.pop("region")
    cols["mu"][[3, 50, 51, 399]] = np.nan
    cols["y"][[10, 200]] = np.inf
    f = write_table(tmp_path / "nan.parquet", cols)
    ref = score_json([str(f), "--engine", "memory", "--nan-policy", "omit"])
    got = score_json([str(f), "--engine", "stream", "--chunk-rows", "7", "--nan-policy", "omit"])
    assert got["input"]["n_dropped"] == ref["input"]["n_dropped"] == 6
    assert_same(
        got["metrics"],
        ref["metrics"],
        got["input"]["not_streamed"],
        got["input"]["approximate"],
        got["input"].get("bounds"),
    )
    result = runner.invoke(app, ["score", str(f), "--engine", "stream", "--chunk-rows", "7"])
    assert result.exit_code == 3 and "row 3" in result.output, result.output


def test_auto_streams_above_the_size_threshold(monkeypatch):
    from uqeval.engine import local as engine

    assert engine.choose_engine("auto", SAMPLE / "gaussian.parquet") == "memory"
    monkeypatch.setattr(engine, "AUTO_STREAM_BYTES", 1000)
    got = score_json([str(SAMPLE / "gaussian.parquet")])
    assert got["input"]["engine"] == "stream"


def test_stream_refuses_flags_that_need_the_whole_file(tmp_path):
    for extra in (
        ["--per-row", str(tmp_path / "rows.parquet")],
        ["--plot-dir", str(tmp_path)],
        ["--reference", "climatology", "--train", str(SAMPLE / "train.parquet")],
    ):
        result = runner.invoke(app, ["score", str(SAMPLE / "gaussian.parquet"), "--engine", "stream", *extra])
        assert result.exit_code == 2 and "--engine memory" in result.output, result.output
    result = runner.invoke(app, ["score", str(SAMPLE / "gaussian.parquet"), "--chunk-rows", "10"])
    assert result.exit_code == 2, result.output


def test_check_scores_with_the_stream_engine(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules."accuracy.mae"]\nmax = 5\n[rules."scoring_rule.crps"]\nmax = 5\n')
    result = runner.invoke(
        app,
        [
            "check",
            str(SAMPLE / "gaussian.parquet"),
            "--rules",
            str(rules),
            "--engine",
            "stream",
            "--chunk-rows",
            "9",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    ref = score_json([str(SAMPLE / "gaussian.parquet")])
    mae = [r for r in rows if r["path"] == "accuracy.mae"][0]
    assert mae["value"] == pytest.approx(ref["metrics"]["accuracy"]["mae"], rel=1e-12)


def test_memory_path_does_not_import_the_stream_machinery(tmp_path):
    import subprocess
    import sys

    from ..conftest import ROOT

    code = (
        "import sys, runpy\n"
        "sys.argv = ['uqeval', 'score', 'sample_data/gaussian.parquet', '--format', 'json']\n"
        "try:\n    runpy.run_module('uqeval', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code\n"
        "print('LOADED', sorted(m for m in sys.modules if m in ('pyarrow.dataset', 'uqeval.catalogue.states', "
        "'uqeval.io.source', 'dask', 'distributed')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "LOADED []" in out.stdout, out.stdout[-300:]


def test_check_rule_on_a_metric_the_stream_leaves_out_says_so(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules."calibration.ace"]\nmax = 5\n')
    result = runner.invoke(
        app, ["check", str(SAMPLE / "classification.parquet"), "--rules", str(rules), "--engine", "stream"]
    )
    assert result.exit_code == 3, result.output
    assert "not computed by --engine stream" in result.output and "--engine memory" in result.output


def test_partitions_with_different_member_counts_are_refused(tmp_path):
    rng = np.random.default_rng(2)
    for i, m in enumerate((5, 6)):
        y = rng.normal(size=40)
        draws = y[:, None] + rng.normal(size=(40, m))
        pq.write_table(
            pa.table({"y": y, "samples": pa.FixedSizeListArray.from_arrays(pa.array(draws.ravel()), m)}),
            tmp_path / f"s{i}.parquet",
        )
    result = runner.invoke(app, ["score", str(tmp_path / "s*.parquet"), "--chunk-rows", "16"])
    assert result.exit_code == 3, result.output
    assert "s1.parquet" in result.output and "global row 40" in result.output


def test_empty_directory_and_unmatched_glob_are_input_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    for spec in (tmp_path / "empty", tmp_path / "none-*.parquet"):
        result = runner.invoke(app, ["score", str(spec)])
        assert result.exit_code == 3 and str(spec) in result.output.replace("\n", ""), result.output


def test_default_chunk_rows_shrink_with_wide_rows():
    from uqeval.config import Settings
    from uqeval.engine.local import CHUNK_VALUES, DEFAULT_CHUNK_ROWS, auto_chunk_rows

    assert auto_chunk_rows(SAMPLE / "gaussian.parquet", Settings()) == DEFAULT_CHUNK_ROWS  # 3 numbers per row
    assert (
        auto_chunk_rows(SAMPLE / "samples_list.parquet", Settings()) == CHUNK_VALUES // 51
    )  # y + 50 samples
    got = score_json([str(SAMPLE / "samples_list.parquet"), "--engine", "stream"])
    assert got["input"]["chunk_rows"] == CHUNK_VALUES // 51
