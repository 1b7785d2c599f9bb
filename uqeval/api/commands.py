"""`ucc`, `compare` and `monitor` from Python: the commands of the same names on containers, tables or files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._python import python_api
from ..config import Settings, make_settings
from ..errors import InputError, UsageError
from ..predictions import (
    Prediction,
)
from .inputs import _file_roles, _load_table, _models

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    #: what ``ucc`` and ``compare`` take as models
    Models = Prediction | Mapping[str, Prediction] | Sequence[Prediction]


@python_api
def ucc(
    models: Models,
    *,
    level: float = 0.95,
    x_axis: str = "bandwidth",
    y_axis: str = "missrate",
    normalize: str = "std",
    cost: float = 0.5,
    partial_x: Sequence[float] | None = None,
    partial_y: Sequence[float] | None = None,
    n_permutations: int = 0,
    seed: int = 0,
    weights: ArrayLike | None = None,
) -> dict[str, Any]:
    """Uncertainty Characteristics Curves (Navratil et al.) of one or several predictions with targets.

    ``models``: a container or ``{name: container}`` (Gaussian, intervals, quantiles with a median,
    samples). Returns the ``uqeval.ucc/1`` document of ``uqeval ucc`` (per model ``ucc`` with
    ``auucc``, ``auucc_const``, ``gain``, ``op``, ``op_min`` and the curve). ``weights``: one weight per
    row: the weighted UCC (miss rate a weighted fraction, widths weighted means; docs: Per-row weights).

    >>> import numpy as np, uqeval
    >>> y = np.random.default_rng(0).normal(size=300)
    >>> out = uqeval.ucc(uqeval.Gaussian(y_true=y, mean=np.zeros(300), std=np.ones(300)))
    >>> 0 < out["models"]["model 1"]["ucc"]["auucc"] < 1
    True
    """
    from ..commands.ucc.core import band_of, ucc_report
    from ..io.load import Loaded

    bands = [band_of(name, Loaded(pred, {"path": name}), level) for name, pred in _models(models).items()]
    return ucc_report(
        bands,
        x_axis=x_axis,
        y_axis=y_axis,
        normalize=normalize,
        partial_x=partial_x,
        partial_y=partial_y,
        cost=cost,
        n_permutations=n_permutations,
        seed=seed,
        weights=weights,  # one a row (the same rows for every model); the permutation test refuses them
    )


@python_api
def compare(
    models: Models,
    *,
    metrics: Sequence[str] | None = None,
    settings: Settings | None = None,
    n_boot: int = 1000,
    ci_level: float = 0.95,
    seed: int = 0,
    n_permutations: int = 10000,
    pairs: str = "best",
    dm_lag: int = 0,
    ids: Mapping[str, ArrayLike] | Sequence[ArrayLike] | None = None,
    cluster: ArrayLike | None = None,
    block_size: int | str | None = None,
    weights: ArrayLike | None = None,
) -> dict[str, Any]:
    """Compare models on the same targets: bootstrap intervals, ranks and paired tests (``uqeval compare``).

    ``models``: ``{name: container}`` (at least two, the same targets in the same order).
    ``metrics``: names as ``uqeval compare --metrics`` takes them (default: crps, nll, pinball,
    interval, brier, ma_cal where defined). ``ids``: each model's row ids (a mapping like ``models``, or
    a sequence in its order) to join the models' rows on, instead of requiring the same row order.
    ``cluster``: a label per row of the first model (a location, a patient, a day): every cluster is
    resampled and sign-flipped as a whole; ``block_size``: rows in time order, resampled and flipped in
    consecutive blocks of this many rows (``"auto"``: Politis & White's choice). Without either, rows
    are assumed independent (``settings.resampling`` records the choice when one is given).
    ``weights``: one weight per row of the first model (>= 0, not all 0): estimates from the weighted rows,
    bootstrap counts times the weights, paired tests on weighted score differences (docs: Per-row weights).
    Returns the ``uqeval.compare/1`` document.

    >>> import numpy as np, uqeval
    >>> rng = np.random.default_rng(0); y = rng.normal(size=400)
    >>> a = uqeval.Gaussian(y_true=y, mean=np.zeros(400), std=np.ones(400))
    >>> b = uqeval.Gaussian(y_true=y, mean=np.zeros(400), std=np.full(400, 3.0))
    >>> out = uqeval.compare({"a": a, "b": b}, metrics=["crps"], n_boot=100, n_permutations=0)
    >>> out["metrics"]["crps"]["best"]
    ['a']
    """
    from ..commands.compare.core import Model, align_models, compare_models
    from ..resample import Resampling

    # the labels themselves are given (no column): the resampling's cluster column is named after the keyword
    resampling = Resampling.parse(None if cluster is None else "cluster", block_size)
    named = _models(models)
    id_arrays = None
    if ids is not None:
        if isinstance(ids, Mapping):
            missing = [name for name in named if name not in ids]
            if missing:
                raise UsageError(f"ids has no entry for model {missing[0]!r}; give one id array per model")
            ids = [ids[name] for name in named]
        id_arrays = [np.asarray(a) for a in ids]
        if len(id_arrays) != len(named):
            raise UsageError(f"ids gives {len(id_arrays)} id arrays for {len(named)} models")
        for (name, pred), a in zip(named.items(), id_arrays):
            if a.ndim != 1 or len(a) != pred.n:
                raise InputError(
                    f"ids of model {name!r} has shape {a.shape}, but the model has {pred.n} rows"
                )
    aligned = align_models([Model(name, pred, {"path": name}) for name, pred in named.items()], id_arrays)
    from ..commands.verdict import with_verdict

    result = compare_models(
        aligned,
        settings or Settings(),
        metrics,
        n_boot=n_boot,
        ci_level=ci_level,
        seed=seed,
        n_permutations=n_permutations,
        pairs=pairs,
        dm_lag=dm_lag,
        resampling=resampling,
        clusters=None if cluster is None else np.asarray(cluster),  # the first model's rows keep their order
        weights=weights,  # one a row of the first model, whose rows keep their order
    )
    return with_verdict(result)


@python_api
def monitor(
    data: Any = None,
    *,
    time: ArrayLike | str | None = None,
    window: str | int,
    alpha: float = 0.05,
    origin: str | None = None,
    by: str | None = None,
    state: str | Path | None = None,
    engine: str = "stream",
    chunk_rows: int | None = None,
    settings: Settings | None = None,
    adversarial_windows: bool = False,
    skip_seen: bool = False,
    **columns: Any,
) -> dict[str, Any]:
    """The metrics per window and cumulatively, and anytime-valid alarms, as ``uqeval monitor`` computes them
    (the ``uqeval.monitor/1`` document).

    Parameters
    ----------
    data : a CSV/Parquet path (a directory, glob or URI too: read in record batches, ``engine`` "stream" or
        "dask"), or what :func:`evaluate` takes (arrays, a prediction container, a DataFrame or Arrow table:
        scored in memory by the same window states).
    time : the time column's name (or, with arrays, the times: datetime64 or ISO strings); not needed
        for row windows.
    window : ``"1D"``, ``"7D"``, ``"1h"``, ``"30min"``, ``"15s"``, ``"2W"`` (time spans, half-open windows
        aligned to ``origin``, default the Unix epoch) or a number of rows.
    alpha : family-wise false-alarm level of all the tests together.
    by : with a file, also every window's metrics per value of this column (``groups`` of each window).
    state : a state file: read first if it exists (yesterday's windows), then written with the new state,
        so that the next call needs only the new rows. Rows the state already counted (at or before the
        latest time it counted, ties included) and files it already read (same size and content) raise an
        :class:`~uqeval.InputError`, or are left out with ``skip_seen``.
    skip_seen : with ``state``, leave out what the state already counted instead of raising; a note in the
        document's ``notes`` says how many rows were left out.
    adversarial_windows : also give every window its adversarial group calibration (its seeded random-subset
        draws cost ~7 ms a window; by default only the cumulative metrics have it, ``input.not_per_window``).
    **columns : the column keywords of :func:`evaluate` (``y_true``, ``mean``, ``std``, ``lower``, ``upper``,
        ``quantiles``, ``samples``, ``proba``, ``levels``, ...) and settings fields.

    Returns
    -------
    dict: the ``uqeval.monitor/1`` document (``windows``, ``cumulative``, ``tests``, ``alpha``).

    Examples
    --------
    >>> import numpy as np, uqeval
    >>> rng = np.random.default_rng(0)
    >>> doc = uqeval.monitor(y_true=rng.normal(size=600), mean=0.0, std=1.0, window=200)
    >>> [w["n_rows"] for w in doc["windows"]], [t["name"] for t in doc["tests"]], doc["tests"][0]["alarm"]
    ([200, 200, 200], ['coverage@0.95', 'pit_uniform'], False)
    """
    from ..commands.monitor.core import build_document, monitor_file
    from ..commands.monitor.windows import (
        Layout,
        Windows,
        dump_state,
        load_state,
        memory_fingerprint,
        seen_notes,
        time_ns,
    )
    from ..io.writers import atomic_write_bytes

    saved = None
    if state is not None and Path(state).exists():
        saved = Path(state).read_bytes()
    if isinstance(data, (str, Path)):
        roles = _file_roles(columns)
        s = make_settings(None, **columns) if settings is None else replace(settings, **columns)
        if roles or by is not None:
            s = replace(s, columns={**s.columns, **roles, "by": by})
        if time is not None and not isinstance(time, str):
            raise UsageError("time= names a column of the file; give its name")
        if state is not None and s.columns.get("weights"):
            from ..weights import refuse_weights

            raise refuse_weights(
                "uqeval.monitor with state=", "a weighted monitor reads all its rows in one call"
            )
        from ..engine.options import EngineOptions

        doc, new = monitor_file(
            data,
            s,
            window=window,
            time=time,
            origin=origin,
            alpha=alpha,
            engine=EngineOptions(engine, chunk_rows, quiet=True),
            state=saved,
            state_source=None if state is None else str(state),
            adversarial_windows=adversarial_windows,
            skip_seen=skip_seen,
        )
    else:
        if by is not None:
            raise UsageError(
                "by= applies to a file (monitor reads its --by column with the rows); write the table first"
            )
        if skip_seen and state is None:
            raise UsageError("skip_seen= leaves out the rows a state counted: give state= as well")
        loaded, s, arrow = _load_table(data, columns, settings)
        tname = time if isinstance(time, str) else None if time is None else "time"  # as a file's column
        layout = Layout(window, tname, origin, adversarial_windows)
        run = load_state(saved, layout, s, str(state)) if saved is not None else Windows(layout, s)
        assert isinstance(run, Windows)
        n_raw = int(loaded.info["n_rows"])
        extra: dict[str, Any] = {}
        if tname is not None:
            if isinstance(time, str) and arrow is None:
                raise UsageError("time= names a column, but data is not a table: pass the times as an array")
            extra[tname] = arrow.column(time) if isinstance(time, str) else np.asarray(time)
            if len(extra[tname]) != n_raw:
                raise UsageError(f"time= has {len(extra[tname])} values for {n_raw} rows")
        from ..io.load import Batch

        pred = loaded.prediction
        batch = Batch(
            pred, int(loaded.info["n_dropped"]), 0, loaded.info.get("columns") or {}, weights=loaded.weights
        )
        where = str(loaded.info["path"])
        if state is not None:  # no file: the table is known by the fingerprint of its arrays
            times = time_ns(extra[tname], tname, where, 0) if tname is not None else None
            fp = memory_fingerprint(where, pred, n_raw, int(loaded.info["n_dropped"]), times)
            seen = run.seen.check_prints([fp], skip_seen)
        if state is None or not seen:
            run.add(batch, n_raw, 0, extra, where)
        skipped = seen_notes(run, skip_seen, where)
        info = {"path": loaded.info["path"], "format": loaded.info["format"], "engine": "memory"}
        doc, new = build_document(info, run, s, alpha), dump_state(run)
        if skipped:
            doc["notes"] = [*doc.get("notes", []), *skipped]
    if state is not None:
        atomic_write_bytes(state, new)
    return doc
