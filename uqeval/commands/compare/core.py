r"""Compare several models evaluated on the same targets: the pure core of ``uqeval compare``.

Steps (each a function, arrays and dicts in and out; nothing here reads files or prints):

1. :func:`align_models` checks that every model predicts the same targets, in the same
   order (to ``1e-12``) or after a join on an id column, and reorders them to the first
   model's rows. A mismatch is an :class:`~uqeval.errors.InputError` naming the first
   differing row.
2. :func:`common_grids` picks the quantile levels of ``pinball`` and the central levels
   of ``interval`` that *every* model can be scored at, so that the per-row scores of a
   Gaussian, a sample and a quantile model are comparable.
3. :func:`comparison_score` gives the per-row comparison scores (lower is better):
   ``crps``, ``nll`` and ``brier`` are the catalogue's per-row scores (a point forecast's
   CRPS is its absolute error, the CRPS of a point mass); ``pinball`` and ``interval``
   average the pinball loss and interval score over the common grids; ``check`` is the
   Uncertainty Toolbox check score over ``linspace(0.01, 0.99, resolution)``.

4. :func:`compare_models` resolves the requested metric names (short ``ma_cal`` or full
   ``avg_calibration.ma_cal``; unknown names list close matches), takes each model's
   value of every metric, bootstraps them (rows resampled with replacement; one shared
   set of resamples for every model and metric, so intervals are paired), ranks the
   models per metric (the rank-consistency view of Kompa, Snoek & Beam 2021, Fig. 11)
   and runs paired tests (sign-flip permutation and Diebold--Mariano) on per-row scores.

Every catalogue metric is resampled through its per-row form
(:func:`uqeval.catalogue.rows`): a per-row score, or a function of resampled index
arrays (average calibration from each row's cover index, one ``bincount`` per resample;
RMSE, R² and correlation from the batch form of the accuracy kernel). Each resampler
is checked against the full-sample value; a metric without a cheap per-row form
(reliability scores, adversarial group calibration, classification calibration
errors, ...) is reported without an interval, with a note.

Percentile intervals of statistics that are biased under resampling (calibration
errors only grow on a resample of a calibrated model) can miss the estimate; a note
flags it, and ``diff_vs_best`` (the model minus the best model on the same resamples)
is the better basis for comparing models on such metrics.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...catalogue import RowStat
from ...config import Settings
from ...errors import InputError, UsageError, option, phrase
from ...predictions import Prediction

if TYPE_CHECKING:
    from ...catalogue import Metric
    from ...resample import Resampling
    from ..check import Orientation
    from .skill import Reference

COMPARE_SCHEMA = "uqeval.compare/1"

#: Comparison scores, all lower-is-better: per-row scores that models of different
#: representations share (pinball, interval and check on a common level grid).
PER_ROW_SCORES: tuple[str, ...] = ("crps", "nll", "pinball", "interval", "check", "brier")

#: Metrics compared when none are named (those that no model has are left out).
DEFAULT_METRICS: tuple[str, ...] = ("crps", "nll", "pinball", "interval", "brier", "avg_calibration.ma_cal")

_RTOL_CONSISTENT = 1e-9
#: rows per block of the passes over the rows (bounded temporaries: a block's per-row scores, differences and
#: their temporaries are a few MB; a multiple of resample.BLOCK, so blocks never split a generator block)
_ROWS = 1 << 16
#: rows on which the availability of a comparison score is decided
_HEAD = 64


# --------------------------------------------------------------------------- models and alignment


@dataclass(frozen=True)
class Model:
    """One model to compare: a display name, its prediction and where it came from."""

    name: str
    prediction: Prediction
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.prediction.kind

    @property
    def source(self) -> str:
        return str(self.info.get("path", self.name))


def model_names(paths: Sequence[str], names: Sequence[str] | None = None) -> list[str]:
    """Unique display names: ``names`` if given, else file stems (made unique by their path).

    Raises :class:`InputError` if ``names`` has the wrong length or repeats a name.
    """
    if names is not None:
        names = [n.strip() for n in names]
        if len(names) != len(paths):
            raise UsageError(
                f"{option('names')} gives {len(names)} name(s) for {len(paths)} file(s); give one per file"
            )
        dup = next((n for i, n in enumerate(names) if n in names[:i] or not n), None)
        if dup is not None:
            raise UsageError(
                f"{option('names')} must be non-empty and distinct, found {dup!r} twice or empty"
            )
        return list(names)
    from pathlib import Path

    stems = []
    for p in paths:
        name = Path(p).name
        for suffix in (".parquet", ".pq", ".csv.gz", ".csv"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        stems.append(name)
    out = []
    for stem, p in zip(stems, paths):
        out.append(stem if stems.count(stem) == 1 else str(p))
    for i, n in enumerate(out):  # the same path twice
        if n in out[:i]:
            out[i] = f"{n}#{i + 1}"
    return out


def _id_labels(ids: np.ndarray) -> np.ndarray:
    """Ids as strings, so 3, 3.0 and "3" join (integral floats print without '.0')."""
    arr = np.asarray(ids, dtype=object).ravel()
    out = []
    for v in arr.tolist():  # one str() per row: ids are arbitrary Python objects
        if isinstance(v, float) and v.is_integer():
            out.append(str(int(v)))
        else:
            out.append(str(v))
    return np.asarray(out, dtype=str)


def _file_row(pred: Prediction, i: int) -> int:
    return int(pred.rows[i]) if pred.rows is not None else int(i)


def align_models(
    models: Sequence[Model],
    ids: Sequence[np.ndarray] | None = None,
    id_column: str | None = None,
    tol: float = 1e-12,
    first_row: int = 0,
) -> list[Model]:
    r"""Check that all models predict the same targets; reorder them to the first model's rows.

    Without ``ids`` the rows must correspond one to one (same count, same order). With
    ``ids`` (one array per model, e.g. the values of an ``--id`` column) each model's ids
    must be unique and the same set as the first model's; rows are joined on them. Then
    the targets must agree: :math:`|y_i^{(k)} - y_i^{(1)}| \le 10^{-12}\max(1, |y_i^{(1)}|)`.

    Returns the models with their predictions reordered (``Prediction.subset``), so the
    per-row scores of all models line up. Raises :class:`InputError` naming the first
    differing row (and its id); ``first_row``: the index of the first row among all rows (a streamed batch).
    """
    if len(models) < 2:
        raise InputError(f"compare needs at least 2 models, got {len(models)}")
    first = models[0]
    # log-likelihoods alone already contain the targets: without a target column they are matched by row
    no_targets = all(m.kind == "loglik" and m.prediction.y_true is None for m in models)
    y0 = None if no_targets else first.prediction.require_targets()
    out = [first]
    ref_ids: np.ndarray | None = None
    how = f"join on {option('id', id_column)}" if id_column else phrase("join_ids")
    if ids is not None:
        if len(ids) != len(models):
            raise InputError(f"got {len(ids)} id arrays for {len(models)} models")
        labels = [_id_labels(a) for a in ids]
        for m, lab in zip(models, labels):
            if lab.size != m.prediction.n:
                raise InputError(f"{m.source}: {lab.size} ids for {m.prediction.n} rows")
            order = np.argsort(lab, kind="stable")
            s = lab[order]
            dup = np.flatnonzero(s[1:] == s[:-1])
            if dup.size:
                i = int(order[dup[0] + 1])
                raise InputError(
                    f"{m.source}: id '{s[dup[0]]}' of column '{id_column}' occurs more than once "
                    f"(again at row {_file_row(m.prediction, i)}); ids must be unique to join on them"
                )
        ref_ids = labels[0]
    for k, m in enumerate(models[1:], start=1):
        pred = m.prediction
        y = None if no_targets else pred.require_targets()
        if ref_ids is not None:
            lab = labels[k]
            order = np.argsort(lab, kind="stable")
            s = lab[order]
            pos = np.minimum(np.searchsorted(s, ref_ids), max(s.size - 1, 0))
            found = s[pos] == ref_ids if s.size else np.zeros(ref_ids.size, dtype=bool)
            if not found.all():
                i = int(np.flatnonzero(~found)[0])
                raise InputError(
                    f"id '{ref_ids[i]}' (row {_file_row(first.prediction, i)} of {first.source}) is not in "
                    f"{m.source}: {int((~found).sum())} of {ref_ids.size} ids missing; every file must hold "
                    f"the same ids in column '{id_column}'"
                )
            if s.size != ref_ids.size:
                extra = np.setdiff1d(lab, ref_ids)
                j = int(np.flatnonzero(lab == extra[0])[0]) if extra.size else 0
                raise InputError(
                    f"{m.source} has {s.size} rows but {first.source} has {ref_ids.size}: id '{extra[0]}' "
                    f"(row {_file_row(pred, j)} of {m.source}) is not in {first.source}; every file must hold "
                    f"the same ids in column '{id_column}'"
                )
            index = order[pos]
            pred = pred.subset(index)
            y = pred.y_true
        elif pred.n != first.prediction.n:
            raise InputError(
                f"{m.source} has {pred.n} rows but {first.source} has {first.prediction.n}"
                f"{' (after dropping NaN rows)' if m.info.get('n_dropped') or first.info.get('n_dropped') else ''}; "
                f"the files must hold the same targets in the same order, or {how}"
            )
        bad = (
            np.zeros(pred.n, dtype=bool)
            if y is None or y0 is None  # no_targets
            else ~(np.abs(y - y0) <= tol * np.maximum(1.0, np.abs(y0)))
        )
        if bad.any():
            assert y is not None and y0 is not None  # rows differ only where there are targets
            i = int(np.flatnonzero(bad)[0])
            where = f"row {i + first_row}"
            if ref_ids is not None:
                where += f" (id '{ref_ids[i]}')"
            rows = (
                f"; file rows {_file_row(first.prediction, i)} and {_file_row(pred, i)}"
                if _file_row(first.prediction, i) != i + first_row or _file_row(pred, i) != i + first_row
                else ""
            )
            count = f"{int(bad.sum())} row(s){' in a batch' if first_row else ''}"
            raise InputError(
                f"targets differ between {first.source} and {m.source}: {count}, first at "
                f"{where}{rows}: {float(y0[i])!r} vs {float(y[i])!r}; the files must hold the same targets in the same "
                f"order, or {how}"
            )
        out.append(replace(m, prediction=pred))
    return out


# --------------------------------------------------------------------------- level grids


@dataclass(frozen=True)
class Grids:
    """Levels every model can be scored at (``None``: the metric is unavailable)."""

    quantile_levels: np.ndarray | None  # pinball
    central_levels: np.ndarray | None  # interval
    check_levels: np.ndarray  # toolbox check score, linspace(0.01, 0.99, resolution)
    toolbox_quantiles: bool  # quantile_levels is the toolbox grid (closed forms apply)
    toolbox_central: bool
    notes: tuple[str, ...] = ()


def _common(
    models: Sequence[Model], keys: Callable[[Prediction], set[str] | None], score: str
) -> tuple[np.ndarray | None, list[str]]:
    finite = [(m, keys(m.prediction)) for m in models if keys(m.prediction) != set()]
    sets = [(m, s) for m, s in finite if s is not None]
    if not finite:
        return None, []
    if not sets:
        return np.empty(0), []  # any level: the caller uses the toolbox grid
    common = set.intersection(*(s for _, s in sets))
    if not common:
        listed = "; ".join(f"{m.name}: {', '.join(sorted(s, key=float))}" for m, s in sets)
        return None, [f"{score}: the models share no level ({listed}); {score} is not compared"]
    notes = []
    if any(len(s) > len(common) for _, s in sets):
        notes.append(f"{score} uses the levels all models share: {', '.join(sorted(common, key=float))}")
    return np.array(sorted(float(k) for k in common)), notes


def common_grids(models: Sequence[Model], resolution: int = 99) -> Grids:
    r"""Quantile levels (``pinball``) and central levels (``interval``) shared by all models.

    Gaussian and sample models can be scored at any level; quantile models at their
    levels; interval models at the bounds :math:`(1 \mp p)/2` of their levels ``p``. The
    grid is the intersection over the models that have fixed levels, or, if none has,
    the Uncertainty Toolbox grid ``linspace(0.01, 0.99, resolution)`` (quantile levels for
    pinball, central levels for interval), which makes ``pinball`` the toolbox check
    score and ``interval`` the toolbox interval score.
    """
    toolbox = np.linspace(0.01, 0.99, int(resolution))
    q, notes_q = _common(models, lambda p: p.quantile_keys(), "pinball")
    c, notes_c = _common(models, lambda p: p.central_keys(), "interval")
    tq = q is not None and q.size == 0
    tc = c is not None and c.size == 0
    return Grids(
        quantile_levels=toolbox if tq else q,
        central_levels=toolbox if tc else c,
        check_levels=toolbox,
        toolbox_quantiles=tq,
        toolbox_central=tc,
        notes=tuple(notes_q + notes_c),
    )


# --------------------------------------------------------------------------- per-row scores


def _catalogue_score(pred: Prediction, path: str, settings: Settings) -> np.ndarray | None:
    from ...catalogue import METRICS, rows

    stat = rows(METRICS[path], pred, settings)
    return None if stat is None else stat.score


def comparison_score(pred: Prediction, name: str, grids: Grids, settings: Settings) -> np.ndarray | None:
    """Per-row comparison score ``name`` of ``pred`` (an (N,) array, lower is better), or None.

    ``crps`` and ``nll`` are the catalogue's per-row scores (``scoring_rule.*``, for
    classifiers ``accuracy.nll``); a point forecast's CRPS is that of a point mass, its
    absolute error (``accuracy.mae``). ``brier`` is ``accuracy.brier``. ``pinball``,
    ``interval`` and ``check`` are the pinball loss and interval score averaged over the
    common level grids, from the quantiles and intervals the prediction gives
    (:meth:`~uqeval.predictions.Prediction.quantiles_at`); a Gaussian on the toolbox grid
    uses the catalogue's closed forms.
    """
    from ...metrics import scoring

    if name == "crps":
        out = _catalogue_score(pred, "scoring_rule.crps", settings)
        return (
            out
            if out is not None or pred.kind != "point"
            else _catalogue_score(pred, "accuracy.mae", settings)
        )
    if name == "nll":
        out = _catalogue_score(pred, "scoring_rule.nll", settings)
        return out if out is not None else _catalogue_score(pred, "accuracy.nll", settings)
    if name == "brier":
        return _catalogue_score(pred, "accuracy.brier", settings)
    if name in ("pinball", "check"):
        levels = grids.check_levels if name == "check" else grids.quantile_levels
        if (
            levels is None
            or pred.quantile_keys() == set()
            or (name == "check" and pred.quantile_keys() is not None)
        ):
            return None
        if name == "check" or grids.toolbox_quantiles:
            closed = _catalogue_score(
                pred, "scoring_rule.check", replace(settings, resolution=int(levels.size))
            )
            if closed is not None:
                return closed
        return scoring.pinball_loss(pred.require_targets(), pred.quantiles_at(levels), levels).mean(axis=1)
    if name == "interval":
        levels = grids.central_levels
        if levels is None or pred.central_keys() == set():
            return None
        if grids.toolbox_central and pred.kind == "gaussian":
            return _catalogue_score(
                pred, "scoring_rule.interval", replace(settings, resolution=int(levels.size))
            )
        lo, hi = pred.intervals_at(levels)
        return scoring.interval_score(pred.require_targets(), lo, hi, levels).mean(axis=1)
    raise KeyError(name)


def per_row_scores(
    pred: Prediction, grids: Grids, which: Iterable[str] = PER_ROW_SCORES, settings: Settings | None = None
) -> dict[str, np.ndarray]:
    """The comparison scores in ``which`` that ``pred`` has (see :func:`comparison_score`)."""
    pred.require_targets()
    settings = settings or Settings()
    out = {}
    for name in which:
        score = comparison_score(pred, name, grids, settings)
        if score is not None:
            out[name] = score
    return out


# --------------------------------------------------------------------------- metric names


@dataclass(frozen=True)
class MetricRef:
    """A resolved metric: a comparison score or one scalar of a catalogue metric."""

    name: str  # display name (a comparison score name or a full summary path)
    source: str  # "per_row" | "summary"
    orientation: str  # "lower" | "higher" | "target"
    group: str | None = None
    keys: tuple[str, ...] = ()  # keys inside the group's result

    @property
    def level(self) -> str | None:
        return self.keys[0] if len(self.keys) == 2 else None


class _Results:
    """Lazily computed catalogue family results and comparison scores, per model."""

    def __init__(self, models: Sequence[Model], settings: Settings, grids: Grids | None = None) -> None:
        self.models = models
        self.settings = settings
        self.grids = grids
        self.cache: dict[tuple[int, str], Any] = {}

    def get(self, k: int, group: str) -> dict | None:
        from ...catalogue import compute, get_family

        key = (k, group)
        if key not in self.cache:
            self.cache[key] = compute(get_family(group), self.models[k].prediction, self.settings)
        return self.cache[key]

    def has_score(self, k: int, name: str) -> bool:
        """Whether model ``k`` has the comparison score ``name``, decided on its first rows (whether a
        representation has a score does not depend on the values), so no full-size score is made."""
        key = (k, "has:" + name)
        if key not in self.cache:
            pred = self.models[k].prediction
            head = pred.subset(slice(0, _HEAD)) if pred.n > _HEAD else pred
            assert self.grids is not None  # comparison scores are asked for with grids only
            self.cache[key] = comparison_score(head, name, self.grids, self.settings) is not None
        return self.cache[key]

    def score(self, k: int, name: str) -> np.ndarray | None:
        key = (k, "score:" + name)
        if key not in self.cache:
            assert self.grids is not None  # comparison scores are asked for with grids only
            self.cache[key] = comparison_score(self.models[k].prediction, name, self.grids, self.settings)
        return self.cache[key]

    def row_stat(self, k: int, ref: MetricRef):
        """The catalogue's per-row form of a summary metric for model ``k``, or None."""
        from ...catalogue import METRICS, rows

        m = self.models[k].prediction
        key = (k, "rows:" + ref.name)
        if key not in self.cache:
            self.cache[key] = rows(METRICS[f"{ref.group}.{ref.keys[-1]}"], m, self.settings, ref.level)
        return self.cache[key]


