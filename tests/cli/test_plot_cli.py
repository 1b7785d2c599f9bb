"""``uqeval plot`` and ``uqeval score --plot-dir``: valid images for every representation, options, errors."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.cli.plot import PlotKind
from uqeval.plots.kinds import PLOT_KINDS

from ..conftest import SAMPLE, write_table

runner = CliRunner()

# Sample file of each representation -> the plots `score --plot-dir` writes for it.
PLOTS_BY_FILE = {
    "gaussian.parquet": [
        "adversarial",
        "calibration",
        "intervals",
        "pit",
        "predictions",
        "reliability",
        "residuals",
        "sharpness",
        "ucc",
    ],
    "samples.parquet": [
        "adversarial",
        "calibration",
        "intervals",
        "pit",
        "predictions",
        "rejection",
        "reliability",
        "sharpness",
        "ucc",
    ],
    "quantiles.parquet": ["calibration", "intervals", "pit", "predictions", "ucc"],
    "intervals_multi.csv": ["intervals", "predictions", "ucc"],
    "classification.parquet": ["confidence", "rejection", "reliability", "sets"],
    "ensemble_classification.parquet": ["confidence", "rejection", "reliability", "sets"],
    "point.csv": [],
}


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height of a PNG after checking its signature and IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def assert_valid_png(data: bytes) -> None:
    w, h = png_size(data)
    assert w >= 600 and h >= 500, (w, h)  # 150 dpi figures
    assert len(data) > 10_000
    assert data.rstrip(b"\x00")[-8:-4] == b"IEND"


def invoke(*args: str):
    result = runner.invoke(app, [str(a) for a in args])
    return result


def test_kind_choices_match_the_plotting_module():
    assert [k.value for k in PlotKind] == list(PLOT_KINDS)


@pytest.mark.parametrize("name", list(PLOTS_BY_FILE))
def test_score_plot_dir_writes_every_applicable_plot_as_png(tmp_path, name):
    out = tmp_path / "plots"  # created by the command (its parent exists)
    result = invoke("score", SAMPLE / name, "--plot-dir", out, "--format", "json", "--max-points", "500")
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # stdout stays pure JSON
    files = sorted(p.name for p in out.iterdir())
    assert files == [f"{k}.png" for k in PLOTS_BY_FILE[name]]
    for f in files:
        assert_valid_png((out / f).read_bytes())
    if not PLOTS_BY_FILE[name]:
        assert "no plot applies to point predictions" in result.stderr


def test_plot_dir_does_not_change_the_summary(tmp_path):
    f = SAMPLE / "intervals_multi.csv"
    a = invoke("score", f, "--format", "json")
    b = invoke("score", f, "--format", "json", "--plot-dir", tmp_path / "p", "--plot-format", "svg")
    assert a.exit_code == 0 and b.exit_code == 0, b.output
    assert json.loads(a.stdout) == json.loads(b.stdout)
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == [
        "intervals.svg",
        "predictions.svg",
        "ucc.svg",
    ]


@pytest.fixture
def small(tmp_path, gaussian_cols):
    gaussian_cols["t"] = np.linspace(0.0, 1.0, 300)
    return write_table(tmp_path / "small.parquet", gaussian_cols)


@pytest.mark.parametrize(
    "kind", ["predictions", "calibration", "adversarial", "residuals", "reliability", "ucc"]
)
def test_plot_one_kind_writes_a_png(tmp_path, small, kind):
    out = tmp_path / f"{kind}.png"
    result = invoke("plot", small, "--kind", kind, "--output", out)
    assert result.exit_code == 0, result.output
    assert_valid_png(out.read_bytes())
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # atomic: no temp file left


def test_plot_formats_from_flag_or_suffix(tmp_path, small):
    for name, args, head in (
        ("a.svg", [], b"<?xml"),
        ("a.pdf", [], b"%PDF"),
        ("b", ["--plot-format", "svg"], b"<?xml"),
        ("c.png", ["--dpi", "60"], b"\x89PNG"),
    ):
        result = invoke("plot", small, "--kind", "pit", "-o", tmp_path / name, *args)
        assert result.exit_code == 0, result.output
        assert (tmp_path / name).read_bytes().startswith(head), name
    w, _ = png_size((tmp_path / "c.png").read_bytes())
    assert w == 384  # 6.4 in at 60 dpi
    result = invoke("plot", small, "--kind", "pit", "-o", tmp_path / "d.png", "--plot-format", "svg")
    assert result.exit_code == 2 and "make them agree" in result.stderr


def test_seed_and_max_points_control_the_scatter(tmp_path, small):
    def draw(name, *args):
        r = invoke("plot", small, "--kind", "residuals", "-o", tmp_path / name, "--max-points", "50", *args)
        assert r.exit_code == 0, r.output
        return (tmp_path / name).read_bytes()

    assert draw("a.png", "--seed", "1") == draw("b.png", "--seed", "1")
    assert draw("a.png", "--seed", "1") != draw("c.png", "--seed", "2")


def test_x_column_is_used_and_checked(tmp_path, small):
    out = tmp_path / "band.png"
    r = invoke("plot", small, "--kind", "predictions", "--x", "t", "-o", out)
    assert r.exit_code == 0, r.output
    no_x = tmp_path / "band_index.png"
    assert invoke("plot", small, "--kind", "predictions", "-o", no_x).exit_code == 0
    assert out.read_bytes() != no_x.read_bytes()
    r = invoke("plot", small, "--kind", "predictions", "--x", "nope", "-o", out)
    assert r.exit_code == 3 and "'nope' given for --x not found" in r.stderr
    # score fails before scoring (and writes nothing) when the column is missing
    r = invoke("score", small, "--plot-dir", tmp_path / "p", "--x", "nope", "-o", tmp_path / "s.json")
    assert r.exit_code == 3 and "'nope'" in r.stderr
    assert not (tmp_path / "p").exists() and not (tmp_path / "s.json").exists()


def test_x_column_follows_rows_kept_by_nan_policy_omit(tmp_path, gaussian_cols):
    gaussian_cols["sigma"][[3, 7]] = np.nan
    gaussian_cols["t"] = np.arange(300.0)
    gaussian_cols["t"][3] = np.nan  # a dropped row: its x does not matter
    f = write_table(tmp_path / "gaps.parquet", gaussian_cols)
    r = invoke(
        "plot", f, "--kind", "predictions", "--x", "t", "--nan-policy", "omit", "-o", tmp_path / "a.png"
    )
    assert r.exit_code == 0, r.output
    r = invoke("plot", f, "--kind", "predictions", "--x", "t", "-o", tmp_path / "b.png")
    assert r.exit_code == 3 and "sigma" in r.stderr


def test_kind_that_does_not_apply_exits_3_and_lists_kinds(tmp_path):
    r = invoke("plot", SAMPLE / "samples.parquet", "--kind", "residuals", "-o", tmp_path / "r.png")
    assert r.exit_code == 3, r.output
    assert "does not apply to samples" in r.stderr and "sharpness" in r.stderr and "Traceback" not in r.output
    r = invoke("plot", SAMPLE / "point.csv", "--kind", "calibration", "-o", tmp_path / "r.png")
    assert r.exit_code == 3 and "no uncertainty" in r.stderr
    assert not (tmp_path / "r.png").exists()
    r = invoke("plot", SAMPLE / "point.csv", "--kind", "violin", "-o", tmp_path / "r.png")
    assert r.exit_code == 2


def test_plot_dir_and_option_errors(tmp_path, small):
    r = invoke("score", small, "--plot-dir", tmp_path / "missing" / "plots")
    assert r.exit_code == 3 and "does not exist" in r.stderr
    (tmp_path / "file").write_text("x")
    r = invoke("score", small, "--plot-dir", tmp_path / "file")
    assert r.exit_code == 3 and "not a directory" in r.stderr
    for engine in ("memory", "stream"):  # the same refusal on every engine (streamed, it was silent)
        for extra in (["--max-points", "10"], ["--plot-format", "svg"], ["--x", "y"]):
            r = invoke("score", small, "--engine", engine, *extra)
            assert r.exit_code == 2 and "only apply with --plot-dir" in r.stderr, (engine, extra)
    r = invoke("score", small, "--plot-dir", tmp_path / "p", "--max-points", "0")
    assert r.exit_code == 2 and "--max-points must be >= 1" in r.stderr
    r = invoke("plot", small, "--kind", "pit", "-o", tmp_path / "nodir" / "a.png")
    assert r.exit_code == 3 and "does not exist" in r.stderr
    r = invoke("plot", small, "--kind", "pit", "-o", small)
    assert r.exit_code == 3 and "refusing to overwrite an input" in r.stderr


def test_intervals_can_be_ordered_by_prediction(tmp_path):
    from uqeval.cli import app as _app

    a, b = tmp_path / "t.png", tmp_path / "p.png"
    for path, extra in ((a, []), (b, ["--order-by", "prediction"])):
        r = runner.invoke(
            _app, ["plot", str(SAMPLE / "gaussian.parquet"), "--kind", "intervals", "-o", str(path), *extra]
        )
        assert r.exit_code == 0, r.output
    assert a.read_bytes()[:8] == b.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert a.read_bytes() != b.read_bytes()
    r = runner.invoke(
        _app,
        ["plot", str(SAMPLE / "gaussian.parquet"), "--kind", "intervals", "-o", str(a), "--order-by", "x"],
    )
    assert r.exit_code == 2
