"""uqeval.plot and Scores.plot (issue 26): the CLI's plot kinds on a matplotlib Axes, overlay of models."""

import subprocess
import sys

import numpy as np
import pytest

import uqeval
from uqeval.tasks.plot import AX_KINDS, OVERLAY_KINDS

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


def test_kinds_with_a_figure_of_their_own_return_its_axes_and_refuse_ax():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=N)
    labels = rng.integers(0, 3, size=N)
    ax = uqeval.plot(labels, "reliability", proba=p)  # the classifier's diagram: its own figure
    assert ax.get_title().startswith("Reliability diagram")
    with pytest.raises(ValueError, match=r"ax=") as err:
        uqeval.plot(labels, "sets", proba=p, ax=plt.subplots()[1])
    assert "--" not in str(err.value)
    fig, ax = plt.subplots()
    assert uqeval.plot(labels, "confidence", proba=p, ax=ax) is ax and len(fig.axes) == 1


@pytest.mark.parametrize(
    "kind", ["reliability", "sets", "corp", "smooth_reliability", "exceedance_reliability"]
)
def test_multi_panel_kinds_refuse_ax_and_return_the_first_axes_of_their_figure(kind):
    rng = np.random.default_rng(2)
    y, mu, _ = _data()
    if kind == "exceedance_reliability":
        data, cols = y, {"mean": mu, "std": 0.5, "thresholds": (0.0,)}
    else:
        data, cols = rng.integers(0, 2, size=N), {"proba": rng.dirichlet(np.ones(2), size=N)}
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match=r"several panels") as err:
        uqeval.plot(data, kind, ax=ax, **cols)
    assert "rejection" in str(err.value) and not ax.has_data()  # lists the kinds that take ax=; drew nothing
    own = uqeval.plot(data, kind, **cols)
    assert len(own.figure.axes) >= 2 and own is own.figure.axes[0]


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


@pytest.mark.parametrize("kind", OVERLAY_KINDS)
def test_overlay_one_labelled_series_per_model(kind):
    y, mu, members = _data()
    models = {
        "gauss": uqeval.Gaussian(y_true=y, mean=mu, std=np.full(N, 0.5)),
        "ens": uqeval.Samples(y_true=y, samples=members),
    }
    fig, ax = plt.subplots()
    assert uqeval.plot(models, kind, ax=ax) is ax
    labels = (
        ax.get_legend_handles_labels()[1] if kind == "ucc" else [t.get_text() for t in ax.get_legend().texts]
    )
    assert any(lab.startswith("gauss") for lab in labels) and any(lab.startswith("ens") for lab in labels)
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
    assert "ucc" in AX_KINDS and "sets" not in AX_KINDS


def test_import_uqeval_does_not_import_matplotlib():
    code = "import sys, uqeval; uqeval.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_scores_of_a_file_plot_and_scores_without_a_prediction_say_so():
    scores = uqeval.evaluate_file(ROOT / "sample_data" / "quantiles.parquet")
    ax = scores.plot("calibration")
    assert ax.get_xlabel() == "quantile level τ"  # quantile mode, as `uqeval plot` draws it
    bare = uqeval.Scores(scores._summary)
    with pytest.raises(ValueError, match=r"uqeval\.plot\(data, kind\)"):
        bare.plot("calibration")


def test_exceedance_reliability_takes_thresholds_and_says_so_without():
    y, mu, _ = _data()
    ax = uqeval.plot(y, "exceedance_reliability", mean=mu, std=0.5, thresholds=(0.0,))
    assert "Y > 0" in ax.get_title()
    with pytest.raises(ValueError, match=r"thresholds=") as err:
        uqeval.plot(y, "exceedance_reliability", mean=mu, std=0.5)
    assert "--" not in str(err.value)
