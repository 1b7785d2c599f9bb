"""The monitor document (``uqeval.monitor/1``) as Markdown and rich tables: one row per window with the
headline metrics, then one row per test."""

from __future__ import annotations

from typing import Any

from ..catalogue.paths import flatten, is_number
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


def window_table(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    paths = headline_paths(doc["cumulative"]["metrics"])
    alarms: dict[int, list[str]] = {}
    for t in doc["tests"]:
        if t["first_alarm_window"] is not None:
            alarms.setdefault(t["first_alarm_window"], []).append(t["name"])
    rows = []
    for i, w in enumerate(doc["windows"]):
        rows.append(
            [str(w["start"]), str(w["end"]), str(w["n_rows"])]
            + [fmt_number(value_at(w["metrics"], p)) for p in paths]
            + [", ".join(alarms.get(i, []))]
        )
    rows.append(
        ["all", "", str(doc["cumulative"]["n_rows"])]
        + [fmt_number(value_at(doc["cumulative"]["metrics"], p)) for p in paths]
        + [""]
    )
    return ["start", "end", "rows", *paths, "first alarm of"], rows


def test_table(doc: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    rows = [
        [
            t["name"],
            fmt_number(t["e_value"]),
            fmt_number(t["max_e_value"]),
            fmt_number(t["threshold"]),
            "ALARM" if t["alarm"] else "ok",
            "" if t["first_alarm"] is None else str(t["first_alarm"]),
        ]
        for t in doc["tests"]
    ]
    return ["test", "e-value", "max e-value", "alarm at", "status", "first alarm"], rows


def to_markdown(doc: dict[str, Any]) -> str:
    head, rows = window_table(doc)
    lines = md_table(head, rows, "lll" + "r" * (len(head) - 3))
    if doc["tests"]:
        thead, trows = test_table(doc)
        lines += ["", f"Anytime-valid tests (family-wise alpha = {doc['alpha']:g}):", ""]
        lines += md_table(thead, trows, "lrrrll")
    return "\n".join(lines) + "\n"


def rich_tables(doc: dict[str, Any]) -> list[Any]:
    from ..text import markup as escape
    from .format import rich_table

    out = []
    head, rows = window_table(doc)
    columns = [
        (escape(h), {"justify": "left" if i < 2 or i == len(head) - 1 else "right"})
        for i, h in enumerate(head)
    ]
    sections = [False] * (len(rows) - 1) + [True]
    out.append(
        rich_table(
            columns,
            [[escape(c) for c in r] for r in rows],
            title=f"{doc['input']['path']}: metrics per window ({doc['input']['window']})",
            sections=sections,
        )
    )
    if doc["tests"]:
        thead, trows = test_table(doc)
        tcols = [(escape(h), {"justify": "right" if 0 < i < 4 else "left"}) for i, h in enumerate(thead)]
        out.append(
            rich_table(
                tcols,
                [[escape(c) for c in r] for r in trows],
                title=f"anytime-valid tests, family-wise alpha = {doc['alpha']:g}",
            )
        )
    return out
