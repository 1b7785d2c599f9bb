"""The metric catalogue: one entry per metric, read by every command.

Each :class:`Metric` says what a metric is (group, name, representations it applies
to), which way is better (:attr:`Metric.orientation`: ``"lower"``, ``"higher"``,
``"target"`` with its :func:`target`, or ``None`` for curves, histograms and
descriptive quantities that rank nothing), how it reduces over rows
(:attr:`Metric.reduction`) and, through :func:`rows`, its per-row score or the
per-row terms from which any resample (or any chunk, later) of rows gives the metric
again. Its explanation (title, text, formula, reference) is :attr:`Metric.explanation`.

Metrics are computed by *families* (:class:`Family`): the kernels compute the metrics
of a family together (one sort, one pass), one function per representation. Family
results are the JSON groups of ``uqeval score`` (level-keyed families return
``{level: {metric: value}}``).

``score``, ``compare``, ``check``, ``plot``, ``report`` and ``explain`` read this module;
nothing else declares what applies to which representation or which way is better.
Kernels are imported inside the functions, so importing the catalogue stays cheap.

May import: errors, validation, text, strict, metrics, config, predictions, resample, weights,
glossary. Never io, engine, commands, renderers or front ends.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from importlib import import_module
from typing import Any

import numpy as np

from ..config import Settings
from ..errors import InputError, UsageError, option
from ..predictions import Prediction
from ..validation import trusted
from ..vocabulary import close_matches

# The names bound "as" themselves are re-exported: tasks import them from ``uqeval.catalogue``.
from .core import (
    CLASSIFICATION as CLASSIFICATION,
    REGRESSION as REGRESSION,
    Family,
    Metric,
    RowStat,
    _memo as _memo,
    coverage_levels as coverage_levels,
    per_row_uncertainty as per_row_uncertainty,
    pick_levels as pick_levels,
)
from .diagnostics import (
    DIAGNOSTIC_FAMILIES,
    DIAGNOSTIC_TEST_FAMILIES,
    binary_or_top_label as binary_or_top_label,
)
from .standard import STANDARD_FAMILIES, calibration_curve as calibration_curve
from .verification import (
    MULTIVARIATE_FAMILIES,
    VERIFICATION_FAMILIES,
    exceedance_probability as exceedance_probability,
    murphy_curves as murphy_curves,
    murphy_forecasts as murphy_forecasts,
)

#: Every family, in the order of the JSON groups: the default ones, then the opt-in ones.
FAMILIES: tuple[Family, ...] = (
    STANDARD_FAMILIES
    + DIAGNOSTIC_FAMILIES
    + DIAGNOSTIC_TEST_FAMILIES
    + VERIFICATION_FAMILIES
    + MULTIVARIATE_FAMILIES
)


def settings_for_paths(settings: Settings, paths) -> Settings:
    """``settings`` with the opt-ins that metric ``paths`` (check rules) name and that need no value:
    ``murphy.*`` turns on ``murphy``, ``exceedance.<t>.<metric>`` adds the threshold ``t``. The
    region of ``weighted_scoring`` is not in its paths: it must come from ``--tw-threshold``."""
    from dataclasses import replace

    from ..glossary import canonical_path

    thresholds = list(settings.thresholds or ())
    murphy = settings.murphy
    for path in paths:
        head = str(path).split(".", 1)[0]
        if head == "murphy":
            murphy = True
        elif head == "exceedance":
            rest = str(path)[len("exceedance.") :]
            name = canonical_path(path).split(".")[-1]
            try:
                t = float(rest[: len(rest) - len(name) - 1]) if rest.endswith("." + name) else None
            except ValueError:
                t = None
            if t is not None and np.isfinite(t) and t not in thresholds:
                thresholds.append(t)
    return replace(settings, thresholds=tuple(thresholds) or None, murphy=murphy)


#: threads that compute the families of one prediction where a long family applies (:func:`compute_metrics`):
#: two where there are two cores
FAMILY_THREADS = 2 if (os.cpu_count() or 1) >= 2 else 1

#: Every entry, keyed by path (``group.name``).
METRICS: dict[str, Metric] = {m.path: m for f in FAMILIES for m in f.metrics}


#: The headline metrics of each representation, in the order a scoreboard shows them: a proper scoring
#: rule first, then accuracy, calibration, coverage, sharpness. Catalogue paths (``group.name``); a level-keyed
#: metric (coverage) stands for its value at the widest level a summary holds (:func:`headline_paths`). The
#: report's summary reads this table; nothing else declares which metrics lead.
HEADLINE: dict[str, tuple[str, ...]] = {
    "gaussian": (
        "scoring_rule.crps",
        "scoring_rule.nll",
        "accuracy.rmse",
        "avg_calibration.miscal_area",
        "coverage.coverage",
        "coverage.width",
        "spread_skill.ratio",
    ),
    "samples": (
        "scoring_rule.crps",
        "accuracy.rmse",
        "avg_calibration.miscal_area",
        "coverage.coverage",
        "coverage.width",
        "spread_skill.ratio",
    ),
    "quantiles": (
        "scoring_rule.wis",
        "scoring_rule.pinball",
        "accuracy.rmse",
        "avg_calibration.miscal_area",
        "coverage.coverage",
        "coverage.width",
    ),
    "intervals": ("scoring_rule.interval", "accuracy.rmse", "coverage.coverage", "coverage.width"),
    "point": ("accuracy.rmse", "accuracy.mae", "accuracy.r2"),
    **{
        kind: (
            "accuracy.nll",
            "accuracy.brier",
            "accuracy.accuracy",
            "calibration.ece",
            "prediction_sets.coverage",
            "prediction_sets.mean_size",
        )
        for kind in CLASSIFICATION
    },
    "multivariate": ("multivariate.energy", "multivariate.variogram"),
    "loglik": ("information_criteria.waic2", "information_criteria.iscv"),
}


def headline_paths(kind: str | None, paths) -> list[tuple[str, str]]:
    """``(catalogue path, summary path)`` of each :data:`HEADLINE` metric of ``kind`` found among the flattened
    summary ``paths`` (``coverage.coverage`` -> ``coverage.0.95.coverage``, the widest level present); metrics
    the summary lacks are left out."""
    present = list(paths)
    out = []
    for path in HEADLINE.get(kind or "", ()):
        if path in present:
            out.append((path, path))
            continue
        group, name = path.split(".", 1)
        levelled = []
        for p in present:
            head, _, rest = p.partition(".")
            level, _, last = rest.rpartition(".")
            if head == group and last == name and level:
                try:
                    levelled.append((float(level), p))
                except ValueError:
                    continue
        if levelled:
            out.append((path, max(levelled)[1]))
    return out


def families_for(kind: str, settings: Settings | None = None) -> list[Family]:
    """The families that apply to ``kind``; with ``settings``, only those it turns on (:attr:`Family.option`)
    and, when it names ``groups``, only those: naming an opt-in group turns it on where its option is a
    switch (``--diagnostics``, ``--murphy``); one that needs a value (``--tw-threshold``, ``--threshold``)
    still needs it. This is the one place ``groups`` is applied, for every command and engine."""
    if settings is None:
        return [f for f in FAMILIES if kind in f.compute]
    if settings.groups is None:
        return [f for f in FAMILIES if kind in f.compute and f.enabled(settings)]
    unknown = [g for g in settings.groups if g not in _FAMILY_NAMES]
    if unknown:
        near = close_matches(unknown[0], _FAMILY_NAMES)
        raise UsageError(
            f"unknown metric group {unknown[0]!r} in {option('groups')}"
            + (f" (did you mean {', '.join(near)}?)" if near else "")
            + f"; groups: {', '.join(_FAMILY_NAMES)}"
        )
    return [
        f
        for f in FAMILIES
        if kind in f.compute
        and f.name in settings.groups
        and (f.enabled(settings) or f.option is not None and isinstance(getattr(settings, f.option), bool))
    ]


_FAMILY_NAMES = tuple(f.name for f in FAMILIES)


def get_family(name: str) -> Family:
    for f in FAMILIES:
        if f.name == name:
            return f
    raise KeyError(name)


def metrics_for(kind: str) -> list[Metric]:
    return [m for m in METRICS.values() if m.applies_to(kind)]


def lookup(path: str) -> Metric | None:
    """The entry of a JSON path (``coverage.0.95.width`` -> ``coverage.width``), or None."""
    if path in METRICS:
        return METRICS[path]
    parts = path.split(".")
    if len(parts) >= 2:
        return METRICS.get(f"{parts[0]}.{parts[-1]}")
    return None


def target(group: str, key: str, level: float | None = None) -> float | None:
    """Target value of the ``"target"``-oriented metric ``group.key`` at the nominal ``level``: its catalogue
    entry's :attr:`Metric.target` (:meth:`Metric.target_at`); None for a metric without one, or whose target
    is a rule of an unknown level. ``coverage.coverage`` and ``prediction_sets.coverage`` aim at their level,
    ``coverage.miss_below``/``miss_above`` at half the nominal miss rate (1 - level)/2, and
    ``coverage.coverage_error`` at 0, ``spread_skill.ratio`` at 1.
    """
    metric = METRICS.get(f"{group}.{key}")
    return None if metric is None else metric.target_at(level)


def orientation_of(result: Mapping[str, Any], family: Family, kind: str | None) -> dict[str, str]:
    """``{"group.key": orientation}`` of the metrics present in a family's ``result`` (None ones left out)."""
    present: set[str] = set()
    for k, v in result.items():
        present.update(v.keys() if family.by_level and isinstance(v, dict) else [k])
    out = {}
    for m in family.metrics:
        o = m.orientation_for(kind)
        if m.name in present and o is not None:
            out[m.path] = o
    return out


