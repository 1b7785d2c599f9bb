r"""Skill scores against a reference forecast, and the scores of the climatological reference.

A skill score compares the mean score :math:`\bar S` of a forecast with the mean score
:math:`\bar S_{\mathrm{ref}}` of a reference forecast on the same outcomes (Murphy 1973;
Gneiting & Raftery 2007, sec. 2.3; Wilks, *Statistical Methods in the Atmospheric Sciences*, 4th ed., sec. 9.1.4):

.. math:: \mathrm{SS} = 1 - \bar S / \bar S_{\mathrm{ref}}

1 is a perfect forecast, 0 no better than the reference, negative worse (higher is better, for
negatively oriented scores S that are never negative: CRPS, Brier, pinball, WIS, MSE).

The ratio only ranks forecasts when :math:`\bar S_{\mathrm{ref}} > 0`. A score that can be 0 or
negative (the log score of a density: :math:`-\log f(y)` is negative wherever f(y) > 1) flips its
sign: -0.880 against a reference's -0.565 is the better forecast, yet 1 - (-0.880)/(-0.565) = -0.56.
For those the skill is the mean score difference instead (:func:`skill_difference`),
:math:`\bar S_{\mathrm{ref}} - \bar S`: for the log score the information gain in nats per row
(Good 1952; Gneiting & Raftery 2007, sec. 2.3). Both are higher-is-better and 0 when the forecast
ties the reference; a lower mean score never gives a lower skill.

The climatological reference is the empirical distribution of the training targets
:math:`z_1 \le \dots \le z_M`, the same for every row; its CRPS comes from the sorted
targets' cumulative sums (:func:`crps_empirical`), O((N + M) log M) time and O(N + M) memory.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import as_float_array, check_finite


def skill_score(score: np.ndarray, reference: np.ndarray) -> float:
    r"""``1 - mean(score) / mean(reference)`` of per-row scores of a forecast and its reference.

    Rows to leave out (e.g. the first row of a persistence reference) can be given as 0 in
    both arrays: the ratio of means equals the ratio of sums, so they drop out.
    NaN when the reference's mean score is 0 (a perfect reference leaves no room for skill).

    Examples
    --------
    >>> skill_score(np.array([1.0, 1.0]), np.array([2.0, 2.0]))
    0.5
    """
    s = as_float_array(score, "score")
    r = as_float_array(reference, "reference score")
    if s.shape != r.shape:
        raise InputError(f"the forecast has {s.size} per-row scores but the reference {r.size}")
    total = float(r.sum())
    return float(1.0 - s.sum() / total) if total != 0 else float("nan")


def skill_difference(score: np.ndarray, reference: np.ndarray, n_rows: int | None = None) -> float:
    r"""``mean(reference) - mean(score)``: the skill of a score that can be <= 0 (the log score).

    .. math:: \Delta = \bar S_{\mathrm{ref}} - \bar S

    For the log score (negative log-likelihood) the mean information gain in nats over the reference.
    Rows left out are given as 0 in both arrays, with ``n_rows`` the number of rows kept (default:
    every row).

    Examples
    --------
    >>> skill_difference(np.array([-1.0, -0.5]), np.array([-0.5, -0.5]))  # better: positive
    0.25
    """
    s = as_float_array(score, "score")
    r = as_float_array(reference, "reference score")
    if s.shape != r.shape:
        raise InputError(f"the forecast has {s.size} per-row scores but the reference {r.size}")
    n = s.size if n_rows is None else int(n_rows)
    return float((r.sum() - s.sum()) / n) if n > 0 else float("nan")


def difference_from_sums(sums: np.ndarray, total: np.ndarray | None = None) -> np.ndarray:
    """``(B, 3)`` weighted sums of the forecast's and the reference's per-row scores and of the kept-row
    indicator -> ``(B,)`` mean score differences ``(S_ref - S) / kept`` (NaN where no row is kept)."""
    num = sums[:, 1] - sums[:, 0]
    den = sums[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def skill_from_sums(sums: np.ndarray, total: np.ndarray | None = None) -> np.ndarray:
    """``(B, 2)`` weighted sums of the forecast's and the reference's per-row scores -> ``(B,)`` skill
    scores ``1 - S/S_ref`` (NaN where the reference's sum is 0). The bootstrap resamples both with the
    same row weights (a ratio of resampled means); ``total`` is not needed (it cancels)."""
    num, den = sums[:, 0], sums[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, 1.0 - num / np.where(den != 0, den, 1.0), np.nan)


def crps_empirical(y_true: np.ndarray, values: np.ndarray) -> np.ndarray:
    r"""CRPS of the empirical distribution of ``values`` (the same for every row) at each outcome.

    .. math::
        \mathrm{CRPS}(\hat F_M, y) = \frac1M \sum_{j=1}^M |z_j - y| - \frac{1}{2M^2}\sum_{j,k} |z_j - z_k|

    With the :math:`z` sorted, :math:`k(y) = \#\{z_j \le y\}` and cumulative sums :math:`C_k`,
    the first term is :math:`(y k - C_k + C_M - C_k - y (M - k)) / M` and the second
    :math:`\frac{1}{M^2}\sum_j (2j - M - 1) z_{(j)}`: one sort and a binary search per row,
    O((N + M) log M), never an (N, M) array. Equals the ensemble CRPS
    (:func:`uqeval.metrics.samples.crps_ensemble`) of ``values`` given as every row's members.

    Examples
    --------
    >>> crps_empirical(np.array([0.0]), np.array([-1.0, 1.0]))
    array([0.5])
    """
    y = as_float_array(y_true, "y_true")
    z = np.sort(as_float_array(values, "values"))
    check_finite(y, "y_true")
    check_finite(z, "values")
    m = z.size
    if m < 1:
        raise InputError("the empirical distribution needs at least 1 value")
    csum = np.concatenate([[0.0], np.cumsum(z)])
    k = np.searchsorted(z, y, side="right")
    below = y * k - csum[k]
    above = (csum[m] - csum[k]) - y * (m - k)
    pair = float(((2.0 * np.arange(1, m + 1) - m - 1) * z).sum())
    return (below + above) / m - pair / (m * m)
