"""Forecast verification (issue 16; opt-in): threshold- and outcome-weighted CRPS, threshold exceedance,
Murphy curves and multivariate ensembles (energy and variogram scores)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from ..config import Settings
from ..predictions import Prediction

if TYPE_CHECKING:
    from ..predictions import Gaussian, Quantiles, Samples, _Classifier
from ..metrics.intervals import bound_levels, level_key
from .core import CLASSIFICATION, REGRESSION, Family, RowStat, _family, _m, _memo

# --------------------------------------------------------------------------- forecast verification (issue 16 A)
# Opt-in groups: weighted_scoring (--tw-threshold), exceedance (--threshold), murphy (--murphy).
# Kernels: metrics/weighted.py, metrics/exceedance.py, metrics/murphy.py.


def _rows_weighted(p, s, level) -> dict[str, RowStat] | None:
    from ..metrics import weighted

    if s.tw_threshold is None:  # the group is off (reached through compare's catalogue lookups)
        return None
    region = weighted.check_region(s.tw_threshold)  # (None ends: -inf / inf)
    if p.kind == "gaussian":
        return {
            "twcrps": RowStat(score=weighted.twcrps_gaussian(p.y_true, p.mean, p.std, region)),
            "owcrps": RowStat(score=weighted.owcrps_gaussian(p.y_true, p.mean, p.std, region)),
        }
    if p.kind == "samples":
        tw, ow = p.map_rows(
            lambda m, y: (weighted.twcrps_samples(y, m, region), weighted.owcrps_samples(y, m, region)),
            p.y_true,
        )
        return {"twcrps": RowStat(score=tw), "owcrps": RowStat(score=ow)}
    if p.kind in ("quantiles", "intervals"):  # the quantile CRPS of the chained quantiles (no owCRPS: README)
        return {"twcrps": RowStat(score=weighted.twcrps_quantiles(p.y_true, *_quantile_table(p), region))}
    return None


def _weighted(p, s: Settings) -> dict | None:
    rows_ = _rows_weighted(p, s, None)
    # every RowStat of _rows_weighted has a score
    return None if rows_ is None else {k: float(v.score.mean()) for k, v in rows_.items()}  # type: ignore[union-attr]


def _quantile_table(p) -> tuple[np.ndarray, np.ndarray]:
    """``(quantiles, levels)`` of a quantile or interval forecast (interval ends as quantiles, rows sorted)."""
    if p.kind == "quantiles":
        return p.quantiles, p.levels
    levels = bound_levels(p.levels)
    order = np.argsort(levels, kind="stable")
    return np.sort(np.column_stack([p.lower, p.upper])[:, order], axis=1), levels[order]


def exceedance_probability(p: Prediction, t: float) -> np.ndarray:
    """P(Y > t) per row from any regression representation (:mod:`uqeval.metrics.exceedance`)."""
    from ..metrics import exceedance as ex

    if p.kind == "gaussian":
        g = cast("Gaussian", p)
        return ex.exceedance_gaussian(g.mean, g.std, t)
    if p.kind == "samples":
        return ex.exceedance_samples(cast("Samples", p).samples, t)
    if p.kind == "point":
        return ex.exceedance_point(p.point(), t)
    return ex.exceedance_quantiles(*_quantile_table(p), t)


def _rows_exceedance(p, s, level) -> dict[str, RowStat] | None:
    from ..metrics.exceedance import exceedance_scores

    try:
        t = float(level)
    except (TypeError, ValueError):
        return None
    return {
        k: RowStat(score=v) for k, v in exceedance_scores(p.y_true, exceedance_probability(p, t), t).items()
    }


def _exceedance(p, s: Settings) -> dict | None:
    if not s.thresholds:
        return None
    out = {}
    for t in s.thresholds:
        key = level_key(t)
        # key is a number, so _rows_exceedance is not None; its RowStats all have a score
        out[key] = {k: float(v.score.mean()) for k, v in _rows_exceedance(p, s, key).items()}  # type: ignore[union-attr]
    return out


def murphy_forecasts(p: Prediction) -> dict[str, tuple[np.ndarray, np.ndarray, str, float]]:
    """``{label: (forecast, target, functional, alpha)}`` of the Murphy curves of one prediction.

    Labels: ``mean`` (the point forecast as a mean, expectile 1/2: Gaussians, points, samples, intervals
    with a mean), ``quantile <level>`` (quantiles), ``probability <class>`` (classifiers: each class's
    probability against its indicator, the event's mean; binary: class 1 only).
    """
    if p.kind in CLASSIFICATION:
        c = cast("_Classifier", p)
        proba = c.proba
        classes = [1] if proba.shape[1] == 2 else list(range(proba.shape[1]))
        return {
            f"probability {k}": (proba[:, k], (c.labels == k).astype(np.float64), "expectile", 0.5)
            for k in classes
        }
    y_true = cast("np.ndarray", p.y_true)  # Murphy curves are drawn for predictions with targets only
    if p.kind == "quantiles":
        q = cast("Quantiles", p)
        return {
            f"quantile {level_key(a)}": (q.quantiles[:, j], y_true, "quantile", float(a))
            for j, a in enumerate(q.levels)
        }
    x = p.point()
    return {} if x is None else {"mean": (x, y_true, "expectile", 0.5)}


def murphy_curves(p: Prediction, thetas: np.ndarray | None = None, weights: np.ndarray | None = None) -> dict:
    """``{"thetas": grid, "mean" | "quantile" | "probability": curves}`` of one prediction
    (:func:`murphy_forecasts`; quantile and probability curves keyed by level / class). ``thetas``: a given
    grid (compare uses one grid for every model), else :func:`uqeval.metrics.murphy.theta_grid` over the
    forecasts and targets ([0, 1] for probabilities). ``weights`` (N,): the weighted curves."""
    from ..metrics.murphy import murphy_curve, theta_grid

    fc = murphy_forecasts(p)
    if not fc:
        return {}
    if thetas is None:
        probability = p.kind in CLASSIFICATION
        thetas = (
            theta_grid(bounds=(0.0, 1.0))
            if probability
            else theta_grid(cast("np.ndarray", p.y_true), *(v[0] for v in fc.values()))  # as murphy_forecasts
        )
    out: dict = {"thetas": np.asarray(thetas, dtype=np.float64).tolist()}
    for label, (x, y, functional, alpha) in fc.items():
        curve = murphy_curve(x, y, thetas, functional, alpha, weights=weights).tolist()
        if label == "mean":
            out["mean"] = curve
        else:
            head, key = label.split(" ", 1)
            out.setdefault(head, {})[key] = curve
    return out


def _murphy(p, s: Settings, w: np.ndarray | None = None) -> dict | None:
    return murphy_curves(p, weights=w) or None


VERIFICATION_FAMILIES: tuple[Family, ...] = (
    _family(
        "weighted_scoring",
        [
            _m("twcrps", "lower", "threshold-weighted CRPS on the --tw-threshold region", "mean"),
            _m(
                "owcrps",
                "lower",
                "outcome-weighted CRPS on the --tw-threshold region",
                "mean",
                representations=("gaussian", "samples"),
            ),
        ],
        {k: _weighted for k in ("gaussian", "samples", "quantiles", "intervals")},
        rows=_rows_weighted,
        option="tw_threshold",
    ),
    _family(
        "exceedance",
        [
            _m("brier", "lower", "Brier score of P(Y > t) for the event Y > t (per --threshold t)", "mean"),
            _m("crps", "lower", "CRPS of the binary event forecast (equals its Brier score)", "mean"),
        ],
        {k: _exceedance for k in REGRESSION},
        rows=_rows_exceedance,
        by_level=True,
        option="thresholds",
    ),
    _family(
        "murphy",
        [
            _m("thetas", None, "threshold grid θ of the Murphy curves", "curve"),
            _m(
                "mean",
                None,
                "mean elementary (expectile 1/2) score of the mean forecast at each θ",
                "curve",
                representations=("gaussian", "point", "samples", "intervals"),
            ),
            _m(
                "quantile",
                None,
                "mean elementary quantile score of each quantile level at each θ",
                "curve",
                representations=("quantiles",),
            ),
            _m(
                "probability",
                None,
                "mean elementary score of each class probability at each θ in [0, 1]",
                "curve",
                representations=CLASSIFICATION,
            ),
        ],
        {
            **{k: _murphy for k in ("gaussian", "point", "samples", "intervals", "quantiles")},
            **{k: _murphy for k in CLASSIFICATION},
        },
        imports=("uqeval.metrics.murphy",),
        option="murphy",
        weighted=(*REGRESSION, *CLASSIFICATION),
    ),
)
# --------------------------------------------------------------------------- forecast verification (issue 16, part B)
# Multivariate ensembles (y_1..y_d, m<j>_<k>): the energy score and the variogram score of order 1/2, both
# means of per-row scores. Skill scores need a second prediction (the reference) and are computed by the
# task layer (uqeval.commands.compare.skill), which declares their orientation in the summary.
VARIOGRAM_ORDER = 0.5


def _rows_multivariate(p, s, level) -> dict[str, RowStat]:
    from ..metrics.multivariate import energy_score, variogram_score

    return {
        "energy": RowStat(score=energy_score(p.y_true, p.samples)),
        "variogram": RowStat(score=variogram_score(p.y_true, p.samples, VARIOGRAM_ORDER)),
    }


def _multivariate(p, s: Settings) -> dict:
    rows_ = _memo(
        p,
        ("rows", "multivariate", None, s.resolution, s.num_bins, s.y_std, None),  # as family_rows
        lambda: _rows_multivariate(p, s, None),
    )
    return {k: float(v.score.mean()) for k, v in rows_.items()}


MULTIVARIATE_FAMILIES: tuple[Family, ...] = (
    _family(
        "multivariate",
        [
            _m("energy", "lower", "energy score (beta = 1) of the multivariate ensemble", "mean"),
            _m("variogram", "lower", "variogram score of order 0.5 (unit weights)", "mean"),
        ],
        {"multivariate": _multivariate},
        rows=_rows_multivariate,
    ),
)
