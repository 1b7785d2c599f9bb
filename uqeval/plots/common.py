"""Shared plumbing for every uqeval plot: figures, styling, encoding and data reduction.

Figures are built with :class:`matplotlib.figure.Figure` on an Agg canvas; pyplot (and
its global figure registry) is never used, so plotting is re-entrant and leaves no state.
Style is applied per artist (explicit font sizes) instead of through global ``rcParams``.

Large inputs are reduced before drawing, never by dropping information from curves:

* :func:`subsample_indices` picks a seeded random subset of rows for *scatter* plots;
* :func:`envelope_downsample` reduces a curve ``y(x)`` sorted by ``x`` to at most four
  vertices per pixel-wide bin (first, min, max, last: the "M4" reduction), which draws
  the same picture as all rows at the figure's resolution;
* :func:`step_vertices` thins the vertices of a step function (an empirical CDF) while
  keeping chosen vertices (e.g. the point of maximal deviation) exactly.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..errors import InputError, UsageError
from ..validation import as_float_array, check_finite, finite_arrays
from . import PLOT_FORMATS
from .style import COLORS, FIGSIZE, FONT, GRID, LINE, MODEL_COLORS, SQUARE, axis_label, model_color

__all__ = [
    "COLORS",
    "FIGSIZE",
    "FONT",
    "LINE",
    "MODEL_COLORS",
    "SQUARE",
    "axis_label",
    "model_color",
    "PLOT_FORMATS",
    "band_downsample",
    "count_strip",
    "legend_once",
    "diagonal",
    "nan_if_null",
    "binomial_band",
    "check_unit_interval",
    "envelope_downsample",
    "estimate_bounds",
    "figure_to_bytes",
    "finite_1d",
    "finite_columns",
    "axes_for",
    "new_figure",
    "panel_grid",
    "style_axes",
    "step_vertices",
    "subsample_indices",
    "thousands",
]

#: Where :func:`style_axes` puts the legend: a matplotlib location inside the axes, or "outside"
#: (below them).
LegendLoc = Literal[
    "best",
    "upper right",
    "upper left",
    "lower left",
    "lower right",
    "right",
    "center left",
    "center right",
    "lower center",
    "upper center",
    "center",
    "outside",
]

# Metadata that would make the bytes differ run to run (dates) or name the software.
_METADATA: dict[str, dict[str, None]] = {
    "png": {"Software": None},
    "svg": {"Date": None},
    "pdf": {"CreationDate": None, "ModDate": None},
}


def new_figure(
    figsize: tuple[float, float] = FIGSIZE, nrows: int = 1, ncols: int = 1, **subplots: Any
) -> tuple[Figure, Axes | np.ndarray]:
    """Create a Figure on an Agg canvas (no pyplot) with a constrained layout.

    Returns ``(fig, ax)``; ``ax`` is an array of Axes when ``nrows * ncols > 1``. ``subplots``:
    further arguments of :meth:`~matplotlib.figure.Figure.subplots` (``sharex``, ``height_ratios``, ...).
    """
    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots(nrows, ncols, squeeze=True, **subplots)
    return fig, ax


def panel_grid(
    n: int, panel: tuple[float, float], max_cols: int = 3, extra_height: float = 0.0
) -> tuple[Figure, np.ndarray]:
    """A figure of ``n`` panels of ``panel`` inches each, in rows of at most ``max_cols`` (``extra_height``
    inches more for a title or legend): the flat array of its Axes, those after the ``n``-th hidden."""
    ncols = max(1, min(int(max_cols), n))
    nrows = max(1, math.ceil(n / ncols))
    fig, axes = new_figure((panel[0] * ncols, panel[1] * nrows + extra_height), nrows=nrows, ncols=ncols)
    flat = np.asarray(axes).ravel()  # one Axes or an array of them
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat


def axes_for(ax: Axes | None, figsize: tuple[float, float] = FIGSIZE) -> tuple[Figure, Axes]:
    """``(figure, axes)`` to draw on: a caller's ``ax`` (and its figure), else :func:`new_figure`."""
    if ax is None:
        fig, new = new_figure(figsize)
        return fig, cast("Axes", new)
    return cast("Figure", ax.figure), ax


