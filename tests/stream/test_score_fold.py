"""``score``'s memory engine is the one-batch case of its fold (issue 36): the engine hands one state one piece
holding the whole loaded input; that state keeps it (``needs_all_rows``) and no sums, and finishes with the exact
in-memory computation; merged with another state, or given a second piece, it turns into sums. Reference: the
sums of the stream engine over the same rows (one batch of every row: the same additions)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uqeval.catalogue import states
from uqeval.commands.score.stream import new_partial, score_state, score_with_engine
from uqeval.config import Settings
from uqeval.engine.fold import in_memory, over_rows
from uqeval.engine.options import EngineOptions
from uqeval.io.load import load_predictions

from ..conftest import assert_tree_close

SETTINGS = Settings(columns={"y_true": "y", "mean": "mu", "std": "sigma"})


def _file(tmp_path, n: int = 300):
    rng = np.random.default_rng(5)
    mu = rng.normal(size=n)
    sigma = rng.uniform(0.5, 1.5, n)
    table = {"y": mu + sigma * rng.normal(size=n), "mu": mu, "sigma": sigma, "g": rng.integers(0, 3, n)}
    path = tmp_path / "gauss.parquet"
    pq.write_table(pa.table(table), path)
    return path


def _metrics(part) -> dict:
    return states.finalize(part.state, part.settings, None, None, {})[0]


def test_the_memory_engine_hands_one_piece_of_every_row(tmp_path):
    path = _file(tmp_path)
    with over_rows(path, SETTINGS, EngineOptions("memory"), weights_ok=True) as rows:
        assert rows.engine == "memory" and rows.parts is None
        part = rows.fold(partial(new_partial, SETTINGS, True))
    assert part.kept is not None and part.kept.rows == 300 and part.kept.offset == 0
    assert part.state == {}  # no sums: the exact finish needs none


@pytest.mark.parametrize("by", [None, "g"])
def test_a_kept_state_merged_or_given_a_second_piece_turns_into_sums(tmp_path, by):
    path = _file(tmp_path)
    settings = Settings(columns={**SETTINGS.columns, "by": by}) if by else SETTINGS
    kept = in_memory(load_predictions(path, settings, weights_ok=True)).fold(
        partial(new_partial, settings, True)
    )
    _, streamed = score_state(path, settings, EngineOptions("stream", chunk_rows=1000))
    merged = kept.merge(new_partial(settings))
    assert kept.kept is not None and merged.kept is None  # neither part changed
    assert merged.n_rows == streamed.n_rows == 300 and merged.columns == streamed.columns
    for got, want in [(merged, streamed), (kept.merge(kept), streamed.merge(streamed))]:
        assert_tree_close(_metrics(got), _metrics(want), rel=1e-12, nan_ok=True)
        if by:
            assert sorted(got.groups) == sorted(want.groups) == ["0", "1", "2"]
    twice = new_partial(settings, True)
    twice.add(kept.kept)
    twice.add(kept.kept)
    assert twice.kept is None and twice.n_rows == 600
    assert_tree_close(_metrics(twice), _metrics(streamed.merge(streamed)), rel=1e-12, nan_ok=True)


def test_memory_is_one_route_through_the_fold(tmp_path):
    path = _file(tmp_path)
    scored = score_with_engine(path, SETTINGS, EngineOptions("memory"))
    assert scored.loaded is not None and scored.summary["input"]["n_rows"] == 300
    assert "engine" not in scored.summary["input"]  # the in-memory document, as before
    streamed = score_with_engine(path, SETTINGS, EngineOptions("stream", chunk_rows=64))
    assert streamed.loaded is None and streamed.summary["input"]["engine"] == "stream"
    assert streamed.summary["metrics"]["accuracy"]["mae"] == pytest.approx(
        scored.summary["metrics"]["accuracy"]["mae"], rel=1e-12
    )
