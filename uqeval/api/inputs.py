"""Arrays, Series, DataFrames, pyarrow tables and files turned into validated prediction containers: the column
keywords of every API call (the roles), read in one place."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..config import COLUMN_ROLES, Settings, make_settings
from ..errors import InputError, UsageError
from ..names import ROLES, canonical
from ..predictions import (
    Categorical,
    Gaussian,
    Intervals,
    LogLikelihood,
    MemberCategorical,
    Point,
    Prediction,
    Quantiles,
    Samples,
)
from ..validation import as_real_array, member_axis_of
from ..vocabulary import with_canonical_keys

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..io.load import Loaded
    from ..io.readers import TableInfo

    #: what ``ucc`` and ``compare`` take as models
    Models = Prediction | Mapping[str, Prediction] | Sequence[Prediction]


def _canonical_roles(explicit: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The role keywords ``explicit`` (name -> value) with their aliases found in ``overrides`` (popped from
    it: ``sample_weight=`` is ``weights=``, ``target=`` and ``y=`` are ``y_true=``, ...;
    :data:`uqeval.names.ROLES`); a role given under two spellings is a :class:`UsageError`."""
    aliases = {k: overrides.pop(k) for k in list(overrides) if canonical(k) in ROLES and k not in ROLES}
    return with_canonical_keys({**explicit, **aliases}, ROLES)


def _canonical_columns(columns: dict[str, Any]) -> None:
    """Replace, in place, the alias keys of ``columns`` (role keywords and settings) by their canonical names."""
    merged = with_canonical_keys(columns)
    columns.clear()
    columns.update(merged)


def _encode_labels(y: Any, classes: Any, role: str = "y_true") -> Any:
    """Class labels as the class indices the probabilities' columns are in: the position of each label in
    ``classes`` when given, else, for labels that are not numbers (strings, a pandas Categorical), in sorted
    order as scikit-learn's ``LabelEncoder`` (and a classifier's ``classes_``) orders them. Numbers without
    ``classes`` are returned as given; missing labels (None, NaN) become NaN."""
    arr = np.asarray(y.astype(object) if hasattr(y, "cat") else y)
    if arr.ndim == 2 and arr.shape[1:] == (1,):
        arr = arr[:, 0]
    if classes is None and arr.dtype.kind in "biufc":
        return y
    if arr.ndim != 1:
        raise InputError(f"{role} holds class labels: give one label per row, got shape {arr.shape}")
    import pandas as pd

    flat = arr.astype(object)
    missing = np.asarray(pd.isna(flat), dtype=bool)  # None, NaN (of any float type), pd.NA, NaT
    if classes is None:
        try:
            order = sorted(set(flat[~missing].tolist()))
        except TypeError:
            raise InputError(
                f"{role} mixes labels that cannot be ordered ({', '.join(sorted({type(v).__name__ for v in flat}))}); "
                "give their order with classes=[...]"
            ) from None
    else:
        order = list(np.asarray(classes, dtype=object).reshape(-1).tolist())
        if len(set(order)) != len(order):
            raise InputError(f"classes= names a class twice: {order!r}")
    rows = np.flatnonzero(~missing)
    # each label's position in ``order`` by one hash lookup (numpy scalars hash and compare as Python's)
    found = pd.Index(order, dtype=object).get_indexer(pd.Index(flat[rows], dtype=object))
    if (found < 0).any():
        i = int(rows[np.argmax(found < 0)])
        shown = ", ".join(repr(c) for c in order[:10]) + (" ..." if len(order) > 10 else "")
        raise InputError(
            f"{role} holds the label {flat[i]!r} at row {i}, which is not one of classes= ({shown})"
        )
    codes = np.full(len(flat), np.nan)
    codes[rows] = found
    return codes


def _encode_table_labels(arrow: Any, target: Any, classes: Any) -> Any:
    """``arrow`` with its target column (named by ``target``, else found by name) as class indices
    (:func:`_encode_labels`) when it holds text or categories or ``classes`` is given: a new table, the
    input is not changed."""
    import pyarrow as pa

    name = target if isinstance(target, str) else None if target is not None else _target_column(arrow)
    if name is None or name not in arrow.column_names:
        return arrow
    column = arrow.column(name)
    t = column.type
    text = pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t)
    if not text and classes is None:
        return arrow
    values = np.asarray(column.to_pylist(), dtype=object)
    codes = _encode_labels(values, classes, f"column {name!r}")
    return arrow.set_column(arrow.column_names.index(name), name, pa.array(np.asarray(codes, dtype=float)))


