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
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from importlib import import_module
from typing import Any

import numpy as np

from ..config import Settings
from ..errors import InputError
from ..predictions import Prediction

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

#: The flag that turns on each opt-in family's Settings field (for messages).
OPTION_FLAGS = {
    "diagnostics": "--diagnostics",
    "tw_threshold": "--tw-threshold",
    "thresholds": "--threshold",
    "murphy": "--murphy",
}


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


def families_for(kind: str, settings: Settings | None = None) -> list[Family]:
    """The families that apply to ``kind``; with ``settings``, only those it turns on (:attr:`Family.option`)."""
    return [f for f in FAMILIES if kind in f.compute and (settings is None or f.enabled(settings))]


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
    """Target value of a ``"target"``-oriented metric; None when it depends on an unknown level.

    ``coverage.coverage`` and ``prediction_sets.coverage`` aim at their level,
    ``coverage.miss_below``/``miss_above`` at half the nominal miss rate (1 - level)/2, and
    ``coverage.coverage_error`` at 0, ``spread_skill.ratio`` at 1.
    """
    if key == "coverage_error" or (group, key) == ("calibration_tests", "spiegelhalter_z"):
        return 0.0
    if (group, key) == ("spread_skill", "ratio"):
        return 1.0
    if level is None:
        return None
    if key == "coverage" and group in ("coverage", "prediction_sets"):
        return float(level)
    if group == "conditional_coverage" and key.endswith("_coverage"):  # worst stratum / class / group
        return float(level)
    if group == "coverage" and key in ("miss_below", "miss_above"):
        return (1.0 - float(level)) / 2.0
    return None


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


def compute(family: Family, pred: Prediction, settings: Settings) -> dict | None:
    """A family's results for ``pred`` (None where it does not apply). The prediction validated its
    arrays on construction, so the kernels skip their own checks (:func:`uqeval.validation.trusted`)."""
    from ..validation import trusted

    fn = family.compute.get(pred.kind)
    if fn is None or family.why_undefined(pred) is not None:
        return None
    with trusted():
        return fn(pred, settings)


def not_defined(pred: Prediction, settings: Settings) -> list[tuple[str, str]]:
    """``(family, reason)`` of the families that apply to ``pred`` (and that ``settings`` turn on) whose
    metrics are not defined for its data (:attr:`Family.undefined`): computed by no engine, named in notes."""
    return [(f.name, why) for f in families_for(pred.kind, settings) if (why := f.why_undefined(pred))]


def not_computed_notes(skipped: list[tuple[str, str]]) -> list[str]:
    """The notes of families left out (:func:`not_defined`, or ``skipped`` by :func:`compute_metrics`)."""
    return [f"{family} not computed: {why}" for family, why in skipped]


def _outcome(family: Family, pred: Prediction, settings: Settings) -> tuple[dict | None, InputError | None]:
    """``(result, None)`` of :func:`compute`, or ``(None, exc)`` when the metrics are not defined for this data."""
    try:
        return compute(family, pred, settings), None
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
            skipped.append((f.name, str(exc)))
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
    from ..validation import trusted

    with trusted():
        stat = metric.rows_fn(pred, settings, level)
    return stat if stat is not None and stat.resampler() is not None else None
