"""What a comparison computes: the checked options (:class:`CompareOptions`), the resolved metric names
(:func:`resolve_metrics`), the level grids, and the per-row forms of every metric and model
(:class:`Results`), as one :class:`Plan` (:func:`plan_comparison`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...catalogue import RowStat
from ...config import Settings
from ...errors import InputError, option
from ...resample import ROWS, Resampling

if TYPE_CHECKING:
    from ...catalogue import Metric

from .models import Model
from .scores import PER_ROW_SCORES, Grids, common_grids, comparison_score

#: Metrics compared when none are named (those that no model has are left out).
DEFAULT_METRICS: tuple[str, ...] = ("crps", "nll", "pinball", "interval", "brier", "avg_calibration.ma_cal")
#: rows on which the availability of a comparison score is decided
_HEAD = 64


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


class Results:
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

    def weighted(self, k: int, group: str, weights: np.ndarray) -> dict | None:
        """Model ``k``'s results of family ``group`` computed by its kernels given the rows' ``weights`` (None
        where the family takes no weights for its representation: :attr:`uqeval.catalogue.Family.weighted`)."""
        from ...catalogue import compute, get_family

        key = (k, "weighted:" + group)
        if key not in self.cache:
            family, pred = get_family(group), self.models[k].prediction
            self.cache[key] = (
                compute(family, pred, self.settings, weights) if pred.kind in family.weighted else None
            )
        return self.cache[key]

    def row_stat(self, k: int, ref: MetricRef):
        """The catalogue's per-row form of a summary metric for model ``k``, or None."""
        from ...catalogue import METRICS, rows

        m = self.models[k].prediction
        key = (k, "rows:" + ref.name)
        if key not in self.cache:
            self.cache[key] = rows(METRICS[f"{ref.group}.{ref.keys[-1]}"], m, self.settings, ref.level)
        return self.cache[key]


def value_at(result: Any, keys: Sequence[str]) -> Any:
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


