"""The pure core of ``uqeval compare``: alignment, per-row scores, metric names, bootstrap, ranks, tests."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.special import ndtri

from uqeval.commands.compare import core as C
from uqeval.config import Settings
from uqeval.errors import InputError, UsageError
from uqeval.predictions import Categorical, Gaussian, Intervals, Point, Quantiles, Samples
from uqeval.report.compare import to_markdown

# these tests call the core directly and check the flags its messages name
pytestmark = pytest.mark.usefixtures("cli_voice")


def gaussian(y, mean, std, name="g", rows=None) -> C.Model:
    return C.Model(
        name,
        Gaussian(
            y_true=np.asarray(y, float),
            columns={},
            rows=rows,
            mean=np.asarray(mean, float),
            std=np.asarray(std, float),
        ),
        {"path": f"{name}.parquet"},
    )


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    n = 400
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    y = mean + std * rng.normal(size=n)
    return y, mean, std


@pytest.fixture
def two(data):
    y, mean, std = data
    return [gaussian(y, mean, std, "good"), gaussian(y, mean, 2.5 * std, "wide")]


def run(models, metrics=None, **kw):
    kw.setdefault("n_boot", 200)
    kw.setdefault("n_permutations", 500)
    fields = {f.name for f in dataclasses.fields(C.CompareOptions)}
    options = C.CompareOptions(metrics, **{k: kw.pop(k) for k in list(kw) if k in fields})
    return C.compare_models(models, Settings(), options, **kw)


# --------------------------------------------------------------------------- alignment


def test_align_same_order_passes_and_differing_target_names_the_first_row(data):
    y, mean, std = data
    a = gaussian(y, mean, std, "a")
    out = C.align_models([a, gaussian(y.copy(), mean, std, "b")])
    assert [m.name for m in out] == ["a", "b"]
    y2 = y.copy()
    y2[[17, 30]] += 1e-6
    with pytest.raises(
        InputError, match=r"targets differ between a.parquet and b.parquet: 2 row\(s\), first at row 17"
    ):
        C.align_models([a, gaussian(y2, mean, std, "b")])


def test_align_tolerates_1e_12_only(data):
    y, mean, std = data
    a = gaussian(y, mean, std, "a")
    C.align_models([a, gaussian(y * (1 + 1e-13), mean, std, "b")])
    with pytest.raises(InputError, match="targets differ"):
        C.align_models([a, gaussian(y + 1e-9 * np.maximum(1, np.abs(y)), mean, std, "b")])


def test_align_length_mismatch_suggests_id(data):
    y, mean, std = data
    with pytest.raises(InputError, match=r"has 399 rows but a.parquet has 400.*--id"):
        C.align_models([gaussian(y, mean, std, "a"), gaussian(y[1:], mean[1:], std[1:], "b")])


def test_align_by_id_reorders_rows(data):
    y, mean, std = data
    n = y.size
    ids = np.array([f"r{i}" for i in range(n)], dtype=object)
    perm = np.random.default_rng(2).permutation(n)
    a = gaussian(y, mean, std, "a")
    b = gaussian(y[perm], mean[perm], 2 * std[perm], "b")
    out = C.align_models([a, b], [ids, ids[perm]], id_column="id")
    np.testing.assert_array_equal(out[1].prediction.y_true, y)
    np.testing.assert_array_equal(out[1].prediction.std, 2 * std)
    # integral floats join with ints
    out = C.align_models([a, b], [np.arange(n), np.arange(n, dtype=float)[perm]], id_column="id")
    np.testing.assert_array_equal(out[1].prediction.mean, mean)


def test_align_by_id_errors(data):
    y, mean, std = data
    n = y.size
    a, b = gaussian(y, mean, std, "a"), gaussian(y, mean, std, "b")
    ids = np.arange(n)
    dup = ids.copy()
    dup[5] = 3
    with pytest.raises(InputError, match=r"b.parquet: id '3' of column 'key' occurs more than once"):
        C.align_models([a, b], [ids, dup], id_column="key")
    other = ids.copy()
    other[7] = 10_000
    with pytest.raises(InputError, match=r"id '7' \(row 7 of a.parquet\) is not in b.parquet"):
        C.align_models([a, b], [ids, other], id_column="key")
    with pytest.raises(InputError, match="targets differ.*id '0'"):
        C.align_models([a, gaussian(y + 1, mean, std, "b")], [ids, ids], id_column="key")


def test_model_names_are_unique():
    assert C.model_names(["x/a.parquet", "y/b.csv"]) == ["a", "b"]
    assert C.model_names(["x/a.parquet", "y/a.parquet"]) == ["x/a.parquet", "y/a.parquet"]
    assert C.model_names(["a.csv", "a.csv"]) == ["a.csv", "a.csv#2"]
    assert C.model_names(["a.csv", "b.csv"], ["m1", "m2"]) == ["m1", "m2"]
    with pytest.raises(UsageError, match="one per file"):  # --names is a flag: a usage error (exit 2)
        C.model_names(["a.csv", "b.csv"], ["m1"])
    with pytest.raises(UsageError, match="distinct"):
        C.model_names(["a.csv", "b.csv"], ["m", "m"])


# --------------------------------------------------------------------------- per-row scores


def test_gaussian_per_row_means_equal_the_catalogue_scoring_rules(data):
    from uqeval.metrics.scoring import scoring_rules_gaussian

    y, mean, std = data
    m = gaussian(y, mean, std)
    grids = C.common_grids([m, m], resolution=99)
    rows = C.per_row_scores(m.prediction, grids)
    ref = scoring_rules_gaussian(y, mean, std, resolution=99)
    assert set(rows) == {"crps", "nll", "pinball", "interval", "check"}
    for key in ("crps", "nll", "check", "interval"):
        assert rows[key].shape == (y.size,)
        assert np.mean(rows[key]) == pytest.approx(ref[key], rel=1e-12)
    np.testing.assert_allclose(rows["pinball"], rows["check"], rtol=1e-12)


def test_gaussian_and_its_quantiles_score_alike_on_the_common_grid(data):
    y, mean, std = data
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    q = mean[:, None] + std[:, None] * ndtri(levels)[None, :]
    g = gaussian(y, mean, std, "g")
    qm = C.Model("q", Quantiles(y_true=y, quantiles=q, levels=levels))
    grids = C.common_grids([g, qm])
    np.testing.assert_allclose(grids.quantile_levels, levels)
    np.testing.assert_allclose(grids.central_levels, [0.5, 0.9])
    assert grids.notes == ()
    r = run([g, qm], ["pinball", "interval"])
    for metric in ("pinball", "interval"):
        v = r["metrics"][metric]["values"]
        assert v["g"]["estimate"] == pytest.approx(v["q"]["estimate"], rel=1e-12)
        assert v["g"]["rank"] == v["q"]["rank"] == 1.5  # equal up to rounding: a tie
    for t in r["tests"]:
        assert t["permutation_p"] == 1.0 and t["dm_p"] == 1.0


def test_disjoint_quantile_levels_make_pinball_unavailable(data):
    y, mean, std = data
    q1 = Quantiles(y_true=y, quantiles=np.column_stack([mean - 1, mean + 1]), levels=[0.1, 0.9])
    q2 = Quantiles(y_true=y, quantiles=np.column_stack([mean - 2, mean + 2]), levels=[0.05, 0.95])
    grids = C.common_grids([C.Model("a", q1), C.Model("b", q2)])
    assert grids.quantile_levels is None and grids.central_levels is None
    assert any("share no level" in n for n in grids.notes)
    r = run([C.Model("a", q1), C.Model("b", q2)], None, n_boot=0)
    assert "pinball" not in r["metrics"] and "interval" not in r["metrics"]
    with pytest.raises(InputError, match=r"'pinball' cannot be compared: pinball: the models share no level"):
        run([C.Model("a", q1), C.Model("b", q2)], ["pinball"])


def test_point_crps_is_the_absolute_error_and_samples_crps_the_ensemble_crps(data):
    from uqeval.metrics.samples import crps_ensemble

    y, mean, std = data
    s = mean[:, None] + std[:, None] * np.random.default_rng(3).standard_normal((y.size, 8))
    grids = C.common_grids([C.Model("p", Point(y_true=y, mean=mean))])
    np.testing.assert_allclose(C.per_row_scores(Point(y_true=y, mean=mean), grids)["crps"], np.abs(y - mean))
    rows = C.per_row_scores(Samples(y_true=y, samples=s), grids, ["crps", "nll"])
    assert set(rows) == {"crps"}
    np.testing.assert_allclose(rows["crps"], crps_ensemble(y, s))


def test_categorical_nll_and_brier_match_classification_accuracy():
    from uqeval.metrics.classification import classification_accuracy

    rng = np.random.default_rng(4)
    p = rng.dirichlet(np.ones(3), size=200)
    labels = rng.integers(0, 3, 200).astype(float)
    pred = Categorical(y_true=labels, proba=p)
    rows = C.per_row_scores(pred, C.common_grids([C.Model("c", pred)]))
    ref = classification_accuracy(p, labels.astype(int))
    assert set(rows) == {"nll", "brier"}
    assert rows["nll"].mean() == pytest.approx(ref["nll"], rel=1e-12)
    assert rows["brier"].mean() == pytest.approx(ref["brier"], rel=1e-12)


# --------------------------------------------------------------------------- metric names


def test_metric_names_short_full_and_alias(two):
    r = run(two, ["ma_cal", "accuracy.mae", "scoring_rule.crps", "crps"], n_boot=0, n_permutations=0)
    assert list(r["metrics"]) == ["avg_calibration.ma_cal", "accuracy.mae", "crps"]
    assert r["metrics"]["crps"]["source"] == "per_row"
    assert r["metrics"]["avg_calibration.ma_cal"]["source"] == "summary"


def test_unknown_metric_lists_close_matches(two):
    with pytest.raises(InputError, match=r"unknown metric 'ma_call'.*close matches: .*ma_cal"):
        run(two, ["ma_call"])
    with pytest.raises(InputError, match=r"unknown metric 'avg_calibration.mae'.*accuracy.mae"):
        run(two, ["avg_calibration.mae"])


def test_ambiguous_metric_name_is_an_error(two, monkeypatch):
    from uqeval import catalogue

    fake = catalogue.Metric("other", "ma_cal", "lower", "", representations=("gaussian",))
    monkeypatch.setitem(catalogue.METRICS, fake.path, fake)
    with pytest.raises(
        InputError, match=r"'ma_cal' is ambiguous; give one of: avg_calibration.ma_cal, other.ma_cal"
    ):
        run(two, ["ma_cal"])


def test_metric_of_another_representation_is_an_error(data):
    y, mean, std = data
    iv = Intervals(y_true=y, lower=mean - 2 * std, upper=mean + 2 * std, levels=[0.95])
    models = [C.Model("a", iv), C.Model("b", iv)]
    with pytest.raises(
        InputError,
        match=r"'ma_cal' \(avg_calibration.ma_cal\) is computed for .*gaussian.* not for intervals",
    ):
        run(models, ["ma_cal"])
    with pytest.raises(InputError, match="'nll' is not defined for representation"):
        run(models, ["nll"])


# --------------------------------------------------------------------------- bootstrap


def _resampler(pred, ref, settings):
    """The catalogue's resampler of a summary metric, taking resampled row indices (None where it has
    no per-row form): the indices become row weights (row i counted as often as it was drawn)."""
    from uqeval.catalogue import METRICS, rows

    stat = rows(METRICS[f"{ref.group}.{ref.keys[-1]}"], pred, settings, ref.level)
    if stat is None:
        return None
    fn = stat.resampler()
    return lambda idx: fn(np.stack([np.bincount(i, minlength=idx.shape[1]) for i in idx]).astype(np.float64))


def test_calibration_resampler_matches_a_slow_reference(data):
    from uqeval.metrics.calibration import avg_calibration_gaussian

    y, mean, std = data
    pred = gaussian(y, mean, std).prediction
    idx = np.random.default_rng(5).integers(0, y.size, size=(6, y.size))
    for key in ("ma_cal", "rms_cal", "miscal_area"):
        fn = _resampler(
            pred,
            C.MetricRef(f"avg_calibration.{key}", "summary", "lower", "avg_calibration", (key,)),
            Settings(num_bins=40),
        )
        fast = fn(idx)
        slow = [avg_calibration_gaussian(y[i], mean[i], std[i], num_bins=40)[key] for i in idx]
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-15)


def test_accuracy_resamplers_match_a_slow_reference(data):
    from uqeval.metrics.accuracy import regression_accuracy

    y, mean, std = data
    pred = gaussian(y, mean, std).prediction
    idx = np.random.default_rng(6).integers(0, y.size, size=(5, y.size))
    for key in ("mae", "rmse", "mdae", "marpd", "r2", "corr"):
        fn = _resampler(
            pred, C.MetricRef(f"accuracy.{key}", "summary", "lower", "accuracy", (key,)), Settings()
        )
        slow = [regression_accuracy(y[i], mean[i])[key] for i in idx]
        np.testing.assert_allclose(fn(idx), slow, rtol=1e-10)


def test_every_gaussian_resampler_reproduces_the_catalogue_value(two):
    names = [
        "accuracy.mae",
        "accuracy.rmse",
        "accuracy.mdae",
        "accuracy.marpd",
        "accuracy.r2",
        "accuracy.corr",
        "avg_calibration.ma_cal",
        "avg_calibration.rms_cal",
        "avg_calibration.miscal_area",
        "sharpness.sharp",
        "sharpness.mean_std",
    ]
    r = run(two, names, n_permutations=0)
    for name in names:
        body = r["metrics"][name]
        assert body["bootstrap"], (name, r["notes"])
        for v in body["values"].values():
            assert v["low"] <= v["high"], name
            if name.startswith(("accuracy.mae", "accuracy.rmse", "sharpness")):  # nearly unbiased statistics
                assert v["low"] <= v["estimate"] <= v["high"], name
    assert not any("without a bootstrap interval" in n for n in r["notes"])


def test_an_estimate_outside_its_interval_is_noted():
    # residuals at the exact normal quantiles: ma_cal is ~0 and grows on every resample
    n = 400
    z = ndtri((np.arange(n) + 0.5) / n)
    mean, std = np.zeros(n), np.ones(n)
    r = run([gaussian(z, mean, std, "exact"), gaussian(z, mean, 3 * std, "wide")], ["ma_cal"])
    v = r["metrics"]["avg_calibration.ma_cal"]["values"]
    assert v["exact"]["low"] > v["exact"]["estimate"]
    assert v["wide"]["low"] <= v["wide"]["estimate"] <= v["wide"]["high"]
    assert any(n.startswith("avg_calibration.ma_cal: the estimate of exact lies outside") for n in r["notes"])


def test_metric_without_a_cheap_resampler_is_reported_without_ci(two):
    r = run(two, ["reliability.rs", "crps"])
    body = r["metrics"]["reliability.rs"]
    assert not body["bootstrap"]
    assert all(math.isnan(v["low"]) and not math.isnan(v["estimate"]) for v in body["values"].values())
    assert any(n.startswith("reliability.rs: reported without a bootstrap interval") for n in r["notes"])
    assert r["metrics"]["crps"]["bootstrap"]


def test_bootstrap_is_seeded_and_paired(two):
    a = run(two, ["crps", "ma_cal"], seed=3)
    b = run(two, ["crps", "ma_cal"], seed=3)
    c = run(two, ["crps", "ma_cal"], seed=4)
    assert a["metrics"] == b["metrics"]
    assert a["metrics"]["crps"]["values"]["good"]["low"] != c["metrics"]["crps"]["values"]["good"]["low"]
    # the difference to the best model is resampled on the same rows: its interval is
    # narrower than the difference of the two marginal intervals would suggest
    wide = a["metrics"]["crps"]["values"]["wide"]
    good = a["metrics"]["crps"]["values"]["good"]
    d = wide["diff_vs_best"]
    assert d["reference"] == "good"
    assert d["estimate"] == pytest.approx(wide["estimate"] - good["estimate"])
    assert d["low"] > 0
    assert d["high"] - d["low"] < (wide["high"] - wide["low"]) + (good["high"] - good["low"])


def test_bootstrap_interval_of_mean_crps_covers_the_truth_at_about_the_nominal_rate():
    # ideal forecast N(0, 1) for y ~ N(0, 1): E[CRPS] = 1 / sqrt(pi)
    truth = 1.0 / math.sqrt(math.pi)
    rng = np.random.default_rng(7)
    reps, n, hits = 200, 150, 0
    for r in range(reps):
        y = rng.normal(size=n)
        m = gaussian(y, np.zeros(n), np.ones(n), "ideal")
        res = C.compare_models(
            [m, C.Model("copy", m.prediction)],
            Settings(),
            C.CompareOptions(["crps"], n_boot=300, seed=r, n_permutations=0),
        )
        v = res["metrics"]["crps"]["values"]["ideal"]
        hits += v["low"] <= truth <= v["high"]
    assert 0.88 <= hits / reps <= 0.99


# --------------------------------------------------------------------------- ranks and tests


def test_ranks_p_best_and_tests_against_the_best(two):
    r = run(two, ["crps", "nll", "sharpness.sharp"])
    assert r["metrics"]["crps"]["best"] == ["good"]
    assert r["metrics"]["crps"]["values"]["good"]["rank"] == 1.0
    assert r["metrics"]["crps"]["values"]["wide"]["rank"] == 2.0
    assert r["metrics"]["sharpness.sharp"]["best"] == ["good"]
    p = [v["p_best"] for v in r["metrics"]["crps"]["values"].values()]
    assert sum(p) == pytest.approx(1.0) and p[0] > 0.99
    assert r["ranks"]["mean_rank"] == {"good": 1.0, "wide": 2.0}
    tests = r["tests"]
    assert [(t["metric"], t["model"], t["reference"]) for t in tests] == [
        ("crps", "wide", "good"),
        ("nll", "wide", "good"),
    ]
    for t in tests:
        assert t["mean_diff"] > 0 and t["permutation_p"] < 0.01 and t["dm_p"] < 0.01 and t["dm_statistic"] > 0


def test_all_pairs(data):
    y, mean, std = data
    models = [gaussian(y, mean, s * std, f"m{i}") for i, s in enumerate((1.0, 1.5, 2.0))]
    r = run(models, ["crps"], pairs="all")
    assert [(t["model"], t["reference"]) for t in r["tests"]] == [("m0", "m1"), ("m0", "m2"), ("m1", "m2")]
    assert all(t["mean_diff"] < 0 for t in r["tests"])


def test_identical_models_tie(two):
    m = two[0]
    r = run([m, C.Model("same", m.prediction)], ["crps", "ma_cal"])
    for body in r["metrics"].values():
        assert [v["rank"] for v in body["values"].values()] == [1.5, 1.5]
        assert [v["p_best"] for v in body["values"].values()] == [0.5, 0.5]
    assert r["tests"][0]["permutation_p"] == 1.0 and r["tests"][0]["dm_p"] == 1.0


def test_target_orientation_ranks_by_distance_to_the_target(two, monkeypatch):
    from uqeval import catalogue

    cov = {"good": 0.94, "wide": 0.999}

    def compute(pred, s):
        key = "good" if np.allclose(pred.std.mean(), 1.0, atol=0.2) else "wide"
        return {"0.95": {"coverage": cov[key]}}

    metric = catalogue.Metric(
        "coverage", "coverage", "target", "", representations=("gaussian",), by_level=True, target="level"
    )
    fake = catalogue.Family("coverage", (metric,), {"gaussian": compute}, by_level=True)
    monkeypatch.setattr(
        catalogue, "FAMILIES", tuple(f for f in catalogue.FAMILIES if f.name != "coverage") + (fake,)
    )
    monkeypatch.setattr(
        catalogue,
        "METRICS",
        {k: v for k, v in catalogue.METRICS.items() if v.group != "coverage"} | {metric.path: metric},
    )
    r = run(two, ["coverage"], n_boot=0)
    body = r["metrics"]["coverage.0.95.coverage"]
    assert body["orientation"] == "target" and body["target"] == 0.95
    assert body["best"] == ["good"]


def test_invalid_options(two):
    with pytest.raises(InputError, match="bootstrap"):
        run(two, ["crps"], n_boot=-1)
    with pytest.raises(InputError, match="pairs"):
        run(two, ["crps"], pairs="some")
    with pytest.raises(InputError, match="confidence level"):
        run(two, ["crps"], ci_level=1.5)
    with pytest.raises(InputError, match="at least 2"):
        run(two[:1], ["crps"])


def test_no_bootstrap(two):
    r = run(two, ["crps"], n_boot=0, n_permutations=0)
    v = r["metrics"]["crps"]["values"]["good"]
    assert math.isnan(v["low"]) and not r["metrics"]["crps"]["bootstrap"]
    assert math.isnan(r["tests"][0]["permutation_p"]) and r["tests"][0]["dm_p"] < 0.05


# --------------------------------------------------------------------------- rendering and plot


def test_markdown_has_every_model_metric_and_test(two):
    r = run(two, ["crps", "ma_cal"])
    md = to_markdown(r)
    assert "| `crps` | lower is better |" in md and "`good`" in md and "`wide`" in md
    assert "(#1)" in md and "Paired tests" in md and "| mean rank |" in md


def test_figure_has_one_panel_per_metric_and_encodes_to_png(two):
    from matplotlib.figure import Figure

    from uqeval.io.writers import jsonable
    from uqeval.plots.common import figure_to_bytes
    from uqeval.plots.compare import compare_figure

    r = run(two, ["crps", "nll", "ma_cal", "reliability.rs"])
    fig = compare_figure(jsonable(r))  # the JSON form (NaN -> None) works too
    assert isinstance(fig, Figure)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["crps", "nll", "avg_calibration.ma_cal", "reliability.rs"]
    assert [t.get_text() for t in visible[0].get_yticklabels()] == ["good", "wide"]
    assert figure_to_bytes(fig, "png").startswith(b"\x89PNG\r\n\x1a\n")


# --------------------------------------------------------------------------- resamplers vs recomputation


@pytest.fixture(scope="module")
def sample_models():
    from uqeval.io.load import load_predictions

    from .conftest import SAMPLE

    s = Settings(num_bins=20)
    models = []
    for f in ("gaussian", "quantiles", "samples", "intervals"):
        loaded = load_predictions(SAMPLE / f"{f}.parquet", s)
        sub = loaded.prediction.subset(np.arange(300))
        models.append(C.Model(f, sub, loaded.info))
    return models, s


SUMMARY_METRICS = [
    "ma_cal",
    "rms_cal",
    "miscal_area",
    "coverage",
    "width",
    "coverage_error",
    "miss_below",
    "miss_above",
    "mae",
    "rmse",
    "mdae",
    "marpd",
    "r2",
    "corr",
    "sharp",
    "mean_std",
    "scoring_rule.interval",
    "scoring_rule.crps_fair",
    "scoring_rule.wis",
    "scoring_rule.pinball",
]


def test_every_resampler_equals_the_catalogue_recomputed_on_the_resampled_rows(sample_models):
    from uqeval.catalogue import get_family

    models, settings = sample_models
    results = C.Results(models, settings)
    refs, _ = C.resolve_metrics(SUMMARY_METRICS, models, results)
    idx = np.random.default_rng(9).integers(0, 300, size=(3, 300))
    checked = set()
    for ref in refs:
        for k, m in enumerate(models):
            fn = _resampler(m.prediction, ref, settings)
            if fn is None or C.value_at(results.get(k, ref.group), ref.keys) is None:
                continue
            fast = fn(idx)
            group = get_family(ref.group)
            for b in range(idx.shape[0]):
                slow = C.value_at(group.compute[m.kind](m.prediction.subset(idx[b]), settings), ref.keys)
                assert fast[b] == pytest.approx(slow, rel=1e-9, abs=1e-12), (ref.name, m.kind)
            checked.add((ref.group, m.kind))
    assert {("avg_calibration", k) for k in ("gaussian", "samples", "quantiles")} <= checked
    assert {("coverage", k) for k in ("gaussian", "samples", "quantiles", "intervals")} <= checked
    assert {("scoring_rule", k) for k in ("gaussian", "samples", "quantiles", "intervals")} <= checked
    assert {("accuracy", "gaussian"), ("sharpness", "samples")} <= checked


def test_every_sample_file_metric_gets_an_interval(sample_models):
    models, settings = sample_models
    r = C.compare_models(models, settings, C.CompareOptions(SUMMARY_METRICS, n_boot=50, n_permutations=0))
    assert not any("does not reproduce" in n or "without a bootstrap" in n for n in r["notes"]), r["notes"]
    for name, body in r["metrics"].items():
        assert body["bootstrap"], name
    # miss_below is best at half the miss rate, (1 - level) / 2
    assert r["metrics"]["coverage.0.95.miss_below"]["target"] == pytest.approx(0.025)


def test_classification_metrics_and_resamplers():
    from uqeval.metrics.classification import classification_accuracy

    rng = np.random.default_rng(10)
    p = rng.dirichlet(np.ones(4), size=300)
    labels = np.array([rng.choice(4, p=row) for row in p], dtype=float)
    sharp = C.Model("sharp", Categorical(y_true=labels, proba=p))
    flat = C.Model("flat", Categorical(y_true=labels, proba=0.5 * p + 0.125))
    r = run([sharp, flat], ["nll", "brier", "accuracy.accuracy", "accuracy.brier_um", "ece"])
    ref = classification_accuracy(p, labels.astype(int))
    v = r["metrics"]
    assert v["nll"]["values"]["sharp"]["estimate"] == pytest.approx(ref["nll"], rel=1e-12)
    assert v["accuracy.brier_um"]["values"]["sharp"]["estimate"] == pytest.approx(ref["brier_um"], rel=1e-12)
    assert v["accuracy.accuracy"]["bootstrap"] and v["accuracy.brier_um"]["bootstrap"]
    assert not v["calibration.ece"]["bootstrap"]
    assert v["nll"]["best"] == ["sharp"] and v["brier"]["best"] == ["sharp"]


# --------------------------------------------------------------------------- scores made block by block (issue 18)

EVERY_FILE = [
    "gaussian.parquet",
    "gaussian.csv",
    "point.csv",
    "intervals.parquet",
    "intervals_multi.csv",
    "quantiles.parquet",
    "samples.parquet",
    "samples_list.parquet",
    "classification.parquet",
    "ensemble_classification.parquet",
    "dirichlet.parquet",
    "loglik.parquet",
    "multivariate.parquet",
]


@pytest.mark.parametrize("name", EVERY_FILE)
def test_comparison_scores_of_row_blocks_are_the_rows_of_the_whole_score(name):
    """compare makes each comparison score block by block from ``Prediction.subset(slice)`` in every pass:
    the blocks, joined, must be the score of the whole prediction bit for bit (a score that depended on
    other rows would break the bootstrap and the tests), and availability on the first rows must be
    availability on all."""
    from uqeval.io.load import load_predictions

    from .conftest import SAMPLE

    settings = Settings()
    pred = load_predictions(SAMPLE / name, settings).prediction
    grids = C.common_grids([C.Model("m", pred)], settings.resolution)
    results = C.Results([C.Model("m", pred)], settings, grids)
    n = pred.n
    cuts = sorted({0, 2, 37, n // 2, n - 2, n})  # no block of one row: see compare.resampling.spans
    seen = 0
    for score in C.PER_ROW_SCORES:
        whole = C.comparison_score(pred, score, grids, settings)
        assert results.has_score(0, score) == (whole is not None), score
        if whole is None:
            continue
        seen += 1
        parts = [
            C.comparison_score(pred.subset(slice(a, b)), score, grids, settings)
            for a, b in zip(cuts, cuts[1:])
        ]
        np.testing.assert_array_equal(np.concatenate(parts), whole, err_msg=score)
    assert seen or name in ("loglik.parquet", "multivariate.parquet")  # compared by summary metrics only


def test_compare_estimates_and_tests_equal_the_whole_score_arrays(data):
    """The estimates are np.mean of each whole per-row score and mean_diff np.mean of the paired
    differences, bit for bit (PairwiseSum adds the blocks in numpy's order); the Diebold--Mariano
    statistic is diebold_mariano on the whole arrays up to rounding (moments merged over blocks)."""
    from uqeval.metrics.comparison import diebold_mariano

    rng = np.random.default_rng(3)
    n = (
        2 * C.BLOCK_ROWS + 1
    )  # two blocks of the test pass, the last row joining the second (compare.resampling.spans)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    y = mean + std * rng.normal(size=n)
    models = [
        gaussian(y, mean, std, "a"),
        gaussian(y, mean + 0.01, 1.1 * std, "b"),
        gaussian(y, mean, 0.9 * std, "c"),
    ]
    grids = C.common_grids(models)
    for dm_lag in (0, 2):
        r = C.compare_models(
            models,
            Settings(),
            C.CompareOptions(
                ["crps", "nll", "interval"], n_boot=0, n_permutations=9, dm_lag=dm_lag, pairs="all"
            ),
        )
        whole = {
            (m.name, s): C.comparison_score(m.prediction, s, grids, Settings())
            for m in models
            for s in ("crps", "nll", "interval")
        }
        for (model, score), rows in whole.items():
            assert r["metrics"][score]["values"][model]["estimate"] == float(np.mean(rows))
        assert len(r["tests"]) == 9
        for t in r["tests"]:
            a, b = whole[(t["model"], t["metric"])], whole[(t["reference"], t["metric"])]
            assert t["mean_diff"] == float(np.mean(a - C.without_rounding_noise(a, b)))
            want = diebold_mariano(a, C.without_rounding_noise(a, b), lag=dm_lag)
            assert t["dm_statistic"] == pytest.approx(want["statistic"], rel=1e-10)
            assert t["dm_p"] == pytest.approx(want["p_value"], rel=1e-8, abs=1e-300)
