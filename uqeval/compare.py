r"""Compare several models evaluated on the same targets: the pure core of ``uqeval compare``.

Steps (each a function, arrays and dicts in and out; nothing here reads files or prints):

1. :func:`align_models` checks that every model predicts the same targets, in the same
   order (to ``1e-12``) or after a join on an id column, and reorders them to the first
   model's rows. A mismatch is an :class:`~uqeval.errors.InputError` naming the first
   differing row.
2. :func:`common_grids` picks the quantile levels of ``pinball`` and the central levels
   of ``interval`` that *every* model can be scored at, so that the per-row scores of a
   Gaussian, a sample and a quantile model are comparable.
3. :func:`per_row_scores` computes per-row scores (lower is better):

   ================  ==========================================================
   ``crps``          Gaussian closed form; samples: empirical-CDF CRPS
                     (``crps_ensemble``); point forecast: :math:`|y - \hat y|`,
                     the CRPS of a point mass
   ``nll``           Gaussian negative log density; categorical
                     :math:`-\log \mathrm{clip}(p_{y}, \epsilon, 1-\epsilon)`
   ``pinball``       mean pinball loss over the common quantile levels
   ``interval``      mean interval score over the common central levels
   ``check``         the Uncertainty Toolbox check score: mean pinball loss over
                     ``linspace(0.01, 0.99, resolution)`` (Gaussian, samples)
   ``brier``         categorical :math:`\sum_k (p_k - \mathbb 1[y = k])^2`
   ================  ==========================================================

4. :func:`compare_models` resolves the requested metric names (short ``ma_cal`` or full
   ``avg_calibration.ma_cal``; unknown names list close matches), takes each model's
   value of every metric (per-row means, or the registry's value for summary metrics),
   bootstraps them (rows resampled with replacement; one shared set of resamples for
   every model and metric, so intervals are paired), ranks the models per metric (the
   rank-consistency view of Kompa, Snoek & Beam 2021, Fig. 11) and runs paired tests
   (sign-flip permutation and Diebold--Mariano) on the per-row scores.

Non-additive metrics are bootstrapped from resampled *index arrays* without a Python
loop over resamples (:func:`summary_resampler`): average calibration from each row's
cover index (Gaussian, samples: one ``bincount`` per resample) or per-level indicators
(quantiles); coverage, width and miss rates from per-row indicators; accuracy,
sharpness and the registry's scoring rules from per-row terms. Each resampler is
checked against the registry's full-sample value; if they disagree, or no cheap
resampler exists (reliability scores, adversarial group calibration, classification
calibration errors, prediction sets, ...), the metric is reported without an interval
and a note says so.

Percentile intervals of statistics that are biased under resampling (calibration
errors only grow on a resample of a calibrated model) can miss the estimate; a note
flags it, and ``diff_vs_best`` (the model minus the best model on the same resamples)
is the better basis for comparing models on such metrics.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .config import Settings
from .errors import InputError, UsageError
from .predictions import Prediction

COMPARE_SCHEMA = "uqeval.compare/1"

#: Per-row scores, all lower-is-better.
PER_ROW_SCORES: tuple[str, ...] = ("crps", "nll", "pinball", "interval", "check", "brier")

#: Per-row scores each representation provides.
PER_ROW_BY_KIND: dict[str, tuple[str, ...]] = {
    "gaussian": ("crps", "nll", "pinball", "interval", "check"),
    "samples": ("crps", "pinball", "interval", "check"),
    "quantiles": ("pinball", "interval"),
    "intervals": ("pinball", "interval"),
    "point": ("crps",),
    "categorical": ("nll", "brier"),
}

#: Metrics compared when none are named (those that no model has are left out).
DEFAULT_METRICS: tuple[str, ...] = ("crps", "nll", "pinball", "interval", "brier", "avg_calibration.ma_cal")

_EPS = float(np.finfo(np.float64).eps)
_RTOL_CONSISTENT = 1e-9


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
            raise UsageError(f"--names gives {len(names)} name(s) for {len(paths)} file(s); give one per file")
        dup = next((n for i, n in enumerate(names) if n in names[:i] or not n), None)
        if dup is not None:
            raise UsageError(f"--names must be non-empty and distinct, found {dup!r} twice or empty")
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
    for i, (stem, p) in enumerate(zip(stems, paths)):
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
) -> list[Model]:
    r"""Check that all models predict the same targets; reorder them to the first model's rows.

    Without ``ids`` the rows must correspond one to one (same count, same order). With
    ``ids`` (one array per model, e.g. the values of an ``--id`` column) each model's ids
    must be unique and the same set as the first model's; rows are joined on them. Then
    the targets must agree: :math:`|y_i^{(k)} - y_i^{(1)}| \le 10^{-12}\max(1, |y_i^{(1)}|)`.

    Returns the models with their predictions reordered (``Prediction.subset``), so the
    per-row scores of all models line up. Raises :class:`InputError` naming the first
    differing row (and its id).
    """
    if len(models) < 2:
        raise InputError(f"compare needs at least 2 models, got {len(models)}")
    first = models[0]
    y0 = first.prediction.require_targets()
    out = [first]
    ref_ids: np.ndarray | None = None
    how = f"join on --id '{id_column}'" if id_column else "pass --id COLUMN to join the files on an id column"
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
        y = pred.require_targets()
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
                raise InputError(
                    f"{m.source} has {s.size} rows but {first.source} has {ref_ids.size}: id '{extra[0]}' "
                    f"of {m.source} is not in {first.source}; every file must hold the same ids"
                )
            index = order[pos]
            pred = pred.subset(index)
            y = pred.y_true
        elif y.size != y0.size:
            raise InputError(
                f"{m.source} has {y.size} rows but {first.source} has {y0.size}"
                f"{' (after dropping NaN rows)' if m.info.get('n_dropped') or first.info.get('n_dropped') else ''}; "
                f"the files must hold the same targets in the same order, or {how}"
            )
        bad = ~(np.abs(y - y0) <= tol * np.maximum(1.0, np.abs(y0)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            where = f"row {i}"
            if ref_ids is not None:
                where += f" (id '{ref_ids[i]}')"
            rows = (f"; file rows {_file_row(first.prediction, i)} and {_file_row(pred, i)}"
                    if _file_row(first.prediction, i) != i or _file_row(pred, i) != i else "")
            raise InputError(
                f"targets differ between {first.source} and {m.source}: {int(bad.sum())} row(s), first at "
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


def _quantile_keys(pred: Prediction) -> set[str] | None:
    """Quantile levels ``pred`` provides (level keys); None: any level."""
    from .metrics.intervals import level_key

    if pred.kind in ("gaussian", "samples"):
        return None
    if pred.kind == "quantiles":
        return {level_key(t) for t in pred.levels}
    if pred.kind == "intervals":
        return {level_key((1.0 - p) / 2.0) for p in pred.levels} | {level_key((1.0 + p) / 2.0) for p in pred.levels}
    return set()


def _central_keys(pred: Prediction) -> set[str] | None:
    """Central interval levels ``pred`` provides (level keys); None: any level."""
    from .metrics.intervals import central_pairs, level_key

    if pred.kind in ("gaussian", "samples"):
        return None
    if pred.kind == "intervals":
        return {level_key(p) for p in pred.levels}
    if pred.kind == "quantiles":
        return {level_key(p) for _, _, p in central_pairs(pred.levels)}
    return set()


def _common(models: Sequence[Model], keys: Callable[[Prediction], set[str] | None], score: str
            ) -> tuple[np.ndarray | None, list[str]]:
    finite = [(m, keys(m.prediction)) for m in models if score in PER_ROW_BY_KIND.get(m.kind, ())]
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
    q, notes_q = _common(models, _quantile_keys, "pinball")
    c, notes_c = _common(models, _central_keys, "interval")
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


def _model_quantiles(pred: Prediction, levels: np.ndarray) -> np.ndarray:
    """(N, Q) predicted quantiles of ``pred`` at ``levels`` (which it must provide)."""
    from scipy.special import ndtri

    from .metrics.intervals import level_key

    if pred.kind == "gaussian":
        return pred.mean[:, None] + pred.std[:, None] * ndtri(levels)[None, :]
    if pred.kind == "samples":
        from .metrics.samples import empirical_quantiles

        return pred.map_rows(lambda s: empirical_quantiles(s, levels))
    if pred.kind == "quantiles":
        index = {level_key(t): j for j, t in enumerate(pred.levels)}
        return pred.quantiles[:, [index[level_key(t)] for t in levels]]
    if pred.kind == "intervals":
        cols = {}
        for j, p in enumerate(pred.levels):
            cols[level_key((1.0 - p) / 2.0)] = pred.lower[:, j]
            cols[level_key((1.0 + p) / 2.0)] = pred.upper[:, j]
        return np.column_stack([cols[level_key(t)] for t in levels])
    raise AssertionError(pred.kind)


def _model_intervals(pred: Prediction, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, L) lower and upper bounds of central intervals of ``pred`` at ``levels``."""
    from .metrics.intervals import central_pairs, level_key

    if pred.kind == "intervals":
        index = {level_key(p): j for j, p in enumerate(pred.levels)}
        j = [index[level_key(p)] for p in levels]
        return pred.lower[:, j], pred.upper[:, j]
    if pred.kind == "quantiles":
        pairs = {level_key(p): (i, k) for i, k, p in central_pairs(pred.levels)}
        ij = [pairs[level_key(p)] for p in levels]
        return pred.quantiles[:, [a for a, _ in ij]], pred.quantiles[:, [b for _, b in ij]]
    q = _model_quantiles(pred, np.concatenate([(1.0 - levels) / 2.0, (1.0 + levels) / 2.0]))
    return q[:, : levels.size], q[:, levels.size:]