def _target_column(arrow: Any) -> str | None:
    """The one column of ``arrow`` named as a target (``y``, ``y_true``, ``target``, ``label``), else None."""
    from ..io.columns import ALIASES

    found = [c for c in arrow.column_names if c.lower() in ALIASES["y_true"] + ("label",)]
    return found[0] if len(found) == 1 else None


#: the roles of :func:`evaluate` that are arrays (or column names of ``data``), in the order they are checked
_ROLES = (*(r for r in COLUMN_ROLES if r not in ("by", "weights")), "loglik")


#: roles that take one column each: a table with only these named goes through the file loader's plan
_COLUMN_ROLES = ("y_true", "mean", "std", "var", "lower", "upper")


#: roles whose one string names columns as ``--proba``/``--logits`` do (a comma list or a glob, ``"p*"``)
_CLASS_ROLES = ("proba", "logits")


def _by_plan(roles: Mapping[str, Any]) -> bool:
    """Whether the named roles go through the file loader's column plan: every one a string, naming one
    column (:data:`_COLUMN_ROLES`) or class columns as the command line names them (:data:`_CLASS_ROLES`)."""
    return all(isinstance(v, str) and v and r in _COLUMN_ROLES + _CLASS_ROLES for r, v in roles.items())


def _is_table(x: object) -> bool:
    """A pandas DataFrame, a pyarrow Table or RecordBatch, or a DataFrame of another library with ``to_arrow``."""
    name, mod = type(x).__name__, type(x).__module__
    if mod.startswith("pyarrow"):
        return name in ("Table", "RecordBatch")
    if mod.startswith("xarray"):  # a labelled Dataset: its rows flattened (uqeval.io.labelled.to_table)
        return name == "Dataset"
    return name == "DataFrame" and (mod.startswith("pandas") or hasattr(x, "to_arrow"))


def _arrow(table: Any) -> Any:
    """A pyarrow Table of a DataFrame or Table, converted in memory; column names must be distinct strings."""
    import pyarrow as pa

    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    elif type(table).__module__.startswith("xarray"):
        from ..io.labelled import to_table

        table = to_table(table)
    elif not isinstance(table, pa.Table):
        names = [str(c) for c in table.columns]
        _check_distinct(names)
        try:
            if type(table).__module__.startswith("pandas"):
                table = pa.Table.from_pandas(table, preserve_index=False)
            else:
                table = table.to_arrow()
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise InputError(f"data: cannot convert the table to columns of numbers ({exc})") from None
    _check_distinct(table.column_names)
    return table


def _check_distinct(names: list[str]) -> None:
    seen: set[str] = set()
    dup = [n for n in names if n in seen or seen.add(n)]  # type: ignore[func-returns-value]
    if dup:
        raise InputError(
            f"data has duplicate column names ({', '.join(map(repr, dict.fromkeys(dup)))}); rename them"
        )


def _column(table: Any, name: str | Sequence[str], role: str) -> np.ndarray:
    """Column ``name`` of a pyarrow table as float64 (a list of names: an (N, K) block)."""
    from ..io.readers import to_float

    names = list(name) if isinstance(name, (list, tuple)) else [name]
    for n in names:
        if not isinstance(n, str):
            raise InputError(f"{role}= names columns of data by strings, got {type(n).__name__} {n!r}")
        if n not in table.column_names:
            shown = ", ".join(table.column_names[:20]) + (" ..." if table.num_columns > 20 else "")
            raise InputError(f"data: column {n!r} given for {role}= not found; columns: {shown}")
    block = [to_float(table.column(n), n, "data") for n in names]  # type: ignore[arg-type]  # named in messages
    return np.column_stack(block) if isinstance(name, (list, tuple)) else block[0]


