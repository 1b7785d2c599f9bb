"""``uqeval monitor --plot``: each headline metric per window, the cumulative value, the tests' e-values and the
alarms, on one time axis."""

from __future__ import annotations

import math
import textwrap
from typing import Any, cast

import numpy as np

from .common import binomial_band, new_figure, style_axes
from .style import COLORS, FONT, LINE


def metric_label(path: str) -> str:
    """An axis label for a metric path: its glossary title and level (``coverage.0.95.coverage`` ->
    ``Empirical coverage (0.95)``), or the path when the glossary has none."""
    from ..glossary import find_entry

    hit = find_entry(path, group_fallback=False)
    parts = path.split(".")
    level = ".".join(parts[1:-1])
    title = hit[1]["title"] if hit else path
    return f"{title} ({level})" if level else title


def _alarm_spans(doc: dict[str, Any]) -> list[tuple[int, int, int]]:
    """``(change window, first alarm window, last alarm window)`` of every alarm of every test."""
    out = []
    for t in doc["tests"]:
        for a in t.get("alarms", []):
            out.append((a.get("change_window", a["first_window"]), a["first_window"], a["last_window"]))
    return out


def _panel_metric(ax: Any, doc: dict[str, Any], path: str, x: np.ndarray) -> None:
    from ..report.monitor import value_at

    windows = doc["windows"]
    y = np.array([np.nan if (v := value_at(w["metrics"], path)) is None else v for w in windows], dtype=float)
    if path.endswith(".coverage") and path.split(".")[0] in ("coverage", "prediction_sets"):
        level = float(path.split(".", 1)[1].rsplit(".", 1)[0])
        n = np.array([max(w["n_rows"] - w["n_dropped"], 1) for w in windows], dtype=float)
        lo, hi = binomial_band(cast("float", n), level)
        ax.fill_between(
            x, lo / n, hi / n, color=COLORS["count"], alpha=0.5, step="mid", label="95% band if calibrated"
        )
        ax.axhline(level, color=COLORS["ref"], lw=LINE["thin"], label="nominal level")
    ax.plot(x, y, marker="o", ms=3, lw=LINE["main"], color=COLORS["main"], label="per window")
    cum = value_at(doc["cumulative"]["metrics"], path)
    if cum is not None:
        ax.axhline(cum, ls="--", lw=LINE["thin"], color=COLORS["accent2"], label="all rows")


def _panel_tests(ax: Any, doc: dict[str, Any], x: np.ndarray) -> None:
    """log10 of every test's e-value (or e-detector) per window and the alarm threshold."""
    palette = [COLORS["main"], COLORS["accent2"], COLORS["ref"], COLORS["count"]]
    for i, t in enumerate(doc["tests"]):
        logs = np.array([np.nan if v is None else v for v in t.get("log_e_values") or []], dtype=float)
        if logs.size == len(x):
            ax.plot(
                x, logs / math.log(10.0), lw=LINE["main"], color=palette[i % len(palette)], label=t["name"]
            )
    if doc["tests"]:
        top = math.log10(doc["tests"][0]["threshold"])
        ax.set_ylim(-2.0, 2.5 * top)  # the crossing is what matters: a path far above it is cut at the top
        ax.axhline(
            top,
            color=COLORS["accent"],
            lw=LINE["thin"],
            ls="--",
            label="alarm threshold",
        )


def plot_monitor(doc: dict[str, Any]) -> Any:
    """One panel per headline metric (:func:`uqeval.report.monitor.headline_paths`), labelled with its glossary
    name: its value in each window (a coverage with the 95 % binomial band of a calibrated window of that many
    rows), the cumulative value (dashed); then the log10 e-values of the tests (or of the change detectors) with
    the alarm threshold. Every panel shares one time axis (the windows' starts); each alarm is shaded from the
    window where the change is estimated to begin to its last window; legends sit to the right of the axes."""
    from ..report.monitor import headline_paths, start_labels

    paths = headline_paths(doc["cumulative"]["metrics"])[:3]
    windows = doc["windows"]
    x = np.arange(len(windows))
    n_panels = max(len(paths), 1) + (1 if doc["tests"] else 0)
    fig, axes = new_figure(figsize=(8.0, 1.9 * n_panels + 0.8), nrows=n_panels, sharex=True)
    axes = np.atleast_1d(cast("Any", axes))
    spans = _alarm_spans(doc)
    for ax, path in zip(axes, paths):
        _panel_metric(ax, doc, path, x)
    if doc["tests"]:
        _panel_tests(axes[-1], doc, x)
    for i, ax in enumerate(axes):
        for change, first, last in spans:
            ax.axvspan(change - 0.5, last + 0.5, color=COLORS["accent"], alpha=0.08, lw=0)
            ax.axvline(first, color=COLORS["accent"], lw=LINE["ref"], ls=":")
        label = (
            metric_label(paths[i])
            if i < len(paths)
            else ("log10 e-detector" if doc.get("mode") == "detect" else "log10 e-value")
        )
        style_axes(ax, "", "", "\n".join(textwrap.wrap(label, 22)), legend=False)
        if ax.get_legend_handles_labels()[0]:  # right of the axes: never over the data
            ax.legend(
                fontsize=FONT["legend"] - 2, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False
            )
    step = max(1, len(windows) // 8)
    axes[-1].set_xticks(
        x[::step], start_labels(doc)[::step], rotation=30, ha="right", fontsize=FONT["tick"] - 2
    )
    axes[-1].set_xlabel(f"window start ({doc['input']['window']} windows)", fontsize=FONT["label"])
    what = "change estimated to alarm end shaded" if doc.get("mode") == "detect" else "alarms shaded"
    axes[0].set_title(f"{doc['input']['path']}: per window; {what}; dotted: alarm", fontsize=FONT["legend"])
    return fig
