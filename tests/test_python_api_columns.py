"""Issue 26, Python API: class columns named as the command line names them (``proba="p*"``,
``logits="z0,z1"``: the same expansion as ``--proba``/``--logits``), and ``settings.logits`` says
when the class columns were named as logits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import uqeval
from uqeval.errors import SchemaError


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 120
    z = rng.normal(size=(n, 3))
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    cols = {"label": rng.integers(0, 3, n)}
    cols.update({f"p{j}": p[:, j] for j in (2, 0, 1)})  # out of order: the glob orders them by number
    cols.update({f"z{j}": z[:, j] for j in range(3)})
    return pd.DataFrame(cols)


def test_proba_and_logits_take_a_glob_or_comma_list_like_the_cli(frame, tmp_path):
    listed = uqeval.evaluate(frame, proba=["p0", "p1", "p2"])
    for scores in (
        uqeval.evaluate(frame, proba="p*"),
        uqeval.evaluate(frame, proba="p0, p1,p2"),
        uqeval.evaluate(frame, proba="p*", y_true=frame["label"].to_numpy()),  # the arrays path
    ):
        assert scores["nll"] == pytest.approx(listed["nll"], rel=1e-12)
    by_glob = uqeval.evaluate(frame, logits="z*")
    assert by_glob["nll"] == pytest.approx(listed["nll"], rel=1e-9)
    assert uqeval.evaluate(frame, logits="z*", y_true=frame["label"])["nll"] == pytest.approx(
        listed["nll"], rel=1e-9
    )
    settings = by_glob._summary["settings"]
    assert (settings["logits"], settings["columns"]) == (True, {"logits": "z*"})
    assert uqeval.evaluate(frame, proba="p*")._summary["settings"]["logits"] is False
    z = frame[["z0", "z1", "z2"]].to_numpy()
    as_arrays = uqeval.evaluate(frame["label"], logits=z)  # arrays: the settings still say they were logits
    assert as_arrays["nll"] == pytest.approx(listed["nll"], rel=1e-9)
    assert as_arrays._summary["settings"]["logits"] is True
    path = tmp_path / "c.csv"
    frame.to_csv(path, index=False)
    from_file = uqeval.evaluate_file(path, logits="z*")
    assert from_file["nll"] == pytest.approx(listed["nll"], rel=1e-9)
    assert from_file._summary["settings"]["logits"] is True


def test_a_single_named_probability_column_is_binary(frame):
    frame = frame.assign(hit=(frame["label"] == 1).astype(int))
    want = uqeval.evaluate(frame["hit"].to_numpy(), proba=frame["p1"].to_numpy())["nll"]
    assert uqeval.evaluate(frame, proba="p1", y="hit")["nll"] == pytest.approx(want, rel=1e-12)
    assert uqeval.evaluate(frame, proba="p1", y_true=frame["hit"])["nll"] == pytest.approx(want, rel=1e-12)


def test_unknown_class_columns_name_the_keyword(frame):
    with pytest.raises(SchemaError, match=r"no column matches 'q\*' given for proba \(proba=\)") as exc:
        uqeval.evaluate(frame, proba="q*")
    assert "--" not in str(exc.value)
    with pytest.raises(SchemaError, match=r"no column named 'nope' given for logits \(logits=\)"):
        uqeval.evaluate(frame, logits="z0,nope", y_true=frame["label"])
