"""Hypothesis fuzz of the Python API (issue 26): :func:`uqeval.evaluate` over arrays, lists, pandas Series,
pyarrow arrays and DataFrames holding floats, ints, bools, NaN and inf, of matching and mismatched
lengths, and the array functions over the same.

Every call either returns, or raises a clear error: a :class:`uqeval.UqevalError` (a ``ValueError``) or a
plain ``TypeError``/``ValueError`` from the call itself, never an internal ``AttributeError``/``KeyError``,
a numpy ``AxisError`` or a pyarrow error, and its message names no CLI flag and no temporary path.
Seeded and derandomized; modest example counts keep the file to a few seconds.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import uqeval
from uqeval.errors import UqevalError

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: a CLI flag, a temporary file or directory
LEAKS = re.compile(r"(?<![\w-])--[a-z]|/tmp|tmp[a-z0-9_]{4,}|\.parquet")


def outcome(call):
    """Run ``call``; return its result, or None after checking the error it raised is a clear one."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy on inf - inf and the like
            warnings.filterwarnings("error", category=np.exceptions.ComplexWarning)
            return call()
    except UqevalError as exc:
        message = str(exc)
    except (TypeError, ValueError) as exc:
        assert type(exc) in (TypeError, ValueError), f"internal error {type(exc).__name__}: {exc}"
        message = str(exc)
    assert message and "\n" not in message.strip(), message
    assert not LEAKS.search(message), message
    return None


# --------------------------------------------------------------------------- strategies

KINDS = ("float", "float", "int", "bool", "nan", "inf")
WRAPS = ("numpy", "list", "series", "nullable", "arrow")


def _values(draw, shape: tuple[int, ...], positive: bool = False) -> np.ndarray:
    kind = draw(st.sampled_from(KINDS))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if kind == "int":
        return rng.integers(0 if positive else -3, 4, size=shape)
    if kind == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    v = rng.normal(size=shape)
    v = np.abs(v) + 0.1 if positive else v
    if kind in ("nan", "inf") and v.size:
        v.reshape(-1)[rng.integers(0, v.size)] = np.nan if kind == "nan" else -np.inf
    return v


def _wrap(draw, v: np.ndarray):
    how = draw(st.sampled_from(WRAPS if v.ndim == 1 else ("numpy", "list")))
    if how == "list":
        return v.tolist()
    if how == "series":
        return pd.Series(v)
    if how == "nullable" and v.dtype.kind == "f":
        return pd.Series(v).astype("Float64")
    if how == "arrow":
        return pa.array(v)
    return v


@st.composite
def arguments(draw):
    """keyword arguments of :func:`uqeval.evaluate` for one representation, sometimes malformed."""
    n = draw(st.integers(1, 9))

    def length() -> int:
        return draw(st.sampled_from([n, n, n, n, n + 1, max(n - 1, 0)]))

    def arg(positive=False, width=None):
        shape = (length(),) if width is None else (length(), width)
        return _wrap(draw, _values(draw, shape, positive))

    kind = draw(st.sampled_from(["gaussian", "var", "point", "intervals", "quantiles", "samples", "proba"]))
    kw: dict = {"y_true": arg()}
    if kind in ("gaussian", "var", "point", "intervals"):
        kw["mean"] = draw(st.one_of(st.just(None), st.floats(-2, 2))) if kind == "intervals" else arg()
        if kw["mean"] is None:
            del kw["mean"]
    if kind == "gaussian":
        kw["std"] = draw(
            st.one_of(st.floats(0.1, 3), st.builds(lambda: None).map(lambda _: arg(positive=True)))
        )
    if kind == "var":
        kw["var"] = arg(positive=draw(st.booleans()))
    if kind == "intervals":
        lo = _values(draw, (length(),))
        kw["lower"], kw["upper"] = _wrap(draw, lo), _wrap(draw, np.asarray(lo, dtype=float) + 1)
        kw["level"] = draw(st.sampled_from([0.5, 0.9, 1.5]))
    if kind == "quantiles":
        q = np.sort(_values(draw, (length(), 3)).astype(float), axis=1)
        kw["quantiles"] = _wrap(draw, q)
        kw["levels"] = draw(st.sampled_from([[0.1, 0.5, 0.9], [0.1, 0.9], [0.0, 0.5, 1.0]]))
    if kind == "samples":
        m = draw(st.integers(1, 5))
        kw["samples"] = arg(width=m)
        kw["member_axis"] = draw(st.sampled_from([-1, -1, 0, 1, 2, -3]))
    if kind == "proba":
        k = draw(st.integers(1, 3))
        p = np.random.default_rng(n).dirichlet(np.ones(max(k, 2)), size=length())[:, :k]
        kw["proba"] = _wrap(draw, p[:, 0] if k == 1 else p)
        kw["y_true"] = _wrap(draw, np.random.default_rng(k).integers(0, max(k, 2), size=length()))
    if draw(st.booleans()):
        kw["levels"] = kw.get("levels") or draw(st.sampled_from([[0.5, 0.8], [0.9], [0.2, 2.0]]))
    if draw(st.integers(0, 3)) == 0:
        kw["nan_policy"] = "omit"
    return kw


