"""The comparison document (schema ``uqeval.compare/1``) from the estimates, the bootstrap replicates and
the paired tests, whichever engine computed them: intervals, ranks, the share of resamples where a model
is best, differences to the best model, the tests to run and the notes."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from ..check import Orientation

from .models import Model
from .plan import MetricRef, Plan

COMPARE_SCHEMA = "uqeval.compare/1"
#: why a metric without a cheap resampler gets no interval
NO_RESAMPLER = "no cheap resampler (it would be recomputed from scratch per resample)"

_RTOL_CONSISTENT = 1e-9


def _consistent(a: float, b: float) -> bool:
    if math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=_RTOL_CONSISTENT, abs_tol=1e-12)


def _round12(x: float) -> float:
    return float(f"{x:.12g}") if math.isfinite(x) else x


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
    if n >= 2 and plan.options.dm_lag < n:
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

    names, alpha = plan.names, 1.0 - plan.options.ci_level
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
        if plan.options.pairs == "all":
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
        "bootstrap": plan.options.n_boot,
        "ci_level": plan.options.ci_level,
        "seed": plan.options.seed,
        "permutations": plan.options.n_permutations,
        "pairs": plan.options.pairs,
        "dm_lag": plan.options.dm_lag,
        **({"resampling": plan.units_info} if plan.units_info else {}),
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
