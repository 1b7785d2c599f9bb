"""Coverage-vs-width scatter faceted by shift group (Kompa, Snoek & Beam 2021, Figures 7-8)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import FONT, new_figure, style_axes


def plot_coverage_width(
    records: list[dict[str, Any]],
    lines: dict[str, dict[str, Any]],
    level: str,
    facet_label: str = "group",
    title: str = "Coverage vs width",
) -> Any:
    """One panel per facet: each method's (width, coverage) points, the least-squares line, the nominal level."""
    recs = [r for r in records if r["level"] == level]
    facets = sorted({r["facet"] for r in recs}, key=_natural)
    methods = sorted({r["method"] for r in recs})
    ncols = min(3, len(facets))
    nrows = int(np.ceil(len(facets) / ncols))
    fig, axes = new_figure(figsize=(4.2 * ncols, 3.6 * nrows), nrows=nrows, ncols=ncols)
    axes = np.asarray(axes).ravel()  # one Axes or an array of them
    from matplotlib import colormaps

    palette = [colormaps["tab10"](i) for i in range(10)]
    xkey = "width_norm" if all("width_norm" in r for r in recs) else "width"
    xlabel = {
        "width_norm": "mean width [std of training targets]",
        "width": "mean width [units of y / classes]",
    }[xkey]
    for ax, facet in zip(axes, facets):
        for i, m in enumerate(methods):
            pts = [r for r in recs if r["facet"] == facet and r["method"] == m]
            ax.scatter(
                [r[xkey] for r in pts],
                [r["coverage"] for r in pts],
                s=28,
                color=palette[i % len(palette)],
                label=m,
                alpha=0.85,
                edgecolors="none",
            )
        line = lines.get(facet, {}).get(level)
        xs = np.array([r[xkey] for r in recs if r["facet"] == facet])
        if line is not None and xs.size:
            grid = np.linspace(xs.min(), xs.max(), 50)
            ax.plot(
                grid, line["slope"] * grid + line["intercept"], color="black", lw=1.2, label="least squares"
            )
        ax.axhline(float(level), color="grey", ls="--", lw=1, label=f"nominal {level}")
        style_axes(ax, f"{facet_label} = {facet}", xlabel, "coverage [fraction of rows]", legend=False)
    for ax in axes[len(facets) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.suptitle(f"{title} (level {level})", fontsize=FONT["title"])
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(len(labels), 5),
        fontsize=FONT["legend"],
        frameon=False,
    )
    return fig


def _natural(s: str):
    try:
        return (0, float(s), s)
    except ValueError:
        return (1, 0.0, s)