def per_row_scores(pred: Prediction, grids: Grids, which: Iterable[str] = PER_ROW_SCORES) -> dict[str, np.ndarray]:
    """Per-row scores of ``pred`` (each an (N,) array, lower is better).

    Only the scores in ``which`` that ``pred``'s representation provides (see
    :data:`PER_ROW_BY_KIND`) and whose level grid exists are returned; the table in
    the module docstring defines them.
    """
    from .metrics import scoring

    y = pred.require_targets()
    kind = pred.kind
    out: dict[str, np.ndarray] = {}
    for name in which:
        if name not in PER_ROW_BY_KIND.get(kind, ()):
            continue
        if name == "crps":
            if kind == "gaussian":
                out[name] = scoring.crps_gaussian(y, pred.mean, pred.std)
            elif kind == "samples":
                from .metrics.samples import crps_ensemble

                out[name] = pred.map_rows(lambda s, yy: crps_ensemble(yy, s), y)
            else:  # point: the CRPS of a point mass is the absolute error
                out[name] = np.abs(y - pred.mean)
        elif name == "nll":
            if kind == "gaussian":
                out[name] = scoring.nll_gaussian(y, pred.mean, pred.std)
            else:
                p_y = pred.proba[np.arange(pred.n), pred.labels]
                out[name] = -np.log(np.clip(p_y, _EPS, 1.0 - _EPS))
        elif name == "brier":
            onehot = np.zeros_like(pred.proba)
            onehot[np.arange(pred.n), pred.labels] = 1.0
            out[name] = np.sum(np.square(pred.proba - onehot), axis=1)
        elif name in ("pinball", "check"):
            levels = grids.check_levels if name == "check" else grids.quantile_levels
            if levels is None:
                continue
            toolbox = name == "check" or grids.toolbox_quantiles
            if kind == "gaussian" and toolbox:  # closed form, O(N log K)
                out[name] = scoring.check_score_gaussian(y, pred.mean, pred.std, resolution=levels.size)
            else:
                out[name] = scoring.pinball_loss(y, _model_quantiles(pred, levels), levels).mean(axis=1)
        elif name == "interval":
            levels = grids.central_levels
            if levels is None:
                continue
            if kind == "gaussian" and grids.toolbox_central:
                out[name] = scoring.interval_score_gaussian(y, pred.mean, pred.std, resolution=levels.size)
            else:
                lo, hi = _model_intervals(pred, levels)
                out[name] = scoring.interval_score(y, lo, hi, levels).mean(axis=1)
    return out


