"""``uqeval compare`` on the memory, stream and Dask engines gives one document (issue 37): with and without
weights (rows of weight 0 among them), resampling rows, clusters, circular blocks with bootstrap intervals,
and blocks of the size ``auto`` picks. Estimates, intervals, shares of resamples where a model is best,
differences to the best model and paired-test statistics agree to 1e-12; the permutation p-values are
identical (the same seeds: a row's draws depend on the seed and its index among the kept rows only)."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

runner = CliRunner()
N = 1000
RESAMPLINGS = {
    "rows": (),
    "clusters": ("--cluster", "site"),
    "blocks": ("--block-size", "9"),
    "auto": ("--block-size", "auto"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("engines")
    rng = np.random.default_rng(37)
    y = rng.normal(size=N)
    w = rng.uniform(0.2, 3.0, N)
    w[rng.random(N) < 0.1] = 0.0  # rows of weight 0, scattered over chunks and row groups
    site = np.array([f"s{v}" for v in rng.integers(0, 29, size=N)], dtype=object)
    out = []
    for i, name in enumerate(("a", "b", "c")):
        e = rng.normal(size=N + 1)  # MA(1) errors: serially correlated rows, as blocks assume
        cols = {
            "y": y,
            "mean": y + 0.4 * (e[1:] + 0.9 * e[:-1]),
            "std": np.full(N, 0.8 + 0.2 * i),
            "site": site,
        }
        if name == "a":
            cols["w"] = w  # the weights belong to the rows: the first file holds them
        pq.write_table(pa.table(cols), d / f"{name}.parquet", row_group_size=89)
        out.append(str(d / f"{name}.parquet"))
    return out


def _run(paths, *args):
    r = runner.invoke(
        app,
        [
            "compare",
            *paths,
            "-f",
            "json",
            "-m",
            "crps,nll,pinball,ma_cal",
            "-b",
            "150",
            "--permutations",
            "299",
        ]
        + list(args),
    )
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _same(got, want, where: str = "") -> None:
    """``got`` equals ``want``: numbers to 1e-12 (relative), permutation p-values exactly, the rest as is."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), where
        for key in want:
            _same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for i, (g, v) in enumerate(zip(got, want)):
            _same(g, v, f"{where}[{i}]")
    elif isinstance(want, float) and not isinstance(want, bool):
        if where.endswith("permutation_p"):
            assert got == want, where
        elif math.isnan(want):
            assert got is None or math.isnan(got), where
        else:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-15), where
    else:
        assert got == want, where


def _document(doc: dict) -> dict:
    """What every engine must agree on: all but the engine's own block, the notes and where files came from."""
    keep = ("n_rows", "settings", "metrics", "ranks", "tests", "weights")
    out = {k: doc[k] for k in keep if k in doc}
    out["models"] = [(m["name"], m["representation"]) for m in doc["models"]]
    return out


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("resampling", list(RESAMPLINGS))
def test_memory_stream_and_dask_give_one_document(files, scheduler, resampling, weighted):
    args = [*RESAMPLINGS[resampling], *(("--weights", "w") if weighted else ())]
    want = _run(files, *args)
    if resampling != "rows":
        assert want["settings"]["resampling"]["unit"] == ("cluster" if resampling == "clusters" else "block")
    if weighted:
        assert want["weights"]["n_zero"] > 50
    assert all(math.isfinite(v["low"]) for e in want["metrics"].values() for v in e["values"].values())
    stream = _run(files, *args, "--engine", "stream", "--chunk-rows", "128")
    dask = _run(files, *args, "--engine", "dask", "--scheduler", scheduler, "--chunk-rows", "64")
    assert (stream["input"]["engine"], dask["input"]["engine"]) == ("stream", "dask")
    _same(_document(stream), _document(want), "stream")
    _same(_document(dask), _document(want), "dask")


@pytest.fixture(scope="module")
def classifiers(tmp_path_factory):
    d = tmp_path_factory.mktemp("engines_cls")
    rng = np.random.default_rng(41)
    label = rng.integers(0, 3, N)
    w = rng.uniform(0.2, 3.0, N)
    w[rng.random(N) < 0.1] = 0.0
    p = rng.dirichlet(np.ones(3), N)
    out = []
    for name, q in (("a", p), ("b", 0.6 * p + 0.4 / 3)):
        cols = {"label": label, **{f"p_{c}": q[:, c] for c in range(3)}}
        if name == "a":
            cols["w"] = w
        pq.write_table(pa.table(cols), d / f"{name}.parquet", row_group_size=89)
        out.append(str(d / f"{name}.parquet"))
    return out


