"""Weighted streaming (issue 25): ``--weights`` with ``--engine stream`` (small chunks) and ``--engine dask``
(tests/stream/test_dask.py, on its local cluster) equals the in-memory run to 1e-12 on every metric it streams; the others are
named (``input.not_streamed``: weighted forms that need all the rows; ``weights.not_weighted``: no weighted
form), as in memory."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.catalogue.paths import flatten
from uqeval.cli import app

from ..conftest import write_table
from ..test_catalogue_invariants import FLAGS, KINDS, N, _columns

runner = CliRunner()


def _weights() -> np.ndarray:
    w = np.random.default_rng(11).uniform(0.0, 3.0, N)
    w[::5] = 0.0
    return w


def _json(*args) -> dict:
    r = runner.invoke(app, ["score", *map(str, args), *FLAGS, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _agree(memory: dict, streamed: dict) -> None:
    mem, got = dict(flatten(memory["metrics"])), dict(flatten(streamed["metrics"]))
    assert got and set(got) <= set(mem)
    for path, value in got.items():
        if isinstance(value, str):  # a label (conditional_coverage.<level>.worst_group)
            assert value == mem[path], path
        else:
            np.testing.assert_allclose(value, mem[path], rtol=1e-12, atol=1e-14, err_msg=path)
    left_out = streamed["input"]["not_streamed"]
    for path in set(mem) - set(got):  # every metric of the in-memory run is there or named
        assert any(
            path.startswith(p.split(".")[0] + ".")
            and path.endswith(p.split(".")[-1])
            or path.startswith(p + ".")  # a keyed metric's values (murphy.quantile.0.05)
            for p in left_out
        ), path
    assert streamed["weights"]["not_weighted"] == memory["weights"]["not_weighted"]
    assert streamed["weights"]["sum"] == pytest.approx(memory["weights"]["sum"], rel=1e-14)
    assert streamed["weights"]["n_zero"] == memory["weights"]["n_zero"]


@pytest.mark.parametrize("kind", KINDS)
def test_stream_with_weights_equals_memory(tmp_path, kind):
    f = write_table(tmp_path / f"{kind}.parquet", {**_columns(kind, "true"), "w": _weights()})
    memory = _json(f, "--weights", "w")
    streamed = _json(f, "--weights", "w", "--engine", "stream", "--chunk-rows", "97")
    assert streamed["input"]["engine"] == "stream"
    _agree(memory, streamed)


def test_stream_weights_of_a_csv_and_errors(tmp_path):
    cols = {**_columns("gaussian", "true"), "w": _weights()}
    f = write_table(tmp_path / "g.csv", cols)
    _agree(_json(f, "--weights", "w"), _json(f, "--weights", "w", "--engine", "stream", "--chunk-rows", "50"))
    for name, w, message in (
        ("bad", np.where(np.arange(N) == 250, -1.0, cols["w"]), "column 'w' (first at row 250, found -1)"),
        ("zero", np.zeros(N), "are all 0"),
    ):
        path = write_table(tmp_path / f"{name}.csv", dict(cols, w=w))
        r = runner.invoke(
            app, ["score", str(path), "--weights", "w", "--engine", "stream", "--chunk-rows", "50"]
        )
        assert r.exit_code == 3 and message in r.output, r.output


@pytest.mark.parametrize("kind", ["gaussian", "categorical"])
def test_weighted_by_streamed_equals_memory(tmp_path, kind):
    """``--by`` with ``--weights`` on the stream engine (issue 37): one weighted state per group; every group's
    streamed metrics equal memory's to 1e-12, a group whose weights are all 0 says so, as in memory."""
    cols = {**_columns(kind, "true"), "w": _weights(), "g": np.arange(N) % 4}
    cols["w"][cols["g"] == 3] = 0.0
    f = write_table(tmp_path / f"{kind}.parquet", cols)
    memory = _json(f, "--weights", "w", "--by", "g")
    streamed = _json(f, "--weights", "w", "--by", "g", "--engine", "stream", "--chunk-rows", "61")
    _agree(memory, streamed)
    assert list(streamed["groups"]["values"]) == list(memory["groups"]["values"]) == ["0", "1", "2", "3"]
    for label, body in memory["groups"]["values"].items():
        got = streamed["groups"]["values"][label]
        assert got["n_rows"] == body["n_rows"]
        mem, st = dict(flatten(body["metrics"])), dict(flatten(got["metrics"]))
        assert set(st) <= set(mem) and (st or label == "3")
        for path, value in st.items():
            np.testing.assert_allclose(value, mem[path], rtol=1e-12, atol=1e-14, err_msg=(label, path))
    assert streamed["groups"]["values"]["3"]["notes"] == memory["groups"]["values"]["3"]["notes"]


