"""Coverage figures: coverage by level (observed against nominal) and the coverage-vs-width scatter
faceted by shift group (Kompa, Snoek & Beam 2021, Figures 7-8)."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .common import COLORS, FONT, LINE, axes_for, diagonal, model_color, panel_grid, style_axes


def plot_coverage_by_level(
    levels: Any,
    coverage: Any,
    *,
    sizes: Any = None,
    size_what: str = "mean set size (classes)",
    title: str = "Coverage by level",
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Observed coverage against the nominal level of central intervals (or prediction sets), the
    diagonal marking nominal coverage: above it the intervals are too wide, below too narrow.

    ``sizes``: the mean width (or set size) at each level, written beside each point (one model; ``size_what``
    says what they are in the legend) or, at the widest level, in the legend (``label``: one labelled series
    of an overlay of models).
    """
    lv = np.asarray(levels, dtype=float)
    cov = np.asarray(coverage, dtype=float)
    order = np.argsort(lv, kind="stable")
    lv, cov = lv[order], cov[order]
    sz = None if sizes is None else np.asarray(sizes, dtype=float)[order]
    fig, ax = axes_for(ax)
    lo = float(min(lv.min(), cov.min(), 0.5))
    lo = min(lo, ax.get_xlim()[0]) if ax.lines else lo  # an overlay: the range of every series so far
    diagonal(ax, "nominal")
    extra = f", {size_what.split(' (')[0]} {sz[-1]:.3g} at {lv[-1]:g}" if sz is not None else ""
    ax.plot(
        lv,
        cov,
        marker="o",
        markersize=4,
        color=COLORS["main"] if label is None else color,
        linewidth=LINE["main"],
        label="observed" if label is None else f"{label}{extra}",
    )
    if label is None and sz is not None:
        for x, c, s in zip(lv, cov, sz):
            ax.annotate(
                f"{s:.3g}", (x, c), textcoords="offset points", xytext=(5, -11), fontsize=FONT["note"] - 1.5
            )
        ax.plot([], [], linestyle="none", label=f"numbers: {size_what}")
    pad = 0.05 * (1.0 - lo)  # room for the numbers written under the lowest point
    ax.set_xlim(lo - pad, 1.0 + pad)
    ax.set_ylim(lo - pad, 1.0 + pad)
    style_axes(ax, title, "nominal level", "observed coverage (fraction of rows)", legend_loc="upper left")
    return fig


def plot_coverage_width(
    records: list[dict[str, Any]],
    lines: dict[str, dict[str, Any]],
    level: str,
    facet_label: str = "group",
    title: str = "Coverage vs width",
) -> Any:
    """One panel per facet: each method's (width, coverage) points, the least-squares line, the nominal
    level; the panels share their y axis (coverage), so shifts between facets compare at a glance. With
    several levels, a last panel draws each method's coverage by level over all its rows
    (:func:`plot_coverage_by_level`, the figure of ``uqeval.plot(..., "coverage")``)."""
    recs = [r for r in records if r["level"] == level]
    facets = sorted({r["facet"] for r in recs}, key=_natural)
    methods = sorted({r["method"] for r in recs})
    by_level = pooled_coverage(records)
    several = any(len(v[0]) > 1 for v in by_level.values())
    fig, axes = panel_grid(len(facets) + several, (4.2, 3.6), extra_height=0.5)
    for ax in axes[1 : len(facets)]:
        ax.sharey(axes[0])
    xkey = "width_norm" if all("width_norm" in r for r in recs) else "width"
    xlabel = {
        "width_norm": "mean width (std of training targets)",
        "width": "mean width (units of y or classes)",
    }[xkey]
    for ax, facet in zip(axes, facets):
        for i, m in enumerate(methods):
            pts = [r for r in recs if r["facet"] == facet and r["method"] == m]
            ax.scatter(
                [r[xkey] for r in pts],
                [r["coverage"] for r in pts],
                s=28,
                color=model_color(i),
                label=m,
                alpha=0.85,
                edgecolors="none",
            )
        line = lines.get(facet, {}).get(level)
        xs = np.array([r[xkey] for r in recs if r["facet"] == facet])
        if line is not None and xs.size:
            grid = np.linspace(xs.min(), xs.max(), 50)
            ax.plot(
                grid,
                line["slope"] * grid + line["intercept"],
                color=COLORS["obs"],
                lw=LINE["ref"],
                label="least squares",
            )
        ax.axhline(float(level), color=COLORS["ref"], ls="--", lw=LINE["ref"], label=f"nominal {level}")
        style_axes(ax, f"{facet_label} = {facet}", xlabel, "coverage (fraction of rows)", legend=False)
    if several:
        ax = axes[len(facets)]
        for i, m in enumerate(methods):
            lv, cov, _width = by_level[m]
            plot_coverage_by_level(
                lv, cov, title="Coverage by level, all rows", ax=ax, label=m, color=model_color(i)
            )
        legend = ax.get_legend()
        if legend is not None:  # the methods are in the figure's legend
            legend.remove()
    handles, labels = axes[0].get_legend_handles_labels()
    fig.suptitle(f"{title} (level {level})", fontsize=FONT["title"])
    # as many legend columns as fit the figure's width (about 1.6 inches each): never clipped at the sides
    fit = max(1, int(fig.get_figwidth() / 1.6))
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=min(len(labels), 5, fit),
        fontsize=FONT["legend"],
        frameon=False,
    )
    return fig


def pooled_coverage(records: list[dict[str, Any]]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per method, ``(levels, coverage, width)`` over all its rows: the ``points`` of
    :func:`uqeval.commands.coverage.core.run_coverage` (per file, facet and point) averaged with their rows as
    weights, levels ascending."""
    acc: dict[str, dict[float, list[float]]] = {}
    for r in records:
        cell = acc.setdefault(r["method"], {}).setdefault(float(r["level"]), [0.0, 0.0, 0.0])
        n = float(r["n_rows"])
        cell[0] += n
        cell[1] += n * float(r["coverage"])
        cell[2] += n * float(r.get("width_norm", r["width"]))
    out = {}
    for method, cells in acc.items():
        lv = np.array(sorted(cells))
        tot = np.array([cells[v][0] for v in lv])
        safe = np.where(tot > 0, tot, 1.0)
        out[method] = (
            lv,
            np.array([cells[v][1] for v in lv]) / safe,
            np.array([cells[v][2] for v in lv]) / safe,
        )
    return out


def _natural(s: str):
    try:
        return (0, float(s), s)
    except ValueError:
        return (1, 0.0, s)
