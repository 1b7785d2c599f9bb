"""HTML report: completeness, structure snapshot, escaping, self-containment, real rendering."""

from __future__ import annotations

import base64
import copy
import fcntl
import html
import json
import os
import re
import select
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from uqeval.errors import InputError
from uqeval.plots.common import figure_to_bytes
from uqeval.plots.regression import plot_pit_histogram, plot_sharpness
from uqeval.report.html import flatten, image_data_uri, render_report


# ----------------------------------------------------------------------------- fixtures
def make_summary(shift: float = 0.0, name: str = "model_a.parquet") -> dict:
    """A summary shaped like `uqeval score` output for a Gaussian file."""
    return {
        "schema": "uqeval.score/1",
        "uqeval_version": "0.1.0",
        "input": {
            "path": f"data/{name}",
            "format": "parquet",
            "n_rows": 1000,
            "n_dropped": 0,
            "representation": "gaussian",
            "columns": {"y_true": "y", "mean": "mu", "std": "sigma"},
        },
        "settings": {"num_bins": 100, "resolution": 99, "seed": 0, "levels": [0.5, 0.95]},
        "metrics": {
            "accuracy": {
                "mae": 0.61 + shift,
                "rmse": 0.96 + shift,
                "mdae": 0.5,
                "marpd": 41.2,
                "r2": 0.83 - shift,
                "corr": 0.91,
            },
            "avg_calibration": {"rms_cal": 0.021, "ma_cal": 0.018 + shift, "miscal_area": 0.0182},
            "adv_group_calibration": {
                "group_sizes": [0.01, 0.12, 0.23, 0.34, 0.45, 0.56, 0.67, 0.78, 0.89, 1.0],
                "ma_mean": [0.31, 0.11, 0.08, 0.06, 0.05, 0.04, 0.035, 0.03, 0.025, 0.018],
                "ma_stderr": [0.02, 0.01, 0.006, 0.004, 0.003, 0.002, 0.002, 0.001, 0.001, 0.0],
                "rms_mean": [0.35, 0.13, 0.09, 0.07, 0.06, 0.05, 0.04, 0.035, 0.03, 0.021],
                "rms_stderr": [0.02, 0.01, 0.006, 0.004, 0.003, 0.002, 0.002, 0.001, 0.001, 0.0],
            },
            "sharpness": {"sharp": 0.93, "mean_std": 0.9},
            "scoring_rule": {"nll": 1.12 + shift, "crps": 0.44, "check": 0.22, "interval": 2.1},
            "reliability": {"rs": 0.0012, "max_cal_err": 0.031, "accrue": 0.27},
            "coverage": {
                "0.5": {
                    "coverage": 0.49,
                    "width": 1.2,
                    "coverage_error": -0.01,
                    "miss_below": 0.26,
                    "miss_above": 0.25,
                },
                "0.95": {
                    "coverage": 0.94,
                    "width": 3.5,
                    "coverage_error": -0.01,
                    "miss_below": 0.03,
                    "miss_above": 0.03,
                },
            },
        },
        "orientation": {
            "accuracy.mae": "lower",
            "accuracy.rmse": "lower",
            "accuracy.mdae": "lower",
            "accuracy.marpd": "lower",
            "accuracy.r2": "higher",
            "accuracy.corr": "higher",
            "avg_calibration.rms_cal": "lower",
            "avg_calibration.ma_cal": "lower",
            "avg_calibration.miscal_area": "lower",
            "sharpness.sharp": "lower",
            "sharpness.mean_std": "lower",
            "scoring_rule.nll": "lower",
            "scoring_rule.crps": "lower",
            "scoring_rule.check": "lower",
            "scoring_rule.interval": "lower",
            "reliability.rs": "lower",
            "reliability.max_cal_err": "lower",
            "reliability.accrue": "lower",
            "coverage.coverage": "target",
            "coverage.width": "lower",
            "coverage.coverage_error": "target",
            "coverage.miss_below": "target",
            "coverage.miss_above": "target",
        },
    }


