"""Tests of uqeval.metrics.ucc (Uncertainty Characteristics Curve, Navratil et al.)."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats

from tests.reference.regen_uq360 import AXIS_PAIRS, uq360_dataset
from uqeval.errors import InputError, UsageError
from uqeval.metrics import ucc as U
from uqeval.metrics.ucc import (
    AXES,
    auucc,
    critical_scales,
    metrics_at_scale,
    partial_auucc,
    permutation_test,
    ucc_curve,
    ucc_curves,
    ucc_summary,
)

PAIRS = [(a, b) for a in AXES for b in AXES if a != b]


# --------------------------------------------------------------------------- brute force


def brute_curve(y, pred, lower, upper, coverage: str = "critical", widths=None) -> np.ndarray:
    """O(N^2) reference: for each finite critical scale, rescale every band and count/sum.

    Returns rows ``(k, bandwidth, missrate, excess, deficit)`` in ascending ``k``, raw
    units. ``coverage="critical"`` covers a row iff its critical scale is <= k (the
    definition in the issue); ``"bounds"`` compares ``d = y - pred`` with the re-scaled
    bands ``-k zl <= d <= k zu`` in floating point, as UQ360 does. ``widths=(zl, zu)``
    overrides ``pred - lower`` and ``upper - pred`` (to pass UQ360's exact widths).
    """
    y, pred, lower, upper = (np.asarray(a, dtype=float) for a in (y, pred, lower, upper))
    n = y.size
    zl, zu = (pred - lower, upper - pred) if widths is None else widths
    ks = []
    for yi, pi, li, ui in zip(y, pred, zl, zu):  # a plain loop, deliberately
        d = yi - pi
        w = ui if d >= 0 else li
        ks.append(0.0 if d == 0 else (math.inf if w == 0 else abs(d) / w))
    ks = np.array(ks)
    rows = []
    for k in np.sort(ks[np.isfinite(ks)]):
        lo, hi = pred - k * zl, pred + k * zu
        if coverage == "critical":
            cov = ks <= k
        else:
            cov = (y - pred >= -k * zl) & (y - pred <= k * zu)
        above = y >= pred
        slack = np.where(above, hi - y, y - lo)  # bound on y's side minus y (signed)
        rows.append(
            (
                k,
                np.mean((k * zl + k * zu) / 2.0),
                np.mean(~cov),
                np.sum(np.where(cov, slack, 0.0)) / n,
                np.sum(np.where(cov, 0.0, -slack)) / n,
            )
        )
    return np.array(rows).reshape(-1, 5)


def curve_table(c) -> np.ndarray:
    """Curve as rows (k, bandwidth, missrate, excess, deficit) in ascending k."""
    t = np.c_[c.k, c.bandwidth, c.missrate, c.excess, c.deficit]
    return t if c.k.size < 2 or c.k[0] <= c.k[-1] else t[::-1]


def random_case(rng, n, zero_widths=True):
    """Ties (integer-valued y, pred; few distinct widths), asymmetric and zero widths."""
    y = rng.integers(-4, 5, n).astype(float) * 0.5
    pred = rng.integers(-3, 4, n).astype(float) * 0.5
    widths = [0.0, 0.25, 0.5, 1.0, 1.5] if zero_widths else [0.25, 0.5, 1.0, 1.5, 3.0]
    zl = rng.choice(widths, n)
    zu = rng.choice(widths, n)
    return y, pred, pred - zl, pred + zu


def continuous_case(rng, n):
    y = rng.normal(size=n) * 2.0 + 1.0
    pred = y + rng.normal(size=n) * rng.uniform(0.2, 2.0, n)
    zl = rng.gamma(2.0, 0.5, n)
    zu = rng.gamma(2.0, 0.8, n)
    return y, pred, pred - zl, pred + zu


# --------------------------------------------------------------------------- hand case
# rows (y, pred, zl, zu): d = (1, -3, 0, 2); active widths (2, 1, 1, 1) -> k = (0.5, 3, 0, 2)
HAND = dict(
    y_true=[1.0, -3.0, 0.0, 2.0],
    pred=[0.0, 0.0, 0.0, 0.0],
    lower=[-1.0, -1.0, -1.0, -2.0],
    upper=[2.0, 1.0, 1.0, 1.0],
)


def test_hand_case_curve():
    c = ucc_curve(**HAND, normalize="none")
    np.testing.assert_allclose(c.k, [0.0, 0.5, 2.0, 3.0])
    # mean half width (5 + 5) / 8 = 1.25
    np.testing.assert_allclose(c.bandwidth, [0.0, 0.625, 2.5, 3.75])
    np.testing.assert_allclose(c.missrate, [0.75, 0.5, 0.25, 0.0])
    np.testing.assert_allclose(c.excess, [0.0, 0.125, 1.25, 2.25])
    np.testing.assert_allclose(c.deficit, [1.5, 1.0, 0.25, 0.0])
    assert auucc(c) == pytest.approx(1.25, abs=1e-15)
    c2 = ucc_curve(**HAND, x_axis="excess", y_axis="deficit", normalize="none")
    assert auucc(c2) == pytest.approx(0.984375, abs=1e-15)
    np.testing.assert_array_equal(critical_scales(**HAND), [0.5, 3.0, 0.0, 2.0])


def test_hand_case_summary():
    s = ucc_summary(**HAND, normalize="none", cost=0.1)
    # constant band: k = |d| = (0, 1, 2, 3), bandwidth = k -> 0.625 + 0.375 + 0.125
    assert s["auucc_const"] == pytest.approx(1.125)
    assert s["gain"] == pytest.approx((1.125 - 1.25) / 1.125)
    # k = 1: rows 0 (k=.5) and 2 (k=0) covered; bandwidth 1.25
    assert s["op"] == pytest.approx({"k": 1.0, "x": 1.25, "y": 0.5, "cost": 0.125 + 0.45})
    # costs .1x + .9y at the four points: .675, .5125, .475, .375
    assert s["op_min"] == pytest.approx({"k": 3.0, "x": 3.75, "y": 0.0, "cost": 0.375})
    s5 = ucc_summary(**HAND, normalize="none", cost=0.5)
    assert s5["op_min"] == pytest.approx({"k": 0.0, "x": 0.0, "y": 0.75, "cost": 0.375})


def test_hand_case_partial_is_interpolated():
    c = ucc_curve(**HAND, normalize="none")  # points (0,.75) (.625,.5) (2.5,.25) (3.75,0)
    # y(.3) = .63, y(1) = .45: .325*(.63+.5)/2 + .375*(.5+.45)/2
    assert partial_auucc(c, x_range=(0.3, 1.0)) == pytest.approx(0.36175, abs=1e-14)
    assert partial_auucc(c, y_range=(0.25, 0.5)) == pytest.approx(0.703125, abs=1e-14)
    # y = .7 at x = .125, y = .6 at x = .375
    assert partial_auucc(c, y_range=(0.6, 0.7)) == pytest.approx(0.1625, abs=1e-14)
    assert partial_auucc(c, x_range=(5.0, 6.0)) == 0.0
    assert partial_auucc(c, y_range=(1.5, 2.0)) == 0.0
    s = ucc_summary(**HAND, normalize="none", partial_x=(0.3, 1.0))
    # constant band: points (k, 1 - ...) = (0,.75) (1,.5) (2,.25) (3,0); y(.3) = .675
    p_const = 0.7 * (0.675 + 0.5) / 2
    assert s["partial"]["x"] == [0.3, 1.0]
    assert {k: v for k, v in s["partial"].items() if k != "x"} == pytest.approx(
        {"auucc": 0.36175, "auucc_const": p_const, "gain": (p_const - 0.36175) / p_const}
    )


# --------------------------------------------------------------------------- brute force


@pytest.mark.parametrize("seed", range(40))
def test_matches_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    case = random_case(rng, int(rng.integers(1, 60)))
    k = critical_scales(*case)
    if not np.isfinite(k).any():
        with pytest.raises(InputError, match="no operating point"):
            ucc_curve(*case, normalize="none")
        return
    ref = brute_curve(*case)
    for xa, ya in [("bandwidth", "missrate"), ("deficit", "excess")]:
        got = curve_table(ucc_curve(*case, x_axis=xa, y_axis=ya, normalize="none"))
        assert got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_matches_brute_force_continuous_normalised(seed):
    rng = np.random.default_rng(100 + seed)
    case = continuous_case(rng, 300)
    ref = brute_curve(*case)
    sd = np.std(case[0])
    ref[:, [1, 3, 4]] /= sd
    got = curve_table(ucc_curve(*case))
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(-6, 6), min_size=n, max_size=n),
            st.lists(st.integers(-3, 3), min_size=n, max_size=n),
            st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=n, max_size=n),
            st.lists(st.sampled_from([0.0, 0.25, 1.0, 3.0]), min_size=n, max_size=n),
        )
    )
)
def test_property_brute_force_and_row_order(data):
    y, p, zl, zu = (np.asarray(v, dtype=float) for v in data)
    case = (y, p, p - zl, p + zu)
    if not np.isfinite(critical_scales(*case)).any():
        return
    ref = brute_curve(*case)
    c = ucc_curve(*case, normalize="none")
    np.testing.assert_allclose(curve_table(c), ref, rtol=1e-12, atol=1e-12)
    perm = np.random.default_rng(len(y)).permutation(len(y))
    c2 = ucc_curve(*(a[perm] for a in case), normalize="none")
    np.testing.assert_allclose(curve_table(c2), curve_table(c), rtol=1e-12, atol=1e-12)
    assert auucc(c2) == pytest.approx(auucc(c), rel=1e-12, abs=1e-15)
    # every point is an operating point of metrics_at_scale
    for j in (0, len(c) // 2, len(c) - 1):
        m = metrics_at_scale(*case, k=c.k[j], normalize="none")
        for name in AXES:
            assert m[name] == pytest.approx(getattr(c, name)[j], rel=1e-12, abs=1e-12)


def test_curve_sorted_by_x_for_every_axis_pair():
    case = continuous_case(np.random.default_rng(7), 500)
    for xa, ya in PAIRS:
        c = ucc_curve(*case, x_axis=xa, y_axis=ya)
        assert c.x_axis == xa and c.y_axis == ya and len(c) == 500
        assert np.all(np.diff(c.x) >= 0), (xa, ya)
        assert c.x is getattr(c, xa) and c.y is getattr(c, ya)
        assert auucc(c) > 0


# --------------------------------------------------------------------------- zero widths


def test_zero_widths():
    # row 0: y == pred, zero widths -> k = 0; row 1: y above pred, zero upper width -> inf;
    # row 2: y below pred, zero upper width is irrelevant -> k = 2
    y, p = np.array([1.0, 2.0, -1.0]), np.zeros(3)
    p = np.array([1.0, 0.0, 0.0])
    lo, hi = p - np.array([0.0, 1.0, 0.5]), p + np.array([0.0, 0.0, 0.0])
    np.testing.assert_array_equal(critical_scales(y, p, lo, hi), [0.0, math.inf, 2.0])
    c = ucc_curve(y, p, lo, hi, normalize="none")
    np.testing.assert_array_equal(c.k, [0.0, 2.0])  # the never-covered row has no point
    np.testing.assert_allclose(c.missrate, [2 / 3, 1 / 3])  # never reaches 0
    # deficit: row 1 always misses by |d| = 2; row 2 by 1 - 0.5 k
    np.testing.assert_allclose(c.deficit, [(2 + 1) / 3, 2 / 3])
    np.testing.assert_allclose(c.excess, [0.0, 0.0])
    m = metrics_at_scale(y, p, lo, hi, k=100.0, normalize="none")
    assert m["missrate"] == pytest.approx(1 / 3) and m["deficit"] == pytest.approx(2 / 3)
    with pytest.raises(InputError, match="no operating point"):
        ucc_curve([1.0, -1.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], normalize="none")


# --------------------------------------------------------------------------- validation


def test_negative_band_names_row():
    y, p = np.zeros(5), np.zeros(5)
    lo, hi = p - 1.0, p + 1.0
    lo[3] = 0.5
    with pytest.raises(InputError, match=r"lower must not lie above pred.*row 3"):
        ucc_curve(y, p, lo, hi)
    lo[3], hi[1] = -1.0, -0.25
    with pytest.raises(InputError, match=r"upper must not lie below pred.*row 1"):
        critical_scales(y, p, lo, hi)


def test_bad_inputs():
    with pytest.raises(InputError, match="finite"):
        ucc_curve([1.0, np.nan], [0.0, 0.0], [-1.0, -1.0], [1.0, 1.0])
    with pytest.raises(InputError, match="inconsistent"):
        ucc_curve([1.0, 2.0], [0.0], [-1.0], [1.0])
    with pytest.raises(InputError, match="constant"):
        ucc_curve([1.0, 1.0], [0.0, 0.0], [-1.0, -1.0], [1.0, 1.0])  # std(y) = 0
    ucc_curve([1.0, 1.0], [0.0, 0.0], [-1.0, -1.0], [1.0, 1.0], normalize="none")
    with pytest.raises(UsageError, match="x_axis"):
        ucc_curve(**HAND, x_axis="width")
    with pytest.raises(UsageError, match="differ"):
        ucc_curve(**HAND, x_axis="excess", y_axis="excess")
    with pytest.raises(UsageError, match="normalize"):
        ucc_curve(**HAND, normalize="mad")
    with pytest.raises(UsageError, match="at most one"):
        ucc_summary(**HAND, partial_x=(0, 1), partial_y=(0, 1))
    with pytest.raises(UsageError, match="a < b"):
        ucc_summary(**HAND, partial_x=(1, 0))
    with pytest.raises(UsageError, match="cost"):
        ucc_summary(**HAND, cost=1.5)
    with pytest.raises(UsageError, match="k must"):
        metrics_at_scale(**HAND, k=-1.0)


def test_kernel_does_not_import_matplotlib():
    code = "import sys, uqeval.metrics.ucc; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------- UQ360
# IBM UQ360 0.2 (numpy 1.26.4, scipy 1.13.1), frozen by tests/reference/regen_uq360.py on
# uq360_dataset(). get_AUUCC keeps UQ360's sign (negative for a decreasing x axis); its
# constant band is std(pred) wide; auucc_gain_uq360 = (A_const - A_model) / A_model on
# normalised excess/missrate axes.
UQ360_REF = {
    "version": "0.2",
    "std_unit": 1.527632845082548,
    "curve": {
        "k": [
            0.0,
            0.5,
            0.5,
            0.5714285714285712,
            0.6666666666666666,
            0.8888888888888893,
            1.0000000000000004,
            1.3333333333333333,
            1.4285714285714282,
            1.4999999999999998,
            2.0,
            2.0,
            2.0,
            2.2,
            2.3333333333333353,
            2.499999999999999,
        ],
        "missrate": [
            0.9375,
            0.8125,
            0.8125,
            0.75,
            0.6875,
            0.625,
            0.5625,
            0.5,
            0.4375,
            0.375,
            0.1875,
            0.1875,
            0.1875,
            0.125,
            0.0625,
            0.0,
        ],
        "bandwidth": [
            0.0,
            0.2984375,
            0.2984375,
            0.3410714285714284,
            0.39791666666666664,
            0.5305555555555559,
            0.5968750000000003,
            0.7958333333333333,
            0.8526785714285712,
            0.8953124999999997,
            1.19375,
            1.19375,
            1.19375,
            1.3131250000000003,
            1.3927083333333345,
            1.4921874999999996,
        ],
        "excess": [
            0.0,
            0.018750000000000003,
            0.018750000000000003,
            0.02723214285714283,
            0.04270833333333335,
            0.08715277777777788,
            0.1156250000000001,
            0.21354166666666663,
            0.24508928571428557,
            0.2703124999999999,
            0.47187500000000004,
            0.47187500000000004,
            0.47187500000000004,
            0.5681250000000001,
            0.6364583333333342,
            0.7249999999999994,
        ],
        "deficit": [
            0.634375,
            0.38125,
            0.38125,
            0.35089285714285723,
            0.3145833333333334,
            0.23819444444444438,
            0.2062499999999999,
            0.1229166666666667,
            0.10267857142857154,
            0.08906250000000006,
            0.01875000000000003,
            0.01875000000000003,
            0.01875000000000003,
            0.006250000000000019,
            0.002083333333333298,
            0.0,
        ],
    },
    "auucc": {
        "bandwidth/missrate": [0.47428931165485894, 0.38458193792517836],
        "excess/missrate": [0.1559165767460886, 0.10247420985606065],
        "missrate/bandwidth": [-0.47428931165485905, -0.38458193792517825],
        "excess/deficit": [0.030392082429393022, 0.02187540539070249],
        "deficit/excess": [-0.03039208242939302, -0.021875405390702485],
    },
    "auucc_gain_uq360": -0.34276257217383166,
    "op_bandwidth_missrate": [0.3907188837431333, 0.625],
    "min_cost": {"0.5": [0.0, 0.46875], "0.1": [2.499999999999999, 0.0976797209357833]},
    "partial_x": [0.22326793356750463, 0.7814377674862666, 0.2624173455298624],
    "partial_y": [0.1875, 0.6875, 0.23567170765458834],
}


def test_uq360_curve_and_unit():
    case = uq360_dataset()
    c = ucc_curve(*case, normalize="none")
    for name in ("k", "missrate", "bandwidth", "excess", "deficit"):
        np.testing.assert_allclose(
            getattr(c, name), UQ360_REF["curve"][name], rtol=1e-12, atol=1e-14, err_msg=name
        )
    assert np.std(case[0]) == pytest.approx(UQ360_REF["std_unit"], rel=1e-15)


@pytest.mark.parametrize("xa, ya", AXIS_PAIRS)
def test_uq360_auucc(xa, ya):
    case = uq360_dataset()
    s = ucc_summary(*case, x_axis=xa, y_axis=ya, normalize="std")
    ref_model, ref_const = UQ360_REF["auucc"][f"{xa}/{ya}"]
    # UQ360 integrates in increasing k: negative for a decreasing x axis; we report |area|
    assert s["auucc"] == pytest.approx(abs(ref_model), rel=1e-12)
    if ya != "missrate" and xa != "missrate":
        assert s["auucc_const"] == pytest.approx(abs(ref_const), rel=1e-12)
    else:
        # Deliberate difference: UQ360 decides coverage by y <= k * band in floating point;
        # for its constant band one row is not covered at its own critical scale (k * c < |d|
        # by one ulp), which adds 1/N of miss rate at one point. Recomputing UQ360's way
        # (brute force with bound-based coverage) reproduces its number exactly, and the
        # exact (critical-scale) coverage gives ours.
        y, pred, _, _ = case
        cw = np.std(pred)
        sd = np.std(y)
        for coverage, expected in (("bounds", abs(ref_const)), ("critical", s["auucc_const"])):
            cwn = np.full_like(y, cw)
            t = brute_curve(y, pred, pred - cw, pred + cw, coverage=coverage, widths=(cwn, cwn))
            cols = {"bandwidth": t[:, 1] / sd, "missrate": t[:, 2], "excess": t[:, 3] / sd}
            x, yy = cols[xa], cols[ya]  # ascending k, as UQ360 integrates
            area = abs(float(np.sum(np.diff(x) * (yy[1:] + yy[:-1]) / 2)))
            assert area == pytest.approx(expected, rel=1e-12), coverage
        assert s["auucc_const"] < abs(ref_const)


def test_uq360_gain_operating_points_partial():
    case = uq360_dataset()
    s = ucc_summary(*case, x_axis="excess", y_axis="missrate")
    m, c = UQ360_REF["auucc"]["excess/missrate"]
    # UQ360 divides by A_model, the paper (Eq. 6) and uqeval by A_const
    assert UQ360_REF["auucc_gain_uq360"] == pytest.approx((c - m) / m, rel=1e-12)
    assert s["gain"] == pytest.approx((s["auucc_const"] - s["auucc"]) / s["auucc_const"])
    for cost in (0.5, 0.1):
        s = ucc_summary(*case, cost=cost)  # bandwidth / missrate, std units
        assert [s["op"]["x"], s["op"]["y"]] == pytest.approx(UQ360_REF["op_bandwidth_missrate"], rel=1e-12)
        k_ref, cost_ref = UQ360_REF["min_cost"][str(cost)]
        assert s["op_min"]["k"] == pytest.approx(k_ref, rel=1e-12, abs=1e-15)
        assert s["op_min"]["cost"] == pytest.approx(cost_ref, rel=1e-12)
    a, b, area = UQ360_REF["partial_x"]
    got = ucc_summary(*case, partial_x=(a, b))["partial"]["auucc"]
    assert got == pytest.approx(area, rel=1e-12)
    a, b, area = UQ360_REF["partial_y"]
    got = ucc_summary(*case, partial_y=(a, b))["partial"]["auucc"]
    assert got == pytest.approx(area, rel=1e-12)


@pytest.mark.parametrize("n", [50, 2000, 100_000])
@pytest.mark.parametrize("xa, ya", [("bandwidth", "missrate"), ("excess", "deficit"), ("missrate", "excess")])
def test_a_constant_band_has_a_gain_of_exactly_zero(n, xa, ya):
    # issue 35: the constant band's own gain was 2.2e-16 (up to -1e-12 at 1e5 rows, printed "-0.0%")
    rng = np.random.default_rng(n)
    y, p = rng.normal(size=n), rng.normal(size=n)
    s = ucc_summary(y, p, p - 1.3, p + 1.3, x_axis=xa, y_axis=ya, partial_x=(0.0, 0.5))
    assert s["gain"] == 0.0 and s["partial"]["gain"] == 0.0
    # a band that differs from the constant one by 1e-7 keeps its (tiny) gain
    w = 1.3 * (1 + 1e-7 * rng.normal(size=n))
    assert ucc_summary(y, p, p - w, p + w, x_axis=xa, y_axis=ya)["gain"] != 0.0


# --------------------------------------------------------------------------- invariances


@pytest.mark.parametrize("xa, ya", [("bandwidth", "missrate"), ("excess", "deficit"), ("missrate", "excess")])
def test_scaling_bands_leaves_curve_and_gain_unchanged(xa, ya):
    y, p, lo, hi = continuous_case(np.random.default_rng(3), 400)
    base = ucc_summary(y, p, lo, hi, x_axis=xa, y_axis=ya)
    c0 = ucc_curve(y, p, lo, hi, x_axis=xa, y_axis=ya)
    for s in (0.37, 5.0):
        lo_s, hi_s = p - s * (p - lo), p + s * (hi - p)
        c = ucc_curve(y, p, lo_s, hi_s, x_axis=xa, y_axis=ya)
        np.testing.assert_array_equal(np.sort(c.missrate), np.sort(c0.missrate))
        np.testing.assert_allclose(c.k * s, c0.k, rtol=1e-12)
        summ = ucc_summary(y, p, lo_s, hi_s, x_axis=xa, y_axis=ya)
        assert summ["gain"] == pytest.approx(base["gain"], rel=1e-10)
        assert summ["auucc"] == pytest.approx(base["auucc"], rel=1e-10)
        assert summ["auucc_const"] == base["auucc_const"]


@pytest.mark.parametrize("xa, ya", PAIRS)
def test_constant_band_auucc_independent_of_constant(xa, ya):
    y, p, lo, hi = continuous_case(np.random.default_rng(4), 300)
    ref = ucc_summary(y, p, lo, hi, x_axis=xa, y_axis=ya)["auucc_const"]
    for cw in (1e-3, 0.7, 1.0, 42.0):
        c = ucc_curve(y, p, p - cw, p + cw, x_axis=xa, y_axis=ya)
        assert auucc(c) == pytest.approx(ref, rel=1e-10)
    _, const = ucc_curves(y, p, lo, hi, x_axis=xa, y_axis=ya)
    assert auucc(const) == ref


@pytest.mark.parametrize("xa, ya", PAIRS)
def test_partial_over_full_range_equals_full_area(xa, ya):
    case = continuous_case(np.random.default_rng(5), 200)
    c = ucc_curve(*case, x_axis=xa, y_axis=ya)
    full = auucc(c)
    assert partial_auucc(c, x_range=(c.x[0], c.x[-1])) == pytest.approx(full, rel=1e-12)
    assert partial_auucc(c, x_range=(-1e9, 1e9)) == pytest.approx(full, rel=1e-12)
    lo, hi = min(c.y[0], c.y[-1]), max(c.y[0], c.y[-1])
    assert partial_auucc(c, y_range=(lo, hi)) == pytest.approx(full, rel=1e-12)
    # additivity at an interior point
    mid = 0.5 * (c.x[0] + c.x[-1])
    parts = partial_auucc(c, x_range=(-1e9, mid)) + partial_auucc(c, x_range=(mid, 1e9))
    assert parts == pytest.approx(full, rel=1e-12)
    s = ucc_summary(*case, x_axis=xa, y_axis=ya, partial_x=(-1e9, 1e9))
    assert s["partial"]["auucc"] == pytest.approx(s["auucc"], rel=1e-12)
    assert s["partial"]["gain"] == pytest.approx(s["gain"], rel=1e-9, abs=1e-12)


def test_op_equals_metrics_at_scale_one_and_original_coverage():
    y, p, lo, hi = continuous_case(np.random.default_rng(6), 1000)
    for xa, ya in PAIRS:
        s = ucc_summary(y, p, lo, hi, x_axis=xa, y_axis=ya, cost=0.3)
        m = metrics_at_scale(y, p, lo, hi, k=1.0)
        assert s["op"] == {"k": 1.0, "x": m[xa], "y": m[ya], "cost": 0.3 * m[xa] + 0.7 * m[ya]}
    m = metrics_at_scale(y, p, lo, hi, k=1.0, normalize="none")
    assert m["missrate"] == np.mean((y < lo) | (y > hi))
    assert m["bandwidth"] == pytest.approx(np.mean(hi - lo) / 2, rel=1e-12)
    slack = np.where(y >= p, hi - y, y - lo).clip(0)
    assert m["excess"] == pytest.approx(np.mean(slack), rel=1e-12)
    assert m["deficit"] == pytest.approx(np.mean(np.maximum(lo - y, 0) + np.maximum(y - hi, 0)), rel=1e-12)


def test_min_cost_point_is_minimal_over_scales():
    case = continuous_case(np.random.default_rng(8), 300)
    for xa, ya in [("bandwidth", "missrate"), ("excess", "deficit")]:
        for cost in (0.1, 0.5, 0.9):
            s = ucc_summary(*case, x_axis=xa, y_axis=ya, cost=cost)
            c = ucc_curve(*case, x_axis=xa, y_axis=ya)
            grid = np.linspace(c.k.min(), c.k.max() * 1.2, 400)
            costs = [cost * m[xa] + (1 - cost) * m[ya] for m in (metrics_at_scale(*case, k=g) for g in grid)]
            assert s["op_min"]["cost"] <= min(costs) + 1e-12
            m = metrics_at_scale(*case, k=s["op_min"]["k"])
            assert s["op_min"]["cost"] == pytest.approx(cost * m[xa] + (1 - cost) * m[ya])


def test_summary_is_json_serialisable():
    s = ucc_summary(**HAND, partial_y=(0.1, 0.6))
    assert set(s) == {
        "x_axis",
        "y_axis",
        "normalize",
        "auucc",
        "auucc_const",
        "gain",
        "partial",
        "op",
        "op_min",
    }
    assert json.loads(json.dumps(s, allow_nan=False)) == s
    assert all(type(v) is float for v in (s["auucc"], s["gain"], s["op_min"]["k"]))
    # a degenerate constant reference has no gain: every y == pred -> a single point
    s0 = ucc_summary([1.0, 2.0], [1.0, 2.0], [0.0, 1.0], [2.0, 3.0])
    assert s0["auucc_const"] == 0.0 and s0["gain"] is None
    json.dumps(s0, allow_nan=False)


# --------------------------------------------------------------------------- Proposition 1
# With miss rate on the y axis the AUUCC estimates E[x(K)] for K the critical scale of a
# random row (paper Prop. 1, Cor. 1). Constant band, d ~ N(0, 1): bandwidth(k) = k and
# K = |d|, so the area tends to int_0^inf P(|d| > t) dt; excess(k) = E[(k - |d|)+], so it
# tends to E[(|d1| - |d2|)+] for independent d1, d2.


def test_proposition_1_bandwidth_by_numerical_integration():
    d = stats.norm.ppf((np.arange(200_000) + 0.5) / 200_000)  # a deterministic N(0,1) sample
    y = d.copy()
    c = ucc_curve(y, np.zeros_like(y), -np.ones_like(y), np.ones_like(y), normalize="none")
    expected, _ = integrate.quad(lambda t: 2 * stats.norm.sf(t), 0, np.inf)
    assert auucc(c) == pytest.approx(expected, abs=2e-4)


def test_corollary_1_excess_by_numerical_integration():
    d = stats.norm.ppf((np.arange(200_000) + 0.5) / 200_000)
    c = ucc_curve(
        d,
        np.zeros_like(d),
        -np.ones_like(d),
        np.ones_like(d),
        x_axis="excess",
        y_axis="missrate",
        normalize="none",
    )
    half = stats.halfnorm.pdf
    expected, _ = integrate.dblquad(lambda b, a: (a - b) * half(a) * half(b), 0, 12, 0, lambda a: a)
    assert auucc(c) == pytest.approx(expected, abs=2e-4)


# --------------------------------------------------------------------------- permutation test


def test_batch_auucc_matches_single_curves():
    y, p, lo, hi = continuous_case(np.random.default_rng(9), 150)
    zl = np.stack([p - lo, np.abs(np.random.default_rng(1).normal(size=150)), np.ones(150)])
    zu = np.stack([hi - p, np.abs(np.random.default_rng(2).normal(size=150)), np.ones(150)])
    zl[1, :10] = 0.0  # some never-covered rows
    zu[1, :10] = 0.0
    unit = float(np.std(y))
    for xa, ya in PAIRS:
        got = U._auucc_batch(y - p, zl, zu, xa, ya, unit)
        want = [auucc(ucc_curve(y, p, p - zl[b], p + zu[b], x_axis=xa, y_axis=ya)) for b in range(3)]
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_closed_form_auucc_matches_sorted_curves(seed):
    # _auucc_closed against the trapezoid over the sorted curve (_auucc_batch), with
    # never-covered rows (zero active width) and rows with y == pred (ties at k = 0)
    rng = np.random.default_rng(seed)
    n = 200
    y = rng.standard_t(3, size=n)
    p = y + rng.normal(size=n)
    p[:7] = y[:7]  # k = 0: ties at the smallest scale
    zl = np.abs(rng.normal(size=(3, n)))
    zu = np.abs(rng.normal(size=(3, n)))
    zl[1, 10:20] = zu[1, 10:20] = 0.0  # never covered
    d = y - p
    k, _, _ = U._active(np.broadcast_to(d, zl.shape), zl, zu)
    assert U._closed_form_applies("bandwidth", "missrate", k[0], k[1])
    unit = float(np.std(y))
    for xa, ya in (("bandwidth", "missrate"), ("missrate", "bandwidth")):
        got = U._auucc_closed(k, 0.5 * (zl + zu), xa, unit, any_inf=True)
        want = U._auucc_batch(d, zl, zu, xa, ya, unit)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        if xa == "bandwidth":
            np.testing.assert_allclose(
                U._auucc_closed(k[[0, 2]], 0.5 * (zl + zu)[[0, 2]], xa, unit, any_inf=False),
                want[[0, 2]],
                rtol=1e-12,
            )
    # degenerate curves: one finite scale, or none, have area 0 like auucc()
    one = np.full((1, 5), np.inf)
    one[0, 2] = 0.7
    assert U._auucc_closed(one, np.ones((1, 5)), "bandwidth", 1.0, any_inf=True)[0] == 0.0
    assert U._auucc_closed(np.full((1, 5), np.inf), np.ones((1, 5)), "missrate", 1.0, any_inf=True)[0] == 0.0


def test_closed_form_refuses_positive_ties_and_other_axes():
    k = np.array([0.0, 0.0, 0.5, 1.0])
    assert U._closed_form_applies("missrate", "bandwidth", k, k)  # same row twice is no tie
    assert not U._closed_form_applies("bandwidth", "missrate", k, k[::-1])  # 0.5 in two rows
    assert not U._closed_form_applies("excess", "missrate", k, k)


def test_permutation_test_closed_form_equals_sorted_path(monkeypatch):
    # the same draws through the sorting path give the same p-values and areas
    rng = np.random.default_rng(21)
    n = 300
    y = rng.normal(size=n)
    sig = np.exp(rng.normal(size=n) * 0.5)
    p = y + rng.normal(size=n) * sig
    bands = [(p - sig, p + sig), (p - 1.1 * sig[::-1], p + 0.9 * sig[::-1]), (p - 0.8 * sig, p + 1.3 * sig)]
    for xa, ya in (("bandwidth", "missrate"), ("missrate", "bandwidth")):
        fast = permutation_test(y, p, bands, n_permutations=300, seed=5, x_axis=xa, y_axis=ya)
        with monkeypatch.context() as m:
            m.setattr(U, "_closed_form_applies", lambda *a: False)
            slow = permutation_test(y, p, bands, n_permutations=300, seed=5, x_axis=xa, y_axis=ya)
        assert fast == slow


def _slow_permutation_p(y, p, bands, i, j, n_perm, seed, n_pairs, pair_index):
    """The documented scheme, one permutation at a time with public functions."""
    from uqeval.metrics.calibration_tests import keyed_seed_sequence
    from uqeval.metrics.ucc import permutation_key

    y, p = np.asarray(y, dtype=np.float64), np.asarray(p, dtype=np.float64)
    key = permutation_key(y, y - p, [p - lo for lo, _ in bands], [hi - p for _, hi in bands])
    rng = np.random.default_rng(keyed_seed_sequence(seed, key).spawn(n_pairs)[pair_index])
    area = lambda lo, hi: auucc(ucc_curve(y, p, lo, hi))  # noqa: E731
    (lo_i, hi_i), (lo_j, hi_j) = bands[i], bands[j]
    obs = area(lo_i, hi_i) - area(lo_j, hi_j)
    hits = 0
    for _ in range(n_perm):
        s = rng.random(len(y)) < 0.5
        diff = area(np.where(s, lo_j, lo_i), np.where(s, hi_j, hi_i)) - area(
            np.where(s, lo_i, lo_j), np.where(s, hi_i, hi_j)
        )
        hits += abs(diff) >= abs(obs) * (1 - 1e-12)
    return (1 + hits) / (1 + n_perm)


def test_permutation_test_against_slow_loop_and_reproducible():
    rng = np.random.default_rng(10)
    n = 120
    y = rng.normal(size=n)
    sig = np.exp(rng.normal(size=n) * 0.7)
    p = y + rng.normal(size=n) * sig
    bands = [
        (p - sig, p + sig),  # informative
        (p - rng.permutation(sig), p + rng.permutation(sig)),  # shuffled widths
        (p - 1.3 * sig, p + 0.8 * sig),
    ]  # asymmetric variant
    res = permutation_test(y, p, bands, n_permutations=150, seed=3, names=["a", "b", "c"])
    assert res == permutation_test(y, p, bands, n_permutations=150, seed=3, names=["a", "b", "c"])
    assert [(q["a"], q["b"]) for q in res["pairs"]] == [("a", "b"), ("a", "c"), ("b", "c")]
    for idx, (q, (i, j)) in enumerate(zip(res["pairs"], [(0, 1), (0, 2), (1, 2)])):
        want = _slow_permutation_p(y, p, bands, i, j, 150, 3, 3, idx)
        assert q["p_value"] == want
        assert res["p_values"][i][j] == res["p_values"][j][i] == want
        assert 1 / 151 <= want <= 1
        assert q["diff"] == pytest.approx(q["auucc_a"] - q["auucc_b"])
    assert res["p_values"][0][0] == 1.0
    json.dumps(res, allow_nan=False)


def test_permutation_test_extremes():
    rng = np.random.default_rng(11)
    n = 400
    y = rng.normal(size=n)
    sig = np.exp(rng.normal(size=n))
    p = y + rng.normal(size=n) * sig
    good = (p - sig, p + sig)
    res = permutation_test(y, p, [good, good], n_permutations=50, seed=0)
    assert res["pairs"][0]["p_value"] == 1.0  # identical models: every |diff| = 0 >= 0
    bad = (p - sig[::-1], p + sig[::-1])
    res = permutation_test(y, p, [good, bad], n_permutations=200, seed=0, x_axis="excess", y_axis="deficit")
    assert res["pairs"][0]["p_value"] == pytest.approx(1 / 201)
    assert res["auucc"][0] < res["auucc"][1]
    with pytest.raises(UsageError, match="at least 2"):
        permutation_test(y, p, [good], n_permutations=10)
    with pytest.raises(InputError, match="row"):
        permutation_test(y, p, [good, (p + 1, p + 2)], n_permutations=10)


def test_permutation_exact_ties_count():
    # models differ in one row only: every permutation gives diff = +obs or -obs exactly,
    # so all of them count and p = 1 (a strict '>' or a tolerance of the wrong sign fails)
    rng = np.random.default_rng(12)
    n = 60
    y = rng.normal(size=n)
    p = y + rng.normal(size=n)
    sig = np.abs(rng.normal(size=n)) + 0.1
    other = sig.copy()
    other[7] *= 3.0
    res = permutation_test(y, p, [(p - sig, p + sig), (p - other, p + other)], n_permutations=40, seed=1)
    assert res["pairs"][0]["diff"] != 0.0
    assert res["pairs"][0]["p_value"] == 1.0


def test_min_cost_ties_take_smallest_scale():
    # symmetric unit bands, pred 0: k = |y| = (0, .4, .5, 1), bandwidth = k,
    # missrate (.75, .5, .25, 0); c = .5 costs .375, .45, .375, .5 (exact in binary)
    y = [0.0, 0.4, -0.5, 1.0]
    s = ucc_summary(y, [0.0] * 4, [-1.0] * 4, [1.0] * 4, normalize="none", cost=0.5)
    assert s["op_min"] == {"k": 0.0, "x": 0.0, "y": 0.75, "cost": 0.375}
    s = ucc_summary(
        y, [0.0] * 4, [-1.0] * 4, [1.0] * 4, x_axis="missrate", y_axis="bandwidth", normalize="none", cost=0.5
    )
    assert s["op_min"]["k"] == 0.0


@pytest.mark.parametrize("x_axis,y_axis", PAIRS)
def test_curves_from_bounds_in_blocks_equal_the_whole_array_curves(x_axis, y_axis):
    """The curves ucc_summary_rows summarises (the plot's curves; bounds handed out block by block, over
    several blocks) are ucc_curves's k, x and y bit for bit, without the other two metrics, and summarised
    as ucc_summary summarises the whole arrays; a bad bound raises the whole-array message."""
    from uqeval.metrics.blocks import BLOCK
    from uqeval.metrics.ucc import ucc_summary_rows

    rng = np.random.default_rng(8)
    n = 2 * BLOCK + 77
    y = np.round(rng.normal(size=n), 2)
    p = y + np.round(rng.normal(scale=0.5, size=n), 2)
    lo, hi = p - rng.uniform(0, 1, n), p + rng.uniform(0, 1, n)
    lo[:3] = p[:3]
    whole = ucc_curves(y, p, lo, hi, x_axis=x_axis, y_axis=y_axis)
    rows: list = []
    summary = ucc_summary_rows(
        y, p, lambda a, b: (lo[a:b], hi[a:b]), x_axis=x_axis, y_axis=y_axis, curves=rows
    )
    assert summary == ucc_summary(y, p, lo, hi, x_axis=x_axis, y_axis=y_axis)
    assert len(rows) == 2 and (summary["auucc"], summary["auucc_const"]) == tuple(auucc(c) for c in rows)
    for a, b in zip(whole, rows):
        np.testing.assert_array_equal(a.k, b.k)
        np.testing.assert_array_equal(a.x, b.x)
        np.testing.assert_array_equal(a.y, b.y)
        assert auucc(a) == auucc(b)
        assert [getattr(b, m) is None for m in AXES] == [m not in (x_axis, y_axis) for m in AXES]
    bad = hi.copy()
    bad[BLOCK + 5] = p[BLOCK + 5] - 1.0
    with pytest.raises(InputError) as whole_err:
        ucc_curves(y, p, lo, bad)
    with pytest.raises(InputError) as rows_err:
        ucc_summary_rows(y, p, lambda a, b: (lo[a:b], bad[a:b]))
    assert str(rows_err.value) == str(whole_err.value)