def _objects(table: Any, name: str, role: str, rows: np.ndarray) -> np.ndarray:
    """Column ``name`` of a pyarrow table as it is (ids, times), at ``rows``."""
    if name not in table.column_names:
        raise InputError(
            f"data: column {name!r} given for {role}= not found; columns: {', '.join(table.column_names)}"
        )
    return np.asarray(table.column(name).to_numpy(zero_copy_only=False))[rows]


def _scalar(x: ArrayLike, name: str) -> float:
    v = as_real_array(x, name)
    if v.ndim:
        raise InputError(f"{name} must be one number, got shape {v.shape} (several levels: levels=[...])")
    return float(v)


def _prediction(
    arrays: dict[str, np.ndarray],
    columns: dict[str, Any],
    *,
    level: float | None = None,
    levels: Any = None,
    member_axis: int = -1,
    settings: Settings,
) -> tuple[Prediction, int]:
    """The container the given arrays describe (the representation follows from the roles given), and
    the number of rows dropped by ``nan_policy="omit"``."""
    from ..io.load import softmax_rows, std_of_variance

    a = dict(arrays)
    if "std" in a and "var" in a:
        raise UsageError("give std or var, not both")
    if "proba" in a and "logits" in a:
        raise UsageError("give proba or logits, not both")
    if ("lower" in a) != ("upper" in a):
        raise UsageError("intervals need both lower and upper")
    if "quantiles" in a and levels is None:
        raise UsageError("quantiles need their levels: pass levels=[...]")
    for role in ("y_true", "mean", "std", "var", "lower", "upper"):  # a column vector (N, 1), as scikit-learn
        if role in a and a[role].ndim == 2 and a[role].shape[1] == 1:  # takes y: one value per row
            a[role] = a[role][:, 0]
    if "samples" in a:
        s = a["samples"]
        a["samples"] = np.moveaxis(s, member_axis_of(member_axis, s.ndim, "samples"), -1) if s.ndim else s
    if "y_true" not in a and set(a) != {"loglik"}:
        raise UsageError("no targets: pass them as data or y_true= (with a table, name their column with y=)")
    if not any(r in a for r in _ROLES[1:]):
        raise UsageError(
            "nothing to evaluate: pass mean= (and std= or var=), lower= and upper=, quantiles= with levels=, "
            "samples=, proba=, logits= or loglik="
        )
    # rows: the targets' (or the first array's) length; scalars broadcast over the rows of 1-d roles
    n = next((len(v) for v in a.values() if v.ndim), None)
    if n is None:
        raise InputError("nothing but scalars given: pass arrays with one value per row")
    for role, v in list(a.items()):
        if v.ndim == 0 and role in ("mean", "std", "var", "lower", "upper"):
            a[role] = np.full(n, float(v))
        elif v.ndim == 0 or len(v) != n:
            first = next(r for r, w in a.items() if w.ndim)
            hint = "give one value per row"
            shape = arrays["samples"].shape if role == "samples" else ()
            if len(shape) == 2 and n in shape:
                hint = f"samples {shape} has its rows on axis {shape.index(n)}: pass member_axis={1 - shape.index(n)}"
            elif len(shape) > 2 and n in shape:
                hint = f"samples {shape} has its rows on axis {shape.index(n)}: pass member_axis= (the members' axis)"
            raise InputError(f"{role} has {len(v) if v.ndim else 'no'} rows but {first} has {n}; {hint}")
    n_dropped, rows = 0, None
    if settings.nan_policy == "omit":
        from ..io.load import usable_rows

        ok, _ = usable_rows(a, n, member_rows="samples" in a and "proba" not in a)
        n_dropped = int(n - ok.sum())
        if not ok.any():
            raise InputError("every row has NaN/inf in an argument; nothing left to evaluate")
        if n_dropped:
            rows = np.flatnonzero(ok)
            a = {k: v[ok] for k, v in a.items()}
    if "var" in a:
        a["std"] = std_of_variance(a.pop("var"), "data", columns.get("var", "var"), rows)
        if "var" in columns:
            columns["std"] = columns.pop("var")
    y, ll = a.get("y_true"), a.get("loglik")
    common: dict[str, Any] = dict(y_true=y, columns=columns, rows=rows, loglik=ll)
    if "proba" in a or "logits" in a:
        p = softmax_rows(a["logits"]) if "logits" in a else a["proba"]
        if p.ndim == 2 and p.shape[1] == 1:  # one named column (proba="p"): as the file loader reads it
            p = p[:, 0]
        if p.ndim == 1:  # binary: P(class 1)
            p = np.column_stack([1.0 - p, p])
        if p.ndim == 3:
            return MemberCategorical(member_proba=p, renormalize=settings.renormalize, **common), n_dropped
        return Categorical(proba=p, renormalize=settings.renormalize, **common), n_dropped
    if "samples" in a:
        return Samples(samples=a["samples"], allow_missing=settings.nan_policy == "omit", **common), n_dropped
    if "quantiles" in a:
        return (
            Quantiles(quantiles=a["quantiles"], levels=levels, fix_crossing=settings.fix_crossing, **common),
            n_dropped,
        )
    if "lower" in a:
        lv = levels if levels is not None else (level if level is not None else settings.level)
        return (
            Intervals(
                lower=a["lower"], upper=a["upper"], levels=np.atleast_1d(lv), mean=a.get("mean"), **common
            ),
            n_dropped,
        )
    if "mean" in a:
        if "std" in a:
            return Gaussian(mean=a["mean"], std=a["std"], **common), n_dropped
        return Point(mean=a["mean"], **common), n_dropped
    return LogLikelihood(**common), n_dropped