UCC = {
    "x_axis": "bandwidth",
    "y_axis": "missrate",
    "normalize": "std",
    "auucc": 0.21,
    "auucc_const": 0.3,
    "gain": 0.3,
    "op": {"k": 1.0, "x": 0.9, "y": 0.05, "cost": 0.475},
    "op_min": {"k": 1.4, "x": 1.2, "y": 0.01, "cost": 0.4},
}


@pytest.fixture(scope="module")
def pngs() -> list[bytes]:
    rng = np.random.default_rng(0)
    return [
        figure_to_bytes(plot_sharpness(rng.uniform(0.2, 1.0, 300), title="Sharpness: a"), dpi=60),
        figure_to_bytes(plot_pit_histogram(rng.uniform(size=300), title="PIT: a"), dpi=60),
    ]


@pytest.fixture(scope="module")
def two_file_report(pngs) -> tuple[str, list[dict]]:
    entries = [
        {
            "name": "model_a.parquet",
            "summary": make_summary(0.0),
            "figures": [("Sharpness of model_a", pngs[0]), ("PIT histogram of model_a", pngs[1])],
            "ucc": UCC,
        },
        {
            "name": "model_b.parquet",
            "summary": make_summary(0.1, "model_b.parquet"),
            "figures": [("Sharpness of model_b", pngs[0])],
        },
    ]
    overlays = [
        {"title": "PIT histogram", "models": ["model_a.parquet", "model_b.parquet"], "image": pngs[1]}
    ]
    return render_report(entries, title="Comparison", overlays=overlays), entries


class TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(doc: str) -> TagCollector:
    p = TagCollector()
    p.feed(doc)
    return p


# ----------------------------------------------------------------------------- completeness
def test_every_scalar_metric_path_is_in_the_report(two_file_report):
    doc, entries = two_file_report
    text = "".join(parse(doc).text)
    for e in entries:
        for path, _value in flatten(e["summary"]["metrics"]):
            assert path in text, path
        for path, _value in flatten(e["summary"]["input"], "input"):
            assert path in text, path
    for path, _ in flatten(UCC, "ucc"):
        assert path in text, path
    # a list-valued metric is shown compactly with all of its values folded away
    assert "10 values, 0.018 … 0.31" in text
    assert "0.31, 0.11, 0.08" in text


def test_values_orientation_and_best_marking(two_file_report):
    doc, _ = two_file_report
    row = re.search(
        r"<tr><th scope=\"row\"><a [^>]*><code>accuracy\.mae</code></a></th>(.*?)</tr>", doc
    ).group(1)
    assert "lower is better" in row
    assert '<strong class="best">0.61</strong>' in row and ">0.71<" in row
    row_r2 = re.search(r"<code>accuracy\.r2</code></a></th>(.*?)</tr>", doc).group(1)
    assert "higher is better" in row_r2 and '<strong class="best">0.83</strong>' in row_r2
    row_cov = re.search(r"<code>coverage\.0\.95\.coverage</code></a></th>(.*?)</tr>", doc).group(1)
    assert "closest to target" in row_cov and "best" not in row_cov
    row_gain = re.search(r"<code>ucc\.gain</code></a></th>(.*?)</tr>", doc).group(1)
    assert "higher is better" in row_gain and "—" in row_gain  # model_b has no UCC


def test_figures_are_embedded_exactly(two_file_report, pngs):
    doc, entries = two_file_report
    imgs = [a for t, a in parse(doc).tags if t == "img"]
    assert len(imgs) == 4
    assert [i["alt"] for i in imgs] == [
        "PIT histogram of model_a.parquet, model_b.parquet, overlaid",  # the key figure first
        "Sharpness of model_a",
        "PIT histogram of model_a",
        "Sharpness of model_b",
    ]
    assert "<figcaption>PIT histogram — model_a.parquet, model_b.parquet</figcaption>" in doc
    for img, data in zip(imgs, [pngs[1], pngs[0], pngs[1], pngs[0]]):
        prefix = "data:image/png;base64,"
        assert img["src"].startswith(prefix)
        assert base64.b64decode(img["src"][len(prefix) :]) == data


