"""Plots of the forecast-verification groups (issue 16): the CORP reliability diagram of an exceedance
event (``exceedance_reliability``), the skill bars (``skill``) and the average-rank histogram of
multivariate ensembles (``multivariate_rank_histogram``, checked against a row-by-row implementation of
Thorarinsdottir, Scheuerer & Heinz 2016)."""

from __future__ import annotations

import matplotlib.text
import numpy as np
import pytest
from scipy.stats import norm
from typer.testing import CliRunner

from uqeval.catalogue import exceedance_probability
from uqeval.cli import app
from uqeval.commands.score.core import score_prediction
from uqeval.config import Settings
from uqeval.metrics.corp import corp_binary, reliability_curve
from uqeval.plots.kinds import applicable_kinds, build_figures
from uqeval.predictions import Gaussian, Point, Quantiles, Samples

from ..conftest import SAMPLE

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
        "exceedance_reliability"
    ]
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
    for pred in (
        Samples(y_true=y, samples=rng.normal(size=(N, 10))),
        Quantiles(y_true=y, quantiles=np.sort(rng.normal(size=(N, 3)), axis=1), levels=lv),
    ):
        assert "exceedance_reliability" in applicable_kinds(pred, s)
        assert build_figures(pred, None, s, kinds=["exceedance_reliability"]).figures
    assert "exceedance_reliability" not in applicable_kinds(Point(y_true=y, mean=y), s)


def test_exceedance_reliability_title_is_literal():
    fig = build_figures(
        _gaussian(), None, Settings(thresholds=(0.0,)), name="$x^2$ [bold]", kinds=["exceedance_reliability"]
    ).figures["exceedance_reliability"]
    assert fig._suptitle.get_text().endswith("$x^2$ [bold]") and not fig._suptitle.get_parse_math()


def test_exceedance_reliability_in_the_cli(tmp_path):
    src = str(SAMPLE / "gaussian.parquet")
    r = runner.invoke(app, ["plot", src, "--kind", "exceedance_reliability", "-o", str(tmp_path / "e.png")])
    assert r.exit_code == 2 and "--threshold" in r.output
    r = runner.invoke(
        app,
        [
            "plot",
            src,
            "--kind",
            "exceedance_reliability",
            "--threshold",
            "0.5,1",
            "-o",
            str(tmp_path / "e.png"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "e.png").read_bytes()[:8] == PNG
    r = runner.invoke(app, ["score", src, "--plot-dir", str(tmp_path / "p"), "-f", "json"])
    assert r.exit_code == 0 and not (tmp_path / "p" / "exceedance_reliability.png").exists()
    r = runner.invoke(
        app, ["score", src, "--threshold", "1", "--plot-dir", str(tmp_path / "p"), "-f", "json"]
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "p" / "exceedance_reliability.png").read_bytes()[:8] == PNG
    html = tmp_path / "r.html"
    r = runner.invoke(app, ["report", src, "--threshold", "1", "--output", str(html)])
    assert r.exit_code == 0, r.output
    assert "CORP reliability diagram of exceedances" in html.read_text()


# --------------------------------------------------------------------------- skill


def test_skill_bars_are_the_skill_values_with_the_zero_line():
    from uqeval.plots.verification import plot_skill

    fig = plot_skill({"crps": 0.3, "pinball": -0.2, "nll": None}, title="t")
    ax = fig.axes[0]
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == pytest.approx([-0.2, 0.3])
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert [t.split("\n")[0] for t in ticks] == ["crps", "pinball", "nll"]
    assert "1 − S/S_ref" in ticks[0] and "nats" in ticks[2] and "S_ref" not in ticks[2]  # nll: a gain in nats
    assert "S_ref" not in ax.get_ylabel()
    assert ax.get_ylim()[1] < 0.5  # the axis fits the values, not a fixed 0..1
    assert any(t.get_text() == "0.3" for t in ax.texts)  # bars carry their values
    assert any(t.get_text() == "n/a" for t in ax.texts)  # a null skill (reference scores 0) is marked
    assert any(list(ln.get_ydata()) == [0.0, 0.0] for ln in ax.lines)  # the 0 line
    with pytest.raises(Exception, match="reference"):
        plot_skill({})


def test_skill_per_model_with_bootstrap_intervals_and_literal_names():
    from uqeval.plots.common import figure_to_bytes
    from uqeval.plots.verification import plot_skill

    skill = {
        "crps": {
            "$a$": {"estimate": 0.4, "low": 0.3, "high": 0.5},
            "b\x07[bold]": {"estimate": 0.1, "low": None, "high": None},
        },
        "mse": {
            "$a$": {"estimate": 0.6, "low": 0.5, "high": 0.7},
            "b\x07[bold]": {"estimate": -0.1, "low": -0.2, "high": 0.0},
        },
    }
    fig = plot_skill(skill, reference="climatology of $t$.parquet")
    ax = fig.axes[0]
    assert sorted(p.get_height() for p in ax.patches) == pytest.approx([-0.1, 0.1, 0.4, 0.6])
    # error bars: three finite intervals (b's crps has none)
    segs = [seg for c in ax.collections for seg in c.get_segments()]
    assert len(segs) == 3
    assert sorted(float(s[1][1] - s[0][1]) for s in segs) == pytest.approx([0.2, 0.2, 0.2])
    data = figure_to_bytes(fig, "png")
    assert data[:8] == PNG
    labels = (
        [t.get_text() for t in fig.legends[0].get_texts()]
        if fig.legends
        else [t.get_text() for t in ax.get_legend().get_texts()]
    )
    assert "$a$" in labels and "b\\x07[bold]" in labels  # literal (no mathtext), control characters shown
    assert all(not t.get_parse_math() for t in fig.findobj(lambda o: hasattr(o, "get_parse_math")))


def test_skill_plot_in_score_plot_compare_and_report(tmp_path):
    src, const = str(SAMPLE / "gaussian.parquet"), str(SAMPLE / "gaussian_const.parquet")
    ref = ["--reference", "climatology", "--train", str(SAMPLE / "train.parquet")]
    r = runner.invoke(app, ["plot", src, "--kind", "skill", "-o", str(tmp_path / "s.png")])
    assert r.exit_code == 2 and "--reference" in r.output
    r = runner.invoke(app, ["plot", src, "--kind", "pit", "-o", str(tmp_path / "p.png"), *ref])
    assert r.exit_code == 2
    r = runner.invoke(app, ["plot", src, "--kind", "skill", "-o", str(tmp_path / "s.png"), *ref])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "s.png").read_bytes()[:8] == PNG
    r = runner.invoke(app, ["score", src, "--plot-dir", str(tmp_path / "d0"), "-f", "json"])
    assert r.exit_code == 0 and not (tmp_path / "d0" / "skill.png").exists()
    r = runner.invoke(app, ["score", src, "--plot-dir", str(tmp_path / "d1"), "-f", "json", *ref])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "d1" / "skill.png").read_bytes()[:8] == PNG
    r = runner.invoke(
        app,
        [
            "compare",
            src,
            const,
            "--bootstrap",
            "50",
            "--permutations",
            "0",
            "--plot",
            str(tmp_path / "c.png"),
            "-f",
            "json",
            *ref,
        ],
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "c_skill.png").read_bytes()[:8] == PNG
    html = tmp_path / "r.html"
    r = runner.invoke(app, ["report", src, "--output", str(html), *ref])
    assert r.exit_code == 0, r.output
    assert "Skill against the reference" in html.read_text()


