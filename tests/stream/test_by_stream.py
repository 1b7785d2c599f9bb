"""``uqeval score --by COL --engine stream`` (uqeval.commands.score.groups): one mergeable state per group value.

Reference: the in-memory ``--by`` JSON of the same file (``uqeval.commands.score.core.score_groups``); every streamed
value of every group equals it to 1e-12 relative (the approximate ones within the group's own bound).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.commands.score.groups import merge_groups

from ..conftest import SAMPLE, write_table
from .test_states import assert_same

runner = CliRunner()


def _score(args: list[str]) -> dict:
    result = runner.invoke(app, ["score", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _same_groups(got: dict, ref: dict) -> None:
    info = got["input"]
    assert info["engine"] in ("stream", "dask") and info["columns"] == ref["input"]["columns"]
    assert got["groups"]["column"] == ref["groups"]["column"]
    assert list(got["groups"]["values"]) == list(ref["groups"]["values"])
    for label, body in ref["groups"]["values"].items():
        g = got["groups"]["values"][label]
        assert g["n_rows"] == body["n_rows"], label
        assert_same(g["metrics"], body["metrics"], info["not_streamed"], info["approximate"], g.get("bounds"))
    assert_same(got["metrics"], ref["metrics"], info["not_streamed"], info["approximate"], info.get("bounds"))


# chunks of 7 rows (every batch splits into 1-3 rows per group) on a regression file (with the per-group
# two-pass MdAE) and a classifier; every representation in one chunk (1e5 > the 2,000 rows) and in 97s
@pytest.mark.parametrize(
    "name,chunk",
    [
        ("gaussian.parquet", "7"),
        ("classification.parquet", "7"),
        *[
            (n, c)
            for n in (
                "gaussian.parquet",
                "quantiles.parquet",
                "samples.parquet",
                "intervals.parquet",
                "classification.parquet",
            )
            for c in ("97", "100000")
        ],
    ],
)
def test_by_streamed_equals_in_memory_by(name, chunk):
    ref = _score([str(SAMPLE / name), "--by", "shift", "--engine", "memory"])
    got = _score([str(SAMPLE / name), "--by", "shift", "--engine", "stream", "--chunk-rows", chunk])
    _same_groups(got, ref)
    assert set(got["groups"]["values"]) == {"0", "1", "2"}


def test_by_labels_nulls_markup_and_nan_omit_as_in_memory(tmp_path):
    """String labels with markup and a null, a CSV read in blocks, rows dropped by --nan-policy omit."""
    rng = np.random.default_rng(9)
    n = 700
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, n)
    y = mu + sd * rng.normal(size=n)
    y[[5, 300, 301]] = np.nan
    region = np.array(["[red]eu[/red]", "us|west", "*a*", ""], dtype=object)[np.arange(n) % 4]
    path = write_table(tmp_path / "g.csv", {"y": y, "mu": mu, "sigma": sd, "region": region})
    args = [str(path), "--by", "region", "--nan-policy", "omit"]
    ref = _score([*args, "--engine", "memory"])
    for chunk in ("7", "100000"):
        got = _score([*args, "--engine", "stream", "--chunk-rows", chunk])
        _same_groups(got, ref)
        assert got["input"]["n_dropped"] == 3
    assert "[red]eu[/red]" in ref["groups"]["values"] and "null" in ref["groups"]["values"]
    # the labels reach the renderers as data, escaped as in memory (md_cell: "|" does not split the cell)
    heads = []
    for engine in ("memory", "stream"):
        md = runner.invoke(app, ["score", *args, "--engine", engine, "--format", "markdown"])
        assert md.exit_code == 0, md.output
        heads.append([line for line in md.stdout.splitlines() if "region=" in line])
    assert heads[0] == heads[1] and "us\\|west" in heads[1][0], heads


def test_group_states_merge_by_label():
    a, b = {"x": {"n": 0, "families": {}}}, {"y": {"n": 0, "families": {}}}
    assert set(merge_groups(a, b)) == {"x", "y"}


def test_packed_histograms_add_like_dense_arrays():
    from uqeval.catalogue.states import Packed

    rng = np.random.default_rng(1)
    a = np.zeros(1 << 17, dtype=np.int64)
    a[rng.integers(0, a.size, 100)] += 1
    b = np.zeros(1 << 17)
    b[rng.integers(0, b.size, 100)] += 0.5
    pa, pb = Packed.of(a), Packed.of(b)
    assert isinstance(pa + pb, Packed)
    np.testing.assert_array_equal((pa + pb).array(), a + b)
    np.testing.assert_array_equal(a + pb, a + b)
    np.testing.assert_array_equal(pa + b, a + b)
    dense = np.ones(a.size)
    np.testing.assert_array_equal(
        Packed.of(dense * (np.arange(a.size) % 5 == 0)) + Packed.of(dense * (np.arange(a.size) % 5 == 1)),
        dense * (np.arange(a.size) % 5 < 2),
    )  # over a quarter non-zero: dense again


def test_small_groups_hold_kilobytes_not_the_dense_histograms(tmp_path):
    """20 groups of 10 Gaussian rows: dense states would hold 20 x 28 MB of histograms (PIT, RS, MdAE)."""
    import pickle

    from uqeval.commands.score.stream import score_state
    from uqeval.config import Settings
    from uqeval.engine.options import EngineOptions

    rng = np.random.default_rng(2)
    n = 200
    mu, sd = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    path = write_table(
        tmp_path / "g.parquet",
        {"y": mu + sd * rng.normal(size=n), "mu": mu, "sigma": sd, "g": np.arange(n) % 20},
    )
    _, part = score_state(path, Settings(columns={"by": "g"}), EngineOptions("stream", 30))
    assert len(part.groups) == 20
    assert len(pickle.dumps(part.groups)) < 2**20 * 2
