"""The default metric families: accuracy, calibration, sharpness, scoring rules, reliability, coverage,
classification and ensembles (every ``uqeval score`` runs these)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np

from ..config import Settings
from ..metrics.blocks import row_mean, rowwise
from ..metrics.intervals import coverage_from_bounds, coverage_metrics, coverage_rows, level_key
from ..metrics.samples import crps_ensemble_and_fair
from ..metrics.spread import spread_skill
from ..predictions import Prediction, Quantiles
from .core import (
    CLASSIFICATION,
    REGRESSION,
    Family,
    RowStat,
    _cover_index,
    _expected,
    _family,
    _m,
    _member_rows,
    _memo,
    coverage_levels,
    error_spread,
    per_row_uncertainty,
)

# --------------------------------------------------------------------------- family compute functions


def _accuracy(p, s: Settings) -> dict | None:
    from ..metrics.accuracy import regression_accuracy

    point = p.point()
    return None if point is None else regression_accuracy(p.y_true, point)


def _accuracy_cls(p, s: Settings) -> dict:
    from ..metrics.classification import classification_accuracy

    return classification_accuracy(p.proba, p.labels)


def calibration_curve(
    p: Prediction, s: Settings, weights: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(expected, observed)``: the average calibration curve that ``avg_calibration`` summarises.

    Forecasts with every level (Gaussians, samples): interval mode at ``linspace(0, 1, num_bins)``
    (:func:`~uqeval.metrics.calibration.observed_from_cover_index`); quantiles: quantile mode at
    the levels the file carries (:func:`~uqeval.metrics.quantiles.quantile_calibration_curve`).
    ``weights`` (N,): the weighted curve (each row counted with its weight; the curve whose errors are the
    weighted ``avg_calibration`` metrics), for plots of weighted rows.
    """
    if p.quantile_keys() is None:
        from ..metrics.calibration import observed_from_cover_index

        return _expected(s), observed_from_cover_index(_cover_index(p, s), s.num_bins, weights)
    from ..metrics.quantiles import quantile_calibration_curve

    q = cast("Quantiles", p)  # it carries quantile keys: a Quantiles container
    # no targets (y_true None) is rejected inside, with an InputError from as_float_array
    return quantile_calibration_curve(q.y_true, q.quantiles, q.levels, weights)  # type: ignore[arg-type]


