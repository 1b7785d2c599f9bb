"""Typed, validated prediction containers: one representation per kind of forecast.

Every container is built once by :mod:`uqeval.io` (or by a user of the Python
API), validates itself on construction and is immutable afterwards, so the
metric kernels can trust their arrays.

``columns`` maps each role (``"y_true"``, ``"mean"``, ``"std"``, ...) to the
name of the source column it came from; validation errors quote those names.
For 2-d roles (quantiles, samples, probabilities) the value is the list of
column names (or one list-column name). ``rows`` holds the original row number
of each row (after ``--nan-policy omit`` dropped some), used in messages only.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np

from .errors import InputError, option
from .metrics.intervals import bound_levels, central_pairs, level_key, pit_miss_shares
from .metrics.normal import central_z, ndtri
from .metrics.reliability import gaussian_pit
from .metrics.samples import (
    all_finite,
    empirical_quantiles,
    ensemble_mean_std,
    pit_bounds_samples,
    pit_samples,
    rows_sorted,
    sort_rows,
)
from .metrics.spread import ensemble_std
from .validation import as_float_array, bad_rows, check_finite, check_level, check_positive


def _colname(columns: dict[str, Any], role: str, j: int | None = None) -> str:
    name = columns.get(role, role)
    if isinstance(name, (list, tuple)):
        if j is None:
            return ", ".join(map(str, name))
        return str(name[j]) if j < len(name) else f"{role}[{j}]"
    return str(name) if j is None else f"{name}[{j}]"


def _cellname(columns: dict[str, Any], role: str, j: int, k: int | None = None) -> str:
    """Column of entry ``j`` of a 2-d role; for an (N, M, K) block flattened member-major
    (``k`` classes per member) a list column is named ``name[member][class]``."""
    name = columns.get(role, role)
    if k is not None and not isinstance(name, (list, tuple)):
        return f"{name}[{j // k}][{j % k}]"
    return _colname(columns, role, j)


def _row(rows: np.ndarray | None, i: int) -> int:
    return int(rows[i]) if rows is not None else int(i)


#: bytes of a block of rows of the validity checks below (fast path: no full-size temporaries)
_CHECK_BLOCK_BYTES = 1 << 21


def _rows_pass(arr: np.ndarray, ok) -> bool:
    """True when ``ok(block)`` holds for every block of rows of ``arr`` (cache-sized blocks of rows).

    The checks run this first and build their full-size masks, for the message, only on failure."""
    row_bytes = max(1, arr[:1].nbytes)
    step = max(1, _CHECK_BLOCK_BYTES // row_bytes)
    return all(
        ok(arr[start : start + step]) for start in range(0, len(arr), step)
    )  # blocks of rows, not rows


def _check_2d(
    arr: np.ndarray,
    role: str,
    columns: dict,
    rows: np.ndarray | None,
    positive: bool = False,
    per_member: int | None = None,
) -> None:
    """Finite (and optionally positive) check of an (N, K) block, naming the column.

    ``per_member``: the block is an (N, M, K) array flattened to (N, M*K) with this K.
    """
    if _rows_pass(arr, lambda part: np.isfinite(part).all() and (not positive or (part > 0).all())):
        return
    bad = ~np.isfinite(arr)
    if positive:
        bad |= ~(arr > 0)
    if bad.any():
        n, first = bad_rows(bad)
        j = int(np.flatnonzero(bad[first])[0])
        val = arr[first, j]
        what = "finite" if not np.isfinite(val) else "> 0"
        raise InputError(
            f"{role} values must be {what}: {n} bad row(s) in column '{_cellname(columns, role, j, per_member)}' "
            f"(first at row {_row(rows, first)}, found {val:g})",
            fix="nan_policy" if what == "finite" else None,
        )


def _levels(levels, role: str) -> np.ndarray:
    lv = as_float_array(levels, f"{role} levels")
    for v in lv:
        check_level(v, f"{role} level")
    return lv


MAX_DRIFT = 0.05  # largest |sum - 1| that --renormalize rescales (as metrics.classification.validate_proba)


def _check_simplex(
    p: np.ndarray, role: str, columns: dict, rows: np.ndarray | None, atol: float, renormalize: bool
) -> np.ndarray:
    """Class probabilities (last axis) must be >= 0 and sum to 1 within ``atol``.

    ``p`` is (N, K) or (N, M, K) (one distribution per member); the message names the
    column (flat columns are ordered member-major, ``j * K + k``) and the row.
    """
    k = p.shape[-1]
    limit = MAX_DRIFT if renormalize else atol  # --renormalize rescales small drift only
    if not renormalize and _rows_pass(
        p, lambda part: not (part < 0).any() and (np.abs(part.sum(axis=-1) - 1.0) <= limit).all()
    ):
        return p
    neg = p < 0
    if neg.any():
        n, first = bad_rows(neg)
        j = int(np.flatnonzero(neg[first].ravel())[0])
        cell = _cellname(columns, role, j, k if p.ndim == 3 else None)
        raise InputError(
            f"probabilities must be >= 0: {n} row(s) with negative values in column "
            f"'{cell}' (first at row {_row(rows, first)}, found {p[first].ravel()[j]:g})"
        )
    sums = p.sum(axis=-1)
    off = ~(np.abs(sums - 1.0) <= limit)
    if off.any():
        n, first = bad_rows(off)
        if p.ndim == 2:
            where = f"columns '{_colname(columns, role)}'"
            found = sums[first]
        else:
            m = int(np.flatnonzero(off[first])[0])
            names = columns.get(role, role)
            if isinstance(names, (list, tuple)) and len(names) == p.shape[1] * k:
                where = f"member {m} columns '{', '.join(map(str, names[m * k : (m + 1) * k]))}'"
            else:
                where = f"member {m} of column '{_colname(columns, role)}'"
            found = sums[first, m]
        raise InputError(
            f"probabilities must sum to 1: {n} row(s) off the simplex in {where} "
            f"(first at row {_row(rows, first)}, sum {found:.9g})"
            + (
                f"; drift above {MAX_DRIFT:g} is not rescaled: check that the columns are probabilities"
                if renormalize
                else ""
            ),
            fix="logits" if renormalize else "renormalize",
        )
    return p / sums[..., None] if renormalize else p


def _check_labels(pred: Prediction, k: int, n: int, what: str) -> None:
    """Targets of a classification container: integers in 0..k-1, one per row."""
    y = pred.y_true
    if y is None:
        return
    bad = (y != np.round(y)) | (y < 0) | (y >= k)
    if bad.any():
        count, first = bad_rows(bad)
        raise InputError(
            f"labels must be integers in 0..{k - 1}: {count} bad value(s) in column "
            f"'{_colname(pred.columns, 'y_true')}' (first at row {_row(pred.rows, first)}, found {y[first]:g})"
        )
    if len(y) != n:
        raise InputError(f"labels have {len(y)} rows but {what} has {n}")


#: memo keys (:func:`_memo`, ``catalogue._memo``) whose values are functions of each row alone: arrays
#: with one entry per row, or dicts/tuples of them. :meth:`Prediction.subset` slices these instead of
#: recomputing them; so does any ``cover_index_<bins>`` key. A key whose value depends on other rows
#: (ranks, bins, fitted values) must not be listed.
ROW_MEMO = frozenset(
    {
        "pit",
        "pit_bounds",
        "moments",
        "proba",
        "top_label",
        "member_rows",
        "uncertainty_rows",
        "crps_rows",
        "cls_rows",
    }
)


def _slice_rows(value, mask, n: int):
    """``value`` restricted to ``mask`` (arrays of length n, dicts or tuples of them), else None."""
    if isinstance(value, np.ndarray):
        return value[mask] if value.ndim >= 1 and len(value) == n else None
    if isinstance(value, dict):
        parts = {k: _slice_rows(v, mask, n) for k, v in value.items()}
        return None if any(v is None for v in parts.values()) else parts
    if isinstance(value, tuple):
        items = tuple(_slice_rows(v, mask, n) for v in value)
        return None if any(v is None for v in items) else items
    return None


def _column(a: np.ndarray, j: int) -> np.ndarray:
    """Column ``j`` of a 2-d array as a read-only view (the container's data cannot be changed through it)."""
    view = a[:, j]
    view.flags.writeable = False
    return view


_MEMO_LOCK = threading.Lock()
_KEY_LOCKS: dict = {}  # one lock per memo key (a few dozen names), shared by all predictions


def _memo(pred: Prediction, key: Hashable, make):
    """Per-instance memo for derived arrays (the dataclass is frozen; not a field, so subset() drops it).

    Thread-safe: families computed in two threads (:func:`uqeval.catalogue.compute_metrics`) may ask for
    the same array at once, which is then made once. Each key has its own lock, held while its array is
    made (which may ask for other keys), so one thread making an array does not hold up another's.
    The locks live outside the instance, which stays picklable."""
    cache = pred.__dict__.setdefault("_cache", {})
    if key in cache:
        return cache[key]
    with _MEMO_LOCK:
        lock = _KEY_LOCKS.setdefault(key, threading.RLock())
    with lock:
        if key not in cache:
            cache[key] = make()
    return cache[key]


@dataclass(frozen=True)
class Prediction:
    """Base class: targets (optional for the apply side of recalibration) and provenance."""

    kind: ClassVar[str] = "prediction"
    # data first: the representation's own arrays are positional (Gaussian(y_true=mean, columns=std)); targets and
    # provenance are keyword-only
    y_true: np.ndarray | None = field(default=None, kw_only=True)
    columns: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, kw_only=True)
    rows: np.ndarray | None = field(default=None, repr=False, compare=False, kw_only=True)
    # optional per-member log-likelihoods log p(y_i | member j), (N, M): information criteria
    loglik: np.ndarray | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if self.y_true is not None:
            y = as_float_array(self.y_true, "y_true")
            check_finite(y, _colname(self.columns, "y_true"), self.rows, what="targets")
            object.__setattr__(self, "y_true", y)
        if self.loglik is not None:
            ll = as_float_array(self.loglik, "loglik", ndim=2)
            if ll.shape[1] < 2:
                raise InputError(
                    f"log-likelihoods need at least 2 members per row, found {ll.shape[1]} in "
                    f"'{_colname(self.columns, 'loglik')}'; give one column per member (loglik_0, loglik_1, ...)"
                )
            _check_2d(ll, "loglik", self.columns, self.rows)
            if self.y_true is not None and len(self.y_true) != ll.shape[0]:
                raise InputError(f"loglik has {ll.shape[0]} rows but y_true has {len(self.y_true)}")
            object.__setattr__(self, "loglik", ll)

    @property
    def n(self) -> int:
        raise NotImplementedError

    def _array_fields(self) -> list[str]:
        return [
            k
            for k, v in self.__dict__.items()
            if isinstance(v, np.ndarray)
            and k not in ("rows",)
            and v.ndim >= 1
            and len(v) == self.n
            and k != "levels"
        ]

    def row_numbers(self) -> np.ndarray:
        """The file's row number of each row (``rows``; ``0..N-1`` when no row was dropped)."""
        return self.rows if self.rows is not None else np.arange(self.n)

    def subset(self, mask: np.ndarray | slice) -> Prediction:
        """The same prediction restricted to the rows where ``mask`` is True (or an index array, or a
        ``slice``: then the arrays are views).

        Memoised per-row derivations (:data:`ROW_MEMO`) are sliced, not recomputed (``--by``).
        The rows of a validated prediction are valid: the copy is not validated again (with
        ``--by``, that was one more pass over the whole input per group).
        """
        import copy

        n = self.n
        changes = {k: getattr(self, k)[mask] for k in self._array_fields()}
        if self.rows is None and isinstance(mask, slice):  # a range of rows: a view, no full arange
            changes["rows"] = np.arange(*mask.indices(n))
        else:
            changes["rows"] = self.row_numbers()[mask]
        out = copy.copy(self)
        out.__dict__.pop("_cache", None)
        for key, value in changes.items():
            object.__setattr__(out, key, value)
        carried = {
            key: _slice_rows(value, mask, n)
            for key, value in self.__dict__.get("_cache", {}).items()
            if key in ROW_MEMO or isinstance(key, str) and key.startswith("cover_index_")
        }
        carried = {k: v for k, v in carried.items() if v is not None}
        if carried:
            out.__dict__.setdefault("_cache", {}).update(carried)
        return out

    # ------------------------------------------------------------------ derivations
    # Each representation answers these itself, so kernels, plots and UCC bands need no
    # switch on ``kind``. ``None`` means "this representation has no such thing".
    def point(self) -> np.ndarray | None:
        """The point prediction (N,), or None when the representation has none."""
        return None

    def spread(self) -> np.ndarray | None:
        """A predictive standard deviation per row (N,), or None."""
        return None

    def pit(self) -> np.ndarray | None:
        """Probability integral transform F_i(y_i) per row (N,), or None where it is not exact."""
        return None

    def quantile_keys(self) -> set[str] | None:
        """Level keys of the quantiles this prediction carries exactly; None: any level."""
        return set()

    def central_keys(self) -> set[str] | None:
        """Level keys of the central intervals this prediction carries exactly; None: any level."""
        return set()

    def quantiles_at(self, levels: np.ndarray) -> np.ndarray:
        """(N, Q) predicted quantiles at ``levels`` (each must be available: see :meth:`quantile_keys`)."""
        raise KeyError(f"{self.kind} predictions carry no quantiles")

    def intervals_at(self, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(N, L) lower and upper bounds of the central intervals at ``levels``.

        Any representation with quantiles at (1 ∓ level)/2 answers it; intervals and
        quantile files override it with their own pairs.
        """
        levels = np.asarray(levels, dtype=np.float64)
        q = self.quantiles_at(bound_levels(levels))
        return q[:, : levels.size], q[:, levels.size :]

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """Central interval (lower, upper), each (N,), at ``level``; KeyError if not carried."""
        lo, hi = self.intervals_at(np.array([float(level)]))
        return lo[:, 0], hi[:, 0]

    def carried_levels(self) -> list[float] | None:
        """Central levels the prediction carries (intervals, quantile pairs); None: any level."""
        return []

    def coverage_shares(self, level: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Each row's chance of missing the central ``level`` interval below and above, ``(below, above)``,
        where a 0/1 indicator of ``y`` outside :meth:`interval` would misstate the level (a finite
        ensemble); None: coverage is the indicator of ``lower <= y <= upper``."""
        return None

    def no_band(self) -> str | None:
        """Why a representation that makes central intervals holds none here (None: it holds some, or it
        is not one that makes them)."""
        return None

    def require_targets(self) -> np.ndarray:
        if self.y_true is None:
            raise InputError(
                "this operation needs targets, but the input has no target column", fix="targets"
            )
        return self.y_true


class _AnyLevel:
    """A full predictive distribution (Gaussian, samples): quantiles and intervals at any level."""

    def quantile_keys(self) -> None:
        return None

    def central_keys(self) -> None:
        return None

    def carried_levels(self) -> None:
        return None


@dataclass(frozen=True)
class Point(Prediction):
    """Point predictions only: ``mean`` (accuracy metrics only)."""

    kind: ClassVar[str] = "point"
    mean: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        mean = as_float_array(self.mean, "mean")
        check_finite(mean, _colname(self.columns, "mean"), self.rows, what="mean")
        object.__setattr__(self, "mean", mean)
        if self.y_true is not None and len(self.y_true) != len(mean):
            raise InputError(f"y_true has {len(self.y_true)} rows but mean has {len(mean)}")

    @property
    def n(self) -> int:
        return len(self.mean)

    def point(self) -> np.ndarray:
        return self.mean


@dataclass(frozen=True)
class Gaussian(_AnyLevel, Point):
    """Gaussian predictive distributions N(mean, std²)."""

    kind: ClassVar[str] = "gaussian"
    std: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        std = as_float_array(self.std, "std")
        name = _colname(self.columns, "std")
        check_finite(std, name, self.rows, what="std")
        check_positive(std, name, self.rows, what="std")
        if len(std) != len(self.mean):
            raise InputError(f"std has {len(std)} rows but mean has {len(self.mean)}")
        object.__setattr__(self, "std", std)

    def spread(self) -> np.ndarray:
        return self.std

    def pit(self) -> np.ndarray:
        return _memo(self, "pit", lambda: gaussian_pit(self.require_targets(), self.mean, self.std))

    def quantiles_at(self, levels: np.ndarray) -> np.ndarray:
        return self.mean[:, None] + self.std[:, None] * ndtri(np.asarray(levels, dtype=np.float64))[None, :]

    def intervals_at(self, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        # the central intervals of N(μ, σ²): symmetric half-widths z·σ, z = Φ⁻¹(½ + level/2)
        half = self.std[:, None] * central_z(levels)[None, :]
        upper = self.mean[:, None] + half
        return np.subtract(self.mean[:, None], half, out=half), upper  # the lower bounds reuse `half`


class _CarriedLevels:
    """The PIT bin of quantile and interval forecasts: between the quantile levels they carry."""

    def pit_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)``: the carried quantile levels that bracket each target's PIT (for intervals the levels
        (1 ∓ level)/2 of its central levels; :func:`~uqeval.metrics.calibration_tests.quantile_pit_bounds`),
        computed once. The one place of this bin: the calibration tests' randomised PIT and the monitor's
        PIT test take it."""
        from .metrics.calibration_tests import quantile_pit_bounds

        def make() -> tuple[np.ndarray, np.ndarray]:
            pred = cast("Quantiles | Intervals", self)
            levels = np.asarray(pred.levels, dtype=np.float64)
            if pred.kind == "intervals":
                levels = np.unique(bound_levels(levels))
            return quantile_pit_bounds(pred.require_targets(), pred.quantiles_at(levels), levels)

        return cast("tuple[np.ndarray, np.ndarray]", _memo(cast("Prediction", self), "pit_bounds", make))


@dataclass(frozen=True)
class Intervals(_CarriedLevels, Prediction):
    """Central prediction intervals at one or more nominal levels.

    ``lower``/``upper`` have shape (N, L) for ``levels`` of shape (L,); ``mean``
    (a point prediction) is optional. Asymmetric intervals are normal.
    """

    kind: ClassVar[str] = "intervals"
    lower: np.ndarray = None  # type: ignore[assignment]
    upper: np.ndarray = None  # type: ignore[assignment]
    levels: np.ndarray = None  # type: ignore[assignment]
    mean: np.ndarray | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        lo = as_float_array(self.lower, "lower", ndim=(1, 2))
        hi = as_float_array(self.upper, "upper", ndim=(1, 2))
        lo = lo[:, None] if lo.ndim == 1 else lo
        hi = hi[:, None] if hi.ndim == 1 else hi
        levels = _levels(np.atleast_1d(self.levels), "interval")
        if lo.shape != hi.shape or lo.shape[1] != len(levels):
            raise InputError(f"lower {lo.shape}, upper {hi.shape} and levels {levels.shape} do not match")
        _check_2d(lo, "lower", self.columns, self.rows)
        _check_2d(hi, "upper", self.columns, self.rows)
        crossed = lo > hi
        if crossed.any():
            n, first = bad_rows(crossed)
            j = int(np.flatnonzero(crossed[first])[0])
            raise InputError(
                f"lower > upper in {n} row(s): columns '{_colname(self.columns, 'lower', j)}' and "
                f"'{_colname(self.columns, 'upper', j)}' (first at row {_row(self.rows, first)}: "
                f"{lo[first, j]:g} > {hi[first, j]:g}); swap or fix the bounds"
            )
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "levels", levels)
        if self.mean is not None:
            mean = as_float_array(self.mean, "mean")
            check_finite(mean, _colname(self.columns, "mean"), self.rows)
            object.__setattr__(self, "mean", mean)

    @property
    def n(self) -> int:
        return self.lower.shape[0]

    def point(self) -> np.ndarray | None:
        return self.mean

    def carried_levels(self) -> list[float]:
        return [float(v) for v in self.levels]

    def central_keys(self) -> set[str]:
        return {level_key(p) for p in self.levels}

    def quantile_keys(self) -> set[str]:
        return {level_key((1.0 - p) / 2.0) for p in self.levels} | {
            level_key((1.0 + p) / 2.0) for p in self.levels
        }

    def quantiles_at(self, levels: np.ndarray) -> np.ndarray:
        cols = {}
        for j, p in enumerate(self.levels):
            cols[level_key((1.0 - p) / 2.0)] = self.lower[:, j]
            cols[level_key((1.0 + p) / 2.0)] = self.upper[:, j]
        try:
            return np.column_stack([cols[level_key(t)] for t in levels])
        except KeyError as e:
            raise KeyError(f"no interval bound at quantile level {e.args[0]}") from None

    def intervals_at(self, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        index = {level_key(p): j for j, p in enumerate(self.levels)}
        j = [index[level_key(p)] for p in levels]
        return self.lower[:, j], self.upper[:, j]

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """The carried central interval at ``level`` as read-only views of its columns (no copies)."""
        j = {level_key(p): j for j, p in enumerate(self.levels)}[level_key(float(level))]
        return _column(self.lower, j), _column(self.upper, j)


@dataclass(frozen=True)
class Quantiles(_CarriedLevels, Prediction):
    """Predictive quantiles: ``quantiles`` (N, Q) at increasing ``levels`` (Q,)."""

    kind: ClassVar[str] = "quantiles"
    quantiles: np.ndarray = None  # type: ignore[assignment]
    levels: np.ndarray = None  # type: ignore[assignment]
    fix_crossing: bool = field(default=False, compare=False)
    n_fixed: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        q = as_float_array(self.quantiles, "quantiles", ndim=2)
        levels = _levels(self.levels, "quantile")
        if q.shape[1] != len(levels):
            raise InputError(f"quantiles have {q.shape[1]} columns but {len(levels)} levels")
        order = np.argsort(levels, kind="stable")
        if np.any(np.diff(levels[order]) <= 0):
            raise InputError(f"quantile levels must be distinct, got {sorted(levels.tolist())}")
        # column-major, as the indexing below gives: each level's quantiles contiguous. Columns already in
        # level order (the loader's block, filled column-major) are kept as they are: no (N, Q) copy
        q = q[:, order] if np.any(order != np.arange(order.size)) else np.asfortranarray(q)
        levels = levels[order]
        cols = self.columns.get("quantiles")
        if isinstance(cols, (list, tuple)) and len(cols) == len(
            order
        ):  # a copy: the caller's dict stays as it is
            object.__setattr__(self, "columns", {**self.columns, "quantiles": [cols[i] for i in order]})
        _check_2d(q, "quantiles", self.columns, self.rows)
        crossing = q[:, 1:] < q[:, :-1]
        if crossing.any():
            if not self.fix_crossing:
                n, first = bad_rows(crossing)
                j = int(np.flatnonzero(crossing[first])[0])
                raise InputError(
                    f"crossing quantiles in {n} row(s): column '{_colname(self.columns, 'quantiles', j + 1)}' < "
                    f"'{_colname(self.columns, 'quantiles', j)}' (first at row {_row(self.rows, first)}: "
                    f"{q[first, j + 1]:g} < {q[first, j]:g})",
                    fix="fix_crossing",
                )
            object.__setattr__(self, "n_fixed", int(crossing.any(axis=1).sum()))
            q = np.sort(q, axis=1)
        object.__setattr__(self, "quantiles", q)
        object.__setattr__(self, "levels", levels)

    @property
    def n(self) -> int:
        return self.quantiles.shape[0]

    def point(self) -> np.ndarray | None:
        """The predicted median q_0.5, or None when the file carries no 0.5 level."""
        i = np.flatnonzero(np.abs(self.levels - 0.5) < 1e-9)
        return self.quantiles[:, i[0]] if i.size else None

    def _pairs(self) -> list[tuple[int, int, float]]:
        return central_pairs(self.levels)

    def carried_levels(self) -> list[float]:
        return [lv for _, _, lv in self._pairs()]

    def central_keys(self) -> set[str]:
        return {level_key(p) for _, _, p in self._pairs()}

    def no_band(self) -> str | None:
        """Why the quantile columns hold no central interval (None when some pair tau, 1 - tau is carried):
        the reason ``coverage`` and ``ucc`` give for having nothing to show."""
        if self._pairs():
            return None
        names = [_colname(self.columns, "quantiles", j) for j in range(self.levels.size)]
        if self.levels.size == 1:
            found = f"only a single quantile level (column '{names[0]}', level {level_key(self.levels[0])})"
        else:
            found = (
                f"no pair of levels tau and 1 - tau among the quantile columns "
                f"{', '.join(repr(n) for n in names)} (levels {', '.join(level_key(t) for t in self.levels)})"
            )
        return (
            f"no central interval, {found}; a central interval needs quantiles at levels tau and "
            "1 - tau (e.g. q0.05 and q0.95 for 90%)"
        )

    def quantile_keys(self) -> set[str]:
        return {level_key(t) for t in self.levels}

    def quantiles_at(self, levels: np.ndarray) -> np.ndarray:
        index = {level_key(t): j for j, t in enumerate(self.levels)}
        return self.quantiles[:, [index[level_key(t)] for t in levels]]

    def intervals_at(self, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pairs = {level_key(p): (i, k) for i, k, p in self._pairs()}
        ij = [pairs[level_key(p)] for p in levels]
        return self.quantiles[:, [a for a, _ in ij]], self.quantiles[:, [b for _, b in ij]]

    def interval(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """The central interval at a carried ``level`` as read-only views of its two quantile columns."""
        i, k = {level_key(p): (i, k) for i, k, p in self._pairs()}[level_key(float(level))]
        return _column(self.quantiles, i), _column(self.quantiles, k)


@dataclass(frozen=True)
class Samples(_AnyLevel, Prediction):
    """Ensemble members or posterior draws: ``samples`` (N, M), member axis last, M >= 2.

    With ``allow_missing`` (``--nan-policy omit``) a row may lack some members
    (NaN), as long as it keeps at least 2; metric code reaches the members through
    :meth:`map_rows`, which hands each kernel dense blocks of equal member count.
    """

    kind: ClassVar[str] = "samples"
    samples: np.ndarray = None  # type: ignore[assignment]
    allow_missing: bool = field(default=False, compare=False)
    member_axis: InitVar[int] = -1  # the axis of ``samples`` that holds the members

    def __post_init__(self, member_axis: int = -1) -> None:
        super().__post_init__()
        s = np.asarray(self.samples)
        if member_axis not in (-1, s.ndim - 1):
            s = np.moveaxis(s, member_axis, -1)
        s = as_float_array(s, "samples", ndim=2)
        if s.shape[1] < 2:
            raise InputError(
                f"samples need at least 2 members per row, found {s.shape[1]} in "
                f"'{_colname(self.columns, 'samples')}'; a single draw is a point prediction (use {option('mean')})"
            )
        ragged = not all_finite(s)  # in blocks of rows: no (N, M) temporary when every member is finite
        if ragged and self.allow_missing:
            finite = np.isfinite(s)
            short = finite.sum(axis=1) < 2
            if short.any():
                n, first = bad_rows(short)
                raise InputError(
                    f"samples need at least 2 finite members per row: {n} row(s) in "
                    f"'{_colname(self.columns, 'samples')}' have fewer (first at row {_row(self.rows, first)})"
                )
            s = np.where(finite, s, np.nan)
        elif ragged:
            _check_2d(s, "samples", self.columns, self.rows)  # raises, naming the first bad member
        object.__setattr__(self, "samples", s)
        object.__setattr__(self, "_ragged", ragged)

    def sorted_samples(self) -> np.ndarray:
        """The members sorted ascending in each row (NaN last), computed once: the input itself when
        its rows are already sorted (the loader sorts them in place; checking is one cheap pass),
        else a copy sorted in cache-sized blocks of rows."""
        return _memo(
            self, "sorted", lambda: self.samples if rows_sorted(self.samples) else sort_rows(self.samples)
        )

    @property
    def n(self) -> int:
        return self.samples.shape[0]

    @property
    def ragged(self) -> bool:
        """True when some rows lack members (NaN), only possible with ``allow_missing``."""
        return self._ragged  # type: ignore[attr-defined]

    def moments(self) -> tuple[np.ndarray, np.ndarray]:
        """Members' mean and standard deviation (ddof 1) per row, computed once."""
        return _memo(self, "moments", lambda: self.map_rows(ensemble_mean_std))

    def point(self) -> np.ndarray:
        """The ensemble mean."""
        return self.moments()[0]

    def spread(self) -> np.ndarray:
        return self.moments()[1]

    def member_counts(self) -> np.ndarray:
        """Number of (finite) members of each row: M everywhere, fewer in rows with missing members."""

        def make():
            if not self.ragged:
                return np.full(self.n, float(self.samples.shape[1]))
            return np.isfinite(self.samples).sum(axis=1).astype(np.float64)

        return _memo(self, "member_counts", make)

    def ensemble_spread(self) -> np.ndarray:
        """The spread of a finite ensemble on the scale of ``y − ensemble mean``
        (:func:`uqeval.metrics.spread.ensemble_std` of the members' ddof-1 standard deviation and their
        counts). Spread calibration (ENCE, UCE) and ``spread_skill`` use it."""
        return _memo(self, "ensemble_spread", lambda: ensemble_std(self.spread(), self.member_counts()))

    def pit(self) -> np.ndarray:
        return _memo(
            self, "pit", lambda: self.map_rows(lambda s, y: pit_samples(y, s), self.require_targets())
        )

    def pit_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)``: each target's randomised PIT lies uniformly in ``[low, high]``, its rank among the
        members over M + 1 (:func:`~uqeval.metrics.samples.pit_bounds_samples`), computed once."""
        return _memo(
            self,
            "pit_bounds",
            lambda: self.map_rows(lambda s, y: pit_bounds_samples(y, s), self.require_targets()),
        )

    def coverage_shares(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """The randomised PIT's chances of missing the central ``level`` band below and above
        (:func:`~uqeval.metrics.intervals.pit_miss_shares`): a calibrated ensemble of any size misses at
        exactly ``1 - level``, which no interval between its members does (10 members: [min, max] covers
        9/11)."""
        return pit_miss_shares(*self.pit_bounds(), level)

    def quantiles_at(self, levels: np.ndarray) -> np.ndarray:
        levels = np.asarray(levels, dtype=np.float64)
        return self.map_rows(lambda s: empirical_quantiles(s, levels, presorted=True))

    def map_rows(self, fn, *row_args: np.ndarray):
        """Apply a row-wise kernel ``fn(samples, *row_args)`` that returns an array (or tuple of arrays)
        with rows first, handling rows with missing members.

        ``fn`` sees the members sorted ascending in each row (:meth:`sorted_samples`; kernels may
        skip their own sort). Without missing members this is ``fn(self.sorted_samples(), *row_args)``.
        Otherwise rows are grouped by their number of members m and ``fn`` sees each group's members
        as a dense (n_m, m) block (a loop over distinct member counts, not rows); results are scattered
        back into row order. Every sample kernel is invariant to member order, which makes this exact.
        """
        if not self.ragged:
            return fn(self.sorted_samples(), *row_args)
        counts = np.isfinite(self.samples).sum(axis=1)
        dense = self.sorted_samples()  # NaN sorts last
        out: list[np.ndarray] | None = None
        single = False
        for m in np.unique(counts):
            idx = np.flatnonzero(counts == m)
            res = fn(dense[idx, :m], *(np.asarray(a)[idx] for a in row_args))
            if not isinstance(res, tuple):
                res, single = (res,), True
            if out is None:
                out = [np.empty((self.n,) + np.shape(r)[1:], dtype=np.asarray(r).dtype) for r in res]
            for o, r in zip(out, res):
                o[idx] = r
        assert out is not None
        return out[0] if single else tuple(out)


class _Classifier:
    """Shared by the classification containers: integer labels and the top label of the predictive mean."""

    if TYPE_CHECKING:  # provided by the Prediction container this is mixed into

        @property
        def proba(self) -> np.ndarray: ...

        def require_targets(self) -> np.ndarray: ...

    @property
    def labels(self) -> np.ndarray:
        return self.require_targets().astype(np.int64)

    def top_label(self) -> tuple[np.ndarray, np.ndarray]:
        """Confidence (max probability of the predictive distribution) and correctness (0/1) of each row."""

        def make():
            proba = self.proba
            correct = (np.argmax(proba, axis=1) == self.labels).astype(np.float64)
            return np.max(proba, axis=1), correct  # the max is the value at the argmax

        return _memo(cast("Prediction", self), "top_label", make)  # always mixed into a Prediction


@dataclass(frozen=True)
class Categorical(_Classifier, Prediction):
    """Class probabilities ``proba`` (N, K) on the simplex; ``y_true`` holds integer labels 0..K-1."""

    kind: ClassVar[str] = "categorical"
    proba: np.ndarray = None  # type: ignore[assignment]
    atol: float = field(default=1e-6, compare=False)
    renormalize: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        p = as_float_array(self.proba, "proba", ndim=(1, 2))
        if p.ndim == 1:  # binary: P(class 1)
            p = np.column_stack([1.0 - p, p])
        _check_2d(p, "proba", self.columns, self.rows)
        p = _check_simplex(p, "proba", self.columns, self.rows, self.atol, self.renormalize)
        object.__setattr__(self, "proba", p)
        _check_labels(self, p.shape[1], p.shape[0], "proba")

    @property
    def n(self) -> int:
        return self.proba.shape[0]


class _Mixture(_Classifier):
    """A classifier whose predictive distribution ``proba`` is the mean of a richer output, the ``_role``
    columns (ensemble members, Dirichlet concentrations)."""

    _role: ClassVar[str]
    _how: ClassVar[str]  # the proba column's name: "<_how> <the _role columns>"

    def mean_prediction(self) -> Categorical:
        """The predictive mean as a :class:`Categorical` (same targets, rows and log-likelihoods)."""
        p = cast("Prediction", self)  # always mixed into a Prediction
        cols = {k: v for k, v in p.columns.items() if k != self._role}
        cols["proba"] = f"{self._how} {_colname(p.columns, self._role)}"
        return Categorical(y_true=p.y_true, columns=cols, rows=p.rows, proba=self.proba, loglik=p.loglik)


@dataclass(frozen=True)
class MemberCategorical(_Mixture, Prediction):
    """An ensemble of classifiers: ``member_proba`` (N, M, K), each member's row on the simplex.

    ``y_true`` holds integer labels 0..K-1. The ensemble's prediction is the mean over
    members, :attr:`proba` (N, K), which the classification metrics score exactly as a
    :class:`Categorical`; the member axis feeds the ensemble metrics (uncertainty
    decomposition, diversity). ``columns["member_proba"]`` lists the ``m{j}_p_{k}``
    columns member-major (``j * K + k``) or names one list-of-lists column.
    """

    kind: ClassVar[str] = "members"
    _role: ClassVar[str] = "member_proba"
    _how: ClassVar[str] = "mean of"
    member_proba: np.ndarray = None  # type: ignore[assignment]
    atol: float = field(default=1e-6, compare=False)
    renormalize: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        p = as_float_array(self.member_proba, "member_proba", ndim=3)
        n, m, k = p.shape
        if m < 2:
            raise InputError(
                f"an ensemble needs at least 2 members, found {m} in '{_colname(self.columns, 'member_proba')}'; "
                "a single member is a plain classifier (name its columns p_0..p_{K-1})"
            )
        if k < 2:
            raise InputError(f"member probabilities need at least 2 classes, found {k}")
        flat = p.reshape(n, m * k)
        _check_2d(flat, "member_proba", self.columns, self.rows, per_member=k)
        p = _check_simplex(p, "member_proba", self.columns, self.rows, self.atol, self.renormalize)
        object.__setattr__(self, "member_proba", p)
        _check_labels(self, k, n, "member_proba")

    @property
    def proba(self) -> np.ndarray:
        """The ensemble's mean prediction (N, K)."""
        # einsum: several times faster than .mean(axis=1), a reduction over the middle axis
        return _memo(
            self, "proba", lambda: np.einsum("imk->ik", self.member_proba) / self.member_proba.shape[1]
        )

    @property
    def n(self) -> int:
        return self.member_proba.shape[0]


