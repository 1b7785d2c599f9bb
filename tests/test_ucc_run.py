"""Tests of uqeval.commands.ucc.core: bands from each representation, consistency checks, the UCC report."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from uqeval.commands.ucc.core import (
    SCHEMA,
    Band,
    UccOptions,
    band_of,
    check_same_pred,
    check_same_targets,
    model_names,
    ucc_report,
)
from uqeval.errors import InputError, UsageError
from uqeval.io.load import Loaded
from uqeval.metrics.ucc import permutation_test, ucc_summary
from uqeval.predictions import Gaussian, Intervals, Point, Quantiles, Samples
from uqeval.report.ucc import pvalue_rows, summary_rows, to_markdown
from uqeval.text import fmt_percent

# these tests call the core directly and check the flags its messages name
pytestmark = pytest.mark.usefixtures("cli_voice")

N = 400


def _data(n=N, seed=0):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    y = mean + std * rng.normal(size=n)
    return y, mean, std


def _loaded(pred, path="m.parquet"):
    return Loaded(pred, {"path": path, "representation": pred.kind})


def _gauss(y, mean, std, path="g.parquet"):
    return _loaded(
        Gaussian(y_true=y, columns={"y_true": "y", "mean": "mu", "std": "sigma"}, mean=mean, std=std), path
    )


# --------------------------------------------------------------------------- names


def test_model_names_are_stems_made_unique():
    assert model_names(["a/x.parquet", "b/y.csv", "z.csv.gz", "w.pq"]) == ["x", "y", "z", "w"]
    assert model_names(["run1/preds.parquet", "run2/preds.csv"]) == ["run1/preds", "run2/preds"]
    assert model_names(["d/a.parquet", "d/a.parquet", "d/a.parquet"]) == ["d/a", "d/a#2", "d/a#3"]


# --------------------------------------------------------------------------- bands


def test_gaussian_band_is_mean_pm_z_std():
    y, mean, std = _data()
    for level in (0.5, 0.9, 0.95):
        b = band_of("g", _gauss(y, mean, std), level)
        z = stats.norm.ppf(0.5 + level / 2)
        lower, upper = b.bounds_of()  # made on demand, not stored
        assert b.lower is None and b.upper is None
        np.testing.assert_allclose(lower, mean - z * std, rtol=0, atol=1e-12)
        np.testing.assert_allclose(upper, mean + z * std, rtol=0, atol=1e-12)
        part = b.bounds_of(3, 7)  # a block of rows: the same values as the whole bounds' slice
        np.testing.assert_array_equal(part[0], lower[3:7])
        np.testing.assert_array_equal(part[1], upper[3:7])
        np.testing.assert_array_equal(b.pred, mean)
        assert b.level == level and "mu" in b.centre and not b.notes


def test_intervals_pick_the_level_and_the_only_pair():
    y, mean, std = _data()
    lo = np.column_stack([mean - 0.5 * std, mean - 2 * std])
    hi = np.column_stack([mean + 0.7 * std, mean + 3 * std])
    cols = {"y_true": "y", "lower": ["lo_5", "lo_9"], "upper": ["hi_5", "hi_9"], "mean": "pred"}
    two = Intervals(y_true=y, columns=cols, lower=lo, upper=hi, levels=[0.5, 0.9], mean=mean)
    b = band_of("i", _loaded(two), 0.9)
    np.testing.assert_array_equal(b.lower, lo[:, 1])
    np.testing.assert_array_equal(b.upper, hi[:, 1])
    np.testing.assert_array_equal(b.pred, mean)
    assert "lo_9" in b.bounds and "hi_9" in b.bounds
    with pytest.raises(InputError, match=r"no intervals band at --level 0\.8.*0\.5, 0\.9"):
        band_of("i", _loaded(two, "two.csv"), 0.8)
    one = Intervals(
        y_true=y,
        columns={"y_true": "y", "lower": ["lower"], "upper": ["upper"], "mean": "pred"},
        rows=None,
        lower=lo[:, :1],
        upper=hi[:, :1],
        levels=[0.5],
        mean=mean,
    )
    b = band_of("i", _loaded(one, "one.csv"), 0.95)  # the only pair, whatever --level says
    np.testing.assert_array_equal(b.lower, lo[:, 0])
    assert b.level == 0.5
    assert len(b.notes) == 1 and "only interval pair (level 0.5)" in b.notes[0] and "one.csv" in b.notes[0]


def test_intervals_without_point_prediction_use_the_midpoint_with_a_note():
    y, mean, std = _data()
    lo, hi = mean - std, mean + 2 * std
    p = Intervals(
        y_true=y,
        columns={"y_true": "y", "lower": ["lower"], "upper": ["upper"]},
        lower=lo,
        upper=hi,
        levels=[0.95],
    )
    b = band_of("i", _loaded(p, "iv.csv"), 0.95)
    np.testing.assert_allclose(b.pred, (lo + hi) / 2, rtol=0, atol=1e-15)
    assert b.centre.startswith("midpoint")
    assert any("midpoint" in n and "--mean" in n and "iv.csv" in n for n in b.notes)


def test_intervals_centre_outside_band_is_an_error_naming_the_row():
    y, mean, std = _data()
    lo, hi = mean - std, mean + std
    bad_mean = mean.copy()
    bad_mean[7] = hi[7] + 0.1
    rows = np.arange(N) + 100  # original file rows (after --nan-policy omit, say)
    p = Intervals(
        y_true=y,
        columns={"y_true": "y", "lower": ["lower"], "upper": ["upper"], "mean": "pred"},
        rows=rows,
        lower=lo,
        upper=hi,
        levels=[0.95],
        mean=bad_mean,
    )
    with pytest.raises(
        InputError, match=r"iv\.csv: the band centre .* outside .* 1 row\(s\) \(first at row 107"
    ):
        band_of("i", _loaded(p, "iv.csv"), 0.95)


def test_quantiles_central_pair_and_median():
    y, mean, std = _data()
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    q = mean[:, None] + stats.norm.ppf(levels)[None, :] * std[:, None]
    cols = {"y_true": "y", "quantiles": [f"q_{v}" for v in levels]}
    b = band_of("q", _loaded(Quantiles(y_true=y, columns=cols, quantiles=q, levels=levels)), 0.9)
    np.testing.assert_array_equal(b.lower, q[:, 0])
    np.testing.assert_array_equal(b.upper, q[:, 4])
    np.testing.assert_array_equal(b.pred, q[:, 2])
    assert "q_0.5" in b.centre
    b5 = band_of("q", _loaded(Quantiles(y_true=y, columns=cols, quantiles=q, levels=levels)), 0.5)
    np.testing.assert_array_equal(b5.lower, q[:, 1])
    no_median = Quantiles(
        y_true=y, columns={"y_true": "y"}, quantiles=q[:, [0, 1, 3, 4]], levels=levels[[0, 1, 3, 4]]
    )
    with pytest.raises(InputError, match=r"no median; add a q_0\.5 column"):
        band_of("q", _loaded(no_median), 0.9)


def test_samples_empirical_quantiles_and_ensemble_median():
    y, mean, std = _data()
    rng = np.random.default_rng(1)
    s = mean[:, None] + std[:, None] * rng.normal(size=(N, 30))
    b = band_of("s", _loaded(Samples(y_true=y, columns={"y_true": "y"}, samples=s)), 0.8)
    want = np.quantile(s, [0.1, 0.9], axis=1)
    np.testing.assert_allclose(b.lower, want[0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.upper, want[1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.pred, np.median(s, axis=1), rtol=0, atol=1e-12)
    # skewed members: the mean (2.02) would fall outside the narrow band, the median does not
    skew = np.tile([0.0, 0.0, 0.0, 0.1, 10.0], (N, 1))
    b = band_of("s", _loaded(Samples(y_true=y, columns={"y_true": "y"}, samples=skew), "ens.parquet"), 0.5)
    assert np.all((b.lower <= b.pred) & (b.pred <= b.upper)) and np.all(b.pred == 0.0)


def test_point_predictions_are_refused_with_a_hint():
    y, mean, _ = _data()
    p = Point(y_true=y, columns={"y_true": "y", "mean": "pred"}, mean=mean)
    with pytest.raises(InputError, match=r"pt\.csv: the UCC needs prediction intervals.*'pred'.*--std"):
        band_of("p", _loaded(p, "pt.csv"), 0.95)


def test_missing_targets_are_refused():
    _, mean, std = _data()
    with pytest.raises(InputError, match="needs targets"):
        band_of("g", _loaded(Gaussian(y_true=None, mean=mean, std=std)), 0.95)


# --------------------------------------------------------------------------- consistency


def test_same_targets_required_row_named():
    y, mean, std = _data()
    a = band_of("a", _gauss(y, mean, std, "a.parquet"), 0.95)
    y2 = y.copy()
    y2[5] += 1e-13 * max(1.0, abs(y2[5]))  # within tolerance
    check_same_targets([a, band_of("b", _gauss(y2, mean, std, "b.parquet"), 0.95)])
    y2[11] += 1e-6
    with pytest.raises(InputError, match=r"b\.parquet: target at row 11 .* a\.parquet"):
        check_same_targets([a, band_of("b", _gauss(y2, mean, std, "b.parquet"), 0.95)])
    short = band_of("c", _gauss(y[:-1], mean[:-1], std[:-1], "c.parquet"), 0.95)
    with pytest.raises(InputError, match=rf"c\.parquet has {N - 1} rows but a\.parquet has {N}"):
        check_same_targets([a, short])


def test_same_prediction_required_for_the_test():
    y, mean, std = _data()
    a = band_of("a", _gauss(y, mean, std, "a.parquet"), 0.95)
    m2 = mean.copy()
    m2[3] += 1e-3
    b = band_of("b", _gauss(y, m2, std, "b.parquet"), 0.95)
    with pytest.raises(InputError, match=r"share the point prediction: at row 3 b\.parquet"):
        check_same_pred([a, b])
    with pytest.raises(InputError, match="share the point prediction"):
        ucc_report([a, b], UccOptions(n_permutations=10))
    ucc_report([a, b])  # without the test, different predictions are fine


# --------------------------------------------------------------------------- report


def test_report_matches_the_kernel_and_has_the_documented_keys():
    y, mean, std = _data()
    const = np.full(N, std.mean())
    bands = [
        band_of("het", _gauss(y, mean, std, "het.parquet"), 0.9),
        band_of("hom", _gauss(y, mean, const, "hom.parquet"), 0.9),
    ]
    rep = ucc_report(
        bands,
        UccOptions(
            x_axis="excess",
            y_axis="deficit",
            normalize="none",
            partial_y=(0.0, 0.3),
            cost=0.2,
            n_permutations=50,
            seed=4,
        ),
    )
    assert rep["schema"] == SCHEMA == "uqeval.ucc/1"
    assert set(rep) == {"schema", "uqeval_version", "settings", "n_rows", "models", "permutation_test"}
    assert rep["n_rows"] == N and list(rep["models"]) == ["het", "hom"]
    for b in bands:
        m = rep["models"][b.name]
        assert set(m) == {"input", "band", "ucc"}
        assert set(m["ucc"]) == {
            "x_axis",
            "y_axis",
            "normalize",
            "auucc",
            "auucc_const",
            "gain",
            "partial",
            "op",
            "op_min",
        }
        # a Gaussian band's bounds are made block by block (ucc_summary_rows): the numbers of the whole arrays
        want = ucc_summary(
            b.y_true,
            b.pred,
            *b.bounds_of(),
            x_axis="excess",
            y_axis="deficit",
            normalize="none",
            partial_y=(0.0, 0.3),
            cost=0.2,
        )
        assert m["ucc"] == want
        assert m["band"]["level"] == 0.9 and m["input"]["path"] == f"{b.name}.parquet"
    # both share pred, hence the constant-band reference
    assert rep["models"]["het"]["ucc"]["auucc_const"] == rep["models"]["hom"]["ucc"]["auucc_const"]
    want = permutation_test(
        y,
        mean,
        [b.bounds_of() for b in bands],
        n_permutations=50,
        seed=4,
        x_axis="excess",
        y_axis="deficit",
        normalize="none",
        names=["het", "hom"],
    )
    t = rep["permutation_test"]
    assert t["p_values"] == want["p_values"] and t["names"] == ["het", "hom"] and t["seed"] == 4
    assert t["auucc"] == pytest.approx(want["auucc"], rel=1e-12)
    assert t["auucc"][0] == pytest.approx(rep["models"]["het"]["ucc"]["auucc"], rel=1e-10)


def test_permutation_test_reproducible_and_seeded():
    y, mean, std = _data()
    bands = [
        band_of("a", _gauss(y, mean, std), 0.95),
        band_of("b", _gauss(y, mean, np.random.default_rng(9).permutation(std)), 0.95),
        band_of("c", _gauss(y, mean, np.full(N, 1.0)), 0.95),
    ]
    r1 = ucc_report(bands, UccOptions(n_permutations=99, seed=7))["permutation_test"]
    r2 = ucc_report(bands, UccOptions(n_permutations=99, seed=7))["permutation_test"]
    r3 = ucc_report(bands, UccOptions(n_permutations=99, seed=8))["permutation_test"]
    assert r1 == r2
    assert [p["p_value"] for p in r1["pairs"]] != [p["p_value"] for p in r3["pairs"]]
    assert [(p["a"], p["b"]) for p in r1["pairs"]] == [("a", "b"), ("a", "c"), ("b", "c")]
    for p in r1["pairs"]:
        assert 1 / 100 <= p["p_value"] <= 1.0
        assert ((p["p_value"] * 100) % 1) == pytest.approx(0, abs=1e-9)  # (1 + hits) / (1 + 99)


def test_permutation_test_uses_each_model_widths_around_the_common_prediction():
    y, mean, std = _data()
    a = band_of("a", _gauss(y, mean, std), 0.95)
    # b's prediction differs by less than the tolerance; its bands are shifted with it
    m2 = mean + 1e-14
    b = band_of("b", _gauss(y, m2, 1.3 * std), 0.95)
    rep = ucc_report([a, b], UccOptions(n_permutations=20, seed=0))
    t = rep["permutation_test"]
    assert t["auucc"][1] == pytest.approx(rep["models"]["b"]["ucc"]["auucc"], rel=1e-9)


def test_report_usage_errors():
    y, mean, std = _data()
    a = band_of("a", _gauss(y, mean, std), 0.95)
    with pytest.raises(UsageError, match="at least two"):
        ucc_report([a], UccOptions(n_permutations=10))
    with pytest.raises(UsageError):
        ucc_report([a], UccOptions(x_axis="missrate", y_axis="missrate"))
    with pytest.raises(UsageError):
        ucc_report([a], UccOptions(partial_x=(0, 1), partial_y=(0, 1)))
    with pytest.raises(UsageError, match="at least one"):
        ucc_report([])


def test_kernel_input_errors_name_the_file():
    y = np.ones(N)  # constant targets cannot be normalised by their std
    _, mean, std = _data()
    a = band_of("a", _gauss(y, mean, std, "flat.parquet"), 0.95)
    with pytest.raises(InputError, match=r"^flat\.parquet: .*--normalize none"):
        ucc_report([a])
    assert ucc_report([a], UccOptions(normalize="none"))["models"]["a"]["ucc"]["auucc"] > 0


def test_same_band_from_any_representation_gives_the_same_ucc():
    y, mean, std = _data()
    z = stats.norm.ppf(0.95)
    g = band_of("g", _gauss(y, mean, std), 0.9)
    iv = Intervals(
        y_true=y, columns={"y_true": "y"}, lower=mean - z * std, upper=mean + z * std, levels=[0.9], mean=mean
    )
    levels = np.array([0.05, 0.5, 0.95])
    q = Quantiles(
        y_true=y,
        columns={"y_true": "y"},
        quantiles=mean[:, None] + stats.norm.ppf(levels) * std[:, None],
        levels=levels,
    )
    rep = ucc_report([g, band_of("i", _loaded(iv), 0.9), band_of("q", _loaded(q), 0.9)])
    ref = rep["models"]["g"]["ucc"]
    for name in ("i", "q"):
        u = rep["models"][name]["ucc"]
        for key in ("auucc", "auucc_const", "gain"):
            assert u[key] == pytest.approx(ref[key], rel=1e-9), (name, key)


def test_hand_computed_case():
    # widths 1 on both sides; d = 0.5, -1, 2, 0 -> critical scales 0.5, 1, 2, 0
    y = np.array([0.5, -1.0, 2.0, 0.0])
    p = Intervals(
        y_true=y, columns={"y_true": "y"}, lower=-np.ones(4), upper=np.ones(4), levels=[0.9], mean=np.zeros(4)
    )
    rep = ucc_report([band_of("m", _loaded(p), 0.9)], UccOptions(normalize="none", partial_x=(0.25, 1.5)))
    u = rep["models"]["m"]["ucc"]
    # curve (bandwidth, missrate): (0, .75), (.5, .5), (1, .25), (2, 0)
    assert u["auucc"] == pytest.approx(0.5 * 1.25 / 2 + 0.5 * 0.75 / 2 + 1 * 0.25 / 2, abs=1e-15)
    assert u["auucc_const"] == pytest.approx(u["auucc"], abs=1e-15) and u["gain"] == pytest.approx(
        0, abs=1e-15
    )
    # partial over x in [0.25, 1.5]: y(0.25) = 0.625, y(1.5) = 0.125
    assert u["partial"]["auucc"] == pytest.approx(
        0.25 * (0.625 + 0.5) / 2 + 0.5 * 0.75 / 2 + 0.5 * (0.25 + 0.125) / 2, abs=1e-15
    )
    assert u["op"] == {"k": 1.0, "x": 1.0, "y": 0.25, "cost": 0.625}  # bounds inclusive at k = 1
    assert u["op_min"] == {"k": 0.0, "x": 0.0, "y": 0.75, "cost": 0.375}


# --------------------------------------------------------------------------- rendering


def test_tables_and_markdown():
    y, mean, std = _data()
    bands = [band_of("a", _gauss(y, mean, std), 0.95), band_of("b", _gauss(y, mean, 1.2 * std), 0.95)]
    rep = ucc_report(bands, UccOptions(partial_x=(0, 1), n_permutations=9))
    header, rows = summary_rows(rep)
    assert header[:4] == ["model", "AUUCC", "AUUCC const", "gain"] and "partial gain" in header
    assert "k=1 bandwidth" in header and "k* missrate" in header
    assert [r[0] for r in rows] == ["a", "b"] and all(len(r) == len(header) for r in rows)
    gain = rep["models"]["a"]["ucc"]["gain"]
    assert rows[0][3] == fmt_percent(gain) and rows[0][3] in (f"{100 * gain:+.1f}%", "0.0%")
    pv_header, pv_rows = pvalue_rows(rep)
    assert pv_header[-1] == "p-value" and pv_rows[0][:2] == ["a", "b"]
    md = to_markdown(rep)
    assert "| model | AUUCC |" in md and "| a |" in md and "Paired permutation test" in md
    assert pvalue_rows(ucc_report(bands)) is None


def test_plot_models_carry_the_curves_the_finish_summarised(monkeypatch):
    """run_ucc(plot=True): each model's curves are the ones its summary was computed from (made once: two
    sweeps per model, not four), ucc_curves's of the whole bounds, weighted too, with the summary's values."""
    import uqeval.metrics.ucc as kernels
    from uqeval.commands.ucc.core import run_ucc
    from uqeval.config import Settings
    from uqeval.metrics.ucc import auucc, ucc_curves

    y, mean, std = _data()
    w = np.random.default_rng(4).uniform(0, 2, N)
    w[:30] = 0
    keep = w > 0
    sources = {"a": _gauss(y, mean, std), "b": _gauss(y, mean, 1.5 * std)}
    options = UccOptions(x_axis="bandwidth", y_axis="excess", level=0.9)
    sweeps = []
    curve_of = kernels._curve_of
    monkeypatch.setattr(kernels, "_curve_of", lambda *a, **k: sweeps.append(1) or curve_of(*a, **k))
    for weights in (None, w):
        sweeps.clear()
        doc, models = run_ucc(sources, Settings(), options, weights=weights, plot=True)
        assert len(sweeps) == 4 and models is not None  # (the figure's curves were made again: 8)
        assert run_ucc(sources, Settings(), options, weights=weights) == (doc, None)
        rows = slice(None) if weights is None else keep
        for m, s in zip(models, (1.0, 1.5)):
            u = doc["models"][m["name"]]["ucc"]
            assert {k: m[k] for k in ("op", "op_min", "auucc", "auucc_const", "gain")} == {
                k: u[k] for k in ("op", "op_min", "auucc", "auucc_const", "gain")
            }
            assert (auucc(m["curve"]), auucc(m["const_curve"])) == (u["auucc"], u["auucc_const"])
            lo, hi = _bounds(mean[rows], s * std[rows], 0.9)
            if weights is None:  # the whole-array curves (weighted: checked against repeated rows elsewhere)
                want = ucc_curves(y, mean, lo, hi, x_axis="bandwidth", y_axis="excess")
                for got, ref in zip((m["curve"], m["const_curve"]), want):
                    np.testing.assert_allclose(got.x, ref.x, rtol=1e-12)
                    np.testing.assert_allclose(got.y, ref.y, rtol=1e-12, atol=1e-15)
            assert len(m["curve"]) == (N if weights is None else keep.sum())


def test_sorted_crossing_quantiles_are_noted():
    y, mean, std = _data()
    levels = np.array([0.05, 0.5, 0.95])
    q = mean[:, None] + stats.norm.ppf(levels) * std[:, None]
    pred = Quantiles(y_true=y, columns={"y_true": "y"}, quantiles=q, levels=levels)
    b = band_of("q", Loaded(pred, {"path": "q.parquet", "n_fixed_crossing": 3}), 0.9)
    assert any("3 row(s) had crossing quantiles" in n for n in b.notes)


def test_one_fold_keeps_rows_in_memory_and_cells_streamed():
    """The fold of every engine (UccState): in memory the bands are its one batch and it keeps their rows (the
    exact curve: ucc_summary, the sorted sweep); a state that keeps cells instead, fed the same rows as one
    batch, gives the same op point (exact) and areas within the bounds it reports, through the same finish."""
    from uqeval.commands.ucc.core import UccState, finish

    y, mean, std = _data()
    w = np.random.default_rng(3).uniform(0, 2, N)
    w[:40] = 0
    bands = [band_of("a", _gauss(y, mean, std), 0.9), band_of("b", _gauss(y, mean, 1.5 * std), 0.9)]
    docs = {}
    for keep in (True, False):
        state = UccState(["a", "b"], ["a", "b"], UccOptions(level=0.9), needs_all_rows=keep)
        state.add_bands(bands, w, "w")
        if keep:  # the bands of the rows of positive weight
            assert all(isinstance(p, Band) and p.y_true.size == (w > 0).sum() for p in state.parts)
        else:  # the cells of critical scales (stream.file_state)
            assert all(isinstance(p, dict) and "model" in p for p in state.parts)
        docs[keep] = finish(state, [b.info for b in bands], "stream", "w")
    exact, binned = docs[True], docs[False]
    assert exact == ucc_report(bands, UccOptions(), w, "w")
    assert exact["weights"] == binned["weights"] and exact["n_rows"] == binned["n_rows"] == N
    keep = w > 0
    for name, s in zip("ab", (1.0, 1.5)):
        ref = ucc_summary(y[keep], mean[keep], *_bounds(mean[keep], s * std[keep], 0.9), weights=w[keep])
        e, b = exact["models"][name], binned["models"][name]
        assert e["ucc"]["auucc"] == pytest.approx(ref["auucc"], rel=1e-12)
        assert "bounds" not in e["input"]
        assert b["ucc"]["op"] == pytest.approx(e["ucc"]["op"], rel=1e-12)
        assert abs(b["ucc"]["auucc"] - e["ucc"]["auucc"]) <= b["input"]["bounds"]["auucc"] + 1e-12
    assert any("approximate" in n for n in binned["notes"]) and not any(
        "approximate" in n for n in exact["notes"]
    )


def _bounds(mean, std, level):
    z = stats.norm.ppf(0.5 + level / 2)
    return mean - z * std, mean + z * std
