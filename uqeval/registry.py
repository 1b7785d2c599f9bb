"""The one dispatch table: which metric groups apply to which representation, and how.

``score``, ``check``, ``compare`` and ``report`` all read :data:`GROUPS`.
Each :class:`MetricGroup` declares its metrics (name and orientation) and one
compute function per representation it supports. Orientation is declared here
and written to the JSON summary, never guessed from a name:

* ``"lower"``  -- a loss, lower is better;
* ``"higher"`` -- higher is better;
* ``"target"`` -- closest to a target is better (e.g. coverage -> its level,
  coverage_error -> 0).

Compute functions take ``(prediction, settings)`` and return a dict whose keys
are the group's metric names (level-keyed groups return ``{level: {...}}``).
Metric modules are imported inside the compute functions so that importing
the registry stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from .config import Settings
from .errors import InputError
from .predictions import Prediction

Compute = Callable[[Prediction, Settings], dict]


@dataclass(frozen=True)
class MetricSpec:
    name: str
    orientation: str  # "lower" | "higher" | "target"
    description: str = ""


@dataclass(frozen=True)
class MetricGroup:
    name: str
    metrics: tuple[MetricSpec, ...]
    compute: Mapping[str, Compute]  # representation kind -> function
    by_level: bool = False          # result is {level_key: {metric: value}}
    # kind -> {metric: orientation} where a metric's direction depends on the representation
    # (rejection curves: accuracy for classifiers, higher is better; RMSE for regression, lower)
    orientation_by_kind: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    @property
    def representations(self) -> tuple[str, ...]:
        return tuple(self.compute)

    def orientation(self, result: dict | None = None, kind: str | None = None) -> dict[str, str]:
        """``{"group.key": orientation}``, restricted to the keys present in ``result`` if given.

        ``kind`` (a representation) applies :attr:`orientation_by_kind`.
        """
        present = None
        if result is not None:
            present = set()
            for k, v in result.items():
                present.update(v.keys() if self.by_level and isinstance(v, dict) else [k])
        override = self.orientation_by_kind.get(kind, {}) if kind is not None else {}
        return {f"{self.name}.{m.name}": override.get(m.name, m.orientation)
                for m in self.metrics if present is None or m.name in present}


def _m(*specs: tuple[str, str, str]) -> tuple[MetricSpec, ...]:
    return tuple(MetricSpec(*s) for s in specs)


# --------------------------------------------------------------------------- helpers
def point_prediction(p) -> np.ndarray | None:
    """The point prediction of a regression representation, or None when it has none."""
    kind = p.kind
    if kind in ("gaussian", "point"):
        return p.mean
    if kind == "intervals":
        return p.mean
    if kind == "quantiles":
        i = np.flatnonzero(np.abs(p.levels - 0.5) < 1e-9)
        return p.quantiles[:, i[0]] if i.size else None
    if kind == "samples":
        return _samples_moments(p)[0]
    raise AssertionError(kind)


def _samples_moments(p) -> tuple[np.ndarray, np.ndarray]:
    from .metrics.samples import ensemble_mean_std

    cache = p.__dict__.setdefault("_cache", {})  # frozen dataclass: memo in the instance dict
    if "moments" not in cache:
        cache["moments"] = p.map_rows(ensemble_mean_std)
    return cache["moments"]


def _samples_pit(p) -> np.ndarray:
    from .metrics.samples import pit_samples

    cache = p.__dict__.setdefault("_cache", {})
    if "pit" not in cache:
        cache["pit"] = p.map_rows(lambda s, y: pit_samples(y, s), p.y_true)
    return cache["pit"]


def _expected(s: Settings) -> np.ndarray:
    return np.linspace(0.0, 1.0, s.num_bins)


def coverage_levels(p, s: Settings) -> list[float]:
    """Levels at which a representation yields central intervals.

    Gaussians and samples: ``--levels`` (default 0.95). Quantiles and intervals: the
    levels they carry, or the requested subset of them (a requested level they do
    not carry is an error).
    """
    from .metrics.intervals import central_pairs

    if p.kind in ("gaussian", "samples"):
        return list(s.levels or (0.95,))
    if p.kind == "quantiles":
        carried = [lv for _, _, lv in central_pairs(p.levels)]
    elif p.kind == "intervals":
        carried = [float(v) for v in p.levels]
    else:
        return []
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


def intervals_at(p, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Central interval at ``level`` from any interval-yielding representation (exact conversions)."""
    from .metrics.intervals import central_pairs, gaussian_interval, level_key

    if p.kind == "gaussian":
        return gaussian_interval(p.mean, p.std, level)
    if p.kind == "samples":
        from .metrics.samples import empirical_quantiles

        q = p.map_rows(lambda s: empirical_quantiles(s, np.array([(1 - level) / 2, (1 + level) / 2])))
        return q[:, 0], q[:, 1]
    if p.kind == "quantiles":
        for i, j, lv in central_pairs(p.levels):
            if level_key(lv) == level_key(level):
                return p.quantiles[:, i], p.quantiles[:, j]
    if p.kind == "intervals":
        for j, lv in enumerate(p.levels):
            if level_key(lv) == level_key(level):
                return p.lower[:, j], p.upper[:, j]
    raise KeyError(level)


