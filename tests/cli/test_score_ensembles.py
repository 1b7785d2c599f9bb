"""`uqeval score` on ensembles, Dirichlet outputs and log-likelihoods: golden JSON, --per-row, closed forms.

The golden numbers were produced by this code; the kernels behind them are checked in
tests/metrics/test_ensembles.py (closed forms, naive formulas, Uncertainty Metrics values).
Regenerate after an intended change with
UQEVAL_UPDATE_GOLDEN=1 python -m pytest tests/cli/test_score_ensembles.py
"""

import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings as hsettings, strategies as st
from typer.testing import CliRunner

from uqeval.catalogue import METRICS, compute_metrics
from uqeval.cli import app
from uqeval.config import make_settings
from uqeval.predictions import Categorical, MemberCategorical

from ..conftest import ROOT, assert_tree_close, check_golden, write_table
from .test_score_golden import _strip

runner = CliRunner()

CASES = {
    "ensemble_classification": ["sample_data/ensemble_classification.parquet"],
    "ensemble_by_shift": ["sample_data/ensemble_classification.parquet", "--by", "shift"],
    "dirichlet": ["sample_data/dirichlet.parquet"],
    "loglik": ["sample_data/loglik.parquet"],
}
CLASSIFICATION_GROUPS = [
    "accuracy",
    "brier_decomposition",
    "calibration",
    "prediction_sets",
    "rejection",
    "bayesian_ece",
    "spce",
]


def _run(args, tmp_path, code=0):
    out = tmp_path / "s.json"
    result = runner.invoke(app, ["score", *map(str, args), "--format", "json", "--output", str(out)])
    assert result.exit_code == code, result.output
    if code:
        return result
    printed = json.loads(result.stdout)
    assert json.loads(out.read_text()) == printed
    return printed


def _members_file(path, p, labels, loglik=None):
    _, m, k = p.shape
    cols = {"label": labels, **{f"m{j}_p_{c}": p[:, j, c] for j in range(m) for c in range(k)}}
    if loglik is not None:
        cols.update({f"loglik_{j}": loglik[:, j] for j in range(loglik.shape[1])})
    return write_table(path, cols)


def _random_members(seed, n=200, m=4, k=3):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(k, 0.7), size=(n, m))
    labels = rng.integers(0, k, n)
    return p, labels


