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

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from .config import Settings
from .errors import InputError
from .predictions import Prediction

Compute = Callable[[Prediction, Settings], "dict | None"]
#: ``(B, N)`` row weights (a resample counts row ``i`` ``w[b, i]`` times) -> ``(B,)`` metric values.
Resampler = Callable[[np.ndarray], np.ndarray]

REGRESSION = ("gaussian", "point", "intervals", "quantiles", "samples")
CLASSIFICATION = ("categorical", "members", "dirichlet")  # all have .proba (the predictive mean) and .labels
ORIENTATIONS = ("lower", "higher", "target")


@dataclass(frozen=True)
class RowStat:
    """How a metric comes out of its rows, for paired tests, the bootstrap and streaming.

    - ``score``: a per-row score whose mean is the metric (a paired test can use it);
    - ``terms`` (N, k) and/or ``codes`` (N,) ints in ``[0, n_codes)`` with ``finish``: the metric
      of any weighted set of rows is ``finish(sums, total)``, where ``sums`` (B, k + n_codes) holds
      the weighted sums of the terms and the weighted counts of each code, ``total`` (B,) the
      total weights (a mergeable state: sums over chunks add up);
    - ``weighted``: the metric of weighted rows directly, ``(B, N)`` weights -> ``(B,)``, for
      metrics that need order statistics.

    A metric with only a score resamples as the weighted mean of the score.
    """

    score: np.ndarray | None = None
    terms: np.ndarray | None = None
    codes: np.ndarray | None = None
    n_codes: int = 0
    finish: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    weighted: Resampler | None = None

    @property
    def sums_form(self) -> tuple[np.ndarray | None, np.ndarray | None, int, Callable] | None:
        """``(terms, codes, n_codes, finish)`` where the metric is a function of weighted sums, else None."""
        if self.finish is not None:
            return self.terms, self.codes, self.n_codes, self.finish
        if self.weighted is None and self.score is not None:
            return self.score[:, None], None, 0, _mean_of_first
        return None

    def resampler(self) -> Resampler | None:
        """``(B, N)`` row weights -> ``(B,)``: the metric of the rows, row ``i`` counted ``w[b, i]`` times."""
        if self.weighted is not None:
            return self.weighted
        form = self.sums_form
        if form is None:
            return None
        terms, codes, n_codes, finish = form

        def fn(w: np.ndarray) -> np.ndarray:
            w = np.asarray(w, dtype=np.float64)
            parts = [] if terms is None else [w @ terms]
            if codes is not None:
                parts.append(np.stack([np.bincount(codes, weights=row, minlength=n_codes) for row in w]))
            return finish(np.concatenate(parts, axis=1), w.sum(axis=1))

        return fn


def _mean_of_first(sums: np.ndarray, total: np.ndarray) -> np.ndarray:
    return sums[:, 0] / total


RowsFn = Callable[[Prediction, Settings, Any], "RowStat | None"]


@dataclass(frozen=True)
class Metric:
    """One catalogue entry. ``path`` (``group.name``) is its key in the JSON summary."""

    group: str
    name: str
    orientation: str | None
    description: str
    representations: tuple[str, ...] = ()  # filled from the family
    #: where the direction depends on the representation (rejection: accuracy vs RMSE)
    orientation_by_kind: Mapping[str, str] = field(default_factory=dict)
    #: "mean" (a mean of per-row scores), "moments" (a function of per-row sums), "counts"
    #: (fixed-bin counts), "order" (needs order statistics or a sort), "resampling"
    #: (random draws), "curve"/"histogram" (data for plots).
    reduction: str = "order"
    #: (prediction, settings, level) -> RowStat, or None where the metric has no cheap row form
    rows_fn: RowsFn | None = None
    by_level: bool = False

    @property
    def path(self) -> str:
        return f"{self.group}.{self.name}"

    def orientation_for(self, kind: str | None) -> str | None:
        return self.orientation_by_kind.get(kind, self.orientation) if kind is not None else self.orientation

    def applies_to(self, kind: str) -> bool:
        return kind in self.representations

    @property
    def explanation(self) -> dict[str, str] | None:
        """Title, text, formula and reference (:mod:`uqeval.glossary`)."""
        from .glossary import find_entry

        found = find_entry(self.path)
        return found[1] if found else None


@dataclass(frozen=True)
class Family:
    """Metrics computed together by one kernel call per representation."""

    name: str
    metrics: tuple[Metric, ...]
    compute: Mapping[str, Compute]
    by_level: bool = False
    #: a Settings field that must be set (truthy) for the family to be computed, e.g.
    #: ``"diagnostics"`` (``--diagnostics``); None: always computed where it applies
    option: str | None = None

    def enabled(self, settings: Settings | None) -> bool:
        return self.option is None or settings is not None and bool(getattr(settings, self.option, None))

    @property
    def representations(self) -> tuple[str, ...]:
        return tuple(self.compute)


# --------------------------------------------------------------------------- helpers


def _expected(s: Settings) -> np.ndarray:
    return np.linspace(0.0, 1.0, s.num_bins)


def coverage_levels(p: Prediction, s: Settings) -> list[float]:
    """Central levels a representation is scored at: ``--levels`` (default 0.95) where any level
    exists (Gaussians, samples), else the levels the file carries or the requested subset of them."""
    carried = p.carried_levels()
    if carried is None:
        return list(s.levels or (0.95,))
    return pick_levels(carried, s.levels, f"the {p.kind} columns carry central levels")


def pick_levels(available, requested, where: str, error: type[Exception] = InputError) -> list[float]:
    """The ``requested`` levels (all ``available`` ones if None), matched by level key.

    A requested level that is not available raises ``error`` naming it and ``where`` they come from.
    """
    from .metrics.intervals import level_key

    available = [float(v) for v in available]
    if not requested:
        return available
    keys = {level_key(c): c for c in available}
    missing = [lv for lv in requested if level_key(lv) not in keys]
    if missing:
        raise error(f"--levels {', '.join(level_key(m) for m in missing)} not available: {where} "
                    f"{', '.join(keys) or 'none'}")
    return [keys[level_key(lv)] for lv in requested]


def _memo(p: Prediction, key: str, make):
    cache = p.__dict__.setdefault("_cache", {})
    if key not in cache:
        cache[key] = make()
    return cache[key]


