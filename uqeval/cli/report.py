"""``uqeval report FILE [FILE ...] --output report.html``: one self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..report.text import plain
from .common import (
    QuietOpt,
    ScoringFlags,
    handle_errors,
    scoring_options,
)
from .plot import DpiOpt, MaxPointsOpt, PlotFormat, XOpt


def entry_names(files: list[Path]) -> list[str]:
    """File names as given by their base name; the full path where base names repeat."""
    base = [f.name for f in files]
    return [b if base.count(b) == 1 else str(f) for b, f in zip(base, files)]


def build_entry(
    file: Path, name: str, settings, *, x: str | None, max_points: int, fmt: str, dpi: int, reference=None
) -> tuple[dict[str, Any], list[str]]:
    """Score ``file``, draw its figures and compute its UCC: one report entry and its notes."""
    from ..io.load import load_predictions
    from ..tasks.plot import KIND_TITLES, build_figures, encode_figures
    from ..tasks.score import score_loaded
    from .plot import load_x

    loaded = load_predictions(file, settings, extra=[x] if x else ())  # read once: scored, then drawn
    summary = score_loaded(loaded, settings, reference)
    xs, x_label = load_x(x, loaded)
    bundle = build_figures(
        loaded.prediction,
        summary.get("metrics"),
        settings,
        name=name,
        x=xs,
        x_label=x_label,
        max_points=max_points,
        info=loaded.info,
    )
    images = encode_figures(bundle.figures, fmt, dpi, notes=bundle.notes)
    entry: dict[str, Any] = {
        "name": name,
        "summary": summary,
        "figures": [(f"{KIND_TITLES[k]} — {name}", data) for k, data in images.items()],
    }
    if bundle.ucc is not None:
        entry["ucc"] = bundle.ucc
    notes = [f"{name}: {n}" for n in summary.get("notes", []) + bundle.notes]
    return entry, notes


@handle_errors
@scoring_options
def report(
    files: Annotated[
        list[Path],
        typer.Argument(help="One or more CSV or Parquet prediction files, scored with the same settings."),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="HTML file to write (atomically).", dir_okay=False)
    ],
    title: Annotated[str, typer.Option("--title", help="Report title.")] = "uqeval report",
    x: XOpt = None,
    max_points: MaxPointsOpt = None,
    plot_format: Annotated[
        PlotFormat | None,
        typer.Option("--plot-format", help="Embedded image format: png (default) or svg."),
    ] = None,
    dpi: DpiOpt = 150,
    by: Annotated[
        str | None, typer.Option("--by", help="Also report every metric per value of this column.")
    ] = None,
    quiet: QuietOpt = False,
    flags: ScoringFlags = None,  # type: ignore[assignment]  # filled by @scoring_options
) -> None:
    """Write one self-contained HTML report of one or more prediction files.

    Every file is scored with the same settings (as `uqeval score`); the report holds
    the inputs and settings, every metric table with its orientation (files side by
    side), the metrics per --by value, all plots that apply (images embedded), the UCC
    where the predictions give intervals, and a glossary of the metrics shown. No
    scripts, no network access: open it in any browser.
    """
    from ..errors import UsageError
    from ..io.writers import after_write, atomic_write_text, check_output_path
    from ..report.html import render_report
    from .plot import check_max_points

    if not files:
        raise UsageError("report needs at least one prediction file")
    fmt = plot_format.value if plot_format is not None else "png"
    if fmt == "pdf":
        raise UsageError("--plot-format pdf cannot be embedded in HTML; use png or svg")
    n_points = check_max_points(max_points)
    settings = flags.settings(columns={"by": by})
    reference = flags.reference_spec()
    check_output_path(output, files)
    from ..io.readers import inspect

    for f in files:  # fail before any work on a missing or unreadable file (or --x column)
        table = inspect(f)
        if x is not None:
            from ..tasks.plot import find_x_column

            find_x_column(table, x)
    from .. import plots
    from ..stream.progress import stage, work_progress
    from ..tasks.plot import render_workers

    render_workers(plots.RENDER_PROCESSES)  # their start-up overlaps reading and scoring
    entries, notes = [], []
    with work_progress(quiet):  # a terminal shows which file is being scored and drawn
        for i, (f, name) in enumerate(zip(files, entry_names(files))):
            stage(f"report: {name} ({i + 1} of {len(files)})")
            entry, entry_notes = build_entry(
                f, name, settings, x=x, max_points=n_points, fmt=fmt, dpi=dpi, reference=reference
            )
            entries.append(entry)
            notes += entry_notes
        stage("report: writing HTML")
        html = render_report(entries, title=title)
    atomic_write_text(output, html)
    for note in notes:
        typer.echo(f"note: {plain(note)}", err=True)
    n_fig = sum(len(e["figures"]) for e in entries)
    after_write(  # only once the file is written (a full disk fails at the end of the run)
        lambda: typer.echo(f"wrote {plain(output)} ({len(entries)} file(s), {n_fig} figure(s))", err=True)
    )
