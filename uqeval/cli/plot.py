"""``uqeval plot FILE --kind KIND --output PATH``: one figure of a prediction file.

Also defines the plot options shared with ``uqeval score --plot-dir`` and ``uqeval report``.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from ..config import LIMITS
from ..errors import option
from ..plots import PLOT_FORMATS, PLOT_KINDS
from .common import (
    PLOTS_PANEL,
    OrderBy,
    OrderByOpt,
    ScoringFlags,
    handle_errors,
    note,
    scoring_options,
)

if TYPE_CHECKING:
    import numpy as np


PlotFormat = Enum("PlotFormat", {k: k for k in PLOT_FORMATS}, type=str)  # type: ignore[misc]  # as cli.common.NanPolicy


# The --kind choices (uqeval.plots holds only the names: no matplotlib import for `uqeval --help`).
PlotKind = Enum("PlotKind", {k: k for k in PLOT_KINDS}, type=str)  # type: ignore[misc]  # members known at run time only

XOpt = Annotated[
    str | None,
    typer.Option(
        "--x", help="Column to plot predictions against (default: intervals sorted by the prediction)."
    ),
]
MaxPointsOpt = Annotated[
    int | None,
    typer.Option(
        "--max-points",
        max=LIMITS["max_points"],
        help="Most rows drawn in scatter plots, a seeded random subset (default 5000); curves use every row.",
    ),
]
PlotFormatOpt = Annotated[
    PlotFormat | None, typer.Option("--plot-format", help="Image format: png (default), svg or pdf.")
]
DpiOpt = Annotated[
    int, typer.Option("--dpi", min=30, max=1200, help="Resolution of PNG output, dots per inch.")
]

# Annotated aliases: mypy sees the plain types, at run time each carries its typer.Option in __metadata__
for _ann in cast("tuple[Any, ...]", (XOpt, MaxPointsOpt, PlotFormatOpt, DpiOpt)):
    _ann.__metadata__[0].rich_help_panel = PLOTS_PANEL

DEFAULT_MAX_POINTS = 5000


def check_max_points(max_points: int | None) -> int:
    from ..errors import UsageError

    if max_points is None:
        return DEFAULT_MAX_POINTS
    if max_points < 1:
        raise UsageError(f"--max-points must be >= 1, got {max_points}")
    return int(max_points)


def output_format(output: Path, plot_format: PlotFormat | None) -> str:
    """Format from --plot-format, else from the file's suffix, else png; a contradiction is a usage error."""
    from ..errors import UsageError

    suffix = output.suffix.lower().lstrip(".")
    if plot_format is not None:
        if suffix in PLOT_FORMATS and suffix != plot_format.value:
            raise UsageError(
                f"--output {output} ends in .{suffix} but --plot-format is {plot_format.value}; "
                "make them agree"
            )
        return plot_format.value
    return suffix if suffix in PLOT_FORMATS else "png"


def load_x(x: str | None, loaded) -> tuple[np.ndarray | None, str | None]:
    """``(values, label)`` of the --x column (read with the prediction: ``extra=[x]``) aligned with the
    loaded rows, or ``(None, None)``."""
    if x is None:
        return None, None
    from ..plots.kinds import x_values

    return x_values(loaded, x), x


@handle_errors
@scoring_options
def plot(
    file: Annotated[Path, typer.Argument(help="CSV or Parquet file of targets and predictions.")],
    kind: Annotated[
        PlotKind,
        typer.Option("--kind", "-k", help="Which figure (see the list above).", case_sensitive=False),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "-o",
            help="Image file to write (atomically); format from --plot-format or the suffix.",
            dir_okay=False,
        ),
    ],
    x: XOpt = None,
    max_points: MaxPointsOpt = None,
    order_by: OrderByOpt = OrderBy.target,
    plot_format: PlotFormatOpt = None,
    dpi: DpiOpt = 150,
    *,
    flags: ScoringFlags,
) -> None:
    """Draw one figure of a prediction file.

    Kinds: predictions (interval band vs --x, else intervals sorted by the prediction), intervals (ordered by
    target), calibration (average calibration curve), adversarial (group calibration),
    sharpness (histogram of σ), residuals (vs σ), reliability (bin-free PIT diagram for
    regression; reliability diagram for classification), pit (PIT histogram), confidence
    and sets (classification), rejection (ensembles), ucc (uncertainty characteristics
    curve), rank_histogram (ensembles; a --diagnostics figure), murphy (--murphy),
    exceedance_reliability (CORP diagram of Y > t; needs --threshold), skill (bars of the
    skill per score; needs --reference), multivariate_rank_histogram (average-rank histogram of a
    multivariate ensemble), coverage (observed coverage by nominal level). Which kinds apply depends
    on the file's representation; `uqeval score FILE --plot-dir DIR` writes all of them.
    """
    from ..errors import UsageError, naming
    from ..io.load import load_predictions
    from ..io.writers import atomic_write_bytes, check_output_path
    from ..plots.common import figure_to_bytes
    from ..plots.kinds import OPT_IN_KINDS, build_figures

    fmt = output_format(output, plot_format)
    n_points = check_max_points(max_points)
    settings = flags.settings()
    reference = None
    if kind.value == "skill":  # the skill bars need the reference forecast
        reference = flags.reference_spec()
        if reference is None:
            raise UsageError(
                "--kind skill needs --reference (a predictions FILE, climatology with --train, or "
                "persistence with --time)"
            )
    elif flags.reference is not None or flags.time is not None or flags.id is not None:
        raise UsageError(
            "--reference, --time and --id apply to score, compare, check, report and plot --kind skill "
            "(skill scores), not to other plots"
        )
    if kind.value in OPT_IN_KINDS:  # asking for the figure asks for the opt-in family it draws
        from dataclasses import replace

        field = OPT_IN_KINDS[kind.value]
        if isinstance(getattr(settings, field), bool):
            settings = replace(settings, **{field: True})
        elif not getattr(settings, field):  # a setting with a value (--threshold t) cannot be guessed
            raise UsageError(f"--kind {kind.value} needs {option(field)}")
    check_output_path(output, [file])
    loaded = load_predictions(file, settings, extra=[x] if x else ())
    xs, x_label = load_x(x, loaded)
    with naming(file):
        metrics = None
        if reference is not None:
            from ..commands.score.core import skill_of

            skill, _, skill_notes = skill_of(loaded, reference, settings)
            metrics = {"skill": skill}
            note(*skill_notes)
        bundle = build_figures(
            loaded.prediction,
            metrics,
            settings,
            name=file.name,
            kinds=[kind.value],
            x=xs,
            x_label=x_label,
            max_points=n_points,
            info=loaded.info,
            order_by=order_by.value,
        )
    if kind.value not in bundle.figures:  # left out (the notes say why): the figure asked for is the output
        from ..errors import InputError

        why = "; ".join(bundle.notes) or "nothing to draw"
        raise InputError(f"{file}: cannot draw the {kind.value} figure: {why}")
    note(*bundle.notes)
    with naming(file):  # a figure too large to draw names its data
        image = figure_to_bytes(bundle.figures[kind.value], fmt, dpi)
    atomic_write_bytes(output, image)
