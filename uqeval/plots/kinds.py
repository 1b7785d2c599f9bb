"""From a loaded prediction and its score summary to the figures that apply to it.

The one piece of glue between the pure figure builders (:mod:`uqeval.plots`) and the
commands that draw: ``uqeval score --plot-dir``, ``uqeval plot`` and ``uqeval report``.
Which plot kinds apply comes from one table, :data:`PLOT_NEEDS`: each kind needs a
catalogue family that applies to the representation, or a central band. Curves,
histograms and metric values come from the catalogue's results (the summary's
``metrics`` when given, else :func:`uqeval.catalogue.compute`; the full calibration curve
from :func:`uqeval.catalogue.calibration_curve`, which ``avg_calibration`` also uses),
arrays from the prediction itself (``point()``, ``interval()``, ``spread()``, ``pit()``),
so plots and tables always agree.

Plot kinds (``--kind``):

=============  ==========================================================  ===========================
kind           figure                                                      needs
=============  ==========================================================  ===========================
predictions    observations, point prediction and interval band vs x       a central band
               (``--x COL``); without it intervals sorted by the prediction
intervals      intervals ordered by target                                 a central band
calibration    average calibration curve, miscalibration area shaded       avg_calibration
adversarial    adversarial group calibration ±1 standard error             adv_group_calibration
sharpness      histogram of σ (ensemble std for samples)                   sharpness
residuals      residuals vs predicted σ                                    a Gaussian σ
reliability    regression: ACCRUE's bin-free reliability diagram;          reliability (regression),
               classification: reliability diagram (ECE in the title)      calibration (classifiers)
pit            PIT histogram with a uniform reference band                 avg_calibration
confidence     top-label confidence histogram                              calibration (classifiers)
sets           prediction-set coverage and size across levels              prediction_sets
rejection      rejection curve with its oracle: RMSE of the ensemble mean  rejection (or its curve in
               (samples) or accuracy (classification) of the kept rows     the summary)
ucc            uncertainty characteristics curve (bandwidth vs miss rate)  a central band
corp           CORP reliability diagram with its consistency band          corp, classifiers (opt-in)
smooth_relia-  smooth reliability diagram at the smooth ECE's bandwidth    smooth_calibration (opt-in)
bility
spread_relia-  RMSE vs RMV per σ-sorted bin (Levi et al.)                  spread_calibration (opt-in)
bility
spread_skill   RMSE of the point prediction vs RMS spread per spread-      Gaussians, samples (opt-in:
               sorted equal-count bin, 1:1 line; spread_skill.ratio        ``--diagnostics``)
               in the title (samples: finite-ensemble corrected spread)
rank_histogram rank histogram (Talagrand) of an ensemble, χ² p-value       calibration_tests (samples;
                                                                           opt-in)
murphy         Murphy diagram: mean elementary score vs threshold θ         murphy (``--murphy``)
exceedance_    CORP reliability diagram of the event Y > t per threshold    exceedance (``--threshold``;
reliability                                                                not points)
skill          bars of the skill 1 − S/S_ref per score, 0 marked            the summary's ``skill`` group
                                                                           (``--reference``)
multivariate_  average-rank histogram (Thorarinsdottir et al. 2016), χ²     multivariate (opt-in:
rank_histogram                                                             ``--diagnostics``)
coverage       observed coverage against the nominal level (mean width or  a central band or prediction
               set size per level), as the last panel of ``coverage          sets (opt-in:
               --plot``                                                    ``--diagnostics``)
=============  ==========================================================  ===========================

The kinds from corp to murphy, exceedance_reliability and multivariate_rank_histogram are drawn
from opt-in families (:data:`OPT_IN_KINDS`): they apply when their setting is on (``--diagnostics``,
``--murphy``, ``--threshold``), and ``uqeval plot --kind`` turns an on/off setting on for the kind it
is asked for (``exceedance_reliability`` needs its ``--threshold``). ``skill`` applies when the
summary has a ``skill`` group (``--reference``).

No plot applies to point predictions (they carry no uncertainty) nor to log-likelihoods alone.

Bands drawn in the ``predictions`` and ``intervals`` plots are central intervals at the
*plot level*: the widest of :func:`uqeval.catalogue.coverage_levels` (0.95 by default for
Gaussians and samples; the widest central quantile pair or interval level the file
carries). Samples give empirical quantiles (type 7) around the ensemble mean; quantiles
give the median (or the midpoint of the pair when there is no median). The UCC uses the
band of ``uqeval ucc`` (:func:`uqeval.commands.ucc.core.band_of`) at ``--level`` (default 0.95;
the widest level when the file does not carry it), so the report's UCC numbers equal
those of ``uqeval ucc FILE``. The quantile calibration curve is in *quantile mode*
(observed share of targets below each quantile against its level, at the levels the
file carries), and their PIT histogram counts targets between neighbouring quantiles.

Every title ends with the file's name; scatter plots draw at most ``max_points`` rows
(seeded), curves use every row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from ..catalogue import CLASSIFICATION
from ..config import Settings
from ..errors import InputError, option
from ..predictions import Multivariate, Prediction, Samples, _Classifier
from . import PLOT_KINDS

__all__ = [
    "KIND_TITLES",
    "OVERLAY_KINDS",
    "PLOT_KINDS",
    "PlotBundle",
    "applicable_kinds",
    "build_figures",
    "check_plot_dir",
    "encode_figures",
    "find_x_column",
    "plot_level",
    "ucc_level",
    "ucc_result",
    "x_values",
]


#: Caption of each kind (report figure captions; titles add the file name).
KIND_TITLES: dict[str, str] = {
    "predictions": "Predictions and intervals",
    "intervals": "Intervals ordered by target",
    "calibration": "Average calibration",
    "adversarial": "Adversarial group calibration",
    "sharpness": "Sharpness",
    "residuals": "Residuals vs predicted σ",
    "reliability": "Reliability diagram",
    "pit": "PIT histogram",
    "confidence": "Confidence histogram",
    "sets": "Prediction-set coverage and size",
    "rejection": "Rejection curve",
    "ucc": "Uncertainty characteristics curve",
    "corp": "CORP reliability diagram",
    "smooth_reliability": "Smooth reliability diagram",
    "spread_reliability": "Spread reliability (RMSE vs RMV)",
    "spread_skill": "Spread-skill diagram",
    "rank_histogram": "Rank histogram",
    "murphy": "Murphy diagram",
    "exceedance_reliability": "CORP reliability diagram of exceedances",
    "skill": "Skill against the reference",
    "multivariate_rank_histogram": "Average-rank histogram",
    "coverage": "Coverage by level",
}

#: Levels of the set-size-vs-coverage plot (joined with the run's ``--levels``).
SET_LEVELS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)

_CURVE_KEYS = ("fractions", "values", "oracle_values")
#: Legend of the point prediction and of the band, by representation (figures only).
_POINT_LABELS = {"quantiles": "predicted median", "intervals": "point prediction"}
_BAND_LABELS = {"samples": "prediction interval"}


@dataclass
class PlotBundle:
    """Figures of one file, keyed by kind in :data:`PLOT_KINDS` order, plus what went with them.

    ``ucc`` holds the UCC result (:func:`ucc_result` ``["summary"]``) when it was computed;
    ``notes`` say which applicable plots were skipped and why.
    """

    figures: dict[str, Any] = field(default_factory=dict)
    ucc: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class _Draw:
    """What every figure of one prediction is drawn from: the prediction, the ``metrics`` of its summary
    (a group missing there is computed once, into ``cache``), the settings, the file's ``name`` (ending every
    title), ``on`` (``{"ax": ...}``: for every drawing function) and ``over`` (``on`` with a series ``label``
    and ``color``: for those that overlay several models, :data:`OVERLAY_KINDS`), the seed of the scatter
    subsampling and the notes of what was left out."""

    pred: Prediction
    metrics: Mapping[str, Any] | None
    settings: Settings
    name: str
    on: Mapping[str, Any]
    over: Mapping[str, Any]
    seed: int
    notes: list[str]
    cache: dict[str, Any] = field(default_factory=dict)

    def group(self, family: str) -> dict[str, Any]:
        return _group(self.pred, self.settings, self.metrics, family, self.cache)

    def title(self, kind: str, head: str | None = None) -> str:
        """``head`` (the kind's title by default), ending with the file's name."""
        head = KIND_TITLES[kind] if head is None else head
        return f"{head}: {self.name}" if self.name else head


# --------------------------------------------------------------------------- what applies
def plot_level(pred: Prediction, settings: Settings) -> float | None:
    """Level of the central intervals drawn (and scaled by the UCC); None when there are none.

    The widest of the coverage levels: ``max(--levels)`` (default 0.95) for Gaussians and
    samples, the widest carried (or requested) central level for quantiles and intervals.
    """
    from ..catalogue import coverage_levels

    if pred.carried_levels() == []:  # no central interval at any level
        return None
    levels = coverage_levels(pred, settings)
    return max(levels) if levels else None


def _family(*names: str) -> Callable[[Prediction, Settings], bool]:
    def applies(pred: Prediction, settings: Settings) -> bool:
        from ..catalogue import get_family

        return any(
            pred.kind in (f := get_family(n)).compute
            and f.enabled(settings)
            and f.why_undefined(pred) is None
            for n in names
        )

    return applies


def _band(pred: Prediction, settings: Settings) -> bool:
    return plot_level(pred, settings) is not None


def _diagnostic(family: str, kinds: tuple[str, ...] | None = None) -> Callable[[Prediction, Settings], bool]:
    """An opt-in family's plot: it applies where the family applies and is turned on (``--diagnostics``;
    :func:`build_figures` turns it on for a kind asked for by name)."""

    def applies(pred: Prediction, settings: Settings) -> bool:
        from ..catalogue import get_family

        f = get_family(family)
        return pred.kind in f.compute and (kinds is None or pred.kind in kinds) and f.enabled(settings)

    return applies


#: The one table of what each plot kind needs: a catalogue family that applies to the
#: representation (its results are what the plot draws), or a central band.
PLOT_NEEDS: dict[str, Callable[[Prediction, Settings], bool]] = {
    "predictions": _band,
    "intervals": _band,
    "calibration": _family("avg_calibration"),
    "adversarial": _family("adv_group_calibration"),
    "sharpness": _family("sharpness"),
    "residuals": lambda pred, settings: pred.kind == "gaussian",  # residuals against a Gaussian's σ
    "reliability": _family("reliability", "calibration"),
    "pit": _family("avg_calibration"),
    "confidence": _family("calibration"),
    "sets": _family("prediction_sets"),
    "rejection": _family("rejection"),
    "ucc": _band,
    "corp": _diagnostic("corp", CLASSIFICATION),  # the calibration diagnostics (issue 15, part A)
    "smooth_reliability": _diagnostic("smooth_calibration"),
    "spread_reliability": _diagnostic("spread_calibration"),
    # the ratio is a default metric; its binned diagram is a diagnostic figure (as spread_reliability)
    "spread_skill": lambda pred, settings: (
        bool(settings.diagnostics) and _family("spread_skill")(pred, settings)
    ),
    # issue 15 part B: an opt-in family (--diagnostics); one histogram needs one member count
    "rank_histogram": lambda pred, settings: (
        isinstance(pred, Samples) and not pred.ragged and _family("calibration_tests")(pred, settings)
    ),
    "murphy": lambda pred, settings: (
        bool(settings.murphy)
        and _family("murphy")(pred, settings)
        and (pred.kind != "intervals" or pred.point() is not None)
    ),
    # issue 16: the event Y > t of each --threshold as a binary probability forecast (points: 0/1 only, no plot)
    "exceedance_reliability": lambda pred, settings: (
        pred.kind in ("gaussian", "samples", "quantiles", "intervals")
        and _family("exceedance")(pred, settings)
    ),
    # skill needs a reference forecast (data, not a setting): drawn when the summary has a skill group
    "skill": lambda pred, settings: False,
    "multivariate_rank_histogram": lambda pred, settings: (
        pred.kind == "multivariate" and bool(settings.diagnostics)
    ),
    "coverage": lambda pred, settings: (
        bool(settings.diagnostics) and (_band(pred, settings) or _family("prediction_sets")(pred, settings))
    ),
}

#: Plot kinds drawn from an opt-in catalogue family: the Settings field that turns it on.
OPT_IN_KINDS: dict[str, str] = {
    **{
        k: "diagnostics"
        for k in ("corp", "smooth_reliability", "spread_reliability", "spread_skill", "rank_histogram")
    },
    "murphy": "murphy",
    "exceedance_reliability": "thresholds",
    "multivariate_rank_histogram": "diagnostics",
    "coverage": "diagnostics",
}


#: Kinds that overlay several models on one Axes, one labelled series each in the models' colours
#: (:func:`uqeval.plots.style.model_color`, in the order given; :func:`uqeval.plot` with ``{name: data}``).
#: The others draw one model's picture (an interval band, a scatter, bars per score, curves per threshold or
#: level) that would be unreadable several times over.
_ONE_MODEL = "predictions intervals residuals confidence murphy exceedance_reliability skill multivariate_rank_histogram"
OVERLAY_KINDS: tuple[str, ...] = tuple(k for k in PLOT_KINDS if k not in _ONE_MODEL.split())


# --------------------------------------------------------------------------- calibration diagnostics (issue 15, part A)


def _diagnostics(d: _Draw, kinds: Sequence[str]) -> dict[str, Any]:
    from . import diagnostics as plots

    out: dict[str, Any] = {}
    pred, over = d.pred, d.over
    if "corp" in kinds or "smooth_reliability" in kinds:
        from ..catalogue import binary_or_top_label

        f, y = binary_or_top_label(pred)
        # binary_or_top_label: the classification kinds
        xlabel = "P(class 1)" if cast("_Classifier", pred).proba.shape[1] == 2 else "top-label confidence"
        if "corp" in kinds:
            from ..metrics.corp import reliability_curve

            corp = d.group("corp")
            out["corp"] = plots.plot_corp(
                reliability_curve(f, y, seed=d.settings.seed),
                corp.get("brier") or corp.get("brier_top_label"),
                title=d.title("corp"),
                xlabel=xlabel,
                **over,
            )
        if "smooth_reliability" in kinds:
            from ..metrics.smooth_ece import smooth_reliability_curve

            sm = d.group("smooth_calibration")
            out["smooth_reliability"] = plots.plot_smooth_reliability(
                smooth_reliability_curve(f, y, sm["bandwidth"]),
                sm["smece"],
                sm["bandwidth"],
                title=d.title("smooth_reliability"),
                xlabel=xlabel,
                **over,
            )
    if "spread_reliability" in kinds or "spread_skill" in kinds:
        from ..catalogue.core import error_spread
        from ..metrics.spread import spread_bins

        # samples: the finite-ensemble spread, as ENCE and spread_skill.ratio
        bins = spread_bins(pred.y_true, pred.point(), error_spread(pred), d.settings.class_bins)
    if "spread_skill" in kinds:
        out["spread_skill"] = plots.plot_spread_skill(
            bins,
            d.group("spread_skill").get("ratio"),
            title=d.title("spread_skill"),
            ensemble=pred.kind == "samples",
            **over,
        )
    if "spread_reliability" in kinds:
        ence = d.group("spread_calibration").get("ence")
        out["spread_reliability"] = plots.plot_spread_reliability(
            bins, ence, title=d.title("spread_reliability"), **over
        )
    return out


# --------------------------------------------------------------------------- end of calibration diagnostics


def _has_rejection_curve(metrics: Mapping[str, Any] | None) -> bool:
    rej = (metrics or {}).get("rejection")
    return isinstance(rej, Mapping) and all(k in rej for k in _CURVE_KEYS)


def _has_skill(metrics: Mapping[str, Any] | None) -> bool:
    skill = (metrics or {}).get("skill")
    return isinstance(skill, Mapping) and bool(skill)


def applicable_kinds(
    pred: Prediction, settings: Settings | None = None, metrics: Mapping[str, Any] | None = None
) -> tuple[str, ...]:
    """Plot kinds that apply to ``pred`` (:data:`PLOT_NEEDS`).

    The rejection plot also applies when the summary's ``rejection`` group carries curve
    data (``fractions``, ``values``, ``oracle_values``); the skill plot when it has a ``skill``
    group (``--reference``).
    """
    settings = settings or Settings()
    return tuple(
        k
        for k in PLOT_KINDS
        if PLOT_NEEDS[k](pred, settings)
        or (k == "rejection" and _has_rejection_curve(metrics))
        or (k == "skill" and _has_skill(metrics))
    )


# --------------------------------------------------------------------------- helpers
def _group(
    pred: Prediction, settings: Settings, metrics: Mapping[str, Any] | None, name: str, cache: dict[str, Any]
) -> dict[str, Any]:
    """A metric group from the summary, or computed through the catalogue when absent."""
    if metrics is not None and isinstance(metrics.get(name), Mapping):
        return dict(metrics[name])
    if name not in cache:
        from ..catalogue import compute, get_family

        cache[name] = compute(get_family(name), pred, settings) or {}
    return cache[name]


def _point_and_interval(pred: Prediction, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``(point, lower, upper, point_label)`` for the band plots."""
    lo, hi = pred.interval(level)
    point = pred.point()
    if point is None:
        return 0.5 * (lo + hi), lo, hi, "interval midpoint"
    return point, lo, hi, _POINT_LABELS.get(pred.kind, "predicted mean")


