r"""Statistics for comparing models evaluated on the same targets.

Pure numpy/scipy kernels behind ``uqeval compare``:

- :func:`bootstrap_ci` / :func:`bootstrap_stat` / :func:`bootstrap_samples`:
  percentile bootstrap over rows (Efron & Tibshirani 1993, ch. 13), seeded and
  vectorised in chunks of resamples so memory stays bounded at large ``N``.
- :func:`paired_permutation_test`: sign-flip test on per-row score differences.
- :func:`diebold_mariano`: t statistic of the mean score difference with an
  optional Newey–West (HAC) variance (Diebold & Mariano 1995).
- :func:`ranks`: rank of each model per metric, 1 = best, ties averaged; the
  rank-consistency view of Kompa, Snoek & Beam (2021, Fig. 11), who compare the
  ordering of methods under coverage, Brier score and ECE.

Per-row scores are losses (lower is better) by convention, but nothing here
depends on that except the sign of the differences ``a - b`` reported.

Reproducibility: every random function takes ``seed`` and draws from
``numpy.random.default_rng(seed)``. Resample indices are drawn chunk by chunk as
consecutive ``Generator.integers`` calls, which yield the same stream as one big
draw, so results do not depend on ``chunk_size`` (a test guards this). With the
same ``seed`` and ``N`` every model gets the *same* resamples, so bootstrap
intervals of several models (an ``(F, N)`` input) are paired.
"""

from __future__ import annotations

from typing import Callable, Literal, Mapping

import numpy as np
from scipy import stats as _stats

from ..errors import InputError
from ..validation import as_float_array, check_finite, check_level, check_same_length

#: Default number of resample entries per chunk (``chunk_size * N``): 2**22 int64
#: indices = 32 MiB, plus the gathered values.
CHUNK_ELEMENTS = 1 << 22

Stat = Literal["mean"] | Callable[..., np.ndarray]


