"""``uqeval coverage --engine stream|dask``: the coverage/width points of :mod:`uqeval.commands.coverage.core`
from record batches. Every point value (coverage, width, width_norm, set coverage and size) is a mean over
the rows of its (facet, point) cell, weighted with ``--weights`` (rows of weight 0 dropped, as in memory),
so a cell keeps its row count, its total weight and weight-weighted sums (exact)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...config import Settings
from ...errors import InputError

if TYPE_CHECKING:
    from ...engine.fold import Piece
    from ...engine.options import EngineOptions
    from ...predictions import Prediction


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
        self.rows += piece.rows
        pred = piece.batch.prediction
        if pred is None:
            return
        pts = None
        if self.points_by:
            kept = pred.row_numbers() - piece.offset
            pts = np.asarray(piece.extra[self.points_by].to_numpy(zero_copy_only=False), dtype=object)[kept]
        self.add_rows(pred, piece.batch.weights, piece.batch.groups, pts)

    def add_rows(
        self,
        pred: Prediction,
        weights: np.ndarray | None,
        facets: np.ndarray | None,
        points: np.ndarray | None,
    ) -> None:
        """Fold in the rows of ``pred`` with their weights (None: 1 each), facets (``--by`` values) and points
        (``--points-by`` values; None: one facet or point, ``"all"``). The cells are computed a cell at a
        time (a loop over cells, not rows): in memory a file is one call, its numbers those of the whole cell."""
        from ...catalogue import coverage_levels
        from ..score.core import group_codes
        from .core import _INTERVALS, _SETS, _point_metrics, _weighted_point_metrics

        if pred.kind not in _SETS + _INTERVALS:
            raise InputError(
                f"{self.path}: {pred.kind} predictions have no intervals or prediction sets; coverage "
                "needs a std, bounds, quantiles, samples or class probabilities"
            )
        reason = pred.no_band()
        if reason is not None:
            raise InputError(f"{self.path}: no coverage to check: {reason}")
        self.kind, settings = pred.kind, self.settings
        levels = (
            coverage_levels(pred, settings) if pred.kind not in _SETS else list(settings.levels or (0.95,))
        )
        if weights is not None:
            from ...weights import drop_zero

            self.w += float(weights.sum())
            weights, (pred, facets, points), dropped = drop_zero(
                weights, pred, facets, points
            )  # as in memory
            self.n_zero += dropped
            if not weights.size:
                return
        n = pred.n
        if not n:
            return
        (flabels, fcode), (plabels, pcode) = (
            (np.array(["all"]), np.zeros(n, dtype=np.intp)) if v is None else group_codes(v)
            for v in (facets, points)
        )
        cell = fcode * len(plabels) + pcode  # facets, then points, each sorted as strings
        if cell.min() == cell.max():  # one cell: the prediction itself, no copy
            parts: Any = [(int(cell[0]), pred, weights)]
        else:
            order = np.argsort(cell, kind="stable")
            codes, starts = np.unique(cell[order], return_index=True)
            parts = (
                (int(c), pred.subset(idx), None if weights is None else weights[idx])
                for c, idx in zip(codes, np.split(order, starts[1:]))
            )
        for c, part, w in parts:  # a loop over (facet, point) cells, not rows
            means = (
                _point_metrics(part, levels, settings.y_std)
                if w is None
                else _weighted_point_metrics(part, levels, settings, w)
            )
            total = float(part.n) if w is None else float(w.sum())
            key = (str(flabels[c // len(plabels)]), str(plabels[c % len(plabels)]))
            self._add_cell(key, part.n, total, means)

    def _add_cell(self, key: tuple[str, str], n: int, w: float, means: dict[str, dict[str, float]]) -> None:
        """Fold a cell's ``n`` rows of total weight ``w`` and weighted ``means`` into ``key``: the means of a cell
        seen once are kept as computed, those of a cell seen in several parts averaged with their weights."""
        cell = self.cells.get(key)
        if cell is None:
            self.cells[key] = {"n": n, "w": w, "means": {lk: dict(m) for lk, m in means.items()}}
            return
        total = cell["w"] + w
        for lk, values in means.items():
            acc = cell["means"].setdefault(lk, {})
            for k, v in values.items():
                acc[k] = (acc[k] * cell["w"] + v * w) / total if k in acc else v
        cell["n"] += n
        cell["w"] = total

    def merge(self, other: Cells) -> Cells:
        """The cells of both parts' rows: counts, weights and weighted sums add (associative)."""
        out = Cells(self.path, self.settings, self.points_by)
        for part in (self, other):
            for key, c in part.cells.items():
                out._add_cell(key, c["n"], c["w"], c["means"])
        out.kind, out.rows = self.kind or other.kind, self.rows + other.rows
        out.w, out.n_zero = self.w + other.w, self.n_zero + other.n_zero
        return out


