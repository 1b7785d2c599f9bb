"""Block-by-block summaries (issue 18, memory) equal their whole-array forms bit for bit: the UCC summary
with bounds handed out in blocks, its miss rates, areas and minimum-cost point, and interval coverage fed
in blocks (several blocks of rows, tie groups across block ends, zero widths, rows never covered)."""

import itertools

import numpy as np
import pytest

from uqeval.errors import InputError
from uqeval.metrics import ucc as U
from uqeval.metrics.blocks import BLOCK, trapezoid
from uqeval.metrics.intervals import CoverageSums, coverage_metrics, coverage_rows

N = 3 * BLOCK + 17


def _band(ties: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    y, p = rng.normal(size=N), 0.3 * rng.normal(size=N)
    s = np.abs(rng.normal(size=N))
    if ties:  # repeated critical scales (tie groups across block ends), y == pred and zero widths
        y, p, s = np.round(y, 1), np.round(p, 1), np.round(s, 1)
    return y, p, p - s, p + 1.3 * s


def _whole_summary(y, p, lo, hi, x_axis, y_axis, **kw):
    """ucc_summary as it was: both full curves (all four metrics) from the whole arrays."""
    _, d, zl, zu = U._validate(y, p, lo, hi)
    unit = U._unit(y, kw.get("normalize", "std"))
    model = U._curve_of(*U._scales(d, zl, zu), d.size, x_axis, y_axis, kw.get("normalize", "std"), unit)
    const = U._curve_of(*U._scales(d, None, None), d.size, x_axis, y_axis, kw.get("normalize", "std"), unit)
    return U.summary_of_curves(
        model,
        const,
        U._metrics_at(d, zl, zu, 1.0, unit),
        U._check_range(kw.get("partial_x"), "x"),
        U._check_range(kw.get("partial_y"), "y"),
        kw.get("cost", 0.5),
    )


@pytest.mark.parametrize("ties", [False, True])
def test_ucc_summary_rows_equals_the_whole_arrays_bit_for_bit(ties):
    y, p, lo, hi = _band(ties)
    for x_axis, y_axis in itertools.permutations(U.AXES, 2):
        for kw in ({}, {"partial_x": (0.1, 0.9)}, {"partial_y": (0.1, 0.5), "cost": 0.3}):
            want = _whole_summary(y, p, lo, hi, x_axis, y_axis, **kw)
            assert U.ucc_summary(y, p, lo, hi, x_axis=x_axis, y_axis=y_axis, **kw) == want
            got = U.ucc_summary_rows(
                y, p, lambda a, b: (lo[a:b], hi[a:b]), x_axis=x_axis, y_axis=y_axis, **kw
            )
            assert got == want


def test_ucc_summary_rows_bad_bounds_give_the_whole_array_message():
    y, p, lo, hi = _band(False, seed=1)
    lo = lo.copy()
    lo[BLOCK + 3] = p[BLOCK + 3] + 1.0  # lower above pred in the second block
    with pytest.raises(InputError) as whole:
        U.ucc_summary(y, p, lo, hi)
    with pytest.raises(InputError) as blocks:
        U.ucc_summary_rows(y, p, lambda a, b: (lo[a:b], hi[a:b]))
    assert str(blocks.value) == str(whole.value) and f"first at row {BLOCK + 3}" in str(whole.value)


@pytest.mark.parametrize("ties", [False, True])
def test_sweep_miss_rates_count_whole_tie_groups(ties):
    y, p, lo, hi = _band(ties, seed=2)
    _, d, zl, zu = U._validate(y, p, lo, hi)
    k = U._active(d, zl, zu)[0]
    ks, m = U._sweep(k[None, :].copy(), None, None, np.ones(1), ("missrate",))
    # by hand: the share of rows whose critical scale exceeds the point's (ties are covered together)
    want = (N - np.searchsorted(ks[0], ks[0], side="right")) / N
    np.testing.assert_array_equal(m["missrate"][0], want)
    # a batch of curves (the permutation test) gives each row's own miss rates
    two = np.stack([k, k[::-1]])
    ks2, m2 = U._sweep(two, None, None, np.ones(2), ("missrate",))
    np.testing.assert_array_equal(m2["missrate"][0], want)
    np.testing.assert_array_equal(m2["missrate"][1], want)


def test_trapezoid_and_min_cost_point_in_blocks():
    rng = np.random.default_rng(3)
    x = np.sort(rng.normal(size=N))
    y = np.round(rng.random(N), 2)
    assert trapezoid(x, y) == float(np.sum(np.diff(x) * (y[1:] + y[:-1])) * 0.5)
    assert trapezoid(x[:1], y[:1]) == 0.0
    curve = U.UCCCurve(
        k=np.arange(N, dtype=float),
        bandwidth=x,
        missrate=y,
        excess=None,
        deficit=None,
        x_axis="bandwidth",
        y_axis="missrate",
        normalize="none",
        unit=1.0,
        n_rows=N,
    )
    c = 0.25 * x + 0.75 * y
    best = np.flatnonzero(c == c.min())
    op = U._min_cost_point(curve, 0.25)
    assert op["k"] == float(best[np.argmin(curve.k[best])]) and op["cost"] == float(c.min())


def test_coverage_sums_in_blocks_equal_coverage_metrics():
    y, p, lo, hi = _band(True, seed=4)
    for y_std in (None, 2.5):
        want = coverage_metrics(y, lo, hi, 0.9, y_std=y_std)
        # as before: whole width arrays and np.mean
        rows = coverage_rows(y, lo, hi, 0.9, y_std)
        assert want["width"] == float(np.mean(rows["width"][0]))
        assert want["coverage"] == float(np.mean(rows["coverage"][0]))
        state = CoverageSums(N, 0.9, y_std)
        for a in range(0, N, 1000):  # blocks of any size, in row order
            state.add(y[a : a + 1000], lo[a : a + 1000], hi[a : a + 1000])
        assert state.result() == want
        assert list(state.result()) == list(want)
