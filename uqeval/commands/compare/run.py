"""The one entry of ``uqeval compare`` for every front end and engine: :func:`run_compare`.

Files (or Python's containers) in, the ``uqeval.compare/1`` document out, on one route for every engine:
the engine opens the rows, the fold is planned, folded and finished. In memory each file is read whole and
the rows aligned (:func:`~.models.align_models`, joined on ``--id``): one piece (:class:`~.stream.Whole`),
kept by a :class:`~.stream.KeptCompare`, which finishes with :func:`~.core.compare_models`; on the stream and
Dask engines the fold is planned on the first aligned record batches (:func:`~.stream.plan_stream`), every
batch folded into a :class:`~.stream.ComparePartial`, and the merged state finished
(:func:`~.stream.finish`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .models import Model, align_models, model_names

if TYPE_CHECKING:
    from ...config import Settings
    from ...engine.options import EngineOptions
    from ...predictions import Prediction
    from .plan import CompareOptions
    from .skill import Reference
    from .stream import Whole

__all__ = ["run_compare"]


def run_compare(
    sources: Sequence[str | Path] | Mapping[str, Prediction] | Sequence[Model],
    settings: Settings,
    options: CompareOptions,
    engine: EngineOptions | None = None,
    *,
    names: Sequence[str] | None = None,
    ids: str | Sequence[np.ndarray] | None = None,
    clusters: Any = None,
    weights: Any = None,
    reference: Reference | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The document of ``uqeval compare``, the one entry of every front end and engine.

    ``sources``: files (named ``names``, by default :func:`~.models.model_names`; read with ``settings``)
    or, in memory, ``{name: prediction}`` (Python's containers) or models (:class:`~.models.Model`) loaded already
    (``uqeval report --compare``: each keeps its name and its loader's ``info``; the weights are the first
    file's, their column the settings'). ``ids``: files: the id column read from every file
    (``--id``); containers: one array per model; the rows are joined on them. ``clusters`` and ``weights``:
    files: the columns ``options.resampling`` and ``settings`` name (the first file's); containers: one
    value a row of the first model. ``reference``: the skill against it (not with weights). ``engine``: as
    :meth:`~uqeval.engine.options.EngineOptions.choose` chose it for the files (None: memory); on the
    stream and Dask engines ``progress`` gets the rows read."""
    from contextlib import nullcontext
    from functools import partial

    from ...engine.aligned import in_memory, open_models, over_aligned
    from .stream import ComparePartial, KeptCompare, finish, plan_stream, stream_units

    if reference is not None and (weights is not None or settings.columns.get("weights")):
        from .skill import refuse_weighted_skill

        raise refuse_weighted_skill()
    loaded = not isinstance(sources, Mapping) and any(isinstance(m, Model) for m in sources)
    if loaded:
        names = [cast("Model", m).name for m in sources]
    elif not isinstance(sources, Mapping) and names is None:
        names = model_names([str(f) for f in sources])
    named = list(sources) if isinstance(sources, Mapping) else cast("Sequence[str]", names)
    units = None
    if engine is not None and engine.streams:  # the rows in aligned record batches
        engine.memory_only(id=ids, reference=reference)
        from ...io.uri import as_spec

        # a URI as given (str() of a Path folds s3:// to s3:/)
        specs = [as_spec(f) for f in cast("Sequence[str | Path]", sources)]
        models = open_models(specs, settings)
        units = stream_units(models, options.resampling)
        rows: Any = over_aligned(specs, settings, engine, progress, models)
    else:  # every row in memory: one piece
        rows = nullcontext(
            in_memory(_whole(sources, named, settings, options, ids, clusters, weights, reference))
        )
    new: Callable[..., KeptCompare | ComparePartial]
    finishes: dict[tuple[str, int], Callable] = {}
    with rows as run:
        if run.engine == "memory":
            new = partial(KeptCompare, named, settings, options)
        else:  # planned on the first rows
            specs = [m.spec for m in run.models]
            layout, finishes = plan_stream(specs, units, run.head(), named, settings, options)
            new = partial(ComparePartial, layout)
        part = run.fold(new, keyed=True)
    if isinstance(part, KeptCompare):  # the one-batch case: the exact in-memory computation
        return cast("Whole", part.kept).compared(settings, options)
    return finish(run.models, part, finishes, run.engine, run.info)


def _whole(
    sources: Sequence[str | Path] | Mapping[str, Prediction] | Sequence[Model],
    names: Sequence[str],
    settings: Settings,
    options: CompareOptions,
    ids: str | Sequence[np.ndarray] | None,
    clusters: Any,
    weights: Any,
    reference: Reference | None,
) -> Whole:
    """The memory engine's one piece: the files read whole (:func:`_read_files`), Python's containers or
    models loaded already, the rows aligned (joined on ``ids``)."""
    from .stream import Whole

    if not isinstance(sources, Mapping) and any(isinstance(m, Model) for m in sources):
        models = align_models(list(cast("Sequence[Model]", sources)))
        return Whole(models, None, weights, settings.columns.get("weights") if weights is not None else None)
    if isinstance(sources, Mapping):
        models = [Model(name, pred, {"path": name}) for name, pred in sources.items()]
        models = align_models(models, cast("Sequence[np.ndarray] | None", ids))
        # the first model's rows keep their order
        return Whole(
            models, None if clusters is None else np.asarray(clusters), weights, joined=ids is not None
        )
    models, weights, clusters, reference, times = _read_files(
        cast("Sequence[str | Path]", sources), names, settings, options, cast("str | None", ids), reference
    )
    column = settings.columns.get("weights")
    return Whole(models, clusters, weights, column, reference, times, joined=ids is not None)


def _read_files(
    files: Sequence[str | Path],
    names: Sequence[str],
    settings: Settings,
    options: CompareOptions,
    id_col: str | None,
    reference: Reference | None,
) -> tuple[list[Model], np.ndarray | None, np.ndarray | None, Reference | None, np.ndarray | None]:
    """``(models aligned, weights, clusters, reference, its times)`` of ``files`` read whole (joined on
    ``id_col`` when given; ``--weights`` and ``--cluster``: the first file's columns; the reference joined
    to the first file's rows on ``id_col``, a persistence reference's times read from it)."""
    from ...engine.aligned import read_whole
    from ...engine.progress import stage
    from ..score.core import read_extra_column

    models, ids = [], []
    weights = None
    for i, (name, loaded) in enumerate(read_whole(files, names, settings)):
        weights = loaded.weights if i == 0 else weights
        models.append(Model(name, loaded.prediction, loaded.info))
        ids.append(loaded.groups)
    # with --id it is the "by" column, read from every file: each file's groups are its ids
    models = align_models(models, cast("list[np.ndarray]", ids) if id_col else None, id_column=id_col)
    first = models[0].prediction
    cluster = options.resampling.cluster
    clusters = None if cluster is None else read_extra_column(models[0].source, cluster, first.row_numbers())
    times = None
    # forecast verification (issue 16): the skill of each model against the reference
    if reference is not None:
        if reference.kind == "persistence":
            times = read_extra_column(models[0].source, reference.time, first.row_numbers())
        if id_col is not None:  # the reference is joined to the first model's rows on the same column
            reference = replace(reference, model_ids=ids[0])
    stage("scoring")
    return models, weights, clusters, reference, times
