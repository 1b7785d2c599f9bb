"""The verdict (issue 39): its rules by simulation, where it shows, and that input strings stay data.

The simulations are benchmarks/verdict_sim.py's, with fewer seeds: a verdict is right in at least 95% of
seeds where its effect is detectable (that file's docstring says how "detectable" is computed), a
calibrated model is called miscalibrated in at most 5%, and equal models are "not distinguishable" in at
least 95%; each share is allowed 3 Monte-Carlo standard errors (the large run quotes the figures: the
docs page docs/guide/verdicts.md).
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import zlib

import numpy as np
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.cli import app
from uqeval.commands.verdict import check_aspect, holm, verdict_of, with_verdict
from uqeval.report.verdict import html_verdict, markdown_verdict, rich_verdict

from .conftest import ROOT, SAMPLE

runner = CliRunner()
_spec = importlib.util.spec_from_file_location("verdict_sim", ROOT / "benchmarks" / "verdict_sim.py")
assert _spec is not None and _spec.loader is not None
sim = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sim)


def _tolerance(p: float, seeds: int) -> float:
    return 3.0 * math.sqrt(p * (1 - p) / seeds)


# ------------------------------------------------------------------------------------------ simulations
@pytest.mark.parametrize("n", [200, 2000])
@pytest.mark.parametrize("case", list(sim.GAUSSIAN))
def test_gaussian_verdict_by_simulation(case, n):
    seeds = 300
    r = sim.run_case("gaussian", case, n, seeds)
    if case == "calibrated":
        assert r["wrong"] <= 0.05 + _tolerance(0.05, seeds), r
    elif r["detectable"]:
        assert r["right"] >= 0.95 - _tolerance(0.05, seeds), r
    else:  # bias +0.3σ at 200 rows: power 0.972 < 0.975, not "detectable"; still mostly right
        assert r["right"] >= 0.8, r


@pytest.mark.parametrize("n", [200, 2000])
@pytest.mark.parametrize("case", list(sim.CLASSIFIER))
def test_classifier_verdict_by_simulation(case, n):
    seeds = 200
    r = sim.run_case("classifier", case, n, seeds)
    if case == "calibrated":
        assert r["wrong"] <= 0.05 + _tolerance(0.05, seeds), r
    else:
        assert r["detectable"], r
        assert r["right"] >= 0.95 - _tolerance(0.05, seeds), r


def test_equal_models_are_not_distinguishable_by_simulation():
    seeds = 100
    r = sim.run_case("comparison", "equal models", 1000, seeds, n_permutations=999)
    assert r["right"] >= 0.95 - _tolerance(0.05, seeds), r


def test_a_known_crps_margin_is_found_by_simulation():
    seeds = 40
    case = "CRPS margin (std 1 vs 1.3)"
    assert sim.comparison_power((0.0, 1.0), (0.0, 1.3), 2000) > 0.99  # detectable at 2,000 rows
    r = sim.run_case("comparison", case, 2000, seeds, n_permutations=999)
    assert r["right"] >= 0.95 - _tolerance(0.05, seeds), r
    # the margin the sentence quotes is the known one, within its interval
    rng = np.random.default_rng([39, 2000, 0, zlib.crc32(case.encode())])
    doc = uqeval.compare(
        sim.comparison_models(rng, 2000, (0.0, 1.0), (0.0, 1.3)), metrics=["crps"], n_boot=200
    )
    ev = doc["verdict"]["aspects"][0]["evidence"][0]
    margin = sim.expected_crps(0.0, 1.3) - sim.expected_crps(0.0, 1.0)
    assert ev["low"] <= margin <= ev["high"] and ev["significant"] is True, ev


def test_expected_crps_closed_form_against_draws():
    rng = np.random.default_rng(3)
    y = rng.normal(size=200_000)
    from uqeval.metrics.scoring import crps_gaussian

    got = crps_gaussian(y, np.full_like(y, 0.3), np.full_like(y, 1.3)).mean()
    assert got == pytest.approx(sim.expected_crps(0.3, 1.3), abs=4e-3)


# ------------------------------------------------------------------------------------------ rules
def test_holm_step_down():
    assert holm([0.01, 0.04, 0.03], 0.05) == [True, False, False]
    assert holm([0.001, 0.02, 0.04], 0.05) == [True, True, True]
    assert holm([0.2, 0.001], 0.05) == [False, True]
    assert holm([], 0.05) == []


def test_check_aspect_says_which_rule_failed_and_by_how_much():
    report = {
        "schema": "uqeval.check/1",
        "rows": [
            {
                "path": "a.b",
                "check": "max",
                "status": "FAIL",
                "value": 0.3,
                "limit": "<= 0.25",
                "message": "m",
                "line": 4,
            },
            {
                "path": "c.d",
                "check": "min",
                "status": "FAIL",
                "value": 0.8,
                "limit": ">= 0.9",
                "message": "m",
            },
            {"path": "e.f", "check": "max", "status": "PASS", "value": 0.1, "limit": "<= 1", "message": "ok"},
        ],
    }
    aspect = check_aspect(report)
    assert aspect["label"] == "failed" and aspect["rule"] == "check-rules"
    assert [e["by"] for e in aspect["evidence"]] == pytest.approx([0.05, 0.1])
    assert "failed 2 of 3 checks" in aspect["sentence"] and "a.b max" in aspect["sentence"]
    report["rows"] = report["rows"][2:]
    assert check_aspect(report)["label"] == "passed"


def test_monitor_hook_reads_a_monitor_document():
    doc = {
        "schema": "uqeval.monitor/1",
        "alpha": 0.05,
        "tests": [
            {
                "name": "coverage@0.9",
                "alarm": True,
                "first_alarm": 12,
                "max_e_value": 90.0,
                "threshold": 40.0,
            },
            {
                "name": "pit_uniform",
                "alarm": False,
                "first_alarm": None,
                "max_e_value": 2.0,
                "threshold": 40.0,
            },
        ],
    }
    v = verdict_of(doc)
    assert v is not None and v["aspects"][0]["label"] == "alarm"
    assert "coverage@0.9 since row 12" in v["aspects"][0]["sentence"]
    doc["tests"][0]["alarm"] = False
    assert verdict_of(doc)["aspects"][0]["label"] == "no alarm"  # type: ignore[index]


def test_weighted_gaussian_uses_the_effective_size():
    rng = np.random.default_rng(5)
    n = 4000
    y = rng.normal(size=n)
    g = uqeval.Gaussian(y_true=y, mean=np.zeros(n), std=np.full(n, 0.7))
    w = np.where(np.arange(n) < 100, 1.0, 1e-9)  # almost all the weight on 100 rows
    doc = {"schema": "uqeval.score/1", "input": {"representation": "gaussian", "n_rows": n}, "metrics": {}}
    unweighted = verdict_of(doc, g)["aspects"][0]  # type: ignore[index]
    weighted = verdict_of(doc, g, w)["aspects"][0]  # type: ignore[index]
    p = {a["name"]: a["p_value"] for a in weighted["evidence"] if "p_value" in a}
    q = {a["name"]: a["p_value"] for a in unweighted["evidence"] if "p_value" in a}
    spread = "PIT spread mean |u - 1/2|"
    assert p[spread] > q[spread]  # 100 effective rows are weaker evidence than 4,000


def test_document_only_rule_on_a_streamed_summary():
    r = runner.invoke(
        app, ["score", str(SAMPLE / "gaussian.parquet"), "--engine", "stream", "--format", "json", "-q"]
    )
    assert r.exit_code == 0, r.output
    aspects = json.loads(r.stdout)["verdict"]["aspects"]
    assert aspects[0]["rule"] == "coverage-binomial" and aspects[0]["label"] == "overconfident"
    cover = next(e for e in aspects[0]["evidence"] if e["name"] == "coverage at 0.95")
    assert cover["low"] < cover["value"] < cover["high"] < 0.95


# ------------------------------------------------------------------------------------------ where it shows
def test_score_json_table_and_markdown_lead_with_the_verdict():
    path = str(SAMPLE / "gaussian.parquet")
    doc = json.loads(runner.invoke(app, ["score", path, "--format", "json"]).stdout)
    aspects = doc["verdict"]["aspects"]
    assert [a["aspect"] for a in aspects] == ["calibration", "action"]
    assert aspects[0]["label"] == "overconfident" and aspects[0]["rule"] == "pit-moments"
    assert aspects[1]["parameters"]["factor"] > 1.5 and "--method std-scaling" in aspects[1]["command"]
    assert "in-sample" in aspects[1]["sentence"]
    table = runner.invoke(app, ["score", path]).stdout
    assert table.lstrip().startswith("calibration: overconfident")
    md = runner.invoke(app, ["score", path, "--format", "markdown"]).stdout.splitlines()
    assert md[2].startswith("- **calibration**: overconfident") and md[3].startswith(
        "- **action**: std-scaling"
    )
    none = runner.invoke(app, ["score", path, "--no-verdict", "--format", "json"]).stdout
    assert "verdict" not in json.loads(none)
    assert "calibration:" not in runner.invoke(app, ["score", path, "--no-verdict"]).stdout


def test_compare_and_check_lead_with_the_verdict(tmp_path):
    a, b = str(SAMPLE / "gaussian.parquet"), str(SAMPLE / "gaussian_const.parquet")
    doc = json.loads(
        runner.invoke(app, ["compare", a, b, "--format", "json", "--permutations", "999"]).stdout
    )
    aspect = doc["verdict"]["aspects"][0]
    assert aspect["rule"] == "paired-holm" and "Holm over" in aspect["sentence"]
    md = runner.invoke(app, ["compare", a, b, "--format", "markdown", "-q"]).stdout.splitlines()
    assert md[2].startswith("- **comparison**:")  # -q keeps it
    assert "verdict" not in json.loads(
        runner.invoke(app, ["compare", a, b, "--format", "json", "--no-verdict"]).stdout
    )
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"coverage.0.95.coverage" = { min = 0.93 }\n')
    r = runner.invoke(app, ["check", a, "--rules", str(rules), "--format", "markdown"])
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("- **check**"))
    assert "coverage.0.95.coverage min" in lines[i] and "(by 0.173)" in lines[i]
    assert lines[i + 1].startswith("- **calibration**: overconfident")
    assert lines.index(next(line for line in lines if line.startswith("| Status"))) > i


def test_python_api_verdict():
    rng = np.random.default_rng(1)
    y = rng.normal(size=1000)
    s = uqeval.evaluate(y_true=y, mean=np.zeros(1000), std=np.full(1000, 1.4))
    assert s.verdict is not None and s.verdict["aspects"][0]["label"] == "underconfident"
    assert json.loads(s.to_json())["verdict"] == s.verdict
    s.verdict["aspects"].clear()  # a copy: the document is not changed
    assert s.verdict["aspects"]
    action = uqeval.evaluate_file(SAMPLE / "classification.parquet").verdict["aspects"][1]  # type: ignore[index]
    assert action["label"] == "temperature"
    # the temperature recalibrate fits on the same rows (one fit: uqeval.recalibration.temperature)
    from uqeval.io.load import load_predictions
    from uqeval.recalibration.temperature import fit_temperature

    pred = load_predictions(SAMPLE / "classification.parquet").prediction
    assert (
        action["parameters"]["temperature"]
        == fit_temperature(pred.proba, pred.labels, kind="proba")["temperature"]
    )


def test_verdict_blocks_match_the_schemas():
    jsonschema = pytest.importorskip("jsonschema")
    from uqeval import schemas

    standalone = schemas.load("verdict")
    for name in ("score", "compare", "check"):  # each document embeds the same block (self-contained schemas)
        embedded = schemas.load(name)["$defs"]
        body = {k: standalone[k] for k in ("type", "required", "additionalProperties", "properties")}
        # inside a document the version is the document's (golden files drop it at every depth)
        body["required"] = [k for k in body["required"] if k != "uqeval_version"]
        assert (
            json.loads(json.dumps(body).replace("#/$defs/aspect", "#/$defs/verdict_aspect"))
            == embedded["verdict"]
        )
        assert embedded["verdict_aspect"] == standalone["$defs"]["aspect"]
    for f in ("gaussian.parquet", "classification.parquet", "quantiles.parquet", "point.csv"):
        doc = json.loads(uqeval.evaluate_file(SAMPLE / f).to_json())
        jsonschema.Draft202012Validator(standalone).validate(doc["verdict"])
        jsonschema.Draft202012Validator(schemas.load("score")).validate(doc)


HOSTILE = "[bold]x[/bold]*<b>|`y`_\x1b[31m"


def test_input_strings_in_the_verdict_are_escaped_in_every_sink():
    rng = np.random.default_rng(2)
    n = 500
    y = rng.normal(size=n)
    models = {
        HOSTILE: uqeval.Gaussian(y_true=y, mean=np.zeros(n), std=np.ones(n)),
        "b": uqeval.Gaussian(y_true=y, mean=np.zeros(n), std=np.full(n, 3.0)),
    }
    doc = uqeval.compare(models, metrics=["crps"], n_boot=50, n_permutations=199)
    assert HOSTILE in doc["verdict"]["aspects"][0]["sentence"]  # the JSON holds the data as it is
    md = "\n".join(markdown_verdict(doc))
    assert "<b>" not in md and "\x1b" not in md and "\\*" in md and "\\|" in md
    html = html_verdict([(HOSTILE, doc)])
    assert "<b>|" not in html and "&lt;b&gt;" in html and "\x1b" not in html
    from rich.console import Console

    console = Console(record=True, width=300, color_system=None)
    console.print(rich_verdict(doc))
    text = console.export_text()
    assert "[bold]x[/bold]" in text and "\x1b" not in text  # printed, not rendered


def test_with_verdict_leaves_other_documents_alone():
    doc = {"schema": "uqeval.ucc/1"}
    assert with_verdict(doc) == {"schema": "uqeval.ucc/1"}


# ------------------------------------------------------------------------------------------ report
def _report(tmp_path, files, *extra):
    out = tmp_path / "report.html"
    r = runner.invoke(app, ["report", *map(str, files), "-o", str(out), "--dpi", "40", "-q", *extra])
    assert r.exit_code == 0, r.output
    return out.read_text(encoding="utf-8")


def test_report_verdict_is_above_the_scoreboard(tmp_path):
    files = [SAMPLE / "gaussian.parquet", SAMPLE / "gaussian_const.parquet"]
    doc = _report(tmp_path, files, "--compare")
    summary = doc[doc.index('<section id="summary">') :]
    assert summary.index('class="verdict"') < summary.index('class="scoreboard"')
    assert "gaussian.parquet — calibration</b>: overconfident" in summary
    assert re.search(r"<b>comparison</b>: gaussian\.parquet better than gaussian_const\.parquet", summary)
    plain = _report(tmp_path, files)
    assert "comparison</b>: not tested: the paired tests need --compare" in plain
    assert 'class="verdict"' not in _report(tmp_path, files, "--no-verdict")


def test_pit_and_ucc_legends_are_off_the_data():
    """The report's overlaid PIT and the UCC put their legend below the axes (issue 39)."""
    from uqeval.config import Settings
    from uqeval.plots.overlay import Overlays

    rng = np.random.default_rng(0)
    n = 500
    y = rng.normal(size=n)
    over = Overlays()
    for name, sd in (("a", 0.7), ("b", 1.0)):
        over.add(
            uqeval.Gaussian(y_true=y, mean=np.zeros(n), std=np.full(n, sd)),
            None,
            Settings(),
            name,
            {"path": name},
        )
    drawn = over.figures()
    for kind in ("pit", "ucc"):
        fig = drawn[kind][0]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        assert ax.get_legend() is None and fig.legends, kind
        legend_box = fig.legends[0].get_window_extent(renderer)
        assert legend_box.y1 <= ax.get_window_extent(renderer).y0 + 1, kind  # wholly below the axes


