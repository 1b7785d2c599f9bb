"""``uqeval ucc --engine stream`` (uqeval.commands.ucc.stream): the streamed UCC against the exact in-memory one.

Reference: :func:`uqeval.metrics.ucc.ucc_summary` (the sorted sweep over every critical scale, itself
checked against IBM UQ360's values in tests/metrics). The op point (k = 1) must agree to 1e-12; the
AUUCC, constant-band AUUCC, gain, partial areas and the minimum-cost point's cost must lie within the
bounds the streamed state reports (and those bounds must be small, or they would prove nothing).
"""

from __future__ import annotations

import copy
import functools
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.commands.ucc.core import UccOptions
from uqeval.commands.ucc.stream import file_state, finalize_file, merge_file
from uqeval.metrics.ucc import ucc_summary

from ..conftest import SAMPLE

runner = CliRunner()

AXIS_PAIRS = [
    ("bandwidth", "missrate"),
    ("missrate", "bandwidth"),
    ("excess", "deficit"),
    ("deficit", "excess"),
    ("bandwidth", "excess"),
    ("missrate", "deficit"),
]


def _data(case: str, n: int = 3000):
    """Seeded ``(y, pred, lower, upper)``."""
    rng = np.random.default_rng(
        {"gauss": 0, "heavy": 1, "ties": 2, "zero_width": 3, "asym": 4, "one_value": 5}[case]
    )
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, n)
    if case == "gauss":
        return mu + sd * rng.normal(size=n), mu, mu - 1.96 * sd, mu + 1.96 * sd
    if case == "heavy":  # Student t(1.5) errors, Cauchy-sized bands: critical scales over many decades
        w = np.abs(rng.standard_cauchy(n)) + 1e-3
        return mu + rng.standard_t(1.5, size=n), mu, mu - w, mu + 0.5 * w
    if case == "ties":  # errors and widths on a 0.1 grid: many equal critical scales, exact zeros
        p = np.round(mu, 1)
        return np.round(mu + rng.normal(size=n), 1), p, p - 1.0, p + 1.0
    if case == "zero_width":  # 10% of rows never covered (zero band on y's side)
        z = np.where(rng.uniform(size=n) < 0.1, 0.0, sd)
        return mu + sd * rng.normal(size=n), mu, mu - z, mu + z
    if case == "asym":
        return mu + sd * rng.normal(size=n), mu, mu - 0.3 * sd, mu + 3.0 * sd
    # one_value: every row the same critical scale 0.5 (one cell, one distinct value: the bound is 0);
    # predictions on a grid of 1/8, so y - pred is exactly +-0.5
    mu = np.round(mu * 8) / 8
    return mu + np.where(rng.uniform(size=n) < 0.5, 0.5, -0.5), mu, mu - 1.0, mu + 1.0


@functools.cache
def _merged(case: str, chunk: int):
    """The state of ``_data(case)`` made chunk by chunk and merged: the same for every axis pair and partial
    range, so made once per (case, chunk) and finalised (a copy) for each of them."""
    y, p, lo, hi = _data(case)
    st = None
    for start in range(0, y.size, chunk):
        sl = slice(start, start + chunk)
        st = merge_file(st, file_state(y[sl], p[sl], lo[sl], hi[sl]))
    return st


def _streamed(case, chunk, x_axis, y_axis, partial_x=None, partial_y=None, normalize="std"):
    st = copy.deepcopy(_merged(case, chunk))
    return finalize_file(st, UccOptions(x_axis, y_axis, normalize, partial_x, partial_y, 0.5))


def _within(got: float | None, ref: float | None, bound: float | None) -> None:
    if ref is None:  # a gain over a zero constant-band area: undefined in both
        assert got is None and bound is None
        return
    assert abs(got - ref) <= bound * (1 + 1e-9) + 1e-12 * max(1.0, abs(ref)), (got, ref, bound)


@pytest.mark.parametrize("case", ["gauss", "heavy", "ties", "zero_width", "asym", "one_value"])
@pytest.mark.parametrize("chunk", [7, 100_000, 3000])
def test_streamed_ucc_within_its_bound_for_every_axis_pair(case, chunk):
    y, p, lo, hi = _data(case)
    for x_axis, y_axis in AXIS_PAIRS:
        ref = ucc_summary(y, p, lo, hi, x_axis, y_axis)
        got, bounds = _streamed(case, chunk, x_axis, y_axis)
        for key in ("auucc", "auucc_const"):
            _within(got[key], ref[key], bounds[key])
            assert bounds[key] <= 1e-4 * ref[key] + 1e-15, (key, bounds[key], ref[key])  # not a vacuous bound
        _within(got["gain"], ref["gain"], bounds["gain"])
        for key in ("k", "x", "y", "cost"):  # the original intervals: one scale, a sum over rows
            assert got["op"][key] == pytest.approx(ref["op"][key], rel=1e-12, abs=1e-15), key
        # k*: a point of the exact curve, its cost at most the stated bound above the exact minimum
        assert (
            ref["op_min"]["cost"] - 1e-12
            <= got["op_min"]["cost"]
            <= ref["op_min"]["cost"] + bounds["op_min_cost"] + 1e-12
        )
        if case in (
            "ties",
            "one_value",
        ):  # a cell holds one scale (up to the rounding of y - pred): nearly exact
            assert bounds["auucc"] <= 1e-12 * max(1.0, ref["auucc"])
            assert case == "ties" or bounds["auucc"] == 0.0
            assert got["op_min"]["cost"] == pytest.approx(ref["op_min"]["cost"], rel=1e-12)


