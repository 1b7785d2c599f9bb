"""Per-row weights (issue 25): every catalogue metric that takes weights equals, with integer weights, the
metric of the rows repeated that often; weights of 0 drop rows; metrics without a weighted form are refused
by name; bad weights are an error naming the column and the first bad row; reference values of weighted
metrics from scikit-learn (``tests/reference/regen_weights.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval import evaluate
from uqeval.catalogue import METRICS, compute_metrics, compute_weighted_metrics
from uqeval.cli import app
from uqeval.errors import InputError, UsageError

from .conftest import write_table
from .test_catalogue_invariants import CASES, N, Store, _leaves, _values

runner = CliRunner()
REFERENCE = Path(__file__).parent / "reference" / "data" / "weights.json"

#: integer weights 0..3 (a quarter of the rows dropped), the same for every representation
W = np.random.default_rng(25).integers(0, 4, N).astype(np.float64)
REPEATED = np.repeat(np.arange(N), W.astype(int))


class WeightStore(Store):
    def weighted(self, kind: str) -> tuple[dict, dict[str, str]]:
        def make():
            metrics, _, not_weighted = compute_weighted_metrics(self.pred(kind), self.settings, W)
            return metrics, not_weighted

        return self._once(("weighted", kind), make)

    def repeated(self, kind: str) -> dict:
        return self._once(
            ("repeated", kind), lambda: compute_metrics(self.pred(kind).subset(REPEATED), self.settings)[0]
        )


@pytest.fixture(scope="module")
def wstore(tmp_path_factory):
    return WeightStore(tmp_path_factory.mktemp("weights"))


def test_integer_weights_reach_every_metric_that_takes_them():
    """Keeps the cases honest: zeros, ones and larger weights all occur."""
    import uqeval

    assert {0.0, 1.0, 2.0, 3.0} <= set(W.tolist())
    listed = {m["path"]: m["supports_weights"] for m in uqeval.list_metrics()}
    assert listed == {p: m.supports_weights for p, m in METRICS.items()}
    assert any(m.supports_weights for m in METRICS.values())
    assert any(not m.supports_weights for m in METRICS.values())


WEIGHTED_CASES = [c for c in CASES if c.values[0].takes_weights(c.values[1])]
REFUSED_CASES = [c for c in CASES if not c.values[0].takes_weights(c.values[1])]

_RANDOM = "random subsets: a weighted draw would not equal the draws of the repeated rows"
_RANDOM_PIT = "samples, quantiles, intervals: a PIT (or rank) drawn at random per row"

#: every catalogue entry (a path, or a pattern: ``group.*``, ``group.pit_*``) that still refuses weights for
#: some representation, and why (issue 37): only those that draw at random. Each is refused by name with its
#: reason in ``weights.not_weighted``.
STILL_REFUSED = {
    "adv_group_calibration.*": _RANDOM,
    "bayesian_ece.*": _RANDOM,
    "spce.*": _RANDOM,
    "calibration_tests.pit_*": _RANDOM_PIT,
    "calibration_tests.rank_*": _RANDOM_PIT,
}

#: tests and standard errors whose null or variance takes a number of independent rows: with weights Kish's
#: n_eff = (sum w)^2 / sum w^2 (uqeval.metrics.rowweights.effective_rows), scale-free, which repeated rows do
#: not raise (they are not independent draws; docs/guide/weights.md). Their statistic part, a function of the
#: weighted rows, is checked against the repeated rows: ``part(value, n)``; the p-values are checked to be
#: the null law at n_eff of that statistic (:func:`_null_p`). Hosmer-Lemeshow takes n_eff per group: its
#: groups and shares are those of the repeated rows (:func:`_hosmer_lemeshow_of_repeated_groups`).
STAT_PART = {
    "calibration_tests.pit_cvm_stat": lambda v, n: v / n,
    "calibration_tests.pit_ad_stat": lambda v, n: v / n,
    "calibration_tests.spiegelhalter_z": lambda v, n: v / np.sqrt(n),
    **dict.fromkeys(
        ("information_criteria.waic1_se", "information_criteria.waic2_se", "information_criteria.iscv_se"),
        lambda v, n: v * v * (n - 1),
    ),
}
P_OF_STAT = {
    "calibration_tests.pit_ks_p": "calibration_tests.pit_ks_stat",
    "calibration_tests.pit_cvm_p": "calibration_tests.pit_cvm_stat",
    "calibration_tests.pit_ad_p": "calibration_tests.pit_ad_stat",
    "calibration_tests.spiegelhalter_p": "calibration_tests.spiegelhalter_z",
    "calibration_tests.hosmer_lemeshow_p": "calibration_tests.hosmer_lemeshow_stat",
}


def _null_p(path: str, stat: float, n: float) -> float:
    """The null law at ``n`` rows of each p-value in :data:`P_OF_STAT` (written out here, from scipy)."""
    from scipy import stats

    from uqeval.metrics import calibration_tests as ct

    return {
        "calibration_tests.pit_ks_p": lambda: stats.kstwo.sf(stat, round(n)),
        "calibration_tests.pit_cvm_p": lambda: ct.cvm_pvalue(stat, n),
        "calibration_tests.pit_ad_p": lambda: ct.ad_pvalue(stat, n),
        "calibration_tests.spiegelhalter_p": lambda: 2 * stats.norm.sf(abs(stat)),
        "calibration_tests.hosmer_lemeshow_p": lambda: stats.chi2.sf(stat, 10),  # 10 groups (no tied edges)
    }[path]()


def _n_eff(w: np.ndarray) -> float:
    return float(w.sum() ** 2 / (w * w).sum())


def _hosmer_lemeshow_of_repeated_groups(pred) -> float:
    """The weighted Hosmer-Lemeshow statistic built in numpy: the groups (type-7 deciles, np.quantile) and
    each group's shares of events and expected events are those of the repeated rows; each group counts
    Kish's n_eff of the weights W of its rows."""
    from uqeval.catalogue.diagnostics import binary_events

    p, y = binary_events(pred)
    edges = np.quantile(p[REPEATED], np.linspace(0.0, 1.0, 11))
    g = np.clip(np.searchsorted(edges, p, side="left"), 1, 10)
    stat = 0.0
    for k in range(1, 11):
        rows = REPEATED[g[REPEATED] == k]  # the repeated rows of group k
        if rows.size:
            o, e = y[rows].mean(), p[rows].mean()
            w = W[(g == k) & (W > 0)]
            stat += _n_eff(w) * ((o - e) ** 2 / e + (o - e) ** 2 / (1 - e))
    return stat


