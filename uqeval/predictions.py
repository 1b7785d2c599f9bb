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

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .errors import InputError
from .validation import as_float_array, bad_rows, check_finite, check_level, check_positive


def _colname(columns: dict[str, Any], role: str, j: int | None = None) -> str:
    name = columns.get(role, role)
    if isinstance(name, (list, tuple)):
        if j is None:
            return ", ".join(map(str, name))
        return str(name[j]) if j < len(name) else f"{role}[{j}]"
    return str(name) if j is None else f"{name}[{j}]"


def _row(rows: np.ndarray | None, i: int) -> int:
    return int(rows[i]) if rows is not None else int(i)


def _check_2d(arr: np.ndarray, role: str, columns: dict, rows: np.ndarray | None, positive: bool = False) -> None:
    """Finite (and optionally positive) check of an (N, K) block, naming the column."""
    bad = ~np.isfinite(arr)
    if positive:
        bad |= ~(arr > 0)
    if bad.any():
        n, first = bad_rows(bad)
        j = int(np.flatnonzero(bad[first])[0])
        val = arr[first, j]
        what = "finite" if not np.isfinite(val) else "> 0"
        raise InputError(
            f"{role} values must be {what}: {n} bad row(s) in column '{_colname(columns, role, j)}' "
            f"(first at row {_row(rows, first)}, found {val:g})"
            + ("; clean the data or pass --nan-policy omit to drop those rows" if what == "finite" else "")
        )


def _levels(levels, role: str) -> np.ndarray:
    lv = as_float_array(levels, f"{role} levels")
    for v in lv:
        check_level(v, f"{role} level")
    return lv


@dataclass(frozen=True)
class Prediction:
    """Base class: targets (optional for the apply side of recalibration) and provenance."""

    kind: ClassVar[str] = "prediction"
    y_true: np.ndarray | None
    columns: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    rows: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.y_true is not None:
            y = as_float_array(self.y_true, "y_true")
            check_finite(y, _colname(self.columns, "y_true"), self.rows, what="targets")
            object.__setattr__(self, "y_true", y)

    @property
    def n(self) -> int:
        raise NotImplementedError

    def _array_fields(self) -> list[str]:
        return [k for k, v in self.__dict__.items() if isinstance(v, np.ndarray) and k not in ("rows",) and v.ndim >= 1 and len(v) == self.n and k != "levels"]

    def subset(self, mask: np.ndarray) -> "Prediction":
        """The same prediction restricted to the rows where ``mask`` is True (or an index array)."""
        changes = {k: getattr(self, k)[mask] for k in self._array_fields()}
        rows = self.rows if self.rows is not None else np.arange(self.n)
        changes["rows"] = rows[mask]
        return replace(self, **changes)

    def require_targets(self) -> np.ndarray:
        if self.y_true is None:
            raise InputError("this operation needs targets, but the input has no target column (pass --y COLUMN)")
        return self.y_true


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


@dataclass(frozen=True)
class Gaussian(Point):
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


@dataclass(frozen=True)
class Intervals(Prediction):
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


@dataclass(frozen=True)
class Quantiles(Prediction):
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
        q, levels = q[:, order], levels[order]
        cols = self.columns.get("quantiles")
        if isinstance(cols, (list, tuple)) and len(cols) == len(order):
            self.columns["quantiles"] = [cols[i] for i in order]
        _check_2d(q, "quantiles", self.columns, self.rows)
        crossing = q[:, 1:] < q[:, :-1]
        if crossing.any():
            if not self.fix_crossing:
                n, first = bad_rows(crossing)
                j = int(np.flatnonzero(crossing[first])[0])
                raise InputError(
                    f"crossing quantiles in {n} row(s): column '{_colname(self.columns, 'quantiles', j + 1)}' < "
                    f"'{_colname(self.columns, 'quantiles', j)}' (first at row {_row(self.rows, first)}: "
                    f"{q[first, j + 1]:g} < {q[first, j]:g}); fix the model or pass --fix-crossing to sort each row"
                )
            object.__setattr__(self, "n_fixed", int(crossing.any(axis=1).sum()))
            q = np.sort(q, axis=1)
        object.__setattr__(self, "quantiles", q)
        object.__setattr__(self, "levels", levels)

    @property
    def n(self) -> int:
        return self.quantiles.shape[0]


@dataclass(frozen=True)
class Samples(Prediction):
    """Ensemble members or posterior draws: ``samples`` (N, M), member axis last, M >= 2."""

    kind: ClassVar[str] = "samples"
    samples: np.ndarray = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        super().__post_init__()
        s = as_float_array(self.samples, "samples", ndim=2)
        if s.shape[1] < 2:
            raise InputError(
                f"samples need at least 2 members per row, found {s.shape[1]} in "
                f"'{_colname(self.columns, 'samples')}'; a single draw is a point prediction (use --mean)"
            )
        _check_2d(s, "samples", self.columns, self.rows)
        object.__setattr__(self, "samples", s)

    @property
    def n(self) -> int:
        return self.samples.shape[0]


@dataclass(frozen=True)
class Categorical(Prediction):
    """Class probabilities ``proba`` (N, K) on the simplex; ``y_true`` holds integer labels 0..K-1."""

    kind: ClassVar[str] = "categorical"
    proba: np.ndarray = None  # type: ignore[assignment]
    atol: float = field(default=1e-6, compare=False)
    renormalize: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        p = as_float_array(self.proba, "proba", ndim=2)
        _check_2d(p, "proba", self.columns, self.rows)
        neg = p < 0
        if neg.any():
            n, first = bad_rows(neg)
            j = int(np.flatnonzero(neg[first])[0])
            raise InputError(
                f"probabilities must be >= 0: {n} row(s) with negative values in column "
                f"'{_colname(self.columns, 'proba', j)}' (first at row {_row(self.rows, first)}, found {p[first, j]:g})"
            )
        sums = p.sum(axis=1)
        off = np.abs(sums - 1.0) > self.atol
        if off.any():
            if not self.renormalize:
                n, first = bad_rows(off)
                raise InputError(
                    f"probabilities must sum to 1: {n} row(s) off the simplex in columns "
                    f"'{_colname(self.columns, 'proba')}' (first at row {_row(self.rows, first)}, sum {sums[first]:.9g}); "
                    "pass --renormalize to rescale small drift"
                )
        if self.renormalize:
            p = p / sums[:, None]
        object.__setattr__(self, "proba", p)
        if self.y_true is not None:
            y = self.y_true
            k = p.shape[1]
            bad = (y != np.round(y)) | (y < 0) | (y >= k)
            if bad.any():
                n, first = bad_rows(bad)
                raise InputError(
                    f"labels must be integers in 0..{k - 1}: {n} bad value(s) in column "
                    f"'{_colname(self.columns, 'y_true')}' (first at row {_row(self.rows, first)}, found {y[first]:g})"
                )
            if len(y) != p.shape[0]:
                raise InputError(f"labels have {len(y)} rows but proba has {p.shape[0]}")

    @property
    def labels(self) -> np.ndarray:
        return self.require_targets().astype(np.int64)

    @property
    def n(self) -> int:
        return self.proba.shape[0]


REPRESENTATIONS: dict[str, type[Prediction]] = {
    cls.kind: cls for cls in (Point, Gaussian, Intervals, Quantiles, Samples, Categorical)
}