def test_glossary_explains_present_metrics_only(two_file_report):
    doc, _ = two_file_report
    ids = {a.get("id") for _, a in parse(doc).tags}
    for key in (
        "accuracy.mae",
        "scoring_rule.crps",
        "reliability.max_cal_err",
        "coverage.coverage",
        "adv_group_calibration.ma_mean",
        "ucc.gain",
        "ucc.op",
    ):
        assert f"glossary-{key}" in ids, key
    assert "glossary-calibration.ece" not in ids
    assert "Camporeale" in doc and "Kompa" in doc and "Navrátil" in doc
    # every in-page link points at an existing id
    hrefs = [a["href"] for t, a in parse(doc).tags if t == "a"]
    assert hrefs and all(h.startswith("#") and h[1:] in ids for h in hrefs)


# ----------------------------------------------------------------------------- structure
EXPECTED_STRUCTURE = [
    ("header", "top"),
    ("h1", None),
    ("nav", "contents"),
    ("section", "summary"),
    ("h2", None),
    ("section", "key-figures"),
    ("h2", None),
    ("section", "metrics"),
    ("h2", None),
    ("h3", "metrics-accuracy"),
    ("h3", "metrics-avg_calibration"),
    ("h3", "metrics-adv_group_calibration"),
    ("h3", "metrics-sharpness"),
    ("h3", "metrics-scoring_rule"),
    ("h3", "metrics-reliability"),
    ("h3", "metrics-coverage"),
    ("h3", "metrics-ucc"),
    ("section", "figures"),
    ("h2", None),
    ("h3", "figures-1"),
    ("h3", "figures-2"),
    ("section", "inputs"),
    ("h2", None),
    ("h3", "settings"),
    ("section", "glossary"),
    ("h2", None),
    ("footer", None),
]


def structure(doc: str) -> list[tuple[str, str | None]]:
    keep = {"header", "nav", "section", "h1", "h2", "h3", "footer"}
    return [(t, a.get("id")) for t, a in parse(doc).tags if t in keep]


def test_structure_snapshot(two_file_report):
    doc, _ = two_file_report
    assert doc.startswith("<!DOCTYPE html>")
    assert structure(doc) == EXPECTED_STRUCTURE
    headings = [h for h in re.findall(r"<h2>(.*?)</h2>", doc)]
    assert headings == [
        "Summary",
        "Key figures",
        "All metrics",
        "Figures per file",
        "Inputs and settings",
        "Glossary",
    ]
    # the inputs and settings are folded away
    inputs = doc[doc.index('id="inputs"') : doc.index('id="glossary"')]
    assert "<details><summary>" in inputs and "data/model_a.parquet" in inputs


def test_structure_with_groups_and_no_figures():
    s = make_summary()
    s["groups"] = {
        "by": "shift",
        "values": {
            "0": {
                "n_rows": 500,
                "metrics": {"accuracy": {"mae": 0.5}, "coverage": {"0.95": {"coverage": 0.95}}},
            },
            "5": {
                "n_rows": 500,
                "metrics": {"accuracy": {"mae": 0.9}, "coverage": {"0.95": {"coverage": 0.81}}},
            },
        },
    }
    doc = render_report([{"name": "a.csv", "summary": s}])
    got = structure(doc)
    sections = [i for t, i in got if t == "section"]
    assert sections == ["summary", "metrics", "groups", "figures", "inputs", "glossary"]
    assert ("h3", "groups-1") in got
    assert "No figures." in doc and 'id="key-figures"' not in doc  # no overlays: no key figures section
    table = doc[doc.index('id="groups"') : doc.index('id="figures"')]
    assert "a.csv — by shift" in table
    assert "<code>accuracy.mae</code>" in table and "<code>n_rows</code>" in table
    assert '<th scope="col">0</th>' in table and '<th scope="col">5</th>' in table
    assert '<strong class="best">0.5</strong>' in table


