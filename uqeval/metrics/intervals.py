"""Prediction intervals: empirical coverage and width (Kompa, Snoek & Beam 2021).

Pure kernels: arrays in, numbers out. A ``level`` is the nominal probability
of a central interval (0.95 for a 95% interval); the JSON key of a level is
:func:`level_key`.

References
----------
Kompa, B., Snoek, J. & Beam, A. L. (2021). Empirical Frequentist Coverage of
Deep Learning Uncertainty Quantification Procedures. *Entropy* 23(12), 1608.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..validation import (
    as_float_array,
    bad_rows,
    check_finite,
    check_level,
    check_nonempty,
    check_same_length,
)
from .blocks import BLOCK, PairwiseSum

#: Two quantile levels tau and 1 - tau' form a central pair when |tau - tau'| <= this.
PAIR_TOL = 1e-9


def level_key(level: float) -> str:
    """The string under which a level is reported: shortest decimal form rounded to 10 digits.

    Rounding first makes levels computed by arithmetic print as the number a
    person wrote: the central level of the 0.05/0.95 quantile pair,
    ``0.95 - 0.05 == 0.8999999999999999``, is ``"0.9"``. No exponent notation.

    Examples
    --------
    >>> level_key(0.95), level_key(0.95 - 0.05), level_key(0.5)
    ('0.95', '0.9', '0.5')
    """
    value = float(level)
    if not np.isfinite(value):
        raise InputError(f"level must be a finite number, got {value!r}")
    rounded = round(value, 10) + 0.0  # + 0.0 turns -0.0 into 0.0
    return np.format_float_positional(rounded, unique=True, trim="-")


def coverage_metrics(
    y_true: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    level: float,
    y_std: float | None = None,
    shares: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, float]:
    r"""Empirical coverage and width of prediction intervals at a nominal level.

    Following Kompa, Snoek & Beam (2021, Sec. 3), over the :math:`N` rows

    .. math::
        \text{coverage} = \frac1N \sum_i \mathbb{1}[l_i \le y_i \le u_i], \qquad
        \text{width} = \frac1N \sum_i (u_i - l_i),

    with ``width_norm = width / y_std``, where ``y_std`` is the standard
    deviation of the training targets (the paper's unit of width).

    Parameters
    ----------
    y_true, lower, upper : (N,) arrays, ``lower <= upper`` row by row.
    level : nominal level of the intervals, in (0, 1).
    y_std : reference std (> 0) for ``width_norm``; the key is omitted when None.
    shares : per-row ``(miss below, miss above)`` in [0, 1] that replace the indicators ``y < lower`` and
        ``y > upper`` (a finite ensemble: the randomised PIT's chances of missing the band,
        :func:`pit_miss_shares`; the widths stay those of ``[lower, upper]``).

    Returns
    -------
    dict with float values: ``coverage`` (share of y in [lower, upper], bounds
    inclusive), ``width``, ``width_norm`` (only when ``y_std`` is given),
    ``coverage_error`` (coverage - level), ``miss_below`` (share y < lower),
    ``miss_above`` (share y > upper). ``coverage + miss_below + miss_above == 1``.
    """
    level = check_level(level)
    y = as_float_array(y_true, "y_true")
    lo = as_float_array(lower, "lower")
    hi = as_float_array(upper, "upper")
    n = check_same_length([y, lo, hi], ["y_true", "lower", "upper"])
    check_nonempty(n)
    for arr, name in ((y, "y_true"), (lo, "lower"), (hi, "upper")):
        check_finite(arr, name)
    count, first = bad_rows(lo > hi)
    if count:
        raise InputError(
            f"lower must be <= upper: {count} row(s) with lower > upper (first at row {first}: "
            f"lower={lo[first]:g}, upper={hi[first]:g}); swap the columns or fix the interval bounds"
        )
    return coverage_from_bounds(
        y, lambda start, stop: (lo[start:stop], hi[start:stop]), level, y_std, shares=shares
    )


def coverage_from_bounds(
    y_true: np.ndarray,
    bounds,
    level: float,
    y_std: float | None = None,
    shares: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, float]:
    """:func:`coverage_metrics` of intervals whose bounds are made block by block of rows, never whole.

    ``bounds(start, stop)`` -> ``(lower, upper)`` of rows ``start:stop`` (e.g. ``mean -/+ z std``
    of a Gaussian forecast, whose (N,) bounds would be two more full-size arrays); they are not
    checked (``lower <= upper``): :func:`coverage_metrics` checks given arrays first.
    """
    level = check_level(level)
    if y_std is not None:
        ref = float(y_std)
        if not (np.isfinite(ref) and ref > 0):
            raise InputError(
                f"y_std (reference std of the training targets) must be a finite number > 0, got {ref:g}"
            )
    n = len(y_true)
    state = CoverageSums(n, level, y_std)
    for start in range(0, n, BLOCK):  # blocks of rows, not rows
        stop = min(start + BLOCK, n)
        part = None if shares is None else (shares[0][start:stop], shares[1][start:stop])
        lower, upper = bounds(start, stop)
        state.add(y_true[start:stop], lower, upper, part)
    return state.result()


class CoverageSums:
    """:func:`coverage_metrics` of ``n`` rows fed in consecutive blocks (row order), without full-size arrays.

    The indicators (and the ``coverage_error`` terms) of :func:`coverage_rows` are 0/1 per row, so
    their sums are exact integers, the same in any order; the widths are summed as ``np.mean`` of the
    whole array would sum them (:class:`~.blocks.PairwiseSum`), so :meth:`result` is bit for bit that
    of :func:`coverage_metrics` on the whole arrays. The blocks are not validated: :func:`coverage_metrics`
    checks whole arrays, and the intervals of a validated prediction container are finite and ordered.
    """

    def __init__(self, n: int, level: float, y_std: float | None = None) -> None:
        self.n, self.level, self.y_std = int(n), level, y_std
        self._sums: dict[str, Any] = {}
        self._widths: dict[str, PairwiseSum] = {}
        self._finishers: dict[str, Any] = {}

    def add(
        self,
        y_true: np.ndarray,
        lower: np.ndarray,
        upper: np.ndarray,
        shares: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """Add the next block of rows: (B,) targets and interval bounds (and the rows' miss ``shares`` of
        :func:`coverage_rows`, a finite ensemble's)."""
        for key, (score, terms, finish) in coverage_rows(
            y_true, lower, upper, self.level, self.y_std, shares
        ).items():
            self._finishers[key] = finish
            if terms is not None or (key in _INDICATORS and shares is None):  # 0/1: exact integer sums
                self._sums[key] = self._sums.get(key, 0.0) + (
                    terms.sum(axis=0) if terms is not None else np.sum(score)
                )
            else:
                self._widths.setdefault(key, PairwiseSum(self.n)).add(score)

    def result(self) -> dict[str, float]:
        """The dict of :func:`coverage_metrics` (its key order); every row must have been added."""
        n, out = self.n, {}
        for key, finish in self._finishers.items():  # coverage_rows' key order
            if finish is not None:
                out[key] = float(finish(np.asarray(self._sums[key])[None, :], np.array([float(n)]))[0])
            elif key in self._widths:  # np.mean of the whole width array: its pairwise sum / n
                out[key] = float(self._widths[key].total() / n)
            else:
                out[key] = float(self._sums[key] / n)
        return out


#: keys of :func:`coverage_rows` whose per-row score is a 0/1 indicator
_INDICATORS = frozenset({"coverage", "miss_below", "miss_above"})


def coverage_rows(
    y_true,
    lower,
    upper,
    level: float,
    y_std: float | None = None,
    shares: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, tuple]:
    """Per-row terms of :func:`coverage_metrics`: ``{key: (score, terms, finish)}`` in its key order.

    Coverage, miss rates and widths are means of per-row indicators and widths (``score``);
    ``coverage_error`` is the weighted mean of the indicator minus the level
    (``finish(sums, total)`` of the ``terms``). ``shares``: each row's ``(miss below, miss above)``
    in [0, 1] in place of the indicators ``y < lower`` and ``y > upper`` (a finite ensemble:
    :func:`pit_miss_shares`); the row covers with ``1 - below - above``.
    """
    if shares is None:
        below = (y_true < lower).astype(np.float64)
        above = (y_true > upper).astype(np.float64)
        inside = ((y_true >= lower) & (y_true <= upper)).astype(np.float64)
    else:
        below, above = shares
        inside = 1.0 - below - above
    width = upper - lower
    out: dict[str, tuple] = {"coverage": (inside, None, None), "width": (width, None, None)}
    if y_std is not None:
        out["width_norm"] = (width / float(y_std), None, None)
    out["coverage_error"] = (None, inside[:, None], lambda sums, total: sums[:, 0] / total - level)
    out["miss_below"] = (below, None, None)
    out["miss_above"] = (above, None, None)
    return out


def pit_miss_shares(low: np.ndarray, high: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    r"""The chance that a randomised PIT falls below and above the central ``level`` band.

    A row whose PIT is only known to lie in :math:`[a_i, b_i]` (a finite ensemble: the target's rank among
    the members, :func:`uqeval.metrics.samples.pit_bounds_samples`) has the randomised PIT
    :math:`U_i \sim U(a_i, b_i)`; it misses the central band :math:`[\tau, 1 - \tau]`,
    :math:`\tau = (1 - \text{level})/2`, below and above with probabilities

    .. math:: \text{below}_i = \operatorname{clip}\left(\frac{\tau - a_i}{b_i - a_i}, 0, 1\right),
        \qquad \text{above}_i = \operatorname{clip}\left(\frac{b_i - (1 - \tau)}{b_i - a_i}, 0, 1\right).

    These are the expectations of the randomised PIT's miss indicators given the ranks (Rao-Blackwellised:
    no random draw, the same numbers on every run, engine and batching). For a calibrated ensemble
    (target and members exchangeable) :math:`U_i` is uniform, so
    :math:`E[\text{below}_i] = E[\text{above}_i] = \tau` exactly, whatever the number of members; the
    interval between the members' empirical quantiles covers less (a 10-member ensemble's 2.5%–97.5%
    interval covers 0.789 of calibrated targets, [min, max] 9/11 = 0.818).

    Parameters
    ----------
    low, high : (N,) PIT bounds, ``0 <= low < high <= 1``.
    level : nominal level of the central band, in (0, 1).

    Returns
    -------
    (below, above) : two (N,) arrays in [0, 1] with ``below + above <= 1``.

    Examples
    --------
    >>> below, above = pit_miss_shares(np.array([0.0, 10 / 11]), np.array([1 / 11, 1.0]), 0.95)
    >>> [round(float(x), 3) for x in below], [round(float(x), 3) for x in above]
    ([0.275, 0.0], [0.0, 0.275])
    """
    level = check_level(level)
    a = np.asarray(low, dtype=np.float64)
    b = np.asarray(high, dtype=np.float64)
    tau = 0.5 * (1.0 - level)
    w = b - a
    below = np.clip((tau - a) / w, 0.0, 1.0)
    above = np.clip((b - (1.0 - tau)) / w, 0.0, 1.0)
    return below, above


def bound_levels(levels: Any) -> np.ndarray:
    r"""The quantile levels of the bounds of central intervals: :math:`(1 - p)/2` of every level :math:`p`, then
    :math:`(1 + p)/2` (a ``(2L,)`` array, lower bounds first). The one place of this map: the containers'
    intervals and PIT bins, the verification family's quantile table, isotonic recalibration's intervals and
    ``recalibrate``'s interval score call it; :func:`central_pairs` goes the other way."""
    p = np.asarray(levels, dtype=np.float64)
    return np.concatenate([(1.0 - p) / 2.0, (1.0 + p) / 2.0])


def central_pairs(levels: Sequence[float] | np.ndarray) -> list[tuple[int, int, float]]:
    r"""Pairs of quantile levels :math:`(\tau, 1-\tau)` that bound central intervals.

    For sorted levels, every :math:`\tau < \tfrac12` whose mirror :math:`1 - \tau`
    is also present (to within ``1e-9``) gives the central interval
    :math:`[q_\tau, q_{1-\tau}]` of level :math:`1 - 2\tau`. Levels without a
    mirror (and 0.5 itself) are skipped.

    Parameters
    ----------
    levels : strictly increasing quantile levels in (0, 1).

    Returns
    -------
    list of ``(lo_idx, hi_idx, level)`` with ``level = 1 - 2 * levels[lo_idx]``,
    outermost (widest) interval first. Use :func:`level_key` to name the level.

    Examples
    --------
    >>> [(i, j, level_key(p)) for i, j, p in central_pairs([0.05, 0.25, 0.5, 0.75, 0.95])]
    [(0, 4, '0.9'), (1, 3, '0.5')]
    """
    tau = as_float_array(levels, "levels")
    check_finite(tau, "levels")
    if tau.size and not ((tau > 0).all() and (tau < 1).all()):
        raise InputError(f"quantile levels must be strictly between 0 and 1, got {tau.tolist()}")
    if tau.size > 1 and not (np.diff(tau) > 0).all():
        raise InputError(f"quantile levels must be strictly increasing, got {tau.tolist()}")
    pairs: list[tuple[int, int, float]] = []
    for i, t in enumerate(tau):  # loop over levels (a handful), not rows
        if t >= 0.5 - PAIR_TOL:
            break
        j = int(np.searchsorted(tau, 1.0 - t - PAIR_TOL))
        if j < tau.size and abs(tau[j] - (1.0 - t)) <= PAIR_TOL:
            pairs.append((i, j, 1.0 - 2.0 * float(t)))
    return pairs
