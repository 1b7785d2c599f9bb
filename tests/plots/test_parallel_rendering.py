"""Figures drawn in worker processes (``uqeval.plots.RENDER_PROCESSES``, set by the CLI; forked from a
spawned): the same bytes as drawn one by one in this process, and a worker that fails leaves its
figures to the parent."""

from __future__ import annotations

import numpy as np
import pytest

import uqeval.plots
from uqeval.config import Settings
from uqeval.plots.kinds import build_figures, encode_figures
from uqeval.predictions import Gaussian


def _figures():
    rng = np.random.default_rng(0)
    mu = rng.normal(size=400)
    pred = Gaussian(y_true=mu + rng.normal(size=400), mean=mu, std=np.ones(400))
    return build_figures(pred, None, Settings(), name="m.parquet").figures


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_worker_drawing_gives_the_same_bytes(monkeypatch, fmt):
    import uqeval.plots.kinds as tp

    monkeypatch.setattr(uqeval.plots, "RENDER_PROCESSES", 1)
    alone = encode_figures(_figures(), fmt)
    futures, pool = [], tp.render_workers(2)

    class Spy:  # the real workers; their results recorded (a failed share would be drawn here)
        def submit(self, *args):
            futures.append(pool.submit(*args))
            return futures[-1]

    monkeypatch.setattr(tp, "render_workers", lambda processes: Spy())
    for processes in (2, 3):
        monkeypatch.setattr(uqeval.plots, "RENDER_PROCESSES", processes)
        drawn = encode_figures(_figures(), fmt)
        assert list(drawn) == list(alone) and len(alone) >= 5
        assert drawn == alone
    assert len(futures) == 3 and all(f.exception() is None and len(f.result()[0]) >= 2 for f in futures)


def test_warnings_of_a_worker_are_raised_in_the_parent(monkeypatch):
    """Issue 35: a worker's drawing warnings went to its own stderr, past the CLI's capture (a raw
    ``RuntimeWarning: overflow encountered`` beside the command's note); the parent raises them again."""
    import warnings

    from matplotlib.figure import Figure

    def figures():
        figs = {}
        for kind in ("plain", "glyph"):  # figure 1 of 2 is drawn by the worker
            fig = Figure()
            # a private-use character: no glyph in DejaVu Sans, a UserWarning when drawn
            fig.add_subplot().set_title("\ue000" if kind == "glyph" else "ok")
            figs[kind] = fig
        return figs

    def drawn_warnings(processes):
        monkeypatch.setattr(uqeval.plots, "RENDER_PROCESSES", processes)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            images = encode_figures(figures())
        assert list(images) == ["plain", "glyph"]
        return sorted({(w.category.__name__, str(w.message)) for w in caught if "Glyph" in str(w.message)})

    alone = drawn_warnings(1)
    assert alone and alone[0][0] == "UserWarning"
    assert drawn_warnings(2) == alone


def test_a_failing_worker_leaves_its_share_to_the_parent(monkeypatch):
    import uqeval.plots.kinds as tp

    class Failing:  # a pool whose worker fails every share
        def submit(self, *args):
            from concurrent.futures import Future

            done: Future = Future()
            done.set_exception(RuntimeError("worker failure"))
            return done

    monkeypatch.setattr(uqeval.plots, "RENDER_PROCESSES", 1)
    alone = encode_figures(_figures())
    monkeypatch.setattr(tp, "render_workers", lambda processes: Failing())
    monkeypatch.setattr(uqeval.plots, "RENDER_PROCESSES", 2)
    assert encode_figures(_figures()) == alone


def test_a_failure_in_the_parent_is_raised(monkeypatch):
    import uqeval.plots.common as common

    monkeypatch.setattr(uqeval.plots, "RENDER_PROCESSES", 2)
    monkeypatch.setattr(
        common, "figure_to_bytes", lambda *a: (_ for _ in ()).throw(ValueError("parent failure"))
    )
    with pytest.raises(ValueError, match="parent failure"):  # the worker's share is still drawn there
        encode_figures(_figures())


def test_workers_are_spawned_not_forked_from_this_process():
    """This process has threads (pyarrow's, the test's own): its figure workers are fresh interpreters
    (a module attribute set here is not there), and starting them gives no DeprecationWarning."""
    import threading
    import warnings

    import uqeval.plots.kinds as tp

    stop = threading.Event()
    busy = threading.Thread(target=stop.wait)
    busy.start()
    tp._SET_IN_THE_PARENT = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            pool = tp.render_workers(2)
            assert pool is not None
            seen = pool.submit(
                eval, "hasattr(__import__('uqeval.plots.kinds').plots.kinds, '_SET_IN_THE_PARENT')"
            )
            assert seen.result(timeout=120) is False
            assert pool.submit(
                eval, "__import__('sys').modules.get('uqeval.plots.kinds') is not None"
            ).result()
    finally:
        del tp._SET_IN_THE_PARENT
        stop.set()
        busy.join()