# --------------------------------------------------------------------------- metric names


@dataclass(frozen=True)
class MetricRef:
    """A resolved metric: a per-row score or one scalar of a registry group."""

    name: str  # display name (a per-row score name or a full summary path)
    source: str  # "per_row" | "summary"
    orientation: str  # "lower" | "higher" | "target"
    group: str | None = None
    keys: tuple[str, ...] = ()  # keys inside the group's result


class _Results:
    """Lazily computed registry group results, per model."""

    def __init__(self, models: Sequence[Model], settings: Settings) -> None:
        self.models = models
        self.settings = settings
        self.cache: dict[tuple[int, str], dict | None] = {}

    def get(self, k: int, group: str) -> dict | None:
        from .registry import get_group

        key = (k, group)
        if key not in self.cache:
            g = get_group(group)
            m = self.models[k]
            fn = g.compute.get(m.kind)
            self.cache[key] = fn(m.prediction, self.settings) if fn is not None else None
        return self.cache[key]


def _value_at(result: Any, keys: Sequence[str]) -> Any:
    node = result
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _known_names(kinds: set[str]) -> list[str]:
    from .registry import GROUPS

    names = list(PER_ROW_SCORES)
    for g in GROUPS:
        for m in g.metrics:
            names.append(f"{g.name}.{m.name}")
            names.append(m.name)
    return list(dict.fromkeys(names))


def _unknown_metric(name: str, kinds: set[str]) -> InputError:
    known = _known_names(kinds)
    close = difflib.get_close_matches(name, known, n=6, cutoff=0.6)
    last = name.rsplit(".", 1)[-1]
    close += [k for k in known if k.rsplit(".", 1)[-1] == last and k not in close and k != name]
    hint = ("close matches: " + ", ".join(close[:8])) if close else (
        "per-row scores: " + ", ".join(PER_ROW_SCORES) + "; or a metric path of `uqeval score` such as "
        "avg_calibration.ma_cal")
    return InputError(f"unknown metric {name!r} in --metrics; {hint}")