# ------------------------------------------------------------------------------------------ Chromium
def _first_screen(doc: str, tmp_path, name: str) -> dict:
    from .report.test_html import evaluate_in_chromium

    check = """(() => {
        const box = s => { const e = document.querySelector(s); return e ? e.getBoundingClientRect() : null; };
        const v = box('div.verdict'), b = box('table.scoreboard');
        return {screen: [window.innerWidth, window.innerHeight], verdict_top: v && v.top,
                verdict_bottom: v && v.bottom, board_top: b && b.top, board_bottom: b && b.bottom};
    })()"""
    d = tmp_path / name
    d.mkdir()
    return evaluate_in_chromium(doc, d, check, viewport=(1280, 800))


@pytest.mark.parametrize("n_files", [1, 3])
def test_verdict_and_scoreboard_on_the_first_screen_in_chromium(tmp_path, n_files):
    import base64
    import os
    import shutil
    import time

    from .report.test_html import CHROMIUM, DevTools

    if not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)):
        pytest.skip(
            f"headless Chromium not found at {CHROMIUM} (apt-get install -y chromium; .ci/run installs it)"
        )
    files = [SAMPLE / "gaussian.parquet", SAMPLE / "gaussian_const.parquet", SAMPLE / "quantiles.parquet"][
        :n_files
    ]
    doc = _report(tmp_path, files)
    got = _first_screen(doc, tmp_path, "layout")
    assert got["screen"] == [1280, 800], got
    assert got["verdict_top"] is not None and got["board_top"] is not None, got
    assert got["verdict_bottom"] <= got["board_top"] <= got["board_bottom"] <= 800, got
    # and a screenshot of that first screen, kept for a reader of the test's output
    page = tmp_path / "layout" / "report.html"
    profile = tmp_path / "shot"
    profile.mkdir()
    dt = DevTools(profile)
    try:
        target = dt.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = dt.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        dt.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        dt.call("Page.navigate", {"url": page.as_uri()}, session)
        for _ in range(400):
            ready = dt.call(
                "Runtime.evaluate", {"expression": "document.readyState", "returnByValue": True}, session
            )
            if ready["result"].get("value") == "complete":
                break
            time.sleep(0.05)
        png = base64.b64decode(dt.call("Page.captureScreenshot", {"format": "png"}, session)["data"])
    finally:
        dt.close()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1280, 800)
    (tmp_path / f"first-screen-{n_files}.png").write_bytes(png)


