"""Tests of uqeval.plots.rejection."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.figure import Figure

from uqeval.errors import InputError
from uqeval.metrics.ensembles import rejection_curve
from uqeval.plots.rejection import plot_rejection

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _curves():
    rng = np.random.default_rng(0)
    correct = (rng.uniform(size=500) < 0.8).astype(float)
    unc_a = rng.uniform(size=500) + 0.4 * (1 - correct)
    unc_b = rng.uniform(size=500)
    a = dict(rejection_curve(correct, unc_a), label="ensemble")
    b = rejection_curve(correct, unc_b)
    return [a, b]


def test_plot_rejection_writes_valid_png():
    fig = plot_rejection(_curves(), title="preds.csv: rejection")
    assert isinstance(fig, Figure)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    data = buf.getvalue()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 5000


def test_plot_rejection_draws_model_and_oracle_per_curve():
    curves = _curves()
    fig = plot_rejection(curves, title="t")
    (ax,) = fig.axes
    assert len(ax.lines) == 4
    assert ax.get_title() == "t"
    names = [t.get_text() for t in ax.get_legend().get_texts()]
    assert names[0].startswith("ensemble (AUC") and names[1].startswith("ensemble oracle")
    assert names[2].startswith("model 2")
    assert np.allclose(ax.lines[0].get_ydata(), curves[0]["values"])
    assert np.allclose(ax.lines[1].get_ydata(), curves[0]["oracle_values"])
    assert np.allclose(ax.lines[0].get_xdata(), 100 * curves[0]["fractions"])


def test_plot_rejection_rmse_label_and_errors():
    rng = np.random.default_rng(1)
    err = rng.normal(size=100)
    curve = rejection_curve(err, np.abs(err), kind="rmse")
    fig = plot_rejection([curve], title="r", metric="rmse", labels=["m"])
    assert "RMSE" in fig.axes[0].get_ylabel()
    with pytest.raises(InputError, match="at least one curve"):
        plot_rejection([], title="x")
    with pytest.raises(InputError, match="lacks key"):
        plot_rejection([{"fractions": [0.0]}], title="x")
