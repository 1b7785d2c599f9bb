"""Conditional coverage: coverage within strata of the rows (the opt-in ``conditional_coverage`` group).

Angelopoulos & Bates (2021), "A gentle introduction to conformal prediction and
distribution-free uncertainty quantification", section 3 ("Evaluating conformal
prediction"): marginal coverage can hide rows that are systematically under-covered. The
size-stratified coverage (SSC) splits the rows by the size of their prediction set (classes in
the set; width of an interval) and reports the coverage of each stratum; an adaptive method
keeps every stratum near the nominal level.

- prediction sets: one stratum per set size 1..K (empty strata are left out), as MAPIE's
  ``classification_ssc(num_bins=None)``; and one stratum per true class (class-conditional
  coverage);
- intervals: :data:`WIDTH_STRATA` strata of equal size by increasing width, as MAPIE's
  ``regression_ssc(num_bins=3)``.

Reported per level: ``ssc_violation`` = max over strata of |coverage − level| (the
"size-stratified coverage violation" of Angelopoulos et al. 2021, RAPS), and
``worst_stratum_coverage`` = min over strata of the coverage (MAPIE's ``*_ssc_score``).
"""

from __future__ import annotations

import numpy as np

from .rowweights import split_bounds

__all__ = ["WIDTH_STRATA", "class_coverage", "interval_ssc", "set_ssc", "stratum_coverage"]

#: Equal-count width strata of interval forecasts (MAPIE's default ``num_bins``).
WIDTH_STRATA = 3

#: Widths within this relative distance count as equal (:func:`interval_ssc`): the widths ``hi − lo`` of
#: split-conformal intervals ``pred ∓ q`` are one number up to rounding (about 1e-14 relative), which an exact
#: comparison would split into strata by rounding noise.
WIDTH_RTOL = 1e-9


def stratum_coverage(
    covered: np.ndarray, stratum: np.ndarray, n_strata: int, weights=None
) -> tuple[np.ndarray, np.ndarray]:
    """Coverage and row count of each stratum ``0..n_strata-1`` (coverage NaN where a stratum is empty);
    ``weights`` (N,): weighted coverage and the weight of each stratum."""
    covered = np.asarray(covered, dtype=np.float64)
    if weights is None:
        counts = np.bincount(stratum, minlength=n_strata)
    else:
        counts = np.bincount(stratum, weights=weights, minlength=n_strata)
        covered = covered * weights
    hits = np.bincount(stratum, weights=covered, minlength=n_strata)
    with np.errstate(invalid="ignore", divide="ignore"):
        return hits / counts, counts


def _summary(cov: np.ndarray, level: float) -> dict[str, float]:
    cov = cov[np.isfinite(cov)]
    return {"ssc_violation": float(np.abs(cov - level).max()), "worst_stratum_coverage": float(cov.min())}


def interval_ssc(
    covered: np.ndarray, width: np.ndarray, level: float, n_strata: int = WIDTH_STRATA, weights=None
) -> dict:
    r"""Width-stratified coverage of central intervals.

    Rows are sorted by width and split into ``n_strata`` consecutive groups whose sizes differ by
    at most one (``numpy.array_split``, the first groups one larger), as MAPIE's
    ``regression_ssc``. Rows of equal width are never split: a row joins the stratum of the first
    sorted row whose width is within :data:`WIDTH_RTOL` (relative, 1e-9) below its own,
    ``w_j ≥ w_i − 1e-9·w_i`` (later strata may then be smaller or empty, and empty ones are left out),
    so the result does not depend on row order; MAPIE's unstable argsort splits ties arbitrarily.
    Constant-width intervals thus form one stratum, even when their widths differ by rounding (the
    widths ``(pred + q) − (pred − q)`` of split-conformal intervals): width carries no information to
    stratify by.

    .. math:: \mathrm{SSC\ violation} = \max_g \Big|\frac{1}{|I_g|}\sum_{i \in I_g} 1\{y_i \in [l_i, u_i]\} - (1 - \alpha)\Big|

    With fewer rows than strata, every row is its own stratum. ``weights`` (N,): strata of equal size among
    the repeated rows (a row of weight w counting w / min(weights) rows,
    :func:`~uqeval.metrics.rowweights.row_units`; a row joins the stratum of the first repeated copy of its
    first equal-width row) and weighted coverage.
    """
    covered = np.asarray(covered, dtype=np.float64)
    w = np.asarray(width, dtype=np.float64)
    order = np.argsort(w, kind="stable")
    sw = w[order]
    # sorted position of the first row within WIDTH_RTOL below each row (nondecreasing: strata stay runs)
    first = np.searchsorted(sw, sw - WIDTH_RTOL * np.abs(sw), side="left")
    n: float
    if weights is None:
        n = covered.size
        start = first
    else:
        from .rowweights import row_units

        units = row_units(weights)
        before = np.concatenate([[0.0], np.cumsum(units[order])])  # repeated rows before each sorted row
        n = float(before[-1])
        start = before[first]
    k = max(1, min(int(n_strata), int(np.ceil(n))))
    ends = split_bounds(n, k)[1:]
    stratum = np.empty(covered.size, dtype=np.int64)
    stratum[order] = np.searchsorted(ends, start, side="right")
    cov, _ = stratum_coverage(covered, stratum, k, weights)
    return _summary(cov, level)


def set_ssc(covered: np.ndarray, size: np.ndarray, level: float, n_classes: int, weights=None) -> dict:
    """Size-stratified coverage of prediction sets: one stratum per set size (empty ones left out),
    as MAPIE's ``classification_ssc(num_bins=None)``; ``weights``: weighted coverage."""
    cov, _ = stratum_coverage(covered, np.asarray(size, dtype=np.int64), n_classes + 1, weights)
    return _summary(cov, level)


def class_coverage(covered: np.ndarray, labels: np.ndarray, n_classes: int, weights=None) -> dict:
    """Class-conditional coverage: the class (label index, as a string) whose rows are covered least
    often and that coverage; classes without rows are left out, ties go to the smallest index;
    ``weights``: weighted coverage."""
    cov, counts = stratum_coverage(covered, np.asarray(labels, dtype=np.int64), n_classes, weights)
    cov = np.where(counts > 0, cov, np.inf)
    worst = int(np.argmin(cov))
    return {"worst_class": str(worst), "worst_class_coverage": float(cov[worst])}
