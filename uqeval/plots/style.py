"""The one style of every uqeval figure, declared once: sizes, fonts, colours, lines, grid, labels.

Every figure builder in :mod:`uqeval.plots` takes its constants from here (through
:mod:`uqeval.plots.common`, which re-exports them), so a model has the same colour, and a label the
same phrasing, in every figure of a run.

* **Palette**: Okabe & Ito (2008), safe for the common colour-vision deficiencies. Models get
  :data:`MODEL_COLORS` in a fixed order: the i-th model of a run (the order the files or the
  ``{name: data}`` mapping give) is always drawn in ``model_color(i)``; a single model is drawn in
  ``model_color(0)`` (:data:`COLORS` ``["main"]``). Roles (bands, references, highlights) use
  :data:`COLORS`.
* **Labels**: sentence case, units in parentheses: ``Miss rate (fraction of rows)``,
  ``Number of rows``, ``Target (units of y)``. :func:`axis_label` turns any label into that form;
  :func:`uqeval.plots.common.style_axes` applies it to every axis label it sets.
* **Rendering**: :data:`RC` holds the rcParams that make the pixels the same on every machine with
  the same matplotlib (DejaVu Sans, which ships with matplotlib; no hinting differences; fixed SVG
  ids). Figures set their font sizes per artist, so these are the only global settings that matter;
  the image tests draw under them.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "COLORS",
    "FIGSIZE",
    "FONT",
    "GRID",
    "LINE",
    "MODEL_COLORS",
    "RC",
    "SQUARE",
    "axis_label",
    "model_color",
    "reference_color",
]

#: Default figure size in inches (960 x 720 px at 150 dpi).
FIGSIZE: tuple[float, float] = (6.4, 4.8)
#: Size of the figures with an aspect-equal unit square (calibration and reliability diagrams).
SQUARE: tuple[float, float] = (5.6, 5.2)

#: Font sizes in points; readable at 100 % zoom at 150 dpi.
FONT: dict[str, float] = {"title": 12.0, "label": 11.0, "tick": 10.0, "legend": 9.5, "note": 9.5}

#: Colours by model, in the fixed order models get them (Okabe & Ito; yellow, the weakest on white, last).
MODEL_COLORS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#E69F00",  # orange
    "#56B4E9",  # sky blue
    "#000000",  # black
    "#F0E442",  # yellow
)

#: Colours by role (the same palette).
COLORS: dict[str, str] = {
    "main": MODEL_COLORS[0],  # predictions, curves: the first (or only) model
    "band": "#56B4E9",  # intervals, shaded bands
    "obs": "#222222",  # observations
    "ref": "#777777",  # diagonals, reference lines
    "accent": "#D55E00",  # highlighted values (max error, mean), one model's reference bands
    "accent2": "#009E73",  # second highlight (RMS)
    "fill": "#E69F00",  # miscalibration area
    "count": "#BBBBBB",  # counts of rows per bin (bars under a curve)
    "frame": "#CCCCCC",  # the frame of a note
}

#: Line widths in points by role.
LINE: dict[str, float] = {"main": 1.6, "ref": 1.0, "thin": 0.8, "edge": 0.5}

#: The grid of every axes (light, behind the data).
GRID: dict[str, object] = {"color": "#dddddd", "linewidth": 0.6}

#: rcParams under which figures render identically across machines (same matplotlib version).
RC: dict[str, object] = {
    "font.family": ["DejaVu Sans"],
    "font.size": 10.0,
    "mathtext.fontset": "dejavusans",
    "svg.hashsalt": "uqeval",
    "svg.fonttype": "path",
    "pdf.fonttype": 42,
    "axes.unicode_minus": True,
    "hatch.linewidth": 1.0,
    "text.hinting": "force_autohint",
}


def model_color(i: int) -> str:
    """The colour of the ``i``-th model of a run (cycled after :data:`MODEL_COLORS`)."""
    return MODEL_COLORS[int(i) % len(MODEL_COLORS)]


def reference_color(overlay: bool) -> str:
    """The colour of a figure's reference band and line (the band of a uniform PIT, a calibrated ensemble's
    expected count): :data:`COLORS` ``["accent"]`` against one model drawn in ``"main"``, and the neutral
    ``"ref"`` grey on an overlay of models, where the accent would be a model's colour (vermillion is the
    second model's)."""
    return COLORS["ref"] if overlay else COLORS["accent"]


def reference_band(overlay: bool) -> dict[str, Any]:
    """The style of a figure's band under calibration (drawn on top of the bars, hatched in
    :func:`reference_color`, so that it stays visible): keyword arguments of ``stairs`` or ``axhspan``."""
    return {
        "facecolor": "none",
        "edgecolor": reference_color(overlay),
        "hatch": "////",
        "linewidth": 0,
        "alpha": 0.8,
        "zorder": 3,
    }


def axis_label(text: str) -> str:
    """``text`` in the house phrasing: sentence case (the first letter upper case when it is an ASCII
    letter: Greek symbols and names such as ``σ`` or ``p`` keep their case only when the label is one
    symbol), units in parentheses (``Miss rate [fraction of rows]`` -> ``Miss rate (fraction of rows)``).

    >>> axis_label("number of rows")
    'Number of rows'
    >>> axis_label("Miss rate [fraction of rows]")
    'Miss rate (fraction of rows)'
    """
    if not text:
        return text
    if text.endswith("]") and " [" in text:  # a trailing unit in brackets
        head, _, unit = text[:-1].rpartition(" [")
        text = f"{head} ({unit})"
    first = text[0]
    if "a" <= first <= "z" and len(text) > 1 and text[1] not in "(_ ":  # "x", "p(class 1)": symbols
        text = first.upper() + text[1:]
    return text