def test_monitor_leads_with_its_alarm_sentence(tmp_path):
    """issue 39's monitor verdict on issue 38's document: the alarm sentence (which test, since when, the
    estimated change and the metric behind it) in the JSON, first in the table and the Markdown; a
    calibrated stream says no alarm; --no-verdict leaves it out."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(3)
    n = 3000
    y = rng.normal(size=n)
    y[2000:] *= 2.0  # the forecast's std is now half the truth's from row 2000
    path = tmp_path / "m.csv"
    pd.DataFrame({"y": y, "mean": 0.0, "std": 1.0}).to_csv(path, index=False)
    r = runner.invoke(app, ["monitor", str(path), "--window", "200", "--format", "json"])
    assert r.exit_code in (0, 1), r.output
    (aspect,) = json.loads(r.stdout)["verdict"]["aspects"]
    assert aspect["label"] == "alarm" and aspect["rule"] == "monitor-e-values"
    assert (
        "coverage@0.95 since row" in aspect["sentence"]
        and "change estimated at row 2000" in aspect["sentence"]
    )
    r = runner.invoke(app, ["monitor", str(path), "--window", "200", "--format", "markdown"])
    assert r.stdout.lstrip().startswith("- **monitor**: alarm (change detectors, ARL 3650 windows)"), r.output
    r = runner.invoke(app, ["monitor", str(path), "--window", "200", "--no-verdict", "--format", "json"])
    assert "verdict" not in json.loads(r.stdout)
    pd.DataFrame({"y": rng.normal(size=n), "mean": 0.0, "std": 1.0}).to_csv(path, index=False)
    r = runner.invoke(app, ["monitor", str(path), "--window", "200"])
    assert r.exit_code == 0 and "no alarm (change detectors" in r.stdout.splitlines()[0], r.output


def test_monitor_markdown_leaves_a_blank_line_after_the_verdict():
    """The verdict's bullets end their list: the next line is blank, else Markdown reads the tests' title
    as a continuation of the last bullet (it did, in ``monitor --format markdown``)."""
    res = CliRunner().invoke(
        app, ["monitor", str(SAMPLE / "gaussian.parquet"), "--window", "200", "-f", "markdown"]
    )
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("- **"))
    assert lines[last + 1] == "" and lines[last + 2], lines[last : last + 3]
