"""Invariants every metric in the catalogue must satisfy (in the spirit of scikit-learn's test_common).

Most tests are parametrised over every catalogue entry x every representation it applies to
(``CASES``), on small seeded predictions generated here (``_columns``, N = 400 rows): a true model
(targets drawn from it) and degraded versions of it (regression: std x 2.5, std x 0.4, mean + 1;
classification: under-confident, over-confident and noisy probabilities), each with per-member
log-likelihoods so that the information criteria apply everywhere. Files are written once per
module and scored once per file (``Store``), so each case only compares numbers. The bundled sample
files are covered by a file-level test, the reduction table of docs/metrics/index.md by the last test.

Exemptions are listed next to the invariant they escape, with the reason.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import special, stats
from typer.testing import CliRunner

from uqeval.catalogue import (
    FAMILIES,
    METRICS,
    Metric,
    compute,
    compute_metrics,
    families_for,
    get_family,
    rows,
    target,
)
from uqeval.cli import app
from uqeval.config import make_settings
from uqeval.glossary import GLOSSARY, find_entry
from uqeval.io.load import load_predictions

from .conftest import SAMPLE, write_table

runner = CliRunner()

KINDS = (
    "gaussian",
    "point",
    "intervals",
    "quantiles",
    "samples",
    "categorical",
    "members",
    "dirichlet",
    "loglik",
    "multivariate",
)
REGRESSION = ("gaussian", "point", "intervals", "quantiles", "samples")
N, K, M_SAMPLES, M_MEMBERS, M_LOGLIK = 400, 4, 40, 5, 8
#: degraded versions of the true model, per representation
VARIANTS = {
    **{k: ("wide", "narrow", "shifted") for k in REGRESSION},
    "categorical": ("hot", "cold", "noisy"),
    "members": ("hot", "cold", "noisy"),
    "dirichlet": ("hot", "cold", "noisy"),
    "loglik": ("shifted",),
    "multivariate": ("wide", "narrow", "shifted"),
}
QUANTILE_LEVELS = (0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95)
INTERVAL_LEVELS = (0.5, 0.9)
# samples and Gaussians answer any level; the opt-in groups (Family.option) are on, so that every catalogue
# entry is exercised
SETTINGS = dict(
    levels=(0.5, 0.9),
    y_std=1.3,
    diagnostics=True,
    tw_threshold=(0.5, None),
    thresholds=(-0.5, 1.0),
    murphy=True,
)
FLAGS = [
    "--levels",
    "0.5,0.9",
    "--y-std",
    "1.3",
    "--diagnostics",
    "--tw-threshold",
    "0.5",
    "--threshold",
    "-0.5,1",
    "--murphy",
]

#: two bootstrap draws of the rows (compare's resampling is checked against them)
BOOT = np.random.default_rng(2).integers(0, N, size=(2, N))
#: the same resamples as row weights: row i counted BOOT_W[b, i] times
BOOT_W = np.stack([np.bincount(i, minlength=N) for i in BOOT]).astype(np.float64)

CASES = [pytest.param(m, kind, id=f"{m.path}-{kind}") for m in METRICS.values() for kind in m.representations]


def _cases(pred) -> list:
    return [c for c in CASES if pred(c.values[0], c.values[1])]


# --------------------------------------------------------------------------- data


def _rng() -> np.random.Generator:
    return np.random.default_rng(20261123)


def _regression_columns(kind: str, variant: str) -> dict:
    rng = _rng()
    mu = rng.normal(size=N)
    sd = rng.uniform(0.5, 1.5, N)
    y = mu + sd * rng.normal(size=N)
    # a quantile-matched ensemble of the model (members at the (j + 1/2)/M quantiles, shuffled per row): its
    # mean is the model's mean and its empirical quantiles the model's, so it does not add Monte-Carlo noise
    z_samples = rng.permuted(
        np.tile(stats.norm.ppf((np.arange(M_SAMPLES) + 0.5) / M_SAMPLES), (N, 1)), axis=1
    )
    z_loglik = rng.normal(size=(N, M_LOGLIK))
    m, s = mu, sd
    if variant == "wide":
        s = 2.5 * sd
    elif variant == "narrow":
        s = 0.4 * sd
    elif variant == "shifted":
        m = mu + 1.0
    cols: dict = {"y": y}
    if kind == "gaussian":
        cols.update(mu=m, sigma=s)
    elif kind == "point":
        cols.update(pred=m)
    elif kind == "intervals":
        cols["pred"] = m
        for lv in INTERVAL_LEVELS:
            z = stats.norm.ppf(0.5 + lv / 2)
            cols[f"lower_{lv}"], cols[f"upper_{lv}"] = m - z * s, m + z * s
    elif kind == "quantiles":
        for t in QUANTILE_LEVELS:
            cols[f"q_{t}"] = m + stats.norm.ppf(t) * s
    elif kind == "samples":
        for j in range(M_SAMPLES):
            cols[f"s_{j}"] = m + s * z_samples[:, j]
    # posterior-like members around the model: log p(y_i | member j)
    loglik = stats.norm.logpdf(y[:, None], m[:, None] + 0.3 * s[:, None] * z_loglik, s[:, None])
    cols.update({f"loglik_{j}": loglik[:, j] for j in range(M_LOGLIK)})
    if kind == "loglik":
        cols = {k: v for k, v in cols.items() if k.startswith("loglik_")}
    return cols


def _classification_columns(kind: str, variant: str) -> dict:
    rng = _rng()
    logits = 1.5 * rng.normal(size=(N, K))
    member_noise = 0.7 * rng.normal(size=(N, M_MEMBERS, K))
    noise = 2.0 * rng.normal(size=(N, K))
    u = rng.uniform(size=N)
    conc = rng.uniform(2.0, 30.0, N)
    loglik_noise = 0.3 * rng.normal(size=(N, M_LOGLIK, K))

    member_true = special.softmax(logits[:, None, :] + member_noise, axis=-1)
    p_true = member_true.mean(axis=1) if kind == "members" else special.softmax(logits, axis=-1)
    labels = (u[:, None] > np.cumsum(p_true, axis=1)[:, :-1]).sum(axis=1)  # drawn from the true model

    def degrade(lg: np.ndarray, axis: int = -1) -> np.ndarray:
        if variant == "hot":
            lg = lg / 3.0
        elif variant == "cold":
            lg = lg * 3.0
        elif variant == "noisy":
            lg = lg + (noise[:, None, :] if lg.ndim == 3 else noise)
        return special.softmax(lg, axis=axis)

    cols: dict = {"label": labels}
    if kind == "members":
        # mix every member towards the uniform (hot) or towards the one-hot of the mean's top class (cold):
        # the ensemble mean keeps its top class, as tempering does for a single classifier
        top = np.eye(K)[np.argmax(p_true, axis=1)][:, None, :]
        mp = {
            "hot": 0.4 * member_true + 0.6 / K,
            "cold": 0.4 * member_true + 0.6 * top,
            "true": member_true,
        }.get(variant)
        if mp is None:
            mp = degrade(logits[:, None, :] + member_noise)
        cols.update({f"m{j}_p_{k}": mp[:, j, k] for j in range(M_MEMBERS) for k in range(K)})
    else:
        p = degrade(logits)
        if kind == "categorical":
            cols.update({f"p_{k}": p[:, k] for k in range(K)})
        else:
            cols.update({f"alpha_{k}": conc * p[:, k] for k in range(K)})
    ll_members = np.log(degrade(logits[:, None, :] + loglik_noise))[np.arange(N), :, labels]
    cols.update({f"loglik_{j}": ll_members[:, j] for j in range(M_LOGLIK)})
    return cols


def _multivariate_columns(kind: str, variant: str) -> dict:
    """y_1..y_3 ~ N(mu, sd^2 I) per row and an ensemble of M_SAMPLES members m<j>_<k> of the model."""
    rng = _rng()
    mu = rng.normal(size=(N, 1)) + np.array([0.0, 0.5, -0.5])
    sd = rng.uniform(0.5, 1.5, (N, 1))
    y = mu + sd * rng.normal(size=(N, 3))
    z = rng.normal(size=(N, M_SAMPLES, 3))
    m, s = mu, {"wide": 2.5, "narrow": 0.4}.get(variant, 1.0) * sd
    if variant == "shifted":
        m = mu + 1.0
    x = m[:, None, :] + s[:, None, :] * z
    return {
        **{f"y_{k + 1}": y[:, k] for k in range(3)},
        **{f"m{j}_{k + 1}": x[:, j, k] for j in range(M_SAMPLES) for k in range(3)},
    }


def _columns(kind: str, variant: str) -> dict:
    if kind == "multivariate":
        return _multivariate_columns(kind, variant)
    return (_regression_columns if kind in (*REGRESSION, "loglik") else _classification_columns)(
        kind, variant
    )


def _values(result: dict, metric: Metric) -> dict[str, object]:
    """The metric's value(s) in a ``compute_metrics`` result: ``{level key or "": value}``."""
    group = result.get(metric.group)
    if group is None:
        return {}
    if metric.by_level:
        return {lv: body[metric.name] for lv, body in group.items() if metric.name in body}
    return {"": group[metric.name]} if metric.name in group else {}