@SETTINGS
@given(arguments())
def test_fuzz_evaluate_arrays(kw):
    scores = outcome(lambda: uqeval.evaluate(**kw))
    if scores is not None:
        assert scores._summary["input"]["n_rows"] >= 1 and len(scores) > 0
        assert "<table" in scores._repr_html_()


@SETTINGS
@given(arguments(), st.booleans())
def test_fuzz_evaluate_targets_as_data(kw, table):
    """The targets positionally; sometimes everything in a DataFrame, named by column."""
    if not table:
        outcome(lambda: uqeval.evaluate(kw.pop("y_true"), **kw))
        return
    columns, named = {}, {}
    for role, value in list(kw.items()):
        if role in ("y_true", "mean", "std", "var", "lower", "upper"):
            columns[f"c_{role}"] = value
            named[role] = f"c_{role}"
            del kw[role]
    frame = outcome(lambda: pd.DataFrame({k: np.asarray(v) for k, v in columns.items()}))
    if frame is None:  # mismatched lengths: pandas says so itself
        return
    outcome(lambda: uqeval.evaluate(frame, **named, **kw))


COLUMN_POOL = ["y", "target", "mean", "pred", "std", "sigma", "var", "lower", "upper", "q_0.1", "q_0.9", "s_0", "s_1",
               "p_0", "p_1", "id", "foo", "Mean"]  # fmt: skip


@st.composite
def frames(draw):
    n = draw(st.integers(1, 8))
    names = draw(st.lists(st.sampled_from(COLUMN_POOL), min_size=1, max_size=5))  # repeats: duplicate columns
    data = {}
    for i, name in enumerate(names):
        data[i] = _values(draw, (n,), positive=name in ("std", "sigma", "var"))
        if name == "id" and draw(st.booleans()):
            data[i] = np.array([f"r{j}" for j in range(n)], dtype=object)
    frame = pd.DataFrame(data)
    frame.columns = names
    return frame


@SETTINGS
@given(frames(), st.sampled_from(["pandas", "arrow"]), st.sampled_from([None, "omit"]))
def test_fuzz_evaluate_dataframe_detection(frame, how, nan_policy):
    table = frame
    if how == "arrow":
        table = outcome(lambda: pa.Table.from_pandas(frame, preserve_index=False))
        if table is None:  # duplicate names: pyarrow refuses them itself
            return
    policy = {"nan_policy": nan_policy} if nan_policy else {}
    outcome(lambda: uqeval.evaluate(table, **policy))


@SETTINGS
@given(frames(), st.data())
def test_fuzz_evaluate_dataframe_named(frame, data):
    """Roles named by column (present or not), by a list of columns, or given as arrays next to the table."""
    names = list(frame.columns) + ["missing"]
    kw = {}
    for role in data.draw(
        st.lists(st.sampled_from(["y", "mean", "std", "var", "lower", "upper"]), max_size=3)
    ):
        kw[role] = data.draw(st.sampled_from(names))
    if data.draw(st.booleans()):
        kw["mean"] = np.zeros(data.draw(st.sampled_from([len(frame), len(frame) + 1])))
    if data.draw(st.integers(0, 3)) == 0:
        kw["quantiles"] = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
        kw["levels"] = [0.1, 0.5, 0.9][: len(kw["quantiles"])]
    if data.draw(st.integers(0, 3)) == 0:  # class columns named as --proba/--logits name them (issue 26)
        spec = data.draw(st.sampled_from(["p*", "p_*", "q*", "", ",", "[", "p_0, p_1"]))
        if data.draw(st.booleans()):
            spec = ",".join(data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3)))
        kw[data.draw(st.sampled_from(["proba", "logits"]))] = spec
    outcome(lambda: uqeval.evaluate(frame, **kw))


