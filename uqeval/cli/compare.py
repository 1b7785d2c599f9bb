"""``uqeval compare A B [C ...]``: the same metrics for several models, with intervals, ranks and tests."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..config import LIMITS
from .common import (
    Output,
    ScoringFlags,
    check_outputs,
    engine_command,
    figure_format,
    figure_option,
    permutations_option,
    resampling_options,
    scoring_options,
)

if TYPE_CHECKING:
    from ..engine.options import EngineOptions
    from ..resample import Resampling


Pairs = Enum("Pairs", {"best": "best", "all": "all"}, type=str)


FilesArg = Annotated[
    list[Path],
    typer.Argument(
        help="Two or more prediction files (CSV or Parquet) over the same targets; with --engine stream/dask also directories of Parquet files or globs."
    ),
]
MetricsOpt = Annotated[
    str | None,
    typer.Option(
        "--metrics",
        "-m",
        help="Comma-separated metrics: per-row scores crps, nll, pinball, interval, check, brier, or any `uqeval score` metric by short name (ma_cal) or path (avg_calibration.ma_cal, coverage.0.95.coverage). Default: crps,nll,pinball,interval,brier,ma_cal where defined.",
    ),
]
BootstrapOpt = Annotated[
    int,
    typer.Option(
        "--bootstrap",
        "-b",
        "--n-boot",  # the Python keyword (uqeval.names.OPTIONS)
        min=0,
        max=LIMITS["bootstrap"],
        help="Bootstrap resamples of the rows for the intervals (0: no intervals).",
    ),
]
CiLevelOpt = Annotated[float, typer.Option("--ci-level", help="Level of the bootstrap percentile intervals.")]
PermutationsOpt = Annotated[
    int,
    permutations_option("--permutations", "Random sign flips of the paired permutation test (0: skip it)."),
]
PairsOpt = Annotated[
    Pairs,
    typer.Option(
        "--pairs", help="Paired tests of each model against the best one per metric, or of all pairs."
    ),
]
DmLagOpt = Annotated[
    int,
    typer.Option(
        "--dm-lag",
        min=0,
        help="Diebold-Mariano lag h-1 (h: forecast horizon): autocovariances up to this lag enter its variance; "
        "> 0 only for time-ordered rows with correlated errors.",
    ),
]
NamesOpt = Annotated[
    str | None,
    typer.Option("--names", help="Comma-separated model names, one per file (default: file names)."),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Also write the comparison JSON here (atomically).", dir_okay=False),
]
PlotOpt = Annotated[
    Path | None,
    figure_option(
        "Draw the metrics with their intervals to this .png, .svg or .pdf (with --murphy also NAME_murphy.EXT, with --reference NAME_skill.EXT).",
        panel=None,
    ),
]


@engine_command(scoring_options, resampling_options, output=OutputOpt)
def compare(
    files: FilesArg,
    metrics: MetricsOpt = None,
    bootstrap: BootstrapOpt = 1000,
    ci_level: CiLevelOpt = 0.95,
    permutations: PermutationsOpt = 5000,
    pairs: PairsOpt = Pairs.best,
    dm_lag: DmLagOpt = 0,
    names: NamesOpt = None,
    *,
    out: Output,
    plot: PlotOpt = None,
    engine_options: EngineOptions,
    flags: ScoringFlags,
    resampling: Resampling,
) -> None:
    """Compare models on the same targets: metrics with bootstrap intervals, ranks and paired tests.

    Every file must hold the same targets in the same order (checked to 1e-12), or
    give --id to join them on an id column. Per-row scores (crps, nll, pinball,
    interval, check, brier, and every named metric that is a mean of per-row scores,
    such as accuracy.mae; not those with a target) get paired permutation and
    Diebold-Mariano tests against the best model; every metric gets a rank per model
    and, where it can be resampled cheaply, a seeded bootstrap interval shared across
    models.
    """
    from ..commands.compare.core import CompareOptions, model_names
    from ..commands.compare.run import run_compare
    from ..commands.verdict import with_verdict
    from ..engine.progress import work_progress
    from ..errors import UsageError
    from ..report.compare import rich_tables, to_markdown
    from .common import console, show

    if len(files) < 2:
        raise UsageError(f"compare needs at least two prediction files, got {len(files)}")
    if plot is not None:
        figure_format(plot)
    metric_names = None
    if metrics is not None:
        metric_names = [m.strip() for m in metrics.split(",") if m.strip()]
        if not metric_names:
            raise UsageError("--metrics is empty; give comma-separated names such as crps,nll,ma_cal")
    settings = flags.settings(columns={"by": flags.id})
    reference = flags.reference_spec(joins_files=True)
    check_outputs(files, out.path, plot)
    labels = model_names([str(f) for f in files], names.split(",") if names is not None else None)
    options = CompareOptions(
        metric_names, bootstrap, ci_level, settings.seed, permutations, pairs.value, dm_lag, resampling
    )
    engine = engine_options.choose(files)
    # a terminal shows the rows read (streamed) or the stages (reading, scoring, bootstrap, tests)
    with engine.progress(files[:1]) if engine.streams else work_progress(engine.quiet) as progress:
        result = run_compare(
            files,
            settings,
            options,
            engine,
            names=labels,
            ids=flags.id,
            reference=reference,
            progress=progress,
        )
    if out.verdict:
        with_verdict(result)
    _write(result, out.path, plot)
    show(result, out.fmt, lambda: to_markdown(result), lambda: rich_tables(result), console(140))


def _write(result: dict, output: Path | None, plot: Path | None) -> None:
    """The JSON and the figures of a finished comparison (written only after everything was computed)."""
    if output is not None:
        from ..io.writers import write_json

        write_json(output, result)
    if plot is not None:  # (its suffix was checked before any work: figure_format)
        from ..plots.common import write_figure
        from ..plots.compare import compare_figure

        write_figure(plot, compare_figure(result))
        # --murphy: the overlaid Murphy curves next to it (issue 16 A)
        if result.get("murphy", {}).get("curves"):
            from ..plots.murphy import murphy_compare_figure

            write_figure(
                plot.with_name(f"{plot.stem}_murphy{plot.suffix}"), murphy_compare_figure(result["murphy"])
            )
        if result.get("skill"):  # --reference: the skill of each model with its bootstrap interval (issue 16)
            from ..plots.verification import plot_skill, reference_label

            skill = plot_skill(result["skill"], reference=reference_label(result["reference"]))
            write_figure(plot.with_name(f"{plot.stem}_skill{plot.suffix}"), skill)