def test_render_is_deterministic(pngs):
    entries = [{"name": "a", "summary": make_summary(), "figures": [("f", pngs[0])]}]
    assert render_report(entries) == render_report(copy.deepcopy(entries))


# ----------------------------------------------------------------------------- safety
XSS_COLUMN = "<script>alert(1)</script>"
XSS_FILE = '<img src=x onerror="alert(2)">.csv'


def xss_report(pngs) -> str:
    s = make_summary()
    s["input"]["columns"]["y_true"] = XSS_COLUMN
    s["input"]["path"] = XSS_FILE
    s["metrics"]["accuracy"]["<i>evil</i>"] = 1.0
    s["metrics"]["accuracy"]["note"] = "</td><script>alert(3)</script>"
    s["groups"] = {"by": "<b>site</b>", "values": {'"><svg onload=alert(4)>': {"accuracy": {"mae": 0.3}}}}
    s["settings"]["label"] = "<style>body{display:none}</style>"
    entries = [
        {
            "name": XSS_FILE,
            "summary": s,
            "figures": [('cap" onload="alert(5)', pngs[0])],
            "ucc": {"x_axis": "<u>x</u>"},
        }
    ]
    overlays = [{"title": "<em>kind</em>", "models": [XSS_FILE, XSS_COLUMN], "image": pngs[1]}]
    return render_report(entries, title="<title>t</title>", overlays=overlays)


def test_input_strings_are_escaped(pngs):
    doc = xss_report(pngs)
    for raw in (
        XSS_COLUMN,
        XSS_FILE,
        "<i>evil</i>",
        "</td><script>",
        "<b>site</b>",
        "<svg onload",
        "<u>x</u>",
        "<style>body",
        "<title>t</title>",
    ):
        assert raw not in doc, raw
    assert html.escape(XSS_COLUMN) in doc
    assert html.escape(XSS_FILE) in doc
    assert "&lt;i&gt;evil&lt;/i&gt;" in doc
    assert "<script" not in doc.lower()
    tags = parse(doc).tags
    allowed = {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "header",
        "h1",
        "h2",
        "h3",
        "p",
        "code",
        "nav",
        "ol",
        "li",
        "a",
        "section",
        "div",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "strong",
        "svg",
        "polyline",
        "span",
        "details",
        "summary",
        "figure",
        "img",
        "figcaption",
        "dl",
        "dt",
        "dd",
        "footer",
        "br",
        "wbr",
    }
    assert {t for t, _ in tags} <= allowed
    for t, attrs in tags:
        assert not any(k.startswith("on") for k in attrs), (t, attrs)
    assert [a["alt"] for t, a in tags if t == "img"] == [
        f"<em>kind</em> of {XSS_FILE}, {XSS_COLUMN}, overlaid",  # the key figure, its attribute escaped
        'cap" onload="alert(5)',
    ]
    assert "<em>" not in doc
    assert len([t for t, _ in tags if t == "style"]) == 1
    assert len([t for t, _ in tags if t == "title"]) == 1


def test_no_network_references(two_file_report, pngs):
    for doc in (two_file_report[0], xss_report(pngs)):
        assert "http://" not in doc and "https://" not in doc
        assert "//" not in re.sub(r"data:[^\"]+", "", doc).replace("<!DOCTYPE", "")
        for _t, attrs in parse(doc).tags:
            if "src" in attrs:
                assert attrs["src"].startswith("data:image/"), attrs["src"][:40]
            if "href" in attrs:
                assert attrs["href"].startswith("#")
        csp = [a for t, a in parse(doc).tags if t == "meta" and a.get("http-equiv")]
        assert csp and "default-src 'none'" in csp[0]["content"]