def _refused_list() -> list[str]:
    return sorted(f"{c.values[0].path}-{c.values[1]}" for c in REFUSED_CASES)


def _listed(path: str) -> str | None:
    from fnmatch import fnmatchcase

    return next((why for key, why in STILL_REFUSED.items() if fnmatchcase(path, key)), None)


def test_the_entries_that_refuse_weights_are_listed(capsys):
    """Prints every entry x representation that refuses weights (the acceptance of issue 37), and those whose
    p-value or standard error takes n_eff, and checks that each refused case is in :data:`STILL_REFUSED` with
    its reason, and that every entry there still refuses (no stale line)."""
    refused = _refused_list()
    with capsys.disabled():
        print(f"\n{len(refused)} of {len(CASES)} entry x representation cases refuse weights:")
        for case in refused:
            path = case.split("-")[0]
            print(f"   {case:55s} {_listed(path) or 'NOT LISTED'}")
        print(
            "weighted with Kish's n_eff for the number of independent rows (statistic part = repeated rows):"
        )
        for path in [*STAT_PART, "calibration_tests.hosmer_lemeshow_stat (n_eff per group)", *P_OF_STAT]:
            print(f"   {path}")
    assert not [c for c in refused if _listed(c.split("-")[0]) is None]
    paths = {c.split("-")[0] for c in refused}
    for key in STILL_REFUSED:
        assert any(_listed(p) == STILL_REFUSED[key] for p in paths), f"{key} takes weights now"


