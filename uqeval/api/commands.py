"""`ucc`, `compare` and `monitor` from Python: the commands of the same names on containers, tables or files."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
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
from .inputs import _PLOT_ROLES, _canonical_columns, _file_roles, _is_table, _load_table, _models

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..engine.options import EngineOptions
    from .inputs import Models


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
    **aliases: Any,
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
    from ..commands.ucc.core import UccOptions, run_ucc
    from ..io.load import Loaded

    sources = {name: Loaded(pred, {"path": name}) for name, pred in _models(models).items()}
    if aliases:  # the command line's words for the permutation test: permutations=, permutation_test=
        from ..names import canonical
        from ..vocabulary import did_you_mean, with_canonical_keys

        unknown = [k for k in aliases if canonical(k) != "n_permutations"]
        if unknown:
            raise UsageError(
                f"uqeval.ucc takes no {unknown[0]}={did_you_mean(unknown[0], ['n_permutations', 'seed', 'cost'])}"
            )
        given = with_canonical_keys({"n_permutations": n_permutations or None, **aliases})
        n_permutations = int(given["n_permutations"] or 0)
    options = UccOptions(x_axis, y_axis, normalize, partial_x, partial_y, cost, n_permutations, seed, level)
    # weights: one a row (the same rows for every model); the permutation test refuses them
    return run_ucc(sources, Settings(), options, weights=weights)[0]


class Comparison(dict):  # a dict for the code that reads the document as one
    """The ``uqeval.compare/1`` document of :func:`compare`: a dict (``out["metrics"]["crps"]["best"]``), with
    :meth:`to_frame` (one row per metric and model) and :meth:`to_json` (the document ``uqeval compare
    --format json`` writes)."""

    def to_json(self) -> str:
        """The document as JSON text, exactly as ``uqeval compare --format json`` writes it."""
        from ..io.writers import dumps_json

        return dumps_json(dict(self))

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per metric and model: ``metric``, ``model``, ``estimate``, ``low``,
        ``high`` (the bootstrap interval), ``rank``, ``p_best``, ``diff_vs_best``, ``best``, ``orientation``."""
        import pandas as pd

        rows = []
        for metric, entry in (self.get("metrics") or {}).items():
            best = entry.get("best") or []
            for model, v in (entry.get("values") or {}).items():
                diff = v.get("diff_vs_best")
                rows.append(
                    {
                        "metric": metric,
                        "model": model,
                        "estimate": v.get("estimate"),
                        "low": v.get("low"),
                        "high": v.get("high"),
                        "rank": v.get("rank"),
                        "p_best": v.get("p_best"),
                        "diff_vs_best": diff.get("estimate") if isinstance(diff, dict) else None,
                        "best": model in best,
                        "orientation": entry.get("orientation"),
                    }
                )
        return pd.DataFrame(rows)


