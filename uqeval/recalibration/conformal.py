r"""Split-conformal prediction intervals (Vovk et al. 2005; Lei et al. 2018).

Scores on a calibration split: normalised residuals :math:`s_i = |y_i - \mu_i|/\sigma_i`
when a std is given, raw residuals :math:`s_i = |y_i - \mu_i|` for point predictions.
For a level :math:`c` the score quantile is the order statistic

.. math:: \hat q_c = s_{(k)}, \qquad k = \lceil (n + 1)\,c \rceil,

and the interval of a new row is :math:`\mu \pm \hat q_c\,\sigma` (or :math:`\mu \pm \hat q_c`).
If the calibration and new rows are exchangeable,
:math:`P(y \in \text{interval}) \ge k/(n+1) \ge c` (marginally, over both), and
:math:`< (k+1)/(n+1)` when the scores have no ties.

When :math:`k > n` the interval would be infinite: this is refused with an
:class:`~uqeval.errors.InputError` that says how many calibration rows the level needs
(:math:`n \ge c/(1-c)`, e.g. 19 rows for 95 %), rather than producing infinite bounds.
:math:`\lceil (n+1)c\rceil` is evaluated exactly on the decimal form of :math:`c`
(``repr``), so that e.g. :math:`(n + 1) = 10, c = 0.7` gives 7, not 8.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ..errors import InputError
from ..validation import (
    as_float_array,
    check_finite,
    check_level,
    check_nonempty,
    check_positive,
    check_same_length,
)


def _rank(n: int, level: float) -> int:
    """``ceil((n + 1) * level)`` in exact rational arithmetic on the decimal level."""
    return math.ceil(Fraction(repr(float(level))) * (n + 1))


def min_rows(level: float) -> int:
    """Smallest calibration size n with ``ceil((n + 1) * level) <= n`` (finite intervals)."""
    level = check_level(level)
    n = max(1, math.floor(level / (1.0 - level)) - 1)
    while _rank(n, level) > n:
        n += 1
    return n


def _scores(y_true, mean, std) -> tuple[np.ndarray, bool]:
    y = as_float_array(y_true, "y_true")
    mu = as_float_array(mean, "mean")
    arrays, names = [y, mu], ["y_true", "mean"]
    if std is not None:
        sd = as_float_array(std, "std")
        arrays.append(sd)
        names.append("std")
    n = check_same_length(arrays, names)
    check_nonempty(n, "the calibration data")
    check_finite(y, "y_true")
    check_finite(mu, "mean")
    if std is None:
        return np.abs(y - mu), False
    check_finite(sd, "std")
    check_positive(sd, "std")
    return np.abs(y - mu) / sd, True


def _levels(levels) -> list[float]:
    arr = np.atleast_1d(as_float_array(levels, "levels", ndim=(0, 1)))
    if arr.size == 0:
        raise InputError("levels is empty; pass at least one coverage level, e.g. 0.9")
    out = [check_level(v, "levels") for v in arr]
    if len(set(out)) != len(out):
        raise InputError(f"levels must be distinct, got {out}")
    return out


def fit_conformal(
    y_true: np.ndarray,
    mean: np.ndarray,
    std: np.ndarray | None = None,
    levels: Sequence[float] | float = (0.5, 0.9, 0.95),
) -> dict[str, Any]:
    r"""Split-conformal score quantiles at each level.

    Parameters
    ----------
    y_true, mean : (N,) arrays of the calibration split
    std : (N,) array or None; None uses raw residuals (point predictions)
    levels : coverage level(s) in (0, 1)

    Returns
    -------
    dict, JSON-serialisable: ``method`` (``"conformal"``), ``normalized`` (True if
    scores were divided by std), ``n_rows``, and per level (lists in the order of
    ``levels``): ``levels``, ``rank`` (:math:`k`), ``score_quantile``
    (:math:`\hat q`), ``coverage_guaranteed`` (:math:`k/(n+1)`, a lower bound on the
    marginal coverage) and ``coverage_upper`` (:math:`\min(1, (k+1)/(n+1))`, an upper
    bound when scores have no ties).

    Raises
    ------
    InputError
        invalid arrays or levels, or too few rows for the highest level (the message
        gives the number needed).
    """
    scores, normalized = _scores(y_true, mean, std)
    lv = _levels(levels)
    n = scores.size
    need = max(min_rows(c) for c in lv)
    if n < need:
        worst = max(lv)
        raise InputError(
            f"too few calibration rows for split-conformal level {worst:g}: got {n}, need at least {need} "
            f"(the rank ceil((n+1)*level) must not exceed n, otherwise the interval is infinite); "
            "add calibration rows or lower the level"
        )
    ordered = np.sort(scores)
    ranks = [_rank(n, c) for c in lv]
    return {
        "method": "conformal",
        "normalized": normalized,
        "n_rows": int(n),
        "levels": lv,
        "rank": ranks,
        "score_quantile": [float(ordered[k - 1]) for k in ranks],
        "coverage_guaranteed": [k / (n + 1) for k in ranks],
        "coverage_upper": [min(1.0, (k + 1) / (n + 1)) for k in ranks],
        "score_sample": _score_sample(ordered),
    }


SCORE_SAMPLE_SIZE = 2001


def _score_sample(ordered: np.ndarray) -> list[float]:
    """The calibration scores (sorted), or their quantiles at SCORE_SAMPLE_SIZE evenly spaced
    probabilities when there are more, so that a saved state stays small."""
    if ordered.size > SCORE_SAMPLE_SIZE:
        ordered = np.quantile(ordered, (np.arange(SCORE_SAMPLE_SIZE) + 0.5) / SCORE_SAMPLE_SIZE)
    return [float(v) for v in ordered]


def conformal_central_pit(
    state: dict[str, Any], y_true: np.ndarray, mean: np.ndarray, std: np.ndarray | None = None
) -> np.ndarray | None:
    r"""Central PIT of each row under the conformal forecast: the share of calibration scores
    :math:`\le` the row's score :math:`|y - \mu|/\sigma` (or :math:`|y - \mu|`).

    y lies inside the conformal central interval of level :math:`p` (built from the
    empirical score distribution) iff this value is :math:`\le p`, so it plays the role of
    :math:`|2u - 1|` for a full predictive distribution: its ECDF against the diagonal is the
    interval-mode calibration curve. None for states saved without ``score_sample``.
    """
    sample = state.get("score_sample")
    if not sample:
        return None
    scores, _ = _scores(y_true, mean, std if state.get("normalized") else None)
    ref = np.asarray(sample, dtype=np.float64)
    return np.searchsorted(ref, scores, side="right") / ref.size


def apply_conformal(
    state: dict[str, Any], mean: np.ndarray, std: np.ndarray | None = None
) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    r"""Conformal intervals :math:`\mu \pm \hat q\,\sigma` (normalised) or :math:`\mu \pm \hat q` (raw).

    Parameters
    ----------
    state : output of :func:`fit_conformal`
    mean : (N,) array
    std : (N,) array, required if and only if the state is normalised

    Returns
    -------
    ``{level: (lower, upper)}`` with (N,) arrays.
    """
    try:
        normalized = bool(state["normalized"])
        lv = [float(v) for v in state["levels"]]
        qs = [float(v) for v in state["score_quantile"]]
    except (KeyError, TypeError, ValueError):
        raise InputError(
            "the conformal state needs 'normalized', 'levels' and 'score_quantile'; refit it or pass an unmodified saved file"
        ) from None
    if len(lv) != len(qs) or not all(math.isfinite(q) and q >= 0 for q in qs):
        raise InputError(
            "the conformal state's 'levels' and 'score_quantile' must be equal-length lists of finite values >= 0"
        )
    mu = as_float_array(mean, "mean")
    check_finite(mu, "mean")
    if normalized:
        if std is None:
            raise InputError(
                "this conformal recalibrator was fitted on normalised residuals |y - mean|/std: pass std"
            )
        sd = as_float_array(std, "std")
        check_same_length([mu, sd], ["mean", "std"])
        check_finite(sd, "std")
        check_positive(sd, "std")
        half = [q * sd for q in qs]
    else:
        if std is not None:
            raise InputError(
                "this conformal recalibrator was fitted on raw residuals |y - mean| (no std): do not pass std, "
                "or refit it with std"
            )
        half = [np.full(mu.shape, q) for q in qs]
    return {c: (mu - h, mu + h) for c, h in zip(lv, half)}