@pytest.mark.parametrize("metric,kind", WEIGHTED_CASES)
def test_integer_weights_equal_repeated_rows(wstore, metric, kind):
    weighted, not_weighted = wstore.weighted(kind)
    assert metric.path not in not_weighted
    got = _values(weighted, metric)
    want = _values(wstore.repeated(kind), metric)
    assert got and got.keys() == want.keys(), (metric.path, kind)
    if metric.path in P_OF_STAT:  # the null law at n_eff of the statistic checked below
        stat = METRICS[P_OF_STAT[metric.path]]
        n = _n_eff(W)
        for key, value in got.items():
            assert value == pytest.approx(_null_p(metric.path, _values(weighted, stat)[key], n), rel=1e-12)
        return
    if metric.path == "calibration_tests.hosmer_lemeshow_stat":
        want = {"": _hosmer_lemeshow_of_repeated_groups(wstore.pred(kind))}
    part = STAT_PART.get(metric.path)
    if part is not None:  # the statistic of the weighted rows at n_eff; of the repeated rows at their number
        got = {k: part(v, _n_eff(W)) for k, v in got.items()}
        want = {k: part(v, float(REPEATED.size)) for k, v in want.items()}
    np.testing.assert_allclose(_leaves(got), _leaves(want), rtol=1e-12, atol=1e-12, err_msg=metric.path)


@pytest.mark.parametrize("metric,kind", REFUSED_CASES)
def test_metric_without_weighted_form_is_named_not_computed(wstore, metric, kind):
    weighted, not_weighted = wstore.weighted(kind)
    assert not _values(weighted, metric), (metric.path, kind)
    reason = metric.unweighted_reason_for(kind)
    assert reason and not_weighted[metric.path] == reason


@pytest.mark.parametrize("kind", sorted({c.values[1] for c in WEIGHTED_CASES}))
def test_zero_weights_drop_rows_and_scaling_the_weights_changes_nothing(wstore, kind):
    pred = wstore.pred(kind)
    a, _, _ = compute_weighted_metrics(pred, wstore.settings, W)
    b, _, _ = compute_weighted_metrics(pred, wstore.settings, W * 0.37)
    kept = W > 0
    c, _, _ = compute_weighted_metrics(pred.subset(kept), wstore.settings, W[kept])
    for m in METRICS.values():
        if m.applies_to(kind) and m.takes_weights(kind):
            want = _leaves(_values(a, m))
            for other in (b, c):
                np.testing.assert_allclose(
                    _leaves(_values(other, m)), want, rtol=1e-12, atol=1e-14, err_msg=m.path
                )


@pytest.mark.parametrize("kind", sorted({c.values[1] for c in WEIGHTED_CASES}))
def test_unit_weights_equal_the_unweighted_metrics(wstore, kind):
    pred = wstore.pred(kind)
    plain = wstore.result(kind)
    got, _, _ = compute_weighted_metrics(pred, wstore.settings, np.ones(N))
    for m in METRICS.values():
        if m.applies_to(kind) and m.takes_weights(kind):
            want = _leaves(_values(plain, m))
            np.testing.assert_allclose(_leaves(_values(got, m)), want, rtol=1e-12, atol=1e-14, err_msg=m.path)


@pytest.mark.parametrize("kind", ["gaussian", "samples", "quantiles"])
def test_weighted_calibration_curve_is_the_repeated_rows_and_gives_the_weighted_metrics(wstore, kind):
    """``uqeval.catalogue.calibration_curve(..., weights=)`` (for plots of weighted rows) is the curve of the
    repeated rows, and its errors are the weighted ``avg_calibration`` metrics (their per-row form)."""
    from uqeval.catalogue import calibration_curve
    from uqeval.metrics.calibration import calibration_errors

    pred = wstore.pred(kind)
    expected, observed = calibration_curve(pred, wstore.settings, W)
    want_e, want_o = calibration_curve(pred.subset(REPEATED), wstore.settings)
    np.testing.assert_array_equal(expected, want_e)
    np.testing.assert_allclose(observed, want_o, rtol=1e-12, atol=1e-15)
    weighted, _ = wstore.weighted(kind)
    for name, value in calibration_errors(expected, observed).items():
        if name in weighted["avg_calibration"]:
            assert value == pytest.approx(weighted["avg_calibration"][name], rel=1e-12, abs=1e-15), name