def _constrained(fig: Any) -> bool:
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    return isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)


def style_axes(
    ax: Axes,
    title: str,
    xlabel: str,
    ylabel: str,
    legend: bool = True,
    legend_loc: LegendLoc = "best",
) -> None:
    """Apply the house style (:mod:`uqeval.plots.style`): title, axis labels in the house phrasing
    (:func:`~uqeval.plots.style.axis_label`), tick sizes, light grid, legend.

    ``legend_loc`` is a matplotlib location or ``"outside"`` (a legend below the axes).
    """
    ax.set_title(title, fontsize=FONT["title"])
    ax.set_xlabel(axis_label(xlabel), fontsize=FONT["label"])
    ax.set_ylabel(axis_label(ylabel), fontsize=FONT["label"])
    ax.tick_params(labelsize=FONT["tick"])
    ax.grid(True, **GRID)  # type: ignore[arg-type]
    ax.set_axisbelow(True)
    handles, labels = ax.get_legend_handles_labels()
    if legend and handles:
        if legend_loc == "outside" and not _constrained(ax.figure):  # a caller's figure (ax=): inside
            legend_loc = "best"
        if legend_loc == "outside":  # below the axes, never over the data
            ncols = min(len(handles), 2)
            ax.figure.legend(
                handles,
                labels,
                fontsize=FONT["legend"],
                ncols=ncols,
                loc="outside lower center",
                frameon=False,
            )
        else:
            ax.legend(fontsize=FONT["legend"], loc=legend_loc, framealpha=0.9)


def legend_once(ax: Axes, outside: bool = False) -> None:
    """Redraw the legend of an overlay of models with one entry per label: each model draws the reference
    lines and bands of its series again (an entry in the place of its label's first
    appearance, drawn as its last); a legend the figure holds below the axes
    (``style_axes(legend_loc="outside")``) is replaced by one on the axes, or with ``outside`` (figures whose
    data fill the axes, such as the PIT histogram) by one below them."""
    handles, labels = ax.get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    for legend in list(ax.figure.legends):
        legend.remove()
    if outside and _constrained(ax.figure):
        ax.figure.legend(
            list(seen.values()),
            list(seen.keys()),
            fontsize=FONT["legend"],
            ncols=min(len(seen), 2),
            loc="outside lower center",
            frameon=False,
        )
    else:
        ax.legend(list(seen.values()), list(seen.keys()), fontsize=FONT["legend"])


def corner_note(ax: Axes, text: str) -> None:
    """``text`` in a white box in the lower right corner of ``ax`` (a figure's number: an area, a score)."""
    ax.text(
        0.97,
        0.04,
        text,
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=FONT["note"],
        bbox={"facecolor": "white", "edgecolor": COLORS["frame"], "boxstyle": "round"},
    )


def diagonal(ax: Axes, label: str, hi: float = 1.0) -> None:
    """The dashed reference line y = x from 0 to ``hi`` (perfect calibration, nominal coverage, ...)."""
    ax.plot([0, hi], [0, hi], linestyle="--", color=COLORS["ref"], linewidth=LINE["ref"], label=label)


def count_strip(
    ax: Axes,
    left: np.ndarray,
    width: np.ndarray,
    counts: np.ndarray,
    what: str = "rows per bin",
    frac: float = 0.15,
) -> None:
    """The rows per bin of a probability diagram as grey bars along the bottom of ``ax`` (the one-panel
    form of the count panel): the largest bin reaches ``frac`` of the unit y axis; the legend says the scale."""
    counts = np.asarray(counts, dtype=np.float64)
    top = float(counts.max()) if counts.size else 0.0
    if not top > 0:
        return
    ax.bar(
        left,
        counts / top * frac,
        width=width,
        align="edge",
        color=COLORS["count"],
        alpha=0.9,
        linewidth=0,
        zorder=2.5,
        label=f"{what} (tallest = {int(round(top)):,})",
    )


def thousands(ax_axis) -> None:
    """Format an axis' tick labels as plain integers with thousands separators."""
    from matplotlib.ticker import StrMethodFormatter

    ax_axis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))