def _band_label(pred: Prediction, level: float) -> str:
    if pred.kind == "gaussian":  # the band is mean ± zσ: say so
        from ..metrics.normal import ndtri

        return f"{level:.0%} interval (μ ± {float(ndtri(0.5 + level / 2)):.2f}σ)"
    return f"{level:.0%} {_BAND_LABELS.get(pred.kind, 'central interval')}"


def ucc_level(pred: Prediction, settings: Settings) -> float | None:
    """Level of the band the UCC scales: ``settings.level`` (``--level``, default 0.95, as
    ``uqeval ucc``) when the representation has it, else :func:`plot_level`; None without
    intervals."""
    from ..metrics.intervals import level_key

    widest = plot_level(pred, settings)
    if widest is None:
        return None
    carried = pred.carried_levels()
    if carried is None:  # any level
        return float(settings.level)
    return float(settings.level) if level_key(settings.level) in {level_key(c) for c in carried} else widest


def ucc_result(
    pred: Prediction, settings: Settings, name: str = "", info: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """UCC of ``pred`` exactly as ``uqeval ucc FILE`` computes it with default options.

    The band comes from :func:`uqeval.commands.ucc.core.band_of` at :func:`ucc_level` (bandwidth vs
    miss rate, normalised by std(y), cost 0.5). Returns ``{"summary": ..., "model": ...,
    "notes": [...]}``: ``summary`` is the ``ucc`` block of ``uqeval ucc`` (``x_axis``,
    ``y_axis``, ``normalize``, ``auucc``, ``auucc_const``, ``gain``, ``partial``, ``op``,
    ``op_min``) plus ``level`` and ``centre`` of the band; ``model`` is the entry
    :func:`uqeval.plots.ucc.plot_ucc` takes. Raises InputError when there is no band or its
    centre lies outside it.
    """
    from ..commands.ucc.core import UccOptions, run_ucc
    from ..io.load import Loaded

    level = ucc_level(pred, settings)
    if level is None:
        raise InputError(
            f"{pred.kind} predictions give no central interval: the UCC needs one "
            "(Gaussian, samples, a central quantile pair or lower/upper columns)"
        )
    label = name or "model"
    loaded = Loaded(pred, dict(info) if info else {"path": label})
    report, models = run_ucc({label: loaded}, settings, UccOptions(level=level), plot=True)
    assert models is not None  # asked for (plot=True)
    model = report["models"][label]
    summary = {**model["ucc"], "level": model["band"]["level"], "centre": model["band"]["centre"]}
    return {"summary": summary, "model": models[0], "notes": list(report.get("notes", []))}


def find_x_column(table: Any, column: str) -> str:
    """The name of the --x column in a :class:`~uqeval.io.readers.TableInfo` (exact, else
    case-insensitive match); a missing or list column is a SchemaError. Reads no data."""
    from ..errors import SchemaError
    from ..io.columns import match_column

    name = match_column(table.columns, column)
    if name is None:
        shown = ", ".join(table.columns[:20]) + (" ..." if len(table.columns) > 20 else "")
        raise SchemaError(
            f"{table.path}: column '{column}' given for {option('x')} not found; available columns: {shown}"
        )
    if name in table.list_columns:
        raise SchemaError(
            f"{table.path}: column '{name}' given for {option('x')} is a list column; it needs one number per row"
        )
    return name


def x_values(loaded: Any, column: str) -> np.ndarray:
    """The numeric --x column ``column`` of a loaded file, restricted to the rows the loader kept.

    The column is read with the prediction (``load_predictions(path, settings, extra=[column])``);
    the name matches exactly, else case-insensitively. Non-finite values in kept rows are an
    error naming the column and the first such row.
    """
    from ..io.load import evaluated_rows
    from ..io.readers import to_float

    table = loaded.table
    name = find_x_column(table, column)
    return evaluated_rows(
        loaded, to_float(loaded.extra[column], name, table.path), [name], f"{option('x')} column"
    )


# --------------------------------------------------------------------------- builders
def _regression(
    d: _Draw, kinds: Sequence[str], x, x_label, max_points: int, order_by: str = "target"
) -> dict[str, Any]:
    """The regression figures."""
    from . import regression as plots

    pred, settings, on, over = d.pred, d.settings, d.on, d.over
    out: dict[str, Any] = {}
    y = pred.require_targets()

    if "predictions" in kinds or "intervals" in kinds:
        level = plot_level(pred, settings)
        assert level is not None  # the band kinds apply with a central interval only (_band)
        point, lo, hi, point_label = _point_and_interval(pred, level)
        band: dict[str, Any] = dict(
            band_label=_band_label(pred, level), mean_label=point_label, max_points=max_points, seed=d.seed
        )
        bad = ~(np.isfinite(lo) & np.isfinite(hi) & np.isfinite(point))
        if bad.any():  # finite data whose interval overflows (a spread near 1e308): nothing to draw
            d.notes.append(
                f"{' and '.join(k for k in ('predictions', 'intervals') if k in kinds)}: figure left out: the "
                f"{level:.0%} interval is not finite in {int(bad.sum())} row(s) (first at row {int(np.argmax(bad))}; "
                "its bounds overflow float64)"
            )
            kinds = [k for k in kinds if k not in ("predictions", "intervals")]
        if "predictions" in kinds:
            out["predictions"] = plots.plot_predictions_band(
                y, point, lo, hi, x=x, title=d.title("predictions"), x_label=x_label, **band, **on
            )
        if "intervals" in kinds:
            out["intervals"] = plots.plot_intervals_ordered(
                y, point, lo, hi, title=d.title("intervals"), order_by=order_by, **band, **on
            )
    if "calibration" in kinds:
        from ..catalogue import calibration_curve

        expected, observed = calibration_curve(pred, settings)
        fig = plots.plot_calibration_curve(
            expected,
            observed,
            d.group("avg_calibration").get("miscal_area"),
            title=d.title("calibration"),
            **over,
        )
        if pred.quantile_keys() is not None:  # quantile mode: at the levels the file carries
            ax = on.get("ax") or fig.axes[0]
            from .style import axis_label

            ax.set_xlabel(axis_label("quantile level τ"), fontsize=ax.xaxis.label.get_fontsize())
            ax.set_ylabel(
                axis_label("observed share of targets ≤ quantile"), fontsize=ax.yaxis.label.get_fontsize()
            )
        out["calibration"] = fig
    if "adversarial" in kinds:
        adv = d.group("adv_group_calibration")
        out["adversarial"] = plots.plot_adversarial(
            adv["group_sizes"], adv["ma_mean"], adv["ma_stderr"], title=d.title("adversarial"), **over
        )
    if "sharpness" in kinds:
        std = cast("np.ndarray", pred.spread())  # sharpness applies to gaussian and samples: a spread
        if np.all(std > 0):
            out["sharpness"] = plots.plot_sharpness(
                std, title=d.title("sharpness"), sharpness=d.group("sharpness"), **over
            )
        else:
            d.notes.append(
                f"sharpness plot skipped: {int(np.sum(std <= 0))} row(s) have identical "
                "members (ensemble std 0)"
            )
    if "residuals" in kinds:
        out["residuals"] = plots.plot_residuals_vs_std(
            y,
            pred.point(),
            pred.spread(),
            title=d.title("residuals"),
            max_points=max_points,
            seed=d.seed,
            **on,
        )
    if "reliability" in kinds:
        out["reliability"] = plots.plot_reliability_diagram(
            pred.pit(),
            d.group("reliability").get("max_cal_err"),
            title=d.title("reliability", "Reliability diagram (bin-free)"),
            **over,
        )
    if "pit" in kinds:
        hist = d.group("avg_calibration").get("pit_histogram")
        if hist is None:  # Gaussians: the JSON holds no histogram; the kernel bins the PIT
            from ..metrics.quantiles import pit_histogram

            hist = pit_histogram(cast("np.ndarray", pred.pit()), bins=10)  # exact for Gaussians
        out["pit"] = plots.plot_pit_histogram(
            counts=hist["counts"], edges=hist["edges"], title=d.title("pit"), **over
        )
    if "rank_histogram" in kinds:
        tests = d.group("calibration_tests")
        out["rank_histogram"] = plots.plot_rank_histogram(
            tests["rank_histogram"],
            title=d.title("rank_histogram"),
            p_value=tests.get("rank_hist_chi2_p"),
            **over,
        )
    return out


def _categorical(d: _Draw, kinds: Sequence[str]) -> dict[str, Any]:
    from ..metrics.classification import prediction_sets, reliability_bins
    from .classification import confidence_histogram, reliability_diagram, set_size_vs_coverage

    out: dict[str, Any] = {}
    clf = cast("_Classifier", d.pred)  # called for the classification kinds only
    proba, labels = clf.proba, clf.labels
    if "reliability" in kinds or "confidence" in kinds:
        bins = reliability_bins(proba, labels, num_bins=d.settings.class_bins)
        if "reliability" in kinds:
            ece = d.group("calibration").get("ece")
            head = "Reliability diagram" + (f" (ECE = {ece:.4f})" if ece is not None else "")
            out["reliability"] = reliability_diagram(
                bins, ece=ece, title=d.title("reliability", None if d.over else head), **d.over
            )
        if "confidence" in kinds:
            out["confidence"] = confidence_histogram(bins, title=d.title("confidence"), **d.on)
    if "sets" in kinds:
        from ..metrics.intervals import level_key

        levels = {level_key(v): float(v) for v in (*SET_LEVELS, *(d.settings.levels or ()))}
        # the levels the summary holds are not computed again
        done = {k: v for k, v in ((d.metrics or {}).get("prediction_sets") or {}).items() if k in levels}
        todo = sorted(v for k, v in levels.items() if k not in done)
        sets = {**done, **(prediction_sets(proba, labels, levels=todo) if todo else {})}
        out["sets"] = set_size_vs_coverage(sets, title=d.title("sets"), **d.over)
    return out


def _rejection(d: _Draw, series: str | None = None, color: str | None = None) -> Any:
    """Rejection curve and its oracle: accuracy of the kept rows (classification, rejecting the
    least confident first) or RMSE of the ensemble mean (samples, largest ensemble std first)."""
    from .rejection import plot_rejection

    regression = d.pred.kind not in CLASSIFICATION
    how = "by ensemble std" if regression else "by confidence"
    if _has_rejection_curve(d.metrics):
        curve = dict(cast("Mapping[str, Any]", d.metrics)["rejection"])
    else:  # the summary's rejection group without its curve: computed
        curve = _group(d.pred, d.settings, None, "rejection", d.cache)
    return plot_rejection(
        [curve],
        title=d.title("rejection", f"{KIND_TITLES['rejection']} ({how})"),
        metric="rmse" if regression else "accuracy",
        labels=[series if series is not None else "ensemble mean" if regression else (d.name or "model")],
        colors=[color] if color is not None else None,
        **d.on,
    )


def _title_text(s: str) -> str:
    """Input text for a title: no control characters (a ``$`` stays: :func:`build_figures` draws it literally)."""
    from ..text import plain

    return plain(s)


def _wanted_kinds(
    pred: Prediction, kinds: Sequence[str] | None, settings: Settings, metrics: Mapping[str, Any] | None
) -> list[str]:
    """The kinds to draw: every one that applies, or the requested ``kinds`` (an error names those that do
    not apply, and the ones that would)."""
    # a diagnostic plot asked for by name turns its (opt-in) family on
    allowed = applicable_kinds(
        pred, settings if kinds is None else replace(settings, diagnostics=True), metrics
    )
    if kinds is None:
        wanted = list(allowed)
    else:
        unknown = [k for k in kinds if k not in PLOT_KINDS]
        if unknown:
            raise InputError(
                f"unknown plot kind(s) {', '.join(map(repr, unknown))}: choose from {', '.join(PLOT_KINDS)}"
            )
        bad = [k for k in kinds if k not in allowed]
        if bad:
            shown = applicable_kinds(
                pred, settings, metrics
            )  # the hint lists the diagnostic kinds with --diagnostics
            from ..catalogue import not_computed_notes, not_defined

            if "skill" in bad and not _has_skill(metrics):
                raise InputError(
                    f"plot kind 'skill' needs skill scores: give {option('reference')} (a predictions FILE, "
                    f"climatology with {option('train')}, or persistence with {option('time')})"
                )
            hint = (
                f"kinds for {pred.kind} predictions: {', '.join(shown)}"
                if shown
                else f"the multivariate_rank_histogram (a {option('diagnostics')} figure) is the plot of multivariate "
                "ensembles"
                if pred.kind == "multivariate"
                else f"no plot applies to these {pred.kind} predictions"
                if not_defined(pred, settings)
                else f"no plot applies to {pred.kind} predictions (they carry no uncertainty)"
            )
            why = not_computed_notes(not_defined(pred, settings))  # e.g. quantiles at a single level
            raise InputError(
                f"plot kind {', '.join(map(repr, bad))} does not apply to {pred.kind} predictions; {hint}"
                + "".join(f"; {w}" for w in why)
            )
        wanted = [k for k in PLOT_KINDS if k in kinds]
    return wanted


def _from_summary(
    d: _Draw, wanted: Sequence[str], asked: bool, info: Mapping[str, Any] | None, bundle: PlotBundle
) -> dict[str, Any]:
    """The figures of the kinds drawn from a command's result or a whole-file computation (UCC, Murphy,
    exceedance reliability, skill, multivariate ranks, coverage by level); the UCC summary goes to
    ``bundle``. ``asked``: the kinds were named, so a UCC that cannot be drawn is an error rather than a
    note; ``d.seed`` draws the multivariate ranks' ties."""
    pred, settings, name, on = d.pred, d.settings, d.name, d.on
    figs: dict[str, Any] = {}
    if "ucc" in wanted:
        try:
            res = ucc_result(pred, settings, name, info)
        except InputError as exc:
            if asked:  # asked for explicitly: the reason is the error
                raise
            d.notes.append(f"UCC skipped: {exc}")
        else:
            from .ucc import plot_ucc

            bundle.ucc = res["summary"]
            d.notes.extend(res["notes"])
            figs["ucc"] = plot_ucc([res["model"]], title=d.title("ucc"), **on)
    if "murphy" in wanted:  # issue 16 A
        from .murphy import murphy_panels, plot_murphy

        thetas, curves, xlabel = murphy_panels(d.group("murphy"))
        figs["murphy"] = plot_murphy(thetas, curves, title=d.title("murphy"), xlabel=xlabel, **on)
    if "exceedance_reliability" in wanted:  # issue 16
        figs["exceedance_reliability"] = _exceedance_reliability(d)
    if "skill" in wanted:  # issue 16: drawn from the summary's skill group
        from .verification import plot_skill

        assert d.metrics is not None  # the skill kind applies with a skill group in metrics only (_has_skill)
        figs["skill"] = plot_skill(d.metrics["skill"], title=d.title("skill"), **on)
    if "multivariate_rank_histogram" in wanted:  # issue 16
        from ..metrics.calibration_tests import rank_counts_test
        from ..metrics.multivariate import average_ranks
        from .regression import plot_rank_histogram

        mv = cast("Multivariate", pred)  # the multivariate kind only
        m = mv.samples.shape[1]
        test = rank_counts_test(average_ranks(mv.require_targets(), mv.samples, seed=d.seed), m)
        head = f"{KIND_TITLES['multivariate_rank_histogram']} ({mv.samples.shape[2]} components)"
        figs["multivariate_rank_histogram"] = plot_rank_histogram(
            test["rank_histogram"],
            title=d.title("multivariate_rank_histogram", head),
            p_value=test["rank_hist_chi2_p"],
            xlabel=f"average rank of the outcome among the {m} members",
            **on,
        )
    if "coverage" in wanted:  # issue 26/28: the coverage by level of `coverage --plot`
        figs["coverage"] = _coverage(d, info)
    return figs


def build_figures(
    pred: Prediction,
    metrics: Mapping[str, Any] | None = None,
    settings: Settings | None = None,
    *,
    name: str = "",
    kinds: Sequence[str] | None = None,
    x: np.ndarray | None = None,
    x_label: str | None = None,
    max_points: int = 5000,
    seed: int | None = None,
    info: Mapping[str, Any] | None = None,
    order_by: str = "target",
    ax: Any = None,
    series: str | None = None,
    color: str | None = None,
) -> PlotBundle:
    """Every figure that applies to ``pred`` (or the requested ``kinds``).

    Parameters
    ----------
    pred : a prediction container with targets.
    metrics : the ``metrics`` block of its score summary; missing groups are computed.
    settings : the run's settings (levels, bins, seed).
    name : the file's name, ending every title.
    kinds : subset of :data:`PLOT_KINDS`; a requested kind that does not apply to the
        representation raises :class:`InputError` listing those that do.
    x, x_label : values (aligned with the rows of ``pred``) and name of the x axis of the
        ``predictions`` plot; when None, the ordered view (intervals sorted by the prediction).
    max_points, seed : scatter subsampling (``seed`` defaults to ``settings.seed``).
    info : the loader's ``info`` (``path``, ...), naming the file in UCC messages.
    ax : a matplotlib Axes to draw on (every kind; :func:`uqeval.plot`), instead of a new figure per kind.
        Kinds whose own figure has several panels draw one panel there: the classifier reliability
        diagram, corp and smooth_reliability with their counts as grey bars along the bottom, sets as
        coverage by level with the set sizes written at the points, exceedance_reliability with one
        curve per threshold.
    series, color : with ``ax``, the label and colour of this prediction's series, for the kinds of
        :data:`OVERLAY_KINDS` (several models on one Axes).

    Returns
    -------
    PlotBundle with ``figures`` (kind -> matplotlib Figure, in :data:`PLOT_KINDS` order),
    ``ucc`` (the UCC summary when the ``ucc`` kind was drawn) and ``notes``.
    """
    settings = settings or Settings()
    seed = settings.seed if seed is None else int(seed)

    name, x_label = _title_text(name), _title_text(x_label) if x_label is not None else x_label
    if int(max_points) < 1:
        raise InputError(f"{option('max_points')} must be >= 1, got {max_points}")
    wanted = _wanted_kinds(pred, kinds, settings, metrics)
    if not wanted:  # e.g. point predictions, or log-likelihoods alone
        return PlotBundle()
    pred.require_targets()
    if x is not None:
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (pred.n,):
            raise InputError(f"x has {x.size} values but the prediction has {pred.n} rows")

    from .common import drawn_texts

    # a given Axes' texts that the drawing does not change keep their math (its title and labels are rewritten)
    before = {} if ax is None else {t: t.get_text() for t in drawn_texts(ax.figure)}
    bundle = PlotBundle()
    on: dict[str, Any] = {} if ax is None else {"ax": ax}
    over = {**on, "label": series, "color": color} if series is not None else on
    d = _Draw(pred, metrics, settings, name, on, over, seed, bundle.notes)
    if pred.kind in CLASSIFICATION:
        figs = _categorical(d, wanted)
    else:
        figs = _regression(d, wanted, x, x_label, int(max_points), order_by)
    if "rejection" in wanted:
        figs["rejection"] = _rejection(d, series, color)
    figs.update(_diagnostics(d, wanted))
    figs.update(_from_summary(d, wanted, kinds is not None, info, bundle))
    bundle.figures = {k: figs[k] for k in PLOT_KINDS if k in figs}
    for fig in {id(f): f for f in bundle.figures.values()}.values():  # uqeval draws no math: a $ is a $
        for t in drawn_texts(fig):
            if before.get(t) != t.get_text():
                t.set_parse_math(False)
    return bundle


def coverage_levels_drawn(pred: Prediction, settings: Settings) -> list[float]:
    """The levels of the ``coverage`` figure: ``--levels`` when it gives several, else :data:`SET_LEVELS` for
    representations with any level (Gaussians, samples, classifiers' prediction sets); the levels quantiles
    and intervals carry (those asked for by ``--levels``)."""
    from ..catalogue import coverage_levels

    several = settings.levels is not None and len(settings.levels) > 1
    if pred.kind in CLASSIFICATION or pred.carried_levels() is None:
        return list(settings.levels) if several else list(SET_LEVELS)  # type: ignore[arg-type]
    return coverage_levels(pred, settings)


def _coverage(d: _Draw, info: Mapping[str, Any] | None) -> Any:
    """Observed coverage against the nominal level, with the mean width (set size) per level: the records
    of ``uqeval coverage`` (:func:`uqeval.commands.coverage.core.run_coverage`), pooled and drawn as the last panel
    of its ``--plot`` (:func:`uqeval.plots.coverage.pooled_coverage`, :func:`~uqeval.plots.coverage.plot_coverage_by_level`)."""
    from ..commands.coverage.core import run_coverage
    from ..io.load import Loaded
    from .coverage import plot_coverage_by_level, pooled_coverage

    pred, settings, label = d.pred, d.settings, d.name or "model"
    levels = tuple(coverage_levels_drawn(pred, settings))
    loaded = Loaded(pred, dict(info) if info else {"path": label})
    records = run_coverage([(label, loaded)], replace(settings, levels=levels))["points"]
    lv, cov, width = pooled_coverage(records)[label]
    return plot_coverage_by_level(
        lv,
        cov,
        sizes=width,
        size_what="mean set size (classes)"
        if pred.kind in CLASSIFICATION
        else "mean width (std of training targets)"
        if settings.y_std
        else "mean width (units of y)",
        title=d.title("coverage"),
        **d.over,
    )


#: Thresholds drawn by the exceedance_reliability figure (one panel each; the JSON holds them all).
MAX_EXCEEDANCE_PANELS = 6


def _exceedance_reliability(d: _Draw) -> Any:
    """The CORP reliability diagram of the event Y > t for each ``--threshold`` t (the first
    :data:`MAX_EXCEEDANCE_PANELS`): the forecast probability P(Y > t)
    (:func:`uqeval.catalogue.exceedance_probability`) against 1{y > t}, with its consistency band and the
    Brier score's CORP decomposition (MCB − DSC + UNC = ``exceedance.<t>.brier``)."""
    from ..catalogue import exceedance_probability
    from ..metrics.corp import corp_binary, reliability_curve
    from ..metrics.intervals import level_key
    from .diagnostics import plot_corp_panels

    pred, settings = d.pred, d.settings
    assert settings.thresholds is not None  # an opt-in kind: it applies with --threshold only
    thresholds = list(settings.thresholds)
    if len(thresholds) > MAX_EXCEEDANCE_PANELS:
        d.notes.append(
            f"exceedance_reliability: drew the first {MAX_EXCEEDANCE_PANELS} of {len(thresholds)} thresholds"
        )
    panels = []
    for t in thresholds[:MAX_EXCEEDANCE_PANELS]:
        p = exceedance_probability(pred, float(t))
        o = (pred.require_targets() > t).astype(np.float64)
        panels.append(
            (
                reliability_curve(p, o, seed=settings.seed),
                corp_binary(p, o)["brier"],
                f"event Y > {level_key(t)}",
                f"P(Y > {level_key(t)})",
            )
        )
    return plot_corp_panels(panels, suptitle=d.title("exceedance_reliability"), **d.on)


# --------------------------------------------------------------------------- output
def encode_figures(
    figures: Mapping[str, Any], fmt: str = "png", dpi: int = 150, notes: list[str] | None = None
) -> dict[str, bytes]:
    """``{kind: bytes}`` of each figure (:func:`uqeval.plots.common.figure_to_bytes`); the figures are
    cleared once encoded, to free their memory. A figure whose values are too large to draw
    (:class:`~uqeval.plots.common.FigureTooLarge`, e.g. targets near 1e308) is left out with a line in
    ``notes`` (without ``notes``: the error is raised).

    With ``uqeval.plots.RENDER_PROCESSES`` > 1, worker processes (:func:`render_workers`) draw every k-th
    figure (the same bytes: each figure is drawn alone, from the same state); a worker that fails leaves
    its figures to this process."""
    from .. import plots
    from .common import FigureTooLarge

    kinds, figs = list(figures), list(figures.values())
    images = _render_map(figs, fmt, dpi, plots.RENDER_PROCESSES)
    if notes is None:  # the caller wants the error, not a note
        for image in images:
            if isinstance(image, str):
                raise FigureTooLarge(image)
    for fig in figs:
        fig.clear()
    out = {}
    for kind, image in zip(kinds, images):
        if isinstance(image, str):
            notes.append(f"{kind}: figure left out: {image.removeprefix('cannot draw the figure: ')}")  # type: ignore[union-attr]
        else:
            out[kind] = image
    return out


#: the executor of :func:`render_workers`, once started
_WORKERS: list = []


def render_workers(processes: int):
    """The ``processes - 1`` worker processes that draw figures for this one, started on first use (a
    ``concurrent.futures.ProcessPoolExecutor``), or None where there are none to start.

    They are *spawned*, fresh interpreters, never forked from this process: here pyarrow's and
    jemalloc's threads are alive (and, in the family threads, uqeval's), and a child forked from a
    multi-threaded process may wait forever on a lock another thread held (Python 3.12 warns). Figures
    reach a worker pickled. Starting one does not wait for it: the CLI calls this before it reads and
    scores, and the worker's start-up (an interpreter, matplotlib: :func:`_warm`) overlaps that work.

    A worker ends with this process however it ends (SIGKILL included) and ignores SIGINT, from its
    start-up on (:mod:`uqeval._children`). The CLI kills the pool at the end of each command
    (:func:`uqeval._children.stop_children`: a worker holds no output and no state); a library
    caller's pool is shut down at exit."""
    import atexit
    import functools
    import multiprocessing
    import os
    import threading

    from .. import _children

    if processes < 2:
        return None
    if not _WORKERS:
        from concurrent.futures import ProcessPoolExecutor

        # the parent-death signal is tied to the thread that starts a worker: here, every worker is
        # started by the warm-ups below, in this thread
        main = threading.current_thread() is threading.main_thread()
        _children.quiet_resource_tracker()  # (its semaphores' tracker starts with the pool's queues)
        pool = ProcessPoolExecutor(
            max_workers=processes - 1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_children.init_child,
            initargs=(os.getpid(), main),
        )
        _WORKERS.append(pool)
        _children.track(functools.partial(_stop_workers, kill=True))
        atexit.register(_stop_workers)
        with _children.interrupts_blocked():
            for _ in range(processes - 1):  # start the workers now, not when the first figures are ready
                pool.submit(_warm)
    return _WORKERS[0]


def _warm() -> None:
    """In a new worker: import what drawing needs, before the first figures arrive."""
    import matplotlib.backends.backend_agg  # noqa: F401

    from . import common  # noqa: F401


def _stop_workers(kill: bool = False) -> None:
    """Shut the pool down and drop it (``kill``: its workers killed first): at exit, while the modules
    are intact, and killed at the end of each CLI command (:func:`uqeval._children.stop_children`)."""
    from .._children import stop_pool

    while _WORKERS:
        stop_pool(_WORKERS[-1], kill)
        _WORKERS.pop()


def _encode(fig: Any, fmt: str, dpi: int) -> bytes | str:
    """The bytes of one figure, or the message of :class:`~uqeval.plots.common.FigureTooLarge` (a str:
    picklable from a worker process)."""
    from .common import FigureTooLarge, figure_to_bytes

    try:
        return figure_to_bytes(fig, fmt, dpi)
    except FigureTooLarge as exc:
        return str(exc)


def _draw_pickled(blob: bytes, fmt: str, dpi: int) -> tuple[list[bytes | str], list[tuple]]:
    """In a worker process: the bytes of pickled ``[(figure, agg)]`` (``agg``: drawn on an Agg canvas), and
    the warnings drawing raised, as ``(category, message, filename, lineno)``.

    A worker's warnings would go to its own stderr, past the capture of the command's edge
    (:func:`uqeval.cli.common.handle_errors`); the parent raises them again (:func:`_render_map`)."""
    import pickle
    import warnings

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for fig, agg in pickle.loads(blob):
            if agg:  # an unpickled figure comes with a plain canvas: the Agg one it was drawn on, again
                FigureCanvasAgg(fig)
            out.append(_encode(fig, fmt, dpi))
    return out, [(w.category, str(w.message), w.filename, w.lineno) for w in caught]


def _render_map(figs: list, fmt: str, dpi: int, processes: int) -> list[bytes | str]:
    """``[_encode(f, fmt, dpi) for f in figs]``, figures ``k, k + p, ...`` drawn by worker ``k``
    (``k >= 1``, :func:`render_workers`) and figure 0's share here. A loop over a handful of figures."""
    import pickle
    import warnings

    p = min(int(processes), len(figs))
    pool = render_workers(processes) if p >= 2 else None
    if pool is None:
        return [_encode(f, fmt, dpi) for f in figs]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    shares = {}
    for k in range(1, p):
        try:  # pickled here, before any drawing: no figure is read by two threads at once
            share = [(f, isinstance(f.canvas, FigureCanvasAgg)) for f in figs[k::p]]
            blob = pickle.dumps(share, protocol=pickle.HIGHEST_PROTOCOL)
            shares[k] = pool.submit(_draw_pickled, blob, fmt, dpi)
        except Exception:  # not picklable, or the workers are gone: drawn here
            shares[k] = None
    out: list[Any] = [None] * len(figs)
    out[0::p] = [_encode(f, fmt, dpi) for f in figs[0::p]]
    for k in range(1, p):
        try:
            drawn, raised = shares[k].result() if shares[k] is not None else (None, [])
        except Exception:  # the worker failed (or died: the pool is broken and replaced next time)
            drawn, raised = None, []
            _WORKERS[:] = [w for w in _WORKERS if not getattr(w, "_broken", False)]
        for category, message, filename, lineno in raised:  # here, where the command's edge collects them
            warnings.warn_explicit(message, category, filename, lineno)
        out[k::p] = drawn if drawn is not None else [_encode(f, fmt, dpi) for f in figs[k::p]]
    return out


def write_images(images: Mapping[str, bytes], directory: str | Path, fmt: str = "png") -> list[Path]:
    """Write ``<directory>/<kind>.<fmt>`` for every encoded image, each atomically; returns the paths.

    ``directory`` is created when its parent exists.
    """
    from ..io.writers import atomic_write_bytes

    d = check_plot_dir(directory)
    try:
        d.mkdir(exist_ok=True)
    except OSError as exc:
        raise InputError(f"{option('plot_dir')} {d}: cannot create the directory ({exc})") from None
    paths = []
    for kind, data in images.items():
        path = d / f"{kind}.{fmt}"
        atomic_write_bytes(path, data)
        paths.append(path)
    return paths


def check_plot_dir(directory: str | Path) -> Path:
    """Fail early unless ``directory`` exists as a directory or can be created in an existing parent."""
    d = Path(directory)
    if d.exists():
        if not d.is_dir():
            raise InputError(f"{option('plot_dir')} {d}: exists and is not a directory; choose a directory")
        return d
    parent = d.parent if str(d.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(
            f"{option('plot_dir')} {d}: parent directory '{parent}' does not exist; create it first"
        )
    return d
