"""Glue of `uqeval recalibrate` (uqeval.commands.recalibrate): metrics of the recalibrated forecasts,
output table, parameters, feature reading, option checks."""

import gzip
import io

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from uqeval.commands.recalibrate import (
    Options,
    apply_state,
    build_table,
    central_levels,
    cli_method,
    compact_parameters,
    evaluate,
    isotonic_metrics,
    load_for,
    read_features,
    run,
)
from uqeval.config import Settings, make_settings
from uqeval.errors import InputError, SchemaError, UsageError
from uqeval.io.writers import output_format, write_table
from uqeval.metrics.calibration import avg_calibration_gaussian
from uqeval.metrics.reliability import max_calibration_error, pit_gaussian
from uqeval.metrics.scoring import scoring_rules_gaussian
from uqeval.recalibration.accrue import fit_accrue
from uqeval.recalibration.conformal import fit_conformal
from uqeval.recalibration.isotonic import fit_isotonic, isotonic_intervals

from ..conftest import SAMPLE, write_table as write_input


def _gauss(rng, n, bias=0.0, scale=1.0):
    x = rng.uniform(size=n)
    mu = np.sin(3 * x)
    sd = 0.3 + x
    y = mu + bias + scale * sd * rng.standard_normal(n)
    return x, y, mu, sd


IDENTITY = {"method": "isotonic", "direction": "quantile", "expected": [0.0, 1.0], "observed": [0.0, 1.0]}


def test_isotonic_metrics_of_the_identity_map_equal_the_gaussian_ones():
    # R(p) = p leaves the forecast Gaussian: every recomputed group must match the
    # Gaussian closed forms (different code paths: PIT curve vs z thresholds, (N, K) pinball
    # and interval scores vs the prefix-sum profiles).
    rng = np.random.default_rng(0)
    _, y, mu, sd = _gauss(rng, 3000, bias=0.2, scale=1.4)
    s = Settings()
    lo, hi = isotonic_intervals(IDENTITY, mu, sd, [0.5, 0.9])
    got = isotonic_metrics(IDENTITY, y, mu, sd, lo, hi, [0.5, 0.9], s)
    ref = avg_calibration_gaussian(y, mu, sd, num_bins=s.num_bins)
    for k in ("ma_cal", "rms_cal", "miscal_area"):
        assert got["avg_calibration"][k] == pytest.approx(ref[k], abs=1e-12)
    assert got["reliability"]["max_cal_err"] == pytest.approx(
        max_calibration_error(pit_gaussian(y, mu, sd)), abs=1e-12
    )
    sr = scoring_rules_gaussian(y, mu, sd, resolution=s.resolution)
    assert got["scoring_rule"]["check"] == pytest.approx(sr["check"], rel=1e-10)
    assert got["scoring_rule"]["interval"] == pytest.approx(sr["interval"], rel=1e-10)
    z = np.abs(y - mu) / sd
    assert got["coverage"]["0.9"]["coverage"] == pytest.approx(np.mean(z <= 1.6448536269514722), abs=1e-12)


def test_isotonic_metrics_closed_form_matches_the_direct_scores():
    """check/interval of the recalibrated forecast: the prefix-sum closed form equals the (rows x levels)
    pinball and interval scores of the recalibrated quantiles, computed directly."""
    from uqeval.metrics.scoring import interval_score, pinball_loss
    from uqeval.recalibration.isotonic import isotonic_quantiles

    rng = np.random.default_rng(1)
    _, y, mu, sd = _gauss(rng, 1000, scale=2.0)
    state = fit_isotonic(y, mu, sd)
    whole = isotonic_metrics(state, y, mu, sd, None, None, [], Settings())
    tau = np.linspace(0.01, 0.99, Settings().resolution)
    q = isotonic_quantiles(state, mu, sd, tau)
    bounds = isotonic_quantiles(state, mu, sd, np.concatenate([(1 - tau) / 2, (1 + tau) / 2]))
    check = pinball_loss(y, q, tau).mean()
    interval = interval_score(y, bounds[:, : tau.size], bounds[:, tau.size :], tau).mean()
    assert whole["scoring_rule"]["check"] == pytest.approx(check, rel=1e-12)
    assert whole["scoring_rule"]["interval"] == pytest.approx(interval, rel=1e-12)
    # and recalibration improves on the overdispersed forecast
    before = avg_calibration_gaussian(y, mu, sd)["ma_cal"]
    assert whole["avg_calibration"]["ma_cal"] < 0.1 * before