def compute(
    family: Family, pred: Prediction, settings: Settings, weights: np.ndarray | None = None
) -> dict | None:
    """A family's results for ``pred`` (None where it does not apply). The prediction validated its
    arrays on construction, so the kernels skip their own checks (:func:`uqeval.validation.trusted`).

    ``weights`` (N,) (positive; for a representation in :attr:`Family.weighted` only): the family's kernels
    given the row weights, keeping the metrics it weights (:attr:`Metric.weighted_kinds`)."""
    fn = family.compute.get(pred.kind)
    if fn is None or family.why_undefined(pred) is not None:
        return None
    with trusted():
        if weights is None:
            return fn(pred, settings)
        assert pred.kind in family.weighted  # (weighted_forms hands out these families only)
        result = fn(pred, settings, weights)  # type: ignore[call-arg]
    if result is None:
        return None
    keep = {m.name for m in family.metrics if pred.kind in m.weighted_kinds}
    if family.by_level:
        return {k: {n: v for n, v in body.items() if n in keep} for k, body in result.items()}
    return {n: v for n, v in result.items() if n in keep}


def not_defined(pred: Prediction, settings: Settings) -> list[tuple[str, str]]:
    """``(family, reason)`` of the families that apply to ``pred`` (and that ``settings`` turn on) whose
    metrics are not defined for its data (:attr:`Family.undefined`): computed by no engine, named in notes."""
    return [(f.name, why) for f in families_for(pred.kind, settings) if (why := f.why_undefined(pred))]


