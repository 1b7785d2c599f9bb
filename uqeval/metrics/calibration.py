"""Average and adversarial group calibration of Gaussian forecasts (interval mode).

Definitions follow the Uncertainty Toolbox (Chung et al. 2021, appendix A.3, and its
``metrics_calibration`` module) with the corrections listed in the function notes.

The central idea used throughout: in interval mode a row's contribution to the whole
calibration curve is determined by a single integer, its *cover index* -- the first
expected proportion :math:`p_j` whose central interval contains it. Every observed curve
(of the whole data or of any subset) is a cumulative histogram of cover indices, so

* average calibration is one ``searchsorted`` plus a ``bincount`` (O(N log B)), and
* the bin counts of a uniformly random subset drawn without replacement follow a
  multivariate hypergeometric law, which numpy samples directly: adversarial group
  calibration costs O(N) once plus O(draws x bins), independent of the subset size.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ..errors import InputError
from ..validation import as_float_array
from .blocks import sem_from_moments, sem_moments
from .normal import central_z
from .scoring import _gaussian_arrays
from .search import searchsorted_fixed


def expected_proportions(num_bins: int) -> np.ndarray:
    """The expected proportions of the calibration curve, ``linspace(0, 1, num_bins)`` (the Uncertainty
    Toolbox's grid; ``num_bins`` >= 2): the one place of this grid, for the metrics, the catalogue,
    std-scaling and ``recalibrate``."""
    if isinstance(num_bins, bool) or int(num_bins) != num_bins or num_bins < 2:
        raise InputError(f"num_bins must be an integer >= 2, got {num_bins!r}")
    return np.linspace(0.0, 1.0, int(num_bins))


def _check_expected(expected) -> np.ndarray:
    p = as_float_array(expected, "expected")
    if p.size == 0:
        raise InputError("expected proportions are empty; pass e.g. numpy.linspace(0, 1, 100)")
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise InputError("expected proportions must lie in [0, 1]")
    if np.any(np.diff(p) < 0):
        raise InputError("expected proportions must be sorted ascending")
    return p


def interval_cover_index(z_abs, expected) -> np.ndarray:
    r"""Index of the first central interval that contains each row.

    For standardized absolute residuals :math:`a_i = |y_i - \mu_i| / \sigma_i` and
    ascending expected proportions :math:`p_0 \le \dots \le p_{B-1}` returns

    .. math:: c_i = \min\{j : a_i \le \Phi^{-1}(\tfrac12 + \tfrac{p_j}2)\}

    (bounds inclusive), or ``B = len(expected)`` if no interval contains the row.
    Row ``i`` is then inside the central :math:`p_j` interval iff :math:`c_i \le j`.

    Parameters
    ----------
    z_abs : (N,) array of non-negative standardized absolute residuals
    expected : (B,) array of ascending proportions in [0, 1]

    Returns
    -------
    (N,) integer array with values in ``0..B``.

    Notes
    -----
    The thresholds are ``ndtri(0.5 + p / 2.0)``, bitwise equal to the toolbox's
    ``norm.ppf(0.5 + p / 2.0)``, and the test ``|r| <= upper`` is the one its
    ``miscalibration_area`` uses. Its ``mean_absolute_calibration_error`` and
    ``root_mean_squared_calibration_error`` instead test ``lower <= r <= upper`` with
    ``lower = ppf(0.5 - p/2)``, which differs from ``-upper`` by about 1e-16; the two
    tests disagree only for a residual within ~1e-16 of a threshold. One
    ``searchsorted``: O(N log B).
    """
    a = as_float_array(z_abs, "z_abs")
    p = _check_expected(expected)
    if a.size and not np.all(a >= 0.0):  # also rejects NaN
        raise InputError("z_abs must be non-negative standardized absolute residuals (no NaN)")
    thresholds = central_z(p)
    return searchsorted_fixed(thresholds, a, side="left")


def central_cover_index(central, expected) -> np.ndarray:
    r"""Index of the first central interval that contains each row, from central PIT values.

    A row whose central PIT is :math:`c_i` (y lies in the central :math:`p` interval of its
    forecast iff :math:`c_i \le p`; :math:`c = |2u - 1|` for a PIT :math:`u`) gets
    :math:`\min\{j : c_i \le p_j\}`, or ``B = len(expected)`` when no level holds it:
    one ``searchsorted``, the same cover index as :func:`interval_cover_index`.
    """
    p = _check_expected(expected)
    return np.searchsorted(p, as_float_array(central, "central"), side="left")


def observed_from_cover_index(cover_index, n_levels: int, weights=None) -> np.ndarray:
    r"""Observed proportions of the calibration curve from cover indices.

    .. math:: \hat p_j = \frac1N \#\{i : c_i \le j\}, \qquad j = 0, \dots, B-1

    computed as ``cumsum(bincount(c))[:B] / N``; ``weights`` (N,): weighted counts over the total weight.

    Returns
    -------
    (n_levels,) float array.
    """
    c = np.asarray(cover_index)
    if c.ndim != 1 or c.size == 0:
        raise InputError(f"cover_index must be a non-empty 1-d integer array, got shape {c.shape}")
    if not np.issubdtype(c.dtype, np.integer) or c.min() < 0 or c.max() > n_levels:
        raise InputError(f"cover_index must hold integers in 0..{n_levels} (from interval_cover_index)")
    if weights is None:
        return _observed_from_counts(np.bincount(c, minlength=n_levels + 1)[None, :], c.size, n_levels)[0]
    w = np.asarray(weights, dtype=np.float64)
    return _observed_from_counts(
        np.bincount(c, weights=w, minlength=n_levels + 1)[None, :], w.sum(), n_levels
    )[0]


def _observed_from_counts(counts: np.ndarray, n: float | np.ndarray, n_levels: int) -> np.ndarray:
    """(M, >=B) (weighted) bin counts of M sets of size (total weight) n -> (M, B) observed proportions.

    The single code path for the whole data and for subsets, so that a subset equal to
    the whole data gives bitwise the same curve.
    """
    return np.cumsum(counts[:, :n_levels], axis=1) / n


def _ma_rms(expected: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean-absolute and root-mean-squared gap of (M, B) curves -> two (M,) arrays."""
    diff = expected[None, :] - observed
    return np.mean(np.abs(diff), axis=1), np.sqrt(np.mean(np.square(diff), axis=1))


def _miscal_area(expected: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Exact area between (M, B) piecewise-linear curves and the diagonal -> (M,)."""
    d = observed - expected[None, :]
    d0, d1 = d[:, :-1], d[:, 1:]
    dx = np.diff(expected)[None, :]
    same_side = d0 * d1 >= 0.0
    a0, a1 = np.abs(d0), np.abs(d1)
    with np.errstate(invalid="ignore", divide="ignore"):
        crossing = dx * (d0 * d0 + d1 * d1) / (2.0 * (a0 + a1))
    area = np.where(same_side, 0.5 * dx * np.abs(d0 + d1), crossing)
    return np.sum(area, axis=1)


def calibration_errors(expected, observed) -> dict[str, float | np.ndarray]:
    r"""Calibration errors of a calibration curve (or of M curves at once).

    .. math::
        \text{ma\_cal} = \frac1B\sum_j |p_j - \hat p_j|, \qquad
        \text{rms\_cal} = \Big(\frac1B\sum_j (p_j - \hat p_j)^2\Big)^{1/2}, \qquad
        \text{miscal\_area} = \int_{p_0}^{p_{B-1}} |\hat p(p) - p|\,dp

    where :math:`\hat p(p)` is the piecewise-linear interpolation of the points
    :math:`(p_j, \hat p_j)`. The area is exact: on a segment whose ends lie on the same
    side of the diagonal (gaps :math:`d_0 d_1 \ge 0`) it is the trapezoid
    :math:`\Delta p\,|d_0 + d_1|/2`; a segment that crosses the diagonal is split at the
    crossing, giving :math:`\Delta p\,(d_0^2 + d_1^2) / (2(|d_0| + |d_1|))`.

    Parameters
    ----------
    expected : (B,) ascending proportions, B >= 2
    observed : (B,) or (M, B) observed proportions

    Returns
    -------
    ``{"rms_cal", "ma_cal", "miscal_area"}``: floats for a (B,) curve, (M,) arrays for (M, B).

    Notes
    -----
    The Uncertainty Toolbox (0.1.1, ``miscalibration_area_from_proportions``) computes the
    same quantity with a polygon method (a trapezoid per segment, or an "hourglass" of
    two triangles meeting at the line-line intersection when the segment crosses the
    diagonal); it is the same exact area and agrees to rounding (~1e-16 relative). It
    is *not* equal to ``ma_cal``: the two only converge as B grows.
    """
    p = _check_expected(expected)
    obs = as_float_array(observed, "observed", ndim=(1, 2))
    single = obs.ndim == 1
    obs2 = obs[None, :] if single else obs
    if obs2.shape[1] != p.size or p.size < 2:
        raise InputError(f"observed must have len(expected) = {p.size} >= 2 columns, got shape {obs.shape}")
    ma, rms = _ma_rms(p, obs2)
    area = _miscal_area(p, obs2)
    if single:
        return {"rms_cal": float(rms[0]), "ma_cal": float(ma[0]), "miscal_area": float(area[0])}
    return {"rms_cal": rms, "ma_cal": ma, "miscal_area": area}


def calibration_errors_from_counts(expected: np.ndarray):
    r"""Calibration errors from weighted counts of cover indices: ``(counts (B, n_levels + 1), total (B,))``
    -> dict of (B,) arrays.

    Row ``i`` is inside the central :math:`p_j` interval iff its cover index :math:`c_i \le j`
    (:func:`interval_cover_index`), so the curve of a set of rows (each counted with its weight)
    is the cumulative histogram of its :math:`c_i` over its total weight. With unit weights this is
    the summary's own code path (:func:`_observed_from_counts`), so it reproduces it bitwise.
    """
    p = _check_expected(expected)
    nb = p.size

    def fn(counts: np.ndarray, total: np.ndarray) -> dict[str, np.ndarray]:
        # (B, n_levels) curves: a dict of (B,) arrays
        return cast(
            "dict[str, np.ndarray]",
            calibration_errors(p, _observed_from_counts(counts, np.asarray(total)[:, None], nb)),
        )

    return fn


def _gaussian_cover_index(y_true, mean, std, num_bins: int) -> tuple[np.ndarray, np.ndarray]:
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    expected = expected_proportions(num_bins)
    return interval_cover_index(np.abs(y - mu) / sd, expected), expected


def avg_calibration_gaussian(y_true, mean, std, num_bins: int = 100) -> dict[str, float]:
    r"""Average calibration of Gaussian forecasts in interval mode.

    Expected proportions :math:`p_j` = ``linspace(0, 1, num_bins)``; observed
    proportions :math:`\hat p_j = \frac1N\#\{i : |y_i - \mu_i|/\sigma_i \le
    \Phi^{-1}(\tfrac12 + \tfrac{p_j}2)\}` (share of rows inside the central
    :math:`p_j` interval); errors as in :func:`calibration_errors`.

    Returns
    -------
    ``{"rms_cal", "ma_cal", "miscal_area"}`` (floats, lower is better).

    Notes
    -----
    Equals the toolbox's ``get_all_average_calibration`` (0.1.1, ``prop_type="interval"``)
    to rounding. The toolbox's ``prop_type="quantile"`` mode is mirrored (it tests
    :math:`(\mu - y)/\sigma \le \Phi^{-1}(p)`, i.e. the share *above* the p-quantile);
    it is not used here.
    """
    cover, expected = _gaussian_cover_index(y_true, mean, std, num_bins)
    # one (B,) curve: a dict of floats
    return cast(
        "dict[str, float]", calibration_errors(expected, observed_from_cover_index(cover, expected.size))
    )


def _mean_stderr(values: np.ndarray) -> tuple[float, float]:
    """Mean and standard error (sample std, ddof=1, over sqrt(n): :func:`~uqeval.metrics.blocks.sem_from_moments`)
    of a 1-d array.

    Identical values return that value and 0 exactly (a float mean of equal values can
    be off in the last bit), so a group of the whole data reproduces ``ma_cal`` exactly.
    """
    if np.all(values == values[0]):
        return float(values[0]), 0.0
    return float(np.mean(values)), float(sem_from_moments(sem_moments(values[:, None]))[0])


def adversarial_group_calibration(cover_index, expected, **options: Any) -> dict[str, list[float]]:
    r"""Adversarial group calibration (Zhao et al. 2020; Chung et al. 2021, appendix A.3).

    For each group fraction :math:`f` (default ``linspace(0.01, 1, 10)``) the group size
    is :math:`n_f = \max(\mathrm{round}(fN), 2)`. A *trial* draws ``num_group_draws``
    groups of :math:`n_f` rows uniformly without replacement and records the worst
    (largest) calibration error among them; ``num_trials`` trials give

    .. math:: \text{mean} = \frac1T\sum_t e_t, \qquad
              \text{stderr} = \frac{s_{T-1}(e)}{\sqrt T}

    separately for the mean-absolute and the root-mean-squared calibration error.

    A group's curve depends only on the per-bin counts of its cover indices; for a
    uniform draw without replacement those counts are multivariate hypergeometric with
    the whole data's counts as the urn, so all draws of one size are sampled at once
    with ``Generator.multivariate_hypergeometric`` -- O(N) once (the ``bincount``) plus
    O(draws x bins), independent of the group size (instead of the toolbox's O(N x bins)
    per draw). For :math:`f = 1` every group is the whole data, and the result equals
    ``ma_cal``/``rms_cal`` of :func:`calibration_errors` exactly (stderr 0).

    Parameters
    ----------
    cover_index : (N,) integers from :func:`interval_cover_index`
    expected : (B,) the expected proportions used to build ``cover_index``
    options : the keywords of :func:`adversarial_group_calibration_counts` (declared and checked there once):
    group_fractions : fractions of N in (0, 1]
    num_trials : number of trials T >= 2 per fraction
    num_group_draws : groups per trial (the adversary's budget), >= 1
    seed : seed of ``numpy.random.default_rng``; same seed, same output

    Returns
    -------
    ``{"group_sizes", "ma_mean", "ma_stderr", "rms_mean", "rms_stderr"}``, lists of
    floats of length ``len(group_fractions)``; ``group_sizes`` are the fractions.

    Notes
    -----
    Differences from the Uncertainty Toolbox 0.1.1 ``adversarial_group_calibration``:
    its ``score_stderr`` is ``np.std(ddof=1)`` without the division by
    :math:`\sqrt T` (a standard deviation, not a standard error); its fraction grid is
    ``linspace(0, 1, 10)`` (so its first "group" has 2 rows); it draws separate groups
    for the MA and RMS errors with the global numpy RNG (here one seeded set of groups
    serves both).
    """
    p = _check_expected(expected)
    b = p.size
    c = np.asarray(cover_index)
    if c.ndim != 1 or not np.issubdtype(c.dtype, np.integer) or (c.size and (c.min() < 0 or c.max() > b)):
        raise InputError(f"cover_index must be a 1-d array of integers in 0..{b} (from interval_cover_index)")
    return adversarial_group_calibration_counts(np.bincount(c, minlength=b + 1), p, **options)


def adversarial_group_calibration_counts(
    counts: np.ndarray,
    expected,
    group_fractions: Sequence[float] | np.ndarray | None = None,
    num_trials: int = 10,
    num_group_draws: int = 10,
    seed: int | None = 0,
) -> dict[str, list[float]]:
    """:func:`adversarial_group_calibration` from the ``(B + 1,)`` counts of the cover indices.

    The counts are all a group's curve depends on, so merged counts of chunks (streaming)
    give the same draws, hence the same result, as the whole data in memory.
    """
    p = _check_expected(expected)
    b = p.size
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n < 2:
        raise InputError(f"adversarial group calibration needs at least 2 rows, got {n}")
    fr = (
        np.linspace(0.01, 1.0, 10)
        if group_fractions is None
        else as_float_array(group_fractions, "group_fractions")
    )
    if fr.size == 0 or not np.all((fr > 0.0) & (fr <= 1.0)):
        raise InputError("group_fractions must be a non-empty list of fractions in (0, 1]")
    for name, val, low in (("num_trials", num_trials, 2), ("num_group_draws", num_group_draws, 1)):
        if isinstance(val, bool) or int(val) != val or val < low:
            raise InputError(f"{name} must be an integer >= {low}, got {val!r}")
    t, d = int(num_trials), int(num_group_draws)

    rng = np.random.default_rng(seed)
    out: dict[str, list[float]] = {
        k: [] for k in ("group_sizes", "ma_mean", "ma_stderr", "rms_mean", "rms_stderr")
    }
    for f in fr:
        size = max(int(round(float(f) * n)), 2)
        draws = rng.multivariate_hypergeometric(counts, size, size=t * d)  # (T*D, B+1)
        ma, rms = _ma_rms(p, _observed_from_counts(draws, size, b))
        worst_ma = ma.reshape(t, d).max(axis=1)
        worst_rms = rms.reshape(t, d).max(axis=1)
        out["group_sizes"].append(float(f))
        for key, worst in (("ma", worst_ma), ("rms", worst_rms)):
            m, se = _mean_stderr(worst)
            out[f"{key}_mean"].append(m)
            out[f"{key}_stderr"].append(se)
    return out


def adversarial_group_calibration_gaussian(
    y_true, mean, std, num_bins: int = 100, **options: Any
) -> dict[str, list[float]]:
    """:func:`adversarial_group_calibration` of Gaussian forecasts (interval mode).

    Expected proportions ``linspace(0, 1, num_bins)``; see that function for the
    definition, the returned keys and the differences from the Uncertainty Toolbox; ``options``: the
    keywords of :func:`adversarial_group_calibration_counts`.
    """
    cover, expected = _gaussian_cover_index(y_true, mean, std, num_bins)
    return adversarial_group_calibration(cover, expected, **options)