def resolve_metrics(
    names: Sequence[str] | None, models: Sequence[Model], results: _Results, grids: Grids | None = None
) -> tuple[list[MetricRef], list[str]]:
    """Resolve metric names to :class:`MetricRef` (plus notes).

    A name is a per-row score (:data:`PER_ROW_SCORES`; ``scoring_rule.crps`` etc. are the
    same), or a registry metric given by its short name (``ma_cal``), ``group.metric``
    (``avg_calibration.ma_cal``) or full path with a level (``coverage.0.95.coverage``).
    A short name of a level-keyed metric expands to every level. Unknown or ambiguous
    names raise :class:`InputError` listing close matches.
    """
    from .registry import GROUPS

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
            have = [m for m in models if short in PER_ROW_BY_KIND.get(m.kind, ())]
            if not have:
                if explicit:
                    avail = sorted({s for k in kinds for s in PER_ROW_BY_KIND.get(k, ())})
                    raise InputError(
                        f"metric {name!r} is not defined for representation(s) {', '.join(sorted(kinds))}; "
                        f"per-row scores available: {', '.join(avail) or 'none'}"
                    )
                continue
            no_grid = grids is not None and (
                (short == "pinball" and grids.quantile_levels is None)
                or (short == "interval" and grids.central_levels is None))
            if no_grid:
                if explicit:
                    why = next((n for n in grids.notes if n.startswith(short)), f"{short}: no common level")
                    raise InputError(f"metric {name!r} cannot be compared: {why}")
                continue
            refs.append(MetricRef(short, "per_row", "lower"))
            continue
        matches = []
        for g in GROUPS:
            for spec in g.metrics:
                full = f"{g.name}.{spec.name}"
                if name in (spec.name, full):
                    matches.append((g, spec, None))
                elif g.by_level and name.startswith(g.name + ".") and name.endswith("." + spec.name):
                    middle = name[len(g.name) + 1: -len(spec.name) - 1]
                    if middle:
                        matches.append((g, spec, middle))
        if not matches:
            raise _unknown_metric(name, kinds)
        usable = [t for t in matches if any(k in t[0].compute for k in kinds)]
        if not usable:
            if not explicit:
                continue
            where = ", ".join(sorted({f"{g.name}.{s.name}" for g, s, _ in matches}))
            reps = sorted({r for g, _, _ in matches for r in g.representations})
            raise InputError(
                f"metric {name!r} ({where}) is computed for {', '.join(reps)} predictions only, not for "
                f"{', '.join(sorted(kinds))}"
            )
        distinct = sorted({f"{g.name}.{s.name}" for g, s, _ in usable})
        if len(distinct) > 1:
            raise InputError(f"metric name {name!r} is ambiguous; give one of: {', '.join(distinct)}")
        g, spec, middle = usable[0]
        kind = next(k for k in sorted(kinds) if k in g.compute)  # orientation can depend on the representation
        orient = g.orientation(kind=kind).get(f"{g.name}.{spec.name}", spec.orientation)
        if not g.by_level:
            refs.append(MetricRef(f"{g.name}.{spec.name}", "summary", orient, g.name, (spec.name,)))
            continue
        levels: list[str] = []
        for k, m in enumerate(models):
            res = results.get(k, g.name)
            if isinstance(res, dict):
                levels += [lv for lv, body in res.items()
                           if isinstance(body, dict) and spec.name in body and lv not in levels]
        if middle is not None:
            if middle not in levels:
                have = ", ".join(f"{g.name}.{lv}.{spec.name}" for lv in levels) or "none"
                raise InputError(f"no metric {name!r} for these models; available: {have}")
            levels = [middle]
        if not levels:
            raise InputError(f"metric {name!r}: no model has a value for it")
        for lv in levels:
            refs.append(MetricRef(f"{g.name}.{lv}.{spec.name}", "summary", orient, g.name, (lv, spec.name)))
    seen: set[str] = set()
    unique = [r for r in refs if not (r.name in seen or seen.add(r.name))]
    if not unique:
        raise InputError("no metric to compare: name them with --metrics (e.g. crps,nll,ma_cal)")
    return unique, notes


# --------------------------------------------------------------------------- bootstrap resamplers

Resampler = Callable[[np.ndarray], np.ndarray]


def _point_of(pred: Prediction) -> np.ndarray | None:
    from .registry import point_prediction

    try:
        return point_prediction(pred)
    except AssertionError:  # a representation without a point prediction
        return None


def _mean_of(x: np.ndarray) -> Resampler:
    return lambda idx: x[idx].mean(axis=-1)


def _classification_rows(pred: Prediction) -> dict[str, np.ndarray]:
    """Per-row terms of :func:`uqeval.metrics.classification.classification_accuracy`."""
    p, labels = pred.proba, pred.labels
    p_y = p[np.arange(pred.n), labels]
    sq = np.einsum("ij,ij->i", p, p)
    return {
        "accuracy": (np.argmax(p, axis=1) == labels).astype(np.float64),
        "nll": -np.log(np.clip(p_y, _EPS, 1.0 - _EPS)),
        "brier": sq - 2.0 * p_y + 1.0,
        "brier_um": sq - 2.0 * p_y,
    }


def _accuracy_resampler(pred: Prediction, key: str) -> Resampler | None:
    """Accuracy metrics (``regression_accuracy`` / ``classification_accuracy``) of resampled rows."""
    if pred.kind == "categorical":
        rows = _classification_rows(pred)
        return _mean_of(rows[key]) if key in rows else None
    yhat = _point_of(pred)
    if yhat is None:
        return None
    y = pred.y_true
    err = y - yhat
    abs_err = np.abs(err)
    sq = err * err
    if key == "mae":
        return _mean_of(abs_err)
    if key == "rmse":
        return lambda idx: np.sqrt(sq[idx].mean(axis=-1))
    if key == "mdae":
        return lambda idx: np.median(abs_err[idx], axis=-1)  # O(N) selection per resample
    if key == "marpd":
        denom = np.abs(yhat) + np.abs(y)
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = np.where(denom > 0, 2.0 * abs_err / denom, 0.0)
        return lambda idx: 100.0 * rel[idx].mean(axis=-1)
    if key == "r2":
        def r2(idx: np.ndarray) -> np.ndarray:
            yi = y[idx]
            ss_tot = np.square(yi - yi.mean(axis=-1, keepdims=True)).sum(axis=-1)
            ss_res = sq[idx].sum(axis=-1)
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(ss_tot > 0, 1.0 - ss_res / ss_tot, np.where(ss_res == 0, 1.0, 0.0))
        return r2
    if key == "corr":
        def corr(idx: np.ndarray) -> np.ndarray:
            yc = y[idx]
            pc = yhat[idx]
            yc = yc - yc.mean(axis=-1, keepdims=True)
            pc = pc - pc.mean(axis=-1, keepdims=True)
            sy = np.sqrt(np.square(yc).sum(axis=-1))
            sp = np.sqrt(np.square(pc).sum(axis=-1))
            with np.errstate(invalid="ignore", divide="ignore"):
                r = (yc * pc).sum(axis=-1) / (sy * sp)
            return np.clip(np.where((sy > 0) & (sp > 0), r, np.nan), -1.0, 1.0)
        return corr
    return None


