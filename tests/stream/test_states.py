"""Mergeable states (uqeval.catalogue.states): any chunking, any merge order gives the in-memory result.

Reference: the in-memory catalogue (``uqeval.catalogue.compute_metrics``), the code path every
other test checks against the reference libraries. Exact metrics must agree to 1e-12 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

from uqeval.catalogue import compute_metrics, states
from uqeval.catalogue.paths import flatten
from uqeval.commands.ucc.stream import UCC_TABLE
from uqeval.config import Settings
from uqeval.io.load import load_predictions

from ..conftest import SAMPLE

FILES = [
    "gaussian.parquet",
    "point.csv",
    "intervals_multi.csv",
    "quantiles.parquet",
    "samples.parquet",
    "classification.parquet",
    "ensemble_classification.parquet",
    "dirichlet.parquet",
    "loglik.parquet",
]


def assert_same(
    got: dict,
    ref: dict,
    skipped: dict[str, str],
    approx: dict[str, str] | None = None,
    bounds: dict[str, float] | None = None,
) -> None:
    """Every streamed value equals the in-memory one (1e-12 relative; the approximate ones within their stated
    bound: 1/(2 * PIT_BINS) for max_cal_err, the data-dependent ``bounds`` for rs and accrue); exactly the
    not-streamed ones are missing."""
    fg, fr = dict(flatten(got)), dict(flatten(ref))
    assert fg, "nothing streamed"
    for path, value in fg.items():
        assert path in fr, path
        a = np.asarray(value, dtype=float)
        b = np.asarray(fr[path], dtype=float)
        assert a.shape == b.shape, path
        if path in (approx or {}):
            bound = 0.5 / states.PIT_BINS if path == "reliability.max_cal_err" else bounds[path]
            assert abs(float(a) - float(b)) <= bound * (1 + 1e-9) + 1e-12, (path, float(a), float(b), bound)
            continue
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, equal_nan=True, err_msg=path)
    for path in set(fr) - set(fg):
        group, *_, name = path.split(".")
        assert f"{group}.{name}" in skipped, f"{path} missing but not declared as not streamed"


def _chunks(pred, size):
    return [pred.subset(np.arange(start, min(start + size, pred.n))) for start in range(0, pred.n, size)]


def _chunked(pred, settings, size):
    st = states.init()
    for chunk in _chunks(pred, size):
        st = states.update(st, chunk, settings)
    return st


def _finalize_two_pass(st, pred, settings, size, bounds=None):
    """finalize() after the second pass (exact MdAE) over the same chunks."""
    sel = states.selection(st)
    second = None
    for chunk in _chunks(pred, size) if sel else ():
        second = states.merge_second(second, states.second_state(sel, chunk, settings), pred.kind)
    return states.finalize(st, settings, sel, second, bounds)


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("size", [7, 100_000])
def test_chunked_states_equal_in_memory(name, size):
    settings = Settings(levels=(0.5, 0.9)) if name in ("gaussian.parquet", "samples.parquet") else Settings()
    pred = load_predictions(SAMPLE / name, settings, require_targets=name != "loglik.parquet").prediction
    ref, orient_ref = compute_metrics(pred, settings)
    st = _chunked(pred, settings, size)
    bounds: dict[str, float] = {}
    got, orient = _finalize_two_pass(st, pred, settings, size, bounds)
    skipped = states.not_streamed_in(st, settings)
    assert_same(got, ref, skipped, states.approximate(pred.kind, settings), bounds)
    assert orient == {k: v for k, v in orient_ref.items() if k in orient}


def test_merge_order_and_tree_reduction_do_not_matter():
    settings = Settings()
    pred = load_predictions(SAMPLE / "gaussian.parquet", settings).prediction
    rng = np.random.default_rng(3)
    cuts = np.sort(rng.choice(np.arange(1, pred.n), size=15, replace=False))
    parts = [states.batch_state(pred.subset(idx), settings) for idx in np.split(np.arange(pred.n), cuts)]
    while len(parts) > 1:  # a tree reduce, pairs merged right to left
        parts = [
            states.merge(parts[i + 1], parts[i]) if i + 1 < len(parts) else parts[i]
            for i in range(0, len(parts), 2)
        ]
    bounds: dict[str, float] = {}
    got, _ = _finalize_two_pass(parts[0], pred, settings, 111, bounds)
    ref, _ = compute_metrics(pred, settings)
    assert_same(got, ref, states.not_streamed("gaussian", settings), states.approximate("gaussian"), bounds)
    # the adversarial curves come from the merged counts: the same draws as in memory, bit for bit
    assert got["adv_group_calibration"] == ref["adv_group_calibration"]


def test_moment_merge_is_stable_far_from_zero():
    """Chan's update keeps r2/corr exact where naive sums of squares lose every digit (targets near 1e8)."""
    from uqeval.predictions import Point

    rng = np.random.default_rng(0)
    y = 1e8 + rng.normal(size=5000)
    mean = y + 0.5 * rng.normal(size=5000)
    pred = Point(y_true=y, mean=mean, columns={"y_true": "y", "mean": "mean"})
    s = Settings()
    got, _ = _finalize_two_pass(_chunked(pred, s, 13), pred, s, 13)
    ref, _ = compute_metrics(pred, s)
    for k in ("rmse", "r2", "corr"):
        assert got["accuracy"][k] == pytest.approx(ref["accuracy"][k], rel=1e-9), k


