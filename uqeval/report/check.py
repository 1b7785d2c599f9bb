"""Render a gate result (:class:`uqeval.commands.check.GateResult`): the ``uqeval.check/1`` JSON
document, Markdown, JUnit XML and a rich table."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from ..commands.check import fmt_value as _fmt
from ..io.writers import jsonable
from ..text import md_code_span, note_line
from .format import md_cell, md_table

SCHEMA = "uqeval.check/1"


def headline(result) -> str:
    c = result.counts
    verdict = "PASSED" if result.passed else "FAILED"
    parts = [f"{c['PASS']} passed", f"{c['FAIL']} failed"]
    if c["SKIP"]:
        parts.append(f"{c['SKIP']} skipped")
    return f"uqeval check {verdict}: {', '.join(parts)} of {len(result.rows)} checks"


def to_markdown(result, document: Mapping[str, Any] | None = None) -> str:
    """A GitHub-flavoured markdown report: headline, the verdict of ``document`` (the JSON report, issue
    39), one table row per check, notes."""
    from ..text import md_code
    from .verdict import markdown_verdict

    icon = {"PASS": "✅ PASS", "FAIL": "❌ FAIL", "SKIP": "⏭️ SKIP"}
    rows = [
        [icon[r.status], md_code_span(r.path), r.check, _fmt(r.value), _fmt(r.baseline), r.limit, r.message]
        for r in result.rows
    ]
    lines = [
        f"### {'✅' if result.passed else '❌'} {headline(result)}",
        "",
        f"Rules: `{md_code(result.rules_source)}`",
        "",
        *markdown_verdict(document),
        *md_table(["Status", "Metric", "Check", "Value", "Baseline", "Limit", "Details"], rows, "lllrrll"),
    ]
    if result.notes:
        lines.append("")
        lines.extend(f"- {md_cell(n)}" for n in result.notes)
    return "\n".join(lines) + "\n"


def to_junit(result, name: str = "uqeval.check") -> str:
    """JUnit XML: one ``<testcase>`` per check, ``<failure>``/``<skipped>`` as needed."""
    c = result.counts
    counts = {
        "tests": str(len(result.rows)),
        "failures": str(c["FAIL"]),
        "errors": "0",
        "skipped": str(c["SKIP"]),
        "time": "0",
    }
    root = ET.Element("testsuites", {"name": name, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": name, **counts})
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", {"name": "rules", "value": result.rules_source})
    for note in result.notes:
        ET.SubElement(props, "property", {"name": "note", "value": note})
    for r in result.rows:
        case = ET.SubElement(suite, "testcase", {"classname": name, "name": r.name, "time": "0"})
        detail = f"value={_fmt(r.value)} baseline={_fmt(r.baseline)} limit={r.limit}" + (
            f" (rules line {r.line})" if r.line else ""
        )
        if r.status == "FAIL":
            fail = ET.SubElement(case, "failure", {"message": r.message, "type": "uqeval.check"})
            fail.text = f"{r.name}: {r.message}\n{detail}"
        elif r.status == "SKIP":
            ET.SubElement(case, "skipped", {"message": r.message})
        else:
            ET.SubElement(case, "system-out").text = f"{r.message}\n{detail}"
    ET.indent(root)
    from ..text import xml_text  # controls XML 1.0 forbids become visible escapes

    return '<?xml version="1.0" encoding="UTF-8"?>\n' + xml_text(ET.tostring(root, encoding="unicode")) + "\n"


def to_dict(result) -> dict[str, Any]:
    """A JSON-serialisable view (schema ``uqeval.check/1``); NaN/inf become ``null``."""
    from .._version import __version__

    return {
        "schema": SCHEMA,
        "uqeval_version": __version__,
        "passed": result.passed,
        "headline": headline(result),
        "counts": {k.lower(): v for k, v in result.counts.items()},
        "rules": result.rules_source,
        "rows": [
            {
                "path": r.path,
                "check": r.check,
                "status": r.status,
                "value": jsonable(r.value),
                "baseline": jsonable(r.baseline),
                "limit": r.limit,
                "message": r.message,
                "orientation": r.orientation,
                "line": r.line,
            }
            for r in result.rows
        ],
        "notes": list(result.notes),
    }


def rich_tables(result, document: Mapping[str, Any] | None = None) -> list[Any]:
    """The verdict of ``document`` (the JSON report, issue 39), one row per check (status, metric, check, value,
    baseline, limit, details), then the notes."""
    from rich.text import Text

    from ..text import markup as escape
    from .format import rich_table
    from .verdict import rich_verdict

    style = {"PASS": "bold green", "FAIL": "bold red", "SKIP": "yellow"}
    columns: list[tuple[str, dict[str, Any]]] = [
        (col, {"justify": just, "style": "cyan" if col == "metric" else None, "no_wrap": True})
        for col, just in (
            ("status", "left"),
            ("metric", "left"),
            ("check", "left"),
            ("value", "right"),
            ("baseline", "right"),
            ("limit", "left"),
        )
    ]
    columns.append(("details", {"ratio": 1, "min_width": 24}))
    rows = [
        [
            f"[{style[r.status]}]{r.status}[/]",
            escape(r.path),
            r.check,
            _fmt(r.value),
            _fmt(r.baseline),
            escape(r.limit),
            escape(r.message),
        ]
        for r in result.rows
    ]
    table = rich_table(columns, rows, title=headline(result), caption=f"rules: {result.rules_source}")
    first = rich_verdict(document)
    return [
        *([first] if first is not None else []),
        table,
        *(Text(note_line(n), style="dim") for n in result.notes),
    ]
