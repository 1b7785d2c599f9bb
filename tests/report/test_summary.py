"""The report's summary (issue 28): headline metrics, best-value marking, verdict, compare's tests, overlays."""

from __future__ import annotations

import copy
import math
import re

import numpy as np
import pytest

from uqeval.catalogue import CLASSIFICATION, HEADLINE, METRICS, REGRESSION, headline_paths, metrics_for
from uqeval.errors import InputError
from uqeval.report.html import _best_columns, render_report

from .test_html import make_summary, parse


def scoreboard(doc: str) -> dict[str, list[str]]:
    """``{file: [cell html, ...]}`` of the summary's scoreboard."""
    table = re.search(r'<table class="scoreboard">(.*?)</table>', doc).group(1)
    return {
        name: re.findall(r"<td[^>]*>(.*?)</td>", cells)
        for name, cells in re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', table)
    }


def columns(doc: str) -> list[str]:
    head = re.search(r'<table class="scoreboard"><thead>(.*?)</thead>', doc).group(1)
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<code>(.*?)</code>", head)]


def entry(name: str, **metrics) -> dict:
    """A Gaussian summary with some metrics replaced: ``crps=0.5``, ``coverage=0.93`` (at 0.95)."""
    s = make_summary(name=name)
    for key, value in metrics.items():
        if key == "coverage":
            s["metrics"]["coverage"]["0.95"]["coverage"] = value
        else:
            group = {"crps": "scoring_rule", "nll": "scoring_rule", "rmse": "accuracy"}[key]
            s["metrics"][group][key] = value
    return {"name": name, "summary": s}


# ----------------------------------------------------------------------------- headline metrics
def test_headline_metrics_are_catalogue_metrics_of_their_representation():
    assert set(HEADLINE) >= set(REGRESSION) | set(CLASSIFICATION)
    for kind, paths in HEADLINE.items():
        assert paths and len(set(paths)) == len(paths), kind
        applies = {m.path for m in metrics_for(kind)}
        for path in paths:
            assert path in METRICS and path in applies, (kind, path)
            assert METRICS[path].orientation_for(kind) is not None, (kind, path)  # every column ranks


def test_headline_paths_take_the_widest_level_and_skip_what_is_missing():
    present = ["scoring_rule.crps", "coverage.0.5.coverage", "coverage.0.95.coverage", "coverage.0.95.width"]
    assert headline_paths("gaussian", present) == [
        ("scoring_rule.crps", "scoring_rule.crps"),
        ("coverage.coverage", "coverage.0.95.coverage"),
        ("coverage.width", "coverage.0.95.width"),
    ]
    assert headline_paths("gaussian", ["coverage.bad.coverage"]) == []
    assert headline_paths(None, present) == [] and headline_paths("nope", present) == []


# ----------------------------------------------------------------------------- best-value marking
@pytest.mark.parametrize(
    ("values", "orient", "targets", "best"),
    [
        ([1.0, 2.0, 1.0], "lower", None, {0, 2}),  # ties are all best
        ([1.0, 2.0, 2.0], "higher", None, {1, 2}),
        ([3.0, 3.0], "lower", None, set()),  # all equal: nobody
        ([None, 2.0, math.nan, 1.0], "lower", None, {3}),  # null and NaN never
        ([None, 2.0], "lower", None, set()),  # one comparable value: nobody
        ([1.0], "lower", None, set()),  # a single model
        ([0.93, 0.97, 0.96], "target", [0.95] * 3, {2}),  # distance to the target
        ([0.93, 0.97, 0.99], "target", [0.95] * 3, {0, 1}),  # equally far (up to rounding): a tie
        ([0.93, 0.97], "target", [0.95, 0.95], set()),  # all equally far: nobody
        ([0.93, 0.97], "target", None, set()),  # no target known: nobody
        ([0.9, 0.97], "target", [0.9, None], set()),
        ([1.0, 2.0], None, None, set()),  # a curve: no orientation
        (["a", 1.0, 2.0], "lower", None, {1}),
    ],
)
def test_best_columns(values, orient, targets, best):
    assert _best_columns(values, orient, targets) == best


