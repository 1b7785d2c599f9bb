"""uqeval.plots.style: one style declared once (issue 28) — palette by model, label phrasing, no stray constants."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uqeval.plots.style import COLORS, MODEL_COLORS, axis_label, model_color

PLOTS = Path(__file__).resolve().parents[2] / "uqeval" / "plots"


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("number of rows", "Number of rows"),
        ("Miss rate [fraction of rows]", "Miss rate (fraction of rows)"),
        ("target (units of y)", "Target (units of y)"),
        ("x", "x"),  # a symbol keeps its case
        ("σ per bin", "σ per bin"),
        ("p(class 1)", "p(class 1)"),
        ("", ""),
    ],
)
def test_axis_labels_in_sentence_case_with_units_in_parentheses(given, want):
    assert axis_label(given) == want


def test_models_get_the_palette_in_a_fixed_order():
    assert model_color(0) == COLORS["main"] == MODEL_COLORS[0]
    assert [model_color(i) for i in range(3)] == list(MODEL_COLORS[:3])
    assert model_color(len(MODEL_COLORS)) == MODEL_COLORS[0]  # cycled
    assert len(set(MODEL_COLORS)) == len(MODEL_COLORS)


def test_figure_modules_take_colours_and_fonts_from_the_style():
    """No figure module declares its own palette or font size: hex colours, matplotlib's cycle names
    ("C0", "tab:blue") and relative font sizes ("small") live in style.py only."""
    stray = re.compile(r"#[0-9A-Fa-f]{6}\b|\"tab:|[\"']C\d[\"']|f\"C\{|fontsize=\"(small|large|medium)\"")
    found = [
        f"{p.name}:{n}: {line.strip()}"
        for p in sorted(PLOTS.glob("*.py"))
        if p.name != "style.py"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if stray.search(line)
    ]
    assert not found, found


def _three(rep: str) -> dict:
    """Three models of representation ``rep`` (spread 0.6, 1 and 1.6 times the truth) on the same targets."""
    import numpy as np
    from scipy.stats import norm

    import uqeval

    rng = np.random.default_rng(11)
    n = 300
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    out = {}
    for i, s in enumerate((0.6, 1.0, 1.6)):
        own = np.random.default_rng(i)
        if rep == "gaussian":
            out[f"m{i}"] = uqeval.Gaussian(y_true=y, mean=mu, std=np.full(n, s))
        elif rep == "samples":
            out[f"m{i}"] = uqeval.Samples(y_true=y, samples=mu[:, None] + s * own.normal(size=(n, 9)))
        elif rep == "quantiles":
            lv = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
            out[f"m{i}"] = uqeval.Quantiles(y_true=y, quantiles=mu[:, None] + s * norm.ppf(lv), levels=lv)
        else:
            z = np.stack([mu, -mu], axis=1) / s
            labels = (y > 0).astype(float)
            out[f"m{i}"] = uqeval.Categorical(
                y_true=labels, proba=np.exp(z) / np.exp(z).sum(1, keepdims=True)
            )
    return out


@pytest.mark.parametrize(
    ("rep", "kind"),
    [
        ("gaussian", "pit"),
        ("quantiles", "pit"),
        ("samples", "rank_histogram"),
        ("gaussian", "coverage"),
        ("quantiles", "coverage"),
        ("categorical", "coverage"),
        ("gaussian", "calibration"),
        ("categorical", "reliability"),
    ],
)
def test_reference_bands_of_an_overlay_take_no_model_colour(rep, kind):
    """With several models drawn, every reference (bands, expected counts, diagonals) is neutral: no labelled
    artist other than a model's series has a colour of the palette of models (vermillion, the accent of one
    model's figure, is the second model's)."""
    import matplotlib
    from matplotlib.colors import same_color, to_rgba_array
    from matplotlib.figure import Figure

    import uqeval

    matplotlib.use("Agg")
    models = _three(rep)
    ax = Figure().subplots()
    uqeval.plot(models, kind, ax=ax)
    refs = [
        a
        for a in [*ax.lines, *ax.patches, *ax.collections]
        if not a.get_label().startswith("_") and not a.get_label().startswith(tuple(models))
    ]
    assert refs, "the overlay draws a reference"
    for a in refs:
        for get in ("get_color", "get_edgecolor", "get_facecolor"):
            if not hasattr(a, get):
                continue
            for rgba in to_rgba_array(getattr(a, get)()):
                if rgba[3] > 0:
                    hit = [m for m in MODEL_COLORS if same_color(rgba[:3], m)]
                    assert not hit, (kind, a.get_label(), get, hit)


def test_reference_colour_is_the_accent_for_one_model_and_grey_for_an_overlay():
    from uqeval.plots.style import reference_color

    assert reference_color(overlay=False) == COLORS["accent"]
    assert reference_color(overlay=True) == COLORS["ref"] not in MODEL_COLORS