def test_bad_entries_and_images_raise():
    with pytest.raises(InputError, match="at least one entry"):
        render_report([])
    with pytest.raises(InputError, match="'name' and a 'summary'"):
        render_report([{"name": "a"}])
    with pytest.raises(InputError, match="not a PNG, SVG"):
        render_report([{"name": "a", "summary": make_summary(), "figures": [("x", b"hello")]}])
    with pytest.raises(InputError, match="pair"):
        render_report([{"name": "a", "summary": make_summary(), "figures": [b"\x89PNG"]}])


def test_image_data_uri_types():
    assert image_data_uri(b"<?xml version='1.0'?><svg/>").startswith("data:image/svg+xml;base64,")
    assert image_data_uri(b"\xff\xd8\xff\xe0").startswith("data:image/jpeg;base64,")


# ----------------------------------------------------------------------------- real browser
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Run in the page through the DevTools protocol (the report itself has no script):
# decode() rejects for an image that failed to load or decode.
IMAGE_CHECK = """Promise.all(Array.from(document.images).map(img => img.decode().then(
    () => ({alt: img.alt, ok: img.complete && img.naturalWidth > 0}),
    () => ({alt: img.alt, ok: false}))))"""


class DevTools:
    """Minimal Chrome DevTools Protocol client over --remote-debugging-pipe (fds 3 and 4)."""

    def __init__(self, profile: Path, timeout: float = 60.0) -> None:
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        # Move the child's ends above 10 so dup2 onto 3/4 never hits one of these fds.
        child_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(res_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(cmd_r)
        os.close(res_w)

        def wire_fds() -> None:  # runs in the child before exec
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        self.stderr = open(profile / "stderr.txt", "wb")
        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            preexec_fn=wire_fds,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.stderr,
        )
        os.close(child_r)
        os.close(child_w)
        self.w = os.fdopen(cmd_w, "wb")
        self.r = res_r
        self.buf = b""
        self.next_id = 0
        self.deadline = time.monotonic() + timeout

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.w.write(json.dumps(msg).encode() + b"\0")
        self.w.flush()
        while True:
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                reply = json.loads(raw)
                if reply.get("id") == self.next_id:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError(f"Chromium did not answer {method}")
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe")
            self.buf += chunk

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.w.close()
        os.close(self.r)
        self.stderr.close()


def evaluate_in_chromium(doc: str, tmp_path: Path, expression: str, viewport: tuple[int, int] = (1280, 800)):
    """Open the HTML file in headless Chromium at ``viewport`` (width, height in CSS px); return the value of
    ``expression`` (awaited) evaluated in the page."""
    page = tmp_path / "report.html"
    page.write_text(doc, encoding="utf-8")
    profile = tmp_path / "profile"
    profile.mkdir()
    dt = DevTools(profile)
    try:
        target = dt.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = dt.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        width, height = viewport
        dt.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session,
        )
        dt.call("Page.navigate", {"url": page.as_uri()}, session)
        # about:blank is "complete" at once: wait for the report.
        ready = "document.readyState === 'complete' ? location.href : ''"
        for _ in range(400):
            state = dt.call("Runtime.evaluate", {"expression": ready, "returnByValue": True}, session)
            if state["result"].get("value") == page.as_uri():
                break
            time.sleep(0.05)
        else:
            raise TimeoutError("the report never finished loading")
        out = dt.call(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            session,
        )
        return out["result"]["value"]
    finally:
        dt.close()


def images_loaded_in_chromium(doc: str, tmp_path: Path) -> list[dict]:
    """Open the HTML file in headless Chromium; return [{alt, ok}] for every <img>."""
    return evaluate_in_chromium(doc, tmp_path, IMAGE_CHECK)


