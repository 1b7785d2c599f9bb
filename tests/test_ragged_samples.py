"""Samples with missing members: an error by default; with --nan-policy omit each row keeps its finite members."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.catalogue import compute_metrics
from uqeval.cli import app
from uqeval.config import make_settings
from uqeval.errors import InputError
from uqeval.io.load import load_predictions

from .conftest import write_table

runner = CliRunner()


def _crps_row(y, x):
    """Direct O(M^2) empirical-CDF CRPS of one row (properscoring's definition)."""
    x = np.asarray(x)
    return np.abs(x - y).mean() - 0.5 * np.abs(x[:, None] - x[None, :]).mean()


@pytest.fixture
def ragged(tmp_path):
    rng = np.random.default_rng(3)
    n, m = 60, 6
    s = rng.normal(size=(n, m))
    y = rng.normal(size=n)
    s[2, 1] = np.nan
    s[5, [0, 3, 4]] = np.nan
    s[9, :5] = np.nan  # only one member left: the row is dropped
    cols = {"y": y, **{f"s_{j}": s[:, j] for j in range(m)}}
    return write_table(tmp_path / "s.parquet", cols), y, s


def test_nan_members_are_an_error_by_default(ragged):
    path, _, _ = ragged
    with pytest.raises(InputError, match=r"column 's_1' \(first at row 2"):
        load_predictions(path)


def test_omit_drops_members_per_row_and_matches_direct_crps(ragged):
    path, y, s = ragged
    loaded = load_predictions(path, make_settings(nan_policy="omit"))
    assert loaded.info["n_dropped"] == 1 and loaded.info["n_members_dropped"] == 4
    pred = loaded.prediction
    assert pred.ragged and pred.n == 59
    metrics, _ = compute_metrics(pred, make_settings(nan_policy="omit"))
    keep = np.array([i for i in range(60) if i != 9])
    want = np.mean([_crps_row(y[i], s[i][np.isfinite(s[i])]) for i in keep])
    assert metrics["scoring_rule"]["crps"] == pytest.approx(want, rel=1e-12)
    # the ensemble mean of a row uses only its finite members
    assert metrics["accuracy"]["mae"] == pytest.approx(
        np.mean([abs(y[i] - np.nanmean(s[i])) for i in keep]), rel=1e-12
    )


def test_omit_through_the_cli(ragged):
    path, _, _ = ragged
    r = runner.invoke(app, ["score", str(path), "--format", "json"])
    assert r.exit_code == 3 and "s_1" in r.stderr
    r = runner.invoke(app, ["score", str(path), "--format", "json", "--nan-policy", "omit"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["input"]["n_members_dropped"] == 4 and out["input"]["n_dropped"] == 1
    assert out["metrics"]["coverage"]["0.95"]["coverage"] >= 0