@python_api
def compare(
    models: Any,
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
    **columns: Any,
) -> Comparison:
    """Compare models on the same targets: bootstrap intervals, ranks and paired tests (``uqeval compare``).

    Parameters
    ----------
    models : ``{name: model}`` (at least two, the same targets in the same order), or a sequence of models
        (named ``model 1``, ``model 2``, ...). A model is anything :func:`evaluate` takes: a prediction
        container, the :class:`Scores` of one, a CSV or Parquet file, a DataFrame or Arrow table (columns
        detected, or named by ``columns``), or ``{role: array}`` (``{"mean": mu, "std": sd}``) with the
        targets given once as ``y_true=``.
    metrics : names as ``uqeval compare --metrics`` takes them (default: crps, nll, pinball, interval,
        brier, ma_cal where defined).
    ids : each model's row ids (a mapping like ``models``, or a sequence in its order) to join the models'
        rows on, instead of requiring the same row order.
    cluster, block_size : a label per row of the first model (every cluster is resampled and sign-flipped as
        a whole), or rows in time order resampled and flipped in consecutive blocks of this many rows
        (``"auto"``: Politis & White's choice). Without either, rows are assumed independent.
    weights : one weight per row of the first model (>= 0, not all 0): estimates from the weighted rows,
        bootstrap counts times the weights, paired tests on weighted score differences.
    n_boot, n_permutations : bootstrap resamples and permutation-test sign flips (``bootstrap=`` and
        ``permutations=``, the command line's words, are taken too).
    **columns : the column keywords of :func:`evaluate` (``y_true``, ``mean``, ``std``, ``proba``, ``classes``,
        ..., and their aliases) applied to every model, and settings fields (``num_bins=50``).

    Returns
    -------
    Comparison
        The ``uqeval.compare/1`` document (a dict) with ``to_frame()`` and ``to_json()``.

    Examples
    --------
    >>> import numpy as np, uqeval
    >>> rng = np.random.default_rng(0); y = rng.normal(size=400)
    >>> a = uqeval.Gaussian(y_true=y, mean=np.zeros(400), std=np.ones(400))
    >>> b = uqeval.Gaussian(y_true=y, mean=np.zeros(400), std=np.full(400, 3.0))
    >>> out = uqeval.compare({"a": a, "b": b}, metrics=["crps"], n_boot=100, n_permutations=0)
    >>> out["metrics"]["crps"]["best"]
    ['a']
    >>> out.to_frame()[["metric", "model", "best"]].values.tolist()
    [['crps', 'a', True], ['crps', 'b', False]]
    """
    from ..commands.compare.core import CompareOptions
    from ..commands.compare.run import run_compare
    from ..resample import Resampling

    options = CompareOptions(
        metrics,
        # the command line's words for them (uqeval.names.OPTIONS): bootstrap=, permutations=
        columns.pop("bootstrap", n_boot),
        ci_level,
        seed,
        columns.pop("permutations", n_permutations),
        pairs,
        dm_lag,
        # the labels themselves are given (no column): the resampling's cluster column is named after the keyword
        Resampling.parse(None if cluster is None else "cluster", block_size),
    )
    named, settings = _model_predictions(models, columns, settings)
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
    from ..commands.verdict import with_verdict

    # cluster, weights: one a row of the first model, whose rows keep their order
    result = run_compare(named, settings, options, ids=id_arrays, clusters=cluster, weights=weights)
    return Comparison(with_verdict(result))


def _model_predictions(
    models: Any, columns: dict[str, Any], settings: Settings | None
) -> tuple[dict[str, Prediction], Settings]:
    """``({name: prediction}, settings)`` of :func:`compare`'s models, each read as :func:`evaluate` reads its
    data with the shared ``columns`` (role keywords and settings)."""
    from .scores import Scores

    if isinstance(models, (Prediction, Scores, str, Path)) or _is_table(models):
        models = [models]
    if not isinstance(models, Mapping):
        if not isinstance(models, Sequence):
            raise UsageError(
                f"models must be {{name: model}} or a list of models, got {type(models).__name__}"
            )
        models = {f"model {i + 1}": m for i, m in enumerate(models)}
    shared = dict(columns)
    _canonical_columns(shared)
    roles = {k: shared.pop(k) for k in list(shared) if k in _PLOT_ROLES and k != "settings"}
    s = make_settings(None, **shared) if settings is None else replace(settings, **shared)
    out: dict[str, Prediction] = {}
    for name, model in models.items():
        with _naming_model(name, len(models)):
            out[str(name)] = _model_prediction(model, roles, s)
    return out, s


@contextlib.contextmanager
def _naming_model(name: Any, n: int) -> Iterator[None]:
    """An error reading a model names it (``model 'b': ...``)."""
    try:
        yield
    except (InputError, UsageError) as exc:
        raise type(exc)(f"model {str(name)!r}: {exc.message}", fix=exc.fix) from None


