"""``uqeval compare A B [C ...]``: the same metrics for several models, with intervals, ranks and tests."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from ..config import LIMITS
from .common import (
    Output,
    ScoringFlags,
    check_outputs,
    engine_command,
    figure_format,
    figure_option,
    load_same_rows,
    permutations_option,
    resampling_options,
    scoring_options,
)

if TYPE_CHECKING:
    import numpy as np

    from ..commands.compare.core import CompareOptions
    from ..commands.compare.skill import Reference
    from ..config import Settings
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
    interval, check, brier) get paired permutation and Diebold-Mariano tests against
    the best model; every metric gets a rank per model and, where it can be
    resampled cheaply, a seeded bootstrap interval shared across models.
    """
    from ..commands.compare.core import CompareOptions, model_names
    from ..commands.verdict import with_verdict
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
    if settings.columns.get("weights") and reference:
        from ..commands.compare.skill import refuse_weighted_skill

        raise refuse_weighted_skill()
    if engine.streams:
        engine.memory_only(id=flags.id, reference=reference)
        from ..commands.compare.stream import compare_with_engine
        from ..io.uri import as_spec

        specs = [as_spec(f) for f in files]  # a URI as given (str() of a Path folds s3:// to s3:/)
        with engine.progress(specs[:1]) as progress:
            result = compare_with_engine(specs, labels, settings, options, engine, progress)
    else:
        from ..engine.progress import work_progress

        with work_progress(engine.quiet):  # a terminal shows the stages (reading, scoring, bootstrap, tests)
            result = _compare_in_memory(files, labels, settings, options, flags.id, reference)
    if out.verdict:
        with_verdict(result)
    _write(result, out.path, plot)
    show(result, out.fmt, lambda: to_markdown(result), lambda: rich_tables(result), console(140))


def _compare_in_memory(
    files: list[Path],
    labels: list[str],
    settings: Settings,
    options: CompareOptions,
    id_col: str | None,
    reference: Reference | None,
) -> dict[str, Any]:
    """The comparison of ``files`` read whole (joined on ``id_col`` when given), with the skill against
    ``reference`` when given."""
    from ..commands.compare.core import Model, align_models, compare_models
    from ..commands.score.core import read_extra_column
    from ..engine.progress import stage

    models, ids = [], []
    weights = None
    for i, (name, path) in enumerate(zip(labels, files)):
        stage(f"reading {name}")
        loaded = load_same_rows(i, path, settings)
        weights = loaded.weights if i == 0 else weights
        models.append(Model(name, loaded.prediction, loaded.info))
        ids.append(loaded.groups)
    # with --id it is the "by" column, read from every file: each file's groups are its ids
    models = align_models(models, cast("list[np.ndarray]", ids) if id_col else None, id_column=id_col)
    first = models[0].prediction
    cluster = options.resampling.cluster
    clusters = None if cluster is None else read_extra_column(models[0].source, cluster, first.row_numbers())
    times = None
    # forecast verification (issue 16): the skill of each model against the reference
    if reference is not None:
        if reference.kind == "persistence":
            times = read_extra_column(models[0].source, reference.time, first.row_numbers())
        if id_col is not None:  # the reference is joined to the first model's rows on the same column
            from dataclasses import replace

            reference = replace(reference, model_ids=ids[0])
    stage("scoring")
    return compare_models(
        models,
        settings,
        options,
        clusters=clusters,
        weights=weights,
        weights_column=settings.columns.get("weights"),
        reference=reference,
        reference_times=times,
    )


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