def per_row_uncertainty(p: Prediction) -> dict[str, np.ndarray] | None:
    """Per-row ``total``/``aleatoric``/``epistemic`` (nats) of an ensemble or Dirichlet prediction, else None.

    Ensembles (``members``): entropy of the mean, mean member entropy and their difference
    (mutual information). Dirichlet outputs: the same decomposition of Dir(alpha); the
    epistemic part is the knowledge uncertainty MI[y, pi]. Computed once per prediction.
    """
    from .metrics.ensembles import dirichlet_uncertainty_per_row

    if p.kind == "members":
        rows = _member_rows(p)
        return {k: rows[k] for k in ("total", "aleatoric", "epistemic")}
    if p.kind == "dirichlet":
        return _memo(p, "uncertainty_rows", lambda: dirichlet_uncertainty_per_row(p.alpha))
    return None


def _member_rows(p: Prediction) -> dict[str, np.ndarray]:
    """Per-row terms of the ensemble uncertainty and diversity families: one pass over (N, M, K)."""
    from .metrics.ensembles import member_rows

    return _memo(p, "member_rows", lambda: member_rows(p.member_proba, None if p.y_true is None else p.labels))


def _cover_index(p: Prediction, s: Settings) -> np.ndarray:
    """First expected central level whose interval holds each row (interval-mode calibration)."""
    def make():
        if p.kind == "gaussian":  # exact on |z|, as the toolbox (no round trip through the PIT)
            from .metrics.blocks import rowwise
            from .metrics.calibration import interval_cover_index

            expected = _expected(s)
            return rowwise(lambda y, mean, std: interval_cover_index(np.abs(y - mean) / std, expected),
                           p.y_true, p.mean, p.std, dtype=np.intp)
        from .metrics.quantiles import pit_cover_index

        return pit_cover_index(p.pit(), _expected(s))

    return _memo(p, f"cover_index_{s.num_bins}", make)


# --------------------------------------------------------------------------- family compute functions


def _accuracy(p, s: Settings) -> dict | None:
    from .metrics.accuracy import regression_accuracy

    point = p.point()
    return None if point is None else regression_accuracy(p.y_true, point)


def _accuracy_cls(p, s: Settings) -> dict:
    from .metrics.classification import classification_accuracy

    return classification_accuracy(p.proba, p.labels)


def calibration_curve(p: Prediction, s: Settings) -> tuple[np.ndarray, np.ndarray]:
    """``(expected, observed)``: the average calibration curve that ``avg_calibration`` summarises.

    Forecasts with every level (Gaussians, samples): interval mode at ``linspace(0, 1, num_bins)``
    (:func:`~uqeval.metrics.calibration.observed_from_cover_index`); quantiles: quantile mode at
    the levels the file carries (:func:`~uqeval.metrics.quantiles.quantile_calibration_curve`).
    """
    if p.quantile_keys() is None:
        from .metrics.calibration import observed_from_cover_index

        return _expected(s), observed_from_cover_index(_cover_index(p, s), s.num_bins)
    from .metrics.quantiles import quantile_calibration_curve

    return quantile_calibration_curve(p.y_true, p.quantiles, p.levels)


def _avg_cal_gaussian(p, s: Settings) -> dict:
    from .metrics.calibration import calibration_errors

    return calibration_errors(*calibration_curve(p, s))


def _avg_cal_samples(p, s: Settings) -> dict:
    from .metrics.quantiles import pit_histogram

    out = _avg_cal_gaussian(p, s)
    out["pit_histogram"] = pit_histogram(p.pit(), bins=10)
    return out


def _avg_cal_quantiles(p, s: Settings) -> dict:
    from .metrics.quantiles import pit_histogram_quantiles

    out = _avg_cal_gaussian(p, s)
    out["pit_histogram"] = pit_histogram_quantiles(p.y_true, p.quantiles, p.levels)
    return out


def _adv(p, s: Settings) -> dict:
    from .metrics.calibration import adversarial_group_calibration

    return adversarial_group_calibration(
        _cover_index(p, s), _expected(s), group_fractions=np.linspace(0.01, 1.0, s.adv_num_group_sizes),
        num_trials=s.adv_num_trials, num_group_draws=s.adv_num_group_draws, seed=s.seed)


def _sharpness(p, s: Settings) -> dict:
    from .metrics.sharpness import sharpness

    return sharpness(p.spread())


def _scoring_gaussian(p, s: Settings) -> dict:
    from .metrics.scoring import scoring_rules_gaussian

    return scoring_rules_gaussian(p.y_true, p.mean, p.std, resolution=s.resolution)


def _crps_samples_rows(p) -> tuple[np.ndarray, np.ndarray]:
    from .metrics.samples import crps_ensemble_and_fair

    return _memo(p, "crps_rows", lambda: p.map_rows(lambda m, y: crps_ensemble_and_fair(y, m, presorted=True),
                                                      p.y_true))


def _scoring_samples(p, s: Settings) -> dict:
    crps, fair = _crps_samples_rows(p)
    return {"crps": float(crps.mean()), "crps_fair": float(fair.mean())}


def _scoring_quantiles(p, s: Settings) -> dict:
    from .metrics.quantiles import quantile_scores

    return quantile_scores(p.y_true, p.quantiles, p.levels)


def _interval_rows(p) -> np.ndarray:
    """(N, L) interval score of each of the file's interval levels."""
    from .metrics.scoring import interval_score

    return _memo(p, "interval_rows", lambda: interval_score(p.y_true, p.lower, p.upper, p.levels))


def _scoring_intervals(p, s: Settings) -> dict:
    from .metrics.intervals import level_key

    rows = _interval_rows(p)
    by_level = {level_key(lv): float(rows[:, j].mean()) for j, lv in enumerate(p.levels)}
    return {"interval": float(np.mean(list(by_level.values()))), "interval_by_level": by_level}


def _reliability_gaussian(p, s: Settings) -> dict:
    from .metrics.reliability import reliability_gaussian

    return reliability_gaussian(p.y_true, p.mean, p.std)


def _reliability_samples(p, s: Settings) -> dict:
    from .metrics.reliability import max_calibration_error

    return {"max_cal_err": max_calibration_error(p.pit())}


def _coverage(p, s: Settings) -> dict:
    from .metrics.intervals import coverage_metrics, level_key

    out = {}
    for lv in coverage_levels(p, s):
        lo, hi = p.interval(lv)
        out[level_key(lv)] = coverage_metrics(p.y_true, lo, hi, lv, y_std=s.y_std)
    return out


def _brier_decomposition(p, s: Settings) -> dict:
    from .metrics.classification import brier_decomposition

    return brier_decomposition(p.proba, p.labels)


def _calibration_cls(p, s: Settings) -> dict:
    from .metrics.classification import calibration_errors

    return calibration_errors(p.proba, p.labels, num_bins=s.class_bins, tace_threshold=s.tace_threshold)


def _prediction_sets(p, s: Settings) -> dict:
    from .metrics.classification import prediction_sets

    return prediction_sets(p.proba, p.labels, levels=list(s.levels or (0.95,)))


