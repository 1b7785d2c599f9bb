"""From a file path to one validated prediction container."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from ..config import Settings
from ..errors import InputError, SchemaError, option
from ..predictions import (
    REPRESENTATIONS,
    Prediction,
    Quantiles,
)
from .columns import ColumnPlan, match_column, plan_columns
from .readers import (
    TableInfo,
    float64_numpy,
    inspect,
    is_list_type,
    numbers_numpy,
    read_block,
    read_columns,
    release_arrow_memory,
    to_float,
    to_matrix,
)


@dataclass
class Loaded:
    """A prediction plus where it came from (for the JSON ``input`` block)."""

    prediction: Prediction
    info: dict[str, Any]
    groups: np.ndarray | None = None  # values of the --by column, aligned with the rows kept
    #: the ``extra`` columns read in the same pass, by the name asked for (pyarrow, every row of the file)
    extra: dict[str, Any] = field(default_factory=dict)
    table: TableInfo | None = None  # the file's header
    #: the checked ``--weights`` column (:func:`uqeval.weights.check_weights`), aligned with the rows kept
    weights: np.ndarray | None = None


def _block(cols: dict, plan: ColumnPlan, role: str, path: str | Path, offset: int = 0) -> np.ndarray:
    spec = plan.roles[role]
    if role in plan.list_roles:
        return to_matrix(cols[spec], spec, path, offset)
    return _stack(cols, spec if isinstance(spec, list) else [spec], path, offset, order=_ORDER.get(role, "C"))


#: memory layout of a role's block where it is not row-major: quantiles column-major, the layout the
#: Quantiles container keeps (it would copy any other)
_ORDER: dict[str, Literal["C", "F"]] = {"quantiles": "F"}


def _stack(cols: dict, names: list[str], path: str | Path, offset: int = 0, order: str = "C") -> np.ndarray:
    """The named columns as one (N, C) float64 block, filled in place in cache-sized blocks of rows.

    A float64 Arrow column in one chunk without nulls is read through a zero-copy view, so the
    only full-size copy is the block itself (``np.column_stack`` of ``to_float`` results made two);
    other columns go through :func:`to_float`. Filling blocks of rows across all columns writes
    each part of the block while it is in cache (column by column is ~40% slower at 50 columns).
    ``order="F"``: a column-major block, filled column by column (each a contiguous copy).
    """
    import pyarrow as pa

    sources = []
    for name in names:
        col = cols[name]
        chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
        if len(chunks) == 1 and pa.types.is_float64(chunks[0].type) and chunks[0].null_count == 0:
            sources.append(float64_numpy(chunks[0]))
        else:
            sources.append(to_float(col, name, path, offset))
    n = len(sources[0])
    if order == "F":
        out = np.empty((n, len(names)), order="F")
        for j, src in enumerate(sources):
            out[:, j] = src
        return out
    out = np.empty((n, len(names)))
    step = max(1, (1 << 21) // (8 * len(names)))
    for start in range(0, n, step):  # blocks of rows x every column
        part = out[start : start + step]
        for j, src in enumerate(sources):
            part[:, j] = src[start : start + step]
    return out


def _nested(column) -> bool:
    """True for a Parquet list-of-lists column."""
    return is_list_type(column.type) and is_list_type(column.type.value_type)


def _to_tensor(column, name: str, path: str | Path, offset: int = 0) -> np.ndarray:
    """A Parquet list-of-lists column (M lists of K numbers per row) as an (N, M, K) float64 array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    outer = chunks.type
    if not (is_list_type(outer) and is_list_type(outer.value_type)):
        raise SchemaError(
            f"{path}: column '{name}' must be a list of lists (one list of K class probabilities per member), "
            f"found {outer}"
        )

    def lengths(arr, what: str, where) -> np.ndarray:
        ln = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
        ln = np.where(np.isnan(ln.astype(float)), -1, ln).astype(np.int64)
        if (ln < 0).any():
            i = int(np.flatnonzero(ln < 0)[0])
            raise InputError(f"{path}: column '{name}' has a missing {what} at {where(i)}")
        if ln.size and (ln != ln[0]).any():
            i = int(np.flatnonzero(ln != ln[0])[0])
            raise InputError(
                f"{path}: ragged list column '{name}': {where(i)} has {ln[i]} {what}s but {where(0)} has {ln[0]}; "
                f"every row needs the same number of members and every member the same number of classes"
            )
        return ln

    n = len(chunks)
    m_len = lengths(chunks, "member list", lambda i: f"row {offset + i}")
    m = int(m_len[0]) if n else 0
    inner = pc.list_flatten(chunks)
    k_len = lengths(inner, "class value", lambda i: f"row {offset + i // max(m, 1)} member {i % max(m, 1)}")
    k = int(k_len[0]) if len(k_len) else 0
    flat = pc.list_flatten(inner)
    if not (pa.types.is_integer(flat.type) or pa.types.is_floating(flat.type)):
        raise SchemaError(f"{path}: list column '{name}' holds {flat.type}, expected numbers")
    values = pc.fill_null(pc.cast(flat, pa.float64()), np.nan).to_numpy()
    return values.reshape(n, m, k)


