"""The comparison scores (lower is better) that models of different representations share: the catalogue's
per-row ``crps``, ``nll`` and ``brier``, and ``pinball``, ``interval`` and ``check`` on the level grids every
model can be scored at (:func:`common_grids`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ...config import Settings
from ...predictions import Prediction

if TYPE_CHECKING:
    pass

from .models import Model

#: Comparison scores, all lower-is-better: per-row scores that models of different
#: representations share (pinball, interval and check on a common level grid).
PER_ROW_SCORES: tuple[str, ...] = ("crps", "nll", "pinball", "interval", "check", "brier")


@dataclass(frozen=True)
class Grids:
    """Levels every model can be scored at (``None``: the metric is unavailable)."""

    quantile_levels: np.ndarray | None  # pinball
    central_levels: np.ndarray | None  # interval
    check_levels: np.ndarray  # toolbox check score, linspace(0.01, 0.99, resolution)
    toolbox_quantiles: bool  # quantile_levels is the toolbox grid (closed forms apply)
    toolbox_central: bool
    notes: tuple[str, ...] = ()


def _common(
    models: Sequence[Model], keys: Callable[[Prediction], set[str] | None], score: str
) -> tuple[np.ndarray | None, list[str]]:
    finite = [(m, keys(m.prediction)) for m in models if keys(m.prediction) != set()]
    sets = [(m, s) for m, s in finite if s is not None]
    if not finite:
        return None, []
    if not sets:
        return np.empty(0), []  # any level: the caller uses the toolbox grid
    common = set.intersection(*(s for _, s in sets))
    if not common:
        listed = "; ".join(f"{m.name}: {', '.join(sorted(s, key=float))}" for m, s in sets)
        return None, [f"{score}: the models share no level ({listed}); {score} is not compared"]
    notes = []
    if any(len(s) > len(common) for _, s in sets):
        notes.append(f"{score} uses the levels all models share: {', '.join(sorted(common, key=float))}")
    return np.array(sorted(float(k) for k in common)), notes


def common_grids(models: Sequence[Model], resolution: int = 99) -> Grids:
    r"""Quantile levels (``pinball``) and central levels (``interval``) shared by all models.

    Gaussian and sample models can be scored at any level; quantile models at their
    levels; interval models at the bounds :math:`(1 \mp p)/2` of their levels ``p``. The
    grid is the intersection over the models that have fixed levels, or, if none has,
    the Uncertainty Toolbox grid ``linspace(0.01, 0.99, resolution)`` (quantile levels for
    pinball, central levels for interval), which makes ``pinball`` the toolbox check
    score and ``interval`` the toolbox interval score.
    """
    from ...metrics.scoring import toolbox_levels

    toolbox = toolbox_levels(resolution)
    q, notes_q = _common(models, lambda p: p.quantile_keys(), "pinball")
    c, notes_c = _common(models, lambda p: p.central_keys(), "interval")
    tq = q is not None and q.size == 0
    tc = c is not None and c.size == 0
    return Grids(
        quantile_levels=toolbox if tq else q,
        central_levels=toolbox if tc else c,
        check_levels=toolbox,
        toolbox_quantiles=tq,
        toolbox_central=tc,
        notes=tuple(notes_q + notes_c),
    )


# --------------------------------------------------------------------------- per-row scores


def _catalogue_score(pred: Prediction, path: str, settings: Settings) -> np.ndarray | None:
    from ...catalogue import METRICS, rows

    stat = rows(METRICS[path], pred, settings)
    return None if stat is None else stat.score


def comparison_score(pred: Prediction, name: str, grids: Grids, settings: Settings) -> np.ndarray | None:
    """Per-row comparison score ``name`` of ``pred`` (an (N,) array, lower is better), or None.

    ``crps`` and ``nll`` are the catalogue's per-row scores (``scoring_rule.*``, for
    classifiers ``accuracy.nll``); a point forecast's CRPS is that of a point mass, its
    absolute error (``accuracy.mae``). ``brier`` is ``accuracy.brier``. ``pinball``,
    ``interval`` and ``check`` are the pinball loss and interval score averaged over the
    common level grids, from the quantiles and intervals the prediction gives
    (:meth:`~uqeval.predictions.Prediction.quantiles_at`); a Gaussian on the toolbox grid
    uses the catalogue's closed forms.
    """
    from ...metrics import scoring

    if name == "crps":
        out = _catalogue_score(pred, "scoring_rule.crps", settings)
        return (
            out
            if out is not None or pred.kind != "point"
            else _catalogue_score(pred, "accuracy.mae", settings)
        )
    if name == "nll":
        out = _catalogue_score(pred, "scoring_rule.nll", settings)
        return out if out is not None else _catalogue_score(pred, "accuracy.nll", settings)
    if name == "brier":
        return _catalogue_score(pred, "accuracy.brier", settings)
    if name in ("pinball", "check"):
        levels = grids.check_levels if name == "check" else grids.quantile_levels
        if (
            levels is None
            or pred.quantile_keys() == set()
            or (name == "check" and pred.quantile_keys() is not None)
        ):
            return None
        if name == "check" or grids.toolbox_quantiles:
            closed = _catalogue_score(
                pred, "scoring_rule.check", replace(settings, resolution=int(levels.size))
            )
            if closed is not None:
                return closed
        return scoring.pinball_loss(pred.require_targets(), pred.quantiles_at(levels), levels).mean(axis=1)
    if name == "interval":
        levels = grids.central_levels
        if levels is None or pred.central_keys() == set():
            return None
        if grids.toolbox_central and pred.kind == "gaussian":
            return _catalogue_score(
                pred, "scoring_rule.interval", replace(settings, resolution=int(levels.size))
            )
        lo, hi = pred.intervals_at(levels)
        return scoring.interval_score(pred.require_targets(), lo, hi, levels).mean(axis=1)
    raise KeyError(name)


def per_row_scores(
    pred: Prediction, grids: Grids, which: Iterable[str] = PER_ROW_SCORES, settings: Settings | None = None
) -> dict[str, np.ndarray]:
    """The comparison scores in ``which`` that ``pred`` has (see :func:`comparison_score`)."""
    pred.require_targets()
    settings = settings or Settings()
    out = {}
    for name in which:
        score = comparison_score(pred, name, grids, settings)
        if score is not None:
            out[name] = score
    return out