def _value_at(result: Any, keys: Sequence[str]) -> Any:
    node = result
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _known_names() -> list[str]:
    from ...catalogue import METRICS

    names = list(PER_ROW_SCORES)
    for m in METRICS.values():
        if m.orientation is not None:
            names += [m.path, m.name]
    return list(dict.fromkeys(names))


def _unknown_metric(name: str) -> InputError:
    """The one-line error of a metric name compare does not know, with the close matches of
    :func:`uqeval.vocabulary.close_matches` (the function every front end's metric names go through)."""
    from ...vocabulary import UnknownName, close_matches

    close = [k for k in close_matches(name, _known_names(), n=6) if k != name]
    hint = (
        ("close matches: " + ", ".join(close[:8]))
        if close
        else (
            "per-row scores: " + ", ".join(PER_ROW_SCORES) + "; or a metric path of `uqeval score` such as "
            "avg_calibration.ma_cal"
        )
    )
    return UnknownName(f"unknown metric {name!r} in {option('metrics')}; {hint}")


def _catalogue_matches(name: str):
    """``(metric, level key or None)`` for every catalogue metric ``name`` can mean."""
    from ...catalogue import METRICS

    matches: list[tuple[Metric, str | None]] = []
    for m in METRICS.values():
        if m.orientation is None:
            continue
        if name in (m.name, m.path):
            matches.append((m, None))
        elif m.by_level and name.startswith(m.group + ".") and name.endswith("." + m.name):
            middle = name[len(m.group) + 1 : -len(m.name) - 1]
            if middle:
                matches.append((m, middle))
    return matches


def _scored_by_all(models: Sequence[Model], results: _Results) -> list[str]:
    """Catalogue metrics with a per-row score for every model (the default when no comparison score applies)."""
    from ...catalogue import METRICS

    out = []
    for m in METRICS.values():
        if m.by_level or m.rows_fn is None or not all(m.applies_to(x.kind) for x in models):
            continue
        ref = MetricRef(m.path, "summary", m.orientation_for(models[0].kind) or "lower", m.group, (m.name,))
        if all(
            results.row_stat(k, ref) is not None and results.row_stat(k, ref).score is not None
            for k in range(len(models))
        ):
            out.append(m.path)
    return out


