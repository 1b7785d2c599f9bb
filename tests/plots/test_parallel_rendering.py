"""Figures drawn in forked processes (``uqeval.plots.RENDER_PROCESSES``, set by the CLI): the same bytes as
drawn one by one in this process, and a child that fails leaves its figures to the parent."""

from __future__ import annotations

import os

import numpy as np
import pytest

import uqeval.plots
from uqeval.config import Settings
from uqeval.predictions import Gaussian
from uqeval.tasks.plot import _fork_map, build_figures, encode_figures

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")


def _figures():
    rng = np.random.default_rng(0)
    mu = rng.normal(size=400)
    pred = Gaussian(y_true=mu + rng.normal(size=400), mean=mu, std=np.ones(400))
    return build_figures(pred, None, Settings(), name="m.parquet").figures


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_forked_drawing_gives_the_same_bytes(monkeypatch, fmt):
    monkeypatch.setattr(uqeval.plots, "RENDER_PROCESSES", 1)
    alone = encode_figures(_figures(), fmt)
    for processes in (2, 3):
        monkeypatch.setattr(uqeval.plots, "RENDER_PROCESSES", processes)
        forked = encode_figures(_figures(), fmt)
        assert list(forked) == list(alone) and len(alone) >= 5
        assert forked == alone


def test_a_failing_child_leaves_its_share_to_the_parent():
    parent = os.getpid()

    def square(x):
        if os.getpid() != parent:
            raise RuntimeError("child failure")
        return x * x

    assert _fork_map(square, list(range(7)), 2) == [x * x for x in range(7)]
    assert _fork_map(square, [3], 2) == [9]  # one item: no child
    assert _fork_map(square, [], 2) == []


def test_a_failure_in_the_parent_is_raised():
    parent = os.getpid()

    def fail_here(x):
        if os.getpid() == parent and x == 2:
            raise ValueError("parent failure")
        return x

    with pytest.raises(ValueError, match="parent failure"):  # after the child was waited for
        _fork_map(fail_here, list(range(6)), 2)