def _ensemble_uncertainty(p, s: Settings) -> dict:
    out = {k: float(v.mean()) for k, v in per_row_uncertainty(p).items()}
    if p.kind == "dirichlet":
        out["knowledge"] = out["epistemic"]  # the prior-network name of the same quantity
    return out


def _information_criteria(p, s: Settings) -> dict | None:
    if p.loglik is None:
        return None
    from .metrics.ensembles import information_criteria

    return information_criteria(p.loglik)


def _diversity(p, s: Settings) -> dict:
    from .metrics.ensembles import diversity_from_rows

    return diversity_from_rows(_member_rows(p), p.member_proba.shape[1])


def _rejection_cls(p, s: Settings) -> dict:
    from .metrics.ensembles import oracle_collaborative_accuracy, rejection_curve

    conf, correct = p.top_label()
    uncertainty = 1.0 - conf  # the same ranking for plain classifiers, ensembles and Dirichlet outputs
    curve = rejection_curve(correct, uncertainty, kind="accuracy")
    oca = oracle_collaborative_accuracy(correct, uncertainty, fraction=s.oca_fraction)
    return {"auc_rejection": curve["auc_rejection"], "auc_oracle": curve["auc_oracle"],
            "oracle_collaborative_accuracy": oca, "fractions": curve["fractions"], "values": curve["values"],
            "oracle_values": curve["oracle_values"]}


def _rejection_samples(p, s: Settings) -> dict:
    from .metrics.ensembles import rejection_curve

    mean, std = p.moments()
    curve = rejection_curve(p.y_true - mean, std, kind="rmse")  # RMSE of the ensemble mean, ranked by its std
    return {"auc_rejection": curve["auc_rejection"], "auc_oracle": curve["auc_oracle"],
            "fractions": curve["fractions"], "values": curve["values"], "oracle_values": curve["oracle_values"]}


def _bayesian_ece(p, s: Settings) -> dict:
    from .metrics.ensembles import bayesian_ece

    return bayesian_ece(p.proba, p.labels, num_bins=s.class_bins, num_samples=s.bayes_samples, seed=s.seed)


SPCE_MIN_ROWS = 10  # 5-fold cross-fitting needs two rows per fold


def _spce(p, s: Settings) -> dict | None:
    from .metrics.ensembles import spce

    if p.n < SPCE_MIN_ROWS:
        return None
    proba = p.proba
    # binary problems: calibration of P(class 1); more classes: top-label calibration
    return spce(proba[:, 1] if proba.shape[1] == 2 else proba, p.labels, seed=s.seed)


# --------------------------------------------------------------------------- per-row forms
# Each returns the RowStat of one metric (or None where this representation has none). The
# formulas are the kernels': per-row arrays come from metrics/, reductions from their batch forms.


def _rows_accuracy(p, s, level) -> dict[str, RowStat] | None:
    from .metrics.accuracy import accuracy_rows

    point = p.point()
    if point is None:
        return None
    terms = _memo(p, "accuracy_rows", lambda: accuracy_rows(p.y_true, point))
    return {k: RowStat(score=score, weighted=weighted) for k, (score, weighted) in terms.items()}


def _rows_accuracy_cls(p, s, level) -> dict[str, RowStat]:
    from .metrics.classification import classification_rows

    return {k: RowStat(score=v) for k, v in _memo(p, "cls_rows", lambda: classification_rows(p.proba, p.labels)).items()}


def _rows_avg_cal(p, s, level) -> dict[str, RowStat] | None:
    if p.kind == "quantiles":
        from .metrics.quantiles import quantile_calibration_terms

        below, fn = quantile_calibration_terms(p.y_true, p.quantiles, p.levels)
        form = dict(terms=below)
    else:
        from .metrics.calibration import calibration_errors_from_counts

        expected = _expected(s)
        fn = calibration_errors_from_counts(expected)
        form = dict(codes=_cover_index(p, s), n_codes=expected.size + 1)
    return {k: RowStat(finish=(lambda key: lambda sums, total: fn(sums, total)[key])(k), **form)
            for k in ("rms_cal", "ma_cal", "miscal_area")}


def _rows_sharpness(p, s, level) -> dict[str, RowStat]:
    sd = p.spread()
    return {"sharp": RowStat(terms=(sd * sd)[:, None], finish=_root_mean), "mean_std": RowStat(score=sd)}


def _root_mean(sums: np.ndarray, total: np.ndarray) -> np.ndarray:
    return np.sqrt(sums[:, 0] / total)


def _rows_scoring(p, s, level) -> dict[str, RowStat]:
    from .metrics import scoring

    y = p.y_true
    if p.kind == "gaussian":
        return {
            "nll": RowStat(score=scoring.nll_gaussian(y, p.mean, p.std)),
            "crps": RowStat(score=scoring.crps_gaussian(y, p.mean, p.std)),
            "check": RowStat(score=scoring.check_score_gaussian(y, p.mean, p.std, resolution=s.resolution)),
            "interval": RowStat(score=scoring.interval_score_gaussian(y, p.mean, p.std, resolution=s.resolution)),
        }
    if p.kind == "samples":
        crps, fair = _crps_samples_rows(p)
        return {"crps": RowStat(score=crps), "crps_fair": RowStat(score=fair)}
    if p.kind == "quantiles":
        from .metrics.quantiles import weighted_interval_score

        return {"pinball": RowStat(score=scoring.pinball_loss(y, p.quantiles, p.levels).mean(axis=1)),
                "wis": RowStat(score=weighted_interval_score(y, p.quantiles, p.levels))}
    if p.kind == "intervals":
        return {"interval": RowStat(score=_interval_rows(p).mean(axis=1))}
    return {}


def _rows_coverage(p, s, level) -> dict[str, RowStat] | None:
    from .metrics.intervals import coverage_rows

    try:
        lv = float(level)
        lo, hi = p.interval(lv)
    except (KeyError, TypeError, ValueError):
        return None
    return {k: RowStat(score=score, terms=None if finish is None else score_terms, finish=finish)
            for k, (score, score_terms, finish) in coverage_rows(p.y_true, lo, hi, lv, y_std=s.y_std).items()}


def _rows_prediction_sets(p, s, level) -> dict[str, RowStat] | None:
    from .metrics.classification import prediction_set_rows

    try:
        lv = float(level)
    except (TypeError, ValueError):
        return None
    covered, size = prediction_set_rows(p.proba, p.labels, lv)
    return {"coverage": RowStat(score=covered), "mean_size": RowStat(score=size.astype(np.float64))}