def _model_prediction(model: Any, roles: dict[str, Any], settings: Settings) -> Prediction:
    """The prediction of one model of :func:`compare` (see there) with the shared role keywords."""
    from .scores import Scores

    if isinstance(model, Scores):
        if model._prediction is None:
            raise UsageError("these Scores hold no prediction; pass the data they came from")
        return model._prediction
    if isinstance(model, Prediction):
        # column names are for the tables, the shared targets for the models given as {role: array}
        arrays = [r for r, v in roles.items() if not isinstance(v, str) and r != "y_true"]
        if arrays:
            raise UsageError(f"a prediction container holds its arrays: it takes no {', '.join(arrays)}=")
        return model
    if isinstance(model, (str, Path)):
        from .score import _load_file

        return _load_file(model, dict(roles), settings).prediction
    if isinstance(model, Mapping):  # {role: array}: this model's roles, the shared targets
        loaded, _, _ = _load_table(None, {**roles, **_plain(model)}, settings)
        return loaded.prediction
    if _is_table(model):
        loaded, _, _ = _load_table(model, dict(roles), settings)
        return loaded.prediction
    raise UsageError(
        f"a model is a prediction container, Scores, a file, a DataFrame or {{role: array}} "
        f"(such as {{'mean': mu, 'std': sd}}, with y_true= given once), got {type(model).__name__}"
    )


def _plain(model: Mapping[Any, Any]) -> dict[str, Any]:
    bad = [k for k in model if not isinstance(k, str)]
    if bad:
        raise UsageError(f"a model given as {{role: array}} names roles by strings, got {bad[0]!r}")
    return dict(model)


@python_api
def monitor(
    data: Any = None,
    *,
    time: ArrayLike | str | None = None,
    window: str | int,
    alpha: float = 0.05,
    origin: str | None = None,
    by: str | None = None,
    weights: ArrayLike | str | None = None,
    state: str | Path | None = None,
    engine: str = "stream",
    chunk_rows: int | None = None,
    settings: Settings | None = None,
    adversarial_windows: bool = False,
    skip_seen: bool = False,
    detect: bool = True,
    arl: float = 3650.0,
    **columns: Any,
) -> dict[str, Any]:
    """The metrics per window and cumulatively, and change detectors' alarms, as ``uqeval monitor`` computes them
    (the ``uqeval.monitor/1`` document).

    Parameters
    ----------
    data : a CSV/Parquet path (a directory, glob or URI too: read in record batches, ``engine`` "stream" or
        "dask"), or what :func:`evaluate` takes (arrays, a prediction container, a DataFrame or Arrow table:
        scored in memory by the same window states).
    time : the time column's name (or, with arrays, the times: datetime64 or ISO strings); not needed
        for row windows.
    window : ``"1D"``, ``"7D"``, ``"1h"``, ``"30min"``, ``"15s"``, ``"2W"`` (pandas' ``"D"``, ``"30T"`` too; time spans, half-open windows
        aligned to ``origin``, default the Unix epoch) or a number of rows.
    alpha : family-wise false-alarm level of all the tests together (``detect=False``).
    detect : True (default): e-detectors, which alarm after a change whatever the history, and say where it
        began; False: anytime-valid tests of "calibrated all along" (``uqeval monitor --test``).
    arl : with ``detect``, the average run length to a false alarm of all the detectors together, in windows.
    by : with a file, also every window's metrics per value of this column (``groups`` of each window).
    weights : per-row weights (N,), or the name of a column of ``data`` (a file or a table): the window and
        cumulative metrics are weighted as ``score`` weighs them; the tests count every row of positive weight
        once.
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
    ([200, 200, 200], ['coverage@0.95', 'pit_uniform', 'pit_mean'], False)
    """
    from ..commands.monitor.windows import read_state
    from ..engine.options import EngineOptions
    from ..io.writers import atomic_write_bytes
    from ..vocabulary import window_span

    kw: dict[str, Any] = {
        "window": window_span(window),  # pandas' spellings too: "D", "30T"
        "origin": origin,
        "alpha": alpha,
        "state": read_state(state),
        "state_source": None if state is None else str(state),
        "adversarial_windows": adversarial_windows,
        "skip_seen": skip_seen,
        "detect": detect,
        "arl": arl,
    }
    roles = {"time": time, "by": by, "weights": weights}
    if isinstance(data, (str, Path)):
        doc, new = _monitor_path(
            data, roles, settings, columns, kw, EngineOptions(engine, chunk_rows, quiet=True)
        )
    else:
        doc, new = _monitor_table(data, roles, settings, columns, kw)
    if state is not None:
        atomic_write_bytes(state, new)
    from ..commands.verdict import with_verdict

    return with_verdict(doc)  # the alarm sentence (issue 39)