# --------------------------------------------------------------------------- golden
@pytest.mark.parametrize("case", sorted(CASES))
def test_score_matches_golden(case, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    check_golden(f"score_{case}", _strip(_run(CASES[case], tmp_path)))


def test_groups_and_orientation_per_representation(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    s = _run(CASES["ensemble_classification"], tmp_path)
    assert s["input"]["representation"] == "members"
    assert list(s["metrics"]) == [
        *CLASSIFICATION_GROUPS[:4],
        "ensemble_uncertainty",
        "information_criteria",
        "diversity",
        *CLASSIFICATION_GROUPS[4:],
    ]
    for group, body in s["metrics"].items():
        for key, value in body.items():
            keys = value.keys() if group == "prediction_sets" else [key]
            for k in keys:
                if METRICS[f"{group}.{k}"].orientation is None:  # data, curves and descriptive values
                    assert f"{group}.{k}" not in s["orientation"]
                else:
                    assert s["orientation"][f"{group}.{k}"] in ("lower", "higher", "target"), (group, k)
    assert s["orientation"]["rejection.auc_rejection"] == "higher"
    assert s["orientation"]["information_criteria.waic1"] == "higher"
    d = _run(CASES["dirichlet"], tmp_path)
    assert set(d["metrics"]) == {*CLASSIFICATION_GROUPS, "ensemble_uncertainty"}
    assert (
        d["metrics"]["ensemble_uncertainty"]["knowledge"] == d["metrics"]["ensemble_uncertainty"]["epistemic"]
    )
    ll = _run(CASES["loglik"], tmp_path)
    assert list(ll["metrics"]) == ["information_criteria"] and ll["input"]["representation"] == "loglik"


def test_plain_classifier_gets_rejection_bayesian_ece_and_spce(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    s = _run(["sample_data/classification.parquet"], tmp_path)["metrics"]
    assert {"rejection", "bayesian_ece", "spce"} <= set(s)
    assert not {"ensemble_uncertainty", "diversity", "information_criteria"} & set(s)
    rej = s["rejection"]
    assert rej["values"][0] == pytest.approx(
        s["accuracy"]["accuracy"], rel=1e-12
    )  # nothing rejected at f = 0
    assert len(rej["fractions"]) == len(rej["values"]) == len(rej["oracle_values"]) == 100
    assert rej["auc_oracle"] >= rej["auc_rejection"]
    b = s["bayesian_ece"]
    assert b["q10"] <= b["q50"] <= b["q90"]
    assert s["spce"]["ci_low"] <= s["spce"]["spce"] <= s["spce"]["ci_high"]


def test_samples_rejection_is_rmse_and_lower_is_better(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    s = _run(["sample_data/samples.parquet"], tmp_path)
    rej = s["metrics"]["rejection"]
    assert rej["values"][0] == pytest.approx(s["metrics"]["accuracy"]["rmse"], rel=1e-12)
    assert "oracle_collaborative_accuracy" not in rej
    assert rej["auc_oracle"] <= rej["auc_rejection"]  # the oracle rejects the largest errors first
    for key in ("auc_rejection", "auc_oracle"):
        assert s["orientation"][f"rejection.{key}"] == "lower"
    assert "rejection.values" not in s["orientation"]  # curves carry no orientation


def test_samples_with_loglik_get_information_criteria(tmp_path):
    rng = np.random.default_rng(3)
    n, m = 300, 8
    y = rng.normal(size=n)
    s = y[:, None] + rng.normal(size=(n, m))
    ll = -0.5 * (y[:, None] - s) ** 2 - 0.5 * math.log(2 * math.pi)
    cols = {"y": y, **{f"s_{j}": s[:, j] for j in range(m)}, **{f"loglik_{j}": ll[:, j] for j in range(m)}}
    out = _run([write_table(tmp_path / "s.parquet", cols)], tmp_path)
    ic = out["metrics"]["information_criteria"]
    lpd = np.log(np.exp(ll).mean(axis=1))  # naive: no log-sum-exp
    assert ic["waic2"] == pytest.approx(float(np.mean(2 * ll.mean(axis=1) - lpd)), rel=1e-12)
    assert ic["waic1"] == pytest.approx(float(np.mean(lpd - ll.var(axis=1, ddof=1))), rel=1e-12)
    assert ic["iscv"] == pytest.approx(float(np.mean(-np.log(np.exp(-ll).mean(axis=1)))), rel=1e-12)


# --------------------------------------------------------------------------- closed forms, end to end
def test_identical_members_have_no_epistemic_uncertainty_and_score_like_one_model(tmp_path):
    rng = np.random.default_rng(4)
    n, m, k = 300, 5, 3
    one = rng.dirichlet(np.ones(k), size=n)
    labels = rng.integers(0, k, n)
    ens = _run(
        [_members_file(tmp_path / "e.parquet", np.repeat(one[:, None, :], m, axis=1), labels)], tmp_path
    )
    single = _run(
        [write_table(tmp_path / "c.parquet", {"label": labels, **{f"p_{c}": one[:, c] for c in range(k)}})],
        tmp_path,
    )
    u = ens["metrics"]["ensemble_uncertainty"]
    assert u["epistemic"] == pytest.approx(0.0, abs=1e-12)
    assert u["total"] == pytest.approx(u["aleatoric"], rel=1e-12)
    entropy = -np.sum(one * np.log(one), axis=1).mean()
    assert u["total"] == pytest.approx(entropy, rel=1e-12)
    div = ens["metrics"]["diversity"]
    assert div["disagreement"] == 0.0 and div["kl"] == pytest.approx(0.0, abs=1e-12)
    assert div["cosine_similarity"] == pytest.approx(1.0, rel=1e-12)
    for group in CLASSIFICATION_GROUPS:  # the ensemble mean is scored exactly like a single classifier
        assert_tree_close(ens["metrics"][group], single["metrics"][group])


def test_one_hot_members_have_no_aleatoric_uncertainty(tmp_path):
    rng = np.random.default_rng(5)
    n, m, k = 200, 4, 3
    votes = rng.integers(0, k, (n, m))
    p = np.eye(k)[votes]
    out = _run([_members_file(tmp_path / "e.parquet", p, rng.integers(0, k, n))], tmp_path, 0)
    u = out["metrics"]["ensemble_uncertainty"]
    assert u["aleatoric"] == 0.0
    share = p.mean(axis=1)
    entropy = -np.sum(np.where(share > 0, share * np.log(np.where(share > 0, share, 1)), 0), axis=1).mean()
    assert u["epistemic"] == pytest.approx(entropy, rel=1e-12) and u["total"] == pytest.approx(
        entropy, rel=1e-12
    )


def test_dirichlet_mean_is_scored_as_categorical(tmp_path):
    rng = np.random.default_rng(6)
    n, k = 300, 3
    alpha = rng.gamma(2.0, 2.0, (n, k)) + 0.05
    labels = rng.integers(0, k, n)
    d = _run(
        [
            write_table(
                tmp_path / "d.parquet", {"label": labels, **{f"alpha_{c}": alpha[:, c] for c in range(k)}}
            )
        ],
        tmp_path,
    )
    mean = alpha / alpha.sum(1, keepdims=True)
    c = _run(
        [write_table(tmp_path / "c.parquet", {"label": labels, **{f"p_{j}": mean[:, j] for j in range(k)}})],
        tmp_path,
    )
    for group in CLASSIFICATION_GROUPS:
        assert_tree_close(d["metrics"][group], c["metrics"][group])
    assert d["metrics"]["ensemble_uncertainty"]["total"] == pytest.approx(
        -np.sum(mean * np.log(mean), 1).mean()
    )


# --------------------------------------------------------------------------- --per-row
def test_per_row_file_matches_the_summary(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "rows.parquet"
    s = _run(["sample_data/ensemble_classification.parquet", "--per-row", out], tmp_path)
    table = pq.read_table(out)
    assert table.column_names == ["row", "total", "aleatoric", "epistemic"] and table.num_rows == 2000
    np.testing.assert_array_equal(table.column("row").to_numpy(), np.arange(2000))
    for key in ("total", "aleatoric", "epistemic"):
        assert table.column(key).to_numpy().mean() == pytest.approx(
            s["metrics"]["ensemble_uncertainty"][key], rel=1e-12
        )
    tot, ale, epi = (table.column(k).to_numpy() for k in ("total", "aleatoric", "epistemic"))
    np.testing.assert_allclose(tot - ale, epi, atol=1e-12)
    assert (epi >= 0).all()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.parquet", "s.json"]  # no temporary files left


def test_per_row_keeps_original_row_numbers_after_omit(tmp_path):
    p, labels = _random_members(7, n=50)
    p[[4, 9], 0, 0] = np.nan
    out = tmp_path / "rows.parquet"
    _run(
        [_members_file(tmp_path / "e.parquet", p, labels), "--nan-policy", "omit", "--per-row", out], tmp_path
    )
    rows = pq.read_table(out).column("row").to_numpy()
    np.testing.assert_array_equal(rows, np.setdiff1d(np.arange(50), [4, 9]))


def test_per_row_dirichlet(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "rows.parquet"
    s = _run(["sample_data/dirichlet.parquet", "--per-row", out], tmp_path)
    assert pq.read_table(out).column("epistemic").to_numpy().mean() == pytest.approx(
        s["metrics"]["ensemble_uncertainty"]["knowledge"], rel=1e-12
    )


def test_per_row_errors_leave_nothing_behind(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "rows.parquet"
    r = runner.invoke(app, ["score", "sample_data/classification.parquet", "--per-row", str(out)])
    assert r.exit_code == 2 and "--per-row needs ensemble members" in r.output and "categorical" in r.output
    assert not out.exists()
    r = runner.invoke(
        app,
        [
            "score",
            "sample_data/ensemble_classification.parquet",
            "--per-row",
            str(tmp_path / "missing" / "rows.parquet"),
        ],
    )
    assert r.exit_code == 3 and "does not exist" in r.output
    r = runner.invoke(
        app,
        ["score", "sample_data/ensemble_classification.parquet", "--per-row", str(out), "--output", str(out)],
    )
    assert r.exit_code == 2 and "same file" in r.output
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- settings
def test_oca_fraction_and_bayes_samples_flags(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    base = _run(["sample_data/ensemble_classification.parquet"], tmp_path)
    assert base["settings"]["oca_fraction"] == 0.01 and base["settings"]["bayes_samples"] == 500
    other = _run(
        ["sample_data/ensemble_classification.parquet", "--oca-fraction", "0.2", "--bayes-samples", "50"],
        tmp_path,
    )
    assert other["settings"]["oca_fraction"] == 0.2 and other["settings"]["bayes_samples"] == 50
    oca0, oca1 = (x["metrics"]["rejection"]["oracle_collaborative_accuracy"] for x in (base, other))
    assert oca1 > oca0 >= base["metrics"]["accuracy"]["accuracy"]
    assert other["metrics"]["bayesian_ece"] != base["metrics"]["bayesian_ece"]
    assert other["metrics"]["calibration"] == base["metrics"]["calibration"]
    cfg = tmp_path / "c.toml"
    cfg.write_text("[metrics]\noca_fraction = 0.2\nbayes_samples = 50\n")
    from_file = _run(["sample_data/ensemble_classification.parquet", "--config", cfg], tmp_path)
    assert from_file["metrics"] == other["metrics"]


@pytest.mark.parametrize(
    "args,match",
    [
        (["--oca-fraction", "1.5"], "oca_fraction"),
        (["--bayes-samples", "0"], "bayes_samples"),
    ],
)
def test_bad_settings_exit_2(args, match, monkeypatch, tmp_path):
    monkeypatch.chdir(
        ROOT
    )  # a bad flag value is a usage error (2); the same value in a config file is bad input (3)
    r = runner.invoke(app, ["score", "sample_data/ensemble_classification.parquet", *args])
    assert r.exit_code == 2 and match in r.output


def test_seed_changes_bayesian_ece_and_spce_only(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    a = _run(["sample_data/ensemble_classification.parquet", "--seed", "1"], tmp_path)["metrics"]
    b = _run(["sample_data/ensemble_classification.parquet", "--seed", "1"], tmp_path)["metrics"]
    c = _run(["sample_data/ensemble_classification.parquet", "--seed", "2"], tmp_path)["metrics"]
    assert a == b
    assert a["bayesian_ece"] != c["bayesian_ece"]
    for g in ("ensemble_uncertainty", "diversity", "rejection", "information_criteria", "calibration"):
        assert a[g] == c[g]


def test_csv_flat_and_parquet_list_of_lists_score_the_same(tmp_path):
    import pyarrow as pa

    p, labels = _random_members(8)
    flat = _run([_members_file(tmp_path / "e.csv", p, labels)], tmp_path)
    nested = pa.array(
        [[list(map(float, mm)) for mm in row] for row in p], type=pa.list_(pa.list_(pa.float64()))
    )
    pq.write_table(pa.table({"label": labels, "member_proba": nested}), tmp_path / "l.parquet")
    listed = _run([tmp_path / "l.parquet"], tmp_path)
    assert_tree_close(flat["metrics"], listed["metrics"])


# --------------------------------------------------------------------------- properties
@hsettings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(2, 5), k=st.integers(2, 4))
def test_member_order_does_not_matter(seed, m, k):
    rng = np.random.default_rng(seed)
    n = 40
    p = rng.dirichlet(np.full(k, 0.5), size=(n, m))
    labels = rng.integers(0, k, n).astype(float)
    ll = rng.normal(-1.0, 0.5, (n, m))
    perm = rng.permutation(m)
    s = make_settings(bayes_samples=20)
    a, _ = compute_metrics(MemberCategorical(y_true=labels, member_proba=p, loglik=ll), s)
    b, _ = compute_metrics(MemberCategorical(y_true=labels, member_proba=p[:, perm], loglik=ll[:, perm]), s)
    _approx_close(a, b)


def _approx_close(a, b):
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)
        for key in a:
            _approx_close(a[key], b[key])
    elif isinstance(a, (np.ndarray, list)):
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-9, atol=1e-12)
    else:
        assert a == pytest.approx(b, rel=1e-9, abs=1e-12) or (a != a and b != b)


def test_members_metrics_equal_their_mean_categorical():
    p, labels = _random_members(9)
    s = make_settings(bayes_samples=30)
    ens, _ = compute_metrics(MemberCategorical(y_true=labels.astype(float), member_proba=p), s)
    cat, _ = compute_metrics(Categorical(y_true=labels.astype(float), proba=p.mean(axis=1)), s)
    for group in CLASSIFICATION_GROUPS:
        _approx_close(ens[group], cat[group])
