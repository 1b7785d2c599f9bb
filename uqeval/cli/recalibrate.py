"""``uqeval recalibrate``: fit a recalibrator on a calibration file, apply it to another, save/load it."""

from __future__ import annotations

import functools
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from ..config import LIMITS
from ..text import plain
from .common import (
    FormatOpt,
    OutputFormat,
    ScoringFlags,
    check_outputs,
    handle_errors,
    input_options,
    note,
    parse_levels,
    show,
)

# the choices of --method, --criterion and --model (:data:`uqeval.cli.common.NanPolicy` says why ignored)
_METHODS = ("std-scaling", "isotonic", "conformal", "accrue", "temperature")
Method = Enum("Method", {k: k for k in _METHODS}, type=str)  # type: ignore[misc]
_CRITERIA = ("ma_cal", "rms_cal", "miscal_area", "nll", "crps")
Criterion = Enum("Criterion", {k: k for k in _CRITERIA}, type=str)  # type: ignore[misc]
Model = Enum("Model", {k: k for k in ("poly", "mlp", "constant", "kmeans")}, type=str)  # type: ignore[misc]


FileArg = Annotated[
    Path | None,
    typer.Argument(
        help="Calibration file (CSV/Parquet with targets) to fit on; omit with --load.",
        show_default=False,
    ),
]
MethodOpt = Annotated[
    Method | None,
    typer.Option("--method", "-m", help="Recalibration method (required when fitting).", show_default=False),
]
ApplyOpt = Annotated[
    Path | None,
    typer.Option("--apply", help="File to recalibrate (targets optional); needs --output.", dir_okay=False),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Recalibrated copy of --apply: every input column plus the new ones (.parquet/.pq/.csv/.csv.gz, written atomically).",
        dir_okay=False,
    ),
]
SaveOpt = Annotated[
    Path | None,
    typer.Option("--save", help="Write the fitted recalibrator as JSON (never pickle).", dir_okay=False),
]
LoadOpt = Annotated[
    Path | None,
    typer.Option("--load", help="Apply a recalibrator saved with --save instead of fitting.", dir_okay=False),
]
CriterionOpt = Annotated[
    Criterion | None,
    typer.Option(
        "--criterion",
        help="std-scaling: criterion the factor minimises (default ma_cal).",
        show_default=False,
    ),
]
LevelsOpt = Annotated[
    str | None,
    typer.Option(
        "--levels",
        help="Comma-separated central levels of the interval outputs and coverage (default 0.5,0.9,0.95); with --quantiles, quantile levels (default 0.05,0.25,0.5,0.75,0.95).",
    ),
]
QuantilesOpt = Annotated[
    bool,
    typer.Option(
        "--quantiles",
        help="isotonic: write recalibrated quantiles q_<level> instead of intervals lower_<level>/upper_<level>.",
    ),
]
EquivalentStdOpt = Annotated[
    bool,
    typer.Option(
        "--equivalent-std",
        help="isotonic: also write std_<level>, the std whose Gaussian central interval is as wide as the recalibrated one.",
    ),
]
ModelOpt = Annotated[
    Model | None,
    typer.Option("--model", help="accrue: model of sigma(x) (default mlp).", show_default=False),
]
ClustersOpt = Annotated[
    int | None,
    typer.Option(
        "--clusters",
        help="accrue --model kmeans: number of clusters (default 5).",
        min=1,
        max=LIMITS["clusters"],
    ),
]
FeaturesOpt = Annotated[
    str | None,
    typer.Option(
        "--features",
        help="accrue: comma-separated input columns sigma(x) depends on (with --load: default the saved ones).",
    ),
]


