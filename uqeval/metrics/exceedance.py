r"""Threshold exceedance: the event :math:`Y > t` forecast by a regression model.

The event probability :math:`p = P(Y > t) = 1 - F(t)` comes from the predictive distribution:

* Gaussian: :math:`p = 1 - \Phi((t - \mu)/\sigma) = \Phi((\mu - t)/\sigma)` (``ndtr``, no
  cancellation in the upper tail);
* samples: the share of members above ``t``;
* quantiles (and intervals, as the quantiles at their ends): the CDF interpolated linearly between
  the points :math:`(q_j, \tau_j)`; outside the outermost quantiles the CDF stays at the outermost
  level (:math:`F(t) = \tau_1` below :math:`q_1`, :math:`\tau_Q` above :math:`q_Q`): the forecast says
  nothing about its tails beyond them, so no tail shape is invented (tied quantiles: the highest level);
* a point forecast: the degenerate distribution at the prediction, :math:`p = 1\{\hat y > t\}`.

Scores per row, with :math:`o = 1\{y > t\}`: the Brier score :math:`(p - o)^2` (Brier 1950), and the
CRPS of the event forecast, i.e. of the Bernoulli(p) distribution at ``o``:
:math:`\int (F_p(z) - 1\{o \le z\})^2 dz = (p - o)^2`, which *equals* the Brier score (Gneiting &
Raftery 2007, Section 4.2; Hersbach 2000: the CRPS is the Brier score integrated over all thresholds,
so at a single threshold it is that threshold's Brier score). For the CRPS weighted on the tail
above ``t`` see :mod:`uqeval.metrics.weighted`.
"""

from __future__ import annotations

import numpy as np

from .normal import ndtr


def exceedance_gaussian(mean, std, t: float) -> np.ndarray:
    """:math:`P(Y > t)` of Gaussian forecasts, per row."""
    return ndtr((np.asarray(mean, dtype=np.float64) - t) / np.asarray(std, dtype=np.float64))


def exceedance_samples(samples, t: float) -> np.ndarray:
    """Share of members above ``t`` per row (NaN members, as in ragged ensembles, are not counted)."""
    s = np.asarray(samples, dtype=np.float64)
    finite = np.isfinite(s)
    return (s > t).sum(axis=-1) / finite.sum(axis=-1)


def exceedance_point(point, t: float) -> np.ndarray:
    """:math:`1\\{\\hat y > t\\}`: a point forecast as a degenerate distribution."""
    return (np.asarray(point, dtype=np.float64) > t).astype(np.float64)


def exceedance_quantiles(quantiles, levels, t: float) -> np.ndarray:
    r""":math:`1 - F(t)` with F linear between the points :math:`(q_j, \tau_j)` of each row and flat outside.

    ``quantiles`` (N, Q) non-decreasing along the row at increasing ``levels`` (Q,). Vectorised: the
    segment of each row is found by counting the quantiles <= t (O(N Q)).
    """
    q = np.asarray(quantiles, dtype=np.float64)
    tau = np.asarray(levels, dtype=np.float64)
    n, m = q.shape
    k = (q <= t).sum(axis=1)  # q[k-1] <= t < q[k]
    rows = np.arange(n)
    lo_i = np.clip(k - 1, 0, m - 1)
    hi_i = np.clip(k, 0, m - 1)
    q_lo, q_hi = q[rows, lo_i], q[rows, hi_i]
    width = q_hi - q_lo
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(width > 0, (t - q_lo) / width, 0.0)
    cdf = tau[lo_i] + frac * (tau[hi_i] - tau[lo_i])
    cdf = np.where(k == 0, tau[0], np.where(k == m, tau[-1], cdf))
    return 1.0 - cdf


def exceedance_scores(y_true, p, t: float) -> dict[str, np.ndarray]:
    """Per-row ``brier`` :math:`(p - 1\\{y > t\\})^2` and ``crps`` (the same number, see the module docstring)."""
    o = (np.asarray(y_true, dtype=np.float64) > t).astype(np.float64)
    brier = (np.asarray(p, dtype=np.float64) - o) ** 2
    return {"brier": brier, "crps": brier}