def _leaves(value) -> np.ndarray:
    """Every number of a value (scalar, list, {level: number}, histogram dict), as floats."""
    if isinstance(value, dict):
        parts = [_leaves(v) for v in value.values()]
        return np.concatenate(parts) if parts else np.zeros(0)
    return np.ravel(np.asarray(value, dtype=float))


class Store:
    """Generated files, loaded predictions and their results, each made once."""

    def __init__(self, root):
        self.root = root
        self.settings = make_settings(**SETTINGS)
        self._cache: dict = {}

    def _once(self, key, make):
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]

    def file(self, kind: str, variant: str = "true"):
        return self._once(
            ("file", kind, variant),
            lambda: write_table(self.root / f"{kind}_{variant}.parquet", _columns(kind, variant)),
        )

    def pred(self, kind: str, variant: str = "true"):
        def make():
            p = load_predictions(self.file(kind, variant), self.settings).prediction
            assert p.kind == kind, (p.kind, kind)
            return p

        return self._once(("pred", kind, variant), make)

    def result(self, kind: str, variant: str = "true", rows_: str = "as is") -> dict:
        def make():
            p = self.pred(kind, variant)
            if rows_ == "permuted":
                p = p.subset(np.random.default_rng(1).permutation(p.n))
            elif rows_ == "doubled":
                p = p.subset(np.tile(np.arange(p.n), 2))
            elif rows_ == "members shuffled":  # the member axis of samples, ensembles and log-likelihoods
                rng = np.random.default_rng(3)
                changes = {"loglik": p.loglik[:, rng.permutation(M_LOGLIK)]} if p.loglik is not None else {}
                if kind == "samples":
                    changes["samples"] = p.samples[:, rng.permutation(M_SAMPLES)]
                if kind == "members":
                    changes["member_proba"] = p.member_proba[:, rng.permutation(M_MEMBERS), :]
                if kind == "multivariate":
                    changes["samples"] = p.samples[:, rng.permutation(M_SAMPLES), :]
                assert all(not np.array_equal(v, getattr(p, k)) for k, v in changes.items())
                p = replace(p, **changes)
            return compute_metrics(p, self.settings)[0]

        return self._once(("result", kind, variant, rows_), make)

    def resampled(self, kind: str, b: int, group: str) -> dict:
        """One family's result on the rows ``BOOT[b]`` of the true model."""
        sub = self._once(("boot", kind, b), lambda: self.pred(kind).subset(BOOT[b]))
        return self._once(("boot", kind, b, group), lambda: compute(get_family(group), sub, self.settings))

    def values(self, metric: Metric, kind: str, variant: str = "true", rows_: str = "as is") -> dict:
        found = _values(self.result(kind, variant, rows_), metric)
        assert found, f"{metric.path} missing from the {kind} result"
        return found

    def score_json(self, kind: str) -> dict:
        def make():
            out = self.root / f"{kind}_summary.json"
            r = runner.invoke(
                app, ["score", str(self.file(kind)), *FLAGS, "--format", "json", "--output", str(out)]
            )
            assert r.exit_code == 0, r.output
            return json.loads(out.read_text())

        return self._once(("score", kind), make)

    def check_json(self, kind: str) -> dict:
        """``uqeval check`` of the kind's summary with a rule on every scalar metric path it holds."""

        def make():
            summary = self.score_json(kind)
            paths = sorted(p for p, _ in scalar_paths(summary["metrics"]))
            rules = self.root / f"{kind}_rules.toml"
            rules.write_text(
                "require = ["
                + ", ".join(json.dumps(p) for p in paths)
                + "]\n\n[rules]\n"
                + "".join(f"{json.dumps(p)} = {{ max = 1e300 }}\n" for p in paths)
            )
            r = runner.invoke(
                app,
                ["check", str(self.root / f"{kind}_summary.json"), "--rules", str(rules), "--format", "json"],
            )
            assert r.exit_code == 0, r.output
            return json.loads(r.stdout)

        return self._once(("check", kind), make)

    def compare_json(self, kind: str, with_rows: bool = True) -> dict:
        """``uqeval compare`` of the true and the first degraded model on every (oriented) metric with a
        row form, or without one."""

        def make():
            names = [
                m.path
                for m in METRICS.values()
                if m.applies_to(kind) and m.orientation is not None and (m.rows_fn is not None) == with_rows
            ]
            r = runner.invoke(
                app,
                [
                    "compare",
                    str(self.file(kind)),
                    str(self.file(kind, VARIANTS[kind][0])),
                    "--names",
                    "true,degraded",
                    "--metrics",
                    ",".join(names),
                    *FLAGS,
                    "--bootstrap",
                    "40",
                    "--permutations",
                    "0",
                    "--format",
                    "json",
                ],
            )
            assert r.exit_code == 0, r.output
            return json.loads(r.stdout)

        return self._once(("compare", kind, with_rows), make)


