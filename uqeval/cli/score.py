"""``uqeval score FILE``: every metric that applies to the file's representation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..config import LIMITS
from .common import (
    METRICS_PANEL,
    OUTPUT_PANEL,
    PLOTS_PANEL,
    OrderBy,
    OrderByOpt,
    Output,
    ScoringFlags,
    check_outputs,
    emit,
    engine_command,
    grid_options,
    note,
    scoring_options,
)
from .plot import MaxPointsOpt, PlotFormatOpt, XOpt

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..commands.score.stream import Scored
    from ..engine.options import EngineOptions


GroupsOpt = Annotated[
    str | None,
    typer.Option(
        "--groups",
        metavar="GROUPS",
        help="Compute only these metric groups, comma-separated (the JSON groups, e.g. scoring_rule,calibration_tests; "
        "naming --diagnostics or --murphy groups turns them on): faster on large or gridded data.",
        rich_help_panel=METRICS_PANEL,
    ),
]


@engine_command(scoring_options, grid_options)
def score(
    file: Annotated[
        Path,
        typer.Argument(
            help="CSV (.csv, .csv.gz), Parquet (.parquet, .pq), NetCDF (.nc) or Zarr (.zarr) file of targets and predictions; an existing file is that file whatever its name; with --engine stream/dask also a directory of parts (hive partitions), a glob, or a URI (s3://, gs://, file://, ...)."
        ),
    ],
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="Report every metric per value of this column (e.g. a shift level).",
            rich_help_panel=METRICS_PANEL,
        ),
    ] = None,
    groups: GroupsOpt = None,
    oca_fraction: Annotated[
        float | None,
        typer.Option(
            "--oca-fraction",
            help="Share of most uncertain rows handed to an oracle for oracle_collaborative_accuracy (default 0.01).",
            rich_help_panel=METRICS_PANEL,
        ),
    ] = None,
    bayes_samples: Annotated[
        int | None,
        typer.Option(
            "--bayes-samples",
            max=LIMITS["bayes_samples"],
            help="Posterior draws of the Bayesian ECE (default 500, seeded by --seed).",
            rich_help_panel=METRICS_PANEL,
        ),
    ] = None,
    per_row: Annotated[
        Path | None,
        typer.Option(
            "--per-row",
            help="Ensembles and Dirichlet outputs: write per-row total/aleatoric/epistemic uncertainty to this Parquet file.",
            dir_okay=False,
            rich_help_panel=OUTPUT_PANEL,
        ),
    ] = None,
    *,
    out: Output,
    plot_dir: Annotated[
        Path | None,
        typer.Option(
            "--plot-dir",
            help="Write every plot that applies to the representation into this directory (created if its parent exists), e.g. calibration.png.",
            rich_help_panel=PLOTS_PANEL,
        ),
    ] = None,
    plot_format: PlotFormatOpt = None,
    max_points: MaxPointsOpt = None,
    x: XOpt = None,
    order_by: OrderByOpt = OrderBy.target,
    engine_options: EngineOptions,
    flags: ScoringFlags,
) -> None:
    """Score a prediction file: accuracy, calibration, sharpness, scoring rules, reliability, coverage."""
    from ..errors import UsageError
    from ..io.writers import write_parquet

    settings = flags.settings(
        columns={"by": by}, oca_fraction=oca_fraction, bayes_samples=bayes_samples, groups=groups
    )
    reference = flags.reference_spec()
    if plot_dir is not None and settings.columns.get("weights"):
        raise UsageError("--plot-dir draws unweighted plots: leave out --weights or --plot-dir")
    check_outputs([file], out.path)
    engine = engine_options.choose([file])
    maps = _draws_maps(file)
    # streamed: the maps of a grid only (from the per-cell metrics); the other figures need the rows in memory
    engine.memory_only(per_row=per_row, plot_dir=None if maps else plot_dir, reference=flags.reference)
    if per_row is not None:
        _check_per_row(file, per_row, out.path)
    _check_plot_options(file, plot_dir, plot_format, max_points, x)  # on every engine: the same refusals
    # compute everything first, then write: a failure leaves no output behind (--x read with the prediction)
    scored = run_score(file, settings, engine, reference, extra=[x] if x else (), per_row=per_row is not None)
    summary = scored.judged() if out.verdict else scored.summary
    loaded = scored.loaded
    images = (
        _plot_images(file, loaded, settings, summary, plot_dir, plot_format, max_points, x, order_by)
        if plot_dir is not None and loaded is not None
        else None
    )
    if scored.per_row is not None:
        assert per_row is not None  # the table is made only for --per-row
        write_parquet(per_row, scored.per_row)
    if images is not None:
        from ..plots.kinds import write_images

        assert plot_dir is not None  # the images are made only for --plot-dir
        write_images(images, plot_dir, plot_format.value if plot_format else "png")
    if plot_dir is not None and maps:
        _write_maps(summary, plot_dir, plot_format)
    emit(summary, out.fmt, out.path)


def _draws_maps(file: Path) -> bool:
    """Whether ``--plot-dir`` draws maps: a NetCDF/Zarr input with two dimensions kept (``--preserve-dims
    lat,lon``), on every engine (the other figures need the rows in memory)."""
    from ..io.readers import is_labelled

    if not is_labelled(file):
        return False
    from ..io import labelled

    return len(labelled.kept_dims(file)) == 2


def _write_maps(summary: dict, plot_dir: Path, plot_format) -> None:
    """``map_<metric>.<format>`` in ``plot_dir``: the headline metrics per kept cell (:func:`uqeval.plots.maps.
    metric_maps`)."""
    from ..io.labelled import metrics_dataset
    from ..plots.kinds import encode_figures, write_images
    from ..plots.maps import metric_maps

    if "groups" not in summary:
        return
    figures = metric_maps(metrics_dataset(summary), summary["input"].get("representation"))
    notes: list[str] = []
    fmt = plot_format.value if plot_format else "png"
    write_images(encode_figures(figures, fmt, notes=notes), plot_dir, fmt)
    note(*notes)


def _check_per_row(file: Path, per_row: Path, output: Path | None) -> None:
    """``--per-row FILE``: a Parquet name, a writable path, not the ``--output`` file."""
    from ..errors import UsageError
    from ..io.writers import check_output_path

    if not per_row.name.lower().endswith((".parquet", ".pq")):
        raise UsageError(f"--per-row writes Parquet: give a .parquet or .pq file name, not '{per_row.name}'")
    check_output_path(per_row, [file])
    if output is not None and per_row.resolve() == output.resolve():
        raise UsageError("--per-row and --output name the same file; give two different paths")


def _check_plot_options(file: Path, plot_dir: Path | None, plot_format, max_points, x: str | None) -> None:
    """The options of ``--plot-dir``, checked before reading (and its render workers started, so that their
    start-up overlaps reading and scoring)."""
    from ..errors import UsageError

    if plot_dir is None:
        if plot_format is not None or max_points is not None or x is not None:
            raise UsageError("--plot-format, --max-points and --x only apply with --plot-dir DIR")
        return
    from .. import plots
    from ..plots.kinds import check_plot_dir, render_workers
    from .plot import check_max_points

    check_plot_dir(plot_dir)
    check_max_points(max_points)
    if x is not None:  # fail before scoring when the column is missing
        from ..io.readers import inspect
        from ..plots.kinds import find_x_column

        find_x_column(inspect(file), x)
    render_workers(plots.RENDER_PROCESSES)


def run_score(
    file: Path,
    settings,
    engine: EngineOptions,
    reference=None,
    extra: Sequence[str] = (),
    per_row: bool = False,
) -> Scored:
    """``score`` of ``file`` on ``engine`` (:func:`~uqeval.commands.score.stream.score_with_engine`), with a
    progress bar on a terminal when streamed."""
    from contextlib import nullcontext

    from ..commands.score.stream import score_with_engine

    with engine.progress([file]) if engine.streams else nullcontext() as progress:
        return score_with_engine(file, settings, engine, progress, reference, extra, per_row)


def _plot_images(
    file, loaded, settings, summary, plot_dir, plot_format, max_points, x, order_by
) -> dict[str, bytes]:
    """Every plot that applies to the file's representation, encoded (``{kind: bytes}``)."""
    from ..plots.kinds import build_figures, encode_figures
    from .plot import check_max_points, load_x

    xs, x_label = load_x(x, loaded)
    bundle = build_figures(
        loaded.prediction,
        summary.get("metrics"),
        settings,
        name=file.name,
        x=xs,
        x_label=x_label,
        max_points=check_max_points(max_points),
        info=loaded.info,
        order_by=order_by.value,
    )
    if not bundle.figures:
        note(f"no plot applies to {loaded.prediction.kind} predictions; nothing written to {plot_dir}")
    images = encode_figures(bundle.figures, plot_format.value if plot_format else "png", notes=bundle.notes)
    note(*bundle.notes)
    return images