# --------------------------------------------------------------------------- multivariate rank histogram


def _average_ranks_slow(y, x, seed):
    """Thorarinsdottir et al. (2016) row by row: obviously correct, slow."""
    from scipy.stats import rankdata

    n, m, d = x.shape
    u = np.random.default_rng(seed).random(n)
    out = np.empty(n, dtype=int)
    for i in range(n):
        pool = np.vstack([y[i][None, :], x[i]])
        pre = np.mean([rankdata(pool[:, k]) for k in range(d)], axis=0)
        below = sum(pre[j] < pre[0] for j in range(1, m + 1))
        ties = sum(pre[j] == pre[0] for j in range(1, m + 1))
        out[i] = below + int(np.floor(u[i] * (ties + 1)))
    return out


def test_average_ranks_equal_the_row_by_row_definition_with_ties():
    from uqeval.metrics.multivariate import average_ranks

    rng = np.random.default_rng(4)
    x = rng.integers(0, 4, size=(80, 6, 3)).astype(float)  # many ties
    y = rng.integers(0, 4, size=(80, 3)).astype(float)
    np.testing.assert_array_equal(average_ranks(y, x, seed=7), _average_ranks_slow(y, x, 7))
    x = rng.normal(size=(60, 9, 2))
    y = rng.normal(size=(60, 2))
    np.testing.assert_array_equal(average_ranks(y, x, seed=1), _average_ranks_slow(y, x, 1))


def test_average_rank_of_one_component_is_the_univariate_rank():
    from uqeval.metrics.multivariate import average_ranks

    rng = np.random.default_rng(5)
    x = rng.normal(size=(200, 7, 1))
    y = rng.normal(size=(200, 1))
    np.testing.assert_array_equal(average_ranks(y, x), (x[:, :, 0] < y).sum(axis=1))