def _with_columns(settings: Settings, names: dict[str, str]) -> Settings:
    """``settings`` with the columns ``names`` (role -> column, as the command line's column flags name
    them: they replace the config's naming of the class columns, whichever role it used) and the
    representation they imply."""
    given = set(names) - {"y_true"}
    kind = (
        "categorical"
        if given & set(_CLASS_ROLES)
        else "gaussian"
        if given & {"std", "var"}
        else "intervals"
        if "lower" in given
        else "point"
    )
    kept = {
        k: v for k, v in settings.columns.items() if not (k in _CLASS_ROLES and given & set(_CLASS_ROLES))
    }
    return replace(
        settings,
        columns={**kept, **names},
        representation=settings.representation or (kind if given else None),
    )


def _from_plan(arrow: Any, names: dict[str, str], settings: Settings) -> tuple[Loaded, Settings]:
    """A table whose columns are detected (or named, one per role) exactly as ``uqeval score`` detects a
    file's: the same column plan and loader, over the table in memory."""
    from ..io.load import Loaded, build_batch, input_info, plan_for
    from ..io.readers import TableInfo, is_list_type

    info = TableInfo(
        path="data",  # type: ignore[arg-type]  # messages name the argument
        format="python",
        columns=list(arrow.column_names),
        list_columns=frozenset(f.name for f in arrow.schema if is_list_type(f.type)),
    )
    if names:
        settings = _with_columns(settings, names)
    plan = plan_for(info, settings)
    cols = {c: arrow.column(c) for c in plan.needed()}
    batch = build_batch("data", plan, cols, arrow.num_rows, settings)
    pred = batch.prediction
    assert pred is not None  # allow_empty=False: a table without rows left raised
    meta = input_info(batch, plan, "<table>", "python", arrow.num_rows)
    return Loaded(pred, meta, batch.groups, weights=batch.weights), settings


def _prepare(
    data: Any,
    y_true: Any,
    y: str | None,
    level: float | None,
    levels: ArrayLike | None,
    settings: Settings,
    **roles: Any,
) -> tuple[dict[str, Any], bool, Any, float | None, Settings]:
    """Check how ``data`` and the role keywords go together (as :func:`evaluate` and :func:`plot` take them);
    returns the given roles, whether ``data`` is a table, the targets, the level and the settings."""
    quantiles, lower = roles.get("quantiles"), roles.get("lower")
    given = {r: v for r, v in roles.items() if v is not None}
    table = _is_table(data)
    if y is not None and y_true is not None:
        raise UsageError("give the targets once: y= or y_true=")
    target = y if y is not None else y_true
    if y is not None and not table:
        raise UsageError("y= names a column of a table; with arrays, pass the targets as data or y_true=")
    if data is not None and not table and target is not None:
        raise UsageError("give the targets once: as data or as y_true=")
    if isinstance(data, (str, Path)):
        raise UsageError(f"data is a path; to score a file call uqeval.evaluate_file({str(data)!r})")
    if isinstance(data, Mapping) and not table:  # (an xarray Dataset is a mapping and a table)
        raise UsageError(
            "data is a mapping; pass a pandas DataFrame or pyarrow Table (pyarrow.table(data)) or the arrays "
            "as keyword arguments"
        )
    if given.get("logits") is not None and not settings.logits:  # the class scores are logits: say so
        settings = replace(settings, logits=True)  # in the JSON settings, however they were given
    if level is not None:  # the nominal level of a single lower/upper pair (as --level)
        level = _scalar(level, "level")
        settings = replace(settings, level=level)
    if quantiles is None and lower is None:  # levels do not describe columns: they are the coverage levels
        if levels is not None:
            settings = replace(
                settings, levels=tuple(np.atleast_1d(as_real_array(levels, "levels")).tolist())
            )
        elif level is not None:
            settings = replace(settings, levels=(level,))

    return given, table, target, level, settings