def load_predictions(
    path: str | Path,
    settings: Settings | None = None,
    require_targets: bool = True,
    extra: Sequence[str] = (),
    weights_ok: bool = False,
) -> Loaded:
    """Read ``path``, detect its columns and build the matching container.

    ``weights_ok``: the caller uses ``Loaded.weights`` (the ``weights`` column role, ``--weights``); a
    caller that does not refuses a weights column rather than compute unweighted results.

    With ``settings.nan_policy == "omit"`` rows with NaN/inf in any used column are
    dropped and counted in ``info["n_dropped"]``; otherwise the container raises
    naming the first bad row. ``extra``: further columns (``--x``, features, every
    column) read in the same pass into ``Loaded.extra`` under the names asked for (as a streamed piece's
    ``extra``), matched exactly, else case-insensitively; names not in the file are left out (the caller says
    why it needs them).
    """
    settings = settings or Settings()
    table = inspect(path)
    plan = plan_for(table, settings, require_targets)
    if "weights" in plan.roles and not weights_ok:
        from ..weights import refuse_weights

        raise refuse_weights("this command")
    # each further column asked for -> its name in the file (asked-for names key Loaded.extra, as a piece's)
    extra_names = {e: c for e in extra if (c := match_column(table.columns, e)) is not None}
    # the widest block (sample, member, class-probability or quantile columns of a Parquet file) is decoded
    # batch by batch into its array, never held as a whole Arrow table next to it
    wide = next(
        (
            r
            for r in ("samples", "member_proba", "proba", "quantiles")
            if table.format == "parquet"
            and r in plan.roles
            and plan.representation != "multivariate"
            and r not in plan.list_roles
            and isinstance(plan.roles[r], list)
        ),
        None,
    )
    wide_names = list(plan.roles[wide]) if wide else []
    asked = set(extra_names.values())
    first = list(dict.fromkeys(c for c in [*plan.needed(), *asked] if c not in wide_names or c in asked))
    cols, n_rows = read_columns(table, first or wide_names[:1])
    prefilled: dict[str, np.ndarray] = {}
    block = read_block(table, wide_names, n_rows, order=_ORDER.get(wide, "C")) if wide else None
    if block is None and wide:  # not all numbers: read the columns whole, as for any other role
        cols.update(read_columns(table, wide_names)[0])
    elif wide:
        assert block is not None  # read_block decoded the numbers
        # flat member columns: the plan counts their classes
        prefilled[wide] = (
            block.reshape(n_rows, -1, cast(int, plan.classes)) if wide == "member_proba" else block
        )
    batch = build_batch(table.path, plan, cols, n_rows, settings, prefilled=prefilled)
    extra_cols = {e: cols[c] for e, c in extra_names.items()}
    del cols, prefilled, block
    # the columns were copied into the prediction's arrays and their Arrow buffers are now free, but Arrow's
    # allocator keeps the pages (about the input's size): hand them back before the metrics allocate theirs
    release_arrow_memory()
    pred = batch.prediction
    assert pred is not None  # without allow_empty a batch always holds a prediction
    info = input_info(batch, plan, str(path), table.format, int(n_rows))
    return Loaded(pred, info, batch.groups, extra_cols, table, batch.weights)


