"""`evaluate`, `evaluate_file` and `plot`: score or draw one prediction; the catalogue's metrics listed and
explained; the JSON Schemas."""

from __future__ import annotations

from collections.abc import Mapping
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
from . import inputs as _in  # the column keywords of every call, read in one place
from .scores import Scores

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from ..io.load import Loaded


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
    classes: ArrayLike | None = None,
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
        (``Metric.takes_weights``) is computed from the weighted rows; the others are left out and listed
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
    >>> round(s["crps"], 4) == round(uqeval.crps_normal(y, mu, 1.0), 4)
    True
    """
    from ..commands.score.stream import score_with_engine
    from ..engine.options import EngineOptions

    roles = _in._canonical_roles(
        dict(
            y_true=y_true,
            y=y,
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
            weights=weights,
        ),
        overrides,
    )
    y_true, weights = roles.pop("y_true"), roles.pop("weights")
    settings = make_settings(None, **overrides) if settings is None else replace(settings, **overrides)
    given, table, target, level, settings = _in._prepare(data, y_true, None, level, levels, settings, **roles)
    spec = _skill_spec(reference, train, time, id, table)
    loaded, settings, arrow = _in._load(
        data, given, table, target, level, levels, member_axis, settings, classes=classes
    )
    if weights is None:  # a config's [columns] weights
        weights = settings.columns.get("weights")
    if weights is not None:
        _in._attach_weights(loaded, weights, arrow)
    if spec is not None:
        spec = _spec_rows(spec, loaded, arrow, time, id)
    scored = score_with_engine(loaded, settings, EngineOptions("memory"), reference=spec)
    return Scores(scored.judged(), loaded.prediction, settings)


def _skill_spec(reference: Any, train: Any, time: Any, id: str | None, table: bool) -> Any:
    """The reference forecast of :func:`evaluate`'s skill scores (issue 16), or None without one."""
    if reference is None and time is None and id is None:
        return None
    from ..commands.compare.skill import reference_spec

    spec = reference_spec(reference, train, time, id)
    if id is not None and not table:
        raise UsageError(
            f"id={id!r} names a column of data and of the reference file, but data is "
            "not a table: pass a pandas DataFrame or pyarrow Table, or use evaluate_file"
        )
    if isinstance(time, str) and not table:
        raise UsageError("time= names a column, but data is not a table: pass the times as an array")
    return spec


def _spec_rows(spec: Any, loaded: Any, arrow: Any, time: Any, id: str | None) -> Any:
    """``spec`` with the times and ids of the rows ``loaded`` kept (columns of the table ``arrow``, or an
    array of times given for every row)."""
    if arrow is not None:
        rows = loaded.prediction.row_numbers()
        if isinstance(time, str):
            spec = replace(spec, time=_in._objects(arrow, time, "time", rows))
        if id is not None:
            spec = replace(spec, model_ids=_in._objects(arrow, id, "id", rows))
    if spec.kind == "persistence" and not isinstance(time, str) and time is not None:
        times = np.asarray(time)
        if loaded.info["n_dropped"] and times.shape[:1] == (loaded.info["n_rows"],):
            spec = replace(spec, time=times[loaded.prediction.row_numbers()])  # the times of the rows kept
    return spec


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
    from ..errors import option
    from ..plots.kinds import OVERLAY_KINDS, PLOT_KINDS, build_figures
    from ..plots.style import model_color

    if not isinstance(kind, str) or kind not in PLOT_KINDS:
        raise UsageError(f"unknown {option('kind', kind)}: choose from {', '.join(PLOT_KINDS)}")
    _in._canonical_columns(columns)
    bad = sorted(set(columns) - _in._PLOT_ROLES - set(Settings.__dataclass_fields__))
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
    from ..plots.kinds import applicable_kinds

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

        from ..plots.common import FIGSIZE

        _, ax = plt.subplots(figsize=FIGSIZE, layout="constrained")
    if kind == "ucc" and models is not None:  # plot_ucc draws every model's curve, in its own colours
        from ..plots.kinds import KIND_TITLES, ucc_result
        from ..plots.ucc import plot_ucc

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
        from ..plots.common import legend_once

        legend_once(ax)
    return ax


