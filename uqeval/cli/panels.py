"""``--help`` with its options grouped under headings, without rich.

Typer draws ``rich_help_panel`` headings only through rich (its rich help costs ~0.1 s of start-up);
uqeval's help is plain click text (``rich_markup_mode=None``), so :class:`PanelCommand` groups the
options by their ``rich_help_panel`` itself: the command's own options first ("Options"), then each
panel in :data:`PANEL_ORDER`.
"""

from __future__ import annotations

import re
from typing import Any

import typer
import typer.core

from .common import ENGINE_PANEL, INPUT_PANEL, METRICS_PANEL, OUTPUT_PANEL, PLOTS_PANEL

#: Panel headings in --help order (any other panel follows them, in order of first appearance)
PANEL_ORDER = ("Options", INPUT_PANEL, METRICS_PANEL, PLOTS_PANEL, OUTPUT_PANEL, ENGINE_PANEL)


#: a choice list as click and typer write it after an option (``<a|b|c>`` or ``[a|b|c]``)
_CHOICES = re.compile(r"[<\[]([^<>\[\]|\s]+(?:\|[^<>\[\]|\s]+)+)[>\]]")

#: a choice list longer than this is summarised in --help: ``<choice>``, the choices in the help text
LONG_CHOICES = 24


def summarised(record: tuple[str, str]) -> tuple[str, str]:
    """A ``--help`` record whose long choice list (``--kind <predictions|intervals|...>``) is written
    ``--kind <choice>``, the choices following the help text (wrapped, so it fits 80 columns)."""
    flags, text = record
    m = _CHOICES.search(flags)
    if m is None or len(m.group(0)) <= LONG_CHOICES:
        return record
    choices = m.group(1).split("|")
    shown = f"One of: {', '.join(choices)}."
    head, sep, extra = text.partition("  [")  # click's extras ([required], [default: ...]) stay last
    return flags[: m.start()] + "<choice>" + flags[m.end() :], f"{head} {shown}".lstrip() + sep + extra


def _choices(param: Any) -> list[str]:
    """The values an enumerated option takes (click's ``Choice`` or typer's Enum annotation), else none."""
    choices = getattr(getattr(param, "type", None), "choices", None)
    if choices is None:
        from enum import Enum

        annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
        if isinstance(annotation, type) and issubclass(annotation, Enum):
            choices = [e.value for e in annotation]
    return [str(getattr(c, "value", c)) for c in choices or ()]


def _given(param: Any, args: list[str]) -> str | None:
    """The value ``args`` give the option ``param`` (its last one), if any."""
    found = None
    for i, arg in enumerate(args):
        for opt in getattr(param, "opts", ()):
            if arg == opt and i + 1 < len(args):
                found = args[i + 1]
            elif arg.startswith(opt + "=") and opt.startswith("--"):
                found = arg[len(opt) + 1 :]
    return found


def with_close_match(exc: Any, args: list[str]) -> None:
    """An enumerated option's bad value: the message says which choice is close (``did you mean
    'calibration'?``), and lists the choices when there are a few."""
    from ..vocabulary import did_you_mean

    param = getattr(exc, "param", None)
    choices = _choices(param)
    value = _given(param, args) if choices else None
    if value is None or value in choices:
        return
    few = len(choices) <= 12
    what = f"one of {', '.join(choices)}" if few else "a choice"
    near = did_you_mean(value, choices)
    flag = (getattr(param, "opts", None) or ["this option"])[-1]
    more = near if near else "" if few else f"; uqeval COMMAND --help lists the choices of {flag}"
    exc.message = f"{value!r} is not {what}{more}"


class CommandsGroup(typer.core.TyperGroup):
    """The top level's ``--help``: each command with the whole first sentence of its help (click cuts
    it to the width with ``...``), wrapped."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def by_panel(params: list[Any]) -> dict[str, list[Any]]:
    """A command's parameters under their ``--help`` headings, in ``--help`` order: "Arguments", the options
    without a panel ("Options"), then each panel of :data:`PANEL_ORDER`, then any other (headings with
    nothing under them left out)."""
    panels: dict[str, list[Any]] = {p: [] for p in ("Arguments", *PANEL_ORDER)}
    for param in params:
        if param.param_type_name == "argument":
            panels["Arguments"].append(param)
        else:
            panels.setdefault(getattr(param, "rich_help_panel", None) or "Options", []).append(param)
    return {title: listed for title, listed in panels.items() if listed}


class PanelCommand(typer.core.TyperCommand):
    """A Typer command whose plain ``--help`` lists options by panel (long choice lists summarised), and
    whose usage errors on an enumerated option name the close choice."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        given = list(args)
        try:
            return super().parse_args(ctx, args)
        except typer.BadParameter as exc:
            with_close_match(exc, given)
            raise

    def format_options(self, ctx: Any, formatter: Any) -> None:
        for title, params in by_panel(self.get_params(ctx)).items():
            records = [summarised(r) for r in (p.get_help_record(ctx) for p in params) if r is not None]
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)