def _rows_uncertainty(p, s, level) -> dict[str, RowStat]:
    rows = per_row_uncertainty(p)
    out = {k: RowStat(score=v) for k, v in rows.items()}
    if p.kind == "dirichlet":
        out["knowledge"] = out["epistemic"]
    return out


def _rows_information_criteria(p, s, level) -> dict[str, RowStat] | None:
    from .metrics.ensembles import information_criteria_rows

    if p.loglik is None:
        return None
    return {k: RowStat(score=v) for k, v in information_criteria_rows(p.loglik).items()}


# --------------------------------------------------------------------------- the catalogue


def _m(name: str, orientation: str | None, description: str, reduction: str = "order", **kw) -> dict:
    return dict(name=name, orientation=orientation, description=description, reduction=reduction, **kw)


def _family(name: str, specs: list[dict], compute: Mapping[str, Compute], rows: Callable | None = None,
            by_level: bool = False, no_rows: tuple[str, ...] = (), option: str | None = None) -> Family:
    """A family whose metrics share a per-row form ``rows(p, s, level) -> {metric: RowStat}``."""
    def family_rows(p, s, level):  # one computation per prediction, settings and level for all its metrics
        key = ("rows", name, level, s.resolution, s.num_bins, s.y_std, option and getattr(s, option, None))
        return _memo(p, key, lambda: rows(p, s, level) or {})

    metrics = []
    for spec in specs:
        fn = None
        if rows is not None and spec["name"] not in no_rows and spec.get("orientation") is not None:
            fn = (lambda key: lambda p, s, level=None: family_rows(p, s, level).get(key))(spec["name"])
        spec.setdefault("representations", tuple(compute))
        metrics.append(Metric(group=name, rows_fn=fn, by_level=by_level, **spec))
    return Family(name, tuple(metrics), compute, by_level, option)


