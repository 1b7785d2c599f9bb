"""The pieces every renderer shares: one number formatter, one flattener, one metric-orientation
lookup, one Markdown table and one rich table. Strings only; nothing here prints."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
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
    ``sections[i]`` true draws a rule before row ``i``.

    The table fits the console (:class:`FitTable`): a column of numbers (``justify="right"``) or one
    given ``keep=True`` (a status) is never cut, only wrapped between words; on a console too narrow
    for that the rows are stacked, one ``header  value`` block per row.
    """
    from rich.table import Table

    from .text import markup as escape

    class FitTable(Table):
        """A rich Table that, when wider than the console, wraps its text columns and word-wraps its
        kept columns (numbers, statuses) down to their longest word, else stacks its rows."""

        keep: set[int]

        def __rich_console__(self, console, options):
            if (
                console.measure(_plain_copy(self), options=options.update_width(1 << 20)).maximum
                <= options.max_width
            ):
                yield from super().__rich_console__(console, options)
                return
            widths = _fit_widths(self, console, options)
            if widths is None:
                yield from _stacked(self)
                return
            narrow = _plain_copy(self)
            narrow.columns = [
                replace(c, width=w, no_wrap=False, overflow="ellipsis" if i in self.keep else "fold")
                for i, (c, w) in enumerate(zip(self.columns, widths))
            ]
            yield from narrow.__rich_console__(console, options)

    table = FitTable(
        title=escape(title) if title else None,
        caption=escape(caption) if caption else None,
        title_justify="left",
        caption_justify="left",
    )
    table.keep = set()
    for i, (header, opts) in enumerate(columns):
        opts = dict(opts)
        if opts.pop("keep", opts.get("justify") == "right"):
            table.keep.add(i)
        table.add_column(header, **opts)
    for i, row in enumerate(rows):
        if sections is not None and i and sections[i]:
            table.add_section()
        table.add_row(*row)
    return table


#: a text column (names, messages) is folded down to at most this width before the rows are stacked
TEXT_MIN_WIDTH = 12


def _plain_copy(table):
    """The same table as a plain rich ``Table`` (no fitting), sharing columns and rows."""
    from rich.table import Table

    plain = Table.__new__(Table)
    plain.__dict__.update(table.__dict__)
    plain.columns = list(table.columns)
    return plain


def _fit_widths(table, console, options) -> list[int] | None:
    """Content widths of the columns that fit ``options.max_width`` with no number or status cut:
    text columns shrink first (to :data:`TEXT_MIN_WIDTH`), then kept columns (to their longest word).
    None when even that is too wide."""
    from rich.measure import Measurement
    from rich.text import Text

    def cells(column):
        yield column.header
        yield from column._cells

    def text(cell):
        return Text.from_markup(cell) if isinstance(cell, str) else cell

    natural, words, least = [], [], []
    for i, column in enumerate(table.columns):
        texts = [text(c) for c in cells(column)]
        wide = max(
            (Measurement.get(console, options.update_width(1 << 20), t).maximum for t in texts), default=1
        )
        word = max((len(w) for t in texts if isinstance(t, Text) for w in t.plain.split()), default=1)
        natural.append(max(wide, 1))
        words.append(max(min(word, wide), 1))  # wrapped between words, nothing is cut
        least.append(words[-1] if i in table.keep else max(min(wide, TEXT_MIN_WIDTH), 1))
    padding = sum(table._get_padding_width(i) for i in range(len(table.columns)))
    budget = options.max_width - table._extra_width - padding
    if sum(least) > budget:
        return None
    widths = list(natural)
    text_columns = [i for i in range(len(widths)) if i not in table.keep]
    # text wrapped between words, then folded; numbers and statuses last, and only between words
    for group, floor in ((text_columns, words), (text_columns, least), (sorted(table.keep), least)):
        while sum(widths) > budget:  # level the widest column of the group down, one cell at a time
            movable = [i for i in group if widths[i] > max(floor[i], least[i])]
            if not movable:
                break
            widest = max(movable, key=lambda i: widths[i])
            widths[widest] -= 1
    return widths


def _stacked(table):
    """The rows of ``table`` as blocks of ``header  value`` lines (a console too narrow for columns)."""
    from rich.rule import Rule
    from rich.table import Table
    from rich.text import Text

    def label(header) -> str:
        return " ".join(
            (header.plain if isinstance(header, Text) else Text.from_markup(str(header)).plain).split()
        )

    if table.title:
        yield Text.from_markup(table.title) if isinstance(table.title, str) else table.title
    n_rows = max((len(c._cells) for c in table.columns), default=0)
    for r in range(n_rows):
        block = Table.grid(padding=(0, 1))
        block.add_column(style="bold", no_wrap=True)
        block.add_column(overflow="fold")
        for column in table.columns:
            cell = column._cells[r] if r < len(column._cells) else ""
            if cell == "" or cell is None:
                continue
            block.add_row(label(column.header), cell)
        yield Rule(style="dim")
        yield block
    if table.caption:
        yield Text.from_markup(table.caption) if isinstance(table.caption, str) else table.caption
