"""The Markdown and rich tables of the coverage document (``uqeval.coverage/1``,
:func:`uqeval.commands.coverage.core.run_coverage`)."""

from __future__ import annotations

from typing import Any

from ..text import fmt_number
from .format import md_table


def _table(result: dict[str, Any]) -> tuple[list[str], list[list[str]], str]:
    xkey = "width_norm" if all("width_norm" in r for r in result["points"]) else "width"
    rows = []
    for r in result["points"]:
        frac = result["fit"][r["facet"]][r["level"]]["fraction_above"][r["method"]]
        rows.append(
            [
                r["method"],
                r["facet"],
                r["point"],
                r["level"],
                str(r["n_rows"]),
                fmt_number(r["coverage"]),
                fmt_number(r[xkey]),
                fmt_number(frac),
            ]
        )
    head = [
        "method",
        result["by"] or "group",
        result["points_by"] or "point",
        "level",
        "rows",
        "coverage",
        xkey,
        "share above fit",
    ]
    if result.get("weights"):  # --weights: weighted coverage and mean width
        head[5:7] = [f"{h} (weighted)" for h in head[5:7]]
    return head, rows, "llll"


def to_markdown(result: dict[str, Any]) -> str:
    head, rows, _ = _table(result)
    return "\n".join(md_table(head, rows)) + "\n"


def rich_table(result: dict[str, Any]):
    from ..text import markup as escape
    from .format import rich_table as table

    head, rows, left = _table(result)
    columns = [(escape(h), {"justify": "left" if i < len(left) else "right"}) for i, h in enumerate(head)]
    return table(
        columns, [[escape(c) for c in r] for r in rows], title="coverage and width per method and group"
    )