def scalar_paths(tree, prefix=""):
    for k, v in tree.items():
        path = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            yield from scalar_paths(v, path)
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and v is not None:
            yield path, v


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return Store(tmp_path_factory.mktemp("catalogue_invariants"))


def _close(a, b, what, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(_leaves(a), _leaves(b), rtol=rtol, atol=atol, err_msg=what)


# --------------------------------------------------------------------------- 1. every entry is well formed


@pytest.mark.parametrize("metric,kind", CASES)
def test_entry_is_well_formed(metric, kind):
    assert metric.path == f"{metric.group}.{metric.name}" and METRICS[metric.path] is metric
    assert kind in KINDS and metric.applies_to(kind)
    assert metric.orientation_for(kind) in ("lower", "higher", "target", None)
    assert metric.reduction in ("mean", "moments", "counts", "order", "resampling", "curve", "histogram")
    # curves and histograms rank nothing, everything else is oriented or documented as descriptive
    if metric.reduction in ("curve", "histogram"):
        assert metric.orientation is None and metric.rows_fn is None
    if metric.orientation is None:
        assert metric.rows_fn is None, "a metric that ranks nothing needs no per-row form for compare"


# --------------------------------------------------------------------------- 2. finite on valid input


@pytest.mark.parametrize("metric,kind", CASES)
def test_finite_on_valid_input(store, metric, kind):
    for variant in ("true", *VARIANTS[kind]):
        for lv, v in store.values(metric, kind, variant).items():
            x = _leaves(v)
            assert x.size and np.isfinite(x).all(), (metric.path, kind, variant, lv, v)


# --------------------------------------------------------------------------- 3. row order does not matter

#: SPCE assigns its cross-fitting folds and bootstrap draws to rows by position: a permutation of
#: the rows is a different (equally valid) random draw, so its value moves by Monte-Carlo noise.
ORDER_DEPENDENT = {"spce.spce", "spce.ci_low", "spce.ci_high"}


@pytest.mark.parametrize("metric,kind", CASES)
def test_row_order_does_not_matter(store, metric, kind):
    a, b = store.values(metric, kind), store.values(metric, kind, rows_="permuted")
    assert a.keys() == b.keys()
    if metric.path in ORDER_DEPENDENT:
        # still close in squared units (theta = SPCE^2): the estimate, not the estimand, depends on the draw
        _close(_leaves(a) ** 2, _leaves(b) ** 2, metric.path, atol=0.01)
        return
    _close(a, b, f"{metric.path} on permuted {kind} rows")


def test_spce_is_really_order_dependent(store):
    """Keeps ORDER_DEPENDENT honest: drop the entry when SPCE stops depending on row order."""
    a = store.values(METRICS["spce.spce"], "categorical")[""]
    b = store.values(METRICS["spce.spce"], "categorical", rows_="permuted")[""]
    assert a != b


@pytest.mark.parametrize(
    "metric,kind",
    _cases(lambda m, k: k in ("samples", "members", "multivariate") or m.group == "information_criteria"),
)
def test_member_order_does_not_matter(store, metric, kind):
    """Ensemble members, samples and log-likelihood columns are exchangeable."""
    a, b = store.values(metric, kind), store.values(metric, kind, rows_="members shuffled")
    _close(a, b, f"{metric.path} with shuffled {kind} members")


# --------------------------------------------------------------------------- 4. duplicating every row

#: Standard errors shrink by sqrt(2) when every row counts twice: they describe the estimate's
#: precision, which depends on N by design (information_criteria.*_se are "moments").
DUPLICATION_EXEMPT = {
    "information_criteria.waic1_se",
    "information_criteria.waic2_se",
    "information_criteria.iscv_se",
}
MEAN_TYPE = ("mean", "moments", "counts")
#: Test statistics weigh evidence, which grows with N: Spiegelhalter's z is a sum over rows divided by the
#: root of another, so doubling every row multiplies it by sqrt(2) (and moves its p-value) exactly.
GROWS_WITH_N = {"calibration_tests.spiegelhalter_z": math.sqrt(2), "calibration_tests.spiegelhalter_p": None}


@pytest.mark.parametrize("metric,kind", _cases(lambda m, k: m.reduction in MEAN_TYPE))
def test_duplicating_every_row_leaves_mean_type_metrics_unchanged(store, metric, kind):
    a, b = store.values(metric, kind), store.values(metric, kind, rows_="doubled")
    if metric.path in GROWS_WITH_N:
        if GROWS_WITH_N[metric.path] is not None:
            _close(b, _leaves(a) * GROWS_WITH_N[metric.path], metric.path)
        return
    if metric.path in DUPLICATION_EXEMPT:
        # s/sqrt(n) with ddof 1: doubling the rows multiplies it by sqrt((n - 1)/(2n - 1)) exactly
        _close(b, _leaves(a) * math.sqrt((N - 1) / (2 * N - 1)), metric.path)
        return
    _close(a, b, f"{metric.path} on doubled {kind} rows")


# --------------------------------------------------------------------------- 5. a better forecast never scores worse

#: Descriptive quantities: smaller spread, narrower intervals or sets, lower entropies and member
#: (dis)agreement describe the forecast; an over-confident (narrow, cold) model "wins" on them. Standard
#: errors describe the precision of an estimate, not the model.
DESCRIPTIVE = {
    "sharpness.sharp",
    "sharpness.mean_std",
    "coverage.width",
    "coverage.width_norm",
    "prediction_sets.mean_size",
    "ensemble_uncertainty.total",
    "ensemble_uncertainty.aleatoric",
    "ensemble_uncertainty.epistemic",
    "ensemble_uncertainty.knowledge",
    "diversity.disagreement",
    "diversity.kl",
    "diversity.cosine_similarity",
    "diversity.double_fault",
    "information_criteria.waic1_se",
    "information_criteria.waic2_se",
    "information_criteria.iscv_se",
    "adv_group_calibration.ma_stderr",
    "adv_group_calibration.rms_stderr",
    # The smallest top-k set with mass >= level over-covers by construction (no randomisation): a calibrated
    # model's 50% sets hold the label ~70% of the time here, so an over-confident model lands nearer the level.
    "prediction_sets.coverage",
}


def _badness(metric: Metric, kind: str, lv: str, value) -> float:
    """A number that is larger for a worse value, in the metric's declared direction."""
    x = float(
        np.mean(_leaves(value))
    )  # curves per group size: their mean; per-level dicts: checked per level
    o = metric.orientation_for(kind)
    if o == "lower":
        return x
    if o == "higher":
        return -x
    t = target(metric.group, metric.name, float(lv) if lv else None)
    assert t is not None, (metric.path, lv)
    return abs(x - t)


#: CORP discrimination is the information in the forecast's ranking, which the isotonic recalibration keeps:
#: a mis-scaled forecast (wide, narrow, tempered) ranks rows almost as well as the true model, so its DSC can
#: exceed the true one by sampling noise (quantiles x 0.4: 0.0478 vs 0.0476). Its invariance under increasing
#: transformations is tested in tests/metrics/test_diagnostics.py.
RANKING_ONLY = {"corp.dsc"}


#: Conditional coverage of prediction sets inherits their over-coverage (see prediction_sets.coverage above):
#: a calibrated model's 50% sets are covered ~70% in every stratum, an over-confident one lands nearer the level.
SETS_OVERCOVER = {
    "conditional_coverage.ssc_violation",
    "conditional_coverage.worst_stratum_coverage",
    "conditional_coverage.worst_class_coverage",
}


@pytest.mark.parametrize(
    "metric,kind",
    _cases(
        lambda m, k: (
            m.orientation is not None
            and m.path not in DESCRIPTIVE
            and m.path not in RANKING_ONLY
            and not (m.path in SETS_OVERCOVER and k not in REGRESSION)
        )
    ),
)
def test_true_model_never_scores_worse_than_a_degraded_one(store, metric, kind):
    truth = store.values(metric, kind)
    for variant in VARIANTS[kind]:
        degraded = store.values(metric, kind, variant)
        for lv, v in truth.items():
            parts = v.items() if isinstance(v, dict) else [(lv, v)]  # pinball/interval score per level
            for sub, x in parts:
                good = _badness(metric, kind, lv, x)
                bad = _badness(metric, kind, lv, degraded[lv][sub] if isinstance(v, dict) else degraded[lv])
                assert good <= bad + 1e-9 * max(1.0, abs(bad)), (metric.path, kind, variant, lv, sub, x)


# --------------------------------------------------------------------------- 6/7. per-row forms agree with the summary


def _row_stats(store, metric: Metric, kind: str):
    pred = store.pred(kind)
    levels = list(store.values(metric, kind))
    return {lv: rows(metric, pred, store.settings, lv or None) for lv in levels}


ROW_CASES = _cases(lambda m, k: m.rows_fn is not None)


@pytest.mark.parametrize("metric,kind", ROW_CASES)
def test_every_row_form_is_there(store, metric, kind):
    for lv, stat in _row_stats(store, metric, kind).items():
        assert stat is not None and stat.resampler() is not None, (metric.path, kind, lv)


@pytest.mark.parametrize("metric,kind", ROW_CASES)
def test_per_row_mean_equals_the_summary(store, metric, kind):
    stats_ = _row_stats(store, metric, kind)
    with_score = {lv: s for lv, s in stats_.items() if s is not None and s.score is not None}
    for lv, stat in with_score.items():
        assert stat.score.shape == (N,)
        _close(stat.score.mean(), store.values(metric, kind)[lv], f"{metric.path} {kind} {lv}")


@pytest.mark.parametrize("metric,kind", ROW_CASES)
def test_unit_resampling_weights_equal_the_summary(store, metric, kind):
    for lv, stat in _row_stats(store, metric, kind).items():
        got = stat.resampler()(np.ones((1, N)))
        assert got.shape == (1,)
        _close(got[0], store.values(metric, kind)[lv], f"{metric.path} {kind} {lv}")


@pytest.mark.parametrize("metric,kind", ROW_CASES)
def test_a_resample_equals_the_metric_of_the_resampled_rows(store, metric, kind):
    """What compare's bootstrap relies on: the metric of weighted rows is the metric of the rows repeated
    as often as their weights say (``pred.subset(idx)``)."""
    for lv, stat in _row_stats(store, metric, kind).items():
        got = stat.resampler()(BOOT_W)
        for b in range(len(BOOT)):
            want = _values({metric.group: store.resampled(kind, b, metric.group)}, metric)[lv]
            _close(got[b], want, f"{metric.path} {kind} {lv} resample {b}")


# --------------------------------------------------------------------------- 8. explain


@pytest.mark.parametrize("metric", METRICS.values(), ids=list(METRICS))
def test_every_metric_has_its_own_glossary_entry_and_explain_text(metric):
    found = find_entry(metric.path)
    assert found is not None and found[0] == metric.path, (metric.path, found and found[0])
    assert metric.explanation is GLOSSARY[metric.path]
    r = runner.invoke(app, ["explain", metric.path])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"{metric.path} — {GLOSSARY[metric.path]['title']}\n")
    assert "Formula: " in r.stdout and "Reference: " in r.stdout


