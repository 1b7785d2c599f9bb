"""Render a comparison (``uqeval.compare/1``): Markdown, and rich tables for the terminal."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..text import DASHED, fmt_number, fmt_p, md_bold, md_code_span, note_line
from .format import md_cell, md_table
from .verdict import markdown_verdict


def _num(x: Any) -> str:
    return fmt_number(None if x is None else float(x), DASHED)


def cell(entry: Mapping[str, Any]) -> str:
    """``estimate [low, high]`` of one model's value of one metric."""
    s = _num(entry.get("estimate"))
    if not (entry.get("low") is None or (isinstance(entry.get("low"), float) and math.isnan(entry["low"]))):
        s += f" [{_num(entry['low'])}, {_num(entry['high'])}]"
    return s


def direction(metric: Mapping[str, Any]) -> str:
    o: Any = metric.get("orientation")  # None when absent: no text
    if o == "target":
        return f"closest to {_num(metric.get('target'))}"
    return {"lower": "lower is better", "higher": "higher is better"}.get(o, "")


def _ranked(e: Mapping[str, Any]) -> str:
    return cell(e) + ("" if math.isnan(e["rank"]) else f" (#{e['rank']:g})")


def _ci(s: Mapping[str, Any]) -> str:
    return (
        f"{s['ci_level'] * 100:g}% bootstrap CI, {s['bootstrap']} resamples{_unit(s)}"
        if s["bootstrap"]
        else "no bootstrap"
    )


def _unit(s: Mapping[str, Any]) -> str:
    """What the intervals resample, when not independent rows (issue 25)."""
    r = s.get("resampling")
    if not r:
        return ""
    if r["unit"] == "cluster":
        return f" of {r['clusters']} clusters"
    return f" in blocks of {r['block_size']} rows"


def _weighted(result: Mapping[str, Any], quote: Callable[[str], str]) -> str:
    """``, weighted by COLUMN`` for a weighted comparison (``quote``: the column name, escaped for the output)."""
    w = result.get("weights")
    if not w:
        return ""
    return ", weighted" + (f" by {quote(w['column'])}" if w.get("column") else "")


_TESTS_HEADER = ["metric", "model", "reference", "mean diff", "permutation p", "DM t", "DM p"]


def _test_row(t: Mapping[str, Any], name: Callable[[Any], str] = str) -> list[str]:
    return [
        name(t["metric"]),
        name(t["model"]),
        name(t["reference"]),
        _num(t["mean_diff"]),
        fmt_p(t["permutation_p"]),
        _num(t["dm_statistic"]),
        fmt_p(t["dm_p"]),
    ]


def to_markdown(result: Mapping[str, Any]) -> str:
    """GitHub-flavoured markdown: metric table (value [CI] and rank), tests, notes."""
    names = [m["name"] for m in result["models"]]
    s = result["settings"]
    rows = []
    for metric, body in result["metrics"].items():
        cells = [
            md_bold(_ranked(body["values"][n])) if n in body["best"] else _ranked(body["values"][n])
            for n in names
        ]
        rows.append([md_code_span(metric), direction(body), *cells])
    rows.append(["mean rank", "", *(_num(result["ranks"]["mean_rank"][n]) for n in names)])
    lines = [
        f"### uqeval compare: {len(names)} models, {result['n_rows']} rows ({_ci(s)}, seed {s['seed']})"
        + _weighted(result, md_code_span),
        "",
        *markdown_verdict(result),
        *md_table(["metric", "direction", *(md_code_span(n) for n in names)], rows, "ll" + "r" * len(names)),
    ]
    if result["tests"]:
        lines += [
            "",
            "Paired tests on per-row scores (difference = model − reference; p-values unadjusted):",
            "",
            *md_table(_TESTS_HEADER, [_test_row(t, md_code_span) for t in result["tests"]], "lllrrrr"),
        ]
    if result.get("skill"):
        lines += [
            "",
            f"Skill against the {md_cell(result['reference']['kind'])} reference (1 − S/S_ref, higher is "
            "better):",
            "",
            *md_table(
                ["skill", *(md_code_span(n) for n in names)],
                _skill_rows(result, names, md_code_span),
                "l" + "r" * len(names),
            ),
        ]
    if result.get("murphy", {}).get("dominates"):  # issue 16 A (also listed in the notes)
        lines += [
            "",
            "Murphy-diagram dominance (nowhere above, somewhere below on the threshold grid):",
            "",
            *md_table(
                ["functional", "model", "dominates"],
                [
                    [d["functional"], md_code_span(d["model"]), md_code_span(d["dominated"])]
                    for d in result["murphy"]["dominates"]
                ],
                "lll",
            ),
        ]
    if result["notes"]:
        lines.append("")
        lines += [f"- {md_cell(n)}" for n in result["notes"]]
    return "\n".join(lines) + "\n"


def _skill_rows(
    result: Mapping[str, Any], names: list[str], name: Callable[[Any], str] = str
) -> list[list[str]]:
    """Forecast verification (issue 16): one row per skill score, ``estimate [low, high]`` per model."""
    return [
        [name(f"skill.{k}"), *(cell(v[n]) if n in v else "–" for n in names)]
        for k, v in result["skill"].items()
    ]


def rich_tables(result: Mapping[str, Any]) -> list[Any]:
    """The metric table, the tests table (when tests ran) and the notes, as rich renderables."""
    from rich.text import Text

    from ..text import markup as escape
    from .format import rich_table
    from .verdict import rich_verdict

    names = [m["name"] for m in result["models"]]
    s = result["settings"]
    ci = f"{_ci(s)}, seed {s['seed']}" if s["bootstrap"] else _ci(s)
    columns: list[tuple[str, dict[str, Any]]] = [
        ("metric", {"style": "cyan", "no_wrap": True}),
        ("direction", {"style": "dim"}),
    ]
    columns += [(escape(n), {"justify": "right"}) for n in names]
    rows = []
    for metric, body in result["metrics"].items():
        cells = [escape(_ranked(body["values"][n])) for n in names]
        cells = [f"[bold green]{c}[/]" if n in body["best"] else c for n, c in zip(names, cells)]
        rows.append([escape(metric), direction(body), *cells])
    rows.append(["mean rank", "", *(_num(result["ranks"]["mean_rank"][n]) for n in names)])
    out = [
        rich_table(
            columns,
            rows,
            title=f"{len(names)} models, {result['n_rows']} rows ({ci}){_weighted(result, escape)}; (#rank), "
            "best in bold",
            sections=[False] * (len(rows) - 1) + [True],
        )
    ]
    if result["tests"]:
        cols: list[tuple[str, dict[str, Any]]] = [
            (c, {"justify": "right" if i >= 3 else "left"}) for i, c in enumerate(_TESTS_HEADER)
        ]
        out.append(
            rich_table(
                cols,
                [[escape(c) for c in _test_row(t)] for t in result["tests"]],
                title="Paired tests on per-row scores (diff = model − reference; p unadjusted)",
            )
        )
    if result.get("skill"):
        cols = [("skill", {"style": "cyan", "no_wrap": True})] + [
            (escape(n), {"justify": "right"}) for n in names
        ]
        out.append(
            rich_table(
                cols,
                [[escape(c) for c in r] for r in _skill_rows(result, names)],
                title=f"Skill against the {escape(str(result['reference']['kind']))} reference "
                "(1 − S/S_ref, higher is better)",
            )
        )
    out += [Text(note_line(n), style="dim") for n in result["notes"]]
    verdict = rich_verdict(result)
    return ([verdict] if verdict is not None else []) + out