def test_weighted_median_selection_equals_the_sorted_crossing():
    """One set of weights takes an O(N) selection, the bootstrap's (B, N) weights a sort: the same values,
    on ties, zeros, integer and fractional weights, above and below the selection's 64-row cut-off."""
    from uqeval.metrics.accuracy import _weighted_median

    rng = np.random.default_rng(7)
    for t in range(400):
        n = int(rng.integers(1, 400))
        x = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # ties
        w = (
            rng.integers(0, 4, n).astype(float)
            if t % 2
            else rng.uniform(0, 2, n) * (rng.uniform(size=n) > 0.2)
        )
        if not w.any():
            continue
        one = _weighted_median(x.copy(), w[None, :])[0]
        assert one == _weighted_median(x.copy(), np.stack([w, w]))[0], (t, n)
        if t % 2:
            assert one == np.median(np.repeat(x, w.astype(int)))


def test_weighted_median_is_scale_invariant_for_fractional_weights():
    y = np.array([0.0, 0.0, 0.0, 0.0])
    mean = np.array([1.0, 2.0, 3.0, 4.0])  # absolute errors 1, 2, 3, 4
    half = evaluate(y, mean=mean, weights=np.full(4, 0.5))
    assert half["accuracy.mdae"] == 2.5  # as with weights 1: the mean of the middle pair
    assert evaluate(y, mean=mean, weights=[0.2, 0.2, 0.2, 0.6])["accuracy.mdae"] == 3.5


# --------------------------------------------------------------------------- reference values


def test_weighted_metrics_match_scikit_learn():
    """scikit-learn 1.9.1 with sample_weight (frozen by tests/reference/regen_weights.py)."""
    ref = json.loads(REFERENCE.read_text())
    assert ref["library"].startswith("scikit-learn 1.9.1")
    d = {k: np.asarray(v) for k, v in ref["data"].items()}
    reg = evaluate(d["y"], mean=d["mu"], weights=d["w"])
    for ours, theirs in (
        ("accuracy.mae", "mean_absolute_error"),
        ("accuracy.rmse", "root_mean_squared_error"),
        ("accuracy.r2", "r2_score"),
        ("accuracy.mdae", "median_absolute_error"),
    ):
        assert reg[ours] == pytest.approx(ref["regression"][theirs], rel=1e-12, abs=1e-14), ours
    q = evaluate(d["y"], quantiles=d["q"], levels=d["levels"], weights=d["w"])
    # scikit-learn's mean_pinball_loss per level; uqeval's pinball is their mean over the levels
    assert q["scoring_rule.pinball"] == pytest.approx(
        np.mean(ref["regression"]["mean_pinball_loss"]), rel=1e-12
    )
    cls = evaluate(d["labels"], proba=d["proba"], weights=d["w"])
    assert cls["accuracy.accuracy"] == pytest.approx(ref["classification"]["accuracy_score"], rel=1e-12)
    assert cls["accuracy.nll"] == pytest.approx(ref["classification"]["log_loss"], rel=1e-12)
    # uqeval's multiclass Brier sums over the classes, as scikit-learn's multiclass brier_score_loss (1.9.1)
    assert cls["accuracy.brier"] == pytest.approx(ref["classification"]["brier_score_loss"], rel=1e-12)


WEIGHTED_CALIBRATION = Path(__file__).parent / "reference" / "data" / "weighted_calibration.json"


@pytest.mark.parametrize("weights", ["w_int", "w_frac"])
def test_weighted_calibration_errors_and_corp_match_independent_references(weights):
    """Weighted ECE/MCE/SCE/ACE/TACE/RMSCE against bins built directly in numpy, and weighted CORP against
    scikit-learn 1.9.1's ``IsotonicRegression(sample_weight=)`` (numpy 2.4.6), frozen by
    tests/reference/regen_weighted_calibration.py (which does not import uqeval)."""
    from uqeval.metrics.classification import calibration_errors
    from uqeval.metrics.corp import corp_binary, corp_mean

    ref = json.loads(WEIGHTED_CALIBRATION.read_text())
    assert ref["library"] == "scikit-learn 1.9.1, numpy 2.4.6"
    d = {k: np.asarray(v) for k, v in ref["data"].items()}
    w = d[weights]
    got = evaluate(d["labels"], proba=d["proba"], weights=w)
    for key, want in ref["calibration"][weights].items():
        assert got[f"calibration.{key}"] == pytest.approx(want, rel=1e-12, abs=1e-15), key
    keep = w > 0
    kernel = calibration_errors(d["proba"][keep], d["labels"][keep], num_bins=ref["bins"], weights=w[keep])
    assert kernel == pytest.approx(ref["calibration"][weights], rel=1e-12, abs=1e-15)
    corp = ref["corp"][weights]
    binary = corp_binary(d["p1"][keep], d["outcome"][keep], weights=w[keep])
    mean = corp_mean(d["y"][keep], d["mean"][keep], weights=w[keep])
    for ours, theirs in (
        (binary["brier"], "binary_brier"),
        (binary["log"], "binary_log"),
        (mean, "mean_mse"),
    ):
        assert ours == pytest.approx(corp[theirs], rel=1e-10, abs=1e-14), theirs
    # the same through the catalogue (binary classifier: CORP of P(class 1); a point forecast: the mean's)
    cls = evaluate(d["outcome"].astype(int), proba=d["p1"], weights=w, diagnostics=True)
    assert cls["corp.brier.mcb"] == pytest.approx(corp["binary_brier"]["mcb"], rel=1e-10)
    reg = evaluate(d["y"], mean=d["mean"], weights=w, diagnostics=True)
    assert reg["corp.mse.dsc"] == pytest.approx(corp["mean_mse"]["dsc"], rel=1e-10)


