"""uqeval.plot and Scores.plot (issue 26): the CLI's plot kinds on a matplotlib Axes, overlay of models."""

import subprocess
import sys

import numpy as np
import pytest

import uqeval
from uqeval.plots.kinds import OVERLAY_KINDS

from .conftest import ROOT

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

N = 200


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _data():
    rng = np.random.default_rng(3)
    y = rng.normal(size=N)
    mu = y + 0.5 * rng.normal(size=N)
    members = mu[:, None] + 0.5 * rng.normal(size=(N, 16))
    return y, mu, members


@pytest.mark.parametrize(
    "kind",
    ["calibration", "reliability", "pit", "intervals", "predictions", "ucc", "spread_skill", "sharpness"],
)
def test_gaussian_kinds_draw_on_the_given_axes(kind):
    y, mu, _ = _data()
    fig, ax = plt.subplots()
    out = uqeval.plot(y, kind, ax=ax, mean=mu, std=np.full(N, 0.5))
    assert out is ax
    assert len(fig.axes) == 1  # drawn there, no second axes
    assert ax.lines or ax.patches or ax.collections
    assert ax.get_title()


def test_samples_rank_histogram_needs_no_setting():
    y, _, members = _data()
    ax = uqeval.plot(y, "rank_histogram", samples=members)  # an opt-in diagnostic needs no setting
    assert len(ax.containers[0]) == members.shape[1] + 1  # one bar per rank
    assert ax.get_title() == "Rank histogram"


def test_dataframe_columns_as_evaluate_takes_them():
    pd = pytest.importorskip("pandas")
    y, mu, _ = _data()
    df = pd.DataFrame({"target": y, "m": mu, "s": 0.5})
    ax = uqeval.plot(df, "calibration", y="target", mean="m", std="s")
    (line,) = [ln for ln in ax.lines if ln.get_label() == "observed"]
    assert len(line.get_xdata()) > 2


def test_without_ax_a_pyplot_figure_is_made():
    y, mu, _ = _data()
    ax = uqeval.plot(y, "pit", mean=mu, std=0.5)
    assert ax.figure in [plt.figure(n) for n in plt.get_fignums()]  # a notebook shows it


def _classifier(seed: int = 0):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(3), size=N)
    return rng.integers(0, 3, size=N), p


@pytest.mark.parametrize(
    "kind", ["reliability", "sets", "corp", "smooth_reliability", "exceedance_reliability", "coverage"]
)
def test_multi_panel_kinds_draw_one_panel_on_the_given_axes(kind):
    """issue 26: the kinds whose command-line figure has several panels draw their one-panel form on ax."""
    y, mu, _ = _data()
    if kind in ("exceedance_reliability", "coverage"):
        data, cols = y, {"mean": mu, "std": 0.5, "thresholds": (0.0, 1.0)}
    else:
        data, cols = _classifier(2)
        cols = {"proba": cols}
    fig, ax = plt.subplots()
    assert uqeval.plot(data, kind, ax=ax, **cols) is ax
    assert ax.has_data() and ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    assert len(fig.axes) == 1  # one panel: the counts (if any) are drawn on it
    legend = [t.get_text() for t in ax.get_legend().texts]
    if kind in ("reliability", "corp"):
        assert any("tallest" in t for t in legend)  # the count strip says its scale
    if kind == "exceedance_reliability":
        assert any("Y > 0" in t for t in legend) and any(
            "Y > 1" in t for t in legend
        )  # a curve per threshold
    own = uqeval.plot(data, kind, **cols)  # without ax: a new figure of one Axes
    assert len(own.figure.axes) == 1


def test_coverage_kind_is_the_coverage_by_level_of_the_coverage_command():
    y, mu, _ = _data()
    ax = uqeval.plot(y, "coverage", mean=mu, std=0.5, levels=[0.5, 0.9])
    (line,) = [ln for ln in ax.lines if ln.get_label() == "observed"]
    np.testing.assert_allclose(line.get_xdata(), [0.5, 0.9])
    scores = uqeval.evaluate(y, mean=mu, std=np.full(N, 0.5), levels=[0.5, 0.9])
    np.testing.assert_allclose(
        line.get_ydata(), [scores["coverage.0.5.coverage"], scores["coverage.0.9.coverage"]]
    )


@pytest.mark.parametrize("kind", ["classification", "samples"])
def test_rejection_on_the_given_axes(kind):
    rng = np.random.default_rng(1)
    fig, ax = plt.subplots()
    if kind == "classification":
        data, cols = rng.integers(0, 3, size=N), {"proba": rng.dirichlet(np.ones(3), size=N)}
    else:
        data, cols = _data()[0], {"samples": _data()[2]}
    assert uqeval.plot(data, "rejection", ax=ax, **cols) is ax
    assert len(fig.axes) == 1  # drawn there, no second axes
    assert len(ax.lines) == 2  # the curve and its oracle
    assert ax.get_title().startswith("Rejection curve")


