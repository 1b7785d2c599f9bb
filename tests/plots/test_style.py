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
