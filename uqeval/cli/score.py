"""``uqeval score FILE``: every metric that applies to the file's representation."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import (ConfigOpt, FormatOpt, LevelsOpt, LowerCol, MeanCol, NanOpt, OutputFormat, OutputOpt, ReprOpt,
                     SeedOpt, StdCol, UpperCol, VarCol, YCol, column_overrides, emit, handle_errors, parse_levels)


@handle_errors
def score(
    file: Annotated[Path, typer.Argument(help="CSV (.csv, .csv.gz) or Parquet (.parquet, .pq) file of targets and predictions.")],
    y: YCol = None,
    mean: MeanCol = None,
    std: StdCol = None,
    var: VarCol = None,
    lower: LowerCol = None,
    upper: UpperCol = None,
    by: Annotated[Optional[str], typer.Option("--by", help="Report every metric per value of this column (e.g. a shift level).")] = None,
    representation: ReprOpt = None,
    levels: LevelsOpt = None,
    level: Annotated[Optional[float], typer.Option("--level", help="Nominal level of a single lower/upper pair (default 0.95).")] = None,
    y_std: Annotated[Optional[float], typer.Option("--y-std", help="Std of the training targets: coverage widths are also given in this unit.")] = None,
    train: Annotated[Optional[Path], typer.Option("--train", help="Training file whose target std is the unit of width_norm.", dir_okay=False)] = None,
    num_bins: Annotated[Optional[int], typer.Option("--num-bins", help="Calibration curve bins (default 100).")] = None,
    resolution: Annotated[Optional[int], typer.Option("--resolution", help="Levels for check/interval scores (default 99).")] = None,
    bins: Annotated[Optional[int], typer.Option("--bins", help="Classification calibration bins (default 15).")] = None,
    fix_crossing: Annotated[bool, typer.Option("--fix-crossing", help="Sort crossing quantiles instead of failing.")] = False,
    logits: Annotated[bool, typer.Option("--logits", help="Class columns hold logits; apply softmax.")] = False,
    renormalize: Annotated[bool, typer.Option("--renormalize", help="Rescale probabilities that drift off the simplex.")] = False,
    seed: SeedOpt = None,
    nan_policy: NanOpt = None,
    config: ConfigOpt = None,
    fmt: FormatOpt = OutputFormat.table,
    output: OutputOpt = None,
) -> None:
    """Score a prediction file: accuracy, calibration, sharpness, scoring rules, reliability, coverage."""
    from ..api import score_file, train_std
    from ..config import make_settings
    from ..errors import UsageError
    from ..io.writers import check_output_path

    if y_std is not None and train is not None:
        raise UsageError("give either --y-std or --train, not both")
    settings = make_settings(
        config,
        columns=column_overrides(y_true=y, mean=mean, std=std, var=var, lower=lower, upper=upper, by=by),
        representation=representation.value if representation else None,
        levels=parse_levels(levels), level=level, y_std=y_std, num_bins=num_bins, resolution=resolution,
        class_bins=bins, seed=seed, nan_policy=nan_policy.value if nan_policy else None,
        fix_crossing=fix_crossing or None, logits=logits or None, renormalize=renormalize or None,
    )
    if output is not None:
        check_output_path(output, [file])
    if train is not None:
        from dataclasses import replace

        settings = replace(settings, y_std=train_std(train, settings))
    summary = score_file(file, settings)
    emit(summary, fmt, output)
