"""Figure builders (matplotlib, Agg, no pyplot). This package file stays import-light: only the
names of the plot kinds live here, so the CLI can offer them without loading matplotlib. ``kinds``
builds every figure of one file (and draws them in worker processes), ``overlay`` several models'.

May import everything below the renderers: errors, text, metrics, config, predictions, catalogue,
glossary, io, engine, commands. Never cli or api."""

#: Every plot kind (the ``--kind`` choices), in the order figures are produced.
PLOT_KINDS: tuple[str, ...] = (
    "predictions",
    "intervals",
    "calibration",
    "adversarial",
    "sharpness",
    "residuals",
    "reliability",
    "pit",
    "confidence",
    "sets",
    "rejection",
    "ucc",
    # calibration diagnostics (opt-in: --diagnostics, or asked for by --kind)
    "corp",
    "smooth_reliability",
    "spread_reliability",
    "spread_skill",  # issue 25: binned spread-skill diagram (--diagnostics)
    "rank_histogram",  # issue 15 part B (--diagnostics)
    "murphy",  # opt-in (--murphy), issue 16 A
    "exceedance_reliability",  # opt-in (--threshold), issue 16: CORP diagram of the event Y > t
    "skill",  # issue 16: skill against --reference (drawn from the summary's skill group)
    "multivariate_rank_histogram",  # issue 16: average-rank histogram of multivariate ensembles (--diagnostics)
    "coverage",  # issue 26/28: observed coverage against the nominal level (--diagnostics)
)

#: the image formats a figure is written in (``--plot FILE``'s suffix, ``--plot-format``)
PLOT_FORMATS: tuple[str, ...] = ("png", "svg", "pdf")

#: processes that draw and encode figures (``uqeval.plots.kinds.encode_figures``): 1 in a library call;
#: ``uqeval.cli.main`` sets 2 on a machine with two or more cores, where drawing is most of a report's time
RENDER_PROCESSES = 1