def test_scoreboard_marks_the_best_per_column_and_says_who_wins():
    entries = [
        entry("a.parquet", crps=0.40, nll=1.2, coverage=0.90),
        entry("b.parquet", crps=0.50, nll=1.2, coverage=0.96),
        entry("c.parquet", crps=0.40, nll=None, coverage=0.99),
    ]
    doc = render_report(entries)
    cols = columns(doc)
    assert cols[:2] == ["scoring_rule.crps", "scoring_rule.nll"] and "coverage.0.95.coverage" in cols
    board = scoreboard(doc)
    crps, nll, cov = 0, 1, cols.index("coverage.0.95.coverage")
    bold = {name: [i for i, c in enumerate(cells) if 'class="best"' in c] for name, cells in board.items()}
    assert crps in bold["a.parquet"] and crps in bold["c.parquet"] and crps not in bold["b.parquet"]  # a tie
    assert nll not in bold["a.parquet"] + bold["b.parquet"] and board["c.parquet"][nll] == "—"  # equal, null
    assert (
        cov in bold["b.parquet"] and cov not in bold["a.parquet"] + bold["c.parquet"]
    )  # |0.96 - 0.95| least
    assert "◎ closest to 0.95" in doc and "↓ lower" in doc
    # the last column counts each file's best values; the verdict names the leader
    counts = {name: cells[-1] for name, cells in board.items()}
    assert all(re.fullmatch(rf"\d+ of {len(cols)}", c) for c in counts.values())
    lead = re.search(r'<p class="lead">(.*?)</p>', doc).group(1)
    leader = max(counts, key=lambda n: int(counts[n].split()[0]))
    assert lead.startswith(f"<strong>{leader}</strong>")


def test_scoreboard_of_one_file_marks_nothing():
    doc = render_report([entry("only.csv")])
    board = scoreboard(doc)
    assert list(board) == ["only.csv"] and not any('class="best"' in c for c in board["only.csv"])
    assert "best on" not in doc[: doc.index('id="metrics"')]
    assert "One file, <strong>only.csv</strong>" in doc


def test_scoreboard_with_mixed_representations_and_no_headline_metric():
    cls = make_summary(name="cls.parquet")
    cls["input"]["representation"] = "categorical"
    cls["metrics"] = {"accuracy": {"accuracy": 0.8, "nll": 0.5}, "calibration": {"ece": 0.02}}
    doc = render_report([entry("g.parquet"), {"name": "cls.parquet", "summary": cls}])
    cols = columns(doc)
    assert "scoring_rule.crps" in cols and "accuracy.nll" in cols and "calibration.ece" in cols
    assert scoreboard(doc)["g.parquet"][cols.index("calibration.ece")] == "—"
    point = make_summary(name="p.csv")
    point["input"]["representation"] = "loglik"
    point["metrics"] = {}
    assert "No headline metric applies" in render_report([{"name": "p.csv", "summary": point}])


def test_target_rows_of_the_metric_tables_are_marked_by_distance():
    doc = render_report([entry("a", coverage=0.90), entry("b", coverage=0.96)])
    row = re.search(r"<code>coverage\.0\.95\.coverage</code></a></th>(.*?)</tr>", doc).group(1)
    assert "closest to target" in row and '<strong class="best">0.96</strong>' in row and ">0.9<" in row


def test_summary_names_are_escaped():
    evil = '<img src=x onerror="alert(1)">.csv'
    doc = render_report([entry(evil), entry("b")])
    assert evil not in doc and "onerror=&quot;" in doc
    assert all(not k.startswith("on") for _, attrs in parse(doc).tags for k in attrs)