@pytest.mark.parametrize("case", ["gauss", "heavy", "ties"])
def test_streamed_partial_areas_within_their_bound(case):
    y, p, lo, hi = _data(case)
    for x_axis, y_axis in AXIS_PAIRS:
        full = ucc_summary(y, p, lo, hi, x_axis, y_axis)
        x_hi = full["op"]["x"] if full["op"]["x"] > 0 else 1.0
        for kw in ({"partial_x": (0.3 * x_hi, 0.9 * x_hi)}, {"partial_y": (0.05, 0.4)}):
            ref = ucc_summary(y, p, lo, hi, x_axis, y_axis, **kw)
            got, bounds = _streamed(case, 7, x_axis, y_axis, **kw)
            _within(got["partial"]["auucc"], ref["partial"]["auucc"], bounds["partial_auucc"])
            _within(
                got["partial"]["auucc_const"], ref["partial"]["auucc_const"], bounds["partial_auucc_const"]
            )
            if ref["partial"]["gain"] is not None and bounds["partial_gain"] is not None:
                _within(got["partial"]["gain"], ref["partial"]["gain"], bounds["partial_gain"])


def test_merge_order_does_not_matter():
    y, p, lo, hi = _data("heavy")
    parts = [file_state(y[i], p[i], lo[i], hi[i]) for i in np.array_split(np.arange(y.size), 16)]
    seq = None
    for s in parts:
        seq = merge_file(seq, s)
    while len(parts) > 1:  # a tree, pairs merged right to left
        parts = [
            merge_file(parts[i + 1], parts[i]) if i + 1 < len(parts) else parts[i]
            for i in range(0, len(parts), 2)
        ]
    a = finalize_file(seq, UccOptions())
    b = finalize_file(parts[0], UccOptions())
    assert a[0]["auucc"] == pytest.approx(b[0]["auucc"], rel=1e-12)
    assert a[1]["auucc"] == pytest.approx(b[1]["auucc"], rel=1e-12)
    np.testing.assert_array_equal(seq["model"]["codes"], parts[0]["model"]["codes"])
    np.testing.assert_array_equal(seq["model"]["cmin"], parts[0]["model"]["cmin"])


# --------------------------------------------------------------------------- the command


def _ucc(args: list[str]) -> dict:
    result = runner.invoke(app, ["ucc", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same_document(got: dict, ref: dict) -> None:
    assert got["settings"] == ref["settings"] and got["n_rows"] == ref["n_rows"]
    assert list(got["models"]) == list(ref["models"])
    for name, body in ref["models"].items():
        g = got["models"][name]
        assert g["band"] == body["band"]
        info = g["input"]
        assert info["engine"] in ("stream", "dask") and {k: info[k] for k in body["input"]} == body["input"]
        bounds = info["bounds"]
        for key in ("auucc", "auucc_const", "gain"):
            _within(g["ucc"][key], body["ucc"][key], bounds[key])
        assert g["ucc"]["op"] == pytest.approx(body["ucc"]["op"], rel=1e-12, abs=1e-15)
        assert g["ucc"]["op_min"]["cost"] <= body["ucc"]["op_min"]["cost"] + bounds["op_min_cost"] + 1e-12
        if body["ucc"]["partial"] is not None:
            _within(g["ucc"]["partial"]["auucc"], body["ucc"]["partial"]["auucc"], bounds["partial_auucc"])
        assert set(info["approximate"]) >= {"auucc", "auucc_const", "gain", "op_min"}
    engine = next(iter(got["models"].values()))["input"]["engine"]
    assert any(f"--engine {engine}" in n and "approximate" in n for n in got["notes"])


@pytest.mark.parametrize("chunk", ["7", "100000"])
def test_cli_stream_equals_memory_within_bounds(chunk):
    files = [str(SAMPLE / f) for f in ("gaussian.parquet", "quantiles.parquet", "samples.parquet")]
    for extra in (
        [],
        ["--x-axis", "excess", "--y-axis", "deficit", "--partial-x", "0,0.2", "--normalize", "none"],
    ):
        ref = _ucc([*files, "--engine", "memory", *extra])
        got = _ucc([*files, "--engine", "stream", "--chunk-rows", chunk, *extra])
        _same_document(got, ref)
        assert got["models"]["gaussian"]["input"]["chunk_rows"] == int(chunk)


def test_cli_stream_of_a_parquet_directory_equals_the_single_file(tmp_path):
    table = pq.read_table(SAMPLE / "intervals.parquet")
    d = tmp_path / "parts"
    d.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(table.num_rows), 5)):
        pq.write_table(table.take(pa.array(idx)), d / f"part-{i}.parquet", row_group_size=111)
    ref = _ucc([str(SAMPLE / "intervals.parquet"), "--engine", "memory"])
    got = _ucc([str(d), "--chunk-rows", "250"])  # a directory: --engine auto streams it
    assert got["models"]["parts"]["input"]["n_files"] == 5
    for key in ("auucc", "gain"):
        _within(
            got["models"]["parts"]["ucc"][key],
            ref["models"]["intervals"]["ucc"][key],
            got["models"]["parts"]["input"]["bounds"][key],
        )