def _cover_index(pred: Prediction, expected: np.ndarray) -> np.ndarray | None:
    """First expected central level whose interval holds each row (Gaussian and samples)."""
    if pred.kind == "gaussian":
        from .metrics.calibration import interval_cover_index

        return interval_cover_index(np.abs(pred.y_true - pred.mean) / pred.std, expected)
    if pred.kind == "samples":
        from .metrics.quantiles import pit_cover_index
        from .registry import _samples_pit

        return pit_cover_index(_samples_pit(pred), expected)
    return None


def _calibration_resampler(pred: Prediction, key: str, settings: Settings) -> Resampler | None:
    r"""Average calibration of resampled rows without recomputing the curve from the data.

    Gaussian and sample forecasts: row ``i`` is inside the central :math:`p_j` interval iff
    its cover index :math:`c_i \le j`
    (:func:`uqeval.metrics.calibration.interval_cover_index`), so the observed curve of a
    resample is the cumulative histogram of its :math:`c_i`: one ``bincount`` per
    resample, :math:`O(N)`, no (N, bins) array. Quantile forecasts: the curve is the
    mean of the indicators :math:`\mathbb 1[y_i \le \hat q_{\tau, i}]`, one column per level.
    """
    if key not in ("ma_cal", "rms_cal", "miscal_area"):
        return None
    from .metrics.calibration import calibration_errors

    n = pred.n
    if pred.kind == "quantiles":
        tau = np.asarray(pred.levels, dtype=np.float64)
        below = pred.y_true[:, None] <= pred.quantiles  # (N, Q), Q small

        def fn_q(idx: np.ndarray) -> np.ndarray:
            observed = np.column_stack([below[:, j][idx].mean(axis=-1) for j in range(tau.size)])
            return np.asarray(calibration_errors(tau, observed)[key])

        return fn_q
    nb = int(settings.num_bins)
    expected = np.linspace(0.0, 1.0, nb)
    cover = _cover_index(pred, expected)
    if cover is None:
        return None

    def fn(idx: np.ndarray) -> np.ndarray:
        b = idx.shape[0]
        flat = (cover[idx] + (np.arange(b) * (nb + 1))[:, None]).ravel()
        counts = np.bincount(flat, minlength=b * (nb + 1)).reshape(b, nb + 1)
        observed = np.cumsum(counts[:, :nb], axis=1) / n
        return np.asarray(calibration_errors(expected, observed)[key])

    return fn


def _sharpness_resampler(pred: Prediction, key: str) -> Resampler | None:
    if pred.kind == "gaussian":
        sd = pred.std
    elif pred.kind == "samples":
        from .metrics.samples import ensemble_mean_std

        sd = pred.map_rows(ensemble_mean_std)[1]
    else:
        return None
    if key == "sharp":
        var = sd * sd
        return lambda idx: np.sqrt(var[idx].mean(axis=-1))
    if key == "mean_std":
        return _mean_of(sd)
    return None


def _coverage_resampler(pred: Prediction, level: str, key: str, settings: Settings) -> Resampler | None:
    """Coverage and width at one level: per-row indicators and widths, resampled."""
    from .registry import intervals_at

    try:
        lv = float(level)
        lo, hi = intervals_at(pred, lv)
    except (KeyError, ValueError, AssertionError):
        return None
    y = pred.y_true
    inside = ((y >= lo) & (y <= hi)).astype(np.float64)
    per_row = {
        "coverage": inside,
        "miss_below": (y < lo).astype(np.float64),
        "miss_above": (y > hi).astype(np.float64),
        "width": hi - lo,
    }
    if key in per_row:
        return _mean_of(per_row[key])
    if key == "coverage_error":
        return lambda idx: inside[idx].mean(axis=-1) - lv
    if key == "width_norm" and settings.y_std:
        return _mean_of((hi - lo) / float(settings.y_std))
    return None


