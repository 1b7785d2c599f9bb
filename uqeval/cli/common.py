"""Shared option bundles and the one place where UqevalError becomes an exit code."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

# the limits live with the settings (config.py imports nothing heavy)
from ..config import LIMITS
from ..engine.local import ENGINES
from ..errors import UqevalError
from ..names import cli_flags
from ..plots import PLOT_FORMATS

#: Help panels (typer's ``rich_help_panel``): ``uqeval COMMAND --help`` lists the options under these
#: headings (:class:`uqeval.cli.panels.PanelCommand`); an option without one is listed under "Options".
INPUT_PANEL = "Input columns"
METRICS_PANEL = "Metrics"
OUTPUT_PANEL = "Output"
PLOTS_PANEL = "Plots"
ENGINE_PANEL = "Engine"


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


#: the choices of an option whose members are only read by value: a ``str`` Enum made from their names
#: (mypy does not read a functional Enum's members from a comprehension, hence its ignore)
NanPolicy = Enum("NanPolicy", {k: k for k in ("raise", "omit")}, type=str)  # type: ignore[misc]


OrderBy = Enum("OrderBy", {"target": "target", "prediction": "prediction"}, type=str)


OrderByOpt = Annotated[
    OrderBy,
    typer.Option(
        "--order-by",
        help="Order of the intervals plot: by target or by prediction.",
        rich_help_panel=PLOTS_PANEL,
    ),
]


_KINDS = "gaussian point intervals quantiles samples categorical members dirichlet loglik multivariate"
Representation = Enum("Representation", {k: k for k in _KINDS.split()}, type=str)  # type: ignore[misc]


FormatOpt = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        "-f",
        help="Output: rich table, JSON only on stdout, or Markdown.",
        rich_help_panel=OUTPUT_PANEL,
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Also write the JSON summary here (atomically).",
        dir_okay=False,
        rich_help_panel=OUTPUT_PANEL,
    ),
]


def _option(name: str, kind: Any, *flags: str, default: Any = None, **info: Any) -> tuple[str, Any, Any]:
    """One row of an option table: (parameter, ``Annotated[kind, typer.Option(*flags, **info)]``, default);
    a switch (``kind`` bool) is off by default."""
    return name, Annotated[kind, typer.Option(*flags, **info)], False if kind is bool else default


def _options(panel: str | None, *rows: tuple[str, Any, Any]) -> list[tuple[str, Any, Any]]:
    """An option table: ``rows`` (:func:`_option`) in --help order, listed under ``panel``."""
    for _, annotation, _ in rows:
        annotation.__metadata__[0].rich_help_panel = panel
    return list(rows)


def figure_option(help: str, panel: str | None = PLOTS_PANEL) -> Any:
    """The ``typer.Option`` of a command's ``--plot FILE``: one figure, written atomically (PNG, SVG or PDF by
    the suffix), listed under ``panel`` in ``--help``."""
    return typer.Option("--plot", help=help, dir_okay=False, rich_help_panel=panel)


def figure_format(path: Path) -> str:
    """The image format of a ``--plot FILE`` by its suffix: png, svg or pdf, else a usage error."""
    from ..errors import UsageError

    fmt = path.suffix.lower().lstrip(".")
    if fmt not in PLOT_FORMATS:
        raise UsageError(f"--plot {path}: give a file name ending in .png, .svg or .pdf")
    return fmt


def permutations_option(flag: str, help: str) -> Any:
    """The ``typer.Option`` of a permutation count ``flag`` (0: no test), also spelled ``--n-permutations`` as
    the Python keyword is (:data:`uqeval.names.OPTIONS`)."""
    return typer.Option(flag, "--n-permutations", min=0, max=LIMITS["permutations"], help=help)


def parse_levels(text: str | None, flag: str = "--levels") -> tuple[float, ...] | None:
    """The comma-separated numbers ``text`` of ``flag``, or None when it is not given."""
    if text is None:
        return None
    try:
        vals = tuple(float(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise typer.BadParameter(f"{flag} takes comma-separated numbers, got {text!r}") from None
    if not vals:
        raise typer.BadParameter(f"{flag} is empty")
    return vals


def parse_pair(text: str | None, flag: str) -> tuple[float, float] | None:
    """The two comma-separated numbers a,b (a < b) ``text`` of ``flag``, or None when it is not given."""
    vals = parse_levels(text, flag)
    if vals is not None and len(vals) != 2:
        raise typer.BadParameter(f"{flag} takes two comma-separated numbers a,b; got {text!r}")
    if vals is not None and not vals[0] < vals[1]:
        raise typer.BadParameter(f"{flag} needs a < b; got {text!r}")
    return None if vals is None else (vals[0], vals[1])


def column_overrides(**roles: str | None) -> dict[str, str]:
    return {k: v for k, v in roles.items() if v}


@dataclass(frozen=True)
class ScoringFlags:
    """The column and metric-setting flags every scoring command shares (see :func:`scoring_options`)."""

    config: Path | None
    columns: dict[str, str]
    representation: str | None
    levels: tuple[float, ...] | None
    train: Path | None
    values: dict[str, Any]  # Settings fields given on the command line (None = not given)
    reference: str | None = None  # --reference (skill scores; not a Settings field: it names data)
    time: str | None = None  # --time (persistence)
    id: str | None = None  # --id: join a --reference FILE (and compare's files) on this column

    def reference_spec(self, joins_files: bool = False):
        """The :class:`uqeval.commands.compare.skill.Reference` of ``--reference``/``--train``/``--time``/``--id``, or None.

        ``joins_files``: the command itself joins its files on ``--id`` (compare), so ``--id`` without
        ``--reference`` is not an error.
        """
        if (
            self.reference is None
            and self.time is None
            and self.train is None
            and (self.id is None or joins_files)
        ):
            return None  # no skill scores (and no tasks.skill import)
        from ..commands.compare.skill import reference_spec

        return reference_spec(
            self.reference, self.train, self.time, None if joins_files and self.reference is None else self.id
        )

    def given(self) -> dict[str, Any]:
        """Settings fields set by flags, for commands that layer settings themselves."""
        out = {k: v for k, v in self.values.items() if v is not None}
        if self.representation is not None:
            out["representation"] = self.representation
        if self.levels is not None:
            out["levels"] = self.levels
        return out

    def settings(
        self,
        columns: dict[str, str | None] | None = None,
        baseline: tuple[Path, dict[str, Any]] | None = None,
        **extra: Any,
    ):
        """Settings: defaults <- the ``baseline`` summary's (a file and its document; check) <- --config <-
        these flags (<- ``extra``); ``--train`` sets ``y_std``."""
        from dataclasses import replace

        from ..config import make_settings
        from ..errors import naming

        values = {"representation": self.representation, "levels": self.levels, **self.values, **extra}
        with naming(baseline[0]) if baseline else contextlib.nullcontext():
            settings = make_settings(
                self.config,
                (baseline[1].get("settings") or {}) if baseline else None,
                columns={**self.columns, **column_overrides(**(columns or {}))},
                discover=True,  # the command line finds a config it was not given (UQEVAL_CONFIG, pyproject.toml)
                **values,
            )
        from ..io.dialect import set_csv_dialect

        set_csv_dialect(settings.sep, settings.decimal, process=True)  # the run's (handle_errors restores)
        if self.train is not None:
            from ..commands.score.core import train_std
            from ..errors import InputError

            try:
                settings = replace(settings, y_std=train_std(self.train, settings))
            except InputError:
                if self.reference != "climatology":  # a classifier's climatology: labels, no target std
                    raise
        return settings


#: The input options: every command that reads prediction files takes exactly these (the column
#: names, how the file is read, --seed and --config), listed under "Input columns" in its --help.
#: (parameter, annotation, default), in --help order.
INPUT_OPTIONS = _options(
    INPUT_PANEL,
    _option(
        "y",
        str | None,
        *cli_flags("y_true"),
        help="Target column (default: y, y_true or target, else truth or actual; label for classification).",
    ),
    _option(
        "mean",
        str | None,
        *cli_flags("mean"),
        help="Mean / point prediction column (default: mean, mu, y_pred or pred, else prediction, y_hat or yhat).",
    ),
    _option(
        "std",
        str | None,
        *cli_flags("std"),
        help="Standard deviation column (default: std, sigma or y_std, else stddev, sd or pred_std).",
    ),
    _option(
        "var",
        str | None,
        *cli_flags("var"),
        help="Variance column (default: var or variance); converted to std.",
    ),
    _option("lower", str | None, "--lower", help="Lower bound column (default: lower)."),
    _option("upper", str | None, "--upper", help="Upper bound column (default: upper)."),
    _option(
        "proba",
        str | None,
        *cli_flags("proba"),
        metavar="<cols>",
        help="Class probability columns: a comma list (p0,p1,p2) or a glob ('p*'; ordered by the number in "
        "the name), or one Parquet list column (default: p_<k>, prob_<k> or proba; logits: --logits).",
    ),
    _option(
        "weights",
        str | None,
        *cli_flags("weights"),
        metavar="COLUMN",
        help="Per-row weights (area, importance or survey weights; >= 0, not all 0): every metric that takes "
        "weights is computed from the weighted rows, the others are left out and listed (score, check, compare, ucc, coverage, monitor, report).",
    ),
    _option(
        "representation",
        Representation | None,
        "--representation",
        help="Force the representation when columns fit several.",
    ),
    _option(
        "level", float | None, "--level", help="Nominal level of a single lower/upper pair (default 0.95)."
    ),
    _option("fix_crossing", bool, "--fix-crossing", help="Sort crossing quantiles instead of failing."),
    _option(
        "logits",
        str | None,
        "--logits",
        metavar="<cols>",
        help="Class logit columns, named as --proba names probabilities (a comma list or a glob such as 'z*'); "
        "softmax turns them into probabilities (default: logit_<k>); for logits in p_<k> columns pass --logits 'p_*'.",
    ),
    _option("renormalize", bool, "--renormalize", help="Rescale probabilities that drift off the simplex."),
    _option(
        "nan_policy",
        NanPolicy | None,
        "--nan-policy",
        help="raise: NaN/inf is an error (default); omit: drop those rows.",
    ),
    _option(
        "sep",
        str | None,
        "--sep",
        metavar="CHAR",
        help="CSV field separator (default ','; ';' for files written with decimal commas).",
    ),
    _option(
        "decimal", str | None, "--decimal", metavar="CHAR", help="CSV decimal mark: '.' (default) or ','."
    ),
    # at most 2**63-1: Settings
    _option("seed", int | None, "--seed", min=0, help="Seed for randomised metrics (default 0)."),
    _option(
        "config",
        Path | None,
        "--config",
        help="TOML settings file (every key: uqeval config show default).",
        dir_okay=False,
    ),
)
#: The metric settings of the scoring commands (score, check, compare, plot, report), under "Metrics".
METRIC_OPTIONS = _options(
    METRICS_PANEL,
    _option(
        "levels",
        str | None,
        "--levels",
        help="Comma-separated coverage levels, e.g. 0.5,0.9,0.95 (default 0.95).",
    ),
    _option(
        "y_std",
        float | None,
        "--y-std",
        help="Std of the training targets: coverage widths are also given in this unit.",
    ),
    _option(
        "train",
        Path | None,
        "--train",
        help="Training file whose target std is the unit of width_norm.",
        dir_okay=False,
    ),
    _option(
        "num_bins",
        int | None,
        "--num-bins",
        min=2,
        max=LIMITS["num_bins"],
        help="Calibration curve bins (default 100).",
    ),
    _option(
        "resolution",
        int | None,
        "--resolution",
        min=2,
        max=LIMITS["resolution"],
        help="Levels for check/interval scores (default 99).",
    ),
    _option(
        "bins",
        int | None,
        *cli_flags("class_bins"),
        min=2,
        max=LIMITS["class_bins"],
        help="Classification calibration bins (default 15).",
    ),
    _option(
        "diagnostics",
        bool,
        "--diagnostics",
        help="Also compute the diagnostic groups (calibration tests, score decompositions, ...).",
    ),
    # forecast verification (issue 16 A): weighted_scoring, exceedance and murphy groups
    _option(
        "tw_threshold",
        str | None,
        "--tw-threshold",
        help="Weighted CRPS (twcrps, owcrps) on a region: 't' or '>t' above t, '<t' below t, "
        "'a:b' between a and b.",
    ),
    _option(
        "threshold",
        list[str] | None,
        *cli_flags("thresholds"),
        help="Exceedance threshold t: Brier score of P(Y > t); repeat or give a comma list.",
    ),
    _option(
        "murphy",
        bool,
        "--murphy",
        help="Murphy diagrams: elementary scores over a threshold grid (mean, quantile, probability).",
    ),
    # forecast verification (issue 16): skill against a reference forecast
    _option(
        "reference",
        str | None,
        "--reference",
        help="Skill scores (1 - S/S_ref) against a reference forecast: a predictions FILE over the same "
        "targets (same row order, or joined on --id), 'climatology' (the --train file's targets) or 'persistence' "
        "(the previous row's target in --time order).",
    ),
    _option(
        "time",
        str | None,
        "--time",
        help="Column of the rows' times: the windows of `monitor --window 1D`, the order of --reference persistence.",
    ),
    _option(
        "id",
        str | None,
        "--id",
        help="Join on this id column instead of requiring the same row order: a --reference FILE to the "
        "model (both files hold the column); in compare also the files to each other.",
    ),
)


def with_help(annotation: Any, text: str | None = None, panel: str | None = None) -> Any:
    """``annotation`` (an ``Annotated[T, typer.Option(...)]``) with another help text and/or panel:
    a command may word a shared option for itself; its name, type and limits stay the shared ones."""
    import copy

    info = copy.copy(annotation.__metadata__[0])
    if text is not None:
        info.help = text
    if panel is not None:
        info.rich_help_panel = panel
    return Annotated[annotation.__origin__, info]


def _flags(v: dict[str, Any]) -> ScoringFlags:
    """The :class:`ScoringFlags` of the shared options' values ``v`` (metric ones absent: not given)."""
    from ..errors import UsageError

    if v.get("train") is not None and v.get("y_std") is not None:
        raise UsageError("give either --y-std or --train, not both")
    if (v["logits"] or "").startswith("-"):  # the next option taken as --logits' value: it was a switch
        raise UsageError(
            f"--logits takes the logit columns (a comma list or a glob such as 'z*'), got {v['logits']!r}; "
            "it is no longer a switch: for logits in p_<k> columns pass --logits 'p_*'"
        )
    return ScoringFlags(
        config=v["config"],
        columns=column_overrides(
            y_true=v["y"],
            mean=v["mean"],
            std=v["std"],
            var=v["var"],
            lower=v["lower"],
            upper=v["upper"],
            logits=v["logits"],
            proba=v["proba"],
            weights=v["weights"],
        ),
        representation=v["representation"].value if v["representation"] else None,
        levels=parse_levels(v.get("levels")),
        train=v.get("train"),
        values=dict(
            level=v["level"],
            y_std=v.get("y_std"),
            num_bins=v.get("num_bins"),
            resolution=v.get("resolution"),
            class_bins=v.get("bins"),
            seed=v["seed"],
            nan_policy=v["nan_policy"].value if v["nan_policy"] else None,
            fix_crossing=v["fix_crossing"] or None,
            renormalize=v["renormalize"] or None,
            diagnostics=v.get("diagnostics") or None,
            tw_threshold=v.get("tw_threshold"),
            thresholds=v.get("threshold") or None,
            murphy=v.get("murphy") or None,
            sep=v["sep"],
            decimal=v["decimal"],
        ),
        reference=v.get("reference"),
        time=v.get("time"),
        id=v.get("id"),
    )