@dataclass(frozen=True)
class Dirichlet(_Mixture, Prediction):
    """Dirichlet outputs (prior networks, evidential models): concentrations ``alpha`` (N, K) > 0.

    The predictive distribution is the Dirichlet mean :attr:`proba` = alpha / sum(alpha),
    scored as a :class:`Categorical`; ``y_true`` holds integer labels 0..K-1.
    """

    kind: ClassVar[str] = "dirichlet"
    _role: ClassVar[str] = "alpha"
    _how: ClassVar[str] = "normalised"
    alpha: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        a = as_float_array(self.alpha, "alpha", ndim=2)
        if a.shape[1] < 2:
            raise InputError(
                f"Dirichlet outputs need at least 2 classes, found {a.shape[1]} in "
                f"'{_colname(self.columns, 'alpha')}'"
            )
        _check_2d(a, "alpha", self.columns, self.rows, positive=True)
        object.__setattr__(self, "alpha", a)
        _check_labels(self, a.shape[1], a.shape[0], "alpha")

    @property
    def proba(self) -> np.ndarray:
        """The predictive (mean) distribution alpha / alpha_0, (N, K)."""
        return _memo(self, "proba", lambda: self.alpha / self.alpha.sum(axis=1, keepdims=True))

    @property
    def n(self) -> int:
        return self.alpha.shape[0]


