"""``uqeval monitor --plot`` (issue 38): panels labelled with the glossary's names, one time axis for every
panel, the tests' e-values against their threshold, and legends beside the axes, never over the data."""

from __future__ import annotations

import numpy as np

import uqeval
from uqeval.plots.monitor import metric_label, plot_monitor


def test_panels_share_one_time_axis_with_glossary_labels_and_legends_off_the_data():
    rng = np.random.default_rng(4)
    n = 3000
    sd = np.where(np.arange(n) >= 2000, 0.5, 1.0)  # over-confident from row 2000: an alarm
    doc = uqeval.monitor(y_true=rng.normal(size=n), mean=0.0, std=sd, window=250)
    fig = plot_monitor(doc)
    fig.canvas.draw()
    axes = fig.axes
    labels = [ax.get_ylabel().replace("\n", " ") for ax in axes]
    assert labels[0] == "Empirical coverage (0.95)" and labels[-1] == "Log10 e-detector"
    assert not any("." in label.split("(")[0] for label in labels)  # no metric paths
    assert all(ax.get_shared_x_axes().joined(axes[0], ax) for ax in axes)
    for ax in axes:
        legend = ax.get_legend()
        if legend is not None:
            assert legend.get_window_extent().x0 >= ax.get_window_extent().x1  # right of the axes
    assert metric_label("scoring_rule.crps") == "Continuous ranked probability score"
    assert metric_label("no_such.metric") == "no_such.metric"