#: the arguments a decorator below fills with one value made of several options (left unevaluated
#: until then: their classes may live in modules the command line imports only when it runs); a command
#: declares them keyword-only where the options go in its --help: ``*, flags: ScoringFlags``
_BUNDLES = ("flags", "resampling", "engine_options", "out")


def _with_options(
    func: Callable[..., Any],
    specs: list[tuple[str, Any, Any]],
    run: Callable[[dict[str, Any], tuple[Any, ...], dict[str, Any]], Any],
    drop: str | None = None,
) -> Callable[..., Any]:
    """``func`` with the keyword-only options ``specs`` ((parameter, annotation, default), in --help order)
    in its signature, in place of its parameter ``drop`` (else after its own): the wrapper takes their
    values out of the call and returns ``run(values, args, kwargs)``, which calls ``func``. A command may
    not declare one of these options itself."""
    import inspect

    sig = inspect.signature(func)
    scope = inspect.unwrap(func).__globals__
    own = [
        p.replace(annotation=eval(p.annotation, scope))  # as inspect.signature(eval_str=True) does
        if isinstance(p.annotation, str) and p.name not in _BUNDLES
        else p
        for p in sig.parameters.values()
    ]
    at = next((i for i, p in enumerate(own) if p.name == drop), len(own))
    clash = {p.name for p in own} & {n for n, _, _ in specs}
    if clash:  # a shared option is declared once, here
        raise TypeError(f"{func.__name__} declares shared options itself: {sorted(clash)}")
    added = [
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a) for n, a, d in specs
    ]
    params = own[:at] + added + own[at + 1 :]

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return run({n: kwargs.pop(n, d) for n, _, d in specs}, args, kwargs)

    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


