"""`uqeval coverage`'s points (commands.coverage.core.run_coverage) against a plain reference: the cells of the
string-sorted --by / --points-by labels, each scored by coverage_metrics on its own rows (issue 18 made
the cells from integer codes, used the prediction itself for a single cell and scores in blocks of rows)."""

import numpy as np

from uqeval.commands.coverage.core import run_coverage
from uqeval.commands.coverage.stream import Cells, points_of
from uqeval.commands.score.core import group_labels
from uqeval.config import Settings
from uqeval.io.load import Loaded
from uqeval.metrics.blocks import BLOCK
from uqeval.metrics.intervals import coverage_metrics, level_key
from uqeval.predictions import Gaussian, Samples

N = 2 * BLOCK + 101


def _reference(method, loaded, points, levels, y_std=None):
    pred, n = loaded.prediction, loaded.prediction.n
    facets = group_labels(loaded.groups) if loaded.groups is not None else np.full(n, "all")
    pts = group_labels(points) if points is not None else np.full(n, "all")
    out = []
    for f in sorted(set(facets.tolist())):
        for q in sorted(set(pts.tolist())):
            idx = np.flatnonzero((facets == f) & (pts == q))
            if not idx.size:
                continue
            sub = pred.subset(idx)
            for lv in levels:
                m = coverage_metrics(
                    sub.y_true, *sub.interval(lv), lv, y_std=y_std, shares=sub.coverage_shares(lv)
                )
                out.append(
                    {
                        "method": method,
                        "file": loaded.info["path"],
                        "facet": f,
                        "point": q,
                        "level": level_key(lv),
                        "n_rows": int(idx.size),
                        **{k: m[k] for k in ("coverage", "width", "width_norm") if k in m},
                    }
                )
    return out


def _points(method, loaded, points, settings):
    """The records of ``loaded`` with ``points`` (--points-by values) in memory: its rows as the one batch of
    the fold, as :func:`run_coverage` folds a file it read (Python's containers carry no points)."""
    if points is None:
        return run_coverage([(method, loaded)], settings)["points"]
    cells = Cells(loaded.info["path"], settings, None)
    cells.add_rows(loaded.prediction, loaded.weights, loaded.groups, points)
    return points_of([(method, cells)])[0]


def _gaussian(seed=0, n=N):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    return Gaussian(mean, std=np.exp(rng.normal(size=n) * 0.3), y_true=mean + rng.normal(size=n))


def test_mixed_labels_give_string_sorted_records_equal_to_the_reference():
    rng = np.random.default_rng(5)
    pool = np.array(
        [10, 2, "b", "A", None, 2.0, 2.5, True, "10"], dtype=object
    )  # mixed types, None, "10" vs 10
    by = pool[rng.integers(0, len(pool), N)]
    points = np.array(["x", "y", 3], dtype=object)[rng.integers(0, 3, N)]
    loaded = Loaded(_gaussian(), {"path": "g.parquet"}, groups=by)
    settings = Settings(levels=(0.5, 0.9), y_std=2.0)
    got = _points("m", loaded, points, settings)
    want = _reference("m", loaded, points, (0.5, 0.9), y_std=2.0)
    assert got == want
    assert [r["facet"] for r in got] == sorted(
        r["facet"] for r in got
    )  # string order: "10" < "2" < "A" < ...


def test_one_cell_uses_the_whole_prediction_with_the_subset_numbers():
    loaded = Loaded(_gaussian(1), {"path": "g.parquet"})
    settings = Settings(levels=(0.95,))
    whole = _points("m", loaded, None, settings)
    assert whole == _reference("m", loaded, None, (0.95,))
    assert [(r["facet"], r["point"], r["n_rows"]) for r in whole] == [("all", "all", N)]
    # a constant --by column: one cell too, named by its label, the same numbers
    const = Loaded(loaded.prediction, {"path": "g.parquet"}, groups=np.full(N, 3.0))
    one = _points("m", const, None, settings)
    assert [r["facet"] for r in one] == ["3"]
    assert {k: v for k, v in one[0].items() if k != "facet"} == {
        k: v for k, v in whole[0].items() if k != "facet"
    }


def test_samples_in_blocks_equal_the_reference():
    rng = np.random.default_rng(2)
    n = BLOCK + 33
    samples = rng.normal(size=(n, 8))
    pred = Samples(samples, y_true=rng.normal(size=n))
    loaded = Loaded(pred, {"path": "s.parquet"}, groups=rng.integers(0, 2, n))
    settings = Settings(levels=(0.5, 0.8))
    assert _points("s", loaded, None, settings) == _reference("s", loaded, None, (0.5, 0.8))
