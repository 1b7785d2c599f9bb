"""``compare --weights`` / ``uqeval.compare(weights=)`` (issue 25): weights of 1 (any constant) give the
unweighted comparison bit for bit; weights of 0 are dropped rows; integer weights give the point estimates of
the repeated rows; the bootstrap replicates are the metrics' resamplers at Poisson (cluster, block) counts
times the weights; the paired tests run on w_i d_i / mean(w)."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.catalogue import METRICS, RowStat, rows
from uqeval.cli import app
from uqeval.commands.compare.core import (
    CompareOptions,
    Model,
    compare_models,
    poisson_bootstrap,
    sign_flip_tests,
)
from uqeval.config import Settings
from uqeval.errors import InputError, UsageError
from uqeval.resample import (
    Resampling,
    block_starts,
    circular_block_weights,
    poisson_weights,
    unit_weights,
)

runner = CliRunner()
N = 300
METRIC_NAMES = [
    "crps",
    "nll",
    "pinball",
    "interval",
    "avg_calibration.ma_cal",
    "accuracy.rmse",
    "accuracy.mdae",
]


def _models(n: int = N, seed: int = 0) -> list[Model]:
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    a = uqeval.Gaussian(y_true=y, mean=np.zeros(n), std=np.ones(n))
    b = uqeval.Gaussian(y_true=y, mean=rng.normal(0, 0.3, n), std=np.full(n, 1.4))
    return [Model("a", a), Model("b", b)]


def _compare(models, settings=None, **kw) -> dict:
    """:func:`compare_models` with the fields of :class:`CompareOptions` given as keywords."""
    fields = {f.name for f in dataclasses.fields(CompareOptions)}
    options = CompareOptions(**{k: kw.pop(k) for k in list(kw) if k in fields})
    return compare_models(models, settings, options, **kw)


def _run(models, **kw) -> dict:
    kw = {"metrics": METRIC_NAMES, "n_boot": 50, "n_permutations": 99, **kw}
    return json.loads(json.dumps(_compare(models, **kw), default=str))


def _without(doc: dict, *keys: str) -> dict:
    return {k: v for k, v in doc.items() if k not in keys}


@pytest.mark.parametrize(
    "resampling",
    [
        {},
        {"resampling": Resampling(block_size=7)},
        {"resampling": Resampling("site"), "clusters": np.arange(N) // 10},
    ],
)
@pytest.mark.parametrize("value", [1.0, 2.5])
def test_constant_weights_are_the_unweighted_comparison_bit_for_bit(resampling, value):
    models = _models()
    plain = _run(models, **resampling)
    weighted = _run(models, weights=np.full(N, value), **resampling)
    assert weighted["weights"] == {"column": None, "sum": value * N, "n_zero": 0, "not_weighted": {}}
    assert _without(weighted, "weights") == plain  # estimates, intervals, p-values: every bit


@pytest.mark.parametrize("clustered", [False, True])
def test_zero_weights_are_dropped_rows(clustered):
    models = _models()
    w = (np.arange(N) % 4 != 0).astype(float)
    cluster = np.arange(N) // 10
    kept = [Model(m.name, m.prediction.subset(w > 0)) for m in models]
    by_site = {"resampling": Resampling("site")} if clustered else {}
    dropped = _run(kept, **by_site, **({"clusters": cluster[w > 0]} if clustered else {}))
    weighted = _run(models, weights=w, **by_site, **({"clusters": cluster} if clustered else {}))
    assert weighted["weights"]["n_zero"] == int((w == 0).sum()) and weighted["n_rows"] == N
    assert any("weight 0 were dropped" in note for note in weighted["notes"])
    assert _without(weighted, "weights", "notes", "n_rows") == _without(dropped, "notes", "n_rows")


def test_integer_weights_give_the_estimates_of_repeated_rows():
    models = _models()
    w = np.random.default_rng(3).integers(0, 4, N).astype(float)
    assert len(set(w.tolist())) == 4
    repeated = np.repeat(np.arange(N), w.astype(int))
    rep = _run([Model(m.name, m.prediction.subset(repeated)) for m in models], n_boot=0)
    weighted = _run(models, weights=w, n_boot=0)
    assert list(weighted["metrics"]) == METRIC_NAMES
    for name in METRIC_NAMES:
        for model in ("a", "b"):
            got = weighted["metrics"][name]["values"][model]["estimate"]
            want = rep["metrics"][name]["values"][model]["estimate"]
            assert got == pytest.approx(want, rel=1e-12, abs=1e-14), (name, model)
    for t, u in zip(weighted["tests"], rep["tests"]):
        assert t["mean_diff"] == pytest.approx(u["mean_diff"], rel=1e-12)
    # the intervals move with the weights: not the repeated rows' bootstrap (it would resample copies)
    weighted = _run(models, weights=w)
    assert (
        weighted["metrics"]["crps"]["values"]["a"]["low"] < weighted["metrics"]["crps"]["values"]["a"]["high"]
    )


def _stats(pred) -> list[RowStat]:
    s = Settings()
    out = [
        rows(METRICS[p], pred, s) for p in ("scoring_rule.crps", "avg_calibration.ma_cal", "accuracy.mdae")
    ]
    assert all(st is not None for st in out)
    assert out[1].codes is not None and out[2].sums_form is None  # a counts form and an order statistic
    return out


@pytest.mark.parametrize("how", ["rows", "clusters", "blocks"])
def test_bootstrap_replicates_are_the_resampler_at_counts_times_weights(how):
    pred = _models(n=250)[0].prediction
    stats = _stats(pred)
    n, reps, seed = pred.n, 40, 11
    w = np.random.default_rng(5).uniform(0.1, 3.0, n)
    units = np.arange(n) // 9 if how == "clusters" else None
    size = 6 if how == "blocks" else None
    got = poisson_bootstrap(stats, n, reps, seed, units, size, weights=w)
    if how == "rows":
        counts = poisson_weights(seed, 0, n, reps)
    elif how == "clusters":
        counts = unit_weights(seed, units, int(units.max()) + 1, 0, reps)
    else:
        counts = circular_block_weights(block_starts(seed, n, 6, 0, reps), n, 6)
    for st, g in zip(stats, got):
        want = st.resampler()(counts * w)
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-14)
    plain = poisson_bootstrap(stats, n, reps, seed, units, size)
    assert not np.allclose(got[0], plain[0])  # the weights do move the replicates


def test_paired_tests_run_on_weighted_differences():
    models = _models()
    w = np.random.default_rng(8).uniform(0.2, 2.0, N)
    doc = _run(models, metrics=["crps"], weights=w, n_permutations=199)
    (test,) = doc["tests"]
    sa = rows(METRICS["scoring_rule.crps"], models[0].prediction, Settings()).score
    sb = rows(METRICS["scoring_rule.crps"], models[1].prediction, Settings()).score
    d = (sb - sa) if test["model"] == "b" else (sa - sb)
    z = w / w.mean() * d
    assert test["mean_diff"] == pytest.approx(np.sum(w * d) / np.sum(w), rel=1e-12)
    # Diebold-Mariano at lag 0: the t statistic of the mean of z
    t = z.mean() / (z.std(ddof=1) / math.sqrt(N))
    assert test["dm_statistic"] == pytest.approx(t, rel=1e-9)
    # the sign flip on z, with the seed compare derives from the data
    from uqeval.resample import flip_seed, rows_key

    seed = flip_seed(0, rows_key([m.prediction for m in models]))
    assert test["permutation_p"] == pytest.approx(sign_flip_tests(z[:, None], 199, seed)[0], rel=1e-12)


def test_metrics_without_weights_are_refused_by_name():
    models = _models(n=60)
    with pytest.raises(InputError, match=r"adv_group_calibration\.ma_mean.*not computed with weights="):
        uqeval.compare(
            dict(a=models[0].prediction, b=models[1].prediction), metrics=["ma_mean"], weights=np.ones(60)
        )
    with pytest.raises(UsageError, match="murphy"):
        _compare(models, metrics=["crps"], settings=Settings(murphy=True), weights=np.ones(60))
    with pytest.raises(InputError, match="negative"):
        _compare(models, metrics=["crps"], weights=-np.ones(60))


def test_python_api_weights():
    models = _models(n=120)
    w = np.linspace(0.5, 2.0, 120)
    out = uqeval.compare(
        {"a": models[0].prediction, "b": models[1].prediction}, metrics=["crps"], weights=w, n_boot=20
    )
    s = np.sum(w * rows(METRICS["scoring_rule.crps"], models[0].prediction, Settings()).score) / w.sum()
    assert out["metrics"]["crps"]["values"]["a"]["estimate"] == pytest.approx(s, rel=1e-12)
    assert out["weights"]["sum"] == pytest.approx(w.sum())


def test_cli_reads_the_weights_from_the_first_file(tmp_path):
    import pandas as pd

    models = _models(n=80)
    w = np.random.default_rng(2).uniform(0, 2, 80)
    a, b = models[0].prediction, models[1].prediction
    pd.DataFrame({"y": a.y_true, "mu": a.mean, "sigma": a.std, "w": w}).to_csv(
        tmp_path / "a.csv", index=False
    )
    pd.DataFrame({"y": b.y_true, "mu": b.mean, "sigma": b.std}).to_csv(tmp_path / "b.csv", index=False)
    files = [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]
    res = runner.invoke(app, ["compare", *files, "--weights", "w", "-m", "crps", "-b", "20", "-f", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    api = uqeval.compare({"a": a, "b": b}, metrics=["crps"], weights=w, n_boot=20, n_permutations=5000)
    assert doc["weights"]["column"] == "w"
    assert doc["metrics"]["crps"]["values"]["a"]["estimate"] == pytest.approx(
        api["metrics"]["crps"]["values"]["a"]["estimate"], rel=1e-12
    )
    # streamed: the same estimate (tests/stream/test_compare_weights_stream.py compares every number)
    res = runner.invoke(
        app,
        ["compare", *files, "--weights", "w", "-m", "crps", "-b", "20", "-f", "json", "--engine", "stream"],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["metrics"]["crps"]["values"]["a"]["estimate"] == pytest.approx(
        doc["metrics"]["crps"]["values"]["a"]["estimate"], rel=1e-12
    )
    res = runner.invoke(app, ["compare", *files, "--weights", "w", "-m", "ma_mean", "-b", "20"])
    assert res.exit_code == 3 and "not computed with --weights" in res.output


def test_tables_say_the_rows_are_weighted():
    from uqeval.report.compare import rich_tables, to_markdown

    models = _models(n=60)
    doc = _compare(
        models, metrics=["crps"], n_boot=10, n_permutations=9, weights=np.ones(60), weights_column="w"
    )
    assert "weighted by `w`" in to_markdown(doc).splitlines()[0]
    assert "weighted by w" in str(rich_tables(doc)[0].title)
    plain = _compare(models, metrics=["crps"], n_boot=10, n_permutations=9)
    assert "weighted" not in to_markdown(plain)


@pytest.mark.parametrize(
    "kind,metrics",
    [
        ("categorical", ["ece", "mce", "sce", "ace", "tace", "rmsce", "brier_decomposition.reliability"]),
        ("gaussian", ["rs", "ence", "max_cal_err"]),
    ],
)
def test_metrics_weighted_by_their_kernels_equal_the_repeated_rows(kind, metrics):
    """A metric without a per-row form whose family's kernels take the weights (ECE-type errors, the Brier
    decomposition, RS, ENCE, ...) is compared with weights, without an interval: with integer weights it is
    the metric of the rows repeated that often (rows of weight 0 dropped)."""
    rng = np.random.default_rng(11)
    n = 400
    if kind == "categorical":
        y = rng.integers(0, 3, n)
        p = rng.dirichlet(np.ones(3), n)
        preds = [uqeval.Categorical(y_true=y, proba=p), uqeval.Categorical(y_true=y, proba=0.6 * p + 0.4 / 3)]
    else:
        preds = [m.prediction for m in _models(n=n, seed=3)]
    w = rng.integers(0, 4, n).astype(float)
    names = [m for m in metrics if m]
    weighted = uqeval.compare(dict(a=preds[0], b=preds[1]), metrics=names, weights=w, n_boot=20)
    idx = np.repeat(np.arange(n), w.astype(int))
    repeated = uqeval.compare(
        dict(a=preds[0].subset(idx), b=preds[1].subset(idx)), metrics=names, n_boot=0, n_permutations=0
    )
    assert list(weighted["metrics"]) == list(repeated["metrics"]) and len(weighted["metrics"]) >= len(names)
    assert weighted["weights"]["not_weighted"] == {}
    for metric, entry in weighted["metrics"].items():
        assert not entry["bootstrap"], metric
        for model, v in entry["values"].items():
            want = repeated["metrics"][metric]["values"][model]["estimate"]
            assert v["estimate"] == pytest.approx(want, rel=1e-9, abs=1e-12), (metric, model)
