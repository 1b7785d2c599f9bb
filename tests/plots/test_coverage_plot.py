"""uqeval.plots.coverage (issue 28): facets share their y axis, the legend fits a single facet, and several
levels add the coverage-by-level panel that uqeval.plot(..., "coverage") draws."""

from __future__ import annotations

import numpy as np

from uqeval.plots.common import figure_to_bytes
from uqeval.plots.coverage import plot_coverage_by_level, plot_coverage_width, pooled_coverage


def _records(facets, levels=("0.9",)):
    rng = np.random.default_rng(0)
    return [
        {
            "method": m,
            "file": f"{m}.csv",
            "facet": f,
            "point": "all",
            "level": lv,
            "n_rows": n,
            "coverage": float(rng.uniform(0.6, 1.0)),
            "width": float(rng.uniform(1, 3)),
        }
        for m in ("alpha (baseline)", "beta ensemble", "gamma dropout")
        for f in facets
        for lv in levels
        for n in (100, 300)
    ]


def test_facets_share_the_coverage_axis():
    recs = _records(["0", "1", "2"])
    fig = plot_coverage_width(recs, {}, "0.9")
    a, b, c = fig.axes[:3]
    assert a.get_shared_y_axes().joined(a, b) and a.get_shared_y_axes().joined(a, c)
    assert a.get_ylim() == c.get_ylim()


def test_single_facet_legend_is_not_clipped():
    fig = plot_coverage_width(_records(["all"]), {}, "0.9")
    figure_to_bytes(fig)  # lays the figure out
    (legend,) = fig.legends
    box = legend.get_window_extent(fig.canvas.get_renderer())
    width = fig.get_figwidth() * fig.dpi
    assert box.x0 >= 0 and box.x1 <= width  # inside the figure on both sides


def test_several_levels_add_the_pooled_coverage_by_level_panel():
    recs = _records(["0", "1"], levels=("0.5", "0.9"))
    fig = plot_coverage_width(recs, {}, "0.9")
    panel = [ax for ax in fig.axes if ax.get_visible() and ax.get_title().startswith("Coverage by level")]
    assert len(panel) == 1
    pooled = pooled_coverage(recs)
    alpha = [r for r in recs if r["method"] == "alpha (baseline)" and r["level"] == "0.5"]
    want = sum(r["n_rows"] * r["coverage"] for r in alpha) / sum(r["n_rows"] for r in alpha)
    np.testing.assert_allclose(pooled["alpha (baseline)"][1][0], want)
    (line,) = [ln for ln in panel[0].lines if ln.get_label().startswith("alpha")]
    np.testing.assert_allclose(line.get_ydata(), pooled["alpha (baseline)"][1])


def test_coverage_by_level_writes_the_sizes_at_the_points():
    fig = plot_coverage_by_level([0.9, 0.5], [0.85, 0.55], sizes=[2.0, 1.0])
    ax = fig.axes[0]
    (line,) = [ln for ln in ax.lines if ln.get_label() == "observed"]
    np.testing.assert_allclose(line.get_xdata(), [0.5, 0.9])  # sorted by level
    assert [t.get_text() for t in ax.texts] == ["1", "2"]
