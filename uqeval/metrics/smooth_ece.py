"""Smooth ECE (Błasiok & Nakkiran 2023) and its smooth reliability diagram.

The residuals ``r_i = f_i − y_i`` are kernel-smoothed over the predictions ``f`` with a Gaussian
kernel reflected at 0 and 1; smECE_σ = ∫ |r̂_σ(t)| δ̂_σ(t) dt / ∫ δ̂_σ(t) dt, the smoothed residual
weighted by the smoothed density of the predictions. The bandwidth σ* is the fixed point
σ = smECE_σ (found by bisection), which makes smECE a consistent calibration measure.

This follows ``relplot`` 1.0.3 (``relplot.smECE``, its default ``ReflectedGaussianKernel``) step for
step: rows are split linearly onto a grid of ``max(2000, round(20/σ)) // 2 + 1`` points, convolved
with the sampled kernel (here by FFT, O(grid log grid), where relplot convolves directly), read off
by linear interpolation at ``max(round(10/σ), 200)`` points, with the same 1e-4 added to the density,
and the same bisection (start at σ = 1, then 10 halvings of [0, 1], keeping the last σ that fails
``σ < smECE_σ``). O(N + grid log grid) per bandwidth.
"""

from __future__ import annotations

import numpy as np

#: relplot.config.smECE_mesh_pts
MESH_POINTS = 200
_DENSITY_EPS = 1e-4  # relplot BaseKernelMixin.smooth(eps=0.0001)


def _to_grid(f: np.ndarray, values: tuple[np.ndarray, ...], points: int) -> list[np.ndarray]:
    """Each row's weight (of each of ``values``) split linearly between its two neighbouring grid points
    (relplot's ``smooth_round_to_grid``); the grid positions of ``f`` computed once."""
    pos = f * (points - 1)
    bins = pos.astype(np.int64).clip(0, points - 2)
    frac = pos - bins
    return [
        np.bincount(bins, weights=(1 - frac) * w, minlength=points)
        + np.bincount(bins + 1, weights=frac * w, minlength=points)
        for w in values
    ]


def _convolve_valid(a: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``np.convolve(a, k, "valid")`` by FFT (``len(a) >= len(k)``). numpy's FFT, not ``scipy.signal``: that
    import alone costs ~0.7 s, the longest part of ``--diagnostics`` start-up on a classifier (issue 31)."""
    n = len(a) + len(k) - 1
    size = 1 << (n - 1).bit_length()  # a power of two >= n: no wrap-around, and a fast length
    full = np.fft.irfft(np.fft.rfft(a, size) * np.fft.rfft(k, size), size)
    return full[len(k) - 1 : len(a)]


def _smooth(f: np.ndarray, values: tuple[np.ndarray, ...], sigma: float, t: np.ndarray) -> list[np.ndarray]:
    """Reflected-Gaussian kernel sums of each of ``values`` (per-row weights) at ``f``, evaluated at ``t``."""
    points = max(2000, round(20 / sigma)) // 2 + 1
    grid = np.linspace(0.0, 1.0, points)
    ker = np.exp(-np.square(grid - 0.5) / (2 * sigma * sigma)) / (np.sqrt(2 * np.pi) * sigma)
    # linear interpolation of the grid values at t (relplot's ``interpolate``)
    inds = (t * (points - 1)).astype(np.int64).clip(0, points - 2)
    frac = (t - inds / (points - 1)) * (points - 1)
    out = []
    for gridded in _to_grid(f, values, points):
        ext = np.concatenate([gridded[::-1][:-1], gridded, gridded[::-1][1:]])  # reflect at 0 and 1
        smoothed = _convolve_valid(ext, ker)[points // 2 : points // 2 + points]
        out.append(smoothed[inds] * (1 - frac) + smoothed[inds + 1] * frac)
    return out


def _row_terms(f: np.ndarray, y: np.ndarray, weights) -> tuple[np.ndarray, np.ndarray]:
    """``(w, r)``: each row's kernel weight in rows and its weighted residual ``w (f - y)``."""
    if weights is None:
        return np.ones_like(f), f - y
    from .rowweights import row_units

    w = row_units(weights)
    return w, w * (f - y)


def _smece(f: np.ndarray, w: np.ndarray, r: np.ndarray, sigma: float) -> float:
    t = np.linspace(0.0, 1.0, max(round(10 / sigma), MESH_POINTS))
    dens, resid = _smooth(f, (w, r), sigma, t)
    dens = dens + _DENSITY_EPS
    resid = resid / dens
    return float(np.sum(np.abs(resid) * dens) / np.sum(dens))


def smooth_ece(f, y, eps: float = 0.001, weights=None) -> dict[str, float]:
    r"""Smooth ECE with its automatic bandwidth (Błasiok & Nakkiran 2023, relplot's ``smECE``).

    σ* is the fixed point of σ = smECE_σ (smECE_σ decreases in σ): σ = 1 if smECE_1 ≥ 1, else 10
    bisection steps on [0, 1] keep the lower end σ with σ ≥ smECE_σ (or σ ≥ ``eps``).

    Parameters
    ----------
    f : (N,) predicted probabilities of the event in [0, 1].
    y : (N,) 0/1 outcomes.
    weights : (N,) row weights, optional (:func:`smece_at`).

    Returns
    -------
    ``{"smece": smECE_{σ*}, "bandwidth": σ*}``.

    References
    ----------
    Błasiok & Nakkiran (2023), "Smooth ECE: Principled Reliability Diagrams via Kernel Smoothing",
    arXiv:2309.12236; relplot (Apple).
    """
    f = np.asarray(f, dtype=np.float64)
    w, r = _row_terms(f, np.asarray(y, dtype=np.float64), weights)  # (once for the 12 bandwidths)

    def fails(sigma: float) -> bool:  # relplot's check_smooth_ece
        return sigma < eps or sigma < _smece(f, w, r, sigma)

    sigma = 1.0
    if not fails(sigma):
        start, end = 1.0, 0.0
        for _ in range(10):
            mid = (start + end) / 2
            if fails(mid):
                end = mid
            else:
                start = mid
        sigma = start
    return {"smece": _smece(f, w, r, sigma), "bandwidth": sigma}


def smooth_reliability_curve(f, y, sigma: float, points: int = MESH_POINTS) -> dict[str, np.ndarray]:
    """The smooth reliability diagram at bandwidth σ: the kernel-smoothed outcome E[y | f ≈ t] and the
    density of the predictions on t = linspace(0, 1, points) (relplot's ``prepare_rel_diagram`` main line,
    without its bootstrap band)."""
    f = np.asarray(f, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    t = np.linspace(0.0, 1.0, points)
    dens, outcome = _smooth(f, (np.ones_like(f), y), sigma, t)
    dens = dens + _DENSITY_EPS
    return {"t": t, "mu": outcome / dens, "density": dens / f.size}
