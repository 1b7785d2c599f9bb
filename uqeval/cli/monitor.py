"""``uqeval monitor FILES --time COL --window 1D``: metrics per window and anytime-valid alarms."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .common import Output, ScoringFlags, check_outputs, engine_command, figure_option, scoring_options, show

if TYPE_CHECKING:
    from ..engine.options import EngineOptions


#: --time, --window, --origin and --state: how rows fall into windows and what a run resumes
WINDOWS_PANEL = "Windows"
#: "Tests": how alarms are raised
TESTS_PANEL = "Alarms"


FilesArg = Annotated[
    list[Path],
    typer.Argument(
        help="The predictions to monitor (a file, a directory of parts, a glob or a URI, read as --engine "
        "stream reads them); two of them (A B, same rows in the same order) also compare their scores.",
    ),
]
WindowOpt = Annotated[
    str,
    typer.Option(
        "--window",
        help="Window: a time span of the --time column (1D, 7D, 1h, 30min, 15s, 2W; half-open "
        "[start, end) aligned to --origin) or a number of rows (1000). Alarms are checked at every window's end.",
        rich_help_panel=WINDOWS_PANEL,
    ),
]
ByOpt = Annotated[
    str | None,
    typer.Option("--by", help="Also report every window's metrics per value of this column (e.g. a region)."),
]
OriginOpt = Annotated[
    str | None,
    typer.Option(
        "--origin",
        help="Start of the first window (ISO date or time; default 1970-01-01T00:00).",
        rich_help_panel=WINDOWS_PANEL,
    ),
]
AlphaOpt = Annotated[
    float,
    typer.Option(
        "--alpha",
        min=1e-12,
        max=0.999999,
        help="--test: family-wise false-alarm level of all tests together, valid however many windows are "
        "looked at (and the level of the A B confidence sequence).",
        rich_help_panel=TESTS_PANEL,
    ),
]
DetectOpt = Annotated[
    bool,
    typer.Option(
        "--detect/--test",
        help="--detect (default): change detectors (e-detectors, Shin, Ramdas & Rinaldo 2024) that alarm within "
        "days of a change however long the calibrated past, and estimate where it began; false alarms come on "
        "average no sooner than --arl windows. --test: anytime-valid tests of 'calibrated all along' at "
        "family-wise level --alpha, whose delay grows with the history.",
        rich_help_panel=TESTS_PANEL,
    ),
]
ArlOpt = Annotated[
    float,
    typer.Option(
        "--arl",
        min=1.000001,
        help="--detect: average run length to a false alarm of all detectors together, in windows (3650: ten "
        "years of daily windows).",
        rich_help_panel=TESTS_PANEL,
    ),
]
StateOpt = Annotated[
    Path | None,
    typer.Option(
        "--state",
        help="Resume from this state file if it exists (yesterday's windows and test sums), then save the "
        "new state there: give it today's rows only (rows or files it already counted are refused; see "
        "--skip-seen).",
        dir_okay=False,
        rich_help_panel=WINDOWS_PANEL,
    ),
]
SkipSeenOpt = Annotated[
    bool,
    typer.Option(
        "--skip-seen",
        help="With --state: leave out what the state already counted (rows at or before the latest time "
        "it counted, a row at exactly that time included; input files it read, known by size and "
        "content) and say how many, instead of refusing the run. Makes a retried run harmless.",
        rich_help_panel=WINDOWS_PANEL,
    ),
]
BoundOpt = Annotated[
    float | None,
    typer.Option(
        "--bound",
        min=0,
        help="A B: |score of A - score of B| <= BOUND on every row (the confidence sequence needs a bound; "
        "default: the score's own bound where it has one, e.g. 2 for the Brier score).",
    ),
]
AdversarialWindowsOpt = Annotated[
    bool,
    typer.Option(
        "--adversarial-windows",
        help="Also give every window its adversarial group calibration (seeded random-subset draws, ~7 ms "
        "a window); by default only the cumulative metrics have it.",
    ),
]
PlotOpt = Annotated[
    Path | None, figure_option("Draw the headline metrics per window with the alarms marked (PNG/SVG/PDF).")
]


@engine_command(
    scoring_options(  # --time worded for the monitor and shown under "Windows"
        wording={
            "time": "The monitor's time column (timestamps or ISO strings): each row goes to the --window of its "
            "time, whatever its position in the file."
        },
        panels={"time": WINDOWS_PANEL},
    )
)
def monitor(
    files: FilesArg,
    window: WindowOpt,
    by: ByOpt = None,
    origin: OriginOpt = None,
    detect: DetectOpt = True,
    arl: ArlOpt = 3650.0,
    alpha: AlphaOpt = 0.05,
    state: StateOpt = None,
    skip_seen: SkipSeenOpt = False,
    bound: BoundOpt = None,
    adversarial_windows: AdversarialWindowsOpt = False,
    plot: PlotOpt = None,
    *,
    out: Output,
    engine_options: EngineOptions,
    flags: ScoringFlags,
) -> None:
    """Monitor predictions over time: the metrics per window and cumulatively, with alarms when calibration changes.

    One line per test first (OK, or ALARM since a window with the change's estimated start), then the windows.
    Tests, checked at every window's end: coverage at each level (two-sided), PIT uniformity and mean PIT
    (Gaussians; ensembles, quantiles and intervals through their randomised PIT), and with two files the mean
    score difference. --detect (default) runs them as change detectors (false alarms on average no sooner than
    --arl windows); --test as anytime-valid tests (family-wise level --alpha). With --state the next run
    reads only the new rows; rows the state already counted are refused (or left out with --skip-seen).
    """
    from ..commands.monitor.core import monitor_file
    from ..errors import UsageError
    from ..io.uri import as_spec
    from ..io.writers import atomic_write_bytes, write_json
    from ..report.monitor import rich_tables, to_markdown

    if not 1 <= len(files) <= 2:
        raise UsageError(f"give one predictions input, or two (A B) to compare; got {len(files)}")
    if flags.reference is not None or flags.id is not None:
        raise UsageError(
            "--reference and --id (skill scores) are not monitored: score a window's rows with uqeval score"
        )
    engine = engine_options.streamed("monitor")
    settings = flags.settings(columns={"by": by})
    check_outputs(files, out.path, plot, state)
    from ..commands.monitor.windows import read_state
    from ..vocabulary import window_span

    specs = [as_spec(f) for f in files]
    with engine.progress(specs[:1]) as progress:
        doc, new_state = monitor_file(
            specs[0] if len(specs) == 1 else specs,
            settings,
            window=window_span(window),  # pandas' spellings too: D, 30T (uqeval.vocabulary)
            time=flags.time,
            origin=origin,
            alpha=alpha,
            engine=engine,
            state=read_state(state),
            state_source=None if state is None else str(state),
            progress=progress,
            bound=bound,
            adversarial_windows=adversarial_windows,
            skip_seen=skip_seen,
            detect=detect,
            arl=arl,
        )
    if out.verdict:  # the alarm sentence first (issue 39)
        from ..commands.verdict import with_verdict

        doc = with_verdict(doc)
    if plot is not None:
        from ..plots.common import write_figure
        from ..plots.monitor import plot_monitor

        if (figure := plot_monitor(doc)) is not None:
            write_figure(plot, figure)
    if out.path is not None:
        write_json(out.path, doc)
    if state is not None:  # last: the outputs are committed in this order, the state only after them
        atomic_write_bytes(state, new_state)
    from .common import note

    note(*doc.get("notes", []))
    show(doc, out.fmt, lambda: to_markdown(doc), lambda: rich_tables(doc))