# --------------------------------------------------------------------------- 9. score's JSON orientation


@pytest.mark.parametrize("kind", KINDS)
def test_score_json_orientation_is_the_catalogues(store, kind):
    summary = store.score_json(kind)
    want = {}
    for m in METRICS.values():
        if m.applies_to(kind) and m.orientation_for(kind) is not None and _values(summary["metrics"], m):
            want[m.path] = m.orientation_for(kind)
    assert summary["orientation"] == want


@pytest.mark.parametrize("metric,kind", CASES)
def test_metric_in_score_json_with_its_orientation(store, metric, kind):
    summary = store.score_json(kind)
    values = _values(summary["metrics"], metric)
    assert values, f"{metric.path} missing from `uqeval score` on {kind}"
    _close(values, store.values(metric, kind), metric.path)
    assert summary["orientation"].get(metric.path) == metric.orientation_for(kind)  # None: absent


# --------------------------------------------------------------------------- 10. family results hold catalogue entries only


@pytest.mark.parametrize("kind", KINDS)
def test_family_results_are_exactly_the_catalogue_entries(store, kind):
    result = store.result(kind)
    assert set(result) == {f.name for f in families_for(kind)}
    for family in families_for(kind):
        body = result[family.name]
        keys = set().union(*(v.keys() for v in body.values())) if family.by_level else set(body)
        assert keys == {m.name for m in family.metrics if m.applies_to(kind)}, family.name


