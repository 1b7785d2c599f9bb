"""A further column (``--points-by``, ``--time``) is matched as the in-memory loader matches it (exactly, else
case-insensitively: ``uqeval.io.columns.match_column``) on every engine: the stream and Dask engines matched
exactly and refused ``--points-by site`` for a column ``Site`` that memory read."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.io.columns import match_column


def test_match_column_is_exact_first_then_case_insensitive():
    assert match_column(["site", "Site"], "Site") == "Site"
    assert match_column(["Site"], "site") == "Site"
    assert match_column(["SITE", "x"], "sItE") == "SITE"
    assert match_column(["a"], "b") is None


@pytest.fixture
def timed(tmp_path):
    rng = np.random.default_rng(7)
    n = 400
    mean = rng.normal(size=n)
    f = tmp_path / "t.parquet"
    pd.DataFrame(
        {
            "y": mean + rng.normal(size=n),
            "mean": mean,
            "std": 1.0,
            "Time": pd.date_range("2024-01-01", periods=n, freq="h"),
            "Site": rng.integers(0, 3, n),
        }
    ).to_parquet(f, row_group_size=64)
    return f


def _json(*args: str) -> dict:
    res = CliRunner().invoke(app, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_points_by_in_another_case_gives_the_same_points_on_every_engine(timed, scheduler):
    engines = (
        ("--engine", "memory"),
        ("--engine", "stream", "--chunk-rows", "50"),
        ("--engine", "dask", "--scheduler", scheduler, "--chunk-rows", "50"),
    )
    points = [_json("coverage", str(timed), "--points-by", "site", *e)["points"] for e in engines]
    assert [p["point"] for p in points[0]] == ["0", "1", "2"]
    for other in points[1:]:  # the same points; the widths summed in another order (to 1e-12)
        assert len(other) == len(points[0])
        for got, want in zip(other, points[0]):
            assert got.keys() == want.keys()
            for k, v in want.items():
                assert got[k] == (pytest.approx(v, rel=1e-12) if isinstance(v, float) else v), k


def test_time_in_another_case_on_the_streamed_engines(timed, scheduler):
    args = ("monitor", str(timed), "--time", "time", "--window", "1D")
    stream = _json(*args, "--engine", "stream", "--chunk-rows", "50")
    dask = _json(*args, "--engine", "dask", "--scheduler", scheduler, "--chunk-rows", "50")
    assert [w["n_rows"] for w in stream["windows"]] == [24] * 16 + [16]
    assert [w["n_rows"] for w in dask["windows"]] == [w["n_rows"] for w in stream["windows"]]


def test_a_further_column_is_kept_under_the_name_asked_for_in_memory_and_streamed(timed):
    """``Loaded.extra`` (memory) and a streamed piece's ``extra`` both key a further column by the name asked
    for, not the file's spelling, so a fold reads ``piece.extra[name]`` the same way on every engine."""
    from uqeval.config import Settings
    from uqeval.engine.fold import over_rows
    from uqeval.engine.options import EngineOptions
    from uqeval.io.load import load_predictions

    loaded = load_predictions(timed, Settings(), extra=("site", "TIME", "absent"))
    assert list(loaded.extra) == ["site", "TIME"]
    assert loaded.extra["site"].to_pylist() == pd.read_parquet(timed)["Site"].tolist()

    class Keys:  # a fold state that records the extra columns' names of its pieces
        def __init__(self) -> None:
            self.seen: set[tuple[str, ...]] = set()

        def add(self, piece) -> None:
            self.seen.add(tuple(sorted(piece.extra)))

        def merge(self, other):
            self.seen |= other.seen
            return self

    for engine in (EngineOptions("memory"), EngineOptions("stream", chunk_rows=100)):
        with over_rows(str(timed), Settings(), engine, extra=("site", "TIME")) as run:
            assert run.fold(Keys).seen == {("TIME", "site")}
