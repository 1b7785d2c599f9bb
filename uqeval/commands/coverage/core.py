"""Coverage and width of several methods across dataset-shift groups (Kompa, Snoek & Beam 2021).

Each input file is one run of a method. Rows are split into facets by the
``--by`` column (e.g. corruption level) and, within a facet, into points by the
optional ``--points-by`` column (e.g. corruption type or dataset): every
(file, facet, point) gives one coverage/width point, as in the paper's
Figure 7. Per facet and level a least-squares line of coverage on width is
fitted across all methods' points, and each method is summarised by the
fraction of its points strictly above that line (the paper's Figures 8-10:
more points above the line = more coverage for the width).

Regression intervals give the mean width (in units of the training targets'
std when ``y_std`` is known); classification prediction sets give the mean set
size (Kompa et al., Eq. 4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...config import Settings
from ...errors import UsageError, option
from ...io.load import Loaded

if TYPE_CHECKING:
    from ...engine.options import EngineOptions

SCHEMA = "uqeval.coverage/1"
_INTERVALS = ("gaussian", "intervals", "quantiles", "samples")
_SETS = ("categorical", "members", "dirichlet")


def _point_metrics(pred, levels: Sequence[float], y_std: float | None) -> dict[str, dict[str, float]]:
    """{level_key: {coverage, width[, width_norm]}} for one subset of rows.

    Intervals are made and scored block by block of rows (:class:`~..metrics.intervals.CoverageSums`),
    every level in one pass: no full-size bounds or widths, the numbers of :func:`coverage_metrics`
    on the whole arrays bit for bit.
    """
    from ...metrics.blocks import BLOCK
    from ...metrics.intervals import CoverageSums, coverage_metrics, level_key
    from ...validation import check_nonempty

    if pred.kind in _SETS:
        from ...metrics.classification import prediction_sets

        sets = prediction_sets(pred.proba, pred.labels, levels)
        return {k: {"coverage": v["coverage"], "width": v["mean_size"]} for k, v in sets.items()}
    n, y = pred.n, pred.require_targets()
    check_nonempty(n)
    states = [CoverageSums(n, lv, y_std) for lv in levels]
    for start in range(0, n, BLOCK):  # blocks of rows, not rows
        stop = min(start + BLOCK, n)
        part = pred.subset(slice(start, stop)) if (start, stop) != (0, n) else pred
        for lv, state in zip(levels, states):
            lo, hi = part.interval(lv)
            if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo <= hi).all()):
                lower, upper = pred.interval(lv)
                coverage_metrics(y, lower, upper, lv, y_std=y_std)  # whole-array checks: raises its message
            state.add(y[start:stop], lo, hi, part.coverage_shares(lv))  # an ensemble's: its randomised PIT
    out: dict[str, dict[str, float]] = {}
    for lv, state in zip(levels, states):
        m = state.result()
        out[level_key(lv)] = {k: m[k] for k in ("coverage", "width", "width_norm") if k in m}
    return out


def _weighted_point_metrics(
    pred, levels: Sequence[float], settings: Settings, weights: np.ndarray
) -> dict[str, dict[str, float]]:
    """:func:`_point_metrics` of weighted rows (weights > 0): each value is its catalogue metric's per-row form
    at the weights (``coverage.coverage``, ``coverage.width``, ``coverage.width_norm``; for prediction sets
    ``prediction_sets.coverage`` and ``prediction_sets.mean_size``), as ``score --weights`` computes it."""
    from ...catalogue import METRICS, rows
    from ...metrics.intervals import level_key

    group, names = (
        ("prediction_sets", {"coverage": "coverage", "mean_size": "width"})
        if pred.kind in _SETS
        else ("coverage", {"coverage": "coverage", "width": "width", "width_norm": "width_norm"})
    )
    out: dict[str, dict[str, float]] = {}
    for lv in levels:
        key = level_key(lv)
        values = {}
        for name, label in names.items():
            stat = rows(METRICS[f"{group}.{name}"], pred, settings, key)
            fn = None if stat is None else stat.resampler(blas=False)
            if fn is not None:
                values[label] = float(fn(weights[None, :])[0])
        out[key] = values
    return out


def run_coverage(
    runs: Sequence[tuple[str, str | Path | Loaded]],
    settings: Settings,
    *,
    by: str | None = None,
    points_by: str | None = None,
    engine: EngineOptions | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The document of ``uqeval coverage`` (``uqeval.coverage/1``), the one entry of every front end and
    engine.

    ``runs``: ``(method name, file)`` pairs (read with ``settings``; ``--weights``: a column of every file,
    ``--points-by``: the ``points_by`` column) or, in memory, ``(method name, loaded)`` (Python's containers,
    without ``points_by``). ``by``: the ``--by`` column as the document names it. ``engine``: as
    :meth:`~uqeval.engine.options.EngineOptions.choose` chose it for the files (None: memory). Every file is
    folded into the (facet, point) cells of :class:`~.stream.Cells`: in memory each file is loaded whole (all
    of them before the first is folded) and is the one piece of :func:`~uqeval.engine.fold.in_memory`; on
    the stream and Dask engines :func:`~.stream.coverage_points_with_engine` folds its record batches
    (``progress``: rows read over all files). With ``--weights`` a point's coverage and mean width are
    weighted means (rows of weight 0 dropped; a (facet, point) whose weights are all 0 gives no point) and
    the document gains a ``weights`` block. Per facet and level the least-squares line and each method's
    share above it follow (:func:`above_line`).

    A file whose rows kept (``--nan-policy omit``) all have weight 0 is refused on every engine
    (:func:`~.stream.points_of`).
    """
    from ...weights import weights_block
    from .stream import points_of

    if engine is not None and engine.streams:
        from ...io.uri import as_spec
        from .stream import coverage_points_with_engine

        files = [(method, as_spec(cast("str | Path", f))) for method, f in runs]  # a URI as given
        records, (total_w, n_zero) = coverage_points_with_engine(files, settings, engine, points_by, progress)
    else:
        from functools import partial

        from ...engine.fold import in_memory
        from .stream import Cells

        # every file is read before the first is folded (its errors first, as always)
        loaded = [(method, _loaded(f, settings, points_by)) for method, f in runs]
        cells = (
            (method, in_memory(one).fold(partial(Cells, str(one.info.get("path")), settings, points_by)))
            for method, one in loaded
        )
        records, (total_w, n_zero) = points_of(cells)
    from ..._version import __version__

    document = {
        "schema": SCHEMA,
        "uqeval_version": __version__,
        "by": by,
        "points_by": points_by,
        "y_std": settings.y_std,
        "points": records,
        "fit": above_line(records),
    }
    column = settings.columns.get("weights")
    if column:
        document["weights"] = weights_block(column, total_w, n_zero, {})
    return document


