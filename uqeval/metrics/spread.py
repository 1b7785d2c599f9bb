"""Calibration of the predicted spread of regression forecasts: ENCE, C_v (Levi et al. 2022), UCE (Laves et al. 2020).

Each row has a point prediction ``mean``, a predicted standard deviation ``std`` and a target ``y``;
``err = (y − mean)²``. A forecast whose σ is calibrated has E[err | σ] = σ².

Ensembles: the catalogue passes the *finite-ensemble* spread ``s · √((M + 1)/M)`` (s the members'
standard deviation with ddof 1, :func:`ensemble_std`), because for y and M members drawn from one
distribution of variance σ², E[(y − x̄)²] = (M + 1)/M · σ² and E[s²] = σ² (Fortin et al. 2014).
The bins are still formed on that *sample* spread, which is itself noisy for small M: rows land in the
lowest bins partly because their members happen to agree, so a calibrated small ensemble shows RMSE > RMV
in the low bins and RMSE < RMV in the high ones, and its ENCE stays above that of the same rows with
the true σ even for large N (regression to the mean; the gap shrinks as M grows). ``spread_skill.ratio``,
which does not bin, has no such bias.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .rowweights import repeated_prefix_sums, row_units, split_bounds


def _sorted_rows(std: np.ndarray, err: np.ndarray) -> np.ndarray:
    """Rows by increasing σ; ties broken by the squared error, so equal-count bins do not depend on row order."""
    return np.lexsort((err, std))


def _count_bins(n: int, num_bins: int) -> np.ndarray:
    """Bin of each sorted row: ``num_bins`` (at most n) bins of equal count; the first ``n % num_bins`` bins
    hold one row more (``numpy.array_split``)."""
    b = min(num_bins, n)
    return np.repeat(np.arange(b), np.diff(split_bounds(n, b)).astype(np.intp))


def _equal_count_sums(n: float, num_bins: int, units: np.ndarray, *values: np.ndarray) -> list[np.ndarray]:
    """Counts and sums of ``values`` (sorted rows) over ``min(num_bins, n)`` bins of equal count of the repeated
    rows, row ``i`` standing for ``units[i]`` rows (:func:`~uqeval.metrics.rowweights.row_units`); the first
    ``n % B`` bins hold one row more, as :func:`_count_bins`. A row that straddles a bin boundary is split
    between the two bins, as its repeated copies would be."""
    bounds = split_bounds(n, min(num_bins, int(np.ceil(n))))
    return [np.diff(bounds)] + [np.diff(repeated_prefix_sums(units, x, bounds)) for x in values]


def spread_bins(y_true, mean, std, num_bins: int = 15, weights=None) -> dict[str, np.ndarray]:
    r"""Levi et al.'s reliability diagram data: RMV and RMSE per σ-sorted equal-count bin.

    .. math:: \mathrm{RMV}_b = \sqrt{\tfrac1{|B_b|}\sum_{i\in B_b}\sigma_i^2},\quad
              \mathrm{RMSE}_b = \sqrt{\tfrac1{|B_b|}\sum_{i\in B_b}(y_i-\mu_i)^2}

    ``weights`` (N,): bins of equal count of the repeated rows (a row of weight w counting
    w / min(weights) rows, :func:`~uqeval.metrics.rowweights.row_units`; a row straddling two bins is split
    between them), with weighted sums.

    Returns ``{"rmv", "rmse", "counts"}`` (one entry per bin, increasing σ).
    """
    y = np.asarray(y_true, dtype=np.float64)
    m = np.asarray(mean, dtype=np.float64)
    sd = np.asarray(std, dtype=np.float64)
    err = np.square(y - m)
    order = _sorted_rows(sd, err)
    if weights is not None:
        u = row_units(weights)[order]
        counts, s_var, s_err = _equal_count_sums(
            float(u.sum()), num_bins, u, np.square(sd[order]), err[order]
        )
        return {"rmv": np.sqrt(s_var / counts), "rmse": np.sqrt(s_err / counts), "counts": counts}
    b = _count_bins(y.size, num_bins)
    counts = np.bincount(b).astype(np.float64)
    rmv = np.sqrt(np.bincount(b, weights=np.square(sd[order])) / counts)
    rmse = np.sqrt(np.bincount(b, weights=err[order]) / counts)
    return {"rmv": rmv, "rmse": rmse, "counts": counts}


def ence(y_true, mean, std, num_bins: int = 15, weights=None) -> float:
    r"""Expected normalised calibration error (Levi et al. 2022, Eq. 6).

    .. math:: \mathrm{ENCE} = \frac1B\sum_{b=1}^B \frac{|\mathrm{RMV}_b - \mathrm{RMSE}_b|}{\mathrm{RMV}_b}

    over B = min(``num_bins``, N) bins of equal count of the rows sorted by σ (:func:`spread_bins`; with
    ``weights``, of the repeated rows).
    Bins with RMV = 0 (every σ 0, e.g. identical ensemble members) are left out of the mean, as netcal
    does; NaN when every bin has RMV = 0.
    """
    bins = spread_bins(y_true, mean, std, num_bins, weights)
    rmv, rmse = bins["rmv"], bins["rmse"]
    keep = rmv > 0
    if not keep.any():
        return float("nan")
    return float(np.mean(np.abs(rmv[keep] - rmse[keep]) / rmv[keep]))


def coefficient_of_variation(std, weights=None) -> float:
    r"""C_v of the predicted σ (Levi et al. 2022, Eq. 7), with the unbiased (N − 1) variance:

    .. math:: C_v = \frac{\sqrt{\frac1{N-1}\sum_i(\sigma_i-\bar\sigma)^2}}{\bar\sigma}

    0 for a single row. A low C_v means nearly constant σ: it then carries little information
    about which rows are hard. ``weights`` (N,): frequency weights in units of rows
    (:func:`~uqeval.metrics.rowweights.row_units`): N is their sum, the sums and the mean weighted.
    """
    sd = np.asarray(std, dtype=np.float64)
    if weights is None:
        if sd.size < 2:
            return 0.0
        return float(np.std(sd, ddof=1) / np.mean(sd))

    u = row_units(weights)
    n = float(u.sum())
    if n < 2:
        return 0.0
    centre = float(np.average(sd, weights=u))
    return float(np.sqrt(np.dot(u, np.square(sd - centre)) / (n - 1.0)) / centre)


def uce(y_true, mean, std, num_bins: int = 15, weights=None) -> float:
    r"""Uncertainty calibration error (Laves et al. 2020, Eq. 9), as netcal computes it.

    .. math:: \mathrm{UCE} = \sum_{b=1}^B \frac{n_b}{N}\,|\mathrm{MSE}_b - \mathrm{MV}_b|

    over B equal-width bins of the predicted variance σ² between its minimum and maximum (bins
    closed on the left, the last one on both sides, as ``numpy.histogram``); one bin when every
    σ is equal. ``weights`` (N,): weighted bin sums over the total weight (bins between the extremes of the
    rows of positive weight).
    """
    y = np.asarray(y_true, dtype=np.float64)
    m = np.asarray(mean, dtype=np.float64)
    var = np.square(np.asarray(std, dtype=np.float64))
    err = np.square(y - m)
    counted = var if weights is None else var[np.asarray(weights) > 0]
    lo, hi = float(counted.min()), float(counted.max())
    if hi > lo:
        edges = np.linspace(lo, hi, num_bins + 1)
        b = np.clip(np.searchsorted(edges, var, side="right") - 1, 0, num_bins - 1)
    else:
        b = np.zeros(var.size, dtype=np.int64)
    # sum over bins of |sum(err) - sum(var)| / N  ==  sum_b n_b/N |MSE_b - MV_b|
    if weights is None:
        return float(np.sum(np.abs(np.bincount(b, weights=err) - np.bincount(b, weights=var))) / y.size)
    w = np.asarray(weights, dtype=np.float64)
    gaps = np.abs(np.bincount(b, weights=w * err) - np.bincount(b, weights=w * var))
    return float(np.sum(gaps) / np.sum(w))


def spread_calibration(y_true, mean, std, num_bins: int = 15, weights=None) -> dict[str, float]:
    """``{"ence", "cv", "uce"}`` of a regression forecast with a predicted σ (see each function); ``weights``
    (N,): row weights (integer weights equal the repeated rows)."""
    return {
        "ence": ence(y_true, mean, std, num_bins, weights),
        "cv": coefficient_of_variation(std, weights),
        "uce": uce(y_true, mean, std, num_bins, weights),
    }


def ensemble_std(std, n_members) -> np.ndarray:
    r"""The spread of a finite ensemble on the scale of the error of its mean (Fortin et al. 2014, Eq. 9):

    .. math:: \tilde s = s\,\sqrt{\frac{M+1}{M}}

    ``std``: the members' standard deviation with ddof 1 (unbiased variance); ``n_members``: M, a scalar or
    one count per row. For y and M members drawn independently from one distribution,
    E[(y − x̄)²] = E[s̃²]: a calibrated ensemble has spread equal to the RMSE of its mean on average.
    """
    m = np.asarray(n_members, dtype=np.float64)
    return np.asarray(std, dtype=np.float64) * np.sqrt((m + 1.0) / m)


def spread_skill(y_true, mean, std) -> dict[str, float]:
    r"""Spread–skill ratio (Fortin et al. 2014): root mean predicted variance over the RMSE of the point forecast.

    .. math:: \mathrm{ratio} = \frac{\sqrt{\tfrac1N\sum_i \sigma_i^2}}{\sqrt{\tfrac1N\sum_i (y_i-\mu_i)^2}}

    Target 1: above 1 the forecast is over-dispersed, below 1 under-dispersed. For an ensemble pass
    :func:`ensemble_std` as ``std`` (the members' ddof-1 standard deviation times √((M + 1)/M)) and the
    ensemble mean as ``mean``: without the factor a calibrated M-member ensemble scores √(M/(M + 1))
    (0.913 for M = 5). ``inf`` when the errors are all 0 but not the spread, NaN when both are.

    Returns ``{"ratio", "spread", "rmse"}`` (spread: the numerator).

    References
    ----------
    Fortin, V., Abaza, M., Anctil, F. & Turcotte, R. (2014). Why should ensemble spread match the RMSE of
    the ensemble mean? Journal of Hydrometeorology 15(4), 1708–1713.
    """
    y = np.asarray(y_true, dtype=np.float64)
    sd = np.asarray(std, dtype=np.float64)
    n = y.size
    return spread_skill_from_sums(
        float(np.dot(sd, sd)), float(np.sum(np.square(y - np.asarray(mean, dtype=np.float64)))), n
    )


def spread_skill_from_sums(sum_var: float, sum_sq_err: float, n: int) -> dict[str, float]:
    """:func:`spread_skill` from Σσ², Σ(y − μ)² and N (a mergeable state: the sums of chunks add up)."""
    spread = float(np.sqrt(sum_var / n))
    rmse = float(np.sqrt(sum_sq_err / n))
    return {"ratio": float(spread_skill_ratio(sum_var, sum_sq_err)), "spread": spread, "rmse": rmse}


def spread_skill_ratio(sum_var: Any, sum_sq_err: Any) -> Any:
    r"""The spread-skill ratio :math:`\sqrt{\sum\sigma^2 / \sum (y - \mu)^2}` from the two sums (floats, or
    arrays of resamples; weighted sums give the weighted ratio): ``inf`` where every error is 0 but not the
    spread, NaN where both are. The one place of the ratio: :func:`spread_skill` and the catalogue's per-row
    form (bootstrap, weights, streaming) call it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(np.asarray(sum_var, dtype=np.float64) / np.asarray(sum_sq_err, dtype=np.float64))