def _bundle(
    func: Callable[..., Any],
    name: str,
    specs: list[tuple[str, Any, Any]],
    pack: Callable[[dict[str, Any]], Any],
) -> Callable[..., Any]:
    """``func`` with the options ``specs`` (:func:`_with_options`), their values packed by ``pack`` into its
    keyword-only argument ``name`` (Typer has no option groups)."""
    return _with_options(
        func, specs, lambda values, args, kwargs: func(*args, **{name: pack(values)}, **kwargs), drop=name
    )


def input_options(
    func: Callable[..., Any] | None = None,
    *,
    metrics: tuple[str, ...] = (),
    wording: dict[str, str] | None = None,
    panels: dict[str, str] | None = None,
) -> Any:
    """Give a command the input options (:data:`INPUT_OPTIONS`) and only the metric settings named in
    ``metrics`` (parameters of :data:`METRIC_OPTIONS`) in its ``flags: ScoringFlags`` argument: commands
    that read predictions but take their own metric settings (coverage, ucc, recalibrate). ``wording``,
    ``panels``: parameter -> the command's own help text for it, its panel (:func:`with_help`)."""
    wording, panels = wording or {}, panels or {}
    specs = [
        (name, with_help(ann, wording.get(name), panels.get(name)), d)
        for name, ann, d in INPUT_OPTIONS + [s for s in METRIC_OPTIONS if s[0] in metrics]
    ]

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        return _bundle(f, "flags", specs, _flags)

    return decorate if func is None else decorate(func)


