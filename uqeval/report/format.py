"""The pieces every renderer shares: one number formatter, one flattener, one metric-orientation
lookup, one Markdown table and one rich table. Strings only; nothing here prints."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# --------------------------------------------------------------------------- numbers


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
        if style.sci_digits is not None and not (1e-4 <= a < 1e6 or (a == 0 and style.plain_zero)):
            return f"{v:.{style.sci_digits}e}"
        return f"{v:.{style.digits}g}"
    if isinstance(v, (list, tuple)):
        if len(v) > 4:
            return f"{fmt_number(v[0], style)} … {fmt_number(v[-1], style)} ({len(v)})"
        return "[" + ", ".join(fmt_number(x, style) for x in v) + "]"
    return str(v)


def fmt_p(p: Any) -> str:
    """A p-value (``—`` when missing)."""
    return fmt_number(None if p is None else float(p), P_VALUE)


# --------------------------------------------------------------------------- flattening


def leaves(
    tree: Any, prefix: tuple[str, ...] = (), *, empty: bool = True
) -> list[tuple[tuple[str, ...], Any]]:
    """Leaves of nested mappings as ``(keys, value)`` in insertion order.

    Scalars and lists are leaves. An empty mapping is a ``None`` leaf when ``empty`` is
    true, and left out otherwise.
    """
    out: list[tuple[tuple[str, ...], Any]] = []
    if isinstance(tree, Mapping):
        for k, v in tree.items():
            keys = (*prefix, str(k))
            if isinstance(v, Mapping) and (v or not empty):
                out.extend(leaves(v, keys, empty=empty))
            else:
                out.append((keys, None if isinstance(v, Mapping) else v))
    elif prefix:
        out.append((prefix, tree))
    return out


def flatten(tree: Any, prefix: str = "", *, empty: bool = True) -> list[tuple[str, Any]]:
    """Leaves of nested mappings as ``(dotted path, value)`` (see :func:`leaves`).

    Keys containing dots are kept whole, so ``coverage -> 0.95 -> width`` is
    ``"coverage.0.95.width"``.
    """
    return [(".".join(keys), v) for keys, v in leaves(tree, (prefix,) if prefix else (), empty=empty)]


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --------------------------------------------------------------------------- orientation


def metric_orientation(
    keys: Sequence[str] | str, orientation: Mapping[str, str] | None, kind: str | None = None
) -> str | None:
    """Orientation of the metric at ``keys`` (a key tuple or a dotted path), never guessed.

    The summary's ``orientation`` map answers first, for the exact path; otherwise the
    catalogue entry of the path (:func:`uqeval.catalogue.lookup`; a value keyed by level
    below a metric, such as ``scoring_rule.interval_by_level.0.9``, belongs to the metric
    at its longest prefix) gives its key in that map, or failing that its own orientation
    for the representation ``kind``. None when neither knows it (curves, histograms).
    """
    from ..catalogue import lookup

    table = orientation or {}
    parts = keys.split(".") if isinstance(keys, str) else list(keys)
    path = ".".join(parts)
    if path in table:
        return table[path]
    for n in range(len(parts), 1, -1):
        entry = lookup(".".join(parts[:n]))
        if entry is not None:
            return table.get(entry.path) or entry.orientation_for(kind)
    return None


# --------------------------------------------------------------------------- tables


def md_cell(text: Any) -> str:
    """One Markdown table cell: :func:`uqeval.report.text.md_cell` (control characters shown, ``\\ |``
    escaped, HTML defused) on each line, lines joined by spaces."""
    from .text import Markdown, md_cell as escape

    if isinstance(text, Markdown):  # markup built from escaped data (a code span, bold)
        return str(text)
    return " ".join(escape(line) for line in str(text).replace("\r\n", "\n").split("\n"))


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> list[str]:
    """A GitHub Markdown table as lines. ``align`` has one letter per column, ``l`` or ``r``
    (missing letters are ``l``); every cell goes through :func:`md_cell`."""
    marks = ["---:" if (align[i : i + 1] == "r") else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|" + "".join(f"{m}|" for m in marks)]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return lines


def rich_table(
    columns: Sequence[tuple[str, dict[str, Any]]],
    rows: Iterable[Sequence[str]] = (),
    *,
    title: str | None = None,
    caption: str | None = None,
    sections: Sequence[bool] | None = None,
):
    """A rich ``Table``: ``columns`` are ``(header, add_column options)``, rows are markup
    strings (escape data first); titles and captions are escaped here and left-justified.
    ``sections[i]`` true draws a rule before row ``i``."""
    from rich.table import Table

    from .text import markup as escape

    table = Table(
        title=escape(title) if title else None,
        caption=escape(caption) if caption else None,
        title_justify="left",
        caption_justify="left",
    )
    for header, opts in columns:
        table.add_column(header, **opts)
    for i, row in enumerate(rows):
        if sections is not None and i and sections[i]:
            table.add_section()
        table.add_row(*row)
    return table
