"""``uqeval schema [NAME]``: the JSON Schemas (draft 2020-12) of the documents uqeval writes."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import handle_errors


@handle_errors
def schema(
    name: Annotated[
        str | None,
        typer.Argument(
            help="A document: score, compare, ucc, coverage, check, recalibrate, recalibrator, ... (or its "
            "tag, uqeval.score/1); omit to list them."
        ),
    ] = None,
) -> None:
    """Print the JSON Schema (draft 2020-12) of a JSON document uqeval writes, to validate it in CI.

    'uqeval schema score > score.schema.json' saves the schema of 'uqeval score --format json';
    without NAME, list every document with its tag. NaN and infinities appear as null in every
    document, so numbers are typed number-or-null.
    """
    from ..schemas import catalogue, text

    if name is None:
        known = catalogue()
        width = max(map(len, known))
        tag_width = max(len(v["document"]) for v in known.values())
        typer.echo(
            "\n".join(f"{n:<{width}}  {v['document']:<{tag_width}}  {v['title']}" for n, v in known.items())
        )
        return
    typer.echo(text(name), nl=False)
