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

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from .config import Settings
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

    @property
    def representations(self) -> tuple[str, ...]:
        return tuple(self.compute)

    def orientation(self) -> dict[str, str]:
        return {f"{self.name}.{m.name}": m.orientation for m in self.metrics}


def _m(*specs: tuple[str, str, str]) -> tuple[MetricSpec, ...]:
    return tuple(MetricSpec(*s) for s in specs)


# --------------------------------------------------------------------------- regression: Gaussian
def _accuracy(p, s: Settings) -> dict:
    from .metrics.accuracy import regression_accuracy

    return regression_accuracy(p.y_true, _point(p))


def _point(p) -> np.ndarray:
    """The point prediction of any regression representation."""
    from .metrics.samples import ensemble_mean_std

    kind = p.kind
    if kind in ("gaussian", "point"):
        return p.mean
    if kind == "intervals":
        return p.mean if p.mean is not None else 0.5 * (p.lower[:, 0] + p.upper[:, 0])
    if kind == "quantiles":
        i = np.flatnonzero(np.isclose(p.levels, 0.5))
        if i.size:
            return p.quantiles[:, i[0]]
        from .metrics.quantiles import interpolate_median

        return interpolate_median(p.quantiles, p.levels)
    if kind == "samples":
        return ensemble_mean_std(p.samples)[0]
    raise AssertionError(kind)


def _avg_cal_gaussian(p, s: Settings) -> dict:
    from .metrics.calibration import avg_calibration_gaussian

    return avg_calibration_gaussian(p.y_true, p.mean, p.std, num_bins=s.num_bins)


def _adv_gaussian(p, s: Settings) -> dict:
    from .metrics.calibration import adversarial_group_calibration_gaussian

    return adversarial_group_calibration_gaussian(
        p.y_true, p.mean, p.std, num_bins=s.num_bins,
        group_fractions=np.linspace(0.01, 1.0, s.adv_num_group_sizes),
        num_trials=s.adv_num_trials, num_group_draws=s.adv_num_group_draws, seed=s.seed,
    )


def _sharpness_gaussian(p, s: Settings) -> dict:
    from .metrics.sharpness import sharpness

    return sharpness(p.std)


def _scoring_gaussian(p, s: Settings) -> dict:
    from .metrics.scoring import scoring_rules_gaussian

    return scoring_rules_gaussian(p.y_true, p.mean, p.std, resolution=s.resolution)


def _reliability_gaussian(p, s: Settings) -> dict:
    from .metrics.reliability import reliability_gaussian

    return reliability_gaussian(p.y_true, p.mean, p.std)


GROUPS: list[MetricGroup] = [
    MetricGroup(
        "accuracy",
        _m(("mae", "lower", "mean absolute error"),
           ("rmse", "lower", "root mean squared error"),
           ("mdae", "lower", "median absolute error"),
           ("marpd", "lower", "mean absolute relative percent difference"),
           ("r2", "higher", "coefficient of determination"),
           ("corr", "higher", "Pearson correlation of prediction and target")),
        {"gaussian": _accuracy, "point": _accuracy},
    ),
    MetricGroup(
        "avg_calibration",
        _m(("rms_cal", "lower", "root mean squared calibration error"),
           ("ma_cal", "lower", "mean absolute calibration error"),
           ("miscal_area", "lower", "miscalibration area")),
        {"gaussian": _avg_cal_gaussian},
    ),
    MetricGroup(
        "adv_group_calibration",
        _m(("ma_mean", "lower", "mean worst-group MA calibration error per group size"),
           ("ma_stderr", "lower", "standard error of ma_mean"),
           ("rms_mean", "lower", "mean worst-group RMS calibration error per group size"),
           ("rms_stderr", "lower", "standard error of rms_mean")),
        {"gaussian": _adv_gaussian},
    ),
    MetricGroup(
        "sharpness",
        _m(("sharp", "lower", "root mean predicted variance"),
           ("mean_std", "lower", "mean predicted standard deviation")),
        {"gaussian": _sharpness_gaussian},
    ),
    MetricGroup(
        "scoring_rule",
        _m(("nll", "lower", "Gaussian negative log-likelihood"),
           ("crps", "lower", "continuous ranked probability score"),
           ("check", "lower", "check (pinball) score averaged over levels"),
           ("interval", "lower", "interval score averaged over central levels")),
        {"gaussian": _scoring_gaussian},
    ),
    MetricGroup(
        "reliability",
        _m(("rs", "lower", "ACCRUE reliability score"),
           ("max_cal_err", "lower", "bin-free maximum calibration error of the PIT"),
           ("accrue", "lower", "ACCRUE cost")),
        {"gaussian": _reliability_gaussian},
    ),
]


def groups_for(kind: str) -> list[MetricGroup]:
    return [g for g in GROUPS if kind in g.compute]


def get_group(name: str) -> MetricGroup:
    for g in GROUPS:
        if g.name == name:
            return g
    raise KeyError(name)


def compute_metrics(pred: Prediction, settings: Settings) -> tuple[dict[str, Any], dict[str, str]]:
    """Every applicable group for ``pred``: ``(metrics, orientation)``."""
    metrics: dict[str, Any] = {}
    orientation: dict[str, str] = {}
    for g in groups_for(pred.kind):
        result = g.compute[pred.kind](pred, settings)
        if result is None:
            continue
        metrics[g.name] = result
        orientation.update(g.orientation())
    return metrics, orientation