def test_murphy_on_the_given_axes():
    y, mu, _ = _data()
    fig, ax = plt.subplots()
    assert uqeval.plot(y, "murphy", ax=ax, mean=mu, std=0.5) is ax
    assert ax.lines and len(fig.axes) == 1


def _models(kind):
    """Two models the kind applies to: a Gaussian and an ensemble, two ensembles, or two classifiers."""
    y, mu, members = _data()
    if kind in ("sets", "corp", "smooth_reliability"):
        (a, pa), (_, pb) = _classifier(0), _classifier(1)
        return {
            "clf one": uqeval.Categorical(y_true=a, proba=pa),
            "clf two": uqeval.Categorical(y_true=a, proba=pb),
        }
    if kind in ("rejection", "rank_histogram"):
        return {
            "ens": uqeval.Samples(y_true=y, samples=members),
            "ens2": uqeval.Samples(y_true=y, samples=members * 1.5),
        }
    return {
        "gauss": uqeval.Gaussian(y_true=y, mean=mu, std=np.full(N, 0.5)),
        "ens": uqeval.Samples(y_true=y, samples=members),
    }


@pytest.mark.parametrize("kind", OVERLAY_KINDS)
def test_overlay_one_labelled_series_per_model(kind):
    from uqeval.plots.style import model_color

    models = _models(kind)
    fig, ax = plt.subplots()
    assert uqeval.plot(models, kind, ax=ax) is ax
    labels = (
        ax.get_legend_handles_labels()[1] if kind == "ucc" else [t.get_text() for t in ax.get_legend().texts]
    )
    for i, name in enumerate(models):
        assert any(lab.startswith(name) for lab in labels), (name, labels)
        # model i in colour i of the style, whatever the kind
        handle = dict(zip(*reversed(ax.get_legend_handles_labels())))[
            next(lab for lab in labels if lab.startswith(name))
        ]
        colour = handle.get_color() if hasattr(handle, "get_color") else handle.get_edgecolor()
        assert matplotlib.colors.same_color(colour, model_color(i)), (kind, name)
    if kind != "ucc":
        assert len(labels) == len(set(labels))  # the reference drawn once in the legend


def test_overlay_of_a_kind_that_does_not_overlay_names_kind_and_lists_those_that_do():
    y, mu, _ = _data()
    g = uqeval.Gaussian(y_true=y, mean=mu, std=np.full(N, 0.5))
    with pytest.raises(ValueError) as err:
        uqeval.plot({"a": g, "b": g}, "intervals")
    msg = str(err.value)
    assert "kind='intervals'" in msg and all(k in msg for k in OVERLAY_KINDS) and "--" not in msg


def test_errors_name_the_keyword_and_list_applicable_kinds():
    y, mu, _ = _data()
    with pytest.raises(ValueError) as err:
        uqeval.plot(y, "rank_histogram", mean=mu, std=0.5)
    msg = str(err.value)
    assert "kind='rank_histogram'" in msg and "calibration" in msg and "--" not in msg
    with pytest.raises(ValueError, match=r"unknown kind='nope'"):
        uqeval.plot(y, "nope", mean=mu, std=0.5)
    with pytest.raises(TypeError, match="bogus"):
        uqeval.plot(y, "pit", mean=mu, std=0.5, bogus=1)
    with pytest.raises(ValueError, match="nothing to evaluate"):
        uqeval.plot(None, "pit")


def test_scores_plot_draws_the_evaluated_prediction():
    y, mu, _ = _data()
    scores = uqeval.evaluate(y, mean=mu, std=np.full(N, 0.5))
    fig, ax = plt.subplots()
    assert scores.plot("calibration", ax=ax) is ax
    text = [t.get_text() for t in ax.texts]
    assert any(f"{scores['miscal_area']:.4f}" in t for t in text)  # the same prediction as the scores
    html = scores._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 1 + sum(
        isinstance(v, (int, float)) or v is None for v in scores.values()
    )


def test_drawing_functions_take_ax_and_keep_their_own_figure_without_it():
    from uqeval.plots.regression import plot_pit_histogram

    fig = plot_pit_histogram(counts=[5, 6, 4, 5])
    assert fig.axes[0].get_title() == "PIT histogram" and fig.canvas.__class__.__name__ == "FigureCanvasAgg"
    f2, ax = plt.subplots()
    assert plot_pit_histogram(counts=[5, 6, 4, 5], ax=ax) is f2