FAMILIES: tuple[Family, ...] = (
    _family("accuracy", [
        _m("mae", "lower", "mean absolute error", "mean", representations=REGRESSION),
        _m("rmse", "lower", "root mean squared error", "moments", representations=REGRESSION),
        _m("mdae", "lower", "median absolute error", "order", representations=REGRESSION),
        _m("marpd", "lower", "mean absolute relative percent difference", "mean", representations=REGRESSION),
        _m("r2", "higher", "coefficient of determination", "moments", representations=REGRESSION),
        _m("corr", "higher", "Pearson correlation of prediction and target", "moments", representations=REGRESSION),
        _m("accuracy", "higher", "share of rows whose top class is the label", "mean", representations=CLASSIFICATION),
        _m("nll", "lower", "log loss", "mean", representations=CLASSIFICATION),
        _m("brier", "lower", "Brier score, sum over classes, in [0, 2]", "mean", representations=CLASSIFICATION),
        _m("brier_um", "lower", "Brier score in the Uncertainty Metrics convention (brier - 1)", "mean", representations=CLASSIFICATION),
    ], {**{k: _accuracy for k in REGRESSION}, **{k: _accuracy_cls for k in CLASSIFICATION}},
        rows=lambda p, s, level: (_rows_accuracy_cls if p.kind in CLASSIFICATION else _rows_accuracy)(p, s, level)),
    _family("avg_calibration", [
        _m("rms_cal", "lower", "root mean squared calibration error", "counts"),
        _m("ma_cal", "lower", "mean absolute calibration error", "counts"),
        _m("miscal_area", "lower", "miscalibration area", "counts"),
        _m("pit_histogram", None, "histogram of the PIT values (10 bins; quantiles: between levels)", "histogram", representations=("samples", "quantiles")),
    ], {"gaussian": _avg_cal_gaussian, "samples": _avg_cal_samples, "quantiles": _avg_cal_quantiles},
        rows=_rows_avg_cal),
    _family("adv_group_calibration", [
        _m("ma_mean", "lower", "mean worst-group MA calibration error per group size", "resampling"),
        _m("ma_stderr", "lower", "standard error of ma_mean", "resampling"),
        _m("rms_mean", "lower", "mean worst-group RMS calibration error per group size", "resampling"),
        _m("rms_stderr", "lower", "standard error of rms_mean", "resampling"),
        _m("group_sizes", None, "group sizes (fractions of the rows) of the curves", "curve"),
    ], {"gaussian": _adv, "samples": _adv}),
    _family("sharpness", [
        _m("sharp", "lower", "root mean predicted variance", "moments"),
        _m("mean_std", "lower", "mean predicted standard deviation", "mean"),
    ], {"gaussian": _sharpness, "samples": _sharpness}, rows=_rows_sharpness),
    _family("scoring_rule", [
        _m("nll", "lower", "Gaussian negative log-likelihood", "mean", representations=("gaussian",)),
        _m("crps", "lower", "continuous ranked probability score", "mean", representations=("gaussian", "samples")),
        _m("crps_fair", "lower", "unbiased (fair) ensemble CRPS", "mean", representations=("samples",)),
        _m("check", "lower", "check (pinball) score averaged over levels", "mean", representations=("gaussian",)),
        _m("interval", "lower", "interval score (averaged over levels)", "mean", representations=("gaussian", "intervals")),
        _m("pinball", "lower", "pinball loss averaged over the quantile levels", "mean", representations=("quantiles",)),
        _m("pinball_by_level", "lower", "pinball loss per quantile level", "mean", representations=("quantiles",)),
        _m("interval_by_level", "lower", "interval score per central level", "mean", representations=("intervals", "quantiles")),
        _m("wis", "lower", "weighted interval score", "mean", representations=("quantiles",)),
    ], {"gaussian": _scoring_gaussian, "samples": _scoring_samples, "quantiles": _scoring_quantiles,
        "intervals": _scoring_intervals}, rows=_rows_scoring, no_rows=("pinball_by_level", "interval_by_level")),
    _family("reliability", [
        _m("rs", "lower", "ACCRUE reliability score", "order", representations=("gaussian",)),
        _m("max_cal_err", "lower", "bin-free maximum calibration error of the PIT", "order"),
        _m("accrue", "lower", "ACCRUE cost", "order", representations=("gaussian",)),
    ], {"gaussian": _reliability_gaussian, "samples": _reliability_samples}),
    _family("coverage", [
        _m("coverage", "target", "share of targets inside the central interval (target: the level)", "mean"),
        _m("width", "lower", "mean interval width", "mean"),
        _m("width_norm", "lower", "mean width in units of the training targets' std", "mean"),
        _m("coverage_error", "target", "coverage minus level (target: 0)", "mean"),
        _m("miss_below", "target", "share of targets below the interval (target: (1 - level)/2)", "mean"),
        _m("miss_above", "target", "share of targets above the interval (target: (1 - level)/2)", "mean"),
    ], {"gaussian": _coverage, "samples": _coverage, "quantiles": _coverage, "intervals": _coverage},
        rows=_rows_coverage, by_level=True),
    _family("brier_decomposition", [
        _m("uncertainty", None, "uncertainty of the labels alone (a property of the data, not of the model)",
           "counts"),
        _m("resolution", "higher", "resolution", "counts"),
        _m("reliability", "lower", "reliability (calibration) term", "counts"),
    ], {k: _brier_decomposition for k in CLASSIFICATION}),
    _family("calibration", [
        _m("ece", "lower", "expected calibration error", "counts"),
        _m("rmsce", "lower", "root mean squared calibration error", "order"),
        _m("mce", "lower", "maximum calibration error", "counts"),
        _m("sce", "lower", "static calibration error", "counts"),
        _m("ace", "lower", "adaptive calibration error", "order"),
        _m("tace", "lower", "thresholded adaptive calibration error", "order"),
    ], {k: _calibration_cls for k in CLASSIFICATION}),
    _family("prediction_sets", [
        _m("coverage", "target", "share of rows whose set holds the label (target: the level)", "mean"),
        _m("mean_size", "lower", "mean number of classes in the set", "mean"),
        _m("size_histogram", None, "number of rows per set size 1..K", "histogram"),
    ], {k: _prediction_sets for k in CLASSIFICATION}, rows=_rows_prediction_sets, by_level=True),
    # ensembles and Bayesian outputs (Google Uncertainty Metrics). The entropies are descriptive, like
    # sharpness: "lower" means a more certain model, which is better only if it stays calibrated.
    _family("ensemble_uncertainty", [
        _m("total", "lower", "entropy of the mean prediction, averaged over rows (nats)", "mean"),
        _m("aleatoric", "lower", "mean member entropy (expected data uncertainty, nats)", "mean"),
        _m("epistemic", "lower", "mutual information = total - aleatoric (nats)", "mean"),
        _m("knowledge", "lower", "Dirichlet outputs: knowledge uncertainty MI[y, pi] (= epistemic, nats)", "mean", representations=("dirichlet",)),
    ], {"members": _ensemble_uncertainty, "dirichlet": _ensemble_uncertainty}, rows=_rows_uncertainty),
    _family("information_criteria", [
        _m("waic1", "higher", "negative WAIC type 1 (expected log predictive density per row)", "mean"),
        _m("waic2", "higher", "negative WAIC type 2", "mean"),
        _m("iscv", "higher", "importance-sampling cross-validation log predictive density", "mean"),
        _m("waic1_se", "lower", "standard error of waic1 over rows", "moments"),
        _m("waic2_se", "lower", "standard error of waic2 over rows", "moments"),
        _m("iscv_se", "lower", "standard error of iscv over rows", "moments"),
    ], {k: _information_criteria for k in (*REGRESSION, *CLASSIFICATION, "loglik")},
        rows=_rows_information_criteria, no_rows=("waic1_se", "waic2_se", "iscv_se")),
    _family("diversity", [
        _m("disagreement", "higher", "share of rows where two members predict different classes", "mean"),
        _m("kl", "higher", "mean KL divergence between members (nats)", "mean"),
        _m("cosine_similarity", "lower", "mean cosine similarity of members' probability vectors", "mean"),
        _m("double_fault", "lower", "share of rows both members of a pair get wrong", "mean"),
    ], {"members": _diversity}),
    _family("rejection", [
        _m("auc_rejection", "higher", "area under the accuracy (RMSE) vs rejected-fraction curve", "order",
           orientation_by_kind={"samples": "lower"}),
        _m("auc_oracle", "higher", "area under the oracle curve (rejects wrong rows / largest errors first)",
           "order", orientation_by_kind={"samples": "lower"}),
        _m("oracle_collaborative_accuracy", "higher", "accuracy when the --oca-fraction most uncertain rows "
                                                      "go to an oracle", "order", representations=CLASSIFICATION),
        _m("fractions", None, "rejected fractions of the curves", "curve"),
        _m("values", None, "accuracy (RMSE) of the kept rows at each rejected fraction", "curve"),
        _m("oracle_values", None, "oracle curve at each rejected fraction", "curve"),
    ], {**{k: _rejection_cls for k in CLASSIFICATION}, "samples": _rejection_samples}),
    _family("bayesian_ece", [
        _m("mean", "lower", "posterior mean of the top-label ECE", "resampling"),
        _m("q10", "lower", "10% posterior quantile of the ECE", "resampling"),
        _m("q50", "lower", "posterior median of the ECE", "resampling"),
        _m("q90", "lower", "90% posterior quantile of the ECE", "resampling"),
    ], {k: _bayesian_ece for k in CLASSIFICATION}),
    _family("spce", [
        _m("spce", "lower", "semiparametric L2 calibration error (binary or top-label)", "resampling"),
        _m("ci_low", None, "lower end of its 95% bootstrap confidence interval", "resampling"),
        _m("ci_high", None, "upper end of its 95% bootstrap confidence interval", "resampling"),
    ], {k: _spce for k in CLASSIFICATION}),
)

# --------------------------------------------------------------------------- calibration diagnostics (issue 15, part A)
# Opt-in (``--diagnostics``): CORP score decompositions, spread calibration, smooth ECE.


def binary_or_top_label(p: Prediction) -> tuple[np.ndarray, np.ndarray]:
    """``(forecast, outcome)`` of the binary event a classifier's calibration diagnostics look at:
    P(class 1) and ``label == 1`` for two classes, the top-label confidence and its correctness for more."""
    if p.proba.shape[1] == 2:
        return p.proba[:, 1], (p.labels == 1).astype(np.float64)
    return p.top_label()


def _corp(p, s: Settings) -> dict | None:
    from .metrics.corp import corp_classification, corp_mean

    if p.kind in CLASSIFICATION:
        return corp_classification(p.proba, p.labels)
    if p.kind == "quantiles":  # the pinball loss of each quantile (their median is no mean forecast)
        from .metrics.corp import corp_quantile
        from .metrics.intervals import level_key

        return {f"pinball_{level_key(t)}": corp_quantile(p.y_true, p.quantiles[:, j], float(t))
                for j, t in enumerate(p.levels)}
    point = p.point()
    return None if point is None else {"mse": corp_mean(p.y_true, point)}


def _spread_calibration(p, s: Settings) -> dict:
    from .metrics.spread import spread_calibration

    return spread_calibration(p.y_true, p.point(), p.spread(), num_bins=s.class_bins)