needs_chromium = pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) and shutil.which(CHROMIUM)),
    reason=f"headless Chromium not found at {CHROMIUM}: install the Debian package 'chromium' "
    "(apt-get install -y chromium) to run the browser rendering test",
)


@needs_chromium
def test_report_renders_in_chromium_with_every_image_loaded(tmp_path, pngs):
    svg = figure_to_bytes(plot_sharpness(np.linspace(0.5, 1.5, 50)), fmt="svg")
    entries = [
        {
            "name": "a.parquet",
            "summary": make_summary(),
            "ucc": UCC,
            "figures": [("sharpness png", pngs[0]), ("pit png", pngs[1]), ("sharpness svg", svg)],
        },
        {"name": XSS_FILE, "summary": make_summary(0.1), "figures": [("second", pngs[1])]},
    ]
    result = images_loaded_in_chromium(render_report(entries), tmp_path)
    assert [r["alt"] for r in result] == ["sharpness png", "pit png", "sharpness svg", "second"]
    assert all(r["ok"] for r in result), result


@needs_chromium
def test_chromium_check_detects_a_broken_image(tmp_path, pngs):
    # Negative control: a PNG signature followed by garbage must be reported as not loaded.
    broken = b"\x89PNG\r\n\x1a\n" + b"not really a png" * 10
    entries = [{"name": "a", "summary": make_summary(), "figures": [("good", pngs[0]), ("broken", broken)]}]
    result = images_loaded_in_chromium(render_report(entries), tmp_path)
    assert result == [{"alt": "good", "ok": True}, {"alt": "broken", "ok": False}]


# the layout a reader sees first (issue 28): measured after every image has loaded
LAYOUT_CHECK = """Promise.all(Array.from(document.images).map(img => img.decode().catch(() => null))).then(() => {
    const top = el => el.getBoundingClientRect().top + window.scrollY;
    const board = document.querySelector('table.scoreboard');
    return {
        first: document.querySelector('body > section').id,
        screen: window.innerHeight,
        board_bottom: board.getBoundingClientRect().bottom + window.scrollY,
        detail: top(document.getElementById('metrics')),
        height: document.documentElement.scrollHeight,
        key: Array.from(document.querySelectorAll('#key-figures figure')).map(f => ({
            alt: f.querySelector('img').alt, caption: f.querySelector('figcaption').textContent,
            ok: f.querySelector('img').naturalWidth > 0})),
    };
})"""


@pytest.fixture(scope="module")
def two_gaussian_report(tmp_path_factory) -> str:
    """`uqeval report` of two Gaussian models of 2,000 rows (the acceptance case of issue 28)."""
    from typer.testing import CliRunner

    from uqeval.cli import app

    d = tmp_path_factory.mktemp("two_gaussians")
    rng = np.random.default_rng(28)
    n = 2000
    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = []
    for name, sd in (("sharp.parquet", 0.7), ("calibrated.parquet", 1.0)):
        paths.append(d / name)
        pq.write_table(pa.table({"y": y, "mean": mu, "std": np.full(n, sd)}), paths[-1])
    out = d / "report.html"
    r = CliRunner().invoke(app, ["report", *map(str, paths), "-o", str(out), "--dpi", "40", "-q"])
    assert r.exit_code == 0, r.output
    return out.read_text(encoding="utf-8")


@needs_chromium
def test_summary_leads_and_key_figures_overlay_every_model_in_chromium(two_gaussian_report, tmp_path):
    got = evaluate_in_chromium(two_gaussian_report, tmp_path, LAYOUT_CHECK)
    assert got["first"] == "summary"
    assert got["board_bottom"] <= got["screen"], got  # who wins is on the first screen
    # at most ~3 screens of summary and key figures before the per-file detail starts
    assert got["detail"] <= 3 * got["screen"], got
    assert {k["caption"].split(" — ")[0] for k in got["key"]} >= {
        "Average calibration",
        "Reliability diagram",
        "PIT histogram",
        "Uncertainty characteristics curve",
        "Spread-skill diagram",
    }
    for k in got["key"]:
        assert k["ok"], k
        for model in ("sharp.parquet", "calibrated.parquet"):
            assert model in k["alt"] and model in k["caption"], k


