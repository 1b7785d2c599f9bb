"""Shared argument checks for the metric kernels and prediction containers.

Every check raises :class:`uqeval.errors.InputError` with the argument (or
column) name, how many rows are bad and the first bad row, e.g.::

    std must be > 0: 3 non-positive values in column 'sigma' (first at row 17)

Rows are counted from 0 over the data rows (the header is not a row). The command line adds the line
of a CSV file to each row of its messages (:func:`uqeval.io.readers.with_csv_lines`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from .errors import InputError

_TRUSTED: ContextVar[bool] = ContextVar("uqeval_trusted", default=False)


@contextmanager
def trusted() -> Iterator[None]:
    """Skip the kernels' data checks (finite, positive) inside this block.

    The catalogue computes metrics from prediction containers, which validated their
    arrays once at construction; the kernels' own checks serve direct callers of the
    array functions and would only repeat that work here.
    """
    token = _TRUSTED.set(True)
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def _where(name: str, rows: np.ndarray | None, idx: int) -> str:
    row = int(rows[idx]) if rows is not None else int(idx)
    return f"in column '{name}' (first at row {row})"


def is_trusted() -> bool:
    """True inside :func:`trusted`: the arrays come from a validated prediction container."""
    return _TRUSTED.get()


def bad_rows(mask: np.ndarray) -> tuple[int, int]:
    """Return ``(count, first_index)`` of True entries of a 1-d or 2-d row mask."""
    mask = np.asarray(mask)
    if mask.ndim > 1:
        mask = np.asarray(mask.reshape(mask.shape[0], -1).any(axis=1))
    idx = np.flatnonzero(mask)
    return int(idx.size), (int(idx[0]) if idx.size else -1)


def as_float_array(x, name: str, ndim: int | tuple[int, ...] = 1) -> np.ndarray:
    """Convert ``x`` to a float64 ndarray and check its number of dimensions."""
    if np.iscomplexobj(x):
        raise InputError(f"{name} must hold real numbers, found complex values")
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be numeric: {exc}") from None
    allowed = (ndim,) if isinstance(ndim, int) else ndim
    if arr.ndim not in allowed:
        raise InputError(
            f"{name} must have {' or '.join(map(str, allowed))} dimension(s), got shape {arr.shape}"
        )
    return arr


def as_real_array(x, name: str) -> np.ndarray:
    """``x`` (a numpy array, list, pandas Series or Index, pyarrow array, scalar) as a float64 array.

    Nullable pandas values (``pd.NA``) and pyarrow nulls become NaN; complex numbers, strings and other
    objects are an :class:`InputError` naming the argument."""
    mod = type(x).__module__
    try:
        if mod.startswith("pandas") and hasattr(x, "to_numpy"):
            try:
                arr = x.to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                arr = np.asarray(x.to_numpy())
        elif mod.startswith("pyarrow") and hasattr(x, "to_numpy"):
            arr = np.asarray(x.to_numpy(zero_copy_only=False))
        else:
            arr = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise InputError(f"{name} must be a rectangular array of numbers ({exc})") from None
    if arr.dtype.kind == "c":
        raise InputError(f"{name} must hold real numbers, found complex values")
    if arr.dtype.kind in "mM":
        raise InputError(f"{name} must hold numbers, found {arr.dtype} values")
    if arr.dtype.kind not in "biuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            first = next(v for v in arr.reshape(-1) if not _is_number(v))
            raise InputError(
                f"{name} must hold numbers, found {type(first).__name__.rstrip('_')} value {str(first)[:40]!r}"
            ) from None
    return np.asarray(arr, dtype=np.float64)


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def is_count(value: Any) -> bool:
    """``value`` is a whole number >= 1: a Python or numpy integer, not a bool (rows per batch, per block)."""
    import operator

    if isinstance(value, bool):
        return False
    try:
        return operator.index(value) >= 1
    except TypeError:
        return False


def check_finite(arr: np.ndarray, name: str, rows: np.ndarray | None = None, what: str | None = None) -> None:
    """Raise if ``arr`` holds NaN or +-inf (``what`` names the quantity, ``name`` the column)."""
    if _TRUSTED.get():
        return
    n, first = bad_rows(~np.isfinite(arr))
    if n:
        bad = np.asarray(arr).reshape(len(arr), -1)[first]
        found = "NaN" if np.isnan(bad).any() else "inf"
        raise InputError(
            f"{what or name} must be finite: {n} row(s) with NaN/inf {_where(name, rows, first)}, found {found}",
            fix="nan_policy",
        )


def finite_difference(
    a: np.ndarray, b: np.ndarray, names: tuple[str, str], rows: np.ndarray | None = None
) -> np.ndarray:
    """``a - b`` of two finite arrays, raising :class:`InputError` where it overflows to ±inf.

    Two finite doubles of opposite signs (``1e308`` and ``-1e308``) have a difference beyond the
    largest double; ``names`` are the columns (or arguments) of ``a`` and ``b``.
    """
    with np.errstate(over="ignore"):
        d = np.subtract(a, b)
    if np.isfinite(d).all():
        return d
    n, first = bad_rows(~np.isfinite(d))
    row = int(rows[first]) if rows is not None else int(first)
    raise InputError(
        f"'{names[0]}' - '{names[1]}' is beyond the largest double (about 1.8e308) in {n} row(s) "
        f"(first at row {row}: {float(a[first]):g} - {float(b[first]):g}); rescale both columns "
        "(other units) or drop those rows"
    )


def check_positive(
    arr: np.ndarray, name: str, rows: np.ndarray | None = None, what: str | None = None
) -> None:
    """Raise if ``arr`` holds values <= 0 (``what`` names the quantity, ``name`` the column)."""
    if _TRUSTED.get():
        return
    n, first = bad_rows(~(arr > 0))
    if n:
        val = np.asarray(arr).reshape(len(arr), -1)[first].min()
        raise InputError(
            f"{what or name} must be > 0: {n} non-positive value(s) {_where(name, rows, first)}, found {val:g}"
        )


def check_same_length(arrays: Sequence[np.ndarray], names: Sequence[str]) -> int:
    """Raise unless all arrays have the same first dimension; return it."""
    lengths = [len(a) for a in arrays]
    if len(set(lengths)) > 1:
        desc = ", ".join(f"{n}: {length}" for n, length in zip(names, lengths))
        raise InputError(f"inconsistent numbers of rows ({desc})")
    return lengths[0] if lengths else 0


def finite_arrays(*, positive: tuple[str, ...] = (), **arrays: Any) -> tuple[np.ndarray, ...]:
    """Same-length finite 1-d float arrays, given by keyword and returned in that order (None left out);
    those named in ``positive`` must also be > 0. One :class:`InputError` naming the argument otherwise."""
    given = {k: as_float_array(v, k) for k, v in arrays.items() if v is not None}
    check_same_length(list(given.values()), list(given))
    for name, arr in given.items():
        check_finite(arr, name)
        if name in positive:
            check_positive(arr, name)
    return tuple(given.values())


def member_axis_of(member_axis: Any, ndim: int, what: str) -> int:
    """``member_axis`` checked as an axis of the ``ndim``-dimensional array ``what`` (``samples``, ``fct``)."""
    if isinstance(member_axis, bool) or not isinstance(member_axis, (int, np.integer)):
        raise InputError(f"member_axis must be an integer, got {member_axis!r}")
    if not -ndim <= member_axis < ndim:
        raise InputError(f"member_axis={member_axis} is out of range for {what} with {ndim} dimension(s)")
    return int(member_axis)


def check_nonempty(n: int, what: str = "input") -> None:
    if n == 0:
        raise InputError(f"{what} has no rows to evaluate")


def check_level(level: float, name: str = "level") -> float:
    """A probability level strictly inside (0, 1)."""
    level = float(level)
    if not (0.0 < level < 1.0):
        raise InputError(f"{name} must be strictly between 0 and 1, got {level:g}")
    return level