def resolve_metrics(
    names: Sequence[str] | None,
    models: Sequence[Model],
    results: _Results,
    grids: Grids | None = None,
    not_weighted: dict[str, str] | None = None,
) -> tuple[list[MetricRef], list[str]]:
    """Resolve metric names to :class:`MetricRef` (plus notes).

    A name is a comparison score (:data:`PER_ROW_SCORES`; ``scoring_rule.crps`` etc. are the
    same), or a catalogue metric given by its short name (``ma_cal``), ``group.metric``
    (``avg_calibration.ma_cal``) or full path with a level (``coverage.0.95.coverage``).
    A short name of a level-keyed metric expands to every level. Unknown or ambiguous
    names raise :class:`InputError` listing close matches. Without names, the
    :data:`DEFAULT_METRICS` that apply; where none does, every catalogue metric with a
    per-row score for all models.

    ``not_weighted`` (a dict, for weighted rows): a catalogue metric that takes no weights
    (:attr:`~uqeval.catalogue.Metric.supports_weights`) is an :class:`InputError` when named, and left out
    and recorded there (path -> reason) when it is a default.
    """
    kinds = {m.kind for m in models}
    notes: list[str] = []
    explicit = names is not None
    if names is None:
        names = list(DEFAULT_METRICS)
    refs: list[MetricRef] = []
    for raw in names:
        name = raw.strip()
        if not name:
            continue
        short = name.removeprefix("scoring_rule.")
        if short in PER_ROW_SCORES and (name == short or short in ("crps", "nll", "check")):
            no_grid = grids is not None and (
                (short == "pinball" and grids.quantile_levels is None)
                or (short == "interval" and grids.central_levels is None)
            )
            if no_grid:
                assert grids is not None  # no_grid
                if explicit:
                    why = next((n for n in grids.notes if n.startswith(short)), f"{short}: no common level")
                    raise InputError(f"metric {name!r} cannot be compared: {why}")
                continue
            if not any(results.has_score(k, short) for k in range(len(models))):
                if explicit:
                    avail = [
                        s for s in PER_ROW_SCORES if any(results.has_score(k, s) for k in range(len(models)))
                    ]
                    raise InputError(
                        f"metric {name!r} is not defined for representation(s) {', '.join(sorted(kinds))}; "
                        f"per-row scores available: {', '.join(avail) or 'none'}"
                    )
                continue
            refs.append(MetricRef(short, "per_row", "lower"))
            continue
        matches = _catalogue_matches(name)
        if not matches:
            raise _unknown_metric(name)
        usable = [t for t in matches if any(t[0].applies_to(k) for k in kinds)]
        if not usable:
            if not explicit:
                continue
            where = ", ".join(sorted({m.path for m, _ in matches}))
            reps = sorted({r for m, _ in matches for r in m.representations})
            raise InputError(
                f"metric {name!r} ({where}) is computed for {', '.join(reps)} predictions only, not for "
                f"{', '.join(sorted(kinds))}"
            )
        distinct = sorted({m.path for m, _ in usable})
        if len(distinct) > 1:
            raise InputError(f"metric name {name!r} is ambiguous; give one of: {', '.join(distinct)}")
        metric, middle = usable[0]
        if not_weighted is not None and not metric.supports_weights:
            if explicit:
                raise InputError(
                    f"metric {name!r} ({metric.path}) is not computed with {option('weights')}: "
                    f"{metric.unweighted_reason}; leave it out of the metrics, or leave out the weights"
                )
            not_weighted[metric.path] = cast("str", metric.unweighted_reason)
            continue
        kind = next(
            k for k in sorted(kinds) if metric.applies_to(k)
        )  # orientation can depend on the representation
        orient = metric.orientation_for(kind)
        if not metric.by_level:
            refs.append(MetricRef(metric.path, "summary", orient, metric.group, (metric.name,)))
            continue
        levels: list[str] = []
        for k in range(len(models)):
            res = results.get(k, metric.group)
            if isinstance(res, dict):
                levels += [
                    lv
                    for lv, body in res.items()
                    if isinstance(body, dict) and metric.name in body and lv not in levels
                ]
        if middle is not None:
            if middle not in levels:
                have = ", ".join(f"{metric.group}.{lv}.{metric.name}" for lv in levels) or "none"
                raise InputError(f"no metric {name!r} for these models; available: {have}")
            levels = [middle]
        if not levels:
            raise InputError(f"metric {name!r}: no model has a value for it")
        for lv in levels:
            refs.append(
                MetricRef(
                    f"{metric.group}.{lv}.{metric.name}", "summary", orient, metric.group, (lv, metric.name)
                )
            )
    if not refs and not explicit:
        fallback = _scored_by_all(models, results)
        if fallback:
            return resolve_metrics(fallback, models, results, grids, not_weighted)
    firsts: dict[str, MetricRef] = {}  # the first ref of each name
    for r in refs:
        firsts.setdefault(r.name, r)
    unique = list(firsts.values())
    if not unique:
        raise InputError(f"no metric to compare: name them with {option('metrics')} (e.g. crps,nll,ma_cal)")
    return unique, notes


# --------------------------------------------------------------------------- the comparison


def _num(x: Any) -> float | None:
    if x is None or isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        return None
    return float(x)


def _consistent(a: float, b: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=_RTOL_CONSISTENT, abs_tol=1e-12)


def _round12(x: float) -> float:
    return float(f"{x:.12g}") if math.isfinite(x) else x