def drawn_texts(fig: Any) -> list[Any]:
    """The texts of ``fig`` but its tick labels (numbers; listing them would compute the axis limits, which
    :func:`figure_to_bytes` guards): titles, axis labels, texts and legends."""
    out = [*fig.texts, *[t for leg in fig.legends for t in leg.get_texts()]]
    if getattr(fig, "_suptitle", None) is not None:
        out.append(fig._suptitle)
    for a in fig.axes:
        out += [a.title, a._left_title, a._right_title, a.xaxis.label, a.yaxis.label, *a.texts]
        if a.get_legend() is not None:
            out += [*a.get_legend().get_texts(), a.get_legend().get_title()]
    return out


def _literal_text(fig: Figure) -> None:
    """Every text of ``fig`` is literal: no mathtext (a ``$`` in a file or model name), control
    characters shown as ``\\xNN`` (no missing-glyph warnings). uqeval draws no math."""
    from matplotlib.text import Text

    from ..text import xml_text

    for t in fig.findobj(Text):
        t.set_parse_math(False)
        text = t.get_text()
        safe = xml_text(text)
        if safe != text:
            t.set_text(safe)


def figure_to_bytes(fig: Figure, fmt: str = "png", dpi: int = 150) -> bytes:
    """Encode ``fig`` as PNG, SVG or PDF bytes.

    Date and software metadata are left out, so the same figure gives the same bytes.
    Write the result with an atomic writer; this function touches no file.
    """
    fmt = str(fmt).lower()
    if fmt not in PLOT_FORMATS:
        raise UsageError(f"unsupported plot format {fmt!r}: choose one of {', '.join(PLOT_FORMATS)}")
    buf = io.BytesIO()
    try:
        _literal_text(fig)  # (lists the tick labels: the first place the axis limits are computed)
        if fmt == "png" and isinstance(fig.canvas, FigureCanvasAgg):  # uqeval's figures (new_figure)
            _save_png(fig, buf, dpi)
            return buf.getvalue()
        # SVG element ids are salted randomly unless svg.hashsalt is set; set it only while
        # saving (rc_context restores the previous value).
        with rc_context({"svg.hashsalt": "uqeval"}):
            fig.savefig(buf, format=fmt, dpi=dpi, metadata=_METADATA[fmt], facecolor="white")
    except (ValueError, OverflowError) as exc:
        if isinstance(exc, InputError):
            raise
        big = _largest_value(fig)
        if not big > TOO_LARGE_TO_DRAW:  # not the size of the data: a bug
            raise
        raise FigureTooLarge(
            f"cannot draw the figure: its values reach {big:.3g}, too large for the axis arithmetic "
            "(the axis range overflows float64); rescale the data (e.g. to other units) to plot it"
        ) from None
    return buf.getvalue()


#: Data beyond this magnitude may make matplotlib's axis arithmetic (margins, tick steps) overflow.
TOO_LARGE_TO_DRAW = 1e150


class FigureTooLarge(InputError):
    """A figure whose values are finite but too large to draw (axis limits and ticks overflow)."""


def _largest_value(fig: Figure) -> float:
    """The largest magnitude in the data limits of ``fig``'s axes (inf if one is not finite)."""
    big = 0.0
    for ax in fig.axes:
        pts = np.asarray(ax.dataLim.get_points(), dtype=np.float64)
        if ax.dataLim.width < 0 or ax.dataLim.height < 0:  # an axes without data (a null box)
            continue
        if not np.all(np.isfinite(pts)):
            return float("inf")
        big = max(big, float(np.abs(pts).max()))
    return big


#: zlib level of the PNG images: 3 encodes in about half the time of Pillow's default 6; with
#: RGB instead of RGBA pixels the files are still smaller than RGBA at level 6.
PNG_COMPRESS_LEVEL = 3


