"""``--help`` with its options grouped under headings, without rich.

Typer draws ``rich_help_panel`` headings only through rich (its rich help costs ~0.1 s of start-up);
uqeval's help is plain click text (``rich_markup_mode=None``), so :class:`PanelCommand` groups the
options by their ``rich_help_panel`` itself: the command's own options first ("Options"), then each
panel in :data:`PANEL_ORDER`.
"""

from __future__ import annotations

from typing import Any

import typer.core

from .common import ENGINE_PANEL, INPUT_PANEL, METRICS_PANEL, OUTPUT_PANEL, PLOTS_PANEL

#: Panel headings in --help order (any other panel follows them, in order of first appearance)
PANEL_ORDER = ("Options", INPUT_PANEL, METRICS_PANEL, PLOTS_PANEL, OUTPUT_PANEL, ENGINE_PANEL)


class PanelCommand(typer.core.TyperCommand):
    """A Typer command whose plain ``--help`` lists options by panel."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        args: list[tuple[str, str]] = []
        panels: dict[str, list[tuple[str, str]]] = {p: [] for p in PANEL_ORDER}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                args.append(record)
            else:
                panel = getattr(param, "rich_help_panel", None) or "Options"
                panels.setdefault(panel, []).append(record)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        for title, records in panels.items():
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)
