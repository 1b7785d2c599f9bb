"""Murphy diagram: mean elementary score against the threshold θ, one curve per model (or level/class).

Draws what :func:`uqeval.catalogue.murphy_curves` computed (the ``murphy`` group of a summary) or the
common-grid curves of ``uqeval compare --murphy``. Built on :class:`matplotlib.figure.Figure` (no pyplot).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..errors import InputError
from .common import LINE, axes_for, model_color, panel_grid, style_axes


def plot_murphy(
    thetas: Sequence[float],
    curves: Mapping[str, Sequence[float]],
    title: str = "Murphy diagram",
    xlabel: str = "threshold θ",
    ax: Axes | None = None,
    ylabel: str = "mean elementary score (lower is better)",
) -> Figure:
    """One line per entry of ``curves`` (label -> elementary scores on ``thetas``); lower is better at each θ."""
    th = np.asarray(thetas, dtype=float)
    if not curves:
        raise InputError("plot_murphy needs at least one curve")
    fig, ax = axes_for(ax)
    for i, (label, values) in enumerate(curves.items()):
        v = np.asarray(values, dtype=float)
        if v.shape != th.shape:
            raise InputError(f"curve {label!r} has {v.size} values for {th.size} thresholds")
        ax.plot(th, v, color=model_color(i), lw=LINE["main"], label=str(label))
    style_axes(ax, title, xlabel, ylabel, legend=True)
    return fig


def murphy_panels(group: Mapping) -> tuple[list[float], dict[str, list[float]], str]:
    """``(thetas, {label: curve}, xlabel)`` of one summary's ``murphy`` group."""
    thetas = group["thetas"]
    if "mean" in group:
        return thetas, {"mean forecast": group["mean"]}, "threshold θ (units of y)"
    if "quantile" in group:
        return thetas, {f"quantile {k}": v for k, v in group["quantile"].items()}, "threshold θ (units of y)"
    return (
        thetas,
        {f"P(class {k})": v for k, v in group.get("probability", {}).items()},
        "threshold θ (probability)",
    )


def murphy_compare_figure(murphy: Mapping, title: str = "Murphy diagrams") -> Figure:
    """The ``murphy`` block of ``uqeval compare --murphy``: one panel per functional, one curve per model."""
    curves = murphy["curves"]
    if not curves:
        raise InputError("no Murphy curves to draw")
    keys = list(curves)[:6]  # a quantile file: the first levels; the JSON holds them all
    fig, axes = panel_grid(len(keys), (5.0, 3.8))
    for ax, key in zip(axes, keys):
        plot_murphy(murphy["thetas"], curves[key], f"{title}: {key}", ax=ax, ylabel="mean elementary score")
    return fig