#: :func:`input_options` with every metric setting: the options of the scoring commands (score, check,
#: compare, monitor, plot, report), ``@scoring_options`` or ``@scoring_options(wording=..., panels=...)``
scoring_options = functools.partial(input_options, metrics=tuple(name for name, _, _ in METRIC_OPTIONS))


def fail(message: str, code: int) -> None:
    from ..text import plain

    typer.echo(f"error: {plain(message)}", err=True)
    raise typer.Exit(code)


def note(*texts: str) -> None:
    """One ``note:`` line on stderr for each of ``texts``, input-derived text made inert."""
    from ..text import note_line

    for text in texts:
        typer.echo(note_line(text), err=True)


def _expected_error(exc: BaseException) -> str | None:
    """One line for a failure that bad input or a bad output path can cause, else ``None`` (a bug).

    Readers and writers already name the file in their own errors; this catches what
    slips past them (pyarrow, gzip/zlib, decoding, nesting, rich markup) at the one edge.
    """
    import csv
    import zlib

    from ..io.writers import last_input

    where = last_input()
    if isinstance(exc, OSError):
        path = exc.filename or where or "output"
        return f"{path}: {exc.strerror or type(exc).__name__}{_first_line(exc, exc.strerror)}"
    import pyarrow as pa

    kinds: tuple[type[BaseException], ...] = (
        EOFError,
        zlib.error,
        UnicodeError,
        RecursionError,
        csv.Error,
        MemoryError,
        pa.ArrowException,
    )
    if "rich" in sys.modules:
        from rich.errors import MarkupError

        kinds += (MarkupError,)
    if isinstance(exc, kinds):
        known: dict[type[BaseException], str] = {
            RecursionError: "nested too deeply",
            MemoryError: "too large to process",
        }
        what = known.get(type(exc))
        text = what or f"{type(exc).__name__}{_first_line(exc)}"
        return f"{where}: cannot process input ({text})" if where else f"cannot process input ({text})"
    return None


