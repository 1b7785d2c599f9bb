"""Plots of the forecast-verification groups (issue 16): the CORP reliability diagram of an exceedance
event (``exceedance_reliability``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import norm
from typer.testing import CliRunner

from uqeval.catalogue import exceedance_probability
from uqeval.cli import app
from uqeval.config import Settings
from uqeval.metrics.corp import corp_binary, reliability_curve
from uqeval.predictions import Gaussian, Point, Quantiles, Samples
from uqeval.tasks.plot import applicable_kinds, build_figures
from uqeval.tasks.score import score_prediction

from ..conftest import SAMPLE, write_table

PNG = b"\x89PNG\r\n\x1a\n"
runner = CliRunner()
N = 300


def _gaussian(seed: int = 0) -> Gaussian:
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=N)
    return Gaussian(y_true=mu + rng.normal(size=N), mean=mu, std=np.ones(N))


def _corp_line(ax):
    return next(ln for ln in ax.lines if ln.get_label() == "CORP (PAV-recalibrated)")


# --------------------------------------------------------------------------- exceedance_reliability


def test_exceedance_reliability_draws_the_corp_curve_of_each_threshold():
    pred = _gaussian()
    s = Settings(thresholds=(0.0, 1.0))
    assert "exceedance_reliability" in applicable_kinds(pred, s)
    assert "exceedance_reliability" not in applicable_kinds(pred, Settings())  # opt-in
    fig = build_figures(pred, None, s, name="g.parquet", kinds=["exceedance_reliability"]).figures[
        "exceedance_reliability"]
    curve_axes = [ax for ax in fig.axes if ax.get_title().startswith("event")]
    assert [ax.get_title() for ax in curve_axes] == ["event Y > 0", "event Y > 1"]
    for ax, t in zip(curve_axes, (0.0, 1.0)):
        p = norm.sf(t, pred.mean, pred.std)  # P(Y > t) of the Gaussian, independently of the kernel
        np.testing.assert_allclose(p, exceedance_probability(pred, t), rtol=1e-12)
        want = reliability_curve(p, (pred.y_true > t).astype(float), seed=0)
        line = _corp_line(ax)
        np.testing.assert_allclose(line.get_xdata(), want["x"], rtol=1e-12)
        np.testing.assert_allclose(line.get_ydata(), want["calibrated"], rtol=1e-12)
        # the annotated CORP decomposition adds up to the group's Brier score
        metrics, _ = score_prediction(pred, s)
        d = corp_binary(p, (pred.y_true > t).astype(float))["brier"]
        key = "0" if t == 0 else "1"
        assert d["mcb"] - d["dsc"] + d["unc"] == pytest.approx(metrics["exceedance"][key]["brier"], rel=1e-10)
        assert any(f"MCB {d['mcb']:.4f}" in txt.get_text() for txt in ax.texts)


def test_exceedance_reliability_applies_to_every_distribution_but_not_points():
    rng = np.random.default_rng(1)
    y = rng.normal(size=N)
    lv = np.array([0.1, 0.5, 0.9])
    s = Settings(thresholds=(0.5,))
    for pred in (Samples(y_true=y, samples=rng.normal(size=(N, 10))),
                 Quantiles(y_true=y, quantiles=np.sort(rng.normal(size=(N, 3)), axis=1), levels=lv)):
        assert "exceedance_reliability" in applicable_kinds(pred, s)
        assert build_figures(pred, None, s, kinds=["exceedance_reliability"]).figures
    assert "exceedance_reliability" not in applicable_kinds(Point(y_true=y, mean=y), s)


def test_exceedance_reliability_title_is_literal():
    fig = build_figures(_gaussian(), None, Settings(thresholds=(0.0,)), name="$x^2$ [bold]",
                        kinds=["exceedance_reliability"]).figures["exceedance_reliability"]
    assert fig._suptitle.get_text().endswith(r"\$x^2\$ [bold]")


def test_exceedance_reliability_in_the_cli(tmp_path):
    src = str(SAMPLE / "gaussian.parquet")
    r = runner.invoke(app, ["plot", src, "--kind", "exceedance_reliability", "-o", str(tmp_path / "e.png")])
    assert r.exit_code == 2 and "--threshold" in r.output
    r = runner.invoke(app, ["plot", src, "--kind", "exceedance_reliability", "--threshold", "0.5,1",
                            "-o", str(tmp_path / "e.png")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "e.png").read_bytes()[:8] == PNG
    r = runner.invoke(app, ["score", src, "--plot-dir", str(tmp_path / "p"), "-f", "json"])
    assert r.exit_code == 0 and not (tmp_path / "p" / "exceedance_reliability.png").exists()
    r = runner.invoke(app, ["score", src, "--threshold", "1", "--plot-dir", str(tmp_path / "p"), "-f", "json"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "p" / "exceedance_reliability.png").read_bytes()[:8] == PNG
    html = tmp_path / "r.html"
    r = runner.invoke(app, ["report", src, "--threshold", "1", "--output", str(html)])
    assert r.exit_code == 0, r.output
    assert "CORP reliability diagram of exceedances" in html.read_text()
