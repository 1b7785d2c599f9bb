"""The Python API's edges (issue 26): pandas Series, in-memory tables, nan_policy for arrays, column
keywords of evaluate_file, and errors that name the keyword argument, never a CLI flag or a temp path."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import uqeval
from uqeval.errors import InputError, UsageError, front_end, option

N = 60
#: a CLI flag (``--mean``), a temporary directory or file, or pandas/pyarrow internals in a message
LEAKS = re.compile(r"(?<![\w-])--[a-z]|/tmp|tmp[a-z0-9_]{4,}|table\.parquet")


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    target = rng.normal(size=N)
    return pd.DataFrame({"target": target, "prediction": target + rng.normal(size=N), "sigma": np.ones(N)})


def _error(call, kind=ValueError, path=None) -> str:
    """The message of the error ``call`` raises; it names no CLI flag or temporary path (but ``path``)."""
    with pytest.raises(kind) as info:
        call()
    message = str(info.value)
    assert not LEAKS.search(message.replace(str(path), "FILE") if path else message), message
    return message


def test_series_are_arrays(frame):
    s = uqeval.evaluate(frame["target"], mean=frame["prediction"], std=frame["sigma"])
    ref = uqeval.evaluate(frame["target"].to_numpy(), mean=frame["prediction"].to_numpy(), std=1.0)
    assert s["crps"] == pytest.approx(ref["crps"], rel=1e-12)
    assert s.representation == "gaussian"


def test_nullable_series_and_pyarrow_arrays(frame):
    y = frame["target"].astype("Float64")
    y.iloc[4] = pd.NA
    s = uqeval.evaluate(y, mean=pa.array(frame["prediction"]), std=frame["sigma"], nan_policy="omit")
    assert s._summary["input"]["n_dropped"] == 1 and s._summary["input"]["n_rows"] == N


def test_nan_policy_omit_for_arrays(frame):
    y = frame["target"].to_numpy().copy()
    y[[2, 7]] = np.nan
    message = _error(lambda: uqeval.evaluate(y, mean=frame["prediction"], std=1.0))
    assert "first at row 2" in message and "nan_policy='omit'" in message
    s = uqeval.evaluate(y, mean=frame["prediction"], std=1.0, nan_policy="omit")
    kept = ~np.isnan(y)
    expect = uqeval.crps_normal(y[kept], frame["prediction"].to_numpy()[kept], 1.0)
    assert s["crps"] == pytest.approx(expect, rel=1e-12)
    assert s._summary["input"]["n_dropped"] == 2


def test_nan_policy_omit_for_named_columns(frame):
    frame.loc[5, "sigma"] = np.inf
    message = _error(lambda: uqeval.evaluate(frame, y="target", mean="prediction", std="sigma"))
    assert "'sigma'" in message and "row 5" in message and "nan_policy='omit'" in message
    s = uqeval.evaluate(frame, y="target", mean="prediction", std="sigma", nan_policy="omit")
    assert s._summary["input"]["n_dropped"] == 1
    assert s._summary["input"]["columns"] == {"y_true": "target", "mean": "prediction", "std": "sigma"}


def test_nan_policy_omit_keeps_rows_of_every_array():
    y = np.array([0.0, np.nan, 1.0, 2.0, 3.0])
    q = np.array([[-1, 0, 1], [-1, 0, 1], [0, 1, np.nan], [1, 2, 3], [2, 3, 4]], dtype=float)
    s = uqeval.evaluate(y, quantiles=q, levels=[0.1, 0.5, 0.9], nan_policy="omit")
    assert s._summary["input"]["n_dropped"] == 2 and s._summary["input"]["n_rows"] == 5


def test_evaluate_file_takes_the_column_keywords(frame, tmp_path):
    path = tmp_path / "preds.csv"
    frame.to_csv(path, index=False)
    s = uqeval.evaluate_file(path, y_true="target", mean="prediction", std="sigma")
    ref = uqeval.evaluate(frame, y="target", mean="prediction", std="sigma")
    assert s["crps"] == pytest.approx(ref["crps"], rel=1e-12)
    assert s._summary["input"]["columns"]["std"] == "sigma"
    # lists of names (here quantiles) read the file and evaluate its columns
    q = pd.DataFrame({"obs": frame["target"], "lo": frame["prediction"] - 1, "mid": frame["prediction"]})
    q["hi"] = frame["prediction"] + 1
    q.to_csv(tmp_path / "q.csv", index=False)
    sq = uqeval.evaluate_file(
        tmp_path / "q.csv", y="obs", quantiles=["lo", "mid", "hi"], levels=[0.1, 0.5, 0.9]
    )
    assert sq.representation == "quantiles"
    message = _error(lambda: uqeval.evaluate_file(path, y_true="target", mean="nope", std="sigma"), path=path)
    assert "'nope'" in message and "mean" in message


def test_unfamiliar_columns_are_named_as_keywords_without_a_temp_file(frame, monkeypatch):
    import tempfile

    def no_temp(*args, **kwargs):
        raise AssertionError("a temporary file was made")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", no_temp)
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", no_temp)
    # 'prediction' is a name detected when unambiguous (issue 26); 'guess' is not
    message = _error(lambda: uqeval.evaluate(frame.rename(columns={"prediction": "guess"})))
    assert message.startswith("data: ") and "mean='COLUMN'" in message
    message = _error(lambda: uqeval.evaluate(frame.rename(columns={"target": "obs", "prediction": "mean"})))
    assert message.startswith("data: ") and "y_true='COLUMN'" in message
    # familiar names are detected as uqeval score detects a file's, in memory
    s = uqeval.evaluate(frame.rename(columns={"target": "y", "prediction": "mean", "sigma": "std"}))
    assert s.representation == "gaussian" and s._summary["input"]["path"] == "<table>"


def test_levels_are_the_coverage_levels_of_a_gaussian(frame):
    s = uqeval.evaluate(frame["target"], mean=frame["prediction"], std=1.0, levels=[0.5, 0.8])
    assert {"coverage.0.5.coverage", "coverage.0.8.coverage"} <= set(s)
    assert "coverage.0.95.coverage" not in s
    s = uqeval.evaluate(frame["target"], mean=frame["prediction"], std=1.0, level=0.9)
    assert "coverage.0.9.coverage" in s


def test_table_with_an_array_argument(frame):
    s = uqeval.evaluate(frame, y="target", mean=frame["prediction"].to_numpy(), std="sigma")
    ref = uqeval.evaluate(frame, y="target", mean="prediction", std="sigma")
    assert s["crps"] == pytest.approx(ref["crps"], rel=1e-12)
    assert s._summary["input"]["columns"] == {"y_true": "target", "std": "sigma"}


def test_duplicate_columns():
    df = pd.DataFrame(np.ones((4, 3)), columns=["y", "mean", "mean"])
    message = _error(lambda: uqeval.evaluate(df), InputError)
    assert "duplicate column names ('mean')" in message


def test_member_axis_out_of_range():
    samples = np.random.default_rng(0).normal(size=(5, 4))
    message = _error(lambda: uqeval.evaluate(np.zeros(5), samples=samples, member_axis=5), InputError)
    assert "member_axis=5" in message
    message = _error(lambda: uqeval.crps_ensemble(np.zeros(5), samples, member_axis=2), InputError)
    assert "member_axis=2" in message
    s = uqeval.evaluate(np.zeros(4), samples=samples, member_axis=0)  # 5 members of 4 rows
    assert s["crps"] == pytest.approx(uqeval.crps_ensemble(np.zeros(4), samples, member_axis=0))


def test_crps_ensemble_of_one_ensemble_scores_every_observation():
    members = np.array([0.0, 1.0, 2.0])
    out = uqeval.crps_ensemble(np.array([0.0, 1.0]), members, reduce=None)
    assert out.shape == (2,)
    assert out[1] == pytest.approx(uqeval.crps_ensemble(1.0, members))
    message = _error(lambda: uqeval.crps_ensemble(np.zeros(3), np.ones((2, 4))), InputError)
    assert "obs has shape (3,)" in message


def test_interval_score_level_and_complex_input():
    assert "level must be strictly between 0 and 1" in _error(lambda: uqeval.interval_score(0.0, -1, 1, 5))
    assert "level" in _error(lambda: uqeval.interval_score(0.0, -1, 1, [0.9, 1.0]))
    assert "y_true must hold real numbers" in _error(lambda: uqeval.interval_score(1j, -1, 1, 0.9))
    assert "complex" in _error(lambda: uqeval.evaluate(np.zeros(3) + 1j, mean=np.zeros(3), std=1.0))
    assert "complex" in _error(lambda: uqeval.Gaussian(y_true=[1j, 0], mean=[0, 0], std=[1, 1]))
    assert "levels must be strictly between" in _error(lambda: uqeval.pinball_loss(0.0, [1.0], [1.5]))


def test_messages_name_keywords_not_flags():
    y = np.zeros(5)
    assert "seed must be an integer" in _error(
        lambda: uqeval.evaluate(y, mean=y, std=1.0, seed=1.5), UsageError
    )
    assert "use mean=" in _error(lambda: uqeval.evaluate(y, samples=np.ones((5, 1))))
    a = uqeval.Gaussian(y_true=np.arange(5.0), mean=np.zeros(5), std=np.ones(5))
    b = uqeval.Gaussian(y_true=np.arange(5.0)[::-1].copy(), mean=np.zeros(5), std=np.ones(5))
    assert "ids=" in _error(lambda: uqeval.compare({"a": a, "b": b}, n_boot=10, n_permutations=0))
    point = uqeval.Point(y_true=np.arange(5.0), mean=np.zeros(5))
    assert "std=" in _error(lambda: uqeval.ucc(point))


def test_compare_joins_on_ids():
    rng = np.random.default_rng(1)
    y = rng.normal(size=50)
    a = uqeval.Gaussian(y_true=y, mean=np.zeros(50), std=np.ones(50))
    order = rng.permutation(50)
    b = uqeval.Gaussian(y_true=y[order], mean=np.zeros(50), std=np.full(50, 2.0))
    out = uqeval.compare(
        {"a": a, "b": b}, ids={"a": np.arange(50), "b": order}, metrics=["crps"], n_boot=20, n_permutations=0
    )
    assert out["metrics"]["crps"]["best"] == ["a"]


def test_the_python_spelling_is_the_default_and_the_cli_sets_its_own_for_its_run():
    import os
    import threading

    assert option("mean", "COLUMN") == "mean='COLUMN'" and option("label") == "y_true="
    with front_end("cli"):
        assert option("mean", "COLUMN") == "--mean COLUMN" and option("y_true") == "--y"
    seen = []
    with front_end("cli", process=True):  # what the command line does: its threads and workers see it
        worker = threading.Thread(target=lambda: seen.append(option("nan_policy")))
        worker.start()
        worker.join()
        assert os.environ["UQEVAL_FRONT_END"] == "cli"  # inherited by the processes the run starts
    assert seen == ["--nan-policy"] and option("nan_policy") == "nan_policy="
    assert "UQEVAL_FRONT_END" not in os.environ


def test_an_errors_fix_is_spelled_for_whoever_reads_it():
    from uqeval.errors import InputError

    exc = InputError("y has NaN in 3 rows", fix="nan_policy")
    assert (
        str(exc)
        == "y has NaN in 3 rows; drop those rows first, or pass nan_policy='omit' (uqeval.evaluate drops them)"
    )
    with front_end("cli"):
        assert str(exc) == "y has NaN in 3 rows; clean the data or pass --nan-policy omit to drop those rows"
    assert str(exc.at("f.csv")).startswith("f.csv: y has NaN in 3 rows; drop those")  # the fix once
    with pytest.raises(ValueError, match="nan_policy='omit'"):
        uqeval.Gaussian(np.array([np.nan, 1.0]), np.ones(2))  # a container built directly: Python's voice


def test_scores_html_is_a_compact_table(frame):
    s = uqeval.evaluate(frame["target"], mean=frame["prediction"], std=frame["sigma"])
    html = s._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + sum(
        isinstance(v, (int, float)) or v is None for v in s.values()
    )
    assert "pit_histogram" not in html  # curves and histograms are left out


def test_persistence_times_follow_the_rows_kept():
    rng = np.random.default_rng(0)
    y = np.cumsum(rng.normal(size=50))
    y[3] = np.nan
    mean = np.nan_to_num(y) + 0.1
    frame = pd.DataFrame({"y": y, "mean": mean, "std": 1.0, "t": np.arange(50)})
    kw = {"reference": "persistence", "nan_policy": "omit"}
    arrays = uqeval.evaluate(y, mean=mean, std=1.0, time=np.arange(50), **kw)
    detected = uqeval.evaluate(frame, time="t", **kw)
    named = uqeval.evaluate(frame, y="y", mean="mean", std="std", time="t", **kw)
    assert arrays["skill.crps"] == pytest.approx(detected["skill.crps"]) == pytest.approx(named["skill.crps"])
    assert arrays._summary["input"]["n_dropped"] == 1


def test_logits_and_variances_are_decoded_as_a_file_decodes_them():
    """Python's arrays share the file loader's decoding (``io.load.softmax_rows``, ``std_of_variance``): a NaN
    logit stays in its own column, so the error names that column (the whole row went NaN, and column 0 was
    named); a non-positive variance names the argument and the row."""
    rng = np.random.default_rng(0)
    z, y = rng.normal(size=(50, 3)), rng.integers(0, 3, 50)
    z[4, 1] = np.nan
    with pytest.raises(InputError, match=r"column 'proba\[1\]' \(first at row 4, found nan\)"):
        uqeval.evaluate(y, logits=z)
    var = np.r_[1.0, 1.0, 1.0, -1.0, np.ones(6)]
    with pytest.raises(
        InputError, match=r"variance must be > 0: 1 non-positive value\(s\) in column 'var' \(first at row 3"
    ):
        uqeval.evaluate(rng.normal(size=10), mean=np.zeros(10), var=var)
