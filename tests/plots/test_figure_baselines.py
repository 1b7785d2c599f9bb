"""Image tests of every figure (issue 28): each plot kind for every representation it applies to, for one
model (the command line's figure, :func:`uqeval.plots.kinds.build_figures`) and, for the kinds that overlay,
three models on one Axes (:func:`uqeval.plot` with ``{name: data}``), compared with the committed PNGs in
``tests/plots/baseline/`` by :func:`matplotlib.testing.compare.compare_images` with a tolerance.

Rendering is pinned: matplotlib's default style plus :data:`uqeval.plots.style.RC` (DejaVu Sans, which ships
with matplotlib), the Agg canvas, no dates in the PNG; the same matplotlib version (constraints.txt) gives
the same pixels on another machine. Small data and a low dpi keep the files small and the tests fast.

Regenerate the baselines after a deliberate change of a figure, then look at them and commit them::

    UQEVAL_UPDATE_BASELINES=1 python -m pytest -q -p no:cacheprovider tests/plots/test_figure_baselines.py
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")

from matplotlib import style as mpl_style  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.testing.compare import compare_images  # noqa: E402

import uqeval  # noqa: E402
from uqeval.config import Settings  # noqa: E402
from uqeval.metrics.normal import ndtri  # noqa: E402
from uqeval.plots.common import FIGSIZE, figure_to_bytes  # noqa: E402
from uqeval.plots.kinds import OVERLAY_KINDS, applicable_kinds, build_figures  # noqa: E402
from uqeval.plots.style import RC, axis_label  # noqa: E402
from uqeval.predictions import (  # noqa: E402
    Categorical,
    Dirichlet,
    Gaussian,
    Intervals,
    MemberCategorical,
    Multivariate,
    Quantiles,
    Samples,
)

BASELINE = Path(__file__).parent / "baseline"
UPDATE = bool(os.environ.get("UQEVAL_UPDATE_BASELINES"))
#: RMS difference of the grey levels (0-255) that still passes: anti-aliasing and float noise, not a change
TOL = 3.0
DPI = 36
N = 300
#: every kind applies: the opt-in families on, one exceedance threshold
SETTINGS = Settings(diagnostics=True, murphy=True, thresholds=(0.5,), seed=0)
#: the spread (or temperature) of the three models of an overlay: over-, well- and under-confident
SCALES = (0.6, 1.0, 1.6)


def _models(kind: str, scale: float, seed: int = 0):
    """One model of representation ``kind``: targets from N(μ, 1), the model's spread ``scale`` times the truth."""
    rng = np.random.default_rng(7)  # the same targets for every model
    mu = rng.normal(size=N)
    y = mu + rng.normal(size=N)
    lv = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    sd = np.full(N, scale)
    own = np.random.default_rng(100 + seed)
    if kind == "gaussian":
        return Gaussian(y_true=y, mean=mu, std=sd)
    if kind == "samples":
        return Samples(y_true=y, samples=mu[:, None] + scale * own.normal(size=(N, 9)))
    if kind == "quantiles":
        q = mu[:, None] + scale * np.asarray(ndtri(lv))[None, :]
        return Quantiles(y_true=y, quantiles=q, levels=lv)
    if kind == "intervals":
        q = mu[:, None] + scale * np.asarray(ndtri(lv))[None, :]
        return Intervals(y_true=y, lower=q[:, [0, 1]], upper=q[:, [4, 3]], levels=[0.9, 0.5])
    if kind == "multivariate":
        truth = rng.normal(size=(N, 2))
        return Multivariate(
            y_true=truth + rng.normal(size=(N, 2)), samples=truth[:, None, :] + own.normal(size=(N, 6, 2))
        )
    # classifiers: logits whose temperature is the scale; labels drawn from the calibrated probabilities
    logits = 2.0 * rng.normal(size=(N, 3))
    p_true = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    labels = (rng.random(N)[:, None] > np.cumsum(p_true, axis=1)).sum(axis=1).astype(float)
    z = logits / scale
    proba = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    if kind == "categorical":
        return Categorical(y_true=labels, proba=proba)
    if kind == "members":
        zm = z[:, None, :] + 0.5 * own.normal(size=(N, 4, 3))
        return MemberCategorical(
            y_true=labels, member_proba=np.exp(zm) / np.exp(zm).sum(axis=2, keepdims=True)
        )
    return Dirichlet(y_true=labels, alpha=20.0 * proba / scale + 0.1)


