"""Forest plot of ``uqeval compare``: every metric per model with its bootstrap interval.

One panel per metric; models on the vertical axis (first file on top), the estimate as
a dot, the percentile interval as a horizontal bar, the best model(s) highlighted and
the target of target-oriented metrics (e.g. the nominal coverage) as a dashed line.
Built on :class:`matplotlib.figure.Figure` (no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .common import COLORS, FONT, LINE, estimate_bounds, panel_grid, style_axes

_DIRECTION = {"lower": "lower is better", "higher": "higher is better"}


def compare_figure(result: Mapping[str, Any], max_cols: int = 3) -> Figure:
    """Figure of the metrics of a :func:`uqeval.commands.compare.core.compare_models` result.

    Parameters
    ----------
    result : the dict returned by ``compare_models`` (or its JSON form, with ``null``
        for missing values).
    max_cols : panels per row.

    Returns
    -------
    matplotlib.figure.Figure on an Agg canvas.
    """
    names = [m["name"] for m in result["models"]]
    metrics = list(result["metrics"].items())
    fig, axes = panel_grid(len(metrics), (4.4, max(2.4, 0.42 * len(names) + 1.4)), max_cols)
    ypos = np.arange(len(names))[::-1]
    s = result.get("settings", {})
    for ax, (metric, body) in zip(axes, metrics):
        values = body["values"]
        best = set(body.get("best") or [])
        for name, y in zip(names, ypos):
            est, lo, hi = estimate_bounds(values[name])
            color = COLORS["accent"] if name in best else COLORS["main"]
            if math.isnan(est):
                ax.text(
                    0.02,
                    y,
                    "n/a",
                    transform=ax.get_yaxis_transform(),
                    va="center",
                    fontsize=FONT["note"],
                    color=COLORS["ref"],
                )
                continue
            if not (math.isnan(lo) or math.isnan(hi)):
                ax.errorbar(
                    est,
                    y,
                    xerr=[[max(est - lo, 0.0)], [max(hi - est, 0.0)]],
                    fmt="o",
                    color=color,
                    ecolor=color,
                    elinewidth=2.0,
                    capsize=4,
                    markersize=6,
                )
            else:
                ax.plot([est], [y], marker="D", color=color, markersize=6, linestyle="none")
        if body.get("orientation") == "target" and body.get("target") is not None:
            ax.axvline(float(body["target"]), color=COLORS["ref"], linestyle="--", linewidth=LINE["ref"])
        direction = (
            f"closest to {body['target']:g} is better"
            if body.get("orientation") == "target" and body.get("target") is not None
            else _DIRECTION.get(body.get("orientation"), "")
        )
        style_axes(ax, metric, direction, "", legend=False)
        ax.set_yticks(ypos)
        ax.set_yticklabels(names, fontsize=FONT["tick"])
        ax.set_ylim(-0.6, len(names) - 0.4)
        if not body.get("bootstrap"):
            ax.text(
                0.98,
                0.02,
                "no CI",
                transform=ax.transAxes,
                ha="right",
                va="bottom",
                fontsize=FONT["note"],
                color=COLORS["ref"],
            )
    if s.get("bootstrap"):
        fig.suptitle(
            f"{s.get('ci_level', 0.95) * 100:g}% bootstrap intervals ({s['bootstrap']} resamples, "
            f"seed {s.get('seed')}); best in orange",
            fontsize=FONT["label"],
        )
    return fig
