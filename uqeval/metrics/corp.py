"""CORP score decompositions and reliability diagrams (Dimitriadis, Gneiting & Jordan, PNAS 2021).

CORP: *Consistent, Optimally binned, Reproducible, PAV-based*. The forecast ``x`` is recalibrated
by isotonic regression of the outcome on ``x`` (the pool-adjacent-violators algorithm, PAV), giving
``x̂``; with ``r`` the unconditional forecast (the mean of the outcomes, or their τ-quantile) the mean
score of any consistent scoring function S splits exactly into

.. math:: \\bar S(x) = \\underbrace{\\bar S(x) - \\bar S(\\hat x)}_{\\mathrm{MCB}}
          - \\underbrace{(\\bar S(r) - \\bar S(\\hat x))}_{\\mathrm{DSC}} + \\underbrace{\\bar S(r)}_{\\mathrm{UNC}}.

Equal forecasts are pooled before the PAV, so equal ``x`` always get equal ``x̂`` (as
``sklearn.isotonic.IsotonicRegression``, which ``model-diagnostics``' ``decompose`` uses for the mean).
The quantile version (Gneiting et al. 2023) recalibrates by isotonic quantile regression.
"""

from __future__ import annotations

import numpy as np

from .rowweights import row_units

_EPS = float(np.finfo(np.float64).eps)