@SETTINGS
@given(st.data())
def test_fuzz_array_functions(data):
    n = data.draw(st.integers(0, 6))

    def arr(positive=False, shape=None):
        return _wrap(
            data.draw, _values(data.draw, shape or (data.draw(st.sampled_from([n, n, 1, n + 2])),), positive)
        )

    def labels():  # class indices, or names (issue 40: ordered as LabelEncoder orders them)
        if data.draw(st.booleans()):
            return arr()
        return data.draw(st.lists(st.sampled_from(["no", "yes", "maybe"]), min_size=n, max_size=n + 1))

    def scalar_or_arr(positive=False):
        return data.draw(
            st.one_of(st.floats(0.1, 2) if positive else st.floats(-2, 2), st.just(None))
        ) or arr(positive)

    r = {"reduce": data.draw(st.sampled_from(["mean", "mean", None, "sum"]))}  # issue 40: one convention
    calls = {
        "crps_normal": lambda: uqeval.crps_normal(arr(), scalar_or_arr(), scalar_or_arr(True), **r),
        "logs_normal": lambda: uqeval.logs_normal(arr(), scalar_or_arr(), scalar_or_arr(True), **r),
        "crps_ensemble": lambda: uqeval.crps_ensemble(
            arr(),
            arr(shape=(n, data.draw(st.integers(1, 4)))),
            member_axis=data.draw(st.integers(-3, 2)),
            **r,
        ),
        "pinball_loss": lambda: uqeval.pinball_loss(
            arr(), arr(shape=(n, 2)), data.draw(st.sampled_from([[0.1, 0.9], [0.5], [0.0, 1.5]])), **r
        ),
        "interval_score": lambda: uqeval.interval_score(
            arr(), arr(), scalar_or_arr(), data.draw(st.sampled_from([0.9, 5, 0.0, 1j])), **r
        ),
        "weighted_interval_score": lambda: uqeval.weighted_interval_score(
            arr(), arr(shape=(n, 3)), [0.1, 0.5, 0.9], **r
        ),
        "calibration_error": lambda: uqeval.calibration_error(
            arr(), scalar_or_arr(), scalar_or_arr(True), **r
        ),
        "coverage": lambda: uqeval.coverage(arr(), scalar_or_arr(), scalar_or_arr(), **r),
        "expected_calibration_error": lambda: uqeval.expected_calibration_error(
            arr(), arr(shape=(n, 2)), **r
        ),
        "brier_score": lambda: uqeval.brier_score(labels(), arr(), **r),
        "log_loss": lambda: uqeval.log_loss(labels(), arr(shape=(n, 2)), **r),
    }
    name = data.draw(st.sampled_from(sorted(calls)))
    outcome(calls[name])


# --------------------------------------------------------------------------- issue 40: the API as people type it

#: each role's aliases (uqeval.names.ROLES), as a scikit-learn or pandas user types them
ALIASES = {
    "y_true": ["target", "y"],
    "mean": ["y_pred"],
    "std": ["sigma"],
    "var": ["variance"],
    "proba": ["y_proba"],
}


@SETTINGS
@given(arguments(), st.data())
def test_fuzz_aliases_mean_what_the_canonical_names_mean(kw, data):
    """Every role under an alias gives what its canonical name gives; both at once is a clear error."""
    renamed = dict(kw)
    for role, aliases in ALIASES.items():
        if role in renamed and data.draw(st.booleans()):
            value = renamed.pop(role)
            renamed[data.draw(st.sampled_from(aliases))] = value
            if data.draw(st.integers(0, 4)) == 0:  # the same role twice
                renamed[role] = value
    want = outcome(lambda: uqeval.evaluate(**kw))
    got = outcome(lambda: uqeval.evaluate(**renamed))
    if want is not None and got is not None:
        assert got.to_json() == want.to_json()


@SETTINGS
@given(st.data())
def test_fuzz_string_labels_and_classes(data):
    """Labels as strings, a pandas Categorical, with or without classes= (in another order, missing a label,
    naming one twice): the same scores as their indices, or a clear error."""
    n = data.draw(st.integers(1, 9))
    names = ["benign", "malignant", "unknown"]
    k = data.draw(st.integers(2, 3))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    codes = rng.integers(0, k, size=n)
    proba = rng.dirichlet(np.ones(k), size=n)
    labels = np.array(names)[codes].astype(object)
    if data.draw(st.integers(0, 4)) == 0 and n > 1:
        labels[rng.integers(0, n)] = data.draw(st.sampled_from([None, np.nan, 3, "other"]))
    how = data.draw(st.sampled_from(["numpy", "list", "categorical", "frame"]))
    classes = data.draw(
        st.one_of(st.just(None), st.permutations(names[:k]), st.lists(st.sampled_from(names), max_size=4))
    )
    kw = {} if classes is None else {"classes": classes}
    if how == "frame":
        frame = pd.DataFrame({"label": labels, **{f"p_{j}": proba[:, j] for j in range(k)}})
        outcome(lambda: uqeval.evaluate(frame, **kw))
        return
    y = labels.tolist() if how == "list" else pd.Categorical(labels) if how == "categorical" else labels
    got = outcome(lambda: uqeval.evaluate(y, proba=proba, **kw))
    if got is not None and classes is None and set(codes) == set(range(k)):  # sorted = the column order
        want = uqeval.evaluate(codes, proba=proba)
        assert got["brier"] == pytest.approx(want["brier"])