# --------------------------------------------------------------------------- compute functions
def _accuracy(p, s: Settings) -> dict | None:
    from .metrics.accuracy import regression_accuracy

    point = point_prediction(p)
    return None if point is None else regression_accuracy(p.y_true, point)


def _accuracy_cls(p, s: Settings) -> dict:
    from .metrics.classification import classification_accuracy

    return classification_accuracy(p.proba, p.labels)


def _avg_cal_gaussian(p, s: Settings) -> dict:
    from .metrics.calibration import avg_calibration_gaussian

    return avg_calibration_gaussian(p.y_true, p.mean, p.std, num_bins=s.num_bins)


def _avg_cal_samples(p, s: Settings) -> dict:
    from .metrics.calibration import calibration_errors
    from .metrics.quantiles import interval_calibration_curve_from_pit, pit_histogram

    expected = _expected(s)
    pit = _samples_pit(p)
    out = calibration_errors(expected, interval_calibration_curve_from_pit(pit, expected))
    out["pit_histogram"] = pit_histogram(pit, bins=10)
    return out


def _avg_cal_quantiles(p, s: Settings) -> dict:
    from .metrics.calibration import calibration_errors
    from .metrics.quantiles import pit_histogram_quantiles, quantile_calibration_curve

    out = calibration_errors(*quantile_calibration_curve(p.y_true, p.quantiles, p.levels))
    out["pit_histogram"] = pit_histogram_quantiles(p.y_true, p.quantiles, p.levels)
    return out


def _adv_kwargs(s: Settings) -> dict:
    return dict(group_fractions=np.linspace(0.01, 1.0, s.adv_num_group_sizes), num_trials=s.adv_num_trials,
                num_group_draws=s.adv_num_group_draws, seed=s.seed)


def _adv_gaussian(p, s: Settings) -> dict:
    from .metrics.calibration import adversarial_group_calibration_gaussian

    return adversarial_group_calibration_gaussian(p.y_true, p.mean, p.std, num_bins=s.num_bins, **_adv_kwargs(s))


def _adv_samples(p, s: Settings) -> dict:
    from .metrics.calibration import adversarial_group_calibration
    from .metrics.quantiles import pit_cover_index

    expected = _expected(s)
    return adversarial_group_calibration(pit_cover_index(_samples_pit(p), expected), expected, **_adv_kwargs(s))


def _sharpness_gaussian(p, s: Settings) -> dict:
    from .metrics.sharpness import sharpness

    return sharpness(p.std)


def _sharpness_samples(p, s: Settings) -> dict:
    from .metrics.sharpness import sharpness

    return sharpness(_samples_moments(p)[1])


def _scoring_gaussian(p, s: Settings) -> dict:
    from .metrics.scoring import scoring_rules_gaussian

    return scoring_rules_gaussian(p.y_true, p.mean, p.std, resolution=s.resolution)


def _scoring_samples(p, s: Settings) -> dict:
    from .metrics.samples import crps_ensemble_and_fair

    crps, fair = p.map_rows(lambda s, y: crps_ensemble_and_fair(y, s), p.y_true)
    return {"crps": float(crps.mean()), "crps_fair": float(fair.mean())}


def _scoring_quantiles(p, s: Settings) -> dict:
    from .metrics.quantiles import quantile_scores

    return quantile_scores(p.y_true, p.quantiles, p.levels)


def _scoring_intervals(p, s: Settings) -> dict:
    from .metrics.intervals import level_key
    from .metrics.scoring import interval_score

    by_level = {level_key(lv): float(interval_score(p.y_true, p.lower[:, j], p.upper[:, j], lv).mean())
                for j, lv in enumerate(p.levels)}
    return {"interval": float(np.mean(list(by_level.values()))), "interval_by_level": by_level}