# --------------------------------------------------------------------------- 11. check accepts every scalar path


@pytest.mark.parametrize("metric,kind", _cases(lambda m, k: m.orientation is not None))
def test_check_accepts_the_path(store, metric, kind):
    summary = store.score_json(kind)
    paths = [
        p
        for p, _ in scalar_paths({metric.group: summary["metrics"][metric.group]})
        if p.split(".")[0] == metric.group
        and (p.split(".")[-1] == metric.name or f".{metric.name}." in f"{p}.")
    ]
    if metric.path in NOT_SCALAR and metric.path.startswith("adv_group_calibration."):
        assert not paths  # curves over group sizes (lists): not a scalar for a rule
        return
    assert paths, metric.path
    report = store.check_json(kind)
    assert report["passed"] is True
    by_path: dict = {}
    for c in report["rows"]:
        by_path.setdefault(c["path"], []).append(c)
    for p in paths:
        assert sorted((c["check"], c["status"]) for c in by_path[p]) == [
            ("max", "PASS"),
            ("require", "PASS"),
        ], p


# --------------------------------------------------------------------------- 12. compare accepts metrics with a row form


@pytest.mark.parametrize("metric,kind", ROW_CASES)
def test_compare_accepts_it_with_a_bootstrap_interval(store, metric, kind):
    out = store.compare_json(kind)
    per_row = {"scoring_rule.crps": "crps", "scoring_rule.nll": "nll", "scoring_rule.check": "check"}
    if metric.path in per_row:
        keys = [per_row[metric.path]]
    elif metric.by_level:
        keys = [f"{metric.group}.{lv}.{metric.name}" for lv in store.values(metric, kind)]
    else:
        keys = [metric.path]
    summary = store.values(metric, kind)
    for key, lv in zip(keys, summary):
        body = out["metrics"][key]
        assert body["bootstrap"], key
        v = body["values"]["true"]
        assert v["estimate"] == pytest.approx(float(summary[lv]), rel=1e-9, abs=1e-12)
        assert v["low"] <= v["estimate"] <= v["high"] and v["low"] < v["high"], (key, v)