REPRESENTATIONS = (
    "gaussian",
    "samples",
    "quantiles",
    "intervals",
    "categorical",
    "members",
    "dirichlet",
    "multivariate",
)
#: a skill group as ``score --reference`` writes it (data, not a setting: drawn from the summary)
SKILL = {"crps": 0.0123, "nll": 0.21, "pinball": -0.05, "mse": None}

ONE = [
    (rep, kind)
    for rep in REPRESENTATIONS
    for kind in applicable_kinds(_models(rep, 1.0), SETTINGS, {"skill": SKILL} if rep == "gaussian" else None)
]
THREE = [(rep, kind) for rep, kind in ONE if kind in OVERLAY_KINDS]
#: kinds whose command-line figure has several panels: their one-panel form on a given Axes too
PANELS = ("reliability", "sets", "corp", "smooth_reliability", "exceedance_reliability")
ON_AX = [
    (rep, kind)
    for rep, kind in ONE
    if kind in PANELS and not (kind == "reliability" and rep in ("gaussian", "samples", "quantiles"))
]


def _render(fig: Figure, name: str, tmp_path: Path) -> None:
    """Encode ``fig`` and compare it with ``baseline/<name>.png`` (written instead with UQEVAL_UPDATE_BASELINES).
    Every axis label is in the house phrasing (:func:`uqeval.plots.style.axis_label`)."""
    for ax in fig.axes:
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            assert label == axis_label(label) and " [" not in label, (name, label)
    data = figure_to_bytes(fig, "png", dpi=DPI)
    expected = BASELINE / f"{name}.png"
    if UPDATE:
        BASELINE.mkdir(exist_ok=True)
        expected.write_bytes(data)
        return
    assert expected.exists(), (
        f"no baseline {expected.name}: run with UQEVAL_UPDATE_BASELINES=1 (see the module)"
    )
    actual = tmp_path / f"{name}.png"
    actual.write_bytes(data)
    diff = compare_images(str(expected), str(actual), tol=TOL)
    assert diff is None, diff


@pytest.fixture(autouse=True)
def _pinned_style():
    """matplotlib's defaults (no user matplotlibrc) and the house rcParams."""
    with mpl_style.context("default"), matplotlib.rc_context(RC):
        yield


@pytest.mark.parametrize(("rep", "kind"), ONE, ids=[f"{r}-{k}" for r, k in ONE])
def test_one_model(rep, kind, tmp_path):
    pred = _models(rep, 1.0)
    metrics = {"skill": SKILL} if kind == "skill" else None
    fig = build_figures(pred, metrics, SETTINGS, name="model.csv", kinds=[kind], max_points=200).figures[kind]
    _render(fig, f"one-{rep}-{kind}", tmp_path)


def _on_axes(data, kind: str) -> Figure:
    """``uqeval.plot(data, kind)`` on the one Axes of a new Agg figure (no pyplot)."""
    fig = Figure(figsize=FIGSIZE, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    assert uqeval.plot(data, kind, ax=ax, settings=SETTINGS) is ax
    return fig


@pytest.mark.parametrize(("rep", "kind"), THREE, ids=[f"{r}-{k}" for r, k in THREE])
def test_three_models_overlaid(rep, kind, tmp_path):
    models = {f"model {s:g}": _models(rep, s, seed=i) for i, s in enumerate(SCALES)}
    _render(_on_axes(models, kind), f"three-{rep}-{kind}", tmp_path)


@pytest.mark.parametrize(("rep", "kind"), ON_AX, ids=[f"{r}-{k}" for r, k in ON_AX])
def test_one_model_on_a_given_axes(rep, kind, tmp_path):
    _render(_on_axes(_models(rep, 1.0), kind), f"ax-{rep}-{kind}", tmp_path)


def test_every_baseline_belongs_to_a_case():
    """No stale baseline files: every PNG in baseline/ is one a test compares."""
    names = (
        {f"one-{r}-{k}.png" for r, k in ONE}
        | {f"three-{r}-{k}.png" for r, k in THREE}
        | {f"ax-{r}-{k}.png" for r, k in ON_AX}
    )
    if UPDATE:
        for stale in {p.name for p in BASELINE.glob("*.png")} - names:
            (BASELINE / stale).unlink()
    assert {p.name for p in BASELINE.glob("*.png")} == names
