r"""The command ``uqeval ucc``: files or loaded predictions -> bands -> UCC summaries -> one JSON dict.

Nothing here prints or plots (files are read through :mod:`uqeval.io` and the engines); the kernels are
in :mod:`uqeval.metrics.ucc`.

Steps
-----
1. :func:`band_of` turns one loaded prediction into the band the UCC scales: a point
   prediction :math:`\hat y` and bounds ``lower <= pred <= upper`` at ``level``:

   - ``gaussian``: :math:`\mu \pm z\sigma` with :math:`z = \Phi^{-1}(\tfrac12 + \tfrac{level}2)`;
     centre ``mean``.
   - ``intervals``: the pair at ``level``, or the file's only pair (with a note when its
     level differs); centre the ``mean`` column, else the midpoint ``(lower + upper) / 2``
     (with a note).
   - ``quantiles``: the central pair :math:`(q_\tau, q_{1-\tau})` with :math:`1 - 2\tau =
     level`; centre the median :math:`q_{0.5}` (required).
   - ``samples``: the empirical quantiles :math:`(1 \mp level) / 2` of the members
     (Hyndman & Fan type 7, as ``numpy.quantile``); centre the members' median, which lies
     inside every central band (the mean of skewed members need not).
   - ``point``: an error (the UCC needs intervals).

   The UCC scales each side of the band around :math:`\hat y` (Navratil et al., Sec. 2), so
   :math:`\hat y` must lie inside ``[lower, upper]``; a centre outside its band (possible for
   a ``mean`` column that does not belong to the intervals) is an :class:`~uqeval.errors.InputError` naming the file and first row.
2. :func:`check_same_targets` (several files: the same ``y_true`` in the same order) and,
   for the permutation test, :func:`check_same_pred` (the same :math:`\hat y`).
3. One fold for every engine: a :class:`UccState` per batch of the same rows of every model (plan:
   :func:`check_request`; merge: :meth:`UccState.merge`); :func:`finish` turns the merged state into the
   document. In memory (:func:`ucc_report`) the bands are the one batch and the state keeps their rows,
   so :func:`~uqeval.metrics.ucc.ucc_summary_rows` gives the exact curve (the bounds handed out block by
   block) and, on request, :func:`~uqeval.metrics.ucc.permutation_test` runs; streamed
   (:func:`uqeval.commands.ucc.stream.ucc_with_engine`) the state keeps binned critical scales. The
   document (schema ``uqeval.ucc/1``)::

       {
         "schema": "uqeval.ucc/1",
         "uqeval_version": "...",
         "settings": {"level", "x_axis", "y_axis", "normalize", "partial_x", "partial_y",
                      "cost", "permutation_test", "seed"},
         "n_rows": N,
         "models": {name: {"input": {...load info...},
                           "band": {"level", "bounds", "centre"},
                           "ucc": {"x_axis", "y_axis", "normalize", "auucc", "auucc_const",
                                   "gain", "partial", "op", "op_min"}}},
         "permutation_test": null | {... see permutation_test ...},
         "notes": ["..."]                     # only when there is something to point out
       }

4. :func:`plot_models` builds the input of :func:`~uqeval.plots.ucc.plot_ucc` from the curves the
   in-memory finish summarised (made once); the tables are rendered by :mod:`uqeval.report.ucc`.

:func:`run_ucc` is the one entry of every front end (the command line, :func:`uqeval.ucc`, the report's
UCC figure): files or Python's containers in, steps 1-4 on the engine chosen, the document (and the
plot's models) out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...errors import InputError, UsageError, option, phrase
from ...io.load import Loaded
from ...metrics.ucc import UCCCurve, permutation_test, ucc_summary_rows
from ...predictions import Prediction

if TYPE_CHECKING:
    from ...config import Settings
    from ...engine.options import EngineOptions

__all__ = [
    "SCHEMA",
    "Band",
    "band_of",
    "check_same_pred",
    "check_same_targets",
    "model_names",
    "plot_models",
    "run_ucc",
    "ucc_report",
]

SCHEMA = "uqeval.ucc/1"
# targets / predictions of two files agree when |a - b| <= _TOL * max(1, |a|)
_TOL = 1e-12


@dataclass(frozen=True)
class Band:
    """One model's band: targets, centre and bounds (``lower <= pred <= upper``), (N,) each.

    ``level`` is the nominal level of the bounds; ``bounds`` and ``centre`` say where
    they came from (written to the JSON); ``rows`` are the source file's row numbers
    (for messages); ``notes`` are remarks for the user. A Gaussian's bounds
    ``mean -+ z std`` are not stored (``lower = upper = None``): ``make_bounds(start, stop)``
    makes those of a block of rows; :meth:`bounds_of` answers both kinds.
    """

    name: str
    y_true: np.ndarray
    pred: np.ndarray
    lower: np.ndarray | None
    upper: np.ndarray | None
    level: float
    bounds: str
    centre: str
    info: dict[str, Any] = field(default_factory=dict)
    rows: np.ndarray | None = None
    notes: tuple[str, ...] = ()
    make_bounds: Callable[[int, int], tuple[np.ndarray, np.ndarray]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def source(self) -> str:
        return str(self.info.get("path", self.name))

    def bounds_of(self, start: int = 0, stop: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)`` of rows ``start:stop`` (all rows by default; made afresh when not stored)."""
        stop = self.y_true.size if stop is None else stop
        if self.lower is not None:
            assert self.upper is not None  # the bounds are stored together (band_of)
            return self.lower[start:stop], self.upper[start:stop]
        assert self.make_bounds is not None  # bounds not stored are made (band_of)
        return self.make_bounds(start, stop)

    def row(self, i: int) -> int:
        return int(self.rows[i]) if self.rows is not None else int(i)

    def subset(self, keep: np.ndarray) -> Band:
        """The band of the rows where ``keep`` is True (its bounds made whole for them)."""
        from dataclasses import replace

        lo, hi = self.bounds_of()
        rows = None if self.rows is None else self.rows[keep]
        return replace(
            self,
            y_true=self.y_true[keep],
            pred=self.pred[keep],
            lower=lo[keep],
            upper=hi[keep],
            rows=rows,
            make_bounds=None,
        )