def test_average_rank_histogram_is_flat_when_calibrated_and_u_shaped_when_underdispersed():
    from uqeval.metrics.calibration_tests import rank_counts_test
    from uqeval.metrics.multivariate import average_ranks

    rng = np.random.default_rng(6)
    n, m, d = 3000, 9, 3
    cov = 0.5 * np.ones((d, d)) + 0.5 * np.eye(d)
    loc = rng.normal(size=(n, 1, d))
    x = loc + rng.multivariate_normal(np.zeros(d), cov, size=(n, m))
    y = loc[:, 0] + rng.multivariate_normal(np.zeros(d), cov, size=n)
    ok = rank_counts_test(average_ranks(y, x), m)
    assert ok["rank_hist_chi2_p"] > 1e-3
    narrow = loc + 0.3 * (x - loc)  # underdispersed: the outcome falls outside the members
    bad = rank_counts_test(average_ranks(y, narrow), m)
    c = np.asarray(bad["rank_histogram"])
    assert bad["rank_hist_chi2_p"] < 1e-12 and c[0] + c[-1] > 3 * c[m // 2 - 1 : m // 2 + 2].mean()


def test_multivariate_rank_histogram_plot(tmp_path):
    from uqeval.io.load import load_predictions

    src = str(SAMPLE / "multivariate.parquet")
    pred = load_predictions(src).prediction
    assert "multivariate_rank_histogram" not in applicable_kinds(pred, Settings())
    assert "multivariate_rank_histogram" in applicable_kinds(pred, Settings(diagnostics=True))
    fig = build_figures(pred, None, Settings(), name="$m$", kinds=["multivariate_rank_histogram"]).figures[
        "multivariate_rank_histogram"
    ]
    ax = fig.axes[0]
    from uqeval.metrics.multivariate import average_ranks

    want = np.bincount(average_ranks(pred.y_true, pred.samples), minlength=pred.samples.shape[1] + 1)
    assert [p.get_height() for p in ax.patches if p.get_width() == pytest.approx(0.9)] == want.tolist()
    assert ax.get_title().endswith("$m$") and not ax.title.get_parse_math()
    r = runner.invoke(
        app, ["plot", src, "--kind", "multivariate_rank_histogram", "-o", str(tmp_path / "m.png")]
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "m.png").read_bytes()[:8] == PNG
    r = runner.invoke(app, ["plot", src, "--kind", "pit", "-o", str(tmp_path / "x.png")])
    assert r.exit_code == 3 and "multivariate_rank_histogram" in r.output
    r = runner.invoke(app, ["score", src, "--diagnostics", "--plot-dir", str(tmp_path / "d"), "-f", "json"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "d" / "multivariate_rank_histogram.png").read_bytes()[:8] == PNG
    html = tmp_path / "r.html"
    r = runner.invoke(app, ["report", src, "--diagnostics", "--output", str(html)])
    assert r.exit_code == 0, r.output
    assert "Average-rank histogram" in html.read_text()


def test_exceedance_reliability_draws_at_most_six_thresholds_in_rows_of_three():
    from uqeval.plots.kinds import MAX_EXCEEDANCE_PANELS

    s = Settings(thresholds=tuple(np.linspace(-1.5, 1.5, 8)))
    bundle = build_figures(_gaussian(), None, s, kinds=["exceedance_reliability"])
    fig = bundle.figures["exceedance_reliability"]
    curves = [ax for ax in fig.axes if ax.get_visible() and ax.get_title().startswith("event")]
    assert len(curves) == MAX_EXCEEDANCE_PANELS == 6
    assert any("first 6 of 8" in n for n in bundle.notes)
    fig = build_figures(
        _gaussian(), None, Settings(thresholds=(-1.0, 0.0, 0.5, 1.0)), kinds=["exceedance_reliability"]
    ).figures["exceedance_reliability"]
    assert sum(ax.get_visible() for ax in fig.axes) == 8 and len(fig.axes) == 12  # 2 empty slots hidden


def test_a_dollar_in_a_name_is_drawn_as_itself_in_saved_figures_and_on_a_given_axes():
    """A file named ``cost$1.csv`` was titled ``cost\\$1.csv`` in saved figures: the title was escaped for mathtext,
    which the saved figures then switched off. The texts uqeval draws are literal instead (math parsing off), on
    a new figure and on a given Axes, whose own texts keep their math."""
    import matplotlib.pyplot as plt

    from uqeval.plots.common import figure_to_bytes

    fig = build_figures(_gaussian(), None, Settings(), name="cost$1.csv", kinds=["calibration"]).figures[
        "calibration"
    ]
    figure_to_bytes(fig, "png")
    titles = [t.get_text() for t in fig.findobj(matplotlib.text.Text) if "cost" in t.get_text()]
    assert titles and all("cost$1.csv" in t and "\\$" not in t for t in titles)
    plt.close(fig)
    fig, ax = plt.subplots()
    mine = ax.text(0.5, 0.5, "$\\sigma$")  # the user's own text
    build_figures(_gaussian(), None, Settings(), name="m$", kinds=["calibration"], ax=ax)
    assert mine.get_parse_math() and not ax.title.get_parse_math() and ax.get_title().endswith("m$")
    plt.close(fig)
