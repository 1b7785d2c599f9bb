"""Murphy diagram: mean elementary score against the threshold θ, one curve per model (or level/class).

Draws what :func:`uqeval.catalogue.murphy_curves` computed (the ``murphy`` group of a summary) or the
common-grid curves of ``uqeval compare --murphy``. Built on :class:`matplotlib.figure.Figure` (no pyplot).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from ..errors import InputError
from .common import new_figure, style_axes


def plot_murphy(thetas: Sequence[float], curves: Mapping[str, Sequence[float]], title: str = "Murphy diagram",
                xlabel: str = "threshold θ") -> Figure:
    """One line per entry of ``curves`` (label -> elementary scores on ``thetas``); lower is better at each θ."""
    th = np.asarray(thetas, dtype=float)
    if not curves:
        raise InputError("plot_murphy needs at least one curve")
    fig, ax = new_figure()
    for i, (label, values) in enumerate(curves.items()):
        v = np.asarray(values, dtype=float)
        if v.shape != th.shape:
            raise InputError(f"curve {label!r} has {v.size} values for {th.size} thresholds")
        ax.plot(th, v, color=f"C{i % 10}", lw=1.8, label=str(label))
    style_axes(ax, title, xlabel, "mean elementary score (lower is better)", legend=True)
    return fig


def murphy_panels(group: Mapping, name: str = "") -> tuple[list[float], dict[str, list[float]], str]:
    """``(thetas, {label: curve}, xlabel)`` of one summary's ``murphy`` group."""
    thetas = group["thetas"]
    if "mean" in group:
        return thetas, {"mean forecast": group["mean"]}, "threshold θ (units of y)"
    if "quantile" in group:
        return thetas, {f"quantile {k}": v for k, v in group["quantile"].items()}, "threshold θ (units of y)"
    return thetas, {f"P(class {k})": v for k, v in group.get("probability", {}).items()}, "threshold θ (probability)"