# --------------------------------------------------------------------------- names


def model_names(paths: Sequence[str | Path]) -> list[str]:
    """File stems (``a.parquet`` -> ``a``; ``.csv.gz`` counts as one suffix), made unique:
    a stem that occurs more than once is prefixed by its parent directory, and a name
    still repeated gets ``#2``, ``#3``, ... in order."""
    stems, parents = [], []
    for p in paths:
        path = Path(p)
        name = path.name
        for suffix in (".csv.gz", ".parquet", ".pq", ".csv"):
            if name.lower().endswith(suffix):
                name = name[: -len(suffix)]
                break
        stems.append(name)
        parents.append(path.parent.name)
    out = [f"{par}/{s}" if stems.count(s) > 1 and par else s for s, par in zip(stems, parents)]
    seen: dict[str, int] = {}
    for i, n in enumerate(out):
        seen[n] = seen.get(n, 0) + 1
        if seen[n] > 1:
            out[i] = f"{n}#{seen[n]}"
    return out


# --------------------------------------------------------------------------- bands


def _level_key(level: float) -> str:
    from ...metrics.intervals import level_key

    return level_key(level)


def _bounds(p: Prediction, level: float, where: str) -> tuple[np.ndarray, np.ndarray, float, list[str]]:
    """``(lower, upper, level used, notes)`` of an interval-yielding prediction."""
    notes: list[str] = []
    carried = p.carried_levels()  # None: any level (Gaussian, samples)
    if carried is not None and p.kind == "intervals" and len(carried) == 1:
        if _level_key(carried[0]) != _level_key(level):
            notes.append(
                f"{where}: the file's only interval pair (level {_level_key(carried[0])}) is used, "
                f"not {option('level', _level_key(level))}"
            )
        lo, hi = p.interval(carried[0])
        return lo, hi, carried[0], notes
    try:
        lo, hi = p.interval(level)
    except KeyError:
        have = ", ".join(_level_key(c) for c in sorted(carried or [])) or "none"
        what = "interval pairs" if p.kind == "intervals" else "central quantile pairs (tau, 1 - tau)"
        raise InputError(
            f"{where}: no {p.kind} band at {option('level', _level_key(level))}: the file's {what} have "
            f"levels {have}; pass one of them with {option('level')}"
        ) from None
    return lo, hi, level, notes


