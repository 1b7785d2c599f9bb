"""Render a recalibration summary: parameters, then per file the metrics before and after."""

from __future__ import annotations

import numbers
from typing import Any

from ..catalogue.paths import leaves, metric_orientation
from ..text import fmt_number
from .format import md_cell, md_table

_HEAD = ["group", "metric", "before", "after", "direction"]


def _plain(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    return float(v)


def _scalars(body: dict[str, Any]) -> dict[tuple[str, ...], Any]:
    """Scalar leaves of the metrics (arrays and lists are skipped)."""
    return {
        keys: v
        for keys, v in leaves(body, empty=False)
        if len(keys) >= 2 and (v is None or isinstance(v, (numbers.Number, str)))
    }


def metric_rows(block: dict[str, Any], orientation: dict[str, str]) -> list[list[str]]:
    """``[group, metric, before, after, direction]`` per scalar metric; level keys join the metric."""
    before, after = _scalars(block.get("before", {})), _scalars(block.get("after", {}))
    rows: list[list[str]] = []
    for keys in _ordered(before, after):
        direction = metric_orientation(keys, orientation, block.get("representation")) or ""
        rows.append(
            [
                keys[0],
                " ".join(keys[1:]),
                fmt_number(_plain(before[keys])) if keys in before else "n/a",
                fmt_number(_plain(after[keys])) if keys in after else "n/a",
                direction,
            ]
        )
    return rows


def _ordered(before: dict, after: dict) -> list[tuple[str, ...]]:
    """Groups in first-seen order (before, then after); within a group, before's keys then after's new ones."""
    out: list[tuple[str, ...]] = []
    for group in dict.fromkeys(k[0] for k in [*before, *after]):
        out += [k for k in dict.fromkeys([*before, *after]) if k[0] == group]
    return out


def param_rows(params: dict[str, Any]) -> list[list[str]]:
    return [[" ".join(keys), fmt_number(v)] for keys, v in leaves(params, empty=False)]


def title(summary: dict[str, Any]) -> str:
    src = (
        f"fitted on {summary['fitted_on']}"
        if summary.get("fitted_on")
        else f"loaded from {summary.get('loaded_from')}"
    )
    return f"recalibrate --method {summary['method']} ({src})"


def file_title(block: dict[str, Any]) -> str:
    return f"{block['role']}: {block['path']} ({block['n_rows']} rows, {block['representation']})"


def to_markdown(summary: dict[str, Any]) -> str:
    lines = [
        f"**{md_cell(title(summary))}**",
        "",
        *md_table(["parameter", "value"], param_rows(summary["parameters"]), "lr"),
    ]
    for block in summary["files"].values():
        lines += ["", f"**{md_cell(file_title(block))}**"]
        if "before" not in block:
            lines.append("no target column: nothing to score")
            continue
        if block.get("before_basis", "input") != "input":
            lines.append(f"before: {md_cell(block['before_basis'])}")
        lines += ["", *md_table(_HEAD, metric_rows(block, summary["orientation"]), "llrrl")]
    return "\n".join(lines) + "\n"


def rich_tables(summary: dict[str, Any]) -> list[Any]:
    from rich.text import Text

    from ..text import markup as escape, plain
    from .format import rich_table

    # the title is a line of its own: as a table title it wrapped to the narrow table's width
    out = [
        Text(plain(title(summary)), style="italic", overflow="fold"),  # control characters shown visibly
        rich_table(
            [("parameter", {"style": "cyan", "no_wrap": True}), ("value", {"justify": "right"})],
            [list(map(escape, r)) for r in param_rows(summary["parameters"])],
        ),
    ]
    columns = [
        (
            h,
            {
                "justify": "right" if h in ("before", "after") else "left",
                "style": "cyan" if h == "group" else ("dim" if h == "direction" else None),
                "no_wrap": h != "metric",
            },
        )
        for h in _HEAD
    ]
    for block in summary["files"].values():
        if "before" not in block:
            out.append(escape(f"{file_title(block)}: no target column, nothing to score"))
            continue
        basis = block.get("before_basis", "input")
        rows, sections, last = [], [], None
        for row in metric_rows(block, summary["orientation"]):
            sections.append(last is not None and row[0] != last)
            rows.append(list(map(escape, [row[0] if row[0] != last else "", *row[1:]])))
            last = row[0]
        out.append(
            rich_table(
                columns,
                rows,
                title=file_title(block),
                sections=sections,
                caption=None if basis == "input" else f"before: {basis}",
            )
        )
    return out