def _save_png(fig: Figure, buf: io.BytesIO, dpi: float) -> None:
    """What ``fig.savefig(buf, format="png", dpi=dpi, facecolor="white")`` draws, drawn once and
    stored as RGB.

    With a layout engine, savefig first draws the whole figure without rendering so that the
    engine can place the axes, then draws it again into the image. Running the engine alone at
    the output dpi places the axes the same way (the same pixels), and the figure is then drawn
    once without it. On the opaque white background every pixel is opaque, so the alpha channel
    carries nothing and is left out. The figure's engine, dpi and face colour are restored.
    """
    from PIL import Image

    engine, old_dpi, old_face = fig.get_layout_engine(), fig.dpi, fig.get_facecolor()
    fig.dpi = dpi  # the layout is computed at the resolution of the image
    fig.set_facecolor("white")
    try:
        if engine is not None:
            if fig.axes:  # as Figure.draw runs it, ignoring a ValueError
                with contextlib.suppress(ValueError):
                    engine.execute(fig)
            # no engine at all while drawing; None reads rcParams
            with rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
                fig.set_layout_engine(None)
        canvas = cast("FigureCanvasAgg", fig.canvas)  # figure_to_bytes calls this for an Agg canvas only
        canvas.draw()
        image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        image.convert("RGB").save(buf, format="png", dpi=(dpi, dpi), compress_level=PNG_COMPRESS_LEVEL)
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
        fig.dpi = old_dpi
        fig.set_facecolor(old_face)


