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
from matplotlib.figure import Figure

from ..errors import InputError
from .common import COLORS, FONT, axes_for, style_axes

__all__ = ["plot_skill", "reference_label"]


def reference_label(info: Mapping[str, Any]) -> str:
    """How a figure names the reference of an ``input.reference`` / compare ``reference`` block."""
    kind = str(info.get("kind", "reference"))
    if kind in ("file", "prediction"):
        return str(info.get("path") or kind)
    return kind + (f" of {info['path']}" if kind == "climatology" and info.get("path") else "")


def _entry(value: Any) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of a skill value: a number (score) or ``{estimate, low, high}`` (compare)."""

    def num(v: Any) -> float:
        return float("nan") if v is None else float(v)

    if isinstance(value, Mapping):
        return num(value.get("estimate")), num(value.get("low")), num(value.get("high"))
    return num(value), float("nan"), float("nan")


def plot_skill(
    skill: Mapping[str, Any], title: str = "Skill against the reference", reference: str | None = None
) -> Figure:
    """Bars of the skill scores ``1 − S̄/S̄_ref`` per score, the 0 line (no better than the reference) marked.

    ``skill``: the ``skill`` group of a summary (``{score: value}``, one model) or of ``uqeval compare``
    (``{score: {model: {estimate, low, high}}}``: one bar per model, with its bootstrap interval where
    finite). Higher is better, 1 is perfect; a skill that is ``null`` (the reference scores 0) is marked n/a.
    """
    scores = list(skill)
    if not scores:
        raise InputError("no skill score to draw: give --reference (and a score both forecasts have)")
    per_model = isinstance(skill[scores[0]], Mapping)
    models = list(dict.fromkeys(m for s in scores for m in skill[s])) if per_model else [None]
    width = 0.8 / len(models)
    fig, ax = axes_for(None, figsize=(max(5.0, 1.1 * len(scores) * max(1, len(models) * 0.6) + 2.0), 4.2))
    x = np.arange(len(scores), dtype=float)
    lows = []
    for i, model in enumerate(models):
        vals = [_entry(skill[s].get(model) if per_model else skill[s]) for s in scores]
        est = np.array([v[0] for v in vals])
        pos = x - 0.4 + width * (i + 0.5)
        ok = np.isfinite(est)
        ax.bar(
            pos[ok],
            est[ok],
            width=width * 0.9,
            color=f"C{i % 10}" if per_model else COLORS["main"],
            alpha=0.8,
            label=str(model) if per_model else None,
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
                ecolor="black",
                elinewidth=1.2,
                capsize=3,
            )
        for p in pos[~ok]:
            ax.text(p, 0.0, "n/a", ha="center", va="bottom", fontsize=FONT["note"], color=COLORS["ref"])
        lows += [v for v in (*est[ok], *lo[ci], *hi[ci]) if math.isfinite(v)]
    ax.axhline(0.0, color="black", linewidth=1.0, label="no better than the reference (0)")
    ax.axhline(1.0, color=COLORS["ref"], linestyle="--", linewidth=0.8, label="perfect (1)")
    ax.set_xticks(x)
    ax.set_xticklabels(scores, fontsize=FONT["tick"])
    top = max([1.05, *lows])
    bottom = min([-0.05, *lows])
    ax.set_ylim(bottom - 0.05 * (top - bottom), top + 0.05 * (top - bottom))
    style_axes(
        ax,
        title,
        "score" + (f" (reference: {reference})" if reference else ""),
        "skill 1 − S/S_ref (higher is better)",
        legend_loc="outside",
    )
    return fig
