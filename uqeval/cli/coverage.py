"""``uqeval coverage A B ... --by shift``: coverage and width of several methods across shift groups."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .common import Output, ScoringFlags, check_outputs, engine_command, figure_option, input_options, show

if TYPE_CHECKING:
    from ..engine.options import EngineOptions


FilesArg = Annotated[
    list[Path], typer.Argument(help="Prediction files, one run of a method each (same schema).")
]
ByOpt = Annotated[str | None, typer.Option("--by", help="Facet column, e.g. the shift/corruption level.")]
PointsByOpt = Annotated[
    str | None,
    typer.Option(
        "--points-by", help="Within a facet, one point per value of this column (e.g. corruption type)."
    ),
]
NameOpt = Annotated[
    list[str] | None,
    typer.Option("--name", help="Method name per file, in order (files may share one); default: file stem."),
]
PlotOpt = Annotated[Path | None, figure_option("Write the faceted coverage-vs-width scatter (PNG/SVG/PDF).")]


@engine_command(
    input_options(
        metrics=("levels", "y_std", "train"),
        wording={
            "y_std": "Std of the training targets: widths in this unit.",
            "train": "Training file whose target std is the width unit.",
        },
    ),
    verdict=False,
)
def coverage(
    files: FilesArg,
    by: ByOpt = None,
    points_by: PointsByOpt = None,
    name: NameOpt = None,
    plot: PlotOpt = None,
    *,
    out: Output,
    engine_options: EngineOptions,
    flags: ScoringFlags,
) -> None:
    """Compare methods' coverage and width per shift group (Kompa, Snoek & Beam): table, scatter, share above the fit."""
    from contextlib import nullcontext

    from ..commands.coverage.core import method_names, run_coverage

    settings = flags.settings(columns={"by": by})
    by = settings.columns.get("by")  # --by, else a settings file's [columns] by
    check_outputs(files, out.path, plot)
    names = method_names([str(f) for f in files], name)
    engine = engine_options.choose(files)
    # a terminal shows the rows read over every file (streamed)
    with engine.progress(files) if engine.streams else nullcontext() as progress:
        result = run_coverage(
            list(zip(names, files)), settings, by=by, points_by=points_by, engine=engine, progress=progress
        )
    if engine.streams and not engine.quiet:
        from ..io.inputs import expand_input
        from .common import note

        note(*(n for f in files if (n := expand_input(f, check=False).note())))  # files not read
    if plot is not None:
        from ..plots.common import write_figure  # matplotlib: only when drawing
        from ..plots.coverage import plot_coverage_width

        records = result["points"]
        figure = plot_coverage_width(
            records, result["fit"], records[0]["level"], facet_label=by or "group", title="Coverage vs width"
        )
        write_figure(plot, figure)
    if out.path is not None:
        from ..io.writers import write_json

        write_json(out.path, result)
    from ..report.coverage import rich_table, to_markdown

    show(result, out.fmt, lambda: to_markdown(result), lambda: [rich_table(result)])