@dataclass(frozen=True)
class LogLikelihood(Prediction):
    """Per-member log-likelihoods alone, ``loglik`` (N, M): only the information criteria apply.

    ``loglik[i, j] = log p(y_i | x_i, member/posterior draw j)`` already contains the
    targets, so ``y_true`` is optional and unused.
    """

    kind: ClassVar[str] = "loglik"

    def __post_init__(self) -> None:
        if self.loglik is None:
            raise InputError("a LogLikelihood prediction needs a loglik array (N, M)")
        super().__post_init__()

    @property
    def n(self) -> int:
        assert self.loglik is not None  # __post_init__ rejects a missing loglik (and the instance is frozen)
        return self.loglik.shape[0]


# --------------------------------------------------------------------------- forecast verification (issue 16)


@dataclass(frozen=True)
class Multivariate(Prediction):
    """Ensembles of vector-valued forecasts: ``samples`` (N, M, d) (member j, component k) and
    ``y_true`` (N, d); M >= 2 members, d >= 1 components (columns ``y_1..y_d`` and ``m<j>_<k>``)."""

    kind: ClassVar[str] = "multivariate"
    samples: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.loglik is not None:
            raise InputError("multivariate predictions take no per-member log-likelihoods")
        x = as_float_array(self.samples, "samples", ndim=3)
        n, m, d = x.shape
        if m < 2:
            raise InputError(
                f"multivariate ensembles need at least 2 members per row, found {m} in "
                f"'{_colname(self.columns, 'samples')}'"
            )
        _check_2d(x.reshape(n, m * d), "samples", self.columns, self.rows)
        object.__setattr__(self, "samples", x)
        if self.y_true is not None:
            y = as_float_array(self.y_true, "y_true", ndim=2)
            if y.shape != (n, d):
                raise InputError(
                    f"multivariate targets have shape {y.shape} but the members {x.shape} "
                    f"(rows, members, components): give {d} target columns y_1..y_{d}"
                )
            _check_2d(y, "y_true", self.columns, self.rows)
            object.__setattr__(self, "y_true", y)

    @property
    def n(self) -> int:
        return self.samples.shape[0]


