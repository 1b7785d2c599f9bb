"""``uqeval ucc FILE [FILE ...]``: Uncertainty Characteristics Curves, AUUCC, gains, operating points."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .common import (
    Output,
    ScoringFlags,
    check_outputs,
    console,
    engine_command,
    figure_format,
    figure_option,
    input_options,
    note,
    parse_pair,
    permutations_option,
    show,
)

if TYPE_CHECKING:
    from ..engine.options import EngineOptions


class Axis(str, Enum):
    bandwidth = "bandwidth"
    missrate = "missrate"
    excess = "excess"
    deficit = "deficit"


class Normalize(str, Enum):
    std = "std"
    none = "none"


FilesArg = Annotated[
    list[Path],
    typer.Argument(
        help="One or more prediction files (CSV or Parquet) over the same targets, in the same row order."
    ),
]
XAxisOpt = Annotated[Axis, typer.Option("--x-axis", help="Metric on the x axis.")]
YAxisOpt = Annotated[Axis, typer.Option("--y-axis", help="Metric on the y axis (the target column is --y).")]
NormalizeOpt = Annotated[
    Normalize,
    typer.Option(
        "--normalize",
        help="Divide bandwidth, excess and deficit by std(y) (ddof 0), or keep the units of y.",
    ),
]
PartialXOpt = Annotated[
    str | None,
    typer.Option(
        "--partial-x",
        help="Also the area over x between a and b, given as a,b (e.g. 0,1.5; ends interpolated).",
    ),
]
PartialYOpt = Annotated[
    str | None,
    typer.Option(
        "--partial-y",
        help="Also the area over the part of the curve with y between a and b, given as a,b (e.g. 0,0.5).",
    ),
]
CostOpt = Annotated[
    float,
    typer.Option(
        "--cost", min=0.0, max=1.0, help="Weight c of the x axis in the linear cost c·x + (1 − c)·y."
    ),
]
PermutationTestOpt = Annotated[
    int,
    permutations_option(
        "--permutation-test",
        "Paired permutation test of AUUCC differences with this many permutations (0: none); needs two or more files with the same point prediction.",
    ),
]
PlotOpt = Annotated[
    Path | None,
    figure_option("Draw every UCC with its constant-band reference to this .png (or .svg, .pdf)."),
]


@engine_command(
    input_options(
        wording={
            "level": "Nominal level of the band: Gaussian mean ± z·std, the interval pair, the central quantile "
            "pair or the empirical sample quantiles (default 0.95).",
            "seed": "Seed of --permutation-test (default 0).",
        }
    ),
    verdict=False,
)
def ucc(
    files: FilesArg,
    x_axis: XAxisOpt = Axis.bandwidth,
    y_axis: YAxisOpt = Axis.missrate,
    normalize: NormalizeOpt = Normalize.std,
    partial_x: PartialXOpt = None,
    partial_y: PartialYOpt = None,
    cost: CostOpt = 0.5,
    permutation_test: PermutationTestOpt = 0,
    plot: PlotOpt = None,
    *,
    out: Output,
    engine_options: EngineOptions,
    flags: ScoringFlags,
) -> None:
    """Uncertainty Characteristics Curve (Navratil et al.): AUUCC, gain, operating points.

    Each file's band (lower, point prediction, upper) at --level is scaled
    by k around the point prediction; the curve holds the operating points
    at every row's critical scale. Per model: AUUCC (trapezoid rule from the
    smallest critical scale), the AUUCC of a constant-width band around the
    same prediction, gain = (const - model) / const, an optional partial
    area, the original operating point (k = 1) and the minimum-cost point
    k* of c*x + (1 - c)*y. Several files must hold the same targets in the
    same order. --engine stream (or dask) reads record batches: the op point is exact,
    the areas, gains and k* are approximate within bounds written to the JSON.
    """
    from ..commands.ucc.core import UccOptions, run_ucc
    from ..engine.progress import work_progress
    from ..errors import UsageError

    px = parse_pair(partial_x, "--partial-x")
    py = parse_pair(partial_y, "--partial-y")
    level = flags.values.get("level")
    if level is not None and not 0.0 < level < 1.0:
        raise UsageError(f"--level must be strictly between 0 and 1, got {level:g}")
    if permutation_test and len(files) < 2:
        raise UsageError("--permutation-test compares models: give at least two prediction files")
    if plot is not None:
        figure_format(plot)
    settings = flags.settings()
    check_outputs(files, out.path, plot)
    if out.path is not None and plot is not None and out.path.resolve() == plot.resolve():
        raise UsageError("--output and --plot name the same file")

    options = UccOptions(
        x_axis=x_axis.value,
        y_axis=y_axis.value,
        normalize=normalize.value,
        partial_x=px,
        partial_y=py,
        cost=cost,
        n_permutations=permutation_test,
        seed=settings.seed,
        level=settings.level,
    )
    engine = engine_options.choose(files)
    # a terminal shows the rows read (streamed) or the stages (reading, the permutation test, the figure)
    with engine.progress(files[:1]) if engine.streams else work_progress(engine.quiet) as progress:
        summary, models = run_ucc(files, settings, options, engine, plot=plot is not None, progress=progress)
        image = None
        if models is not None:  # rendered before anything is written: a failure leaves no output
            from ..plots.common import figure_to_bytes
            from ..plots.ucc import plot_ucc

            assert plot is not None  # the models are made only for --plot
            image = figure_to_bytes(plot_ucc(models, cost=options.cost), figure_format(plot))
    if out.path is not None:
        from ..io.writers import write_json

        write_json(out.path, summary)
    if image is not None:
        from ..io.writers import atomic_write_bytes

        assert plot is not None  # the image is made only for --plot
        atomic_write_bytes(plot, image)
    note(*summary.get("notes", []))
    from ..report.ucc import rich_tables, to_markdown

    wide = console(200)  # pipes and CI logs: do not squeeze the columns
    show(summary, out.fmt, lambda: to_markdown(summary), lambda: rich_tables(summary, wide.width), wide)