def _without_rounding_noise(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``b`` with entries equal to ``a`` up to a relative 1e-12 replaced by ``a``.

    Two models that are the same forecast written differently (a Gaussian and its
    quantiles) differ per row only by rounding; a paired test would find those
    differences "significant", since their variance is tiny too.
    """
    same = np.abs(a - b) <= 1e-12 * np.maximum(np.abs(a), np.abs(b))
    return np.where(same, a, b)


def _levels_json(levels: np.ndarray | None, toolbox: bool) -> str | list[float] | None:
    if levels is None:
        return None
    if toolbox:
        return f"linspace(0.01, 0.99, {levels.size})"
    return [round(float(v), 10) for v in levels]


def _target(ref: MetricRef, result: Any) -> float | None:
    if ref.orientation != "target":
        return None
    from ..check import target_of

    return target_of({"metrics": {ref.group: result}}, ref.name)


def _spans(n: int, step: int):
    """``(start, stop)`` of the blocks of ``step`` rows that cover ``n`` rows; a last block of one row joins
    the one before. A score made on one row can differ in the last bit from the same row of a larger
    block: numpy sums a (1, L) array, which is C- and F-contiguous at once, in another order."""
    for start in range(0, n, step):
        stop = n if n - start <= step + 1 else start + step
        yield start, stop
        if stop == n:
            return


#: a per-row score made block by block: ``score(start, stop)`` gives rows ``start .. stop - 1``
BlockScore = Callable[[int, int], np.ndarray]


def _width(terms: np.ndarray | BlockScore) -> int:
    return 1 if callable(terms) else terms.shape[1]


def poisson_bootstrap(
    stats: Sequence[RowStat | BlockScore],
    n: int,
    replicates: int,
    seed: int,
    units: np.ndarray | None = None,
    block_size: int | None = None,
    weights: np.ndarray | None = None,
) -> list[np.ndarray]:
    """``(replicates,)`` Poisson-bootstrap values of each metric (:mod:`uqeval.resample`), all on the
    same replicates: one pass over the rows for every metric with a sums form, weight matrices in
    blocks of replicates for the others (order statistics). A :data:`BlockScore` resamples as the mean
    of its score, asked for once per block of rows, in row order. ``units`` (n,): the cluster of each row
    (:func:`uqeval.resample.resampling_units`), whose rows share one weight; None: rows. ``block_size``
    (rows in time order): the circular block bootstrap (:func:`_circular_bootstrap`) instead; ``units`` is
    then ignored. ``weights`` (n,): the rows' own weights (``--weights``): every resample counts row ``i``
    its resampling weight (Poisson count, its unit's count, or the number of blocks covering it) times
    ``weights[i]``, so a replicate is the metric's resampler at that product."""
    from ...catalogue.core import _mean_of_first
    from ...resample import Accumulator, poisson_weights

    forms = [(st, None, 0, _mean_of_first) if callable(st) else st.sums_form for st in stats]
    if block_size is not None and block_size > 1 and n:
        return _circular_bootstrap(stats, forms, n, replicates, seed, int(block_size), weights)
    if units is not None:
        return _unit_bootstrap(stats, forms, n, replicates, seed, units, weights)
    dense = [f[0] for f in forms if f is not None and f[0] is not None]
    codes = [f[1] for f in forms if f is not None and f[1] is not None]
    acc = Accumulator(
        seed,
        replicates,
        n_terms=sum(_width(t) for t in dense),
        n_categories=tuple(f[2] for f in forms if f is not None and f[1] is not None),
    )
    from ...engine.progress import stage

    if dense or codes:
        advance = stage(f"bootstrap ({replicates:,} resamples)", n)
        for start, stop in _spans(n, _ROWS):  # the same sums in the same order as in one update
            advance(stop - start)
            block = (
                np.column_stack([t(start, stop) if callable(t) else t[start:stop] for t in dense])
                if dense
                else None
            )
            acc.update(
                start,
                block,
                [c[start:stop] for c in codes],
                weights=None if weights is None else weights[start:stop],
            )
    out = _finished(forms, acc, acc.total, replicates)
    _order_statistics(
        stats,
        forms,
        out,
        n,
        replicates,
        _times(lambda r0, r1: poisson_weights(seed, 0, n, r1)[r0:r1], weights),
    )
    return out


def _times(
    draw: Callable[[int, int], np.ndarray], weights: np.ndarray | None
) -> Callable[[int, int], np.ndarray]:
    """``draw`` (replicates r0 .. r1 - 1 -> their (r1 - r0, n) resampling weights) times the rows' own
    ``weights`` (None: ``draw`` itself)."""
    if weights is None:
        return draw
    return lambda r0, r1: draw(r0, r1) * weights


def _unit_bootstrap(
    stats, forms, n: int, replicates: int, seed: int, units: np.ndarray, weights: np.ndarray | None = None
) -> list[np.ndarray]:
    """:func:`poisson_bootstrap` with one weight per unit: the weighted sums over rows are the weighted sums
    of the units' sums, so the units' sums of the terms, their counts per category (sparse) and their row
    counts (the weights' total) go through the same accumulator as rows would, keyed by the unit's index.
    ``weights``: the rows' own weights, folded into the units' sums, counts and totals."""
    from scipy.sparse import csr_matrix

    from ...resample import Accumulator, unit_sums, unit_weights

    count = int(units.max()) + 1 if n else 0
    dense = [f[0] for f in forms if f is not None and f[0] is not None]
    codes = [f for f in forms if f is not None and f[1] is not None]
    sums = np.zeros((count, sum(_width(t) for t in dense) + 1))
    sums[:, -1] = np.bincount(units, weights=weights, minlength=count)
    if dense:
        for start, stop in _spans(n, _ROWS):
            block = np.column_stack([t(start, stop) if callable(t) else t[start:stop] for t in dense])
            if weights is not None:
                block *= weights[start:stop, None]
            sums[:, :-1] += unit_sums(units[start:stop], count, block)
    counts = [
        csr_matrix(
            (np.ones(n) if weights is None else weights, (units, np.asarray(f[1], dtype=np.intp))),
            shape=(count, f[2]),
        )
        for f in codes
    ]  # duplicates add up: each unit's rows (their weights) per category
    acc = Accumulator(seed, replicates, n_terms=sums.shape[1], n_categories=tuple(f[2] for f in codes))
    if count:
        acc.update(0, sums, counts)
    out = _finished(forms, acc, acc.sums[-1], replicates)
    _order_statistics(
        stats,
        forms,
        out,
        n,
        replicates,
        _times(lambda r0, r1: unit_weights(seed, units, count, r0, r1), weights),
    )
    return out


def _circular_bootstrap(
    stats, forms, n: int, replicates: int, seed: int, size: int, weights: np.ndarray | None = None
) -> list[np.ndarray]:
    r""":func:`poisson_bootstrap` by the circular block bootstrap (:mod:`uqeval.resample`; Politis & Romano
    1992): replicate ``r`` is the :math:`K = \lceil n / L \rceil` circular blocks of ``L = size`` rows that
    start at :func:`~uqeval.resample.block_starts`, i.e. row weights that count the blocks covering a row
    (total :math:`K L`). The weighted sums of dense terms are sums of the drawn starts' window sums (a
    gather of K values per replicate), category counts one bincount of the drawn rows' codes; order
    statistics use the (r, n) row weights (:func:`~uqeval.resample.circular_block_weights`). ``weights``: the
    rows' own weights, folded into the terms (plus a column of them, whose window sums give each replicate's
    total), the category counts and the order statistics' row weights."""
    from types import SimpleNamespace

    from ...engine.progress import stage
    from ...resample import block_starts, circular_block_weights, window_sums

    k = -(-n // size)
    dense = [f[0] for f in forms if f is not None and f[0] is not None]
    codes = [f for f in forms if f is not None and f[1] is not None]
    rest = [i for i, f in enumerate(forms) if f is None]
    width = sum(_width(t) for t in dense)
    extra = 0 if weights is None else 1  # a last column of the weights: its sums are the replicates' totals
    advance = stage(f"bootstrap ({replicates:,} resamples of {k:,} circular blocks)", replicates)
    sums = np.zeros((width + extra, replicates))
    if dense or extra:
        x = np.empty((n, width + extra))
        for start, stop in _spans(n, _ROWS):  # in row order: a BlockScore adds up its mean as it goes
            if dense:
                x[start:stop, :width] = np.column_stack(
                    [t(start, stop) if callable(t) else t[start:stop] for t in dense]
                )
        if weights is not None:
            x[:, :width] *= weights[:, None]
            x[:, width] = weights
        windows = window_sums(x, size)
        del x
        for r0 in range(0, replicates, 64):
            r1 = min(replicates, r0 + 64)
            for r, starts in enumerate(block_starts(seed, n, size, r0, r1), start=r0):
                sums[:, r] = windows.take(starts, axis=0).sum(
                    axis=0
                )  # (K, width): cheaper than one 3-d gather
            if not codes and not rest:
                advance(r1 - r0)
    total = np.full(replicates, float(k * size)) if weights is None else sums[width].copy()
    sums = sums[:width]
    # category counts: per replicate, its row weights (a moving sum of its start counts) and one weighted
    # bincount per code column (a gather of the K L drawn rows' codes costs more)
    counts = [np.zeros((f[2], replicates)) for f in codes]
    if codes:
        columns = [np.asarray(f[1], dtype=np.intp) for f in codes]
        for r0 in range(0, replicates, 64):
            r1 = min(replicates, r0 + 64)
            starts = block_starts(seed, n, size, r0, r1)
            for r in range(r1 - r0):  # a loop over replicates: each step is vectorised over the rows
                w = circular_block_weights(starts[r : r + 1], n, size)[0]
                if weights is not None:
                    w = w * weights
                for column, f, c in zip(columns, codes, counts):
                    c[:, r0 + r] = np.bincount(column, weights=w, minlength=f[2])
            if not rest:
                advance(r1 - r0)
    out = None
    if rest:
        out = [np.empty(replicates) for _ in forms]
        step = max(1, (1 << 22) // n)
        for r0 in range(0, replicates, step):
            r1 = min(replicates, r0 + step)
            w = circular_block_weights(block_starts(seed, n, size, r0, r1), n, size)
            if weights is not None:
                w = w * weights
            for i in rest:
                out[i][r0:r1] = stats[i].weighted(w)
            advance(r1 - r0)
    done = _finished(forms, SimpleNamespace(sums=sums, counts=counts), total, replicates)
    if out is not None:
        for i in rest:
            done[i] = out[i]
    return done


def _finished(forms, acc, total: np.ndarray, replicates: int) -> list[np.ndarray]:
    """Each metric's replicates from the accumulator's weighted sums of its terms and counts per category
    (``total``: the weights' sum per replicate); an empty (replicates,) array for a metric without a sums
    form, filled by :func:`_order_statistics`."""
    out: list[np.ndarray] = []
    col = cat = 0
    for form in forms:
        if form is None:
            out.append(np.empty(replicates))
            continue
        terms, code, _, finish = form
        parts = []
        if terms is not None:
            parts.append(acc.sums[col : col + _width(terms)].T)
            col += _width(terms)
        if code is not None:
            parts.append(acc.counts[cat].T)
            cat += 1
        out.append(np.asarray(finish(np.concatenate(parts, axis=1), total), dtype=np.float64))
    return out


def _order_statistics(stats, forms, out: list[np.ndarray], n: int, replicates: int, weights) -> None:
    """Fill ``out`` for the metrics without a sums form (order statistics): ``weights(r0, r1)`` gives the
    (r1 - r0, n) weight matrix of replicates ``r0 .. r1 - 1``, made in blocks of about 4M weights."""
    from ...engine.progress import stage

    rest = [i for i, f in enumerate(forms) if f is None]
    if not rest:
        return
    step = max(1, (1 << 22) // max(n, 1))
    advance = stage(f"bootstrap ({replicates:,} resamples, order statistics)", replicates)
    for r0 in range(0, replicates, step):
        r1 = min(replicates, r0 + step)
        advance(r1 - r0)
        w = weights(r0, r1)
        for i in rest:
            out[i][r0:r1] = stats[i].weighted(w)


def sign_flip_tests(
    diffs: np.ndarray | Callable[[int, int, np.ndarray], None],
    permutations: int,
    seed: int,
    shape: tuple[int, int] | None = None,
    units: np.ndarray | None = None,
) -> np.ndarray:
    r"""Two-sided paired sign-flip permutation tests of zero mean difference, one per column of
    ``diffs`` (N, t), all on the same random signs (:mod:`uqeval.resample`): with
    :math:`T = |\sum_i d_i|` and :math:`T_p = |\sum_i \varepsilon_{pi} d_i|`,
    :math:`p = (1 + \#\{p: T_p \ge T\}) / (1 + P)` (Phipson & Smyth 2010).

    ``diffs`` may also be a function ``(start, stop, out)`` that writes the differences of rows
    ``start .. stop - 1`` into ``out`` (stop - start, t), with ``shape = (N, t)``: the differences are
    then made _ROWS rows at a time and the (N, t) matrix never exists (the same p-values, bit for bit).

    ``units`` (N,): the cluster or block of each row (:func:`uqeval.resample.resampling_units`): one sign
    per unit, i.e. the test of the units' sums of differences."""
    from ...engine.progress import stage
    from ...metrics.blocks import PairwiseSum
    from ...resample import Accumulator, permutation_p_values, unit_sums

    if callable(diffs):
        assert shape is not None  # a function of the rows comes with shape=
        n, t = shape
    else:
        n, t = diffs.shape
    if units is not None:
        count = int(units.max()) + 1 if n else 0
        if not callable(diffs):
            return sign_flip_tests(unit_sums(units, count, diffs), permutations, seed)
        totals = np.zeros((count, t))
        buf = np.empty((min(n, _ROWS + 1), t))
        for start, stop in _spans(n, _ROWS):
            diffs(start, stop, buf[: stop - start])
            totals += unit_sums(units[start:stop], count, buf[: stop - start])
        return sign_flip_tests(totals, permutations, seed)
    acc = Accumulator(seed, permutations=permutations, n_diffs=t)
    advance = stage(f"permutation tests ({permutations:,} sign flips)", n)
    if not callable(diffs):
        for start in range(0, n, _ROWS):
            advance(min(n, start + _ROWS) - start)
            acc.update(start, diffs=diffs[start : start + _ROWS])
        return permutation_p_values(acc.flipped, diffs.sum(axis=0), np.abs(diffs).sum(axis=0))
    # the column sums of the (N, t) matrix. One column: numpy's pairwise sums of the whole column
    # (PairwiseSum). t >= 2: numpy adds the rows in order, so the running sums go first in each
    # block's buffer and the same additions happen in the same order
    observed, scale = np.zeros(t), np.zeros(t)
    pairwise = (PairwiseSum(n), PairwiseSum(n)) if t == 1 else None
    whole = np.empty((min(n, _ROWS + 1) + 1, t))  # one buffer for every block
    for start, stop in _spans(n, _ROWS):
        advance(stop - start)
        buf = whole[: stop - start + 1]
        diffs(start, stop, buf[1:])
        acc.update(start, diffs=buf[1:])
        if pairwise is not None:
            pairwise[0].add(buf[1:, 0])
            pairwise[1].add(np.abs(buf[1:, 0]))
            continue
        buf[0] = observed
        observed = np.add.reduce(buf, axis=0)
        np.abs(buf[1:], out=buf[1:])
        buf[0] = scale
        scale = np.add.reduce(buf, axis=0)
    if pairwise is not None:
        observed, scale = np.array([pairwise[0].total()]), np.array([pairwise[1].total()])
    return permutation_p_values(acc.flipped, observed, scale)


@dataclass
class Plan:
    """What a comparison computes, decided from the models (or, streamed, from their first chunk):
    the checked arguments, the level grids and the resolved metrics."""

    settings: Settings
    names: list[str]
    grids: Grids
    refs: list[MetricRef]
    notes: list[str]
    n_boot: int
    ci_level: float
    seed: int | None
    n_permutations: int
    pairs: str
    dm_lag: int
    kinds: list[str]
    #: what the intervals and the sign-flip test resample (:func:`uqeval.resample.resampling_units`); None:
    #: independent rows (the JSON then has no ``settings.resampling``, as before issue 25)
    resampling: dict[str, Any] | None = None


def plan_comparison(
    models: Sequence[Model],
    settings: Settings | None = None,
    metrics: Sequence[str] | None = None,
    n_boot: int = 1000,
    ci_level: float = 0.95,
    seed: int | None = 0,
    n_permutations: int = 10000,
    pairs: str = "best",
    dm_lag: int = 0,
    not_weighted: dict[str, str] | None = None,
) -> tuple[Plan, _Results]:
    """Check the arguments and resolve the metrics of :func:`compare_models` (``models`` need not hold
    every row: the stream engine plans on the first chunk); ``not_weighted``: for weighted rows
    (:func:`resolve_metrics`)."""
    from ...validation import check_level

    settings = settings or Settings()
    if len(models) < 2:
        raise InputError(f"compare needs at least 2 models, got {len(models)}")
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 0:
        raise InputError(f"the number of bootstrap resamples must be an integer >= 0, got {n_boot!r}")
    if isinstance(n_permutations, bool) or int(n_permutations) != n_permutations or n_permutations < 0:
        raise InputError(f"the number of permutations must be an integer >= 0, got {n_permutations!r}")
    if pairs not in ("best", "all"):
        raise InputError(f"pairs must be 'best' or 'all', got {pairs!r}")
    ci_level = check_level(ci_level, "confidence level")
    from ...catalogue import (
        settings_for_paths,  # --metrics exceedance.<t>.brier turns the group on (issue 16 A)
    )

    settings = settings_for_paths(settings, metrics or ())
    grids = common_grids(models, settings.resolution)
    results = _Results(models, settings, grids)
    refs, notes = resolve_metrics(metrics, models, results, grids, not_weighted)
    plan = Plan(
        settings,
        [m.name for m in models],
        grids,
        refs,
        list(grids.notes) + notes,
        int(n_boot),
        ci_level,
        seed,
        int(n_permutations),
        pairs,
        int(dm_lag),
        [m.kind for m in models],
    )
    return plan, results


def row_score(results: _Results, k: int, ref: MetricRef) -> np.ndarray | None:
    """Model ``k``'s per-row score of ``ref`` (a comparison score, or a summary metric's per-row score)."""
    if ref.source == "per_row":
        return results.score(k, ref.name)
    stat = results.row_stat(k, ref)
    return None if stat is None else stat.score


def row_form(results: _Results, k: int, ref: MetricRef) -> RowStat | None:
    """The :class:`RowStat` that resamples model ``k``'s ``ref`` (a per-row score resamples as its mean)."""
    if ref.source == "per_row":
        s = results.score(k, ref.name)
        return None if s is None else RowStat(score=s)
    return results.row_stat(k, ref)


def compare_models(
    models: Sequence[Model],
    settings: Settings | None = None,
    metrics: Sequence[str] | None = None,
    n_boot: int = 1000,
    ci_level: float = 0.95,
    seed: int | None = 0,
    n_permutations: int = 10000,
    pairs: str = "best",
    dm_lag: int = 0,
    resampling: Resampling | None = None,
    clusters: Any = None,
    weights: Any = None,
    weights_column: str | None = None,
    reference: Reference | None = None,
    reference_times: np.ndarray | None = None,
) -> dict[str, Any]:
    r"""Side-by-side metrics of aligned models with bootstrap intervals, ranks and paired tests.

    Parameters
    ----------
    models : models on the same rows (see :func:`align_models`), at least 2.
    settings : scoring settings (``resolution``, ``num_bins``, levels, ...).
    metrics : metric names (see :func:`resolve_metrics`); default :data:`DEFAULT_METRICS`
        restricted to those some model has.
    n_boot : bootstrap resamples (0: no intervals). All models and metrics share the
        same resamples, so intervals and differences are paired.
    ci_level : level of the percentile intervals :math:`[q_{\alpha/2}, q_{1-\alpha/2}]`
        of the bootstrap replicates (Efron & Tibshirani 1993, ch. 13).
    seed : seed of the bootstrap and of the permutation tests.
    n_permutations : random sign flips of the permutation test (0: no permutation test).
    pairs : ``"best"`` (each model against the best one per metric) or ``"all"``.
    dm_lag : lag h - 1 of the Diebold--Mariano variance (HLN-corrected, t(N - 1) reference; 0: the paired t test).
    resampling : what the intervals and the sign-flip test resample (:class:`uqeval.resample.Resampling`):
        clusters (the bootstrap weights every cluster's rows with one Poisson weight and the sign-flip test
        flips each cluster's sum of differences), or blocks of rows in time order (the bootstrap resamples
        circular blocks of ``block_size`` consecutive rows, circular block bootstrap, Politis & Romano 1992,
        and the sign-flip test flips consecutive non-overlapping blocks; ``"auto"`` picks the size from the
        per-row scores, :func:`uqeval.resample.optimal_block_size`). None: rows are independent, and a note
        flags score differences whose lag-1 autocorrelation is outside its 99 % band for independent rows.
    clusters : with a cluster resampling, the label of each row (a location, a patient, a day).
    weights : one weight per row (>= 0, not all 0; ``weights_column``: where they came from, for the JSON):
        see :func:`_weighted_comparison` for what is weighted and how.
    reference : skill scores of every model against this reference forecast
        (:func:`uqeval.commands.compare.skill.compare_skill`, resampled as the metrics are; not with
        ``weights``); ``reference_times``: the rows' times, for a persistence reference.

    Returns
    -------
    dict (schema ``uqeval.compare/1``) with keys ``schema``, ``n_rows``, ``models``
    (name, path, representation, ...), ``settings``, ``metrics`` (per metric:
    ``orientation``, ``target``, ``source``, ``bootstrap``, ``best`` and ``values``: per
    model ``estimate``, ``low``, ``high``, ``rank``, ``p_best`` (share of resamples in
    which the model is best; ties split) and ``diff_vs_best`` (estimate, low, high of
    the model minus the best model on the same resamples)), ``ranks`` (per model and
    metric, plus ``mean_rank``), ``tests`` (per pair: ``mean_diff`` = model minus
    reference, ``permutation_p``, ``dm_statistic``, ``dm_p``; unadjusted for multiple
    testing) and ``notes``. NaN is returned as ``float('nan')``.
    """
    n = models[0].prediction.n if models else 0
    if any(m.prediction.n != n for m in models):
        raise InputError("models must be aligned to the same rows first (see align_models)")
    n_read, uw = n, None
    not_weighted: dict[str, str] | None = None
    weights_json: dict[str, Any] = {}
    if weights is not None and reference is not None:
        from .skill import refuse_weighted_skill

        raise refuse_weighted_skill()
    if weights is not None:
        models, clusters, uw, weights_json = _weighted_comparison(models, weights, weights_column, clusters)
        n = models[0].prediction.n
        not_weighted = {}
    plan, results = plan_comparison(
        models, settings, metrics, n_boot, ci_level, seed, n_permutations, pairs, dm_lag, not_weighted
    )
    if not_weighted is not None and plan.settings.murphy:
        raise UsageError(
            f"{option('murphy')} draws unweighted Murphy curves: leave out {option('weights')} or {option('murphy')}"
        )
    units, block_size = None, None
    if resampling:
        resampling, units, info = resampling.units(n, clusters, lambda: _auto_block_size(results, plan, n))
        block_size = cast("int | None", resampling.block_size)  # a number: "auto" is resolved
        plan = replace(plan, resampling=info)
    rows = _RowScores(models, plan, results, uw)
    estimates, targets, columns, notes = estimate_metrics(plan, rows.value, rows.at_full)
    replicates: dict[tuple[str, str], np.ndarray] = {}
    if plan.n_boot and columns:  # every comparison score is a column: the bootstrap pass makes the means too
        reps = poisson_bootstrap(
            [c[2] for c in columns], n, plan.n_boot, plan.seed or 0, units, block_size, uw
        )
        for (metric, model, _), rep in zip(columns, reps):
            replicates[(metric, model)] = rep
    else:
        rows.add_means()
    rows.fill_estimates(estimates)
    if not_weighted is not None:
        _not_weighted_forms(plan, results, estimates, not_weighted)
    available = {
        ref.name: [
            k
            for k in range(len(models))
            if (ref.name, k) in rows.scored
            or ref.source == "summary"
            and row_score(results, k, ref) is not None
        ]
        for ref in plan.refs
    }
    tests = _PairedTests(rows, estimates, notes, units)
    extra, last = {}, []
    if plan.settings.murphy:  # issue 16 A
        extra["murphy"] = murphy_comparison(models)
        if extra["murphy"]["dominates"]:
            last.append(
                "Murphy diagrams: "
                + "; ".join(
                    f"{d['model']} dominates {d['dominated']} ({d['functional']})"
                    for d in extra["murphy"]["dominates"]
                )
            )
        elif extra["murphy"]["curves"]:
            last.append("Murphy diagrams: no model dominates another (the curves cross or coincide)")
    if not_weighted is not None:
        from ...weights import weights_block

        w_all = np.asarray(weights_json["weights"])
        n_zero = int((w_all == 0).sum())
        extra["weights"] = weights_block(weights_column, float(w_all.sum()), n_zero, not_weighted)
        last = weight_notes(n_zero, block_size is not None, not_weighted) + last
    out = assemble(plan, models, n, estimates, targets, replicates, notes, available, tests.run, extra, last)
    out["n_rows"] = int(n_read)
    if reference is not None:  # forecast verification (issue 16): skill of each model against the reference
        from .skill import compare_skill

        skill = compare_skill(
            models,
            reference,
            settings or Settings(),
            reference_times,
            n_boot,
            seed,
            ci_level,
            units,
            block_size,
        )
        out["reference"], out["skill"] = skill["reference"], skill["skill"]
        out["skill_orientation"] = skill["orientation"]
        out["notes"] = list(out.get("notes", [])) + skill["notes"]
    return out


class _RowScores:
    """The comparison scores of aligned models, made block by block from their rows and never held whole
    (most kernels are cheaper than reading an (N,) array back from memory); a summary metric's per-row score
    is part of its per-row form, which is held. ``uw``: the rows' weights (None: every row counts once).
    Each score's sum over the rows accumulates as its blocks are made (``np.mean`` of the whole score, bit
    for bit)."""

    def __init__(self, models: Sequence[Model], plan: Plan, results: _Results, uw: np.ndarray | None) -> None:
        from ...metrics.blocks import PairwiseSum

        self.models, self.plan, self.results, self.uw = models, plan, results, uw
        self.n = models[0].prediction.n
        self.refs = {ref.name: ref for ref in plan.refs}
        self.scored = {
            (ref.name, k)
            for ref in plan.refs
            if ref.source == "per_row"
            for k in range(len(models))
            if results.has_score(k, ref.name)
        }
        self.sums = {key: PairwiseSum(self.n) for key in self.scored}
        self._block: dict[int, tuple[int, int, Prediction]] = {}  # per model: its rows of the current block

    def score(self, name: str, k: int, start: int, stop: int) -> np.ndarray:
        """Model ``k``'s score ``name`` on rows ``start`` .. ``stop`` - 1."""
        ref = self.refs[name]
        if ref.source != "per_row":  # asked for where it is (available)
            return cast("np.ndarray", row_score(self.results, k, ref))[start:stop]
        if self._block.get(k, (None, None))[:2] != (start, stop):  # one subset per block: its memos serve
            # every score
            self._block[k] = (start, stop, self.models[k].prediction.subset(slice(start, stop)))
        # scored: model k has this score (has_score)
        return cast(
            "np.ndarray", comparison_score(self._block[k][2], name, self.plan.grids, self.plan.settings)
        )

    def _add(self, key: tuple[str, int], start: int, stop: int) -> np.ndarray:
        score = self.score(*key, start, stop)
        self.sums[key].add(score if self.uw is None else score * self.uw[start:stop])
        return score

    def column(self, key: tuple[str, int], start: int, stop: int) -> np.ndarray:
        """A bootstrap column: the score of rows ``start`` .. ``stop`` - 1 (its sum accumulated)."""
        return self._add(key, start, stop)[:, None]

    def add_means(self) -> None:
        """Accumulate every score's sum in one pass over the rows (when no bootstrap pass does)."""
        for start, stop in _spans(self.n, _ROWS):
            for key in self.scored:
                self._add(key, start, stop)

    def fill_estimates(self, estimates: dict[str, dict[str, float | None]]) -> None:
        """The mean of every comparison score (after the pass that accumulated their sums)."""
        w_total = float(self.n) if self.uw is None else float(self.uw.sum())
        for (name, k), total in self.sums.items():
            estimates[name][self.plan.names[k]] = total.total() / w_total if self.n else math.nan

    def value(self, k: int, ref: MetricRef) -> tuple[float | None, Any]:
        """``(estimate or None, the family's result)`` of metric ``ref`` for model ``k``
        (:func:`estimate_metrics`)."""
        if ref.source == "per_row":  # its mean is filled in by the pass over the rows
            return (0.0 if (ref.name, k) in self.scored else None), None
        if self.uw is not None:  # the per-row form's resampler at the weights (as score: one definition)
            stat = row_form(self.results, k, ref)
            fn = None if stat is None else stat.resampler(blas=False)
            # the family's result only for a target (a nominal level): its value is not used
            res = self.results.get(k, cast("str", ref.group)) if ref.orientation == "target" else None
            return (None if fn is None else _num(float(fn(self.uw[None, :])[0]))), res
        res = self.results.get(k, cast("str", ref.group))  # a summary metric names its family
        return _num(_value_at(res, ref.keys)), res

    def at_full(self, k: int, ref: MetricRef) -> tuple[Any, float | None, str | None]:
        """``(bootstrap column payload, the statistic at unit weights, why there is no interval)``
        (:func:`estimate_metrics`)."""
        if ref.source == "per_row":
            return functools.partial(self.column, (ref.name, k)), None, None
        stat = row_form(self.results, k, ref) if self.plan.n_boot else None
        fn = None if stat is None else stat.resampler()
        if fn is None:
            return None, None, "no cheap resampler (it would be recomputed from scratch per resample)"
        at = np.ones((1, self.n)) if self.uw is None else self.uw[None, :]  # the rows (their own weights)
        return stat, float(np.asarray(fn(at), dtype=np.float64)[0]), None


def _not_weighted_forms(
    plan: Plan, results: _Results, estimates: dict[str, dict[str, float | None]], not_weighted: dict[str, str]
) -> None:
    """Name in ``not_weighted`` each metric with a weighted form that has no per-row form for a model's
    representation."""
    from ...catalogue import METRICS

    for ref in plan.refs:
        for k, name in enumerate(plan.names):
            if (
                ref.source == "summary"
                and estimates[ref.name][name] is None
                and METRICS[f"{ref.group}.{ref.keys[-1]}"].applies_to(plan.kinds[k])
            ):
                stat = row_form(results, k, ref)
                if stat is None or stat.resampler() is None:
                    not_weighted.setdefault(ref.name, no_row_form(plan.kinds[k], name))


class _PairedTests:
    """The paired tests of the models' score differences (:meth:`run`: the sign-flip permutation test and
    Diebold-Mariano's, per ``(metric, model, reference)``), made block by block from :class:`_RowScores`;
    ``units``: the clusters or blocks the sign flips flip (None: rows). With weights the tests take
    z_i = w_i d_i / mean(w), whose mean is the weighted mean difference."""

    def __init__(
        self,
        rows: _RowScores,
        estimates: dict[str, dict[str, float | None]],
        notes: list[str],
        units: np.ndarray | None,
    ) -> None:
        self.rows, self.estimates, self.notes, self.units = rows, estimates, notes, units
        uw, n = rows.uw, rows.n
        self.z = None if uw is None else uw / (uw.sum() / n)

    def run(self, todo: list[tuple[str, int, int]]) -> list[dict[str, Any]]:
        """One entry per ``(metric, model index, reference index)`` of ``todo``."""

        plan, n = self.rows.plan, self.rows.n
        tests = [
            {
                "metric": name,
                "model": plan.names[a],
                "reference": plan.names[b],
                "mean_diff": math.nan,
                "permutation_p": math.nan,
                "dm_statistic": math.nan,
                "dm_p": math.nan,
            }
            for name, a, b in todo
        ]
        if not todo:
            return tests
        diffs = _Differences(self.rows, todo, self._shift(todo), self.z, self.units)
        if plan.n_permutations:
            from ...resample import flip_seed, rows_key

            seed = flip_seed(plan.seed or 0, rows_key([m.prediction for m in self.rows.models]))
            p_values = sign_flip_tests(
                diffs, plan.n_permutations, seed, shape=(n, len(todo)), units=self.units
            )
            for entry, p in zip(tests, p_values):
                entry["permutation_p"] = float(p)
        else:
            buf = np.empty((min(n, _ROWS + 1), len(todo)))
            for start, stop in _spans(n, _ROWS):
                diffs(start, stop, buf[: stop - start])
        for j, entry in enumerate(tests):
            entry["mean_diff"] = diffs.means[j].total() / n if n else math.nan
            if n >= 2 and plan.dm_lag < n:
                dm = diffs.moments.dm(j)
                entry["dm_statistic"], entry["dm_p"] = dm["statistic"], dm["p_value"]
        if diffs.lag1 is not None:
            note = diffs.lag1.note(diffs.moments, todo, plan.names)
            if note:
                self.notes.append(note)
        return tests

    def _shift(self, todo: list[tuple[str, int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """``(shift, unit)`` of each pair's differences: the difference of the estimates (near the mean
        difference, it keeps the lag products accurate), and a power of two near the size of scores near the
        float64 limit (the test statistic does not depend on the scores' unit; the squares must not
        overflow; 1 for ordinary scores: nothing changes)."""
        names = self.rows.plan.names
        est = [(self.estimates[name][names[a]], self.estimates[name][names[b]]) for name, a, b in todo]
        shift = np.array([math.nan if None in e else cast("float", e[0]) - cast("float", e[1]) for e in est])
        shift[~np.isfinite(shift)] = 0.0
        size = np.array([max((abs(v) for v in e if v is not None), default=0.0) for e in est])
        unit = np.where(
            np.isfinite(size) & (size > 2.0**400), np.exp2(np.floor(np.log2(np.maximum(size, 1.0)))), 1.0
        )
        return shift / unit, unit


class _Differences:
    """The score differences of the pairs ``todo`` of rows ``start`` .. ``stop`` - 1, written into ``out``
    when called (the block callback of :func:`sign_flip_tests`), with their running means, their
    Diebold-Mariano moments and (rows only) their lag-1 autocorrelation check."""

    def __init__(
        self,
        rows: _RowScores,
        todo: list[tuple[str, int, int]],
        shift_unit: tuple[np.ndarray, np.ndarray],
        z: np.ndarray | None,
        units: np.ndarray | None,
    ) -> None:
        from ...metrics.blocks import PairwiseSum
        from ...metrics.comparison import Moments

        self.rows, self.todo, self.z = rows, todo, z
        self.shift, self.unit = shift_unit
        self.scaled = bool((self.unit != 1.0).any())
        lag = rows.plan.dm_lag
        self.means = [PairwiseSum(rows.n) for _ in todo]
        self.moments = Moments(lag, self.shift)
        self.lag1 = _Lag1(len(todo), self.shift) if units is None and rows.n >= _LAG1_MIN_ROWS else None

    def __call__(self, start: int, stop: int, out: np.ndarray) -> None:
        from ...metrics.comparison import Moments

        here: dict[tuple[str, int], np.ndarray] = {}
        for j, (name, a, b) in enumerate(self.todo):
            for k in (a, b):
                if (name, k) not in here:
                    here[(name, k)] = self.rows.score(name, k, start, stop)
            sa = here[(name, a)]
            out[:, j] = sa - _without_rounding_noise(sa, here[(name, b)])
            if self.z is not None:
                out[:, j] *= self.z[start:stop]
            self.means[j].add(out[:, j])
        part = out / self.unit if self.scaled else out
        self.moments = self.moments.merge(Moments.of(part, self.rows.plan.dm_lag, self.shift))
        if self.lag1 is not None:
            self.lag1.add(part)


def no_row_form(kind: str, name: str) -> str:
    """Why a weighted metric is not compared for model ``name`` (``weights.not_weighted``)."""
    return f"it has no per-row form for {kind} predictions ({name})"


def weight_notes(n_zero: int, blocks: bool, not_weighted: dict[str, str]) -> list[str]:
    """The notes of a weighted comparison: the rows of weight 0 dropped, the metrics left out."""
    notes = []
    if n_zero:
        notes.append(
            f"weights: {n_zero} row(s) of weight 0 were dropped"
            + (" (the blocks are formed from the remaining rows)" if blocks else "")
        )
    if not_weighted:
        notes.append(
            f"{len(not_weighted)} metric(s) take no weights and were not compared (listed with the reason "
            "under weights.not_weighted)"
        )
    return notes


def _weighted_comparison(
    models: Sequence[Model], weights: Any, column: str | None, clusters: Any
) -> tuple[list[Model], Any, np.ndarray | None, dict[str, Any]]:
    r"""The rows that count and their weights, for :func:`compare_models` with ``weights``:
    ``(models, clusters, weights or None, {"weights": the checked weights of every row})``.

    - Rows of weight 0 are dropped first (the estimates are exactly those without them; with ``block_size``
      the blocks are formed from the remaining rows, in their order).
    - Estimates: a comparison score's weighted mean :math:`\sum_i w_i s_i / \sum_i w_i`; a catalogue metric's
      per-row form's resampler at the weights (:meth:`~uqeval.catalogue.RowStat.resampler`, as ``score``).
      Metrics that take no weights are refused by name, or left out when they are defaults.
    - Bootstrap: replicate :math:`b` counts row :math:`i` :math:`P_{bi} w_i` times (the Poisson count, its
      cluster's count or its circular-block cover count, times its weight).
    - Paired tests on :math:`z_i = w_i d_i / ar w`: the sign flip flips each :math:`z_i` (or each unit's
      sum of them), exact when the :math:`z_i` are independent and symmetric about 0 under the null (the
      weights fixed, not estimated from the data); Diebold--Mariano is the t statistic of the mean of
      :math:`z_i`, the linearisation of the weighted mean difference under the null (the weights treated as
      fixed constants; rows independent, or the HAC variance up to ``dm_lag``).
    - Constant weights are no weights: the unweighted computation, bit for bit.
    """
    from ...weights import check_weights

    n = models[0].prediction.n
    w = check_weights(weights, column, n=n)
    keep = w > 0
    if not keep.all():
        models = [replace(m, prediction=m.prediction.subset(keep)) for m in models]
        if clusters is not None and np.shape(clusters)[:1] == (n,):
            clusters = np.asarray(clusters)[keep]
    kept = w[keep]
    uw = None if (kept == kept[0]).all() else kept
    return list(models), clusters, uw, {"weights": w}


#: fewest rows for the serial-correlation note (the normal band of the lag-1 autocorrelation needs a few dozen)
_LAG1_MIN_ROWS = 30


class _Lag1:
    r"""Lag-1 autocorrelation of each column of the paired differences, folded block by block in row order:
    the products :math:`S_1 = \sum_i e_i e_{i-1}` of :math:`e = d - c` (``shift`` :math:`c`, as
    :class:`~uqeval.metrics.comparison.Moments`) and the first and last :math:`e`; with the moments' mean and
    centred sum of squares, :math:`\hat\rho_1 = \hat\gamma_1 / \hat\gamma_0`."""

    def __init__(self, t: int, shift: np.ndarray) -> None:
        self.shift = shift
        self.s1 = np.zeros(t)
        self.first: np.ndarray | None = None
        self.last: np.ndarray | None = None

    def add(self, d: np.ndarray) -> None:
        if not len(d):
            return
        e = d - self.shift
        self.s1 += np.einsum("ij,ij->j", e[1:], e[:-1])
        if self.last is None:
            self.first = e[0].copy()
        else:
            self.s1 += self.last * e[0]
        self.last = e[-1].copy()

    def rho(self, moments: Any) -> np.ndarray:
        n = moments.n
        delta = moments.mean - self.shift
        sum_e = moments.total - n * self.shift
        a, b = sum_e - self.first, sum_e - self.last
        with np.errstate(all="ignore"):
            gamma1 = (self.s1 - delta * (a + b) + (n - 1) * delta * delta) / n
            return gamma1 / (moments.m2 / n)

    def note(self, moments: Any, todo: list[tuple[str, int, int]], names: list[str]) -> str | None:
        """The note when some pair's differences look serially correlated (None: none does)."""
        if self.last is None:
            return None
        rho = self.rho(moments)
        band = 2.576 / math.sqrt(moments.n)
        worst = np.where(np.isfinite(rho), np.abs(rho), 0.0)
        j = int(np.argmax(worst))
        if not worst[j] > band:
            return None
        name, a, b = todo[j]
        count = int(np.count_nonzero(worst > band))
        more = f" (and {count - 1} more pair(s))" if count > 1 else ""
        return (
            f"rows look serially correlated: the lag-1 autocorrelation of the {name} differences "
            f"{names[a]} - {names[b]} is {rho[j]:.3f}{more}, outside ±{band:.3f} (its 99 % band for independent "
            f"rows); the bootstrap intervals and the paired tests assume independent rows: give "
            f"{option('block_size', 'N')} (or auto) for rows in time order, or {option('cluster', 'COLUMN')} for "
            "groups of related rows"
        )


def _auto_block_size(results: _Results, plan: Plan, n: int) -> int:
    """``block_size="auto"``: the largest :func:`uqeval.resample.optimal_block_size` of the models' per-row
    scores of the first compared metric that has them."""
    from ...resample import optimal_block_size

    for ref in plan.refs:
        series = [s for k in range(len(plan.names)) if (s := row_score(results, k, ref)) is not None]
        if series:
            return max(optimal_block_size(s) for s in series)
    raise InputError(
        "block_size 'auto' needs a per-row score (crps, nll, pinball, ...) to choose the block size: "
        "compare such a metric too, or give the block size"
    )


def estimate_metrics(
    plan: Plan,
    value: Callable[[int, MetricRef], tuple[float | None, Any]],
    at_full: Callable[[int, MetricRef], tuple[Any, float | None, str | None]],
):
    """Estimates, targets and bootstrap columns of every metric and model.

    ``value(k, ref)``: ``(estimate or None, the family's result)``; ``at_full(k, ref)``: ``(column payload,
    the resampled statistic at unit weights, why there is no interval)``. A column whose unit-weight
    statistic does not reproduce the estimate gets no interval. Returns ``(estimates, targets, columns,
    notes)``, ``columns`` as ``(metric, model, payload)``."""
    names = plan.names
    notes = list(plan.notes)
    estimates: dict[str, dict[str, float | None]] = {}
    targets: dict[str, float | None] = {}
    columns: list[tuple[str, str, Any]] = []
    no_ci: dict[str, str] = {}
    for ref in plan.refs:
        est: dict[str, float | None] = {}
        targets[ref.name] = None
        for k, name in enumerate(names):
            val, res = value(k, ref)
            est[name] = val
            if val is None:
                continue
            if ref.source == "summary" and targets[ref.name] is None:
                targets[ref.name] = _target(ref, res)
            payload, full, why = at_full(k, ref)
            if why is not None:
                no_ci.setdefault(ref.name, why)
                continue
            # a summary column with an interval has its statistic at unit weights (at_full)
            if ref.source == "summary" and not _consistent(cast("float", full), val):
                no_ci.setdefault(
                    ref.name,
                    f"the resampled statistic ({full:.6g}) does not reproduce the "
                    f"full-sample value ({val:.6g}) for {name}",
                )
                continue
            columns.append((ref.name, name, payload))
        estimates[ref.name] = est
        missing = [x for x, v in est.items() if v is None]
        if missing and len(missing) < len(names):
            listed = ", ".join(f"{x} ({plan.kinds[names.index(x)]})" for x in missing)
            notes.append(f"{ref.name}: not available for {listed}")
    for name, why in no_ci.items():
        notes.append(f"{name}: reported without a bootstrap interval: {why}")
    columns = [c for c in columns if c[0] not in no_ci]
    return estimates, targets, columns, notes


def assemble(
    plan: Plan,
    models: Sequence[Model],
    n: int,
    estimates: dict[str, dict[str, float | None]],
    targets: dict[str, float | None],
    replicates: dict[tuple[str, str], np.ndarray],
    notes: list[str],
    available: dict[str, list[int]],
    run_tests: Callable[[list[tuple[str, int, int]]], list[dict[str, Any]]],
    extra: dict[str, Any] | None = None,
    last_notes: Sequence[str] = (),
) -> dict[str, Any]:
    """The comparison JSON from the estimates, the bootstrap replicates and ``run_tests(pairs)`` (the entries of
    the paired tests ``(metric, model index, reference index)``), whichever engine computed them; ``extra``:
    further top-level keys, ``last_notes``: notes after the others."""
    names = plan.names
    out_metrics: dict[str, Any] = {}
    rank_table: dict[str, dict[str, float]] = {name: {} for name in names}
    best_by_metric: dict[str, list[str]] = {}
    for ref in plan.refs:
        out_metrics[ref.name] = _metric_entry(plan, ref, estimates, targets[ref.name], replicates, notes)
        best_by_metric[ref.name] = out_metrics[ref.name]["best"]
        for k, entry in out_metrics[ref.name]["values"].items():
            rank_table[k][ref.name] = entry["rank"]
    tests = run_tests(_pairs_to_test(plan, available, best_by_metric, notes))
    if n >= 2 and plan.dm_lag < n:
        notes += _dm_not_computed(tests)
    mean_rank = {}
    for k in names:
        vals = [v for v in rank_table[k].values() if not math.isnan(v)]
        mean_rank[k] = float(np.mean(vals)) if vals else math.nan
    notes += _rank_disagreement(best_by_metric)
    notes += last_notes

    from ..._version import __version__

    return {
        "schema": COMPARE_SCHEMA,
        "uqeval_version": __version__,
        "n_rows": int(n),
        "models": [
            {
                "name": m.name,
                "path": m.info.get("path", m.name),
                **{k: m.info[k] for k in ("files", "skipped") if k in m.info},  # a directory or a pattern
                "representation": m.kind,
                "n_rows": m.info.get("n_rows", int(n)),
                "n_dropped": m.info.get("n_dropped", 0),
                "columns": m.info.get("columns", {}),
            }
            for m in models
        ],
        "settings": _settings_json(plan),
        "metrics": out_metrics,
        "ranks": {"by_metric": rank_table, "mean_rank": mean_rank},
        "tests": tests,
        "notes": notes,
        **(extra or {}),
    }


def _percentile_interval(x: np.ndarray, alpha: float) -> tuple[float, float]:
    """The bootstrap percentile interval of the replicates ``x`` (NaN replicates left out)."""
    with np.errstate(all="ignore"):
        if np.all(np.isnan(x)):
            return math.nan, math.nan
        lo, hi = np.nanquantile(x, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(lo), float(hi)


def _badness(x: np.ndarray, orient: str, target: Any) -> np.ndarray:
    """Values turned so that lower is better: negated (higher is better), distance to the target, or as
    they are."""
    if orient == "higher":
        return -x
    if orient == "target":
        return np.abs(x - target)
    return x


def _p_best(
    ref: MetricRef, names: Sequence[str], replicates: dict, orient: str, target: Any
) -> dict[str, float]:
    """The share of bootstrap resamples in which each model is best (ties split)."""
    have = [k for k in names if (ref.name, k) in replicates]
    if len(have) < 2:
        return {}
    mat = _badness(np.column_stack([replicates[(ref.name, k)] for k in have]), orient, target)
    mat = np.where(np.isnan(mat), np.inf, mat)
    lowest = mat.min(axis=1, keepdims=True)
    win = mat <= lowest + 1e-12 * np.maximum(1.0, np.abs(lowest))
    share = (win / win.sum(axis=1, keepdims=True)).mean(axis=0)
    return {k: float(v) for k, v in zip(have, share)}


def _metric_entry(
    plan: Plan,
    ref: MetricRef,
    estimates: dict[str, dict[str, float | None]],
    target: float | None,
    replicates: dict[tuple[str, str], np.ndarray],
    notes: list[str],
) -> dict[str, Any]:
    """One metric of the comparison JSON: per model its estimate, interval, rank, share of resamples where it
    is best and difference to the best model; a note where an estimate lies outside its interval."""
    from ...metrics.comparison import ranks

    names, alpha = plan.names, 1.0 - plan.ci_level
    est = estimates[ref.name]
    orient = cast("Orientation", ref.orientation)  # the catalogue's three (test_catalogue_invariants)
    if orient == "target" and target is None:
        orient = "lower"
    # rank on 12 significant digits: values equal up to rounding tie
    r = ranks({k: (math.nan if v is None else _round12(v)) for k, v in est.items()}, orient, target)
    finite_ranks = [v for v in r.values() if not math.isnan(v)]
    best = [k for k, v in r.items() if finite_ranks and v == min(finite_ranks)]
    ref_model = best[0] if best else None
    boot = bool(replicates) and all((ref.name, k) in replicates for k in names if est[k] is not None)
    p_best = _p_best(ref, names, replicates, orient, target) if boot else {}
    values: dict[str, Any] = {}
    outside: list[str] = []
    for k in names:
        v = est[k]
        entry: dict[str, Any] = {
            "estimate": math.nan if v is None else v,
            "low": math.nan,
            "high": math.nan,
            "rank": r[k],
            "p_best": p_best.get(k, math.nan),
            "diff_vs_best": None,
        }
        rep = replicates.get((ref.name, k))
        if rep is not None:
            entry["low"], entry["high"] = _percentile_interval(rep, alpha)
            base = replicates.get((ref.name, ref_model)) if ref_model is not None else None
            best_v = est[ref_model] if ref_model is not None else None  # ranked first: a number
            if base is not None and best_v is not None and k != ref_model and v is not None:
                lo, hi = _percentile_interval(rep - base, alpha)
                entry["diff_vs_best"] = {
                    "reference": ref_model,
                    "estimate": v - best_v,
                    "low": lo,
                    "high": hi,
                }
        values[k] = entry
        if (
            v is not None
            and rep is not None
            and math.isfinite(entry["low"])
            and not (entry["low"] - 1e-12 * abs(v) <= v <= entry["high"] + 1e-12 * abs(v))
        ):
            outside.append(k)
    if outside:
        notes.append(
            f"{ref.name}: the estimate of {', '.join(outside)} lies outside its bootstrap interval: "
            "the statistic is biased under resampling (calibration errors grow on resamples); "
            "compare models by the paired difference (diff_vs_best) rather than by the interval"
        )
    return {
        "source": ref.source,
        "orientation": ref.orientation,
        "target": target,
        "bootstrap": boot,
        "best": best,
        "values": values,
    }


def _pairs_to_test(
    plan: Plan, available: dict[str, list[int]], best_by_metric: dict[str, list[str]], notes: list[str]
) -> list[tuple[str, int, int]]:
    """The paired tests to run, ``(metric, model index, reference index)``: each model against the best one
    per metric, or every pair (``pairs="all"``); none for a metric with a target."""
    todo: list[tuple[str, int, int]] = []
    for ref in plan.refs:
        if ref.orientation == "target":  # a paired test of indicator means says nothing about closeness
            # to a target
            continue
        avail = available.get(ref.name, [])
        if len(avail) < 2:
            continue
        if plan.pairs == "all":
            todo += [(ref.name, a, b) for i, a in enumerate(avail) for b in avail[i + 1 :]]
        elif best_by_metric[ref.name]:
            b = plan.names.index(best_by_metric[ref.name][0])
            todo += [(ref.name, a, b) for a in avail if a != b]
        else:  # every estimate overflowed or is undefined: there is no best model to test against
            notes.append(
                f"{ref.name}: no paired tests: no model has a finite estimate (the scores overflow or are "
                "undefined), so there is no best model to test against"
            )
    return todo


def _dm_not_computed(tests: list[dict[str, Any]]) -> list[str]:
    """A note per metric whose Diebold-Mariano statistic came out null."""
    undone: dict[str, list[str]] = {}
    for t in tests:
        if math.isnan(t["dm_statistic"]):
            undone.setdefault(t["metric"], []).append(f"{t['model']} vs {t['reference']}")
    return [
        f"{metric}: the Diebold–Mariano test of {', '.join(pairs[:3])}"
        f"{f' and {len(pairs) - 3} more' if len(pairs) > 3 else ''} is not computed (null): the "
        "per-row score differences are not finite, or too large to square in float64"
        for metric, pairs in undone.items()
    ]


def _rank_disagreement(best_by_metric: dict[str, list[str]]) -> list[str]:
    """A note when the metrics disagree on the best model (ties do not count as disagreement)."""
    by_winner: dict[str, list[str]] = {}
    for metric, best in best_by_metric.items():
        if len(best) == 1:
            by_winner.setdefault(best[0], []).append(metric)
    if len(by_winner) <= 1:
        return []

    listed = "; ".join(
        f"{w} by {', '.join(ms[:4])}{f' and {len(ms) - 4} more' if len(ms) > 4 else ''}"
        for w, ms in by_winner.items()
    )
    return [f"rank consistency: the metrics disagree on the best model (best: {listed})"]


def _settings_json(plan: Plan) -> dict[str, Any]:
    """The ``settings`` block of the comparison JSON."""
    settings, grids = plan.settings, plan.grids
    return {
        "bootstrap": plan.n_boot,
        "ci_level": plan.ci_level,
        "seed": plan.seed,
        "permutations": plan.n_permutations,
        "pairs": plan.pairs,
        "dm_lag": plan.dm_lag,
        **({"resampling": plan.resampling} if plan.resampling else {}),
        "resolution": settings.resolution,
        "num_bins": settings.num_bins,
        "levels": None if settings.levels is None else list(settings.levels),
        "level": settings.level,
        "pinball_levels": _levels_json(grids.quantile_levels, grids.toolbox_quantiles),
        "interval_levels": _levels_json(grids.central_levels, grids.toolbox_central),
        "check_levels": _levels_json(grids.check_levels, True),
        **{
            k: v
            for k, v in settings.to_json().items()  # issue 16 A: the opt-in groups' settings, when set
            if k in ("tw_threshold", "thresholds", "murphy") and v not in (None, False)
        },
    }


# --------------------------------------------------------------------------- Murphy dominance (issue 16 A)


def murphy_comparison(models: Sequence[Model]) -> dict[str, Any]:
    """Murphy curves of every model on one threshold grid, and which model dominates which.

    The grid (:data:`uqeval.metrics.murphy.GRID_POINTS` thresholds, for the JSON and the figure) spans
    every model's forecasts and the targets (probabilities: [0, 1]). Curves are keyed by functional:
    ``mean``, ``quantile <level>`` or ``probability <class>``. Model A *dominates* B on a functional
    when A's curve is nowhere above B's and somewhere below (Ehm et al. 2016, Corollary 1: every
    consistent scoring function of that functional then prefers A). Checked exactly: at every jump
    point of both curves (the two models' forecasts and the targets), from the right and from the
    left; between them the curves are constant (quantiles) or linear (expectiles).

    Returns ``{"thetas": grid, "curves": {functional: {model: curve}}, "dominates": [{"functional",
    "model", "dominated"}, ...]}``.
    """
    from ...catalogue import CLASSIFICATION, get_family, murphy_forecasts
    from ...metrics.murphy import dominates, jump_points, murphy_curve, theta_grid

    applies = get_family("murphy").compute
    models = [m for m in models if m.kind in applies and m.prediction.y_true is not None]
    preds = [m.prediction for m in models]
    if (
        not preds
        or any(p.kind in CLASSIFICATION for p in preds)
        and not all(p.kind in CLASSIFICATION for p in preds)
    ):
        return {"thetas": [], "curves": {}, "dominates": []}
    forecasts = {m.name: murphy_forecasts(m.prediction) for m in models}
    if all(p.kind in CLASSIFICATION for p in preds):
        grid = theta_grid(bounds=(0.0, 1.0))
    else:
        grid = theta_grid(
            preds[0].require_targets(), *(v[0] for fc in forecasts.values() for v in fc.values())
        )
    curves: dict[str, dict[str, list[float]]] = {}
    for name, fc in forecasts.items():
        for label, (x, y, functional, alpha) in fc.items():
            curves.setdefault(label, {})[name] = murphy_curve(x, y, grid, functional, alpha).tolist()
    pairs = []
    for label, by_model in curves.items():
        names = list(by_model)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                xa, y, functional, alpha = forecasts[a][label]
                xb = forecasts[b][label][0]
                exact = jump_points(xa, xb, y)
                va, vb = (
                    np.concatenate(
                        [
                            murphy_curve(x, y, exact, functional, alpha),
                            murphy_curve(x, y, exact, functional, alpha, left_limit=True),
                        ]
                    )
                    for x in (xa, xb)
                )
                if dominates(va, vb):
                    pairs.append({"functional": label, "model": a, "dominated": b})
                elif dominates(vb, va):
                    pairs.append({"functional": label, "model": b, "dominated": a})
    return {"thetas": grid.tolist(), "curves": curves, "dominates": pairs}