def test_run_std_scaling_on_a_variance_column_writes_the_variance(tmp_path):
    rng = np.random.default_rng(2)
    _, y, mu, sd = _gauss(rng, 500, scale=2.0)
    f = write_input(tmp_path / "v.parquet", {"y": y, "mu": mu, "variance": sd**2, "extra": np.arange(500)})
    res = run(f, f, Options("std-scaling", criterion="nll"), make_settings())
    factor = res.state["factor"]
    assert factor == pytest.approx(np.sqrt(np.mean(((y - mu) / sd) ** 2)))
    assert res.table.schema.names == ["y", "mu", "variance", "extra"]
    np.testing.assert_allclose(res.table.column("variance").to_numpy(), (factor * sd) ** 2, rtol=1e-12)
    np.testing.assert_array_equal(res.table.column("extra").to_numpy(), np.arange(500))
    before = res.summary["files"]["calibration"]["before"]["scoring_rule"]["nll"]
    after = res.summary["files"]["calibration"]["after"]["scoring_rule"]["nll"]
    assert after < before


def test_build_table_replaces_case_insensitively_and_appends_list_columns(tmp_path):
    from uqeval.commands.recalibrate import Applied

    f = write_input(tmp_path / "t.parquet", {"y": [1.0, 2.0], "Mean": [0.0, 0.0], "STD": [1.0, 1.0]})
    loaded = load_for("std-scaling", f, make_settings(), require_targets=True, every_column=True)
    applied = Applied(
        columns={
            "std": np.array([2.0, 3.0]),
            "lower_0.9": np.array([-1.0, -2.0]),
            "block": np.array([[1.0, 2.0], [3.0, 4.0]]),
        }
    )
    t = build_table(loaded, applied)
    assert t.schema.names == ["y", "Mean", "STD", "lower_0.9", "block"]
    assert t.column("STD").to_pylist() == [2.0, 3.0]
    assert t.column("block").to_pylist() == [[1.0, 2.0], [3.0, 4.0]]


def test_write_table_formats(tmp_path):
    t = pa.table({"a": [1.5, 2.5], "b": ["x", "y"]})
    write_table(tmp_path / "o.csv.gz", t)
    back = pacsv.read_csv(io.BytesIO(gzip.decompress((tmp_path / "o.csv.gz").read_bytes())))
    assert back.column("a").to_pylist() == [1.5, 2.5]
    write_table(tmp_path / "o.pq", t)
    assert pq.read_table(tmp_path / "o.pq").equals(t)
    with pytest.raises(InputError, match="cannot be written to CSV"):
        write_table(tmp_path / "l.csv", pa.table({"p": pa.array([[0.1, 0.9]])}))
    assert not (tmp_path / "l.csv").exists()
    with pytest.raises(UsageError, match="parquet"):
        output_format("out.json")
    assert list(tmp_path.glob(".*tmp")) == []


def test_read_features_errors_name_file_column_and_row(tmp_path):
    f = write_input(
        tmp_path / "f.parquet",
        {"y": [1.0, 2.0, 3.0], "pred": [1.0, 2.0, 3.0], "x1": [0.1, np.nan, 0.3], "X2": [1.0, 2.0, 3.0]},
    )

    def load(*features):
        return load_for("accrue", f, make_settings(), require_targets=True, features=features)

    np.testing.assert_array_equal(
        read_features(load("x2"), ["x2"])[:, 0], [1.0, 2.0, 3.0]
    )  # case-insensitive
    with pytest.raises(SchemaError, match=r"f\.parquet.*'x3'.*not found"):
        read_features(load("x2", "x3"), ["x2", "x3"])
    with pytest.raises(InputError, match=r"f\.parquet: feature column 'x1' must be finite: 1 row.*row 1"):
        read_features(load("X2", "x1"), ["X2", "x1"])


def test_accrue_state_records_features_and_mlp_parameters_are_compact():
    d = {"x": np.linspace(0, 1, 200)}
    rng = np.random.default_rng(3)
    y = rng.normal(0, 0.5 + d["x"])
    state = fit_accrue(d["x"], y, np.zeros(200), model="mlp", hidden=(6, 3), restarts=1)
    params = compact_parameters(state)
    assert "weights" not in params and "biases" not in params
    assert params["layer_shapes"] == [[1, 6], [6, 3], [3, 1]]
    assert params["n_parameters"] == (1 * 6 + 6) + (6 * 3 + 3) + (3 * 1 + 1)
    conformal = fit_conformal(y, np.zeros(200), levels=[0.5, 0.9])
    per = compact_parameters(conformal)["per_level"]
    assert set(per) == {"0.5", "0.9"} and per["0.9"]["coverage_guaranteed"] >= 0.9