# --------------------------------------------------------------------------- input and errors


@pytest.fixture
def weighted_file(tmp_path):
    rng = np.random.default_rng(4)
    n = 300
    mu = rng.normal(size=n)
    return write_table(
        tmp_path / "w.parquet",
        {"y": mu + rng.normal(size=n), "mu": mu, "sigma": np.full(n, 1.1), "w": rng.uniform(0, 2, n)},
    )


def _score(*args: str) -> tuple[int, dict | str]:
    r = runner.invoke(app, ["score", *map(str, args), "--format", "json"])
    return r.exit_code, (json.loads(r.stdout) if r.exit_code == 0 else r.output)


def test_cli_weights_equal_the_api(weighted_file):
    code, out = _score(weighted_file, "--weights", "w")
    assert code == 0 and isinstance(out, dict)
    import pyarrow.parquet as pq

    t = pq.read_table(weighted_file).to_pydict()
    api = evaluate(
        np.array(t["y"]), mean=np.array(t["mu"]), std=np.array(t["sigma"]), weights=np.array(t["w"])
    )
    assert out["metrics"]["scoring_rule"]["crps"] == pytest.approx(api["scoring_rule.crps"], rel=1e-14)
    assert out["weights"]["column"] == "w" and out["weights"]["sum"] == pytest.approx(sum(t["w"]))
    assert "adv_group_calibration.ma_mean" in out["weights"]["not_weighted"]
    assert "adv_group_calibration" not in out["metrics"]  # never unweighted
    assert out["metrics"]["reliability"]["rs"] == pytest.approx(api["reliability.rs"], rel=1e-14)
    assert out["settings"]["columns"]["weights"] == "w"
    code, plain = _score(weighted_file)
    assert (
        code == 0
        and "weights" not in plain
        and plain["metrics"]["scoring_rule"]["crps"]
        != pytest.approx(out["metrics"]["scoring_rule"]["crps"], rel=1e-6)
    )


def test_config_names_the_weights_column(weighted_file, tmp_path):
    cfg = tmp_path / "uqeval.toml"
    cfg.write_text('[columns]\nweights = "w"\n')
    code, out = _score(weighted_file, "--config", cfg)
    assert code == 0 and isinstance(out, dict) and out["weights"]["column"] == "w"


def test_by_groups_are_weighted(weighted_file):
    code, out = _score(weighted_file, "--weights", "w", "--by", "sigma")
    assert code == 0 and isinstance(out, dict)
    (body,) = out["groups"]["values"].values()
    assert body["metrics"]["scoring_rule"]["crps"] == pytest.approx(out["metrics"]["scoring_rule"]["crps"])


