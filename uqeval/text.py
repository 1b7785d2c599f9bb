"""How values become text: numbers written one way (:func:`fmt_number` with a :class:`NumberStyle`)
and input-derived strings made safe for the four places people read them.

Column names, file names, ``--by`` values, model names, notes and error messages
come from files a user (or an attacker) wrote. They are data, never markup or
terminal control:

* :func:`plain` -- for plain terminal lines (errors, and notes through :func:`note_line`): every control
  character (C0, DEL, C1 such as ``\\x9b``, ESC, ``\\r``, newlines) and the Unicode
  bidirectional overrides become visible escapes such as ``\\x1b``, so a string
  can neither move the cursor, retitle the window nor start a new line.
* :func:`markup` -- for strings handed to rich (tables, titles): :func:`plain`
  except that newlines stay (rich keeps them inside the cell), then
  :func:`rich.markup.escape`, so ``[bold]`` is printed, not rendered.
* :func:`md_cell` -- for Markdown (tables in pull-request comments): :func:`plain`,
  then ``\\`` and ``|`` escaped, and ``<``/``&`` where they would start HTML.
* :func:`xml_text` -- for JUnit XML: characters XML 1.0 forbids (and other
  controls) become visible escapes; ElementTree escapes ``<``, ``&`` and quotes.

HTML is escaped by :mod:`uqeval.report.html` with :func:`html.escape`. This module sits at the bottom
of the house (it imports nothing of uqeval), so core messages and every renderer use the same escaping.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

# C0 controls, DEL, C1 controls, bidi embeddings/overrides/isolates, line/paragraph separators,
# BOM/zero-width no-break space, and the XML-forbidden non-characters U+FFFE/U+FFFF.
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff\ud800-\udfff]"
)
_CONTROL_KEEP_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff\ud800-\udfff]"
)


# what would start an HTML tag, comment or entity in GitHub Markdown (``<=`` stays readable)
_MD_HTML = re.compile(r"<(?=[A-Za-z/!?])|&(?=#|[A-Za-z]+;)")
# inline Markdown: emphasis (* and _ at a word's edge; GitHub ignores _ inside a word, so metric names
# such as ma_cal stay as written), code spans, links/images and strikethrough
_MD_INLINE = re.compile(r"[*`\[\]~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _show(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def plain(value: Any) -> str:
    """``value`` as one line of inert text: control characters shown as ``\\xNN`` / ``\\uNNNN``."""
    return _CONTROL.sub(_show, str(value))


def note_line(value: Any) -> str:
    """A note as one terminal line, ``note: ...`` with :func:`plain` applied: the one way every command
    prints a note, whether on stderr (:func:`uqeval.cli.common.note`) or under its tables on stdout."""
    return f"note: {plain(value)}"


def markup(value: Any) -> str:
    """Like :func:`plain` but keeping newlines (rich lays them out inside a cell), escaped for rich markup.

    ``[bold]`` is printed, not rendered.
    """
    from rich.markup import escape

    return escape("\n".join(plain(line) for line in str(value).split("\n")))


class Markdown(str):
    """Text that is Markdown already, its data escaped by whoever built it (:func:`md_code_span`,
    :func:`md_bold`): :func:`md_cell` passes it through, so a table cell can hold a code span or bold."""


def md_code_span(value: Any) -> Markdown:
    """``value`` as a Markdown code span (backticks become quotes, ``|`` is escaped: :func:`md_code`)."""
    return Markdown(f"`{md_code(value)}`")


def md_bold(value: Any) -> Markdown:
    """``value`` in bold, its text escaped by :func:`md_cell`."""
    return Markdown(f"**{md_cell(value)}**")


def md_cell(value: Any) -> str:
    """One Markdown table cell (or inline text): :func:`plain`, ``\\ |`` and inline markup (``* _ ` [ ] ~``)
    escaped, HTML tags/entities defused: a ``--by`` label ``*a*`` shows as written, not in italics.
    :class:`Markdown` (markup built from escaped data) is kept as it is."""
    if isinstance(value, Markdown):
        return str(value)
    s = plain(value).replace("\\", "\\\\").replace("|", "\\|")
    s = _MD_INLINE.sub(lambda m: "\\" + m.group(0), s)
    return _MD_HTML.sub(lambda m: "&amp;" if m.group(0) == "&" else "&lt;", s)


def xml_text(value: Any) -> str:
    """Text for an XML 1.0 attribute or element: forbidden and control characters shown as escapes.

    Newlines and tabs are kept (they are legal XML); ElementTree does the ``<&"`` escaping.
    """
    return _CONTROL_KEEP_LINES.sub(_show, str(value))


def md_code(value: Any) -> str:
    """Text for inside a Markdown code span in a table cell: :func:`plain`, ``|`` escaped, backticks made quotes."""
    return plain(value).replace("`", "'").replace("|", "\\|")


@dataclass(frozen=True)
class NumberStyle:
    """How :func:`fmt_number` writes a number.

    ``digits`` significant digits (``%g``); with ``sci_digits``, magnitudes outside
    ``[1e-4, 1e6)`` are written ``%.{sci_digits}e`` (zero stays ``0`` unless ``plain_zero`` is
    off). ``missing`` stands for ``None``; ``nan`` and ``inf`` (positive, negative) for the
    non-finite floats.
    """

    digits: int = 4
    sci_digits: int | None = 3
    plain_zero: bool = True
    missing: str = "n/a"
    nan: str = "nan"
    inf: tuple[str, str] = ("inf", "-inf")


#: Terminal and Markdown tables of metric values.
TABLE = NumberStyle()


#: Tables where a missing value is a dash (compare).
DASHED = NumberStyle(missing="—", nan="—")


#: p-values: three digits, small ones in scientific notation.
P_VALUE = NumberStyle(digits=3, sci_digits=1, plain_zero=False, missing="—", nan="—")


#: Values quoted in check messages, limits and JUnit details (also written to the JSON).
DETAIL = NumberStyle(digits=6, sci_digits=None, missing="—", nan="NaN")


#: The HTML report.
HTML = NumberStyle(digits=6, sci_digits=4, nan="NaN", inf=("∞", "−∞"))


def fmt_number(v: Any, style: NumberStyle = TABLE) -> str:
    """One value as text: numbers by ``style``, lists shortened, anything else ``str()``."""
    if v is None:
        return style.missing
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return style.nan
        if math.isinf(v):
            return style.inf[0] if v > 0 else style.inf[1]
        a = abs(v)
        if a == 0.0:
            v = 0.0  # -0.0 prints as 0
        if style.sci_digits is not None and not (1e-4 <= a < 1e6 or (a == 0 and style.plain_zero)):
            return f"{v:.{style.sci_digits}e}"
        return f"{v:.{style.digits}g}"
    if isinstance(v, (list, tuple)):
        if len(v) > 4:
            return f"{fmt_number(v[0], style)} … {fmt_number(v[-1], style)} ({len(v)})"
        return "[" + ", ".join(fmt_number(x, style) for x in v) + "]"
    return str(v)


def fmt_percent(v: float | None, digits: int = 1) -> str:
    """A fraction as a signed percentage, ``+12.3%``; one that rounds to zero is ``0.0%`` (never ``-0.0%``)."""
    if v is None or not math.isfinite(v):
        return fmt_number(v)
    text = f"{100.0 * v:+.{digits}f}%"
    return text[1:] if float(text[:-1]) == 0.0 else text


def fmt_p(p: Any) -> str:
    """A p-value (``—`` when missing)."""
    return fmt_number(None if p is None else float(p), P_VALUE)