@st.composite
def models(draw):
    """A model of compare(): a container, Scores, a DataFrame, {role: array}, or something else."""
    n = draw(st.sampled_from([6, 6, 6, 5]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    y, mu = rng.normal(size=n), rng.normal(size=n)
    sd = np.abs(rng.normal(size=n)) + 0.1
    how = draw(st.sampled_from(["container", "scores", "frame", "roles", "aliases", "array", "none", "path"]))
    if how == "container":
        return uqeval.Gaussian(y_true=y, mean=mu, std=sd)
    if how == "scores":
        return uqeval.evaluate(y, mean=mu, std=sd)
    if how == "frame":
        return pd.DataFrame({"y": y, "mean": mu, "std": sd})
    if how == "roles":
        return {"mean": mu, "std": sd}
    if how == "aliases":
        return {"y_pred": mu, "sigma": sd}
    if how == "array":
        return mu
    if how == "path":
        return "no_such_file.csv"  # a file named by the caller (the message names it)
    return None


@SETTINGS
@given(st.lists(models(), min_size=1, max_size=3), st.booleans(), st.sampled_from([None, ["crps"], ["crsp"]]))
def test_fuzz_compare_takes_what_evaluate_takes(models_, with_targets, metrics):
    kw = {"y_true": np.zeros(6)} if with_targets else {}
    got = outcome(
        lambda: uqeval.compare(
            {f"m{i}": m for i, m in enumerate(models_)}, metrics=metrics, n_boot=20, n_permutations=0, **kw
        )
    )
    if got is not None:
        assert len(got.to_frame()) >= 1 and got.to_json().startswith("{")


@pytest.mark.parametrize(
    "call",
    [
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), std=1.0, seed=1.5),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), std=1.0, levels=[2.0]),
        lambda: uqeval.evaluate(np.zeros(3), samples=np.ones((3, 1))),
        lambda: uqeval.evaluate("file.csv"),
        lambda: uqeval.evaluate({"y": [1.0]}),
        lambda: uqeval.evaluate(np.zeros(3), y_true=np.zeros(3), mean=np.zeros(3)),
        lambda: uqeval.evaluate(np.zeros(3)),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), std=np.ones(3), var=np.ones(3)),
        lambda: uqeval.evaluate(np.zeros(3), quantiles=np.zeros((3, 2))),
        lambda: uqeval.evaluate(np.zeros(3), lower=np.zeros(3)),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), nonsense=1),
        lambda: uqeval.evaluate(np.zeros(3), samples=np.ones((3, 4)), member_axis=1.5),
        lambda: uqeval.evaluate(pd.DataFrame({"y": [1.0, 2.0]}), y="y", mean=np.zeros(3)),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.array(["a", "b", "c"])),
        lambda: uqeval.evaluate([[1.0, 2.0], [3.0]], mean=np.zeros(2)),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), std=1.0, time=np.arange(3)),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), std=1.0, reference="climatology"),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), std=1.0, reference="persistence"),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), std=1.0, id="station"),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), std=1.0, reference="persistence", time=[0, 1]),
        lambda: uqeval.list_metrics("nope"),
        lambda: uqeval.compare({"a": 1, "b": 2}),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), y_pred=np.zeros(3)),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3), sample_weights=np.ones(3)),
        lambda: uqeval.evaluate(["a", "b", "c"], mean=np.zeros(3)),
        lambda: uqeval.evaluate(["a", "b"], proba=[[0.5, 0.5]] * 2, classes=["a", "a"]),
        lambda: uqeval.evaluate(np.zeros(3), mean=np.zeros(3))["crsp"],
        lambda: uqeval.crps_normal(0.0, 0.0, 1.0, reduce="sum"),
        lambda: uqeval.expected_calibration_error([0, 1], [0.2, 0.8], reduce=None),
        lambda: uqeval.compare([uqeval.Point(y_true=np.zeros(3), mean=np.zeros(3)), {"mean": np.zeros(3)}]),
        lambda: uqeval.ucc(uqeval.Point(y_true=np.zeros(3), mean=np.zeros(3))),
    ],
)
def test_fixed_misuses_give_clear_errors(call):
    with pytest.raises((TypeError, ValueError)):
        call()
    assert outcome(call) is None
