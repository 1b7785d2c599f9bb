"""Skill scores against a reference forecast (issue 16, part B).

Reference values: ``scores`` 2.7.0 (crps_for_ensemble "ecdf", quantile_score, mse, mae, brier_score)
and scoringrules 0.10.0 (crps_normal, interval_score), frozen in
tests/reference/data/skill_expected.json by tests/reference/regen_skill.py, on statsmodels' yearly
sunspot numbers (an AR(1) Gaussian forecast; climatology and persistence references) and a simulated set.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval import evaluate, evaluate_file
from uqeval.cli import app
from uqeval.errors import InputError, UsageError
from uqeval.metrics.samples import crps_ensemble
from uqeval.metrics.skill import crps_empirical, skill_from_sums, skill_score
from uqeval.predictions import Gaussian
from uqeval.tasks.skill import reference_spec

from ..conftest import ROOT, SAMPLE, write_table

DATA = ROOT / "tests" / "reference" / "data"
EXPECTED = json.loads((DATA / "skill_expected.json").read_text())
runner = CliRunner()


def _score(*args: str) -> dict:
    r = runner.invoke(app, ["score", *map(str, args), "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _check(skill: dict, expected: dict) -> None:
    for k, v in expected.items():
        assert skill[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k


def test_sunspots_against_climatology():
    out = _score(
        DATA / "skill_sunspots.csv",
        "--reference",
        "climatology",
        "--train",
        DATA / "skill_sunspots_train.csv",
    )
    _check(out["metrics"]["skill"], EXPECTED["sunspots_climatology"])
    assert out["input"]["reference"] == {
        "kind": "climatology",
        "path": str(DATA / "skill_sunspots_train.csv"),
        "column": "y",
        "n_train": 200,
        "n_rows": 109,
    }
    assert all(out["orientation"][f"skill.{k}"] == "higher" for k in out["metrics"]["skill"])
    assert "nll" not in out["metrics"]["skill"]
    assert any("skill.nll not computed" in n for n in out["notes"])


def test_sunspots_against_persistence():
    out = _score(DATA / "skill_sunspots.csv", "--reference", "persistence", "--time", "year")
    _check(out["metrics"]["skill"], EXPECTED["sunspots_persistence"])
    assert out["input"]["reference"] == {"kind": "persistence", "time": "year", "n_rows": 108}


def test_persistence_orders_rows_by_time(tmp_path):
    """Shuffled rows give the same skill: the previous row is the previous time, not the previous line."""
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(DATA / "skill_sunspots.csv")
    perm = np.random.default_rng(0).permutation(table.num_rows)
    shuffled = write_table(
        tmp_path / "shuffled.parquet", {c: table[c].to_numpy()[perm] for c in table.column_names}
    )
    out = _score(shuffled, "--reference", "persistence", "--time", "year")
    _check(out["metrics"]["skill"], EXPECTED["sunspots_persistence"])


def test_simulated_quantiles_against_a_gaussian_file_and_climatology(tmp_path):
    import pyarrow.csv as pacsv

    t = pacsv.read_csv(DATA / "skill_sim.csv")
    gauss = write_table(tmp_path / "gauss.parquet", {"y": t["y"], "mu": t["mu"], "sigma": t["sigma"]})
    quant = write_table(
        tmp_path / "quant.parquet", {c: t[c] for c in t.column_names if c not in ("mu", "sigma")}
    )
    out = _score(quant, "--reference", gauss)
    _check(out["metrics"]["skill"], EXPECTED["sim_vs_gaussian"])
    assert out["input"]["reference"]["representation"] == "gaussian"
    out = _score(quant, "--reference", "climatology", "--train", DATA / "skill_sim_train.csv")
    _check(out["metrics"]["skill"], EXPECTED["sim_vs_climatology"])
    out = _score(gauss, "--reference", "climatology", "--train", DATA / "skill_sim_train.csv")
    _check(out["metrics"]["skill"], EXPECTED["sim_gaussian_vs_climatology"])


def test_classifier_against_base_rates():
    out = _score(
        DATA / "skill_sim_cls.csv", "--reference", "climatology", "--train", DATA / "skill_sim_cls_train.csv"
    )
    _check(out["metrics"]["skill"], EXPECTED["sim_classifier_vs_base_rates"])
    assert out["input"]["reference"]["base_rates"][1] == pytest.approx(
        np.loadtxt(DATA / "skill_sim_cls_train.csv", skiprows=1).mean()
    )


@pytest.mark.parametrize(
    "name",
    [
        "gaussian.parquet",
        "quantiles.parquet",
        "samples.parquet",
        "intervals.parquet",
        "point.csv",
        "classification.parquet",
    ],
)
def test_reference_against_itself_is_zero(name):
    out = _score(SAMPLE / name, "--reference", SAMPLE / name)
    skill = out["metrics"]["skill"]
    assert skill and all(v == pytest.approx(0.0, abs=1e-12) for v in skill.values()), skill


def test_true_distribution_beats_climatology_in_simulation():
    rng = np.random.default_rng(11)
    n = 3000
    mu = rng.normal(0, 2, n)
    y = mu + rng.normal(size=n)
    train = rng.normal(0, 2, 5000) + rng.normal(size=5000)  # the same process: the marginal N(0, 5)
    s = evaluate(y, mean=mu, std=np.ones(n), reference="climatology", train=train)
    assert s["skill.crps"] > 0.3 and s["skill.mse"] > 0.6 and s["skill.pinball"] > 0.3
    # persistence of a series without memory is a poor reference: the true distribution beats it too
    s = evaluate(y, mean=mu, std=np.ones(n), reference="persistence", time=np.arange(n))
    assert s["skill.crps"] > 0.3


def test_climatology_crps_is_the_ensemble_crps_without_the_matrix():
    rng = np.random.default_rng(2)
    z, y = rng.normal(size=57), rng.normal(size=80) * 3
    z[5] = z[6]  # ties
    np.testing.assert_allclose(crps_empirical(y, z), crps_ensemble(y, np.tile(z, (y.size, 1))), rtol=1e-12)
    assert crps_empirical(np.array([2.0]), np.array([2.0]))[0] == 0.0  # one training value: absolute error


def test_skill_kernels():
    assert skill_score(np.array([1.0, 3.0]), np.array([4.0, 4.0])) == 0.5
    assert np.isnan(skill_score(np.array([1.0]), np.array([0.0])))
    s, r = np.array([1.0, 2.0, 0.0]), np.array([2.0, 2.0, 0.0])  # the 0 row is left out: ratio of sums
    assert skill_score(s, r) == pytest.approx(1 - 3 / 4)
    w = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])  # rows 0, 0, 1 and rows 2, 2, 2
    got = skill_from_sums(np.column_stack([w @ s, w @ r]))
    assert got[0] == pytest.approx(1 - 4 / 6) and np.isnan(got[1])


def test_reference_spec_usage_errors():
    with pytest.raises(UsageError, match="--train"):
        reference_spec("climatology")
    with pytest.raises(UsageError, match="--time"):
        reference_spec("persistence")
    with pytest.raises(UsageError, match="persistence"):
        reference_spec("model.csv", time="t")
    with pytest.raises(UsageError, match="persistence"):
        reference_spec(None, time="t")


def test_mismatched_reference_is_one_line_naming_both_files(tmp_path, gaussian_cols):
    a = write_table(tmp_path / "a.parquet", gaussian_cols)
    short = write_table(tmp_path / "short.parquet", {k: v[:-1] for k, v in gaussian_cols.items()})
    other = write_table(tmp_path / "other.parquet", {**gaussian_cols, "y": gaussian_cols["y"] + 1})
    for ref, what in ((short, "rows"), (other, "targets differ")):
        r = runner.invoke(app, ["score", str(a), "--reference", str(ref)])
        assert r.exit_code == 3
        lines = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
        assert len(lines) == 1 and what in lines[0] and str(a) in lines[0] and str(ref) in lines[0], r.output
    r = runner.invoke(app, ["score", str(a), "--reference", str(SAMPLE / "classification.parquet")])
    assert r.exit_code == 3 and "same kind of target" in r.output


def test_check_rule_on_skill_and_report(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"skill.crps" = { min = 0.2 }\n')
    args = ["--reference", "climatology", "--train", str(SAMPLE / "train.parquet")]
    r = runner.invoke(app, ["check", str(SAMPLE / "gaussian.parquet"), "--rules", str(rules), *args])
    assert r.exit_code == 0, r.output
    rules.write_text('[rules]\n"skill.crps" = { min = 0.9 }\n')
    r = runner.invoke(app, ["check", str(SAMPLE / "gaussian.parquet"), "--rules", str(rules), *args])
    assert r.exit_code == 1, r.output
    html = tmp_path / "r.html"
    r = runner.invoke(app, ["report", str(SAMPLE / "gaussian.parquet"), "--output", str(html), *args])
    assert r.exit_code == 0, r.output
    assert "skill" in html.read_text()


def test_compare_skill_shares_the_bootstrap_resamples():
    g, c = str(SAMPLE / "gaussian.parquet"), str(SAMPLE / "gaussian_const.parquet")
    r = runner.invoke(
        app,
        [
            "compare",
            g,
            c,
            "--reference",
            "climatology",
            "--train",
            str(SAMPLE / "train.parquet"),
            "--bootstrap",
            "200",
            "--permutations",
            "0",
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["reference"]["kind"] == "climatology"
    est = _score(g, "--reference", "climatology", "--train", SAMPLE / "train.parquet")["metrics"]["skill"]
    entry = out["skill"]["crps"]["gaussian"]
    assert entry["estimate"] == pytest.approx(est["crps"], rel=1e-12)
    assert entry["low"] < entry["estimate"] < entry["high"]
    # the same replicates as compare's metrics: Poisson weights (seed 0) over the model's and the reference's rows
    import pyarrow.parquet as pq

    from uqeval.io.load import load_predictions
    from uqeval.metrics.scoring import crps_gaussian

    p = load_predictions(g).prediction

    z = pq.read_table(SAMPLE / "train.parquet")["y"].to_numpy()
    from uqeval.resample import poisson_weights

    w = poisson_weights(0, 0, p.n, 200)
    reps = skill_from_sums(
        np.column_stack([w @ crps_gaussian(p.y_true, p.mean, p.std), w @ crps_empirical(p.y_true, z)])
    )
    lo, hi = np.quantile(reps, [0.025, 0.975])
    assert (entry["low"], entry["high"]) == pytest.approx((lo, hi), rel=1e-12)


def test_python_api_reference_forms():
    rng = np.random.default_rng(0)
    mu = rng.normal(size=200)
    y = mu + rng.normal(size=200)
    ref = Gaussian(y_true=y, mean=np.zeros(200), std=np.full(200, 2.0))
    s = evaluate(y, mean=mu, std=np.ones(200), reference=ref)
    assert s["skill.nll"] > 0 and s["skill.crps"] > 0
    assert json.loads(s.to_json())["input"]["reference"]["kind"] == "prediction"
    with pytest.raises(InputError, match="same targets"):
        evaluate(
            y, mean=mu, std=np.ones(200), reference=Gaussian(y_true=y[:-1], mean=mu[:-1], std=np.ones(199))
        )
    f = evaluate_file(SAMPLE / "gaussian.parquet", reference=str(SAMPLE / "gaussian_const.parquet"))
    assert "skill.crps" in f


def test_nan_policy_omit_keeps_the_reference_rows_the_model_kept(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.normal(size=50)
    mu = y + 0.5 * rng.normal(size=50)
    sd_model, sd_ref, sd_other = np.ones(50), np.full(50, 2.0), np.full(50, 2.0)
    sd_model[3] = np.nan
    sd_other[7] = np.nan
    a = write_table(tmp_path / "a.parquet", {"y": y, "mu": mu, "sigma": sd_model})
    ref = write_table(tmp_path / "ref.parquet", {"y": y, "mu": mu, "sigma": sd_ref})
    other = write_table(tmp_path / "other.parquet", {"y": y, "mu": mu, "sigma": sd_other})
    out = _score(a, "--reference", ref, "--nan-policy", "omit")
    keep = np.arange(50) != 3
    from uqeval.metrics.scoring import crps_gaussian

    expected = (
        1
        - crps_gaussian(y[keep], mu[keep], np.ones(49)).mean()
        / crps_gaussian(y[keep], mu[keep], np.full(49, 2.0)).mean()
    )
    assert out["metrics"]["skill"]["crps"] == pytest.approx(expected, rel=1e-12)
    r = runner.invoke(app, ["score", str(a), "--reference", str(other), "--nan-policy", "omit"])
    assert r.exit_code == 3 and "row 7" in r.output and "not among the 49 rows" in r.output


def test_a_skill_rule_without_a_reference_says_how_to_get_one(tmp_path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"skill.crps" = { min = 0.2 }\n')
    r = runner.invoke(app, ["check", str(SAMPLE / "gaussian.parquet"), "--rules", str(rules)])
    assert r.exit_code == 3 and "--reference" in r.output, r.output


def test_check_a_classifier_against_its_base_rates(tmp_path):
    """--train holds labels only: no target std for width_norm, which a classifier does not need."""
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"skill.brier" = { min = 0.1 }\n')
    r = runner.invoke(
        app,
        [
            "check",
            str(DATA / "skill_sim_cls.csv"),
            "--rules",
            str(rules),
            "--reference",
            "climatology",
            "--train",
            str(DATA / "skill_sim_cls_train.csv"),
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["rows"][0]["value"] == pytest.approx(
        EXPECTED["sim_classifier_vs_base_rates"]["brier"], rel=1e-9
    )


# --------------------------------------------------------------------------- --reference FILE --id COLUMN


def _id_files(tmp_path, n: int = 60):
    """A Gaussian model with ids 'k<i>', and a Gaussian reference holding the same rows shuffled."""
    rng = np.random.default_rng(3)
    y = rng.normal(size=n)
    mu = y + 0.5 * rng.normal(size=n)
    ids = np.array([f"k{i}" for i in range(n)])
    perm = rng.permutation(n)
    model = {"key": ids, "y": y, "mu": mu, "sigma": np.ones(n)}
    ref = {"key": ids[perm], "y": y[perm], "mu": np.zeros(n), "sigma": np.full(n, 2.0)}
    return model, ref, perm


def test_id_join_equals_the_row_by_row_skill(tmp_path):
    from uqeval.metrics.scoring import crps_gaussian

    model, ref, perm = _id_files(tmp_path)
    a = write_table(tmp_path / "a.parquet", model)
    shuffled = write_table(tmp_path / "ref.parquet", ref)
    out = _score(a, "--reference", shuffled, "--id", "key")
    y, mu = model["y"], model["mu"]
    expected = (
        1
        - crps_gaussian(y, mu, np.ones(y.size)).mean()
        / crps_gaussian(y, np.zeros(y.size), np.full(y.size, 2.0)).mean()
    )
    assert out["metrics"]["skill"]["crps"] == pytest.approx(expected, rel=1e-12)
    assert out["input"]["reference"]["id"] == "key"
    # without --id the shuffled rows are refused, and the message says how to join them
    r = runner.invoke(app, ["score", str(a), "--reference", str(shuffled)])
    assert r.exit_code == 3 and "targets differ" in r.output and "--id" in r.output, r.output
    # the same through the Python API (a file, and a DataFrame with the column)
    f = evaluate_file(a, reference=str(shuffled), id="key")
    assert f["skill.crps"] == pytest.approx(expected, rel=1e-12)
    import pandas as pd

    df = pd.DataFrame(model)
    t = evaluate(df, y="y", mean="mu", std="sigma", reference=str(shuffled), id="key")
    assert t["skill.crps"] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(UsageError, match="not a table"):
        evaluate(model["y"], mean=mu, std=np.ones(y.size), reference=str(shuffled), id="key")


@pytest.mark.parametrize(
    "case, words",
    [
        ("dup_ref", ["ref.parquet", "'key'", "more than once", "row"]),
        ("dup_model", ["a.parquet", "'key'", "more than once", "row"]),
        ("missing_in_ref", ["ref.parquet", "'key'", "row", "not in"]),
        ("missing_in_model", ["ref.parquet", "'key'", "row", "not in", "a.parquet"]),
        ("target", ["targets differ", "id 'k", "row"]),
        ("no_column", ["'key'", "not found"]),
    ],
)
def test_id_join_errors_are_one_line_naming_file_column_and_row(tmp_path, case, words):
    model, ref, _ = _id_files(tmp_path)
    if case == "dup_ref":
        ref["key"] = ref["key"].copy()
        ref["key"][5] = ref["key"][6]
    elif case == "dup_model":
        model["key"] = model["key"].copy()
        model["key"][1] = model["key"][0]
    elif case == "missing_in_ref":
        ref = {k: v[:-1] for k, v in ref.items()}
    elif case == "missing_in_model":
        model = {k: v[:-1] for k, v in model.items()}
    elif case == "target":
        ref["y"] = ref["y"].copy()
        ref["y"][4] += 1.0
    a = write_table(tmp_path / "a.parquet", model)
    b = write_table(
        tmp_path / "ref.parquet", ref if case != "no_column" else {k: v for k, v in ref.items() if k != "key"}
    )
    r = runner.invoke(app, ["score", str(a), "--reference", str(b), "--id", "key"])
    assert r.exit_code == 3, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, r.output
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_id_usage_errors():
    with pytest.raises(UsageError, match="--reference FILE"):
        reference_spec(None, id="key")
    with pytest.raises(UsageError, match="--reference FILE"):
        reference_spec("climatology", train="t.csv", id="key")
    r = runner.invoke(
        app, ["plot", str(SAMPLE / "gaussian.parquet"), "--kind", "pit", "--output", "x.png", "--id", "x"]
    )
    assert r.exit_code == 2


def test_id_join_in_check_and_compare(tmp_path):
    model, ref, perm = _id_files(tmp_path)
    a = write_table(tmp_path / "a.parquet", model)
    b = write_table(tmp_path / "b.parquet", {**model, "sigma": np.full(model["y"].size, 1.5)})
    shuffled = write_table(tmp_path / "ref.parquet", ref)
    est = _score(a, "--reference", shuffled, "--id", "key")["metrics"]["skill"]
    rules = tmp_path / "rules.toml"
    rules.write_text(f'[rules]\n"skill.crps" = {{ min = {est["crps"] - 1e-9!r} }}\n')
    r = runner.invoke(
        app, ["check", str(a), "--rules", str(rules), "--reference", str(shuffled), "--id", "key"]
    )
    assert r.exit_code == 0, r.output
    # compare: the files are joined on --id (b shuffled too) and the reference joined to the first file
    b_shuffled = write_table(
        tmp_path / "b_shuf.parquet",
        {k: v[perm] for k, v in {**model, "sigma": np.full(model["y"].size, 1.5)}.items()},
    )
    outs = []
    for second in (b, b_shuffled):
        r = runner.invoke(
            app,
            [
                "compare",
                str(a),
                str(second),
                "--reference",
                str(shuffled),
                "--id",
                "key",
                "--bootstrap",
                "50",
                "--permutations",
                "0",
                "--format",
                "json",
            ],
        )
        assert r.exit_code == 0, r.output
        outs.append(json.loads(r.stdout))
    assert outs[0]["skill"]["crps"]["a"]["estimate"] == pytest.approx(est["crps"], rel=1e-12)
    assert outs[0]["skill"]["crps"]["a"] == outs[1]["skill"]["crps"]["a"]
    assert outs[0]["skill"]["crps"]["b"]["estimate"] == pytest.approx(
        outs[1]["skill"]["crps"]["b_shuf"]["estimate"], rel=1e-12
    )


def test_the_stream_engine_refuses_a_reference_instead_of_dropping_it(tmp_path):
    ref = ["--reference", "climatology", "--train", str(SAMPLE / "train.parquet")]
    r = runner.invoke(app, ["score", str(SAMPLE / "gaussian.parquet"), "--engine", "stream", "--quiet", *ref])
    assert r.exit_code == 2 and "--reference" in r.output, r.output
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"scoring_rule.crps" = { max = 5 }\n')
    r = runner.invoke(
        app,
        [
            "check",
            str(SAMPLE / "gaussian.parquet"),
            "--rules",
            str(rules),
            "--engine",
            "stream",
            "--quiet",
            "--id",
            "x",
        ],
    )
    assert r.exit_code == 2 and "--reference FILE" in r.output, r.output