def test_streamed_corr_keeps_huge_sums_and_memory_conventions():
    """The streamed r2 and corr are memory's formulas (:func:`uqeval.metrics.accuracy.r2_from_sums`,
    ``corr_from_sums``), so their conventions cannot drift apart: targets near 1e160 (centred sums of squares
    near 1e323 in their product) keep corr finite, where the streamed state's root of the product overflowed
    to inf and gave corr 0; constant targets give memory's r2 (1 or 0) and a NaN corr."""
    from uqeval.predictions import Point

    rng = np.random.default_rng(1)
    s = Settings()
    for scale in (1e150, 1.0):
        y = scale * rng.normal(size=3000)
        mean = y + 0.3 * scale * rng.normal(size=3000)
        pred = Point(y_true=y, mean=mean, columns={"y_true": "y", "mean": "mean"})
        got, _ = _finalize_two_pass(_chunked(pred, s, 7), pred, s, 7)
        ref, _ = compute_metrics(pred, s)
        assert 0.9 < ref["accuracy"]["corr"] < 1.0
        for k in ("r2", "corr"):
            assert got["accuracy"][k] == pytest.approx(ref["accuracy"][k], rel=1e-12), (scale, k)
    for mean in (np.full(50, 2.0), np.full(50, 3.0)):  # constant targets: exact (r2 = 1) or not (0)
        pred = Point(y_true=np.full(50, 2.0), mean=mean, columns={"y_true": "y", "mean": "mean"})
        got, _ = _finalize_two_pass(_chunked(pred, s, 3), pred, s, 3)
        ref, _ = compute_metrics(pred, s)
        assert got["accuracy"]["r2"] == ref["accuracy"]["r2"]
        assert np.isnan(got["accuracy"]["corr"]) and np.isnan(ref["accuracy"]["corr"])