@dataclass(frozen=True)
class Climatology(_AnyLevel, Prediction):
    """The same empirical distribution for every row: the sorted training targets ``values`` (M,).

    A reference forecast for skill scores (``--reference climatology --train FILE``), kept as
    one sorted vector (never an (N, M) matrix): CRPS, quantiles and the PIT come from it
    through sorted cumulative sums and binary search (:mod:`uqeval.metrics.skill`).
    """

    kind: ClassVar[str] = "climatology"
    values: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        v = as_float_array(self.values, "training targets")
        check_finite(v, "training targets")
        if v.size < 1:
            raise InputError("a climatology needs at least 1 training target")
        object.__setattr__(self, "values", np.sort(v))

    @property
    def n(self) -> int:
        return 0 if self.y_true is None else len(self.y_true)

    def _array_fields(self) -> list[str]:
        return ["y_true"]

    def point(self) -> np.ndarray:
        return np.full(self.n, float(self.values.mean()))

    def spread(self) -> np.ndarray:
        return np.full(self.n, float(self.values.std(ddof=1)) if self.values.size > 1 else 0.0)

    def quantiles_at(self, levels: np.ndarray) -> np.ndarray:
        q = np.quantile(self.values, np.asarray(levels, dtype=np.float64))  # type 7, as Samples
        return np.broadcast_to(q, (self.n, q.size))


@dataclass(frozen=True)
class PointMass(_AnyLevel, Point):
    """A point forecast read as a degenerate distribution (all its mass at ``mean``): every
    quantile is the point, so its CRPS is the absolute error, its pinball loss at level tau
    rho_tau(y - mean) and its interval score (2/alpha)|y - mean|. It has no density (no log score).
    The persistence reference of skill scores."""

    def quantiles_at(self, levels: np.ndarray) -> np.ndarray:
        return np.broadcast_to(self.mean[:, None], (self.n, np.asarray(levels).size))


REPRESENTATIONS: dict[str, type[Prediction]] = {
    cls.kind: cls
    for cls in (
        Point,
        Gaussian,
        Intervals,
        Quantiles,
        Samples,
        Categorical,
        MemberCategorical,
        Dirichlet,
        LogLikelihood,
        Multivariate,
    )
}
