"""Tests of uqeval.recalibration.temperature (temperature scaling, Guo et al. 2017)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from uqeval.errors import InputError
from uqeval.metrics.classification import classification_accuracy
from uqeval.recalibration.temperature import apply_temperature, fit_temperature

from ..conftest import softmax


def sample_labels(rng, proba):
    u = rng.random(len(proba))
    return np.minimum((u[:, None] > np.cumsum(proba, axis=1)).sum(axis=1), proba.shape[1] - 1)


def miscalibrated(seed, n, k, temperature):
    """Labels drawn from softmax(z); the model reports logits z * temperature."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, k)) * 1.5
    y = sample_labels(rng, softmax(z))
    return z * temperature, y


def direct_nll(logits, y, temperature):
    z = logits / temperature
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-np.mean(logp[np.arange(len(y)), y]))


@pytest.mark.parametrize("true_t", [0.5, 1.0, 2.5])
def test_recovers_known_temperature(true_t):
    logits, y = miscalibrated(7, 20000, 5, true_t)
    state = fit_temperature(logits, y)
    assert state["method"] == "temperature"
    assert state["temperature"] == pytest.approx(true_t, rel=0.05)
    assert state["nll_after"] <= state["nll_before"]


def test_fit_is_the_nll_minimum():
    logits, y = miscalibrated(3, 3000, 4, 1.8)
    state = fit_temperature(logits, y)
    t = state["temperature"]
    assert state["nll_before"] == pytest.approx(direct_nll(logits, y, 1.0), rel=1e-13)
    assert state["nll_after"] == pytest.approx(direct_nll(logits, y, t), rel=1e-13)
    for factor in (0.99, 1.01, 0.9, 1.1):
        assert direct_nll(logits, y, t * factor) >= state["nll_after"] - 1e-12
    # NLL before equals the clipped log loss of the kernels when no probability is tiny
    assert state["nll_before"] == pytest.approx(classification_accuracy(softmax(logits), y)["nll"], rel=1e-12)


def test_fit_is_the_root_of_the_slope():
    # a closed-form check of the optimiser: the NLL's derivative in 1/T (a central difference of the
    # direct NLL) vanishes at the fit, to the difference's own error
    logits, y = miscalibrated(11, 5000, 6, 0.7)
    beta, h = 1.0 / fit_temperature(logits, y)["temperature"], 1e-5
    slope = (direct_nll(logits, y, 1 / (beta + h)) - direct_nll(logits, y, 1 / (beta - h))) / (2 * h)
    assert abs(slope) < 1e-9


@settings(max_examples=20, deadline=None, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1), n=st.integers(2, 200), k=st.integers(2, 6), scale=st.floats(0.05, 20.0)
)
def test_nll_after_never_above_before(seed, n, k, scale):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((n, k)) * scale
    y = rng.integers(0, k, n)
    state = fit_temperature(logits, y)
    assert state["nll_after"] <= state["nll_before"]
    assert 0.01 <= state["temperature"] <= 100.0


def test_log_proba_and_proba_inputs_give_the_same_fit():
    logits, y = miscalibrated(5, 2000, 3, 2.0)
    p = softmax(logits)
    a = fit_temperature(logits, y)
    b = fit_temperature(np.log(p), y)
    c = fit_temperature(p, y, kind="proba")
    assert b["temperature"] == pytest.approx(a["temperature"], rel=1e-6)
    assert c["temperature"] == pytest.approx(a["temperature"], rel=1e-6)


def test_apply_matches_softmax_of_scaled_logits_and_round_trips_json():
    logits, y = miscalibrated(9, 500, 4, 3.0)
    state = json.loads(json.dumps(fit_temperature(logits, y)))
    t = state["temperature"]
    want = softmax(logits / t)
    np.testing.assert_allclose(apply_temperature(logits, state), want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        apply_temperature(softmax(logits), state, kind="proba"), want, rtol=1e-10, atol=1e-15
    )
    # the recalibrated probabilities have the fitted NLL
    assert classification_accuracy(apply_temperature(logits, state), y)["nll"] == pytest.approx(
        state["nll_after"], rel=1e-10
    )


def test_apply_keeps_zero_probabilities_zero():
    p = np.array([[0.7, 0.3, 0.0]])
    out = apply_temperature(p, {"method": "temperature", "temperature": 2.0}, kind="proba")
    assert out[0, 2] == 0.0
    np.testing.assert_allclose(out[0, :2], np.sqrt([0.7, 0.3]) / np.sqrt([0.7, 0.3]).sum())


def test_bad_states_and_inputs():
    z = np.zeros((2, 3))
    with pytest.raises(InputError, match="temperature-scaling state"):
        apply_temperature(z, {"method": "isotonic"})
    with pytest.raises(InputError, match="> 0"):
        apply_temperature(z, {"method": "temperature", "temperature": -1.0})
    with pytest.raises(InputError, match="kind"):
        apply_temperature(z, {"method": "temperature", "temperature": 1.0}, kind="odds")
    with pytest.raises(InputError, match="probability 0"):
        fit_temperature(np.array([[1.0, 0.0], [0.5, 0.5]]), np.array([1, 0]), kind="proba")
    with pytest.raises(InputError, match="0..2"):
        fit_temperature(z, np.array([0, 3]))
    with pytest.raises(InputError, match="finite"):
        fit_temperature(np.array([[np.nan, 0.0]]), np.array([0]))


def test_separable_data_drive_the_temperature_down():
    # every label is the top class: NLL falls as T falls, to 0 in doubles below T ~ 0.27
    logits = np.array([[5.0, -5.0], [-5.0, 5.0]])
    state = fit_temperature(logits, np.array([0, 1]))
    assert state["temperature"] < 0.3
    assert math.isclose(state["nll_after"], 0.0, abs_tol=1e-15)
    assert state["nll_before"] == pytest.approx(math.log1p(math.exp(-10.0)), rel=1e-12)


def test_bad_rows_are_counted_over_every_block():
    # the row maxima are checked block by block: the count and the first row cover all blocks
    z = np.zeros((3 * 8192 + 5, 3))
    z[10_000, 1] = np.nan
    z[20_000, :] = -np.inf
    z[24_580, 0] = np.inf
    with pytest.raises(InputError, match=r"3 bad row\(s\) \(first at row 10000\)"):
        fit_temperature(z, np.zeros(len(z), dtype=int))


@pytest.mark.parametrize("k", [2, 3, 10, 32, 33, 50])
def test_row_max_equals_numpy_max_with_nan_and_inf(k):
    from uqeval.recalibration.temperature import _row_max

    rng = np.random.default_rng(k)
    a = rng.standard_normal((200, k))
    a[3, 0], a[5, k - 1], a[7, k // 2] = np.nan, np.nan, np.inf
    a[9, :] = -np.inf
    a[11, 1], a[11, 0] = np.nan, np.inf
    got = _row_max(a, np.empty(200))
    np.testing.assert_array_equal(got, np.max(a, axis=1))  # NaN where numpy's max is NaN