def _check_count(value: int, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _chunk_rows(n: int, chunk_size: int | None) -> int:
    if chunk_size is not None:
        return _check_count(chunk_size, "chunk_size")
    return max(1, CHUNK_ELEMENTS // max(n, 1))


def bootstrap_samples(
    fn: Callable[[np.ndarray], np.ndarray],
    n: int,
    n_boot: int = 1000,
    seed: int | None = 0,
    chunk_size: int | None = None,
) -> np.ndarray:
    r"""Bootstrap replicates of a statistic, computed from resampled row indices.

    Draws ``n_boot`` resamples of ``n`` row indices with replacement and calls
    ``fn`` on chunks of them.

    Parameters
    ----------
    fn : callable
        Maps an integer index array of shape ``(B, n)`` (one resample per row) to
        the statistic of each resample, shape ``(B,)`` or ``(B, ...)``. For
        example, the mean of per-row scores ``x`` is ``lambda idx: x[idx].mean(-1)``;
        a non-additive metric (e.g. a calibration error) recomputes itself from
        ``y_true[idx]``, ``mean[idx]``, ... for each of the ``B`` rows of ``idx``.
    n : int
        Number of rows.
    n_boot : int
        Number of resamples.
    seed : int or None
        Seed of ``numpy.random.default_rng``.
    chunk_size : int, optional
        Resamples per call of ``fn`` (default: about ``2**22 / n``). Does not
        change the result, only memory use.

    Returns
    -------
    ndarray of shape ``(n_boot, ...)``.

    Notes
    -----
    The work is :math:`O(n_{boot} N)` draws plus the cost of ``fn``; that is
    inherent to the row bootstrap.
    """
    n = _check_count(n, "n")
    n_boot = _check_count(n_boot, "n_boot")
    b = _chunk_rows(n, chunk_size)
    rng = np.random.default_rng(seed)
    out = []
    done = 0
    while done < n_boot:
        size = min(b, n_boot - done)
        idx = rng.integers(0, n, size=(size, n))
        res = np.asarray(fn(idx), dtype=np.float64)
        if res.ndim == 0 or res.shape[0] != size:
            raise InputError(
                f"bootstrap fn must return one statistic per resample (leading axis {size}), "
                f"got shape {res.shape}"
            )
        out.append(res)
        done += size
    return np.concatenate(out, axis=0)


def _percentile_interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = 1.0 - level
    low, high = np.quantile(samples, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return low, high


def _scalar_or_array(x: np.ndarray) -> float | np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return float(x) if x.ndim == 0 else x


def bootstrap_stat(
    fn: Callable[[np.ndarray], np.ndarray],
    n: int,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
    chunk_size: int | None = None,
) -> dict[str, float | np.ndarray]:
    r"""Percentile bootstrap interval of any statistic of resampled rows.

    With replicates :math:`\hat\theta^*_1, \dots, \hat\theta^*_B` from
    :func:`bootstrap_samples` and :math:`\alpha = 1 - \text{level}`,

    .. math:: [\,q_{\alpha/2}(\hat\theta^*),\ q_{1-\alpha/2}(\hat\theta^*)\,]

    (Efron & Tibshirani 1993, Eq. 13.5; quantiles interpolated linearly).

    Parameters
    ----------
    fn, n, n_boot, seed, chunk_size
        As in :func:`bootstrap_samples`. The estimate is
        ``fn(np.arange(n)[None, :])[0]``, the statistic of the original sample.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    dict with ``estimate``, ``low``, ``high``: floats, or arrays shaped like one
    statistic if ``fn`` returns ``(B, ...)``.
    """
    level = check_level(level)
    samples = bootstrap_samples(fn, n, n_boot=n_boot, seed=seed, chunk_size=chunk_size)
    estimate = np.asarray(fn(np.arange(n)[None, :]), dtype=np.float64)[0]
    low, high = _percentile_interval(samples, level)
    return {
        "estimate": _scalar_or_array(estimate),
        "low": _scalar_or_array(low),
        "high": _scalar_or_array(high),
    }


def bootstrap_ci(
    per_row: np.ndarray,
    stat: Stat = "mean",
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int | None = 0,
    chunk_size: int | None = None,
) -> dict[str, float | np.ndarray]:
    r"""Percentile bootstrap interval of a summary of per-row scores.

    Resamples rows with replacement; for ``(F, N)`` input the ``F`` models (or
    metrics) share every resample, so their intervals are paired.

    .. math:: \bar s^*_b = \frac{1}{N}\sum_{i=1}^N s_{I_{b,i}},\quad
              I_{b,i} \sim \mathcal U\{1,\dots,N\}\ \text{i.i.d.}

    and the interval is the :math:`\alpha/2` and :math:`1-\alpha/2` quantiles of
    :math:`\bar s^*_1,\dots,\bar s^*_B` (Efron & Tibshirani 1993, ch. 13).

    Parameters
    ----------
    per_row : (N,) or (F, N) array of finite per-row scores (e.g. CRPS, NLL).
    stat : "mean" or callable
        ``"mean"``, or a reduction ``f(x, axis=-1)`` such as ``np.median``.
    n_boot : int
        Number of resamples.
    level : float
        Confidence level in (0, 1).
    seed : int or None
        Seed of ``numpy.random.default_rng``.
    chunk_size : int, optional
        Resamples per chunk (memory only; results do not depend on it).

    Returns
    -------
    dict with ``estimate`` (the statistic of the original rows), ``low``, ``high``:
    floats for (N,) input, (F,) arrays for (F, N) input.

    Examples
    --------
    >>> r = bootstrap_ci(np.arange(10.0), n_boot=200, seed=0)
    >>> r["low"] < r["estimate"] == 4.5 < r["high"]
    True
    """
    x = as_float_array(per_row, "per_row", ndim=(1, 2))
    if x.shape[-1] == 0:
        raise InputError("per_row has no rows to resample")
    check_finite(x.T if x.ndim == 2 else x, "per_row")
    if isinstance(stat, str):
        if stat != "mean":
            raise InputError(f"stat must be 'mean' or a callable f(x, axis=-1), got {stat!r}")
        reduce: Callable[..., np.ndarray] = np.mean
    elif callable(stat):
        reduce = stat
    else:
        raise InputError(f"stat must be 'mean' or a callable f(x, axis=-1), got {stat!r}")
    n = x.shape[-1]
    f = 1 if x.ndim == 1 else x.shape[0]
    if chunk_size is None:
        chunk_size = max(1, CHUNK_ELEMENTS // (n * f))

    def fn(idx: np.ndarray) -> np.ndarray:
        vals = reduce(x[..., idx], axis=-1)  # (B,) or (F, B)
        return np.asarray(vals).T  # (B,) or (B, F)

    return bootstrap_stat(fn, n, n_boot=n_boot, level=level, seed=seed, chunk_size=chunk_size)


def _paired_differences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = as_float_array(a, "a")
    b = as_float_array(b, "b")
    check_same_length([a, b], ["a", "b"])
    check_finite(a, "a")
    check_finite(b, "b")
    return a - b


def paired_permutation_test(
    a: np.ndarray,
    b: np.ndarray,
    n_permutations: int = 10000,
    seed: int | None = 0,
    chunk_size: int | None = None,
) -> dict[str, float]:
    r"""Two-sided paired sign-flip permutation test of equal mean scores.

    With per-row differences :math:`d_i = a_i - b_i`, the statistic is
    :math:`T = |\bar d|`. Under the null hypothesis that each :math:`d_i` is
    symmetric about 0, flipping signs leaves the distribution unchanged; with
    :math:`R` random sign vectors :math:`\varepsilon^{(r)} \in \{\pm 1\}^N`,

    .. math:: p = \frac{1 + \#\{r : |\tfrac{1}{N}\sum_i \varepsilon^{(r)}_i d_i|
              \ge T\}}{1 + R}

    (the +1 makes the Monte-Carlo p-value valid, never 0; Phipson & Smyth 2010).
    Statistics within a relative 1e-9 of ``T`` count as ties (``>=``) to absorb
    summation rounding.

    Parameters
    ----------
    a, b : (N,) arrays of per-row scores of two models on the same rows.
    n_permutations : int
        Number of random sign vectors ``R``.
    seed : int or None
        Seed of ``numpy.random.default_rng``.
    chunk_size : int, optional
        Sign vectors per chunk (memory only).

    Returns
    -------
    dict with ``mean_diff`` (:math:`\bar d`, negative if ``a`` has lower mean
    score) and ``p_value``.
    """
    d = _paired_differences(a, b)
    n = d.size
    if n == 0:
        raise InputError("a and b have no rows to compare")
    r_total = _check_count(n_permutations, "n_permutations")
    mean_diff = float(d.mean())
    observed = abs(mean_diff)
    tol = 1e-9 * (float(np.abs(d).mean()) + 1e-300)
    total = float(d.sum())
    rng = np.random.default_rng(seed)
    step = _chunk_rows(n, chunk_size)
    exceed = 0
    done = 0
    while done < r_total:
        size = min(step, r_total - done)
        keep = rng.random((size, n)) < 0.5  # sign +1 where True, -1 elsewhere
        # sum(eps * d) = sum_{+} d - sum_{-} d = 2 * keep @ d - sum(d)
        flipped = np.abs(2.0 * (keep.astype(np.float64) @ d) - total) / n
        exceed += int(np.count_nonzero(flipped >= observed - tol))
        done += size
    return {"mean_diff": mean_diff, "p_value": (1.0 + exceed) / (1.0 + r_total)}


def diebold_mariano(a: np.ndarray, b: np.ndarray, lag: int = 0) -> dict[str, float]:
    r"""Diebold–Mariano test of equal expected scores, normal reference.

    With :math:`d_i = a_i - b_i`, :math:`\bar d` their mean and autocovariances
    :math:`\hat\gamma_k = \frac1N \sum_{i=k+1}^{N} (d_i - \bar d)(d_{i-k} - \bar d)`,

    .. math:: \hat\sigma^2 = \frac{N}{N-1}\Big(\hat\gamma_0
              + 2\sum_{k=1}^{h} \big(1 - \tfrac{k}{h+1}\big)\hat\gamma_k\Big),
              \qquad
              \text{DM} = \frac{\bar d}{\sqrt{\hat\sigma^2 / N}},
              \qquad p = 2\,\Phi(-|\text{DM}|)

    where :math:`h` is ``lag`` (Diebold & Mariano 1995). With ``lag=0`` the
    statistic equals the paired t statistic on the differences (the
    :math:`N/(N-1)` factor makes :math:`\hat\sigma^2` the unbiased sample
    variance). For ``lag > 0`` the long-run variance uses Newey–West (Bartlett)
    weights, which keep it non-negative, instead of the uniform weights of the
    original paper. Use ``lag > 0`` only when rows are ordered in time and
    neighbouring errors are correlated (e.g. ``lag = horizon - 1`` for
    multi-step forecasts). The p-value uses the standard normal reference.

    Returns
    -------
    dict with ``statistic`` (negative if ``a`` has lower mean score) and
    ``p_value``. If all differences are equal the variance is 0: the statistic is
    0 (p = 1) when they are all 0, else +-inf (p = 0).
    """
    d = _paired_differences(a, b)
    n = d.size
    if n < 2:
        raise InputError(f"diebold_mariano needs at least 2 rows, got {n}")
    lag = _check_count(lag, "lag", minimum=0)
    if lag >= n:
        raise InputError(f"lag must be smaller than the number of rows ({n}), got {lag}")
    dbar = float(d.mean())
    c = d - dbar
    gamma0 = float(c @ c) / n
    acov = gamma0
    # one dot product per lag: O(N * lag), loop over lags, not rows
    for k in range(1, lag + 1):
        acov += 2.0 * (1.0 - k / (lag + 1.0)) * float(c[k:] @ c[:-k]) / n
    var = acov * n / (n - 1)
    scale = max(float(np.abs(d).max()), 1e-300)
    if var <= (1e-14 * scale) ** 2:
        if abs(dbar) <= 1e-14 * scale:
            return {"statistic": 0.0, "p_value": 1.0}
        return {"statistic": float(np.copysign(np.inf, dbar)), "p_value": 0.0}
    statistic = dbar / np.sqrt(var / n)
    return {"statistic": float(statistic), "p_value": float(2.0 * _stats.norm.sf(abs(statistic)))}


def ranks(
    values: Mapping[str, float],
    orientation: Literal["lower", "higher", "target"],
    target: float | None = None,
) -> dict[str, float]:
    r"""Rank models by one metric: 1 = best, ties share the average rank.

    ``"lower"`` ranks by value ascending, ``"higher"`` descending and
    ``"target"`` by :math:`|v - \text{target}|` ascending (``target`` is
    required, e.g. the nominal level for coverage). Models whose value is NaN get
    rank NaN and do not take a rank from the others. Comparing the ranks of the
    same models across metrics is the rank-consistency view of Kompa, Snoek &
    Beam (2021, Fig. 11).

    Examples
    --------
    >>> ranks({"a": 0.3, "b": 0.1, "c": 0.3}, "lower")
    {'a': 2.5, 'b': 1.0, 'c': 2.5}
    >>> ranks({"a": 0.93, "b": 0.99}, "target", target=0.95)
    {'a': 1.0, 'b': 2.0}
    """
    names = list(values)
    v = np.array([np.nan if values[k] is None else float(values[k]) for k in names], dtype=np.float64)
    if orientation == "lower":
        key = v
    elif orientation == "higher":
        key = -v
    elif orientation == "target":
        if target is None or not np.isfinite(target):
            raise InputError("ranks with orientation 'target' need a finite target value (e.g. the level)")
        key = np.abs(v - float(target))
    else:
        raise InputError(f"orientation must be 'lower', 'higher' or 'target', got {orientation!r}")
    out = np.full(v.shape, np.nan)
    ok = ~np.isnan(key)
    if ok.any():
        out[ok] = _stats.rankdata(key[ok], method="average")
    return {k: float(r) for k, r in zip(names, out)}