#: oriented metrics whose value is not one number: curves over group sizes and per-level dicts (compare
#: has no scalar estimate for them; scoring_rule.pinball/interval are their per-row comparable forms)
NOT_SCALAR = {
    "adv_group_calibration.ma_mean",
    "adv_group_calibration.ma_stderr",
    "adv_group_calibration.rms_mean",
    "adv_group_calibration.rms_stderr",
    "scoring_rule.pinball_by_level",
    "scoring_rule.interval_by_level",
}


@pytest.mark.parametrize(
    "metric,kind",
    _cases(lambda m, k: m.orientation is not None and m.rows_fn is None and m.path not in NOT_SCALAR),
)
def test_compare_shows_the_other_metrics_without_an_interval(store, metric, kind):
    """Metrics without a cheap row form are compared by their estimate, with a note instead of an interval."""
    out = store.compare_json(kind, with_rows=False)
    # a keyed metric (corp: one decomposition per score) is compared under each key's full path
    keys = {
        (f"{metric.group}.{k}.{metric.name}" if metric.by_level else metric.path): v
        for k, v in store.values(metric, kind).items()
    }
    for path, value in keys.items():
        body = out["metrics"][path]
        assert body["bootstrap"] is False
        assert body["values"]["true"]["estimate"] == pytest.approx(value, rel=1e-9)
        assert any(n.startswith(f"{path}: reported without a bootstrap interval") for n in out["notes"])


