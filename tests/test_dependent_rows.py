"""Dependent rows (issue 25): compare's cluster and block resampling (``cluster=``, ``block_size=``,
``--cluster``, ``--block-size``), the serial-correlation note, and the size of the tests under the null on
MA(1) and clustered data, where the independent-rows versions are oversized."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.catalogue import RowStat
from uqeval.cli import app
from uqeval.commands.compare.core import poisson_bootstrap, sign_flip_tests
from uqeval.errors import InputError, UsageError
from uqeval.resample import (
    block_starts,
    circular_block_weights,
    optimal_block_size,
    poisson_weights,
    resampling_units,
    unit_weights,
    window_sums,
)


def _ma1(rng, n, theta=0.8):
    e = rng.normal(size=n + 1)
    return e[1:] + theta * e[:-1]


def _models(n=600, seed=3, theta=0.9):
    """Two equally good Gaussian models whose errors are MA(1) in row order."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    a = uqeval.Gaussian(y_true=y, mean=y + 0.4 * _ma1(rng, n, theta), std=np.ones(n))
    b = uqeval.Gaussian(y_true=y, mean=y + 0.4 * _ma1(rng, n, theta), std=np.ones(n))
    return {"a": a, "b": b}


def _numbers(out):
    """The intervals and p-values of a comparison document."""
    vals = [
        (m, k, v["low"], v["high"], None if v["diff_vs_best"] is None else v["diff_vs_best"]["low"])
        for m, e in out["metrics"].items()
        for k, v in e["values"].items()
    ]
    return vals, [t["permutation_p"] for t in out["tests"]]


# --------------------------------------------------------------------------- units


def test_units_of_clusters_and_blocks():
    units, info = resampling_units(7, cluster=np.array(["x", "b", "x", "a", "b", "a", "c"]))
    assert units.tolist() == [0, 1, 0, 2, 1, 2, 3]  # numbered in order of first appearance
    assert info == {"unit": "cluster", "clusters": 4}
    units, info = resampling_units(7, block_size=3)
    assert units.tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert info == {"unit": "block", "block_size": 3, "blocks": 3}
    assert resampling_units(7) == (None, {"unit": "row"})
    with pytest.raises(InputError, match="one label per row"):
        resampling_units(7, cluster=np.arange(6))
    with pytest.raises(InputError, match="first at row 1"):
        resampling_units(3, cluster=np.array(["a", None, "b"], dtype=object))
    with pytest.raises(UsageError, match="integer >= 1"):  # a bad option value (exit code 2)
        resampling_units(7, block_size=0)


def test_optimal_block_size_grows_with_dependence():
    rng = np.random.default_rng(0)
    iid = optimal_block_size(rng.normal(size=4000))
    ma = optimal_block_size(_ma1(rng, 4000))
    ar = np.zeros(4000)
    u = rng.normal(size=4000)
    for i in range(1, 4000):
        ar[i] = 0.8 * ar[i - 1] + u[i]
    strong = optimal_block_size(ar)
    assert iid <= 3 < ma < strong <= 3 * math.sqrt(4000)
    assert optimal_block_size(np.ones(50)) == 1


# --------------------------------------------------------------------------- the resampling itself


