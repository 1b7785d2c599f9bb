"""Rejection-curve figure: metric of the kept rows vs the fraction rejected, model and oracle.

Builds a :class:`matplotlib.figure.Figure` on the Agg canvas without touching
pyplot's global state; the caller saves it (``fig.savefig(path)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..errors import InputError
from .common import LINE, axes_for, model_color, style_axes

_YLABEL = {"accuracy": "accuracy of kept rows", "rmse": "RMSE of kept rows (units of y)"}


def plot_rejection(
    curves: Sequence[Mapping[str, Any]],
    title: str = "Rejection curve",
    metric: str = "accuracy",
    labels: Sequence[str] | None = None,
    ax: Axes | None = None,
    colors: Sequence[str] | None = None,
) -> Figure:
    """One or more rejection curves, each solid with its oracle dashed in the same colour, the areas under
    the curves in the legend.

    Parameters
    ----------
    curves : outputs of :func:`uqeval.metrics.ensembles.rejection_curve` (``fractions``, ``values``,
        ``oracle_values``, ``auc_rejection``, ``auc_oracle``); an optional ``label`` key names the curve.
    metric : ``"accuracy"`` or ``"rmse"``: only the y-axis label.
    labels : curve names, over the ``label`` keys; default ``model 1``, ``model 2``, ...
    ax : draw there (its figure is returned, its layout left to the caller) instead of on a new figure.
    colors : one per curve; default the models' colours in order (:func:`uqeval.plots.style.model_color`).
    """
    if len(curves) == 0:
        raise InputError("plot_rejection needs at least one curve; compute one with rejection_curve()")
    if labels is not None and len(labels) != len(curves):
        raise InputError(f"labels has {len(labels)} entries but there are {len(curves)} curves")
    for i, curve in enumerate(curves):
        missing = {"fractions", "values", "oracle_values"} - set(curve)
        if missing:
            raise InputError(
                f"curve {i} lacks key(s) {sorted(missing)}; pass the dict returned by rejection_curve()"
            )

    if colors is not None and len(colors) != len(curves):
        raise InputError(f"colors has {len(colors)} entries but there are {len(curves)} curves")
    fig, ax = axes_for(ax)
    colors = list(colors) if colors is not None else [model_color(i) for i in range(len(curves))]
    for i, curve in enumerate(curves):
        name = labels[i] if labels is not None else str(curve.get("label", f"model {i + 1}"))
        frac = 100.0 * np.asarray(curve["fractions"], dtype=float)
        auc = curve.get("auc_rejection")
        auc_o = curve.get("auc_oracle")
        ax.plot(
            frac,
            np.asarray(curve["values"], dtype=float),
            color=colors[i],
            lw=LINE["main"],
            label=name if auc is None else f"{name} (AUC {float(auc):.4g})",
        )
        ax.plot(
            frac,
            np.asarray(curve["oracle_values"], dtype=float),
            color=colors[i],
            lw=LINE["ref"],
            ls="--",
            label=f"{name} oracle" if auc_o is None else f"{name} oracle (AUC {float(auc_o):.4g})",
        )
    style_axes(
        ax, title, "rejected rows, most uncertain first (%)", _YLABEL.get(metric, metric), legend_loc="best"
    )
    return fig
