r"""Sample (ensemble, MC-dropout, posterior-draw) forecasts: CRPS, quantiles, PIT.

``samples`` is an (N, M) array: N rows, M members (draws) per row, member axis
last. Every kernel needs M >= 2. NaN members are dropped or refused upstream
(``--nan-policy``); here they are an :class:`~uqeval.errors.InputError`.

The CRPS kernels sort each row once (O(M log M)) and use the sorted-sample
identity

.. math:: \sum_{i=1}^M \sum_{j=1}^M |x_i - x_j| = 2 \sum_{k=1}^M (2k - M - 1)\, x_{(k)},

so no (N, M, M) array is ever built; rows are processed in blocks so the extra
memory is a fixed-size buffer on top of the (N, M) input.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import as_float_array, check_finite, check_nonempty, check_same_length
from .blocks import lerp

#: Bytes of the row-block buffer of the CRPS kernels (4096 rows x 50 members of float64,
#: 1.6 MB): small enough to stay in cache between the subtract, sort, matmul and abs passes.
_BLOCK_BYTES = 4096 * 50 * 8


def _as_samples(samples, name: str = "samples") -> np.ndarray:
    s = as_float_array(samples, name, ndim=2)
    check_nonempty(s.shape[0], name)
    if s.shape[1] < 2:
        raise InputError(
            f"{name} must have at least 2 members per row, got {s.shape[1]} "
            f"(shape {s.shape}); a single draw is a point forecast: score it as 'pred' instead"
        )
    return s


def _as_obs_samples(y_true, samples) -> tuple[np.ndarray, np.ndarray]:
    y = as_float_array(y_true, "y_true")
    s = _as_samples(samples)
    check_same_length([y, s], ["y_true", "samples"])
    return y, s


def _raise_if_not_finite(y: np.ndarray, s: np.ndarray) -> None:
    check_finite(y, "y_true")
    check_finite(s, "samples")


def _row_blocks(s: np.ndarray) -> list[slice]:
    """Cache-sized blocks of rows of an (N, M) array of float64 members (a loop over blocks, not rows)."""
    block = max(1, _BLOCK_BYTES // (8 * max(s.shape[1], 1)))
    return [slice(start, start + block) for start in range(0, s.shape[0], block)]


def sort_rows(samples: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``np.sort(samples, axis=1)`` in cache-sized blocks of rows, into ``out`` (``out=samples``: in place)."""
    s = np.asarray(samples, dtype=np.float64)
    out = np.empty_like(s) if out is None else out
    for rows in _row_blocks(s):
        if out is not s:
            out[rows] = s[rows]
        out[rows].sort(axis=1)
    return out


def all_finite(samples: np.ndarray) -> bool:
    """``np.isfinite(samples).all()`` in blocks of rows: no (N, M) boolean temporary."""
    s = np.asarray(samples)
    for rows in _row_blocks(s):
        if not np.isfinite(s[rows]).all():
            return False
    return True


def rows_sorted(samples: np.ndarray) -> bool:
    """True when the members of every row are ascending (False with NaN), checked in blocks of rows."""
    s = np.asarray(samples)
    for rows in _row_blocks(s):
        part = s[rows]
        if not (part[:, 1:] >= part[:, :-1]).all():
            return False
    return True