def test_cluster_bootstrap_is_the_weighted_mean_with_one_weight_per_cluster():
    # slow, obviously correct reference: expand the clusters' Poisson weights to their rows
    rng = np.random.default_rng(5)
    n, b = 500, 64
    score = rng.gamma(2.0, size=n)
    codes = rng.integers(0, 4, size=n)
    units, _ = resampling_units(n, cluster=rng.integers(0, 37, size=n))
    count = int(units.max()) + 1
    w = poisson_weights(11, 0, count, b)[:, units]
    assert np.array_equal(w, unit_weights(11, units, count, 0, b))
    want = (w @ score) / w.sum(axis=1)
    got = poisson_bootstrap([RowStat(score=score)], n, b, 11, units)[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # a block score (made block by block) resamples the same
    got = poisson_bootstrap([lambda s, e: score[s:e]], n, b, 11, units)[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)

    # terms and category codes (the average-calibration form), and a resampler of row weights (order
    # statistics): each equals its own resampler at the expanded weights
    def finish(sums, total):
        return sums[:, 0] / total + sums[:, 1:] @ np.arange(4.0) / total

    def weighted_max(weights):
        return np.where(weights > 0, score, -np.inf).max(axis=1)

    for stat in (
        RowStat(terms=score[:, None], codes=codes, n_codes=4, finish=finish),
        RowStat(weighted=weighted_max),
    ):
        got = poisson_bootstrap([stat], n, b, 11, units)[0]
        np.testing.assert_allclose(got, stat.resampler()(w), rtol=1e-12)


def test_circular_block_bootstrap_against_a_slow_reference():
    # every drawn block's rows counted once, wrapping around the end (Politis & Romano 1992)
    rng = np.random.default_rng(8)
    for n, size in ((50, 7), (49, 7), (10, 13), (3, 2)):
        starts = block_starts(5, n, size, 0, 4)
        assert starts.shape == (4, -(-n // size)) and starts.min() >= 0 and starts.max() < n
        want = np.zeros((4, n))
        for r in range(4):
            for s0 in starts[r]:
                for j in range(size):
                    want[r, (s0 + j) % n] += 1
        assert np.array_equal(circular_block_weights(starts, n, size), want)
        assert np.array_equal(block_starts(5, n, size, 2, 3), starts[2:3])  # keyed by replicate
        x = rng.normal(size=(n, 2))
        slow = np.array([[x[(s0 + np.arange(size)) % n, c].sum() for c in range(2)] for s0 in range(n)])
        np.testing.assert_allclose(window_sums(x, size), slow, rtol=1e-13, atol=1e-13)
    n, size, b = 500, 9, 64
    score = rng.gamma(2.0, size=n)
    codes = rng.integers(0, 4, size=n)
    w = circular_block_weights(block_starts(3, n, size, 0, b), n, size)
    assert np.all(w.sum(axis=1) == 56 * size)

    def finish(sums, total):
        return sums[:, 0] / total + sums[:, 1:] @ np.arange(4.0) / total

    def weighted_max(weights):
        return np.where(weights > 0, score, -np.inf).max(axis=1)

    for stat in (
        RowStat(score=score),
        RowStat(terms=score[:, None], codes=codes, n_codes=4, finish=finish),
        RowStat(weighted=weighted_max),
    ):
        got = poisson_bootstrap([stat, lambda s, e: score[s:e]], n, b, 3, None, size)
        np.testing.assert_allclose(got[0], stat.resampler()(w), rtol=1e-12)
        np.testing.assert_allclose(got[1], (w @ score) / w.sum(axis=1), rtol=1e-12)


def test_sign_flip_by_unit_flips_the_units_sums():
    rng = np.random.default_rng(2)
    d = rng.normal(size=(300, 3))
    units, _ = resampling_units(300, block_size=7)
    sums = np.stack([np.bincount(units, weights=d[:, j]) for j in range(3)], axis=1)
    want = sign_flip_tests(sums, 999, 4)
    np.testing.assert_array_equal(sign_flip_tests(d, 999, 4, units=units), want)

    def block(start, stop, out):
        out[:] = d[start:stop]

    np.testing.assert_array_equal(sign_flip_tests(block, 999, 4, shape=d.shape, units=units), want)


def test_one_row_units_reproduce_independent_rows_bit_for_bit():
    models = _models(n=400)
    kw = dict(metrics=["crps", "nll", "ma_cal"], n_boot=200, n_permutations=499)
    rows = _numbers(uqeval.compare(models, **kw))
    assert _numbers(uqeval.compare(models, block_size=1, **kw)) == rows
    assert _numbers(uqeval.compare(models, cluster=np.arange(400)[::-1], **kw)) == rows


def test_cluster_labels_only_group_rows():
    models = _models(n=300)
    kw = dict(metrics=["crps"], n_boot=100, n_permutations=199)
    ints = np.arange(300) // 15
    names = np.array([f"site {v:02d}" for v in ints])
    a = uqeval.compare(models, cluster=ints, **kw)
    assert a["settings"]["resampling"] == {"unit": "cluster", "clusters": 20}
    assert _numbers(uqeval.compare(models, cluster=names, **kw)) == _numbers(a)
    # the sign flip of blocks of 15 rows flips the same clusters; the bootstrap draws circular blocks
    blocks = uqeval.compare(models, block_size=15, **kw)
    assert blocks["settings"]["resampling"] == {
        "unit": "block",
        "block_size": 15,
        "blocks": 20,
        "bootstrap": "circular blocks",
        "sign_flip": "non-overlapping blocks",
    }
    assert _numbers(blocks)[1] == _numbers(a)[1]
    assert _numbers(blocks)[0] != _numbers(a)[0]
    assert _numbers(uqeval.compare(models, **kw)) != _numbers(a)


def test_blocks_widen_the_intervals_of_correlated_rows():
    models = _models(n=2000, theta=0.9)
    kw = dict(metrics=["crps"], n_boot=400, n_permutations=0)
    iid = uqeval.compare(models, **kw)["metrics"]["crps"]["values"]["a"]["diff_vs_best"]
    out = uqeval.compare(models, block_size="auto", **kw)
    r = out["settings"]["resampling"]
    assert r["unit"] == "block" and r["block_size"] > 1 and "Politis" in r["block_size_rule"]
    blk = out["metrics"]["crps"]["values"]["a"]["diff_vs_best"]
    if blk is None:  # the other model is best: its difference
        iid = uqeval.compare(models, **kw)["metrics"]["crps"]["values"]["b"]["diff_vs_best"]
        blk = out["metrics"]["crps"]["values"]["b"]["diff_vs_best"]
    assert blk["high"] - blk["low"] > 1.15 * (iid["high"] - iid["low"])


def test_api_refuses_both_and_bad_sizes():
    models = _models(n=100)
    with pytest.raises(UsageError, match="not both"):
        uqeval.compare(models, cluster=np.zeros(100), block_size=4, n_boot=10, n_permutations=0)
    with pytest.raises(UsageError, match="'auto'"):
        uqeval.compare(models, block_size="big", n_boot=10, n_permutations=0)
    with pytest.raises(InputError, match="one label per row"):
        uqeval.compare(models, cluster=np.zeros(99), n_boot=10, n_permutations=0)


# --------------------------------------------------------------------------- the serial-correlation note


def test_note_when_rows_look_serially_correlated():
    kw = dict(metrics=["crps"], n_boot=0, n_permutations=0)
    out = uqeval.compare(_models(n=1000, theta=0.9), **kw)
    # from Python the note names the keywords (it showed the CLI's --block-size to Python users)
    assert any("serially correlated" in n and "block_size='N'" in n for n in out["notes"]), out["notes"]
    assert not any("serially" in n for n in uqeval.compare(_models(n=1000, theta=0.0), **kw)["notes"])
    blocks = uqeval.compare(_models(n=1000, theta=0.9), block_size=10, **kw)
    assert not any("serially" in n for n in blocks["notes"])


# --------------------------------------------------------------------------- sizes under the null


def _size(p, alpha=0.05):
    return float(np.mean(np.asarray(p) < alpha)), math.sqrt(alpha * (1 - alpha) / len(p))


def test_block_and_cluster_sign_flip_hold_their_size():
    rng = np.random.default_rng(2025)
    reps, n = 1000, 200
    ma = np.stack([_ma1(rng, n) for _ in range(reps)], axis=1)
    blocks, _ = resampling_units(n, block_size=10)
    groups = np.arange(n) // 10
    clustered = rng.normal(size=(20, reps))[groups] + rng.normal(size=(n, reps))
    clusters, _ = resampling_units(n, cluster=groups)
    for data, units, what in ((ma, blocks, "MA(1), blocks of 10"), (clustered, clusters, "20 clusters")):
        size, se = _size(sign_flip_tests(data, 999, 0, units=units))
        assert abs(size - 0.05) < 3.5 * se, f"{what}: size {size:.4f}"
        iid, _ = _size(sign_flip_tests(data, 999, 0))
        assert iid > 0.05 + 3.5 * se, f"{what}: the independent-rows test should be oversized, got {iid:.4f}"


def test_block_and_cluster_bootstrap_intervals_hold_their_size():
    # the share of null data sets whose 95 % interval of the mean difference excludes 0
    rng = np.random.default_rng(7)
    reps, n = 400, 1000
    blocks, _ = resampling_units(n, block_size=10)
    groups = np.arange(n) // 10
    clusters, _ = resampling_units(n, cluster=groups)
    cases = (
        (lambda: _ma1(rng, n), blocks, "MA(1), blocks of 10"),
        (lambda: rng.normal(size=100)[groups] + rng.normal(size=n), clusters, "100 clusters"),
    )
    for make, units, what in cases:
        miss, miss_iid = [], []
        size = 10 if what.startswith("MA") else None  # blocks: the circular block bootstrap
        for r in range(reps):
            d = make()
            for u, out in ((units, miss), (None, miss_iid)):
                rep = poisson_bootstrap([RowStat(score=d)], n, 199, r, u, size if u is not None else None)[0]
                lo, hi = np.quantile(rep, [0.025, 0.975])
                out.append(0.0 if lo <= 0 <= hi else 1.0)
        size, se = float(np.mean(miss)), math.sqrt(0.05 * 0.95 / reps)
        assert abs(size - 0.05) < 3.5 * se, f"{what}: size {size:.4f}"
        assert np.mean(miss_iid) > 0.05 + 3.5 * se, what


# --------------------------------------------------------------------------- CLI


@pytest.fixture
def files(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(9)
    n = 400
    y = rng.normal(size=n)
    out = []
    for name in ("a", "b"):
        df = pd.DataFrame(
            {"y": y, "mean": y + 0.4 * _ma1(rng, n, 0.9), "std": np.ones(n), "site": np.arange(n) // 20}
        )
        path = tmp_path / f"{name}.csv"
        df.to_csv(path, index=False)
        out.append(str(path))
    return out


def _run(args):
    return CliRunner().invoke(app, ["compare", *args, "-m", "crps", "-b", "100", "--permutations", "99"])


def test_cli_cluster_and_block_size(files):
    r = _run([*files, "-f", "json", "--cluster", "site"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["settings"]["resampling"] == {"unit": "cluster", "clusters": 20}
    api = uqeval.compare(
        {
            "a": uqeval.load_predictions(files[0]).prediction,
            "b": uqeval.load_predictions(files[1]).prediction,
        },
        metrics=["crps"],
        n_boot=100,
        n_permutations=99,
        cluster=np.arange(400) // 20,
    )
    assert _numbers(api)[1] == [t["permutation_p"] for t in doc["tests"]]
    r = _run([*files, "-f", "json", "--block-size", "auto"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["settings"]["resampling"]["unit"] == "block"
    r = _run([*files, "--block-size", "8"])
    assert r.exit_code == 0, r.output
    assert "in blocks of 8 rows" in r.stdout
    r = _run([*files, "-f", "json"])
    assert "resampling" not in json.loads(r.stdout)["settings"]
    assert "serially correlated" in r.output


@pytest.mark.parametrize(
    "args,code,message",
    [
        (["--block-size", "0"], 2, "integer >= 1 or 'auto'"),
        (["--block-size", "x"], 2, "integer >= 1 or 'auto'"),
        (["--cluster", "site", "--block-size", "3"], 2, "not both"),
        (["--cluster", "nosuch"], 3, "column 'nosuch' not found"),
    ],
)
def test_cli_refusals(files, args, code, message):
    r = _run([*files, *args])
    assert r.exit_code == code, r.output
    assert message in r.output