@pytest.mark.parametrize(
    "values,found",
    [
        ([1.0, -0.5, 1.0, -2.0], "2 negative value(s) in column 'w' (first at row 1, found -0.5)"),
        ([1.0, 1.0, np.nan, 1.0], "1 NaN/inf value(s) in column 'w' (first at row 2, found nan)"),
        ([1.0, np.inf, 1.0, 1.0], "1 NaN/inf value(s) in column 'w' (first at row 1, found inf)"),
        ([0.0, 0.0, 0.0, 0.0], "weights in column 'w' are all 0"),
        (
            [1.0, 1e308, 1e308, 1.0],
            "weights in column 'w' sum to more than the largest float (the largest at row 1",
        ),
    ],
)
def test_bad_weights_name_column_and_first_row(tmp_path, values, found):
    f = write_table(
        tmp_path / "bad.csv", {"y": [0.1, 0.2, 0.3, 0.4], "mu": [0.0] * 4, "sigma": [1.0] * 4, "w": values}
    )
    code, out = _score(f, "--weights", "w")
    assert code == 3 and found in str(out), out
    assert "Traceback" not in str(out)
    with pytest.raises(InputError, match="weights"):
        evaluate(np.array([0.1, 0.2, 0.3, 0.4]), mean=np.zeros(4), weights=np.array(values))


def test_missing_weights_column(weighted_file):
    code, out = _score(weighted_file, "--weights", "nope")
    assert code == 3 and "column 'nope' given for weights (--weights) not found" in str(out)


def test_api_weights_errors():
    with pytest.raises(InputError, match="has 3 rows but the predictions have 4"):
        evaluate(np.zeros(4), mean=np.zeros(4), weights=np.ones(3))
    with pytest.raises(UsageError, match="names a column"):
        evaluate(np.zeros(4), mean=np.zeros(4), weights="w")
    with pytest.raises(UsageError, match="these scores are weighted"):
        evaluate(np.arange(4.0), mean=np.zeros(4), std=np.ones(4), weights=np.ones(4)).plot("calibration")


@pytest.mark.parametrize(
    "args",
    [
        ["plot", "{f}", "--kind", "calibration", "--weights", "w", "--output", "{d}/p.png"],
        ["recalibrate", "{f}", "--method", "std-scaling", "--weights", "w"],
        ["score", "{f}", "--weights", "w", "--plot-dir", "{d}"],
    ],
)
def test_commands_without_weights_refuse_them(weighted_file, tmp_path, args):
    r = runner.invoke(app, [a.format(f=weighted_file, d=tmp_path) for a in args])
    assert r.exit_code == 2 and "--weights" in r.output and "Traceback" not in r.output, r.output


def test_check_names_a_rule_on_a_metric_without_weights(weighted_file, tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[rules]\n"scoring_rule.crps" = { max = 5 }\n"adv_group_calibration.ma_mean" = { max = 1 }\n'
    )
    args = ["check", str(weighted_file), "--rules", str(rules), "--weights", "w", "--diagnostics"]
    r = runner.invoke(app, args)
    assert r.exit_code == 3, r.output
    assert '"adv_group_calibration.ma_mean" is not computed with weights (it draws random' in r.output, (
        r.output
    )
    rules.write_text(
        '[rules]\n"calibration_tests.pit_ks_p" = { min = 0.0 }\n"calibration_tests.pit_ad_stat" = { max = 1e9 }\n'
        '"reliability.rs" = { max = 5 }\n'
    )
    assert runner.invoke(app, args).exit_code == 0  # weighted since issue 37 (the tests: with n_eff)
    rules.write_text('[rules]\n"scoring_rule.crps" = { max = 5 }\n')
    r = runner.invoke(
        app, ["check", str(weighted_file), "--rules", str(rules), "--weights", "w", "--format", "json"]
    )
    assert r.exit_code == 0, r.output