def input_info(batch: Any, plan: ColumnPlan, path: str, fmt: str, n_rows: int) -> dict[str, Any]:
    """The ``input`` block of a summary for the rows of ``batch`` (a file's, or an in-memory table's)."""
    from .readers import labelled_format

    pred = batch.prediction
    info: dict[str, Any] = {
        "path": path,
        "format": labelled_format(path) or fmt,  # NetCDF/Zarr read as rows (uqeval.io.labelled)
        "n_rows": n_rows,
        "n_dropped": batch.n_dropped,
        "representation": pred.kind,
        "columns": batch.columns,
    }
    if isinstance(pred, Quantiles) and pred.n_fixed:
        info["n_fixed_crossing"] = pred.n_fixed
    if batch.n_members_dropped:
        info["n_members_dropped"] = batch.n_members_dropped
    if batch.weights is not None:
        info["weights"] = plan.roles["weights"]
    return info


def plan_for(table: TableInfo, settings: Settings, require_targets: bool = True) -> ColumnPlan:
    """The column plan of a file's header (raises when no target column is found and one is required)."""
    plan = plan_columns(
        table.columns,
        table.list_columns,
        explicit=settings.columns,
        representation=settings.representation,
        logits=settings.logits,
        path=str(table.path),
    )
    if require_targets and "y_true" not in plan.roles and plan.representation != "loglik":
        raise InputError(
            f"{table.path}: no target column found (expected y, y_true, target"
            f"{' or label' if plan.representation == 'categorical' else ''}); name it with {option('y_true', 'COLUMN')}"
        )
    return plan


@dataclass
class Batch:
    """A validated prediction built from some rows of a file (all of them in memory, a chunk when streaming)."""

    prediction: Prediction | None  # None: every row of a streamed chunk was dropped (--nan-policy omit)
    n_dropped: int
    n_members_dropped: int
    columns: dict[str, Any]
    groups: np.ndarray | None = None
    weights: np.ndarray | None = None  # the checked --weights column, aligned with the rows kept


def batch_of(prediction: Prediction, info: Mapping[str, Any], groups=None, weights=None) -> Batch:
    """The one :class:`Batch` of every row of an input loaded whole: ``prediction`` and the rows and members
    its load dropped, as its ``info`` records them (:func:`load_predictions`)."""
    return Batch(
        prediction,
        int(info.get("n_dropped", 0)),
        int(info.get("n_members_dropped", 0)),
        dict(info.get("columns") or {}),
        groups,
        weights,
    )


