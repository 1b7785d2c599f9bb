"""The weighted UCC (``ucc --weights``, issue 25): with integer weights every summary value equals that of
the repeated rows; weights of 0 are dropped rows; constant weights give the unweighted UCC; the
permutation test refuses weights."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.cli import app
from uqeval.errors import UsageError
from uqeval.metrics.ucc import ucc_summary_rows

runner = CliRunner()
AXES = [("bandwidth", "missrate"), ("excess", "deficit"), ("missrate", "excess"), ("bandwidth", "deficit")]


def _band(n: int = 400, seed: int = 0):
    rng = np.random.default_rng(seed)
    y, p, s = rng.normal(size=n), rng.normal(0, 0.3, n), rng.uniform(0.5, 2.0, n)
    p[:5] = y[:5]  # rows with critical scale 0
    return y, p, p - s, p + 1.3 * s


def _close(a, b) -> None:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-14)
    else:
        assert a == b


@pytest.mark.parametrize("x_axis, y_axis", AXES)
def test_integer_weights_are_repeated_rows(x_axis, y_axis):
    y, p, lo, hi = _band()
    w = np.random.default_rng(1).integers(1, 4, y.size).astype(float)
    idx = np.repeat(np.arange(y.size), w.astype(int))
    part = {"partial_x": (0.0, 0.5)} if x_axis != "missrate" else {"partial_y": (0.0, 0.5)}
    kw = dict(x_axis=x_axis, y_axis=y_axis, **part)
    weighted: list = []
    repeated: list = []
    got = ucc_summary_rows(y, p, lambda a, b: (lo[a:b], hi[a:b]), weights=w, curves=weighted, **kw)
    want = ucc_summary_rows(y[idx], p[idx], lambda a, b: (lo[idx][a:b], hi[idx][a:b]), curves=repeated, **kw)
    _close(got, want)
    # the curves too: every distinct point of the repeated rows' curve is on the weighted one
    cw, cr = weighted[0], repeated[0]
    pts = np.unique(np.round(np.column_stack([cr.x, cr.y]), 10), axis=0)
    np.testing.assert_allclose(np.unique(np.round(np.column_stack([cw.x, cw.y]), 10), axis=0), pts, atol=1e-9)


def test_constant_and_zero_weights():
    y, p, lo, hi = _band()
    models = {"a": uqeval.Intervals(y_true=y, mean=p, lower=lo, upper=hi, levels=0.9)}
    plain = uqeval.ucc(models, level=0.9)
    const = uqeval.ucc(models, level=0.9, weights=np.full(y.size, 2.0))
    assert const["weights"]["sum"] == 2.0 * y.size and const["weights"]["not_weighted"] == {}
    _close(const["models"], plain["models"])
    w = (np.arange(y.size) % 3 != 0).astype(float)
    keep = w > 0
    dropped = uqeval.ucc(
        {"a": uqeval.Intervals(y_true=y[keep], mean=p[keep], lower=lo[keep], upper=hi[keep], levels=0.9)},
        level=0.9,
    )
    zero = uqeval.ucc(models, level=0.9, weights=w)
    assert zero["weights"]["n_zero"] == int((~keep).sum()) and zero["n_rows"] == y.size
    _close(zero["models"]["a"]["ucc"], dropped["models"]["a"]["ucc"])
    with pytest.raises(UsageError, match="permutation test is not weighted.*n_permutations="):
        uqeval.ucc({"a": models["a"], "b": models["a"]}, level=0.9, n_permutations=10, weights=w)


def test_cli_ucc_weights(tmp_path):
    import pandas as pd

    y, p, lo, hi = _band(n=200)
    w = np.random.default_rng(4).uniform(0, 2, y.size)
    pd.DataFrame({"y": y, "mean": p, "lower": lo, "upper": hi, "w": w}).to_csv(
        tmp_path / "a.csv", index=False
    )
    args = ["ucc", str(tmp_path / "a.csv"), "--level", "0.9", "--format", "json"]
    r = runner.invoke(app, [*args, "--weights", "w", "--plot", str(tmp_path / "u.png")])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    api = uqeval.ucc(uqeval.Intervals(y_true=y, mean=p, lower=lo, upper=hi, levels=0.9), level=0.9, weights=w)
    assert doc["models"]["a"]["ucc"]["auucc"] == pytest.approx(
        api["models"]["model 1"]["ucc"]["auucc"], rel=1e-12
    )
    assert (tmp_path / "u.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = runner.invoke(app, [*args, "--weights", "w", "--engine", "stream"])  # streamed (issue 37)
    assert r.exit_code == 0, r.output
    streamed = json.loads(r.stdout)["models"]["a"]
    bound = streamed["input"]["bounds"]["auucc"]
    assert abs(streamed["ucc"]["auucc"] - doc["models"]["a"]["ucc"]["auucc"]) <= bound + 1e-12
