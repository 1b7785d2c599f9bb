"""`uqeval recalibrate`: toolbox fixture, held-out quantile and conformal coverage, ACCRUE sigma
recovery on the G sample, save/load round trips, temperature scaling, bad input and usage errors."""

import hashlib
import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from scipy.special import ndtri
from typer.testing import CliRunner

from uqeval.cli import app

from ..conftest import SAMPLE, write_table

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, ["recalibrate", *map(str, args)])


def _json(*args):
    r = _run(*args, "--format", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _read(path):
    return (pacsv.read_csv(path) if str(path).endswith(".csv") else pq.read_table(path)).to_pandas()


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


# ----------------------------------------------------------------------------- toolbox fixture


def toolbox_fixture(tmp_path, n):
    """The toolbox's recalibration fixture (n = 100: its own test; n = 5000: the issue's arrays)."""
    if n == 100:
        y_pred, y_std = np.arange(100) / 100.0, np.arange(1, 101) / 20.0
    else:
        y_pred, y_std = np.arange(5000) / 5000, np.arange(50, 5050) / 1000
    return write_table(tmp_path / f"fixture{n}.parquet", {"y": y_pred + 0.5, "mean": y_pred, "std": y_std})


# uncertainty-toolbox 0.1.1 (tests/reference/regen_recalibration.py): MACE before, MACE after its
# interval-mode iso_recal, and optimize_recalibration_ratio(criterion="ma_cal") -> (ratio, MACE there)
TOOLBOX = {
    100: {
        "mace": 0.24206060606060598,
        "iso_after": 0.003035353535353514,
        "ratio": 0.33273377008137006,
        "ratio_mace": 0.06821616161616162,
    },
    5000: {
        "mace": 0.24615860606060605,
        "iso_after": 0.0011466060606060357,
        "ratio": 0.3270787828224585,
        "ratio_mace": 0.06838836363636364,
    },
}


@pytest.mark.parametrize("n", [100, 5000])
def test_toolbox_fixture_isotonic_and_std_scaling(tmp_path, n):
    f = toolbox_fixture(tmp_path, n)
    ref = TOOLBOX[n]
    iso = _json(f, "--method", "isotonic")["files"]["calibration"]
    assert iso["before"]["avg_calibration"]["ma_cal"] == pytest.approx(ref["mace"], abs=1e-12)
    if n == 5000:
        assert iso["after"]["avg_calibration"]["ma_cal"] <= ref["iso_after"]
    else:
        # 100 rows: observed shares are multiples of 0.01 and the toolbox fits its own 100-level
        # interval grid (0.0030); the recalibrated PIT's curve is within one row's granularity
        assert iso["after"]["avg_calibration"]["ma_cal"] <= 0.006
    out = _json(f, "--method", "std-scaling")
    assert out["parameters"]["criterion"] == "ma_cal"
    assert out["parameters"]["factor"] == pytest.approx(
        ref["ratio"], rel=0.02
    )  # the issue's ~0.332 (n = 100)
    if n == 100:
        assert out["parameters"]["factor"] == pytest.approx(0.332, abs=0.002)
    after = out["files"]["calibration"]["after"]["avg_calibration"]["ma_cal"]
    assert after <= ref["ratio_mace"] + 1e-12


# ----------------------------------------------------------------------------- held-out coverage


def _misspecified(rng, n):
    x = rng.uniform(size=n)
    mu = np.sin(3 * x)
    scale = 0.3 + x
    y = mu + 0.2 + scale * rng.standard_t(5, size=n)  # biased, heavy-tailed
    return {"x": x, "y": y, "mean": mu, "std": 0.5 * scale}  # and overconfident


def test_isotonic_quantiles_cover_their_level_on_held_out_data(tmp_path):
    rng = np.random.default_rng(0)
    calib = write_table(tmp_path / "calib.parquet", _misspecified(rng, 10_000))
    test_cols = _misspecified(rng, 50_000)
    test = write_table(tmp_path / "test.parquet", test_cols)
    out = tmp_path / "test_recal.parquet"
    levels = [0.05, 0.25, 0.5, 0.75, 0.95]
    summary = _json(
        calib,
        "--method",
        "isotonic",
        "--quantiles",
        "--levels",
        ",".join(map(str, levels)),
        "--apply",
        test,
        "-o",
        out,
    )
    df = _read(out)
    assert list(df.columns) == ["x", "y", "mean", "std", "q_0.05", "q_0.25", "q_0.5", "q_0.75", "q_0.95"]
    q = df[[f"q_{lv}" for lv in levels]].to_numpy()
    covered = (df["y"].to_numpy()[:, None] <= q).mean(axis=0)
    np.testing.assert_allclose(covered, levels, atol=0.02)  # ECDF error of 10k calibration rows ~ 0.01
    raw = (
        test_cols["y"][:, None] <= test_cols["mean"][:, None] + test_cols["std"][:, None] * ndtri(levels)
    ).mean(0)
    assert np.max(np.abs(raw - levels)) > 0.15  # the input quantiles are far off: this test can fail
    applied = summary["files"]["applied"]
    assert summary["quantile_levels"] == ["0.05", "0.25", "0.5", "0.75", "0.95"]
    assert applied["after"]["coverage"]["0.9"]["coverage"] == pytest.approx(0.9, abs=0.02)
    assert (
        applied["after"]["avg_calibration"]["ma_cal"] < 0.02 < applied["before"]["avg_calibration"]["ma_cal"]
    )


def test_conformal_coverage_held_out_and_in_sample(tmp_path):
    rng = np.random.default_rng(1)
    n_cal = 2000
    calib = write_table(tmp_path / "calib.csv", _misspecified(rng, n_cal))
    test = write_table(tmp_path / "test.parquet", _misspecified(rng, 40_000))
    out = tmp_path / "out.csv"
    s = _json(calib, "--method", "conformal", "--levels", "0.5,0.9,0.95", "--apply", test, "-o", out)
    df = _read(out)
    y = df["y"].to_numpy()
    for lv in (0.5, 0.9, 0.95):
        per = s["parameters"]["per_level"][str(lv)]
        assert per["coverage_guaranteed"] >= lv
        cov = np.mean((df[f"lower_{lv}"] <= y) & (y <= df[f"upper_{lv}"]))
        # held out: the guarantee is marginal over calibration draws; one draw of n rows
        # fluctuates by ~sqrt(lv (1 - lv) / n)
        assert cov >= lv - 2.5 * np.sqrt(lv * (1 - lv) / n_cal)
        assert s["files"]["applied"]["after"]["coverage"][str(lv)]["coverage"] == pytest.approx(
            cov, abs=1e-12
        )
        # in sample the order statistic covers at least k/n >= level exactly
        assert s["files"]["calibration"]["after"]["coverage"][str(lv)]["coverage"] >= lv
        # the overconfident input does not cover
        assert s["files"]["applied"]["before"]["coverage"][str(lv)]["coverage"] < lv - 0.1
    assert s["parameters"]["normalized"] is True
    assert set(s["files"]["applied"]["after"]) == {
        "avg_calibration",
        "coverage",
        "reliability",
        "scoring_rule",
    }


# ----------------------------------------------------------------------------- ACCRUE on the G sample


@pytest.mark.parametrize("model", ["poly", "mlp"])
def test_accrue_recovers_sigma_on_the_g_sample(tmp_path, model):
    # issue acceptance: 2000 fit rows, fresh test rows, mean |s - sigma| / sigma <= 0.10, end to end
    out = tmp_path / "g_recal.parquet"
    s = _json(
        SAMPLE / "accrue_g.parquet",
        "--method",
        "accrue",
        "--model",
        model,
        "--features",
        "x",
        "--apply",
        SAMPLE / "accrue_g_test.parquet",
        "-o",
        out,
    )
    df = _read(out)
    assert list(df.columns) == ["x", "y", "pred", "true_std", "std"]
    err = np.mean(np.abs(df["std"] - df["true_std"]) / df["true_std"])
    assert err <= 0.10
    assert s["parameters"]["model"] == model and s["parameters"]["features"] == ["x"]
    if model == "mlp":
        assert "weights" not in s["parameters"] and s["parameters"]["layer_shapes"] == [
            [1, 50],
            [50, 10],
            [10, 1],
        ]
    applied = s["files"]["applied"]
    assert applied["before_basis"].startswith("constant std")
    assert applied["after"]["reliability"]["accrue"] < applied["before"]["reliability"]["accrue"]
    # the input file is point predictions: scoring it as such, it now scores as a Gaussian
    r = runner.invoke(app, ["score", str(out), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["input"]["representation"] == "gaussian"


def test_accrue_with_targets_and_means_near_1e308(tmp_path):
    # issue 35: brentq raised "function value at x=nan is NaN" (a traceback, exit 1)
    rng = np.random.default_rng(1)
    x = rng.normal(size=100)
    cols = {"x": x, "y": x + rng.normal(size=100), "mean": x.copy()}
    cols["y"][3] = 1e308
    r = _run(
        write_table(tmp_path / "big.csv", cols), "--method", "accrue", "--model", "poly", "--features", "x"
    )
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output and "RuntimeWarning" not in r.stderr
    cols["mean"][[2, 3]] = -1e308  # row 3: 1e308 - (-1e308) is beyond the doubles
    r = _run(
        write_table(tmp_path / "over.csv", cols), "--method", "accrue", "--model", "mlp", "--features", "x"
    )
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 3 and len(lines) == 1, r.output
    assert lines[0].startswith("error: ") and "over.csv" in lines[0]
    assert "'y' - 'mean' is beyond the largest double" in lines[0] and "first at row 3" in lines[0]


def test_accrue_w_sample_mlp_calibration_beats_constant(tmp_path):
    # issue acceptance on W: mlp test max_cal_err <= 0.06, the constant baseline near 0.16
    out = tmp_path / "w.parquet"
    s = _json(
        SAMPLE / "accrue_w.parquet",
        "--method",
        "accrue",
        "--model",
        "mlp",
        "--features",
        "x",
        "--apply",
        SAMPLE / "accrue_w_test.parquet",
        "-o",
        out,
    )
    applied = s["files"]["applied"]
    assert applied["after"]["reliability"]["max_cal_err"] <= 0.06
    assert 0.12 <= applied["before"]["reliability"]["max_cal_err"] <= 0.20  # before = the constant sigma


# ----------------------------------------------------------------------------- save / load round trip


ROUND_TRIPS = {
    "std-scaling": (SAMPLE / "gaussian.parquet", SAMPLE / "gaussian.csv", ["--criterion", "crps"]),
    "isotonic": (SAMPLE / "gaussian.parquet", SAMPLE / "gaussian.csv", ["--levels", "0.8"]),
    "conformal": (SAMPLE / "point.csv", SAMPLE / "point.csv", ["--levels", "0.9,0.5"]),
    "accrue": (
        SAMPLE / "accrue_5d.parquet",
        SAMPLE / "accrue_5d_test.parquet",
        ["--model", "kmeans", "--clusters", "8", "--features", "x1,x2,x3,x4,x5"],
    ),
    "temperature": (SAMPLE / "classification.parquet", SAMPLE / "classification.parquet", []),
}


@pytest.mark.parametrize("method", list(ROUND_TRIPS))
def test_save_load_apply_round_trip_is_identical(tmp_path, method):
    calib, target, extra = ROUND_TRIPS[method]
    ext = ".csv" if method == "std-scaling" else ".parquet"
    direct, reloaded, model = tmp_path / f"direct{ext}", tmp_path / f"reloaded{ext}", tmp_path / "model.json"
    before = _md5(target)
    a = _json(calib, "--method", method, *extra, "--save", model, "--apply", target, "-o", direct)
    assert a["saved"] == str(model) and a["output"] == str(direct)
    saved = json.loads(model.read_text())
    assert saved["format"] == "uqeval.recalibrator/1" and saved["state"]["method"] == method.replace("-", "_")
    b = _json("--load", model, "--apply", target, "-o", reloaded)
    assert direct.read_bytes() == reloaded.read_bytes()
    assert b["parameters"] == a["parameters"] and b["loaded_from"] == str(model) and b["fitted_on"] is None
    assert b["files"]["applied"] == a["files"]["applied"]
    assert _md5(target) == before  # the input is never modified
    src, out = _read(target), _read(direct)
    assert list(out.columns[: len(src.columns)]) == list(src.columns)  # every input column kept, in order


def test_loaded_isotonic_takes_new_levels_and_loaded_accrue_its_features(tmp_path):
    model = tmp_path / "iso.json"
    assert _run(SAMPLE / "gaussian.parquet", "--method", "isotonic", "--save", model).exit_code == 0
    out = tmp_path / "o.parquet"
    s = _json(
        "--load",
        model,
        "--apply",
        SAMPLE / "gaussian.parquet",
        "-o",
        out,
        "--levels",
        "0.7",
        "--equivalent-std",
    )
    df = _read(out)
    assert {"lower_0.7", "upper_0.7", "std_0.7"} <= set(df.columns)
    k = s["parameters"]["equivalent_std_factor"]["0.7"]
    np.testing.assert_allclose(df["std_0.7"], k * df["sigma"], rtol=1e-12)
    width = df["upper_0.7"] - df["lower_0.7"]
    np.testing.assert_allclose(width, 2 * ndtri(0.85) * df["std_0.7"], rtol=1e-9)  # same width by definition


# ----------------------------------------------------------------------------- temperature


def test_temperature_lowers_nll_on_the_classification_sample(tmp_path):
    out = tmp_path / "cls.parquet"
    s = _json(
        SAMPLE / "classification.parquet",
        "--method",
        "temperature",
        "--apply",
        SAMPLE / "classification.parquet",
        "-o",
        out,
    )
    cal = s["files"]["calibration"]
    assert cal["after"]["accuracy"]["nll"] < cal["before"]["accuracy"]["nll"]
    assert cal["after"]["calibration"]["ece"] < cal["before"]["calibration"]["ece"]
    assert cal["after"]["accuracy"]["accuracy"] == cal["before"]["accuracy"]["accuracy"]  # argmax unchanged
    # the sample's model is over-confident by a factor 1.6 on the logits (sample_data/make_samples.py)
    assert 1.3 < s["parameters"]["temperature"] < 2.0
    df = _read(out)
    assert list(df.columns) == ["label", "shift", "p_0", "p_1", "p_2", "p_3"]
    np.testing.assert_allclose(df[[f"p_{k}" for k in range(4)]].sum(axis=1), 1.0, atol=1e-12)


def test_temperature_on_logits_writes_probabilities(tmp_path):
    rng = np.random.default_rng(2)
    z = 3.0 * rng.normal(size=(500, 3))
    p = np.exp(z / 3.0) / np.exp(z / 3.0).sum(1, keepdims=True)  # true temperature 3
    label = (rng.uniform(size=(500, 1)) > np.cumsum(p, 1)).sum(1)
    f = write_table(
        tmp_path / "logits.parquet", {"label": label, **{f"logit_{k}": z[:, k] for k in range(3)}}
    )
    out = tmp_path / "o.parquet"
    s = _json(f, "--method", "temperature", "--apply", f, "-o", out)
    assert 2.0 < s["parameters"]["temperature"] < 4.5
    df = _read(out)
    assert list(df.columns) == ["label", "logit_0", "logit_1", "logit_2", "p_0", "p_1", "p_2"]
    t = s["parameters"]["temperature"]
    e = np.exp(z / t)
    np.testing.assert_allclose(df[["p_0", "p_1", "p_2"]].to_numpy(), e / e.sum(1, keepdims=True), rtol=1e-9)


# ----------------------------------------------------------------------------- formats and targets


def test_table_and_markdown_output_and_applied_file_without_targets(tmp_path):
    rng = np.random.default_rng(3)
    cols = _misspecified(rng, 300)
    calib = write_table(tmp_path / "calib.parquet", cols)
    new = write_table(tmp_path / "new.parquet", {k: v for k, v in cols.items() if k != "y"})
    out = tmp_path / "new_recal.parquet"
    r = _run(calib, "--method", "std-scaling", "--apply", new, "-o", out)
    assert r.exit_code == 0, r.output
    assert "std-scaling" in r.stdout and "before" in r.stdout and "no target column" in r.stdout
    assert "ma_cal" in r.stdout
    r = _run(calib, "--method", "std-scaling", "--format", "markdown")
    assert r.exit_code == 0, r.output
    assert "| group | metric | before | after | direction |" in r.stdout and "| factor |" in r.stdout
    s = _json(calib, "--method", "std-scaling", "--apply", new, "-o", out)
    assert "before" not in s["files"]["applied"] and s["files"]["applied"]["has_targets"] is False
    assert list(_read(out).columns) == ["x", "mean", "std"]


# ----------------------------------------------------------------------------- bad input: exit 3


def _bad_inputs(tmp_path):
    rng = np.random.default_rng(4)
    g = _misspecified(rng, 200)
    files = {
        "gauss": write_table(tmp_path / "gauss.parquet", g),
        "no_y": write_table(tmp_path / "no_y.parquet", {k: v for k, v in g.items() if k != "y"}),
        "tiny": write_table(tmp_path / "tiny.parquet", {k: v[:10] for k, v in g.items()}),
        "point": write_table(tmp_path / "point.parquet", {"x": g["x"], "y": g["y"], "pred": g["mean"]}),
        "no_x": write_table(tmp_path / "no_x.parquet", {"y": g["y"], "pred": g["mean"]}),
        "nan_x": write_table(
            tmp_path / "nan_x.parquet",
            {"x": np.where(np.arange(200) == 7, np.nan, g["x"]), "y": g["y"], "pred": g["mean"]},
        ),
    }
    proba = rng.dirichlet([1.0, 1.0, 1.0], size=200)
    files["cls_list"] = write_table(
        tmp_path / "cls_list.parquet",
        {"label": rng.integers(0, 3, 200), "proba": pa.array(list(proba), type=pa.list_(pa.float64()))},
    )
    model = tmp_path / "model.json"
    assert _run(files["gauss"], "--method", "std-scaling", "--save", model).exit_code == 0
    doc = json.loads(model.read_text())
    doc["uqeval_version"] = "99.0.0"
    (tmp_path / "future.json").write_text(json.dumps(doc))
    doc["uqeval_version"], doc["format"] = "0.1.0", "uqeval.recalibrator/0"
    (tmp_path / "oldformat.json").write_text(json.dumps(doc))
    return files


BAD = {
    "calibration file without targets": (["{no_y}", "--method", "isotonic"], "no target column"),
    "too few rows for conformal 0.95": (
        ["{tiny}", "--method", "conformal", "--levels", "0.95"],
        "need at least 19",
    ),
    "too few rows for accrue mlp": (
        ["{tiny}", "--method", "accrue", "--model", "mlp", "--features", "x"],
        "need at least 50",
    ),
    "features missing in the applied file": (
        ["{point}", "--method", "accrue", "--model", "poly", "--features", "x", "--apply", "{no_x}"],
        "'x' not found",
    ),
    "features with NaN (calibration)": (
        ["{nan_x}", "--method", "accrue", "--model", "constant", "--features", "x"],
        "'x' must be finite: 1 row(s) with NaN/inf (first at row 7)",
    ),
    "features with NaN (applied)": (
        ["{point}", "--method", "accrue", "--model", "constant", "--features", "x", "--apply", "{nan_x}"],
        "row 7",
    ),
    "saved model from another major version": (
        ["--load", "{dir}/future.json", "--apply", "{gauss}"],
        "incompatible",
    ),
    "saved model with another format": (["--load", "{dir}/oldformat.json", "--apply", "{gauss}"], "format"),
    "missing saved model": (["--load", "{dir}/nope.json", "--apply", "{gauss}"], "does not exist"),
    "std-scaling without std": (["{point}", "--method", "std-scaling"], "needs Gaussian predictions"),
    "applied file without std": (
        ["--load", "{dir}/model.json", "--apply", "{point}"],
        "needs Gaussian predictions",
    ),
    "list column to a CSV output": (
        [
            "{cls_list}",
            "--method",
            "temperature",
            "--apply",
            "{cls_list}",
            "-o",
            "{dir}/o.csv",
            "--save",
            "{dir}/t.json",
        ],
        "cannot be written to CSV",
    ),
    "overwriting an input": (
        ["{gauss}", "--method", "std-scaling", "--apply", "{gauss}", "-o", "{gauss}"],
        "refusing to overwrite",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_exits_3_and_writes_nothing(tmp_path, case):
    files = _bad_inputs(tmp_path)
    before = {p.name: _md5(p) for p in tmp_path.iterdir()}
    args, message = BAD[case]
    args = [a.format(dir=tmp_path, **files) for a in args]
    extra = [] if "-o" in args else ["--save", str(tmp_path / "new_model.json")]
    if "--apply" in args and "-o" not in args:
        extra += ["-o", str(tmp_path / "out.parquet")]
    if "--load" in args:
        extra = [e for e in extra if e != "--save" and not e.endswith("new_model.json")]
    r = _run(*args, *extra)
    assert r.exit_code == 3, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], r.stderr
    assert "Traceback" not in r.output
    assert {p.name: _md5(p) for p in tmp_path.iterdir()} == before  # nothing written, nothing changed


# ----------------------------------------------------------------------------- usage errors: exit 2


USAGE = {
    "neither FILE nor --load": ([], "--load"),
    "FILE and --load": (["{gauss}", "--load", "{dir}/model.json"], "not both"),
    "FILE without --method": (["{gauss}"], "--method is required"),
    "--apply without --output": (["{gauss}", "--method", "isotonic", "--apply", "{gauss}"], "--output"),
    "--output without --apply": (["{gauss}", "--method", "isotonic", "-o", "{dir}/o.parquet"], "--apply"),
    "unknown method": (["{gauss}", "--method", "magic"], ""),
    "criterion for isotonic": (
        ["{gauss}", "--method", "isotonic", "--criterion", "nll"],
        "--criterion applies",
    ),
    "fit option with --load": (["--load", "{dir}/model.json", "--seed", "3"], "--seed"),
    "--clusters without kmeans": (
        ["{point}", "--method", "accrue", "--features", "x", "--clusters", "3"],
        "--model kmeans",
    ),
    "accrue without features": (["{point}", "--method", "accrue"], "--features"),
    "bad output extension": (
        ["{gauss}", "--method", "isotonic", "--apply", "{gauss}", "-o", "{dir}/o.json"],
        ".parquet",
    ),
    "level out of range": (["{gauss}", "--method", "conformal", "--levels", "0.9,1.5"], "between 0 and 1"),
    "method differs from the saved one": (
        ["--load", "{dir}/model.json", "--method", "isotonic"],
        "does not match",
    ),
    "--save with --load": (["--load", "{dir}/model.json", "--save", "{dir}/again.json"], "--save"),
}


@pytest.mark.parametrize("case", list(USAGE))
def test_usage_errors_exit_2(tmp_path, case):
    files = _bad_inputs(tmp_path)
    before = {p.name: _md5(p) for p in tmp_path.iterdir()}
    args, message = USAGE[case]
    r = _run(*[a.format(dir=tmp_path, **files) for a in args])
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output
    assert {p.name: _md5(p) for p in tmp_path.iterdir()} == before


def test_conformal_reports_calibration_from_its_score_distribution(tmp_path):
    import numpy as np
    import pyarrow.parquet as pq
    from scipy.special import ndtr

    from uqeval.metrics.calibration import avg_calibration_gaussian, calibration_errors

    out, model = tmp_path / "c.parquet", tmp_path / "conf.json"
    r = runner.invoke(
        app,
        [
            "recalibrate",
            str(SAMPLE / "gaussian.parquet"),
            "--method",
            "conformal",
            "--apply",
            str(SAMPLE / "gaussian_const.parquet"),
            "-o",
            str(out),
            "--format",
            "json",
            "--save",
            str(model),
        ],
    )
    assert r.exit_code == 0, r.output
    files = json.loads(r.stdout)["files"]
    for role in ("calibration", "applied"):
        before, after = files[role]["before"], files[role]["after"]
        assert after["avg_calibration"]["ma_cal"] < before["avg_calibration"]["ma_cal"] / 10
        assert after["reliability"]["max_cal_err"] < before["reliability"]["max_cal_err"] / 5
    # before: the Gaussian interval-mode curve, as `uqeval score` computes it
    t = pq.read_table(SAMPLE / "gaussian.parquet").to_pydict()
    y, mu, sd = (np.asarray(t[c]) for c in ("y", "mu", "sigma"))
    assert files["calibration"]["before"]["avg_calibration"]["ma_cal"] == pytest.approx(
        avg_calibration_gaussian(y, mu, sd)["ma_cal"], rel=1e-12
    )
    # after, on the calibration file: the central PIT is the rank of each score among the stored scores
    state = json.loads(model.read_text())["state"]
    ref = np.asarray(state["score_sample"])
    c = np.searchsorted(ref, np.abs(y - mu) / sd, side="right") / ref.size
    expected = np.linspace(0, 1, 100)
    want = calibration_errors(expected, np.array([(c <= p).mean() for p in expected]))
    assert files["calibration"]["after"]["avg_calibration"]["ma_cal"] == pytest.approx(
        want["ma_cal"], rel=1e-12
    )
    assert files["calibration"]["before"]["reliability"]["max_cal_err"] > 0.2
    assert np.all(np.diff(ref) >= 0) and abs(2 * ndtr(0.0) - 1) < 1e-15