def _scoring_resampler(pred: Prediction, key: str, settings: Settings) -> Resampler | None:
    """Means of per-row scoring rules, as the registry's ``scoring_rule`` group reports them."""
    from .metrics import scoring

    y, kind = pred.y_true, pred.kind
    rows: np.ndarray | None = None
    if kind == "gaussian":
        fns = {"nll": scoring.nll_gaussian, "crps": scoring.crps_gaussian}
        if key in fns:
            rows = fns[key](y, pred.mean, pred.std)
        elif key == "check":
            rows = scoring.check_score_gaussian(y, pred.mean, pred.std, resolution=settings.resolution)
        elif key == "interval":
            rows = scoring.interval_score_gaussian(y, pred.mean, pred.std, resolution=settings.resolution)
    elif kind == "samples" and key in ("crps", "crps_fair"):
        from .metrics.samples import crps_ensemble, crps_fair

        kernel = crps_ensemble if key == "crps" else crps_fair
        rows = pred.map_rows(lambda s, yy: kernel(yy, s), y)
    elif kind == "quantiles" and key in ("pinball", "wis"):
        from .metrics.quantiles import weighted_interval_score

        rows = (scoring.pinball_loss(y, pred.quantiles, pred.levels).mean(axis=1) if key == "pinball"
                else weighted_interval_score(y, pred.quantiles, pred.levels))
    elif kind == "intervals" and key == "interval":
        rows = scoring.interval_score(y, pred.lower, pred.upper, pred.levels).mean(axis=1)
    return None if rows is None else _mean_of(rows)


