"""Plain-language explanations of every metric uqeval reports, with formula and source.

:data:`GLOSSARY` is keyed by the metric path ``group.key`` used in the JSON summary
(``scoring_rule.crps``); a few group-level entries (``ucc``, ``rejection``, ...) explain
keys that are not listed one by one. Level parts of a path (``coverage.0.95.coverage``)
are ignored when looking a metric up. ``uqeval explain METRIC`` prints :func:`explain`;
the HTML report shows the entries of the metrics it contains.

Formulas are plain Unicode text (they are printed in a terminal and in HTML).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["GLOSSARY", "canonical_path", "find_entry", "format_entry", "matches", "names"]

# --------------------------------------------------------------------------- references
TOOLBOX = (
    "Chung, Char, Guo, Schneider & Neiswanger (2021), Uncertainty Toolbox: an Open-Source "
    "Library for Assessing, Visualizing, and Improving Uncertainty Quantification, arXiv:2109.10254"
)
KOMPA = (
    "Kompa, Snoek & Beam (2021), Empirical Frequentist Coverage of Deep Learning Uncertainty "
    "Quantification Procedures, Entropy 23(12):1608"
)
ACCRUE = (
    "Camporeale & Carè (2021), ACCRUE: Accurate and Reliable Uncertainty Estimate in "
    "Deterministic Models, International Journal for Uncertainty Quantification 11(4):81-94 "
    "(arXiv:2003.05103)"
)
UCC = (
    "Navrátil, Elder, Arnold, Ghosh & Sattigeri (2021), Uncertainty Characteristics Curves: "
    "A Systematic Assessment of Prediction Intervals, arXiv:2106.00858"
)
NIXON = (
    "Nixon, Dusenberry, Zhang, Jerfel & Tran (2019), Measuring Calibration in Deep Learning, "
    "CVPR Workshops (arXiv:1904.01685); Google Uncertainty Metrics library"
)
UM = "Google Uncertainty Metrics library (google/uncertainty-metrics), README"
GR = (
    "Gneiting & Raftery (2007), Strictly Proper Scoring Rules, Prediction, and Estimation, "
    "Journal of the American Statistical Association 102(477):359-378"
)
BRACHER = (
    "Bracher, Ray, Gneiting & Reich (2021), Evaluating epidemic forecasts in an interval "
    "format, PLOS Computational Biology 17(2):e1008618"
)
GUO = "Guo, Pleiss, Sun & Weinberger (2017), On Calibration of Modern Neural Networks, ICML"
KULESHOV = (
    "Kuleshov, Fenner & Ermon (2018), Accurate Uncertainties for Deep Learning Using "
    "Calibrated Regression, ICML"
)
ZHAO = "Zhao, Ma & Ermon (2020), Individual Calibration with Randomized Forecasting, ICML"
GBR = (
    "Gneiting, Balabdaoui & Raftery (2007), Probabilistic forecasts, calibration and "
    "sharpness, Journal of the Royal Statistical Society B 69(2):243-268"
)
FERRO = "Ferro (2014), Fair scores for ensemble forecasts, Q. J. R. Meteorol. Soc. 140:1917-1923"
BRIER = (
    "Brier (1950), Verification of forecasts expressed in terms of probability, "
    "Monthly Weather Review 78(1):1-3"
)
MURPHY = (
    "Murphy (1973), A New Vector Partition of the Probability Score, Journal of Applied "
    "Meteorology 12:595-600"
)
WATANABE = (
    "Watanabe (2010), Asymptotic Equivalence of Bayes Cross Validation and Widely Applicable "
    "Information Criterion in Singular Learning Theory, JMLR 11:3571-3594"
)
GELFAND = (
    "Gelfand, Dey & Chang (1992), Model determination using predictive distributions with "
    "implementation via sampling-based methods, Bayesian Statistics 4"
)
DEPEWEG = (
    "Depeweg, Hernández-Lobato, Doshi-Velez & Udluft (2018), Decomposition of Uncertainty in "
    "Bayesian Deep Learning for Efficient and Risk-sensitive Learning, ICML"
)
MALININ = "Malinin, Mlodozeniec & Gales (2020), Ensemble Distribution Distillation, ICLR"
FORT = "Fort, Hu & Lakshminarayanan (2019), Deep Ensembles: A Loss Landscape Perspective, arXiv:1912.02757"
KUNCHEVA = (
    "Kuncheva & Whitaker (2003), Measures of Diversity in Classifier Ensembles, Machine Learning 51:181-207"
)
NADEEM = (
    "Nadeem, Zucker & Hanczar (2009), Accuracy-Rejection Curves (ARCs) for Comparing "
    "Classification Methods with a Reject Option, MLSB"
)
KIVLICHAN = (
    "Kivlichan, Lin, Liu & Vasserman (2021), Measuring and Improving Model-Moderator "
    "Collaboration using Uncertainty Estimation, Workshop on Online Abuse and Harms"
)
NAEINI = (
    "Naeini, Cooper & Hauskrecht (2015), Obtaining Well Calibrated Probabilities Using Bayesian Binning, AAAI"
)


def _e(title: str, text: str, formula: str, reference: str) -> dict[str, str]:
    return {"title": title, "text": text, "formula": formula, "reference": reference}


FORTIN = (
    "Fortin, Abaza, Anctil & Turcotte (2014), Why should ensemble spread match the RMSE of the "
    "ensemble mean?, Journal of Hydrometeorology 15(4)"
)

_CAL_CURVE = (
    "Expected proportions p run over linspace(0, 1, num_bins); the observed proportion "
    "p_obs(p) is the share of rows whose central p-interval holds the target, "
    "|y − μ|/σ ≤ Φ⁻¹(½ + p/2) for Gaussians (bounds inclusive)."
)

GLOSSARY: dict[str, dict[str, str]] = {
    # ------------------------------------------------------------------ regression accuracy
    "accuracy.mae": _e(
        "Mean absolute error",
        "Average absolute difference between target and point prediction, in units of y.",
        "MAE = (1/N) Σᵢ |yᵢ − μᵢ|",
        TOOLBOX,
    ),
    "accuracy.rmse": _e(
        "Root mean squared error",
        "Square root of the average squared error, in units of y; weights large errors more than MAE.",
        "RMSE = √( (1/N) Σᵢ (yᵢ − μᵢ)² )",
        TOOLBOX,
    ),
    "accuracy.mdae": _e(
        "Median absolute error",
        "Median of the absolute errors; robust to a few very large errors.",
        "MdAE = median_i |yᵢ − μᵢ|",
        TOOLBOX,
    ),
    "accuracy.marpd": _e(
        "Mean absolute relative percent difference",
        "Scale-free error in percent: the absolute error relative to the mean magnitude of "
        "target and prediction.",
        "MARPD = 100 · (1/N) Σᵢ | 2 (yᵢ − μᵢ) / (|μᵢ| + |yᵢ|) |",
        TOOLBOX,
    ),
    "accuracy.r2": _e(
        "Coefficient of determination R²",
        "Share of the target's variance explained by the point prediction; 1 is perfect, "
        "0 is no better than predicting the mean of y, and it can be negative.",
        "R² = 1 − Σᵢ (yᵢ − μᵢ)² / Σᵢ (yᵢ − ȳ)²",
        TOOLBOX,
    ),
    "accuracy.corr": _e(
        "Pearson correlation",
        "Linear correlation between targets and point predictions.",
        "corr = Σᵢ (yᵢ − ȳ)(μᵢ − μ̄) / √( Σᵢ (yᵢ − ȳ)² · Σᵢ (μᵢ − μ̄)² )",
        TOOLBOX,
    ),
    # ------------------------------------------------------------------ average calibration
    "avg_calibration.rms_cal": _e(
        "Root-mean-squared calibration error",
        "How far the observed share of targets inside central prediction intervals is from "
        "the intervals' nominal level, root-mean-squared over levels. " + _CAL_CURVE,
        "RMSCE = √( (1/B) Σⱼ (p_obs(pⱼ) − pⱼ)² )",
        f"{TOOLBOX}; {KULESHOV}",
    ),
    "avg_calibration.ma_cal": _e(
        "Mean absolute calibration error",
        "Average absolute gap between observed and expected proportion in central "
        "intervals (the toolbox's ECE). " + _CAL_CURVE,
        "MACE = (1/B) Σⱼ |p_obs(pⱼ) − pⱼ|",
        f"{TOOLBOX}; {KULESHOV}",
    ),
    "avg_calibration.miscal_area": _e(
        "Miscalibration area",
        "Area between the average calibration curve (observed vs expected proportion, "
        "linearly interpolated) and the diagonal; segments crossing the diagonal are split "
        "at the crossing. 0 is perfect, 0.5 the worst.",
        "area = ∫₀¹ |p_obs(p) − p| dp",
        TOOLBOX,
    ),
    "avg_calibration.pit_histogram": _e(
        "PIT histogram",
        "Counts of the probability integral transform values per bin (samples: 10 equal bins; quantiles: "
        "between consecutive predicted quantiles) with the counts a calibrated forecast expects. A U shape "
        "means over-confidence, a hump under-confidence. Data for plots, not a score.",
        "counts_b = #{i : uᵢ ∈ bin b} (quantiles: bin bᵢ = #{j : q_τⱼ,ᵢ < yᵢ}), "
        "expected_b = N·(width of bin b)",
        TOOLBOX + "; Gneiting, Balabdaoui & Raftery (2007)",
    ),
    # ------------------------------------------------------------------ adversarial group cal.
    "adv_group_calibration": _e(
        "Adversarial group calibration",
        "Calibration of the worst subset of rows of a given size: for each group size, "
        "random subsets are drawn and the largest calibration error among them is kept; "
        "averaging over trials gives a curve of worst-group error against group size. A "
        "model calibrated on average but not on subsets has a high curve at small sizes.",
        "err(s) = mean over trials of max over draws of CE(random subset of size s·N)",
        f"{ZHAO}; {TOOLBOX} (appendix A.3)",
    ),
    "adv_group_calibration.group_sizes": _e(
        "Group sizes",
        "Subset sizes as fractions of the rows at which worst-group calibration is measured "
        "(default linspace(0.01, 1, 10)).",
        "s ∈ {0.01, 0.12, …, 1.0}; subset size max(round(s·N), 2)",
        f"{ZHAO}; {TOOLBOX}",
    ),
    "adv_group_calibration.ma_mean": _e(
        "Worst-group mean absolute calibration error",
        "For each group size: the mean over trials of the worst (largest) mean absolute "
        "calibration error among random subsets of that size.",
        "ma_mean(s) = (1/T) Σₜ maxₐ MACE(subset_{t,a})",
        f"{ZHAO}; {TOOLBOX}",
    ),
    "adv_group_calibration.ma_stderr": _e(
        "Standard error of the worst-group MACE",
        "Standard error of ma_mean over the trials (sample standard deviation / √trials).",
        "ma_stderr(s) = sd_t(maxₐ MACE) / √T",
        f"{ZHAO}; {TOOLBOX}",
    ),
    "adv_group_calibration.rms_mean": _e(
        "Worst-group root-mean-squared calibration error",
        "As ma_mean, with the root-mean-squared calibration error of each subset.",
        "rms_mean(s) = (1/T) Σₜ maxₐ RMSCE(subset_{t,a})",
        f"{ZHAO}; {TOOLBOX}",
    ),
    "adv_group_calibration.rms_stderr": _e(
        "Standard error of the worst-group RMSCE",
        "Standard error of rms_mean over the trials (sample standard deviation / √trials).",
        "rms_stderr(s) = sd_t(maxₐ RMSCE) / √T",
        f"{ZHAO}; {TOOLBOX}",
    ),
    # ------------------------------------------------------------------ sharpness
    "sharpness.sharp": _e(
        "Sharpness (RMS of σ)",
        "Concentration of the predictive distributions, ignoring the targets: the root mean "
        "square of the predicted standard deviations, in units of y. Smaller is sharper; "
        "sharpness is only desirable subject to calibration.",
        "sharp = √( (1/N) Σᵢ σᵢ² )",
        f"{TOOLBOX}; {GBR}",
    ),
    "sharpness.mean_std": _e(
        "Mean predicted standard deviation",
        "Average predicted σ, in units of y (the toolbox paper's definition of sharpness).",
        "mean_std = (1/N) Σᵢ σᵢ",
        f"{TOOLBOX}; {GBR}",
    ),
    "spread_skill.ratio": _e(
        "Spread–skill ratio",
        "Root mean predicted variance over the RMSE of the point prediction, over all rows (no bins). Target 1: "
        "above 1 over-dispersed, below 1 under-dispersed. Gaussians: σ and the mean. Samples: the ensemble "
        "mean, and the members' variance with ddof = 1 times (M + 1)/M (the finite-ensemble correction; "
        "without it a calibrated 5-member ensemble scores √(5/6) = 0.913; xskillscore's and scores' spread "
        "and error functions leave it out). The spread_skill plot bins rows by that spread (equal-count bins).",
        "ratio = √((1/N) Σᵢ s̃ᵢ²) / √((1/N) Σᵢ (yᵢ − ŷᵢ)²), s̃ᵢ² = σᵢ² (Gaussian) or sᵢ² (Mᵢ + 1)/Mᵢ (samples)",
        FORTIN,
    ),
    # ------------------------------------------------------------------ scoring rules
    "scoring_rule.nll": _e(
        "Negative log-likelihood (Gaussian)",
        "Mean negative log predictive density of the targets; a strictly proper score that "
        "rewards calibration and sharpness together, sensitive to overconfident outliers.",
        "NLL = (1/N) Σᵢ [ ½ log(2π σᵢ²) + (yᵢ − μᵢ)² / (2σᵢ²) ]",
        f"{GR}; {TOOLBOX}",
    ),
    "scoring_rule.crps": _e(
        "Continuous ranked probability score",
        "Mean squared distance between the predictive CDF and the step function at the "
        "target, in units of y; reduces to the absolute error for a point forecast. "
        "Closed form for Gaussians; for samples the empirical-CDF (energy form) estimator.",
        "CRPS(F, y) = ∫ (F(z) − 1{y ≤ z})² dz = E|X − y| − ½ E|X − X′|; Gaussian: "
        "σ [ z (2Φ(z) − 1) + 2φ(z) − 1/√π ], z = (y − μ)/σ",
        f"{GR}; {ACCRUE}",
    ),
    "scoring_rule.crps_fair": _e(
        "Fair CRPS (ensembles)",
        "Unbiased version of the sample CRPS: the score an ensemble of M members would get "
        "if it had infinitely many members from the same distribution.",
        "CRPS_fair = (1/M) Σⱼ |xⱼ − y| − 1/(2M(M−1)) Σⱼ Σₖ |xⱼ − xₖ|",
        f"{FERRO}; {GR}",
    ),
    "scoring_rule.check": _e(
        "Check score (pinball loss over levels)",
        "Pinball loss of the predicted quantiles at levels linspace(0.01, 0.99, resolution), "
        "averaged over rows and levels; in units of y.",
        "ρ_τ(y, q) = max(τ (y − q), (τ − 1)(y − q)); check = mean over τ and i of ρ_τ(yᵢ, q_τ,ᵢ)",
        f"{GR}; {TOOLBOX}",
    ),
    "scoring_rule.pinball": _e(
        "Pinball (quantile) loss",
        "Pinball loss of the given predicted quantiles, averaged over rows and the levels "
        "present in the file (per level under pinball_by_level).",
        "ρ_τ(y, q) = max(τ (y − q), (τ − 1)(y − q))",
        GR,
    ),
    "scoring_rule.pinball_by_level": _e(
        "Pinball loss per level",
        "Mean pinball loss of the predicted τ-quantile for each level τ in the file.",
        "ρ_τ(y, q) = max(τ (y − q), (τ − 1)(y − q))",
        GR,
    ),
    "scoring_rule.interval": _e(
        "Interval score",
        "Width of the central interval plus a penalty 2/α times the distance by which the "
        "target falls outside it; averaged over rows (and, for Gaussians, over central "
        "levels linspace(0.01, 0.99, resolution)). In units of y.",
        "S_α(l, u; y) = (u − l) + (2/α)(l − y)·1{y < l} + (2/α)(y − u)·1{y > u}, α = 1 − level",
        f"{GR} (Eq. 43); {TOOLBOX}",
    ),
    "scoring_rule.interval_by_level": _e(
        "Interval score per level",
        "Mean interval score of the central interval at each level in the file.",
        "S_α(l, u; y) = (u − l) + (2/α)(l − y)·1{y < l} + (2/α)(y − u)·1{y > u}",
        GR,
    ),
    "scoring_rule.wis": _e(
        "Weighted interval score",
        "Weighted sum of the absolute error of the median and the interval scores of K "
        "central intervals; approximates the CRPS for quantile forecasts.",
        "WIS = 1/(K + ½) · ( ½ |y − m| + Σₖ (αₖ/2) · S_αₖ(lₖ, uₖ; y) )",
        BRACHER,
    ),
    # ------------------------------------------------------------------ reliability (ACCRUE)
    "reliability.rs": _e(
        "Reliability score (RS)",
        "Squared L2 distance between the CDF of the standardised errors ηᵢ and the one a "
        "calibrated Gaussian forecast implies; computed exactly from the sorted ηᵢ. "
        "0 is perfect reliability.",
        "RS = ∫ (Φ(η) − C(η))² dη = Σᵢ [ ηᵢ/N (erf ηᵢ + 1) − ηᵢ (2i − 1)/N² + "
        "exp(−ηᵢ²)/(N√π) ] − ½√(2/π),  ηᵢ = (yᵢ − μᵢ)/(√2 σᵢ) sorted, Φ(η) = ½(1 + erf η)",
        ACCRUE,
    ),
    "reliability.max_cal_err": _e(
        "Maximum calibration error (bin-free)",
        "Largest vertical gap between the empirical CDF of the PIT values and the diagonal "
        "in ACCRUE's bin-free reliability diagram (a Kolmogorov-Smirnov distance to the "
        "uniform).",
        "max_φ |C(φ) − φ|,  C(φ) = (1/N) Σᵢ H(φ − Φᵢ),  Φᵢ = ½(erf ηᵢ + 1)",
        ACCRUE,
    ),
    "reliability.accrue": _e(
        "ACCRUE cost",
        "Trade-off between accuracy (mean CRPS) and reliability (RS), each weighted by the "
        "other's minimum so the two have comparable scale.",
        "ACCRUE = β·CRPS̄ + (1 − β)·RS,  β = RS_min / (CRPS̄_min + RS_min),  "
        "CRPS̄_min = erf(√(ln2/2))·mean|ε|,  RS_min ≈ ½√(2/π)",
        ACCRUE,
    ),
    # ------------------------------------------------------------------ coverage (Kompa)
    "coverage.coverage": _e(
        "Empirical coverage",
        "Share of targets inside the prediction interval (bounds inclusive) at each "
        "nominal level; should be close to the level. For an ensemble of M members no interval "
        "between members covers the level (a calibrated 10-member ensemble's 2.5%–97.5% interval covers "
        "0.789, its [min, max] 9/11 = 0.818): a row counts with the chance that its randomised PIT, "
        "uniform on [rank, rank + 1]/(M + 1), falls in [(1 − level)/2, (1 + level)/2], so a calibrated "
        "ensemble of any size covers exactly the level.",
        "coverage = (1/N) Σᵢ 1{lᵢ ≤ yᵢ ≤ uᵢ};  ensembles: (1/N) Σᵢ P(Uᵢ ∈ [(1 − level)/2, (1 + level)/2] | rankᵢ)",
        KOMPA,
    ),
    "coverage.width": _e(
        "Mean interval width",
        "Average width of the prediction interval at each level, in units of y.",
        "width = (1/N) Σᵢ (uᵢ − lᵢ)",
        KOMPA,
    ),
    "coverage.width_norm": _e(
        "Normalised interval width",
        "Mean width divided by the standard deviation of the training targets (given by "
        "--y-std or --train), the unit used by Kompa et al.",
        "width_norm = width / sd(y_train)",
        KOMPA,
    ),
    "coverage.coverage_error": _e(
        "Coverage error",
        "Empirical coverage minus the nominal level: negative means intervals too narrow "
        "(overconfident), positive too wide.",
        "coverage_error = coverage − level",
        KOMPA,
    ),
    "coverage.miss_below": _e(
        "Share below the interval",
        "Share of targets below the lower bound (ensembles: the chance that the randomised PIT is below "
        "(1 − level)/2, as for coverage).",
        "miss_below = (1/N) Σᵢ 1{yᵢ < lᵢ}",
        KOMPA,
    ),
    "coverage.miss_above": _e(
        "Share above the interval",
        "Share of targets above the upper bound (ensembles: the chance that the randomised PIT is above "
        "(1 + level)/2, as for coverage).",
        "miss_above = (1/N) Σᵢ 1{yᵢ > uᵢ}",
        KOMPA,
    ),
    # ------------------------------------------------------------------ classification
    "accuracy.accuracy": _e(
        "Accuracy",
        "Share of rows whose most probable class is the label.",
        "acc = (1/N) Σᵢ 1{argmaxₖ pᵢₖ = yᵢ}",
        GUO,
    ),
    "accuracy.nll": _e(
        "Negative log-likelihood (log loss)",
        "Mean negative log probability given to the true label; strictly proper.",
        "NLL = −(1/N) Σᵢ log pᵢ,yᵢ",
        f"{GR}; {UM}",
    ),
    "accuracy.brier": _e(
        "Brier score",
        "Mean squared distance between the probability vector and the one-hot label, in "
        "[0, 2]; strictly proper. Summed over classes: for two classes it is twice scikit-learn's "
        "brier_score_loss, which scores P(class 1) only, (p − y)² in [0, 1] "
        '(uqeval.brier_score(..., convention="binary") gives that number).',
        "Brier = (1/N) Σᵢ Σₖ (pᵢₖ − 1{yᵢ = k})²",
        f"{BRIER}; {GR}",
    ),
    "accuracy.brier_um": _e(
        "Brier score (Uncertainty Metrics convention)",
        "The Brier score without its constant term, as Uncertainty Metrics reports it; equals brier − 1.",
        "Brier_UM = (1/N) Σᵢ ( Σₖ pᵢₖ² − 2 pᵢ,yᵢ ) = Brier − 1",
        UM,
    ),
    "brier_decomposition.uncertainty": _e(
        "Brier decomposition: uncertainty",
        "Brier score of always predicting the label frequencies: how hard the labels are, "
        "independent of the model.",
        "UNC = Σₖ ȳₖ (1 − ȳₖ), ȳₖ = share of label k;  Brier = REL − RES + UNC",
        f"{MURPHY}; {UM}",
    ),
    "brier_decomposition.resolution": _e(
        "Brier decomposition: resolution",
        "How much the label frequencies within groups of rows (grouped by predicted class) "
        "differ from the overall frequencies; higher means more informative predictions.",
        "RES = Σ_g (n_g/N) Σₖ (ȳ_g,k − ȳₖ)²",
        f"{MURPHY}; {UM}",
    ),
    "brier_decomposition.reliability": _e(
        "Brier decomposition: reliability",
        "Calibration part of the Brier score: squared gap between the mean predicted "
        "probabilities and the label frequencies within each group (predicted class).",
        "REL = Σ_g (n_g/N) Σₖ (p̄_g,k − ȳ_g,k)²",
        f"{MURPHY}; {UM}",
    ),
    "calibration.ece": _e(
        "Expected calibration error",
        "Count-weighted mean gap between accuracy and mean confidence of the top label in "
        "equal-width confidence bins (--bins, default 15). Bins [b/B, (b+1)/B), closed on the left; a "
        "confidence of exactly 1.0 has an extra bin of its own (as Uncertainty Metrics' GCE and torchmetrics' "
        "calibration_error). netcal clips confidences to 1 − ε, so 1.0 joins its last bin (default 10 bins); "
        "scikit-learn's calibration_curve closes bins on the right ((b/B, (b+1)/B]), so a confidence on an "
        "inner edge goes one bin lower and 1.0 joins the last bin.",
        "ECE = Σ_b (n_b/N) |acc(b) − conf(b)|",
        f"{GUO}; {NAEINI}",
    ),
    "calibration.rmsce": _e(
        "Root-mean-squared calibration error",
        "Square root of the count-weighted mean squared gap between accuracy and confidence "
        "of the top label, in adaptive (equal-count) bins.",
        "RMSCE = √( Σ_b (n_b/N) (acc(b) − conf(b))² )",
        NIXON,
    ),
    "calibration.mce": _e(
        "Maximum calibration error",
        "Largest gap between accuracy and confidence over the (non-empty) top-label bins.",
        "MCE = max_b |acc(b) − conf(b)|",
        f"{NAEINI}; {GUO}",
    ),
    "calibration.sce": _e(
        "Static calibration error",
        "ECE computed for every class's probability (not only the top label), "
        "class-conditionally in equal-width bins, averaged over classes.",
        "SCE = (1/K) Σₖ Σ_b (n_b,k/N) |acc(b, k) − conf(b, k)|",
        NIXON,
    ),
    "calibration.ace": _e(
        "Adaptive calibration error",
        "Like SCE but with adaptive bins holding equal numbers of predictions, so every "
        "bin's estimate has similar variance.",
        "ACE = (1/(K·B)) Σₖ Σ_b |acc(b, k) − conf(b, k)|, equal-count bins",
        NIXON,
    ),
    "calibration.tace": _e(
        "Thresholded adaptive calibration error",
        "ACE restricted to class probabilities above a threshold ε (default 0.01), so the "
        "many near-zero probabilities do not dominate.",
        "TACE = ACE over {pᵢₖ > ε}",
        NIXON,
    ),
    "prediction_sets.coverage": _e(
        "Prediction-set coverage",
        "Share of rows whose prediction set — the smallest set of top classes with total "
        "probability ≥ 1 − α — contains the label; should be close to 1 − α.",
        "coverage = (1/N) Σᵢ 1{yᵢ ∈ Sᵢ},  Sᵢ = smallest top-k set with Σ p ≥ 1 − α",
        f"{KOMPA} (Eq. 4)",
    ),
    "prediction_sets.mean_size": _e(
        "Mean prediction-set size",
        "Average number of classes in the prediction sets at each level; smaller is sharper.",
        "mean_size = (1/N) Σᵢ |Sᵢ|",
        KOMPA,
    ),
    "prediction_sets.size_histogram": _e(
        "Prediction-set size histogram",
        "Number of rows whose prediction set at this level holds 1, 2, ..., K classes (data for plots, "
        "not a score).",
        "count_k = #{i : |Sᵢ| = k}, k = 1..K",
        KOMPA,
    ),
    # ------------------------------------------------------------------ ensembles
    "ensemble_uncertainty.total": _e(
        "Total uncertainty",
        "Entropy of the ensemble's mean predictive distribution, averaged over rows (nats).",
        "total = (1/N) Σᵢ H(p̄ᵢ),  p̄ᵢ = (1/M) Σₘ pᵢ⁽ᵐ⁾,  H(p) = −Σₖ pₖ log pₖ",
        f"{DEPEWEG}; {UM}",
    ),
    "ensemble_uncertainty.aleatoric": _e(
        "Aleatoric (expected data) uncertainty",
        "Mean entropy of the individual members' predictions, averaged over rows (nats).",
        "aleatoric = (1/N) Σᵢ (1/M) Σₘ H(pᵢ⁽ᵐ⁾)",
        f"{DEPEWEG}; {UM}",
    ),
    "ensemble_uncertainty.epistemic": _e(
        "Epistemic uncertainty (mutual information)",
        "Mutual information between the label and the model parameters: total minus "
        "aleatoric. Zero exactly when all members agree.",
        "epistemic = total − aleatoric = (1/N) Σᵢ I[y; θ | xᵢ]",
        f"{DEPEWEG}; {UM}",
    ),
    "ensemble_uncertainty.knowledge": _e(
        "Knowledge uncertainty (Dirichlet outputs)",
        "Mutual information between the label and the categorical parameters π of a Dirichlet output.",
        "MI[y, π] = H(E[π]) − E[H(π)],  π ~ Dir(α)",
        f"{MALININ}; {UM}",
    ),
    "information_criteria": _e(
        "Information criteria",
        "Estimates of the expected log predictive density on new data from per-member "
        "log-likelihoods; reported with their standard error over rows.",
        "see waic1, waic2, iscv",
        f"{WATANABE}; {UM}",
    ),
    "information_criteria.waic1": _e(
        "Negative WAIC, type 1",
        "Log of the ensemble-averaged likelihood minus the variance of the members' "
        "log-likelihoods (the effective-parameter penalty), averaged over rows.",
        "nWAIC₁ = (1/n) Σᵢ [ log (1/m) Σⱼ p(yᵢ|θⱼ) − V̂ᵢ ],  V̂ᵢ = sample variance over j of log p(yᵢ|θⱼ)",
        f"{WATANABE}; {UM}",
    ),
    "information_criteria.waic2": _e(
        "Negative WAIC, type 2",
        "Alternative WAIC form using the mean member log-likelihood.",
        "nWAIC₂ = (1/n) Σᵢ [ (2/m) Σⱼ log p(yᵢ|θⱼ) − log (1/m) Σⱼ p(yᵢ|θⱼ) ]",
        f"{WATANABE}; {UM}",
    ),
    "information_criteria.iscv": _e(
        "Importance-sampling cross-validation",
        "Leave-one-out predictive log-likelihood estimated by importance sampling over the "
        "members (harmonic mean of the likelihoods).",
        "ISCV = −(1/n) Σᵢ log (1/m) Σⱼ 1 / p(yᵢ|θⱼ)",
        f"{GELFAND}; {UM}",
    ),
    "information_criteria.waic1_se": _e(
        "Standard error of nWAIC₁",
        "How precisely the rows determine waic1: the standard error of the mean of its per-row terms "
        "(sample standard deviation over rows / √N). It describes the estimate, not the model, and "
        "shrinks as N grows; a difference between two models smaller than it is noise.",
        "se = s_t / √N,  s_t² = 1/(N−1) Σᵢ (tᵢ − t̄)²,  tᵢ = log (1/M) Σⱼ p(yᵢ|θⱼ) − V̂ᵢ",
        f"{WATANABE}; {UM} (which divides by the number of members instead of N)",
    ),
    "information_criteria.waic2_se": _e(
        "Standard error of nWAIC₂",
        "Standard error of the mean of the per-row waic2 terms over the N rows (sample standard "
        "deviation / √N); describes the precision of waic2.",
        "se = s_t / √N,  tᵢ = (2/M) Σⱼ log p(yᵢ|θⱼ) − log (1/M) Σⱼ p(yᵢ|θⱼ)",
        f"{WATANABE}; {UM} (which divides by the number of members instead of N)",
    ),
    "information_criteria.iscv_se": _e(
        "Standard error of ISCV",
        "Standard error of the mean of the per-row ISCV terms over the N rows (sample standard "
        "deviation / √N); describes the precision of iscv.",
        "se = s_t / √N,  tᵢ = −log (1/M) Σⱼ 1 / p(yᵢ|θⱼ)",
        f"{GELFAND}; {UM} (which divides by the number of members instead of N)",
    ),
    "diversity": _e(
        "Ensemble diversity",
        "How differently the members predict, averaged over pairs of members.",
        "mean over member pairs (a, b)",
        f"{FORT}; {KUNCHEVA}; {UM}",
    ),
    "diversity.disagreement": _e(
        "Disagreement",
        "Share of rows on which two members predict different classes, averaged over pairs.",
        "dis = mean_(a,b) (1/N) Σᵢ 1{argmax pᵢ⁽ᵃ⁾ ≠ argmax pᵢ⁽ᵇ⁾}",
        f"{FORT}; {UM}",
    ),
    "diversity.kl": _e(
        "Mean KL divergence between members",
        "Kullback-Leibler divergence between two members' predictive distributions, "
        "averaged over rows and pairs (nats).",
        "KL = mean_(a,b) (1/N) Σᵢ Σₖ pᵢₖ⁽ᵃ⁾ log(pᵢₖ⁽ᵃ⁾ / pᵢₖ⁽ᵇ⁾)",
        f"{FORT}; {UM}",
    ),
    "diversity.cosine_similarity": _e(
        "Mean cosine similarity between members",
        "Cosine similarity of two members' predictions, averaged over pairs; 1 means identical directions.",
        "cos = mean_(a,b) ⟨p⁽ᵃ⁾, p⁽ᵇ⁾⟩ / (‖p⁽ᵃ⁾‖ ‖p⁽ᵇ⁾‖)",
        f"{FORT}; {UM}",
    ),
    "diversity.double_fault": _e(
        "Double fault",
        "Share of rows that both members of a pair misclassify, averaged over pairs; low "
        "values mean members make different mistakes.",
        "DF = mean_(a,b) (1/N) Σᵢ 1{ŷᵢ⁽ᵃ⁾ ≠ yᵢ and ŷᵢ⁽ᵇ⁾ ≠ yᵢ}",
        f"{KUNCHEVA}; {UM}",
    ),
    "rejection": _e(
        "Rejection curve",
        "Accuracy (classification) or RMSE (regression) of the rows kept after rejecting "
        "the fraction f with the highest uncertainty, on a grid of f; the oracle curve "
        "rejects by true error instead.",
        "acc(f) = accuracy over the (1 − f)·N least uncertain rows",
        f"{NADEEM}; {UM}",
    ),
    "rejection.auc_rejection": _e(
        "Area under the rejection curve",
        "Area under accuracy (or RMSE) against rejected fraction; a good uncertainty "
        "ranking raises accuracy (lowers RMSE) quickly as uncertain rows are rejected.",
        "AUC = ∫₀¹ acc(f) df (trapezoid rule on the grid)",
        f"{NADEEM}; {UM}",
    ),
    "rejection.auc_oracle": _e(
        "Area under the oracle rejection curve",
        "The same area for an oracle that rejects by the true outcome (wrong rows first; for "
        "samples, the largest errors first): the best any uncertainty ranking could do with these "
        "predictions. auc_rejection close to it means the uncertainty ranks the errors well.",
        "AUC_oracle = ∫₀^0.99 oracle(f) df (trapezoid rule on f = 0, 0.01, …, 0.99)",
        f"{NADEEM}; {UM}",
    ),
    "rejection.fractions": _e(
        "Rejected fractions",
        "The grid of rejected fractions f at which the rejection and oracle curves are evaluated; "
        "r = ⌊f·N⌋ rows are rejected and at least one row is always kept. Data for plots, not a score.",
        "f ∈ {0, 0.01, …, 0.99},  r = ⌊f·N⌋,  kept = max(N − r, 1)",
        f"{NADEEM}; {UM}",
    ),
    "rejection.values": _e(
        "Rejection curve values",
        "Accuracy (classification: uncertainty 1 − max probability) or RMSE of the ensemble mean "
        "(samples: uncertainty the members' standard deviation) of the rows kept after rejecting the "
        "r most uncertain ones, at each rejected fraction. Rows tied in uncertainty across the cut "
        "count by their expected value under a random order. Data for plots, not a score.",
        "acc(f) = (1/(N−r)) Σ_kept cᵢ;  RMSE(f) = √( (1/(N−r)) Σ_kept eᵢ² )",
        f"{NADEEM}; {UM}",
    ),
    "rejection.oracle_values": _e(
        "Oracle curve values",
        "The rejection curve of the oracle, which keeps the correct rows (the smallest errors) "
        "first: an upper bound of the accuracy curve (a lower bound of the RMSE curve) for any "
        "uncertainty ranking. Data for plots, not a score.",
        "oracle(f) = (1/(N−r)) Σ of the N−r largest cᵢ;  RMSE: √((1/(N−r)) Σ of the N−r smallest eᵢ²)",
        f"{NADEEM}; {UM}",
    ),
    "rejection.oracle_collaborative_accuracy": _e(
        "Oracle-collaborative accuracy",
        "Accuracy when the fraction f (--oca-fraction, default 0.01) of most uncertain rows "
        "is handed to an oracle that labels them correctly.",
        "OCA(f) = (1/N) [ #correct among kept rows + f·N ]",
        f"{KIVLICHAN}; {UM}",
    ),
    "bayesian_ece": _e(
        "Bayesian ECE",
        "Posterior distribution of the ECE given the finite evaluation set: a Dirichlet "
        "posterior over bin × correctness counts and a posterior over each bin's mean "
        "confidence; reported by its mean and quantiles.",
        "ECE(q, p) = Σ_m q_1,m |q_1,m − p_m| for posterior draws (q, p)",
        UM,
    ),
    "bayesian_ece.mean": _e(
        "Bayesian ECE: posterior mean",
        "Mean of the posterior draws of the ECE.",
        "mean over draws of ECE(q, p)",
        UM,
    ),
    "bayesian_ece.q10": _e(
        "Bayesian ECE: 10 % quantile",
        "10th percentile of the posterior draws of the ECE.",
        "quantile 0.10 of ECE(q, p)",
        UM,
    ),
    "bayesian_ece.q50": _e(
        "Bayesian ECE: median",
        "Median of the posterior draws of the ECE.",
        "quantile 0.50 of ECE(q, p)",
        UM,
    ),
    "bayesian_ece.q90": _e(
        "Bayesian ECE: 90 % quantile",
        "90th percentile of the posterior draws of the ECE.",
        "quantile 0.90 of ECE(q, p)",
        UM,
    ),
    "spce": _e(
        "Semiparametric calibration error",
        "Estimate of the L2 calibration error of binary or top-label probabilities without "
        "bins: a kernel-smoothed, cross-fitted estimate of the calibration function plugged "
        "into a low-bias estimator, with a bootstrap confidence interval.",
        "CE² = E[(p − E[y | p])²] ≈ mean of (pᵢ − yᵢ)(pᵢ − ĉ(pᵢ)), ĉ cross-fitted",
        f"{UM} (semiparametric_calibration_error, after S. Yadlowsky)",
    ),
    "spce.spce": _e(
        "Semiparametric calibration error (SPCE)",
        "Root-mean-square gap between the predicted probability p and the true frequency E[y | p], "
        "estimated without bins: E[y | p] is a Gaussian-kernel regression fitted on the other "
        "folds (5-fold cross-fitting, seeded) and plugged into a low-bias estimator. Binary files "
        "(K = 2) use P(class 1) and y = label; more classes use the top label (p = max probability, "
        "y = top class is right). 0 is perfect calibration.",
        "SPCE = √max(θ̂, 0),  θ̂ = (1/N) Σᵢ (pᵢ − yᵢ)(pᵢ − ĉ(pᵢ)),  ĉ(p) = p + m̂(p), m̂ = "
        "cross-fitted Nadaraya-Watson regression of y − p on p",
        f"{UM} (semiparametric_calibration_error, after S. Yadlowsky)",
    ),
    "spce.ci_low": _e(
        "SPCE: lower end of the 95 % interval",
        "Lower end of the 95 % confidence interval of the SPCE, from a seeded bootstrap (200 "
        "resamples) of the per-row influence terms ψᵢ. Describes the uncertainty of the estimate, "
        "not the model.",
        "ci_low = √max(θ̂ − z·ŝe, 0),  ŝe = sd of the bootstrap means of ψᵢ = (pᵢ − ĉᵢ)(pᵢ + ĉᵢ − 2yᵢ), "
        "z = Φ⁻¹(0.975)",
        f"{UM} (semiparametric_calibration_error)",
    ),
    "spce.ci_high": _e(
        "SPCE: upper end of the 95 % interval",
        "Upper end of the 95 % confidence interval of the SPCE (seeded bootstrap of the influence "
        "terms, as ci_low).",
        "ci_high = √max(θ̂ + z·ŝe, 0),  ŝe and ψᵢ as for ci_low, z = Φ⁻¹(0.975)",
        f"{UM} (semiparametric_calibration_error)",
    ),
    # ------------------------------------------------------------------ UCC
    "ucc": _e(
        "Uncertainty characteristics curve",
        "Scaling every prediction interval by k traces a curve of two interval properties "
        "(by default mean bandwidth vs miss rate; also excess, deficit). The curve does "
        "not depend on one operating point; its area and the gain over constant-width "
        "bands summarise the intervals' quality.",
        "interval at scale k: [ŷ − k·zˡ, ŷ + k·zᵘ];  operating point (x(k), y(k))",
        UCC,
    ),
    "ucc.auucc": _e(
        "Area under the UCC",
        "Trapezoid area under the uncertainty characteristics curve over all critical "
        "scales; smaller means less width is needed for a given miss rate.",
        "AUUCC = ∫ y dx along the curve {(x(k), y(k))}",
        UCC,
    ),
    "ucc.auucc_const": _e(
        "AUUCC of the constant-band reference",
        "AUUCC of intervals of equal width around the same point predictions (its value "
        "does not depend on the width).",
        "A_const = AUUCC(zˡ = zᵘ = const)",
        UCC,
    ),
    "ucc.gain": _e(
        "UCC gain",
        "Relative improvement of the model's AUUCC over the constant-band reference (the "
        "paper's Eq. 6); positive means the predicted widths carry information.",
        "gain = (A_const − A_model) / A_const",
        UCC,
    ),
    "ucc.partial": _e(
        "Partial AUUCC",
        "Area under the UCC restricted to a range of the x or y axis (interpolated at the "
        "range ends), with its gain over the constant-band reference on the same range.",
        "AUUCC_[a,b] = ∫_a^b y dx",
        UCC,
    ),
    "ucc.op": _e(
        "Original operating point",
        "The intervals as given (k = 1): their x and y values and the linear cost there.",
        "C(k) = c·x(k) + (1 − c)·y(k) at k = 1",
        UCC,
    ),
    "ucc.op_min": _e(
        "Minimum-cost operating point",
        "The scale k* minimising the linear cost C(k) = c·x(k) + (1 − c)·y(k) (--cost c), "
        "with its coordinates and cost.",
        "k* = argmin_k c·x(k) + (1 − c)·y(k)",
        UCC,
    ),
}

# ------------------------------------------------------------------------------ calibration diagnostics (issue 15, part A)
CORP = (
    "Dimitriadis, Gneiting & Jordan (2021), Stable reliability diagrams for probabilistic classifiers, "
    "PNAS 118(8):e2016191118; for the mean: Gneiting & Resin (2023), Regression diagnostics meets forecast "
    "evaluation, Electronic Journal of Statistics 17:3226-3286"
)
LEVI = (
    "Levi, Gispan, Giladi & Fetaya (2022), Evaluating and Calibrating Uncertainty Prediction in Regression "
    "Tasks, Sensors 22(15):5540 (arXiv:1905.11659)"
)
LAVES = (
    "Laves, Ihler, Fast, Kahrs & Ortmaier (2020), Well-calibrated regression uncertainty in medical imaging "
    "with deep learning, MIDL 2020, PMLR 121:393-412"
)
SMECE = (
    "Błasiok & Nakkiran (2023), Smooth ECE: Principled Reliability Diagrams via Kernel Smoothing, "
    "arXiv:2309.12236 (reference implementation: relplot)"
)
_CORP_SCORES = (
    "Scores (keys under corp): mse (squared error of the point forecast: Gaussians, samples, points, "
    "intervals with a point column); pinball_<level> (quantile files, isotonic quantile regression, "
    "climatology = the τ-quantile of y); brier and log "
    "(P(class 1), two classes); brier_top_label, log_top_label (top-label confidence vs correctness) "
    "and brier_ovr, log_ovr (sums over classes of the one-vs-rest decompositions) for more classes. "
    "Opt-in: --diagnostics."
)
GLOSSARY.update(
    {
        "corp.mcb": _e(
            "CORP miscalibration (MCB)",
            "How much of the mean score is lost to miscalibration: the mean score of the forecast minus that of "
            "its isotonic (PAV) recalibration x̂ = PAV(y | x), which keeps the forecast's ranking and fixes its "
            "values. 0 for a forecast that is already isotonic-calibrated. " + _CORP_SCORES,
            "MCB = S̄(x) − S̄(x̂), x̂ = isotonic regression of y on x; S̄ = MCB − DSC + UNC exactly",
            CORP,
        ),
        "corp.dsc": _e(
            "CORP discrimination (DSC)",
            "How much better the recalibrated forecast scores than the climatology r (the mean outcome; higher is "
            "better): the information in the forecast's ranking. " + _CORP_SCORES,
            "DSC = S̄(r) − S̄(x̂), r = mean of y",
            CORP,
        ),
        "corp.unc": _e(
            "CORP uncertainty (UNC)",
            "Mean score of the climatology r (the mean outcome): a property of the data, not of the model. "
            + _CORP_SCORES,
            "UNC = S̄(r) = (1/N) Σᵢ S(r, yᵢ)",
            CORP,
        ),
        "spread_calibration.ence": _e(
            "Expected normalised calibration error (ENCE)",
            "Rows sorted by predicted σ into B equal-count bins (--bins, default 15; at most N); in each bin the "
            "root mean predicted variance (RMV) is compared with the RMSE of the point forecast. 0 when σ matches "
            "the error at every spread level. Gaussians and samples (σ = members' std with ddof = 1 times "
            "√((M + 1)/M), the finite-ensemble correction; the bins are formed on that sample spread, which is "
            "noisy for small M, so a calibrated small ensemble still scores above 0 at any N). "
            "Opt-in: --diagnostics.",
            "ENCE = (1/B) Σ_b |RMV_b − RMSE_b| / RMV_b, RMV_b = √mean_b σ², RMSE_b = √mean_b (y − ŷ)²",
            LEVI,
        ),
        "spread_calibration.cv": _e(
            "Coefficient of variation of σ (C_v)",
            "How much the predicted σ varies across rows, relative to its mean (unbiased N − 1 form). Descriptive: "
            "a low C_v means nearly constant σ, which says little about which rows are hard (Levi et al.). "
            "Opt-in: --diagnostics.",
            "C_v = √(Σᵢ (σᵢ − σ̄)² / (N − 1)) / σ̄",
            LEVI,
        ),
        "spread_calibration.uce": _e(
            "Uncertainty calibration error (UCE)",
            "B equal-width bins (--bins, default 15) of the predicted variance σ² between its minimum and maximum; "
            "the count-weighted mean absolute gap between the mean squared error and the mean variance of each "
            "bin (as netcal). Samples: σ as in ENCE (finite-ensemble corrected). Opt-in: --diagnostics.",
            "UCE = Σ_b (n_b/N) |MSE_b − MV_b|",
            LAVES,
        ),
        "smooth_calibration.smece": _e(
            "Smooth ECE (smECE)",
            "Kernel-smoothed calibration error: the residuals f − y are smoothed over the predictions with a "
            "Gaussian kernel reflected at 0 and 1 and averaged against the smoothed density of the predictions; "
            "the bandwidth σ* is the fixed point σ = smECE_σ. Binary: P(class 1); more classes: the top label. "
            "Consistent (unlike binned ECE) and free of bin choices. Opt-in: --diagnostics.",
            "smECE_σ = ∫ |r̂_σ(t)| δ̂_σ(t) dt / ∫ δ̂_σ(t) dt, r̂_σ(t) = Σᵢ K_σ(t, fᵢ)(fᵢ − yᵢ) / δ̂_σ(t), "
            "δ̂_σ(t) = Σᵢ K_σ(t, fᵢ); σ* = fixed point of σ = smECE_σ",
            SMECE,
        ),
        "smooth_calibration.bandwidth": _e(
            "Smooth ECE bandwidth σ*",
            "The kernel bandwidth at which smooth_calibration.smece is evaluated, found by relplot's bisection "
            "(10 halvings of [0, 1]) for the fixed point σ = smECE_σ. Data, not a score.",
            "σ* ≈ smECE_{σ*}",
            SMECE,
        ),
    }
)
# ------------------------------------------------------------------------------ end of calibration diagnostics

# ------------------------------------------------------------------ forecast verification (issue 16 A)
GNEITING_RANJAN = (
    "Gneiting & Ranjan (2011), Comparing density forecasts using threshold- and quantile-weighted "
    "scoring rules, Journal of Business & Economic Statistics 29(3):411-422"
)
ALLEN = (
    "Allen, Ginsbourger & Ziegel (2023), Evaluating forecasts for high-impact events using transformed "
    "kernel scores, SIAM/ASA J. Uncertainty Quantification 11(3):906-940; Allen, Koh, Segers & Ziegel "
    "(2023), Weighted verification tools to evaluate univariate and multivariate probabilistic forecasts "
    "for high-impact weather events, Weather and Forecasting 38(3):499-516"
)
EHM = (
    "Ehm, Gneiting, Jordan & Krüger (2016), Of quantiles and expectiles: consistent scoring functions, "
    "Choquet representations and forecast rankings, JRSS B 78(3):505-562"
)
_REGION = (
    "The region R comes from --tw-threshold: 't' or '>t' is [t, ∞), '<t' is (−∞, t], 'a:b' is "
    "[a, b] (settings.tw_threshold = [a, b], null for an open end)."
)
_MURPHY = (
    "Computed with --murphy on a grid of 201 thresholds θ from the smallest to the largest forecast or "
    "target (probabilities: [0, 1]); 'thetas' holds the grid. Data for the Murphy diagram (plot kind "
    "'murphy'); in 'uqeval compare' a model dominates another when its curve is nowhere above and "
    "somewhere below it (checked exactly at every forecast and target value)."
)
#: Entries reached by their full path (or group) only: the short names keep meaning the classic metric
#: ("crps" is scoring_rule.crps, "brier" accuracy.brier).
QUALIFIED_ONLY = {"exceedance.crps", "exceedance.brier"}
GLOSSARY.update(
    {
        "weighted_scoring.twcrps": _e(
            "Threshold-weighted CRPS",
            "The CRPS restricted to outcomes in a region R: the squared distance between forecast CDF and "
            "target step integrated over R only, so a forecast is judged on the tail that matters. Equals "
            "the CRPS of the forecast and target censored to R (chaining function v). Gaussians: closed "
            "form; samples: the CRPS of the chained members; quantiles (and interval ends as quantiles): twice the "
            "mean pinball loss of the chained quantiles v(q_τ) at v(y), the quantile approximation of the CRPS. "
            + _REGION,
            "twCRPS(F, y) = ∫_R (F(z) − 1{y ≤ z})² dz = CRPS(F∘v⁻¹, v(y)), v(z) = min(max(z, a), b); "
            "Gaussian: σ[B(c) − B(a′) + B(−c) − B(−b′)], B(u) = uΦ(u)² + 2Φ(u)φ(u) − Φ(√2u)/√π, "
            "c = min(max(z, a′), b′), z = (y − μ)/σ",
            f"{GNEITING_RANJAN}; {ALLEN}",
        ),
        "weighted_scoring.owcrps": _e(
            "Outcome-weighted CRPS",
            "The CRPS of the forecast conditioned on R (truncated to R and renormalised), counted only on rows "
            "whose target falls in R (0 elsewhere). Gaussians: the truncated-normal CRPS; samples: the CRPS "
            "of the members inside R. An ensemble with no member in R while the target is in R is scored by "
            "its chained members (uqeval's convention; scoringrules gives NaN). Not defined for quantile "
            "forecasts (see the documentation's Forecast verification page). " + _REGION,
            "owCRPS(F, y) = w(y) · CRPS(F_w, y), F_w(z) = ∫_{−∞}^z w dF / ∫ w dF, w = 1_R",
            f"Holzmann & Klar (2017), Focusing on regions of interest in forecast evaluation, Annals of "
            f"Applied Statistics 11(4):2404-2431; {ALLEN}",
        ),
        "exceedance.brier": _e(
            "Brier score of threshold exceedance",
            "A regression forecast judged on the event Y > t (per --threshold t): the squared difference "
            "between its probability P(Y > t) and the outcome. P(Y > t): Gaussian 1 − Φ((t − μ)/σ); "
            "samples: share of members above t; quantiles and intervals: the CDF interpolated linearly "
            "between the quantiles, flat at the outermost levels beyond them; points: 1{ŷ > t}.",
            "BS_t = (1/N) Σᵢ (pᵢ − 1{yᵢ > t})², pᵢ = P(Yᵢ > t)",
            f"{BRIER}; {GR}",
        ),
        "exceedance.crps": _e(
            "CRPS of the threshold-exceedance forecast",
            "The CRPS of the binary event forecast Bernoulli(p) at the outcome 1{y > t}. For a binary event "
            "the CRPS equals the Brier score (the CRPS is the Brier score integrated over all thresholds), "
            "so this equals exceedance.brier; it is given so that CRPS-based checks carry over. For the "
            "CRPS of the whole tail above t use --tw-threshold t (weighted_scoring.twcrps).",
            "CRPS(Bernoulli(p), o) = ∫₀¹ (1 − p − 1{o ≤ z})² dz = (p − o)², o = 1{y > t}",
            f"{GR}; Hersbach (2000), Decomposition of the continuous ranked probability score for ensemble "
            f"prediction systems, Weather and Forecasting 15(5):559-570",
        ),
        "murphy.thetas": _e(
            "Murphy diagram thresholds",
            "The grid of thresholds θ at which the elementary scores are given. " + _MURPHY,
            "θ_k = θ_min + k (θ_max − θ_min)/200, k = 0..200",
            EHM,
        ),
        "murphy.mean": _e(
            "Murphy curve of the mean forecast",
            "Mean elementary score of the point (mean) forecast at each θ: the expectile-1/2 elementary "
            "score. Its integral over θ is a quarter of the mean squared error (normalisation of Ehm et "
            "al. and of the scores package). " + _MURPHY,
            "S_θ(x, y) = ½ |y − θ| (1{y ≤ θ < x} + 1{x ≤ θ < y}); ∫ S_θ dθ = (x − y)²/4",
            f"{EHM}; scores package (murphy_score, functional='expectile', alpha=0.5)",
        ),
        "murphy.quantile": _e(
            "Murphy curves of the quantile forecasts",
            "Mean elementary quantile score of each quantile level α at each θ (keyed by level). Its "
            "integral over θ is that level's pinball loss. " + _MURPHY,
            "S_θ(x, y) = (1 − α) 1{y ≤ θ < x} + α 1{x ≤ θ < y}; ∫ S_θ dθ = (1{y < x} − α)(x − y)",
            f"{EHM}; scores package (murphy_score, functional='quantile')",
        ),
        "murphy.probability": _e(
            "Murphy curves of the class probabilities",
            "Mean elementary score of each class probability p (binary: class 1; keyed by class) against its "
            "indicator, on θ in [0, 1]: the expectile-1/2 curve of the event's mean. Its integral is a "
            "quarter of that class's Brier score. " + _MURPHY,
            "S_θ(p, o) = ½ |o − θ| (1{o ≤ θ < p} + 1{p ≤ θ < o}), o = 1{label = k}",
            EHM,
        ),
    }
)
# ------------------------------------------------------------------------------ forecast verification (issue 16, part B)
_SKILL_REF = (
    f"Murphy (1973), Hedging and skill scores for probability forecasts, J. Appl. Meteor.; {GR}, sec. 2.3"
)
_SKILL_TEXT = (
    "Skill against the reference forecast of --reference (a predictions file, the climatology of "
    "the --train targets, or persistence in --time order): 1 − S/S_ref of the mean {what} of the "
    "model and of the reference on the same rows. 1: perfect; 0: no better than the reference; "
    "< 0: worse. "
)
GLOSSARY.update(
    {
        "skill": _e(
            "Skill scores against a reference forecast",
            "1 − S/S_ref for each proper score the model and the reference (--reference) share (the log "
            "score, which can be negative: the mean difference S_ref − S in nats); higher is "
            "better. Climatology: the empirical distribution of the training targets (classifiers: their base "
            "rates); persistence: the previous row's target as a point mass (CRPS = absolute error, no log score).",
            "SS = 1 − S̄ / S̄_ref",
            _SKILL_REF,
        ),
        "skill.crps": _e(
            "CRPS skill score",
            _SKILL_TEXT.format(what="CRPS")
            + "A climatology's CRPS is that of the empirical distribution of the training targets "
            "(sorted cumulative sums, O((N + M) log M)); a point forecast's is its absolute error.",
            "CRPSS = 1 − CRPS̄ / CRPS̄_ref",
            _SKILL_REF,
        ),
        "skill.nll": _e(
            "Log-score skill: information gain in nats",
            "Skill against the reference forecast of --reference (a predictions file, the climatology of "
            "the --train targets, or persistence in --time order): the mean negative log-likelihood of the "
            "reference minus the model's on the same rows, the information gain in nats per row. Not the "
            "ratio 1 − S/S_ref: log scores of densities can be negative, and the ratio's sign then flips "
            "(a better forecast would get a lower skill). 0: no better than the reference; > 0: better; "
            "< 0: worse. Not defined against a reference without a density (climatology of a regression "
            "target, persistence, point forecasts).",
            "ΔNLL = NLL̄_ref − NLL̄",
            _SKILL_REF,
        ),
        "skill.brier": _e(
            "Brier skill score",
            _SKILL_TEXT.format(what="Brier score (sum over classes)")
            + "Against the base rates of the training labels this is the classical Brier skill score.",
            "BSS = 1 − BS̄ / BS̄_ref",
            _SKILL_REF,
        ),
        "skill.pinball": _e(
            "Pinball (quantile) skill",
            _SKILL_TEXT.format(what="pinball loss")
            + "Averaged over the quantile levels both forecasts give (the Uncertainty Toolbox grid "
            "linspace(0.01, 0.99, resolution) when both give every level).",
            "1 − ρ̄ / ρ̄_ref, ρ_τ(u) = u (τ − 1{u < 0})",
            _SKILL_REF,
        ),
        "skill.interval": _e(
            "Interval-score skill",
            _SKILL_TEXT.format(what="interval score")
            + "Averaged over the central levels both forecasts give.",
            "1 − IS̄ / IS̄_ref",
            _SKILL_REF,
        ),
        "skill.wis": _e(
            "Weighted-interval-score skill",
            _SKILL_TEXT.format(what="weighted interval score")
            + "At the quantile levels of the model (quantile files).",
            "1 − WIS̄ / WIS̄_ref",
            f"{_SKILL_REF}; Bracher, Ray, Gneiting & Reich (2021), PLoS Comput. Biol.",
        ),
        "skill.mse": _e(
            "MSE skill score",
            _SKILL_TEXT.format(what="squared error of the point forecast")
            + "Against climatology (the training mean) it is an out-of-sample R².",
            "MSESS = 1 − MSE / MSE_ref",
            _SKILL_REF,
        ),
        "multivariate": _e(
            "Multivariate ensemble scores",
            "Proper scores of ensembles of vector-valued forecasts (target columns y_1..y_d, member columns "
            "m<j>_<k> for member j and component k).",
            "see multivariate.energy, multivariate.variogram",
            "Gneiting & Raftery (2007); Scheuerer & Hamill (2015), Mon. Wea. Rev. 143",
        ),
        "multivariate.energy": _e(
            "Energy score",
            "Multivariate generalisation of the CRPS (β = 1): mean Euclidean distance of the members to the "
            "outcome minus half their mean pairwise distance, averaged over rows; in units of y. In one "
            "dimension it is the sample CRPS. The member term is divided by 2M² (the empirical distribution "
            "of the members, as scoringrules' es_ensemble default). O(N·M²·d), blocked over rows.",
            "ES(F, y) = (1/M) Σⱼ ‖xⱼ − y‖ − 1/(2M²) Σⱼ Σₖ ‖xⱼ − xₖ‖",
            "Gneiting & Raftery (2007), Strictly proper scoring rules, prediction, and estimation, JASA 102, eq. 22",
        ),
        "multivariate.variogram": _e(
            "Variogram score (p = 0.5)",
            "Compares the pairwise variogram of the outcome, |yᵢ − yⱼ|^p, with the members' mean variogram over "
            "every ordered pair of components (unit weights, p = 0.5); sensitive to a wrong dependence structure "
            "between components, which the energy score barely sees. O(N·M·d²).",
            "VS_p(F, y) = Σᵢ Σⱼ ( |yᵢ − yⱼ|^p − (1/M) Σₘ |x_{m,i} − x_{m,j}|^p )²",
            "Scheuerer & Hamill (2015), Variogram-based proper scoring rules for probabilistic forecasts of "
            "multivariate quantities, Mon. Wea. Rev. 143, eq. 4",
        ),
    }
)

# ------------------------------------------------------------------------------ lookup
_LEVEL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?%?$")


def canonical_path(path: str) -> str:
    """Lower-case dotted path without level parts: ``coverage.0.95.width`` -> ``coverage.width``.

    Level strings contain dots themselves ("0.95"), so numeric parts are merged back
    before being dropped.
    """
    text = str(path).strip().lower()
    parts = [p for p in text.split(".") if p != ""]
    kept: list[str] = []
    for p in parts:
        if p.isdigit() or _LEVEL.match(p):
            continue  # "0" and "95" of "0.95", or a whole level
        kept.append(p)
    return ".".join(kept)


def find_entry(path: str, group_fallback: bool = True) -> tuple[str, dict[str, str]] | None:
    """The glossary entry describing a metric path from a summary, or None.

    Tries the canonical path, then ``group.last`` and ``group.second`` (for nested keys
    such as ``scoring_rule.pinball_by_level.0.9`` or ``ucc.op.cost``), then, with
    ``group_fallback``, the group's own entry (the HTML report links any key of a group
    to it; :func:`explain` does not, so a typo under a known group is an error).
    """
    key = canonical_path(path)
    parts = key.split(".") if key else []
    candidates = [key]
    if len(parts) >= 3:
        candidates += [f"{parts[0]}.{parts[-1]}", f"{parts[0]}.{parts[1]}"]
    if parts and (group_fallback or len(parts) == 1):
        candidates.append(parts[0])
    for c in candidates:
        if c in GLOSSARY:
            return c, GLOSSARY[c]
    return None


def matches(name: str) -> list[str]:
    """Glossary keys a user-typed name refers to.

    A dotted path resolves as in :func:`find_entry`; an exact key wins; otherwise a short
    name gives every ``group.name`` entry followed by every entry of a group called
    ``name`` (so ``reliability`` lists ``brier_decomposition.reliability`` and the ACCRUE
    ``reliability.*`` metrics).
    """
    key = canonical_path(name)
    if not key:
        return []
    if "." in key:
        found = find_entry(key, group_fallback=False)
        return [found[0]] if found else []
    if key in GLOSSARY:
        return [key]
    short = [k for k in GLOSSARY if k.rsplit(".", 1)[-1] == key and k not in QUALIFIED_ONLY]
    derived = [
        k for k in short if k.startswith("skill.")
    ]  # skill.crps is read as "crps" only when nothing else is
    short = [k for k in short if k not in derived] or derived
    group = [k for k in GLOSSARY if k.split(".", 1)[0] == key and k not in short]
    return short + group


def format_entry(key: str, entry: dict[str, str] | None = None) -> str:
    """Plain-text block for one glossary entry."""
    entry = entry or GLOSSARY[key]
    return (
        f"{key} — {entry['title']}\n"
        f"{entry['text']}\n"
        f"Formula: {entry['formula']}\n"
        f"Reference: {entry['reference']}"
    )


def names() -> Iterable[str]:
    """Every name a metric can be asked for by: full paths, last parts and groups."""
    yield from GLOSSARY
    yield from {k.rsplit(".", 1)[-1] for k in GLOSSARY}
    yield from {k.split(".", 1)[0] for k in GLOSSARY}


# =========================================================================== issue 15 part B (--diagnostics)
# calibration tests with p-values and conditional coverage
_CZADO = (
    "Czado, Gneiting & Held (2009), Predictive model assessment for count data, Biometrics 65(4):1254-1261 "
    "(randomised PIT)"
)
_PIT_TEXT = (
    "PIT values: Φ((y − μ)/σ) for Gaussians; for samples, quantiles and intervals the PIT is only known to lie "
    "in an interval (between two members, or two carried quantile levels), so it is drawn uniformly inside it "
    "(randomised PIT, seeded by --seed and a hash of the data, so one file and seed give one answer and "
    "different files independent draws; assigned in sorted order so row order does not matter); under "
    "calibration it is exactly U(0, 1). "
)
_P_TEXT = (
    " A p-value weighs evidence, it does not rank models (it shrinks with more rows for the same "
    "miscalibration): it has no orientation; bound it in a check rule, e.g. { min = 0.01 }."
)
_CT = "calibration_tests"
_CC = "conditional_coverage"
_ANGELOPOULOS = (
    "Angelopoulos & Bates (2021), A Gentle Introduction to Conformal Prediction and Distribution-Free "
    "Uncertainty Quantification, arXiv:2107.07511, section 3; MAPIE's classification_ssc / "
    "regression_ssc"
)
_RAPS = (
    "Angelopoulos, Bates, Malik & Jordan (2021), Uncertainty Sets for Image Classifiers using Conformal "
    "Prediction, ICLR (size-stratified coverage violation)"
)
GLOSSARY.update(
    {
        _CT: _e(
            "Calibration tests (--diagnostics)",
            "Hypothesis tests of calibration with p-values: PIT uniformity for regression forecasts, the rank "
            "histogram for ensembles, Spiegelhalter's z and Hosmer–Lemeshow for binary (top-label) probabilities."
            + _P_TEXT,
            "p = P(statistic ≥ observed | calibrated)",
            f"{GBR}; {_CZADO}",
        ),
        f"{_CT}.pit_ks_stat": _e(
            "Kolmogorov–Smirnov distance of the PIT",
            _PIT_TEXT + "The largest gap between the empirical CDF of the "
            "PIT values and the diagonal; 0 is perfect.",
            "D = maxᵢ max(i/n − u₍ᵢ₎, u₍ᵢ₎ − (i − 1)/n)",
            "Kolmogorov (1933); Smirnov (1948); " + _CZADO,
        ),
        f"{_CT}.pit_ks_p": _e(
            "KS test of PIT uniformity: p-value",
            _PIT_TEXT + "p-value of D under the exact null distribution "
            "(scipy.stats.kstwo, as ks_1samp(method='exact'))." + _P_TEXT,
            "p = P(Dₙ ≥ D), Dₙ the KS statistic of n uniforms",
            "Simard & L'Ecuyer (2011), Computing the two-sided "
            "Kolmogorov-Smirnov distribution, J. Stat. Softw. 39(11)",
        ),
        f"{_CT}.pit_cvm_stat": _e(
            "Cramér–von Mises statistic of the PIT",
            _PIT_TEXT + "Integrated squared gap between the empirical CDF of the PIT and the diagonal.",
            "W² = 1/(12n) + Σᵢ ((2i − 1)/(2n) − u₍ᵢ₎)²",
            "Cramér (1928); von Mises (1928); Anderson (1962)",
        ),
        f"{_CT}.pit_cvm_p": _e(
            "Cramér–von Mises test of PIT uniformity: p-value",
            _PIT_TEXT + "p-value of W² from "
            "scipy.stats.cramervonmises (Csörgő & Faraway's finite-n distribution)." + _P_TEXT,
            "p = P(W²ₙ ≥ W²)",
            "Csörgő & Faraway (1996), The exact and asymptotic distributions of Cramér-von Mises "
            "statistics, JRSS B 58(1):221-234",
        ),
        f"{_CT}.pit_ad_stat": _e(
            "Anderson–Darling statistic of the PIT",
            _PIT_TEXT + "Like Cramér–von Mises but weighted towards the "
            "tails (PIT near 0 or 1: targets outside the forecast's range); PIT values clipped to [1e-12, 1 − 1e-12].",
            "A² = −n − (1/n) Σᵢ (2i − 1) [ln u₍ᵢ₎ + ln(1 − u₍ₙ₊₁₋ᵢ₎)]",
            "Anderson & Darling (1954), A test of goodness of fit, JASA 49(268):765-769",
        ),
        f"{_CT}.pit_ad_p": _e(
            "Anderson–Darling test of PIT uniformity: p-value",
            _PIT_TEXT + "p-value of A² for a fully specified "
            "null (U(0, 1)): Marsaglia & Marsaglia's ADinf with their finite-n correction (absolute error about "
            "1e-6; below 1e-5 the limiting tail)." + _P_TEXT,
            "p = 1 − (ADinf(A²) + errfix(n, ADinf(A²)))",
            "Marsaglia & Marsaglia (2004), Evaluating the Anderson-Darling distribution, J. Stat. Softw. 9(2)",
        ),
        f"{_CT}.rank_histogram": _e(
            "Rank histogram (Talagrand diagram)",
            "Number of rows whose target has rank r = 0..M among the M "
            "members (r members below it; ties broken at random, seeded). Flat: calibrated; U-shaped: "
            "under-dispersed (over-confident); dome: over-dispersed; sloped: biased. Plot kind rank_histogram.",
            "c_r = #{i : rankᵢ = r},  r = 0..M",
            "Hamill (2001), Interpretation of rank histograms for verifying "
            "ensemble forecasts, Monthly Weather Review 129(3):550-560; Talagrand, Vautard & Strauss (1997)",
        ),
        f"{_CT}.rank_hist_chi2": _e(
            "Rank histogram χ² statistic",
            "Pearson's χ² distance of the rank histogram from flat. Needs about 5 "
            "expected rows per rank (N ≥ 5(M + 1)) for the χ² approximation of its p-value.",
            "X² = Σᵣ (c_r − N/(M + 1))² / (N/(M + 1))",
            "Hamill (2001); Pearson (1900)",
        ),
        f"{_CT}.rank_hist_chi2_p": _e(
            "Rank histogram χ² test: p-value",
            "p-value of X² against χ² with M degrees of freedom (uniform ranks "
            "under exchangeability of target and members)." + _P_TEXT,
            "p = P(χ²_M ≥ X²)",
            "Hamill (2001)",
        ),
        f"{_CT}.spiegelhalter_z": _e(
            "Spiegelhalter's z",
            "Standardised difference between the Brier score and its expectation under "
            "calibration; ≈ N(0, 1) for calibrated probabilities, large |z| is miscalibration. Two classes: "
            "P(class 1) and the label; more classes: top label (p = max probability, y = top class is right). "
            "NaN when every p is 0, ½ or 1. Target 0.",
            "Z = Σ (yᵢ − pᵢ)(1 − 2pᵢ) / √(Σ (1 − 2pᵢ)² pᵢ(1 − pᵢ))",
            "Spiegelhalter (1986), Probabilistic prediction in patient management and clinical trials, "
            "Statistics in Medicine 5(5):421-433",
        ),
        f"{_CT}.spiegelhalter_p": _e(
            "Spiegelhalter's test: p-value",
            "Two-sided p-value of Spiegelhalter's z." + _P_TEXT,
            "p = 2Φ(−|Z|)",
            "Spiegelhalter (1986)",
        ),
        f"{_CT}.hosmer_lemeshow_stat": _e(
            "Hosmer–Lemeshow statistic",
            "Rows are split into 10 groups by deciles of p (edges: quantiles of p, "
            "groups (e_{k−1}, e_k], the lowest closed, as R's ResourceSelection::hoslem.test; empty groups from tied "
            "edges dropped); observed and expected events and non-events are compared in each. Two classes: "
            "P(class 1); more classes: top label.",
            "Ĉ = Σ_k (O_k − E_k)²/E_k + (O'_k − E'_k)²/E'_k,  E_k = Σ_{i∈k} pᵢ,  E'_k = n_k − E_k",
            "Hosmer & Lemeshow (1980), Goodness of fit tests for the multiple logistic regression model, "
            "Communications in Statistics A 9(10):1043-1069",
        ),
        f"{_CT}.hosmer_lemeshow_p": _e(
            "Hosmer–Lemeshow test: p-value",
            "p-value of Ĉ against χ² with G degrees of freedom (G non-empty "
            "groups, 10 unless p has many ties); NaN with fewer than 3 groups. G, not the textbook G − 2: that "
            "counts the two parameters of a logistic model fitted on the same rows, whereas scored predictions "
            "come from elsewhere (external validation); with G − 2 calibrated forecasts would fail too often."
            + _P_TEXT,
            "p = P(χ²_G ≥ Ĉ)",
            "Hosmer & Lemeshow (1980); Hosmer, Lemeshow & Sturdivant (2013), Applied Logistic Regression, 3rd ed., "
            "section 5.5 (external validation)",
        ),
        _CC: _e(
            "Conditional coverage (--diagnostics)",
            "Coverage within strata of the rows, per level: prediction sets by set size and by true class, "
            "intervals by width (3 equal-count strata), and, with --by, per group.",
            "coverage_g = (1/|I_g|) Σ_{i∈I_g} 1{yᵢ ∈ C(xᵢ)}",
            f"{_ANGELOPOULOS}; {_RAPS}",
        ),
        f"{_CC}.ssc_violation": _e(
            "Size-stratified coverage violation",
            "The largest gap between the coverage of a stratum and the level. "
            "Prediction sets: one stratum per set size (1..K, empty sizes left out); intervals: 3 strata of equal "
            "row count by increasing width (a run of equal widths is never split: it stays in the stratum of its "
            "first row, so constant widths are one stratum and row order does not matter). 0 means every "
            "stratum is covered at the level.",
            "SSCV = max_g |coverage_g − level|",
            f"{_RAPS}; {_ANGELOPOULOS}",
        ),
        f"{_CC}.worst_stratum_coverage": _e(
            "Worst size-stratified coverage",
            "The lowest coverage over the set-size (or width) strata of "
            "ssc_violation: MAPIE's classification_ssc_score / regression_ssc_score. Target: the level.",
            "SSC = min_g coverage_g",
            _ANGELOPOULOS,
        ),
        f"{_CC}.worst_class": _e(
            "Worst-covered class",
            "The class (label index) whose rows' prediction sets hold the label least often.",
            "argmin_k (1/n_k) Σ_{yᵢ=k} 1{k ∈ C(xᵢ)}",
            _ANGELOPOULOS,
        ),
        f"{_CC}.worst_class_coverage": _e(
            "Coverage of the worst class",
            "Class-conditional coverage of worst_class. Target: the level.",
            "min_k (1/n_k) Σ_{yᵢ=k} 1{k ∈ C(xᵢ)}",
            _ANGELOPOULOS,
        ),
        f"{_CC}.worst_group": _e(
            "Worst-covered --by group",
            "With `score --by COL --diagnostics`: the value of COL whose rows are covered "
            "least often (coverage.<level>.coverage, or prediction_sets.<level>.coverage for classifiers). Small "
            "groups have noisy coverage: read it with the group's n_rows.",
            "argmin_g coverage_g over the values g of --by",
            _ANGELOPOULOS,
        ),
        f"{_CC}.worst_group_coverage": _e(
            "Coverage of the worst --by group",
            "Coverage of worst_group. Target: the level.",
            "min_g coverage_g",
            _ANGELOPOULOS,
        ),
    }
)
# =========================================================================== end of issue 15 part B
