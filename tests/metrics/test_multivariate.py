"""Energy and variogram scores of multivariate ensembles (issue 16, part B).

Reference values: scoringrules 0.10.0 (``es_ensemble``, estimator "nrg"; ``vs_ensemble``, p = 0.5),
frozen in tests/reference/data/multivariate_ref.npz by tests/reference/regen_multivariate.py, on
statsmodels' US macro data (real) and two simulated sets.
"""

from __future__ import annotations

import json
from itertools import product

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.errors import InputError, SchemaError
from uqeval.io.load import load_predictions
from uqeval.metrics import multivariate as mv
from uqeval.metrics.samples import crps_ensemble
from uqeval.predictions import Multivariate

from ..conftest import ROOT, SAMPLE, write_table

REF = np.load(ROOT / "tests" / "reference" / "data" / "multivariate_ref.npz")
runner = CliRunner()


@pytest.mark.parametrize("name", ["macro", "sim", "sim1"])
def test_agrees_with_scoringrules(name):
    y, x = REF[f"{name}_y"], REF[f"{name}_x"]
    np.testing.assert_allclose(mv.energy_score(y, x), REF[f"{name}_energy"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mv._energy_pairs(y, x), REF[f"{name}_energy"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mv.variogram_score(y, x, 0.5), REF[f"{name}_variogram"], rtol=1e-9, atol=1e-12)


def _slow(y, x, p=0.5):
    """Obviously correct loops over rows, members and components (properscoring style)."""
    n, m, d = x.shape
    es, vs = np.zeros(n), np.zeros(n)
    for i in range(n):
        es[i] = np.mean([np.linalg.norm(x[i, j] - y[i]) for j in range(m)]) - sum(
            np.linalg.norm(x[i, j] - x[i, k]) for j, k in product(range(m), repeat=2)
        ) / (2 * m * m)
        for a, b in product(range(d), repeat=2):
            vs[i] += (
                abs(y[i, a] - y[i, b]) ** p - np.mean([abs(x[i, j, a] - x[i, j, b]) ** p for j in range(m)])
            ) ** 2
    return es, vs


def test_against_slow_loops_and_in_blocks(monkeypatch):
    rng = np.random.default_rng(3)
    y, x = rng.normal(size=(9, 3)), rng.normal(size=(9, 5, 3))
    es, vs = _slow(y, x)
    np.testing.assert_allclose(mv.energy_score(y, x), es, rtol=1e-12)
    np.testing.assert_allclose(mv.variogram_score(y, x), vs, rtol=1e-12)
    monkeypatch.setattr(mv, "BLOCK_ELEMENTS", 40)  # several blocks of rows: the same numbers
    np.testing.assert_allclose(mv.energy_score(y, x), es, rtol=1e-12)
    np.testing.assert_allclose(mv.variogram_score(y, x), vs, rtol=1e-12)


def test_energy_score_in_one_dimension_is_the_sample_crps():
    rng = np.random.default_rng(1)
    y, x = rng.normal(size=(40, 1)), rng.normal(size=(40, 11, 1))
    crps = crps_ensemble(y[:, 0], x[:, :, 0])
    np.testing.assert_allclose(mv._energy_pairs(y, x), crps, rtol=1e-12)  # the general O(M^2) path
    np.testing.assert_allclose(mv.energy_score(y, x), crps, rtol=1e-12)  # the fast path


def test_true_dependence_scores_better_in_variogram():
    """Members with the outcomes' correlation beat independent members of the same margins."""
    rng = np.random.default_rng(5)
    n, m, d = 2000, 30, 3
    chol = np.linalg.cholesky(0.8 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d))))
    y = rng.normal(size=(n, d)) @ chol.T
    right = rng.normal(size=(n, m, d)) @ chol.T
    wrong = rng.normal(size=(n, m, d))
    assert mv.variogram_score(y, right).mean() < mv.variogram_score(y, wrong).mean()
    assert mv.energy_score(y, right).mean() < mv.energy_score(y, wrong).mean()


