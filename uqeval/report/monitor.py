"""The monitor document (``uqeval.monitor/1``) as Markdown and rich tables: one line per test first (its status,
the window its alarm began and, for a change detector, where the change began; its e-value and the metric
behind it), then the windows as one compact row each (at most :data:`MAX_WINDOW_ROWS`, the latest and those
with an alarm or a change), with the headline metrics."""

from __future__ import annotations

import math
from typing import Any

from ..catalogue.paths import flatten, is_number
from ..errors import option
from ..text import fmt_number
from .format import md_table

#: the metrics the window table (and ``--plot``) shows, in order of preference: ``group.key`` with the first
#: level of a by-level group; the first few present are shown
HEADLINE = (
    "coverage.coverage",
    "prediction_sets.coverage",
    "scoring_rule.crps",
    "scoring_rule.nll",
    "scoring_rule.wis",
    "scoring_rule.brier",
    "scoring_rule.log",
    "avg_calibration.miscal_area",
    "calibration.ece",
    "accuracy.rmse",
    "accuracy.accuracy",
    "sharpness.sharp",
)
MAX_HEADLINE = 4
#: headline metrics in the terminal's window table (it fits 80 columns with three)
MAX_TABLE_METRICS = 3
#: windows listed at most; beyond it the latest :data:`LATEST_WINDOWS` and every window with an alarm's start or
#: a change's start are, the rest are one "..." row (all of them are in ``--format json``)
MAX_WINDOW_ROWS = 60
LATEST_WINDOWS = 40
#: e-values at or above it print as "≥ 1e6" (their log10 is in the JSON: ``log10_e_value``)
E_SHOWN = 1e6


def headline_paths(metrics: dict[str, Any]) -> list[str]:
    """Full JSON paths (``coverage.0.95.coverage``) of the headline metrics present in ``metrics``."""
    leaves = [(p, v) for p, v in flatten(metrics) if is_number(v)]
    out: list[str] = []
    for short in HEADLINE:
        group, key = short.split(".", 1)
        hit = next(
            (p for p, _ in leaves if p.split(".")[0] == group and p.endswith("." + key) and p not in out),
            None,
        )
        if hit is not None:
            out.append(hit)
        if len(out) == MAX_HEADLINE:
            break
    return out or [p for p, _ in leaves[:MAX_HEADLINE]]


def value_at(metrics: dict[str, Any], path: str) -> Any:
    return dict(flatten(metrics)).get(path)


def short_name(path: str) -> str:
    """A column header for a metric path: ``coverage.0.95.coverage`` -> ``coverage@0.95``,
    ``scoring_rule.crps`` -> ``crps``."""
    parts = path.split(".")
    key = parts[-1]
    level = ".".join(parts[1:-1])
    return f"{key}@{level}" if level else key


def fmt_e(value: float | None) -> str:
    """An e-value as people read it: three significant digits, thousands as 7,300, from 1e6 on ``≥ 1e6``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if value >= E_SHOWN:
        return "≥ 1e6"
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def start_labels(doc: dict[str, Any]) -> list[str]:
    """Each window's start as text: ISO dates without the time when every window starts at midnight."""
    starts = [str(w["start"]) for w in doc["windows"]]
    if all(s.endswith("T00:00:00") for s in starts):
        return [s[:10] for s in starts]
    return starts


def in_alarm(t: dict[str, Any]) -> bool:
    """Whether a test is in alarm at the last window (``status``; ``alarm`` in documents without it)."""
    return t.get("status", "alarm" if t["alarm"] else "ok") == "alarm"


def _status(t: dict[str, Any], starts: list[str]) -> tuple[str, str, str]:
    """``(status, alarm window, change window)`` of a test at the last window (windows by their start)."""
    if in_alarm(t):
        since = t.get("alarm_since_window", t.get("first_alarm_window"))
        change = t.get("change_window")
        return "ALARM", "" if since is None else starts[since], "" if change is None else starts[change]
    earlier = len(t.get("alarms", []))
    return ("OK" if not earlier else f"OK ({earlier} earlier)"), "", ""


def _metric(t: dict[str, Any]) -> str:
    m = t.get("metric")
    if not m or m.get("value") is None:
        return ""
    return f"{fmt_number(m['value'])} ({fmt_number(m['target'])})"


