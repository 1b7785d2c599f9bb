"""``uqeval coverage --engine stream``: the coverage/width points of :mod:`uqeval.tasks.coverage` from record
batches. Every point value (coverage, width, width_norm, set coverage and size) is a mean over the rows of
its (facet, point) cell, so a cell keeps its row count and count-weighted sums (exact)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..config import Settings
from ..errors import InputError


def coverage_points_stream(files: Sequence[tuple[str, str]], settings: Settings, chunk_rows: int,
                           points_by: str | None = None) -> list[dict[str, Any]]:
    """The records of :func:`uqeval.tasks.coverage.coverage_points` for ``(method, path)`` pairs, streamed."""
    from ..catalogue import coverage_levels
    from ..tasks.coverage import _INTERVALS, _SETS, _labels, _point_metrics
    from .engine import iter_batches_of

    records: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    for method, path in files:
        src, batches = iter_batches_of(path, settings, chunk_rows, extra=(points_by,) if points_by else (),
                                       allow_by=True)
        cells: dict[tuple[str, str], dict[str, Any]] = {}
        for _, batch, _, offset, extra in batches:
            pred = batch.prediction
            if pred is None:
                continue
            if pred.kind not in _SETS + _INTERVALS:
                raise InputError(f"{path}: {pred.kind} predictions have no intervals or prediction sets; coverage "
                                 "needs a std, bounds, quantiles, samples or class probabilities")
            kinds[path] = pred.kind
            levels = coverage_levels(pred, settings) if pred.kind not in _SETS else list(settings.levels or (0.95,))
            kept = pred.rows - offset
            pts = np.asarray(extra[points_by].to_numpy(zero_copy_only=False), dtype=object)[kept] if points_by else None
            facets = _labels(batch.groups, pred.n).astype(str)
            points = _labels(pts, pred.n).astype(str)
            for facet, point in sorted(set(zip(facets.tolist(), points.tolist()))):
                idx = np.flatnonzero((facets == facet) & (points == point))
                cell = cells.setdefault((facet, point), {"n": 0, "sums": {}})
                cell["n"] += idx.size
                for lk, m in _point_metrics(pred.subset(idx), levels, settings.y_std).items():
                    acc = cell["sums"].setdefault(lk, {})
                    for key, v in m.items():
                        acc[key] = acc.get(key, 0.0) + idx.size * v
        if not cells:
            raise InputError(f"{path}: every row has NaN/inf in a used column; nothing left to evaluate")
        for (facet, point) in sorted(cells):
            cell = cells[(facet, point)]
            for lk, sums in cell["sums"].items():
                records.append({"method": method, "file": path, "facet": facet, "point": point, "level": lk,
                                "n_rows": int(cell["n"]), **{k: v / cell["n"] for k, v in sums.items()}})
    if len({k in _SETS for k in kinds.values()}) > 1:
        raise InputError("coverage compares methods on one task: regression intervals and classification "
                         "prediction sets are mixed; run them separately")
    return records