def records_of(method: str, path: str, cells: dict) -> list[dict[str, Any]]:
    """The records of one file's cells: one per (facet, point, level), in that order."""
    if not cells:
        raise InputError(f"{path}: every row has NaN/inf in a used column; nothing left to evaluate")
    records = []
    for facet, point in sorted(cells):
        cell = cells[(facet, point)]
        for lk, means in cell["means"].items():
            records.append(
                {
                    "method": method,
                    "file": path,
                    "facet": facet,
                    "point": point,
                    "level": lk,
                    "n_rows": int(cell["n"]),
                    **means,
                }
            )
    return records


def check_kinds(kinds: dict[str, str]) -> None:
    """Raise unless the files (path -> representation) are all regression intervals or all prediction sets."""
    from .core import _SETS

    sets = [p for p, k in kinds.items() if k in _SETS]
    intervals = [p for p, k in kinds.items() if k not in _SETS]
    if sets and intervals:
        raise InputError(
            f"coverage compares methods on one task: {intervals[0]} holds regression intervals but {sets[0]} "
            "classification prediction sets; run them separately"
        )


def points_of(folded: Iterable[tuple[str, Cells]]) -> tuple[list[dict[str, Any]], tuple[float, int]]:
    """``(records, (total weight, rows of weight 0))`` of each file's folded cells, ``(method, cells)`` in file
    order (:func:`records_of`; the totals over every file, ``(0.0, 0)`` without weights); the files must all
    hold regression intervals or all prediction sets (:func:`check_kinds`). A file without cells is refused, on
    every engine: its rows kept all have weight 0 (no row counts, as ``score`` and ``monitor`` say), or none
    was kept (:func:`records_of`)."""
    records: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    total_w, n_zero = 0.0, 0
    for method, cells in folded:
        total_w, n_zero = total_w + cells.w, n_zero + cells.n_zero
        if cells.kind is not None:
            kinds[cells.path] = cells.kind
        if not cells.cells and cells.n_zero:
            raise InputError(
                f"{cells.path}: the weights are all 0 on the rows kept: no row counts; give some rows a positive "
                "weight"
            )
        records += records_of(method, cells.path, cells.cells)
    check_kinds(kinds)
    return records, (total_w, n_zero)


def coverage_points_with_engine(
    files: Sequence[tuple[str, str]],
    settings: Settings,
    engine: EngineOptions,
    points_by: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[dict[str, Any]], tuple[float, int]]:
    """:func:`points_of` the ``(method, path)`` pairs on a streaming engine (``engine``: ``stream`` or ``dask``,
    as :meth:`~uqeval.engine.options.EngineOptions.choose` chose it), each file's record batches folded into
    :class:`Cells` in turn (``--weights``: a column of every file). ``progress(rows)``: rows read so far over
    all files."""
    from ...engine.fold import session

    engine = engine.sized([path for _, path in files], settings)
    with session(engine):
        return points_of(_folded(files, settings, engine, points_by, progress))


def _folded(
    files: Sequence[tuple[str, str]],
    settings: Settings,
    engine: EngineOptions,
    points_by: str | None,
    progress: Callable[[int], None] | None,
) -> Iterator[tuple[str, Cells]]:
    """``(method, cells)`` of each file, folded when asked for (a file's records are made before the next is
    read, as its errors are reported)."""
    from functools import partial

    from ...engine.fold import over_rows

    extra = (points_by,) if points_by else ()
    done = 0
    for method, path in files:
        counted = None if progress is None else (lambda rows, base=done: progress(base + rows))
        with over_rows(path, settings, engine, counted, extra=extra, allow_by=True, weights_ok=True) as run:
            cells = run.fold(partial(Cells, path, settings, points_by))
        done += cells.rows
        yield method, cells