def _smooth_calibration(p, s: Settings) -> dict:
    from .metrics.smooth_ece import smooth_ece

    return smooth_ece(*binary_or_top_label(p))


FAMILIES = FAMILIES + (
    _family("corp", [
        _m("mcb", "lower", "CORP miscalibration: mean score minus that of the PAV-recalibrated forecast"),
        _m("dsc", "higher", "CORP discrimination: score of the climatology minus that of the recalibrated forecast"),
        _m("unc", None, "CORP uncertainty: mean score of the climatology (a property of the data)"),
    ], {**{k: _corp for k in REGRESSION}, **{k: _corp for k in CLASSIFICATION}},
        by_level=True, option="diagnostics"),
    _family("spread_calibration", [
        _m("ence", "lower", "expected normalised calibration error over sigma-sorted equal-count bins"),
        _m("uce", "lower", "uncertainty calibration error over equal-width bins of the predicted variance"),
        _m("cv", None, "coefficient of variation of the predicted sigma (descriptive: low = uninformative sigma)"),
    ], {"gaussian": _spread_calibration, "samples": _spread_calibration}, option="diagnostics"),
    _family("smooth_calibration", [
        _m("smece", "lower", "smooth ECE (binary: P(class 1); more classes: top label)"),
        _m("bandwidth", None, "the kernel bandwidth sigma* at which smece is evaluated (its fixed point)"),
    ], {k: _smooth_calibration for k in CLASSIFICATION}, option="diagnostics"),
)
# --------------------------------------------------------------------------- end of calibration diagnostics
# =========================================================================== issue 15 part B (opt-in: --diagnostics)
# calibration tests with p-values and conditional coverage. p-values rank nothing (orientation None: they
# weigh evidence, which grows with N); a check rule bounds them (`min = 0.01`).
PIT_TEST_KINDS = ("gaussian", "samples", "quantiles", "intervals")


def diagnostic_pit(p: Prediction, s: Settings) -> np.ndarray:
    """PIT values the calibration tests use: exact for Gaussians; for samples, quantiles and intervals
    drawn uniformly (seeded by ``Settings.seed``) inside each row's PIT interval
    (:func:`~uqeval.metrics.calibration_tests.randomised_pit`)."""
    from .metrics import calibration_tests as ct

    def make():
        if p.kind == "gaussian":
            return p.pit()
        if p.kind == "samples":
            lo, hi = p.map_rows(lambda m, y: ct.ensemble_pit_bounds(y, m), p.y_true)
        else:  # quantile levels the file carries (intervals: (1 -/+ level)/2 of each central level)
            lv = p.levels if p.kind == "quantiles" else np.unique(np.concatenate([(1 - p.levels) / 2, (1 + p.levels) / 2]))
            lo, hi = ct.quantile_pit_bounds(p.y_true, p.quantiles_at(lv), lv)
        return ct.randomised_pit(lo, hi, s.seed)

    return _memo(p, f"diagnostic_pit_{s.seed}", make)


def binary_events(p: Prediction) -> tuple[np.ndarray, np.ndarray]:
    """``(probability, event)``: P(class 1) and the label for 2 classes, else the top label's
    confidence and whether it is right (top-label calibration, as ``spce``)."""
    if p.proba.shape[1] == 2:
        return p.proba[:, 1], p.labels.astype(np.float64)
    return p.top_label()


def _calibration_tests(p, s: Settings) -> dict:
    from .metrics import calibration_tests as ct

    if p.n < 2:  # no test of a distribution from one row (the family is left out, as spce below 10 rows)
        return None
    if p.kind in CLASSIFICATION:
        return ct.binary_calibration_tests(*binary_events(p))
    u = diagnostic_pit(p, s)
    out = ct.pit_uniformity_tests(u)
    if p.kind == "samples" and not p.ragged:  # one rank histogram needs one member count
        out.update(ct.rank_histogram_test(u, p.samples.shape[1]))
    return out


def _conditional_coverage(p, s: Settings) -> dict:
    from .metrics.conditional_coverage import class_coverage, interval_ssc, set_ssc
    from .metrics.intervals import level_key

    out = {}
    if p.kind in CLASSIFICATION:
        from .metrics.classification import prediction_set_rows

        k = p.proba.shape[1]
        for lv in list(s.levels or (0.95,)):
            covered, size = prediction_set_rows(p.proba, p.labels, lv)
            out[level_key(lv)] = {**set_ssc(covered, size, lv, k), **class_coverage(covered, p.labels, k)}
        return out
    for lv in coverage_levels(p, s):
        lo, hi = p.interval(lv)
        out[level_key(lv)] = interval_ssc((p.y_true >= lo) & (p.y_true <= hi), hi - lo, lv)
    return out


DIAGNOSTIC_TEST_FAMILIES: tuple[Family, ...] = (
    _family("calibration_tests", [
        _m("pit_ks_stat", "lower", "Kolmogorov-Smirnov distance of the PIT to U(0, 1)", representations=PIT_TEST_KINDS),
        _m("pit_ks_p", None, "p-value of the KS test of PIT uniformity", representations=PIT_TEST_KINDS),
        _m("pit_cvm_stat", "lower", "Cramer-von Mises statistic of the PIT", representations=PIT_TEST_KINDS),
        _m("pit_cvm_p", None, "p-value of the Cramer-von Mises test of PIT uniformity", representations=PIT_TEST_KINDS),
        _m("pit_ad_stat", "lower", "Anderson-Darling statistic of the PIT", representations=PIT_TEST_KINDS),
        _m("pit_ad_p", None, "p-value of the Anderson-Darling test of PIT uniformity", representations=PIT_TEST_KINDS),
        _m("rank_histogram", None, "rank histogram: rows per rank 0..M of the target among the members",
           "histogram", representations=("samples",)),
        _m("rank_hist_chi2", "lower", "chi-squared statistic of the rank histogram against uniform",
           representations=("samples",)),
        _m("rank_hist_chi2_p", None, "p-value of the chi-squared test of the rank histogram (M df)",
           representations=("samples",)),
        _m("spiegelhalter_z", "target", "Spiegelhalter's z of binary (top-label) probabilities (target: 0)",
           "moments", representations=CLASSIFICATION),
        _m("spiegelhalter_p", None, "two-sided p-value of Spiegelhalter's z", "moments", representations=CLASSIFICATION),
        _m("hosmer_lemeshow_stat", "lower", "Hosmer-Lemeshow statistic (10 groups by deciles)",
           representations=CLASSIFICATION),
        _m("hosmer_lemeshow_p", None, "p-value of the Hosmer-Lemeshow test (chi-squared, one df per group: out of sample)",
           representations=CLASSIFICATION),
    ], {**{k: _calibration_tests for k in PIT_TEST_KINDS}, **{k: _calibration_tests for k in CLASSIFICATION}},
        option="diagnostics"),
    _family("conditional_coverage", [
        _m("ssc_violation", "lower", "max over set-size / width strata of |coverage - level|"),
        _m("worst_stratum_coverage", "target", "lowest coverage of a set-size / width stratum (target: the level)"),
        _m("worst_class", None, "the class whose rows are covered least often", representations=CLASSIFICATION),
        _m("worst_class_coverage", "target", "coverage of the worst class (target: the level)",
           representations=CLASSIFICATION),
        # filled by `score --by` from the per-group coverage (uqeval.tasks.score), not by a representation
        _m("worst_group", None, "the --by group with the lowest coverage", representations=()),
        _m("worst_group_coverage", "target", "coverage of the worst --by group (target: the level)",
           representations=()),
    ], {**{k: _conditional_coverage for k in PIT_TEST_KINDS}, **{k: _conditional_coverage for k in CLASSIFICATION}},
        by_level=True, option="diagnostics"),
)
FAMILIES = FAMILIES + DIAGNOSTIC_TEST_FAMILIES
# =========================================================================== end of issue 15 part B

