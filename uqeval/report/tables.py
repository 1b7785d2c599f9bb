"""Render a score summary (``uqeval.score/1``) as a rich table or Markdown. Strings only; the CLI prints them."""

from __future__ import annotations

from typing import Any

from ..catalogue.paths import leaves, metric_orientation
from ..text import fmt_number
from .format import md_cell, md_table, rich_table as _rich_table

DIRECTION = {"lower": "lower is better", "higher": "higher is better", "target": "closer to target"}
SHORT = {"lower is better": "↓ lower", "higher is better": "↑ higher", "closer to target": "◎ target"}


def _raw_rows(
    metrics: dict[str, Any], orient: dict[str, str], kind: str | None
) -> list[tuple[str, str, Any, str]]:
    """``(group, metric label, value, direction)`` for every leaf; level keys join the metric label."""
    return [
        (keys[0], " ".join(keys[1:]), v, DIRECTION.get(metric_orientation(keys, orient, kind) or "", ""))
        for keys, v in leaves(metrics, empty=False)
        if len(keys) >= 2
    ]


def _kind(summary: dict[str, Any]) -> str | None:
    return (summary.get("input") or {}).get("representation")


def metric_rows(summary: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """``(group, metric, value, direction)`` rows in summary order; level keys join the metric name."""
    return [
        (g, m, fmt_number(v), d)
        for g, m, v, d in _raw_rows(
            summary.get("metrics", {}), summary.get("orientation", {}), _kind(summary)
        )
    ]


#: most ``--by`` values the table shows as columns (more: the whole data's column only)
TABLE_GROUPS = 50


def grouped_rows(summary: dict[str, Any]) -> tuple[list[str], list[tuple[str, str, list[str], str]]]:
    """With ``--by``: column labels and ``(group, metric, [overall, per value...], direction)`` rows."""
    orient, kind = summary.get("orientation", {}), _kind(summary)
    values = summary["groups"]["values"]
    column = summary["groups"].get("column") or "group"
    if len(values) > TABLE_GROUPS:  # a grid's cells (score --preserve-dims): the whole data only
        head = f"all\n({len(values):,} {column} values: in the JSON or NetCDF output)"
        rows = _raw_rows(summary.get("metrics", {}), orient, kind)
        return [head], [
            (g, m, [f"[{len(v)}]" if isinstance(v, list) else fmt_number(v)], d) for g, m, v, d in rows
        ]
    labels = ["all"] + [f"{column}={v}\nn={body['n_rows']}" for v, body in values.items()]
    per_value = [
        {(g, m): val for g, m, val, _ in _raw_rows(body["metrics"], orient, kind)} for body in values.values()
    ]
    rows = []
    for g, m, v, d in _raw_rows(summary.get("metrics", {}), orient, kind):
        cells = [v] + [pv.get((g, m)) for pv in per_value]
        rows.append((g, m, [f"[{len(c)}]" if isinstance(c, list) else fmt_number(c) for c in cells], d))
    return labels, rows


def header_line(summary: dict[str, Any]) -> str:
    inp = summary.get("input", {})
    s = f"{inp.get('path')}: {inp.get('n_rows')} rows, representation {inp.get('representation')}"
    if inp.get("n_dropped"):
        s += f", {inp['n_dropped']} dropped (NaN/inf)"
    return s


def _rows(summary: dict[str, Any]) -> tuple[list[str], list[tuple[str, str, list[str], str]]]:
    if "groups" in summary:
        return grouped_rows(summary)
    return ["value"], [(g, m, [v], d) for g, m, v, d in metric_rows(summary)]


def rich_table(summary: dict[str, Any]):
    from ..text import markup as escape

    labels, rows = _rows(summary)
    columns: list[tuple[str, dict[str, Any]]] = [
        ("group", {"style": "cyan", "no_wrap": True}),
        ("metric", {"no_wrap": True}),
    ]
    columns += [(escape(label), {"justify": "right", "no_wrap": True}) for label in labels]
    columns += [("better", {"style": "dim", "no_wrap": True, "min_width": 8})]
    cells, sections, last = [], [], None
    for group, metric, values, direction in rows:
        sections.append(last is not None and group != last)
        cells.append(
            [
                escape(group) if group != last else "",
                escape(metric),
                *map(escape, values),
                SHORT.get(direction, direction),
            ]
        )
        last = group
    return _rich_table(columns, cells, title=header_line(summary), sections=sections)


def markdown(summary: dict[str, Any]) -> str:
    from .verdict import markdown_verdict

    labels, rows = _rows(summary)
    lines = [
        f"**{md_cell(header_line(summary))}**",
        "",
        *markdown_verdict(summary),
        *md_table(
            ["group", "metric", *labels, "direction"],
            [[g, m, *values, d] for g, m, values, d in rows],
            "ll" + "r" * len(labels) + "l",
        ),
    ]
    return "\n".join(lines) + "\n"