def _pooled(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(order, unique x, group index of each sorted row)`` of a forecast."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    start = np.r_[True, xs[1:] != xs[:-1]]
    return order, xs[start], np.cumsum(start) - 1


def isotonic_mean(x, y, weights=None) -> np.ndarray:
    """PAV recalibration: the isotonic (non-decreasing in ``x``) least-squares fit of ``y``, per row.

    Rows with equal ``x`` are pooled first (their mean outcome, weighted by their count), so they
    share one fitted value. O(N log N): a sort, then scipy's linear-time PAV. ``weights`` (N,): the weighted
    least-squares fit (a pool's weight is the sum of its rows' weights; scikit-learn's
    ``IsotonicRegression(sample_weight=)``).
    """
    from scipy.optimize import isotonic_regression

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    order, _, group = _pooled(x)
    if weights is None:
        counts = np.bincount(group).astype(np.float64)
        means = np.bincount(group, weights=y[order]) / counts
    else:
        w = np.asarray(weights, dtype=np.float64)[order]
        counts = np.asarray(np.bincount(group, weights=w), dtype=np.float64)
        means = np.bincount(group, weights=w * y[order]) / counts
    fitted = isotonic_regression(means, weights=counts, increasing=True).x
    out = np.empty_like(y)
    out[order] = fitted[group]
    return out


def _mean(values: np.ndarray, weights: np.ndarray | None) -> float:
    # (one pass, no BLAS thread: numpy.average multiplies into a new array and sums twice)
    return float(np.mean(values) if weights is None else np.einsum("i,i->", values, weights) / weights.sum())


def _decompose(
    score,
    x: np.ndarray,
    recal: np.ndarray,
    ref: float | np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None = None,
) -> dict[str, float]:
    s_x, s_hat, s_ref = (_mean(score(z, y), weights) for z in (x, recal, ref))
    return {"mcb": s_x - s_hat, "dsc": s_ref - s_hat, "unc": s_ref}


def brier_score(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.square(p - y)


def log_score(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """−y log p − (1−y) log(1−p), with 0·log 0 = 0 (scipy's ``xlogy``) as model-diagnostics' LogLoss."""
    from scipy.special import xlogy

    return -xlogy(y, p) - xlogy(1.0 - y, 1.0 - p)


def corp_binary(proba, outcome, weights=None) -> dict[str, dict[str, float]]:
    r"""CORP decomposition of the Brier and the log score of probabilities of a binary event.

    .. math:: S = \mathrm{MCB} - \mathrm{DSC} + \mathrm{UNC}, \quad
              \mathrm{MCB} = \bar S(p) - \bar S(\hat p),\ \mathrm{DSC} = \bar S(\bar y) - \bar S(\hat p),\
              \mathrm{UNC} = \bar S(\bar y)

    with :math:`\hat p` the PAV recalibration of ``proba`` (:func:`isotonic_mean`). Brier:
    :math:`(p-y)^2`; log: :math:`-y\log p-(1-y)\log(1-p)` with :math:`0\log 0 = 0`. A certain forecast
    that failed (0 for an event that happened, 1 for one that did not) is moved to ε or 1 − ε for the
    log score (as ``accuracy.nll`` clips), so it costs a finite 36.04 instead of ∞; every other
    forecast is used as it is. The recalibrated forecast is 0 or 1 only where its block's outcomes agree.

    Parameters
    ----------
    proba : (N,) forecast probabilities of the event.
    outcome : (N,) 0/1 outcomes.
    weights : (N,) row weights, optional: weighted means and the weighted PAV (:func:`isotonic_mean`).

    Returns
    -------
    ``{"brier": {"mcb", "dsc", "unc"}, "log": {...}}``.

    References
    ----------
    Dimitriadis, Gneiting & Jordan (2021), "Stable reliability diagrams for probabilistic
    classifiers", PNAS 118(8), e2016191118.
    """
    p = np.asarray(proba, dtype=np.float64)
    y = np.asarray(outcome, dtype=np.float64)
    recal = isotonic_mean(p, y, weights)
    base = _mean(y, weights)
    return {
        "brier": _decompose(brier_score, p, recal, base, y, weights),
        "log": _decompose(log_score, _finite_log_forecast(p, y), recal, base, y, weights),
    }


def _finite_log_forecast(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``p`` with a certain forecast that failed (p = 0, y = 1 or p = 1, y = 0) moved to ε or 1 − ε, as
    ``accuracy.nll`` clips; every other row keeps its exact value (0 log 0 = 0 where p = y)."""
    return np.where((p <= 0.0) & (y > 0), _EPS, np.where((p >= 1.0) & (y < 1), 1.0 - _EPS, p))


def corp_classification(proba, labels, weights=None) -> dict[str, dict[str, float]]:
    """CORP decompositions of a classifier's probabilities.

    Two classes: ``brier`` and ``log`` of P(class 1) (:func:`corp_binary`). More classes:
    ``brier_top_label``/``log_top_label`` (the top-label confidence as the forecast of "the top
    class is right") and ``brier_ovr``/``log_ovr``, the sums over classes of the one-vs-rest
    decompositions of P(class k) (each term decomposes exactly, so the sums do; ``brier_ovr``'s
    score is the multiclass Brier score Σₖ(pₖ − 1[y=k])², ``accuracy.brier``). ``weights``: as
    :func:`corp_binary`.
    """
    p = np.asarray(proba, dtype=np.float64)
    y = np.asarray(labels, dtype=np.int64)
    if p.shape[1] == 2:
        return corp_binary(p[:, 1], (y == 1).astype(np.float64), weights)
    top = np.argmax(p, axis=1)
    conf = p[np.arange(len(y)), top]
    out = {f"{k}_top_label": v for k, v in corp_binary(conf, (top == y).astype(np.float64), weights).items()}
    ovr = {"brier_ovr": {"mcb": 0.0, "dsc": 0.0, "unc": 0.0}, "log_ovr": {"mcb": 0.0, "dsc": 0.0, "unc": 0.0}}
    for k in range(p.shape[1]):  # a loop over classes, each vectorised over rows
        for name, parts in corp_binary(p[:, k], (y == k).astype(np.float64), weights).items():
            for part, v in parts.items():
                ovr[f"{name}_ovr"][part] += v
    out.update(ovr)
    return out


def corp_mean(y_true, mean, weights=None) -> dict[str, float]:
    r"""CORP decomposition of the squared error of a mean forecast (Gneiting & Resin 2023).

    .. math:: \mathrm{MSE} = \mathrm{MCB} - \mathrm{DSC} + \mathrm{UNC}, \quad \hat m = \mathrm{PAV}(y \mid m),
              \ \mathrm{UNC} = \frac1N\sum_i (y_i - \bar y)^2

    ``weights`` (N,): weighted means and the weighted PAV. Returns ``{"mcb", "dsc", "unc"}``.
    """
    y = np.asarray(y_true, dtype=np.float64)
    m = np.asarray(mean, dtype=np.float64)
    return _decompose(brier_score, m, isotonic_mean(m, y, weights), _mean(y, weights), y, weights)


def pinball_score(q: np.ndarray, y: np.ndarray, tau: float) -> np.ndarray:
    """Pinball loss (1{q ≥ y} − τ)(q − y) (model-diagnostics' ``PinballLoss``; = (1{y < q} − τ)(q − y))."""
    return (np.greater_equal(q, y) - tau) * (q - y)


def isotonic_quantile(x, y, tau: float, weights=None) -> np.ndarray:
    r"""Isotonic τ-quantile regression of ``y`` on ``x``: a non-decreasing θ(x) minimising Σᵢ ρ_τ(yᵢ − θ(xᵢ)).

    Solved by partitioning on thresholds (the level sets of the solution are the solutions of the
    binary problems "θ ≥ η?", which are nested in η; Stout 2008, "Isotonic regression via
    partitioning"): rows sorted by ``x`` form one segment with the candidate values (the distinct
    ``y``); each round splits every segment at the middle candidate η by the best suffix "θ ≥ η"
    (the cut minimising Σ_{suffix} (1{yᵢ < η} − τ), allowed only between distinct ``x``; among equal
    minima the shortest suffix, which gives the smallest solution and keeps the cuts nested), and
    the prefix keeps the candidates below η, the suffix those from η on. Every round is one
    vectorised pass over the rows, and there are ⌈log₂(distinct y)⌉ + 1 rounds: O(N log N).
    Rows with equal ``x`` get one value. Returns θ per row (a τ-quantile of its block of rows, the
    lower one where the quantile is not unique). ``weights`` (N,): minimises Σᵢ wᵢ ρ_τ(yᵢ − θ(xᵢ)) (each
    row's term in the suffix sums weighted, in units of rows: :func:`~uqeval.metrics.rowweights.row_units`).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    order, _, group = _pooled(x)
    if weights is not None:
        w_sorted = row_units(weights)[order]
    values, rank = np.unique(y[order], return_inverse=True)
    group_start = np.r_[True, group[1:] != group[:-1]]
    lo = np.zeros(n, dtype=np.int64)  # candidate index range [lo, hi] of each row's segment
    hi = np.full(n, values.size - 1, dtype=np.int64)
    seg_start = np.r_[True, np.zeros(n - 1, dtype=bool)]  # segments: contiguous runs of sorted rows
    while np.any(lo < hi):
        mid = (lo + hi + 1) // 2
        active = lo < hi
        v = np.where(active, (rank < mid) - tau, 0.0)
        if weights is not None:
            v *= w_sorted
        starts = np.flatnonzero(seg_start)
        ends = np.r_[starts[1:], n]
        rev = np.r_[np.cumsum(v[::-1])[::-1], 0.0]  # rev[i] = sum of v[i:]
        seg = np.cumsum(seg_start) - 1
        suffix = rev[:n] - rev[ends[seg]]  # sum of v from i to the end of i's segment
        # a cut is allowed at the start of a group of equal x; the empty suffix (cut at the end) scores 0
        cand = np.where(group_start, suffix, np.inf)
        best = np.minimum(np.minimum.reduceat(cand, starts), 0.0)
        tol = 1e-9 * (1.0 + np.abs(best))
        # the shortest optimal suffix: the last allowed cut within tolerance of the minimum, else the end
        hit = np.where(group_start & (cand <= best[seg] + tol[seg]), np.arange(n), -1)
        last = np.maximum.reduceat(hit, starts)
        cut = np.where(best > -tol, ends, np.where(last >= 0, last, ends))
        cut = np.where(np.maximum.reduceat(active.astype(np.int64), starts) > 0, cut, ends)
        upper = np.arange(n) >= cut[seg]  # rows in the suffix: θ ≥ η
        lo = np.where(active & upper, mid, lo)
        hi = np.where(active & ~upper, mid - 1, hi)
        split = np.zeros(n, dtype=bool)
        inside = (cut > starts) & (cut < ends)
        split[cut[inside]] = True
        seg_start = seg_start | split
    out = np.empty(n)
    out[order] = values[lo]
    return out


def corp_quantile(y_true, q, tau: float, weights=None) -> dict[str, float]:
    r"""CORP decomposition of the pinball loss of a τ-quantile forecast (Gneiting et al. 2023).

    .. math:: \bar\rho_\tau(q) = \mathrm{MCB} - \mathrm{DSC} + \mathrm{UNC},\quad
              \hat q = \text{isotonic τ-quantile regression of } y \text{ on } q,\ r = \text{τ-quantile of } y

    ``r`` is the lower empirical τ-quantile (numpy ``method="inverted_cdf"``, as model-diagnostics); with
    ``weights`` (N,) the weighted one (the first sorted ``y`` whose cumulative weight in rows reaches τ n), the
    means weighted. Returns ``{"mcb", "dsc", "unc"}``.
    """
    y = np.asarray(y_true, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if weights is None:
        ref = float(np.quantile(y, tau, method="inverted_cdf"))
    else:
        u = row_units(weights)
        order = np.argsort(y, kind="stable")
        cum = np.cumsum(u[order])
        ref = float(y[order][min(int(np.searchsorted(cum, cum[-1] * tau, side="left")), y.size - 1)])
    recal = isotonic_quantile(q, y, tau, weights)
    return _decompose(lambda z, t: pinball_score(z, t, tau), q, recal, ref, y, weights)


def reliability_curve(
    proba, outcome, *, num_resamples: int = 100, level: float = 0.9, seed: int = 0
) -> dict[str, np.ndarray]:
    r"""The CORP reliability diagram of binary probabilities with its consistency band.

    The curve is the PAV-recalibrated probability :math:`\hat p` at each distinct forecast value.
    The consistency band (Dimitriadis et al. 2021, §"Uncertainty quantification") resamples the
    outcomes under the hypothesis of calibration, :math:`y^*_i \sim \mathrm{Bernoulli}(p_i)`,
    recomputes the PAV curve for each of ``num_resamples`` draws and takes the pointwise
    :math:`(1\pm\text{level})/2` quantiles: under calibration the curve lies inside the band at a
    forecast value with probability about ``level``.

    Returns
    -------
    ``{"x": distinct forecasts (sorted), "calibrated": PAV curve, "lower", "upper": band,
    "counts": rows per distinct forecast}``.
    """
    from scipy.optimize import isotonic_regression

    p = np.asarray(proba, dtype=np.float64)
    y = np.asarray(outcome, dtype=np.float64)
    order, ux, group = _pooled(p)
    counts = np.bincount(group).astype(np.float64)
    curve = isotonic_regression(np.bincount(group, weights=y[order]) / counts, weights=counts).x
    rng = np.random.default_rng(seed)
    ps = p[order]
    # one draw and one PAV per resample (a loop over resamples, not rows; memory O(N), not O(B N))
    band = np.stack(
        [
            isotonic_regression(
                np.bincount(group, weights=(rng.random(ps.size) < ps).astype(np.float64), minlength=ux.size)
                / counts,
                weights=counts,
            ).x
            for _ in range(num_resamples)
        ]
    )
    lo, hi = np.quantile(band, [(1 - level) / 2, (1 + level) / 2], axis=0)
    return {"x": ux, "calibrated": curve, "lower": lo, "upper": hi, "counts": counts}
