"""`uqeval coverage`: methods x shift groups, least-squares share above the line (Kompa et al. Figs 7-10)."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.commands.coverage.core import above_line

from ..conftest import ROOT, SAMPLE, write_table

runner = CliRunner()


def _json(args):
    r = runner.invoke(app, ["coverage", *args, "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_gaussian_and_its_quantile_conversion_cover_the_same_rows():
    # quantiles.parquet holds mu + Phi^-1(tau) sigma of gaussian.parquet (sample_data/make_samples.py)
    out = _json([str(SAMPLE / "gaussian.parquet"), str(SAMPLE / "quantiles.parquet"), "--levels", "0.95,0.5"])
    by = {(p["method"], p["level"]): p for p in out["points"]}
    for lv in ("0.95", "0.5"):
        assert by[("gaussian", lv)]["coverage"] == by[("quantiles", lv)]["coverage"]
        assert by[("gaussian", lv)]["width"] == pytest.approx(by[("quantiles", lv)]["width"], rel=1e-12)


def test_by_shift_facets_and_plot(tmp_path):
    plot = tmp_path / "cov.png"
    out = _json(
        [
            str(SAMPLE / "gaussian.parquet"),
            str(SAMPLE / "gaussian_const.parquet"),
            str(SAMPLE / "samples.parquet"),
            "--by",
            "shift",
            "--plot",
            str(plot),
            "--train",
            str(SAMPLE / "train.parquet"),
        ]
    )
    assert {p["facet"] for p in out["points"]} == {"0", "1", "2"}
    assert sum(p["n_rows"] for p in out["points"] if p["method"] == "samples") == 2000
    assert all("width_norm" in p for p in out["points"])
    assert set(out["fit"]) == {"0", "1", "2"} and out["fit"]["0"]["0.95"]["x"] == "width_norm"
    data = plot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    # coverage falls as shift grows in the sample data (targets noisier than the model believes)
    cov = {p["facet"]: p["coverage"] for p in out["points"] if p["method"] == "gaussian"}
    assert cov["0"] > cov["1"] > cov["2"]


def test_share_above_least_squares_line_by_hand():
    # three methods, two points each; line fitted across all six points
    recs = []
    pts = {"a": [(1.0, 0.9), (2.0, 0.97)], "b": [(1.0, 0.8), (2.0, 0.85)], "c": [(1.5, 0.9), (3.0, 0.99)]}
    for m, xy in pts.items():
        for i, (w, c) in enumerate(xy):
            recs.append(
                {"method": m, "facet": "1", "point": str(i), "level": "0.95", "coverage": c, "width": w}
            )
    fit = above_line(recs)["1"]["0.95"]
    x = np.array([w for xy in pts.values() for w, _ in xy])
    y = np.array([c for xy in pts.values() for _, c in xy])
    slope, intercept = np.polyfit(x, y, 1)
    assert fit["slope"] == pytest.approx(slope) and fit["intercept"] == pytest.approx(intercept)
    expect = {m: np.mean([c > slope * w + intercept for w, c in xy]) for m, xy in pts.items()}
    assert fit["fraction_above"] == pytest.approx(expect)
    assert fit["fraction_above"]["a"] == 1.0 and fit["fraction_above"]["b"] == 0.0


def test_points_by_and_names(tmp_path):
    rng = np.random.default_rng(1)
    n = 600
    mean = rng.normal(size=n)
    y = mean + rng.normal(size=n)
    cols = {
        "y": y,
        "mean": mean,
        "std": np.ones(n),
        "shift": rng.integers(0, 2, n),
        "corruption": rng.choice(["blur", "noise", "fog"], n),
    }
    a = write_table(tmp_path / "run1.parquet", cols)
    b = write_table(tmp_path / "run2.parquet", {**cols, "std": np.full(n, 2.0)})
    out = _json([str(a), str(b), "--by", "shift", "--points-by", "corruption", "--name", "m", "--name", "m"])
    assert {p["method"] for p in out["points"]} == {"m"}
    assert len(out["points"]) == 2 * 2 * 3  # files x shift levels x corruption types
    r = runner.invoke(app, ["coverage", str(a), "--name", "x", "--name", "y"])
    assert r.exit_code == 2 and "--name was given 2 time(s) for 1 file(s)" in r.stderr  # a usage error


def test_classification_prediction_sets():
    out = _json([str(SAMPLE / "classification.parquet"), "--by", "shift", "--levels", "0.9"])
    assert {p["level"] for p in out["points"]} == {"0.9"}
    assert all(1.0 <= p["width"] <= 4.0 for p in out["points"])  # mean set size


def test_point_predictions_have_no_coverage():
    r = runner.invoke(app, ["coverage", str(SAMPLE / "point.csv")])
    assert r.exit_code == 3 and "no intervals" in r.stderr


@pytest.mark.parametrize(
    ("cols", "found"),
    [
        ({"q0.5": [1.1, 2.0, 2.9]}, "only a single quantile level (column 'q0.5', level 0.5)"),
        (
            {"q0.1": [0.0, 1.0, 2.0], "q0.5": [1.0, 2.0, 3.0], "q0.8": [2.0, 3.0, 4.0]},
            "no pair of levels tau and 1 - tau among the quantile columns 'q0.1', 'q0.5', 'q0.8'",
        ),
    ],
)
@pytest.mark.parametrize("command", ["coverage", "ucc"])
def test_quantiles_without_a_central_pair_say_why_there_is_nothing(tmp_path, command, cols, found):
    """Not an empty table, nor "levels none": the file, the column and why (issue 26/28 follow-up)."""
    path = write_table(tmp_path / "median.csv", {"y": [1.0, 2.0, 3.0], **cols})
    r = runner.invoke(app, [command, str(path)])
    assert r.exit_code == 3, r.output
    assert str(path) in r.stderr and "no central interval" in r.stderr and found in r.stderr, r.stderr
    assert "levels none" not in r.stderr and "Traceback" not in r.output
    assert r.stdout == ""  # no empty table


def test_api_quantiles_without_a_central_pair_say_why_there_is_nothing():
    import uqeval

    q = uqeval.Quantiles(y_true=np.arange(4.0), quantiles=np.arange(4.0)[:, None] + 0.1, levels=[0.5])
    with pytest.raises(
        uqeval.InputError, match=r"median: no UCC: no central interval, only a single quantile"
    ):
        uqeval.ucc({"median": q})
    pytest.importorskip("matplotlib")
    with pytest.raises(uqeval.UsageError, match=r"kind='coverage' .*only a single quantile level"):
        uqeval.plot(q, "coverage")


def test_table_and_markdown(monkeypatch):
    monkeypatch.chdir(ROOT)
    r = runner.invoke(
        app, ["coverage", "sample_data/gaussian.parquet", "--by", "shift", "--format", "markdown"]
    )
    assert r.exit_code == 0 and "| gaussian | 0 | all | 0.95 |" in r.stdout
    r = runner.invoke(app, ["coverage", "sample_data/gaussian.parquet", "--by", "shift"])
    assert r.exit_code == 0 and "share above fit" in r.stdout


def test_mixed_tasks_and_files_without_intervals_are_errors():
    r = runner.invoke(
        app, ["coverage", str(SAMPLE / "gaussian.parquet"), str(SAMPLE / "classification.parquet")]
    )
    assert r.exit_code == 3 and "gaussian.parquet holds regression intervals but" in r.stderr
    assert "classification.parquet classification prediction sets" in r.stderr
    r = runner.invoke(app, ["coverage", str(SAMPLE / "loglik.parquet")])
    assert r.exit_code == 3 and "loglik predictions have no intervals" in r.stderr


def test_a_settings_file_by_names_the_facets_as_the_flag_does(tmp_path):
    """``[columns] by`` in a settings file facets the rows as ``--by`` does, and the document names it (it said
    ``"by": null``, and the figure's legend "group")."""
    config = tmp_path / "uqeval.toml"
    config.write_text('[columns]\nby = "shift"\n')
    path = str(SAMPLE / "classification.parquet")
    from_file = _json([path, "--config", str(config), "--levels", "0.9"])
    from_flag = _json([path, "--by", "shift", "--levels", "0.9"])
    assert from_file["by"] == from_flag["by"] == "shift"
    assert from_file["points"] == from_flag["points"] and len({p["facet"] for p in from_flag["points"]}) > 1
