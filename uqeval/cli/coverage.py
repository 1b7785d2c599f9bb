"""``uqeval coverage A B ... --by shift``: coverage and width of several methods across shift groups."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, List, Optional

import typer

from .common import (
    ConfigOpt,
    FormatOpt,
    LevelsOpt,
    MeanCol,
    NanOpt,
    OutputFormat,
    OutputOpt,
    ReprOpt,
    StdCol,
    YCol,
    handle_errors,
    settings_from_flags,
)


@handle_errors
def coverage(
    files: Annotated[List[Path], typer.Argument(help="Prediction files, one run of a method each (same schema).")],
    by: Annotated[Optional[str], typer.Option("--by", help="Facet column, e.g. the shift/corruption level.")] = None,
    points_by: Annotated[Optional[str], typer.Option("--points-by", help="Within a facet, one point per value of this column (e.g. corruption type).")] = None,
    name: Annotated[Optional[List[str]], typer.Option("--name", help="Method name per file, in order (files may share one); default: file stem.")] = None,
    levels: LevelsOpt = None,
    y_std: Annotated[Optional[float], typer.Option("--y-std", help="Std of the training targets: widths in this unit.")] = None,
    train: Annotated[Optional[Path], typer.Option("--train", help="Training file whose target std is the width unit.", dir_okay=False)] = None,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="Write the faceted coverage-vs-width scatter (PNG/SVG/PDF).", dir_okay=False)] = None,
    y: YCol = None,
    mean: MeanCol = None,
    std: StdCol = None,
    representation: ReprOpt = None,
    nan_policy: NanOpt = None,
    config: ConfigOpt = None,
    fmt: FormatOpt = OutputFormat.table,
    output: OutputOpt = None,
) -> None:
    """Compare methods' coverage and width per shift group (Kompa, Snoek & Beam): table, scatter, share above the fit."""
    import sys
    from dataclasses import replace

    from ..api import read_extra_column, train_std
    from ..coverage_compare import above_line, coverage_points, method_names
    from ..errors import UsageError
    from ..io.load import load_predictions
    from ..io.writers import check_output_path, dumps_json, write_figure, write_json

    if y_std is not None and train is not None:
        raise UsageError("give either --y-std or --train, not both")
    settings = settings_from_flags(config, dict(y_true=y, mean=mean, std=std, by=by), representation, levels,
                                   nan_policy, y_std=y_std)
    for out in (output, plot):
        if out is not None:
            check_output_path(out, files)
    if train is not None:
        settings = replace(settings, y_std=train_std(train, settings))
    names = method_names([str(f) for f in files], name)
    runs = []
    for method, f in zip(names, files):
        loaded = load_predictions(f, settings)
        pts = read_extra_column(f, points_by, loaded.prediction.rows if loaded.prediction.rows is not None
                                else slice(None)) if points_by else None
        runs.append((method, loaded, pts))
    records = coverage_points(runs, settings)
    lines = above_line(records)
    result = {"schema": "uqeval.coverage/1", "by": by, "points_by": points_by,
              "y_std": settings.y_std, "points": records, "fit": lines}
    if plot is not None:
        from ..plots.coverage import plot_coverage_width

        first_level = records[0]["level"]
        write_figure(plot, plot_coverage_width(records, lines, first_level, facet_label=by or "group",
                                               title="Coverage vs width"))
    if output is not None:
        write_json(output, result)
    if fmt is OutputFormat.json:
        sys.stdout.write(dumps_json(result))
        return
    _render(result, fmt)


def _render(result: dict, fmt: OutputFormat) -> None:
    from ..report.tables import fmt_value

    xkey = "width_norm" if all("width_norm" in r for r in result["points"]) else "width"
    rows = []
    for r in result["points"]:
        frac = result["fit"][r["facet"]][r["level"]]["fraction_above"][r["method"]]
        rows.append([r["method"], r["facet"], r["point"], r["level"], str(r["n_rows"]), fmt_value(r["coverage"]),
                     fmt_value(r[xkey]), fmt_value(frac)])
    head = ["method", result["by"] or "group", result["points_by"] or "point", "level", "rows", "coverage", xkey,
            "share above fit"]
    if fmt is OutputFormat.markdown:
        from ..report.text import md_cell

        lines = ["| " + " | ".join(map(md_cell, head)) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(map(md_cell, row)) + " |" for row in rows]
        typer.echo("\n".join(lines))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="coverage and width per method and group", title_justify="left")
    from ..report.text import markup

    for h in head:
        table.add_column(markup(h), justify="right" if h in ("rows", "coverage", xkey, "share above fit") else "left")
    for row in rows:
        table.add_row(*map(markup, row))
    Console().print(table)
