r"""Array functions in the conventions of scoringrules and scikit-learn.

The observation comes first and scalars broadcast. Every function follows one convention, scikit-learn's
(``mean_pinball_loss``, ``log_loss``): ``reduce="mean"`` (the default) returns one number, the mean over
the rows (over rows and levels for ``pinball_loss``; the weighted mean with ``weights=``); ``reduce=None``
returns the per-row values, an array shaped like the broadcast inputs (``pinball_loss``: rows x levels; a
float for scalar inputs). The calibration errors are summaries of all rows and have no per-row values.
Each function is a thin front over the kernels in :mod:`uqeval.metrics`, which ``uqeval score`` uses too.

>>> import uqeval
>>> round(uqeval.crps_normal([0.3, -0.3], 0.0, 1.0), 6)
0.269333
>>> uqeval.crps_normal([0.3, -0.3], 0.0, 1.0, reduce=None).round(6).tolist()
[0.269333, 0.269333]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._python import python_api
from .errors import InputError
from .validation import as_real_array, member_axis_of

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

from . import _EXPORTS

#: the array functions (listed once, in ``uqeval._EXPORTS``)
__all__ = [name for name, module in _EXPORTS.items() if module == "functions"]


def _rows(*args: Any, names: tuple[str, ...]) -> tuple[tuple[np.ndarray, ...], tuple[int, ...]]:
    """Broadcast the arguments and flatten them to 1-d rows; also return the broadcast shape."""
    converted = [as_real_array(a, n) for a, n in zip(args, names)]
    try:
        arrays = np.broadcast_arrays(*converted)
    except ValueError:
        shapes = ", ".join(f"{n}: {np.shape(a)}" for n, a in zip(names, args))
        raise InputError(f"arguments do not broadcast together ({shapes})") from None
    shape = arrays[0].shape
    return tuple(a.reshape(-1) for a in arrays), shape


def _batch(y: np.ndarray, block: np.ndarray, name: str, other: str) -> tuple[np.ndarray, np.ndarray]:
    """``y`` and ``block`` (its last axis: members or levels) broadcast over their common rows: one
    ensemble (M,) scores every observation, one observation every row of ensembles."""
    try:
        shape = np.broadcast_shapes(y.shape, block.shape[:-1])
    except ValueError:
        raise InputError(
            f"{name} has shape {y.shape}, which does not broadcast with {other} {block.shape[:-1]}"
        ) from None
    return np.broadcast_to(y, shape), np.broadcast_to(block, (*shape, block.shape[-1]))


def _levels(levels: ArrayLike, name: str = "levels") -> np.ndarray:
    """Probability levels strictly inside (0, 1), as a float64 array."""
    tau = as_real_array(levels, name)
    bad = ~((tau > 0.0) & (tau < 1.0))
    if bad.any():
        raise InputError(f"{name} must be strictly between 0 and 1, got {tau[bad].reshape(-1)[0]:g}")
    return tau


def _shaped(
    values: np.ndarray, shape: tuple[int, ...], reduce: str | None = "mean", weights: ArrayLike | None = None
) -> float | np.ndarray:
    """``values`` (one per row) in the convention of the module: their (weighted) mean for ``reduce="mean"``,
    shaped like the inputs for ``reduce=None`` (a float for scalar inputs)."""
    if reduce is None and weights is None:
        out = values.reshape(shape)
        return float(out) if out.ndim == 0 else out
    if reduce != "mean" and reduce is not None:
        raise InputError(f"reduce must be 'mean' (one number) or None (per-row values), got {reduce!r}")
    if reduce is None:
        raise InputError("weights= weight the mean over the rows: with reduce=None leave them out")
    flat = values.reshape(len(values), -1).mean(axis=1) if values.ndim > 1 and weights is not None else values
    return _average(np.ravel(flat) if weights is None else flat, weights)


def _summary_only(name: str, reduce: str | None) -> None:
    """The calibration errors are one number over all rows: ``reduce=None`` has no per-row values to give."""
    if reduce != "mean":
        raise InputError(
            f"{name} is a summary of all rows, with no per-row values: reduce must be 'mean', got {reduce!r}"
        )


@python_api
def crps_normal(
    obs: ArrayLike,
    mu: ArrayLike,
    sigma: ArrayLike,
    *,
    reduce: str | None = "mean",
    weights: ArrayLike | None = None,
) -> float | np.ndarray:
    r"""CRPS of the normal distribution N(mu, sigma²) for observation ``obs`` (closed form).

    .. math:: \mathrm{CRPS} = \sigma\Big[z(2\Phi(z) - 1) + 2\varphi(z) - \tfrac1{\sqrt\pi}\Big],
              \quad z = \frac{y - \mu}{\sigma}

    Gneiting et al. (2005). Same as ``scoringrules.crps_normal``.

    ``reduce="mean"``: the mean over the rows (weighted by ``weights``); ``None``: one value per row.

    >>> round(float(crps_normal(0.0, 0.0, 1.0)), 6)
    0.233695
    """
    from .metrics.scoring import crps_gaussian

    (y, m, s), shape = _rows(obs, mu, sigma, names=("obs", "mu", "sigma"))
    return _shaped(crps_gaussian(y, m, s), shape, reduce, weights)


@python_api
def logs_normal(
    obs: ArrayLike,
    mu: ArrayLike,
    sigma: ArrayLike,
    *,
    reduce: str | None = "mean",
    weights: ArrayLike | None = None,
) -> float | np.ndarray:
    r"""Logarithmic score (negative log density) of N(mu, sigma²) at ``obs``.

    .. math:: \mathrm{LogS} = \tfrac12\log(2\pi) + \log\sigma + \frac{(y-\mu)^2}{2\sigma^2}

    Same as ``scoringrules.logs_normal`` (with ``reduce=None``: per row).

    >>> round(float(logs_normal(0.0, 0.0, 1.0)), 6)
    0.918939
    """
    from .metrics.scoring import nll_gaussian

    (y, m, s), shape = _rows(obs, mu, sigma, names=("obs", "mu", "sigma"))
    return _shaped(nll_gaussian(y, m, s), shape, reduce, weights)


@python_api
def crps_ensemble(
    obs: ArrayLike,
    fct: ArrayLike,
    *,
    member_axis: int = -1,
    estimator: str = "nrg",
    reduce: str | None = "mean",
    weights: ArrayLike | None = None,
) -> float | np.ndarray:
    r"""CRPS of an ensemble forecast ``fct`` (members along ``member_axis``) for ``obs``.

    ``estimator="nrg"``: the energy form of the empirical CDF,
    :math:`\frac1M\sum_i|x_i - y| - \frac1{2M^2}\sum_{i,j}|x_i - x_j|`;
    ``"fair"``: the unbiased form with :math:`\frac{1}{2M(M-1)}` (Ferro 2014).
    Same as ``scoringrules.crps_ensemble`` with the same estimator names (with ``reduce=None``: per row).

    >>> round(float(crps_ensemble(0.5, [0.0, 1.0])), 6)
    0.25
    """
    from .metrics.samples import crps_ensemble as nrg, crps_fair

    kernels = {"nrg": nrg, "fair": crps_fair}
    if estimator not in kernels:
        raise InputError(f"estimator must be 'nrg' or 'fair', got {estimator!r}")
    f = as_real_array(fct, "fct")
    if f.ndim == 0:
        raise InputError("fct must hold the ensemble members along member_axis, got a scalar")
    f = np.moveaxis(f, member_axis_of(member_axis, f.ndim, "fct"), -1)
    if f.shape[-1] < 1:
        raise InputError("fct has no members")
    y, f = _batch(as_real_array(obs, "obs"), f, "obs", "fct without its member axis")
    return _shaped(kernels[estimator](y.reshape(-1), f.reshape(-1, f.shape[-1])), y.shape, reduce, weights)


@python_api
def pinball_loss(
    y_true: ArrayLike,
    quantiles: ArrayLike,
    levels: ArrayLike,
    *,
    reduce: str | None = "mean",
    weights: ArrayLike | None = None,
) -> float | np.ndarray:
    r"""Pinball (quantile) loss: :math:`\rho_\tau(y, q) = \max(\tau(y-q), (\tau-1)(y-q))`.

    ``quantiles`` has the levels on its last axis. ``reduce="mean"``: the mean over rows and levels (at one
    level, scikit-learn's ``mean_pinball_loss``); ``reduce=None``: an array shaped like ``quantiles``, one
    loss per row and level.

    >>> pinball_loss(1.0, [0.0, 2.0], [0.1, 0.9], reduce=None).round(12).tolist()
    [0.1, 0.1]
    """
    from .metrics.scoring import pinball_loss as kernel

    q = as_real_array(quantiles, "quantiles")
    tau = _levels(levels)
    if q.shape[-1:] != tau.shape:
        raise InputError(f"quantiles have {q.shape[-1:]} levels on their last axis but levels is {tau.shape}")
    y, q = _batch(as_real_array(y_true, "y_true"), q, "y_true", "quantiles without their level axis")
    out = kernel(y.reshape(-1), q.reshape(-1, tau.size), tau)
    if reduce is None and weights is None:
        return out.reshape(q.shape)
    return _shaped(out, q.shape, reduce, weights)


@python_api
def interval_score(
    y_true: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    level: ArrayLike,
    *,
    reduce: str | None = "mean",
    weights: ArrayLike | None = None,
) -> float | np.ndarray:
    r"""Interval score of central ``level`` intervals (Gneiting & Raftery 2007, Eq. 43): the mean over the
    rows, or (``reduce=None``) one per row.

    .. math:: S = (u - l) + \frac2\alpha (l - y)\mathbb 1[y < l] + \frac2\alpha (y - u)\mathbb 1[y > u],
              \quad \alpha = 1 - \text{level}

    >>> round(float(interval_score(3.0, 0.0, 2.0, 0.8)), 12)
    12.0
    """
    from .metrics.scoring import interval_score as kernel

    (y, lo, hi, lv), shape = _rows(y_true, lower, upper, level, names=("y_true", "lower", "upper", "level"))
    _levels(lv, "level")
    return _shaped(kernel(y, lo, hi, lv), shape, reduce, weights)


@python_api
def weighted_interval_score(
    y_true: ArrayLike,
    quantiles: ArrayLike,
    levels: ArrayLike,
    *,
    reduce: str | None = "mean",
    weights: ArrayLike | None = None,
) -> float | np.ndarray:
    r"""Weighted interval score of quantile forecasts (Bracher et al. 2021): the mean over the rows, or
    (``reduce=None``) one per row.

    ``quantiles`` (N, Q) at symmetric ``levels`` (with the median).

    .. math:: \mathrm{WIS} = \frac{1}{K + 1/2}\Big(\tfrac12|y - m| + \sum_k \tfrac{\alpha_k}{2} S_{\alpha_k}(l_k, u_k; y)\Big)

    >>> weighted_interval_score(0.5, [[-1.0, 0.0, 1.0]], [0.1, 0.5, 0.9], reduce=None).round(12).tolist()
    [0.3]
    """
    from .metrics.quantiles import weighted_interval_score as kernel

    q = np.atleast_2d(as_real_array(quantiles, "quantiles"))
    tau = _levels(levels)
    if q.shape[-1:] != tau.shape:
        raise InputError(f"quantiles have {q.shape[-1:]} levels on their last axis but levels is {tau.shape}")
    y, q = _batch(as_real_array(y_true, "y_true"), q, "y_true", "quantiles without their level axis")
    out = kernel(y.reshape(-1), q.reshape(-1, q.shape[-1]), tau)
    return _shaped(out, y.shape, reduce, weights)


@python_api
def calibration_error(
    y_true: ArrayLike,
    mean: ArrayLike,
    std: ArrayLike,
    *,
    kind: str = "ma",
    num_bins: int = 100,
    weights: ArrayLike | None = None,
    reduce: str | None = "mean",
) -> float:
    r"""Average calibration error of Gaussian forecasts (Uncertainty Toolbox, interval mode).

    ``kind``: ``"ma"`` mean absolute, ``"rms"`` root mean squared, ``"area"`` miscalibration area,
    over expected proportions ``linspace(0, 1, num_bins)``. ``weights``: per-row weights (each row's
    interval hits counted with its weight, as ``uqeval score --weights``).

    >>> import numpy as np
    >>> y = np.random.default_rng(0).normal(size=1000)
    >>> calibration_error(y, 0.0, 1.0) < 0.02 < calibration_error(y, 0.0, 3.0)
    True
    """
    from .metrics.calibration import avg_calibration_gaussian

    _summary_only("calibration_error", reduce)
    keys = {"ma": "ma_cal", "rms": "rms_cal", "area": "miscal_area"}
    if kind not in keys:
        raise InputError(f"kind must be 'ma', 'rms' or 'area', got {kind!r}")
    (y, m, s), _ = _rows(y_true, mean, std, names=("y_true", "mean", "std"))
    if weights is not None:  # the catalogue's weighted average calibration (one definition)
        from .catalogue import compute_weighted_metrics
        from .config import Settings
        from .predictions import Gaussian
        from .weights import check_weights

        w = check_weights(weights, n=len(y))
        found, _, _ = compute_weighted_metrics(Gaussian(m, s, y_true=y), Settings(num_bins=num_bins), w)
        return float(found["avg_calibration"][keys[kind]])
    return float(avg_calibration_gaussian(y, m, s, num_bins=num_bins)[keys[kind]])


@python_api
def coverage(
    y_true: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    reduce: str | None = "mean",
) -> float | np.ndarray:
    """Share of targets inside [lower, upper] (bounds inclusive; Kompa, Snoek & Beam 2021); with
    ``weights``, the weighted share; ``reduce=None``: per row, 1.0 inside and 0.0 outside.

    >>> coverage([0.0, 1.0, 3.0], 0.0, 2.0)
    0.6666666666666666
    """
    (y, lo, hi), shape = _rows(y_true, lower, upper, names=("y_true", "lower", "upper"))
    from .metrics.intervals import coverage_metrics, coverage_rows

    if reduce != "mean" or weights is not None:  # per row, weighted, or _shaped's message for a bad reduce
        return _shaped(coverage_rows(y, lo, hi, 0.5)["coverage"][0].astype(float), shape, reduce, weights)
    return float(coverage_metrics(y, lo, hi, 0.5)["coverage"])


def _average(values: np.ndarray, weights: ArrayLike | None) -> float:
    """The mean of per-row ``values``; with ``weights`` (checked: :func:`uqeval.weights.check_weights`), their
    weighted mean, taken as by every weighted catalogue metric (:meth:`uqeval.catalogue.RowStat.resampler`;
    rows of weight 0 dropped)."""
    if weights is None:
        return float(np.mean(values))
    from .catalogue.core import RowStat
    from .weights import check_weights, drop_zero

    w, (kept,), _ = drop_zero(check_weights(weights, n=len(values)), values)
    fn = RowStat(score=kept).resampler(blas=False)
    assert fn is not None  # a score always resamples
    return float(fn(w[None, :])[0])


def _classifier(
    labels: ArrayLike, proba: ArrayLike, classes: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities (N, K) and labels as class indices: string or categorical labels (and any labels with
    ``classes``) are the position of each label in ``classes``, else in sorted order (scikit-learn's
    ``LabelEncoder``, a classifier's ``classes_``)."""
    from .api.inputs import _encode_labels

    labels = _encode_labels(labels, classes, "labels")
    p = as_real_array(proba, "proba")
    if p.ndim == 1:  # binary: P(class 1)
        p = np.column_stack([1.0 - p, p])
    if p.ndim != 2:
        raise InputError(f"proba must be (N, K) class probabilities or (N,) P(class 1), got shape {p.shape}")
    y = as_real_array(labels, "labels")
    if y.shape != (len(p),):
        raise InputError(f"labels has shape {y.shape} but proba has {len(p)} rows; give one label per row")
    finite = np.isfinite(y)
    if not finite.all() or (y != np.round(y)).any() or (y < 0).any() or (y >= p.shape[1]).any():
        i = int(np.flatnonzero(~finite | (y != np.round(y)) | (y < 0) | (y >= p.shape[1]))[0])
        raise InputError(f"labels must be class indices 0..{p.shape[1] - 1}: row {i} holds {y[i]:g}")
    return p, y.astype(np.int64)


@python_api
def expected_calibration_error(
    labels: ArrayLike,
    proba: ArrayLike,
    *,
    num_bins: int = 15,
    adaptive: bool = False,
    classwise: bool = False,
    weights: ArrayLike | None = None,
    classes: ArrayLike | None = None,
    reduce: str | None = "mean",
) -> float:
    r"""Calibration error of class probabilities (Nixon et al. 2019, as Uncertainty Metrics computes it).

    ``(adaptive, classwise)`` = (False, False): ECE, top label, even bins (Guo et al. 2017);
    (False, True): static calibration error SCE; (True, True): adaptive calibration error ACE.
    Binary (N,) probabilities are P(class 1). ``weights`` (N,) count row i w_i times: weighted bin sums, and
    for ACE equal-mass bins on the weighted quantiles (integer weights equal the repeated rows; scaling the
    weights changes nothing); rows of weight 0 are dropped.

    >>> round(expected_calibration_error([1, 0, 1, 1], [0.9, 0.2, 0.6, 0.8]), 6)
    0.225
    """
    from .metrics.classification import calibration_errors

    _summary_only("expected_calibration_error", reduce)
    key = {(False, False): "ece", (False, True): "sce", (True, True): "ace"}.get(
        (bool(adaptive), bool(classwise))
    )
    if key is None:
        raise InputError(
            "adaptive top-label bins give the RMSCE in Nixon et al.'s family, not an L1 error; "
            "use classwise=True (ACE) or adaptive=False (ECE)"
        )
    p, y = _classifier(labels, proba, classes)
    if weights is not None:
        from .weights import check_weights, drop_zero

        w, (p, y), _ = drop_zero(check_weights(weights, n=len(y)), p, y)
        return float(calibration_errors(p, y, num_bins=num_bins, weights=w)[key])
    return float(calibration_errors(p, y, num_bins=num_bins)[key])


@python_api
def brier_score(
    labels: ArrayLike,
    proba: ArrayLike,
    *,
    convention: str = "sum",
    weights: ArrayLike | None = None,
    classes: ArrayLike | None = None,
    reduce: str | None = "mean",
) -> float | np.ndarray:
    r"""Mean Brier score (``reduce=None``: per row).

    ``convention="sum"`` (uqeval's ``accuracy.brier``): :math:`\frac1N\sum_i\sum_k (p_{ik} - \mathbb 1[y_i = k])^2`,
    in [0, 2]; ``"binary"``: scikit-learn's ``brier_score_loss``, :math:`\frac1N\sum_i (p_i - y_i)^2` of
    P(class 1), half the sum form for two classes. ``weights``: the weighted mean over the rows. ``labels``
    may be strings or categories (``classes``: their order in the columns of ``proba``; default sorted).

    >>> round(brier_score([1, 0], [0.8, 0.3]), 6), round(brier_score([1, 0], [0.8, 0.3], convention="binary"), 6)
    (0.13, 0.065)
    """
    from .metrics.classification import classification_rows

    if convention not in ("sum", "binary"):
        raise InputError(f"convention must be 'sum' or 'binary', got {convention!r}")
    p, y = _classifier(labels, proba, classes)
    if convention == "binary":
        if p.shape[1] != 2:
            raise InputError(f"convention='binary' needs two classes, got {p.shape[1]}")
        return _shaped(np.square(p[:, 1] - (np.asarray(y) == 1)), y.shape, reduce, weights)
    return _shaped(classification_rows(p, y)["brier"], y.shape, reduce, weights)


@python_api
def log_loss(
    labels: ArrayLike,
    proba: ArrayLike,
    *,
    weights: ArrayLike | None = None,
    classes: ArrayLike | None = None,
    reduce: str | None = "mean",
) -> float | np.ndarray:
    r"""Mean negative log-likelihood of the labels, :math:`-\frac1N\sum_i\log\mathrm{clip}(p_{iy_i}, \epsilon, 1-\epsilon)`
    (scikit-learn's ``log_loss``); ``weights``: the weighted mean over the rows (its ``sample_weight``);
    ``reduce=None``: per row; ``classes``: as in :func:`brier_score`.

    >>> round(log_loss([1, 0], [0.8, 0.3]), 6)
    0.289909
    """
    from .metrics.classification import classification_rows

    p, y = _classifier(labels, proba, classes)
    return _shaped(classification_rows(p, y)["nll"], y.shape, reduce, weights)