def _centre(p: Any, lower, upper, used: float, where: str, notes: list[str]) -> tuple[np.ndarray, str, str]:
    """``(point prediction, what the bounds are, what the centre is)`` of a band at level ``used``: the
    mean, the midpoint of the bounds, the median quantile or the ensemble median."""
    kind = p.kind
    key = _level_key(used)
    if kind == "gaussian":
        pred = p.mean
        col = p.columns.get("mean", "mean")
        bounds = f"mean ± z·std at level {key}"
        centre = f"mean (column '{col}')"
    elif kind == "intervals":
        j = [_level_key(v) for v in p.levels].index(key)
        lo_c, hi_c = p.columns.get("lower", ["lower"]), p.columns.get("upper", ["upper"])
        lo_c = lo_c[j] if isinstance(lo_c, list) else lo_c
        hi_c = hi_c[j] if isinstance(hi_c, list) else hi_c
        bounds = f"columns '{lo_c}', '{hi_c}' (level {key})"
        if p.mean is not None:
            pred = p.mean
            centre = f"mean (column '{p.columns.get('mean', 'mean')}')"
        else:
            assert lower is not None and upper is not None  # intervals: _bounds returns the stored bounds
            pred = 0.5 * (lower + upper)
            centre = "midpoint (lower + upper) / 2"
            notes.append(
                f"{where}: no point prediction column: the band centre is the midpoint of "
                f"'{lo_c}' and '{hi_c}' (give one with {option('mean')})"
            )
    elif kind == "quantiles":
        med = np.flatnonzero(np.abs(p.levels - 0.5) < 1e-9)
        if med.size == 0:
            have = ", ".join(_level_key(v) for v in p.levels)
            raise InputError(
                f"{where}: the UCC scales the band around a point prediction, but the quantile columns "
                f"(levels {have}) have no median; add a q_0.5 column"
            )
        pred = p.quantiles[:, int(med[0])]
        cols = p.columns.get("quantiles")
        col = cols[int(med[0])] if isinstance(cols, list) else "q_0.5"
        bounds = f"central quantile pair at level {key}"
        centre = f"median (column '{col}')"
    else:  # samples
        from ...metrics.samples import empirical_quantiles

        # the median lies inside every central band, whatever the skew of the members (map_rows hands
        # the kernel sorted members: no second sort, a second of 1e6 x 50)
        pred = p.map_rows(lambda s: empirical_quantiles(s, np.array([0.5]), presorted=True))[:, 0]
        bounds = (
            f"empirical quantiles {_level_key((1 - used) / 2)}, {_level_key((1 + used) / 2)} "
            f"of {p.samples.shape[1]} members"
        )
        centre = "ensemble median"
    return pred, bounds, centre


def _check_centre_inside(p: Any, pred, lower, upper, make_bounds, key: str, centre: str, where: str) -> None:
    """An error naming the first row whose point prediction lies outside its band (the UCC scales each side
    of the band around it)."""
    kind = p.kind
    if make_bounds is None:
        outside = (pred < lower) | (pred > upper)
    else:  # a Gaussian's centre lies inside its band: checked block by block all the same
        from ...metrics.blocks import BLOCK

        outside = np.empty(p.n, dtype=bool)
        for start in range(0, p.n, BLOCK):  # blocks of rows, not rows
            stop = min(start + BLOCK, p.n)
            lo, hi = make_bounds(start, stop)
            np.logical_or(pred[start:stop] < lo, pred[start:stop] > hi, out=outside[start:stop])
    if outside.any():
        i = int(np.flatnonzero(outside)[0])
        if lower is None:
            lower, upper = make_bounds(0, p.n)
        assert upper is not None  # made or stored together with lower
        r = int(p.rows[i]) if p.rows is not None else i
        fix = (
            f"use a different {option('level')} or give quantiles with a median (q_0.5) column"
            if kind == "samples"
            else "check that the point prediction belongs to these intervals"
        )
        raise InputError(
            f"{where}: the band centre ({centre}) lies outside its level-{key} interval in "
            f"{int(outside.sum())} row(s) (first at row {r}: centre {pred[i]:g}, interval "
            f"[{lower[i]:g}, {upper[i]:g}]); the UCC scales each side of the band around the "
            f"point prediction, so it must lie inside [lower, upper]; {fix}"
        )