@pytest.mark.parametrize("offset", [0.0, -1e4])
def test_information_criteria_se_are_one_state_weighted_or_not(offset):
    """information_criteria.*_se stream as one state, weighted or with unit weights (RowTermMoments: centred
    moments, Chan's pairwise merge, weighted as West 1979): chunked with or without weights they equal memory
    (1e-12 at realistic log-likelihoods; 1e-10 with every term near -1e4, where raw sums of w t^2 lose about
    eight digits), the weighted state at unit weights is the unweighted one, and both equal Kish's formula
    written out here (numpy.average, n_eff = (sum w)^2 / sum w^2; unit weights: numpy.std(ddof=1) / sqrt(N))."""
    from uqeval.catalogue import compute_weighted_metrics
    from uqeval.metrics.ensembles import IC_TERMS, information_criteria_rows
    from uqeval.predictions import LogLikelihood

    rng = np.random.default_rng(36)
    n = 3000
    loglik = offset + rng.normal(-1.0, 0.7, size=(n, 1)) + 0.3 * rng.normal(size=(n, 8))
    pred = LogLikelihood(y_true=None, loglik=loglik)
    w = rng.uniform(0.0, 3.0, n)
    w[::7] = 0.0
    s = Settings()
    t = information_criteria_rows(loglik)
    rel = 1e-12 if offset == 0.0 else 1e-10

    def kish(weights):
        keep = weights > 0
        out = {}
        for k in IC_TERMS:
            x, v = t[k][keep], weights[keep]
            var = np.average((x - np.average(x, weights=v)) ** 2, weights=v)
            out[f"{k}_se"] = np.sqrt(var / (v.sum() ** 2 / (v @ v) - 1.0))
        return out

    def streamed(weights, size):
        st = states.init()
        for start in range(0, n, size):
            idx = np.arange(start, min(start + size, n))
            part = states.batch_state(pred.subset(idx), s, weights=None if weights is None else weights[idx])
            st = states.merge(part, st) if start % 2 else states.merge(st, part)  # either order
        return states.finalize(st, s)[0]["information_criteria"]

    memory = compute_metrics(pred, s)[0]["information_criteria"]
    weighted = compute_weighted_metrics(pred, s, w)[0]["information_criteria"]
    ones = kish(np.ones(n))
    for k in IC_TERMS:
        assert ones[f"{k}_se"] == pytest.approx(np.std(t[k], ddof=1) / np.sqrt(n), rel=1e-12)
    for size in (13, 500):
        for got, want in (
            (streamed(None, size), memory),
            (streamed(np.ones(n), size), memory),
            (streamed(w, size), weighted),
        ):
            for k in IC_TERMS:
                assert got[f"{k}_se"] == pytest.approx(want[f"{k}_se"], rel=rel), (size, k)
    for k in IC_TERMS:
        assert memory[f"{k}_se"] == pytest.approx(ones[f"{k}_se"], rel=rel), k
        assert weighted[f"{k}_se"] == pytest.approx(kish(w)[f"{k}_se"], rel=rel), k


def test_every_metric_is_streamed_or_declared():
    """Each catalogue metric of each representation is streamed exactly or named with a reason."""
    from uqeval.catalogue import CLASSIFICATION, REGRESSION, metrics_for

    s = Settings(diagnostics=True)
    for kind in (*REGRESSION, *CLASSIFICATION):
        exact = set(states.streamed(kind, s))
        assert set(states.approximate(kind, s)) <= exact
        left = states.not_streamed(kind, s)
        assert not exact & set(left), kind
        from uqeval.catalogue import families_for

        enabled = {f.name for f in families_for(kind, s)}
        paths = {m.path for m in metrics_for(kind) if m.group in enabled}
        assert paths == exact | set(left), (kind, paths ^ (exact | set(left)))
        assert all(left.values())
    assert "accuracy.mdae" in states.two_pass("gaussian") and "accuracy.mdae" not in states.not_streamed(
        "gaussian"
    )
    assert {
        "accuracy.rmse",
        "accuracy.r2",
        "avg_calibration.rms_cal",
        "adv_group_calibration.ma_mean",
        "scoring_rule.crps",
    } <= set(states.streamed("gaussian"))
    assert {
        "calibration.ece",
        "calibration.mce",
        "calibration.sce",
        "brier_decomposition.reliability",
    } <= set(states.streamed("categorical"))


def test_docs_streaming_table_is_current():
    from ..conftest import ROOT

    text = (ROOT / "docs" / "guide" / "scaling.md").read_text(encoding="utf-8")
    start = text.index("<!-- streaming: generated by uqeval.catalogue.states.streaming_table(UCC_TABLE) -->")
    block = text[start : text.index("<!-- /streaming -->")]
    assert states.streaming_table(UCC_TABLE) in block, (
        "regenerate the table of docs/guide/scaling.md from uqeval.catalogue.states.streaming_table(UCC_TABLE)"
    )


@pytest.mark.parametrize("case", ["uniform", "miscalibrated", "ties", "edges", "tiny"])
def test_streamed_max_cal_err_is_within_its_stated_bound(case):
    """|histogram KS - exact KS| <= 1/(2B); exact: uqeval.metrics.reliability.max_calibration_error (sorted ECDF)."""
    from uqeval.metrics.reliability import max_calibration_error

    rng = np.random.default_rng(5)
    u = {
        "uniform": rng.uniform(size=20_000),
        "miscalibrated": rng.beta(2.0, 2.0, size=20_000),
        "ties": np.repeat(rng.uniform(size=50), 40),
        "edges": np.r_[np.zeros(30), np.ones(30), rng.uniform(size=100)],
        "tiny": np.array([0.3]),
    }[case]
    ks = states.PitKS()
    parts = [
        ks.update(type("P", (), {"pit": lambda self, x=x: x})(), None) for x in np.array_split(u, 7) if x.size
    ]
    st = parts[0]
    for other in parts[1:]:
        st = ks.merge(st, other)
    got = ks.finalize(st, None)["max_cal_err"]
    assert abs(got - max_calibration_error(u)) <= 0.5 / states.PIT_BINS + 1e-12