def _decode(
    plan: ColumnPlan, cols: dict, p: Path | str, offset: int, prefilled: dict[str, np.ndarray] | None
) -> dict[str, np.ndarray]:
    """The numeric arrays of each role of ``plan`` read from ``cols``: tensors of members and multivariate
    ensembles, blocks of indexed columns, variances as standard deviations (``plan``'s role renamed), logits
    as probabilities, one binary probability as two."""
    arrays: dict[str, np.ndarray] = dict(prefilled or {})
    for role in plan.roles:
        if role in ("by", "weights") or role in arrays:
            continue
        if role == "member_proba":
            spec = plan.roles[role]
            if role in plan.list_roles:
                arrays[role] = _to_tensor(cols[spec], spec, p, offset)
            else:
                block = _stack(cols, list(spec), p, offset)
                arrays[role] = block.reshape(len(block), -1, cast(int, plan.classes))  # flat: classes counted
        elif plan.representation == "multivariate" and role in plan.list_roles:  # list columns
            spec = plan.roles[role]
            arrays[role] = (
                _to_tensor(cols[spec], spec, p, offset)
                if role == "samples"
                else to_matrix(cols[spec], spec, p, offset)
            )
        elif plan.representation == "multivariate":  # (N, d) targets, (N, M, d) members
            block = np.column_stack([to_float(cols[c], c, p, offset) for c in plan.roles[role]])
            # members: classes holds the number of components d
            arrays[role] = (
                block if role == "y_true" else block.reshape(len(block), -1, cast(int, plan.classes))
            )
        elif role in ("quantiles", "samples", "proba", "lower", "upper", "alpha", "loglik"):
            arrays[role] = _block(cols, plan, role, p, offset)
        else:
            arrays[role] = to_float(cols[plan.roles[role]], plan.roles[role], p, offset)
    if "var" in arrays:
        arrays["std"] = std_of_variance(arrays.pop("var"), str(p), plan.roles["var"], offset=offset)
        plan.roles["std"] = plan.roles.pop("var")
    if plan.logits and "proba" in arrays:
        arrays["proba"] = softmax_rows(arrays["proba"])
    if plan.representation == "categorical" and arrays["proba"].shape[1] == 1:
        p1 = arrays["proba"][:, 0]
        arrays["proba"] = np.column_stack([1.0 - p1, p1])

    return arrays