def test_summary_scoreboard_of_a_cli_report(two_gaussian_report):
    doc = two_gaussian_report
    summary = doc[doc.index('<section id="summary">') : doc.index('<section id="key-figures">')]
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', summary)
    assert [name for name, _ in rows] == ["sharp.parquet", "calibrated.parquet"]
    head = re.search(r"<thead>(.*?)</thead>", summary).group(1)
    for path in ("crps", "nll", "rmse", "miscal_area", "coverage", "width", "ratio"):
        assert f"{path}</code>" in head, path
    assert "coverage.<wbr>0.95.coverage</code>" in head
    assert "◎ closest to 0.95" in head and "◎ closest to 1" in head and "↓ lower" in head
    # the calibrated model is best on the calibration, coverage and spread-skill columns
    best = [len(re.findall('class="best"', cells)) for _, cells in rows]
    assert best[1] > best[0] and "<strong>calibrated.parquet</strong> holds the best value" in summary


# ----------------------------------------------------------------------------- monitor section
def test_monitor_section_follows_the_summary_escaped_with_alarms_and_plot(pngs, tmp_path):
    import uqeval
    from uqeval.plots.monitor import plot_monitor

    rng = np.random.default_rng(4)
    sd = np.where(np.arange(1500) >= 900, 0.5, 1.0)  # over-confident from row 900: an alarm
    doc = uqeval.monitor(y_true=rng.normal(size=1500), mean=0.0, std=sd, window=300)
    assert any(t["alarm"] for t in doc["tests"])
    doc["input"]["path"] = "<script>alert(1)</script>.parquet"
    doc["notes"] = ["a note with <b>markup</b>"]
    image = figure_to_bytes(plot_monitor(doc), dpi=50)
    entries = [{"name": "model_a.parquet", "summary": make_summary(0.0), "figures": []}]
    page = render_report(entries, monitor={"name": "m<1>.json", "doc": doc, "image": image})
    ids = re.findall(r'<section id="([^"]+)"', page)
    assert ids.index("summary") + 1 == ids.index("monitor")  # right after the summary
    assert '<a href="#monitor">Monitor</a>' in page
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;.parquet" in page
    assert "&lt;b&gt;markup&lt;/b&gt;" in page and "m&lt;1&gt;.json" in page
    assert image_data_uri(image) in page
    section = page[page.index('<section id="monitor"') : page.index("</section>", page.index('id="monitor"'))]
    n_alarms = sum(t["status"] == "alarm" for t in doc["tests"])
    assert n_alarms and f"Change detectors: {n_alarms} in alarm" in section
    assert section.count('<td class="alarm">ALARM</td>') == n_alarms
    assert section.count("<tr") == 1 + len(doc["tests"]) + 1 + len(doc["windows"]) + 1  # heads, rows, "all"
    with pytest.raises(InputError, match="monitor"):
        render_report(entries, monitor={"name": "x", "doc": {"schema": "uqeval.score/1"}, "image": None})


def test_report_cli_refuses_a_file_that_is_not_a_monitor_document(tmp_path):
    from typer.testing import CliRunner

    from uqeval.cli import app

    bad = tmp_path / "m.json"
    bad.write_text('{"schema": "uqeval.score/1"}')
    sample = Path(__file__).resolve().parents[2] / "sample_data" / "gaussian.parquet"
    r = CliRunner().invoke(
        app, ["report", str(sample), "-o", str(tmp_path / "r.html"), "--monitor", str(bad)]
    )
    assert r.exit_code == 3, r.output
    assert "not a uqeval.monitor/1 document" in r.output and not (tmp_path / "r.html").exists()