def _crps_terms(y: np.ndarray, s: np.ndarray, presorted: bool = False) -> tuple[np.ndarray, np.ndarray]:
    r"""Per row :math:`\frac1M\sum_i |x_i - y|` and :math:`P = \sum_k (2k-M-1)\,x_{(k)}`.

    :math:`P = \tfrac12 \sum_{i,j} |x_i - x_j|`. The pair term is computed on
    :math:`d = x - y` (sorting is shift invariant and :math:`\sum_k (2k-M-1) = 0`),
    so one sorted buffer serves both terms. Non-finite inputs give non-finite
    output rows, which the callers turn into an InputError.
    """
    n, m = s.shape
    w_pair = 2.0 * np.arange(1, m + 1, dtype=np.float64) - (m + 1)
    w_mean = np.full(m, 1.0 / m)
    abs_mean = np.empty(n)
    pair = np.empty(n)
    block = max(1, min(n, _BLOCK_BYTES // (8 * m)))
    buf = np.empty((block, m))
    with np.errstate(invalid="ignore", over="ignore"):  # NaN/inf rows are reported below
        for start in range(0, n, block):  # blocks of rows, not rows
            stop = min(start + block, n)
            d = buf[: stop - start]
            np.subtract(s[start:stop], y[start:stop, None], out=d)
            if not presorted:  # x - y keeps the order of sorted members
                d.sort(axis=-1)
            np.matmul(d, w_pair, out=pair[start:stop])
            np.abs(d, out=d)
            np.matmul(d, w_mean, out=abs_mean[start:stop])
    if not (np.isfinite(abs_mean).all() and np.isfinite(pair).all()):
        _raise_if_not_finite(y, s)
    return abs_mean, pair


def crps_ensemble(y_true: np.ndarray, samples: np.ndarray) -> np.ndarray:
    r"""CRPS of the ensemble's empirical CDF (the "energy"/ECDF estimator).

    .. math::
        \mathrm{CRPS}(\hat F_M, y) = \frac1M \sum_{i=1}^M |x_i - y|
            - \frac{1}{2M^2} \sum_{i=1}^M \sum_{j=1}^M |x_i - x_j|

    which is the CRPS of the step CDF :math:`\hat F_M` exactly
    (Gneiting & Raftery 2007, Eq. 21), and equals ``properscoring.crps_ensemble``
    (Hersbach 2000 formulation). Computed in O(M log M) per row by sorting,
    with O(N M) memory.

    Parameters
    ----------
    y_true : (N,) observations.
    samples : (N, M) members, M >= 2, member axis last.

    Returns
    -------
    (N,) array of scores, >= 0, lower is better.

    See Also
    --------
    crps_fair : the unbiased estimator of the CRPS of the distribution the members are drawn from.
    """
    return crps_ensemble_and_fair(y_true, samples)[0]


def crps_fair(y_true: np.ndarray, samples: np.ndarray) -> np.ndarray:
    r"""Fair (unbiased) ensemble CRPS (Ferro et al. 2008; Ferro 2014).

    .. math::
        \mathrm{CRPS}_\text{fair}(x_{1:M}, y) = \frac1M \sum_{i=1}^M |x_i - y|
            - \frac{1}{2M(M-1)} \sum_{i=1}^M \sum_{j=1}^M |x_i - x_j|

    Unbiased for the CRPS of the distribution the members are exchangeably drawn
    from; equals ``scoringrules.crps_ensemble(obs, fct, estimator="fair")``.
    Always <= :func:`crps_ensemble` and may be negative for a single row.
    O(M log M) per row by sorting. Parameters as :func:`crps_ensemble`; returns (N,) scores, lower is better.
    """
    return crps_ensemble_and_fair(y_true, samples)[1]


def crps_ensemble_and_fair(
    y_true: np.ndarray, samples: np.ndarray, *, presorted: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Both :func:`crps_ensemble` and :func:`crps_fair` from one sort (half the time of two calls).

    ``presorted``: the members are already ascending in every row (no sort at all).

    Returns
    -------
    (crps, crps_fair) : two (N,) arrays.
    """
    y, s = _as_obs_samples(y_true, samples)
    abs_mean, pair = _crps_terms(y, s, presorted)
    m = s.shape[1]
    return abs_mean - pair / (m * m), abs_mean - pair / (m * (m - 1))


def empirical_quantiles(samples: np.ndarray, levels: np.ndarray, *, presorted: bool = False) -> np.ndarray:
    r"""Quantiles of each row's members by linear interpolation (Hyndman & Fan type 7).

    With the members sorted, :math:`h = (M-1)\tau`, :math:`j = \lfloor h \rfloor`,
    :math:`\gamma = h - j`:

    .. math:: \hat q_\tau = x_{(j)} + \gamma\,(x_{(j+1)} - x_{(j)})

    (0-based order statistics). The arithmetic mirrors numpy's default
    ``method="linear"``, so the result equals
    ``np.quantile(samples, levels, axis=-1).T`` bit for bit, but each row is
    sorted once for all levels instead of partitioned per call.

    Parameters
    ----------
    samples : (N, M) members, M >= 2.
    levels : (Q,) levels in [0, 1].
    presorted : the members are already ascending in every row (no sort, no (N, M) copy).

    Returns
    -------
    (N, Q) array.
    """
    s = _as_samples(samples)
    check_finite(s, "samples")
    tau = as_float_array(levels, "levels")
    check_finite(tau, "levels")
    if tau.size and not ((tau >= 0).all() and (tau <= 1).all()):
        raise InputError(f"quantile levels must be within [0, 1], got {tau.tolist()}")
    m = s.shape[1]
    xs = s if presorted else np.sort(s, axis=-1)  # presorted: members ascending in every row already
    h = (m - 1) * tau
    prev = np.floor(h)
    gamma = h - prev
    j = prev.astype(np.intp)
    top = h >= m - 1
    j[top] = m - 1
    k = np.where(top, m - 1, j + 1)
    return lerp(xs[:, j], xs[:, k], gamma)


def _below_ties(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Members below each target and equal to it, counted in blocks of rows (block-sized temporaries)."""
    below = np.empty(s.shape[0], dtype=np.intp)
    ties = np.empty(s.shape[0], dtype=np.intp)
    for rows in _row_blocks(s):
        part, yc = s[rows], y[rows, None]
        below[rows] = np.count_nonzero(part < yc, axis=1)
        ties[rows] = np.count_nonzero(part == yc, axis=1)
    return below, ties


def pit_bounds_samples(y_true: np.ndarray, samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The interval in which the randomised PIT of each target among its M members lies.

    With :math:`\ell` members below y and :math:`t` equal to it, the target's rank among the M + 1 values
    is uniform on :math:`\{\ell, \dots, \ell + t\}` when target and members are exchangeable (a calibrated
    ensemble), so the randomised PIT :math:`U = (\text{rank} + V)/(M + 1)`, :math:`V \sim U(0, 1)`, is
    uniform on (0, 1) and, given the counts, uniform on

    .. math:: \left[\frac{\ell}{M + 1},\ \frac{\ell + t + 1}{M + 1}\right]

    (Hamill 2001's rank histogram with ties broken at random; the calibration tests' randomised PIT of an
    ensemble), counted in blocks of rows. Parameters as
    :func:`pit_samples`.

    Returns
    -------
    (low, high) : two (N,) arrays, ``0 <= low < high <= 1``.
    """
    y, s = _as_obs_samples(y_true, samples)
    _raise_if_not_finite(y, s)
    below, ties = _below_ties(y, s)
    m1 = s.shape[1] + 1.0
    return below / m1, (below + ties + 1.0) / m1


def pit_samples(y_true: np.ndarray, samples: np.ndarray) -> np.ndarray:
    r"""Probability integral transform of y under each row's empirical CDF.

    Ties take the mid-point of the jump of the step CDF (deterministic):

    .. math:: u = \frac{\#\{i : x_i < y\} + \tfrac12\,\#\{i : x_i = y\}}{M}

    so ``u`` lies in :math:`\{0, \tfrac{1}{2M}, \tfrac1M, \dots, 1\}`; a y below
    every member gives 0, above every member 1. For large M and continuous data
    this is the usual rank histogram scaled to [0, 1] (Hamill 2001).

    Parameters
    ----------
    y_true : (N,) observations.
    samples : (N, M) members, M >= 2.

    Returns
    -------
    (N,) array in [0, 1].
    """
    y, s = _as_obs_samples(y_true, samples)
    _raise_if_not_finite(y, s)
    below, ties = _below_ties(y, s)
    return (below + 0.5 * ties) / s.shape[1]


def ensemble_mean_std(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean and standard deviation of each row's members.

    .. math:: \bar x = \frac1M \sum_i x_i, \qquad
              s = \sqrt{\frac{1}{M-1} \sum_i (x_i - \bar x)^2}

    The std uses ``ddof=1`` (unbiased variance), the usual spread of a
    Gaussian approximation of an ensemble (Lakshminarayanan et al. 2017 use the
    mixture variance; for draws, the sample variance).

    Parameters
    ----------
    samples : (N, M) members, M >= 2.

    Returns
    -------
    (mean, std) : two (N,) arrays.
    """
    s = _as_samples(samples)
    check_finite(s, "samples")
    n = s.shape[0]
    mean, std = np.empty(n), np.empty(n)
    for rows in _row_blocks(s):  # the (x - mean) temporaries stay block-sized
        part = s[rows]
        mean[rows] = part.mean(axis=-1)
        std[rows] = part.std(axis=-1, ddof=1)
    return mean, std