def _first_line(exc: BaseException, skip: str | None = None) -> str:
    text = str(exc).strip()
    text = text.splitlines()[0] if text else ""
    if not text or text == skip:
        return ""
    return f": {text[:200]}"


@contextlib.contextmanager
def _sigterm_raises():
    """While a command runs, SIGTERM raises KeyboardInterrupt (so temporary files are cleaned up)."""
    import signal
    import threading

    from .interrupts import on_interrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    old = signal.signal(signal.SIGTERM, on_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """The CLI edge: one clean line on stderr and the documented exit code for every expected failure.

    :class:`UqevalError` -> its code (1 only for a failed check); OS errors, pyarrow, gzip/zlib,
    decoding, nesting-depth and rich markup errors -> 3. Outputs are staged and written together
    on success (and after a failed check's reports), never on failure; SIGINT/SIGTERM remove the
    temporary files and exit 130 with the one line ``interrupted``. Python warnings never reach stderr
    raw: numerical (RuntimeWarning) and drawing (UserWarning) ones become one ``note:`` line, library
    deprecations are dropped.

    Child processes the command started (the figure workers) are ended before its outputs are
    written (:func:`uqeval._children.stop_children`), so an interrupt while they end is an
    interrupted run, and none is left to join at interpreter exit. Once the outputs are written, or
    a failure is being reported, the outcome is settled (:mod:`uqeval.cli.interrupts`).
    """
    if getattr(func, "_uqeval_edge", False):
        return func

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import warnings

        from .. import _children
        from ..errors import GateFailure, front_end
        from ..io.writers import output_batch
        from . import interrupts

        interrupts.start()
        from ..io.dialect import reading_csv

        # messages spell options as flags for the whole run (its threads and worker processes too)
        with (
            front_end("cli", process=True),
            reading_csv(process=True),  # the CSV dialect of the run (--sep, --decimal), restored after it
            _document_to_file_only(kwargs),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            try:
                with _sigterm_raises(), output_batch(commit_on=(GateFailure,)), _csv_lines_in_errors():
                    try:
                        result = func(*args, **kwargs)
                    except BaseException:
                        _children.stop_children(raise_errors=False)
                        raise
                    _children.stop_children()
                    interrupts.check()  # one a destructor swallowed: raised before the outputs are written
                interrupts.settle()
            except UqevalError as exc:
                if interrupts.caused(exc):
                    _interrupted()
                interrupts.settle()
                _warnings_note(caught, exc.exit_code)
                # its message and the flag that fixes it (the CLI's voice); newlines from input are shown
                # escaped by fail(), not cut
                fail(str(exc) or type(exc).__name__, exc.exit_code)
            except KeyboardInterrupt:
                _interrupted()
            except click_exceptions():  # typer.Exit, typer.Abort and click's usage errors
                interrupts.settle()
                raise
            except Exception as exc:
                if interrupts.caused(exc):  # e.g. an import the interrupt broke: ImportError from it
                    _interrupted()
                interrupts.settle()
                message = _expected_error(exc)
                if message is None:
                    raise
                fail(message, 3)
            _warnings_note(caught, 0)
            return result

    wrapper._uqeval_edge = True  # type: ignore[attr-defined]
    return wrapper


def _interrupted() -> NoReturn:
    """An interrupted run: settled, its temporary files discarded, its children ended, ``interrupted`` said,
    exit 130 (the modules below were imported by the command's wrapper already)."""
    from .. import _children
    from ..io.writers import discard_temps
    from . import interrupts

    interrupts.settle()
    discard_temps()
    _children.stop_children(raise_errors=False)  # one whose stop was interrupted
    interrupts.report()
    raise typer.Exit(130) from None


@contextlib.contextmanager
def _csv_lines_in_errors():
    """An error's rows of a CSV input get the line an editor shows (:func:`uqeval.io.readers.with_csv_lines`),
    looked up while the run's inputs are still known."""
    try:
        yield
    except UqevalError as exc:
        from ..io.readers import with_csv_lines
        from ..io.writers import inputs_read

        text = with_csv_lines(exc.message, inputs_read())
        if text == exc.message:
            raise
        raise type(exc)(text, fix=exc.fix) from None


@contextlib.contextmanager
def _document_to_file_only(options: dict[str, Any]):
    """While a command run with ``-q`` and ``-o FILE`` runs, :func:`show` prints nothing (``-o -`` is stdout)."""
    token = _DOCUMENT_TO_FILE_ONLY.set(
        bool(options.get("quiet")) and str(options.get("output") or "-") != "-"
    )
    try:
        yield
    finally:
        _DOCUMENT_TO_FILE_ONLY.reset(token)


def _warnings_note(caught: list, code: int) -> None:
    """Python warnings raised during a command (numpy overflow, matplotlib glyphs) as one note line."""
    caught = [w for w in caught if issubclass(w.category, (RuntimeWarning, UserWarning))]
    if not caught or code not in (0, 1):
        return
    kinds = sorted({(str(w.message).splitlines() or [w.category.__name__])[0][:80] for w in caught})
    more = f" and {len(kinds) - 3} more" if len(kinds) > 3 else ""
    note(
        f"{len(caught)} numerical or drawing warning(s) while computing ({'; '.join(kinds[:3])}{more}); "
        "values that could not be computed finitely are reported as null (n/a)"
    )


def click_exceptions() -> tuple[type[BaseException], ...]:
    """Typer's usage and exit exceptions (it vendors click from 0.2x on, so they are found through typer's
    public classes, never by importing click)."""
    usage = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")
    return (usage, typer.Exit, typer.Abort)


def emit(summary: dict, fmt: OutputFormat, output: Path | None) -> None:
    """Write the JSON file (if asked) and render the summary on stdout."""
    from ..io.writers import write_json

    if output is not None and str(output).lower().endswith(
        (".nc", ".nc4", ".zarr")
    ):  # per kept cell (issue 41)
        from ..io.labelled import write_metrics

        write_metrics(output, summary)
    elif output is not None:
        write_json(output, summary)
    note(*summary.get("notes", []))
    table = None
    if fmt is OutputFormat.table:  # the renderers (and rich) load only for the output asked for
        from ..report.tables import rich_table

        table = rich_table(summary)

    def markdown() -> str:
        from ..report.tables import markdown

        return markdown(summary)

    def parts() -> list:
        from ..report.verdict import rich_verdict

        return [p for p in (rich_verdict(summary), table) if p is not None]

    show(summary, fmt, markdown, parts, console(fit=table) if table else None)


def console(min_width: int = 0, fit=None):
    """A rich Console; when stdout is not a terminal (CI logs, pipes), at least ``min_width``
    columns wide and wide enough that the table ``fit`` is not cropped."""
    from rich.console import Console

    out = Console()
    if not out.is_terminal:
        width = min_width
        if fit is not None:
            width = max(width, fit.__rich_measure__(out, out.options.update_width(10_000)).maximum)
        out = Console(width=max(out.width, width))
    return out


#: set by :func:`handle_errors` for a command run with ``-q`` and ``-o FILE``: :func:`show` prints nothing
_DOCUMENT_TO_FILE_ONLY: ContextVar[bool] = ContextVar("uqeval_document_to_file_only", default=False)


def show(
    document: dict, fmt: OutputFormat, markdown: Callable[[], str], rich: Callable[[], list], out=None
) -> None:
    """Write a command's result on stdout: its JSON ``document``, the ``markdown()`` text, or the
    ``rich()`` renderables printed on the console ``out`` (default: :func:`console`). Nothing when an
    output of the command goes to stdout (``-o -``): stdout then holds that output alone; nothing with
    ``-q`` and ``-o FILE``: the document is in the file."""
    from ..io.writers import stdout_taken

    if stdout_taken() or _DOCUMENT_TO_FILE_ONLY.get():
        return
    if fmt is OutputFormat.json:
        from ..io.writers import dumps_json

        sys.stdout.write(dumps_json(document))
    elif fmt is OutputFormat.markdown:
        sys.stdout.write(markdown())
    else:
        out = out or console()
        for part in rich():
            out.print(part)


# --------------------------------------------------------------------------- output
#: issue 39: the verdict (first lines of the table and Markdown, the JSON's "verdict") is shown unless this is given
NoVerdictOpt = Annotated[
    bool,
    typer.Option(
        "--no-verdict",
        help="Leave out the verdict (calibrated / overconfident / ..., better / not distinguishable, with its "
        "rule and evidence) from every output, the JSON's verdict block included.",
        rich_help_panel=OUTPUT_PANEL,
    ),
]


@dataclass(frozen=True)
class Output:
    """What a command shows and writes (:func:`engine_command`): ``--format``, ``--output`` and, where the
    command gives a verdict, ``--no-verdict``."""

    fmt: OutputFormat = OutputFormat.table
    path: Path | None = None
    verdict: bool = True


def check_outputs(inputs: list[Any], *paths: Path | None) -> None:
    """Fail before any work when one of the output ``paths`` given cannot be written or would overwrite one of
    the ``inputs`` (:func:`uqeval.io.writers.check_output_path`)."""
    from ..io.writers import check_output_path

    for path in paths:
        if path is not None:
            check_output_path(path, inputs)


# --------------------------------------------------------------------------- engines (issue 14): streaming and Dask
#: the --engine choices (:data:`uqeval.engine.local.ENGINES`)
Engine = Enum("Engine", {k: k for k in ENGINES}, type=str)  # type: ignore[misc]  # members known at run time only


QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="No progress bar on stderr (it is shown only on a terminal anyway); with --output FILE, nothing "
        "on standard output either: the document is written to the file only. Notes and errors still go "
        "to stderr.",
        rich_help_panel=ENGINE_PANEL,
    ),
]
#: the engine options (:func:`engine_command`), in --help order
ENGINE_OPTIONS = _options(
    ENGINE_PANEL,
    _option(
        "engine",
        Engine,
        "--engine",
        default=Engine("auto"),
        help="memory: read the file at once; stream: record batches with bounded memory (files, Parquet "
        "directories incl. hive partitions, globs, and - : standard input, spooled to a temporary file "
        "first); dask: partial states on a Dask cluster (not -); auto: stream above 1 GiB on disk or for "
        "a directory/glob, else memory.",
    ),
    _option(
        "chunk_rows",
        int | None,
        "--chunk-rows",
        min=1,
        help="Rows per record batch when streaming (default: about 4 million numbers per batch, at most 1,000,000 rows).",
    ),
    _option(
        "scheduler",
        str | None,
        "--scheduler",
        help="--engine dask: address of an existing Dask scheduler (tcp://host:8786).",
    ),
    _option(
        "workers",
        int | None,
        "--workers",
        min=1,
        max=256,
        help="--engine dask: start a local cluster with this many worker processes.",
    ),
    ("quiet", QuietOpt, False),
)
#: --connect-timeout (:func:`remote_options`)
REMOTE_OPTIONS = _options(
    ENGINE_PANEL,
    _option(
        "connect_timeout",
        float | None,
        "--connect-timeout",
        min=0.1,
        max=3600,
        metavar="SECONDS",
        help="Remote inputs (s3://, gs://, ...) and --scheduler: seconds one connection attempt or request "
        "may wait for an answer (default 20); a request is tried at most 3 times, then the run stops "
        "with one error line.",
    ),
)


