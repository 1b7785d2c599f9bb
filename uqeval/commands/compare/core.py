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
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...config import Settings
from ...errors import InputError, UsageError, option
from ...predictions import Prediction
from .assemble import NO_RESAMPLER, assemble, estimate_metrics, weight_notes
from .models import Model, align_models, model_names
from .paired import PairedTests, without_rounding_noise
from .plan import (
    DEFAULT_METRICS,
    CompareOptions,
    MetricRef,
    Plan,
    Results,
    as_number,
    no_row_form,
    plan_comparison,
    resolve_metrics,
    row_form,
    row_score,
    value_at,
)
from .resampling import BLOCK_ROWS, auto_block_size, poisson_bootstrap, sign_flip_tests, spans
from .scores import PER_ROW_SCORES, Grids, common_grids, comparison_score, per_row_scores

if TYPE_CHECKING:
    from .skill import Reference


def compare_models(
    models: Sequence[Model],
    settings: Settings | None = None,
    options: CompareOptions | None = None,
    *,
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
    options : (default: the defaults) what is compared and how (:class:`~uqeval.commands.compare.plan.CompareOptions`: the metrics,
        the bootstrap, the paired tests and what they resample). Without a resampling of clusters or blocks
        a note flags score differences whose lag-1 autocorrelation is outside its 99 % band for independent
        rows.
    clusters : with a cluster resampling, the label of each row (a location, a patient, a day).
    weights : one weight per row (>= 0, not all 0; ``weights_column``: where they came from, for the JSON):
        see :func:`weighted_rows` for what is weighted and how.
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
    options = options or CompareOptions()
    n_read = models[0].prediction.n if models else 0
    if any(m.prediction.n != n_read for m in models):
        raise InputError("models must be aligned to the same rows first (see align_models)")
    if weights is not None and reference is not None:
        from .skill import refuse_weighted_skill

        raise refuse_weighted_skill()
    uw, w_all, not_weighted = None, None, cast("dict[str, str] | None", None)
    if weights is not None:
        models, clusters, uw, w_all = weighted_rows(models, weights, weights_column, clusters)
        not_weighted = {}
    plan, results = plan_comparison(models, settings, options, not_weighted)
    if not_weighted is not None and plan.settings.murphy:
        raise UsageError(
            f"{option('murphy')} draws unweighted Murphy curves: leave out {option('weights')} or {option('murphy')}"
        )
    n = models[0].prediction.n
    resampling, units, info = options.resampling.units(n, clusters, lambda: _auto_block_size(results, plan))
    if options.resampling:
        plan = replace(plan, units_info=info)
    block_size = cast("int | None", resampling.block_size)  # a number: "auto" is resolved
    rows = RowScores(models, plan, results, uw)
    estimates, targets, columns, notes = estimate_metrics(plan, rows.value, rows.at_full)
    replicates: dict[tuple[str, str], np.ndarray] = {}
    if (
        options.n_boot and columns
    ):  # every comparison score is a column: the bootstrap pass makes the means too
        stats = [c[2] for c in columns]
        reps = poisson_bootstrap(stats, n, options.n_boot, options.seed or 0, units, block_size, uw)
        replicates = {(metric, model): rep for (metric, model, _), rep in zip(columns, reps)}
    else:
        rows.add_means()
    rows.fill_estimates(estimates)
    extra, last = _murphy(models) if plan.settings.murphy else ({}, [])  # issue 16 A
    if not_weighted is not None:
        _not_weighted_forms(plan, results, estimates, not_weighted)
        extra["weights"], first = _weights_block(
            cast("np.ndarray", w_all), weights_column, not_weighted, block_size
        )
        last = first + last
    tests = PairedTests(rows, estimates, notes, units)
    out = assemble(
        plan, models, n, estimates, targets, replicates, notes, rows.available(), tests.run, extra, last
    )
    out["n_rows"] = int(n_read)
    if reference is not None:  # forecast verification (issue 16): skill of each model against the reference
        from .skill import compare_skill

        skill = compare_skill(
            models,
            reference,
            settings or Settings(),
            reference_times,
            options.n_boot,
            options.seed,
            options.ci_level,
            units,
            block_size,
        )
        out["reference"], out["skill"] = skill["reference"], skill["skill"]
        out["skill_orientation"] = skill["orientation"]
        out["notes"] = list(out.get("notes", [])) + skill["notes"]
    return out


def _murphy(models: Sequence[Model]) -> tuple[dict[str, Any], list[str]]:
    """``({"murphy": the Murphy curves}, [the note of which model dominates which])`` (issue 16 A)."""
    murphy = murphy_comparison(models)
    if murphy["dominates"]:
        listed = "; ".join(
            f"{d['model']} dominates {d['dominated']} ({d['functional']})" for d in murphy["dominates"]
        )
        return {"murphy": murphy}, [f"Murphy diagrams: {listed}"]
    if murphy["curves"]:
        return {"murphy": murphy}, [
            "Murphy diagrams: no model dominates another (the curves cross or coincide)"
        ]
    return {"murphy": murphy}, []


def _weights_block(
    w_all: np.ndarray, column: str | None, not_weighted: dict[str, str], block_size: int | None
) -> tuple[dict[str, Any], list[str]]:
    """The ``weights`` block of a weighted comparison and its notes (:func:`weight_notes`)."""
    from ...weights import weights_block

    n_zero = int((w_all == 0).sum())
    block = weights_block(column, float(w_all.sum()), n_zero, not_weighted)
    return block, weight_notes(n_zero, block_size is not None, not_weighted)


class RowScores:
    """The comparison scores of aligned models, made block by block from their rows and never held whole
    (most kernels are cheaper than reading an (N,) array back from memory); a summary metric's per-row score
    is part of its per-row form, which is held. ``uw``: the rows' weights (None: every row counts once).
    Each score's sum over the rows accumulates as its blocks are made (``np.mean`` of the whole score, bit
    for bit)."""

    def __init__(self, models: Sequence[Model], plan: Plan, results: Results, uw: np.ndarray | None) -> None:
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
        for start, stop in spans(self.n, BLOCK_ROWS):
            for key in self.scored:
                self._add(key, start, stop)

    def available(self) -> dict[str, list[int]]:
        """Per metric, the models with a per-row score (those the paired tests compare)."""
        return {
            ref.name: [
                k
                for k in range(len(self.models))
                if (ref.name, k) in self.scored
                or ref.source == "summary"
                and row_score(self.results, k, ref) is not None
            ]
            for ref in self.plan.refs
        }

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
            if fn is None:  # the family's kernels given the weights, where they take them (no interval)
                weighted = self.results.weighted(k, cast("str", ref.group), self.uw)
                return as_number(value_at(weighted, ref.keys)), res
            return as_number(float(fn(self.uw[None, :])[0])), res
        res = self.results.get(k, cast("str", ref.group))  # a summary metric names its family
        return as_number(value_at(res, ref.keys)), res

    def at_full(self, k: int, ref: MetricRef) -> tuple[Any, float | None, str | None]:
        """``(bootstrap column payload, the statistic at unit weights, why there is no interval)``
        (:func:`estimate_metrics`)."""
        if ref.source == "per_row":
            return functools.partial(self.column, (ref.name, k)), None, None
        stat = row_form(self.results, k, ref) if self.plan.options.n_boot else None
        fn = None if stat is None else stat.resampler()
        if fn is None:
            return None, None, NO_RESAMPLER
        at = np.ones((1, self.n)) if self.uw is None else self.uw[None, :]  # the rows (their own weights)
        return stat, float(np.asarray(fn(at), dtype=np.float64)[0]), None


def _not_weighted_forms(
    plan: Plan, results: Results, estimates: dict[str, dict[str, float | None]], not_weighted: dict[str, str]
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


def weighted_rows(
    models: Sequence[Model], weights: Any, column: str | None, clusters: Any
) -> tuple[list[Model], Any, np.ndarray | None, np.ndarray]:
    r"""The rows that count and their weights, for :func:`compare_models` with ``weights``:
    ``(models, clusters, weights or None, the checked weights of every row)``.

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
    from ...weights import check_weights, drop_zero

    n = models[0].prediction.n
    w = check_weights(weights, column, n=n)
    on_rows = clusters is not None and np.shape(clusters)[:1] == (n,)
    kept, (cl, *preds), dropped = drop_zero(w, clusters if on_rows else None, *(m.prediction for m in models))
    if dropped:
        models = [replace(m, prediction=p) for m, p in zip(models, preds)]
        clusters = cl if on_rows else clusters
    uw = None if (kept == kept[0]).all() else kept
    return list(models), clusters, uw, w


def _auto_block_size(results: Results, plan: Plan) -> int:
    """``block_size="auto"``: :func:`~uqeval.commands.compare.resampling.auto_block_size` of the models' per-row
    scores of the first compared metric that has them."""
    for ref in plan.refs:
        series = [s for k in range(len(plan.names)) if (s := row_score(results, k, ref)) is not None]
        if series:
            return auto_block_size(series)
    return auto_block_size([])


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


#: the command's front door: what the front ends, the stream engine and the tests use (each defined once, in
#: its module)
__all__ = [
    "NO_RESAMPLER",
    "BLOCK_ROWS",
    "CompareOptions",
    "DEFAULT_METRICS",
    "PER_ROW_SCORES",
    "Grids",
    "MetricRef",
    "Model",
    "Plan",
    "Results",
    "align_models",
    "as_number",
    "common_grids",
    "compare_models",
    "comparison_score",
    "model_names",
    "murphy_comparison",
    "per_row_scores",
    "plan_comparison",
    "poisson_bootstrap",
    "resolve_metrics",
    "sign_flip_tests",
    "value_at",
    "without_rounding_noise",
]
