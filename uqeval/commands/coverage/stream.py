"""``uqeval coverage --engine stream``: the coverage/width points of :mod:`uqeval.commands.coverage.core` from record
batches. Every point value (coverage, width, width_norm, set coverage and size) is a mean over the rows of
its (facet, point) cell, so a cell keeps its row count and count-weighted sums (exact)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...config import Settings
from ...errors import InputError, option

if TYPE_CHECKING:
    from ...engine.options import EngineOptions


def _cells(
    path: str, batches, settings: Settings, points_by: str | None, kinds: dict[str, str]
) -> dict[tuple[str, str], dict[str, Any]]:
    """``{(facet, point): {"n": rows, "sums": {level: {key: count-weighted sum}}}}`` of record batches
    ``(_, Batch, _, offset, extra columns)`` of one file; the file's representation goes into ``kinds``."""
    from ...catalogue import coverage_levels
    from .core import _INTERVALS, _SETS, _labels, _point_metrics

    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for _, batch, _, offset, extra in batches:
        pred = batch.prediction
        if pred is None:
            continue
        if pred.kind not in _SETS + _INTERVALS:
            raise InputError(
                f"{path}: {pred.kind} predictions have no intervals or prediction sets; coverage "
                "needs a std, bounds, quantiles, samples or class probabilities"
            )
        kinds[path] = pred.kind
        levels = (
            coverage_levels(pred, settings) if pred.kind not in _SETS else list(settings.levels or (0.95,))
        )
        kept = pred.row_numbers() - offset
        pts = (
            np.asarray(extra[points_by].to_numpy(zero_copy_only=False), dtype=object)[kept]
            if points_by
            else None
        )
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
    return cells


def merge_cells(a: dict, b: dict) -> dict:
    """The cells of two parts of a file's rows: counts and count-weighted sums add (associative)."""
    out = {key: {"n": c["n"], "sums": {lk: dict(v) for lk, v in c["sums"].items()}} for key, c in a.items()}
    for key, c in b.items():
        cell = out.setdefault(key, {"n": 0, "sums": {}})
        cell["n"] += c["n"]
        for lk, sums in c["sums"].items():
            acc = cell["sums"].setdefault(lk, {})
            for k, v in sums.items():
                acc[k] = acc.get(k, 0.0) + v
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


def coverage_points_stream(
    files: Sequence[tuple[str, str]],
    settings: Settings,
    chunk_rows: int,
    points_by: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """The records of :func:`uqeval.commands.coverage.core.coverage_points` for ``(method, path)`` pairs, streamed;
    ``progress(rows)``: rows read so far over all files."""
    from ...engine.local import iter_batches_of

    records: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    done = 0

    def counted(batches):
        nonlocal done
        for item in batches:
            done += item[2]
            if progress is not None:
                progress(done)
            yield item

    for method, path in files:
        _, batches = iter_batches_of(
            path, settings, chunk_rows, extra=(points_by,) if points_by else (), allow_by=True
        )
        records += _records(method, path, _cells(path, counted(batches), settings, points_by, kinds))
    _check_kinds(kinds)
    return records


def partition_cells(task, plan, settings: Settings, chunk_rows: int, points_by: str | None, path: str):
    """``(cells, {path: representation})`` of one Dask task's row groups (runs on a worker)."""
    from ...engine.dask import task_batches

    kinds: dict[str, str] = {}
    extra = (points_by,) if points_by else ()
    batches = (
        (None, b, k, at, ex)
        for b, k, at, ex in task_batches(
            task, plan, settings, chunk_rows, list(dict.fromkeys(plan.needed())), extra
        )
    )
    return _cells(path, batches, settings, points_by, kinds), kinds


def _merge_parts(a, b):
    return merge_cells(a[0], b[0]), {**a[1], **b[1]}


def coverage_points_with_engine(
    files: Sequence[tuple[str, str]],
    settings: Settings,
    engine: EngineOptions,
    points_by: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """The records of :func:`uqeval.commands.coverage.core.coverage_points` for ``(method, path)`` pairs on a
    streaming engine (``engine``: ``stream`` or ``dask``, as :meth:`~uqeval.engine.options.EngineOptions.choose`
    chose it); ``progress(rows)``: rows read so far over all files."""
    engine = engine.sized([path for _, path in files], settings)
    if engine.engine == "dask":
        return coverage_points_dask(files, settings, engine, points_by, progress)
    return coverage_points_stream(files, settings, cast("int", engine.chunk_rows), points_by, progress)


def coverage_points_dask(
    files: Sequence[tuple[str, str]],
    settings: Settings,
    engine: EngineOptions,
    points_by: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[dict[str, Any]]:
    """The records of :func:`coverage_points_stream` on a Dask cluster (``engine``: its scheduler or workers,
    and ``chunk_rows`` set: :meth:`~uqeval.engine.options.EngineOptions.sized`): each file's row groups map to
    cells on the workers, tree-reduced with :func:`merge_cells`."""
    from ...engine.dask import dask_client, partitions, tree_reduce, wait
    from ...engine.local import _prepare
    from ...errors import SchemaError, UsageError

    chunk_rows = cast("int", engine.chunk_rows)
    plans = []
    for _, path in files:
        src, plan, _ = _prepare(path, settings, allow_by=True)
        if src.fmt != "parquet":
            raise UsageError(
                f"{option('engine', 'dask')} reads Parquet (files, directories, globs), not {path}; stream CSV "
                f"with {option('engine', 'stream')}"
            )
        if points_by and points_by not in src.info.columns:
            raise SchemaError(
                f"{src.spec}: column '{points_by}' not found; available columns: "
                f"{', '.join(src.info.columns[:20])}"
            )
        plans.append((src, plan))
    records: list[dict[str, Any]] = []
    kinds: dict[str, str] = {}
    done = 0
    with dask_client(engine) as (client, distributed):
        for (method, path), (src, plan) in zip(files, plans):
            tasks = partitions(src.files)
            futures = [
                client.submit(partition_cells, t, plan, settings, chunk_rows, points_by, path, pure=False)
                for t in tasks
            ]
            done = wait(distributed, futures, [t[3] for t in tasks], progress, done)
            cells, k = tree_reduce(client, futures, _merge_parts)
            kinds.update(k)
            records += _records(method, path, cells)
    _check_kinds(kinds)
    return records
