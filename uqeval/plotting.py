"""From a loaded prediction and its score summary to the figures that apply to it.

The one piece of glue between the pure figure builders (:mod:`uqeval.plots`) and the
commands that draw: ``uqeval score --plot-dir``, ``uqeval plot`` and ``uqeval report``.
It decides which plot kinds apply to a representation, derives the arrays each builder
needs (intervals, PIT values, ensemble moments, reliability bins, ...) and reuses the
metric values of the summary where a plot annotates one (miscalibration area, adversarial
group calibration, ``max_cal_err``, ECE). A metric the summary lacks is computed through
the registry, so ``uqeval plot`` does not need a full scoring run.

Plot kinds (``--kind``):

=============  ==========================================================  ===========================
kind           figure                                                      representations
=============  ==========================================================  ===========================
predictions    observations, point prediction and interval band vs x       gaussian, samples, quantiles,
               (``--x COL``) or the row index                              intervals
intervals      intervals ordered by target                                 gaussian, samples, quantiles,
                                                                           intervals
calibration    average calibration curve, miscalibration area shaded       gaussian, samples, quantiles
adversarial    adversarial group calibration ±1 standard error             gaussian, samples
sharpness      histogram of σ (ensemble std for samples)                   gaussian, samples
residuals      residuals vs predicted σ                                    gaussian
reliability    regression: ACCRUE's bin-free reliability diagram;          gaussian, samples, categorical,
               classification: reliability diagram (ECE in the title)      members, dirichlet
pit            PIT histogram with a uniform reference band                 gaussian, samples, quantiles
confidence     top-label confidence histogram                              categorical, members, dirichlet
sets           prediction-set coverage and size across levels              categorical, members, dirichlet
rejection      rejection curve with its oracle: RMSE of the ensemble mean  samples, categorical, members,
               (samples) or accuracy (classification) of the kept rows     dirichlet
ucc            uncertainty characteristics curve (bandwidth vs miss rate)  gaussian, samples, quantiles,
                                                                           intervals
=============  ==========================================================  ===========================

No plot applies to point predictions (they carry no uncertainty) nor to log-likelihoods alone.

Bands drawn in the ``predictions`` and ``intervals`` plots are central intervals at the
*plot level*: the widest of :func:`uqeval.registry.coverage_levels` (0.95 by default for
Gaussians and samples; the widest central quantile pair or interval level the file
carries). Samples give empirical quantiles (type 7) around the ensemble mean; quantiles
give the median (or the midpoint of the pair when there is no median). The UCC uses the
band of ``uqeval ucc`` (:func:`uqeval.ucc_run.band_of`) at ``--level`` (default 0.95;
the widest level when the file does not carry it), so the report's UCC numbers equal
those of ``uqeval ucc FILE``. The quantile calibration curve is in *quantile mode*
(observed share of targets below each quantile against its level, at the levels the
file carries), and their PIT histogram counts targets between neighbouring quantiles.
The rejection curve and the metric values annotated on plots come from the summary
(else from the registry), so plots and tables always agree.

Every title ends with the file's name; scatter plots draw at most ``max_points`` rows
(seeded), curves use every row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .config import Settings
from .errors import InputError
from .plots import PLOT_KINDS, REGRESSION_PLOT_KINDS  # noqa: F401  (re-exported)
from .predictions import Prediction

__all__ = [
    "KIND_TITLES",
    "PLOT_KINDS",
    "PlotBundle",
    "applicable_kinds",
    "build_figures",
    "check_plot_dir",
    "encode_figures",
    "find_x_column",
    "plot_level",
    "prepare_plot_dir",
    "read_x_column",
    "ucc_level",
    "ucc_result",
    "write_figures",
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
}

_BY_KIND: dict[str, tuple[str, ...]] = {
    "gaussian": ("predictions", "intervals", "calibration", "adversarial", "sharpness",
                 "residuals", "reliability", "pit", "ucc"),
    "samples": ("predictions", "intervals", "calibration", "adversarial", "sharpness",
                "reliability", "pit", "rejection", "ucc"),
    "quantiles": ("predictions", "intervals", "calibration", "pit", "ucc"),
    "intervals": ("predictions", "intervals", "ucc"),
    "point": (),
    "categorical": ("reliability", "confidence", "sets", "rejection"),
    "members": ("reliability", "confidence", "sets", "rejection"),
    "dirichlet": ("reliability", "confidence", "sets", "rejection"),
}
#: Representations with class probabilities (``proba``, ``labels``): the classification plots.
_CLASSIFICATION = ("categorical", "members", "dirichlet")

#: Levels of the set-size-vs-coverage plot (joined with the run's ``--levels``).
SET_LEVELS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)

_BAND_KINDS = ("predictions", "intervals", "ucc")
_CURVE_KEYS = ("fractions", "values", "oracle_values")


@dataclass
class PlotBundle:
    """Figures of one file, keyed by kind in :data:`PLOT_KINDS` order, plus what went with them.

    ``ucc`` holds the UCC result (:func:`ucc_result` ``["summary"]``) when it was computed;
    ``notes`` say which applicable plots were skipped and why.
    """

    figures: dict[str, Any] = field(default_factory=dict)
    ucc: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- what applies
def _has_rejection_curve(metrics: Mapping[str, Any] | None) -> bool:
    rej = (metrics or {}).get("rejection")
    return isinstance(rej, Mapping) and all(k in rej for k in _CURVE_KEYS)


def _rejection_in_registry(kind: str) -> bool:
    from .registry import get_group

    try:
        return kind in get_group("rejection").compute
    except KeyError:
        return False


def plot_level(pred: Prediction, settings: Settings) -> float | None:
    """Level of the central intervals drawn (and scaled by the UCC); None when there are none.

    The widest of the coverage levels: ``max(--levels)`` (default 0.95) for Gaussians and
    samples, the widest carried (or requested) central level for quantiles and intervals.
    """
    from .registry import coverage_levels

    if pred.kind not in ("gaussian", "samples", "quantiles", "intervals"):
        return None
    levels = coverage_levels(pred, settings)
    return max(levels) if levels else None


def applicable_kinds(pred: Prediction, settings: Settings | None = None,
                     metrics: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """Plot kinds that apply to ``pred`` (see the table in the module docstring).

    Quantiles without a central pair have no band, interval or UCC plot. The rejection
    plot applies where the registry's ``rejection`` group does (and to samples), or when
    the summary's ``rejection`` group carries curve data (``fractions``, ``values``,
    ``oracle_values``).
    """
    settings = settings or Settings()
    kinds = list(_BY_KIND.get(pred.kind, ()))
    if any(k in kinds for k in _BAND_KINDS) and plot_level(pred, settings) is None:
        kinds = [k for k in kinds if k not in _BAND_KINDS]
    has_curve = _has_rejection_curve(metrics) or _rejection_in_registry(pred.kind) or pred.kind == "samples"
    if "rejection" in kinds and not has_curve:
        kinds.remove("rejection")
    elif "rejection" not in kinds and _has_rejection_curve(metrics):
        kinds.append("rejection")
    return tuple(k for k in PLOT_KINDS if k in kinds)


# --------------------------------------------------------------------------- helpers
def _group(pred: Prediction, settings: Settings, metrics: Mapping[str, Any] | None,
           name: str, cache: dict[str, Any]) -> dict[str, Any]:
    """A metric group from the summary, or computed through the registry when absent."""
    if metrics is not None and isinstance(metrics.get(name), Mapping):
        return dict(metrics[name])
    if name not in cache:
        from .registry import get_group

        group = get_group(name)
        fn = group.compute.get(pred.kind)
        cache[name] = (fn(pred, settings) or {}) if fn is not None else {}
    return cache[name]


def _point_and_interval(pred: Prediction, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """``(point, lower, upper, point_label)`` for the band plots."""
    from .registry import _samples_moments, intervals_at, point_prediction

    lo, hi = intervals_at(pred, level)
    if pred.kind == "samples":
        return _samples_moments(pred)[0], lo, hi, "ensemble mean"
    point = point_prediction(pred)
    if point is None:
        return 0.5 * (lo + hi), lo, hi, "interval midpoint"
    label = {"quantiles": "predicted median", "intervals": "point prediction"}.get(pred.kind,
                                                                                  "predicted mean")
    return point, lo, hi, label


def ucc_level(pred: Prediction, settings: Settings) -> float | None:
    """Level of the band the UCC scales: ``settings.level`` (``--level``, default 0.95, as
    ``uqeval ucc``) when the representation has it, else :func:`plot_level`; None without
    intervals."""
    from .metrics.intervals import central_pairs, level_key

    widest = plot_level(pred, settings)
    if widest is None:
        return None
    if pred.kind == "quantiles":
        carried = [lv for _, _, lv in central_pairs(pred.levels)]
    elif pred.kind == "intervals":
        carried = [float(v) for v in pred.levels]
    else:
        return float(settings.level)
    return float(settings.level) if level_key(settings.level) in {level_key(c) for c in carried} else widest


def ucc_result(pred: Prediction, settings: Settings, name: str = "",
               info: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """UCC of ``pred`` exactly as ``uqeval ucc FILE`` computes it with default options.

    The band comes from :func:`uqeval.ucc_run.band_of` at :func:`ucc_level` (bandwidth vs
    miss rate, normalised by std(y), cost 0.5). Returns ``{"summary": ..., "model": ...,
    "notes": [...]}``: ``summary`` is the ``ucc`` block of ``uqeval ucc`` (``x_axis``,
    ``y_axis``, ``normalize``, ``auucc``, ``auucc_const``, ``gain``, ``partial``, ``op``,
    ``op_min``) plus ``level`` and ``centre`` of the band; ``model`` is the entry
    :func:`uqeval.plots.ucc.plot_ucc` takes. Raises InputError when there is no band or its
    centre lies outside it.
    """
    from .io.load import Loaded
    from .ucc_run import band_of, plot_models, ucc_report

    level = ucc_level(pred, settings)
    if level is None:
        raise InputError(f"{pred.kind} predictions give no central interval: the UCC needs one "
                         "(Gaussian, samples, a central quantile pair or lower/upper columns)")
    label = name or "model"
    loaded = Loaded(pred, dict(info) if info else {"path": label})
    band = band_of(label, loaded, level)
    report = ucc_report([band])
    summary = dict(report["models"][label]["ucc"])
    summary["level"] = float(band.level)
    summary["centre"] = band.centre
    return {"summary": summary, "model": plot_models([band], report)[0], "notes": list(band.notes)}


def find_x_column(table: Any, column: str) -> str:
    """The name of the --x column in a :class:`~uqeval.io.readers.TableInfo` (exact, else
    case-insensitive match); a missing or list column is a SchemaError. Reads no data."""
    from .errors import SchemaError

    name = column if column in table.columns else {c.lower(): c for c in table.columns}.get(column.lower())
    if name is None:
        shown = ", ".join(table.columns[:20]) + (" ..." if len(table.columns) > 20 else "")
        raise SchemaError(f"{table.path}: column '{column}' given for --x not found; available columns: {shown}")
    if name in table.list_columns:
        raise SchemaError(f"{table.path}: column '{name}' given for --x is a list column; --x needs one number per row")
    return name


def read_x_column(path: str | Path, column: str, rows: np.ndarray | None, n: int) -> np.ndarray:
    """The numeric column ``column`` of ``path``, restricted to the kept ``rows``.

    ``rows`` are the row numbers the loader kept (``prediction.rows``; None means all
    ``n``). The name matches exactly, else case-insensitively. Non-finite values in kept
    rows are an error naming the column and the first such row.
    """
    from .io.readers import inspect, read_columns, to_float

    table = inspect(path)
    name = find_x_column(table, column)
    cols, _ = read_columns(table, [name])
    x = to_float(cols[name], name, table.path)
    x = x[rows] if rows is not None else x[:n]
    bad = np.flatnonzero(~np.isfinite(x))
    if bad.size:
        first = int(rows[bad[0]]) if rows is not None else int(bad[0])
        raise InputError(
            f"{table.path}: --x column '{name}' must be finite in every evaluated row: {bad.size} row(s) "
            f"with NaN/inf (first at row {first}); clean the column or choose another --x"
        )
    return x


# --------------------------------------------------------------------------- builders
def _regression(pred: Prediction, kinds: Sequence[str], metrics, settings: Settings, cache: dict,
                name: str, x, x_label, max_points: int, seed: int, notes: list[str],
                order_by: str = "target") -> dict[str, Any]:
    from .plots.regression import (
        plot_calibration_curve,
        plot_intervals_ordered,
        plot_pit_histogram,
        plot_predictions_band,
        regression_figures,
    )

    out: dict[str, Any] = {}
    y = pred.require_targets()
    level = plot_level(pred, settings)

    def title(kind: str) -> str:
        return f"{KIND_TITLES[kind]}: {name}" if name else KIND_TITLES[kind]

    if pred.kind in ("gaussian", "samples"):
        wanted = [k for k in kinds if k in ("predictions", "intervals", "calibration", "adversarial",
                                            "sharpness", "residuals", "reliability", "pit")]
        if not wanted:
            return out
        kw: dict[str, Any] = {}
        if pred.kind == "gaussian":
            kw.update(mean=pred.mean, std=pred.std)
        else:
            from .registry import _samples_moments, _samples_pit

            point, lo, hi, _ = _point_and_interval(pred, level if level is not None else 0.95)
            std = _samples_moments(pred)[1]
            kw.update(mean=point, lower=lo, upper=hi, pit=_samples_pit(pred))
            if np.all(std > 0):
                kw["std"] = std
            elif "sharpness" in wanted:
                wanted.remove("sharpness")
                notes.append(f"sharpness plot skipped: {int(np.sum(std <= 0))} row(s) have identical "
                             "members (ensemble std 0)")
        if "adversarial" in wanted:
            kw["metrics"] = {"adv_group_calibration": _group(pred, settings, metrics, "adv_group_calibration", cache)}
        else:
            kw["metrics"] = {}
        if "calibration" in wanted:
            kw["metrics"]["avg_calibration"] = _group(pred, settings, metrics, "avg_calibration", cache)
        if "reliability" in wanted:
            kw["metrics"]["reliability"] = _group(pred, settings, metrics, "reliability", cache)
        figs = regression_figures(
            y, x=x, x_label=x_label, name=name, kinds=wanted, level=level if level is not None else 0.95,
            num_bins=settings.num_bins, max_points=max_points, seed=seed, order_by=order_by, **kw,
        )
        out.update(figs)
        return out

    # quantiles and intervals: band plots from the plot level; quantiles add calibration and PIT
    if any(k in kinds for k in ("predictions", "intervals")):
        point, lo, hi, point_label = _point_and_interval(pred, level)
        band_label = f"{level:.0%} central interval"
        if "predictions" in kinds:
            out["predictions"] = plot_predictions_band(
                y, point, lo, hi, x=x, title=title("predictions"), max_points=max_points, seed=seed,
                x_label=x_label, band_label=band_label, mean_label=point_label)
        if "intervals" in kinds:
            out["intervals"] = plot_intervals_ordered(
                y, point, lo, hi, title=title("intervals"), order_by=order_by, max_points=max_points, seed=seed,
                band_label=band_label, mean_label=point_label)
    if pred.kind == "quantiles" and "calibration" in kinds:
        from .metrics.quantiles import quantile_calibration_curve

        # the levels the file carries, as avg_calibration uses them (so the shaded area is
        # the annotated miscal_area)
        expected, observed = quantile_calibration_curve(y, pred.quantiles, pred.levels)
        area = _group(pred, settings, metrics, "avg_calibration", cache).get("miscal_area")
        fig = plot_calibration_curve(expected, observed, area, title=title("calibration"))
        ax = fig.axes[0]
        ax.set_xlabel("quantile level τ", fontsize=ax.xaxis.label.get_fontsize())
        ax.set_ylabel("observed share of targets ≤ quantile", fontsize=ax.yaxis.label.get_fontsize())
        out["calibration"] = fig
    if pred.kind == "quantiles" and "pit" in kinds:
        from .metrics.quantiles import pit_histogram_quantiles

        hist = pit_histogram_quantiles(y, pred.quantiles, pred.levels)
        out["pit"] = plot_pit_histogram(counts=hist["counts"], edges=hist["edges"], title=title("pit"))
    return out


def _categorical(pred: Prediction, kinds: Sequence[str], metrics, settings: Settings, cache: dict,
                 name: str) -> dict[str, Any]:
    from .metrics.classification import prediction_sets, reliability_bins
    from .plots.classification import (
        confidence_histogram,
        reliability_diagram,
        set_size_vs_coverage,
    )

    out: dict[str, Any] = {}
    proba, labels = pred.proba, pred.labels
    suffix = f": {name}" if name else ""
    if "reliability" in kinds or "confidence" in kinds:
        bins = reliability_bins(proba, labels, num_bins=settings.class_bins)
        if "reliability" in kinds:
            ece = _group(pred, settings, metrics, "calibration", cache).get("ece")
            head = "Reliability diagram" + (f" (ECE = {ece:.4f})" if ece is not None else "")
            out["reliability"] = reliability_diagram(bins, ece=ece, title=head + suffix)
        if "confidence" in kinds:
            out["confidence"] = confidence_histogram(bins, title=KIND_TITLES["confidence"] + suffix)
    if "sets" in kinds:
        from .metrics.intervals import level_key

        levels = {level_key(v): float(v) for v in (*SET_LEVELS, *(settings.levels or ()))}
        sets = prediction_sets(proba, labels, levels=sorted(levels.values()))
        out["sets"] = set_size_vs_coverage(sets, title=KIND_TITLES["sets"] + suffix)
    return out


def _rejection(pred: Prediction, metrics, settings: Settings, cache: dict, name: str) -> Any:
    """Rejection curve and its oracle: accuracy of the kept rows (classification, rejecting the
    least confident first) or RMSE of the ensemble mean (samples, largest ensemble std first)."""
    from .plots.rejection import plot_rejection

    regression = pred.kind == "samples"
    how = "by ensemble std" if regression else "by confidence"
    title = f"{KIND_TITLES['rejection']} ({how}): {name}" if name else f"{KIND_TITLES['rejection']} ({how})"
    if _has_rejection_curve(metrics):
        curve = dict(metrics["rejection"])
    elif _rejection_in_registry(pred.kind):
        curve = _group(pred, settings, None, "rejection", cache)
    else:  # samples before the registry had a rejection group: the same curve, computed here
        from .metrics.ensembles import rejection_curve
        from .registry import _samples_moments

        mean, std = _samples_moments(pred)
        curve = rejection_curve(pred.require_targets() - mean, std, kind="rmse")
    return plot_rejection([curve], title=title, metric="rmse" if regression else "accuracy",
                          labels=["ensemble mean" if regression else (name or "model")])


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
        ``predictions`` plot; the row index when None.
    max_points, seed : scatter subsampling (``seed`` defaults to ``settings.seed``).
    info : the loader's ``info`` (``path``, ...), naming the file in UCC messages.

    Returns
    -------
    PlotBundle with ``figures`` (kind -> matplotlib Figure, in :data:`PLOT_KINDS` order),
    ``ucc`` (the UCC summary when the ``ucc`` kind was drawn) and ``notes``.
    """
    from .report.text import plain

    settings = settings or Settings()
    seed = settings.seed if seed is None else int(seed)
    def text(s: str) -> str:  # titles are text: no control characters, no mathtext ($...$)
        return plain(s).replace("$", r"\$")

    name, x_label = text(name), text(x_label) if x_label is not None else x_label
    if int(max_points) < 1:
        raise InputError(f"--max-points must be >= 1, got {max_points}")
    allowed = applicable_kinds(pred, settings, metrics)
    if kinds is None:
        wanted = list(allowed)
    else:
        unknown = [k for k in kinds if k not in PLOT_KINDS]
        if unknown:
            raise InputError(f"unknown plot kind(s) {', '.join(map(repr, unknown))}: choose from {', '.join(PLOT_KINDS)}")
        bad = [k for k in kinds if k not in allowed]
        if bad:
            hint = (f"kinds for {pred.kind} predictions: {', '.join(allowed)}" if allowed
                    else f"no plot applies to {pred.kind} predictions (they carry no uncertainty)")
            raise InputError(f"plot kind {', '.join(map(repr, bad))} does not apply to {pred.kind} predictions; {hint}")
        wanted = [k for k in PLOT_KINDS if k in kinds]
    if not wanted:  # e.g. point predictions, or log-likelihoods alone
        return PlotBundle()
    pred.require_targets()
    if x is not None:
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (pred.n,):
            raise InputError(f"x has {x.size} values but the prediction has {pred.n} rows")

    bundle = PlotBundle()
    cache: dict[str, Any] = {}
    if pred.kind in _CLASSIFICATION:
        figs = _categorical(pred, wanted, metrics, settings, cache, name)
    else:
        figs = _regression(pred, wanted, metrics, settings, cache, name, x, x_label, int(max_points), seed,
                           bundle.notes, order_by)
    if "rejection" in wanted:
        figs["rejection"] = _rejection(pred, metrics, settings, cache, name)
    if "ucc" in wanted:
        try:
            res = ucc_result(pred, settings, name, info)
        except InputError as exc:
            if kinds is not None:  # asked for explicitly: the reason is the error
                raise
            bundle.notes.append(f"UCC skipped: {exc}")
        else:
            from .plots.ucc import plot_ucc

            bundle.ucc = res["summary"]
            bundle.notes.extend(res["notes"])
            title = f"{KIND_TITLES['ucc']}: {name}" if name else KIND_TITLES["ucc"]
            figs["ucc"] = plot_ucc([res["model"]], title=title)
    bundle.figures = {k: figs[k] for k in PLOT_KINDS if k in figs}
    return bundle