def summary_resampler(pred: Prediction, ref: MetricRef, settings: Settings) -> Resampler | None:
    """A function of resampled row indices ``(B, N) -> (B,)`` for ``ref``, or None.

    None means that the metric cannot be bootstrapped cheaply (e.g. reliability scores,
    which sort every resample, or adversarial group calibration, which draws random
    subsets): it is then reported without an interval.
    """
    if ref.source != "summary" or pred.y_true is None:
        return None
    key = ref.keys[-1]
    if ref.group == "accuracy":
        return _accuracy_resampler(pred, key)
    if ref.group == "avg_calibration":
        return _calibration_resampler(pred, key, settings)
    if ref.group == "sharpness":
        return _sharpness_resampler(pred, key)
    if ref.group == "coverage" and len(ref.keys) == 2:
        return _coverage_resampler(pred, ref.keys[0], key, settings)
    if ref.group == "scoring_rule" and len(ref.keys) == 1:
        return _scoring_resampler(pred, key, settings)
    return None


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
    from .gate import target_of

    return target_of({"metrics": {ref.group: result}}, ref.name)


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
    dm_lag : Newey--West lag of the Diebold--Mariano variance (0: the paired t statistic).

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
    from .metrics.comparison import bootstrap_samples, diebold_mariano, paired_permutation_test, ranks
    from .validation import check_level

    settings = settings or Settings()
    if len(models) < 2:
        raise InputError(f"compare needs at least 2 models, got {len(models)}")
    n = models[0].prediction.n
    if any(m.prediction.n != n for m in models):
        raise InputError("models must be aligned to the same rows first (see align_models)")
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 0:
        raise InputError(f"the number of bootstrap resamples must be an integer >= 0, got {n_boot!r}")
    if isinstance(n_permutations, bool) or int(n_permutations) != n_permutations or n_permutations < 0:
        raise InputError(f"the number of permutations must be an integer >= 0, got {n_permutations!r}")
    if pairs not in ("best", "all"):
        raise InputError(f"pairs must be 'best' or 'all', got {pairs!r}")
    ci_level = check_level(ci_level, "confidence level")
    names = [m.name for m in models]
    results = _Results(models, settings)
    grids = common_grids(models, settings.resolution)
    refs, notes = resolve_metrics(metrics, models, results, grids)
    notes = list(grids.notes) + notes
    wanted = [r.name for r in refs if r.source == "per_row"]
    rows = [per_row_scores(m.prediction, grids, wanted) for m in models]

    # estimates and resamplers, one column per (metric, model)
    estimates: dict[str, dict[str, float | None]] = {}
    targets: dict[str, float | None] = {}
    columns: list[tuple[str, str, Resampler]] = []
    no_ci: dict[str, str] = {}
    for ref in refs:
        est: dict[str, float | None] = {}
        targets[ref.name] = None
        for k, m in enumerate(models):
            if ref.source == "per_row":
                s = rows[k].get(ref.name)
                if s is None:
                    est[m.name] = None
                    continue
                est[m.name] = float(np.mean(s))
                columns.append((ref.name, m.name, (lambda x: lambda idx: x[idx].mean(axis=-1))(s)))
                continue
            res = results.get(k, ref.group)
            val = _num(_value_at(res, ref.keys))
            est[m.name] = val
            if val is None:
                continue
            if targets[ref.name] is None:
                targets[ref.name] = _target(ref, res)
            fn = summary_resampler(m.prediction, ref, settings) if n_boot else None
            if fn is None:
                no_ci.setdefault(ref.name, "no cheap resampler (it would be recomputed from scratch per resample)")
                continue
            at_full = float(np.asarray(fn(np.arange(n)[None, :]), dtype=np.float64)[0])
            if not _consistent(at_full, val):
                no_ci.setdefault(ref.name, f"the resampled statistic ({at_full:.6g}) does not reproduce the "
                                           f"registry value ({val:.6g}) for {m.name}")
                continue
            columns.append((ref.name, m.name, fn))
        estimates[ref.name] = est
        missing = [name for name, v in est.items() if v is None]
        if missing and len(missing) < len(models):
            listed = ", ".join(f"{x} ({models[names.index(x)].kind})" for x in missing)
            notes.append(f"{ref.name}: not available for {listed}")
    for name, why in no_ci.items():
        notes.append(f"{name}: reported without a bootstrap interval: {why}")
    columns = [c for c in columns if c[0] not in no_ci]

    replicates: dict[tuple[str, str], np.ndarray] = {}
    if n_boot and columns:
        fns = [c[2] for c in columns]
        reps = bootstrap_samples(lambda idx: np.column_stack([f(idx) for f in fns]), n, n_boot=int(n_boot), seed=seed)
        for j, (metric, model, _) in enumerate(columns):
            replicates[(metric, model)] = reps[:, j]
    alpha = 1.0 - ci_level

    def interval(x: np.ndarray) -> tuple[float, float]:
        with np.errstate(all="ignore"):
            if np.all(np.isnan(x)):
                return math.nan, math.nan
            lo, hi = np.nanquantile(x, [alpha / 2.0, 1.0 - alpha / 2.0])
        return float(lo), float(hi)

    out_metrics: dict[str, Any] = {}
    rank_table: dict[str, dict[str, float]] = {name: {} for name in names}
    best_by_metric: dict[str, list[str]] = {}
    for ref in refs:
        est = estimates[ref.name]
        tgt = targets[ref.name]
        orient = ref.orientation
        if orient == "target" and tgt is None:
            orient = "lower"
        # rank on 12 significant digits: values equal up to rounding tie
        r = ranks({k: (math.nan if v is None else _round12(v)) for k, v in est.items()}, orient, tgt)
        finite_ranks = [v for v in r.values() if not math.isnan(v)]
        best = [k for k, v in r.items() if finite_ranks and v == min(finite_ranks)]
        best_by_metric[ref.name] = best
        ref_model = best[0] if best else None
        boot = bool(replicates) and all((ref.name, k) in replicates for k in names if est[k] is not None)

        def key(x: np.ndarray) -> np.ndarray:
            if orient == "higher":
                return -x
            if orient == "target":
                return np.abs(x - tgt)
            return x

        p_best: dict[str, float] = {}
        have = [k for k in names if (ref.name, k) in replicates]
        if boot and len(have) >= 2:
            mat = key(np.column_stack([replicates[(ref.name, k)] for k in have]))
            mat = np.where(np.isnan(mat), np.inf, mat)
            lowest = mat.min(axis=1, keepdims=True)
            win = mat <= lowest + 1e-12 * np.maximum(1.0, np.abs(lowest))
            share = (win / win.sum(axis=1, keepdims=True)).mean(axis=0)
            p_best = {k: float(v) for k, v in zip(have, share)}
        values: dict[str, Any] = {}
        outside: list[str] = []
        for k in names:
            v = est[k]
            entry: dict[str, Any] = {"estimate": math.nan if v is None else v, "low": math.nan, "high": math.nan,
                                     "rank": r[k], "p_best": p_best.get(k, math.nan), "diff_vs_best": None}
            rep = replicates.get((ref.name, k))
            if rep is not None:
                entry["low"], entry["high"] = interval(rep)
                base = replicates.get((ref.name, ref_model)) if ref_model is not None else None
                if base is not None and k != ref_model and v is not None:
                    lo, hi = interval(rep - base)
                    entry["diff_vs_best"] = {"reference": ref_model, "estimate": v - est[ref_model],
                                             "low": lo, "high": hi}
            values[k] = entry
            rank_table[k][ref.name] = r[k]
            if v is not None and rep is not None and math.isfinite(entry["low"]) and not (
                    entry["low"] - 1e-12 * abs(v) <= v <= entry["high"] + 1e-12 * abs(v)):
                outside.append(k)
        if outside:
            notes.append(f"{ref.name}: the estimate of {', '.join(outside)} lies outside its bootstrap interval: "
                         "the statistic is biased under resampling (calibration errors grow on resamples); "
                         "compare models by the paired difference (diff_vs_best) rather than by the interval")
        out_metrics[ref.name] = {
            "source": ref.source,
            "orientation": ref.orientation,
            "target": tgt,
            "bootstrap": boot,
            "best": best,
            "values": values,
        }

    tests: list[dict[str, Any]] = []
    for ref in refs:
        if ref.source != "per_row":
            continue
        avail = [k for k, m in enumerate(models) if ref.name in rows[k]]
        if len(avail) < 2:
            continue
        if pairs == "all":
            todo = [(a, b) for i, a in enumerate(avail) for b in avail[i + 1:]]
        else:
            best_name = best_by_metric[ref.name][0]
            b = names.index(best_name)
            todo = [(a, b) for a in avail if a != b]
        for a, b in todo:
            sa = rows[a][ref.name]
            sb = _without_rounding_noise(sa, rows[b][ref.name])
            entry = {"metric": ref.name, "model": names[a], "reference": names[b],
                     "mean_diff": float(np.mean(sa - sb)), "permutation_p": math.nan,
                     "dm_statistic": math.nan, "dm_p": math.nan}
            if n_permutations:
                entry["permutation_p"] = paired_permutation_test(sa, sb, n_permutations=int(n_permutations),
                                                                 seed=seed)["p_value"]
            if n >= 2 and dm_lag < n:
                dm = diebold_mariano(sa, sb, lag=dm_lag)
                entry["dm_statistic"], entry["dm_p"] = dm["statistic"], dm["p_value"]
            tests.append(entry)

    mean_rank = {}
    for k in names:
        vals = [v for v in rank_table[k].values() if not math.isnan(v)]
        mean_rank[k] = float(np.mean(vals)) if vals else math.nan
    by_winner: dict[str, list[str]] = {}
    for metric, best in best_by_metric.items():
        if len(best) == 1:  # ties do not count as disagreement
            by_winner.setdefault(best[0], []).append(metric)
    if len(by_winner) > 1:
        def few(ms: list[str]) -> str:
            return ", ".join(ms[:4]) + (f" and {len(ms) - 4} more" if len(ms) > 4 else "")

        listed = "; ".join(f"{w} by {few(ms)}" for w, ms in by_winner.items())
        notes.append(f"rank consistency: the metrics disagree on the best model (best: {listed})")

    from . import __version__

    return {
        "schema": COMPARE_SCHEMA,
        "uqeval_version": __version__,
        "n_rows": int(n),
        "models": [
            {"name": m.name, "path": m.info.get("path", m.name), "representation": m.kind,
             "n_rows": m.info.get("n_rows", int(n)), "n_dropped": m.info.get("n_dropped", 0),
             "columns": m.info.get("columns", {})}
            for m in models
        ],
        "settings": {
            "bootstrap": int(n_boot), "ci_level": ci_level, "seed": seed,
            "permutations": int(n_permutations), "pairs": pairs, "dm_lag": int(dm_lag),
            "resolution": settings.resolution, "num_bins": settings.num_bins,
            "levels": None if settings.levels is None else list(settings.levels), "level": settings.level,
            "pinball_levels": _levels_json(grids.quantile_levels, grids.toolbox_quantiles),
            "interval_levels": _levels_json(grids.central_levels, grids.toolbox_central),
            "check_levels": _levels_json(grids.check_levels, True),
        },
        "metrics": out_metrics,
        "ranks": {"by_metric": rank_table, "mean_rank": mean_rank},
        "tests": tests,
        "notes": notes,
    }


