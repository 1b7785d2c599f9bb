"""The Python API: :func:`evaluate` arrays, a prediction, a DataFrame or a file; get :class:`Scores`.

Everything here is a thin front over the command cores (:mod:`uqeval.commands.score.core`) and the metric
catalogue, so a notebook gets the numbers and the JSON document ``uqeval score`` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ._python import python_api
from .config import COLUMN_ROLES, Settings, make_settings
from .errors import InputError, UsageError
from .predictions import (
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
from .validation import as_real_array

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from .io.load import Loaded
    from .io.readers import TableInfo

    #: what ``ucc`` and ``compare`` take as models
    Models = Prediction | Mapping[str, Prediction] | Sequence[Prediction]

__all__ = [
    "Scores",
    "evaluate",
    "evaluate_file",
    "plot",
    "ucc",
    "compare",
    "list_metrics",
    "explain",
    "monitor",
    "schema",
    "list_schemas",
]


class Scores(Mapping):
    """The metrics of one evaluation: a read-only mapping with flat dotted keys.

    ``scores["scoring_rule.crps"]`` or, where the last part is unique, ``scores["crps"]``;
    level-keyed metrics read ``scores["coverage.0.95.coverage"]``. ``orientation`` maps each
    key to ``"lower"``, ``"higher"`` or ``"target"`` (curves and histograms have none),
    :meth:`nested` gives the JSON ``metrics`` block, :meth:`to_json` the whole ``uqeval
    score --format json`` document, :meth:`to_frame` one row per metric.
    """

    def __init__(
        self, summary: dict[str, Any], prediction: Prediction | None = None, settings: Settings | None = None
    ) -> None:
        self._summary = summary
        self._prediction, self._settings = prediction, settings  # what Scores.plot draws
        from .catalogue.paths import flatten, metric_orientation

        self._flat = dict(flatten(summary["metrics"]))
        kind = summary["input"].get("representation")
        self.orientation: dict[str, str] = {}
        for key in self._flat:
            o = metric_orientation(key, summary.get("orientation"), kind)
            if o is not None:
                self.orientation[key] = o

    # Mapping
    def __getitem__(self, key: str) -> Any:
        if key in self._flat:
            return self._flat[key]
        found = [k for k in self._flat if k.rsplit(".", 1)[-1] == key or k.endswith("." + key)]
        if len(found) > 1 and not key.startswith("skill."):  # "crps" is the score, "skill.crps" its skill
            found = [k for k in found if not k.startswith("skill.")] or found
        if len(found) == 1:
            return self._flat[found[0]]
        if found:
            raise KeyError(f"{key!r} is ambiguous; use one of: {', '.join(found)}")
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._flat)

    def __len__(self) -> int:
        return len(self._flat)

    @property
    def representation(self) -> str:
        return self._summary["input"]["representation"]

    def nested(self) -> dict[str, Any]:
        """The metrics as the JSON summary nests them: ``{group: {key: value}}``."""
        import copy

        return copy.deepcopy(self._summary["metrics"])

    def to_json(self) -> str:
        """The ``uqeval.score/1`` document, exactly as ``uqeval score --format json`` writes it."""
        from .io.writers import dumps_json

        return dumps_json(self._summary)

    def to_frame(self) -> pd.DataFrame:
        """A pandas DataFrame, one row per metric: ``metric``, ``group``, ``value``, ``orientation``."""
        import pandas as pd

        return pd.DataFrame(
            [
                {"metric": k, "group": k.split(".", 1)[0], "value": v, "orientation": self.orientation.get(k)}
                for k, v in self._flat.items()
            ]
        )

    def plot(self, kind: str, ax: Axes | None = None) -> Axes:
        """:func:`uqeval.plot` of the prediction these scores came from (``kind``, ``ax`` as there)."""
        if self._prediction is None:
            raise UsageError("these scores hold no prediction to plot; call uqeval.plot(data, kind) instead")
        if "weights" in self._summary:
            raise UsageError(
                "these scores are weighted (weights=) and the plots are not: plot the data with "
                "uqeval.plot(data, kind) instead"
            )
        return plot(self._prediction, kind, ax=ax, settings=self._settings)

    def __repr__(self) -> str:
        from .text import DETAIL, fmt_number

        lines = [f"Scores({self.representation}, {self._summary['input'].get('n_rows')} rows)"]
        for k, v in self._flat.items():
            if isinstance(v, (int, float)) or v is None:
                lines.append(
                    f"  {k}: {fmt_number(v, DETAIL)}"
                    + (f"  ({self.orientation[k]})" if k in self.orientation else "")
                )
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from html import escape

        from .text import DETAIL, fmt_number

        rows = "".join(
            f"<tr><td>{escape(k)}</td><td style='text-align:right'>{escape(fmt_number(v, DETAIL))}</td>"
            f"<td>{escape(self.orientation.get(k, ''))}</td></tr>"
            for k, v in self._flat.items()
            if isinstance(v, (int, float)) or v is None
        )
        return (
            f"<table><caption>uqeval scores: {escape(self.representation)}, "
            f"{self._summary['input'].get('n_rows')} rows</caption>"
            f"<tr><th>metric</th><th>value</th><th>better</th></tr>{rows}</table>"
        )


# --------------------------------------------------------------------------- building a prediction


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


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
    return name == "DataFrame" and (mod.startswith("pandas") or hasattr(x, "to_arrow"))


def _arrow(table: Any) -> Any:
    """A pyarrow Table of a DataFrame or Table, converted in memory; column names must be distinct strings."""
    import pyarrow as pa

    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
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
    from .io.readers import to_float

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


def _member_axis(member_axis: Any, ndim: int) -> int:
    if isinstance(member_axis, bool) or not isinstance(member_axis, (int, np.integer)):
        raise InputError(f"member_axis must be an integer, got {member_axis!r}")
    if not -ndim <= member_axis < ndim:
        raise InputError(f"member_axis={member_axis} is out of range for samples with {ndim} dimension(s)")
    return int(member_axis)


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
    a = dict(arrays)
    if "std" in a and "var" in a:
        raise UsageError("give std or var, not both")
    if "proba" in a and "logits" in a:
        raise UsageError("give proba or logits, not both")
    if ("lower" in a) != ("upper" in a):
        raise UsageError("intervals need both lower and upper")
    if "quantiles" in a and levels is None:
        raise UsageError("quantiles need their levels: pass levels=[...]")
    if "samples" in a:
        s = a["samples"]
        a["samples"] = np.moveaxis(s, _member_axis(member_axis, s.ndim), -1) if s.ndim else s
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
            raise InputError(
                f"{role} has {len(v) if v.ndim else 'no'} rows but {first} has {n}; give one value per row"
            )
    n_dropped, rows = 0, None
    if settings.nan_policy == "omit":
        from .io.load import usable_rows

        ok, _ = usable_rows(a, n, member_rows="samples" in a and "proba" not in a)
        n_dropped = int(n - ok.sum())
        if not ok.any():
            raise InputError("every row has NaN/inf in an argument; nothing left to evaluate")
        if n_dropped:
            rows = np.flatnonzero(ok)
            a = {k: v[ok] for k, v in a.items()}
    if "var" in a:
        var = a.pop("var")
        bad = ~(var > 0) & np.isfinite(var)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            row = int(rows[i]) if rows is not None else i
            raise InputError(
                f"var must be > 0: {int(bad.sum())} non-positive value(s) in '{columns.get('var', 'var')}' "
                f"(first at row {row}, found {var[i]:g})"
            )
        a["std"] = np.sqrt(var)
        if "var" in columns:
            columns["std"] = columns.pop("var")
    y, ll = a.get("y_true"), a.get("loglik")
    common: dict[str, Any] = dict(y_true=y, columns=columns, rows=rows, loglik=ll)
    if "proba" in a or "logits" in a:
        p = _softmax(a["logits"]) if "logits" in a else a["proba"]
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
    from .io.load import Loaded, build_batch, input_info, plan_for
    from .io.readers import TableInfo

    info = TableInfo(
        path="data",  # type: ignore[arg-type]  # messages name the argument
        format="python",
        columns=list(arrow.column_names),
        list_columns=frozenset(f.name for f in arrow.schema if _is_list(f.type)),
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


def _is_list(t: Any) -> bool:
    import pyarrow as pa

    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


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
    if isinstance(data, Mapping):
        raise UsageError(
            "data is a mapping; pass a pandas DataFrame or pyarrow Table (pyarrow.table(data)) or the arrays "
            "as keyword arguments"
        )
    if given.get("logits") is not None and not settings.logits:  # the class scores are logits: say so
        settings = replace(settings, logits=True)  # in the JSON settings, however they were given
    if level is not None:  # the nominal level of a single lower/upper pair (as --level)
        level = float(_scalar(level, "level"))
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
) -> tuple[Loaded, Settings, Any]:
    """The prediction container of ``data`` and the role keywords (checked by :func:`_prepare`), the settings
    (a table's plan may set levels) and the Arrow table (None unless ``data`` is a table)."""
    from .io.load import Loaded

    arrow = None
    if isinstance(data, Prediction):
        if given or target is not None:
            raise UsageError("data is a prediction container: pass no other arrays or columns with it")
        n = data.n
        loaded = Loaded(
            data,
            {
                "path": "<arrays>",
                "format": "python",
                "n_rows": n,
                "n_dropped": 0,
                "representation": data.kind,
                "columns": {},
            },
        )
    elif table:
        arrow = _arrow(data)
        named = {r: v for r, v in {"y_true": target, **given}.items() if v is not None}
        if _by_plan(named):
            loaded, settings = _from_plan(arrow, named, settings)
        else:  # arrays, or lists of column names: the arrays path
            columns: dict[str, Any] = {}
            arrays: dict[str, np.ndarray] = {}
            if target is None:
                from .io.columns import ALIASES

                found = [c for c in arrow.column_names if c.lower() in ALIASES["y_true"] + ("label",)]
                target = found[0] if len(found) == 1 else None
            for role, v in {"y_true": target, **given}.items():
                if v is None:
                    continue
                names = isinstance(v, str) or (
                    isinstance(v, (list, tuple)) and bool(v) and all(isinstance(c, str) for c in v)
                )
                if names and role in _CLASS_ROLES and isinstance(v, str):  # "p*", "p0,p1": as --proba
                    from .io.columns import _named_columns

                    v = _named_columns(arrow.column_names, v, role, "data")
                if names:
                    arrays[role] = _column(arrow, cast("str | Sequence[str]", v), role)  # checked just above
                    columns[role] = list(v) if isinstance(v, (list, tuple)) else v
                else:
                    arrays[role] = as_real_array(v, role)
            pred, n_dropped = _prediction(
                arrays, columns, level=level, levels=levels, member_axis=member_axis, settings=settings
            )
            loaded = Loaded(
                pred,
                {
                    "path": "<table>",
                    "format": "python",
                    "n_rows": arrow.num_rows,
                    "n_dropped": n_dropped,
                    "representation": pred.kind,
                    "columns": columns,
                },
            )
    elif data is None and target is None and not given:
        raise UsageError(
            "nothing to evaluate: pass the targets (data or y_true=) and a prediction (mean=, ...)"
        )
    else:
        y_arr = data if data is not None else target
        arrays = {"y_true": as_real_array(y_arr, "y_true")} if y_arr is not None else {}
        arrays.update({r: as_real_array(v, r) for r, v in given.items()})
        pred, n_dropped = _prediction(
            arrays, {}, level=level, levels=levels, member_axis=member_axis, settings=settings
        )
        loaded = Loaded(
            pred,
            {
                "path": "<arrays>",
                "format": "python",
                "n_rows": pred.n + n_dropped,
                "n_dropped": n_dropped,
                "representation": pred.kind,
                "columns": {},
            },
        )
    return loaded, settings, arrow


@python_api
def evaluate(
    data: Any = None,
    *,
    y_true: ArrayLike | None = None,
    mean: ArrayLike | None = None,
    std: ArrayLike | None = None,
    var: ArrayLike | None = None,
    lower: ArrayLike | None = None,
    upper: ArrayLike | None = None,
    level: float | None = None,
    quantiles: ArrayLike | None = None,
    levels: ArrayLike | None = None,
    samples: ArrayLike | None = None,
    proba: ArrayLike | None = None,
    logits: ArrayLike | None = None,
    loglik: ArrayLike | None = None,
    member_axis: int = -1,
    settings: Settings | None = None,
    y: str | None = None,
    reference: Prediction | str | Path | None = None,
    train: ArrayLike | str | Path | None = None,
    time: ArrayLike | str | None = None,
    id: str | None = None,
    weights: ArrayLike | str | None = None,
    **overrides: Any,
) -> Scores:
    """Every metric that applies to a prediction, as ``uqeval score`` computes it.

    Parameters
    ----------
    data : the targets (an array, list or pandas Series), a :class:`~uqeval.predictions.Prediction`,
        or a table (pandas DataFrame, pyarrow Table): then ``y`` / ``y_true`` and the role arguments
        may be column names (a list of names for quantiles, samples and probabilities) or arrays;
        without any, the columns are detected as ``uqeval score`` detects a file's (converted in
        memory, no temporary file).
    y_true : targets (class labels 0..K-1 for probabilities), when ``data`` is not given.
    mean, std, var : Gaussian N(mean, std²) (``mean`` alone: point predictions); scalars broadcast.
    lower, upper, level / levels : central intervals ((N,) with ``level``, (N, L) with ``levels``).
    quantiles, levels : (N, Q) predicted quantiles at ``levels``.
    samples, member_axis : ensemble members or posterior draws.
    proba, logits : class probabilities (N, K), binary P(class 1) (N,), or an ensemble (N, M, K); with a
        table, their columns: a list of names, or one string naming them as ``--proba``/``--logits`` do
        (a comma list ``"p0,p1,p2"`` or a glob ``"p*"``, ordered by the number in the name).
    loglik : per-member log-likelihoods (N, M) for the information criteria.
    levels, level : for Gaussian, sample and point predictions, the coverage levels (default 0.95).
    settings, **overrides : a :class:`~uqeval.config.Settings` and/or its fields (``num_bins=50``,
        ``nan_policy="omit"`` to drop rows with NaN/inf in any argument).
    reference, train, time : skill scores (group ``skill``) against a reference forecast: a
        :class:`~uqeval.predictions.Prediction` or a predictions file over the same targets,
        ``"climatology"`` with ``train`` (training targets: an array or a file), or
        ``"persistence"`` with ``time`` (an array, or a column name of ``data``). See ``uqeval.commands.compare.skill``.
    id : with a reference file, join its rows to the model's on this column (of ``data``, a table, and of
        the file) instead of requiring the same row order.
    weights : per-row weights (N,) (a column name of ``data``, a table): every metric that takes weights
        (``Metric.supports_weights``) is computed from the weighted rows; the others are left out and listed
        with the reason in ``Scores.to_json()["weights"]["not_weighted"]``. See :mod:`uqeval.weights`.

    Returns
    -------
    Scores

    Raises
    ------
    uqeval.InputError, uqeval.UsageError (both ``ValueError``)
        Bad data or arguments; the message names the argument (or column) and the first bad row.

    Examples
    --------
    >>> import numpy as np, uqeval
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=500); y = mu + rng.normal(size=500)
    >>> s = uqeval.evaluate(y, mean=mu, std=np.ones(500))
    >>> round(s["crps"], 4) == round(float(uqeval.crps_normal(y, mu, 1.0).mean()), 4)
    True
    """
    from .commands.score.core import score_loaded

    settings = make_settings(None, **overrides) if settings is None else replace(settings, **overrides)
    given, table, target, level, settings = _prepare(
        data,
        y_true,
        y,
        level,
        levels,
        settings,
        mean=mean,
        std=std,
        var=var,
        lower=lower,
        upper=upper,
        quantiles=quantiles,
        samples=samples,
        proba=proba,
        logits=logits,
        loglik=loglik,
    )
    spec = None
    if reference is not None or time is not None or id is not None:  # forecast verification (issue 16)
        from .commands.compare.skill import reference_spec

        spec = reference_spec(reference, train, time, id)
        if id is not None and not table:
            raise UsageError(
                f"id={id!r} names a column of data and of the reference file, but data is "
                "not a table: pass a pandas DataFrame or pyarrow Table, or use evaluate_file"
            )
        if isinstance(time, str) and not table:
            raise UsageError("time= names a column, but data is not a table: pass the times as an array")

    loaded, settings, arrow = _load(data, given, table, target, level, levels, member_axis, settings)
    if weights is None:  # a config's [columns] weights
        weights = settings.columns.get("weights")
    if weights is not None:
        _attach_weights(loaded, weights, arrow)
    if arrow is not None:
        rows = loaded.prediction.row_numbers()
        if spec is not None and isinstance(time, str):
            spec = replace(spec, time=_objects(arrow, time, "time", rows))
        if spec is not None and id is not None:
            spec = replace(spec, model_ids=_objects(arrow, id, "id", rows))
    if spec is not None and spec.kind == "persistence" and not isinstance(time, str) and time is not None:
        times = np.asarray(time)
        if loaded.info["n_dropped"] and times.shape[:1] == (loaded.info["n_rows"],):
            spec = replace(spec, time=times[loaded.prediction.row_numbers()])  # the times of the rows kept
    return Scores(score_loaded(loaded, settings, spec), loaded.prediction, settings)


def _attach_weights(loaded: Loaded, weights: ArrayLike | str, arrow: Any) -> None:
    """``loaded.weights``: ``weights`` (an array over every row given, or a column name of the table ``arrow``),
    checked on every row, at the rows kept."""
    from .weights import check_weights

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
_PLOT_ROLES = frozenset((*_FILE_ROLES, "settings"))


@python_api
def plot(data: Any, kind: str, ax: Axes | None = None, **columns: Any) -> Axes:
    """Draw one plot ``kind`` of ``uqeval plot`` on a matplotlib Axes and return it.

    ``data`` and ``columns`` are what :func:`evaluate` takes (arrays, a prediction container, a DataFrame
    with column names; ``y_true=``, ``mean=``, ``std=``, ... and settings such as ``num_bins=``), or ``data``
    is ``{name: data}`` to overlay models on one Axes, one labelled series each (the kinds of
    ``uqeval.plots.kinds.OVERLAY_KINDS``: calibration, reliability, pit, rank_histogram, coverage, corp, ucc,
    ...), each model in its colour of the style (:func:`uqeval.plots.style.model_color`, in the mapping's
    order); ``columns`` then apply to every model. ``kind`` is one of ``uqeval.plots.kinds.PLOT_KINDS`` that applies to the
    representation (the error lists those that do); opt-in diagnostics (``spread_skill``,
    ``rank_histogram``, ...) need no setting. ``ax``: draw there (every kind: those whose
    command-line figure has several panels draw their one-panel form, counts as grey bars along the bottom);
    without it a new pyplot figure is made, so a notebook shows it. matplotlib is imported here, not by ``import uqeval``.

    >>> import numpy as np, uqeval
    >>> rng = np.random.default_rng(0); y = rng.normal(size=200)
    >>> ax = uqeval.plot(y, "calibration", mean=np.zeros(200), std=np.ones(200))
    >>> ax.get_title()
    'Average calibration'
    """
    from .errors import option
    from .plots.kinds import OVERLAY_KINDS, PLOT_KINDS, build_figures
    from .plots.style import model_color

    if not isinstance(kind, str) or kind not in PLOT_KINDS:
        raise UsageError(f"unknown {option('kind', kind)}: choose from {', '.join(PLOT_KINDS)}")
    bad = sorted(set(columns) - _PLOT_ROLES - set(Settings.__dataclass_fields__))
    if bad:
        raise TypeError(f"plot() got an unexpected keyword argument {bad[0]!r}")
    models = dict(data) if isinstance(data, Mapping) else None
    if models is not None:
        if not models:
            raise UsageError("data is an empty mapping: give {name: data} with at least one model")
        if len(models) > 1 and kind not in OVERLAY_KINDS:
            raise UsageError(
                f"{option('kind', kind)} does not overlay several models; the kinds that do: "
                f"{', '.join(OVERLAY_KINDS)} (or plot each model on its own Axes)"
            )
    named = models if models is not None else {"": data}
    preds: dict[str, tuple[Prediction, Settings]] = {}
    for name, one in named.items():
        preds[str(name)] = _plot_prediction(one, **columns)
    from .plots.kinds import applicable_kinds

    for name, (pred, settings) in preds.items():  # opt-in figures (diagnostics, murphy) need no setting
        preds[name] = (pred, replace(settings, diagnostics=True, murphy=True))
        allowed = applicable_kinds(pred, preds[name][1])
        if kind not in allowed:
            who = f" (model {name!r})" if models is not None else ""
            raise UsageError(
                f"{option('kind', kind)} does not apply to {pred.kind} predictions{who}; "
                + (f"the kinds that do: {', '.join(allowed)}" if allowed else "no plot kind does")
                + _KIND_HINTS.get(kind, "")
                + (f"; {pred.no_band()}" if kind in _BAND_KINDS and pred.no_band() else "")
            )
    if models is not None:
        _one_overlay(kind, {name: pred for name, (pred, _) in preds.items()})
    if ax is None:  # every kind draws on one Axes (several-panel kinds: their one-panel form)
        import matplotlib.pyplot as plt

        from .plots.common import FIGSIZE

        _, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    if kind == "ucc" and models is not None:  # plot_ucc draws every model's curve, in its own colours
        from .plots.kinds import KIND_TITLES, ucc_result
        from .plots.ucc import plot_ucc

        results = [ucc_result(p, s, name) for name, (p, s) in preds.items()]
        plot_ucc([r["model"] for r in results], title=KIND_TITLES["ucc"], ax=ax)
        return ax
    fig = None
    for i, (name, (pred, settings)) in enumerate(preds.items()):
        bundle = build_figures(
            pred,
            None,
            settings,
            kinds=[kind],
            ax=ax,
            series=name if models is not None else None,
            color=model_color(i) if models is not None else None,
        )
        fig = bundle.figures.get(kind)
        if fig is None:
            raise InputError(f"nothing to draw for {option('kind', kind)}: {'; '.join(bundle.notes)}")
    if models is not None:  # one legend entry per label (each model draws the reference again)
        from .plots.common import legend_once

        legend_once(ax)
    return ax


def _one_overlay(kind: str, preds: Mapping[str, Prediction]) -> None:
    """Raise unless every model's series of ``kind`` goes on the same overlay
    (:func:`uqeval.plots.overlay.overlay_key`, as the report groups them): a quantile file's calibration curve
    and PIT histogram, at the levels the file carries, or a classifier's reliability diagram have other
    axes than the others'."""
    from .errors import option
    from .plots.overlay import overlay_key

    groups: dict[str, list[str]] = {}
    for name, pred in preds.items():
        groups.setdefault(overlay_key(kind, pred), []).append(name)
    if len(groups) > 1:
        listed = "; ".join(
            f"{', '.join(map(repr, names))} ({key.replace('/', ', ')})" for key, names in groups.items()
        )
        raise UsageError(
            f"{option('kind', kind)} cannot draw these models on one Axes, their axes mean different "
            f"things: {listed}; plot each group on an Axes of its own (one uqeval.plot call per group, ax=)"
        )


#: kinds drawn from a central interval: the error for a prediction with none says why (:meth:`Prediction.no_band`)
_BAND_KINDS = ("predictions", "intervals", "ucc", "coverage")
#: why a kind may not apply, for :func:`plot`'s error
_KIND_HINTS = {
    "skill": "; uqeval.plot does not draw the skill plot (it needs a reference forecast)",
    "exceedance_reliability": "; exceedance_reliability needs thresholds=(t, ...) (the events Y > t)",
}


def _plot_prediction(data: Any, **columns: Any) -> tuple[Prediction, Settings]:
    """The prediction and settings :func:`evaluate` would score for ``data`` and ``columns``."""
    settings = columns.pop("settings", None)
    roles = {k: columns.pop(k) for k in list(columns) if k in _PLOT_ROLES}
    settings = make_settings(None, **columns) if settings is None else replace(settings, **columns)
    member_axis = roles.pop("member_axis", -1)
    y_true, y = roles.pop("y_true", None), roles.pop("y", None)
    level, levels = roles.pop("level", None), roles.pop("levels", None)
    given, table, target, level, settings = _prepare(data, y_true, y, level, levels, settings, **roles)
    loaded, settings, _ = _load(data, given, table, target, level, levels, member_axis, settings)
    return loaded.prediction, settings


@python_api
def evaluate_file(
    path: str | Path,
    *,
    settings: Settings | None = None,
    config: str | Path | None = None,
    reference: Prediction | str | Path | None = None,
    train: ArrayLike | str | Path | None = None,
    time: ArrayLike | str | None = None,
    id: str | None = None,
    **overrides: Any,
) -> Scores:
    """:func:`evaluate` a CSV or Parquet file, exactly as ``uqeval score FILE`` does.

    Columns are detected by name, or named with the keywords of :func:`evaluate` (``y_true="target"``,
    ``mean="prediction"``, ``std="sigma"``; lists of names for ``quantiles``, ``samples``, ``proba``; a glob
    or comma list for ``proba``/``logits``, ``logits="z*"``, as ``--proba``/``--logits`` take them).
    Other ``overrides`` are settings (``num_bins=50``, ``nan_policy="omit"``).
    ``Scores.to_json()`` is the document ``uqeval score FILE --format json`` prints.
    """
    from .commands.score.core import score_loaded
    from .io.load import load_predictions

    roles = {k: overrides.pop(k) for k in _FILE_ROLES if overrides.get(k) is not None}
    weights = overrides.pop("weights", None)
    if weights is not None and not isinstance(weights, str):
        raise UsageError(f"weights= names a column of the file, got {type(weights).__name__}")
    s = (
        settings
        if settings is not None and not overrides and config is None
        else make_settings(config, **overrides)
    )
    if "y" in roles:
        roles["y_true"] = roles.pop("y")
    if any(not isinstance(v, str) for r, v in roles.items() if r in _COLUMN_ROLES):
        bad = next(r for r, v in roles.items() if r in _COLUMN_ROLES and not isinstance(v, str))
        raise UsageError(f"{bad}= names a column of the file, got {type(roles[bad]).__name__}")
    spec = None
    if reference is not None or time is not None or id is not None:  # skill scores (see evaluate)
        from .commands.compare.skill import reference_spec

        spec = reference_spec(reference, train, time, id)
    if _by_plan(roles):  # the loader's own column plan
        if roles:
            s = _with_columns(s, roles)
        if weights is not None:
            s = replace(s, columns={**s.columns, "weights": weights})
        loaded = load_predictions(path, s, weights_ok=True)
        return Scores(score_loaded(loaded, s, spec), loaded.prediction, s)
    # lists of columns (quantiles, samples, proba, ...): read the file and evaluate its table
    from .io.readers import inspect, read_columns

    info = inspect(path)
    arrow = _file_table(info, read_columns)
    try:
        weights = weights if weights is not None else s.columns.get("weights")
        scores = evaluate(
            arrow, settings=s, reference=reference, train=train, time=time, id=id, weights=weights, **roles
        )
        scores._summary["input"].update(path=str(path), format=info.format)
        return scores
    except InputError as exc:  # the table's messages name "data": here it is the file
        text = str(exc)
        if not text.startswith("data"):
            raise
        raise type(exc)(
            f"{path}{text[4:] if text.startswith('data:') else ': ' + text}", fix=exc.fix
        ) from None


def _file_table(
    info: TableInfo, read_columns: Callable[[TableInfo, list[str]], tuple[dict[str, object], int]]
) -> Any:
    import pyarrow as pa

    cols, _ = read_columns(info, list(info.columns))
    return pa.table({name: cols[name] for name in info.columns})


@python_api
def list_metrics(representation: str | None = None) -> list[dict[str, Any]]:
    """The metric catalogue: one dict per metric (``path``, ``group``, ``name``, ``representations``,
    ``orientation``, ``reduction``, ``description``, ``supports_weights``), optionally only those for one representation
    (``"gaussian"``, ``"point"``, ``"intervals"``, ``"quantiles"``, ``"samples"``, ``"categorical"``,
    ``"members"``, ``"dirichlet"``, ``"loglik"``, ``"multivariate"``)."""
    from .catalogue import METRICS

    kinds = {k for m in METRICS.values() for k in m.representations}
    if representation is not None and representation not in kinds:
        raise InputError(f"unknown representation {representation!r}; one of {', '.join(sorted(kinds))}")
    return [
        {
            "path": m.path,
            "group": m.group,
            "name": m.name,
            "representations": list(m.representations),
            "orientation": m.orientation_for(representation),
            "reduction": m.reduction,
            "description": m.description,
            "supports_weights": m.supports_weights,
        }
        for m in METRICS.values()
        if representation is None or m.applies_to(representation)
    ]


@python_api
def explain(name: str) -> str:
    """What a metric means, its formula and reference (as ``uqeval explain NAME``)."""
    from .glossary import explain as _explain

    return _explain(name)


@python_api
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a document uqeval writes, as ``uqeval schema NAME`` prints it.

    ``name`` is a document (``"score"``, ``"compare"``, ``"ucc"``, ``"coverage"``, ``"check"``,
    ``"recalibrate"``, ``"recalibrator"``; :func:`list_schemas` has them all) or its tag
    (``"uqeval.score/1"``). Validate with any draft 2020-12 validator, e.g.
    ``jsonschema.validate(doc, uqeval.schema("score"))``.
    """
    from .schemas import load

    return load(name)


@python_api
def list_schemas() -> dict[str, dict[str, str]]:
    """Every schema :func:`schema` knows: name -> ``{"document": tag, "title": ...}``."""
    from .schemas import catalogue

    return catalogue()


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
    from .commands.ucc.core import band_of, ucc_report
    from .io.load import Loaded

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
    from .commands.compare.core import Model, align_models, compare_models
    from .resample import Resampling

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
    return compare_models(
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
        so that the next call needs only the new rows.
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
    from .commands.monitor.core import build_document, monitor_file
    from .commands.monitor.windows import Layout, Windows, dump_state, load_state
    from .io.writers import atomic_write_bytes

    saved = None
    if state is not None and Path(state).exists():
        saved = Path(state).read_bytes()
    if isinstance(data, (str, Path)):
        roles = {k: columns.pop(k) for k in _FILE_ROLES if columns.get(k) is not None}
        s = make_settings(None, **columns) if settings is None else replace(settings, **columns)
        if "y" in roles:
            roles["y_true"] = roles.pop("y")
        if roles or by is not None:
            s = replace(s, columns={**s.columns, **roles, "by": by})
        if time is not None and not isinstance(time, str):
            raise UsageError("time= names a column of the file; give its name")
        if state is not None and s.columns.get("weights"):
            from .weights import refuse_weights

            raise refuse_weights(
                "uqeval.monitor with state=", "a weighted monitor reads all its rows in one call"
            )
        from .engine.options import EngineOptions

        doc, new = monitor_file(
            data,
            s,
            window=window,
            time=time,
            origin=origin,
            alpha=alpha,
            engine=EngineOptions(engine, chunk_rows, quiet=True),
            state=saved,
            state_source=str(state),
            adversarial_windows=adversarial_windows,
        )
    else:
        if by is not None:
            raise UsageError(
                "by= applies to a file (monitor reads its --by column with the rows); write the table first"
            )
        member_axis = columns.pop("member_axis", -1)
        roles = {k: columns.pop(k) for k in list(columns) if k in _PLOT_ROLES}
        s = make_settings(None, **columns) if settings is None else replace(settings, **columns)
        y_true, y = roles.pop("y_true", None), roles.pop("y", None)
        level, levels = roles.pop("level", None), roles.pop("levels", None)
        given, table, target, level, s = _prepare(data, y_true, y, level, levels, s, **roles)
        loaded, s, arrow = _load(data, given, table, target, level, levels, member_axis, s)
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
        from .io.load import Batch

        pred = loaded.prediction
        batch = Batch(
            pred, int(loaded.info["n_dropped"]), 0, loaded.info.get("columns") or {}, weights=loaded.weights
        )
        run.add(batch, n_raw, 0, extra, str(loaded.info["path"]))
        info = {"path": loaded.info["path"], "format": loaded.info["format"], "engine": "memory"}
        doc, new = build_document(info, run, s, alpha), dump_state(run)
    if state is not None:
        atomic_write_bytes(state, new)
    return doc