def _reliability_gaussian(p, s: Settings) -> dict:
    from .metrics.reliability import reliability_gaussian

    return reliability_gaussian(p.y_true, p.mean, p.std)


def _reliability_samples(p, s: Settings) -> dict:
    from .metrics.reliability import max_calibration_error

    return {"max_cal_err": max_calibration_error(_samples_pit(p))}


def _coverage(p, s: Settings) -> dict:
    from .metrics.intervals import coverage_metrics, level_key

    out = {}
    for lv in coverage_levels(p, s):
        lo, hi = intervals_at(p, lv)
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


# --------------------------------------------------------------------------- ensembles and Bayesian outputs
def per_row_uncertainty(p) -> dict[str, np.ndarray] | None:
    """Per-row ``total``/``aleatoric``/``epistemic`` (nats) of an ensemble or Dirichlet prediction, else None.

    Ensembles (``members``): entropy of the mean, mean member entropy and their difference
    (mutual information). Dirichlet outputs: the same decomposition of Dir(alpha); the
    epistemic part is the knowledge uncertainty MI[y, pi]. Computed once per prediction.
    """
    from .metrics.ensembles import dirichlet_uncertainty_per_row, ensemble_uncertainty_per_row

    if p.kind not in ("members", "dirichlet"):
        return None
    cache = p.__dict__.setdefault("_cache", {})
    if "uncertainty_rows" not in cache:
        cache["uncertainty_rows"] = (ensemble_uncertainty_per_row(p.member_proba) if p.kind == "members"
                                     else dirichlet_uncertainty_per_row(p.alpha))
    return cache["uncertainty_rows"]


def _ensemble_uncertainty(p, s: Settings) -> dict:
    out = {k: float(v.mean()) for k, v in per_row_uncertainty(p).items()}
    if p.kind == "dirichlet":
        out["knowledge"] = out["epistemic"]  # the prior-network name of the same quantity
    return out


def _information_criteria(p, s: Settings) -> dict | None:
    from .metrics.ensembles import information_criteria

    return None if p.loglik is None else information_criteria(p.loglik)


def _diversity(p, s: Settings) -> dict:
    from .metrics.ensembles import diversity

    return diversity(p.member_proba, p.labels)


def _top_label(p) -> tuple[np.ndarray, np.ndarray]:
    """Confidence (max probability of the predictive distribution) and correctness of each row."""
    proba = p.proba
    pred = np.argmax(proba, axis=1)
    return proba[np.arange(len(pred)), pred], (pred == p.labels).astype(np.float64)


def _rejection_cls(p, s: Settings) -> dict:
    from .metrics.ensembles import oracle_collaborative_accuracy, rejection_curve

    conf, correct = _top_label(p)
    uncertainty = 1.0 - conf  # the same ranking for plain classifiers, ensembles and Dirichlet outputs
    curve = rejection_curve(correct, uncertainty, kind="accuracy")
    oca = oracle_collaborative_accuracy(correct, uncertainty, fraction=s.oca_fraction)
    return {"auc_rejection": curve["auc_rejection"], "auc_oracle": curve["auc_oracle"],
            "oracle_collaborative_accuracy": oca, "fractions": curve["fractions"], "values": curve["values"],
            "oracle_values": curve["oracle_values"]}


def _rejection_samples(p, s: Settings) -> dict:
    from .metrics.ensembles import rejection_curve

    mean, std = _samples_moments(p)
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


REGRESSION = ("gaussian", "point", "intervals", "quantiles", "samples")
CLASSIFICATION = ("categorical", "members", "dirichlet")  # all have .proba (the predictive mean) and .labels