# --------------------------------------------------------------------------- output
def encode_figures(figures: Mapping[str, Any], fmt: str = "png", dpi: int = 150) -> dict[str, bytes]:
    """``{kind: bytes}`` of each figure (:func:`uqeval.plots.common.figure_to_bytes`); each
    figure is cleared once encoded, to free its memory."""
    from .plots.common import figure_to_bytes

    out: dict[str, bytes] = {}
    for kind, fig in figures.items():
        out[kind] = figure_to_bytes(fig, fmt, dpi)
        fig.clear()
    return out


def write_images(images: Mapping[str, bytes], directory: str | Path, fmt: str = "png") -> list[Path]:
    """Write ``<directory>/<kind>.<fmt>`` for every encoded image, each atomically; returns the paths.

    ``directory`` is created when its parent exists.
    """
    from .io.writers import atomic_write_bytes

    d = prepare_plot_dir(directory)
    paths = []
    for kind, data in images.items():
        path = d / f"{kind}.{fmt}"
        atomic_write_bytes(path, data)
        paths.append(path)
    return paths


def write_figures(figures: Mapping[str, Any], directory: str | Path, fmt: str = "png",
                  dpi: int = 150) -> list[Path]:
    """Encode every figure (:func:`encode_figures`), then write them (:func:`write_images`)."""
    return write_images(encode_figures(figures, fmt, dpi), directory, fmt)


def check_plot_dir(directory: str | Path) -> Path:
    """Fail early unless ``directory`` exists as a directory or can be created in an existing parent."""
    d = Path(directory)
    if d.exists():
        if not d.is_dir():
            raise InputError(f"--plot-dir {d}: exists and is not a directory; choose a directory")
        return d
    parent = d.parent if str(d.parent) else Path(".")
    if not parent.is_dir():
        raise InputError(f"--plot-dir {d}: parent directory '{parent}' does not exist; create it first")
    return d


def prepare_plot_dir(directory: str | Path) -> Path:
    """:func:`check_plot_dir`, then create the directory if needed."""
    d = check_plot_dir(directory)
    try:
        d.mkdir(exist_ok=True)
    except OSError as exc:
        raise InputError(f"--plot-dir {d}: cannot create the directory ({exc})") from None
    return d
