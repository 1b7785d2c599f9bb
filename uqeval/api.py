"""The Python API: :func:`evaluate` arrays, a prediction, a DataFrame or a file; get :class:`Scores`.

Everything here is a thin front over the command cores (:mod:`uqeval.tasks.score`) and the metric
catalogue, so a notebook gets the numbers and the JSON document ``uqeval score`` gives.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .config import Settings, make_settings
from .errors import InputError, UqevalError, UsageError
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

if TYPE_CHECKING:
    import pandas as pd
    from numpy.typing import ArrayLike

    #: what ``ucc`` and ``compare`` take as models
    Models = Prediction | Mapping[str, Prediction] | Sequence[Prediction]

__all__ = ["Scores", "evaluate", "evaluate_file", "ucc", "compare", "list_metrics", "explain"]

#: How an error's fix (:attr:`uqeval.errors.UqevalError.fix`) is phrased for a Python caller.
PYTHON_FIXES = {
    "nan_policy": "; drop those rows first, or pass nan_policy='omit'",
    "targets": " (pass y_true)",
    "fix_crossing": "; fix the model or pass fix_crossing=True to sort each row",
    "renormalize": "; pass renormalize=True to rescale small drift (or logits= if they are logits)",
    "logits": " or pass logits= if the values are logits",
}


def _python_error(exc: UqevalError) -> UqevalError:
    hint = PYTHON_FIXES.get(exc.fix or "", "")
    return type(exc)(f"{exc}{hint}") if hint else exc


class Scores(Mapping):
    """The metrics of one evaluation: a read-only mapping with flat dotted keys.

    ``scores["scoring_rule.crps"]`` or, where the last part is unique, ``scores["crps"]``;
    level-keyed metrics read ``scores["coverage.0.95.coverage"]``. ``orientation`` maps each
    key to ``"lower"``, ``"higher"`` or ``"target"`` (curves and histograms have none),
    :meth:`nested` gives the JSON ``metrics`` block, :meth:`to_json` the whole ``uqeval
    score --format json`` document, :meth:`to_frame` one row per metric.
    """

    def __init__(self, summary: dict[str, Any]) -> None:
        self._summary = summary
        from .report.format import flatten, metric_orientation

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

    def __repr__(self) -> str:
        from .report.format import DETAIL, fmt_number

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

        from .report.format import DETAIL, fmt_number

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


def _prediction(
    y_true: Any,
    *,
    mean: Any = None,
    std: Any = None,
    var: Any = None,
    lower: Any = None,
    upper: Any = None,
    level: Any = None,
    quantiles: Any = None,
    levels: Any = None,
    samples: Any = None,
    proba: Any = None,
    logits: Any = None,
    member_axis: int = -1,
    loglik: Any = None,
    settings: Settings,
) -> Prediction:
    """The container the given arrays describe (the representation is inferred from the arguments)."""
    if std is not None and var is not None:
        raise InputError("give std or var, not both")
    if var is not None:
        var = np.asarray(var, dtype=np.float64)
        if np.any(var <= 0):
            raise InputError(
                f"var must be > 0: {int(np.sum(var <= 0))} non-positive value(s) "
                f"(first at row {int(np.flatnonzero(var <= 0)[0])})"
            )
        std = np.sqrt(var)
    ll = None if loglik is None else np.asarray(loglik, dtype=np.float64)
    if proba is not None or logits is not None:
        if proba is not None and logits is not None:
            raise InputError("give proba or logits, not both")
        p = (
            _softmax(np.asarray(logits, dtype=np.float64))
            if logits is not None
            else np.asarray(proba, np.float64)
        )
        if p.ndim == 1:  # binary: P(class 1)
            p = np.column_stack([1.0 - p, p])
        labels = None if y_true is None else np.asarray(y_true)
        if p.ndim == 3:
            return MemberCategorical(
                y_true=labels, member_proba=p, renormalize=settings.renormalize, loglik=ll
            )
        return Categorical(y_true=labels, proba=p, renormalize=settings.renormalize, loglik=ll)
    if samples is not None:
        s = np.moveaxis(np.asarray(samples, dtype=np.float64), member_axis, -1)
        return Samples(y_true=y_true, samples=s, allow_missing=settings.nan_policy == "omit", loglik=ll)
    if quantiles is not None:
        if levels is None:
            raise InputError("quantiles need their levels: pass levels=[...]")
        return Quantiles(
            y_true=y_true,
            quantiles=np.asarray(quantiles, dtype=np.float64),
            levels=levels,
            fix_crossing=settings.fix_crossing,
            loglik=ll,
        )
    if lower is not None or upper is not None:
        if lower is None or upper is None:
            raise InputError("intervals need both lower and upper")
        lv = levels if levels is not None else (level if level is not None else settings.level)
        return Intervals(
            y_true=y_true, lower=lower, upper=upper, levels=np.atleast_1d(lv), mean=mean, loglik=ll
        )
    if mean is not None:
        if std is not None:
            return Gaussian(y_true=y_true, mean=mean, std=std, loglik=ll)
        return Point(y_true=y_true, mean=mean, loglik=ll)
    if ll is not None:
        return LogLikelihood(y_true=y_true, loglik=ll)
    raise InputError(
        "nothing to evaluate: pass mean (and std or var), lower/upper, quantiles with levels, "
        "samples, proba or logits"
    )


def _from_table(table: Any, columns: dict[str, Any]) -> dict[str, Any]:
    """Arrays from a pandas DataFrame or pyarrow Table, by column name (a list of names for 2-d roles)."""
    import pandas as pd

    df = table if isinstance(table, pd.DataFrame) else table.to_pandas()
    out = {}
    for role, name in columns.items():
        if name is None:
            continue
        names = list(name) if isinstance(name, (list, tuple)) else [name]
        missing = [n for n in names if n not in df.columns]
        if missing:
            raise InputError(
                f"column {missing[0]!r} (for {role}) not found; columns: {', '.join(map(str, df.columns))}"
            )
        block = df[names].to_numpy(dtype=np.float64)
        out[role] = block if isinstance(name, (list, tuple)) else block[:, 0]
    return out


_ARRAY_ROLES = ("mean", "std", "var", "lower", "upper", "quantiles", "samples", "proba", "logits", "loglik")


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
    **overrides: Any,
) -> Scores:
    """Every metric that applies to a prediction, as ``uqeval score`` computes it.

    Parameters
    ----------
    data : array of targets, a :class:`~uqeval.predictions.Prediction`, or a pandas DataFrame /
        pyarrow Table (then ``y`` and the role arguments are column names; a list of names for
        quantiles, samples and probabilities; without names the columns are detected as
        ``uqeval score`` detects a file's).
    y_true : targets (class labels 0..K-1 for probabilities), when ``data`` is not given.
    mean, std, var : Gaussian N(mean, std²) (``mean`` alone: point predictions).
    lower, upper, level / levels : central intervals ((N,) with ``level``, (N, L) with ``levels``).
    quantiles, levels : (N, Q) predicted quantiles at ``levels``.
    samples, member_axis : ensemble members or posterior draws.
    proba, logits : class probabilities (N, K), binary P(class 1) (N,), or an ensemble (N, M, K).
    loglik : per-member log-likelihoods (N, M) for the information criteria.
    settings, **overrides : a :class:`~uqeval.config.Settings` and/or its fields (``num_bins=50``).
    reference, train, time : skill scores (group ``skill``) against a reference forecast: a
        :class:`~uqeval.predictions.Prediction` or a predictions file over the same targets,
        ``"climatology"`` with ``train`` (training targets: an array or a file), or
        ``"persistence"`` with ``time`` (an array, or a column name of ``data``). See ``uqeval.tasks.skill``.
    id : with a reference file, join its rows to the model's on this column (of ``data``, a table, and of
        the file) instead of requiring the same row order (``--id``).

    Returns
    -------
    Scores

    Examples
    --------
    >>> import numpy as np, uqeval
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=500); y = mu + rng.normal(size=500)
    >>> s = uqeval.evaluate(y, mean=mu, std=np.ones(500))
    >>> round(s["crps"], 4) == round(float(uqeval.crps_normal(y, mu, 1.0).mean()), 4)
    True
    """
    from .report.summary import build_summary
    from .tasks.score import score_prediction

    try:
        settings = make_settings(None, **overrides) if settings is None else replace(settings, **overrides)
        roles = dict(
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
        columns: dict[str, Any] = {}
        spec = None
        if reference is not None or time is not None or id is not None:  # forecast verification (issue 16)
            from .tasks.skill import reference_spec

            if isinstance(time, str) and _is_table(data):
                time = _from_table_objects(data, time)
            spec = reference_spec(reference, train, time, id)
            if id is not None:
                if not _is_table(data):
                    raise UsageError(
                        f"id={id!r} names a column of data and of the reference file, but data is "
                        "not a table: pass a pandas DataFrame or pyarrow Table, or use evaluate_file"
                    )
                assert spec is not None  # reference_spec raises for an id without a reference
                spec = replace(spec, model_ids=_from_table_objects(data, id, "id"))
        if isinstance(data, Prediction):
            pred = data
        else:
            if (
                data is not None
                and _is_table(data)
                and not any(v is not None for v in (y, y_true, *roles.values()))
            ):
                return _detect(data, settings, spec)
            if data is not None and _is_table(data):
                names = {k: v for k, v in roles.items() if v is not None}
                target = y or y_true
                arrays = _from_table(data, {"y_true": target, **names})
                columns = {k: v for k, v in {"y_true": target, **names}.items()}
                y_arr = arrays.pop("y_true", None)
                roles.update(arrays)
            else:
                y_arr = y_true if data is None else data
            pred = _prediction(
                y_arr, level=level, levels=levels, member_axis=member_axis, settings=settings, **roles
            )
        metrics, orientation = score_prediction(pred, settings)
        info: dict[str, Any] = {
            "path": "<arrays>" if not _is_table(data) else "<table>",
            "format": "python",
            "n_rows": pred.n,
            "n_dropped": 0,
            "representation": pred.kind,
            "columns": {k: v for k, v in columns.items() if v},
        }
        notes: list[str] = []
        if spec is not None:
            from .tasks.skill import evaluate_skill

            if spec.kind == "persistence" and isinstance(spec.time, str):
                raise InputError("time= names a column, but data is not a table: pass the times as an array")
            times = np.asarray(spec.time) if spec.kind == "persistence" else None
            skill, info["reference"], notes = evaluate_skill(pred, info["path"], spec, settings, times)
            if skill:
                metrics["skill"] = skill
                orientation.update({f"skill.{k}": "higher" for k in skill})
    except UqevalError as exc:
        raise _python_error(exc) from None
    return Scores(build_summary(info, settings, metrics, orientation, notes=notes))


def _from_table_objects(table: Any, column: str, role: str = "time") -> np.ndarray:
    import pandas as pd

    df = table if isinstance(table, pd.DataFrame) else table.to_pandas()
    if column not in df.columns:
        raise InputError(f"{role} column {column!r} not found; columns: {', '.join(map(str, df.columns))}")
    return df[column].to_numpy()


def _detect(table: Any, settings: Settings, reference: Any = None) -> Scores:
    """A table without column names: detected exactly as ``uqeval score`` detects a file's columns
    (the table goes through a temporary Parquet file, so there is one detection code path)."""
    import tempfile

    import pyarrow as pa
    import pyarrow.parquet as pq

    from .io.load import load_predictions
    from .tasks.score import score_loaded

    arrow = table if isinstance(table, pa.Table) else pa.Table.from_pandas(table, preserve_index=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.parquet"
        pq.write_table(arrow, path)
        loaded = load_predictions(path, settings)
    loaded.info.update(path="<table>", format="python")
    return Scores(score_loaded(loaded, settings, reference))


def _is_table(x: object) -> bool:
    mod = type(x).__module__
    return mod.startswith("pandas") or mod.startswith("pyarrow")


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

    ``overrides`` are settings (``num_bins=50``, ``nan_policy="omit"``, ``columns={"y_true": "target"}``).
    ``Scores.to_json()`` is the document ``uqeval score FILE --format json`` prints.
    """
    from .io.load import load_predictions
    from .tasks.score import score_loaded

    try:
        s = (
            settings
            if settings is not None and not overrides and config is None
            else make_settings(config, **overrides)
        )
        spec = None
        if reference is not None or time is not None or id is not None:  # skill scores (see evaluate)
            from .tasks.skill import reference_spec

            spec = reference_spec(reference, train, time, id)
        return Scores(score_loaded(load_predictions(path, s), s, spec))
    except UqevalError as exc:
        raise _python_error(exc) from None


