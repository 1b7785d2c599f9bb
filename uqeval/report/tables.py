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


def metric_rows(summary: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """``(group, metric, value, direction)`` rows in summary order; level keys join the metric name."""
    orient = summary.get("orientation", {})
    rows = []
    for group, body in summary.get("metrics", {}).items():
        for key, val in body.items():
            if isinstance(val, dict):
                for sub, v in val.items():
                    if isinstance(v, dict):
                        for sub2, v2 in v.items():
                            rows.append((group, f"{key} {sub} {sub2}", fmt_value(v2),
                                         DIRECTION.get(orient.get(f"{group}.{sub2}", ""), "")))
                        continue
                    d = orient.get(f"{group}.{sub}") or orient.get(f"{group}.{key}", "")
                    rows.append((group, f"{key} {sub}", fmt_value(v), DIRECTION.get(d, "")))
            else:
                rows.append((group, key, fmt_value(val), DIRECTION.get(orient.get(f"{group}.{key}", ""), "")))
    return rows


def header_line(summary: dict[str, Any]) -> str:
    inp = summary.get("input", {})
    s = (f"{inp.get('path')}: {inp.get('n_rows')} rows, representation {inp.get('representation')}")
    if inp.get("n_dropped"):
        s += f", {inp['n_dropped']} dropped (NaN/inf)"
    return s


def rich_table(summary: dict[str, Any], title: str | None = None):
    from rich.table import Table

    table = Table(title=title or header_line(summary), title_justify="left")
    table.add_column("group", style="cyan", no_wrap=True)
    table.add_column("metric", no_wrap=True)
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("better", style="dim", no_wrap=True, min_width=8)
    last = None
    for group, metric, value, direction in metric_rows(summary):
        if last is not None and group != last:
            table.add_section()
        table.add_row(group if group != last else "", metric, value, SHORT.get(direction, direction))
        last = group
    return table


def markdown(summary: dict[str, Any], title: str | None = None) -> str:
    lines = [f"**{title or header_line(summary)}**", "", "| group | metric | value | direction |",
             "|---|---|---:|---|"]
    for group, metric, value, direction in metric_rows(summary):
        lines.append(f"| {group} | {metric} | {value} | {direction} |")
    return "\n".join(lines) + "\n"