# ----------------------------------------------------------------------------- compare's tests
COMPARISON = {
    "schema": "uqeval.compare/1",
    "settings": {"n_boot": 200},
    "metrics": {"crps": {"best": ["a"]}},
    "tests": [
        {
            "metric": "crps",
            "model": "b",
            "reference": "a",
            "mean_diff": 0.1,
            "permutation_p": 0.001,
            "dm_p": 0.002,
        },
        {
            "metric": "nll",
            "model": "<b>c</b>",
            "reference": "a",
            "mean_diff": 0.0,
            "permutation_p": 0.4,
            "dm_p": None,
        },
        {
            "metric": "check",
            "model": "b",
            "reference": "a",
            "mean_diff": None,
            "permutation_p": None,
            "dm_p": None,
        },
    ],
}


def test_compare_tests_join_the_summary():
    doc = render_report([entry("a"), entry("b")], comparison=COMPARISON)
    summary = doc[doc.index('id="summary"') : doc.index('id="metrics"')]
    assert 'id="summary-tests"' in summary and "200 bootstrap resamples" in summary
    rows = re.findall(r"<tr><th scope=\"row\"><code>(.*?)</code></th>(.*?)</tr>", summary)
    verdicts = {m: re.findall(r"<td>([^<]*)</td>", cells)[-1] for m, cells in rows}
    assert verdicts == {
        "crps": "differs (p &lt; 0.05)",
        "nll": "no significant difference",
        "check": "not tested",
    }
    assert "&lt;b&gt;c&lt;/b&gt;" in summary and "<b>c</b>" not in summary
    no_tests = render_report([entry("a"), entry("b")], comparison={**COMPARISON, "tests": []})
    assert "No paired test was run." in no_tests


def test_bad_overlays_and_comparison_raise():
    with pytest.raises(InputError, match="overlay 0"):
        render_report([entry("a")], overlays=[{"title": "x"}])
    with pytest.raises(InputError, match="comparison"):
        render_report([entry("a")], comparison=["x"])  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- overlays
def test_overlays_draw_every_model_on_one_figure_per_kind():
    from uqeval.api.score import _plot_prediction
    from uqeval.plots.kinds import OVERLAY_KINDS
    from uqeval.plots.overlay import Overlays, overlay_kinds

    rng = np.random.default_rng(1)
    n = 300
    y = rng.normal(size=n)
    overlays = Overlays()
    for name, sd in (("a", 1.0), ("b", 0.5)):
        pred, settings = _plot_prediction(y, mean=np.zeros(n), std=np.full(n, sd))
        kinds = overlay_kinds(pred, settings)
        assert set(kinds) <= set(OVERLAY_KINDS) and {"calibration", "pit", "ucc", "spread_skill"} <= set(
            kinds
        )
        drawn, alone = overlays.add(pred, None, settings, name)
        assert drawn == kinds and not alone.figures and alone.ucc is not None and alone.ucc["auucc"] > 0
    figs = overlays.figures()
    assert list(figs) == kinds
    for kind, (fig, names, _title) in figs.items():
        assert names == ["a", "b"], kind
        labels = [
            t.get_text()
            for leg in [*(ax.get_legend() for ax in fig.axes), *fig.legends]  # PIT, UCC: below the axes
            if leg
            for t in leg.get_texts()
        ]
        assert any(t.startswith("a") for t in labels) and any(t.startswith("b") for t in labels), (
            kind,
            labels,
        )


def test_classifier_reliability_has_an_overlay_of_its_own():
    """A classifier's reliability diagram (accuracy against confidence) is overlaid with other classifiers',
    never on the regression reliability diagram, whose axes mean something else."""
    from uqeval.api.score import _plot_prediction
    from uqeval.plots.overlay import Overlays

    rng = np.random.default_rng(2)
    proba = rng.dirichlet(np.ones(3), size=200)
    cls, cls_settings = _plot_prediction(rng.integers(0, 3, 200), proba=proba)
    mu = rng.normal(size=200)
    reg, reg_settings = _plot_prediction(mu + rng.normal(size=200), mean=mu, std=np.ones(200))
    overlays = Overlays()
    for name, (pred, settings) in {
        "a": (cls, cls_settings),
        "r": (reg, reg_settings),
        "b": (cls, cls_settings),
    }.items():
        drawn, alone = overlays.add(pred, None, settings, name, kinds=["reliability"])
        assert drawn == ["reliability"] and not alone.figures
    figures = overlays.figures()
    assert figures["reliability/classifiers"][1] == ["a", "b"]
    assert figures["reliability"][1] == ["r"]


