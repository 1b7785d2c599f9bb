r"""Quantile forecasts: pinball loss, interval score, WIS, calibration and PIT histograms.

``quantiles`` is an (N, Q) array, column ``j`` the predicted quantile at
``levels[j]``; levels are strictly increasing in (0, 1). Central intervals
are the pairs :math:`(\tau, 1-\tau)` found by
:func:`uqeval.metrics.intervals.central_pairs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ..errors import InputError, option
from ..validation import as_float_array, check_finite, check_nonempty, check_same_length
from .blocks import row_mean, rowwise
from .calibration import calibration_errors, central_cover_index, observed_from_cover_index
from .calibration_tests import quantile_pit_bins
from .intervals import PAIR_TOL, central_pairs, level_key
from .rowweights import row_units
from .scoring import interval_score, pinball_loss

#: Slack for "bounds inclusive" comparisons of PIT values with levels
#: (``|2u - 1|`` of u = 0.025 is 0.95 only up to rounding).
PIT_TOL = 1e-12


def _as_levels(levels) -> np.ndarray:
    tau = as_float_array(levels, "levels")
    check_finite(tau, "levels")
    if tau.size == 0:
        raise InputError("levels is empty: give at least one quantile level")
    if not ((tau > 0).all() and (tau < 1).all()):
        raise InputError(f"quantile levels must be strictly between 0 and 1, got {tau.tolist()}")
    if tau.size > 1 and not (np.diff(tau) > 0).all():
        raise InputError(
            f"quantile levels must be strictly increasing (one column per level, sorted), got {tau.tolist()}"
        )
    return tau


def _as_quantiles(quantiles, tau: np.ndarray) -> np.ndarray:
    q = as_float_array(quantiles, "quantiles", ndim=2)
    if q.shape[1] != tau.size:
        raise InputError(
            f"quantiles has {q.shape[1]} column(s) but {tau.size} level(s) were given; "
            "give one level per quantile column"
        )
    check_nonempty(q.shape[0], "quantiles")
    check_finite(q, "quantiles")
    return q


def _inputs(y_true, quantiles, levels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    tau = _as_levels(levels)
    q = _as_quantiles(quantiles, tau)
    y = as_float_array(y_true, "y_true")
    check_same_length([y, q], ["y_true", "quantiles"])
    check_finite(y, "y_true")
    return y, q, tau


def _median_index(tau: np.ndarray) -> int | None:
    hit = np.flatnonzero(np.abs(tau - 0.5) <= PAIR_TOL)
    return int(hit[0]) if hit.size else None


def _wis_rows(y: np.ndarray, q: np.ndarray, tau: np.ndarray) -> np.ndarray:
    pairs = central_pairs(tau)
    med = _median_index(tau)
    if not pairs and med is None:
        raise InputError(
            f"the weighted interval score needs the median (level 0.5) or a central pair of levels "
            f"(tau, 1 - tau); got levels {tau.tolist()}"
        )
    total = np.zeros(y.shape[0])
    if pairs:
        lo = np.array([i for i, _, _ in pairs])
        hi = np.array([j for _, j, _ in pairs])
        alpha = 2.0 * tau[lo]
        scores = interval_score(y, q[:, lo], q[:, hi], 1.0 - alpha)
        scores *= alpha / 2.0
        total += scores.sum(axis=1)  # row by row, not BLAS: the same bits in any block of rows
    if med is None:
        return total / len(pairs)
    total += 0.5 * np.abs(y - q[:, med])
    return total / (len(pairs) + 0.5)


def weighted_interval_score(y_true: np.ndarray, quantiles: np.ndarray, levels: np.ndarray) -> np.ndarray:
    r"""Weighted interval score (Bracher, Ray, Gneiting & Reich 2021, Eq. 2).

    Over the :math:`K` central pairs :math:`(\alpha_k/2, 1-\alpha_k/2)` of the
    levels and the predicted median :math:`m` (level 0.5):

    .. math::
        \mathrm{WIS} = \frac{1}{K + \frac12}\left(\frac12 |y - m|
            + \sum_{k=1}^K \frac{\alpha_k}{2}\, \mathrm{IS}_{\alpha_k}(l_k, u_k; y)\right)

    with :math:`\mathrm{IS}_\alpha` the interval score
    (:func:`uqeval.metrics.scoring.interval_score`). Equivalently, WIS is
    :math:`\frac{1}{K+1/2}` times the summed pinball losses of the
    :math:`2K+1` quantiles. Equals ``scoringrules.weighted_interval_score``
    with its default weights. Without a 0.5 level the median term is dropped and
    the sum is divided by :math:`K` instead (the same weights, renormalised;
    Bracher et al. only define the form with the median). Levels without a
    mirror are ignored.

    Parameters
    ----------
    y_true : (N,) observations.
    quantiles : (N, Q) predicted quantiles.
    levels : (Q,) strictly increasing levels in (0, 1).

    Returns
    -------
    (N,) array, >= 0, lower is better.
    """
    y, q, tau = _inputs(y_true, quantiles, levels)
    return rowwise(lambda y, q: _wis_rows(y, q, tau), y, q)


def quantile_scores(y_true: np.ndarray, quantiles: np.ndarray, levels: np.ndarray, weights=None) -> dict:
    r"""Mean pinball loss, per-level pinball, interval score per central pair, and WIS.

    .. math:: \rho_\tau(y, q) = (\mathbb{1}[y < q] - \tau)(q - y)

    Returns
    -------
    dict with
        ``pinball``: mean of :math:`\rho_\tau` over rows and levels;
        ``pinball_by_level``: ``{level_key(tau): mean over rows}``;
        ``interval_by_level``: ``{level_key(1 - 2 tau): mean interval score}`` for
        each central pair (empty when there is none);
        ``wis``: mean :func:`weighted_interval_score` (omitted when there is
        neither a median nor a central pair).
    ``weights`` (N,): every mean over rows weighted.
    """
    y, q, tau = _inputs(y_true, quantiles, levels)
    # each level's (N,) scores block by block into one buffer (metrics.blocks), then its mean: no (N, Q) array
    buf = np.empty(y.size)
    pin = np.array(
        [
            row_mean(
                lambda y, qj, j=j: pinball_loss(y, qj[:, None], tau[j : j + 1])[:, 0],
                y,
                q[:, j],
                out=buf,
                weights=weights,
            )
            for j in range(tau.size)
        ]
    )  # a loop over levels, not rows
    out: dict = {
        "pinball": float(pin.mean()),
        "pinball_by_level": {level_key(t): float(v) for t, v in zip(tau, pin)},
    }
    by_level: dict[str, float] = {}
    for i, j, level in central_pairs(tau):
        by_level[level_key(level)] = row_mean(
            lambda y, lo, hi, level=level: interval_score(y, lo, hi, level),
            y,
            q[:, i],
            q[:, j],
            out=buf,
            weights=weights,
        )
    out["interval_by_level"] = by_level
    if by_level or _median_index(tau) is not None:
        out["wis"] = row_mean(lambda y, q: _wis_rows(y, q, tau), y, q, out=buf, weights=weights)
    return out


def pinball_rows(y_true: np.ndarray, quantiles: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """(N,) pinball loss of each row averaged over the levels, block by block (no (N, Q) array);
    its mean is ``quantile_scores(...)["pinball"]`` up to the order of summation."""
    y, q, tau = _inputs(y_true, quantiles, levels)
    return rowwise(lambda y, q: pinball_loss(y, q, tau).mean(axis=1), y, q)


def quantile_calibration_curve(
    y_true: np.ndarray, quantiles: np.ndarray, levels: np.ndarray, weights=None
) -> tuple[np.ndarray, np.ndarray]:
    r"""Observed frequency of :math:`y \le \hat q_\tau` against the level :math:`\tau`.

    .. math:: \hat p(\tau) = \frac1N \sum_i \mathbb{1}[y_i \le \hat q_{\tau,i}]

    A calibrated forecast has :math:`\hat p(\tau) \approx \tau` (Kuleshov et al.
    2018 use this curve for any predictive CDF). ``weights`` (N,): the weighted frequency.

    Returns
    -------
    (expected, observed) : two (Q,) arrays, ``expected`` being the levels.
    """
    y, q, tau = _inputs(y_true, quantiles, levels)
    if weights is None:
        observed = np.mean(y[:, None] <= q, axis=0)
    else:
        observed = np.average(y[:, None] <= q, axis=0, weights=np.asarray(weights, dtype=np.float64))
    return tau.copy(), observed


def quantile_calibration_terms(y_true: np.ndarray, quantiles: np.ndarray, levels: np.ndarray):
    """Per-row terms of the quantile calibration curve and the errors of weighted sums of them.

    Returns ``(below, fn)``: ``below`` (N, Q) float indicators 1[y <= q_tau]; ``fn(sums (B, Q),
    total (B,))`` -> dict of (B,) calibration errors of the curve ``sums / total`` (a set of rows,
    each counted with its weight).
    """
    y, q, tau = _inputs(y_true, quantiles, levels)
    below = (y[:, None] <= q).astype(np.float64)  # (N, Q), Q small

    def fn(sums: np.ndarray, total: np.ndarray) -> dict[str, np.ndarray]:
        # (B, Q) curves: a dict of (B,) arrays
        return cast("dict[str, np.ndarray]", calibration_errors(tau, sums / np.asarray(total)[:, None]))

    return below, fn


def check_quantiles_sorted(
    quantiles: np.ndarray, levels: np.ndarray, columns: Sequence[str] | None = None
) -> None:
    """Raise InputError if any row's quantiles decrease with the level (quantile crossing).

    Equal neighbouring quantiles are allowed. The message names the first
    crossing row and the first pair of neighbouring columns that cross in it.

    Parameters
    ----------
    quantiles : (N, Q) predicted quantiles, columns in level order.
    levels : (Q,) their levels.
    columns : names of the Q columns for the message; default ``q_<level>``.
    """
    tau = _as_levels(levels)
    q = _as_quantiles(quantiles, tau)
    names = list(columns) if columns is not None else [f"q_{level_key(t)}" for t in tau]
    if len(names) != tau.size:
        raise InputError(f"columns has {len(names)} name(s) for {tau.size} quantile column(s)")
    crossing = q[:, 1:] < q[:, :-1]  # np.diff(q) < 0 for finite q, without its (N, Q - 1) floats
    rows = np.flatnonzero(crossing.any(axis=1))
    if rows.size:
        row = int(rows[0])
        j = int(np.flatnonzero(crossing[row])[0])
        raise InputError(
            f"quantiles cross: {rows.size} row(s) where a higher level has a lower quantile "
            f"(first at row {row}: column '{names[j]}' = {q[row, j]:g} > column '{names[j + 1]}' = "
            f"{q[row, j + 1]:g}); fix the model's quantiles or pass {option('fix_crossing')} to sort each row"
        )


def pit_histogram_quantiles(
    y_true: np.ndarray, quantiles: np.ndarray, levels: np.ndarray, weights=None
) -> dict:
    r"""PIT histogram of quantile forecasts, one bin between neighbouring levels.

    Row :math:`i` falls in bin :math:`b_i = \#\{j : \hat q_{\tau_j,i} < y_i\}`, i.e.
    the PIT interval :math:`(\tau_{b}, \tau_{b+1}]` with :math:`\tau_0 = 0`,
    :math:`\tau_{Q+1} = 1`; so the cumulative counts match
    :func:`quantile_calibration_curve`. Quantiles must not cross.

    Returns
    -------
    dict with ``edges`` ((Q+2,) levels padded with 0 and 1), ``counts`` ((Q+1,)
    int) and ``expected_counts`` ((Q+1,) float: N times the bin width). ``weights`` (N,): counts of rows
    weighted in units of rows (:func:`~uqeval.metrics.rowweights.row_units`: a row of weight w counts
    w / min(w) rows), N their sum.
    """
    y, q, tau = _inputs(y_true, quantiles, levels)
    check_quantiles_sorted(q, tau)
    bins = quantile_pit_bins(y, q)
    edges = np.concatenate(([0.0], tau, [1.0]))
    if weights is None:
        counts = np.bincount(bins, minlength=tau.size + 1)
        return {"edges": edges, "counts": counts, "expected_counts": y.size * np.diff(edges)}

    units = row_units(weights)
    counts_w = np.bincount(bins, weights=units, minlength=tau.size + 1)
    return {"edges": edges, "counts": counts_w, "expected_counts": units.sum() * np.diff(edges)}


def _as_pit(pit) -> np.ndarray:
    u = as_float_array(pit, "pit")
    check_nonempty(u.size, "pit")
    check_finite(u, "pit")
    if not ((u >= 0).all() and (u <= 1).all()):
        raise InputError(f"pit values must be within [0, 1], found range [{u.min():g}, {u.max():g}]")
    return u


def pit_histogram(pit: np.ndarray, bins: int = 10, weights=None) -> dict:
    """Histogram of PIT values on ``bins`` equal bins of [0, 1] (last bin closed).

    For sample or Gaussian forecasts (see :func:`uqeval.metrics.samples.pit_samples`).
    A calibrated forecast gives a flat histogram (Dawid 1984; Gneiting et al. 2007).

    Returns
    -------
    dict with ``edges`` ((bins+1,)), ``counts`` ((bins,) int) and
    ``expected_counts`` ((bins,) float, N / bins each). ``weights`` (N,): counts of rows weighted in units of
    rows (:func:`~uqeval.metrics.rowweights.row_units`), N their sum.
    """
    u = _as_pit(pit)
    if int(bins) != bins or bins < 1:
        raise InputError(f"bins must be a positive integer, got {bins!r}")
    edges = np.linspace(0.0, 1.0, int(bins) + 1)
    if weights is None:
        counts, _ = np.histogram(u, bins=edges)
        return {"edges": edges, "counts": counts, "expected_counts": np.full(int(bins), u.size / bins)}

    units = row_units(weights)
    counts_w, _ = np.histogram(u, bins=edges, weights=units)
    return {"edges": edges, "counts": counts_w, "expected_counts": np.full(int(bins), units.sum() / bins)}


def interval_calibration_curve_from_pit(pit: np.ndarray, expected: np.ndarray) -> np.ndarray:
    r"""Observed coverage of central intervals at levels ``expected``, from PIT values.

    y lies in the central :math:`p` interval of its forecast exactly when its
    PIT :math:`u` satisfies :math:`|2u - 1| \le p`, so

    .. math:: \hat c(p) = \frac1N \sum_i \mathbb{1}[|2u_i - 1| \le p]

    (bounds inclusive, with a 1e-12 slack for rounding). This gives sample
    forecasts the same interval-mode calibration curve as Gaussians. Counted from :func:`pit_cover_index`
    (one ``searchsorted`` into the levels, O(N log P), and one ``bincount``), the rule the catalogue's curve
    and adversarial groups use, so the two cannot differ.

    Parameters
    ----------
    pit : (N,) PIT values in [0, 1].
    expected : (P,) central levels in [0, 1].

    Returns
    -------
    (P,) observed shares.
    """
    p = as_float_array(expected, "expected")
    check_finite(p, "expected")
    return observed_from_cover_index(pit_cover_index(pit, p), p.size)


def pit_cover_index(pit: np.ndarray, expected: np.ndarray) -> np.ndarray:
    r"""Index of the first central level in ``expected`` whose interval holds each row, from PIT values.

    Row i is inside the central :math:`p_j` interval iff :math:`|2u_i - 1| \le p_j` (with the same
    slack as :func:`interval_calibration_curve_from_pit`), so the index is
    ``searchsorted(expected, |2u - 1| - tol, "left")``; ``len(expected)`` means never covered.
    Counting indices <= j reproduces that curve, which is what adversarial group calibration needs.
    """
    return central_cover_index(np.abs(2.0 * _as_pit(pit) - 1.0) - PIT_TOL, expected)