def test_shape_errors():
    with pytest.raises(InputError, match="components"):
        mv.energy_score(np.zeros((3, 2)), np.zeros((3, 4, 3)))
    with pytest.raises(InputError, match="p must be > 0"):
        mv.variogram_score(np.zeros((3, 2)), np.zeros((3, 4, 2)), p=0)


def test_container_and_file_detection(tmp_path):
    rng = np.random.default_rng(0)
    cols = {"y_1": rng.normal(size=20), "y_2": rng.normal(size=20)}
    cols.update({f"m{j}_{k}": rng.normal(size=20) for j in range(4) for k in (1, 2)})
    path = write_table(tmp_path / "mv.parquet", cols)
    p = load_predictions(path).prediction
    assert isinstance(p, Multivariate) and p.samples.shape == (20, 4, 2) and p.y_true.shape == (20, 2)
    np.testing.assert_array_equal(p.samples[:, 3, 1], cols["m3_2"])
    bad = dict(cols)
    del bad["m2_1"]
    with pytest.raises(SchemaError, match="missing m2_1"):
        load_predictions(write_table(tmp_path / "bad.parquet", bad))
    nany = {k: v for k, v in cols.items() if k != "y_2"}
    with pytest.raises(SchemaError, match="target"):
        load_predictions(write_table(tmp_path / "bad2.parquet", nany))


def test_nan_policy_omit_drops_rows(tmp_path):
    rng = np.random.default_rng(0)
    cols = {"y_1": rng.normal(size=20), "y_2": rng.normal(size=20)}
    cols.update({f"m{j}_{k}": rng.normal(size=20) for j in range(3) for k in (1, 2)})
    cols["m1_2"][4] = np.nan
    path = write_table(tmp_path / "mv.parquet", cols)
    r = runner.invoke(app, ["score", str(path)])
    assert r.exit_code == 3 and "m1_2" in r.output
    r = runner.invoke(app, ["score", str(path), "--nan-policy", "omit", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["input"]["n_dropped"] == 1


def test_sample_file_scores_and_compares():
    path = str(SAMPLE / "multivariate.parquet")
    r = runner.invoke(app, ["score", path, "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["input"]["representation"] == "multivariate"
    assert set(out["metrics"]["multivariate"]) == {"energy", "variogram"}
    assert out["orientation"]["multivariate.energy"] == "lower"
    p = load_predictions(path).prediction
    assert out["metrics"]["multivariate"]["energy"] == pytest.approx(
        mv.energy_score(p.y_true, p.samples).mean(), rel=1e-12
    )
    r = runner.invoke(
        app,
        [
            "compare",
            path,
            path,
            "--metrics",
            "energy,variogram",
            "--bootstrap",
            "20",
            "--permutations",
            "0",
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    cmp = json.loads(r.stdout)
    assert cmp["metrics"]["multivariate.energy"]["bootstrap"] is True


def test_parquet_list_columns(tmp_path):
    """A list column of M lists of d components per row (``samples``) and a list target column (``y``)."""
    import pyarrow as pa

    rng = np.random.default_rng(4)
    y, x = rng.normal(size=(15, 3)), rng.normal(size=(15, 6, 3))
    path = tmp_path / "lists.parquet"
    write_table(
        path,
        {
            "y": pa.array(list(y), type=pa.list_(pa.float64())),
            "samples": pa.array(
                [[list(mm) for mm in row] for row in x], type=pa.list_(pa.list_(pa.float64()))
            ),
        },
    )
    p = load_predictions(path).prediction
    assert p.kind == "multivariate"
    np.testing.assert_array_equal(p.samples, x)
    np.testing.assert_array_equal(p.y_true, y)
    r = runner.invoke(app, ["score", str(path), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["metrics"]["multivariate"]["energy"] == pytest.approx(
        mv.energy_score(y, x).mean(), rel=1e-12
    )
