"""``uqeval report FILE [FILE ...] --output report.html``: one self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..text import plain
from .common import (
    NoVerdictOpt,
    QuietOpt,
    ScoringFlags,
    handle_errors,
    note,
    scoring_options,
)
from .plot import DpiOpt, MaxPointsOpt, PlotFormat, XOpt


def entry_names(files: list[Path]) -> list[str]:
    """File names as given by their base name; the full path where base names repeat."""
    base = [f.name for f in files]
    return [b if base.count(b) == 1 else str(f) for b, f in zip(base, files)]


def build_entry(
    file: Path,
    name: str,
    settings,
    *,
    x: str | None,
    max_points: int,
    fmt: str,
    dpi: int,
    reference=None,
    overlays=None,
    models: list | None = None,
    models_weights: list | None = None,
    verdict: bool = True,
) -> tuple[dict[str, Any], list[str]]:
    """Score ``file``, draw its figures and compute its UCC: one report entry and its notes.

    With ``overlays`` (:class:`uqeval.plots.overlay.Overlays`) the kinds that overlay several models are drawn
    there (the report's key figures) instead of in the file's own figures; with ``models`` (a list) the
    prediction is kept there as a :class:`uqeval.commands.compare.core.Model` for ``--compare`` (and, with
    ``--weights``, its weights appended to ``models_weights``).

    With ``--weights`` the metric tables are weighted (``score``'s machinery); the figures take no weights:
    they are drawn from the unweighted rows and every caption says so, and the UCC numbers are left out
    (``uqeval ucc --weights`` gives the weighted UCC), each with a note."""
    from ..commands.score.stream import score_with_engine
    from ..engine.options import EngineOptions
    from ..plots.kinds import KIND_TITLES, PLOT_KINDS, applicable_kinds, build_figures, encode_figures
    from .plot import load_x

    # read once: scored, then drawn
    scored = score_with_engine(file, settings, EngineOptions("memory"), None, reference, [x] if x else ())
    loaded = scored.loaded
    assert loaded is not None  # read in memory
    summary = scored.judged() if verdict else scored.summary  # issue 39: judged on the rows in memory
    metrics = summary.get("metrics")
    weighted = loaded.weights is not None
    if models is not None:
        from ..commands.compare.core import Model

        models.append(Model(name, loaded.prediction, loaded.info))
        if models_weights is not None:
            models_weights.append(loaded.weights)
    xs, x_label = load_x(x, loaded)
    kinds, ucc, figures, notes = None, None, {}, []
    if overlays is not None:
        from ..plots.overlay import overlay_kinds

        over = overlay_kinds(loaded.prediction, settings, metrics)
        _, alone = overlays.add(loaded.prediction, metrics, settings, name, loaded.info, kinds=over)
        kinds = [k for k in applicable_kinds(loaded.prediction, settings, metrics) if k not in over]
        ucc, figures, notes = alone.ucc, alone.figures, alone.notes
    bundle = build_figures(
        loaded.prediction,
        metrics,
        settings,
        name=name,
        kinds=kinds,
        x=xs,
        x_label=x_label,
        max_points=max_points,
        info=loaded.info,
    )
    merged = {**bundle.figures, **figures}
    figures = {k: merged[k] for k in PLOT_KINDS if k in merged}
    notes = bundle.notes + notes
    images = encode_figures(figures, fmt, dpi, notes=notes)
    tag = UNWEIGHTED if weighted else ""
    entry: dict[str, Any] = {
        "name": name,
        "summary": summary,
        "figures": [(f"{KIND_TITLES[k]} — {name}{tag}", data) for k, data in images.items()],
    }
    ucc = bundle.ucc if ucc is None else ucc
    if weighted:
        notes.append(
            "--weights: the metric tables are weighted; the figures take no weights and are drawn from the "
            "unweighted rows (each caption says so)"
            + ("; the UCC numbers are left out (uqeval ucc --weights gives the weighted UCC)" if ucc else "")
        )
    elif ucc is not None:
        entry["ucc"] = ucc
    return entry, [f"{name}: {n}" for n in summary.get("notes", []) + notes]


#: the caption suffix of a figure of a weighted report (figures take no weights)
UNWEIGHTED = " (unweighted: figures take no weights)"


def key_figures(
    overlays, fmt: str, dpi: int, notes: list[str], weighted: bool = False
) -> list[dict[str, Any]]:
    """The encoded overlays of :class:`uqeval.plots.overlay.Overlays`: ``{"title", "models", "image"}`` each
    (``weighted``: the titles say the figures are unweighted)."""
    from ..plots.kinds import encode_figures

    drawn = overlays.figures()
    left_out: list[str] = []
    images = encode_figures({k: fig for k, (fig, _, _) in drawn.items()}, fmt, dpi, notes=left_out)
    notes += [f"key figures: {n}" for n in left_out]
    tag = UNWEIGHTED if weighted else ""
    return [{"title": drawn[k][2] + tag, "models": drawn[k][1], "image": data} for k, data in images.items()]


def read_monitor(path: Path) -> dict[str, Any]:
    """The ``uqeval.monitor/1`` document in ``path`` (``--monitor``), or a one-line InputError."""
    import json

    from ..errors import InputError

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(
            f"--monitor {plain(str(path))}: cannot read it as JSON ({type(exc).__name__}); give the file "
            "`uqeval monitor -o` wrote"
        ) from None
    if not isinstance(doc, dict) or doc.get("schema") != "uqeval.monitor/1":
        raise InputError(
            f"--monitor {plain(str(path))}: not a uqeval.monitor/1 document; give the file `uqeval monitor -o` wrote"
        )
    for key in ("windows", "cumulative", "tests", "alpha", "input"):
        if key not in doc:
            raise InputError(f"--monitor {plain(str(path))}: the monitor document has no '{key}'")
    return doc


FilesArg = Annotated[
    list[Path],
    typer.Argument(help="One or more CSV or Parquet prediction files, scored with the same settings."),
]
OutputOpt = Annotated[
    Path, typer.Option("--output", "-o", help="HTML file to write (atomically).", dir_okay=False)
]
TitleOpt = Annotated[str, typer.Option("--title", help="Report title.")]
PlotFormatOpt = Annotated[
    PlotFormat | None,
    typer.Option("--plot-format", help="Embedded image format: png (default) or svg."),
]
ByOpt = Annotated[str | None, typer.Option("--by", help="Also report every metric per value of this column.")]
CompareOpt = Annotated[
    bool,
    typer.Option(
        "--compare",
        help="Also compare the files as `uqeval compare` does (same targets in the same order; every "
        "prediction is kept in memory) and show its paired tests in the summary.",
    ),
]
MonitorOpt = Annotated[
    Path | None,
    typer.Option(
        "--monitor",
        help="Also show a monitor document (the JSON of `uqeval monitor -o`) after the summary: its "
        "headline metrics per window, its tests and alarms, and its plot.",
        dir_okay=False,
    ),
]


@handle_errors
@scoring_options
def report(
    files: FilesArg,
    output: OutputOpt,
    title: TitleOpt = "uqeval report",
    x: XOpt = None,
    max_points: MaxPointsOpt = None,
    plot_format: PlotFormatOpt = None,
    dpi: DpiOpt = 150,
    by: ByOpt = None,
    compare: CompareOpt = False,
    monitor: MonitorOpt = None,
    quiet: QuietOpt = False,
    no_verdict: NoVerdictOpt = False,
    *,
    flags: ScoringFlags,
) -> None:
    """Write one self-contained HTML report of one or more prediction files.

    Every file is scored with the same settings (as `uqeval score`). The report leads
    with a summary: one scoreboard row per file with the headline metrics of its
    representation, the best value of each marked. Then the key figures with every file
    overlaid (calibration, reliability, PIT, UCC, spread-skill, ...), then the per-file
    detail: every metric table with its orientation (files side by side), the metrics
    per --by value, each file's other plots, the UCC numbers; inputs and settings folded
    away, and a glossary of the metrics shown. Images are embedded; no scripts, no
    network access: open it in any browser.
    """
    from ..errors import UsageError
    from ..io.writers import after_write, atomic_write_text, check_output_path
    from ..report.html import render_report
    from .plot import check_max_points

    if not files:
        raise UsageError("report needs at least one prediction file")
    if compare and len(files) < 2:
        raise UsageError(f"--compare needs at least two prediction files, got {len(files)}")
    fmt = plot_format.value if plot_format is not None else "png"
    if fmt == "pdf":
        raise UsageError("--plot-format pdf cannot be embedded in HTML; use png or svg")
    n_points = check_max_points(max_points)
    settings = flags.settings(columns={"by": by})
    reference = flags.reference_spec()
    check_output_path(output, files)
    monitor_doc = read_monitor(monitor) if monitor is not None else None
    from ..io.readers import inspect

    for f in files:  # fail before any work on a missing or unreadable file (or --x column)
        table = inspect(f)
        if x is not None:
            from ..plots.kinds import find_x_column

            find_x_column(table, x)
    from .. import plots
    from ..engine.progress import stage, work_progress
    from ..plots.kinds import render_workers
    from ..plots.overlay import Overlays

    render_workers(plots.RENDER_PROCESSES)  # their start-up overlaps reading and scoring
    entries, notes, overlays = [], [], Overlays()
    models: list | None = [] if compare else None
    weighted = bool(settings.columns.get("weights"))
    models_weights: list | None = [] if compare and weighted else None
    with work_progress(quiet):  # a terminal shows which file is being scored and drawn
        for i, (f, name) in enumerate(zip(files, entry_names(files))):
            stage(f"report: {name} ({i + 1} of {len(files)})")
            entry, entry_notes = build_entry(
                f,
                name,
                settings,
                x=x,
                max_points=n_points,
                fmt=fmt,
                dpi=dpi,
                reference=reference,
                overlays=overlays,
                models=models,
                models_weights=models_weights,
                verdict=not no_verdict,
            )
            entries.append(entry)
            notes += entry_notes
        comparison = None
        if models is not None:
            from ..commands.compare.plan import CompareOptions
            from ..commands.compare.run import run_compare

            stage("report: comparing the files")
            # with --weights: the first file's weights (the files hold the same rows)
            weights = models_weights[0] if models_weights else None
            comparison = run_compare(models, settings, CompareOptions(seed=settings.seed), weights=weights)
            if not no_verdict:
                from ..commands.verdict import with_verdict

                with_verdict(comparison)
            notes += [f"compare: {n}" for n in comparison.get("notes", [])]
            models.clear()
        stage("report: drawing the key figures")
        overlaid = key_figures(overlays, fmt, dpi, notes, weighted)
        shown = None
        if monitor_doc is not None:
            from ..plots.common import figure_to_bytes
            from ..plots.monitor import plot_monitor

            assert monitor is not None
            stage("report: drawing the monitor")
            image = figure_to_bytes(plot_monitor(monitor_doc), fmt, dpi) if monitor_doc["windows"] else None
            shown = {"name": monitor.name, "doc": monitor_doc, "image": image}
        stage("report: writing HTML")
        html = render_report(entries, title=title, overlays=overlaid, comparison=comparison, monitor=shown)
    atomic_write_text(output, html)
    note(*notes)
    n_fig = sum(len(e["figures"]) for e in entries) + len(overlaid) + int(bool(shown and shown["image"]))
    after_write(  # only once the file is written (a full disk fails at the end of the run)
        lambda: typer.echo(f"wrote {plain(output)} ({len(entries)} file(s), {n_fig} figure(s))", err=True)
    )
