"""Render a UCC summary (``uqeval.ucc/1``): Markdown, and rich tables for the terminal."""

from __future__ import annotations

from typing import Any

from ..errors import option
from ..text import fmt_number, fmt_percent
from .format import md_cell, md_table

_num = fmt_number
_pct = fmt_percent


def summary_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """``(header, rows)``: one row per model with AUUCC, constant-band AUUCC, gain, the partial
    area (when asked), the original operating point (k = 1) and the minimum-cost point k*."""
    s = summary["settings"]
    x, y = s["x_axis"], s["y_axis"]
    partial = s["partial_x"] is not None or s["partial_y"] is not None
    header = ["model", "AUUCC", "AUUCC const", "gain"]
    if partial:
        header += ["partial", "partial const", "partial gain"]
    header += [f"k=1 {x}", f"k=1 {y}", "k=1 cost", "k*", f"k* {x}", f"k* {y}", "k* cost"]
    rows = []
    for name, m in summary["models"].items():
        u = m["ucc"]
        row = [name, _num(u["auucc"]), _num(u["auucc_const"]), _pct(u["gain"])]
        if partial:
            p = u["partial"]
            row += [_num(p["auucc"]), _num(p["auucc_const"]), _pct(p["gain"])]
        op, om = u["op"], u["op_min"]
        row += [_num(v) for v in (op["x"], op["y"], op["cost"], om["k"], om["x"], om["y"], om["cost"])]
        rows.append(row)
    return header, rows


def pvalue_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]] | None:
    """``(header, rows)`` of the permutation test, one row per pair; None when not run."""
    t = summary.get("permutation_test")
    if not t:
        return None
    header = ["model a", "model b", "AUUCC a", "AUUCC b", "diff a − b", "p-value"]
    rows = [
        [p["a"], p["b"], _num(p["auucc_a"]), _num(p["auucc_b"]), _num(p["diff"]), _num(p["p_value"])]
        for p in t["pairs"]
    ]
    return header, rows


def _axis_label(axis: str, normalize: str) -> str:
    """``missrate`` or ``bandwidth [std(y)]`` (the plot's labels, without importing matplotlib)."""
    if axis == "missrate":
        return axis
    return f"{axis} [{'std(y)' if normalize == 'std' else 'units of y'}]"


def title(summary: dict[str, Any]) -> str:
    """One line: axes with their units, level, cost weight, partial range and rows."""
    s = summary["settings"]
    from ..metrics.intervals import level_key

    level = "per file" if s["level"] is None else level_key(s["level"])
    part = ""
    if s["partial_x"] is not None:
        part = f"; partial: x in [{_num(s['partial_x'][0])}, {_num(s['partial_x'][1])}]"
    elif s["partial_y"] is not None:
        part = f"; partial: y in [{_num(s['partial_y'][0])}, {_num(s['partial_y'][1])}]"
    return (
        f"UCC: x = {_axis_label(s['x_axis'], s['normalize'])}, y = {_axis_label(s['y_axis'], s['normalize'])}; "
        f"level {level}; cost c = {s['cost']:g}{part}; {summary['n_rows']} rows"
        + (f"; rows weighted ({option('weights')})" if summary.get("weights") else "")
    )


#: How to read the table: gain, k = 1 and k*.
CAPTION = (
    "gain = (AUUCC const − AUUCC) / AUUCC const, higher is better (const: constant-width band around "
    "the same prediction); k=1: the intervals as given; k*: minimum of the cost c·x + (1 − c)·y"
)


def pvalue_title(summary: dict[str, Any]) -> str:
    t = summary["permutation_test"]
    return (
        f"Paired permutation test of AUUCC differences ({t['n_permutations']} permutations, "
        f"seed {t['seed']}, two-sided)"
    )


def to_markdown(summary: dict[str, Any]) -> str:
    """The tables as GitHub Markdown."""

    def table(header: list[str], rows: list[list[str]]) -> list[str]:
        return md_table(header, rows, "l" + "r" * (len(header) - 1))

    lines = [
        f"**{md_cell(title(summary))}**",
        "",
        *table(*summary_rows(summary)),
        "",
        md_cell(CAPTION),
    ]
    pv = pvalue_rows(summary)
    if pv is not None:
        lines += ["", f"**{md_cell(pvalue_title(summary))}**", "", *table(*pv)]
    for note in summary.get("notes", []):
        lines += ["", f"note: {md_cell(note)}"]
    return "\n".join(lines) + "\n"


def _table(head: str | None, cap: str | None, header: list[str], rows: list[list[str]]):
    from ..text import markup as escape
    from .format import rich_table

    columns = [
        (
            escape(h),
            {
                "justify": "left" if i == 0 or h.startswith("model") else "right",
                "style": "cyan" if i == 0 else None,
                "no_wrap": True,
            },
        )
        for i, h in enumerate(header)
    ]
    return rich_table(columns, [[escape(c) for c in r] for r in rows], title=head, caption=cap)


def rich_tables(summary: dict[str, Any], width: int) -> list[Any]:
    """The summary table (as two tables, areas then operating points, when wider than ``width``)
    and the permutation test, as rich renderables."""
    from rich.console import Console

    header, rows = summary_rows(summary)
    header = [h.replace(" ", "\n", 1) for h in header]  # "k=1" over "bandwidth": narrower columns
    table = _table(title(summary), CAPTION, header, rows)
    out = [table]
    console = Console(width=width)
    if console.measure(table, options=console.options.update_width(100_000)).maximum > width:
        split = header.index("k=1\n" + summary["settings"]["x_axis"])
        cols = [list(range(split)), [0, *range(split, len(header))]]
        out = [
            _table(
                title(summary) if j == 0 else None,
                CAPTION if j == 1 else None,
                [header[i] for i in idx],
                [[r[i] for i in idx] for r in rows],
            )
            for j, idx in enumerate(cols)
        ]
    pv = pvalue_rows(summary)
    if pv is not None:
        out.append(_table(pvalue_title(summary), None, *pv))
    return out