# --------------------------------------------------------------------------- the bundled sample files

FILES = [
    "gaussian.parquet",
    "point.csv",
    "intervals.parquet",
    "intervals_multi.csv",
    "quantiles.parquet",
    "samples.parquet",
    "classification.parquet",
    "ensemble_classification.parquet",
    "dirichlet.parquet",
    "loglik.parquet",
]


@pytest.mark.parametrize("name", FILES)
def test_sample_files_row_order_and_orientation(name):
    settings = make_settings()
    pred = load_predictions(SAMPLE / name, settings).prediction
    perm = np.random.default_rng(0).permutation(pred.n)
    a, orientation = compute_metrics(pred, settings)
    b, _ = compute_metrics(pred.subset(perm), settings)
    assert a.keys() == b.keys()
    for m in METRICS.values():
        va, vb = _values(a, m), _values(b, m)
        assert va.keys() == vb.keys(), m.path
        for lv, v in va.items():
            assert np.isfinite(_leaves(v)).all(), (name, m.path, lv)
        if va and m.path not in ORDER_DEPENDENT:
            _close(va, vb, f"{name}: {m.path}")
        assert orientation.get(m.path) == (m.orientation_for(pred.kind) if va else None), (name, m.path)


def test_every_group_declares_known_orientations():
    for g in FAMILIES:
        assert g.compute, g.name
        for m in g.metrics:
            assert m.orientation in ("lower", "higher", "target", None), (g.name, m.name)