# --------------------------------------------------------------------------- rendering


def fmt_number(x: Any) -> str:
    from .report.tables import fmt_value

    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return fmt_value(float(x))


def fmt_p(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{x:.3g}" if x >= 1e-4 else f"{x:.1e}"


def cell(entry: Mapping[str, Any]) -> str:
    """``estimate [low, high]`` of one model's value of one metric."""
    s = fmt_number(entry.get("estimate"))
    if not (entry.get("low") is None or (isinstance(entry.get("low"), float) and math.isnan(entry["low"]))):
        s += f" [{fmt_number(entry['low'])}, {fmt_number(entry['high'])}]"
    return s


def direction(metric: Mapping[str, Any]) -> str:
    o = metric.get("orientation")
    if o == "target":
        return f"closest to {fmt_number(metric.get('target'))}"
    return {"lower": "lower is better", "higher": "higher is better"}.get(o, "")


def to_markdown(result: Mapping[str, Any]) -> str:
    """GitHub-flavoured markdown: metric table (value [CI] and rank), tests, notes."""
    from .report.text import md_cell, md_code

    names = [m["name"] for m in result["models"]]
    s = result["settings"]
    ci = f"{s['ci_level'] * 100:g}% bootstrap CI, {s['bootstrap']} resamples" if s["bootstrap"] else "no bootstrap"
    lines = [f"### uqeval compare: {len(names)} models, {result['n_rows']} rows ({ci}, seed {s['seed']})", "",
             "| metric | direction | " + " | ".join(f"`{md_code(n)}`" for n in names) + " |",
             "|---|---|" + "---:|" * len(names)]
    for metric, body in result["metrics"].items():
        cells = []
        for n in names:
            e = body["values"][n]
            c = cell(e)
            if not math.isnan(e["rank"]):
                c += f" (#{e['rank']:g})"
            if n in body["best"]:
                c = f"**{c}**"
            cells.append(c)
        lines.append(f"| `{md_code(metric)}` | {direction(body)} | " + " | ".join(cells) + " |")
    mr = result["ranks"]["mean_rank"]
    lines.append("| mean rank |  | " + " | ".join(fmt_number(mr[n]) for n in names) + " |")
    if result["tests"]:
        lines += ["", "Paired tests on per-row scores (difference = model − reference; p-values unadjusted):", "",
                  "| metric | model | reference | mean diff | permutation p | DM t | DM p |",
                  "|---|---|---|---:|---:|---:|---:|"]
        for t in result["tests"]:
            lines.append(f"| `{md_code(t['metric'])}` | `{md_code(t['model'])}` | `{md_code(t['reference'])}` | "
                         f"{fmt_number(t['mean_diff'])} | "
                         f"{fmt_p(t['permutation_p'])} | {fmt_number(t['dm_statistic'])} | {fmt_p(t['dm_p'])} |")
    if result["notes"]:
        lines.append("")
        lines += [f"- {md_cell(n)}" for n in result["notes"]]
    return "\n".join(lines) + "\n"
