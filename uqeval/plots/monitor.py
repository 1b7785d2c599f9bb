"""``uqeval monitor --plot``: each headline metric per window, the cumulative value, and the alarms."""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from .common import binomial_band, new_figure, style_axes


def plot_monitor(doc: dict[str, Any]) -> Any:
    """One panel per headline metric (:func:`uqeval.report.monitor.headline_paths`): its value in each window
    (a coverage with the 95 % binomial band of a calibrated window of that many rows), the cumulative value
    (dashed), and a vertical line at the end of the window where each test first alarmed."""
    from ..report.monitor import headline_paths, value_at

    paths = headline_paths(doc["cumulative"]["metrics"])
    windows = doc["windows"]
    x = np.arange(len(windows))
    fig, axes = new_figure(figsize=(7.0, 2.2 * max(len(paths), 1) + 0.6), nrows=max(len(paths), 1))
    axes = np.atleast_1d(cast("Any", axes))
    for ax, path in zip(axes, paths):
        y = np.array(
            [np.nan if (v := value_at(w["metrics"], path)) is None else v for w in windows], dtype=float
        )
        if path.endswith(".coverage") and path.split(".")[0] in ("coverage", "prediction_sets"):
            level = float(path.split(".", 1)[1].rsplit(".", 1)[0])
            n = np.array([max(w["n_rows"] - w["n_dropped"], 1) for w in windows], dtype=float)
            lo, hi = binomial_band(cast("float", n), level)
            ax.fill_between(x, lo / n, hi / n, color="0.85", step="mid", label="95% band if calibrated")
            ax.axhline(level, color="0.4", lw=0.8)
        ax.plot(x, y, marker="o", ms=3, lw=1.2, label="per window")
        cum = value_at(doc["cumulative"]["metrics"], path)
        if cum is not None:
            ax.axhline(cum, ls="--", lw=0.8, color="C1", label="all rows")
        for t in doc["tests"]:
            if t["first_alarm_window"] is not None:
                ax.axvline(t["first_alarm_window"], color="C3", lw=1.0, ls=":")
        style_axes(ax, "", "", path, legend=ax is axes[0])
    for t in doc["tests"]:
        if t["first_alarm_window"] is not None:
            axes[0].annotate(
                t["name"],
                (t["first_alarm_window"], 1.0),
                xycoords=("data", "axes fraction"),
                color="C3",
                fontsize=7,
                rotation=90,
                va="top",
                ha="right",
            )
    step = max(1, len(windows) // 8)
    axes[-1].set_xticks(
        x[::step], [str(w["start"]) for w in windows][::step], rotation=30, ha="right", fontsize=7
    )
    axes[0].set_title(
        f"{doc['input']['path']}: per window ({doc['input']['window']}); dotted: first alarm", fontsize=9
    )
    return fig
