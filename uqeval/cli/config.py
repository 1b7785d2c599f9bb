"""``uqeval config list`` and ``uqeval config show NAME``: the example files installed with uqeval."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import handle_errors

config = typer.Typer(
    help="The example settings and rules files installed with uqeval (copy one to start your own).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@config.command("list")
@handle_errors
def list_configs() -> None:
    """List the bundled files: default (every built-in setting, for --config) and ci (rules for check)."""
    from ..config import bundled_configs

    known = bundled_configs()
    width = max(map(len, known))
    typer.echo("\n".join(f"{name:<{width}}  {about}" for name, about in known.items()))


@config.command("show")
@handle_errors
def show(
    name: Annotated[str, typer.Argument(help="default or ci (see 'uqeval config list').")],
) -> None:
    """Print a bundled file: 'uqeval config show default > my.toml', then edit and pass --config my.toml."""
    from ..config import bundled_config

    typer.echo(bundled_config(name), nl=False)
