"""Issue 40: the Python API as scikit-learn and pandas users type it: string and categorical labels with
classes=, (N, 1) targets, the member_axis hint, compare() on everything evaluate() takes, and one
convention for the array functions (reduce="mean" by default, reduce=None per row)."""

import json

import numpy as np
import pandas as pd
import pytest

import uqeval
from uqeval.errors import InputError, UsageError


def _classifier(n=300, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p = np.clip(0.5 * y + rng.uniform(0, 0.5, n), 0.01, 0.99)
    return y, np.column_stack([1 - p, p])


def test_string_labels_are_ordered_as_label_encoder_orders_them():
    y, proba = _classifier()
    names = np.where(y == 1, "malignant", "benign")  # sorted: benign (column 0), malignant (column 1)
    want = uqeval.evaluate(y, proba=proba).to_json()
    assert uqeval.evaluate(names, proba=proba).to_json() == want
    assert uqeval.evaluate(list(names), proba=proba).to_json() == want
    assert uqeval.evaluate(pd.Series(names, dtype="category"), proba=proba).to_json() == want


def test_classes_give_the_order_of_the_columns():
    y, proba = _classifier()
    names = np.where(y == 1, "malignant", "benign")
    want = uqeval.evaluate(y, proba=proba)
    swapped = proba[:, ::-1]  # column 0 is malignant here, as a classifier's classes_ would say
    got = uqeval.evaluate(names, proba=swapped, classes=["malignant", "benign"])
    for key in ("brier", "nll", "ece", "accuracy"):
        assert got[key] == pytest.approx(want[key], rel=1e-12)
    want = want.to_json()
    # numbers too: labels 7 and 3 in the order classes= gives
    assert uqeval.evaluate(np.where(y == 1, 7, 3), proba=proba, classes=[3, 7]).to_json() == want
    with pytest.raises(InputError, match=r"label 'other' at row 0, which is not one of classes="):
        uqeval.evaluate(np.r_[["other"], names[1:]], proba=proba, classes=["benign", "malignant"])


def test_a_table_with_text_labels_and_class_columns():
    y, proba = _classifier()
    names = np.where(y == 1, "yes", "no")
    want = uqeval.evaluate(y, proba=proba).to_json()
    frame = pd.DataFrame({"label": names, "p_0": proba[:, 0], "p_1": proba[:, 1]})
    before = frame.copy()
    got = json.loads(uqeval.evaluate(frame).to_json())
    assert got["metrics"] == json.loads(want)["metrics"]
    named = uqeval.evaluate(frame, target="label", proba=["p_0", "p_1"])
    assert named.nested() == got["metrics"]
    pd.testing.assert_frame_equal(frame, before)  # the input is not changed


def test_missing_labels_of_every_kind_are_missing_and_the_rest_encoded_in_order():
    """None, NaN of any float type, pandas' NA and NaT are missing labels (NaN codes); the others take their
    position in the sorted labels or in classes= (one hash lookup for all rows, not a loop over them)."""
    from uqeval.api.inputs import _encode_labels

    labels = np.array(["b", None, "a", np.nan, np.float32("nan"), pd.NA, pd.NaT, np.str_("b")], dtype=object)
    codes = _encode_labels(labels, None)
    np.testing.assert_array_equal(codes, [1, np.nan, 0, np.nan, np.nan, np.nan, np.nan, 1])
    np.testing.assert_array_equal(_encode_labels([np.int64(7), 3.0, None], [3, 7]), [1, 0, np.nan])
    with pytest.raises(InputError, match=r"label 'c' at row 2, which is not one of classes= \('a', 'b'\)"):
        _encode_labels(["a", None, "c", "d"], ["a", "b"])


def test_column_vectors_are_one_value_per_row():
    rng = np.random.default_rng(1)
    y, mu = rng.normal(size=100), rng.normal(size=100)
    want = uqeval.evaluate(y, mean=mu, std=1.0).to_json()
    assert uqeval.evaluate(y[:, None], mean=mu[:, None], std=1.0).to_json() == want
    assert uqeval.evaluate(y_true=y.reshape(-1, 1), y_pred=mu, std=np.ones((100, 1))).to_json() == want


def test_samples_with_the_members_first_get_the_member_axis_hint():
    rng = np.random.default_rng(2)
    y, members = rng.normal(size=177), rng.normal(size=(50, 177))
    with pytest.raises(InputError, match=r"samples has 50 rows but y_true has 177; .*pass member_axis=0"):
        uqeval.evaluate(y, samples=members)
    assert uqeval.evaluate(y, samples=members, member_axis=0)["crps"] > 0


def _gaussian_models(n=400):
    rng = np.random.default_rng(0)
    y = rng.normal(size=n)
    a = uqeval.Gaussian(y_true=y, mean=np.zeros(n), std=np.ones(n))
    b = uqeval.Gaussian(y_true=y, mean=np.zeros(n), std=np.full(n, 3.0))
    return y, a, b


def _compare(models, **kw):
    return uqeval.compare(models, metrics=["crps", "nll"], n_boot=50, n_permutations=0, **kw)


def test_compare_takes_everything_evaluate_takes(tmp_path):
    y, a, b = _gaussian_models()
    want = _compare({"a": a, "b": b})
    frame = pd.DataFrame({"obs": y, "mu": b.mean, "sd": b.std})
    path = tmp_path / "b.parquet"
    frame.to_parquet(path)
    for other in (
        uqeval.evaluate(y, mean=b.mean, std=b.std),  # Scores
        {"mean": b.mean, "std": b.std},  # {role: array}, the targets given once
        {"y_pred": b.mean, "sigma": b.std},  # the same in the aliases
    ):
        got = _compare({"a": a, "b": other}, y_true=y)
        assert got["metrics"] == want["metrics"]
    for other in (frame, str(path), path):  # a DataFrame, a file: columns named once for all
        got = _compare({"a": a, "b": other}, y="obs", mean="mu", std="sd")
        assert got["metrics"] == want["metrics"]
    assert _compare([a, b])["metrics"]["crps"]["best"] == ["model 1"]


def test_compare_returns_a_dict_with_to_frame_and_to_json():
    _, a, b = _gaussian_models()
    out = _compare({"a": a, "b": b})
    assert isinstance(out, dict) and out["metrics"]["crps"]["best"] == ["a"]  # as before issue 40
    frame = out.to_frame()
    assert list(frame[["metric", "model"]].itertuples(index=False, name=None)) == [
        ("crps", "a"),
        ("crps", "b"),
        ("nll", "a"),
        ("nll", "b"),
    ]
    assert frame.loc[(frame.metric == "crps") & (frame.model == "a"), "best"].item()
    assert frame.loc[0, "estimate"] == out["metrics"]["crps"]["values"]["a"]["estimate"]
    document = json.loads(out.to_json())
    assert document["schema"] == "uqeval.compare/1"
    assert document["metrics"]["crps"]["values"]["b"]["estimate"] == pytest.approx(frame.loc[1, "estimate"])


def test_compare_names_the_model_it_cannot_read():
    _, a, _ = _gaussian_models()
    with pytest.raises(UsageError, match=r"model 'b': a model is a prediction container, Scores, a file"):
        uqeval.compare({"a": a, "b": np.zeros(3)})
    with pytest.raises(InputError, match=r"model 'b': .*does not exist|model 'b': .*no such"):
        uqeval.compare({"a": a, "b": "missing.csv"})


FUNCTIONS = {  # name: (arguments, per-row length)
    "crps_normal": (([0.0, 1.0, 2.0], 0.0, 1.0), 3),
    "logs_normal": (([0.0, 1.0, 2.0], 0.0, 1.0), 3),
    "crps_ensemble": (([0.0, 1.0, 2.0], [[0.0, 1.0]] * 3), 3),
    "pinball_loss": (([0.0, 1.0, 2.0], [[0.0, 1.0]] * 3, [0.1, 0.9]), 3),
    "interval_score": (([0.0, 1.0, 2.0], -1.0, 1.0, 0.9), 3),
    "weighted_interval_score": (([0.0, 1.0, 2.0], [[-1.0, 0.0, 1.0]] * 3, [0.1, 0.5, 0.9]), 3),
    "coverage": (([0.0, 1.0, 2.0], -1.0, 1.5), 3),
    "brier_score": (([0, 1, 1], [0.2, 0.7, 0.4]), 3),
    "log_loss": (([0, 1, 1], [0.2, 0.7, 0.4]), 3),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_array_functions_share_one_convention(name):
    fn = getattr(uqeval, name)
    args, n = FUNCTIONS[name]
    total = fn(*args)
    rows = fn(*args, reduce=None)
    assert isinstance(total, float)
    assert len(rows) == n
    assert total == pytest.approx(float(np.mean(rows)))
    assert fn(*args, reduce="mean") == total
    with pytest.raises(InputError, match="reduce must be 'mean'"):
        fn(*args, reduce="sum")


@pytest.mark.parametrize("name", ["calibration_error", "expected_calibration_error"])
def test_summaries_have_no_per_row_values(name):
    fn = getattr(uqeval, name)
    args = ([0.0, 1.0, 2.0], 0.0, 1.0) if name == "calibration_error" else ([0, 1, 1], [0.2, 0.7, 0.4])
    assert isinstance(fn(*args), float)
    with pytest.raises(InputError, match="summary of all rows"):
        fn(*args, reduce=None)


def test_classifier_functions_take_string_labels():
    labels = ["no", "yes", "yes"]
    assert uqeval.log_loss(labels, [0.2, 0.7, 0.4]) == uqeval.log_loss([0, 1, 1], [0.2, 0.7, 0.4])
    assert uqeval.brier_score(labels, [0.8, 0.3, 0.6], classes=["yes", "no"]) == uqeval.brier_score(
        [0, 1, 1], [0.2, 0.7, 0.4]
    )