def _load(
    data: Any,
    given: dict[str, Any],
    table: bool,
    target: Any,
    level: float | None,
    levels: ArrayLike | None,
    member_axis: int,
    settings: Settings,
    classes: Any = None,
) -> tuple[Loaded, Settings, Any]:
    """The prediction container of ``data`` and the role keywords (checked by :func:`_prepare`), the settings
    (a table's plan may set levels) and the Arrow table (None unless ``data`` is a table). ``classes``: the
    class labels in the order of the probabilities' columns (:func:`_encode_labels`)."""
    arrow = None
    if isinstance(data, Prediction):
        if given or target is not None:
            raise UsageError("data is a prediction container: pass no other arrays or columns with it")
        loaded = _loaded(data, "<arrays>", data.n, 0)
    elif table:
        arrow = _arrow(data)
        if classes is not None or _classifier_table(arrow, given):
            arrow = _encode_table_labels(arrow, target, classes)
        named = {r: v for r, v in {"y_true": target, **given}.items() if v is not None}
        if _by_plan(named):
            loaded, settings = _from_plan(arrow, named, settings)
        else:  # arrays, or lists of column names: the arrays path
            columns: dict[str, Any] = {}
            arrays: dict[str, np.ndarray] = {}
            target = _target_column(arrow) if target is None else target
            for role, v in {"y_true": target, **given}.items():
                if v is None:
                    continue
                names = isinstance(v, str) or (
                    isinstance(v, (list, tuple)) and bool(v) and all(isinstance(c, str) for c in v)
                )
                if names and role in _CLASS_ROLES and isinstance(v, str):  # "p*", "p0,p1": as --proba
                    from ..io.columns import _named_columns

                    v = _named_columns(arrow.column_names, v, role, "data")
                if names:
                    arrays[role] = _column(arrow, cast("str | Sequence[str]", v), role)  # checked just above
                    columns[role] = list(v) if isinstance(v, (list, tuple)) else v
                else:
                    arrays[role] = as_real_array(v, role)
            pred, n_dropped = _prediction(
                arrays, columns, level=level, levels=levels, member_axis=member_axis, settings=settings
            )
            loaded = _loaded(pred, "<table>", arrow.num_rows, n_dropped, columns)
    elif data is None and target is None and not given:
        raise UsageError(
            "nothing to evaluate: pass the targets (data or y_true=) and a prediction (mean=, ...)"
        )
    else:
        y_arr = data if data is not None else target
        if y_arr is not None and (classes is not None or given.keys() & set(_CLASS_ROLES)):
            y_arr = _encode_labels(y_arr, classes)
        arrays = {"y_true": as_real_array(y_arr, "y_true")} if y_arr is not None else {}
        arrays.update({r: as_real_array(v, r) for r, v in given.items()})
        pred, n_dropped = _prediction(
            arrays, {}, level=level, levels=levels, member_axis=member_axis, settings=settings
        )
        loaded = _loaded(pred, "<arrays>", pred.n + n_dropped, n_dropped)
    return loaded, settings, arrow


