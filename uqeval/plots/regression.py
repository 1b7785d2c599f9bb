"""The regression plots: the Uncertainty Toolbox set plus ACCRUE's bin-free reliability diagram.

Each ``plot_*`` function takes arrays and the curves and metric values computed by
:mod:`uqeval.metrics` (through the catalogue: :mod:`uqeval.plots.kinds` passes them), validates
them and returns a :class:`matplotlib.figure.Figure`; encode it with
:func:`uqeval.plots.common.figure_to_bytes`. Nothing here derives a metric: a value left out
is asked of its kernel.

Scatter plots draw a seeded random subset of at most ``max_points`` rows; curves and
bands use every row, reduced to a few thousand vertices without changing the picture
(see :mod:`uqeval.plots.common`), so each plot takes well under a second at N = 1e6.

References
----------
Chung, Char, Guo, Schneider & Neiswanger (2021), *Uncertainty Toolbox*, arXiv:2109.10254
(plots 1-6). Camporeale & Carè (2021), *ACCRUE*, Int. J. Uncertainty Quantification 11(4)
(plot 7, the bin-free reliability diagram). Gneiting, Balabdaoui & Raftery (2007), JRSS-B
69(2) (plot 8, the PIT histogram).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from ..errors import InputError
from ..validation import check_positive
from .common import (
    COLORS,
    FONT,
    LINE,
    axes_for,
    band_downsample,
    binomial_band,
    check_unit_interval,
    corner_note,
    diagonal,
    envelope_downsample,
    finite_1d,
    finite_columns,
    step_vertices,
    style_axes,
    subsample_indices,
    thousands,
)
from .style import reference_band, reference_color

__all__ = [
    "plot_adversarial",
    "plot_calibration_curve",
    "plot_intervals_ordered",
    "plot_pit_histogram",
    "plot_predictions_band",
    "plot_reliability_diagram",
    "plot_residuals_vs_std",
    "plot_sharpness",
]

_Y_UNITS = "units of y"
_MAX_VERTICES = 2000  # per curve; > the plot width in pixels at 150 dpi
#: intervals drawn by the ordered view of ``predictions`` (without ``x``): about one per pixel pair at 150 dpi,
#: so the error bars stay apart (thousands make a solid band); fewer with a smaller ``max_points``
ORDERED_MAX_INTERVALS = 500


def _check_bounds(lower: np.ndarray, upper: np.ndarray) -> None:
    bad = lower > upper
    if bad.any():
        idx = np.flatnonzero(bad)
        raise InputError(
            f"lower must be <= upper: {idx.size} row(s) with lower > upper "
            f"(first at row {idx[0]}, found {lower[idx[0]]:g} > {upper[idx[0]]:g}); "
            "swap the columns or fix the intervals"
        )


# --------------------------------------------------------------------------- 1. band
def plot_predictions_band(
    y_true,
    mean,
    lower,
    upper,
    x=None,
    title: str = "Predictions and intervals",
    max_points: int = 5000,
    seed: int = 0,
    x_label: str | None = None,
    band_label: str = "prediction interval",
    mean_label: str = "predicted mean",
    ax: Axes | None = None,
) -> Figure:
    """Observations, predicted mean and an interval band against ``x``; without ``x``, the ordered view.

    With ``x``, rows are sorted by ``x``. The mean and the band use every row (reduced per pixel
    column to first/min/max/last and to the band's envelope); the observations are a
    seeded random subset of at most ``max_points`` rows.

    Without ``x`` (the row index has no order worth a line), the Uncertainty Toolbox's ordered view:
    :func:`plot_intervals_ordered` with rows sorted by the prediction, a seeded subset of at most
    ``max_points`` rows (and at most :data:`ORDERED_MAX_INTERVALS`, so the intervals stay apart) drawn as
    points with their intervals as error bars.

    Parameters
    ----------
    y_true, mean, lower, upper : (N,) arrays
        Targets, predicted means and band bounds (e.g. ``mean ± 1.96 std``).
    x : (N,) array, optional
        Values to plot against.
    x_label : str, optional
        Axis label for ``x`` (e.g. the column name, kept as it is); "x" when None.
    """
    if x is None:
        return plot_intervals_ordered(
            y_true,
            mean,
            lower,
            upper,
            order_by="prediction",
            title=title,
            max_points=min(int(max_points), ORDERED_MAX_INTERVALS),
            seed=seed,
            band_label=band_label,
            mean_label=mean_label,
            ax=ax,
        )
    cols = finite_columns(y_true=y_true, mean=mean, lower=lower, upper=upper, x=x)
    y, mu, lo, hi = cols["y_true"], cols["mean"], cols["lower"], cols["upper"]
    _check_bounds(lo, hi)
    n = y.size
    order = np.argsort(cols["x"], kind="stable")
    xs = cols["x"][order]
    fig, ax = axes_for(ax)
    bx, blo, bhi = band_downsample(xs, lo[order], hi[order], n_bins=_MAX_VERTICES // 2)
    ax.fill_between(bx, blo, bhi, color=COLORS["band"], alpha=0.35, linewidth=0, label=band_label)
    mx, my = envelope_downsample(xs, mu[order], n_bins=_MAX_VERTICES // 2)
    ax.plot(mx, my, color=COLORS["main"], linewidth=1.2, label=mean_label)
    sub = subsample_indices(n, max_points, seed)
    obs_label = "observations" if sub.size == n else f"observations ({sub.size:,} of {n:,})"
    ax.scatter(xs[sub], y[order][sub], s=6, color=COLORS["obs"], alpha=0.6, linewidths=0, label=obs_label)
    style_axes(ax, title, "", f"target ({_Y_UNITS})")
    ax.set_xlabel(x_label or "x", fontsize=FONT["label"])  # a column's name, as it is
    return fig


# --------------------------------------------------------------------------- 2. ordered
def plot_intervals_ordered(
    y_true,
    mean,
    lower,
    upper,
    order_by: str = "target",
    title: str = "Prediction intervals ordered by target",
    max_points: int = 5000,
    seed: int = 0,
    band_label: str = "prediction interval",
    mean_label: str = "predicted mean",
    ax: Axes | None = None,
) -> Figure:
    """Each row's interval and observation, rows ordered by target or by prediction.

    The x axis is the row's rank in the full ordering; when N exceeds ``max_points`` a
    seeded random subset of rows is drawn at their true ranks.

    Parameters
    ----------
    order_by : {"target", "prediction"}
        Sort rows by ``y_true`` or by ``mean``.
    """
    if order_by not in ("target", "prediction"):
        raise InputError(f"order_by must be 'target' or 'prediction', got {order_by!r}")
    cols = finite_columns(y_true=y_true, mean=mean, lower=lower, upper=upper)
    y, mu, lo, hi = cols["y_true"], cols["mean"], cols["lower"], cols["upper"]
    _check_bounds(lo, hi)
    n = y.size
    order = np.argsort(y if order_by == "target" else mu, kind="stable")
    ranks = subsample_indices(n, max_points, seed)
    rows = order[ranks]
    fig, ax = axes_for(ax)
    lw = 1.0 if ranks.size <= 500 else 0.5
    # ax.vlines, without the masked array per segment it builds (a fifth of a second at 5,000)
    segments = np.stack([np.column_stack([ranks, lo[rows]]), np.column_stack([ranks, hi[rows]])], axis=1)
    ax.add_collection(
        LineCollection(
            segments,  # type: ignore[arg-type]  # an (N, 2, 2) array works; the stub asks for a Sequence
            colors=COLORS["band"],
            alpha=0.7,
            linewidths=lw,
            label=band_label,
        )
    )
    ax.scatter(ranks, mu[rows], s=6, color=COLORS["main"], linewidths=0, label=mean_label, zorder=3)
    if order_by == "target":
        # Sorted targets form a monotone curve: draw it from every row.
        ox, oy = envelope_downsample(np.arange(n, dtype=np.float64), y[order], n_bins=_MAX_VERTICES // 2)
        ax.plot(ox, oy, color=COLORS["obs"], linewidth=1.8, label="observation", zorder=4)
    else:
        ax.scatter(
            ranks, y[rows], s=8, color=COLORS["obs"], marker="D", linewidths=0, label="observation", zorder=4
        )
    thousands(ax.xaxis)
    what = "target" if order_by == "target" else mean_label
    shown = "" if ranks.size == n else f"; {ranks.size:,} of {n:,} intervals shown"
    style_axes(
        ax,
        title,
        f"rank of row ordered by {what}{shown}",
        f"target and interval ({_Y_UNITS})",
        legend_loc="upper left",
    )
    return fig


# --------------------------------------------------------------------------- 3. calibration
def plot_calibration_curve(
    expected,
    observed,
    miscal_area: float | None = None,
    title: str = "Average calibration",
    *,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Observed vs expected proportion of targets inside the central intervals.

    The area between the curve and the diagonal is shaded and annotated with
    ``miscal_area`` (the ``avg_calibration`` metric; asked of
    :func:`uqeval.metrics.calibration.calibration_errors` when None).
    Above the diagonal: intervals too wide (under-confident); below: too narrow.
    """
    p = finite_1d(expected, "expected")
    q = finite_1d(observed, "observed")
    finite_columns(expected=p, observed=q)
    check_unit_interval(p, "expected")
    check_unit_interval(q, "observed")
    order = np.argsort(p, kind="stable")
    p, q = p[order], q[order]
    if miscal_area is None:
        from ..metrics.calibration import calibration_errors

        miscal_area = float(calibration_errors(p, q)["miscal_area"])  # a float for one curve
    fig, ax = axes_for(ax, figsize=(5.6, 5.2))
    diagonal(ax, "ideal")
    if label is not None:  # one labelled series of an overlay: the area goes in the legend
        ax.plot(
            p,
            q,
            color=color,
            linewidth=LINE["main"],
            label=f"{label} (miscalibration area = {miscal_area:.4f})",
        )
    else:
        ax.fill_between(p, p, q, color=COLORS["fill"], alpha=0.3, linewidth=0, label="miscalibration area")
        ax.plot(p, q, color=COLORS["main"], linewidth=LINE["main"], label="observed")
        corner_note(ax, f"miscalibration area = {miscal_area:.4f}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    style_axes(
        ax,
        title,
        "expected proportion in interval",
        "observed proportion in interval",
        legend_loc="upper left",
    )
    return fig


# --------------------------------------------------------------------------- 4. adversarial
def plot_adversarial(
    group_sizes,
    ma_mean,
    ma_stderr,
    title: str = "Adversarial group calibration",
    y_label: str = "worst-group mean absolute calibration error",
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    """Mean worst-group calibration error ±1 standard error against group size.

    ``group_sizes`` are fractions of the rows (as in the JSON summary); the error is the
    one reported by ``adv_group_calibration`` (``ma_*`` or, with ``y_label`` changed,
    ``rms_*``). ``label``, ``color``: one labelled series of an overlay of models.
    """
    cols = finite_columns(group_sizes=group_sizes, ma_mean=ma_mean, ma_stderr=ma_stderr)
    g, m, s = cols["group_sizes"], cols["ma_mean"], cols["ma_stderr"]
    order = np.argsort(g, kind="stable")
    g, m, s = g[order], m[order], s[order]
    fig, ax = axes_for(ax)
    if label is not None:  # one labelled series of an overlay of models: the band in the series' colour
        ax.fill_between(g, m - s, m + s, color=color, alpha=0.15, linewidth=0)
        ax.plot(
            g,
            m,
            color=color,
            marker="o",
            markersize=3,
            linewidth=LINE["main"],
            label=f"{label} (±1 s.e. shaded)",
        )
    else:
        ax.fill_between(
            g, m - s, m + s, color=COLORS["band"], alpha=0.35, linewidth=0, label="±1 standard error"
        )
        ax.plot(
            g,
            m,
            color=COLORS["main"],
            marker="o",
            markersize=4,
            linewidth=LINE["main"],
            label="mean of worst group",
        )
    ax.set_xlim(0, max(1.0, float(g.max())))
    ax.set_ylim(bottom=0)
    style_axes(ax, title, "group size (fraction of rows)", y_label, legend_loc="upper right")
    return fig


# --------------------------------------------------------------------------- 5. sharpness
def plot_sharpness(
    std,
    title: str = "Sharpness",
    bins: int = 50,
    *,
    sharpness: Mapping | None = None,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    r"""Histogram of predicted standard deviations with the mean and the RMS marked.

    The RMS :math:`\sqrt{\tfrac1N\sum_i\sigma_i^2}` is the toolbox's ``sharp``; the mean
    :math:`\tfrac1N\sum_i\sigma_i` is ``mean_std``: the ``sharpness`` group (asked of
    :func:`uqeval.metrics.sharpness.sharpness` when None). Uses every row. ``label``, ``color``: one
    labelled series of an overlay of models (an outline, its RMS σ dashed in its colour).
    """
    sd = finite_columns(std=std)["std"]
    check_positive(sd, "std")
    try:
        counts, edges = np.histogram(sd, bins=bins)
    except ValueError:  # huge, nearly equal values: no `bins` distinct float64 edges fit in their range
        pad = abs(float(sd.max())) * 1e-6
        counts, edges = np.histogram(sd, bins=[float(sd.min()) - pad, float(sd.max()) + pad])
    if sharpness is None:
        from ..metrics.sharpness import sharpness as sharpness_of

        sharpness = sharpness_of(sd)
    mean_sd, rms_sd = float(sharpness["mean_std"]), float(sharpness["sharp"])
    fig, ax = axes_for(ax)
    if label is not None:
        ax.stairs(counts, edges, color=color, linewidth=LINE["main"], label=f"{label} (RMS σ = {rms_sd:.4g})")
        ax.axvline(rms_sd, color=color, linewidth=LINE["ref"], linestyle="--")
    else:
        ax.stairs(counts, edges, fill=True, color=COLORS["band"], alpha=0.6, label="rows")
        ax.stairs(counts, edges, color=COLORS["main"], linewidth=LINE["thin"])
        ax.axvline(mean_sd, color=COLORS["accent"], linewidth=LINE["main"], label=f"mean σ = {mean_sd:.4g}")
        ax.axvline(
            rms_sd,
            color=COLORS["accent2"],
            linewidth=LINE["main"],
            linestyle="--",
            label=f"RMS σ (sharpness) = {rms_sd:.4g}",
        )
    ax.set_ylim(bottom=0)
    thousands(ax.yaxis)
    style_axes(
        ax,
        title,
        f"predicted standard deviation σ ({_Y_UNITS})",
        "number of rows",
        legend_loc="upper right" if label is not None else "outside",
    )
    return fig


# --------------------------------------------------------------------------- 6. residuals
def plot_residuals_vs_std(
    y_true,
    mean,
    std,
    title: str = "Residuals vs predicted σ",
    max_points: int = 5000,
    seed: int = 0,
    z: float = 1.959963984540054,
    ax: Axes | None = None,
) -> Figure:
    """Residuals ``y − μ`` against predicted σ, with the lines ``±z·σ`` (95 % by default).

    For a calibrated Gaussian about 95 % of the points lie between the lines at every σ,
    and the spread of residuals grows with σ. A seeded subset of at most ``max_points``
    rows is drawn. (The toolbox plots |residual| against a rescaled σ; signed residuals
    against σ in the units of y show bias and calibration at once.)
    """
    cols = finite_columns(y_true=y_true, mean=mean, std=std)
    y, mu, sd = cols["y_true"], cols["mean"], cols["std"]
    check_positive(sd, "std")
    n = y.size
    sub = subsample_indices(n, max_points, seed)
    r = y[sub] - mu[sub]
    fig, ax = axes_for(ax)
    smax = float(sd.max())
    grid = np.array([0.0, smax * 1.05])
    ax.plot(grid, z * grid, color=COLORS["accent"], linestyle="--", linewidth=1.2, label=f"±{z:.2f}σ")
    ax.plot(grid, -z * grid, color=COLORS["accent"], linestyle="--", linewidth=1.2)
    ax.axhline(0.0, color=COLORS["ref"], linewidth=LINE["thin"])
    label = "rows" if sub.size == n else f"rows ({sub.size:,} of {n:,})"
    ax.scatter(sd[sub], r, s=6, color=COLORS["main"], alpha=0.5, linewidths=0, label=label)
    ax.set_xlim(0, smax * 1.05)
    style_axes(
        ax,
        title,
        f"predicted standard deviation σ ({_Y_UNITS})",
        f"residual y − μ ({_Y_UNITS})",
        legend_loc="upper left",
    )
    return fig


# --------------------------------------------------------------------------- 7. reliability
def plot_reliability_diagram(
    pit,
    max_cal_err: float | None = None,
    title: str = "Reliability diagram (bin-free)",
    *,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    r"""ACCRUE's bin-free reliability diagram: the empirical CDF of PIT values vs the diagonal.

    For Gaussian forecasts :math:`\Phi_i = \tfrac12(1 + \mathrm{erf}\,\eta_i)` with
    :math:`\eta_i = (y_i - \mu_i)/(\sqrt2\sigma_i)`; a perfectly reliable forecast lies on
    the diagonal. The point of largest deviation :math:`\max_\varphi |C(\varphi) - \varphi|`
    is located from all rows and marked exactly; the step function is drawn through at most
    a few thousand of its jumps (always including that point), found by
    :func:`uqeval.metrics.reliability.max_calibration_error_at`. ``max_cal_err`` (the
    metric value) is shown in the annotation; when None, that kernel's value.
    """
    from ..metrics.reliability import max_calibration_error_at

    u = finite_columns(pit=pit)["pit"]
    check_unit_interval(u, "pit")
    u = np.sort(u)
    n = u.size
    dev, phi, c_phi = max_calibration_error_at(u)
    if max_cal_err is None:
        max_cal_err = dev
    # Vertex j carries the ECDF value (j + 1)/N just after u[j]; keep the one equal to
    # C at the max-deviation point and its successor so that point is drawn exactly.
    j = int(round(c_phi * n)) - 1
    idx = step_vertices(n, _MAX_VERTICES, keep=(j, j + 1))
    # ECDF after each jump at u[idx]; steps drawn post-jump, anchored at (0, 0) and (1, 1).
    xs = np.concatenate([[0.0], u[idx], [1.0]])
    ys = np.concatenate([[0.0], (idx + 1) / n, [1.0]])
    fig, ax = axes_for(ax, figsize=(5.6, 5.2))
    diagonal(ax, "perfect reliability")
    ax.step(
        xs,
        ys,
        where="post",
        color=COLORS["main"] if label is None else color,
        linewidth=LINE["main"],
        # one labelled series of an overlay: its largest deviation goes in the legend
        label="empirical CDF of PIT" if label is None else f"{label} (max |C(φ) − φ| = {max_cal_err:.4f})",
    )
    if label is None:
        ax.plot(
            [phi, phi],
            [phi, c_phi],
            color=COLORS["accent"],
            linewidth=2.2,
            label=f"max |C(φ) − φ| = {max_cal_err:.4f}",
        )
        ax.plot([phi], [c_phi], marker="o", color=COLORS["accent"], markersize=5)
        right = phi < 0.6  # put the label on the side with room
        ax.annotate(
            f"φ = {phi:.3f}",
            (phi, 0.5 * (phi + c_phi)),
            xytext=(8 if right else -8, 0),
            textcoords="offset points",
            fontsize=FONT["note"],
            color=COLORS["accent"],
            va="center",
            ha="left" if right else "right",
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    style_axes(ax, title, "predicted probability φ (PIT)", "observed frequency C(φ)", legend_loc="upper left")
    return fig


# --------------------------------------------------------------------------- 8. PIT histogram
def plot_pit_histogram(
    pit=None,
    title: str = "PIT histogram",
    bins: int = 10,
    *,
    counts=None,
    edges=None,
    level: float = 0.95,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    r"""Histogram of PIT values with the band a uniform PIT would fall in.

    Give either ``pit`` (values in [0, 1], binned into ``bins`` equal bins by
    :func:`uqeval.metrics.quantiles.pit_histogram`) or ready ``counts`` (with ``edges``;
    equal bins on [0, 1] by default), e.g. the ``pit_histogram`` of ``avg_calibration``.
    Under calibration the count of bin :math:`j` is Binomial(:math:`N`, :math:`p_j`) with :math:`p_j` its width;
    the shaded band spans that law's central ``level`` quantiles (per bin, not a
    simultaneous band) around the expected count :math:`N p_j`.
    """
    if (pit is None) == (counts is None):
        raise InputError("give exactly one of pit (values) or counts (histogram) to plot")
    if pit is not None:
        u = finite_columns(pit=pit)["pit"]
        check_unit_interval(u, "pit")
        from ..metrics.quantiles import pit_histogram

        hist = pit_histogram(u, bins)
        c, e = hist["counts"], hist["edges"]
    else:
        c = finite_1d(counts, "counts")
        if (c < 0).any():
            raise InputError("counts must be >= 0")
        e = np.linspace(0.0, 1.0, c.size + 1) if edges is None else finite_1d(edges, "edges")
    if e.size != c.size + 1 or np.any(np.diff(e) <= 0):
        raise InputError(
            f"edges must be increasing with one more entry than counts ({c.size + 1}), got {e.size}"
        )
    n = float(c.sum())
    if n <= 0:
        raise InputError("counts sum to 0: there is nothing to plot in the PIT histogram")
    p = np.diff(e) / (e[-1] - e[0])
    lo, hi = binomial_band(n, p, level)
    fig, ax = axes_for(ax)
    if label is not None:  # one labelled series of an overlay: an outline
        ax.stairs(c, e, color=color, linewidth=LINE["main"], label=f"{label} (N = {int(n):,})")
    else:
        ax.stairs(c, e, fill=True, color=COLORS["main"], alpha=0.55, label=f"rows (N = {int(n):,})")
        ax.stairs(c, e, color=COLORS["main"], linewidth=LINE["ref"])
    ref = reference_color(overlay=label is not None)
    # The reference band goes on top of the bars so it stays visible.
    ax.stairs(
        hi,
        e,
        baseline=lo,
        fill=True,
        label=f"{level:.0%} band of a uniform PIT",
        **reference_band(overlay=label is not None),
    )
    ax.stairs(
        n * p,
        e,
        color=ref,
        linestyle="--",
        linewidth=1.2,
        zorder=4,
        label="expected count N/bins" if np.allclose(p, p[0]) else "expected count",
    )
    ax.set_xlim(e[0], e[-1])
    top = max(float(c.max()), float(hi.max())) * 1.05
    ax.set_ylim(0, max(top, ax.get_ylim()[1]) if label is not None else top)
    thousands(ax.yaxis)
    style_axes(ax, title, "PIT value F(y)", "number of rows", legend_loc="outside")
    return fig


# =========================================================================== issue 15 part B (--diagnostics)
def plot_rank_histogram(
    counts,
    title: str = "Rank histogram",
    p_value: float | None = None,
    level: float = 0.95,
    xlabel: str | None = None,
    ax: Axes | None = None,
    label: str | None = None,
    color: str | None = None,
) -> Figure:
    r"""Rank histogram (Talagrand diagram) of an M-member ensemble: rows per rank 0..M of the target.

    ``counts`` is ``calibration_tests.rank_histogram`` (M + 1 entries). The dashed line is the
    expected count N/(M + 1) of a calibrated ensemble and the hatched band the central ``level``
    quantiles of Binomial(N, 1/(M + 1)) per rank; ``p_value`` (the χ² test) goes into the legend.
    ``xlabel``: what the ranks are (default: the target's rank among the members). ``label``, ``color``:
    one labelled series of an overlay of models, drawn as a step outline (the band is that of its N).
    """
    c = finite_1d(counts, "counts")
    if c.size < 2 or (c < 0).any() or c.sum() <= 0:
        raise InputError("the rank histogram needs at least 2 non-negative counts with a positive sum")
    n, m1 = float(c.sum()), c.size
    r = np.arange(m1)
    lo, hi = (float(v) for v in binomial_band(n, 1.0 / m1, level))
    fig, ax = axes_for(ax)
    test = f", χ² test p = {p_value:.3g}" if p_value is not None else ""
    if label is not None:  # an outline per model, side by side on the same ranks
        ax.stairs(
            c,
            np.arange(m1 + 1) - 0.5,
            color=color,
            linewidth=LINE["main"],
            label=f"{label} (N = {int(n):,}{test})",
        )
    else:
        ax.bar(r, c, width=0.9, color=COLORS["main"], alpha=0.7, label=f"rows (N = {int(n):,}){test}")
    ref = reference_color(overlay=label is not None)
    ax.axhspan(
        lo, hi, label=f"{level:.0%} band of a calibrated ensemble", **reference_band(label is not None)
    )
    ax.axhline(
        n / m1,
        color=ref,
        linestyle="--",
        linewidth=1.2,
        zorder=4,
        label="expected count N/(M + 1)",
    )
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlim(-0.6, max(m1 - 0.4, ax.get_xlim()[1] if label is not None and ax.patches else -1.0))
    top = max(float(c.max()), float(hi)) * 1.05
    ax.set_ylim(0, max(top, ax.get_ylim()[1]) if label is not None else top)
    thousands(ax.yaxis)
    style_axes(
        ax,
        title,
        xlabel or f"rank of the target among the {m1 - 1} members",
        "number of rows",
        legend_loc="outside",
    )
    return fig