def _write(path, y, p, sd):
    pq.write_table(pa.table({"y": y, "mu": p, "sigma": sd}), path)
    return str(path)


def test_cli_stream_names_the_first_row_whose_target_differs(tmp_path):
    rng = np.random.default_rng(4)
    y, p, sd = rng.normal(size=500), rng.normal(size=500), np.full(500, 1.0)
    a = _write(tmp_path / "a.parquet", y, p, sd)
    y2 = y.copy()
    y2[321] += 1.0
    b = _write(tmp_path / "b.parquet", y2, p, sd)
    result = runner.invoke(app, ["ucc", a, b, "--engine", "stream", "--chunk-rows", "40"])
    assert result.exit_code == 3 and "row 321" in result.output and "b.parquet" in result.output, (
        result.output
    )
    c = _write(tmp_path / "c.parquet", y[:480], p[:480], sd[:480])
    result = runner.invoke(app, ["ucc", a, c, "--engine", "stream", "--chunk-rows", "64"])
    assert result.exit_code == 3 and "480 rows" in result.output and "500" in result.output, result.output


def test_cli_stream_refuses_what_needs_every_row(tmp_path):
    files = [str(SAMPLE / "gaussian.parquet"), str(SAMPLE / "quantiles.parquet")]
    for extra in (["--permutation-test", "10"], ["--plot", str(tmp_path / "u.png")], ["--workers", "2"]):
        args = ["ucc", *files, *extra, "--engine", "stream"]
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
    result = runner.invoke(
        app, ["ucc", *files, "--chunk-rows", "10"]
    )  # small files: auto reads them in memory
    assert result.exit_code == 2 and "--engine stream" in result.output, result.output


def _weighted_models(tmp_path, n: int = 900):
    """Two Gaussian models on the same rows; the first file holds the weights (0..3, a run of zeros)."""
    rng = np.random.default_rng(11)
    y = rng.normal(size=n)
    w = rng.integers(0, 4, n).astype(float)
    w[100:140] = 0.0
    paths = []
    for name, scale in (("a", 1.0), ("b", 1.6)):
        mu = y + rng.normal(size=n) * 0.8
        cols = {"y": pa.array(y), "mu": pa.array(mu), "sigma": pa.array(np.full(n, scale))}
        if name == "a":
            cols["w"] = pa.array(w)
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table(cols), path, row_group_size=200)
        paths.append(str(path))
    return paths, w


def test_weighted_ucc_on_every_engine_equals_memory_within_bounds(tmp_path, dask_cluster):
    """Issue 37: the streamed and Dask UCC take --weights (weighted counts and sums in every cell, the
    target's weighted moments): the document equals memory's within the written bounds, the op point
    and the weights block exactly."""
    paths, w = _weighted_models(tmp_path)
    ref = _ucc([*paths, "--weights", "w", "--engine", "memory"])
    assert ref["weights"]["sum"] == float(w.sum())
    for engine in (["stream", "--chunk-rows", "37"], ["dask", "--scheduler", dask_cluster.scheduler_address]):
        got = _ucc([*paths, "--weights", "w", "--engine", *engine])
        _same_document(got, ref)
        assert got["weights"] == ref["weights"] and got["n_rows"] == ref["n_rows"]
        assert any("row(s) of weight 0 were dropped" in note for note in got["notes"])


def test_weighted_streamed_ucc_equals_repeated_rows(tmp_path):
    """Integer weights are repeated rows on the stream engine too (the cells' sums and counts agree)."""
    paths, w = _weighted_models(tmp_path, 400)
    repeated = []
    for path in paths:
        table = pq.read_table(path)
        table = table.take(pa.array(np.repeat(np.arange(table.num_rows), w.astype(int))))
        out = tmp_path / f"r_{os.path.basename(path)}"
        pq.write_table(table.drop_columns([c for c in ("w",) if c in table.column_names]), out)
        repeated.append(str(out))
    got = _ucc([*paths, "--weights", "w", "--engine", "stream", "--chunk-rows", "53"])
    want = _ucc([*repeated, "--engine", "stream", "--chunk-rows", "91"])
    for name, body in want["models"].items():
        g = got["models"][name.replace("r_", "")]["ucc"]
        for key in ("auucc", "auucc_const", "gain"):
            assert g[key] == pytest.approx(body["ucc"][key], rel=1e-9), key
        assert g["op"] == pytest.approx(body["ucc"]["op"], rel=1e-12)
