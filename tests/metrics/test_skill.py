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
from uqeval.commands.compare.skill import reference_spec
from uqeval.errors import InputError, UsageError
from uqeval.metrics.samples import crps_ensemble
from uqeval.metrics.skill import crps_empirical, skill_from_sums, skill_score
from uqeval.predictions import Gaussian

from ..conftest import ROOT, SAMPLE, write_table

# these tests call the core directly and check the flags its messages name
pytestmark = pytest.mark.usefixtures("cli_voice")

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


# --------------------------------------------------------------------------- a better forecast never has less skill (issue 25)


def _forecasts(rng: np.random.Generator, n: int) -> dict[str, object]:
    """Forecasts of every representation on one target: sharp densities (log scores < 0) and wide ones."""
    from uqeval.predictions import Categorical, Quantiles, Samples

    mu = rng.normal(size=n)
    y = mu + 0.2 * rng.normal(size=n)
    levels = np.array([0.05, 0.25, 0.5, 0.75, 0.95])
    from scipy.stats import norm

    out: dict[str, object] = {}
    for tag, sd in (("sharp", 0.2), ("wide", 1.5)):
        out[f"gaussian_{tag}"] = Gaussian(mu, std=np.full(n, sd), y_true=y)
        out[f"quantiles_{tag}"] = Quantiles(mu[:, None] + sd * norm.ppf(levels), levels=levels, y_true=y)
        out[f"samples_{tag}"] = Samples(mu[:, None] + sd * rng.normal(size=(n, 20)), y_true=y)
    p1 = 1 / (1 + np.exp(-3 * mu))
    labels = (rng.uniform(size=n) < p1).astype(float)
    out["cls_sharp"] = Categorical(p1, y_true=labels)
    out["cls_flat"] = Categorical(np.full(n, labels.mean()), y_true=labels)
    return out


def test_a_lower_mean_score_never_gives_a_lower_skill_for_every_skill_score():
    """For every score in SKILL_SCORES: of two forecasts scored against the same reference, the one with the
    lower mean score has the higher skill, also where the log scores are negative (the ratio 1 - S/S_ref
    flipped that: -0.880 vs a reference's -0.565 scored -0.56). Scores kept as a ratio must never be negative."""
    from uqeval.commands.compare.skill import DIFFERENCE_SCORES, SKILL_SCORES, skill_rows, skill_value
    from uqeval.config import Settings

    rng = np.random.default_rng(25)
    preds = _forecasts(rng, 120)
    cache: dict[tuple[str, str], object] = {}

    def rows(model: str, reference: str):
        if (model, reference) not in cache:
            cache[model, reference] = skill_rows(preds[model], preds[reference], None, Settings())
        return cache[model, reference]

    seen: set[str] = set()
    compared: set[str] = set()
    negative_logs = 0
    for ref_name, ref in preds.items():
        for a_name, a in preds.items():
            for b_name, b in preds.items():
                if a_name >= b_name or (a.kind in ("categorical",)) != (ref.kind in ("categorical",)):
                    continue
                if (b.kind in ("categorical",)) != (ref.kind in ("categorical",)):
                    continue
                ra, rb = rows(a_name, ref_name), rows(b_name, ref_name)
                for name in set(ra.score) & set(rb.score):
                    assert name in SKILL_SCORES
                    seen.add(name)
                    sa, sb, r = ra.score[name], rb.score[name], ra.reference[name]
                    if name not in DIFFERENCE_SCORES:  # the ratio ranks only scores that are never < 0
                        assert sa.min() >= 0 and sb.min() >= 0 and r.min() >= 0, name
                    negative_logs += name == "nll" and (sa.mean() < 0 or r.mean() < 0)
                    if not np.array_equal(r, rb.reference[name]):  # another common grid: another score
                        continue
                    ka, kb = skill_value(name, sa, r), skill_value(name, sb, r)
                    gap = sa.mean() - sb.mean()
                    if abs(gap) > 1e-9 * (abs(sa.mean()) + abs(sb.mean())):
                        assert (ka > kb) == (gap < 0), (name, a_name, b_name, ref_name, ka, kb)
                        compared.add(name)
    assert seen == compared == set(SKILL_SCORES), set(SKILL_SCORES) - compared
    assert negative_logs > 0  # the case that used to flip was exercised


def test_log_score_skill_is_the_information_gain_in_nats():
    from uqeval.commands.compare.skill import skill_value
    from uqeval.metrics.skill import difference_from_sums, skill_difference

    s, r = np.array([-0.880]), np.array([-0.565])  # issue 25: the better forecast used to get skill -0.559
    assert skill_value("nll", s, r) == pytest.approx(0.315, rel=1e-12)
    assert skill_value("nll", r, s) == pytest.approx(-0.315, rel=1e-12)
    assert skill_value("crps", np.array([1.0]), np.array([2.0])) == 0.5  # scores >= 0 keep the ratio
    # rows left out (persistence's first row) are 0 in both arrays and not counted
    assert skill_difference(np.array([1.0, 0.0]), np.array([2.0, 0.0]), n_rows=1) == 1.0
    sums = np.array([[1.0, 3.0, 2.0], [0.0, 0.0, 0.0]])
    got = difference_from_sums(sums)
    assert got[0] == 1.0 and np.isnan(got[1])


def test_compare_reports_log_score_skill_as_a_difference_with_its_bootstrap(tmp_path):
    rng = np.random.default_rng(3)
    n = 200
    mu = rng.normal(size=n)
    y = mu + 0.3 * rng.normal(size=n)
    sharp = tmp_path / "sharp.csv"
    wide = tmp_path / "wide.csv"
    write_table(sharp, {"y_true": y, "mean": mu, "std": np.full(n, 0.3)})
    write_table(wide, {"y_true": y, "mean": mu, "std": np.full(n, 0.6)})
    r = runner.invoke(
        app,
        ["compare", str(sharp), str(wide), "--reference", str(wide), "--bootstrap", "100"]
        + ["--permutations", "0", "--format", "json"],
    )
    assert r.exit_code == 0, r.output
    entry = json.loads(r.stdout)["skill"]["nll"]
    from uqeval.metrics.scoring import nll_gaussian

    gain = np.mean(nll_gaussian(y, mu, np.full(n, 0.6))) - np.mean(nll_gaussian(y, mu, np.full(n, 0.3)))
    assert gain > 0 and entry["sharp"]["estimate"] == pytest.approx(gain, rel=1e-9)
    assert entry["wide"]["estimate"] == pytest.approx(0.0, abs=1e-12)
    assert entry["sharp"]["low"] < entry["sharp"]["estimate"] < entry["sharp"]["high"]
