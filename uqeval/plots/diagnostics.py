"""Figures of the calibration diagnostics (``--diagnostics``): the CORP reliability diagram with its
consistency band, the smooth reliability diagram (smooth ECE) and Levi et al.'s RMV-vs-RMSE diagram.

Each builder draws what a kernel computed (:mod:`uqeval.metrics.corp`, :mod:`uqeval.metrics.smooth_ece`,
:mod:`uqeval.metrics.spread`) and returns a Figure on an Agg canvas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .common import (
    COLORS,
    FONT,
    LINE,
    SQUARE,
    axes_for,
    corner_note,
    count_strip,
    diagonal,
    model_color,
    new_figure,
    style_axes,
)

__all__ = ["plot_corp", "plot_corp_panels", "plot_smooth_reliability", "plot_spread_reliability"]


def plot_corp(
    curve: Mapping[str, np.ndarray],
    decomposition: Mapping[str, float] | None = None,
    *,
    title: str = "CORP reliability diagram",
    xlabel: str = "forecast probability",
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """The PAV-recalibrated probability against the forecast, with the consistency band under calibration.

    Parameters
    ----------
    curve : :func:`uqeval.metrics.corp.reliability_curve` (``x``, ``calibrated``, ``lower``, ``upper``, ``counts``).
    decomposition : the Brier score's ``{"mcb", "dsc", "unc"}``, annotated when given.
    ax : draw on this Axes: one panel, the forecasts' histogram as grey bars along the bottom, instead of
        a new figure of the diagram over its histogram.
    label, color : one labelled series of an overlay of models: the curve only (no band), MCB and DSC in
        the legend.
    """
    if ax is None and label is None:
        return plot_corp_panels([(curve, decomposition, title, xlabel)])
    fig, ax = axes_for(ax, SQUARE)
    _corp_panel(ax, curve, decomposition, title, xlabel, label=label, color=color, strip=label is None)
    return fig


def _corp_panel(
    ax: Axes,
    curve: Mapping[str, np.ndarray],
    decomposition: Mapping[str, float] | None,
    title: str,
    xlabel: str,
    *,
    label: str | None = None,
    color: str | None = None,
    strip: bool = False,
) -> None:
    """One CORP diagram on ``ax``: band, diagonal, curve (``label``: a series of an overlay, no band)."""
    x, cal = np.asarray(curve["x"]), np.asarray(curve["calibrated"])
    d = decomposition
    if label is None:
        ax.fill_between(
            x,
            curve["lower"],
            curve["upper"],
            step="post",
            color=COLORS["band"],
            alpha=0.35,
            linewidth=0,
            label="90% consistency band",
        )
    diagonal(ax, "calibrated")
    extra = f" (MCB {d['mcb']:.4f}, DSC {d['dsc']:.4f})" if d else ""
    ax.step(
        x,
        cal,
        where="post",
        color=COLORS["main"] if label is None else color,
        linewidth=LINE["main"],
        label="CORP (PAV-recalibrated)" if label is None else f"{label}{extra}",
    )
    if label is None and d:
        corner_note(ax, f"Brier MCB {d['mcb']:.4f}  DSC {d['dsc']:.4f}  UNC {d['unc']:.4f}")
    if strip:
        edges = np.linspace(0, 1, 41)
        hist, _ = np.histogram(x, bins=edges, weights=curve["counts"])
        count_strip(ax, edges[:-1], np.diff(edges), hist, what="forecasts per bin")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    style_axes(ax, title, xlabel, "conditional event probability", legend_loc="upper left")


def plot_corp_panels(
    panels: Sequence[tuple[Mapping[str, np.ndarray], Mapping[str, float] | None, str, str]],
    *,
    suptitle: str | None = None,
    ax: Axes | None = None,
) -> Figure:
    """One CORP reliability diagram (curve over its histogram of forecasts) per panel, side by side.

    ``panels``: ``(curve, decomposition, title, xlabel)`` as :func:`plot_corp` takes them; e.g. the
    exceedance events Y > t of several thresholds (``--threshold``). ``ax``: every panel's curve on this
    one Axes instead, a labelled series each (its ``title``, in the style's colours in order).
    """
    if ax is not None:
        fig, ax = axes_for(ax)
        for k, (curve, decomposition, title, _xlabel) in enumerate(panels):
            _corp_panel(
                ax,
                curve,
                decomposition,
                suptitle or "",
                "forecast probability of the event",
                label=title,
                color=model_color(k),
            )
        return fig
    n = len(panels)
    ncols = min(n, 3)
    blocks = -(-n // ncols)  # rows of diagrams, each a curve above its histogram
    fig, axes = new_figure(figsize=(5.6 * ncols, 6.4 * blocks), nrows=2 * blocks, ncols=ncols)
    axes = np.asarray(axes).reshape(2 * blocks, ncols)
    for k, (curve, decomposition, title, xlabel) in enumerate(panels):
        ax, axh = axes[2 * (k // ncols), k % ncols], axes[2 * (k // ncols) + 1, k % ncols]
        _corp_panel(ax, curve, decomposition, title, xlabel)
        x = np.asarray(curve["x"])
        axh.hist(x, bins=np.linspace(0, 1, 41), weights=curve["counts"], color=COLORS["count"], alpha=0.9)
        axh.set_xlim(0, 1)
        style_axes(axh, "", xlabel, "number of rows", legend=False)
    for k in range(n, blocks * ncols):  # empty slots of the last row
        axes[2 * (k // ncols), k % ncols].set_visible(False)
        axes[2 * (k // ncols) + 1, k % ncols].set_visible(False)
    if suptitle:
        fig.suptitle(suptitle, fontsize=FONT["title"])
    return fig


def plot_smooth_reliability(
    curve: Mapping[str, np.ndarray],
    smece: float,
    sigma: float,
    *,
    title: str = "Smooth reliability diagram",
    xlabel: str = "forecast probability",
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Kernel-smoothed outcome E[y | f ≈ t] against t with the density of the forecasts
    (:func:`uqeval.metrics.smooth_ece.smooth_reliability_curve`), smECE and σ* in a note.

    ``ax``: draw on this Axes (one panel, the density as a grey strip along the bottom) instead of a new
    figure of the curve over the density; ``label``, ``color``: one labelled series of an overlay of
    models (the curve, smECE in the legend)."""
    t, mu, dens = (np.asarray(curve[k]) for k in ("t", "mu", "density"))
    one = ax is not None or label is not None
    if one:
        fig, ax = axes_for(ax, SQUARE)
    else:
        # two rows: an array of two Axes
        fig, (ax, axd) = cast("tuple[Figure, np.ndarray]", new_figure(figsize=(5.6, 6.4), nrows=2))
    diagonal(ax, "calibrated")
    ax.plot(
        t,
        mu,
        color=COLORS["main"] if label is None else color,
        linewidth=LINE["main"],
        label="smoothed outcome" if label is None else f"{label} (smECE = {smece:.4f})",
    )
    if label is None:
        corner_note(ax, f"smECE = {smece:.4f} (σ* = {sigma:.4f})")
    if one and label is None and dens.size and float(dens.max()) > 0:
        ax.fill_between(
            t,
            0,
            dens / float(dens.max()) * 0.15,
            color=COLORS["count"],
            alpha=0.7,
            linewidth=0,
            label="density of forecasts (scaled)",
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    style_axes(ax, title, xlabel, "smoothed event frequency", legend_loc="upper left")
    if one:
        return fig
    axd.fill_between(t, 0, dens, color=COLORS["count"], alpha=0.9, linewidth=0)
    axd.set_xlim(0, 1)
    style_axes(axd, "", xlabel, "density of forecasts", legend=False)
    return fig


def plot_spread_skill(
    bins: Mapping[str, np.ndarray],
    ratio: float | None = None,
    *,
    title: str = "Spread-skill diagram",
    ensemble: bool = False,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Binned spread–skill diagram: RMSE of the point prediction (the ensemble mean) against the RMS spread
    of each spread-sorted equal-count bin (:func:`uqeval.metrics.spread.spread_bins`), with the 1:1 line and
    ``spread_skill.ratio`` in a note. ``ensemble``: the spread is the members' ddof-1 standard deviation
    times √((M + 1)/M), which the axis label says."""
    spread = "RMS ensemble spread s·√((M+1)/M)" if ensemble else "RMS predicted σ"
    note = None if ratio is None else f"spread_skill.ratio = {ratio:.4f}"
    return _binned_spread(
        bins,
        note,
        title=title,
        xlabel=f"{spread} per bin",
        ylabel="RMSE of the ensemble mean" if ensemble else "RMSE of the point prediction",
        diagonal_label="spread = RMSE",
        ax=ax,
        label=label,
        color=color,
    )


def _binned_spread(
    bins: Mapping[str, np.ndarray],
    note: str | None,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    diagonal_label: str,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """RMSE against RMV per equal-count bin (``bins`` of :func:`uqeval.metrics.spread.spread_bins`), the
    diagonal dashed; bins whose squares overflow are not drawn (the note says how many are)."""
    rmv, rmse = np.asarray(bins["rmv"]), np.asarray(bins["rmse"])
    ok = np.isfinite(rmv) & np.isfinite(rmse)  # squares of huge values overflow: those bins are not drawn
    rmv, rmse = rmv[ok], rmse[ok]
    fig, ax = axes_for(ax, figsize=SQUARE)
    hi = float(max(rmv.max(), rmse.max())) * 1.05 if rmv.size else 0.0
    hi = hi if 0 < hi < np.inf else 1.0
    if label is not None:  # one labelled series of an overlay: the axes hold every series drawn so far
        hi = max(hi, ax.get_xlim()[1] if ax.lines else 0.0)
    diagonal(ax, diagonal_label, hi)
    ax.plot(
        rmv,
        rmse,
        marker="o",
        color=COLORS["main"] if label is None else color,
        linewidth=LINE["main"],
        label="bins (equal count)" if label is None else f"{label}" + (f" ({note})" if note else ""),
    )
    if note is not None and label is None:
        corner_note(
            ax,
            f"{note} ({int(ok.sum())} of {ok.size} bins drawn)"
            if not ok.all()
            else f"{note} ({rmv.size} bins)",
        )
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    style_axes(ax, title, xlabel, ylabel, legend_loc="upper left")
    return fig


def plot_spread_reliability(
    bins: Mapping[str, np.ndarray],
    ence: float | None = None,
    *,
    title: str = "Spread reliability (RMSE vs RMV)",
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Levi et al.'s reliability diagram: RMSE of each σ-sorted equal-count bin against its RMV
    (:func:`uqeval.metrics.spread.spread_bins`); on the diagonal σ matches the error. ``label``,
    ``color``: one labelled series of an overlay of models."""
    return _binned_spread(
        bins,
        None if ence is None else f"ENCE = {ence:.4f}",
        title=title,
        xlabel="root mean predicted variance (RMV)",
        ylabel="RMSE of the point prediction",
        diagonal_label="calibrated spread",
        ax=ax,
        label=label,
        color=color,
    )
