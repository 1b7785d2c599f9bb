"""The Poisson bootstrap and sign-flip permutations of :mod:`uqeval.resample`, and compare's use of them.

References: the Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012, "Estimating
uncertainty for massive data streams"), the Monte-Carlo permutation p-value (Phipson & Smyth
2010). The statistical behaviour is checked by simulation; the sums against dense products.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

from uqeval.catalogue import RowStat
from uqeval.commands.compare.core import poisson_bootstrap, sign_flip_tests
from uqeval.errors import UsageError, front_end
from uqeval.resample import (
    AUTO_RULE,
    BLOCK,
    CHUNK,
    Accumulator,
    Resampling,
    _block_bits,
    _blocks,
    _table,
    permutation_p_values,
    poisson_weights,
)


def sign_flips(seed: int, start: int, stop: int, permutations: int) -> np.ndarray:
    """Random signs (+1/-1) of global rows ``start .. stop-1``, ``(permutations, stop - start)`` int8: the
    dense reference for :meth:`Accumulator.update`'s sign flips, drawn from the same bits."""
    n = stop - start
    out = np.empty((n, permutations), dtype=np.int8)
    for c in range(-(-permutations // CHUNK)):
        r0, r1 = c * CHUNK, min(permutations, (c + 1) * CHUNK)
        for g, lo, hi in _blocks(start, stop):
            bits = np.unpackbits(_block_bits(seed, g, c)[lo:hi], axis=1)[:, : r1 - r0]
            at = g * BLOCK + lo - start
            out[at : at + hi - lo, r0:r1] = 2 * bits.astype(np.int8) - 1
    return out.T


# these tests call the core directly and check the flags its messages name (and Python's keywords)
pytestmark = pytest.mark.usefixtures("cli_voice")


def test_the_table_is_poisson_1_to_2_to_the_minus_16():
    counts = np.bincount(_table().astype(int)) / _table().size
    exact = np.array([math.exp(-1) / math.factorial(k) for k in range(counts.size)])
    assert np.max(np.abs(counts - exact)) <= 2.0**-16
    assert abs(_table().mean() - 1) < 2e-5 and abs(_table().var() - 1) < 4e-5


def test_weights_depend_only_on_seed_and_global_row():
    whole = poisson_weights(3, 0, 3 * BLOCK + 17, CHUNK + 9)
    part = poisson_weights(3, BLOCK - 5, 2 * BLOCK + 3, CHUNK + 9)
    np.testing.assert_array_equal(part, whole[:, BLOCK - 5 : 2 * BLOCK + 3])
    # fewer replicates: the first ones are unchanged
    np.testing.assert_array_equal(poisson_weights(3, 0, 100, 7), whole[:7, :100])
    assert not np.array_equal(poisson_weights(4, 0, 100, 7), whole[:7, :100])
    signs = sign_flips(3, 0, 2 * BLOCK, 600)
    np.testing.assert_array_equal(sign_flips(3, 10, 4000, 600), signs[:, 10:4000])
    assert set(np.unique(signs)) == {-1, 1} and abs(signs.mean()) < 0.01


def test_accumulator_sums_equal_dense_products_whatever_the_chunking():
    rng = np.random.default_rng(1)
    n = 2 * BLOCK + 300
    x, code, d = rng.random((n, 3)), rng.integers(0, 7, n), rng.random((n, 2)) - 0.5
    whole = Accumulator(5, 700, 600, 3, (7,), 2)
    whole.update(0, x, [code], d)
    w, eps = poisson_weights(5, 0, n, 700), sign_flips(5, 0, n, 600)
    np.testing.assert_allclose(whole.total, w.sum(axis=1), rtol=1e-13)
    np.testing.assert_allclose(whole.sums, (w @ x).T, rtol=1e-13)
    np.testing.assert_array_equal(whole.counts[0], (w @ np.eye(7)[code]).T)
    np.testing.assert_allclose(whole.flipped, (eps @ d).T, rtol=1e-12, atol=1e-12)
    cuts = [0, 7, 100, BLOCK + 1, BLOCK + 2, n]
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        acc = Accumulator(5, 700, 600, 3, (7,), 2)
        acc.update(a, x[a:b], [code[a:b]], d[a:b])
        parts.append(acc)
    merged = parts[0]
    for acc in parts[:0:-1]:  # merged in another order than the rows
        merged.merge(acc)
    assert merged.rows == n
    np.testing.assert_allclose(merged.sums, whole.sums, rtol=1e-12)
    np.testing.assert_array_equal(merged.counts[0], whole.counts[0])
    np.testing.assert_allclose(merged.flipped, whole.flipped, rtol=1e-12, atol=1e-12)


def test_bootstrap_of_every_form_equals_its_resampler_on_the_same_weights():
    rng = np.random.default_rng(2)
    n = 500
    score, code = rng.exponential(size=n), rng.integers(0, 5, n)
    stats_ = [
        RowStat(score=score),
        RowStat(codes=code, n_codes=5, finish=lambda s, t: s[:, 2] / t),
        RowStat(weighted=lambda w: np.array([np.median(np.repeat(score, wi.astype(int))) for wi in w])),
    ]
    reps = poisson_bootstrap(stats_, n, 40, seed=9)
    w = poisson_weights(9, 0, n, 40)
    for st, rep in zip(stats_, reps):
        np.testing.assert_allclose(rep, st.resampler()(w), rtol=1e-12)


def test_bootstrap_interval_covers_the_true_mean_at_about_the_nominal_rate():
    """200 seeded replications of N=200 from a skewed law: the 95% percentile interval covers the mean."""
    rng = np.random.default_rng(2024)
    hits = 0
    for rep in range(200):
        x = rng.exponential(1.0, size=200)
        (boot,) = poisson_bootstrap([RowStat(score=x)], x.size, 1000, seed=rep)
        lo, hi = np.quantile(boot, [0.025, 0.975])
        hits += lo <= 1.0 <= hi
    assert 0.90 <= hits / 200 <= 0.99


def test_sign_flip_exact_small_case():
    """d = (1, 2, 3): of the 8 sign vectors only all-plus and all-minus reach |sum| >= 6: p = 1/4."""
    p = sign_flip_tests(np.array([[1.0], [2.0], [3.0]]), 40000, seed=0)
    assert p[0] == pytest.approx(0.25, abs=0.01)


def test_sign_flip_identical_scores_give_p_one():
    assert sign_flip_tests(np.zeros((30, 1)), 999, seed=0)[0] == 1.0


def test_sign_flip_p_values_are_uniform_under_the_null_and_detect_a_shift():
    rng = np.random.default_rng(7)
    d = rng.normal(size=(60, 300))  # 300 independent null data sets (columns)
    p = sign_flip_tests(d, 399, seed=1)
    assert 0.01 <= np.mean(p <= 0.05) <= 0.10
    assert 0.40 <= np.mean(p <= 0.5) <= 0.60
    assert stats.kstest(p, "uniform").pvalue > 0.001
    shifted = sign_flip_tests(rng.normal(0.3, 0.5, size=(200, 1)), 2000, seed=0)
    assert shifted[0] == pytest.approx(1 / 2001)  # smallest possible p


def test_sign_flip_is_reproducible_and_chunk_free():
    rng = np.random.default_rng(3)
    d = rng.normal(0.1, size=(5000, 2))
    p1 = sign_flip_tests(d, 999, seed=2)
    np.testing.assert_array_equal(p1, sign_flip_tests(d, 999, seed=2))
    np.testing.assert_array_equal(p1, sign_flip_tests(-d, 999, seed=2))  # two-sided
    acc = Accumulator(2, permutations=999, n_diffs=2)
    for a in range(0, 5000, 777):
        acc.update(a, diffs=d[a : a + 777])
    np.testing.assert_array_equal(permutation_p_values(acc.flipped, d.sum(0), np.abs(d).sum(0)), p1)


@pytest.mark.parametrize("t", [1, 3])
def test_sign_flip_from_blocks_equals_the_matrix(t):
    """compare makes the differences 2**18 rows at a time (a function filling each block) instead of an
    (N, t) matrix: the same p-values; the running column sums add the rows in numpy's order (t >= 2), a
    single column is summed in numpy's pairwise order (PairwiseSum)."""
    rng = np.random.default_rng(11)
    from uqeval.commands.compare.core import BLOCK_ROWS as _ROWS

    n = _ROWS + 1234  # two blocks, the second partial
    d = rng.normal(0.002, 1.0, size=(n, t)) * rng.uniform(0.0, 50.0, size=(n, 1))
    calls = []

    def fill(start, stop, out):
        calls.append((start, stop))
        out[:] = d[start:stop]

    p = sign_flip_tests(fill, 64, seed=4, shape=(n, t))
    np.testing.assert_array_equal(p, sign_flip_tests(d, 64, seed=4))
    assert calls == [(0, _ROWS), (_ROWS, n)]
    if t > 1:  # the running sums first in each block's buffer: bit for bit numpy's column sums
        total = np.zeros(t)
        for start in range(0, n, _ROWS):
            total = np.add.reduce(np.vstack([total[None], d[start : start + _ROWS]]), axis=0)
        np.testing.assert_array_equal(total, d.sum(axis=0))


# --------------------------------------------------------------------------- Resampling: parsed and checked once


@pytest.mark.parametrize(
    ("cluster", "block_size", "want"),
    [
        (None, None, Resampling()),
        ("site", None, Resampling(cluster="site")),
        (None, "12", Resampling(block_size=12)),
        (None, " 12 ", Resampling(block_size=12)),
        (None, 12, Resampling(block_size=12)),
        (None, np.int64(3), Resampling(block_size=3)),
        (None, "AUTO", Resampling(block_size="auto")),
    ],
)
def test_resampling_parses_option_text_and_keywords(cluster, block_size, want):
    got = Resampling.parse(cluster, block_size)
    assert got == want and bool(got) == (cluster is not None or block_size is not None)


@pytest.mark.parametrize(
    ("cluster", "block_size", "cli", "python"),
    [
        (
            "site",
            3,
            "give either --cluster or --block-size, not both",
            "give either cluster= or block_size=, not both",
        ),
        (
            None,
            "0",
            "--block-size takes an integer >= 1 or 'auto', got '0'",
            "block_size= takes an integer >= 1 or 'auto', got '0'",
        ),
        (
            None,
            "big",
            "--block-size takes an integer >= 1 or 'auto', got 'big'",
            "block_size= takes an integer >= 1 or 'auto', got 'big'",
        ),
        (None, 2.5, "--block-size takes an integer >= 1 or 'auto', got 2.5", "block_size= takes an integer"),
        (
            None,
            True,
            "--block-size takes an integer >= 1 or 'auto', got True",
            "block_size= takes an integer",
        ),
    ],
)
def test_resampling_refusals_name_the_options_as_the_front_end_spells_them(cluster, block_size, cli, python):
    with pytest.raises(UsageError, match=re.escape(cli)):
        Resampling.parse(cluster, block_size)
    with front_end("python"), pytest.raises(UsageError, match=re.escape(python)):
        Resampling.parse(cluster, block_size)
    if not isinstance(block_size, str):  # made directly: the same checks
        with pytest.raises(UsageError, match=re.escape(cli)):
            Resampling(cluster, block_size)


def test_resampling_units_and_their_description():
    assert Resampling().units(5) == (Resampling(), None, {"unit": "row"})
    done, units, info = Resampling("site").units(5, np.array(["b", "a", "b", "c", "a"]))
    assert done == Resampling("site") and units.tolist() == [0, 1, 0, 2, 1]
    assert info == {"unit": "cluster", "clusters": 3}
    done, units, info = Resampling(block_size=2).units(5)
    assert units.tolist() == [0, 0, 1, 1, 2]
    assert info == {
        "unit": "block",
        "block_size": 2,
        "blocks": 3,
        "bootstrap": "circular blocks",
        "sign_flip": "non-overlapping blocks",
    }
    done, units, info = Resampling(block_size="auto").units(6, auto_size=lambda: 3)
    assert done == Resampling(block_size=3) and units.tolist() == [0, 0, 0, 1, 1, 1]
    assert list(info) == ["unit", "block_size", "blocks", "block_size_rule", "bootstrap", "sign_flip"]
    assert info["block_size_rule"] == AUTO_RULE and info["bootstrap"] == "circular blocks"
    assert Resampling(block_size=1).describe(4)["bootstrap"] == "rows"  # blocks of one row: the row bootstrap
