"""Tests of uqeval.plots.ucc.plot_ucc."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from matplotlib.figure import Figure

from uqeval.errors import UsageError
from uqeval.metrics.ucc import UCCCurve, _min_cost_point, ucc_curves, ucc_summary
from uqeval.plots.common import figure_to_bytes
from uqeval.plots.ucc import axis_label, plot_ucc

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _models(n=2000, x_axis="bandwidth", y_axis="missrate", normalize="std", cost=0.5):
    rng = np.random.default_rng(0)
    y = rng.normal(size=n)
    sig = np.exp(0.5 * rng.normal(size=n))
    p = y + rng.normal(size=n) * sig
    out = []
    for name, s in (("informative", sig), ("shuffled", rng.permutation(sig))):
        lo, hi = p - 1.64 * s, p + 1.64 * s
        summ = ucc_summary(y, p, lo, hi, x_axis=x_axis, y_axis=y_axis, normalize=normalize, cost=cost)
        curve, const = ucc_curves(y, p, lo, hi, x_axis=x_axis, y_axis=y_axis, normalize=normalize)
        out.append(
            {
                "name": name,
                "curve": curve,
                "const_curve": const,
                "op": summ["op"],
                "op_min": summ["op_min"],
                "auucc": summ["auucc"],
                "auucc_const": summ["auucc_const"],
                "gain": summ["gain"],
            }
        )
    return out


def test_plot_returns_figure_and_png():
    models = _models()
    fig = plot_ucc(models, cost=0.5, title="UCC test")
    assert isinstance(fig, Figure)
    png = figure_to_bytes(fig, "png")
    assert png.startswith(PNG_SIGNATURE)
    assert len(png) > 20_000
    ax = fig.axes[0]
    assert ax.get_title() == "UCC test"
    assert ax.get_xlabel() == "Bandwidth (std(y))"
    assert ax.get_ylabel() == "Miss rate (fraction of rows)"
    legend = [
        t.get_text() for t in (ax.get_legend() or ax.figure.legends[0]).get_texts()
    ]  # below the axes (issue 39)
    assert any("informative (AUUCC=" in t and "gain=" in t for t in legend)
    assert any("shuffled constant band (AUUCC=" in t for t in legend)
    assert any("k = 1" in t for t in legend) and any("isocost" in t for t in legend)
    # dashed constant-band references, one per model
    assert sum(line.get_linestyle() == "--" for line in ax.get_lines()) == 2
    # the gain in the legend is the summary's, in percent
    g = models[0]["gain"]
    assert any(f"gain={100 * g:+.1f}%" in t for t in legend)


def test_operating_points_and_isocost_line_are_drawn():
    models = _models(cost=0.3)
    fig = plot_ucc(models, cost=0.3)
    ax = fig.axes[0]
    pts = {
        (float(line.get_xdata()[0]), float(line.get_ydata()[0]))
        for line in ax.get_lines()
        if len(line.get_xdata()) == 1
    }
    for m in models:
        assert (m["op"]["x"], m["op"]["y"]) in pts
        assert (m["op_min"]["x"], m["op_min"]["y"]) in pts
    # each isocost line passes through its model's minimum-cost point
    iso = [line for line in ax.get_lines() if line.get_linestyle() == ":" and len(line.get_xdata()) == 2]
    assert len(iso) == 2
    for line, m in zip(iso, models):
        (x0, x1), (y0, y1) = line.get_xdata(), line.get_ydata()
        x, y = m["op_min"]["x"], m["op_min"]["y"]
        assert y0 + (y1 - y0) * (x - x0) / (x1 - x0) == pytest.approx(y, abs=1e-9)


@pytest.mark.parametrize("cost", [0.0, 1.0])
def test_isocost_extremes_and_other_axes(cost):
    models = _models(x_axis="excess", y_axis="deficit", normalize="none", cost=cost)
    fig = plot_ucc(models, cost=cost)
    ax = fig.axes[0]
    assert ax.get_xlabel() == "Excess (units of y)" and ax.get_ylabel() == "Deficit (units of y)"
    assert figure_to_bytes(fig).startswith(PNG_SIGNATURE)


def test_large_curves_are_reduced_for_drawing():
    models = _models(n=50_000)
    fig = plot_ucc(models[:1])
    longest = max(len(line.get_xdata()) for line in fig.axes[0].get_lines())
    assert longest <= 4000 < len(models[0]["curve"])


def test_mismatched_axes_and_bad_cost_rejected():
    a = _models()[:1]
    b = _models(x_axis="excess")[:1]
    with pytest.raises(UsageError, match="same axes"):
        plot_ucc(a + b)
    with pytest.raises(UsageError, match="cost"):
        plot_ucc(a, cost=2.0)
    with pytest.raises(UsageError, match="at least one"):
        plot_ucc([])


def test_axis_label_units():
    assert axis_label("deficit", "std") == "Deficit (std(y))"
    assert axis_label("missrate", "none") == "Miss rate (fraction of rows)"


def test_no_pyplot_state():
    code = (
        "import sys, numpy as np; from uqeval.plots.ucc import plot_ucc; "
        "from uqeval.metrics.ucc import UCCCurve, _min_cost_point, ucc_curves, ucc_summary; "
        "y=np.arange(20.)%7; p=y*0.9; lo, hi = p-1, p+2; c, k = ucc_curves(y,p,lo,hi); "
        "s = ucc_summary(y,p,lo,hi); "
        "plot_ucc([dict(name='m', curve=c, const_curve=k, op=s['op'], op_min=s['op_min'], "
        "auucc=s['auucc'], auucc_const=s['auucc_const'], gain=s['gain'])]); "
        "print('matplotlib.pyplot' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_model_whose_area_and_operating_points_are_null_is_drawn():
    # fuzz seed 4242 (issue 35): targets near 1e308 left AUUCC and the k* point null in the summary, and the
    # report's UCC overlay raised a TypeError formatting the legend
    models = _models()
    models[1] = {
        **models[1],
        "auucc": None,
        "auucc_const": None,
        "gain": None,
        "op": {"k": 1.0, "x": None, "y": None, "cost": None},
        "op_min": {"k": None, "x": None, "y": None, "cost": None},
    }
    fig = plot_ucc(models, cost=0.5)
    legend = [t.get_text() for t in (fig.axes[0].get_legend() or fig.legends[0]).get_texts()]
    assert "shuffled (AUUCC=n/a, gain=n/a)" in legend and "shuffled constant band (AUUCC=n/a)" in legend
    assert figure_to_bytes(fig, "png").startswith(PNG_SIGNATURE)


def test_targets_near_1e308_give_a_minimum_cost_point_not_an_error():
    # some costs NaN (inf / inf on an axis): the minimum is taken over the others (was: argmin of an empty
    # sequence, a traceback from `report`)
    rng = np.random.default_rng(1)
    p, s = rng.normal(size=40), rng.uniform(0.5, 1.5, 40)
    with np.errstate(all="ignore"):
        op = ucc_summary(np.full(40, 1e308), p, p - 2 * s, p + 2 * s)["op_min"]
    assert np.isfinite(op["cost"]) and op["x"] == 0.0
    # no cost at all: the point is NaN (written as null), not an error
    nan = np.full(3, np.nan)
    curve = UCCCurve(np.ones(3), nan, nan, None, None, "bandwidth", "missrate", "std", np.inf, 3)
    assert all(np.isnan(v) for v in _min_cost_point(curve, 0.5).values())