# --------------------------------------------------------------------------- forecast verification (issue 16 A)
# Opt-in groups: weighted_scoring (--tw-threshold), exceedance (--threshold), murphy (--murphy).
# Kernels: metrics/weighted.py, metrics/exceedance.py, metrics/murphy.py.


def _region(s: Settings) -> tuple[float, float]:
    a, b = s.tw_threshold
    return (-np.inf if a is None else a, np.inf if b is None else b)


def _rows_weighted(p, s, level) -> dict[str, RowStat] | None:
    from .metrics import weighted

    if s.tw_threshold is None:  # the group is off (reached through compare's catalogue lookups)
        return None
    region = _region(s)
    if p.kind == "gaussian":
        return {"twcrps": RowStat(score=weighted.twcrps_gaussian(p.y_true, p.mean, p.std, region)),
                "owcrps": RowStat(score=weighted.owcrps_gaussian(p.y_true, p.mean, p.std, region))}
    if p.kind == "samples":
        tw, ow = p.map_rows(lambda m, y: (weighted.twcrps_samples(y, m, region), weighted.owcrps_samples(y, m, region)),
                            p.y_true)
        return {"twcrps": RowStat(score=tw), "owcrps": RowStat(score=ow)}
    if p.kind in ("quantiles", "intervals"):  # the quantile CRPS of the chained quantiles (no owCRPS: README)
        return {"twcrps": RowStat(score=weighted.twcrps_quantiles(p.y_true, *_quantile_table(p), region))}
    return None


def _weighted(p, s: Settings) -> dict | None:
    rows_ = _rows_weighted(p, s, None)
    return None if rows_ is None else {k: float(v.score.mean()) for k, v in rows_.items()}


def _quantile_table(p) -> tuple[np.ndarray, np.ndarray]:
    """``(quantiles, levels)`` of a quantile or interval forecast (interval ends as quantiles, rows sorted)."""
    if p.kind == "quantiles":
        return p.quantiles, p.levels
    levels = np.concatenate([(1.0 - p.levels) / 2.0, (1.0 + p.levels) / 2.0])
    order = np.argsort(levels, kind="stable")
    return np.sort(np.column_stack([p.lower, p.upper])[:, order], axis=1), levels[order]


def exceedance_probability(p: Prediction, t: float) -> np.ndarray:
    """P(Y > t) per row from any regression representation (:mod:`uqeval.metrics.exceedance`)."""
    from .metrics import exceedance as ex

    if p.kind == "gaussian":
        return ex.exceedance_gaussian(p.mean, p.std, t)
    if p.kind == "samples":
        return ex.exceedance_samples(p.samples, t)
    if p.kind == "point":
        return ex.exceedance_point(p.point(), t)
    return ex.exceedance_quantiles(*_quantile_table(p), t)


def _rows_exceedance(p, s, level) -> dict[str, RowStat] | None:
    from .metrics.exceedance import exceedance_scores

    try:
        t = float(level)
    except (TypeError, ValueError):
        return None
    return {k: RowStat(score=v) for k, v in exceedance_scores(p.y_true, exceedance_probability(p, t), t).items()}


def _exceedance(p, s: Settings) -> dict | None:
    from .metrics.intervals import level_key

    if not s.thresholds:
        return None
    out = {}
    for t in s.thresholds:
        key = level_key(t)
        out[key] = {k: float(v.score.mean()) for k, v in _rows_exceedance(p, s, key).items()}
    return out


def murphy_forecasts(p: Prediction) -> dict[str, tuple[np.ndarray, np.ndarray, str, float]]:
    """``{label: (forecast, target, functional, alpha)}`` of the Murphy curves of one prediction.

    Labels: ``mean`` (the point forecast as a mean, expectile 1/2: Gaussians, points, samples, intervals
    with a mean), ``quantile <level>`` (quantiles), ``probability <class>`` (classifiers: each class's
    probability against its indicator, the event's mean; binary: class 1 only).
    """
    from .metrics.intervals import level_key

    if p.kind in CLASSIFICATION:
        proba = p.proba
        classes = [1] if proba.shape[1] == 2 else list(range(proba.shape[1]))
        return {f"probability {k}": (proba[:, k], (p.labels == k).astype(np.float64), "expectile", 0.5)
                for k in classes}
    if p.kind == "quantiles":
        return {f"quantile {level_key(a)}": (p.quantiles[:, j], p.y_true, "quantile", float(a))
                for j, a in enumerate(p.levels)}
    x = p.point()
    return {} if x is None else {"mean": (x, p.y_true, "expectile", 0.5)}


def murphy_curves(p: Prediction, thetas: np.ndarray | None = None) -> dict:
    """``{"thetas": grid, "mean" | "quantile" | "probability": curves}`` of one prediction
    (:func:`murphy_forecasts`; quantile and probability curves keyed by level / class). ``thetas``: a given
    grid (compare uses one grid for every model), else :func:`uqeval.metrics.murphy.theta_grid` over the
    forecasts and targets ([0, 1] for probabilities)."""
    from .metrics.murphy import murphy_curve, theta_grid

    fc = murphy_forecasts(p)
    if not fc:
        return {}
    if thetas is None:
        probability = p.kind in CLASSIFICATION
        thetas = theta_grid(bounds=(0.0, 1.0)) if probability else theta_grid(p.y_true, *(v[0] for v in fc.values()))
    out: dict = {"thetas": np.asarray(thetas, dtype=np.float64).tolist()}
    for label, (x, y, functional, alpha) in fc.items():
        curve = murphy_curve(x, y, thetas, functional, alpha).tolist()
        if label == "mean":
            out["mean"] = curve
        else:
            head, key = label.split(" ", 1)
            out.setdefault(head, {})[key] = curve
    return out


