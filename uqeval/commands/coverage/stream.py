"""``uqeval coverage --engine stream|dask``: the coverage/width points of :mod:`uqeval.commands.coverage.core`
from record batches. Every point value (coverage, width, width_norm, set coverage and size) is a mean over
the rows of its (facet, point) cell, weighted with ``--weights`` (rows of weight 0 dropped, as in memory),
so a cell keeps its row count, its total weight and weight-weighted sums (exact)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...config import Settings
from ...errors import InputError

if TYPE_CHECKING:
    from ...engine.fold import Piece
    from ...engine.options import EngineOptions


class Cells:
    """The coverage cells of some rows of one file: ``cells`` maps ``(facet, point)`` to
    ``{"n": rows, "w": total weight, "sums": {level: {key: weighted sum}}}`` (without weights every row weighs
    1); ``kind``: the file's representation; ``rows``: the rows read; ``w`` and ``n_zero``: the total weight
    and the rows of weight 0 (dropped). Counts and sums add, so two parts merge exactly (:meth:`merge`)."""

    def __init__(self, path: str, settings: Settings, points_by: str | None) -> None:
        self.path, self.settings, self.points_by = path, settings, points_by
        self.cells: dict[tuple[str, str], dict[str, Any]] = {}
        self.kind: str | None = None
        self.rows = self.n_zero = 0
        self.w = 0.0

    def add(self, piece: Piece) -> None:
        from ...catalogue import coverage_levels
        from .core import _INTERVALS, _SETS, _labels, _point_metrics, _weighted_point_metrics

        self.rows += piece.rows
        pred, settings, weights = piece.batch.prediction, self.settings, piece.batch.weights
        if pred is None:
            return
        if pred.kind not in _SETS + _INTERVALS:
            raise InputError(
                f"{self.path}: {pred.kind} predictions have no intervals or prediction sets; coverage "
                "needs a std, bounds, quantiles, samples or class probabilities"
            )
        self.kind = pred.kind
        levels = (
            coverage_levels(pred, settings) if pred.kind not in _SETS else list(settings.levels or (0.95,))
        )
        pts = None
        if self.points_by:
            kept = pred.row_numbers() - piece.offset
            pts = np.asarray(piece.extra[self.points_by].to_numpy(zero_copy_only=False), dtype=object)[kept]
        facets = _labels(piece.batch.groups, pred.n).astype(str)
        points = _labels(pts, pred.n).astype(str)
        if weights is not None:
            self.w += float(weights.sum())
            self.n_zero += int((weights == 0).sum())
            keep = weights > 0  # rows of weight 0 are dropped, as in memory
            if not keep.all():
                if not keep.any():
                    return
                pred, weights, facets, points = pred.subset(keep), weights[keep], facets[keep], points[keep]
        for facet, point in sorted(set(zip(facets.tolist(), points.tolist()))):
            idx = np.flatnonzero((facets == facet) & (points == point))
            part = pred.subset(idx)
            if weights is None:
                total = float(idx.size)
                means = _point_metrics(part, levels, settings.y_std)
            else:
                total = float(weights[idx].sum())
                means = _weighted_point_metrics(part, levels, settings, weights[idx])
            sums = {lk: {key: total * v for key, v in m.items()} for lk, m in means.items()}
            self._add_cell((facet, point), idx.size, total, sums)

    def _add_cell(self, key: tuple[str, str], n: int, w: float, sums: dict[str, dict[str, float]]) -> None:
        cell = self.cells.setdefault(key, {"n": 0, "w": 0.0, "sums": {}})
        cell["n"] += n
        cell["w"] += w
        for lk, values in sums.items():
            acc = cell["sums"].setdefault(lk, {})
            for k, v in values.items():
                acc[k] = acc.get(k, 0.0) + v

    def merge(self, other: Cells) -> Cells:
        """The cells of both parts' rows: counts, weights and weighted sums add (associative)."""
        out = Cells(self.path, self.settings, self.points_by)
        for part in (self, other):
            for key, c in part.cells.items():
                out._add_cell(key, c["n"], c["w"], c["sums"])
        out.kind, out.rows = self.kind or other.kind, self.rows + other.rows
        out.w, out.n_zero = self.w + other.w, self.n_zero + other.n_zero
        return out


def _records(method: str, path: str, cells: dict) -> list[dict[str, Any]]:
    if not cells:
        raise InputError(f"{path}: every row has NaN/inf in a used column; nothing left to evaluate")
    records = []
    for facet, point in sorted(cells):
        cell = cells[(facet, point)]
        for lk, sums in cell["sums"].items():
            records.append(
                {
                    "method": method,
                    "file": path,
                    "facet": facet,
                    "point": point,
                    "level": lk,
                    "n_rows": int(cell["n"]),
                    **{k: v / cell["w"] for k, v in sums.items()},
                }
            )
    return records


def _check_kinds(kinds: dict[str, str]) -> None:
    from .core import _SETS

    if len({k in _SETS for k in kinds.values()}) > 1:
        raise InputError(
            "coverage compares methods on one task: regression intervals and classification "
            "prediction sets are mixed; run them separately"
        )


def coverage_points_with_engine(
    files: Sequence[tuple[str, str]],
    settings: Settings,
    engine: EngineOptions,
    points_by: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[dict[str, Any]], tuple[float, int]]:
    """The records of :func:`uqeval.commands.coverage.core.coverage_points` for ``(method, path)`` pairs on a
    streaming engine (``engine``: ``stream`` or ``dask``, as :meth:`~uqeval.engine.options.EngineOptions.choose`
    chose it), each file folded into :class:`Cells`, and ``(total weight, rows of weight 0)`` over the files
    (``--weights``: a column of every file; ``(0.0, 0)`` without). ``progress(rows)``: rows read so far over
    all files."""
    from functools import partial

    from ...engine.fold import over_rows, session

    engine = engine.sized([path for _, path in files], settings)
    extra = (points_by,) if points_by else ()
    records: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    done, total_w, n_zero = 0, 0.0, 0
    with session(engine):
        for method, path in files:
            counted = None if progress is None else (lambda rows, base=done: progress(base + rows))
            with over_rows(
                path, settings, engine, counted, extra=extra, allow_by=True, weights_ok=True
            ) as run:
                cells = run.fold(partial(Cells, path, settings, points_by))
            done += cells.rows
            total_w, n_zero = total_w + cells.w, n_zero + cells.n_zero
            if cells.kind is not None:
                kinds[path] = cells.kind
            records += _records(method, path, cells.cells)
    _check_kinds(kinds)
    return records, (total_w, n_zero)