def std_of_variance(
    var: np.ndarray, where: str, column: str, rows: np.ndarray | None = None, offset: int = 0
) -> np.ndarray:
    """The standard deviations of a variance role, ``sqrt(var)``, its finite values checked > 0 (non-finite ones
    are the finiteness check's): an InputError names ``where``, ``column`` and the first bad row, ``rows[i]``
    (the rows kept of the input) or ``offset + i``. Files and Python's arrays both read a variance here."""
    bad = np.isfinite(var) & ~(var > 0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        row = int(rows[i]) if rows is not None else offset + i
        raise InputError(
            f"{where}: variance must be > 0: {int(bad.sum())} non-positive value(s) in column '{column}' "
            f"(first at row {row}, found {var[i]:g})"
        )
    return np.sqrt(var)


def softmax_rows(z: np.ndarray) -> np.ndarray:
    """Probabilities of logits, along the last axis (the classes), shifted by the row's largest finite logit; a
    NaN/inf logit stays in its own column, so the finiteness check names that column and not the whole row."""
    finite = np.isfinite(z)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        zz = np.where(finite, z, -np.inf)
        zz = zz - np.max(zz, axis=-1, keepdims=True)
        e = np.where(finite, np.exp(zz), 0.0)
        return np.where(finite, e / e.sum(axis=-1, keepdims=True), z)


def build_batch(
    p: Path | str,
    plan: ColumnPlan,
    cols: dict,
    n_rows: int,
    settings: Settings,
    offset: int = 0,
    allow_empty: bool = False,
    prefilled: dict[str, np.ndarray] | None = None,
) -> Batch:
    """The prediction container of ``n_rows`` rows read into ``cols`` (pyarrow arrays by column name).

    ``offset``: global row number of the first row (messages name global rows; a chunk's
    ``Prediction.rows`` are global). ``allow_empty``: a chunk whose every row is dropped
    gives ``Batch(None, ...)`` instead of an error (the stream engine checks the total).
    ``prefilled``: arrays of roles already decoded (the loader's wide Parquet block).
    """
    from dataclasses import replace

    # the roles and list roles are changed below (variance, multivariate); the caller's plan is reused
    plan = replace(plan, roles=dict(plan.roles), list_roles=set(plan.list_roles))
    # p is only named in messages: a local Path, or a URI string kept as written (Path would fold "s3://")
    if (
        plan.representation == "samples"
        and "samples" in plan.list_roles
        and _nested(cols[plan.roles["samples"]])
    ):
        plan.representation = "multivariate"  # a list of M lists of d components per row (issue 16)
        if "y_true" in plan.roles:
            plan.list_roles.add("y_true")
            spec_y = plan.roles["y_true"]
            target = cols.get(spec_y) if isinstance(spec_y, str) else None
            if target is not None and not is_list_type(target.type):
                spec = plan.roles["samples"]
                raise SchemaError(
                    f"{p}: column '{spec}' holds a list of lists per row, read as a multivariate ensemble "
                    f"(members x components), but the target column '{plan.roles['y_true']}' holds single "
                    f"numbers, not a list of components per row; for one-dimensional samples write "
                    f"'{spec}' as one list of numbers per row"
                )
    arrays = _decode(plan, cols, p, offset, prefilled)
    kept = None  # the positions of the rows kept by --nan-policy omit (None: every row)
    n_dropped = 0
    n_members_dropped = 0
    if settings.nan_policy == "omit":
        ok, n_members_dropped = usable_rows(arrays, n_rows, plan.representation == "samples")
        n_dropped = int(n_rows - ok.sum())
        if n_dropped:
            arrays = {k: v[ok] for k, v in arrays.items()}
            kept = np.flatnonzero(ok)
        if not ok.any():
            if allow_empty:
                return Batch(None, n_dropped, n_members_dropped, {})
            raise InputError(f"{p}: every row has NaN/inf in a used column; nothing left to evaluate")
    groups = None
    if "by" in plan.roles:
        column = cols[plan.roles["by"]]
        values = numbers_numpy(column)  # numbers without nulls: no pandas import, as Python numbers below
        groups = np.asarray(column.to_numpy(zero_copy_only=False) if values is None else values, dtype=object)
        if kept is not None:
            groups = groups[kept]
    weights = None
    if "weights" in plan.roles:  # checked on every row of the file (a NaN weight is an error, not dropped)
        from ..weights import check_weights

        name = plan.roles["weights"]
        weights = check_weights(
            to_float(cols[name], name, p, offset), name, offset=offset, require_positive=not allow_empty
        )
        if kept is not None:
            weights = weights[kept]

    from ..metrics.samples import all_finite, sort_rows

    if plan.representation == "samples" and "samples" in arrays and all_finite(arrays["samples"]):
        # members sorted once, here, in place (the block is ours): every sample metric reuses the order.
        # Not with NaN/inf members, so that an error still names the member's own column.

        block = arrays["samples"]
        arrays["samples"] = sort_rows(block, out=block if block.flags.writeable else None)
    columns = {
        k: plan.roles[k]
        for k in sorted(plan.roles, key=lambda r: r != "y_true")
        if k not in ("by", "weights")
    }
    # the file's row numbers of the kept rows; None when row i is the file's row i (no (N,) array: 8 MB a
    # million rows)
    rows = kept + offset if kept is not None else np.arange(offset, offset + n_rows) if offset else None
    try:
        pred = _build(plan, arrays, columns, rows, settings)
    except InputError as exc:  # containers do not know the file: name it here
        raise exc.at(str(p)) from None
    return Batch(pred, n_dropped, n_members_dropped, columns, groups, weights)


def usable_rows(
    arrays: dict[str, np.ndarray], n_rows: int, member_rows: bool = False
) -> tuple[np.ndarray, int]:
    """``--nan-policy omit``: the rows without NaN/inf in any array, and the number of members dropped.

    ``member_rows``: ``arrays["samples"]`` are ensemble members, of which a row drops its NaN/inf
    ones and needs 2 finite ones left."""
    ok = np.ones(n_rows, dtype=bool)
    n_members_dropped = 0
    for role, a in arrays.items():
        if role == "samples" and member_rows:
            finite = np.isfinite(a)
            ok &= finite.sum(axis=1) >= 2
            n_members_dropped = int((~finite[ok]).sum())
            continue
        ok &= np.isfinite(a).reshape(len(a), -1).all(axis=1)
    return ok, n_members_dropped


#: the arrays each representation takes from the file beyond ``y_true`` (its constructor's keywords)
_ARRAYS: dict[str, tuple[str, ...]] = {
    "gaussian": ("mean", "std", "loglik"),
    "point": ("mean", "loglik"),
    "intervals": ("lower", "upper", "mean", "loglik"),
    "quantiles": ("quantiles", "loglik"),
    "samples": ("samples", "loglik"),
    "categorical": ("proba", "loglik"),
    "members": ("member_proba", "loglik"),
    "dirichlet": ("alpha", "loglik"),
    "loglik": ("loglik",),
    "multivariate": ("samples",),
}


def _build(
    plan: ColumnPlan, a: dict[str, np.ndarray], columns: dict, rows: np.ndarray | None, s: Settings
) -> Prediction:
    kind = plan.representation
    by_kind: dict[str, dict[str, Any]] = {  # the settings each takes; levels: __post_init__ makes an array
        "intervals": {"levels": plan.levels if plan.levels else [s.level]},
        "quantiles": {"levels": plan.levels, "fix_crossing": s.fix_crossing},
        "samples": {"allow_missing": s.nan_policy == "omit"},
        "categorical": {"renormalize": s.renormalize},
        "members": {"renormalize": s.renormalize},
    }
    options = by_kind.get(kind, {})
    arrays = {role: a.get(role) for role in _ARRAYS[kind]}
    return REPRESENTATIONS[kind](y_true=a.get("y_true"), columns=columns, rows=rows, **arrays, **options)


def evaluated_rows(loaded: Loaded, x: np.ndarray, columns: Sequence[str], what: str) -> np.ndarray:
    """``x`` (one value, or one row of values, per row of ``loaded``'s file; ``columns`` name its columns)
    restricted to the rows its prediction kept. NaN/inf there is an :class:`InputError` naming the file,
    the column (``what`` says what it is for), the count and the first row."""
    rows = loaded.prediction.rows
    x = x[rows] if rows is not None else x[: loaded.prediction.n]
    bad = ~np.isfinite(x.reshape(len(x), -1))
    if bad.any():
        j = int(np.flatnonzero(bad.any(axis=0))[0])
        idx = np.flatnonzero(bad[:, j])
        row = int(rows[idx[0]]) if rows is not None else int(idx[0])
        path = loaded.table.path if loaded.table is not None else "input"
        raise InputError(
            f"{path}: {what} '{columns[j]}' must be finite: {idx.size} row(s) with NaN/inf "
            f"(first at row {row}); clean or drop those rows"
        )
    return x


def read_targets(
    path: str | Path, settings: Settings, labels: bool = False, at_least: int = 1
) -> tuple[np.ndarray, str]:
    """``(finite targets, their column)`` of a training file (``--train``: climatology, the width unit):
    the ``y_true`` column as named in the settings (``labels``: a ``label`` column first); a one-line
    :class:`~uqeval.errors.InputError` without such a column or with fewer than ``at_least`` finite values."""
    from .columns import _find
    from .readers import inspect, read_columns, to_float

    table = inspect(path)
    col = (_find(table.columns, "label", {}, str(table.path)) if labels else None) or _find(
        table.columns, "y_true", settings.columns, str(table.path)
    )
    if col is None:
        raise InputError(
            f"{table.path}: no target column (y, y_true, target{', label' if labels else ''}) in the "
            f"{option('train')} file; name it with {option('y_true')}"
        )
    cols, _ = read_columns(table, [col])
    y = to_float(cols[col], col, table.path)
    y = y[np.isfinite(y)]
    if y.size < at_least:
        need = "no finite target" if at_least == 1 else f"fewer than {at_least} finite targets"
        raise InputError(f"{table.path}: the {option('train')} file has {need} in column '{col}'")
    return y, col
