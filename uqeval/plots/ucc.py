"""UCC plot: every model's Uncertainty Characteristics Curve with its constant-band
reference, original and minimum-cost operating points and isocost lines (Navratil et al.,
Figs. 4-5).

Built on :mod:`uqeval.plots.common` (a :class:`matplotlib.figure.Figure` on Agg, no
pyplot). Curves with many points are reduced per pixel column by
:func:`~uqeval.plots.common.envelope_downsample` for drawing only; the areas in the legend
come from the exact curves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..errors import UsageError
from ..metrics.ucc import UCCCurve
from ..text import fmt_percent
from .common import COLORS, FONT, LINE, axes_for, envelope_downsample, model_color, nan_if_null, style_axes

__all__ = ["plot_ucc", "axis_label"]

_TITLES = {"bandwidth": "Bandwidth", "missrate": "Miss rate", "excess": "Excess", "deficit": "Deficit"}


def axis_label(axis: str, normalize: str) -> str:
    """Axis label with its unit: miss rate is a fraction of rows; the others are in
    standard deviations of ``y_true`` (``normalize="std"``) or in the units of ``y_true``."""
    if axis == "missrate":
        return "Miss rate (fraction of rows)"
    unit = "std(y)" if normalize == "std" else "units of y"
    return f"{_TITLES[axis]} ({unit})"


def _fmt_area(area: float | None) -> str:
    """An AUUCC in a legend; ``n/a`` when it could not be computed finitely (null in the summary)."""
    return "n/a" if area is None or not np.isfinite(area) else f"{area:.4g}"


def _draw_curve(ax, curve: UCCCurve, **kw) -> None:
    x, y = envelope_downsample(curve.x, curve.y, n_bins=1000)
    if x.size == 1:
        ax.plot(x, y, marker="o", linestyle="none", **kw)
    else:
        ax.plot(x, y, **kw)


def _draw_model(ax: Axes, m: Mapping, color: str) -> None:
    """One model of :func:`plot_ucc`: its curve, its constant-band reference (dashed) and its two operating
    points (hollow circle at k = 1, filled diamond at the minimum cost)."""
    _draw_curve(
        ax,
        m["curve"],
        color=color,
        linewidth=LINE["main"],
        label=f"{m['name']} (AUUCC={_fmt_area(m['auucc'])}, gain={fmt_percent(m.get('gain'))})",
    )
    _draw_curve(
        ax,
        m["const_curve"],
        color=color,
        linewidth=1.1,
        linestyle="--",
        label=f"{m['name']} constant band (AUUCC={_fmt_area(m['auucc_const'])})",
    )
    op, op_min = m["op"], m["op_min"]
    ax.plot(
        [nan_if_null(op["x"])],
        [nan_if_null(op["y"])],
        marker="o",
        markersize=7,
        markerfacecolor="white",
        markeredgecolor=color,
        markeredgewidth=1.6,
        linestyle="none",
        zorder=5,
    )
    ax.plot(
        [nan_if_null(op_min["x"])],
        [nan_if_null(op_min["y"])],
        marker="D",
        markersize=6,
        color=color,
        linestyle="none",
        zorder=5,
    )


def plot_ucc(
    models: Sequence[Mapping],
    cost: float = 0.5,
    title: str = "Uncertainty Characteristics Curve",
    ax: Axes | None = None,
) -> Figure:
    """One figure with the UCC of every model.

    Parameters
    ----------
    models : list of dicts with keys ``name`` (str), ``curve`` and ``const_curve``
        (:class:`~uqeval.metrics.ucc.UCCCurve`, e.g. from
        :func:`~uqeval.metrics.ucc.ucc_curves`), ``op`` and ``op_min`` (``{"k", "x", "y",
        "cost"}`` from :func:`~uqeval.metrics.ucc.ucc_summary`), ``auucc`` and ``auucc_const``
        (the areas of the two curves) and ``gain`` (float or None: null in the summary). All
        curves must share their axes and normalisation.
    cost : the weight ``c`` of the x axis in the linear cost ``c x + (1 - c) y``; the
        isocost line through each model's minimum-cost point is drawn.
    title : figure title.

    Returns
    -------
    matplotlib.figure.Figure
        Solid line per model (legend: AUUCC and gain), dashed constant-band reference in
        the same colour, hollow circle at the original operating point (k = 1), filled
        diamond at the minimum-cost point, dotted isocost line through it.
    """
    models = list(models)
    if not models:
        raise UsageError("plot_ucc needs at least one model")
    c = float(cost)
    if not 0.0 <= c <= 1.0:
        raise UsageError(f"cost must lie in [0, 1] (weight of the x axis), got {c:g}")
    first: UCCCurve = models[0]["curve"]
    axes = (first.x_axis, first.y_axis, first.normalize)
    for m in models:
        for cur in (m["curve"], m["const_curve"]):
            if (cur.x_axis, cur.y_axis, cur.normalize) != axes:
                raise UsageError(
                    f"all UCCs in one plot need the same axes and normalisation: model "
                    f"{m['name']!r} has {cur.x_axis}/{cur.y_axis}/{cur.normalize}, "
                    f"the first has {'/'.join(axes)}"
                )

    fig, ax = axes_for(ax)
    for i, m in enumerate(models):
        _draw_model(ax, m, model_color(i))

    # isocost lines span the view fixed by the curves
    ax.margins(0.03)
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    for i, m in enumerate(models):
        color = model_color(i)
        level = nan_if_null(m["op_min"]["cost"])
        if not np.isfinite(level):
            continue  # no minimum-cost point (an axis overflowed): no isocost line
        if c == 1.0:
            ax.axvline(level, color=color, linestyle=":", linewidth=LINE["ref"])
        elif c == 0.0:
            ax.axhline(level, color=color, linestyle=":", linewidth=LINE["ref"])
        else:
            xs = np.array([x0, x1])
            ax.plot(xs, (level - c * xs) / (1.0 - c), color=color, linestyle=":", linewidth=LINE["ref"])
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)

    # one legend entry per marker kind, in neutral colour
    grey = COLORS["obs"]
    ax.add_line(
        Line2D(
            [],
            [],
            marker="o",
            markerfacecolor="white",
            markeredgecolor=grey,
            linestyle="none",
            label="original operating point (k = 1)",
        )
    )
    ax.add_line(
        Line2D([], [], marker="D", color=grey, linestyle="none", label="minimum-cost operating point k*")
    )
    ax.add_line(Line2D([], [], color=grey, linestyle=":", label=f"isocost line through k* (c = {c:g})"))
    style_axes(
        ax,
        title,
        axis_label(first.x_axis, first.normalize),
        axis_label(first.y_axis, first.normalize),
        legend_loc="outside",  # issue 39: a legend inside covered the curves
    )
    legends = [legend] if (legend := ax.get_legend()) else list(fig.legends)
    for text in (t for lg in legends for t in lg.get_texts()):
        text.set_fontsize(FONT["legend"] - 1.5)
    return fig