def band_of(name: str, loaded: Loaded, level: float = 0.95) -> Band:
    """The band that the UCC of ``loaded`` scales (see the module docstring's table).

    Raises
    ------
    InputError
        Point predictions only; no targets; no band at ``level``; quantiles without a
        median; a centre outside its band (names the file, column and first row).
    """
    # dispatched on p.kind below, each branch using its class's attributes (mean, levels, quantiles, samples)
    p: Any = loaded.prediction
    where = str(loaded.info.get("path", name))
    kind = p.kind
    notes: list[str] = []
    if kind == "point":
        raise InputError(
            f"{where}: the UCC needs prediction intervals, but the file has point predictions only "
            f"(column '{p.columns.get('mean', 'mean')}'); add a std column ({option('std')}), lower/upper bounds "
            f"({option('lower')}/{option('upper')}), quantile or sample columns, or first fit a std with "
            f"{phrase('accrue')}"
        )
    if kind not in ("gaussian", "intervals", "quantiles", "samples"):
        raise InputError(f"{where}: the UCC is defined for regression intervals; a {kind} file has none")
    reason = p.no_band()
    if reason is not None:
        raise InputError(f"{where}: no UCC: {reason}")
    try:
        y = p.require_targets()
    except InputError as exc:
        raise exc.at(where) from None
    make_bounds = None
    if kind == "gaussian":  # bounds made block by block when needed (mean -+ z std): not held whole
        used = level

        def make_bounds(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
            part = p.subset(slice(start, stop)) if (start, stop) != (0, p.n) else p
            return _bounds(part, level, where)[:2]

        lower = upper = None
    else:
        lower, upper, used, bnotes = _bounds(p, level, where)
        notes.extend(bnotes)
    pred, bounds, centre = _centre(p, lower, upper, used, where, notes)
    key = _level_key(used)
    if loaded.info.get("n_fixed_crossing"):
        notes.append(crossing_note(where, loaded.info["n_fixed_crossing"]))
    _check_centre_inside(p, pred, lower, upper, make_bounds, key, centre, where)
    return Band(
        name=name,
        y_true=y,
        pred=np.asarray(pred, dtype=float),
        lower=None if lower is None else np.asarray(lower, dtype=float),
        upper=None if upper is None else np.asarray(upper, dtype=float),
        level=float(used),
        bounds=bounds,
        centre=centre,
        info=dict(loaded.info),
        rows=p.rows,
        notes=tuple(notes),
        make_bounds=make_bounds,
    )


# --------------------------------------------------------------------------- consistency


def _first_diff(a: np.ndarray, b: np.ndarray) -> int | None:
    bad = np.abs(b - a) > _TOL * np.maximum(1.0, np.abs(a))
    idx = np.flatnonzero(bad)
    return int(idx[0]) if idx.size else None


def check_same_targets(bands: Sequence[Band]) -> None:
    r"""Every band has the first band's targets in the same order:
    :math:`|y^{(k)}_i - y^{(1)}_i| \le 10^{-12} \max(1, |y^{(1)}_i|)`.

    Raises :class:`InputError` naming the first differing row.
    """
    if not bands:
        return
    ref = bands[0]
    for b in bands[1:]:
        if b.y_true.size != ref.y_true.size:
            raise InputError(
                f"{b.source} has {b.y_true.size} rows but {ref.source} has {ref.y_true.size}; the UCCs of "
                "several files are compared on the same targets: every file must hold the same rows in "
                f"the same order (with {option('nan_policy', 'omit')}, the same rows must be dropped everywhere)"
            )
        i = _first_diff(ref.y_true, b.y_true)
        if i is not None:
            raise InputError(
                f"{b.source}: target at row {b.row(i)} is {float(b.y_true[i])!r} but row {ref.row(i)} of "
                f"{ref.source} holds {float(ref.y_true[i])!r}; every file must hold the same targets in the same "
                "order"
            )


def check_same_pred(bands: Sequence[Band]) -> None:
    """Every band has the first band's centre :math:`\\hat y` (to ``1e-12``), as the paired
    permutation test needs. Raises :class:`InputError` naming the first differing row."""
    if not bands:
        return
    ref = bands[0]
    for b in bands[1:]:
        i = _first_diff(ref.pred, b.pred)
        if i is not None:
            raise InputError(
                f"{option('permutation_test')} needs every model to share the point prediction: at row {b.row(i)} "
                f"{b.source} has {float(b.pred[i])!r} (centre: {b.centre}) but {ref.source} has "
                f"{float(ref.pred[i])!r} (centre: {ref.centre}); the test swaps bands around one common "
                f"prediction (Navratil et al., Sec. 2.3), so drop {option('permutation_test')} to compare models "
                "with different predictions"
            )


# --------------------------------------------------------------------------- report


def _named(b: Band, func, *args, **kwargs):
    """Call a kernel; name the file in its InputError."""
    try:
        return func(*args, **kwargs)
    except UsageError:
        raise
    except InputError as exc:
        raise exc.at(b.source) from None


@dataclass(frozen=True)
class UccOptions:
    """What a UCC run is asked for, checked once when made and handed on as one value (the command line,
    :func:`uqeval.ucc`, the memory and streamed runs and the document all read it).

    ``x_axis``/``y_axis``: the curve's axes (``bandwidth``, ``missrate``, ``excess``, ``deficit``);
    ``normalize``: the unit of the widths (``std``, ``none``); ``partial_x``/``partial_y``: the range of the
    partial area (at most one); ``cost``: c of the minimum-cost point c*x + (1 - c)*y; ``n_permutations``
    and ``seed``: the paired permutation test (0: none); ``level``: the nominal level of every band
    (:func:`band_of`; the command line checks its ``--level``, a band that has none at it says so)."""

    x_axis: str = "bandwidth"
    y_axis: str = "missrate"
    normalize: str = "std"
    partial_x: Sequence[float] | None = None
    partial_y: Sequence[float] | None = None
    cost: float = 0.5
    n_permutations: int = 0
    seed: int = 0
    level: float = 0.95

    def __post_init__(self) -> None:
        from ...metrics.ucc import _check_axes, _check_cost, _check_normalize, _check_range

        _check_axes(self.x_axis, self.y_axis)
        _check_normalize(self.normalize)
        if self.partial_x is not None and self.partial_y is not None:
            raise UsageError(f"give at most one of {option('partial_x')} and {option('partial_y')}")
        for name in ("partial_x", "partial_y"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _check_range(value, name))
        _check_cost(self.cost)
        n_perm = int(self.n_permutations)
        if n_perm < 0:
            raise UsageError(f"{option('permutation_test')} must be >= 0, got {n_perm}")
        object.__setattr__(self, "n_permutations", n_perm)

    @property
    def curve(self) -> dict[str, Any]:
        """The keywords of :func:`~uqeval.metrics.ucc.ucc_summary` (axes, unit, partial area, cost)."""
        return {
            "x_axis": self.x_axis,
            "y_axis": self.y_axis,
            "normalize": self.normalize,
            "partial_x": self.partial_x,
            "partial_y": self.partial_y,
            "cost": self.cost,
        }


def crossing_note(where: str, n: int) -> str:
    """The note of a file whose ``n`` rows had crossing quantiles, sorted (in memory :func:`band_of` adds it;
    streamed, the finish, once the rows are counted)."""
    return f"{where}: {n} row(s) had crossing quantiles and were sorted ({option('fix_crossing')})"


def check_request(options: UccOptions, n_models: int, weighted: bool, needs_all_rows: bool) -> None:
    """The plan's checks of a run of ``n_models`` files (``weighted``: with row weights) whose state keeps
    every row (``needs_all_rows``) or not."""
    n_perm = options.n_permutations
    if not n_models:
        raise UsageError("uqeval ucc needs at least one prediction file")
    if n_perm and not needs_all_rows:
        from ...engine.options import not_streamed

        raise not_streamed("permutation_test", "it swaps the bands of every row between models")
    if n_perm and n_models < 2:
        raise UsageError(f"{option('permutation_test')} compares models: give at least two prediction files")
    if weighted and n_perm:
        raise UsageError(
            f"the UCC permutation test is not weighted: leave out {option('weights')} or "
            f"{option('permutation_test')}"
        )


class UccState:
    """The fold of ``uqeval ucc``: what it keeps of each model (``names``, read from ``specs``) while the rows
    are read, one per record batch, per Dask task, or in memory for all rows (one batch: :func:`ucc_report`).

    The engine decides what a model keeps through ``needs_all_rows``: in memory (:func:`ucc_report`) True,
    the state keeps its one batch's :class:`Band` and weights, from which the finish computes the exact curve
    (:func:`~uqeval.metrics.ucc.ucc_summary_rows`) and the permutation test (which swaps the bands of every
    row between models); on the stream and Dask engines (:func:`~.stream.ucc_with_engine`) False, it keeps
    the cells of critical scales of :func:`~.stream.file_state`, merged batch by batch
    (:func:`~.stream.merge_file`), and the finish reports the binned curve with its bounds
    (:func:`~.stream.finalize_file`). A state that keeps its rows is never merged (memory is one batch).
    ``options``: the run's :class:`UccOptions` (the bands at ``options.level``)."""

    def __init__(
        self, names: Sequence[str], specs: Sequence[str], options: UccOptions, needs_all_rows: bool = False
    ) -> None:
        n = len(names)
        self.names, self.specs = list(names), list(specs)
        self.options, self.needs_all_rows = options, needs_all_rows
        self.parts: list[Any] = [None] * n  # per model: its Band (all rows) or its cells (file_state)
        self.weights: np.ndarray | None = None  # needs_all_rows: the positive weights of the rows kept
        self.infos: list[dict[str, Any]] = [{} for _ in range(n)]  # streamed: representation, columns
        # streamed: per model the rows read, dropped (NaN/inf) and with crossing quantiles sorted
        self.counts = np.zeros((n, 3), dtype=np.int64)
        self.bands: list[dict[str, Any] | None] = [None] * n  # per model: its band's description
        self.notes: list[list[str]] = [[] for _ in range(n)]
        self.n = self.n_zero = 0  # rows kept (of every model: check_same_targets), rows of weight 0 dropped
        self.weighted, self.w = False, 0.0  # with weights: their total

    def add(self, piece: Any) -> None:
        """One aligned record batch of every model (a :class:`~uqeval.engine.aligned.Rowset`): the same kept
        rows (:func:`~uqeval.engine.aligned.check_same_rows`, rows of weight 0 dropped by the engine), counted
        into each model's ``input`` entries, and their bands folded in (:meth:`add_bands`)."""
        from ...engine.aligned import check_same_rows
        from ...io.load import Loaded

        check_same_rows(piece.files, [b.prediction for b in piece.batches])
        bands = []
        for i, batch in enumerate(piece.batches):
            pred = batch.prediction
            self.counts[i] += (piece.rows, batch.n_dropped, int(getattr(pred, "n_fixed", 0) or 0))
            if pred is not None:
                self.infos[i] = self.infos[i] or {"representation": pred.kind, "columns": batch.columns}
                bands.append(
                    band_of(self.names[i], Loaded(pred, {"path": self.specs[i]}), self.options.level)
                )
        first = piece.batches[0]
        self.n_zero += piece.rows - first.n_dropped - (bands[0].y_true.size if bands else 0)  # by the engine
        if bands:
            self.add_bands(bands, first.weights)  # the first file's weights (as in memory)

    def add_bands(self, bands: Sequence[Band], weights: Any = None, column: str | None = None) -> None:
        """The bands of the same rows of every model, with their ``weights`` (one per row, checked here,
        ``column``: their column, for the messages; None: unweighted): the targets compared
        (:func:`check_same_targets`), and the centres for the permutation test (:func:`check_same_pred`),
        the rows of weight 0 dropped, each band folded into its model."""
        check_same_targets(bands)
        if self.options.n_permutations:
            check_same_pred(bands)
        if weights is not None:
            from ...weights import check_weights, drop_zero

            weights = check_weights(weights, column, n=bands[0].y_true.size)
            self.weighted = True
            self.w += float(weights.sum())
            weights, bands, dropped = drop_zero(weights, *bands)
            self.n_zero += dropped
        self.n += bands[0].y_true.size
        for i, b in enumerate(bands):
            if self.bands[i] is None:
                self.bands[i] = {"level": b.level, "bounds": b.bounds, "centre": b.centre}
            self.notes[i] += [n for n in b.notes if n not in self.notes[i]]
            if self.needs_all_rows:
                assert self.parts[i] is None  # memory folds its rows as one batch
                self.parts[i] = b
                continue
            from .stream import file_state, merge_file

            try:
                state = file_state(b.y_true, b.pred, *b.bounds_of(), weights)
            except InputError as exc:
                raise exc.at(b.source) from None
            self.parts[i] = merge_file(self.parts[i], state)
        if self.needs_all_rows:
            self.weights = weights

    def merge(self, other: UccState) -> UccState:
        """Both parts' rows (associative; the cells of the states are a union)."""
        from .stream import merge_file

        assert not self.needs_all_rows  # memory folds its rows as one batch
        out = UccState(self.names, self.specs, self.options)
        out.weighted, out.w = self.weighted or other.weighted, self.w + other.w
        out.n, out.n_zero, out.counts = (
            self.n + other.n,
            self.n_zero + other.n_zero,
            self.counts + other.counts,
        )
        for i, (a, b) in enumerate(zip(self.parts, other.parts)):
            out.parts[i] = a if b is None else b if a is None else merge_file(a, b)
            out.infos[i], out.bands[i] = self.infos[i] or other.infos[i], self.bands[i] or other.bands[i]
            out.notes[i] = list(dict.fromkeys(self.notes[i] + other.notes[i]))
        return out


def finish(
    state: UccState,
    inputs: Sequence[dict[str, Any]],
    engine: str = "memory",
    column: str | None = None,
    notes: Sequence[str] = (),
    curves: list[UCCCurve] | None = None,
) -> dict[str, Any]:
    """The ``uqeval.ucc/1`` document of a merged :class:`UccState`, whichever engine folded it: per model its
    ``input`` entry (``inputs``; with ``approximate`` and ``bounds`` for a binned curve), band and ``ucc``
    summary, the permutation test, ``notes`` (the source's) with the models' own, and the ``weights`` block
    (``column``: the weights' column). ``curves``: a list that gets each model's exact curve and its constant
    band's, in turn, as they are summarised (a state that keeps its rows)."""
    options = state.options
    notes = [*notes, *(n for model in state.notes for n in model)]
    models: dict[str, Any] = {}
    for i, (name, part) in enumerate(zip(state.names, state.parts)):
        if part is None:
            raise InputError(
                f"{state.specs[i]}: every row has NaN/inf in a used column; nothing left to evaluate"
            )
        if state.needs_all_rows:
            summ = _named(
                part,
                ucc_summary_rows,
                part.y_true,
                part.pred,
                part.bounds_of,
                weights=state.weights,
                curves=curves,
                **options.curve,
            )
            info = inputs[i]
        else:
            from .stream import APPROXIMATE, finalize_file

            try:
                summ, bounds = finalize_file(part, options)
            except InputError as exc:
                raise exc.at(state.specs[i]) from None
            approximate = {k: v for k, v in APPROXIMATE.items() if k != "partial" or summ["partial"]}
            info = {**inputs[i], "approximate": approximate, "bounds": bounds}
        models[name] = {"input": info, "band": state.bands[i], "ucc": summ}
    if not state.needs_all_rows:
        from .stream import CELL_WIDTH

        notes.append(
            f"{option('engine', engine)}: the AUUCC, gain, partial area and minimum-cost point are approximate "
            f"(exact points at the smallest and largest critical scale of every {CELL_WIDTH}-relative cell); "
            "their bounds are in models.<name>.input.bounds; the original operating point (k = 1) is exact"
        )
    if state.weighted and state.n_zero:
        notes.append(f"weights: {state.n_zero} row(s) of weight 0 were dropped")
    from ..._version import __version__
    from ...io.writers import jsonable

    levels = [m["band"]["level"] for m in models.values()]
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "uqeval_version": __version__,
        "settings": {
            "level": levels[0] if len({_level_key(v) for v in levels}) == 1 else None,
            "x_axis": options.x_axis,
            "y_axis": options.y_axis,
            "normalize": options.normalize,
            "partial_x": list(options.partial_x) if options.partial_x is not None else None,
            "partial_y": list(options.partial_y) if options.partial_y is not None else None,
            "cost": float(options.cost),
            "permutation_test": options.n_permutations,
            "seed": int(options.seed),
        },
        "n_rows": state.n,
        "models": models,
        "permutation_test": _permutation(state),
        **({"notes": notes} if notes else {}),
    }
    if state.weighted:
        from ...weights import weights_block

        doc["weights"] = weights_block(column, state.w, state.n_zero, {})
        doc["n_rows"] = state.n + state.n_zero
    return cast("dict[str, Any]", jsonable(doc))