def binomial_band(n: float, p, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Central ``level`` quantiles of Binomial(``n``, ``p``): the band a count lies in under the null.

    Equal to ``scipy.stats.binom.ppf((1 ∓ level) / 2, n, p)`` (for ``0 < level < 1``), computed
    by the ufunc behind it: importing :mod:`scipy.stats` costs about 0.8 s, a third of a report.
    Falls back to :mod:`scipy.stats` where scipy does not expose that ufunc.
    """
    alpha = 1.0 - float(level)
    q = np.array([alpha / 2, 1.0 - alpha / 2])
    p = np.asarray(p, dtype=np.float64)
    try:
        from scipy.special._ufuncs import _binom_ppf as ppf  # what binom.ppf calls for 0 < q < 1
    except ImportError:  # pragma: no cover - older scipy
        from scipy.stats import binom

        ppf = binom.ppf
    return ppf(q[0], n, p), ppf(q[1], n, p)


def subsample_indices(n: int, max_points: int = 5000, seed: int = 0) -> np.ndarray:
    """Sorted indices of at most ``max_points`` rows out of ``n``, drawn without replacement.

    All rows (``arange(n)``) when ``n <= max_points``; otherwise a uniformly random subset
    from ``numpy.random.default_rng(seed)``, so the same call gives the same rows.
    """
    n = int(n)
    max_points = int(max_points)
    if max_points < 1:
        raise InputError(f"max_points must be >= 1, got {max_points}")
    if n <= max_points:
        return np.arange(n)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n, size=max_points, replace=False))


def _bin_starts(x_sorted: np.ndarray, n_bins: int) -> np.ndarray:
    """Start index of each non-empty equal-width bin of ascending ``x_sorted``."""
    edges = np.linspace(x_sorted[0], x_sorted[-1], n_bins + 1)[:-1]
    starts = np.searchsorted(x_sorted, edges, side="left")
    return np.unique(starts)  # drops empty bins (repeated starts)


def envelope_downsample(
    x_sorted: np.ndarray, y: np.ndarray, n_bins: int = 1000
) -> tuple[np.ndarray, np.ndarray]:
    """Reduce a line ``y(x)`` to first/min/max/last per equal-width ``x`` bin (M4).

    With ``n_bins`` at least the plot's width in pixels, the reduced polyline rasterises
    like the full one: every pixel column keeps its extent and its entry/exit points.
    ``x_sorted`` must be ascending. Returns ``(x, y)`` with at most ``4 * n_bins`` vertices
    (the inputs unchanged if they are already that small). O(N).
    """
    x_sorted = np.asarray(x_sorted, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x_sorted.size
    if n <= 4 * n_bins:
        return x_sorted, y
    starts = _bin_starts(x_sorted, n_bins)
    ends = np.append(starts[1:], n) - 1
    centre = 0.5 * (x_sorted[starts] + x_sorted[ends])
    xs = np.stack([x_sorted[starts], centre, centre, x_sorted[ends]], axis=1).ravel()
    ys = np.stack(
        [y[starts], np.minimum.reduceat(y, starts), np.maximum.reduceat(y, starts), y[ends]],
        axis=1,
    ).ravel()
    return xs, ys


def band_downsample(
    x_sorted: np.ndarray, lower: np.ndarray, upper: np.ndarray, n_bins: int = 1000
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reduce a band ``[lower(x), upper(x)]`` to its per-bin envelope.

    Each equal-width ``x`` bin becomes a flat segment from its first to its last ``x``
    spanning ``min(lower)`` .. ``max(upper)`` over the bin, so the filled area covers every
    row's band. Returns ``(x, lo, hi)`` with at most ``2 * n_bins`` vertices. O(N).
    """
    x_sorted = np.asarray(x_sorted, dtype=np.float64)
    lower = np.asarray(lower, dtype=np.float64)
    upper = np.asarray(upper, dtype=np.float64)
    n = x_sorted.size
    if n <= 2 * n_bins:
        return x_sorted, lower, upper
    starts = _bin_starts(x_sorted, n_bins)
    ends = np.append(starts[1:], n) - 1
    xs = np.stack([x_sorted[starts], x_sorted[ends]], axis=1).ravel()
    lo = np.repeat(np.minimum.reduceat(lower, starts), 2)
    hi = np.repeat(np.maximum.reduceat(upper, starts), 2)
    return xs, lo, hi


def step_vertices(n: int, max_vertices: int = 2000, keep: Sequence[int] = ()) -> np.ndarray:
    """Indices ``0..n-1`` thinned to about ``max_vertices``, always including ``keep``.

    For drawing a step function whose ``i``-th jump is at a sorted position ``i``:
    evenly spaced indices plus the first, the last and every index in ``keep``.
    """
    if n <= max_vertices:
        return np.arange(n)
    idx = np.linspace(0, n - 1, max_vertices).round().astype(np.int64)
    extra = np.asarray([k for k in keep if 0 <= k < n], dtype=np.int64)
    return np.unique(np.concatenate([idx, extra]))


def finite_1d(x, name: str) -> np.ndarray:
    """``x`` as a finite 1-d float array (InputError naming ``name`` otherwise)."""
    arr = as_float_array(x, name, ndim=1)
    check_finite(arr, name)
    return arr


def finite_columns(**arrays) -> dict[str, np.ndarray]:
    """Validate several same-length finite 1-d arrays given by keyword; those given as None are left out."""
    given = [k for k, v in arrays.items() if v is not None]
    out = dict(zip(given, finite_arrays(**arrays)))
    if given and len(out[given[0]]) == 0:
        raise InputError(f"{given[0]} has no rows to plot")
    return out


def nan_if_null(v: Any) -> float:
    """A JSON number to draw: ``null`` (not computed, or not finite) is NaN, which draws nothing."""
    return float("nan") if v is None else float(v)


def estimate_bounds(value: Any) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of a JSON value: ``{estimate, low, high}`` (``uqeval compare``), or a number
    alone (NaN bounds); ``null`` is NaN (:func:`nan_if_null`)."""
    if isinstance(value, Mapping):
        return (
            nan_if_null(value.get("estimate")),
            nan_if_null(value.get("low")),
            nan_if_null(value.get("high")),
        )
    return nan_if_null(value), float("nan"), float("nan")


def check_unit_interval(arr: np.ndarray, name: str) -> None:
    """Raise unless every value of ``arr`` lies in [0, 1]."""
    bad = (arr < 0.0) | (arr > 1.0)
    if bad.any():
        idx = np.flatnonzero(bad)
        raise InputError(
            f"{name} must lie in [0, 1]: {idx.size} value(s) outside (first at row {idx[0]}, "
            f"found {arr[idx[0]]:g}); pass probabilities (PIT values), not percentages"
        )


def write_figure(path: str | Path, fig: Any, dpi: int = 150) -> None:
    """Render a matplotlib Figure (Agg) to PNG/SVG/PDF by extension, atomically."""
    from ..io.writers import atomic_write_bytes

    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    if fmt not in PLOT_FORMATS:
        raise InputError(f"{path}: plots are written as .png, .svg or .pdf")
    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    atomic_write_bytes(path, figure_to_bytes(fig, fmt, dpi))
