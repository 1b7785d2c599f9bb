"""Render a summary as rich tables or Markdown. Strings only; the CLI prints them."""

from __future__ import annotations

from typing import Any

DIRECTION = {"lower": "lower is better", "higher": "higher is better", "target": "closer to target"}
SHORT = {"lower is better": "↓ lower", "higher is better": "↑ higher", "closer to target": "◎ target"}


def fmt_value(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v == 0:
            return "0"
        a = abs(v)
        return f"{v:.4g}" if 1e-4 <= a < 1e6 else f"{v:.3e}"
    if isinstance(v, (list, tuple)):
        if len(v) > 4:
            return f"{fmt_value(v[0])} … {fmt_value(v[-1])} ({len(v)})"
        return "[" + ", ".join(fmt_value(x) for x in v) + "]"
    return str(v)


def _raw_rows(metrics: dict[str, Any], orient: dict[str, str]) -> list[tuple[str, str, Any, str]]:
    """``(group, metric label, value, direction)`` for every leaf; level keys join the metric label."""
    rows = []
    for group, body in metrics.items():
        for key, val in body.items():
            if isinstance(val, dict):
                for sub, v in val.items():
                    if isinstance(v, dict):
                        for sub2, v2 in v.items():
                            rows.append((group, f"{key} {sub} {sub2}", v2,
                                         DIRECTION.get(orient.get(f"{group}.{sub2}", ""), "")))
                        continue
                    d = orient.get(f"{group}.{sub}") or orient.get(f"{group}.{key}", "")
                    rows.append((group, f"{key} {sub}", v, DIRECTION.get(d, "")))
            else:
                rows.append((group, key, val, DIRECTION.get(orient.get(f"{group}.{key}", ""), "")))
    return rows


def metric_rows(summary: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """``(group, metric, value, direction)`` rows in summary order; level keys join the metric name."""
    return [(g, m, fmt_value(v), d) for g, m, v, d in _raw_rows(summary.get("metrics", {}),
                                                                summary.get("orientation", {}))]


def grouped_rows(summary: dict[str, Any]) -> tuple[list[str], list[tuple[str, str, list[str], str]]]:
    """With ``--by``: column labels and ``(group, metric, [overall, per value...], direction)`` rows."""
    orient = summary.get("orientation", {})
    values = summary["groups"]["values"]
    column = summary["groups"].get("column") or "group"
    labels = ["all"] + [f"{column}={v}\nn={body['n_rows']}" for v, body in values.items()]
    per_value = [{(g, m): val for g, m, val, _ in _raw_rows(body["metrics"], orient)} for body in values.values()]
    rows = []
    for g, m, v, d in _raw_rows(summary.get("metrics", {}), orient):
        cells = [v] + [pv.get((g, m)) for pv in per_value]
        rows.append((g, m, [f"[{len(c)}]" if isinstance(c, list) else fmt_value(c) for c in cells], d))
    return labels, rows


def header_line(summary: dict[str, Any]) -> str:
    inp = summary.get("input", {})
    s = (f"{inp.get('path')}: {inp.get('n_rows')} rows, representation {inp.get('representation')}")
    if inp.get("n_dropped"):
        s += f", {inp['n_dropped']} dropped (NaN/inf)"
    return s


def rich_table(summary: dict[str, Any], title: str | None = None):
    from rich.table import Table

    from .text import markup

    table = Table(title=markup(title or header_line(summary)), title_justify="left")
    table.add_column("group", style="cyan", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    if "groups" in summary:
        labels, rows = grouped_rows(summary)
    else:
        labels, rows = ["value"], [(g, m, [v], d) for g, m, v, d in metric_rows(summary)]
    for label in labels:
        table.add_column(markup(label), justify="right", no_wrap=True)
    table.add_column("better", style="dim", no_wrap=True, min_width=8)
    last = None
    for group, metric, values, direction in rows:
        if last is not None and group != last:
            table.add_section()
        table.add_row(markup(group) if group != last else "", markup(metric), *map(markup, values),
                      SHORT.get(direction, direction))
        last = group
    return table


def markdown(summary: dict[str, Any], title: str | None = None) -> str:
    if "groups" in summary:
        labels, rows = grouped_rows(summary)
    else:
        labels, rows = ["value"], [(g, m, [v], d) for g, m, v, d in metric_rows(summary)]
    from .text import md_cell

    lines = [f"**{md_cell(title or header_line(summary))}**", "",
             "| group | metric | " + " | ".join(" ".join(md_cell(p) for p in label.split("\n")) for label in labels)
             + " | direction |",
             "|---|---|" + "---:|" * len(labels) + "---|"]
    for group, metric, values, direction in rows:
        lines.append(f"| {md_cell(group)} | {md_cell(metric)} | " + " | ".join(map(md_cell, values)) + f" | {direction} |")
    return "\n".join(lines) + "\n"
