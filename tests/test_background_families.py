""":func:`uqeval.catalogue.compute_metrics` computes the families in two threads, the long ones
(``Family.background``: spce's bootstrap) first: the results, their order and the skipped families are
those of computing every family in turn."""

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
    return MemberCategorical(
        y_true=rng.integers(0, k, n).astype(float), member_proba=rng.dirichlet(np.ones(k), (n, m))
    )


def test_spce_is_a_background_family():
    assert get_family("spce").background
    assert not get_family("calibration").background


@pytest.mark.parametrize("threads", [1, 2])
def test_same_results_and_order_as_one_family_at_a_time(monkeypatch, threads):
    monkeypatch.setattr(catalogue, "FAMILY_THREADS", threads)
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
    monkeypatch.setattr(
        catalogue, "families_for", lambda kind, settings=None: [broken if f is spce else f for f in fams]
    )
    skipped: list[tuple[str, str]] = []
    metrics, _ = compute_metrics(_ensemble(), Settings(), skipped)
    assert "spce" not in metrics and ("spce", "not for these data") in skipped
    with pytest.raises(InputError, match="not for these data"):
        compute_metrics(_ensemble(), Settings())


def test_memo_makes_an_array_once_when_two_threads_ask():
    import threading
    import time

    from uqeval.predictions import _memo

    pred, calls = _ensemble(), []

    def make():
        calls.append(1)
        time.sleep(0.05)
        return np.arange(3)

    got = []
    threads = [threading.Thread(target=lambda: got.append(_memo(pred, "test_key", make))) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and got[0] is got[1]