@pytest.mark.parametrize("n", [1, 2, 5, 1000, 1001])
def test_two_pass_median_is_exact_with_ties_and_zeros(n):
    """MdAE from the bit-pattern histogram + second pass equals numpy.median (reference) for ties and zeros."""
    from uqeval.predictions import Point

    rng = np.random.default_rng(n)
    y = np.round(rng.normal(size=n), 1)
    mean = np.where(rng.uniform(size=n) < 0.3, y, np.round(rng.normal(size=n), 1))  # exact zeros and ties
    pred = Point(y_true=y, mean=mean, columns={"y_true": "y", "mean": "mean"})
    s = Settings()
    got, _ = _finalize_two_pass(_chunked(pred, s, 3), pred, s, 3)
    assert got["accuracy"]["mdae"] == float(np.median(np.abs(y - mean)))


@pytest.mark.parametrize("case", ["calibrated", "overconfident", "ties", "two_rows"])
def test_streamed_rs_and_accrue_are_within_their_reported_bound(case):
    """RS/ACCRUE from code histograms vs uqeval.metrics.reliability (sorted, exact; itself checked against
    numerical integration in tests/metrics): the error stays within the bound the state reports."""
    from uqeval.metrics.reliability import reliability_gaussian
    from uqeval.predictions import Gaussian

    rng = np.random.default_rng(11)
    n = {"two_rows": 2}.get(case, 5000)
    mean = rng.normal(size=n)
    std = np.full(n, 0.4) if case == "overconfident" else rng.uniform(0.5, 2.0, n)
    y = mean + rng.uniform(0.5, 2.0, n) * rng.normal(size=n)
    if case == "ties":
        y = mean + np.round(rng.normal(size=n), 1) * std
    pred = Gaussian(y_true=y, mean=mean, std=std, columns={"y_true": "y", "mean": "mean", "std": "std"})
    s = Settings()
    bounds: dict[str, float] = {}
    got, _ = _finalize_two_pass(_chunked(pred, s, 17), pred, s, 17, bounds)
    ref = reliability_gaussian(y, mean, std)
    for k in ("rs", "accrue"):
        assert abs(got["reliability"][k] - ref[k]) <= bounds[f"reliability.{k}"] * (1 + 1e-9) + 1e-12, k
    if case in ("calibrated", "overconfident"):  # continuous errors: the bound is tiny next to RS itself
        assert bounds["reliability.rs"] < 1e-4 * ref["rs"]


def test_histogram_of_a_few_rows_is_sparse_and_adds_like_bincount():
    # a batch of a few rows (tiny chunks, small --by groups) gets its 2**20-bin histograms as non-zeros;
    # sums of sparse and dense ones equal numpy.bincount of all rows
    rng = np.random.default_rng(2)
    codes = [rng.integers(0, 1 << 20, size=k) for k in (5, 70_000, 9)]
    weights = [rng.normal(size=c.size) for c in codes]
    parts = [states.histogram(c, 1 << 20) for c in codes]
    assert isinstance(parts[0], states.Packed) and isinstance(parts[1], np.ndarray)
    total = parts[0] + parts[1] + parts[2]
    np.testing.assert_array_equal(states.unpack(total), np.bincount(np.concatenate(codes), minlength=1 << 20))
    wsum = states.histogram(codes[0], 1 << 20, weights[0]) + states.histogram(codes[2], 1 << 20, weights[2])
    np.testing.assert_allclose(
        states.unpack(wsum),
        np.bincount(
            np.concatenate([codes[0], codes[2]]),
            weights=np.concatenate([weights[0], weights[2]]),
            minlength=1 << 20,
        ),
        rtol=0,
        atol=1e-12,
    )