def _loaded(
    pred: Prediction, path: str, n_rows: int, n_dropped: int, columns: dict[str, Any] | None = None
) -> Loaded:
    """``pred`` given in Python, with the ``input`` block a file's rows get (:func:`uqeval.io.load.input_info`):
    ``n_rows`` given, ``n_dropped`` of them dropped (``nan_policy="omit"``), ``columns`` named in a table."""
    from ..io.load import Loaded

    info = {"path": path, "format": "python", "n_rows": n_rows, "n_dropped": n_dropped}
    return Loaded(pred, {**info, "representation": pred.kind, "columns": columns or {}})


def _classifier_table(arrow: Any, given: Mapping[str, Any]) -> bool:
    """Whether a table holds a classifier's output: class columns named, or found by name."""
    from ..io.columns import LOGIT_RE, MEMBER_RE, PROBA_RE

    if given.keys() & set(_CLASS_ROLES):
        return True
    return any(r.match(c) for c in arrow.column_names for r in (PROBA_RE, LOGIT_RE, MEMBER_RE))


def _attach_weights(loaded: Loaded, weights: ArrayLike | str, arrow: Any) -> None:
    """``loaded.weights``: ``weights`` (an array over every row given, or a column name of the table ``arrow``),
    checked on every row, at the rows kept."""
    from ..weights import check_weights

    column = None
    values: Any
    if isinstance(weights, str):
        if arrow is None:
            raise UsageError(
                f"weights={weights!r} names a column, but data is not a table: pass the weights as an array"
            )
        column, values = weights, _column(arrow, weights, "weights")
    else:
        values = weights
    w = check_weights(values, column, n=int(loaded.info["n_rows"]))
    loaded.weights = w[loaded.prediction.row_numbers()] if loaded.info.get("n_dropped") else w
    loaded.info["weights"] = column


#: the keywords of :func:`evaluate` that name its inputs (the roles, and how to read them), which
#: :func:`evaluate_file` and :func:`monitor` take too
_FILE_ROLES = (*_ROLES, "y", "levels", "level", "member_axis")


#: the role keywords of :func:`evaluate` that :func:`plot` takes too
_PLOT_ROLES = frozenset((*_FILE_ROLES, "settings", "classes"))


def _file_roles(columns: dict[str, Any]) -> dict[str, Any]:
    """The column keywords of a call on a file, popped from ``columns`` (what is left are settings):
    each given one names a column, ``y`` is ``y_true``."""
    _canonical_columns(columns)
    return {k: columns.pop(k) for k in _FILE_ROLES if columns.get(k) is not None}


def _load_table(
    data: Any, columns: dict[str, Any], settings: Settings | None
) -> tuple[Loaded, Settings, Any]:
    """``(loaded, settings, arrow table or None)`` of arrays or a table with the column keywords of
    :func:`evaluate` popped from ``columns``; what is left are settings (on top of ``settings``)."""
    _canonical_columns(columns)
    roles = {k: columns.pop(k) for k in list(columns) if k in _FILE_ROLES}
    classes = columns.pop("classes", None)
    s = make_settings(None, **columns) if settings is None else replace(settings, **columns)
    member_axis = roles.pop("member_axis", -1)
    y_true, y = roles.pop("y_true", None), roles.pop("y", None)
    level, levels = roles.pop("level", None), roles.pop("levels", None)
    given, table, target, level, s = _prepare(data, y_true, y, level, levels, s, **roles)
    return _load(data, given, table, target, level, levels, member_axis, s, classes=classes)


def _file_table(info: TableInfo) -> Any:
    """Every column of the file ``info`` as a pyarrow Table."""
    import pyarrow as pa

    from ..io.readers import read_columns

    cols, _ = read_columns(info, list(info.columns))
    return pa.table({name: cols[name] for name in info.columns})


def _models(models: Models) -> dict[str, Prediction]:
    """``{name: prediction}`` from a mapping of names to containers (or a sequence of containers)."""
    if isinstance(models, Prediction):
        models = [models]
    if not isinstance(models, Mapping):
        models = {f"model {i + 1}": m for i, m in enumerate(models)}
    bad = [name for name, m in models.items() if not isinstance(m, Prediction)]
    if bad:
        raise InputError(
            f"models must be prediction containers (uqeval.Gaussian, uqeval.Quantiles, ...); "
            f"{bad[0]!r} is a {type(models[bad[0]]).__name__}"
        )
    return dict(models)