GROUPS: list[MetricGroup] = [
    MetricGroup(
        "accuracy",
        _m(("mae", "lower", "mean absolute error"),
           ("rmse", "lower", "root mean squared error"),
           ("mdae", "lower", "median absolute error"),
           ("marpd", "lower", "mean absolute relative percent difference"),
           ("r2", "higher", "coefficient of determination"),
           ("corr", "higher", "Pearson correlation of prediction and target"),
           ("accuracy", "higher", "share of rows whose top class is the label"),
           ("nll", "lower", "log loss"),
           ("brier", "lower", "Brier score, sum over classes, in [0, 2]"),
           ("brier_um", "lower", "Brier score in the Uncertainty Metrics convention (brier - 1)")),
        {**{k: _accuracy for k in REGRESSION}, **{k: _accuracy_cls for k in CLASSIFICATION}},
    ),
    MetricGroup(
        "avg_calibration",
        _m(("rms_cal", "lower", "root mean squared calibration error"),
           ("ma_cal", "lower", "mean absolute calibration error"),
           ("miscal_area", "lower", "miscalibration area")),
        {"gaussian": _avg_cal_gaussian, "samples": _avg_cal_samples, "quantiles": _avg_cal_quantiles},
    ),
    MetricGroup(
        "adv_group_calibration",
        _m(("ma_mean", "lower", "mean worst-group MA calibration error per group size"),
           ("ma_stderr", "lower", "standard error of ma_mean"),
           ("rms_mean", "lower", "mean worst-group RMS calibration error per group size"),
           ("rms_stderr", "lower", "standard error of rms_mean")),
        {"gaussian": _adv_gaussian, "samples": _adv_samples},
    ),
    MetricGroup(
        "sharpness",
        _m(("sharp", "lower", "root mean predicted variance"),
           ("mean_std", "lower", "mean predicted standard deviation")),
        {"gaussian": _sharpness_gaussian, "samples": _sharpness_samples},
    ),
    MetricGroup(
        "scoring_rule",
        _m(("nll", "lower", "Gaussian negative log-likelihood"),
           ("crps", "lower", "continuous ranked probability score"),
           ("crps_fair", "lower", "unbiased (fair) ensemble CRPS"),
           ("check", "lower", "check (pinball) score averaged over levels"),
           ("interval", "lower", "interval score (averaged over levels)"),
           ("pinball", "lower", "pinball loss averaged over the quantile levels"),
           ("pinball_by_level", "lower", "pinball loss per quantile level"),
           ("interval_by_level", "lower", "interval score per central level"),
           ("wis", "lower", "weighted interval score")),
        {"gaussian": _scoring_gaussian, "samples": _scoring_samples, "quantiles": _scoring_quantiles,
         "intervals": _scoring_intervals},
    ),
    MetricGroup(
        "reliability",
        _m(("rs", "lower", "ACCRUE reliability score"),
           ("max_cal_err", "lower", "bin-free maximum calibration error of the PIT"),
           ("accrue", "lower", "ACCRUE cost")),
        {"gaussian": _reliability_gaussian, "samples": _reliability_samples},
    ),
    MetricGroup(
        "coverage",
        _m(("coverage", "target", "share of targets inside the central interval (target: the level)"),
           ("width", "lower", "mean interval width"),
           ("width_norm", "lower", "mean width in units of the training targets' std"),
           ("coverage_error", "target", "coverage minus level (target: 0)"),
           ("miss_below", "target", "share of targets below the interval (target: (1 - level)/2)"),
           ("miss_above", "target", "share of targets above the interval (target: (1 - level)/2)")),
        {"gaussian": _coverage, "samples": _coverage, "quantiles": _coverage, "intervals": _coverage},
        by_level=True,
    ),
    MetricGroup(
        "brier_decomposition",
        _m(("uncertainty", "lower", "uncertainty of the labels alone (a property of the data)"),
           ("resolution", "higher", "resolution"),
           ("reliability", "lower", "reliability (calibration) term")),
        {k: _brier_decomposition for k in CLASSIFICATION},
    ),
    MetricGroup(
        "calibration",
        _m(("ece", "lower", "expected calibration error"),
           ("rmsce", "lower", "root mean squared calibration error"),
           ("mce", "lower", "maximum calibration error"),
           ("sce", "lower", "static calibration error"),
           ("ace", "lower", "adaptive calibration error"),
           ("tace", "lower", "thresholded adaptive calibration error")),
        {k: _calibration_cls for k in CLASSIFICATION},
    ),
    MetricGroup(
        "prediction_sets",
        _m(("coverage", "target", "share of rows whose set holds the label (target: the level)"),
           ("mean_size", "lower", "mean number of classes in the set")),
        {k: _prediction_sets for k in CLASSIFICATION},
        by_level=True,
    ),
    # ensembles and Bayesian outputs (Google Uncertainty Metrics). The entropies are descriptive, like
    # sharpness: "lower" means a more certain model, which is better only if it stays calibrated.
    MetricGroup(
        "ensemble_uncertainty",
        _m(("total", "lower", "entropy of the mean prediction, averaged over rows (nats)"),
           ("aleatoric", "lower", "mean member entropy (expected data uncertainty, nats)"),
           ("epistemic", "lower", "mutual information = total - aleatoric (nats)"),
           ("knowledge", "lower", "Dirichlet outputs: knowledge uncertainty MI[y, pi] (= epistemic, nats)")),
        {"members": _ensemble_uncertainty, "dirichlet": _ensemble_uncertainty},
    ),
    MetricGroup(
        "information_criteria",
        _m(("waic1", "higher", "negative WAIC type 1 (expected log predictive density per row)"),
           ("waic2", "higher", "negative WAIC type 2"),
           ("iscv", "higher", "importance-sampling cross-validation log predictive density"),
           ("waic1_se", "lower", "standard error of waic1 over rows"),
           ("waic2_se", "lower", "standard error of waic2 over rows"),
           ("iscv_se", "lower", "standard error of iscv over rows")),
        {k: _information_criteria for k in (*REGRESSION, *CLASSIFICATION, "loglik")},
    ),
    MetricGroup(
        "diversity",
        _m(("disagreement", "higher", "share of rows where two members predict different classes"),
           ("kl", "higher", "mean KL divergence between members (nats)"),
           ("cosine_similarity", "lower", "mean cosine similarity of members' probability vectors"),
           ("double_fault", "lower", "share of rows both members of a pair get wrong")),
        {"members": _diversity},
    ),
    MetricGroup(
        "rejection",
        _m(("auc_rejection", "higher", "area under the accuracy (RMSE) vs rejected-fraction curve"),
           ("auc_oracle", "higher", "area under the oracle curve (rejects wrong rows / largest errors first)"),
           ("oracle_collaborative_accuracy", "higher", "accuracy when the --oca-fraction most uncertain rows "
                                                        "go to an oracle"),
           ("values", "higher", "accuracy (RMSE) of the kept rows at each rejected fraction"),
           ("oracle_values", "higher", "oracle curve at each rejected fraction")),
        {**{k: _rejection_cls for k in CLASSIFICATION}, "samples": _rejection_samples},
        orientation_by_kind={"samples": {"auc_rejection": "lower", "auc_oracle": "lower", "values": "lower",
                                         "oracle_values": "lower"}},
    ),
    MetricGroup(
        "bayesian_ece",
        _m(("mean", "lower", "posterior mean of the top-label ECE"),
           ("q10", "lower", "10% posterior quantile of the ECE"),
           ("q50", "lower", "posterior median of the ECE"),
           ("q90", "lower", "90% posterior quantile of the ECE")),
        {k: _bayesian_ece for k in CLASSIFICATION},
    ),
    MetricGroup(
        "spce",
        _m(("spce", "lower", "semiparametric L2 calibration error (binary or top-label)"),
           ("ci_low", "lower", "lower end of its 95% bootstrap confidence interval"),
           ("ci_high", "lower", "upper end of its 95% bootstrap confidence interval")),
        {k: _spce for k in CLASSIFICATION},
    ),
]