def _one_overlay(kind: str, preds: Mapping[str, Prediction]) -> None:
    """Raise unless every model's series of ``kind`` goes on the same overlay
    (:func:`uqeval.plots.overlay.overlay_key`, as the report groups them): a quantile file's calibration curve
    and PIT histogram, at the levels the file carries, or a classifier's reliability diagram have other
    axes than the others'."""
    from ..errors import option
    from ..plots.overlay import overlay_key

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
    loaded, settings, _ = _in._load_table(data, columns, columns.pop("settings", None))
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
    from ..commands.score.stream import score_with_engine
    from ..engine.options import EngineOptions

    roles = _in._file_roles(overrides)
    weights = overrides.pop("weights", None)
    classes = overrides.pop("classes", None)
    if weights is not None and not isinstance(weights, str):
        raise UsageError(f"weights= names a column of the file, got {type(weights).__name__}")
    s = (
        settings
        if settings is not None and not overrides and config is None
        else make_settings(config, **overrides)
    )
    from ..io.dialect import reading_csv

    with reading_csv(s.sep, s.decimal):  # the CSV dialect of the settings (sep=, decimal=)
        bad = [r for r, v in roles.items() if r in _in._COLUMN_ROLES and not isinstance(v, str)]
        if bad:
            raise UsageError(f"{bad[0]}= names a column of the file, got {type(roles[bad[0]]).__name__}")
        spec = _skill_spec(reference, train, time, id, table=True)
        if _in._by_plan(roles) and classes is None:  # the loader's own column plan
            if roles:
                s = _in._with_columns(s, roles)
            if weights is not None:
                s = replace(s, columns={**s.columns, "weights": weights})
            scored = score_with_engine(path, s, EngineOptions("memory"), reference=spec)
            assert scored.loaded is not None  # read in memory
            return Scores(scored.judged(), scored.loaded.prediction, s)
        # lists of columns (quantiles, samples, proba, ...): read the file and evaluate its table
        from ..io.readers import inspect

        info = inspect(path)
        arrow = _in._file_table(info)
        try:
            weights = weights if weights is not None else s.columns.get("weights")
            scores = evaluate(
                arrow,
                settings=s,
                reference=reference,
                train=train,
                time=time,
                id=id,
                weights=weights,
                classes=classes,
                **roles,
            )
            scores._summary["input"].update(path=str(path), format=info.format)
            return scores
        except InputError as exc:  # the table's messages name "data": here it is the file
            text = exc.message
            if not text.startswith("data"):
                raise
            raise type(exc)(
                f"{path}{text[4:] if text.startswith('data:') else ': ' + text}", fix=exc.fix
            ) from None


def _load_file(path: str | Path, columns: dict[str, Any], settings: Settings) -> Loaded:
    """The prediction of a CSV or Parquet file read as :func:`evaluate_file` reads it: ``columns`` are the
    role keywords (and ``classes``) naming its columns, and settings on top of ``settings``."""
    from ..io.dialect import reading_csv
    from ..io.load import load_predictions

    roles = _in._file_roles(columns)
    classes = columns.pop("classes", None)
    s = replace(settings, **columns) if columns else settings
    with reading_csv(s.sep, s.decimal):
        if _in._by_plan(roles) and classes is None:
            return load_predictions(path, _in._with_columns(s, roles) if roles else s)
        from ..io.readers import inspect

        table = _in._file_table(inspect(path))
    loaded, _, _ = _in._load_table(table, {**roles, "classes": classes}, s)
    return loaded


@python_api
def list_metrics(representation: str | None = None) -> list[dict[str, Any]]:
    """The metric catalogue: one dict per metric (``path``, ``group``, ``name``, ``representations``,
    ``orientation``, ``reduction``, ``description``, ``supports_weights``), optionally only those for one representation
    (``"gaussian"``, ``"point"``, ``"intervals"``, ``"quantiles"``, ``"samples"``, ``"categorical"``,
    ``"members"``, ``"dirichlet"``, ``"loglik"``, ``"multivariate"``)."""
    from ..catalogue import METRICS

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
    from ..catalogue.explain import explain as _explain

    return _explain(name)


@python_api
def schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a document uqeval writes, as ``uqeval schema NAME`` prints it.

    ``name`` is a document (``"score"``, ``"compare"``, ``"ucc"``, ``"coverage"``, ``"check"``,
    ``"recalibrate"``, ``"recalibrator"``; :func:`list_schemas` has them all) or its tag
    (``"uqeval.score/1"``). Validate with any draft 2020-12 validator, e.g.
    ``jsonschema.validate(doc, uqeval.schema("score"))``.
    """
    from ..schemas import load

    return load(name)


@python_api
def list_schemas() -> dict[str, dict[str, str]]:
    """Every schema :func:`schema` knows: name -> ``{"document": tag, "title": ...}``."""
    from ..schemas import catalogue

    return catalogue()
