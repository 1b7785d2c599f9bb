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
    from ..commands.coverage.core import above_line, coverage_points, method_names
    from ..commands.score.core import read_extra_column
    from ..io.load import load_predictions
    from ..io.writers import write_json
    from ..report.coverage import coverage_document

    settings = flags.settings(columns={"by": by})
    check_outputs(files, out.path, plot)
    names = method_names([str(f) for f in files], name)
    engine = engine_options.choose(files)
    weights_col = settings.columns.get("weights")
    total_w, zero_w = 0.0, 0
    if engine.streams:
        from ..commands.coverage.stream import coverage_points_with_engine
        from ..io.uri import as_spec

        pairs = [(m, as_spec(f)) for m, f in zip(names, files)]  # a URI as given (str() folds s3:// to s3:/)
        with engine.progress(files) as progress:
            records, (total_w, zero_w) = coverage_points_with_engine(
                pairs, settings, engine, points_by, progress
            )
        from ..io.inputs import expand_input
        from .common import note

        for f in files:  # files of a directory that were not read
            skipped = expand_input(f, check=False).note()
            if skipped and not engine.quiet:
                note(skipped)
    runs = []
    for method, f in zip(names, files) if not engine.streams else ():
        loaded = load_predictions(f, settings, weights_ok=True)  # --weights: a column of every file
        pts = (
            read_extra_column(
                f, points_by, loaded.prediction.rows if loaded.prediction.rows is not None else slice(None)
            )
            if points_by
            else None
        )
        runs.append((method, loaded, pts))
    if runs:
        records, (total_w, zero_w) = coverage_points(runs, settings)
    lines = above_line(records)
    result = coverage_document(records, lines, by=by, points_by=points_by, y_std=settings.y_std)
    if weights_col:
        from ..weights import weights_block

        result["weights"] = weights_block(weights_col, total_w, zero_w, {})
    if plot is not None:
        from ..plots.common import write_figure  # matplotlib: only when drawing
        from ..plots.coverage import plot_coverage_width

        first_level = records[0]["level"]
        write_figure(
            plot,
            plot_coverage_width(
                records, lines, first_level, facet_label=by or "group", title="Coverage vs width"
            ),
        )
    if out.path is not None:
        write_json(out.path, result)
    from ..report.coverage import rich_table, to_markdown

    show(result, out.fmt, lambda: to_markdown(result), lambda: [rich_table(result)])
