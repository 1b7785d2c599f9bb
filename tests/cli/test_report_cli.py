"""``uqeval report``: every metric of every file, embedded plots, UCC, glossary, escaping, real rendering."""

from __future__ import annotations

import base64
import html
import json
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.report.html import flatten

from ..conftest import SAMPLE, write_table
from ..report.test_html import images_loaded_in_chromium, needs_chromium, parse

runner = CliRunner()
XSS = "<script>alert(1)</script>"
NAME_XSS = '<img src=x onerror="alert(2)">.csv'


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def summary_of(path, *args) -> dict:
    r = invoke("score", path, "--format", "json", *args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two small Gaussian files over the same targets and a small classification file."""
    d = tmp_path_factory.mktemp("report")
    rng = np.random.default_rng(0)
    n = 300
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 1.5, n)
    y = mu + sd * rng.normal(size=n)
    shift = np.where(np.arange(n) < 150, "a", "b")
    a = write_table(d / "model_a.parquet", {"y": y, "mu": mu, "sigma": sd, "shift": shift})
    b = write_table(d / "model_b.csv", {"y": y, "mu": mu, "sigma": np.full(n, 1.0), "shift": shift})
    proba = rng.dirichlet(np.ones(3), size=n)
    c = write_table(
        d / "cls.parquet",
        {"label": rng.integers(0, 3, n), "p_0": proba[:, 0], "p_1": proba[:, 1], "p_2": proba[:, 2]},
    )
    return d, a, b, c


@pytest.fixture(scope="module")
def two_model_report(files):
    d, a, b, c = files
    out = d / "report.html"
    r = invoke("report", a, b, c, "--output", out, "--title", "Models & <friends>", "--max-points", "200")
    assert r.exit_code == 0, r.output
    assert "wrote" in r.stderr and "3 file(s)" in r.stderr
    return out.read_text(encoding="utf-8"), [summary_of(p) for p in (a, b, c)]


def test_report_holds_every_metric_key_of_every_summary(two_model_report):
    doc, summaries = two_model_report
    text = "".join(parse(doc).text)
    for s in summaries:
        for path, _ in flatten(s["metrics"]):
            assert path in text, path
        for path, _ in flatten(s["input"], "input"):
            assert path in text, path
    # the three files side by side, with orientation
    head = re.search(r'<table class="metrics"><thead><tr>(.*?)</tr>', doc).group(1)
    assert "model_a.parquet" in head and "model_b.csv" in head and "cls.parquet" in head
    row = re.search(r"<code>scoring_rule\.crps</code></a></th>(.*?)</tr>", doc).group(1)
    assert "lower is better" in row
    crps = [s["metrics"]["scoring_rule"]["crps"] for s in summaries[:2]]
    assert f"{crps[0]:.6g}" in row and f"{crps[1]:.6g}" in row
    assert "Models &amp; &lt;friends&gt;" in doc


def test_report_embeds_every_plot_and_the_ucc(two_model_report):
    doc, summaries = two_model_report
    imgs = [a for t, a in parse(doc).tags if t == "img"]
    # 5 key figures with both Gaussian files overlaid (calibration, reliability, PIT, UCC, spread-skill) and
    # the classifier's reliability diagram (a key figure of its own: its axes differ), the other 5 Gaussian
    # plots per regression file, the other 3 classification plots
    assert len(imgs) == 6 + 5 + 5 + 3
    for img in imgs:
        assert img["src"].startswith("data:image/png;base64,")
        data = base64.b64decode(img["src"].split(",", 1)[1])
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    alts = [i["alt"] for i in imgs]
    assert "Uncertainty characteristics curve of model_a.parquet, model_b.csv, overlaid" in alts
    assert "Reliability diagram of model_a.parquet, model_b.csv, overlaid" in alts
    assert "Reliability diagram (classifiers) of cls.parquet" in alts
    assert "Sharpness — model_a.parquet" in alts and "Sharpness — model_b.csv" in alts
    # UCC table rows (regression files only) and the glossary
    for key in ("ucc.auucc", "ucc.auucc_const", "ucc.gain", "ucc.op.k", "ucc.level"):
        assert f"<code>{key}</code>" in doc, key
    ids = {a.get("id") for _, a in parse(doc).tags}
    for key in ("scoring_rule.crps", "calibration.ece", "ucc.gain", "accuracy.mae"):
        assert f"glossary-{key}" in ids, key


def test_report_ucc_equals_uqeval_ucc(files, two_model_report):
    doc, _ = two_model_report
    d, a, b, c = files
    r = invoke("ucc", a, b, "--format", "json")
    assert r.exit_code == 0, r.output
    models = json.loads(r.stdout)["models"]
    row = re.search(r"<code>ucc\.auucc</code></a></th>(.*?)</tr>", doc).group(1)
    for m in models.values():
        assert f"{m['ucc']['auucc']:.6g}" in row


def test_report_has_group_tables_with_by(files, tmp_path):
    d, a, b, c = files
    out = tmp_path / "r.html"
    r = invoke("report", a, "--by", "shift", "-o", out, "--max-points", "100")
    assert r.exit_code == 0, r.output
    doc = out.read_text()
    groups = doc[doc.index('id="groups"') : doc.index('id="figures"')]
    assert "model_a.parquet — by shift" in groups
    text = "".join(parse(groups).text)
    summary = summary_of(a, "--by", "shift")
    assert sorted(summary["groups"]["values"]) == ["a", "b"]
    for value in summary["groups"]["values"].values():
        for path, _ in flatten(value["metrics"]):
            assert path in text, path


def test_strings_from_the_input_are_escaped_through_the_cli(tmp_path, gaussian_cols):
    # a column named like a script, in a file whose name is markup
    f = write_table(tmp_path / NAME_XSS, {"y": gaussian_cols["y"], XSS: gaussian_cols["mu"]})
    out = tmp_path / "r.html"
    r = invoke("report", f, "--mean", XSS, "-o", out)
    assert r.exit_code == 0, r.output
    doc = out.read_text()
    assert XSS not in doc and "<script" not in doc.lower() and NAME_XSS not in doc
    assert html.escape(XSS) in doc and html.escape(NAME_XSS) in doc


def test_svg_figures_are_embedded(tmp_path):
    out = tmp_path / "r.html"
    r = invoke(
        "report", SAMPLE / "intervals_multi.csv", "-o", out, "--plot-format", "svg", "--max-points", "200"
    )
    assert r.exit_code == 0, r.output
    imgs = [a for t, a in parse(out.read_text()).tags if t == "img"]
    assert len(imgs) == 3 and all(i["src"].startswith("data:image/svg+xml;base64,") for i in imgs)


def test_report_errors(files, tmp_path):
    d, a, b, c = files
    r = invoke("report", a, "-o", tmp_path / "missing" / "r.html")
    assert r.exit_code == 3 and "does not exist" in r.stderr
    r = invoke("report", a, "-o", tmp_path / "r.html", "--plot-format", "pdf")
    assert r.exit_code == 2 and "cannot be embedded" in r.stderr
    r = invoke("report", a, "-o", a)
    assert r.exit_code == 3 and "refusing to overwrite" in r.stderr
    r = invoke("report", a, tmp_path / "nope.csv", "-o", tmp_path / "r.html")
    assert r.exit_code == 3 and "does not exist" in r.stderr
    assert not (tmp_path / "r.html").exists()


def test_point_file_report_has_metrics_but_no_figures(tmp_path):
    out = tmp_path / "p.html"
    r = invoke("report", SAMPLE / "point.csv", "-o", out)
    assert r.exit_code == 0, r.output
    doc = out.read_text()
    assert "No figures." in doc and "<code>accuracy.rmse</code>" in doc and "<code>ucc." not in doc


@needs_chromium
def test_cli_report_renders_in_chromium_with_every_image_loaded(two_model_report, tmp_path):
    doc, _ = two_model_report
    result = images_loaded_in_chromium(doc, tmp_path)
    assert len(result) == 19
    assert all(r["ok"] for r in result), [r for r in result if not r["ok"]]


def test_report_compare_shows_the_paired_tests(files, tmp_path):
    d, a, b, c = files
    out = tmp_path / "r.html"
    r = invoke("report", a, b, "--compare", "-o", out, "--max-points", "100", "--dpi", "40")
    assert r.exit_code == 0, r.output
    doc = out.read_text()
    summary = doc[doc.index('id="summary"') : doc.index('id="key-figures"')]
    assert 'id="summary-tests"' in summary and "Paired tests (uqeval compare)" in summary
    r = invoke("compare", a, b, "--format", "json")
    tests = json.loads(r.stdout)["tests"]
    assert tests
    names = {"model_a": "model_a.parquet", "model_b": "model_b.csv"}  # compare drops the extension
    for t in tests:  # the same tests as uqeval compare, against the same best model
        assert re.search(
            rf"<code>{re.escape(t['metric'])}</code></th><td>{re.escape(names[t['model']])}</td>"
            rf"<td>{re.escape(names[t['reference']])}</td>",
            summary,
        ), t
    r = invoke("report", a, "--compare", "-o", tmp_path / "one.html")
    assert r.exit_code == 2 and "--compare needs at least two" in r.stderr
    r = invoke("report", a, c, "--compare", "-o", tmp_path / "mixed.html")  # other targets: bad input
    assert r.exit_code == 3 and not (tmp_path / "mixed.html").exists()


def test_values_near_1e308_give_notes_and_no_raw_warning_from_the_figure_workers(tmp_path):
    # issue 35: the figure worker process printed "RuntimeWarning: overflow encountered in scalar
    # subtract" on its own stderr beside the command's note of the warnings; a real process, as the
    # CLI draws in a worker only there (uqeval.cli.parallel_rendering, two cores or more)
    import subprocess
    import sys

    rng = np.random.default_rng(1)
    mean = rng.normal(size=200)
    cols = {"y": mean + rng.normal(size=200), "mean": mean, "std": np.ones(200)}
    cols["y"][3], cols["mean"][5] = 1e308, -1e308
    data = write_table(tmp_path / "big.csv", cols)
    r = subprocess.run(
        [sys.executable, "-m", "uqeval", "report", str(data), "-o", str(tmp_path / "r.html")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert any("numerical or drawing warning(s)" in ln for ln in lines)
    assert all(ln.startswith(("note: ", "wrote ")) for ln in lines), r.stderr


def test_targets_all_near_1e308_give_a_report(tmp_path):
    # fuzz seed 4242 (issue 35): "attempt to get argmin of an empty sequence" from the UCC's k*, then a
    # TypeError formatting a null AUUCC in the UCC overlay's legend
    rng = np.random.default_rng(1)
    mean, std = rng.normal(size=40), rng.uniform(0.5, 1.5, 40)
    f = write_table(tmp_path / "huge.parquet", {"y": np.full(40, 1e308), "mean": mean, "std": std})
    r = runner.invoke(app, ["report", str(f), "-o", str(tmp_path / "r.html")])
    assert r.exit_code == 0, r.output
    assert "could not be computed finitely" in r.stderr and (tmp_path / "r.html").exists()
