"""Figures for classification: reliability diagram, confidence histogram, set size vs coverage.

Each builder takes the output of a kernel in :mod:`uqeval.metrics.classification`
and returns a :class:`matplotlib.figure.Figure` (Agg canvas, no pyplot state);
the caller saves it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["reliability_diagram", "confidence_histogram", "set_size_vs_coverage"]


def _figure(figsize: tuple[float, float]) -> Figure:
    fig = Figure(figsize=figsize, dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _regular(bins: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Split ``reliability_bins`` output into the M regular bins and the [1, 1] bin."""
    edges = np.asarray(bins["edges"], dtype=float)
    conf = np.asarray(bins["confidence"], dtype=float)
    acc = np.asarray(bins["accuracy"], dtype=float)
    counts = np.asarray(bins["counts"], dtype=float)
    m = len(counts) - 1
    return edges[: m + 1], conf, acc, counts, m


def reliability_diagram(
    bins: Mapping[str, np.ndarray], *, ece: float | None = None, title: str | None = None
) -> Figure:
    """Accuracy against confidence per bin, with the gap to the diagonal and the bin counts.

    Parameters
    ----------
    bins : output of :func:`uqeval.metrics.classification.reliability_bins`.
    ece : shown in the title when given.
    title : overrides the default title.

    Returns
    -------
    Figure with two axes: the diagram (bars = accuracy of each bin, hatched bars =
    gap between accuracy and mean confidence, dashed diagonal = perfect calibration;
    the degenerate bin of probabilities equal to 1 is a diamond at x = 1) and,
    below, the number of rows per bin.
    """
    edges, conf, acc, counts, m = _regular(bins)
    left, width = edges[:-1], np.diff(edges)
    full = counts[:m] > 0
    fig = _figure((5.5, 6.0))
    ax, axc = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
    ax.bar(
        left[full],
        acc[:m][full],
        width=width[full],
        align="edge",
        color="tab:blue",
        edgecolor="black",
        linewidth=0.5,
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
        color="tab:red",
        alpha=0.3,
        edgecolor="tab:red",
        hatch="//",
        linewidth=0.5,
        label="gap to mean confidence",
    )
    if counts[m] > 0:
        ax.plot(
            [1.0],
            [acc[m]],
            marker="D",
            color="tab:purple",
            linestyle="none",
            label=f"p = 1 ({int(counts[m])} rows)",
        )
    ax.plot([0, 1], [0, 1], linestyle="--", color="gray", label="perfect calibration")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy")
    ax.legend(loc="upper left", fontsize="small")
    if title is None:
        title = "Reliability diagram" + (f" (ECE = {ece:.4f})" if ece is not None else "")
    ax.set_title(title)
    axc.bar(left, counts[:m], width=width, align="edge", color="tab:gray", edgecolor="black", linewidth=0.5)
    if counts[m] > 0:
        axc.bar([1.0], [counts[m]], width=0.01, color="tab:purple")
    for x, w, c in zip(left, width, counts[:m]):
        if c > 0:
            axc.annotate(f"{int(c)}", (x + w / 2, c), ha="center", va="bottom", fontsize=6, rotation=90)
    axc.set_xlabel("confidence (top-label probability)")
    axc.set_ylabel("rows")
    axc.margins(y=0.35)
    return fig


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
    if ax is None:
        fig = _figure((5.5, 4.0))
        ax = fig.subplots()
    else:
        fig = ax.figure  # type: ignore[assignment]  # a caller's Axes: its (root) figure
    ax.bar(
        edges[:-1],
        share[:m],
        width=np.diff(edges),
        align="edge",
        color="tab:blue",
        edgecolor="black",
        linewidth=0.5,
    )
    if counts[m] > 0:
        ax.bar([1.0], [share[m]], width=0.01, color="tab:purple", label="p = 1")
    ax.axvline(accuracy, color="tab:green", linestyle="--", label=f"accuracy {accuracy:.3f}")
    ax.axvline(mean_conf, color="tab:red", linestyle=":", label=f"mean confidence {mean_conf:.3f}")
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("confidence (top-label probability)")
    ax.set_ylabel("share of rows")
    ax.set_title(title or "Confidence histogram")
    ax.legend(loc="upper left", fontsize="small")
    return fig


def set_size_vs_coverage(sets: Mapping[str, Mapping], *, title: str | None = None) -> Figure:
    """Coverage and mean size of prediction sets across levels (Kompa et al. 2021).

    Parameters
    ----------
    sets : output of :func:`uqeval.metrics.classification.prediction_sets`
        (level key -> ``coverage``, ``mean_size``, ``size_histogram``).

    Returns
    -------
    Figure with two axes: empirical coverage against the nominal level (diagonal =
    nominal), and mean set size against coverage, each point labelled with its level.
    """
    keys = sorted(sets, key=float)
    level = np.array([float(k) for k in keys])
    cov = np.array([float(sets[k]["coverage"]) for k in keys])
    size = np.array([float(sets[k]["mean_size"]) for k in keys])
    fig = _figure((9.0, 4.0))
    ax1, ax2 = fig.subplots(1, 2)
    lo = float(min(level.min(), cov.min(), 0.5))
    ax1.plot([lo, 1], [lo, 1], linestyle="--", color="gray", label="nominal")
    ax1.plot(level, cov, marker="o", color="tab:blue", label="empirical")
    ax1.set_xlabel("nominal level 1 - alpha")
    ax1.set_ylabel("coverage")
    ax1.set_title("Coverage of prediction sets")
    ax1.legend(loc="upper left", fontsize="small")
    ax2.plot(cov, size, marker="o", color="tab:orange")
    for k, c, s in zip(keys, cov, size):
        ax2.annotate(k, (c, s), textcoords="offset points", xytext=(4, 4), fontsize="small")
    ax2.set_xlabel("coverage")
    ax2.set_ylabel("mean set size")
    ax2.set_title("Set size vs coverage")
    if title:
        fig.suptitle(title)
    return fig