def list_metrics(representation: str | None = None) -> list[dict[str, Any]]:
    """The metric catalogue: one dict per metric (``path``, ``group``, ``name``, ``representations``,
    ``orientation``, ``reduction``, ``description``), optionally only those for one representation
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
        }
        for m in METRICS.values()
        if representation is None or m.applies_to(representation)
    ]


def explain(name: str) -> str:
    """What a metric means, its formula and reference (as ``uqeval explain NAME``)."""
    from .glossary import explain as _explain

    return _explain(name)


def _models(models: Models) -> dict[str, Prediction]:
    """``{name: prediction}`` from a mapping of names to containers (or a sequence of containers)."""
    if isinstance(models, Prediction):
        models = [models]
    named = models if isinstance(models, Mapping) else {f"model {i + 1}": m for i, m in enumerate(models)}
    bad = [name for name, m in named.items() if not isinstance(m, Prediction)]
    if bad:
        raise InputError(
            f"models must be prediction containers (uqeval.Gaussian, uqeval.Quantiles, ...); "
            f"{bad[0]!r} is a {type(named[bad[0]]).__name__}"
        )
    return dict(named)


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
) -> dict[str, Any]:
    """Uncertainty Characteristics Curves (Navratil et al.) of one or several predictions with targets.

    ``models``: a container or ``{name: container}`` (Gaussian, intervals, quantiles with a median,
    samples). Returns the ``uqeval.ucc/1`` document of ``uqeval ucc`` (per model ``ucc`` with
    ``auucc``, ``auucc_const``, ``gain``, ``op``, ``op_min`` and the curve).

    >>> import numpy as np, uqeval
    >>> y = np.random.default_rng(0).normal(size=300)
    >>> out = uqeval.ucc(uqeval.Gaussian(y_true=y, mean=np.zeros(300), std=np.ones(300)))
    >>> 0 < out["models"]["model 1"]["ucc"]["auucc"] < 1
    True
    """
    from .io.load import Loaded
    from .tasks.ucc import band_of, ucc_report

    try:
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
        )
    except UqevalError as exc:
        raise _python_error(exc) from None


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
) -> dict[str, Any]:
    """Compare models on the same targets: bootstrap intervals, ranks and paired tests (``uqeval compare``).

    ``models``: ``{name: container}`` (at least two, the same targets in the same order).
    ``metrics``: names as ``uqeval compare --metrics`` takes them (default: crps, nll, pinball,
    interval, brier, ma_cal where defined). Returns the ``uqeval.compare/1`` document.

    >>> import numpy as np, uqeval
    >>> rng = np.random.default_rng(0); y = rng.normal(size=400)
    >>> a = uqeval.Gaussian(y_true=y, mean=np.zeros(400), std=np.ones(400))
    >>> b = uqeval.Gaussian(y_true=y, mean=np.zeros(400), std=np.full(400, 3.0))
    >>> out = uqeval.compare({"a": a, "b": b}, metrics=["crps"], n_boot=100, n_permutations=0)
    >>> out["metrics"]["crps"]["best"]
    ['a']
    """
    from .tasks.compare import Model, align_models, compare_models

    try:
        named = _models(models)
        aligned = align_models([Model(name, pred, {"path": name}) for name, pred in named.items()])
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
        )
    except UqevalError as exc:
        raise _python_error(exc) from None
