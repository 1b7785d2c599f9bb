"""The verdict (:mod:`uqeval.commands.verdict`) rendered once per sink: terminal (rich), Markdown, HTML.

One line per aspect: ``calibration: overconfident (...) [rule pit-moments]``. Every sentence holds input
strings (model names, metric paths): it is escaped whole for each sink. Strings only; nothing prints."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape as html_escape
from typing import Any

#: the colour of a label on the terminal and in HTML (a class name)
TONE = {
    "calibrated": "good",
    "passed": "good",
    "no alarm": "good",
    "not distinguishable": "neutral",
    "distinguishable": "neutral",
    "not assessed": "neutral",
    "not tested": "neutral",
}
_RICH = {"good": "bold green", "neutral": "bold", "bad": "bold red", "action": "bold cyan"}


def _tone(aspect: dict[str, Any]) -> str:
    if aspect.get("aspect") == "action":
        return "action"
    return TONE.get(str(aspect.get("label")), "bad")


def aspects(document: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The aspects of ``document["verdict"]`` (none when the document has no verdict)."""
    verdict = (document or {}).get("verdict")
    if not isinstance(verdict, dict):
        return []
    return [a for a in verdict.get("aspects") or [] if isinstance(a, dict)]


def rich_verdict(document: Mapping[str, Any] | None) -> Any | None:
    """A rich ``Text`` of the verdict lines (``None`` without a verdict), each label coloured."""
    shown = aspects(document)
    if not shown:
        return None
    from rich.text import Text

    from ..text import plain

    out = Text()
    for i, a in enumerate(shown):
        if i:
            out.append("\n")
        out.append(plain(f"{a.get('aspect')}: "), style="bold")
        out.append(
            plain(str(a.get("sentence"))), style=_RICH[_tone(a)] if i == 0 or _tone(a) != "bad" else ""
        )
        out.append(plain(f" [rule {a.get('rule')}]"), style="dim")
    return out


def markdown_verdict(document: Mapping[str, Any] | None) -> list[str]:
    """Markdown lines: one bullet per aspect, then a blank line (none without a verdict)."""
    from ..text import md_cell, md_code

    lines = [
        f"- **{md_cell(str(a.get('aspect')))}**: {md_cell(a.get('sentence'))} "
        f"(rule `{md_code(a.get('rule'))}`)"
        for a in aspects(document)
    ]
    return [*lines, ""] if lines else []


def html_verdict(entries: list[tuple[str, Mapping[str, Any] | None]]) -> str:
    """The HTML block of the report's first screen: one line per aspect of each ``(name, document)``
    (``name`` empty for a document that stands alone, such as the comparison)."""
    from ..text import plain

    rows = []
    for name, document in entries:
        for a in aspects(document):
            label = f"{name} — {a.get('aspect')}" if name else str(a.get("aspect"))
            rows.append(
                f'<li class="v-{_tone(a)}"><b>{html_escape(plain(label))}</b>: '
                f"{html_escape(plain(str(a.get('sentence'))))} "
                f'<span class="v-rule">[rule {html_escape(plain(str(a.get("rule"))))}]</span></li>'
            )
    if not rows:
        return ""
    return (
        '<div class="verdict" role="region" aria-label="Verdict"><ul>'
        + "".join(rows)
        + '</ul><p class="v-note">Each line names its rule; the rules and their error rates: '
        "docs/guide/verdicts.md.</p></div>"
    )