def _permutation(state: UccState) -> dict[str, Any] | None:
    """The paired permutation test of a state that keeps its rows (None: not asked for), with the widths
    ``pred - lower`` and ``upper - pred`` of each model around the first model's centre."""
    options, bands = state.options, list(state.parts)
    n_perm = options.n_permutations
    if not n_perm:
        return None
    from ...engine.progress import stage

    ref = bands[0]
    n_pairs = len(bands) * (len(bands) - 1) // 2
    widths = [
        (ref.pred - (b.pred - lo), ref.pred + (hi - b.pred)) for b in bands for lo, hi in [b.bounds_of()]
    ]
    test: dict[str, Any] = _named(
        ref,
        permutation_test,
        ref.y_true,
        ref.pred,
        widths,
        n_permutations=n_perm,
        seed=options.seed,
        x_axis=options.x_axis,
        y_axis=options.y_axis,
        normalize=options.normalize,
        names=[b.name for b in bands],
        progress=stage(f"UCC permutation test ({n_perm:,} per pair)", n_perm * n_pairs),
    )
    return test


def ucc_report(
    bands: Sequence[Band],
    options: UccOptions = UccOptions(),
    weights: Any = None,
    weights_column: str | None = None,
    curves: list[UCCCurve] | None = None,
) -> dict[str, Any]:
    """The JSON summary of ``uqeval ucc`` in memory (schema ``uqeval.ucc/1``, see the module docstring): the
    bands (of the same targets) folded as the one batch of a :class:`UccState` that keeps its rows, finished
    into the exact curves and, with ``options.n_permutations``, the permutation test (bands of the same
    centre, unweighted).

    ``weights`` (one per row, checked here; ``weights_column``: their column, for the JSON): the weighted
    UCC (:func:`~uqeval.metrics.ucc.ucc_summary_rows`): rows of weight 0 are dropped, the miss rate is a
    weighted fraction, band width, excess and deficit weighted means, the unit the weighted std of the
    targets. ``curves``: a list that gets each model's curve and its constant band's (:func:`finish`).
    """
    bands = list(bands)
    check_request(options, len(bands), weights is not None, needs_all_rows=True)
    state = UccState([b.name for b in bands], [b.source for b in bands], options, needs_all_rows=True)
    state.add_bands(bands, weights, weights_column)
    return finish(state, [b.info for b in bands], column=weights_column, curves=curves)


