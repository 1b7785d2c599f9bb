"""uqeval.plots.kinds: which plots apply, what they are built from, the x column and the plot directory."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from uqeval.commands.score.core import score_prediction
from uqeval.config import Settings, make_settings
from uqeval.errors import InputError, SchemaError, front_end
from uqeval.metrics.ucc import ucc_summary
from uqeval.plots.kinds import (
    KIND_TITLES,
    PLOT_KINDS,
    applicable_kinds,
    build_figures,
    check_plot_dir,
    encode_figures,
    plot_level,
    ucc_level,
    ucc_result,
    write_images,
    x_values,
)
from uqeval.predictions import (
    Categorical,
    Dirichlet,
    Gaussian,
    Intervals,
    MemberCategorical,
    Point,
    Quantiles,
    Samples,
)

from .conftest import write_table

N = 200


@pytest.fixture(scope="module")
def preds() -> dict:
    rng = np.random.default_rng(1)
    mu = rng.normal(size=N)
    sd = rng.uniform(0.5, 1.5, N)
    y = mu + sd * rng.normal(size=N)
    lv = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    q = mu[:, None] + sd[:, None] * norm.ppf(lv)[None, :]
    samples = mu[:, None] + sd[:, None] * rng.normal(size=(N, 8))
    proba = rng.dirichlet(np.ones(3), size=N)
    labels = rng.integers(0, 3, N).astype(float)
    return {
        "gaussian": Gaussian(y_true=y, columns={}, rows=np.arange(N), mean=mu, std=sd),
        "samples": Samples(y_true=y, columns={}, rows=np.arange(N), samples=samples),
        "quantiles": Quantiles(y_true=y, columns={}, rows=np.arange(N), quantiles=q, levels=lv),
        "intervals": Intervals(
            y_true=y, columns={}, rows=np.arange(N), lower=q[:, [0, 1]], upper=q[:, [4, 3]], levels=[0.9, 0.5]
        ),
        "point": Point(y_true=y, columns={}, rows=np.arange(N), mean=mu),
        "categorical": Categorical(y_true=labels, columns={}, rows=np.arange(N), proba=proba),
        "members": MemberCategorical(
            y_true=labels, columns={}, rows=np.arange(N), member_proba=rng.dirichlet(np.ones(3), size=(N, 4))
        ),
        "dirichlet": Dirichlet(
            y_true=labels, columns={}, rows=np.arange(N), alpha=rng.gamma(2.0, 1.0, size=(N, 3))
        ),
    }


EXPECTED = {
    "gaussian": (
        "predictions",
        "intervals",
        "calibration",
        "adversarial",
        "sharpness",
        "residuals",
        "reliability",
        "pit",
        "ucc",
    ),
    "samples": (
        "predictions",
        "intervals",
        "calibration",
        "adversarial",
        "sharpness",
        "reliability",
        "pit",
        "rejection",
        "ucc",
    ),
    "quantiles": ("predictions", "intervals", "calibration", "pit", "ucc"),
    "intervals": ("predictions", "intervals", "ucc"),
    "point": (),
    "categorical": ("reliability", "confidence", "sets", "rejection"),
    "members": ("reliability", "confidence", "sets", "rejection"),
    "dirichlet": ("reliability", "confidence", "sets", "rejection"),
}


def titles(fig) -> str:
    return " ".join([ax.get_title() for ax in fig.axes] + [fig._suptitle.get_text() if fig._suptitle else ""])


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_applicable_kinds_and_every_title_names_the_file(preds, kind):
    pred = preds[kind]
    assert applicable_kinds(pred) == EXPECTED[kind]
    metrics, _ = score_prediction(pred, Settings())
    bundle = build_figures(pred, metrics, Settings(), name="model<1>.parquet")
    assert tuple(bundle.figures) == EXPECTED[kind]
    for k, fig in bundle.figures.items():
        assert "model<1>.parquet" in titles(fig), k
        for ax in fig.axes:  # every axis is labelled
            if ax.get_visible() and ax.has_data():  # (stacked axes share one x label)
                xlabel = any(a.get_xlabel() for a in ax.get_shared_x_axes().get_siblings(ax))
                assert xlabel and ax.get_ylabel(), (k, ax.get_title())
    assert (bundle.ucc is not None) == ("ucc" in EXPECTED[kind])


def test_no_plot_for_log_likelihoods_alone():
    from uqeval.predictions import LogLikelihood

    pred = LogLikelihood(y_true=None, loglik=np.zeros((5, 3)))
    assert applicable_kinds(pred) == ()
    assert build_figures(pred).figures == {}


#: the opt-in calibration-diagnostics plots (--diagnostics), per representation
DIAGNOSTIC_PLOTS = {
    "gaussian": ("spread_reliability", "spread_skill", "coverage"),
    "samples": ("spread_reliability", "spread_skill", "rank_histogram", "coverage"),
    "quantiles": ("coverage",),
    "intervals": ("coverage",),
    **{k: ("corp", "smooth_reliability", "coverage") for k in ("categorical", "members", "dirichlet")},
}


def test_kind_titles_cover_every_kind():
    assert set(KIND_TITLES) == set(PLOT_KINDS)
    # murphy: --murphy; exceedance_reliability: --threshold; skill: --reference; multivariate: --diagnostics
    assert set().union(*map(set, EXPECTED.values()), *map(set, DIAGNOSTIC_PLOTS.values())) | {
        "murphy",
        "exceedance_reliability",
        "skill",
        "multivariate_rank_histogram",
    } == set(PLOT_KINDS)


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_diagnostic_plots_apply_with_diagnostics_on(preds, kind):
    pred, on = preds[kind], Settings(diagnostics=True)
    want = DIAGNOSTIC_PLOTS.get(kind, ())
    assert applicable_kinds(pred, on) == tuple(k for k in PLOT_KINDS if k in EXPECTED[kind] + want)
    if not want:
        return
    metrics, _ = score_prediction(pred, on)
    figs = build_figures(pred, metrics, on, name="m.parquet", kinds=list(want)).figures
    assert tuple(figs) == want
    # asked for by name, a diagnostic plot needs no --diagnostics (its family is computed for it)
    again = build_figures(pred, None, Settings(), name="m.parquet", kinds=list(want)).figures
    for k in want:
        assert "m.parquet" in titles(figs[k]) and "m.parquet" in titles(again[k])
        a, b = figs[k].axes[0].lines[-1].get_ydata(), again[k].axes[0].lines[-1].get_ydata()
        np.testing.assert_allclose(a, b)


def test_requested_kind_that_does_not_apply_lists_those_that_do(preds):
    with pytest.raises(InputError, match=r"'residuals' does not apply to samples.*sharpness"):
        build_figures(preds["samples"], kinds=["residuals"])
    with pytest.raises(InputError, match="carry no uncertainty"):
        build_figures(preds["point"], kinds=["calibration"])
    with pytest.raises(InputError, match="unknown plot kind"):
        build_figures(preds["gaussian"], kinds=["violin"])
    with pytest.raises(InputError, match="max_points= must be >= 1"):  # the Python voice (errors.option)
        build_figures(preds["gaussian"], kinds=["pit"], max_points=0)


def test_missing_metrics_are_computed_like_the_summary(preds):
    # adversarial needs the adv_group_calibration curve: taken from the registry when absent
    pred = preds["gaussian"]
    metrics, _ = score_prediction(pred, Settings())
    a = build_figures(pred, None, Settings(), kinds=["adversarial"]).figures["adversarial"]
    b = build_figures(pred, metrics, Settings(), kinds=["adversarial"]).figures["adversarial"]
    ya = a.axes[0].lines[0].get_ydata()
    np.testing.assert_allclose(ya, b.axes[0].lines[0].get_ydata())
    np.testing.assert_allclose(ya, metrics["adv_group_calibration"]["ma_mean"])


def test_set_plot_reuses_the_summary_levels_and_computes_the_others(preds):
    from uqeval.metrics.classification import prediction_sets
    from uqeval.plots.kinds import SET_LEVELS

    pred = preds["categorical"]
    metrics, _ = score_prediction(pred, Settings())
    fresh = prediction_sets(pred.proba, pred.labels, levels=sorted(SET_LEVELS))
    assert metrics["prediction_sets"]["0.95"] == fresh["0.95"]
    marked = {**metrics, "prediction_sets": {"0.95": {**fresh["0.95"], "coverage": 0.123}}}
    fig = build_figures(pred, marked, Settings(), kinds=["sets"]).figures["sets"]
    level, cov = (fig.axes[0].lines[1].get_xdata(), fig.axes[0].lines[1].get_ydata())
    assert list(level) == sorted(SET_LEVELS)
    # the summary's 0.95 is drawn (not recomputed); the other levels come from the kernel
    np.testing.assert_array_equal(cov, [0.123 if v == 0.95 else fresh[str(v)]["coverage"] for v in level])


def test_scatter_subsamples_but_curves_use_every_row(preds):
    pred = preds["gaussian"]
    figs = build_figures(pred, None, Settings(), kinds=["predictions", "pit"], max_points=50, seed=3).figures
    ax = figs["predictions"].axes[0]
    assert len(ax.collections[-1].get_offsets()) == 50  # the observations
    again = build_figures(pred, None, Settings(), kinds=["predictions"], max_points=50, seed=3).figures
    other = build_figures(pred, None, Settings(), kinds=["predictions"], max_points=50, seed=4).figures
    pts = ax.collections[-1].get_offsets()
    np.testing.assert_array_equal(pts, again["predictions"].axes[0].collections[-1].get_offsets())
    assert not np.array_equal(pts, other["predictions"].axes[0].collections[-1].get_offsets())
    # without --x: the ordered view (issue 28), no line by row index: 50 intervals as error bars, points
    # sorted by the prediction
    assert not ax.lines and "ordered by predicted mean" in ax.get_xlabel()
    assert len(ax.collections[0].get_segments()) == 50
    ranks, means = ax.collections[1].get_offsets().T
    assert np.all(np.diff(ranks) > 0) and np.all(np.diff(means) >= 0)
    # with --x: the mean line holds every row (N is below the curve reduction threshold)
    with_x = build_figures(pred, None, Settings(), kinds=["predictions"], x=np.arange(N * 1.0), max_points=50)
    bx = with_x.figures["predictions"].axes[0]
    assert len(bx.lines[0].get_xdata()) == N
    assert "observations (50 of 200)" in bx.get_legend_handles_labels()[1]


def test_x_values_order_the_band_plot(preds):
    pred = preds["gaussian"]
    x = np.linspace(10, 0, N)  # decreasing: the plot sorts rows by x
    fig = build_figures(pred, None, Settings(), kinds=["predictions"], x=x, x_label="time [s]").figures[
        "predictions"
    ]
    ax = fig.axes[0]
    assert ax.get_xlabel() == "time [s]"
    np.testing.assert_allclose(ax.lines[0].get_ydata(), pred.mean[::-1])
    with pytest.raises(InputError, match="x has 3 values"):
        build_figures(pred, None, Settings(), kinds=["predictions"], x=np.arange(3.0))


def test_samples_band_is_the_empirical_095_interval_and_rejection_matches_registry(preds):
    from uqeval.metrics.ensembles import rejection_curve
    from uqeval.metrics.samples import empirical_quantiles

    pred = preds["samples"]
    assert plot_level(pred, Settings()) == 0.95
    fig = build_figures(pred, None, Settings(), kinds=["intervals"]).figures["intervals"]
    segs = fig.axes[0].collections[0].get_segments()  # one vertical line per row, in target order
    q = empirical_quantiles(pred.samples, np.array([0.025, 0.975]))
    order = np.argsort(pred.y_true, kind="stable")
    np.testing.assert_allclose([s[0][1] for s in segs], q[order, 0])
    np.testing.assert_allclose([s[1][1] for s in segs], q[order, 1])
    rej = build_figures(pred, None, Settings(), kinds=["rejection"]).figures["rejection"]
    m = pred.samples.mean(axis=1)
    sd = pred.samples.std(axis=1, ddof=1)
    expected = rejection_curve(pred.y_true - m, sd, kind="rmse")
    np.testing.assert_allclose(rej.axes[0].lines[0].get_ydata(), expected["values"])
    np.testing.assert_allclose(rej.axes[0].lines[1].get_ydata(), expected["oracle_values"])


def test_quantile_plots_use_the_widest_pair_quantile_mode_and_counts(preds):
    from uqeval.metrics.quantiles import pit_histogram_quantiles, quantile_calibration_curve

    pred = preds["quantiles"]
    assert plot_level(pred, Settings()) == pytest.approx(0.9)
    figs = build_figures(pred, None, Settings(), kinds=["intervals", "calibration", "pit"]).figures
    segs = figs["intervals"].axes[0].collections[0].get_segments()
    order = np.argsort(pred.y_true, kind="stable")
    np.testing.assert_allclose([s[0][1] for s in segs], pred.quantiles[order, 0])
    np.testing.assert_allclose([s[1][1] for s in segs], pred.quantiles[order, 4])
    ax = figs["calibration"].axes[0]
    exp, obs = quantile_calibration_curve(pred.y_true, pred.quantiles, pred.levels)
    line = [ln for ln in ax.lines if ln.get_label() == "observed"][0]
    np.testing.assert_allclose(line.get_xdata(), exp)
    np.testing.assert_allclose(line.get_ydata(), obs)
    assert "Quantile level" in ax.get_xlabel()
    hist = pit_histogram_quantiles(pred.y_true, pred.quantiles, pred.levels)
    bars = figs["pit"].axes[0].patches[0]  # filled stairs of the counts
    np.testing.assert_allclose(np.unique(bars.get_path().vertices[:, 0]), hist["edges"])


def test_quantiles_without_a_central_pair_have_no_band(preds):
    p = preds["quantiles"]
    q = Quantiles(y_true=p.y_true, columns={}, rows=p.rows, quantiles=p.quantiles[:, 2:], levels=p.levels[2:])
    assert applicable_kinds(q) == ("calibration", "pit")


def test_ucc_equals_the_kernel_on_the_same_band(preds):
    pred = preds["gaussian"]
    res = ucc_result(pred, Settings(), "g")
    z = norm.ppf(0.975)
    ref = ucc_summary(pred.y_true, pred.mean, pred.mean - z * pred.std, pred.mean + z * pred.std)
    for key in ("auucc", "auucc_const", "gain"):
        assert res["summary"][key] == pytest.approx(ref[key], rel=1e-12)
    assert res["summary"]["level"] == 0.95 and "mean" in res["summary"]["centre"]
    assert res["model"]["auucc"] == pytest.approx(ref["auucc"], rel=1e-12)
    # --level picks the band when the file carries it, else the widest level
    iv = preds["intervals"]
    assert ucc_level(iv, Settings()) == pytest.approx(0.9)
    assert ucc_level(iv, make_settings(level=0.5)) == pytest.approx(0.5)
    assert ucc_level(preds["point"], Settings()) is None


def test_ucc_problem_is_a_note_unless_asked_for(preds):
    p = preds["intervals"]
    lo, hi = p.lower.copy(), p.upper.copy()
    bad = Intervals(
        y_true=p.y_true, columns={}, rows=p.rows, lower=lo, upper=hi, levels=p.levels, mean=hi[:, 0] + 1.0
    )
    bundle = build_figures(bad, None, Settings())
    assert "ucc" not in bundle.figures and bundle.ucc is None
    assert any(n.startswith("UCC skipped") for n in bundle.notes)
    with pytest.raises(InputError, match="outside"):
        build_figures(bad, None, Settings(), kinds=["ucc"])


def test_reliability_diagram_for_classification_shows_the_summary_ece(preds):
    pred = preds["categorical"]
    metrics, _ = score_prediction(pred, Settings())
    fig = build_figures(pred, metrics, Settings(), kinds=["reliability"], name="c").figures["reliability"]
    assert f"ECE = {metrics['calibration']['ece']:.4f}" in titles(fig)
    sets = build_figures(pred, metrics, make_settings(levels=(0.85,)), kinds=["sets"]).figures["sets"]
    xs = sets.axes[0].lines[1].get_xdata()
    np.testing.assert_allclose(xs, sorted({0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 0.99}))


def test_x_values_are_read_with_the_prediction_and_align_with_kept_rows(tmp_path):
    from uqeval.io.load import load_predictions

    f = write_table(
        tmp_path / "d.parquet",
        {
            "y": [1.0, 2.0, 3.0, 4.0],
            "mean": [1.0, np.nan, 3.0, 4.0],
            "Time": [10.0, 20.0, 30.0, 40.0],
            "name": ["a", "b", "c", "d"],
            "gap": [1.0, 2.0, np.nan, 4.0],
        },
    )

    def load(policy: str, *extra: str):
        return load_predictions(f, make_settings(nan_policy=policy), extra=extra)

    np.testing.assert_array_equal(x_values(load("omit", "time"), "time"), [10.0, 30.0, 40.0])
    with pytest.raises(InputError, match=r"'gap' must be finite.*first at row 2"):
        x_values(load("omit", "gap"), "gap")
    with front_end("cli"), pytest.raises(SchemaError, match="'nope' given for --x not found"):
        x_values(load("omit", "nope"), "nope")  # the option is the command line's (uqeval plot --x)
    with pytest.raises(SchemaError, match="not numeric"):
        x_values(load("omit", "name"), "name")


def test_plot_dir_is_created_in_an_existing_parent_only(tmp_path, preds):
    figs = build_figures(preds["quantiles"], None, Settings(), kinds=["pit", "calibration"]).figures
    paths = write_images(encode_figures(figs, "svg"), tmp_path / "plots", "svg")
    assert [p.name for p in paths] == ["calibration.svg", "pit.svg"]
    assert all(p.read_bytes().startswith(b"<?xml") for p in paths)
    assert sorted(x.name for x in (tmp_path / "plots").iterdir()) == [
        "calibration.svg",
        "pit.svg",
    ]  # no temp files
    with pytest.raises(InputError, match="parent directory"):
        check_plot_dir(tmp_path / "missing" / "plots")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        check_plot_dir(tmp_path / "file")
