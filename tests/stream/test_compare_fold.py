"""``compare``'s memory engine is the one-batch case of its fold (issue 36): the engine hands one state one piece
holding every row of the aligned models; that state (``KeptCompare``) keeps it and no sums, and finishes with
the exact in-memory computation (``compare_models``, called: the same document); given a second piece, or
merged, it turns into sums. Reference: the stream engine's state over the same rows (one batch of every row:
the same additions; merged states' sums to 1e-12), finished by the same ``finish``."""

from __future__ import annotations

from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uqeval.commands.compare.core import CompareOptions, align_models, compare_models
from uqeval.commands.compare.models import Model
from uqeval.commands.compare.run import _whole, run_compare
from uqeval.commands.compare.stream import ComparePartial, KeptCompare, finish, plan_stream, stream_units
from uqeval.config import Settings
from uqeval.engine.aligned import in_memory, open_models, over_aligned
from uqeval.engine.options import EngineOptions
from uqeval.io.load import load_predictions
from uqeval.resample import Resampling

from ..conftest import assert_tree_close

N = 5000  # more than resample.KEY_ROWS: the sign flips' seed comes from the first batch on either side
NAMES = ["a", "b"]
COLUMNS = {"y_true": "y", "mean": "mu", "std": "sigma"}


def _files(tmp_path, twice: bool = False) -> list[str]:
    rng = np.random.default_rng(7)
    y = rng.normal(size=N)
    w = rng.uniform(0.0, 2.0, N)
    w[::50] = 0.0
    out = []
    for name, mu, sigma in (("a", 0.1 * y, 1.0), ("b", np.zeros(N), 1.4)):
        table = {"y": y, "mu": mu, "sigma": np.full(N, sigma), "w": w, "cl": np.arange(N) // 100}
        table = {k: np.concatenate([v, v]) if twice else v for k, v in table.items()}
        path = tmp_path / f"{name}{'2' if twice else ''}.parquet"
        pq.write_table(pa.table(table), path)
        out.append(str(path))
    return out


CASES = {
    "rows": ({}, Resampling()),
    "weights": ({"weights": "w"}, Resampling()),
    "clusters": ({}, Resampling(cluster="cl")),
    "blocks": ({}, Resampling(block_size=25)),
}


def _request(case: str):
    extra, resampling = CASES[case]
    settings = Settings(columns={**COLUMNS, **extra})
    return settings, CompareOptions(None, 60, 0.9, 3, 200, "all", 1, resampling)


def _streamed(specs, settings, options):
    """The stream engine's merged state of ``specs`` in one batch of every row (or of each half)."""
    models = open_models(specs, settings)
    units = stream_units(models, options.resampling)
    with over_aligned(specs, settings, EngineOptions("stream", chunk_rows=N), None, models) as run:
        layout, finishes = plan_stream(specs, units, run.head(), NAMES, settings, options)
        part = run.fold(partial(ComparePartial, layout), keyed=True)
    return models, part, finishes


def _doc(models, part, finishes) -> dict:
    out = finish(models, part, finishes, "stream", {"chunk_rows": N})
    return {k: out[k] for k in ("n_rows", "metrics", "ranks", "tests", "notes", "weights") if k in out}


def _kept(specs, settings, options) -> KeptCompare:
    whole = _whole(specs, NAMES, settings, options, None, None, None, None)
    return in_memory(whole).fold(partial(KeptCompare, NAMES, settings, options), keyed=True)


def test_the_memory_engine_hands_one_piece_and_finishes_with_compare_models(tmp_path):
    specs = _files(tmp_path)
    settings, options = _request("rows")
    state = _kept(specs, settings, options)
    assert state.kept is not None and state.sums is None and state.kept.rows == N
    models = [Model(n, load_predictions(s, settings).prediction, {"path": s}) for n, s in zip(NAMES, specs)]
    want = compare_models(align_models(models), settings, options)
    got = run_compare(specs, settings, options, EngineOptions("memory"), names=NAMES)
    assert got["metrics"] == want["metrics"] and got["tests"] == want["tests"]
    assert "input" not in got  # the in-memory document, as before


@pytest.mark.parametrize("case", list(CASES))
def test_a_kept_state_given_a_second_piece_or_merged_turns_into_the_streamed_sums(tmp_path, case):
    specs, doubled = _files(tmp_path), _files(tmp_path, twice=True)
    settings, options = _request(case)
    kept = _kept(specs, settings, options)
    models, once, finishes = _streamed(specs, settings, options)
    summed = kept.summed()
    assert kept.kept is not None and summed.n == once.n  # (the rows of weight 0 dropped, as streamed)
    assert _doc(models, summed, kept.finishes) == _doc(models, once, finishes)
    models2, twice, finishes2 = _streamed(doubled, settings, options)
    merged = kept.merge(kept)
    assert kept.kept is not None and kept.sums is None and merged.kept is None  # neither part changed
    grown = KeptCompare(NAMES, settings, options)
    grown.add(kept.kept)
    grown.add(kept.kept)
    assert grown.kept is None
    want = _doc(models2, twice, finishes2)
    assert _doc(models2, grown.sums, grown.finishes) == want  # the same additions
    assert merged.sums is not None and merged.sums.n == twice.n  # two states' sums added: to 1e-12
    assert_tree_close(_doc(models2, merged.sums, merged.finishes), want, rel=1e-12, nan_ok=True)


def test_what_the_stream_engine_does_not_fold_is_refused_when_turned_into_sums(tmp_path):
    specs = _files(tmp_path)
    settings, options = _request("rows")
    whole = _whole(specs, NAMES, settings, options, None, None, None, None)
    state = KeptCompare(NAMES, settings, options)
    state.add(whole._replace(joined=True))
    with pytest.raises(Exception, match="needs every row in memory"):
        state.merge(state)