def run_ucc(
    sources: Sequence[str | Path] | Mapping[str, Loaded],
    settings: Settings,
    options: UccOptions,
    engine: EngineOptions | None = None,
    weights: Any = None,
    plot: bool = False,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
    """``(document, plot models)`` of ``uqeval ucc``, the one entry of every front end and engine.

    ``sources``: files (read with ``settings``; ``--weights``: the first file's column) or, in memory,
    ``{name: loaded}`` (Python's containers; ``weights``: one a row). ``engine``: as
    :meth:`~uqeval.engine.options.EngineOptions.choose` chose it for the files (None: memory). In memory each
    file is loaded, its band made (:func:`band_of`, at ``options.level``) and the bands folded as the one
    batch (:func:`ucc_report`); on the stream and Dask engines :func:`~.stream.ucc_with_engine` folds record
    batches (``progress``: rows read). ``plot``: also the models of :func:`~uqeval.plots.ucc.plot_ucc` (in
    memory; else None)."""
    if engine is not None and engine.streams:
        engine.memory_only(permutation_test=options.n_permutations, plot=plot)
        from .stream import ucc_with_engine

        files = list(cast("Sequence[str | Path]", sources))
        return ucc_with_engine(files, model_names(files), settings, engine, options, progress), None
    column = None
    if isinstance(sources, Mapping):
        bands = [band_of(name, loaded, options.level) for name, loaded in sources.items()]
    else:
        bands, weights, column = _file_bands(sources, settings, options.level)
    curves: list[UCCCurve] | None = [] if plot else None
    summary = ucc_report(bands, options, weights, column, curves)
    return summary, None if curves is None else plot_models(summary, curves)


def _file_bands(
    files: Sequence[str | Path], settings: Settings, level: float
) -> tuple[list[Band], np.ndarray | None, str | None]:
    """``(bands, weights, their column)`` of ``files`` read whole (the weights: the first file's ``--weights``
    column, as on the streaming engines)."""
    from ...engine.aligned import read_whole
    from ...engine.progress import stage

    bands, weights = [], None
    for i, (name, loaded) in enumerate(read_whole(files, model_names(files), settings)):
        weights = loaded.weights if i == 0 else weights
        bands.append(band_of(name, loaded, level))
    stage("UCC")
    return bands, weights, settings.columns.get("weights")


def plot_models(summary: dict[str, Any], curves: Sequence[UCCCurve]) -> list[dict[str, Any]]:
    """The ``models`` argument of :func:`~uqeval.plots.ucc.plot_ucc`: each model's exact curve and its
    constant band's, as :func:`finish` summarised them (``curves``: two per model, in turn), with the
    model's summary values."""
    out = []
    for i, (name, model) in enumerate(summary["models"].items()):
        u = model["ucc"]
        out.append(
            {
                "name": name,
                "curve": curves[2 * i],
                "const_curve": curves[2 * i + 1],
                **{key: u[key] for key in ("op", "op_min", "auucc", "auucc_const", "gain")},
            }
        )
    return out