def test_levels_of_a_loaded_conformal_state():
    state = {"method": "conformal", "normalized": False, "levels": [0.5, 0.9], "score_quantile": [1.0, 2.0]}
    assert central_levels("conformal", Options("conformal"), state) == [0.5, 0.9]
    assert central_levels("conformal", Options("conformal", levels=(0.9,)), state) == [0.9]
    with pytest.raises(
        UsageError, match="0.95'? not available: this conformal recalibrator was fitted at 0.5, 0.9"
    ):
        central_levels("conformal", Options("conformal", levels=(0.95,)), state)
    assert central_levels(
        "isotonic", Options("isotonic", levels=(0.05, 0.5, 0.95), quantiles=True)
    ) == pytest.approx([0.9])
    with pytest.raises(InputError, match="cannot apply"):
        cli_method({"method": "pickle"})


def test_conformal_marginal_coverage_over_many_calibration_draws():
    # the guarantee is marginal over calibration and test rows: average many small draws
    rng = np.random.default_rng(4)
    levels = [0.5, 0.8, 0.9]
    covered = []
    for _ in range(300):
        _, y, mu, sd = _gauss(rng, 19 + 200, scale=1.7)
        state = fit_conformal(y[:19], mu[:19], sd[:19], levels=levels)
        from uqeval.recalibration.conformal import apply_conformal

        bounds = apply_conformal(state, mu[19:], sd[19:])
        covered.append([np.mean((bounds[c][0] <= y[19:]) & (y[19:] <= bounds[c][1])) for c in levels])
    mean = np.mean(covered, axis=0)
    guaranteed = np.array(state["coverage_guaranteed"])  # k/(n+1) with n = 19
    se = np.std(covered, axis=0) / np.sqrt(len(covered))
    assert np.all(mean >= guaranteed - 3 * se)
    assert np.all(guaranteed >= levels)


def test_point_conformal_and_accrue_before_basis(tmp_path):
    rng = np.random.default_rng(5)
    x, y, mu, _ = _gauss(rng, 400)
    f = write_input(tmp_path / "p.parquet", {"x": x, "y": y, "pred": mu})
    s = make_settings()
    loaded = load_for("conformal", f, s, require_targets=True)
    assert loaded.prediction.kind == "point"
    res = run(f, None, Options("conformal", levels=(0.9,)), s)
    block = res.summary["files"]["calibration"]
    assert block["before"] == {} and block["before_basis"].startswith("none")
    assert block["after"]["coverage"]["0.9"]["coverage"] >= 0.9  # in-sample: share of scores <= s_(k)
    res = run(f, None, Options("accrue", model="constant", features=("x",)), s)
    block = res.summary["files"]["calibration"]
    assert block["before_basis"].startswith("constant std")
    # constant model: after == before (the same sigma)
    assert block["after"]["scoring_rule"] == pytest.approx(block["before"]["scoring_rule"], rel=1e-12)


def test_evaluate_temperature_lowers_nll_on_the_sample():
    s = make_settings()
    loaded = load_for("temperature", SAMPLE / "classification.parquet", s, require_targets=True)
    res = run(SAMPLE / "classification.parquet", None, Options("temperature"), s)
    applied = apply_state(res.state, loaded, Options("temperature"), s)
    np.testing.assert_allclose(applied.proba.sum(axis=1), 1.0, atol=1e-12)
    out = evaluate(res.state, loaded, applied, s)
    assert out["after"]["accuracy"]["nll"] < out["before"]["accuracy"]["nll"]
    assert out["after"]["accuracy"]["nll"] == pytest.approx(res.state["nll_after"], rel=1e-9)


def test_isotonic_scores_without_stored_intervals_are_the_same(tmp_path):
    # the calibration file's recalibrated forecast is only scored: apply_state(columns=False) stores no
    # bounds and isotonic_metrics makes each level's interval when it scores it -- the same numbers
    rng = np.random.default_rng(4)
    _, y, mu, sd = _gauss(rng, 40_000, bias=0.1, scale=1.3)  # more than one block of rows
    state = fit_isotonic(y, mu, sd)
    levels = [0.5, 0.9, 0.95]
    lo, hi = isotonic_intervals(state, mu, sd, levels)
    s = Settings()
    assert isotonic_metrics(state, y, mu, sd, None, None, levels, s) == isotonic_metrics(
        state, y, mu, sd, lo, hi, levels, s
    )
    f = write_input(tmp_path / "g.parquet", {"y": y, "mean": mu, "std": sd})
    loaded = load_for("isotonic", f, make_settings(), require_targets=True)
    opts = Options("isotonic")
    bare = apply_state(state, loaded, opts, make_settings(), columns=False)
    full = apply_state(state, loaded, opts, make_settings())
    assert bare.columns == {} and bare.lower is None and bare.levels == full.levels
    assert sorted(full.columns) == [
        "lower_0.5",
        "lower_0.9",
        "lower_0.95",
        "upper_0.5",
        "upper_0.9",
        "upper_0.95",
    ]
    np.testing.assert_array_equal(full.lower, lo)
    assert evaluate(state, loaded, bare, make_settings()) == evaluate(state, loaded, full, make_settings())
