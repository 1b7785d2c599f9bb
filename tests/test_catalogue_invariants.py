"""Invariants every metric in the catalogue must satisfy (in the spirit of scikit-learn's test_common).

For every representation's sample file: row order does not change any metric (seeded, order-dependent
estimators excepted and named), every reported metric has a declared orientation, and every value is
finite or an explicit null.
"""

import math

import numpy as np
import pytest

from uqeval.config import make_settings
from uqeval.io.load import load_predictions
from uqeval.catalogue import FAMILIES, METRICS, compute_metrics

from .conftest import SAMPLE

FILES = ["gaussian.parquet", "point.csv", "intervals.parquet", "intervals_multi.csv", "quantiles.parquet",
         "samples.parquet", "classification.parquet", "ensemble_classification.parquet", "dirichlet.parquet"]
# Estimators whose random draws are assigned to rows in order (cross-fitting folds): reproducible for a
# given file, but a permutation of the rows is a different draw.
ORDER_DEPENDENT = {"spce"}


def _leaves(tree, prefix=""):
    for k, v in tree.items():
        path = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            yield from _leaves(v, path)
        else:
            yield path, v


@pytest.mark.parametrize("name", FILES)
def test_row_order_does_not_matter(name):
    settings = make_settings()
    pred = load_predictions(SAMPLE / name, settings).prediction
    perm = np.random.default_rng(0).permutation(pred.n)
    a, _ = compute_metrics(pred, settings)
    b, _ = compute_metrics(pred.subset(perm), settings)
    assert a.keys() == b.keys()
    for group in a:
        if group in ORDER_DEPENDENT:
            continue
        la, lb = dict(_leaves(a[group])), dict(_leaves(b[group]))
        assert la.keys() == lb.keys(), group
        for path, va in la.items():
            vb = lb[path]
            np.testing.assert_allclose(np.asarray(vb, dtype=float), np.asarray(va, dtype=float),
                                       rtol=1e-9, atol=1e-12, err_msg=f"{name}: {group}.{path}")


@pytest.mark.parametrize("name", FILES)
def test_every_metric_has_an_orientation_and_a_number(name):
    settings = make_settings()
    pred = load_predictions(SAMPLE / name, settings).prediction
    metrics, orientation = compute_metrics(pred, settings)
    by_level = {g.name for g in FAMILIES if g.by_level}
    for group, body in metrics.items():
        for key, value in body.items():
            keys = value.items() if group in by_level else [(key, value)]
            for k, v in keys:
                if METRICS[f"{group}.{k}"].orientation is None:
                    assert f"{group}.{k}" not in orientation
                    continue
                assert orientation.get(f"{group}.{k}") in ("lower", "higher", "target"), (name, group, k)
                values = list(v.values()) if isinstance(v, dict) else v  # e.g. pinball_by_level
                for x in np.ravel(np.asarray(values, dtype=float)):
                    assert math.isfinite(x), (name, group, k, v)


def test_every_group_declares_known_orientations():
    for g in FAMILIES:
        assert g.compute, g.name
        for m in g.metrics:
            assert m.orientation in ("lower", "higher", "target", None), (g.name, m.name)