def test_table(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """One row per test: name, status, the window its alarm began in, the change's first window, e-value, metric."""
    starts = start_labels(doc)
    detect = doc.get("mode") == "detect"
    rows = []
    for t in doc["tests"]:
        status, since, change = _status(t, starts)
        rows.append(
            [t["name"], status, since, *([change] if detect else []), fmt_e(t["e_value"]), _metric(t)]
        )
    head = ["test", "status", "alarm from", *(["change from"] if detect else []), "e-value", "metric"]
    return head, rows


def _tests_title(doc: dict[str, Any]) -> str:
    n = len(doc["tests"])
    threshold = doc["tests"][0]["threshold"] if doc["tests"] else 0
    if doc.get("mode") == "detect":
        return f"{n} change detector(s), alarm at {fmt_e(threshold)}, ARL ≥ {doc['arl']:g} windows"
    return f"{n} anytime-valid test(s), alarm at {fmt_e(threshold)}, alpha = {doc['alpha']:g}"


def _tests_caption(doc: dict[str, Any]) -> str:
    if doc.get("mode") == "detect":
        return "metric (target): since the change (OK: all windows); e-value: the detector's"
    return "metric (target): over all windows"


def _marks(doc: dict[str, Any]) -> tuple[dict[int, int], set[int]]:
    """Per window the number of tests at or above their threshold, and the windows where a change began."""
    alarms: dict[int, int] = {}
    changes: set[int] = set()
    for t in doc["tests"]:
        log_threshold = math.log(t["threshold"])
        for i, v in enumerate(t.get("log_e_values") or []):
            if v is not None and v >= log_threshold:
                alarms[i] = alarms.get(i, 0) + 1
        changes.update(a["change_window"] for a in t.get("alarms", []) if "change_window" in a)
    return alarms, changes


def _shown(doc: dict[str, Any], changes: set[int]) -> list[int | None]:
    """The window indices listed (None: a run of windows left out)."""
    n = len(doc["windows"])
    if n <= MAX_WINDOW_ROWS:
        return list(range(n))
    starts = {a["first_window"] for t in doc["tests"] for a in t.get("alarms", [])}
    keep = sorted(set(range(n - LATEST_WINDOWS, n)) | changes | starts)
    out: list[int | None] = []
    prev = -1
    for i in keep:
        if i > prev + 1:
            out.append(None)
        out.append(i)
        prev = i
    return out


def window_table(
    doc: dict[str, Any], n_metrics: int = MAX_HEADLINE
) -> tuple[list[str], list[list[str]], str]:
    """``(header, rows, caption)``: one row per window (its start, rows, headline metrics, how many tests are in
    alarm at its end; ``*``: a change estimated to begin there), then the cumulative row."""
    paths = headline_paths(doc["cumulative"]["metrics"])[:n_metrics]
    alarms, changes = _marks(doc)
    starts = start_labels(doc)
    n_tests = len(doc["tests"])
    rows = []
    for i in _shown(doc, changes):
        if i is None:
            rows.append(["...", "", *[""] * len(paths), ""])
            continue
        w = doc["windows"][i]
        rows.append(
            [starts[i] + ("*" if i in changes else ""), str(w["n_rows"])]
            + [fmt_number(value_at(w["metrics"], p)) for p in paths]
            + [f"ALARM {alarms[i]}/{n_tests}" if i in alarms else ""]
        )
    hidden = len(doc["windows"]) - sum(r[0] != "..." for r in rows)
    rows.append(
        ["all", str(doc["cumulative"]["n_rows"])]
        + [fmt_number(value_at(doc["cumulative"]["metrics"], p)) for p in paths]
        + [""]
    )
    notes = []
    if changes:
        notes.append("* a change estimated to begin in this window")
    if hidden:
        notes.append(f"... {hidden} window(s) not listed (all are in {option('format', 'json')})")
    return ["window", "rows", *(short_name(p) for p in paths), "alarm"], rows, "; ".join(notes)


def to_markdown(doc: dict[str, Any]) -> str:
    """The verdict's bullets (issue 39), the tests and the windows as Markdown."""
    from .verdict import markdown_verdict

    lines: list[str] = []
    if doc["tests"]:
        thead, trows = test_table(doc)
        lines += [f"{_tests_title(doc)}:", ""]
        lines += md_table(thead, trows, "l" * (len(thead) - 2) + "rl")
        lines += ["", f"({_tests_caption(doc)})", ""]
    head, rows, caption = window_table(doc)
    lines += [f"Metrics per window ({doc['input']['window']}):", ""]
    lines += md_table(head, rows, "lr" + "r" * (len(head) - 3) + "l")
    if caption:
        lines += ["", f"({caption})"]
    return "\n".join([*markdown_verdict(doc), *lines]) + "\n"


def rich_tables(doc: dict[str, Any]) -> list[Any]:
    from ..text import markup as escape
    from .format import rich_table
    from .verdict import rich_verdict

    out = [v for v in (rich_verdict(doc),) if v is not None]
    if doc["tests"]:
        thead, trows = test_table(doc)
        tcols = [
            (escape(h), {"justify": "right" if h == "e-value" else "left", "keep": 0 < i < len(thead) - 1})
            for i, h in enumerate(thead)
        ]
        out.append(
            rich_table(
                tcols,
                [[escape(c) for c in r] for r in trows],
                title=_tests_title(doc),
                caption=_tests_caption(doc),
            )
        )
    head, rows, caption = window_table(doc, MAX_TABLE_METRICS)
    columns = [
        (escape(h), {"justify": "left" if i == 0 or i == len(head) - 1 else "right", "keep": True})
        for i, h in enumerate(head)
    ]
    sections = [False] * (len(rows) - 1) + [True]
    out.append(
        rich_table(
            columns,
            [[escape(c) for c in r] for r in rows],
            title=f"{doc['input']['path']}: metrics per window ({doc['input']['window']})",
            caption=caption or None,
            sections=sections,
        )
    )
    return out