def test_import_uqeval_does_not_import_matplotlib():
    code = "import sys, uqeval; uqeval.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_scores_of_a_file_plot_and_scores_without_a_prediction_say_so():
    scores = uqeval.evaluate_file(ROOT / "sample_data" / "quantiles.parquet")
    ax = scores.plot("calibration")
    assert ax.get_xlabel() == "Quantile level τ"  # quantile mode, as `uqeval plot` draws it
    bare = uqeval.Scores(scores._summary)
    with pytest.raises(ValueError, match=r"uqeval\.plot\(data, kind\)"):
        bare.plot("calibration")


def test_exceedance_reliability_takes_thresholds_and_says_so_without():
    y, mu, _ = _data()
    ax = uqeval.plot(y, "exceedance_reliability", mean=mu, std=0.5, thresholds=(0.0,))
    assert any("Y > 0" in t.get_text() for t in ax.get_legend().texts)
    with pytest.raises(ValueError, match=r"thresholds=") as err:
        uqeval.plot(y, "exceedance_reliability", mean=mu, std=0.5)
    assert "--" not in str(err.value)


def _quantiles(y, scale: float = 1.0):
    from scipy.stats import norm

    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    return uqeval.Quantiles(y_true=y, quantiles=np.tile(scale * norm.ppf(levels), (y.size, 1)), levels=levels)


@pytest.mark.parametrize("kind", ["calibration", "pit"])
def test_overlay_of_models_whose_axes_differ_is_refused_naming_the_groups(kind):
    y, mu, _ = _data()
    g = uqeval.Gaussian(y_true=y, mean=mu, std=np.full(N, 0.5))
    fig, ax = plt.subplots()
    with pytest.raises(uqeval.errors.UsageError) as err:
        uqeval.plot({"g1": g, "g2": g, "q": _quantiles(y)}, kind, ax=ax)
    msg = str(err.value)
    assert f"kind='{kind}'" in msg and "'g1', 'g2'" in msg and "'q'" in msg, msg
    assert "quantile levels" in msg and "Axes of its own" in msg and "--" not in msg
    assert not ax.lines and not ax.patches  # nothing drawn before the error
    # a group alone draws, as the report's overlay of that key does
    assert uqeval.plot({"q": _quantiles(y), "q wide": _quantiles(y, 2.0)}, kind, ax=ax) is ax
    assert {"q", "q wide"} <= {t.get_text().split(" (")[0] for t in ax.get_legend().texts}


def test_classifier_and_regression_reliability_are_not_overlaid():
    y, mu, _ = _data()
    a, pa = _classifier(0)
    with pytest.raises(uqeval.errors.UsageError, match=r"'c' \(reliability, classifiers\)"):
        uqeval.plot(
            {
                "g": uqeval.Gaussian(y_true=y, mean=mu, std=np.full(N, 0.5)),
                "c": uqeval.Categorical(y_true=a, proba=pa),
            },
            "reliability",
        )


def test_one_legend_helper_for_the_api_and_the_report_overlays(monkeypatch):
    """uqeval.plot and the report's Overlays give one legend entry per label with the same helper."""
    import uqeval.plots.common as common
    from uqeval.api.score import _plot_prediction
    from uqeval.plots.overlay import Overlays

    calls = []
    real = common.legend_once
    monkeypatch.setattr(common, "legend_once", lambda ax, **kw: (calls.append(ax), real(ax, **kw)))
    y, mu, _ = _data()
    ax = uqeval.plot(_models("pit"), "pit")
    overlays = Overlays()
    for name, sd in (("a", 0.5), ("b", 1.0)):
        pred, settings = _plot_prediction(y, mean=mu, std=np.full(N, sd))
        overlays.add(pred, None, settings, name, kinds=["pit"])
    report_ax = overlays.figures()["pit"][0].axes[0]
    assert calls == [ax, report_ax]
    for one in (ax, report_ax):
        # the report's PIT overlay holds its legend below the axes, off the bars (issue 39)
        legend = one.get_legend() if one is ax else one.figure.legends[0]
        texts = [t.get_text() for t in legend.texts]
        assert len(texts) == len(set(texts)) and sum("band of a uniform PIT" in t for t in texts) == 1
        assert len(one.figure.legends) == (0 if one is ax else 1)  # style_axes' legend was replaced


def test_legend_once_gives_one_entry_per_label():
    from uqeval.plots.common import legend_once

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="reference")
    ax.plot([0, 1], [1, 0], label="model a")
    ax.plot([0, 1], [0, 1], label="reference")
    fig.legend()
    legend_once(ax)
    assert [t.get_text() for t in ax.get_legend().texts] == ["reference", "model a"]
    assert not fig.legends