def _murphy(p, s: Settings) -> dict | None:
    return murphy_curves(p) or None


#: The flag that turns on each opt-in family's Settings field (for messages).
OPTION_FLAGS = {"diagnostics": "--diagnostics", "tw_threshold": "--tw-threshold", "thresholds": "--threshold",
                "murphy": "--murphy"}


def settings_for_paths(settings: Settings, paths) -> Settings:
    """``settings`` with the opt-ins that metric ``paths`` (check rules) name and that need no value:
    ``murphy.*`` turns on ``murphy``, ``exceedance.<t>.<metric>`` adds the threshold ``t``. The
    region of ``weighted_scoring`` is not in its paths: it must come from ``--tw-threshold``."""
    from dataclasses import replace

    from .glossary import canonical_path

    thresholds = list(settings.thresholds or ())
    murphy = settings.murphy
    for path in paths:
        head = str(path).split(".", 1)[0]
        if head == "murphy":
            murphy = True
        elif head == "exceedance":
            rest = str(path)[len("exceedance."):]
            name = canonical_path(path).split(".")[-1]
            try:
                t = float(rest[: len(rest) - len(name) - 1]) if rest.endswith("." + name) else None
            except ValueError:
                t = None
            if t is not None and np.isfinite(t) and t not in thresholds:
                thresholds.append(t)
    return replace(settings, thresholds=tuple(thresholds) or None, murphy=murphy)


FAMILIES = FAMILIES + (
    _family("weighted_scoring", [
        _m("twcrps", "lower", "threshold-weighted CRPS on the --tw-threshold region", "mean"),
        _m("owcrps", "lower", "outcome-weighted CRPS on the --tw-threshold region", "mean",
           representations=("gaussian", "samples")),
    ], {k: _weighted for k in ("gaussian", "samples", "quantiles", "intervals")}, rows=_rows_weighted,
        option="tw_threshold"),
    _family("exceedance", [
        _m("brier", "lower", "Brier score of P(Y > t) for the event Y > t (per --threshold t)", "mean"),
        _m("crps", "lower", "CRPS of the binary event forecast (equals its Brier score)", "mean"),
    ], {k: _exceedance for k in REGRESSION}, rows=_rows_exceedance, by_level=True, option="thresholds"),
    _family("murphy", [
        _m("thetas", None, "threshold grid θ of the Murphy curves", "curve"),
        _m("mean", None, "mean elementary (expectile 1/2) score of the mean forecast at each θ", "curve",
           representations=("gaussian", "point", "samples", "intervals")),
        _m("quantile", None, "mean elementary quantile score of each quantile level at each θ", "curve",
           representations=("quantiles",)),
        _m("probability", None, "mean elementary score of each class probability at each θ in [0, 1]", "curve",
           representations=CLASSIFICATION),
    ], {**{k: _murphy for k in ("gaussian", "point", "samples", "intervals", "quantiles")},
        **{k: _murphy for k in CLASSIFICATION}}, option="murphy"),
)
# --------------------------------------------------------------------------- forecast verification (issue 16, part B)
# Multivariate ensembles (y_1..y_d, m<j>_<k>): the energy score and the variogram score of order 1/2, both
# means of per-row scores. Skill scores need a second prediction (the reference) and are computed by the
# task layer (uqeval.tasks.skill), which declares their orientation in the summary.
VARIOGRAM_ORDER = 0.5


def _rows_multivariate(p, s, level) -> dict[str, RowStat]:
    from .metrics.multivariate import energy_score, variogram_score

    return {"energy": RowStat(score=energy_score(p.y_true, p.samples)),
            "variogram": RowStat(score=variogram_score(p.y_true, p.samples, VARIOGRAM_ORDER))}


def _multivariate(p, s: Settings) -> dict:
    rows_ = _memo(p, ("rows", "multivariate", None, s.resolution, s.num_bins, s.y_std, None),  # as family_rows
                  lambda: _rows_multivariate(p, s, None))
    return {k: float(v.score.mean()) for k, v in rows_.items()}


FAMILIES = FAMILIES + (
    _family("multivariate", [
        _m("energy", "lower", "energy score (beta = 1) of the multivariate ensemble", "mean"),
        _m("variogram", "lower", "variogram score of order 0.5 (unit weights)", "mean"),
    ], {"multivariate": _multivariate}, rows=_rows_multivariate),
)

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
    ``coverage.coverage_error`` at 0.
    """
    if key == "coverage_error" or (group, key) == ("calibration_tests", "spiegelhalter_z"):
        return 0.0
    if level is None:
        return None
    if key == "coverage" and group in ("coverage", "prediction_sets"):
        return float(level)
    if group == "conditional_coverage" and key.endswith("_coverage"):  # worst stratum / class / group
        return float(level)
    if group == "coverage" and key in ("miss_below", "miss_above"):
        return (1.0 - float(level)) / 2.0
    return None


def orientation_of(result: Mapping[str, Any], family: Family, kind: str) -> dict[str, str]:
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
    from .validation import trusted

    fn = family.compute.get(pred.kind)
    if fn is None:
        return None
    with trusted():
        return fn(pred, settings)


def compute_metrics(pred: Prediction, settings: Settings,
                    skipped: list[tuple[str, str]] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """Every applicable family for ``pred``: ``(metrics, orientation)``.

    ``skipped``: when given, a family whose metrics are not defined for this data (an
    :class:`InputError`, e.g. too few rows) is left out and ``(family, reason)`` appended.
    """
    metrics: dict[str, Any] = {}
    orientation: dict[str, str] = {}
    for f in families_for(pred.kind, settings):
        try:
            result = compute(f, pred, settings)
        except InputError as exc:
            if skipped is None:
                raise
            skipped.append((f.name, str(exc)))
            continue
        if result is None:
            continue
        metrics[f.name] = result
        orientation.update(orientation_of(result, f, pred.kind))
    return metrics, orientation


def rows(metric: Metric, pred: Prediction, settings: Settings, level: str | None = None) -> RowStat | None:
    """The per-row form of ``metric`` for ``pred`` (``level``: the level key of a by-level metric)."""
    if metric.rows_fn is None or not metric.applies_to(pred.kind) or pred.y_true is None and pred.kind != "loglik":
        return None
    from .validation import trusted

    with trusted():
        stat = metric.rows_fn(pred, settings, level)
    return stat if stat is not None and stat.resampler() is not None else None
