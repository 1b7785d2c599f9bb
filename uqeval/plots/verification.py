"""Figures of the forecast-verification groups (issue 16): skill against a reference forecast.

(The exceedance event's CORP diagram is :func:`uqeval.plots.diagnostics.plot_corp_panels`; the
multivariate average-rank histogram is :func:`uqeval.plots.regression.plot_rank_histogram`.)
Built on :class:`matplotlib.figure.Figure` on an Agg canvas (no pyplot).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..errors import InputError, option
from .common import COLORS, FONT, LINE, axes_for, estimate_bounds, model_color, style_axes

__all__ = ["plot_skill", "reference_label"]


def reference_label(info: Mapping[str, Any]) -> str:
    """How a figure names the reference of an ``input.reference`` / compare ``reference`` block."""
    kind = str(info.get("kind", "reference"))
    if kind in ("file", "prediction"):
        return str(info.get("path") or kind)
    return kind + (f" of {info['path']}" if kind == "climatology" and info.get("path") else "")


#: Scores whose skill is not the ratio 1 − S/S_ref but a difference, with its unit (glossary ``skill.<score>``).
_DIFFERENCE_UNITS: dict[str, str] = {"nll": "nats gained per row"}


def _tick(score: str) -> str:
    """A bar's tick label: the score and what its skill is (a ratio, or a difference in its unit)."""
    return f"{score}\n({_DIFFERENCE_UNITS.get(score, '1 − S/S_ref')})"


def plot_skill(
    skill: Mapping[str, Any],
    title: str = "Skill against the reference",
    reference: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Bars of the skill against a reference per score, each bar labelled with its value, the 0 line (no
    better than the reference) marked; the axis fits the values (skills of 0.01 stay visible).

    ``skill``: the ``skill`` group of a summary (``{score: value}``, one model) or of ``uqeval compare``
    (``{score: {model: {estimate, low, high}}}``: one bar per model, in the models' colours, with its
    bootstrap interval where finite). Higher is better. Most skills are ``1 − S̄/S̄_ref`` (1 is perfect);
    ``nll`` is the information gain ``NLL̄_ref − NLL̄`` in nats, which each bar's tick label says. A skill
    that is ``null`` (the reference scores 0) is marked n/a.
    """
    scores = list(skill)
    if not scores:
        raise InputError(
            f"no skill score to draw: give {option('reference')} (and a score both forecasts have)"
        )
    per_model = isinstance(skill[scores[0]], Mapping)
    models = list(dict.fromkeys(m for s in scores for m in skill[s])) if per_model else [None]
    width = 0.8 / len(models)
    fig, ax = axes_for(ax, (max(5.0, 1.3 * len(scores) * max(1, len(models) * 0.6) + 2.0), 4.4))
    x = np.arange(len(scores), dtype=float)
    values: list[float] = [0.0]
    bars = []
    for i, model in enumerate(models):
        vals = [estimate_bounds(skill[s].get(model) if per_model else skill[s]) for s in scores]
        est = np.array([v[0] for v in vals])
        pos = x - 0.4 + width * (i + 0.5)
        ok = np.isfinite(est)
        bars.append(
            (
                ax.bar(
                    pos[ok],
                    est[ok],
                    width=width * 0.9,
                    color=model_color(i),
                    alpha=0.85,
                    label=str(model) if per_model else None,
                ),
                est[ok],
            )
        )
        lo = np.array([v[1] for v in vals])
        hi = np.array([v[2] for v in vals])
        ci = ok & np.isfinite(lo) & np.isfinite(hi)
        if ci.any():
            ax.errorbar(
                pos[ci],
                est[ci],
                yerr=[np.maximum(est[ci] - lo[ci], 0), np.maximum(hi[ci] - est[ci], 0)],
                fmt="none",
                ecolor=COLORS["obs"],
                elinewidth=LINE["ref"],
                capsize=3,
            )
        for p in pos[~ok]:
            ax.text(p, 0.0, "n/a", ha="center", va="bottom", fontsize=FONT["note"], color=COLORS["ref"])
        values += [v for v in (*est[ok], *lo[ci], *hi[ci]) if math.isfinite(v)]
    ax.axhline(0.0, color=COLORS["obs"], linewidth=LINE["ref"], label="0: no better than the reference")
    top, bottom = max(values), min(values)
    span = (top - bottom) or 1.0
    ax.set_ylim(bottom - 0.12 * span * (bottom < 0), top + 0.15 * span)
    for container, est in bars:  # each bar's value, outside its end
        ax.bar_label(container, labels=[f"{v:.3g}" for v in est], padding=2, fontsize=FONT["note"] - 1)
    ax.set_xlim(-0.6, len(scores) - 0.4)  # every score's slot, a bar or n/a
    ax.set_xticks(x)
    ax.set_xticklabels([_tick(s) for s in scores], fontsize=FONT["tick"] - 1)
    style_axes(
        ax,
        title,
        "score" + (f" (reference: {reference})" if reference else ""),
        "skill (higher is better)",
        legend_loc="outside" if per_model else "best",
    )
    return fig