def _scored_by_all(models: Sequence[Model], results: Results) -> list[str]:
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
    results: Results,
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

    ``not_weighted`` (a dict, for weighted rows): a catalogue metric that takes no weights for the models'
    representations (:meth:`~uqeval.catalogue.Metric.takes_weights`: by its per-row form or its family's
    kernels) is an :class:`InputError` when named, and left out and recorded there (path -> reason) when it
    is a default.
    """
    explicit = names is not None
    refs: list[MetricRef] = []
    for raw in DEFAULT_METRICS if names is None else names:
        name = raw.strip()
        if not name:
            continue
        short = name.removeprefix("scoring_rule.")
        if short in PER_ROW_SCORES and (name == short or short in ("crps", "nll", "check")):
            refs += _score_ref(name, short, explicit, models, results, grids)
        else:
            refs += _catalogue_refs(name, explicit, models, results, not_weighted)
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
    return unique, []


def _score_ref(
    name: str, short: str, explicit: bool, models: Sequence[Model], results: Results, grids: Grids | None
) -> list[MetricRef]:
    """The comparison score ``short`` (named ``name``) where some model has it; an error where it was named
    (``explicit``) and cannot be compared, else nothing."""
    no_grid = grids is not None and (
        (short == "pinball" and grids.quantile_levels is None)
        or (short == "interval" and grids.central_levels is None)
    )
    if no_grid:
        assert grids is not None  # no_grid
        if explicit:
            why = next((n for n in grids.notes if n.startswith(short)), f"{short}: no common level")
            raise InputError(f"metric {name!r} cannot be compared: {why}")
        return []
    if not any(results.has_score(k, short) for k in range(len(models))):
        if explicit:
            avail = [s for s in PER_ROW_SCORES if any(results.has_score(k, s) for k in range(len(models)))]
            kinds = sorted({m.kind for m in models})
            raise InputError(
                f"metric {name!r} is not defined for representation(s) {', '.join(kinds)}; "
                f"per-row scores available: {', '.join(avail) or 'none'}"
            )
        return []
    return [MetricRef(short, "per_row", "lower")]


def _catalogue_refs(
    name: str, explicit: bool, models: Sequence[Model], results: Results, not_weighted: dict[str, str] | None
) -> list[MetricRef]:
    """The catalogue metric ``name`` (every level of a level-keyed metric named without one) for these
    models; errors as :func:`resolve_metrics` says."""
    kinds = {m.kind for m in models}
    matches = _catalogue_matches(name)
    if not matches:
        raise _unknown_metric(name)
    usable = [t for t in matches if any(t[0].applies_to(k) for k in kinds)]
    if not usable:
        if not explicit:
            return []
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
    kind = next(
        k for k in sorted(kinds) if metric.applies_to(k)
    )  # orientation can depend on the representation
    # weighted rows: by its per-row form, or by its family's kernels given the weights (no interval)
    if not_weighted is not None and not any(metric.takes_weights(k) for k in kinds if metric.applies_to(k)):
        why = cast("str", metric.unweighted_reason_for(kind))
        if explicit:
            raise InputError(
                f"metric {name!r} ({metric.path}) is not computed with {option('weights')}: "
                f"{why}; leave it out of the metrics, or leave out the weights"
            )
        not_weighted[metric.path] = why
        return []
    orient = metric.orientation_for(kind)
    if not metric.by_level:
        return [MetricRef(metric.path, "summary", orient, metric.group, (metric.name,))]
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
    return [
        MetricRef(f"{metric.group}.{lv}.{metric.name}", "summary", orient, metric.group, (lv, metric.name))
        for lv in levels
    ]


def as_number(x: Any) -> float | None:
    if x is None or isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        return None
    return float(x)


@dataclass(frozen=True)
class CompareOptions:
    r"""What a comparison is asked for, checked once when made and handed on as one value (the command line,
    :func:`uqeval.compare`, ``uqeval report``, the memory and streamed runs and the document's ``settings``
    all read it).

    ``metrics``: names as :func:`resolve_metrics` takes them (None: :data:`DEFAULT_METRICS` where defined);
    ``n_boot``: bootstrap resamples (0: no intervals; every model and metric on the same resamples);
    ``ci_level``: the level of the percentile intervals :math:`[q_{\alpha/2}, q_{1-\alpha/2}]` (Efron &
    Tibshirani 1993, ch. 13); ``seed``: of the bootstrap and the sign flips; ``n_permutations``: sign flips
    of the paired permutation test (0: none); ``pairs``: ``"best"`` (each model against the best one per
    metric) or ``"all"``; ``dm_lag``: lag h - 1 of the Diebold--Mariano variance (HLN-corrected, t(N - 1)
    reference; 0: the paired t test); ``resampling``: what the intervals and the sign flips resample
    (:class:`uqeval.resample.Resampling`: rows, clusters, or circular blocks of rows in time order, Politis
    & Romano 1992, ``"auto"`` sized by :func:`uqeval.resample.optimal_block_size`)."""

    metrics: Sequence[str] | None = None
    n_boot: int = 1000
    ci_level: float = 0.95
    seed: int | None = 0
    n_permutations: int = 10000
    pairs: str = "best"
    dm_lag: int = 0
    resampling: Resampling = ROWS

    def __post_init__(self) -> None:
        from ...validation import check_level

        for name, what in (
            ("n_boot", "bootstrap resamples"),
            ("n_permutations", "permutations"),
            ("dm_lag", "Diebold-Mariano lag"),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or int(value) != value or value < 0:
                raise InputError(f"the number of {what} must be an integer >= 0, got {value!r}")
            object.__setattr__(self, name, int(value))
        if self.pairs not in ("best", "all"):
            raise InputError(f"pairs must be 'best' or 'all', got {self.pairs!r}")
        object.__setattr__(self, "ci_level", check_level(self.ci_level, "confidence level"))
        if self.metrics is not None:  # "crps,nll" as the command line spells it, or a sequence of names
            names = self.metrics.split(",") if isinstance(self.metrics, str) else self.metrics
            object.__setattr__(self, "metrics", tuple(names))


@dataclass
class Plan:
    """What a comparison computes, decided from the models (or, streamed, from their first chunk):
    the checked options, the level grids and the resolved metrics."""

    settings: Settings
    options: CompareOptions
    names: list[str]
    grids: Grids
    refs: list[MetricRef]
    notes: list[str]
    kinds: list[str]
    #: what the intervals and the sign-flip test resample (:func:`uqeval.resample.resampling_units`); None:
    #: independent rows (the JSON then has no ``settings.resampling``, as before issue 25)
    units_info: dict[str, Any] | None = None


def plan_comparison(
    models: Sequence[Model],
    settings: Settings | None = None,
    options: CompareOptions = CompareOptions(),
    not_weighted: dict[str, str] | None = None,
) -> tuple[Plan, Results]:
    """Resolve the metrics of :func:`~uqeval.commands.compare.core.compare_models` (``models`` need not hold
    every row: the stream engine plans on the first chunk); ``not_weighted``: for weighted rows
    (:func:`resolve_metrics`)."""
    from ...catalogue import settings_for_paths

    if len(models) < 2:
        raise InputError(f"compare needs at least 2 models, got {len(models)}")
    # --metrics exceedance.<t>.brier turns the group on (issue 16 A)
    settings = settings_for_paths(settings or Settings(), options.metrics or ())
    grids = common_grids(models, settings.resolution)
    results = Results(models, settings, grids)
    refs, notes = resolve_metrics(options.metrics, models, results, grids, not_weighted)
    names, kinds = [m.name for m in models], [m.kind for m in models]
    return Plan(settings, options, names, grids, refs, list(grids.notes) + notes, kinds), results


def row_score(results: Results, k: int, ref: MetricRef) -> np.ndarray | None:
    """Model ``k``'s per-row score of ``ref`` (a comparison score, or a summary metric's per-row score)."""
    if ref.source == "per_row":
        return results.score(k, ref.name)
    stat = results.row_stat(k, ref)
    return None if stat is None else stat.score


def row_form(results: Results, k: int, ref: MetricRef) -> RowStat | None:
    """The :class:`RowStat` that resamples model ``k``'s ``ref`` (a per-row score resamples as its mean)."""
    if ref.source == "per_row":
        s = results.score(k, ref.name)
        return None if s is None else RowStat(score=s)
    return results.row_stat(k, ref)


def no_row_form(kind: str, name: str) -> str:
    """Why a weighted metric is not compared for model ``name`` (``weights.not_weighted``)."""
    return f"it has no per-row form for {kind} predictions ({name})"