@pytest.mark.parametrize("kind", ["gaussian", "samples"])
def test_weighted_rmse_mdae_r2_corr_stream(tmp_path, kind):
    """Issue 37: the weighted RMSE, R² and correlation stream as weighted moments (Chan's merge with weights), the
    weighted MdAE in two passes (a histogram of weights over the float bit patterns finds the median's codes,
    the second pass selects in their rows): equal to memory to 1e-12, and with integer weights to the rows
    repeated that often."""
    cols = _columns(kind, "true")
    w = np.random.default_rng(37).integers(0, 4, N).astype(np.float64)
    f = write_table(tmp_path / "w.parquet", {**cols, "w": w})
    idx = np.repeat(np.arange(N), w.astype(int))
    rep = write_table(tmp_path / "rep.parquet", {k: np.asarray(v)[idx] for k, v in cols.items()})
    memory = _json(f, "--weights", "w")
    repeated = _json(rep)
    for engine in (["--chunk-rows", "53"], ["--chunk-rows", "400"]):
        streamed = _json(f, "--weights", "w", "--engine", "stream", *engine)
        _agree(memory, streamed)
        for name in ("rmse", "mdae", "r2", "corr"):
            got = streamed["metrics"]["accuracy"][name]
            assert got == pytest.approx(memory["metrics"]["accuracy"][name], rel=1e-12, abs=1e-14), name
            assert got == pytest.approx(repeated["metrics"]["accuracy"][name], rel=1e-12, abs=1e-14), name
            assert f"accuracy.{name}" not in streamed["input"]["not_streamed"]
    # with --by the groups and the whole data take the same second pass (the group of weight 0: no metric)
    grouped = _json(f, "--weights", "w", "--by", "w", "--engine", "stream", "--chunk-rows", "53")
    assert "accuracy.mdae" not in grouped["input"]["not_streamed"]
    assert grouped["metrics"]["accuracy"]["mdae"] == memory["metrics"]["accuracy"]["mdae"]
    assert grouped["metrics"]["accuracy"]["rmse"] == pytest.approx(
        memory["metrics"]["accuracy"]["rmse"], rel=1e-12
    )


def _median_ties() -> dict[str, np.ndarray]:
    """Point predictions whose absolute errors take five values (ties everywhere), integer weights, and four
    groups: in "half" and "zero_at_half" the cumulative weight is exactly half the total at the last error 1.0
    (the weighted median is then the mean of 1.0 and 2.0; in "zero_at_half" a row of weight 0 with error 1.5
    lies between them and must not count), "mixed" has random ties and weights 0-3, and "none" has weight 0
    only. The rows of the groups are interleaved, so every chunk holds several groups."""
    rng = np.random.default_rng(36)
    err, w, g = [], [], []
    k = 150
    for label, e, wt in (
        ("half", np.r_[np.full(k, 1.0), np.full(k, 2.0)], np.ones(2 * k)),
        (
            "zero_at_half",
            np.r_[np.full(k, 1.0), [1.5], np.full(k, 2.0)],
            np.r_[np.ones(k), [0.0], np.ones(k)],
        ),
        ("mixed", rng.choice([0.0, 0.5, 1.0, 1.5, 2.0], 400), rng.integers(0, 4, 400).astype(float)),
        ("none", rng.choice([0.0, 1.0, 2.0], 120), np.zeros(120)),
    ):
        err.append(e)
        w.append(wt)
        g += [label] * e.size
    e, weights, labels = np.concatenate(err), np.concatenate(w), np.array(g, dtype=object)
    order = rng.permutation(e.size)
    e, weights, labels = e[order], weights[order], labels[order]
    y = rng.integers(-800, 800, e.size) / 8.0  # (dyadic: y + e - y is e exactly, the ties stay ties)
    sign = np.where(rng.random(e.size) < 0.5, -1.0, 1.0)
    return {"y": y, "pred": y + sign * e, "w": weights, "g": labels}


def test_weighted_by_mdae_is_exact_on_every_engine(tmp_path, scheduler):
    """Weighted ``score --by`` takes the second pass of the unweighted ``--by`` (issue 36): every group's
    weighted MdAE, and the whole data's, equal memory's exactly on the stream and Dask engines, with ties at the
    half-weight point, a row of weight 0 between the two middle values and a group of weight 0 only (no metric,
    a note, as in memory). Reference: integer weights are repeated rows, numpy.median of the repeated errors."""
    cols = _median_ties()
    f = write_table(tmp_path / "ties.parquet", cols)
    args = ["--y", "y", "--mean", "pred", "--weights", "w", "--by", "g"]
    runs = {
        "memory": _json(f, *args),
        "stream": _json(f, *args, "--engine", "stream", "--chunk-rows", "37"),
        "dask": _json(f, *args, "--engine", "dask", "--scheduler", scheduler, "--chunk-rows", "64"),
    }
    err = np.abs(cols["y"] - cols["pred"])
    reps = np.repeat(np.arange(err.size), cols["w"].astype(int))
    want = {"": float(np.median(err[reps]))}
    for label in ("half", "zero_at_half", "mixed"):
        mine = reps[cols["g"][reps] == label]
        want[label] = float(np.median(err[mine]))
    assert want["half"] == want["zero_at_half"] == 1.5
    memory = runs["memory"]
    mdae = {"": memory["metrics"]["accuracy"]["mdae"]}
    mdae.update({g: memory["groups"]["values"][g]["metrics"]["accuracy"]["mdae"] for g in want if g})
    assert mdae == pytest.approx(want, rel=1e-15, abs=0)
    for engine, doc in runs.items():
        groups = doc["groups"]["values"]
        assert "accuracy.mdae" not in doc["input"].get("not_streamed", {}), engine
        assert doc["metrics"]["accuracy"]["mdae"] == mdae[""], engine  # exactly
        for label in ("half", "zero_at_half", "mixed"):
            assert groups[label]["metrics"]["accuracy"]["mdae"] == mdae[label], (engine, label)
        assert groups["none"]["metrics"] == {}, engine
        assert groups["none"]["notes"] == memory["groups"]["values"]["none"]["notes"], engine
        if engine != "memory":
            _agree(memory, doc)
        for label, body in memory["groups"]["values"].items():
            mem, got = dict(flatten(body["metrics"])), dict(flatten(groups[label]["metrics"]))
            assert set(got) <= set(mem), (engine, label)
            for path, value in got.items():
                np.testing.assert_allclose(
                    value, mem[path], rtol=1e-12, atol=1e-14, err_msg=f"{engine} {label} {path}"
                )