def _loaded(source: str | Path | Loaded, settings: Settings, points_by: str | None) -> Loaded:
    """A file read whole, the points-by column in the same pass (matched exactly, else case-insensitively, and
    kept under ``points_by`` as a streamed piece keeps it; ``--weights``: a column of every file), or Python's
    container."""
    if isinstance(source, Loaded):
        assert points_by is None  # Python's containers carry no points-by column
        return source
    from ...io.load import load_predictions

    loaded = load_predictions(source, settings, extra=(points_by,) if points_by else (), weights_ok=True)
    if points_by and not loaded.extra:
        from ..score.core import column_not_found

        raise column_not_found(loaded.table, points_by)
    return loaded


def above_line(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per facet and level: least-squares line of coverage on width and each method's share above it.

    Returns ``{facet: {level: {"slope", "intercept", "n_points", "fraction_above": {method: f}}}}``.
    The x variable is ``width_norm`` when every point has it, else ``width``. With fewer
    than two distinct widths the line is horizontal at the mean coverage.
    """
    out: dict[str, dict[str, Any]] = {}
    cells: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in records:
        cells.setdefault((r["facet"], r["level"]), []).append(r)
    for (facet, level), rs in sorted(cells.items()):
        xkey = "width_norm" if all("width_norm" in r for r in rs) else "width"
        x = np.array([r[xkey] for r in rs], dtype=float)
        y = np.array([r["coverage"] for r in rs], dtype=float)
        dx = x - x.mean()
        sxx = float(dx @ dx)
        if sxx > 1e-24 * max(1.0, float(x @ x)):  # ordinary least squares, closed form
            slope = float(dx @ (y - y.mean())) / sxx
        else:  # all widths (numerically) equal: a horizontal line at the mean coverage
            slope = 0.0
        intercept = float(y.mean() - slope * x.mean())
        resid = y - (slope * x + intercept)
        tol = 1e-12 * max(1.0, float(np.abs(y).max()))
        methods = sorted({r["method"] for r in rs})
        frac = {
            m: float(np.mean([res > tol for r, res in zip(rs, resid) if r["method"] == m])) for m in methods
        }
        out.setdefault(facet, {})[level] = {
            "x": xkey,
            "slope": float(slope),
            "intercept": float(intercept),
            "n_points": len(rs),
            "fraction_above": frac,
        }
    return out


def method_names(paths: Sequence[str], names: Sequence[str] | None) -> list[str]:
    """Method name per file: ``--name`` values in order, else the file stem (files may share a method)."""
    if names:
        if len(names) != len(paths):
            raise UsageError(
                f"{option('name')} was given {len(names)} time(s) for {len(paths)} file(s); give one per file or none"
            )
        return list(names)
    return [Path(p).name.split(".")[0] for p in paths]