def test_weighted_calibration_errors_on_every_engine(classifiers, scheduler):
    """ECE, MCE, SCE and the Brier decomposition of weighted rows (their family's kernels given the weights,
    no per-row form: no interval) are one number on every engine: memory's kernels, the streamed weighted cell
    sums; ACE (equal-mass bins) needs every row: memory computes it, the streaming engines name it."""
    args = ["--weights", "w", "-m", "nll,brier,ece,mce,sce,brier_decomposition.reliability"]
    want = _run(classifiers, *args)
    assert want["weights"]["not_weighted"] == {}
    for metric in ("calibration.ece", "calibration.mce", "calibration.sce"):
        assert not want["metrics"][metric]["bootstrap"]
        assert all(math.isfinite(v["estimate"]) for v in want["metrics"][metric]["values"].values())
    for engine in (
        ("stream", "--chunk-rows", "128"),
        ("dask", "--scheduler", scheduler, "--chunk-rows", "64"),
    ):
        got = _run(classifiers, *args, "--engine", *engine)
        assert got["input"]["not_streamed"] == {}
        _same(_document(got), _document(want), engine[0])
    ace = ["--weights", "w", "-m", "nll,ace"]
    assert math.isfinite(_run(classifiers, *ace)["metrics"]["calibration.ace"]["values"]["a"]["estimate"])
    got = _run(classifiers, *ace, "--engine", "stream")
    assert "calibration.ace" in got["input"]["not_streamed"] and "calibration.ace" not in got["metrics"]


def test_weighted_moments_stream_as_estimates_on_every_engine(files, scheduler):
    """The weighted RMSE, R² and correlation (weighted moments, as the weighted score streams them) are the
    memory estimates to 1e-12 on the stream and Dask engines, without an interval (as unweighted: their
    resamplers are not sums); the weighted MdAE needs a second pass and is named in ``input.not_streamed``."""
    args = ["--weights", "w", "-m", "rmse,r2,corr,mdae,crps"]
    want = _run(files, *args)
    for metric in ("accuracy.rmse", "accuracy.r2", "accuracy.corr", "accuracy.mdae"):
        assert all(math.isfinite(v["estimate"]) for v in want["metrics"][metric]["values"].values())
    for engine in (
        ("stream", "--chunk-rows", "128"),
        ("dask", "--scheduler", scheduler, "--chunk-rows", "64"),
    ):
        got = _run(files, *args, "--engine", *engine)
        assert set(got["input"]["not_streamed"]) == {"accuracy.mdae"}, engine[0]
        for metric in ("accuracy.rmse", "accuracy.r2", "accuracy.corr", "crps"):
            for model, v in want["metrics"][metric]["values"].items():
                g = got["metrics"][metric]["values"][model]
                assert g["estimate"] == pytest.approx(v["estimate"], rel=1e-12), (engine[0], metric, model)
        assert got["metrics"]["accuracy.rmse"]["values"]["a"]["low"] is None


@pytest.fixture(scope="module")
def logliks(tmp_path_factory):
    d = tmp_path_factory.mktemp("engines_loglik")
    rng = np.random.default_rng(36)
    w = rng.uniform(0.2, 3.0, N)
    w[rng.random(N) < 0.1] = 0.0
    base = rng.normal(-1.0, 0.7, size=(N, 1))
    out = []
    for name, spread in (("a", 0.3), ("b", 0.5)):
        ll = base + spread * rng.normal(size=(N, 6))
        cols = {f"loglik_{j}": ll[:, j] for j in range(6)}
        if name == "a":
            cols["w"] = w
        pq.write_table(pa.table(cols), d / f"{name}.parquet", row_group_size=89)
        out.append(str(d / f"{name}.parquet"))
    return out


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_information_criteria_se_on_every_engine(logliks, scheduler, weighted):
    """information_criteria.*_se (one mergeable state, weighted or at unit weights: RowTermMoments) are memory's
    estimates to 1e-12 on the stream and Dask engines, with and without weights, without an interval."""
    args = ["-m", "waic1,waic1_se,waic2_se,iscv_se", *(("--weights", "w") if weighted else ())]
    want = _run(logliks, *args)
    for metric in ("information_criteria.waic1_se", "information_criteria.iscv_se"):
        assert all(math.isfinite(v["estimate"]) for v in want["metrics"][metric]["values"].values())
    for engine in (
        ("stream", "--chunk-rows", "128"),
        ("dask", "--scheduler", scheduler, "--chunk-rows", "64"),
    ):
        got = _run(logliks, *args, "--engine", *engine)
        assert got["input"]["not_streamed"] == {}, engine[0]
        _same(_document(got), _document(want), engine[0])
