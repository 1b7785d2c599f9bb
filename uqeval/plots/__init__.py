"""Figure builders (matplotlib, Agg, no pyplot). This package file stays import-light: only the
names of the plot kinds live here, so the CLI can offer them without loading matplotlib."""

#: Regression plot kinds, in the order :func:`uqeval.plots.regression.regression_figures` builds them.
REGRESSION_PLOT_KINDS: tuple[str, ...] = (
    "predictions", "intervals", "calibration", "adversarial", "sharpness", "residuals", "reliability", "pit",
)
#: Every plot kind (the ``--kind`` choices), in the order figures are produced.
PLOT_KINDS: tuple[str, ...] = REGRESSION_PLOT_KINDS + ("confidence", "sets", "rejection", "ucc")