def _avg_cal_gaussian(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.calibration import calibration_errors

    return calibration_errors(*calibration_curve(p, s, w))


def _avg_cal_samples(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.quantiles import pit_histogram

    out = _avg_cal_gaussian(p, s, w)
    out["pit_histogram"] = pit_histogram(p.pit(), bins=10, weights=w)
    return out


def _avg_cal_quantiles(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.quantiles import pit_histogram_quantiles

    out = _avg_cal_gaussian(p, s, w)
    out["pit_histogram"] = pit_histogram_quantiles(p.y_true, p.quantiles, p.levels, weights=w)
    return out


def _avg_cal_undefined(p) -> str | None:
    """Average calibration compares observed with expected proportions along a curve: quantiles need two
    levels or more (one level is one point: its pinball loss and the share of targets below it remain)."""
    if p.kind == "quantiles" and len(p.levels) < 2:
        return (
            f"its calibration curve needs at least two quantile levels, the predictions have one "
            f"({float(p.levels[0]):g}); its pinball loss is in scoring_rule"
        )
    return None


def _adv(p, s: Settings) -> dict:
    from ..metrics.calibration import adversarial_group_calibration

    return adversarial_group_calibration(
        _cover_index(p, s),
        _expected(s),
        group_fractions=np.linspace(0.01, 1.0, s.adv_num_group_sizes),
        num_trials=s.adv_num_trials,
        num_group_draws=s.adv_num_group_draws,
        seed=s.seed,
    )


def _sharpness(p, s: Settings) -> dict:
    from ..metrics.sharpness import sharpness

    return sharpness(p.spread())


def _spread_skill(p, s: Settings) -> dict:
    return {"ratio": spread_skill(p.y_true, p.point(), error_spread(p))["ratio"]}


def _crps_gaussian_mean(p) -> float:
    """The mean CRPS of a Gaussian prediction, made once for the scoring and the reliability families."""
    from ..metrics.scoring import crps_gaussian_mean

    return _memo(p, "crps_mean", lambda: crps_gaussian_mean(p.y_true, p.mean, p.std))


def _scoring_gaussian(p, s: Settings) -> dict:
    from ..metrics.scoring import scoring_rules_gaussian

    return scoring_rules_gaussian(
        p.y_true, p.mean, p.std, resolution=s.resolution, crps=_crps_gaussian_mean(p)
    )


def _crps_samples_rows(p) -> tuple[np.ndarray, np.ndarray]:
    return _memo(
        p,
        "crps_rows",
        lambda: p.map_rows(lambda m, y: crps_ensemble_and_fair(y, m, presorted=True), p.y_true),
    )


def _scoring_samples(p, s: Settings) -> dict:
    crps, fair = _crps_samples_rows(p)
    return {"crps": float(crps.mean()), "crps_fair": float(fair.mean())}


def _scoring_quantiles(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.quantiles import quantile_scores

    return quantile_scores(p.y_true, p.quantiles, p.levels, weights=w)


def _interval_rows(p) -> np.ndarray:
    """(N,) interval score of each row averaged over the file's interval levels, block by block."""
    from ..metrics.scoring import interval_score

    return rowwise(
        lambda y, lo, hi: interval_score(y, lo, hi, p.levels).mean(axis=1), p.y_true, p.lower, p.upper
    )


def _scoring_intervals(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.scoring import interval_score

    # each level's scores block by block into one buffer: the means of the columns of the (N, L) scores
    buf = np.empty(p.n)
    by_level = {
        level_key(lv): row_mean(
            lambda y, lo, hi, lv=lv: interval_score(y, lo, hi, lv),
            p.y_true,
            p.lower[:, j],
            p.upper[:, j],
            out=buf,
            weights=w,
        )
        for j, lv in enumerate(p.levels)
    }
    return {"interval": float(np.mean(list(by_level.values()))), "interval_by_level": by_level}


def _reliability_gaussian(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.reliability import reliability_gaussian

    crps = None if w is not None else _crps_gaussian_mean(p)
    return reliability_gaussian(p.y_true, p.mean, p.std, weights=w, crps_mean=crps)


def _reliability_samples(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.reliability import max_calibration_error

    return {"max_cal_err": max_calibration_error(p.pit(), weights=w)}


def _coverage_keys(p, s: Settings) -> list[str]:
    """The level keys of :func:`_coverage`'s result."""
    return [level_key(lv) for lv in coverage_levels(p, s)]


def _coverage(p, s: Settings) -> dict:
    out = {}
    for key, lv in zip(_coverage_keys(p, s), coverage_levels(p, s), strict=True):
        if p.kind == "gaussian":  # mean -/+ z std, made for one block of rows at a time (no (N,) bounds)
            out[key] = coverage_from_bounds(
                p.y_true,
                lambda start, stop, lv=lv: p.subset(slice(start, stop)).interval(lv),
                lv,
                y_std=s.y_std,
            )
            continue
        lo, hi = p.interval(lv)
        out[key] = coverage_metrics(p.y_true, lo, hi, lv, y_std=s.y_std, shares=p.coverage_shares(lv))
    return out


def _brier_decomposition(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.classification import brier_decomposition

    return brier_decomposition(p.proba, p.labels, weights=w)


def _calibration_cls(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.classification import calibration_errors

    return calibration_errors(
        p.proba, p.labels, num_bins=s.class_bins, tace_threshold=s.tace_threshold, weights=w
    )


def _brier_sums(p, s: Settings, w: np.ndarray | None) -> np.ndarray:
    from ..metrics.classification import brier_sums

    return brier_sums(p.proba, p.labels, w)


def _brier_from_sums(sums: np.ndarray, s: Settings) -> dict:
    from ..metrics.classification import brier_decomposition_from_sums

    return brier_decomposition_from_sums(sums)


def _even_bin_sums(p, s: Settings, w: np.ndarray | None) -> np.ndarray:
    from ..metrics.classification import even_bin_stats

    return even_bin_stats(p.proba, p.labels, s.class_bins, w)


def _even_bin_errors(sums: np.ndarray, s: Settings) -> dict:
    from ..metrics.classification import even_bin_errors

    return even_bin_errors(sums)


def _prediction_sets(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.classification import prediction_sets

    return prediction_sets(p.proba, p.labels, levels=list(s.levels or (0.95,)), weights=w)


def _ensemble_uncertainty(p, s: Settings) -> dict:
    rows = per_row_uncertainty(p)
    assert rows is not None  # the family runs on members and dirichlet predictions only, never None there
    out = {k: float(v.mean()) for k, v in rows.items()}
    if p.kind == "dirichlet":
        out["knowledge"] = out["epistemic"]  # the prior-network name of the same quantity
    return out


def _information_criteria(p, s: Settings, w: np.ndarray | None = None) -> dict | None:
    if p.loglik is None:
        return None
    from ..metrics.ensembles import information_criteria

    if w is None:
        return information_criteria(p.loglik)
    # with weights: the standard errors (the criteria themselves: their per-row forms), from the moments the
    # streaming engines merge (uqeval.catalogue.states.RowTermMoments)
    from ..metrics.blocks import sem_from_moments, sem_moments
    from ..metrics.ensembles import IC_TERMS, information_criteria_rows

    t = information_criteria_rows(p.loglik)
    se = sem_from_moments(sem_moments(np.column_stack([t[k] for k in IC_TERMS]), w))
    return {f"{k}_se": float(v) for k, v in zip(IC_TERMS, se)}


def _diversity(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.ensembles import diversity_from_rows

    return diversity_from_rows(_member_rows(p), p.member_proba.shape[1], weights=w)


def _rejection_cls(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.ensembles import oracle_collaborative_accuracy, rejection_curve

    conf, correct = p.top_label()
    uncertainty = 1.0 - conf  # the same ranking for plain classifiers, ensembles and Dirichlet outputs
    curve = rejection_curve(correct, uncertainty, kind="accuracy", weights=w)
    oca = oracle_collaborative_accuracy(correct, uncertainty, fraction=s.oca_fraction, weights=w)
    return {
        "auc_rejection": curve["auc_rejection"],
        "auc_oracle": curve["auc_oracle"],
        "oracle_collaborative_accuracy": oca,
        "fractions": curve["fractions"],
        "values": curve["values"],
        "oracle_values": curve["oracle_values"],
    }


def _rejection_samples(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.ensembles import rejection_curve

    mean, std = p.moments()
    # RMSE of the ensemble mean, ranked by its std
    curve = rejection_curve(p.y_true - mean, std, kind="rmse", weights=w)
    return {
        "auc_rejection": curve["auc_rejection"],
        "auc_oracle": curve["auc_oracle"],
        "fractions": curve["fractions"],
        "values": curve["values"],
        "oracle_values": curve["oracle_values"],
    }


def _bayesian_ece(p, s: Settings) -> dict:
    from ..metrics.ensembles import bayesian_ece

    return bayesian_ece(p.proba, p.labels, num_bins=s.class_bins, num_samples=s.bayes_samples, seed=s.seed)


#: the modules the classification families' kernels import (Family.imports: imported before a second
#: thread starts); "concurrent.futures.thread" for the kernels' own worker threads
_CLS_KERNELS = ("concurrent.futures.thread", "uqeval.metrics.classification")
_ENSEMBLE_KERNELS = ("concurrent.futures.thread", "uqeval.metrics.ensembles")

SPCE_MIN_ROWS = 10  # 5-fold cross-fitting needs two rows per fold


def _spce(p, s: Settings) -> dict | None:
    from ..metrics.ensembles import spce

    if p.n < SPCE_MIN_ROWS:
        return None
    proba = p.proba
    # binary problems: calibration of P(class 1); more classes: top-label calibration
    return spce(proba[:, 1] if proba.shape[1] == 2 else proba, p.labels, seed=s.seed)


# --------------------------------------------------------------------------- per-row forms
# Each returns the RowStat of one metric (or None where this representation has none). The
# formulas are the kernels': per-row arrays come from metrics/, reductions from their batch forms.


def _rows_accuracy(p, s, level) -> dict[str, RowStat] | None:
    from ..metrics.accuracy import accuracy_rows

    point = p.point()
    if point is None:
        return None
    terms = _memo(p, "accuracy_rows", lambda: accuracy_rows(p.y_true, point))
    return {k: RowStat(score=score, weighted=weighted) for k, (score, weighted) in terms.items()}


def _rows_accuracy_cls(p, s, level) -> dict[str, RowStat]:
    from ..metrics.classification import classification_rows

    return {
        k: RowStat(score=v)
        for k, v in _memo(p, "cls_rows", lambda: classification_rows(p.proba, p.labels)).items()
    }


def _rows_avg_cal(p, s, level) -> dict[str, RowStat] | None:
    if p.kind == "quantiles":
        from ..metrics.quantiles import quantile_calibration_terms

        below, fn = quantile_calibration_terms(p.y_true, p.quantiles, p.levels)
        form = dict(terms=below)
    else:
        from ..metrics.calibration import calibration_errors_from_counts

        expected = _expected(s)
        fn = calibration_errors_from_counts(expected)
        form = dict(codes=_cover_index(p, s), n_codes=expected.size + 1)
    return {
        k: RowStat(finish=(lambda key: lambda sums, total: fn(sums, total)[key])(k), **form)
        for k in ("rms_cal", "ma_cal", "miscal_area")
    }


def _rows_sharpness(p, s, level) -> dict[str, RowStat]:
    sd = p.spread()
    return {"sharp": RowStat(terms=(sd * sd)[:, None], finish=_root_mean), "mean_std": RowStat(score=sd)}


def _rows_spread_skill(p, s, level) -> dict[str, RowStat]:
    sd = error_spread(p)
    terms = np.column_stack([sd * sd, np.square(p.y_true - p.point())])
    return {"ratio": RowStat(terms=terms, finish=_spread_skill_ratio)}


def _spread_skill_ratio(sums: np.ndarray, total: np.ndarray) -> np.ndarray:
    """√(Σσ²/Σ(y − μ)²) of each resample (:func:`uqeval.metrics.spread.spread_skill_ratio`)."""
    from ..metrics.spread import spread_skill_ratio

    return cast("np.ndarray", spread_skill_ratio(sums[:, 0], sums[:, 1]))


def _root_mean(sums: np.ndarray, total: np.ndarray) -> np.ndarray:
    return np.sqrt(sums[:, 0] / total)


def _rows_scoring(p, s, level) -> dict[str, RowStat]:
    from ..metrics import scoring

    y = p.y_true
    if p.kind == "gaussian":
        return {
            "nll": RowStat(score=scoring.nll_gaussian(y, p.mean, p.std)),
            "crps": RowStat(score=scoring.crps_gaussian(y, p.mean, p.std)),
            "check": RowStat(score=scoring.check_score_gaussian(y, p.mean, p.std, resolution=s.resolution)),
            "interval": RowStat(
                score=scoring.interval_score_gaussian(y, p.mean, p.std, resolution=s.resolution)
            ),
        }
    if p.kind == "samples":
        crps, fair = _crps_samples_rows(p)
        return {"crps": RowStat(score=crps), "crps_fair": RowStat(score=fair)}
    if p.kind == "quantiles":
        from ..metrics.quantiles import pinball_rows, weighted_interval_score

        return {
            "pinball": RowStat(score=pinball_rows(y, p.quantiles, p.levels)),
            "wis": RowStat(score=weighted_interval_score(y, p.quantiles, p.levels)),
        }
    if p.kind == "intervals":
        return {"interval": RowStat(score=_interval_rows(p))}
    return {}


def _rows_coverage(p, s, level) -> dict[str, RowStat] | None:
    try:
        lv = float(level)
        lo, hi = p.interval(lv)
    except (KeyError, TypeError, ValueError):
        return None
    return {
        k: RowStat(score=score, terms=None if finish is None else score_terms, finish=finish)
        for k, (score, score_terms, finish) in coverage_rows(
            p.y_true, lo, hi, lv, y_std=s.y_std, shares=p.coverage_shares(lv)
        ).items()
    }


def _rows_prediction_sets(p, s, level) -> dict[str, RowStat] | None:
    from ..metrics.classification import prediction_set_rows

    try:
        lv = float(level)
    except (TypeError, ValueError):
        return None
    covered, size = prediction_set_rows(p.proba, p.labels, lv)
    return {"coverage": RowStat(score=covered), "mean_size": RowStat(score=size.astype(np.float64))}


def _rows_uncertainty(p, s, level) -> dict[str, RowStat]:
    rows = per_row_uncertainty(p)
    assert rows is not None  # the family runs on members and dirichlet predictions only, never None there
    out = {k: RowStat(score=v) for k, v in rows.items()}
    if p.kind == "dirichlet":
        out["knowledge"] = out["epistemic"]
    return out


def _rows_information_criteria(p, s, level) -> dict[str, RowStat] | None:
    if p.loglik is None:  # before the import (scipy.special, ~0.6 s): as the family's own kernel
        return None
    from ..metrics.ensembles import information_criteria_rows

    return {k: RowStat(score=v) for k, v in information_criteria_rows(p.loglik).items()}


def _classifier_family(
    name: str,
    specs: list[dict],
    compute,
    kernels: tuple[str, ...] = _CLS_KERNELS,
    weighted: tuple[str, ...] = CLASSIFICATION,
    sums: tuple[Callable, Callable] | None = None,
    **kw,
) -> Family:
    """A family with one compute function for every classification representation (categorical, members,
    Dirichlet), whose kernels import ``kernels`` (:attr:`Family.imports`) and take row weights (``weighted``,
    every representation unless said); ``sums``: its ``(weighted_sums, from_sums)``."""
    weighted_sums, from_sums = sums or (None, None)
    return _family(
        name,
        specs,
        dict.fromkeys(CLASSIFICATION, compute),
        imports=kernels,
        weighted=weighted,
        weighted_sums=weighted_sums,
        from_sums=from_sums,
        **kw,
    )


STANDARD_FAMILIES: tuple[Family, ...] = (
    _family(
        "accuracy",
        [
            _m("mae", "lower", "mean absolute error", "mean", representations=REGRESSION),
            _m("rmse", "lower", "root mean squared error", "moments", representations=REGRESSION),
            _m("mdae", "lower", "median absolute error", "order", representations=REGRESSION),
            _m(
                "marpd",
                "lower",
                "mean absolute relative percent difference",
                "mean",
                representations=REGRESSION,
            ),
            _m("r2", "higher", "coefficient of determination", "moments", representations=REGRESSION),
            _m(
                "corr",
                "higher",
                "Pearson correlation of prediction and target",
                "moments",
                representations=REGRESSION,
            ),
            _m(
                "accuracy",
                "higher",
                "share of rows whose top class is the label",
                "mean",
                representations=CLASSIFICATION,
            ),
            _m("nll", "lower", "log loss", "mean", representations=CLASSIFICATION),
            _m(
                "brier",
                "lower",
                "Brier score, sum over classes, in [0, 2]",
                "mean",
                representations=CLASSIFICATION,
            ),
            _m(
                "brier_um",
                "lower",
                "Brier score in the Uncertainty Metrics convention (brier - 1)",
                "mean",
                representations=CLASSIFICATION,
            ),
        ],
        {**{k: _accuracy for k in REGRESSION}, **{k: _accuracy_cls for k in CLASSIFICATION}},
        imports=_CLS_KERNELS,
        rows=lambda p, s, level: (_rows_accuracy_cls if p.kind in CLASSIFICATION else _rows_accuracy)(
            p, s, level
        ),
    ),
    _family(
        "avg_calibration",
        [
            _m("rms_cal", "lower", "root mean squared calibration error", "counts"),
            _m("ma_cal", "lower", "mean absolute calibration error", "counts"),
            _m("miscal_area", "lower", "miscalibration area", "counts"),
            _m(
                "pit_histogram",
                None,
                "histogram of the PIT values (10 bins; quantiles: between levels)",
                "histogram",
                representations=("samples", "quantiles"),
            ),
        ],
        {"gaussian": _avg_cal_gaussian, "samples": _avg_cal_samples, "quantiles": _avg_cal_quantiles},
        rows=_rows_avg_cal,
        undefined=_avg_cal_undefined,
        weighted=("samples", "quantiles"),  # pit_histogram (the others: their per-row forms)
    ),
    _family(
        "adv_group_calibration",
        [
            _m("ma_mean", "lower", "mean worst-group MA calibration error per group size", "resampling"),
            _m("ma_stderr", "lower", "standard error of ma_mean", "resampling"),
            _m("rms_mean", "lower", "mean worst-group RMS calibration error per group size", "resampling"),
            _m("rms_stderr", "lower", "standard error of rms_mean", "resampling"),
            _m("group_sizes", None, "group sizes (fractions of the rows) of the curves", "curve"),
        ],
        {"gaussian": _adv, "samples": _adv},
    ),
    _family(
        "sharpness",
        [
            _m("sharp", "lower", "root mean predicted variance", "moments"),
            _m("mean_std", "lower", "mean predicted standard deviation", "mean"),
        ],
        {"gaussian": _sharpness, "samples": _sharpness},
        rows=_rows_sharpness,
    ),
    _family(
        "spread_skill",
        [
            _m(
                "ratio",
                "target",
                "spread-skill ratio: root mean predicted variance over the RMSE of the point prediction "
                "(samples: finite-ensemble corrected); target 1",
                "moments",
                target=1.0,
            ),
        ],
        {"gaussian": _spread_skill, "samples": _spread_skill},
        rows=_rows_spread_skill,
    ),
    _family(
        "scoring_rule",
        [
            _m("nll", "lower", "Gaussian negative log-likelihood", "mean", representations=("gaussian",)),
            _m(
                "crps",
                "lower",
                "continuous ranked probability score",
                "mean",
                representations=("gaussian", "samples"),
            ),
            _m("crps_fair", "lower", "unbiased (fair) ensemble CRPS", "mean", representations=("samples",)),
            _m(
                "check",
                "lower",
                "check (pinball) score averaged over levels",
                "mean",
                representations=("gaussian",),
            ),
            _m(
                "interval",
                "lower",
                "interval score (averaged over levels)",
                "mean",
                representations=("gaussian", "intervals"),
            ),
            _m(
                "pinball",
                "lower",
                "pinball loss averaged over the quantile levels",
                "mean",
                representations=("quantiles",),
            ),
            _m(
                "pinball_by_level",
                "lower",
                "pinball loss per quantile level",
                "mean",
                representations=("quantiles",),
            ),
            _m(
                "interval_by_level",
                "lower",
                "interval score per central level",
                "mean",
                representations=("intervals", "quantiles"),
            ),
            _m("wis", "lower", "weighted interval score", "mean", representations=("quantiles",)),
        ],
        {
            "gaussian": _scoring_gaussian,
            "samples": _scoring_samples,
            "quantiles": _scoring_quantiles,
            "intervals": _scoring_intervals,
        },
        rows=_rows_scoring,
        no_rows=("pinball_by_level", "interval_by_level"),
        weighted=("quantiles", "intervals"),  # the per-level dicts (the others: their per-row forms)
    ),
    _family(
        "reliability",
        [
            _m("rs", "lower", "ACCRUE reliability score", "order", representations=("gaussian",)),
            _m("max_cal_err", "lower", "bin-free maximum calibration error of the PIT", "order"),
            _m("accrue", "lower", "ACCRUE cost", "order", representations=("gaussian",)),
        ],
        {"gaussian": _reliability_gaussian, "samples": _reliability_samples},
        weighted=("gaussian", "samples"),
    ),
    _family(
        "coverage",
        [
            _m(
                "coverage",
                "target",
                "share of targets inside the central interval (target: the level)",
                "mean",
                target="level",
            ),
            _m("width", "lower", "mean interval width", "mean"),
            _m("width_norm", "lower", "mean width in units of the training targets' std", "mean"),
            _m("coverage_error", "target", "coverage minus level (target: 0)", "mean", target=0.0),
            _m(
                "miss_below",
                "target",
                "share of targets below the interval (target: (1 - level)/2)",
                "mean",
                target="half_miss",
            ),
            _m(
                "miss_above",
                "target",
                "share of targets above the interval (target: (1 - level)/2)",
                "mean",
                target="half_miss",
            ),
        ],
        {"gaussian": _coverage, "samples": _coverage, "quantiles": _coverage, "intervals": _coverage},
        rows=_rows_coverage,
        by_level=True,
        levels=_coverage_keys,
    ),
    _classifier_family(
        "brier_decomposition",
        [
            _m(
                "uncertainty",
                None,
                "uncertainty of the labels alone (a property of the data, not of the model)",
                "counts",
            ),
            _m("resolution", "higher", "resolution", "counts"),
            _m("reliability", "lower", "reliability (calibration) term", "counts"),
        ],
        _brier_decomposition,
        sums=(_brier_sums, _brier_from_sums),
    ),
    _classifier_family(
        "calibration",
        [
            _m("ece", "lower", "expected calibration error", "counts"),
            _m("rmsce", "lower", "root mean squared calibration error", "order"),
            _m("mce", "lower", "maximum calibration error", "counts"),
            _m("sce", "lower", "static calibration error", "counts"),
            _m("ace", "lower", "adaptive calibration error", "order"),
            _m("tace", "lower", "thresholded adaptive calibration error", "order"),
        ],
        _calibration_cls,
        sums=(_even_bin_sums, _even_bin_errors),
    ),
    _classifier_family(
        "prediction_sets",
        [
            _m(
                "coverage",
                "target",
                "share of rows whose set holds the label (target: the level)",
                "mean",
                target="level",
            ),
            _m("mean_size", "lower", "mean number of classes in the set", "mean"),
            _m("size_histogram", None, "number of rows per set size 1..K", "histogram"),
        ],
        _prediction_sets,
        rows=_rows_prediction_sets,
        by_level=True,  # (weighted: size_histogram; the others by their per-row forms)
    ),
    # ensembles and Bayesian outputs (Google Uncertainty Metrics). The entropies are descriptive, like
    # sharpness: "lower" means a more certain model, which is better only if it stays calibrated.
    _family(
        "ensemble_uncertainty",
        [
            _m("total", "lower", "entropy of the mean prediction, averaged over rows (nats)", "mean"),
            _m("aleatoric", "lower", "mean member entropy (expected data uncertainty, nats)", "mean"),
            _m("epistemic", "lower", "mutual information = total - aleatoric (nats)", "mean"),
            _m(
                "knowledge",
                "lower",
                "Dirichlet outputs: knowledge uncertainty MI[y, pi] (= epistemic, nats)",
                "mean",
                representations=("dirichlet",),
            ),
        ],
        {"members": _ensemble_uncertainty, "dirichlet": _ensemble_uncertainty},
        imports=_ENSEMBLE_KERNELS,
        rows=_rows_uncertainty,
    ),
    _family(
        "information_criteria",
        [
            _m("waic1", "higher", "negative WAIC type 1 (expected log predictive density per row)", "mean"),
            _m("waic2", "higher", "negative WAIC type 2", "mean"),
            _m("iscv", "higher", "importance-sampling cross-validation log predictive density", "mean"),
            _m("waic1_se", "lower", "standard error of waic1 over rows", "moments"),
            _m("waic2_se", "lower", "standard error of waic2 over rows", "moments"),
            _m("iscv_se", "lower", "standard error of iscv over rows", "moments"),
        ],
        {k: _information_criteria for k in (*REGRESSION, *CLASSIFICATION, "loglik")},
        imports=_ENSEMBLE_KERNELS,
        rows=_rows_information_criteria,
        no_rows=("waic1_se", "waic2_se", "iscv_se"),
        # the standard errors of weighted means, with Kish's effective number of rows (the criteria themselves:
        # their per-row forms); streamed as weighted moments (uqeval.catalogue.states.RowTermMoments)
        weighted=(*REGRESSION, *CLASSIFICATION, "loglik"),
    ),
    _family(
        "diversity",
        [
            _m("disagreement", "higher", "share of rows where two members predict different classes", "mean"),
            _m("kl", "higher", "mean KL divergence between members (nats)", "mean"),
            _m(
                "cosine_similarity", "lower", "mean cosine similarity of members' probability vectors", "mean"
            ),
            _m("double_fault", "lower", "share of rows both members of a pair get wrong", "mean"),
        ],
        {"members": _diversity},
        imports=_ENSEMBLE_KERNELS,
        weighted=("members",),
    ),
    _family(
        "rejection",
        [
            _m(
                "auc_rejection",
                "higher",
                "area under the accuracy (RMSE) vs rejected-fraction curve",
                "order",
                orientation_by_kind={"samples": "lower"},
            ),
            _m(
                "auc_oracle",
                "higher",
                "area under the oracle curve (rejects wrong rows / largest errors first)",
                "order",
                orientation_by_kind={"samples": "lower"},
            ),
            _m(
                "oracle_collaborative_accuracy",
                "higher",
                "accuracy when the --oca-fraction most uncertain rows go to an oracle",
                "order",
                representations=CLASSIFICATION,
            ),
            _m("fractions", None, "rejected fractions of the curves", "curve"),
            _m("values", None, "accuracy (RMSE) of the kept rows at each rejected fraction", "curve"),
            _m("oracle_values", None, "oracle curve at each rejected fraction", "curve"),
        ],
        {**{k: _rejection_cls for k in CLASSIFICATION}, "samples": _rejection_samples},
        imports=_ENSEMBLE_KERNELS,
        weighted=(*CLASSIFICATION, "samples"),
    ),
    _classifier_family(
        "bayesian_ece",
        [
            _m("mean", "lower", "posterior mean of the top-label ECE", "resampling"),
            _m("q10", "lower", "10% posterior quantile of the ECE", "resampling"),
            _m("q50", "lower", "posterior median of the ECE", "resampling"),
            _m("q90", "lower", "90% posterior quantile of the ECE", "resampling"),
        ],
        _bayesian_ece,
        _ENSEMBLE_KERNELS,
        weighted=(),  # (random draws)
    ),
    _classifier_family(
        "spce",
        [
            _m("spce", "lower", "semiparametric L2 calibration error (binary or top-label)", "resampling"),
            _m("ci_low", None, "lower end of its 95% bootstrap confidence interval", "resampling"),
            _m("ci_high", None, "upper end of its 95% bootstrap confidence interval", "resampling"),
        ],
        _spce,
        _ENSEMBLE_KERNELS,
        weighted=(),  # (random draws)
        background=True,
    ),
)