def not_computed_notes(skipped: list[tuple[str, str]]) -> list[str]:
    """The notes of families left out (:func:`not_defined`, or ``skipped`` by :func:`compute_metrics`)."""
    return [f"{family} not computed: {why}" for family, why in skipped]


def _outcome(
    family: Family, pred: Prediction, settings: Settings, weights: np.ndarray | None = None
) -> tuple[dict | None, InputError | None]:
    """``(result, None)`` of :func:`compute`, or ``(None, exc)`` when the metrics are not defined for this data."""
    try:
        return compute(family, pred, settings, weights), None
    except InputError as exc:
        return None, exc


def compute_metrics(
    pred: Prediction, settings: Settings, skipped: list[tuple[str, str]] | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """Every applicable family for ``pred``: ``(metrics, orientation)``.

    ``skipped``: when given, a family whose metrics are not defined for this data (an
    :class:`InputError`, e.g. too few rows) is left out and ``(family, reason)`` appended.
    """
    families = families_for(pred.kind, settings)
    outcomes: dict[str, tuple[dict | None, InputError | None]] = {}
    # where a long family applies (Family.background: spce's bootstrap), two threads take the families
    # from one queue, the long ones first, while numpy releases the GIL in their loops; the results are then
    # taken in family order, so nothing else changes (arrays shared between families are made once:
    # predictions._memo). Elsewhere one thread: the others' families are short, and two of them at once
    # would only add their temporaries up
    long = any(f.background for f in families)
    queue = iter(sorted(families, key=lambda f: (not f.background, not f.heavy)))
    taking = threading.Lock()

    def drain(ready: threading.Event | None = None) -> None:
        """Take families from the queue until it is empty; with ``ready``, the second and later ones only
        once it is set (the calling thread's imports done)."""
        first = True
        while True:
            if ready is not None and not first:
                ready.wait()
            first = False
            with taking:
                f = next(queue, None)
            if f is None:
                return
            outcomes[f.name] = _outcome(f, pred, settings)

    if FAMILY_THREADS > 1 and long and len(families) > 1:
        import contextvars
        from concurrent.futures import ThreadPoolExecutor  # here: ~3 ms of start-up elsewhere

        # no import runs in the second thread: everything the kernels import is imported in this one. Two
        # threads importing at once may see each other's half-initialised modules (a concurrent circular
        # import; the CLI's lazily executed numpy modules, issue 31: "cannot import name 'Polynomial'").
        # The long family's imports come first; the worker computes it (numpy only) while this thread
        # imports the others' modules, and takes another family only when those imports are done.
        for f in families:
            if f.background:
                for module in f.imports:
                    import_module(module)
        ready = threading.Event()
        with ThreadPoolExecutor(max_workers=1) as pool:
            # the worker runs in this thread's context: its errors are phrased for the same front end
            other = pool.submit(contextvars.copy_context().run, drain, ready)
            try:
                for f in families:
                    for module in f.imports:
                        import_module(module)
            finally:
                ready.set()  # (also on a failed import: the worker must never wait forever)
            drain()
            other.result()
    else:
        drain()
    metrics: dict[str, Any] = {}
    orientation: dict[str, str] = {}
    for f in families:
        result, exc = outcomes[f.name]
        if exc is not None:
            if skipped is None:
                raise exc
            skipped.append((f.name, getattr(exc, "message", None) or str(exc)))
            continue
        if result is None:
            continue
        metrics[f.name] = result
        orientation.update(orientation_of(result, f, pred.kind))
    return metrics, orientation


def rows(metric: Metric, pred: Prediction, settings: Settings, level: str | None = None) -> RowStat | None:
    """The per-row form of ``metric`` for ``pred`` (``level``: the level key of a by-level metric)."""
    if (
        metric.rows_fn is None
        or not metric.applies_to(pred.kind)
        or pred.y_true is None
        and pred.kind != "loglik"
    ):
        return None

    with trusted():
        stat = metric.rows_fn(pred, settings, level)
    return stat if stat is not None and stat.resampler() is not None else None


#: one weighted metric's per-row form: (family, level key or None, metric, its RowStat)
WeightedForm = tuple[Family, "str | None", Metric, RowStat]


def weighted_forms(
    pred: Prediction, settings: Settings, skipped: list[tuple[str, str]] | None = None
) -> tuple[list[WeightedForm], list[Family], dict[str, str]]:
    """How every metric of ``pred`` that takes weights is weighted: ``(forms, families, not_weighted)``.

    ``forms``: the per-row form of each metric that has one (:attr:`Metric.rows_fn`; a function of weighted
    sums or of the weights, :meth:`RowStat.resampler`); ``families``: the families whose kernels take the
    weights for this representation (:attr:`Family.weighted`: binned and equal-mass calibration errors, PAV
    fits, sorts), computed by :func:`compute` with the weights; ``not_weighted``: the path of every applicable
    metric that takes none, with the reason (:meth:`Metric.unweighted_reason_for`).

    A family that does not apply to these data (information criteria without log-likelihoods) is left out, as
    its kernel leaves it out; by-level families are taken at the level keys of their unweighted result (one
    definition of the levels). ``skipped``: as for :func:`compute_metrics`, a family not defined on these data
    is left out with its reason (else its :class:`InputError` is raised).
    """
    forms: list[WeightedForm] = []
    families: list[Family] = []
    not_weighted: dict[str, str] = {}
    for f in families_for(pred.kind, settings):
        applicable = [m for m in f.metrics if m.applies_to(pred.kind)]
        # named where the family applies: with no weighted metric, wherever it applies to the representation
        unweightable = {
            m.path: m.unweighted_reason_for(pred.kind) or ""
            for m in applicable
            if not m.takes_weights(pred.kind)
        }
        if pred.kind in f.weighted and f.why_undefined(pred) is None:
            families.append(f)  # (its metrics without a per-row form: compute() with the weights)
            not_weighted.update(unweightable)
        weighted = [m for m in applicable if m.supports_weights]
        if not weighted:
            not_weighted.update(unweightable)
            continue
        found: list[WeightedForm] = []
        try:
            plain = (compute(f, pred, settings) or {}) if f.by_level else {}
            for key in list(plain) if f.by_level else [None]:
                stats = [(m, rows(m, pred, settings, key)) for m in weighted]
                if all(stat is None for _, stat in stats):
                    # no row form at all: the family does not apply to these data (information criteria
                    # without log-likelihoods, accuracy without a point prediction), as its kernel says None
                    continue
                for m, stat in stats:
                    if stat is not None:
                        found.append((f, key, m, stat))
                    elif not f.by_level or m.name in plain[key]:  # (else not defined here: width_norm)
                        not_weighted[m.path] = f"it has no per-row form for {pred.kind} predictions"
        except InputError as exc:
            if skipped is None:
                raise
            skipped.append((f.name, getattr(exc, "message", None) or str(exc)))
            continue
        if found:
            forms += found
            not_weighted.update(unweightable)
    return forms, families, not_weighted


def assemble(
    values: list[tuple[Family, str | None, Metric, float]],
    kind: str,
    results: Mapping[str, dict] | None = None,
) -> tuple[dict, dict[str, str]]:
    """``(metrics, orientation)`` in the layout of :func:`compute_metrics` from ``(family, level key, metric,
    value)`` of weighted metrics and the weighted ``results`` of whole families (family name -> result of
    :func:`compute` with weights); families and metrics in catalogue order."""
    metrics: dict[str, Any] = dict(results or {})
    for f, key, m, value in values:
        body = metrics.setdefault(f.name, {})
        (body.setdefault(str(key), {}) if f.by_level else body)[m.name] = value
    out: dict[str, Any] = {}
    orientation: dict[str, str] = {}
    for f in FAMILIES:
        if f.name in metrics:
            order = {m.name: i for i, m in enumerate(f.metrics)}
            body = metrics[f.name]
            if f.by_level:
                body = {k: dict(sorted(v.items(), key=lambda kv: order[kv[0]])) for k, v in body.items()}
            else:
                body = dict(sorted(body.items(), key=lambda kv: order[kv[0]]))
            out[f.name] = body
            orientation.update(orientation_of(body, f, kind))
    return out, orientation


def compute_weighted_metrics(
    pred: Prediction,
    settings: Settings,
    weights: np.ndarray,
    skipped: list[tuple[str, str]] | None = None,
) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """The metrics of :func:`compute_metrics` with per-row ``weights`` (N,): ``(metrics, orientation,
    not_weighted)``. The one place where weights reach the metrics.

    A metric with a per-row form is its resampler at the weights (:meth:`RowStat.resampler`, the function
    compare's bootstrap calls with Poisson counts), so one definition serves both; a family whose kernels take
    weights (:attr:`Family.weighted`) is computed by them with the weights. Either way, with integer weights a
    metric is that of the rows repeated that often. Rows of weight 0 are dropped first (exactly the metric
    without them). ``not_weighted`` (:func:`weighted_forms`) maps the path of every applicable metric that
    takes no weights to the reason: those are not computed (never unweighted). ``weights`` must have been
    checked (:func:`uqeval.weights.check_weights`).
    """
    from ..weights import drop_zero

    w, (pred,), _ = drop_zero(weights, pred)
    forms, families, not_weighted = weighted_forms(pred, settings, skipped)
    values = []
    for f, key, m, stat in forms:
        fn = stat.resampler(blas=False)
        assert fn is not None  # rows() returns forms with a resampler only
        values.append((f, key, m, float(fn(w[None, :])[0])))
    results: dict[str, dict] = {}
    for f in families:
        result, exc = _outcome(f, pred, settings, w)
        if exc is not None:
            if skipped is None:
                raise exc
            skipped.append((f.name, getattr(exc, "message", None) or str(exc)))
        elif result:
            results[f.name] = result
    metrics, orientation = assemble(values, pred.kind, results)
    return metrics, orientation, not_weighted