def test_every_target_metric_declares_its_target():
    """A ``"target"``-oriented metric says what it aims at in its entry (``Metric.target``: a number, or a rule
    of the nominal level), which compare's ranks, check's rules and explain read; an entry without one would
    be ranked against 0. The other orientations declare none."""
    for m in METRICS.values():
        aims = "target" in (m.orientation, *m.orientation_by_kind.values())
        assert (m.target is not None) == aims, m.path
        if aims:
            assert m.target_at(0.9) is not None and m.target_text, m.path
            assert target(m.group, m.name, 0.9) == m.target_at(0.9), m.path


# --------------------------------------------------------------------------- the docs' reduction table


def test_readme_reduction_table_is_the_catalogues():
    import importlib.util

    from .conftest import ROOT

    spec = importlib.util.spec_from_file_location(
        "reduction_table", ROOT / "benchmarks" / "reduction_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert {m.reduction for m in METRICS.values()} <= set(module.KINDS)  # no metric left out of the table
    page = module.PAGE.read_text(encoding="utf-8")
    assert module.table() in page, "docs table out of date: python benchmarks/reduction_table.py --write"
    listed = page[page.index(module.BEGIN) : page.index(module.END)]
    for m in METRICS.values():
        row = next(line for line in listed.splitlines() if f"`{m.path}`" in line)
        assert f"(`{m.reduction}`)" in row, m.path
