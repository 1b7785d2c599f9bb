"""Figures for classification: reliability diagram, confidence histogram, set size vs coverage.

Each builder takes the output of a kernel in :mod:`uqeval.metrics.classification`
and returns a :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot state);
the caller saves it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .common import COLORS, FONT, LINE, SQUARE, axes_for, count_strip, diagonal, new_figure, style_axes

__all__ = ["reliability_diagram", "confidence_histogram", "set_size_vs_coverage"]

_CONFIDENCE = "confidence (top-label probability)"


def _regular(bins: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Split ``reliability_bins`` output into the M regular bins and the [1, 1] bin."""
    edges = np.asarray(bins["edges"], dtype=float)
    conf = np.asarray(bins["confidence"], dtype=float)
    acc = np.asarray(bins["accuracy"], dtype=float)
    counts = np.asarray(bins["counts"], dtype=float)
    m = len(counts) - 1
    return edges[: m + 1], conf, acc, counts, m


def reliability_diagram(
    bins: Mapping[str, np.ndarray],
    *,
    ece: float | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Accuracy against confidence per bin, with the gap to the diagonal and the bin counts.

    Parameters
    ----------
    bins : output of :func:`uqeval.metrics.classification.reliability_bins`.
    ece : shown in the title (one model) or the legend (``label``) when given.
    title : overrides the default title.
    ax : draw on this Axes (one panel: the counts are grey bars along the bottom) instead of a new
        figure of two panels (the diagram over the counts).
    label, color : one labelled series of an overlay of models: accuracy against mean confidence of each
        non-empty bin as a line with markers, ECE and rows in the legend.

    Returns
    -------
    The figure: the diagram (bars = accuracy of each bin, hatched bars = gap between accuracy and mean
    confidence, dashed diagonal = perfect calibration; the degenerate bin of probabilities equal to 1 is
    a diamond at x = 1) and the number of rows per bin (a panel below, or a strip along the bottom).
    """
    edges, conf, acc, counts, m = _regular(bins)
    if title is None:
        title = "Reliability diagram" + (f" (ECE = {ece:.4f})" if ece is not None and label is None else "")
    if ax is not None or label is not None:
        fig, ax = axes_for(ax, SQUARE)
        if label is not None:
            full = counts > 0
            x, y = np.where(np.arange(m + 1) < m, conf, 1.0)[full], acc[full]
            extra = ", ".join(
                [*([f"ECE = {ece:.4f}"] if ece is not None else []), f"N = {int(counts.sum()):,}"]
            )
            diagonal(ax, "perfect calibration")
            ax.plot(
                x,
                y,
                marker="o",
                markersize=4,
                color=color,
                linewidth=LINE["main"],
                label=f"{label} ({extra})",
            )
        else:
            _bars(ax, edges, conf, acc, counts, m)
            count_strip(ax, edges[:-1], np.diff(edges), counts[:m])
        ax.set_xlim(0, 1.02)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        style_axes(ax, title, _CONFIDENCE, "accuracy", legend_loc="upper left")
        return fig
    fig, axes = new_figure((5.5, 6.0), nrows=2, sharex=True, height_ratios=(3, 1))
    ax, axc = cast("np.ndarray", axes)
    _bars(ax, edges, conf, acc, counts, m)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1)
    style_axes(ax, title, "", "accuracy", legend_loc="upper left")
    ax.tick_params(labelbottom=False)
    left, width = edges[:-1], np.diff(edges)
    axc.bar(
        left,
        counts[:m],
        width=width,
        align="edge",
        color=COLORS["count"],
        edgecolor=COLORS["obs"],
        linewidth=LINE["edge"],
    )
    if counts[m] > 0:
        axc.bar([1.0], [counts[m]], width=0.01, color=COLORS["accent2"])
    for x, w, c in zip(left, width, counts[:m]):
        if c > 0:
            axc.annotate(
                f"{int(c)}",
                (x + w / 2, c),
                ha="center",
                va="bottom",
                fontsize=FONT["note"] - 2.5,
                rotation=90,
            )
    axc.margins(y=0.35)
    style_axes(axc, "", _CONFIDENCE, "number of rows", legend=False)
    return fig


def _bars(ax: Axes, edges: np.ndarray, conf: np.ndarray, acc: np.ndarray, counts: np.ndarray, m: int) -> None:
    """The bars of one model's reliability diagram: accuracy per bin, the gap to the mean confidence
    hatched, the p = 1 bin as a diamond, the diagonal."""
    left, width = edges[:-1], np.diff(edges)
    full = counts[:m] > 0
    ax.bar(
        left[full],
        acc[:m][full],
        width=width[full],
        align="edge",
        color=COLORS["main"],
        alpha=0.85,
        edgecolor=COLORS["obs"],
        linewidth=LINE["edge"],
        label="accuracy",
    )
    gap_lo = np.minimum(acc[:m], conf[:m])[full]
    gap_hi = np.maximum(acc[:m], conf[:m])[full]
    ax.bar(
        left[full],
        gap_hi - gap_lo,
        bottom=gap_lo,
        width=width[full],
        align="edge",
        color=COLORS["accent"],
        alpha=0.3,
        edgecolor=COLORS["accent"],
        hatch="//",
        linewidth=LINE["edge"],
        label="gap to mean confidence",
    )
    if counts[m] > 0:
        ax.plot(
            [1.0],
            [acc[m]],
            marker="D",
            color=COLORS["accent2"],
            linestyle="none",
            label=f"p = 1 ({int(counts[m])} rows)",
        )
    diagonal(ax, "perfect calibration")


def confidence_histogram(
    bins: Mapping[str, np.ndarray], *, title: str | None = None, ax: Axes | None = None
) -> Figure:
    """Share of rows per top-label confidence bin, with mean confidence and accuracy marked (Guo et al. 2017, Fig. 1).

    Parameters
    ----------
    bins : output of :func:`uqeval.metrics.classification.reliability_bins`
        (the [1, 1] bin is drawn as a thin bar at 1).
    """
    edges, conf, acc, counts, m = _regular(bins)
    total = counts.sum()
    share = counts / total if total > 0 else counts
    full = counts > 0
    mean_conf = float(np.sum(counts[full] * conf[full]) / total) if total > 0 else float("nan")
    accuracy = float(np.sum(counts[full] * acc[full]) / total) if total > 0 else float("nan")
    fig, ax = axes_for(ax, (5.5, 4.0))
    ax.bar(
        edges[:-1],
        share[:m],
        width=np.diff(edges),
        align="edge",
        color=COLORS["main"],
        alpha=0.85,
        edgecolor=COLORS["obs"],
        linewidth=LINE["edge"],
    )
    if counts[m] > 0:
        ax.bar([1.0], [share[m]], width=0.01, color=COLORS["accent2"], label="p = 1")
    ax.axvline(
        accuracy,
        color=COLORS["obs"],
        linestyle="--",
        linewidth=LINE["main"],
        label=f"accuracy {accuracy:.3f}",
    )
    ax.axvline(
        mean_conf,
        color=COLORS["accent"],
        linestyle=":",
        linewidth=LINE["main"],
        label=f"mean confidence {mean_conf:.3f}",
    )
    ax.set_xlim(0, 1.02)
    style_axes(ax, title or "Confidence histogram", _CONFIDENCE, "share of rows", legend_loc="upper left")
    return fig


def set_size_vs_coverage(
    sets: Mapping[str, Mapping],
    *,
    title: str | None = None,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Coverage and mean size of prediction sets across levels (Kompa et al. 2021).

    Parameters
    ----------
    sets : output of :func:`uqeval.metrics.classification.prediction_sets`
        (level key -> ``coverage``, ``mean_size``, ``size_histogram``).
    ax : draw on this Axes: one panel, coverage against the nominal level with each point's mean set size
        written beside it (:func:`uqeval.plots.coverage.plot_coverage_by_level`), instead of a new figure
        of two panels.
    label, color : one labelled series of an overlay of models (coverage by level; sizes in the legend).

    Returns
    -------
    Figure with two axes: empirical coverage against the nominal level (diagonal =
    nominal), and mean set size against coverage, each point labelled with its level.
    """
    from .coverage import plot_coverage_by_level

    keys = sorted(sets, key=float)
    level = np.array([float(k) for k in keys])
    cov = np.array([float(sets[k]["coverage"]) for k in keys])
    size = np.array([float(sets[k]["mean_size"]) for k in keys])
    if ax is not None or label is not None:
        return plot_coverage_by_level(
            level,
            cov,
            sizes=size,
            title=title or "Coverage of prediction sets",
            ax=ax,
            label=label,
            color=color,
        )
    fig, pair = new_figure((9.0, 4.0), ncols=2)
    ax1, ax2 = cast("np.ndarray", pair)
    plot_coverage_by_level(level, cov, sizes=None, title="Coverage of prediction sets", ax=ax1)
    ax2.plot(cov, size, marker="o", color=COLORS["main"], linewidth=LINE["main"])
    for k, c, s in zip(keys, cov, size):
        ax2.annotate(k, (c, s), textcoords="offset points", xytext=(4, 4), fontsize=FONT["note"])
    style_axes(
        ax2, "Set size vs coverage", "coverage (fraction of rows)", "mean set size (classes)", legend=False
    )
    if title:
        fig.suptitle(title, fontsize=FONT["title"])
    return fig