def test_a_kind_that_cannot_be_drawn_is_a_note():
    from uqeval.api.score import _plot_prediction
    from uqeval.plots.overlay import Overlays

    pred, settings = _plot_prediction(np.zeros(50), mean=np.zeros(50))  # point predictions: no UCC band
    drawn, alone = Overlays().add(pred, None, settings, "p", kinds=["ucc"])
    assert drawn == [] and alone.ucc is None and alone.notes and alone.notes[0].startswith("UCC skipped:")


def test_render_is_deterministic_with_overlays():
    from uqeval.plots.common import figure_to_bytes
    from uqeval.plots.regression import plot_sharpness

    png = figure_to_bytes(plot_sharpness(np.linspace(0.5, 1.5, 50)), dpi=40)
    entries = [entry("a"), entry("b")]
    overlays = [{"title": "Sharpness", "models": ["a", "b"], "image": png}]
    assert render_report(entries, overlays=overlays, comparison=COMPARISON) == render_report(
        copy.deepcopy(entries), overlays=copy.deepcopy(overlays), comparison=copy.deepcopy(COMPARISON)
    )


def test_a_model_has_one_colour_in_every_overlay():
    from matplotlib.colors import to_hex

    from uqeval.api.score import _plot_prediction
    from uqeval.plots.overlay import Overlays

    rng = np.random.default_rng(3)
    n = 200
    y = rng.normal(size=n)
    overlays = Overlays()
    point, settings = _plot_prediction(y, mean=np.zeros(n))  # draws on no overlay: takes no colour
    assert overlays.add(point, None, settings, "point")[0] == []
    for name, sd in (("a", 1.0), ("b", 2.0)):
        pred, settings = _plot_prediction(y, mean=np.zeros(n), std=np.full(n, sd))
        overlays.add(pred, None, settings, name)
    figs = overlays.figures()
    for name in ("a", "b"):
        colours = {
            kind: {
                to_hex(line.get_color())
                for line in fig.axes[0].get_lines()
                if line.get_label().startswith(name)
            }
            for kind, (fig, _, _) in figs.items()
            if kind in ("calibration", "reliability", "ucc")
        }
        assert len(set.union(*colours.values())) == 1, (name, colours)


def test_quantile_calibration_gets_an_overlay_of_its_own():
    from scipy.stats import norm

    from uqeval.api.score import _plot_prediction
    from uqeval.plots.overlay import Overlays

    rng = np.random.default_rng(4)
    n = 300
    y = rng.normal(size=n)
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    overlays = Overlays()
    gauss, settings = _plot_prediction(y, mean=np.zeros(n), std=np.ones(n))
    overlays.add(gauss, None, settings, "g")
    quant, settings = _plot_prediction(y, quantiles=np.tile(norm.ppf(levels), (n, 1)), levels=levels)
    overlays.add(quant, None, settings, "q")
    figs = overlays.figures()
    assert figs["calibration"][1] == ["g"] and figs["calibration/quantile levels"][1] == ["q"]
    assert figs["pit"][1] == ["g"] and figs["pit/quantile levels"][1] == ["q"]
    assert figs["ucc"][1] == ["g", "q"]  # the same axes for every band
    title = figs["calibration/quantile levels"][2]
    assert (
        title
        == "Average calibration (quantile levels)"
        == figs["calibration/quantile levels"][0].axes[0].get_title()
    )
    assert (
        list(figs).index("calibration")
        < list(figs).index("calibration/quantile levels")
        < list(figs).index("pit")
    )