def test_array_functions_take_weights():
    """uqeval.log_loss / brier_score against scikit-learn 1.9.1's sample_weight (frozen), and every weighted
    array function against the unweighted one on repeated rows."""
    import uqeval

    ref = json.loads(REFERENCE.read_text())
    d = {k: np.asarray(v) for k, v in ref["data"].items()}
    assert uqeval.log_loss(d["labels"], d["proba"], weights=d["w"]) == pytest.approx(
        ref["classification"]["log_loss"], rel=1e-12
    )
    assert uqeval.brier_score(d["labels"], d["proba"], weights=d["w"]) == pytest.approx(
        ref["classification"]["brier_score_loss"], rel=1e-12
    )
    rng = np.random.default_rng(3)
    n = 300
    w = rng.integers(0, 4, n)
    idx = np.repeat(np.arange(n), w)
    mu, y = rng.normal(size=n), rng.normal(size=n)
    p1 = rng.uniform(0.05, 0.95, n)
    labels = (rng.uniform(size=n) < p1).astype(int)
    for fn, args in (
        (uqeval.calibration_error, (y, mu, np.full(n, 0.8))),
        (uqeval.coverage, (y, mu - 1.0, mu + 1.0)),
        (uqeval.log_loss, (labels, p1)),
        (uqeval.brier_score, (labels, p1)),
    ):
        weighted = fn(*args, weights=w)
        assert weighted == pytest.approx(fn(*(np.asarray(a)[idx] for a in args)), rel=1e-12, abs=1e-14), fn
    assert uqeval.brier_score(labels, p1, convention="binary", weights=w) == pytest.approx(
        uqeval.brier_score(labels[idx], p1[idx], convention="binary"), rel=1e-12
    )
    for kw in ({}, {"classwise": True}, {"classwise": True, "adaptive": True}):
        assert uqeval.expected_calibration_error(labels, p1, weights=w, **kw) == pytest.approx(
            uqeval.expected_calibration_error(labels[idx], p1[idx], **kw), rel=1e-12, abs=1e-15
        ), kw
    with pytest.raises(InputError, match="negative"):
        uqeval.log_loss(labels, p1, weights=-np.ones(n))


@pytest.mark.parametrize("rounding", [2, 1])
def test_weighted_calibration_errors_with_ties_and_zeros_equal_repeated_rows(rounding):
    """The weighted calibration errors sum each set of scores per float-bit code and sort only the rows of the
    codes that hold an edge (uqeval.metrics.rowweights.CodeSums): with heavy ties, exact zeros, scores on
    the even edges and at 1, integer weights equal the repeated rows and a common factor changes nothing."""
    from uqeval.metrics.classification import calibration_errors

    rng = np.random.default_rng(40 + rounding)
    n, k = 3000, 5
    p = np.round(rng.dirichlet(np.full(k, 0.3), size=n), rounding)
    p[:, 0] = 1.0 - p[:, 1:].sum(axis=1)  # rows on the simplex; many exact 0s and 1s, scores on even edges
    p = np.clip(p, 0.0, 1.0)
    p /= p.sum(axis=1, keepdims=True)
    y = (rng.uniform(size=(n, 1)) > np.cumsum(p, axis=1)).sum(axis=1).clip(0, k - 1)
    w = rng.integers(0, 4, n).astype(np.float64)
    w[0] = 1.0
    idx = np.repeat(np.arange(n), w.astype(int))
    want = calibration_errors(p[idx], y[idx], num_bins=15, tace_threshold=0.01)
    kept = w > 0
    for scale in (1.0, 0.37):
        got = calibration_errors(p[kept], y[kept], num_bins=15, tace_threshold=0.01, weights=scale * w[kept])
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-14), (key, scale)
    # one value for every row (every edge in one code) and a single row
    for q, lab, ww in (
        (np.full((7, 2), 0.5), np.arange(7) % 2, np.arange(1.0, 8.0)),
        (p[:1], y[:1], w[:1] + 1),
    ):
        idx = np.repeat(np.arange(len(ww)), ww.astype(int))
        want = calibration_errors(q[idx], lab[idx])
        got = calibration_errors(q, lab, weights=ww)
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-14, nan_ok=True), key


def test_drop_zero_is_the_one_rule_of_rows_of_weight_0():
    """weights.drop_zero: every row set (a prediction, an array, None) loses the same rows of weight 0, the count
    is theirs, and nothing is copied without a weight 0."""
    from uqeval.predictions import Gaussian
    from uqeval.weights import drop_zero

    pred = Gaussian(np.arange(5.0), np.ones(5), y_true=np.arange(5.0) + 0.5)
    groups = np.array(list("abcde"), dtype=object)
    w, (p, g, none), dropped = drop_zero(np.array([1.0, 0.0, 2.0, 0.0, 3.0]), pred, groups, None)
    assert w.tolist() == [1.0, 2.0, 3.0] and dropped == 2 and none is None
    assert p.row_numbers().tolist() == [0, 2, 4] and g.tolist() == ["a", "c", "e"]
    w, (p, g), dropped = drop_zero(np.ones(5), pred, groups)
    assert dropped == 0 and p is pred and g is groups
    w, (p,), dropped = drop_zero(np.zeros(5), pred)
    assert w.size == 0 and p.n == 0 and dropped == 5
