"""Saved recalibrators: versioned JSON round trips and clean refusals."""

import json

import numpy as np
import pytest

from sample_data.accrue_problems import make_g
from uqeval import __version__
from uqeval.errors import InputError
from uqeval.recalibration import (
    apply_accrue,
    apply_conformal,
    apply_std_scaling,
    fit_accrue,
    fit_conformal,
    fit_isotonic,
    fit_std_scaling,
    isotonic_quantiles,
    load_state,
    save_state,
)
from uqeval.recalibration.serialize import FORMAT


@pytest.fixture(scope="module")
def data():
    d = make_g(200, seed=0)
    d["std"] = np.full(200, 0.6)
    return d


@pytest.fixture(scope="module")
def states(data):
    y, mu, sd, x = data["y"], data["mean"], data["std"], data["x"]
    return {
        "std_scaling": fit_std_scaling(y, mu, sd, "ma_cal"),
        "isotonic": fit_isotonic(y, mu, sd),
        "conformal": fit_conformal(y, mu, sd, levels=[0.8, 0.9]),
        "accrue": fit_accrue(x, y, mu, model="poly"),
    }


@pytest.mark.parametrize("method", ["std_scaling", "isotonic", "conformal", "accrue"])
def test_round_trip_is_exact(states, data, method):
    state = states[method]
    text = save_state(state)
    doc = json.loads(text)
    assert doc["format"] == FORMAT == "uqeval.recalibrator/1"
    assert doc["uqeval_version"] == __version__
    assert doc["method"] == method
    loaded = load_state(text)
    assert loaded == state
    mu, sd, x = data["mean"], data["std"], data["x"]
    if method == "std_scaling":
        np.testing.assert_array_equal(apply_std_scaling(loaded, sd), apply_std_scaling(state, sd))
    elif method == "isotonic":
        np.testing.assert_array_equal(
            isotonic_quantiles(loaded, mu, sd, [0.1, 0.9]), isotonic_quantiles(state, mu, sd, [0.1, 0.9])
        )
    elif method == "conformal":
        a, b = apply_conformal(loaded, mu, sd), apply_conformal(state, mu, sd)
        assert a.keys() == b.keys()
        for level in a:
            np.testing.assert_array_equal(a[level][0], b[level][0])
    else:
        np.testing.assert_array_equal(apply_accrue(loaded, x), apply_accrue(state, x))


def test_bytes_are_accepted(states):
    assert load_state(save_state(states["conformal"]).encode()) == states["conformal"]


def _doc(states, **changes):
    doc = json.loads(save_state(states["std_scaling"]))
    doc.update(changes)
    return json.dumps(doc)


def test_refuses_other_format(states):
    with pytest.raises(InputError, match="format"):
        load_state(_doc(states, format="uqeval.recalibrator/2"))
    with pytest.raises(InputError, match="format"):
        load_state(json.dumps({"factor": 2.0}))


def test_refuses_other_major_version(states):
    major = int(__version__.split(".")[0])
    with pytest.raises(InputError, match="incompatible"):
        load_state(_doc(states, uqeval_version=f"{major + 1}.0.0"))
    with pytest.raises(InputError, match="uqeval_version"):
        load_state(_doc(states, uqeval_version=None))
    with pytest.raises(InputError, match="unreadable"):
        load_state(_doc(states, uqeval_version="banana"))
    # another minor/patch of the same major is fine
    assert load_state(_doc(states, uqeval_version=f"{major}.99.1"))["method"] == "std_scaling"


def test_refuses_malformed_json():
    with pytest.raises(InputError, match="not valid JSON"):
        load_state('{"format": "uqeval.recalibrator/1", ')
    with pytest.raises(InputError, match="not valid JSON"):
        load_state(
            '{"format": "uqeval.recalibrator/1", "uqeval_version": "0.1.0", '
            '"state": {"method": "std_scaling", "criterion": "nll", "factor": NaN}}'
        )
    with pytest.raises(InputError, match="JSON object"):
        load_state("[1, 2]")


def test_refuses_incomplete_state(states):
    doc = json.loads(save_state(states["std_scaling"]))
    del doc["state"]["factor"]
    with pytest.raises(InputError, match="missing factor"):
        load_state(json.dumps(doc))
    doc = json.loads(save_state(states["std_scaling"]))
    doc["method"] = "isotonic"
    with pytest.raises(InputError, match="inconsistent"):
        load_state(json.dumps(doc))
    doc = json.loads(save_state(states["std_scaling"]))
    doc["state"] = [1]
    with pytest.raises(InputError, match="state"):
        load_state(json.dumps(doc))


def test_save_refuses_non_json_values():
    with pytest.raises(InputError, match="plain JSON"):
        save_state({"method": "std_scaling", "factor": float("nan")})
    with pytest.raises(InputError, match="plain JSON"):
        save_state({"method": "std_scaling", "factor": np.array([1.0])})
    with pytest.raises(InputError, match="method"):
        save_state({"factor": 1.0})


def test_unknown_methods_pass_through():
    # e.g. the temperature-scaling recalibrator of another module
    state = {"method": "temperature", "temperature": 1.5}
    assert load_state(save_state(state)) == state


def test_non_finite_diagnostics_are_saved_as_null_and_parameters_refused():
    from uqeval.recalibration.serialize import load_state, save_state

    state = load_state(
        save_state(
            {"method": "std_scaling", "criterion": "nll", "factor": 1.5, "before": {"nll": float("inf")}}
        )
    )
    assert state["before"]["nll"] is None and state["factor"] == 1.5
    with pytest.raises(InputError, match=r"'state.factor' \(inf\)"):
        save_state({"method": "std_scaling", "criterion": "nll", "factor": float("inf")})
