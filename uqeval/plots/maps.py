"""A map of one metric per grid point (issue 41): the per-cell metrics that ``score --preserve-dims lat,lon``
writes to ``-o metrics.nc``, drawn with :meth:`matplotlib.axes.Axes.pcolormesh` on the plain
longitude/latitude plane (no cartographic package). Built on :class:`matplotlib.figure.Figure` (no pyplot).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..errors import InputError
from .common import axes_for, style_axes


def plot_map(
    values: np.ndarray | Sequence[Sequence[float]],
    x: Sequence[float],
    y: Sequence[float],
    title: str = "",
    xlabel: str = "longitude",
    ylabel: str = "latitude",
    label: str = "",
    ax: Axes | None = None,
) -> Figure:
    """``values`` (``len(y)`` rows x ``len(x)`` columns; NaN where a cell has no value) as coloured cells
    centred on the coordinates ``x`` and ``y``, with a colour bar named ``label``."""
    v = np.asarray(values, dtype=float)
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if v.shape != (ys.size, xs.size):
        raise InputError(f"plot_map: values have shape {v.shape}, expected ({ys.size}, {xs.size}) (y, x)")
    fig, ax = axes_for(ax)
    mesh = ax.pcolormesh(xs, ys, np.ma.masked_invalid(v), shading="nearest", cmap="viridis")
    fig.colorbar(mesh, ax=ax, label=label)
    style_axes(ax, title, xlabel, ylabel, legend=False)
    ax.grid(False)
    return fig


def metric_map(metrics, name: str, x: str = "lon", y: str = "lat", ax: Axes | None = None) -> Figure:
    """The map of metric ``name`` (its JSON path, ``"scoring_rule.crps"``) of a per-cell metrics Dataset
    (``xarray.open_dataset("metrics.nc")``) over its dimensions ``x`` and ``y``."""
    if name not in metrics:
        raise InputError(
            f"metric_map: no variable {name!r}; variables: {', '.join(map(str, metrics.data_vars))}"
        )
    da = metrics[name]
    if set(da.dims) != {x, y}:
        raise InputError(f"metric_map: {name!r} has dimensions {tuple(da.dims)}, expected ({y!r}, {x!r})")
    da = da.transpose(y, x)
    return plot_map(da.values, da[x].values, da[y].values, title=name, xlabel=x, ylabel=y, label=name, ax=ax)


#: spatial dimension names drawn on the vertical axis of a map (the other kept dimension is horizontal)
_Y_NAMES = ("lat", "latitude", "y", "rlat", "south_north")


def metric_maps(metrics, kind: str | None) -> dict[str, Figure]:
    """``{"map_<metric path>": figure}`` of the headline metrics of ``kind`` (:data:`uqeval.catalogue.HEADLINE`)
    found in a per-cell metrics Dataset over two dimensions (:func:`uqeval.io.labelled.metrics_dataset`: ``score
    --preserve-dims lat,lon --plot-dir``), the latitude-like one on the vertical axis. Nothing for other
    Datasets."""
    from ..catalogue import headline_paths

    if "n_rows" not in metrics or metrics["n_rows"].ndim != 2:  # (its dimensions: the kept ones)
        return {}
    two = [str(d) for d in metrics["n_rows"].dims]
    y = next((d for d in two if d.lower() in _Y_NAMES), two[0])
    x = next(d for d in two if d != y)
    names = [str(v) for v in metrics.data_vars if metrics[v].dims == metrics["n_rows"].dims]
    out = {}
    for _, path in headline_paths(kind, names):
        out[f"map_{path}"] = metric_map(metrics, path, x=x, y=y)
    return out