def _monitor_path(
    data: str | Path,
    given: dict[str, Any],
    settings: Settings | None,
    columns: dict[str, Any],
    kw: dict[str, Any],
    engine: EngineOptions,
) -> tuple[dict[str, Any], bytes]:
    """:func:`monitor` of a file read on ``engine`` (stream or dask); ``given``: its ``time``, ``by`` and
    ``weights`` (column names)."""
    from ..commands.monitor.core import monitor_file
    from ..io.dialect import reading_csv

    roles = _file_roles(columns)
    s = make_settings(None, **columns) if settings is None else replace(settings, **columns)
    for name in ("time", "weights"):
        if given[name] is not None and not isinstance(given[name], str):
            raise UsageError(f"{name}= names a column of the file; give its name")
    weights = {"weights": given["weights"]} if given["weights"] is not None else {}
    if roles or given["by"] is not None or weights:  # ("by": None too, as the state's settings record it)
        s = replace(s, columns={**s.columns, **roles, "by": given["by"], **weights})
    with reading_csv(s.sep, s.decimal):
        return monitor_file(data, s, time=given["time"], engine=engine, **kw)


def _monitor_table(
    data: Any, given: dict[str, Any], settings: Settings | None, columns: dict[str, Any], kw: dict[str, Any]
) -> tuple[dict[str, Any], bytes]:
    """:func:`monitor` of arrays or a table: its rows folded as one batch (the fold's one-batch case);
    ``given``: its ``time``, ``by`` and ``weights`` (arrays, or column names of a table)."""
    from ..commands.monitor.core import monitor_rows
    from ..engine.fold import Piece
    from ..io.load import batch_of
    from .inputs import _attach_weights

    time = given["time"]
    if given["by"] is not None:
        raise UsageError(
            "by= applies to a file (monitor reads its by column with the rows); write the table first"
        )
    if kw["skip_seen"] and kw["state_source"] is None:
        raise UsageError("skip_seen= leaves out the rows a state counted: give state= as well")
    loaded, s, arrow = _load_table(data, columns, settings)
    weights = s.columns.get("weights") if given["weights"] is None else given["weights"]  # or a config's
    if weights is not None:
        _attach_weights(loaded, weights, arrow)
        if isinstance(weights, str):  # named in the document, as a file's column
            s = replace(s, columns={**s.columns, "weights": weights})
    tname = time if isinstance(time, str) else None if time is None else "time"  # as a file's column
    n_raw = int(loaded.info["n_rows"])
    extra: dict[str, Any] = {}
    if tname is not None:
        if isinstance(time, str) and arrow is None:
            raise UsageError("time= names a column, but data is not a table: pass the times as an array")
        extra[tname] = arrow.column(time) if isinstance(time, str) else np.asarray(time)
        if len(extra[tname]) != n_raw:
            raise UsageError(f"time= has {len(extra[tname])} values for {n_raw} rows")
    batch = batch_of(loaded.prediction, loaded.info, weights=loaded.weights)
    where = str(loaded.info["path"])
    info = {"path": loaded.info["path"], "format": loaded.info["format"], "engine": "memory"}
    return monitor_rows(Piece(where, batch, n_raw, 0, extra), info, s, time=tname, **kw)
