"""Tests of uqeval.plots.classification: each builder returns a Figure that renders a valid PNG."""

from __future__ import annotations

import io

import numpy as np
import pytest
from matplotlib.figure import Figure

from uqeval.metrics.classification import calibration_errors, prediction_sets, reliability_bins
from uqeval.plots.classification import confidence_histogram, reliability_diagram, set_size_vs_coverage

from ..conftest import softmax

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_bytes(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    p = softmax(rng.standard_normal((3000, 6)) * 3.0)
    p[:7] = np.eye(6)[rng.integers(0, 6, 7)]  # a few rows with probability exactly 1
    y = rng.integers(0, 6, 3000)
    return p, y


def check_png(fig: Figure, min_bytes: int = 10_000) -> None:
    assert isinstance(fig, Figure)
    raw = png_bytes(fig)
    assert raw[:8] == PNG_SIGNATURE
    assert len(raw) > min_bytes
    width, height = int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
    assert width >= 300 and height >= 300


def test_reliability_diagram(data):
    p, y = data
    ece = calibration_errors(p, y)["ece"]
    fig = reliability_diagram(reliability_bins(p, y), ece=ece)
    check_png(fig)
    assert f"ECE = {ece:.4f}" in fig.axes[0].get_title()
    assert len(fig.axes) == 2  # diagram and counts


def test_reliability_diagram_with_empty_bins_and_no_ece():
    p = np.array([[0.1, 0.9]] * 5 + [[0.45, 0.55]] * 5)
    y = np.array([1, 1, 1, 1, 0, 0, 1, 0, 1, 0])
    fig = reliability_diagram(reliability_bins(p, y, num_bins=10))
    check_png(fig)
    assert fig.axes[0].get_title() == "Reliability diagram"


def test_confidence_histogram(data):
    p, y = data
    check_png(confidence_histogram(reliability_bins(p, y)))


def test_set_size_vs_coverage(data):
    p, y = data
    fig = set_size_vs_coverage(prediction_sets(p, y, [0.5, 0.8, 0.9, 0.95, 0.99]))
    check_png(fig)
    check_png(set_size_vs_coverage(prediction_sets(p, y, 0.95)))


def test_no_pyplot_state():
    import uqeval.plots.classification as mod

    with open(mod.__file__, encoding="utf-8") as fh:
        src = fh.read()
    assert "matplotlib.pyplot" not in src and "import pyplot" not in src