def metric_target(group: str, key: str, level: float | None = None) -> float | None:
    """Target value of a ``"target"``-oriented metric; None when it depends on an unknown level.

    ``coverage.coverage`` and ``prediction_sets.coverage`` aim at their level,
    ``coverage.miss_below``/``miss_above`` at half the nominal miss rate (1 - level)/2, and
    ``coverage.coverage_error`` at 0.
    """
    if key == "coverage_error":
        return 0.0
    if level is None:
        return None
    if key == "coverage" and group in ("coverage", "prediction_sets"):
        return float(level)
    if group == "coverage" and key in ("miss_below", "miss_above"):
        return (1.0 - float(level)) / 2.0
    return None


def groups_for(kind: str) -> list[MetricGroup]:
    return [g for g in GROUPS if kind in g.compute]


def get_group(name: str) -> MetricGroup:
    for g in GROUPS:
        if g.name == name:
            return g
    raise KeyError(name)


def compute_metrics(pred: Prediction, settings: Settings,
                    skipped: list[tuple[str, str]] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """Every applicable group for ``pred``: ``(metrics, orientation)``.

    ``skipped``: when given, a group whose metrics are not defined for this data (an
    :class:`InputError`, e.g. too few rows) is left out and ``(group, reason)`` appended.
    """
    metrics: dict[str, Any] = {}
    orientation: dict[str, str] = {}
    for g in groups_for(pred.kind):
        try:
            result = g.compute[pred.kind](pred, settings)
        except InputError as exc:
            if skipped is None:
                raise
            skipped.append((g.name, str(exc)))
            continue
        if result is None:
            continue
        metrics[g.name] = result
        orientation.update(g.orientation(result, pred.kind))
    return metrics, orientation
