"""Tests of uqeval.metrics.sharpness."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.reference.regen_toolbox import toolbox_datasets
from uqeval.errors import InputError
from uqeval.metrics.sharpness import sharpness

# uncertainty-toolbox 0.1.1, get_all_metrics(...)["sharpness"]; regenerate with
# python tests/reference/regen_toolbox.py
TOOLBOX_SHARPNESS = {
    "miscal_500": {"sharp": 0.5595069257837654},
    "odd_37": {"sharp": 2.388563686922852},
    "offset_201": {"sharp": 0.9000000000000001},
}


@pytest.mark.parametrize("name", sorted(TOOLBOX_SHARPNESS))
def test_matches_uncertainty_toolbox(name):
    _, _, std = toolbox_datasets()[name]
    got = sharpness(std)
    assert set(got) == {"sharp", "mean_std"}
    assert got["sharp"] == pytest.approx(TOOLBOX_SHARPNESS[name]["sharp"], rel=1e-9)
    assert got["mean_std"] == pytest.approx(np.mean(std), rel=1e-12)


def test_hand_computed():
    got = sharpness([1.0, 3.0])
    assert got["sharp"] == pytest.approx(math.sqrt(5.0))
    assert got["mean_std"] == pytest.approx(2.0)
    assert sharpness([0.7]) == {"sharp": pytest.approx(0.7), "mean_std": pytest.approx(0.7)}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.floats(1e-6, 1e6), min_size=1, max_size=50), st.randoms(use_true_random=False))
def test_properties(stds, rnd):
    std = np.array(stds)
    got = sharpness(std)
    shuffled = sharpness(np.array(rnd.sample(stds, len(stds))))
    assert shuffled["sharp"] == pytest.approx(got["sharp"], rel=1e-12)
    assert shuffled["mean_std"] == pytest.approx(got["mean_std"], rel=1e-12)
    # power-mean inequality, and scale equivariance
    assert std.min() * (1 - 1e-12) <= got["mean_std"] <= got["sharp"] * (1 + 1e-12) <= std.max() * (1 + 1e-9)
    assert sharpness(3.0 * std)["sharp"] == pytest.approx(3.0 * got["sharp"], rel=1e-12)


def test_bad_input():
    with pytest.raises(InputError, match="std must be > 0"):
        sharpness([1.0, 0.0])
    with pytest.raises(InputError, match="std must be finite"):
        sharpness([1.0, np.inf])
    with pytest.raises(InputError, match="no rows"):
        sharpness([])
