r"""Standard-deviation scaling: one factor :math:`s` so that :math:`s\sigma` is better calibrated.

The Uncertainty Toolbox's ``optimize_recalibration_ratio`` (Chung et al. 2021) with
two proper-scoring-rule criteria added. The factor minimises, on a calibration split,

* ``ma_cal`` / ``rms_cal`` / ``miscal_area``: the interval-mode average calibration
  errors of :func:`uqeval.metrics.calibration.avg_calibration_gaussian`;
* ``nll``: the mean Gaussian negative log-likelihood, closed form
  :math:`s^2 = \overline{z^2}` with :math:`z = (y-\mu)/\sigma`;
* ``crps``: the mean Gaussian CRPS, whose derivative
  :math:`\sum_i \sigma_i\big(\sqrt{2/\pi}\,e^{-z_i^2/2s^2} - 1/\sqrt\pi\big)` increases
  with :math:`s` (ACCRUE Eq. 4), so the minimiser is its unique root (Brent).

The calibration errors are step functions of :math:`s`: an observed proportion
changes only where :math:`s` crosses a breakpoint :math:`|z_i|/\Phi^{-1}(\tfrac12 + \tfrac{p_j}2)`,
so a derivative-free local search such as the toolbox's bounded Brent stops on
whichever step it lands (on the toolbox's own test fixture it finds different factors
in different versions). We search instead:

1. a coarse grid of ``grid`` points uniform in :math:`\log s` over ``bounds``;
2. around the best coarse point (± 3 cells) every breakpoint is enumerated and the
   criterion is evaluated once inside each constant piece, i.e. exactly; if the
   bracket holds more than ``limit`` breakpoints (large N: the steps are then tiny)
   a grid of ``limit`` points is used instead;
3. the middle (in :math:`\log s`) of the run of minimal pieces is returned.

Observed proportions for many factors at once come from the sorted :math:`|z|`:
:math:`\hat p_j(s) = \#\{i: |z_i| \le s\,\Phi^{-1}(\tfrac12 + \tfrac{p_j}2)\}/N` (one
``searchsorted``, O(G·B·log N) for G factors after an O(N log N) sort), then
:func:`uqeval.metrics.calibration.calibration_errors` on the (G, B) curves.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from scipy.optimize import brentq

from ..errors import InputError, UsageError
from ..metrics.blocks import row_mean, rowwise
from ..metrics.calibration import (
    calibration_errors,
    expected_proportions,
    interval_cover_index,
    observed_from_cover_index,
)
from ..metrics.normal import central_z
from ..metrics.scoring import _gaussian_arrays, crps_gaussian, nll_gaussian
from ..validation import as_float_array, check_finite, check_positive

CRITERIA: tuple[str, ...] = ("ma_cal", "rms_cal", "miscal_area", "nll", "crps")
MIN_ROWS = 2

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_LOG_MAX_FLOAT = math.log(np.finfo(np.float64).max)


def _summary(
    y: np.ndarray, mu: np.ndarray, sd: np.ndarray, num_bins: int, factor: float = 1.0
) -> dict[str, float]:
    r""":func:`avg_calibration_gaussian` and the mean NLL and CRPS of :math:`N(\mu, (s\sigma)^2)`, the
    per-row terms made in blocks of rows (the same numbers, no full-size temporaries)."""
    expected = expected_proportions(num_bins)  # as avg_calibration_gaussian
    cover = rowwise(
        lambda y, mu, sd: interval_cover_index(np.abs(y - mu) / (factor * sd), expected),
        y,
        mu,
        sd,
        dtype=np.min_scalar_type(expected.size),
    )
    # one calibration curve, so every error is a scalar
    out = cast(
        "dict[str, float]", calibration_errors(expected, observed_from_cover_index(cover, expected.size))
    )
    del cover
    rows = np.empty(y.size)
    out["nll"] = row_mean(lambda y, mu, sd: nll_gaussian(y, mu, factor * sd), y, mu, sd, out=rows)
    out["crps"] = row_mean(lambda y, mu, sd: crps_gaussian(y, mu, factor * sd), y, mu, sd, out=rows)
    return out


def _thresholds(num_bins: int) -> tuple[np.ndarray, np.ndarray]:
    expected = expected_proportions(num_bins)
    return expected, central_z(expected)  # as avg_calibration_gaussian; last one is +inf


#: (factors x bins) cells per chunk of :func:`_calibration_on_grid`
_CHUNK_CELLS = 1 << 17


def _calibration_on_grid(
    a_sorted: np.ndarray, factors: np.ndarray, criterion: str, num_bins: int
) -> np.ndarray:
    """Calibration criterion of ``factor * std`` for every factor (vectorised, in chunks)."""
    expected, thresholds = _thresholds(num_bins)
    out = np.empty(factors.size)
    # chunks of factors bound the (chunk, num_bins) work arrays (~10 of them, 1 MB each); a chunk is never a
    # single factor unless there is only one: a (1, B) curve is contiguous and numpy would sum its bins
    # pairwise, where a (G, B) one (F-ordered) is summed bin after bin -- the bits would depend on the chunking
    edges = list(range(0, factors.size, max(2, _CHUNK_CELLS // num_bins))) + [factors.size]
    if len(edges) > 2 and edges[-1] - edges[-2] == 1:  # a last single factor joins the chunk before
        del edges[-2]
    for start, stop in zip(edges[:-1], edges[1:]):
        f = factors[start:stop]
        # keys laid out threshold by threshold: ascending factors give ascending keys, so successive binary
        # searches follow nearby paths (about 4x faster than factor by factor; the same counts)
        counts = np.searchsorted(a_sorted, thresholds[:, None] * f[None, :], side="right").T
        out[start:stop] = calibration_errors(expected, counts / a_sorted.size)[criterion]
    return out


def _breakpoints(a_sorted: np.ndarray, lo: float, hi: float, num_bins: int, limit: int) -> np.ndarray | None:
    """All factors in (lo, hi) where an observed proportion changes, or None if more than ``limit``."""
    _, t = _thresholds(num_bins)
    t = t[(t > 0) & np.isfinite(t)]
    a = a_sorted[a_sorted > 0]
    # row i enters the interval of threshold t_j when factor * t_j >= a_i, i.e. at a_i / t_j
    first = np.searchsorted(a, lo * t, side="right")
    last = np.searchsorted(a, hi * t, side="left")
    if int(np.sum(last - first)) > limit:
        return None
    return np.unique(np.concatenate([a[i:k] / tj for i, k, tj in zip(first, last, t)]))


def _grid_search(a_sorted: np.ndarray, criterion: str, num_bins: int, bounds, grid: int, limit: int) -> float:
    logs = np.linspace(math.log(bounds[0]), math.log(bounds[1]), grid)
    values = _calibration_on_grid(a_sorted, np.exp(logs), criterion, num_bins)
    best = int(np.argmin(values))
    lo, hi = float(np.exp(logs[max(best - 3, 0)])), float(np.exp(logs[min(best + 3, grid - 1)]))
    # loop over the bins (num_bins slices), not rows
    bps = _breakpoints(a_sorted, lo, hi, num_bins, limit)
    if bps is None:  # too many steps to enumerate: they are tiny, a fine grid resolves them
        edges = np.exp(np.linspace(math.log(lo), math.log(hi), limit + 1))
    else:
        edges = np.concatenate([[lo], bps, [hi]])
    mids = np.sqrt(edges[:-1] * edges[1:])  # one point inside every constant piece
    vals = _calibration_on_grid(a_sorted, mids, criterion, num_bins)
    k = int(np.argmin(vals))
    is_min = vals <= vals[k]
    # the contiguous run of minimal pieces that contains k; return its middle (in log s)
    left = k
    while left > 0 and is_min[left - 1]:
        left -= 1
    right = k
    while right < mids.size - 1 and is_min[right + 1]:
        right += 1
    return float(math.sqrt(edges[left] * edges[right + 1]))


def crps_scale(a: np.ndarray, sd: np.ndarray | None = None) -> float | None:
    r"""The CRPS-optimal scale: the :math:`s > 0` that minimises :math:`\sum_i \mathrm{CRPS}(y_i; \mu_i, s\,sd_i)`,
    for ``a`` :math:`= |y - \mu|/sd` ((N,); ``sd`` (N,) > 0, by default 1: one σ for all rows, ACCRUE's constant).

    The root of :math:`\sum_i sd_i\,(\sqrt{2/\pi}\,e^{-a_i^2/2s^2} - 1/\sqrt\pi) = 0`, which increases with
    :math:`s`, so the root is unique when it exists; it does not when more than :math:`1/\sqrt2` of the weight
    is on :math:`a_i = 0` (then :math:`s \to 0` is optimal): None then, and when every :math:`a_i` is 0.
    Sought in :math:`\log s` with :math:`(a/s)^2 = e^{2(\log a - \log s)}`, so neither the bracket
    :math:`[10^{-3}\min_{a_i \ne 0} a_i, 10\max a]` nor a ratio leaves the doubles, whatever the magnitude
    (errors near 1e308 overflowed both; issue 35). ``inf`` only when the root itself is beyond the largest double.
    """
    amax = float(a.max()) if a.size else 0.0
    if not amax > 0:
        return None
    with np.errstate(divide="ignore"):
        log_a = np.log(a)  # -inf for exact zeros: their term is e^0 = 1

    def h(log_s: float) -> float:
        with np.errstate(over="ignore"):  # a huge ratio: its term is e^-inf = 0
            terms = np.exp(-0.5 * np.exp(2.0 * (log_a - log_s)))
        mean = float(np.mean(terms)) if sd is None else float(np.average(terms, weights=sd))
        return _SQRT_2_OVER_PI * mean - _INV_SQRT_PI

    hi = math.log(amax) + math.log(10.0)
    lo = math.log(float(a[a > 0].min())) + math.log(1e-3)
    if h(lo) >= 0:
        return None
    root = brentq(h, lo, hi, xtol=1e-13, rtol=1e-13)
    return math.exp(root) if root < _LOG_MAX_FLOAT else math.inf


def _crps_factor(a: np.ndarray, sd: np.ndarray) -> float:
    """:func:`crps_scale` of ``a`` = |z| weighted by ``sd``, or an InputError saying why there is none."""
    factor = crps_scale(a, sd)
    if factor is None and not float(a.max()) > 0:
        raise InputError(
            "cannot scale std by CRPS: every residual y_true - mean is exactly 0; check the mean column"
        )
    if factor is None:
        raise InputError(
            "cannot scale std by CRPS: most residuals y_true - mean are exactly 0 so the optimal factor is 0; "
            "use another criterion or check the mean column"
        )
    if factor == math.inf:
        raise InputError(
            "cannot scale std by CRPS: the optimal factor is beyond the largest double; check the std column"
        )
    return factor


def fit_std_scaling(
    y_true: np.ndarray,
    mean: np.ndarray,
    std: np.ndarray,
    criterion: str = "ma_cal",
    *,
    num_bins: int = 100,
    bounds: tuple[float, float] = (1e-2, 1e2),
    grid: int = 401,
    limit: int = 20_000,
) -> dict[str, Any]:
    r"""Fit the factor :math:`s` minimising ``criterion`` of :math:`N(\mu, (s\sigma)^2)`.

    Parameters
    ----------
    y_true, mean, std : (N,) arrays of the calibration split
    criterion : ``"ma_cal"`` (default), ``"rms_cal"``, ``"miscal_area"``, ``"nll"`` or ``"crps"``
    num_bins : expected proportions of the calibration curve (as ``avg_calibration_gaussian``)
    bounds : search interval of :math:`s` for the calibration criteria (the toolbox's (0.01, 100))
    grid, limit : coarse grid size and the most pieces evaluated by the refinement (see module docstring)

    Returns
    -------
    dict, JSON-serialisable: ``method`` (``"std_scaling"``), ``criterion``, ``factor``,
    ``n_rows``, ``num_bins``, ``at_bound`` (True if the factor sits at a search bound:
    widen ``bounds``), and ``before`` / ``after``: ``{"ma_cal", "rms_cal", "miscal_area",
    "nll", "crps"}`` (nll and crps are row means) on the calibration rows for
    :math:`\sigma` and :math:`s\sigma`.

    Raises
    ------
    InputError
        invalid arrays, fewer than 2 rows, or (crps) residuals that are (almost) all 0.
    UsageError
        unknown criterion or invalid search settings.
    """
    if criterion not in CRITERIA:
        raise UsageError(f"unknown std-scaling criterion {criterion!r}; choose one of {', '.join(CRITERIA)}")
    if not (0 < bounds[0] < bounds[1] < math.inf):
        raise UsageError(f"bounds must satisfy 0 < low < high, got {bounds}")
    if grid < 3 or limit < 1:
        raise UsageError("grid must be >= 3 and limit >= 1")
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    n = y.size
    if n < MIN_ROWS:
        raise InputError(f"too few rows for std scaling: got {n}, need at least {MIN_ROWS}")
    a = rowwise(lambda y, mu, sd: np.abs(y - mu) / sd, y, mu, sd)  # |z|
    at_bound = False
    if criterion == "nll":
        factor = math.sqrt(float(np.mean(a * a)))
        if not factor > 0:
            raise InputError(
                "cannot scale std by NLL: every residual y_true - mean is exactly 0; check the mean column"
            )
    elif criterion == "crps":
        factor = _crps_factor(a, sd)
    else:
        a.sort()  # in place: |z| is not needed unsorted
        factor = _grid_search(a, criterion, int(num_bins), bounds, int(grid), int(limit))
        at_bound = bool(
            math.isclose(factor, bounds[0], rel_tol=1e-3) or math.isclose(factor, bounds[1], rel_tol=1e-3)
        )
    return {
        "method": "std_scaling",
        "criterion": criterion,
        "factor": float(factor),
        "n_rows": int(n),
        "num_bins": int(num_bins),
        "at_bound": at_bound,
        "before": _summary(y, mu, sd, int(num_bins)),
        "after": _summary(y, mu, sd, int(num_bins), factor),
    }


def apply_std_scaling(state: dict[str, Any], std: np.ndarray) -> np.ndarray:
    r"""Recalibrated standard deviations :math:`s\,\sigma`.

    Parameters
    ----------
    state : output of :func:`fit_std_scaling` (or a loaded one)
    std : (N,) array of standard deviations > 0

    Returns
    -------
    (N,) array.
    """
    if "factor" not in state:
        raise InputError("the std-scaling state has no 'factor'; refit it or pass an unmodified saved file")
    factor = float(state["factor"])
    if not (math.isfinite(factor) and factor > 0):
        raise InputError(f"the std-scaling factor must be finite and > 0, found {factor!r}")
    sd = as_float_array(std, "std")
    check_finite(sd, "std")
    check_positive(sd, "std")
    return factor * sd
