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

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...config import Settings
from ...errors import InputError, UsageError, option
from ...io.load import Loaded

if TYPE_CHECKING:
    from ...predictions import Prediction

_INTERVALS = ("gaussian", "intervals", "quantiles", "samples")
_SETS = ("categorical", "members", "dirichlet")


def _labels(values: np.ndarray | None, n: int) -> np.ndarray:
    """Each row's label of a --by / point column (``"all"`` without one), as :func:`~.score.group_codes`."""
    if values is None:
        return np.full(n, "all", dtype=object)
    from ..score.core import group_codes

    labels, codes = group_codes(values)
    return np.array(labels.tolist(), dtype=object)[codes]


def _codes(values: np.ndarray | None) -> tuple[list[str], np.ndarray | None]:
    """The labels of a --by / point column sorted as strings and each row's index into them
    (:func:`~.score.group_codes`); ``(["all"], None)`` without one (every row has label 0)."""
    if values is None:
        return ["all"], None
    from ..score.core import group_codes

    labels, codes = group_codes(values)
    return [str(x) for x in labels.tolist()], codes


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


def coverage_points(
    runs: Sequence[tuple[str, Loaded, np.ndarray | None]],
    settings: Settings,
) -> list[dict[str, Any]]:
    """One record per (method, file, facet, point, level).

    ``runs`` holds ``(method name, loaded file, points-by values or None)``; the
    facet comes from ``loaded.groups`` (the ``--by`` column) when present. A loaded file with
    ``weights`` (``--weights``) gives weighted coverage and mean width (:func:`_weighted_point_metrics`):
    its rows of weight 0 are dropped, and a (facet, point) whose weights are all 0 gives no record.
    """
    from ...catalogue import coverage_levels

    records: list[dict[str, Any]] = []
    families = {"classification" if r[1].prediction.kind in _SETS else "regression" for r in runs}
    if len(families) > 1:
        cls = [str(r[1].info.get("path")) for r in runs if r[1].prediction.kind in _SETS]
        reg = [str(r[1].info.get("path")) for r in runs if r[1].prediction.kind not in _SETS]
        raise InputError(
            f"coverage compares methods on one task: {reg[0]} holds regression intervals but {cls[0]} "
            "classification prediction sets; run them separately"
        )
    for method, loaded, point_values in runs:
        pred = loaded.prediction
        if pred.kind not in _SETS + _INTERVALS:
            raise InputError(
                f"{loaded.info['path']}: {pred.kind} predictions have no intervals or prediction "
                "sets; coverage needs a std, bounds, quantiles, samples or class probabilities"
            )
        reason = pred.no_band()
        if reason is not None:
            raise InputError(f"{loaded.info['path']}: no coverage to check: {reason}")
        weights = loaded.weights
        fvals, fcode = _codes(loaded.groups)
        pvals, pcode = _codes(point_values)
        if weights is not None and not (weights > 0).all():  # rows of weight 0 are dropped
            keep = weights > 0
            pred, weights = pred.subset(keep), weights[keep]
            fcode = None if fcode is None else fcode[keep]
            pcode = None if pcode is None else pcode[keep]
        n = pred.n
        levels = (
            coverage_levels(pred, settings) if pred.kind not in _SETS else list(settings.levels or (0.95,))
        )
        # cell = facet * len(pvals) + point; the cells in that order: facets, then points, sorted as strings
        cell = (
            None
            if fcode is None and pcode is None
            # one of the codes is an array, so the sum is one
            else cast(
                "np.ndarray", (0 if fcode is None else fcode * len(pvals)) + (0 if pcode is None else pcode)
            )
        )
        cells: list[int] | np.ndarray
        parts: Iterable[tuple[int, Prediction, np.ndarray | None]]
        if not n:
            cells, parts = [], []
        elif cell is None or cell.min() == cell.max():  # one cell: the prediction itself, no copy
            cells, parts = [0 if cell is None else int(cell[0])], [(n, pred, weights)]
        else:
            order = np.argsort(cell, kind="stable")
            cells, starts = np.unique(cell[order], return_index=True)
            parts = (
                (idx.size, pred.subset(idx), None if weights is None else weights[idx])
                for idx in np.split(order, starts[1:])
            )
        for c, (size, part, w) in zip(cells, parts):  # a loop over (facet, point) cells, not rows
            facet, point = fvals[c // len(pvals)], pvals[c % len(pvals)]
            metrics = (
                _point_metrics(part, levels, settings.y_std)
                if w is None
                else _weighted_point_metrics(part, levels, settings, w)
            )
            for lk, m in metrics.items():
                records.append(
                    {
                        "method": method,
                        "file": loaded.info["path"],
                        "facet": facet,
                        "point": point,
                        "level": lk,
                        "n_rows": int(size),
                        **m,
                    }
                )
    return records


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
    from pathlib import Path

    if names:
        if len(names) != len(paths):
            raise UsageError(
                f"{option('name')} was given {len(names)} time(s) for {len(paths)} file(s); give one per file or none"
            )
        return list(names)
    return [Path(p).name.split(".")[0] for p in paths]
