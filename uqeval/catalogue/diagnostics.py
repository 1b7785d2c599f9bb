"""Calibration diagnostics (issue 15; opt-in with ``--diagnostics``): CORP decompositions, spread and smooth
calibration, calibration tests and conditional coverage."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from ..config import Settings
from ..predictions import Prediction

if TYPE_CHECKING:
    from ..predictions import Intervals, Quantiles, Samples, _Classifier
from ..metrics.intervals import level_key
from ..metrics.spread import spread_calibration
from .core import CLASSIFICATION, REGRESSION, Family, _family, _m, _memo, coverage_levels, error_spread

# --------------------------------------------------------------------------- calibration diagnostics (issue 15, part A)
# Opt-in (``--diagnostics``): CORP score decompositions, spread calibration, smooth ECE.


def binary_or_top_label(p: Prediction) -> tuple[np.ndarray, np.ndarray]:
    """``(forecast, outcome)`` of the binary event a classifier's calibration diagnostics look at:
    P(class 1) and ``label == 1`` for two classes, the top-label confidence and its correctness for more."""
    c = cast("_Classifier", p)  # the classification kinds
    if c.proba.shape[1] == 2:
        return c.proba[:, 1], (c.labels == 1).astype(np.float64)
    return c.top_label()


def _corp(p, s: Settings, w: np.ndarray | None = None) -> dict | None:
    from ..metrics.corp import corp_classification, corp_mean

    if p.kind in CLASSIFICATION:
        return corp_classification(p.proba, p.labels, weights=w)
    if p.kind == "quantiles":  # the pinball loss of each quantile (their median is no mean forecast)
        from ..metrics.corp import corp_quantile

        return {
            f"pinball_{level_key(t)}": corp_quantile(p.y_true, p.quantiles[:, j], float(t), weights=w)
            for j, t in enumerate(p.levels)
        }
    point = p.point()
    return None if point is None else {"mse": corp_mean(p.y_true, point, weights=w)}


def _spread_calibration(p, s: Settings, w: np.ndarray | None = None) -> dict:
    # samples: the finite-ensemble spread s·√((M+1)/M) (ddof 1); bins are formed on it (see metrics.spread)
    return spread_calibration(p.y_true, p.point(), error_spread(p), num_bins=s.class_bins, weights=w)


def _smooth_calibration(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.smooth_ece import smooth_ece

    return smooth_ece(*binary_or_top_label(p), weights=w)


DIAGNOSTIC_FAMILIES: tuple[Family, ...] = (
    _family(
        "corp",
        [
            _m("mcb", "lower", "CORP miscalibration: mean score minus that of the PAV-recalibrated forecast"),
            _m(
                "dsc",
                "higher",
                "CORP discrimination: score of the climatology minus that of the recalibrated forecast",
            ),
            _m("unc", None, "CORP uncertainty: mean score of the climatology (a property of the data)"),
        ],
        {**{k: _corp for k in REGRESSION}, **{k: _corp for k in CLASSIFICATION}},
        imports=("uqeval.metrics.corp", "uqeval.metrics.intervals", "scipy.optimize", "scipy.special"),
        by_level=True,
        option="diagnostics",
        heavy=True,
        weighted=(*REGRESSION, *CLASSIFICATION),
    ),
    _family(
        "spread_calibration",
        [
            _m("ence", "lower", "expected normalised calibration error over sigma-sorted equal-count bins"),
            _m(
                "uce",
                "lower",
                "uncertainty calibration error over equal-width bins of the predicted variance",
            ),
            _m(
                "cv",
                None,
                "coefficient of variation of the predicted sigma (descriptive: low = uninformative sigma)",
            ),
        ],
        {"gaussian": _spread_calibration, "samples": _spread_calibration},
        option="diagnostics",
        weighted=("gaussian", "samples"),
    ),
    _family(
        "smooth_calibration",
        [
            _m("smece", "lower", "smooth ECE (binary: P(class 1); more classes: top label)"),
            _m(
                "bandwidth", None, "the kernel bandwidth sigma* at which smece is evaluated (its fixed point)"
            ),
        ],
        {k: _smooth_calibration for k in CLASSIFICATION},
        imports=("uqeval.metrics.smooth_ece",),
        option="diagnostics",
        weighted=CLASSIFICATION,
    ),
)
# --------------------------------------------------------------------------- end of calibration diagnostics
# =========================================================================== issue 15 part B (opt-in: --diagnostics)
# calibration tests with p-values and conditional coverage. p-values rank nothing (orientation None: they
# weigh evidence, which grows with N); a check rule bounds them (`min = 0.01`).
PIT_TEST_KINDS = ("gaussian", "samples", "quantiles", "intervals")
#: why the calibration tests of samples, quantiles and intervals refuse weights (issue 37): their PIT is a
#: random draw per row. Gaussians and classifiers take weights: the statistics of the weighted rows with
#: Kish's effective number of rows as their n (:func:`uqeval.metrics.rowweights.effective_rows`)
_RANDOM_PIT = (
    "its PIT is drawn at random within each row's interval (a weighted row is one draw, its repeated rows "
    "several); with weights only Gaussians, whose PIT is exact, give the PIT tests"
)


def diagnostic_pit(p: Prediction, s: Settings) -> np.ndarray:
    """PIT values the calibration tests use: exact for Gaussians; for samples, quantiles and intervals
    drawn uniformly inside each row's PIT interval (:func:`~uqeval.metrics.calibration_tests.randomised_pit`),
    the random numbers seeded by ``Settings.seed`` and the rows' targets and intervals
    (:func:`~uqeval.metrics.calibration_tests.data_key`): reproducible for one data set and seed, independent
    between data sets."""
    from ..metrics import calibration_tests as ct

    def make():
        if p.kind == "gaussian":
            return p.pit()
        y_true = cast("np.ndarray", p.y_true)  # the diagnostics run on predictions with targets only
        # samples: the rank among the members; quantiles and intervals: between the carried quantile levels
        # (the containers' pit_bounds, computed once per prediction)
        lo, hi = cast("Samples | Quantiles | Intervals", p).pit_bounds()
        return ct.randomised_pit(lo, hi, s.seed, ct.data_key(y_true, lo, hi))

    return _memo(p, f"diagnostic_pit_{s.seed}", make)


def binary_events(p: Prediction) -> tuple[np.ndarray, np.ndarray]:
    """``(probability, event)``: P(class 1) and the label for 2 classes, else the top label's
    confidence and whether it is right (top-label calibration, as ``spce``)."""
    c = cast("_Classifier", p)  # the classification kinds
    if c.proba.shape[1] == 2:
        return c.proba[:, 1], c.labels.astype(np.float64)
    return c.top_label()


def _calibration_tests(p, s: Settings, w: np.ndarray | None = None) -> dict | None:
    from ..metrics import calibration_tests as ct

    if p.n < 2:  # no test of a distribution from one row (the family is left out, as spce below 10 rows)
        return None
    if p.kind in CLASSIFICATION:
        return ct.binary_calibration_tests(*binary_events(p), weights=w)
    if w is not None:  # Gaussians only (the exact PIT; the others' PIT is a random draw per row)
        return ct.pit_uniformity_tests(p.pit(), weights=w)
    u = diagnostic_pit(p, s)
    out = ct.pit_uniformity_tests(u)
    if p.kind == "samples" and not p.ragged:  # one rank histogram needs one member count
        out.update(ct.rank_histogram_test(u, p.samples.shape[1]))
    return out


def _conditional_coverage(p, s: Settings, w: np.ndarray | None = None) -> dict:
    from ..metrics.conditional_coverage import class_coverage, interval_ssc, set_ssc

    out = {}
    if p.kind in CLASSIFICATION:
        from ..metrics.classification import prediction_set_rows

        k = p.proba.shape[1]
        for lv in list(s.levels or (0.95,)):
            covered, size = prediction_set_rows(p.proba, p.labels, lv)
            out[level_key(lv)] = {
                **set_ssc(covered, size, lv, k, weights=w),
                **class_coverage(covered, p.labels, k, weights=w),
            }
        return out
    for lv in coverage_levels(p, s):
        lo, hi = p.interval(lv)
        out[level_key(lv)] = interval_ssc((p.y_true >= lo) & (p.y_true <= hi), hi - lo, lv, weights=w)
    return out


DIAGNOSTIC_TEST_FAMILIES: tuple[Family, ...] = (
    _family(
        "calibration_tests",
        [
            _m(
                "pit_ks_stat",
                "lower",
                "Kolmogorov-Smirnov distance of the PIT to U(0, 1)",
                representations=PIT_TEST_KINDS,
            ),
            _m("pit_ks_p", None, "p-value of the KS test of PIT uniformity", representations=PIT_TEST_KINDS),
            _m(
                "pit_cvm_stat",
                "lower",
                "Cramer-von Mises statistic of the PIT",
                representations=PIT_TEST_KINDS,
            ),
            _m(
                "pit_cvm_p",
                None,
                "p-value of the Cramer-von Mises test of PIT uniformity",
                representations=PIT_TEST_KINDS,
            ),
            _m(
                "pit_ad_stat",
                "lower",
                "Anderson-Darling statistic of the PIT",
                representations=PIT_TEST_KINDS,
            ),
            _m(
                "pit_ad_p",
                None,
                "p-value of the Anderson-Darling test of PIT uniformity",
                representations=PIT_TEST_KINDS,
            ),
            _m(
                "rank_histogram",
                None,
                "rank histogram: rows per rank 0..M of the target among the members",
                "histogram",
                representations=("samples",),
            ),
            _m(
                "rank_hist_chi2",
                "lower",
                "chi-squared statistic of the rank histogram against uniform",
                representations=("samples",),
            ),
            _m(
                "rank_hist_chi2_p",
                None,
                "p-value of the chi-squared test of the rank histogram (M df)",
                representations=("samples",),
            ),
            _m(
                "spiegelhalter_z",
                "target",
                "Spiegelhalter's z of binary (top-label) probabilities (target: 0)",
                "moments",
                representations=CLASSIFICATION,
                target=0.0,
            ),
            _m(
                "spiegelhalter_p",
                None,
                "two-sided p-value of Spiegelhalter's z",
                "moments",
                representations=CLASSIFICATION,
            ),
            _m(
                "hosmer_lemeshow_stat",
                "lower",
                "Hosmer-Lemeshow statistic (10 groups by deciles)",
                representations=CLASSIFICATION,
            ),
            _m(
                "hosmer_lemeshow_p",
                None,
                "p-value of the Hosmer-Lemeshow test (chi-squared, one df per group: out of sample)",
                representations=CLASSIFICATION,
            ),
        ],
        {
            **{k: _calibration_tests for k in PIT_TEST_KINDS},
            **{k: _calibration_tests for k in CLASSIFICATION},
        },
        imports=(
            "uqeval.metrics.calibration_tests",
            "uqeval.metrics.normal",
            "uqeval.metrics.rowweights",
            "scipy.stats",
        ),
        option="diagnostics",
        weighted=("gaussian", *CLASSIFICATION),
        no_weights=dict.fromkeys(
            ("rank_histogram", "rank_hist_chi2", "rank_hist_chi2_p"),
            "its ranks come from the PIT drawn at random within each row's rank interval (a weighted row "
            "is one draw, its repeated rows several)",
        ),
        other_kinds=_RANDOM_PIT,
    ),
    _family(
        "conditional_coverage",
        [
            _m("ssc_violation", "lower", "max over set-size / width strata of |coverage - level|"),
            _m(
                "worst_stratum_coverage",
                "target",
                "lowest coverage of a set-size / width stratum (target: the level)",
                target="level",
            ),
            _m(
                "worst_class",
                None,
                "the class whose rows are covered least often",
                representations=CLASSIFICATION,
            ),
            _m(
                "worst_class_coverage",
                "target",
                "coverage of the worst class (target: the level)",
                representations=CLASSIFICATION,
                target="level",
            ),
            # filled by `score --by` from the per-group coverage (uqeval.commands.score.core), not by a representation
            _m("worst_group", None, "the --by group with the lowest coverage", representations=()),
            _m(
                "worst_group_coverage",
                "target",
                "coverage of the worst --by group (target: the level)",
                representations=(),
                target="level",
            ),
        ],
        {
            **{k: _conditional_coverage for k in PIT_TEST_KINDS},
            **{k: _conditional_coverage for k in CLASSIFICATION},
        },
        imports=(
            "uqeval.metrics.classification",
            "uqeval.metrics.conditional_coverage",
            "uqeval.metrics.intervals",
        ),
        by_level=True,
        option="diagnostics",
        weighted=(*PIT_TEST_KINDS, *CLASSIFICATION),
    ),
)
