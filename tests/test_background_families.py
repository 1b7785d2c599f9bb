"""Background families (``Family.background``, spce's bootstrap) run in a worker thread during
:func:`uqeval.catalogue.compute_metrics`: the results, their order and the skipped families are those
of computing every family in turn."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import uqeval.catalogue as catalogue
from uqeval.catalogue import compute, compute_metrics, families_for, get_family
from uqeval.config import Settings
from uqeval.errors import InputError
from uqeval.predictions import MemberCategorical


def _ensemble(n: int = 300, m: int = 3, k: int = 4, seed: int = 0) -> MemberCategorical:
    rng = np.random.default_rng(seed)
    return MemberCategorical(y_true=rng.integers(0, k, n).astype(float), member_proba=rng.dirichlet(np.ones(k), (n, m)))


def test_spce_is_a_background_family():
    assert get_family("spce").background
    assert not get_family("calibration").background


def test_same_results_and_order_as_one_family_at_a_time():
    s = Settings()
    metrics, _ = compute_metrics(_ensemble(), s)
    pred = _ensemble()
    expected = {}
    for f in families_for(pred.kind, s):
        result = compute(f, pred, s)
        if result is not None:
            expected[f.name] = result
    assert list(metrics) == list(expected)
    assert "spce" in metrics
    np.testing.assert_equal(metrics, expected)  # bitwise: the same numbers, computed in another thread


def test_background_input_error_is_skipped_in_family_order(monkeypatch):
    def fail(p, s):
        raise InputError("not for these data")

    fams = families_for("members", Settings())
    spce = next(f for f in fams if f.name == "spce")
    broken = replace(spce, compute={**spce.compute, "members": fail})
    monkeypatch.setattr(catalogue, "families_for", lambda kind, settings=None: [broken if f is spce else f for f in fams])
    skipped: list[tuple[str, str]] = []
    metrics, _ = compute_metrics(_ensemble(), Settings(), skipped)
    assert "spce" not in metrics and ("spce", "not for these data") in skipped
    with pytest.raises(InputError, match="not for these data"):
        compute_metrics(_ensemble(), Settings())
