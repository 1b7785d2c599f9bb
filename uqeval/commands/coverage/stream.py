"""``uqeval coverage --engine stream``: the coverage/width points of :mod:`uqeval.commands.coverage.core` from record
batches. Every point value (coverage, width, width_norm, set coverage and size) is a mean over the rows of
its (facet, point) cell, so a cell keeps its row count and count-weighted sums (exact)."""

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
    ``{"n": rows, "sums": {level: {key: count-weighted sum}}}``; ``kind``: the file's representation;
    ``rows``: the rows read. Counts and sums add, so two parts merge exactly (:meth:`merge`)."""

    def __init__(self, path: str, settings: Settings, points_by: str | None) -> None:
        self.path, self.settings, self.points_by = path, settings, points_by
        self.cells: dict[tuple[str, str], dict[str, Any]] = {}
        self.kind: str | None = None
        self.rows = 0

    def add(self, piece: Piece) -> None:
        from ...catalogue import coverage_levels
        from .core import _INTERVALS, _SETS, _labels, _point_metrics

        self.rows += piece.rows
        pred, settings = piece.batch.prediction, self.settings
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
        for facet, point in sorted(set(zip(facets.tolist(), points.tolist()))):
            idx = np.flatnonzero((facets == facet) & (points == point))
            sums = {
                lk: {key: idx.size * v for key, v in m.items()}
                for lk, m in _point_metrics(pred.subset(idx), levels, settings.y_std).items()
            }
            self._add_cell((facet, point), idx.size, sums)

    def _add_cell(self, key: tuple[str, str], n: int, sums: dict[str, dict[str, float]]) -> None:
        cell = self.cells.setdefault(key, {"n": 0, "sums": {}})
        cell["n"] += n
        for lk, values in sums.items():
            acc = cell["sums"].setdefault(lk, {})
            for k, v in values.items():
                acc[k] = acc.get(k, 0.0) + v

    def merge(self, other: Cells) -> Cells:
        """The cells of both parts' rows: counts and count-weighted sums add (associative)."""
        out = Cells(self.path, self.settings, self.points_by)
        for part in (self, other):
            for key, c in part.cells.items():
                out._add_cell(key, c["n"], c["sums"])
        out.kind, out.rows = self.kind or other.kind, self.rows + other.rows
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
                    **{k: v / cell["n"] for k, v in sums.items()},
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
) -> list[dict[str, Any]]:
    """The records of :func:`uqeval.commands.coverage.core.coverage_points` for ``(method, path)`` pairs on a
    streaming engine (``engine``: ``stream`` or ``dask``, as :meth:`~uqeval.engine.options.EngineOptions.choose`
    chose it), each file folded into :class:`Cells`; ``progress(rows)``: rows read so far over all files."""
    from functools import partial

    from ...engine.fold import over_rows, session

    engine = engine.sized([path for _, path in files], settings)
    extra = (points_by,) if points_by else ()
    records: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    done = 0
    with session(engine):
        for method, path in files:
            counted = None if progress is None else (lambda rows, base=done: progress(base + rows))
            with over_rows(path, settings, engine, counted, extra=extra, allow_by=True) as run:
                cells = run.fold(partial(Cells, path, settings, points_by))
            done += cells.rows
            if cells.kind is not None:
                kinds[path] = cells.kind
            records += _records(method, path, cells.cells)
    _check_kinds(kinds)
    return records