@handle_errors
@input_options(
    metrics=("num_bins", "bins"),
    wording={
        "num_bins": "Calibration curve bins of the metrics, std-scaling and isotonic (default 100).",
        "seed": "accrue: seed of k-means, the validation split and the MLP restarts (default 0).",
        "logits": "temperature: class logit columns (a comma list or a glob such as 'z*'); softmax applied.",
        "renormalize": "temperature: rescale probabilities that drift off the simplex.",
    },
)
def recalibrate(
    file: FileArg = None,
    method: MethodOpt = None,
    apply: ApplyOpt = None,
    output: OutputOpt = None,
    save: SaveOpt = None,
    load: LoadOpt = None,
    criterion: CriterionOpt = None,
    levels: LevelsOpt = None,
    quantiles: QuantilesOpt = False,
    equivalent_std: EquivalentStdOpt = False,
    model: ModelOpt = None,
    clusters: ClustersOpt = None,
    features: FeaturesOpt = None,
    fmt: FormatOpt = OutputFormat.table,
    *,
    flags: ScoringFlags,
) -> None:
    """Recalibrate predictive uncertainty: std scaling, isotonic, conformal, ACCRUE sigma(x), temperature.

    Fits on FILE (a held-out calibration split) and prints the before/after metrics on it; with --apply, writes a recalibrated copy of another file (--output) and scores it too when it has targets. --save/--load store the fitted recalibrator as JSON.
    """
    from ..errors import UsageError

    seed = flags.values["seed"]
    logits, renormalize = flags.columns.get("logits"), bool(flags.values["renormalize"])
    _check_modes(file, method, apply, output, save, load, criterion, model, clusters, seed)

    from ..io.writers import output_format

    if output is not None:
        output_format(output)
    level_values = parse_levels(levels)
    for lv in level_values or ():
        if not 0.0 < lv < 1.0:
            raise typer.BadParameter(f"--levels must lie strictly between 0 and 1, got {lv:g}")
    feature_names = (
        tuple(f.strip() for f in features.split(",") if f.strip()) if features is not None else None
    )
    if features is not None and not feature_names:
        raise typer.BadParameter("--features is empty")

    from ..commands.recalibrate import Options, cli_method, run
    from ..io.writers import atomic_write_text, write_table
    from ..recalibration.serialize import load_state, save_state

    settings = flags.settings()
    check_outputs([p for p in (file, apply, load) if p is not None], output, save)

    state = None
    if load is not None:
        state = load_state(_read_model(load), str(load))
        saved = cli_method(state)
        if method is not None and method.value != saved:
            raise UsageError(f"--method {method.value} does not match the saved recalibrator ({saved})")
        chosen = saved
    else:
        chosen = method.value  # type: ignore[union-attr]
    _check_method_flags(
        chosen,
        criterion=criterion,
        model=model,
        clusters=clusters,
        features=feature_names,
        seed=seed,
        quantiles=quantiles,
        equivalent_std=equivalent_std,
        levels=level_values,
        logits=logits,
        renormalize=renormalize,
    )
    options = Options(
        method=chosen,
        criterion=criterion.value if criterion else "ma_cal",
        model=model.value if model else "mlp",
        clusters=clusters if clusters is not None else 5,
        seed=seed if seed is not None else 0,
        features=feature_names,
        levels=level_values,
        quantiles=quantiles,
        equivalent_std=equivalent_std,
    )
    result = run(file, apply, options, settings, state=state, loaded_from=load)

    # everything is computed: only now write (the data first: it is the one that can still be refused,
    # e.g. list columns in a CSV; the model text is serialised before anything is written)
    from ..errors import naming

    with naming(file if file is not None else load):  # a state that cannot be saved comes from that data
        model_text = save_state(result.state) if save is not None else None
    if output is not None:
        write_table(output, result.table)
        result.summary["output"] = str(output)
    if save is not None:
        assert model_text is not None  # made above whenever --save is given
        atomic_write_text(save, model_text)
        result.summary["saved"] = str(save)
    _emit(result.summary, fmt)


def _check_modes(file, method, apply, output, save, load, criterion, model, clusters, seed) -> None:
    """Usage errors of the fit / apply / save / load combinations."""
    from ..errors import UsageError

    if file is None and load is None:
        raise UsageError("give a calibration FILE to fit (with --method), or --load a saved recalibrator")
    if file is not None and load is not None:
        raise UsageError("give either a calibration FILE to fit or --load a saved recalibrator, not both")
    if file is not None and method is None:
        raise UsageError(
            "--method is required when fitting: std-scaling, isotonic, conformal, accrue or temperature"
        )
    if apply is not None and output is None:
        raise UsageError("--apply needs --output/-o, the file to write the recalibrated predictions to")
    if output is not None and apply is None:
        raise UsageError(
            "--output needs --apply FILE, the file to recalibrate (it may be the calibration file)"
        )
    if save is not None and load is not None:
        raise UsageError("--save stores a fitted recalibrator; with --load nothing is fitted")
    if save is not None and output is not None and save.resolve() == output.resolve():
        raise UsageError("--save and --output must be different files")
    fit_flags = {"--criterion": criterion, "--model": model, "--clusters": clusters, "--seed": seed}
    if load is not None:
        given = [k for k, v in fit_flags.items() if v is not None]
        if given:
            raise UsageError(
                f"{', '.join(given)} configure a fit; with --load the saved recalibrator is applied as is"
            )


def _read_model(path: Path) -> str:
    from ..errors import InputError

    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: saved recalibrator does not exist") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the saved recalibrator ({exc})") from None


_ONLY = {
    "--criterion": ("std-scaling",),
    "--model": ("accrue",),
    "--clusters": ("accrue",),
    "--features": ("accrue",),
    "--seed": ("accrue",),
    "--quantiles": ("isotonic",),
    "--equivalent-std": ("isotonic",),
    "--levels": ("std-scaling", "isotonic", "conformal", "accrue"),
    "--logits": ("temperature",),
    "--renormalize": ("temperature",),
}


def _check_method_flags(method: str, **given: Any) -> None:
    from ..errors import UsageError

    for flag, methods in _ONLY.items():
        value = given[flag.lstrip("-").replace("-", "_")]
        if value not in (None, False) and method not in methods:
            raise UsageError(f"{flag} applies to --method {' or '.join(methods)}, not {method}")
    if given["clusters"] is not None and (given["model"] is None or given["model"].value != "kmeans"):
        raise UsageError("--clusters applies to --model kmeans")


# --------------------------------------------------------------------------- rendering


def _emit(summary: dict[str, Any], fmt: OutputFormat) -> None:
    note(*summary.get("notes", []))
    from ..io.writers import after_write

    for key, what in (("saved", "saved the recalibrator to"), ("output", "wrote")):
        if summary.get(key):  # printed once the file is written (a full disk fails at the end of the run)
            after_write(functools.partial(typer.echo, f"{what} {plain(summary[key])}", err=True))
    from ..report.recalibrate import rich_tables, to_markdown

    show(summary, fmt, lambda: to_markdown(summary), lambda: rich_tables(summary))
