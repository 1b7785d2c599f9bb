"""The tables every renderer shares: one Markdown table and one rich table, their cells written by
:func:`uqeval.text.fmt_number` (numbers) and escaped by :mod:`uqeval.text`. Strings only; nothing here
prints."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

# --------------------------------------------------------------------------- tables


def md_cell(text: Any) -> str:
    """One Markdown table cell: :func:`uqeval.text.md_cell` (control characters shown, ``\\ |``
    escaped, HTML defused) on each line, lines joined by spaces."""
    from ..text import Markdown, md_cell as escape

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

    from ..text import markup as escape

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
