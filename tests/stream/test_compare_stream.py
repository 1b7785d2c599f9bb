"""``uqeval compare --engine stream|dask``: the streamed comparison equals the in-memory one.

Reference: the in-memory ``uqeval compare`` JSON of the same files. Exact metrics, bootstrap intervals,
``p_best``, ``diff_vs_best``, permutation and Diebold--Mariano p-values agree to 1e-12 relative for chunk
sizes 7, 1e5 and one chunk, and on a 2-process Dask LocalCluster for 1 and 8 partitions: the Poisson
weights and sign flips of a row depend only on the seed and its index among the kept rows.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scipy.stats import norm
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.commands.compare.stream import Moments
from uqeval.metrics.comparison import diebold_mariano

runner = CliRunner()

N = 2400
QLEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)
#: per-row scores, a count metric (ma_cal), a by-level metric (coverage), means and a moment (sharp)
METRICS = "crps,nll,pinball,interval,ma_cal,coverage,mae,sharp"
FAST = ["--bootstrap", "150", "--permutations", "399", "--seed", "3"]


def _models(drop: bool = False) -> dict[str, dict[str, np.ndarray]]:
    rng = np.random.default_rng(11)
    y = rng.normal(size=N)
    mu1, mu2 = y + rng.normal(scale=0.8, size=N), y + rng.normal(scale=1.1, size=N)
    s2 = rng.uniform(0.5, 1.5, N)
    qs = mu1[:, None] + 0.9 * norm.ppf(QLEVELS)[None, :]
    a = {"y": y, "mu": mu1, "sigma": np.full(N, 0.8)}
    b = {"y": y, "mu": mu2, "sigma": s2}
    c = {"y": y, **{f"q_{lv}": qs[:, j] for j, lv in enumerate(QLEVELS)}}
    if drop:  # --nan-policy omit: the same rows dropped from every file (in different columns)
        for i in (5, 1000, 1001, 2399):
            a["mu"][i] = np.nan
            b["sigma"][i] = np.inf
            c["q_0.5"][i] = np.nan
    return {"a": a, "b": b, "c": c}


def _write(tmp_path, models, parts: dict[str, int] | None = None, csv: tuple[str, ...] = ()) -> list[str]:
    """One file per model (CSV for the names in ``csv``), or a directory of ``parts[name]`` Parquet files."""
    out = []
    for name, cols in models.items():
        if parts and name in parts:
            d = tmp_path / name
            d.mkdir()
            for i, idx in enumerate(np.array_split(np.arange(N), parts[name])):
                pq.write_table(
                    pa.table({k: v[idx] for k, v in cols.items()}),
                    d / f"part-{i:02d}.parquet",
                    row_group_size=97,
                )
            out.append(str(d))
        elif name in csv:
            import pandas as pd

            pd.DataFrame(cols).to_csv(tmp_path / f"{name}.csv", index=False)
            out.append(str(tmp_path / f"{name}.csv"))
        else:
            pq.write_table(pa.table(cols), tmp_path / f"{name}.parquet", row_group_size=500)
            out.append(str(tmp_path / f"{name}.parquet"))
    return out


def compare_json(files: list[str], *args: str) -> dict:
    result = runner.invoke(
        app,
        [
            "compare",
            *files,
            "--format",
            "json",
            "--names",
            "a,b,c"[: 2 * len(files) - 1],
            "--metrics",
            METRICS,
            *FAST,
            *args,
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_same_json(got, ref, path: str = "") -> None:
    """Equal JSON: numbers to 1e-12 relative (NaN equals NaN), everything else exactly."""
    if isinstance(ref, dict):
        assert isinstance(got, dict) and set(got) == set(ref), (path, sorted(set(got) ^ set(ref)))
        for k in ref:
            assert_same_json(got[k], ref[k], f"{path}.{k}")
    elif isinstance(ref, list):
        assert isinstance(got, list) and len(got) == len(ref), path
        for i, (g, r) in enumerate(zip(got, ref)):
            assert_same_json(g, r, f"{path}[{i}]")
    elif isinstance(ref, float) or isinstance(got, float):
        if math.isnan(ref):
            assert math.isnan(got), (path, got)
        else:
            assert got == pytest.approx(ref, rel=1e-12, abs=1e-14), path
    else:
        assert got == ref, (path, got, ref)


def _without_engine(result: dict) -> dict:
    out = {k: v for k, v in result.items() if k != "input"}
    # what each model was read from (a directory or a pattern also lists its files read and skipped)
    out["models"] = [
        {k: v for k, v in m.items() if k not in ("path", "files", "skipped")} for m in result["models"]
    ]
    return out


def test_streamed_compare_equals_memory_for_chunk_sizes_7_1e5_and_one_chunk(tmp_path):
    files = _write(tmp_path, _models(drop=True), csv=("b",))
    args = ["--nan-policy", "omit", "--pairs", "all", "--dm-lag", "2"]
    ref = compare_json(files, *args, "--engine", "memory")
    assert (
        ref["tests"]
        and ref["metrics"]["crps"]["bootstrap"]
        and ref["metrics"]["avg_calibration.ma_cal"]["bootstrap"]
    )
    assert ref["n_rows"] == N - 4
    for chunk in ("7", "100000", str(N)):
        got = compare_json(files, *args, "--engine", "stream", "--chunk-rows", chunk)
        assert got["input"] == {
            "engine": "stream",
            "chunk_rows": int(chunk),
            "n_files": [1, 1, 1],
            "not_streamed": {},
            "approximate": {},
        }
        assert_same_json(_without_engine(got), _without_engine(ref))
        assert [m["path"] for m in got["models"]] == files


def test_dask_local_cluster_equals_memory_for_1_and_8_partitions(tmp_path, dask_cluster):
    models = _models(drop=True)
    ref = compare_json(_write(tmp_path, models), "--nan-policy", "omit", "--engine", "memory")
    cluster = dask_cluster  # the session's 2-process LocalCluster (tests/stream/conftest.py)
    for parts in (
        {"a": 1, "b": 1, "c": 1},
        {"a": 8, "b": 3, "c": 5},
    ):  # the models partitioned differently
        d = tmp_path / str(parts["a"])
        d.mkdir()
        got = compare_json(
            _write(d, models, parts),
            "--nan-policy",
            "omit",
            "--engine",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "--chunk-rows",
            "50",
        )
        assert got["input"]["engine"] == "dask" and got["input"]["n_partitions"] == parts["a"]
        assert got["input"]["n_files"] == [parts["a"], parts["b"], parts["c"]]
        assert_same_json(_without_engine(got), _without_engine(ref))


def test_order_statistics_are_left_out_with_a_note(tmp_path):
    files = _write(tmp_path, {k: v for k, v in _models().items() if k != "c"})
    args = ["--metrics", "rmse,ence,crps", "--bootstrap", "50", "--permutations", "0"]
    ref = json.loads(runner.invoke(app, ["compare", *files, "-f", "json", *args]).stdout)
    result = runner.invoke(
        app, ["compare", *files, "-f", "json", *args, "--engine", "stream", "--chunk-rows", "100"]
    )
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    # ENCE needs a sort of all rows: not compared, listed with the reason
    assert got["input"]["not_streamed"] == {
        "spread_calibration.ence": "needs order statistics (a sort or median over all rows)"
    }
    assert "spread_calibration.ence" not in got["metrics"] and "spread_calibration.ence" in ref["metrics"]
    assert any("not compared because they do not merge" in n for n in got["notes"])
    # RMSE's estimate streams exactly, its resampler (weighted order statistics) does not: no interval
    for name in ("a", "b"):
        assert got["metrics"]["accuracy.rmse"]["values"][name]["estimate"] == pytest.approx(
            ref["metrics"]["accuracy.rmse"]["values"][name]["estimate"], rel=1e-12
        )
        assert got["metrics"]["accuracy.rmse"]["values"][name]["low"] is None  # NaN in the JSON
    assert any(n.startswith("accuracy.rmse: reported without a bootstrap interval") for n in got["notes"])
    assert_same_json(got["metrics"]["crps"], ref["metrics"]["crps"])


def test_bad_value_in_a_later_chunk_exits_3_naming_file_column_and_global_row(tmp_path):
    models = _models()
    models["b"]["sigma"][2000] = -1.0
    files = _write(tmp_path, models)
    out = tmp_path / "out.json"
    result = runner.invoke(
        app, ["compare", *files, "--engine", "stream", "--chunk-rows", "100", "-o", str(out)]
    )
    assert result.exit_code == 3, result.output
    assert "b.parquet" in result.output and "'sigma'" in result.output and "row 2000" in result.output
    assert not out.exists()


@pytest.mark.parametrize(
    "change, message",
    [
        ("short", "a.parquet ends at global row 2000 (2000 rows) but"),
        ("target", "first at row 1500"),
        ("drop", "global row 1700 was dropped from"),
    ],
)
def test_misaligned_files_are_one_line_input_errors(tmp_path, change, message):
    models = {k: v for k, v in _models().items() if k != "c"}
    if change == "short":
        models["a"] = {k: v[:2000] for k, v in models["a"].items()}
    elif change == "target":
        models["b"]["y"] = models["b"]["y"].copy()
        models["b"]["y"][1500] += 1.0
    else:
        models["b"]["mu"][1700] = np.nan
    for name, cols in models.items():
        pq.write_table(pa.table(cols), tmp_path / f"{name}.parquet", row_group_size=300)
    result = runner.invoke(
        app,
        [
            "compare",
            str(tmp_path / "a.parquet"),
            str(tmp_path / "b.parquet"),
            "--engine",
            "stream",
            "--chunk-rows",
            "64",
            "--nan-policy",
            "omit",
        ],
    )
    assert result.exit_code == 3, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1


def test_memory_only_options_are_usage_errors(tmp_path):
    files = _write(tmp_path, {k: v for k, v in _models().items() if k != "c"})
    for extra in (["--id", "y"], ["--murphy"]):
        result = runner.invoke(app, ["compare", *files, "--engine", "stream", *extra])
        assert result.exit_code == 2, result.output
        assert "--engine memory" in result.output
    result = runner.invoke(app, ["compare", *files, "--engine", "memory", "--chunk-rows", "10"])
    assert result.exit_code == 2, result.output


@pytest.mark.parametrize("lag", [0, 1, 3])
def test_merged_moments_give_the_diebold_mariano_test_of_all_rows(lag):
    """Moments of consecutive pieces merged in order == :func:`diebold_mariano` on the whole columns
    (the lag products across piece boundaries included; pieces shorter than the lag too)."""
    rng = np.random.default_rng(lag)
    a, b = rng.normal(size=(2, 300, 2)) + np.array([0.0, 0.3])
    a[:, 1] = np.convolve(rng.normal(size=302), [1.0, 0.8, 0.5], "valid")  # autocorrelated differences
    d = a - b
    cuts = [0, 1, 3, 50, 51, 52, 200, 300]
    merged = Moments(lag)
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        merged = merged.merge(Moments.of(d[lo:hi], lag))
    for j in range(2):
        want = diebold_mariano(a[:, j], b[:, j], lag=lag)
        got = merged.dm(j)
        assert got["statistic"] == pytest.approx(want["statistic"], rel=1e-11)
        assert got["p_value"] == pytest.approx(want["p_value"], rel=1e-9, abs=1e-15)


@pytest.mark.parametrize(
    "name",
    [
        "point.csv",
        "intervals_multi.csv",
        "samples.parquet",
        "samples_list.parquet",
        "classification.parquet",
        "dirichlet.parquet",
        "loglik.parquet",
        "multivariate.parquet",
    ],
)
def test_every_representation_streams_like_memory(name):
    """The default metrics of each representation (the sample file against itself: every test is a tie)."""
    from ..conftest import SAMPLE

    def run(*extra: str) -> dict:
        result = runner.invoke(
            app,
            [
                "compare",
                str(SAMPLE / name),
                str(SAMPLE / name),
                "-f",
                "json",
                "--bootstrap",
                "60",
                "--permutations",
                "99",
                *extra,
            ],
        )
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    ref = run()
    got = run("--engine", "stream", "--chunk-rows", "97")
    assert got["metrics"] and got["input"]["engine"] == "stream"
    assert_same_json(_without_engine(got), _without_engine(ref))
