r"""Proper scores of multivariate ensemble forecasts: the energy score and the variogram score.

A forecast of row :math:`i` is an ensemble of :math:`M` members :math:`x_1, \dots, x_M \in \mathbb{R}^d`,
its outcome :math:`y \in \mathbb{R}^d`. Arrays: ``y_true`` (N, d), ``samples`` (N, M, d) (members on
the middle axis, components last, as scoringrules' ``es_ensemble(obs, fct, m_axis=-2, v_axis=-1)``).

Complexity: the energy score's member term needs every pair of members, O(N M^2 d) time; it is
computed over blocks of rows sized so that one block's (rows, M(M-1)/2) pairwise distances stay under
:data:`BLOCK_ELEMENTS` floats (a loop over blocks, not rows; about 1 s for N = 10^4, M = 50, d = 3). For d = 1 the energy score is the
sample CRPS and is computed from one sort per row, O(N M log M). The variogram score needs the
(d, d) variogram of every member, O(N M d^2) time, also blocked.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..validation import as_float_array

#: floats one block of rows holds in the pairwise terms (2 MB of float64: blocks that stay in cache
#: run 3-5x faster than one large block)
BLOCK_ELEMENTS = 1 << 18


def _inputs(y_true, samples) -> tuple[np.ndarray, np.ndarray]:
    y = as_float_array(y_true, "y_true", ndim=2)
    x = as_float_array(samples, "samples", ndim=3)
    if x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]:
        raise InputError(
            f"samples have shape {x.shape} (rows, members, components) but y_true has {y.shape} "
            "(rows, components); they must agree in rows and components"
        )
    if x.shape[1] < 1:
        raise InputError("samples need at least 1 member per row")
    return y, x


def _blocks(n: int, per_row: int):
    step = max(1, BLOCK_ELEMENTS // max(per_row, 1))
    for start in range(0, n, step):
        yield slice(start, min(n, start + step))


def energy_score(y_true: np.ndarray, samples: np.ndarray) -> np.ndarray:
    r"""Energy score of each row (Gneiting & Raftery 2007, eq. 22, with :math:`\beta = 1`).

    .. math::
        \mathrm{ES}(F, y) = \frac{1}{M}\sum_{j=1}^{M} \lVert x_j - y \rVert
        - \frac{1}{2M^2} \sum_{j=1}^{M}\sum_{k=1}^{M} \lVert x_j - x_k \rVert

    (Euclidean norm; the member term divided by :math:`2M^2`, the energy score of the empirical
    distribution of the members, scoringrules' ``estimator="nrg"``). For d = 1 it is the sample
    CRPS (:func:`uqeval.metrics.samples.crps_ensemble`), computed from one sort per row.

    Parameters
    ----------
    y_true : (N, d) outcomes.
    samples : (N, M, d) members.

    Returns
    -------
    (N,) energy scores.

    Examples
    --------
    >>> float(energy_score(np.zeros((1, 2)), np.array([[[3.0, 4.0], [3.0, 4.0]]]))[0])
    5.0
    """
    y, x = _inputs(y_true, samples)
    n, m, d = x.shape
    if d == 1:  # fast path: the sample CRPS, O(M log M) per row
        from .samples import crps_ensemble

        return crps_ensemble(y[:, 0], x[:, :, 0]) if m >= 2 else np.abs(x[:, 0, 0] - y[:, 0])
    return _energy_pairs(y, x)


def _energy_pairs(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The energy score from every pair of members, O(N M^2 d), over blocks of rows (any d).

    Only the M(M-1)/2 pairs j < k are formed (the sum over all ordered pairs is twice theirs), one
    component at a time, so a block holds (rows, M(M-1)/2) squared distances and never a 4-d array.
    """
    n, m, d = x.shape
    j, k = np.triu_indices(m, 1)
    out = np.empty(n)
    for rows in _blocks(n, max(j.size, m)):  # bounded memory: one block of rows at a time
        xb, yb = x[rows], y[rows]
        sq = np.zeros((xb.shape[0], j.size))
        obs = np.zeros((xb.shape[0], m))
        for c in range(d):  # a loop over components, not rows
            xc = xb[:, :, c]
            diff = xc[:, j] - xc[:, k]
            sq += diff * diff
            dev = xc - yb[:, c, None]
            obs += dev * dev
        out[rows] = np.sqrt(obs).mean(axis=1) - np.sqrt(sq).sum(axis=1) / (m * m)
    return out


def variogram_score(
    y_true: np.ndarray, samples: np.ndarray, p: float = 0.5, weights: np.ndarray | None = None
) -> np.ndarray:
    r"""Variogram score of order ``p`` of each row (Scheuerer & Hamill 2015, eq. 4).

    .. math::
        \mathrm{VS}_p(F, y) = \sum_{i=1}^{d}\sum_{j=1}^{d} w_{ij}
        \Big( |y_i - y_j|^p - \frac{1}{M}\sum_{m=1}^{M} |x_{m,i} - x_{m,j}|^p \Big)^2

    over all ordered pairs (each unordered pair counted twice, the diagonal is 0), unit weights
    by default, as scoringrules' ``vs_ensemble`` (``estimator="nrg"``).

    Parameters
    ----------
    y_true : (N, d) outcomes.
    samples : (N, M, d) members.
    p : order of the variogram (> 0).
    weights : (d, d) non-negative weights, default all ones.

    Returns
    -------
    (N,) variogram scores.

    Examples
    --------
    >>> float(variogram_score(np.array([[0.0, 4.0]]), np.array([[[0.0, 1.0], [0.0, 1.0]]]))[0])
    2.0
    """
    y, x = _inputs(y_true, samples)
    n, m, d = x.shape
    if not p > 0:
        raise InputError(f"the variogram order p must be > 0, got {p!r}")
    w = np.ones((d, d)) if weights is None else as_float_array(weights, "weights", ndim=2)
    if w.shape != (d, d):
        raise InputError(f"variogram weights must be ({d}, {d}), got {w.shape}")
    out = np.empty(n)
    for rows in _blocks(n, (m + 1) * d * d):  # bounded memory: one block of rows at a time
        xb, yb = x[rows], y[rows]
        vx = (np.abs(xb[:, :, :, None] - xb[:, :, None, :]) ** p).mean(axis=1)  # (rows, d, d)
        vy = np.abs(yb[:, :, None] - yb[:, None, :]) ** p
        out[rows] = (w * (vy - vx) ** 2).sum(axis=(1, 2))
    return out


def average_ranks(y_true: np.ndarray, samples: np.ndarray, seed: int = 0) -> np.ndarray:
    r"""Average rank of each row's outcome among its ensemble (Thorarinsdottir, Scheuerer & Heinz 2016).

    Pool the outcome and the :math:`M` members, :math:`z_0 = y, z_1 = x_1, \dots, z_M = x_M`. The pre-rank of
    :math:`z_j` is the mean over the :math:`d` components of its univariate rank among the pool,
    :math:`\rho_j = \frac1d \sum_k \operatorname{rank}(z_{j,k} \mid z_{0,k}, \dots, z_{M,k})` (ties: mean
    ranks); the multivariate rank of the outcome is its place among the pre-ranks,
    :math:`r = \#\{j \ge 1: \rho_j < \rho_0\} + U`, with :math:`U` uniform on
    :math:`\{0, \dots, \#\{j \ge 1: \rho_j = \rho_0\}\}` (ties broken at random, seeded). Under
    calibration (outcome and members exchangeable) :math:`r` is uniform on :math:`\{0, \dots, M\}`, so the
    histogram of ``r`` is read as a rank histogram: a U shape is an underdispersed ensemble, a hump an
    overdispersed one, a slope a bias. For ``d = 1`` it is the univariate rank. One sort per row and
    component, O(N M log M d) (``scipy.stats.rankdata`` along the pool axis).

    Returns
    -------
    (N,) integer ranks in ``0..M``.
    """
    from scipy.stats import rankdata

    y, x = _inputs(y_true, samples)
    pool = np.concatenate([y[:, None, :], x], axis=1)  # (N, M + 1, d), the outcome first
    # sums of mean ranks are multiples of 1/2, exact in floating point: ties are found exactly
    pre = rankdata(pool, method="average", axis=1).sum(axis=2)
    below = (pre[:, 1:] < pre[:, :1]).sum(axis=1)
    ties = (pre[:, 1:] == pre[:, :1]).sum(axis=1)
    u = np.random.default_rng(seed).random(y.shape[0])
    return below + np.floor(u * (ties + 1)).astype(np.int64)