def remote_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command ``--connect-timeout SECONDS``, applied to every remote open and scheduler connect
    while it runs (:mod:`uqeval.io.remote`, imported only when the option is given)."""

    def run(values: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if values["connect_timeout"] is None:
            return func(*args, **kwargs)
        from ..io.remote import connect_timeout

        with connect_timeout(values["connect_timeout"]):
            return func(*args, **kwargs)

    return _with_options(func, REMOTE_OPTIONS, run)


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def engine_command(
    inputs: Decorator = scoring_options,
    *extra: Decorator,
    dask: bool = True,
    output: Any = OutputOpt,
    verdict: bool = True,
) -> Decorator:
    """The options and the edge of a command that reads predictions on an engine, in their --help order:
    ``--format``, ``--output`` (``output``: the command's own wording of it) and, with ``verdict``,
    ``--no-verdict``, in its argument ``out: Output`` (:class:`Output`); ``--engine``, ``--chunk-rows``,
    ``--scheduler``, ``--workers`` and ``--quiet`` (without ``dask``: no ``--scheduler``/``--workers``, a
    local Dask cluster is the only one) in its ``engine_options: EngineOptions`` argument
    (:class:`uqeval.engine.options.EngineOptions`); ``flags`` (``inputs``: :func:`scoring_options`, or the
    command's :func:`input_options`), the ``extra`` bundles (:func:`resampling_options`,
    :func:`grid_options`), ``--connect-timeout`` (:func:`remote_options`); then :func:`handle_errors`."""
    outputs: list[tuple[str, Any, Any]] = [("fmt", FormatOpt, OutputFormat.table), ("output", output, None)]
    outputs += [("no_verdict", NoVerdictOpt, False)] if verdict else []
    engines = [s for s in ENGINE_OPTIONS if dask or s[0] not in ("scheduler", "workers")]

    def engine(v: dict[str, Any]) -> Any:
        from ..engine.options import EngineOptions

        return EngineOptions(
            v["engine"].value, v["chunk_rows"], v.get("scheduler"), v.get("workers"), v["quiet"]
        )

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        func = _bundle(func, "out", outputs, lambda v: Output(v["fmt"], v["output"], not v.get("no_verdict")))
        func = _bundle(func, "engine_options", engines, engine)
        for outer in (inputs, *extra, remote_options, handle_errors):
            func = outer(func)
        return func

    return decorate


# --------------------------------------------------------------------------- gridded inputs (issue 41)
GRID_PANEL = "Gridded inputs (NetCDF, Zarr)"
#: the options of a labelled input (:mod:`uqeval.io.labelled`)
GRID_OPTIONS = _options(
    GRID_PANEL,
    _option(
        "obs",
        Path | None,
        "--obs",
        metavar="FILE",
        help="NetCDF/Zarr file of the observations, aligned with the forecast file by coordinates "
        "(inner join; a note says what was dropped).",
    ),
    _option(
        "member_dim",
        str | None,
        "--member-dim",
        metavar="DIM",
        help="Ensemble member dimension (default: member, ensemble, realization or number).",
    ),
    _option(
        "quantile_dim",
        str | None,
        "--quantile-dim",
        metavar="DIM",
        help="Quantile dimension, its coordinate the levels (default: quantile).",
    ),
    _option(
        "preserve_dims",
        str | None,
        "--preserve-dims",
        metavar="DIMS",
        help="Every metric per coordinate of these dimensions (e.g. lat,lon); -o metrics.nc writes them.",
    ),
    _option(
        "reduce_dims",
        str | None,
        "--reduce-dims",
        metavar="DIMS",
        help="Reduce over these dimensions, keep the others (the complement of --preserve-dims).",
    ),
)


def grid_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command with a ``file`` argument and ``--by`` the options of NetCDF/Zarr inputs
    (:data:`GRID_OPTIONS`), applied while it runs (:func:`uqeval.io.labelled.grid_options`):
    ``--preserve-dims``/``--reduce-dims`` become ``--by`` on the key of the kept coordinates and
    ``--weights lat`` the cos(lat) column. Nothing is imported for a CSV or Parquet file."""

    def run(given: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        from ..io.readers import is_labelled

        file = kwargs.get("file", args[0] if args else None)
        if file is None or not is_labelled(file):
            if any(v is not None for v in given.values()):
                from ..errors import UsageError

                flag = "--" + next(n for n, v in given.items() if v is not None).replace("_", "-")
                raise UsageError(f"{flag} applies to NetCDF (.nc) and Zarr (.zarr) inputs, not {file}")
            return func(*args, **kwargs)
        from ..io import labelled

        opts = labelled.GridOptions(
            obs=str(given["obs"]) if given["obs"] is not None else None,
            member_dim=given["member_dim"],
            quantile_dim=given["quantile_dim"],
            preserve_dims=labelled.parse_dims(given["preserve_dims"]),
            reduce_dims=labelled.parse_dims(given["reduce_dims"]),
            weights=kwargs.get("weights"),
        )
        with labelled.grid_options(opts):
            kwargs["weights"] = labelled.weights_column(kwargs.get("weights"))
            if labelled.kept_dims(file):
                if kwargs.get("by") is not None:
                    from ..errors import UsageError

                    raise UsageError("give --by or --preserve-dims/--reduce-dims, not both")
                kwargs["by"] = labelled.CELL
            note(*labelled.notes_of(file))
            return func(*args, **kwargs)

    return _with_options(func, GRID_OPTIONS, run)


# --------------------------------------------------------------------------- dependent rows (issue 25)
#: --cluster and --block-size (:func:`resampling_options`), listed with the command's own options
RESAMPLING_OPTIONS = _options(
    None,
    _option(
        "cluster",
        str | None,
        "--cluster",
        metavar="COLUMN",
        help="Rows with the same value in this column of the (first) file are related (a location, a patient, "
        "a day): the bootstrap resamples and the permutation test flips whole clusters.",
    ),
    _option(
        "block_size",
        str | None,
        "--block-size",
        metavar="N|auto",
        help="Rows in time order: the bootstrap resamples and the permutation test flips consecutive blocks "
        "of N rows (auto: Politis-White's choice from the per-row scores). Default: independent rows.",
    ),
)


def resampling_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command that reports bootstrap intervals ``--cluster COLUMN`` and ``--block-size N|auto``,
    parsed into its ``resampling`` argument (:class:`uqeval.resample.Resampling`; at most one of them)."""

    def pack(v: dict[str, Any]) -> Any:
        from ..errors import UsageError
        from ..resample import Resampling

        try:
            return Resampling.parse(v["cluster"], v["block_size"])
        except UsageError as exc:  # a bad value of these options: click's usage error, as typer gives one
            raise typer.BadParameter(str(exc)) from None

    return _bundle(func, "resampling", RESAMPLING_OPTIONS, pack)
