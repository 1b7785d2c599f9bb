r"""Isotonic recalibration of Gaussian forecasts (Kuleshov, Fenner & Ermon 2018).

The recalibration map :math:`R : [0, 1] \to [0, 1]` sends an expected proportion
:math:`p` to the observed proportion of calibration rows whose PIT is at most
:math:`p`, in the conventional quantile direction:

.. math:: u_i = \Phi\Big(\frac{y_i - \mu_i}{\sigma_i}\Big), \qquad
          R(p) = \frac1N \#\{i : u_i \le p\},

fitted by isotonic regression (``scipy.optimize.isotonic_regression``) on knots
:math:`p_k` and linearly interpolated between them. The recalibrated forecast has cdf
:math:`R(F_i(y))`, so its :math:`q`-quantile is

.. math:: \mu_i + \sigma_i\,\Phi^{-1}\big(R^{-1}(q)\big).

Knots: ``num_bins + 1`` evenly spaced levels in [0, 1] merged with the empirical
quantiles of the PIT at the same levels, so the map is resolved where the data are
(e.g. a PIT piled up near 1), and the state stays small (≤ 2·(num_bins + 1) knots).
:math:`R(0) = 0` and :math:`R(1) = 1` are imposed (a recalibrated cdf must run from 0
to 1). Observed proportions of nested events never decrease, so the isotonic fit
changes nothing on these knots; it guarantees the monotone map the inversion needs.

Differences from the Uncertainty Toolbox (0.1.1): its ``prop_type="quantile"`` curve
tests :math:`(\mu - y)/\sigma \le \Phi^{-1}(p)` (the share *above* the quantile, a
mirrored curve) and its ``get_quantile_recalibrator`` feeds that map into the forward
direction, so its recalibrated quantiles do not cover their level. Its default
recalibrator fits central intervals instead (``prop_type="interval"``). Here the map is
the quantile map above, inverted explicitly; central intervals use the
:math:`(1 \mp q)/2` quantiles.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

from ..errors import InputError
from ..metrics.blocks import rowwise
from ..metrics.intervals import bound_levels
from ..metrics.normal import central_z, ndtri
from ..metrics.reliability import gaussian_pit
from ..metrics.scoring import _gaussian_arrays
from ..validation import (
    as_float_array,
    check_level,
    finite_arrays,
)

MIN_ROWS = 2
# keep inverted levels strictly inside (0, 1) so that quantiles stay finite
_P_LO = float(np.finfo(np.float64).tiny)
_P_HI = float(np.nextafter(1.0, 0.0))


def fit_isotonic(
    y_true: np.ndarray, mean: np.ndarray, std: np.ndarray, *, num_bins: int = 100
) -> dict[str, Any]:
    """Fit the isotonic recalibration map on a calibration split.

    Parameters
    ----------
    y_true, mean, std : (N,) arrays
    num_bins : resolution of the knot grid (see module docstring)

    Returns
    -------
    dict, JSON-serialisable: ``method`` (``"isotonic"``), ``direction``
    (``"quantile"``: observed = share of PIT ≤ p), ``expected`` and ``observed`` (the
    knots :math:`p_k` and :math:`R(p_k)`, equal-length lists, ``expected`` strictly
    increasing from 0 to 1), ``n_rows``, ``num_bins``.
    """
    if isinstance(num_bins, bool) or int(num_bins) != num_bins or num_bins < 2:
        raise InputError(f"num_bins must be an integer >= 2, got {num_bins!r}")
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    n = y.size
    if n < MIN_ROWS:
        raise InputError(f"too few rows for isotonic recalibration: got {n}, need at least {MIN_ROWS}")
    pit = rowwise(gaussian_pit, y, mu, sd)  # no full-size temporaries
    grid = np.linspace(0.0, 1.0, int(num_bins) + 1)
    # quantiles first, partitioning pit in place (they depend on its values only, not their order), then sorted
    x = np.unique(np.concatenate([grid, np.quantile(pit, grid, overwrite_input=True)]))
    pit.sort()
    observed = np.searchsorted(pit, x, side="right") / n
    observed = np.clip(isotonic_regression(observed).x, 0.0, 1.0)
    observed[0], observed[-1] = 0.0, 1.0  # x[0] = 0, x[-1] = 1
    return {
        "method": "isotonic",
        "direction": "quantile",
        "expected": x.tolist(),
        "observed": observed.tolist(),
        "n_rows": int(n),
        "num_bins": int(num_bins),
    }


def _knots(state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    try:
        x = np.asarray(state["expected"], dtype=np.float64)
        r = np.asarray(state["observed"], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        raise InputError(
            "the isotonic state needs numeric 'expected' and 'observed' knot lists; refit it or pass an unmodified saved file"
        ) from None
    ok = (
        x.ndim == 1
        and x.shape == r.shape
        and x.size >= 2
        and np.all(np.isfinite(x))
        and np.all(np.isfinite(r))
        and x[0] == 0.0
        and x[-1] == 1.0
        and np.all(np.diff(x) > 0)
        and r[0] == 0.0
        and r[-1] == 1.0
        and np.all(np.diff(r) >= 0)
    )
    if not ok:
        raise InputError(
            "the isotonic state's knots are invalid (need 'expected' strictly increasing from 0 to 1 and "
            "'observed' non-decreasing from 0 to 1, of equal length)"
        )
    return x, r


def _levels(levels) -> np.ndarray:
    q = np.atleast_1d(as_float_array(levels, "levels", ndim=(0, 1)))
    for v in q:
        check_level(v, "levels")
    return q


def _inverse(x: np.ndarray, r: np.ndarray, q: np.ndarray) -> np.ndarray:
    r"""Model level :math:`p` with :math:`R(p) = q` for a piecewise-linear non-decreasing R.

    Where R is flat at height q the preimage is an interval; its midpoint is returned
    (the mean of :math:`\inf\{p: R(p) \ge q\}` and :math:`\sup\{p: R(p) \le q\}`).
    """

    def along(j: np.ndarray) -> np.ndarray:
        j = np.clip(j, 1, x.size - 1)
        x0, x1, r0, r1 = x[j - 1], x[j], r[j - 1], r[j]
        dr = r1 - r0
        t = np.divide(q - r0, dr, out=np.zeros_like(q), where=dr > 0)
        return x0 + np.clip(t, 0.0, 1.0) * (x1 - x0)

    lower = along(np.searchsorted(r, q, side="left"))  # first knot with r >= q
    upper = along(np.searchsorted(r, q, side="right"))  # first knot with r > q
    return np.clip(0.5 * (lower + upper), _P_LO, _P_HI)


def _gaussian(mean, std) -> tuple[np.ndarray, np.ndarray]:
    mu, sd = finite_arrays(mean=mean, std=std, positive=("std",))
    return mu, sd


def isotonic_quantiles(state: dict[str, Any], mean: np.ndarray, std: np.ndarray, levels) -> np.ndarray:
    r"""Recalibrated quantiles :math:`\mu_i + \sigma_i\Phi^{-1}(R^{-1}(q_k))`.

    Parameters
    ----------
    state : output of :func:`fit_isotonic`
    mean, std : (N,) arrays of the Gaussian forecasts to recalibrate
    levels : (Q,) quantile levels in (0, 1) (a scalar counts as one level)

    Returns
    -------
    (N, Q) array (column-major: each level's column is contiguous).
    """
    x, r = _knots(state)
    q = _levels(levels)
    mu, sd = _gaussian(mean, std)
    z = ndtri(_inverse(x, r, q))
    # level by level into the result (no (N, Q) temporary); stored level-major, so each column is contiguous
    out = np.empty((q.size, mu.size)).T
    for j in range(q.size):  # levels, not rows
        col = np.multiply(sd, z[j], out=out[:, j])
        col += mu  # sd * z + mu: the bits of mu + sd * z
    return out


def isotonic_intervals(
    state: dict[str, Any], mean: np.ndarray, std: np.ndarray, levels
) -> tuple[np.ndarray, np.ndarray]:
    r"""Recalibrated central intervals: the :math:`(1-c)/2` and :math:`(1+c)/2` recalibrated quantiles.

    Parameters
    ----------
    state : output of :func:`fit_isotonic`
    mean, std : (N,) arrays
    levels : (L,) central coverage levels in (0, 1)

    Returns
    -------
    lower, upper : two (N, L) arrays.
    """
    c = _levels(levels)
    bounds = isotonic_quantiles(state, mean, std, bound_levels(c))
    return bounds[:, : c.size], bounds[:, c.size :]


def isotonic_equivalent_std(state: dict[str, Any], levels) -> dict[float, float]:
    r"""Factor on :math:`\sigma` giving a central Gaussian interval as wide as the recalibrated one.

    .. math:: k_c = \frac{\Phi^{-1}(R^{-1}(\tfrac{1+c}2)) - \Phi^{-1}(R^{-1}(\tfrac{1-c}2))}
                         {2\,\Phi^{-1}(\tfrac{1+c}2)}

    The width matches exactly; the recalibrated interval may also be shifted (R can
    correct a bias, a factor on σ cannot). Returns ``{level: factor}``.
    """
    x, r = _knots(state)
    c = _levels(levels)
    lo = ndtri(_inverse(x, r, (1.0 - c) / 2.0))
    hi = ndtri(_inverse(x, r, (1.0 + c) / 2.0))
    k = (hi - lo) / (2.0 * central_z(c))
    return {float(level): float(v) for level, v in zip(c, k)}


def isotonic_cdf(state: dict[str, Any], y_true: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    r"""Recalibrated PIT :math:`R(\Phi((y_i - \mu_i)/\sigma_i))` of each row, in [0, 1].

    Uniform on held-out rows when the recalibration works; feed it to
    :func:`uqeval.metrics.reliability.max_calibration_error` to score it.
    """
    x, r = _knots(state)
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    return rowwise(lambda y, mu, sd: np.interp(gaussian_pit(y, mu, sd), x, r), y, mu, sd)
