r"""ACCRUE: an input-dependent standard deviation for deterministic (point) predictions.

Camporeale & Carè (2021), *ACCRUE: accurate and reliable uncertainty estimate in
deterministic models*, Int. J. Uncertainty Quantification 11(4). Given point
predictions :math:`\mu_i` (an "oracle" mean), targets :math:`y_i` and features
:math:`x_i`, a model :math:`\sigma(x)` is fitted by minimising the ACCRUE cost
(Eq. 11)

.. math:: \mathrm{ACCRUE} = \beta\,\overline{\mathrm{CRPS}} + (1 - \beta)\,\mathrm{RS},
          \qquad \beta = \frac{\mathrm{RS}_{\min}}{\overline{\mathrm{CRPS}}_{\min} + \mathrm{RS}_{\min}},

with the Gaussian CRPS (Eq. 3) and the reliability score RS (Eq. 8, with the
corrected last term :math:`e^{-\eta_i^2}/(N\sqrt\pi)`; the printed
:math:`1/\sqrt{\pi N}` does not integrate Eq. 6). :math:`\beta` is taken from
:func:`uqeval.metrics.reliability.accrue_score`, so the cost minimised here is the
``accrue`` number that ``uqeval score`` reports.

Models of :math:`\sigma(x)` (all output :math:`\log\sigma`, so :math:`\sigma > 0`):

``constant``
    the CRPS-optimal single :math:`\sigma` (root of Eq. 4 summed over rows).
``kmeans``
    k-means clusters of the standardised features (``scipy.cluster.vq.kmeans2``,
    k-means++ seeding from ``seed``; empty clusters are dropped), one CRPS-optimal
    :math:`\sigma` per cluster (the ``constant`` model inside each cluster, so one
    cluster reproduces ``constant``; a cluster whose residuals are almost all exactly 0
    falls back to the global constant). The paper's KM baseline (Table 1) uses each
    cluster's standard deviation of the errors instead; CRPS keeps the two baselines
    consistent. New rows take the σ of the nearest centroid.
``poly``
    Algorithm 1: :math:`\log\sigma` is a polynomial in one feature; the order is raised
    from 1 (starting from the previous solution with the new coefficient at 0) until
    the cost improves by less than ``tol`` or the order reaches ``max_order`` (≤ 10).
    The paper fits :math:`\sigma` itself; :math:`\log\sigma` keeps it positive without
    constraints. The polynomial is written in the Legendre basis of the feature
    rescaled to [-1, 1] on the fit rows (same function space as monomials, much better
    conditioned); new rows outside the fitted range are clipped to it, i.e. σ is
    extrapolated as a constant.
``mlp``
    a fully connected tanh network (default hidden sizes 50 and 10; the paper uses
    ReLU + saturating linear) with a linear output :math:`\log\sigma`, trained by
    scipy's L-BFGS-B with the analytic gradient: Eq. 4 and Eq. 9 give
    :math:`\partial\,\mathrm{ACCRUE}/\partial\sigma_i`, back-propagated by hand through
    :math:`\sigma = e^{s}` and the layers. A seeded ``validation_fraction`` of the rows
    is held out; training stops when the validation cost has not improved for
    ``patience`` iterations and the best iterate is kept; of
    ``restarts`` seeded initialisations the one with the lowest validation cost wins.

The paper stops after 10 iterations without improvement; the default here is 30:
the first L-BFGS steps often leave the validation cost flat, and with 10 every restart
on the paper's 5D problem stopped at its initial (constant) point.

Internally the residuals are divided by the ``constant`` σ before fitting. The ACCRUE
argmin is unchanged by this (the cost is proportional to
:math:`\overline{\mathrm{CRPS}}/\overline{\mathrm{CRPS}}_{\min} + \mathrm{RS}/\mathrm{RS}_{\min}`,
which is scale-free) and the optimiser tolerances become unit-free.
"""

from __future__ import annotations

import math
import warnings
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from numpy.polynomial import legendre
from scipy.cluster.vq import kmeans2, vq
from scipy.optimize import minimize

from ..errors import InputError, UsageError
from ..metrics.normal import erf
from ..metrics.reliability import _rs_sorted
from ..metrics.scoring import _crps_z, _crps_z_dsd, _gaussian_arrays
from ..validation import (
    as_float_array,
    bad_rows,
    check_finite,
    check_same_length,
    finite_arrays,
    finite_difference,
)
from .std_scaling import crps_scale

try:  # optional, speed only: see _single_threaded_blas
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

MODELS: tuple[str, ...] = ("constant", "kmeans", "poly", "mlp")

#: Minimum number of fit rows per model (kmeans: also at least 2 per cluster).
MIN_ROWS: dict[str, int] = {"constant": 2, "kmeans": 2, "poly": 20, "mlp": 50}

_SQRT_2 = math.sqrt(2.0)
_LOG_SIGMA_CLIP = 50.0  # numerical guard on log(sigma / sigma_constant): exp(50) ~ 5e21


# --------------------------------------------------------------------------- kernels


def crps_and_grad(eps: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Gaussian CRPS of each row and its derivative with respect to :math:`\sigma_i`.

    With :math:`z = \varepsilon/\sigma` (Camporeale & Carè, Eqs. 3 and 4):

    .. math:: \mathrm{CRPS} = \sigma\left[z\,\mathrm{erf}\!\left(\tfrac{z}{\sqrt2}\right)
              + \sqrt{\tfrac{2}{\pi}}\,e^{-z^2/2} - \tfrac{1}{\sqrt\pi}\right],\qquad
              \frac{\partial\,\mathrm{CRPS}}{\partial\sigma} = \sqrt{\tfrac{2}{\pi}}\,e^{-z^2/2}
              - \tfrac{1}{\sqrt\pi}.

    Parameters
    ----------
    eps : (N,) array of errors :math:`y - \mu`
    sigma : (N,) array of standard deviations > 0

    Returns
    -------
    crps, dcrps_dsigma : two (N,) arrays
    """
    z = eps / sigma
    return _crps_z(z, sigma), _crps_z_dsd(z)  # the metric's own kernel and its derivative


def reliability_and_grad(eps: np.ndarray, sigma: np.ndarray) -> tuple[float, np.ndarray]:
    r"""Reliability score RS and its gradient with respect to each :math:`\sigma_i`.

    With :math:`\eta_i = \varepsilon_i / (\sqrt2\,\sigma_i)` and :math:`r_i` the rank of
    :math:`\eta_i` (1 = smallest), the closed form of
    :math:`\int (\Phi(\eta) - C(\eta))^2\,d\eta` (Eq. 8 with the corrected last term) is

    .. math:: \mathrm{RS} = \sum_{i=1}^N\left[\frac{\eta_i}{N}(\mathrm{erf}\,\eta_i + 1)
              - \frac{\eta_i}{N^2}(2r_i - 1) + \frac{e^{-\eta_i^2}}{N\sqrt\pi}\right]
              - \frac12\sqrt{\frac2\pi}

    and (Eq. 9; with the :math:`N\sqrt\pi` term the exponentials cancel exactly)

    .. math:: \frac{\partial\,\mathrm{RS}}{\partial\sigma_i} = \frac{\eta_i}{N\sigma_i}
              \left(\frac{2r_i - 1}{N} - \mathrm{erf}\,\eta_i - 1\right).

    RS is continuous and piecewise smooth (kinks where two :math:`\eta` tie); the
    gradient is exact wherever no ties occur. Cost: one sort, O(N log N).

    Returns
    -------
    rs : float
    grad : (N,) array
    """
    n = eps.shape[0]
    eta = eps / (_SQRT_2 * sigma)
    order = np.argsort(eta, kind="stable")
    ranks = np.empty(n, dtype=np.float64)
    ranks[order] = np.arange(1, n + 1, dtype=np.float64)
    erf_eta = erf(eta)
    odd = (2.0 * ranks - 1.0) / n
    rs = _rs_sorted(eta[order])  # RS: the metric's own kernel
    grad = eta / (n * sigma) * (odd - erf_eta - 1.0)
    return rs, grad


def accrue_beta(eps: np.ndarray) -> float:
    r"""The ACCRUE weight :math:`\beta = \mathrm{RS}_{\min}/(\overline{\mathrm{CRPS}}_{\min} + \mathrm{RS}_{\min})` (Eq. 12).

    Delegates to :func:`uqeval.metrics.reliability.accrue_score`, whose ``beta``
    depends on the errors only (the ``std`` passed there is irrelevant to it).
    """
    from ..metrics.reliability import accrue_score

    eps = np.asarray(eps, dtype=np.float64)
    res = accrue_score(eps, np.zeros_like(eps), np.ones_like(eps))
    return float(res["beta"])


def _objective(eps: np.ndarray, sigma: np.ndarray, beta: float) -> tuple[float, np.ndarray]:
    crps, dcrps = crps_and_grad(eps, sigma)
    rs, drs = reliability_and_grad(eps, sigma)
    n = eps.shape[0]
    cost = beta * float(np.mean(crps)) + (1.0 - beta) * rs
    return cost, (beta / n) * dcrps + (1.0 - beta) * drs


def accrue_objective(
    y_true: np.ndarray, mean: np.ndarray, std: np.ndarray, beta: float | None = None
) -> tuple[float, np.ndarray]:
    r"""ACCRUE cost and its gradient with respect to every :math:`\sigma_i`.

    .. math:: \mathrm{ACCRUE} = \frac{\beta}{N}\sum_i \mathrm{CRPS}(\varepsilon_i, \sigma_i)
              + (1 - \beta)\,\mathrm{RS}(\varepsilon, \sigma),\qquad
              \frac{\partial\,\mathrm{ACCRUE}}{\partial\sigma_i} =
              \frac{\beta}{N}\frac{\partial\,\mathrm{CRPS}_i}{\partial\sigma_i}
              + (1-\beta)\frac{\partial\,\mathrm{RS}}{\partial\sigma_i}

    Parameters
    ----------
    y_true, mean, std : (N,) arrays
    beta : weight in [0, 1]; default :func:`accrue_beta` of the errors.

    Returns
    -------
    cost : float
    grad : (N,) array
    """
    y, mu, sd = _gaussian_arrays(y_true, mean, std)
    eps = y - mu
    if beta is None:
        beta = accrue_beta(eps)
    return _objective(eps, sd, float(beta))


# --------------------------------------------------------------------------- validation


def _check_ymu(y_true, mean) -> tuple[np.ndarray, np.ndarray]:
    y, mu = finite_arrays(y_true=y_true, mean=mean)
    return y, mu


def _as_features(features, name: str = "features") -> np.ndarray:
    x = as_float_array(features, name, ndim=(1, 2))
    if x.ndim == 1:
        x = x[:, None]
    if x.shape[1] == 0:
        raise InputError(f"{name} must have at least one column, got shape {x.shape}")
    check_finite(x, name)
    return x


def _single_threaded_blas():
    """Run BLAS single-threaded while fitting, if threadpoolctl is installed.

    The products here are small (N x 50 by 50 x 10, and L-BFGS-B's own updates on a few
    hundred parameters); thread start-up and synchronisation dominate them, and on a
    busy 2-core machine multi-threaded OpenBLAS made an MLP fit 3-5x slower.
    """
    if threadpool_limits is None:  # pragma: no cover
        return nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


# --------------------------------------------------------------------------- constant / kmeans


def _sigma_overflow(eps: np.ndarray) -> NoReturn:
    raise InputError(
        "cannot estimate a spread: the CRPS-optimal sigma of the residuals y_true - mean is beyond the largest "
        f"double (the largest |residual| is {float(np.max(np.abs(eps))):g}); rescale the target and mean "
        "columns (other units)"
    )


def _constant_sigma_or_raise(eps: np.ndarray) -> float:
    s = crps_scale(np.abs(eps))  # std-scaling's CRPS root at unit std: one sigma for all rows
    if s == math.inf:
        _sigma_overflow(eps)
    if s is None:
        n_zero = int(np.sum(eps == 0))
        raise InputError(
            f"cannot estimate a spread: {n_zero} of {eps.size} residuals y_true - mean are exactly 0 "
            "(ACCRUE needs fewer than 71% exact zeros); check that the mean column is not a copy of the target"
        )
    return s


def _standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    with np.errstate(over="ignore", invalid="ignore"):
        loc = x.mean(axis=0)
        scale = x.std(axis=0)
    big = ~(np.isfinite(loc) & np.isfinite(scale))
    if big.any():
        # a sum or square beyond the doubles (values near 1e308): the moments of x / max|x|, scaled back
        m = np.abs(x[:, big]).max(axis=0)
        loc[big] = (x[:, big] / m).mean(axis=0) * m
        scale[big] = (x[:, big] / m).std(axis=0) * m
    scale = np.where(scale > 0, scale, 1.0)  # constant column: centred to 0, not rescaled
    return (x - loc) / scale, loc, scale


def _fit_kmeans(xs: np.ndarray, eps: np.ndarray, clusters: int, seed: int, sigma_c: float) -> dict[str, Any]:
    n = xs.shape[0]
    if isinstance(clusters, bool) or int(clusters) != clusters or clusters < 1:
        raise UsageError(f"clusters must be a positive integer, got {clusters!r}")
    clusters = int(clusters)
    if n < 2 * clusters:
        raise InputError(
            f"too few rows for ACCRUE model 'kmeans' with {clusters} clusters: got {n}, "
            f"need at least {2 * clusters} (2 per cluster); use fewer clusters or more rows"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # empty clusters are dropped below
        centroids, _ = kmeans2(xs, clusters, minit="++", seed=np.random.default_rng(seed))
    labels, _ = vq(xs, centroids)
    sizes = np.bincount(labels, minlength=centroids.shape[0])
    keep = sizes > 0
    centroids = centroids[keep]
    labels, _ = vq(xs, centroids)
    sizes = np.bincount(labels, minlength=centroids.shape[0])
    sigmas, fallback = [], []
    for k in range(centroids.shape[0]):  # loop over clusters (K small), not rows
        members = np.flatnonzero(labels == k)
        s = crps_scale(np.abs(eps[members]))
        if s == math.inf:
            _sigma_overflow(eps[members])
        fallback.append(s is None)
        sigmas.append(sigma_c if s is None else s)
    return {
        "clusters": int(centroids.shape[0]),
        "centroids": centroids.tolist(),
        "cluster_sigma": [float(s) for s in sigmas],
        "cluster_sizes": sizes.astype(int).tolist(),
        "cluster_fallback": fallback,
    }


# --------------------------------------------------------------------------- poly (Algorithm 1)


def _poly_u(xs: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Standardised feature mapped to [-1, 1] by the fitted range; outside it, clipped."""
    return np.clip(2.0 * (xs - lo) / (hi - lo) - 1.0, -1.0, 1.0)


def _poly_design(u: np.ndarray, order: int) -> np.ndarray:
    return legendre.legvander(u, order)


def _log_sigma_to_cost(s: np.ndarray, eps: np.ndarray, beta: float) -> tuple[float, np.ndarray]:
    """Cost of log-sigma ``s`` (relative to the constant scale) and d cost / d s."""
    clipped = np.clip(s, -_LOG_SIGMA_CLIP, _LOG_SIGMA_CLIP)
    sigma = np.exp(clipped)
    cost, g_sigma = _objective(eps, sigma, beta)
    g_s = g_sigma * sigma
    g_s[clipped != s] = 0.0
    return cost, g_s


def _fit_poly(u: np.ndarray, eps: np.ndarray, beta: float, max_order: int, tol: float, maxiter: int):
    def fun(theta, design):
        cost, g_s = _log_sigma_to_cost(design @ theta, eps, beta)
        return cost, design.T @ g_s

    theta = np.zeros(1)  # order 0: log(sigma / sigma_constant) = 0
    cost = fun(theta, _poly_design(u, 0))[0]
    history = [{"order": 0, "cost": float(cost)}]
    for order in range(1, max_order + 1):
        design = _poly_design(u, order)
        res = minimize(
            fun,
            np.append(theta, 0.0),
            args=(design,),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": maxiter, "ftol": 1e-13, "gtol": 1e-9},
        )
        new_cost = float(res.fun)
        if not math.isfinite(new_cost):
            break  # the search left the doubles (residuals near 1e308): keep the last fit
        history.append({"order": order, "cost": new_cost})
        improvement = cost - new_cost
        if new_cost < cost:
            theta, cost = res.x, new_cost
        if improvement <= tol:
            break
    return theta, history


# --------------------------------------------------------------------------- mlp


def _layer_shapes(n_in: int, hidden: tuple[int, ...]) -> list[tuple[int, int]]:
    sizes = [n_in, *hidden, 1]
    return [(sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1)]


def _unpack(theta: np.ndarray, shapes: list[tuple[int, int]]) -> list[tuple[np.ndarray, np.ndarray]]:
    layers, pos = [], 0
    for n_in, n_out in shapes:
        w = theta[pos : pos + n_in * n_out].reshape(n_in, n_out)
        pos += n_in * n_out
        b = theta[pos : pos + n_out]
        pos += n_out
        layers.append((w, b))
    return layers


def _mlp_forward(layers, x: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    acts = [x]
    h = x
    for w, b in layers[:-1]:
        h = np.tanh(h @ w + b)
        acts.append(h)
    w, b = layers[-1]
    return (h @ w + b)[:, 0], acts


def _mlp_backward(layers, acts: list[np.ndarray], g_out: np.ndarray) -> np.ndarray:
    """Gradient of the cost w.r.t. all weights and biases given d cost / d output."""
    grads = []
    delta = g_out[:, None]  # (N, 1): d cost / d pre-activation of the current layer
    for idx in range(len(layers) - 1, -1, -1):
        w, _ = layers[idx]
        a_in = acts[idx]
        grads.append((a_in.T @ delta, delta.sum(axis=0)))
        if idx > 0:
            # contiguous copy: OpenBLAS is ~30x slower on this small product with a transposed view
            delta = (delta @ np.ascontiguousarray(w.T)) * (1.0 - a_in * a_in)  # tanh' = 1 - tanh^2
    flat = []
    for gw, gb in reversed(grads):
        flat.append(gw.ravel())
        flat.append(gb)
    return np.concatenate(flat)


def _mlp_cost_grad(theta, shapes, x, eps, beta):
    layers = _unpack(theta, shapes)
    s, acts = _mlp_forward(layers, x)
    cost, g_s = _log_sigma_to_cost(s, eps, beta)
    return cost, _mlp_backward(layers, acts, g_s)


def _mlp_init(shapes, rng: np.random.Generator) -> np.ndarray:
    parts = []
    for i, (n_in, n_out) in enumerate(shapes):
        limit = math.sqrt(6.0 / (n_in + n_out))  # Glorot uniform, suited to tanh
        if i == len(shapes) - 1:
            limit *= 0.1  # start close to the constant model (output ~ 0)
        parts.append(rng.uniform(-limit, limit, size=n_in * n_out))
        parts.append(np.zeros(n_out))
    return np.concatenate(parts)


def _fit_mlp(xs, eps, beta, hidden, seed, restarts, validation_fraction, patience, maxiter):
    n = xs.shape[0]
    perm = np.random.default_rng(seed).permutation(n)
    n_val = max(1, int(round(validation_fraction * n)))
    val, tr = perm[:n_val], perm[n_val:]
    x_tr, e_tr, x_val, e_val = xs[tr], eps[tr], xs[val], eps[val]
    shapes = _layer_shapes(xs.shape[1], hidden)

    def val_cost(theta):
        s, _ = _mlp_forward(_unpack(theta, shapes), x_val)
        return _log_sigma_to_cost(s, e_val, beta)[0]

    runs = []
    for k in range(restarts):
        theta0 = _mlp_init(shapes, np.random.default_rng([seed, k]))
        best = {"theta": theta0, "val": val_cost(theta0), "iteration": 0}
        state = {"it": 0, "since": 0}

        def callback(theta, best=best, state=state):
            state["it"] += 1
            v = val_cost(theta)
            if v < best["val"]:
                best.update(theta=theta.copy(), val=v, iteration=state["it"])
                state["since"] = 0
            else:
                state["since"] += 1
                if state["since"] >= patience:
                    raise StopIteration

        res = minimize(
            _mlp_cost_grad,
            theta0,
            args=(shapes, x_tr, e_tr, beta),
            jac=True,
            method="L-BFGS-B",
            callback=callback,
            options={"maxiter": maxiter, "ftol": 1e-12, "gtol": 1e-8},
        )
        runs.append(
            {
                "seed": [int(seed), k],
                "validation_cost": float(best["val"]),
                "best_iteration": int(best["iteration"]),
                "iterations": int(res.nit),
                "theta": best["theta"],
            }
        )
    best_k = int(np.argmin([r["validation_cost"] for r in runs]))
    layers = _unpack(runs[best_k]["theta"], shapes)
    info = [{key: v for key, v in r.items() if key != "theta"} for r in runs]
    return layers, info, best_k, int(n_val)


# --------------------------------------------------------------------------- public API


def fit_accrue(
    features: np.ndarray,
    y_true: np.ndarray,
    mean: np.ndarray,
    model: str = "mlp",
    *,
    clusters: int = 5,
    seed: int = 0,
    hidden: tuple[int, ...] = (50, 10),
    restarts: int = 5,
    validation_fraction: float = 0.2,
    patience: int = 30,
    maxiter: int = 2000,
    max_order: int = 10,
    tol: float = 1e-5,
    rows: np.ndarray | None = None,
) -> dict[str, Any]:
    r"""Fit an ACCRUE model of :math:`\sigma(x)` for point predictions.

    Parameters
    ----------
    features : (N,) or (N, d) array of inputs; standardised (mean/std stored in the state)
    y_true, mean : (N,) arrays of targets and point predictions
    model : ``"constant"``, ``"kmeans"``, ``"poly"`` (one feature only) or ``"mlp"``
    clusters : number of k-means clusters (``kmeans``)
    seed : seeds k-means++, the validation split and the network initialisations
    hidden : hidden layer sizes (``mlp``)
    restarts : seeded initialisations; the lowest validation cost wins (``mlp``)
    validation_fraction : share of rows held out for early stopping (``mlp``)
    patience : iterations without validation improvement before stopping (``mlp``)
    maxiter : L-BFGS-B iteration cap per fit
    max_order : highest polynomial order, 1..10 (``poly``)
    tol : Algorithm 1 stops when raising the order lowers the (scale-free) cost by ≤ ``tol``
    rows : the file's row number of each row, for messages (default: its index)

    Returns
    -------
    dict, JSON-serialisable: ``method`` (``"accrue"``), ``model``, ``n_rows``,
    ``n_features``, ``feature_mean``, ``feature_std``, ``sigma_constant`` (the CRPS-optimal
    single σ, also the scale of the model output), ``beta``, ``cost`` and
    ``cost_constant`` (ACCRUE cost on the fit rows of the fitted and the constant model),
    and the model parameters: ``sigma`` (constant); ``centroids``, ``cluster_sigma``,
    ``cluster_sizes`` (kmeans); ``order``, ``coef`` (Legendre coefficients of
    :math:`\log(\sigma/\sigma_c)` in ``u``, the standardised feature mapped from
    ``u_range`` to [-1, 1] and clipped there),
    ``history`` (poly); ``hidden``, ``weights``, ``biases`` (nested lists), ``restarts``,
    ``best_restart`` (mlp).

    Raises
    ------
    InputError
        NaN/inf, mismatched lengths, too few rows (``MIN_ROWS``), several features for
        ``poly``, residuals that are (almost) all exactly zero, or residuals (or the fitted
        spread) beyond the doubles (``y_true - mean`` of 1e308 and -1e308).
    UsageError
        unknown model or invalid option values.
    """
    opts = _Options(
        clusters, seed, tuple(hidden), restarts, validation_fraction, patience, maxiter, max_order, tol
    )
    if model not in MODELS:
        raise UsageError(f"unknown ACCRUE model {model!r}; choose one of {', '.join(MODELS)}")
    x = _as_features(features)
    y, mu = _check_ymu(y_true, mean)
    n = check_same_length([x, y], ["features", "y_true"])
    _check_options(model, n, x.shape[1], opts)
    eps = finite_difference(y, mu, ("y_true", "mean"), rows)
    state = _fit_scaled(x, eps, model, opts, rows)
    sigma_fit = apply_accrue(state, x)
    beta_orig = accrue_beta(eps)
    state["beta"] = beta_orig
    state["cost"] = _objective(eps, sigma_fit, beta_orig)[0]
    state["cost_constant"] = _objective(eps, np.full(n, state["sigma_constant"]), beta_orig)[0]
    return state


@dataclass(frozen=True)
class _Options:
    """The fitting options of :func:`fit_accrue` (see its parameters)."""

    clusters: int
    seed: int
    hidden: tuple[int, ...]
    restarts: int
    validation_fraction: float
    patience: int
    maxiter: int
    max_order: int
    tol: float


def _check_options(model: str, n: int, n_features: int, opts: _Options) -> None:
    """Raise unless ``opts`` fit ``model`` on ``n`` rows of ``n_features`` features."""
    if n < MIN_ROWS[model]:
        raise InputError(f"too few rows for ACCRUE model {model!r}: got {n}, need at least {MIN_ROWS[model]}")
    if model == "poly" and n_features != 1:
        raise InputError(
            f"ACCRUE model 'poly' takes exactly one feature, got {n_features}; "
            "pass a single feature or use model 'mlp' or 'kmeans'"
        )
    fraction, max_order, seed = opts.validation_fraction, opts.max_order, opts.seed
    if not 0.0 < fraction < 1.0:
        raise UsageError(f"validation_fraction must be in (0, 1), got {fraction}")
    if not (isinstance(max_order, int) and 1 <= max_order <= 10):
        raise UsageError(f"max_order must be an integer in 1..10, got {max_order!r}")
    if opts.restarts < 1 or opts.patience < 1 or opts.maxiter < 1:
        raise UsageError("restarts, patience and maxiter must be positive")
    if isinstance(seed, bool) or int(seed) != seed or seed < 0:
        raise UsageError(f"seed must be a non-negative integer, got {seed!r}")
    if model == "mlp":
        n_val = max(1, int(round(fraction * n)))
        if min(n_val, n - n_val) < 10:
            raise InputError(
                f"too few rows for ACCRUE model 'mlp' with validation_fraction {fraction:g}: "
                f"{n - n_val} training and {n_val} validation rows, need at least 10 of each"
            )


def _fit_scaled(x, eps, model: str, opts: _Options, rows) -> dict[str, Any]:
    """The state of :func:`fit_accrue` before its costs: ``model`` fitted on the standardised ``x`` and the
    residuals ``eps`` scaled by the CRPS-optimal constant σ."""
    sigma_c = _constant_sigma_or_raise(eps)
    with np.errstate(over="ignore"):
        e = eps / sigma_c  # scale-free problem, see module docstring
    if not np.isfinite(e).all():
        n_far, first = bad_rows(~np.isfinite(e))
        raise InputError(
            f"{n_far} residual(s) y_true - mean are more than 1.8e308 times the fitted constant sigma "
            f"({sigma_c:g}), so their ACCRUE cost is not a double (first at row "
            f"{int(rows[first]) if rows is not None else first}: {float(eps[first]):g}); drop those rows "
            "or rescale their target and mean"
        )
    beta = accrue_beta(e)
    xs, loc, scale = _standardise(x)
    state: dict[str, Any] = {
        "method": "accrue",
        "model": model,
        "n_rows": int(eps.size),
        "n_features": int(x.shape[1]),
        "feature_mean": loc.tolist(),
        "feature_std": scale.tolist(),
        "sigma_constant": float(sigma_c),
        "seed": int(opts.seed),
    }
    with _single_threaded_blas():
        _fit_model(state, model, xs, e, eps, beta, sigma_c, opts)
    return state


def _fit_model(state, model, xs, e, eps, beta, sigma_c, opts: _Options) -> None:
    """Fit ``model`` on standardised features ``xs`` and scaled errors ``e``; fill ``state``."""
    if model == "constant":
        state["sigma"] = float(sigma_c)
    elif model == "kmeans":
        state.update(_fit_kmeans(xs, eps, opts.clusters, opts.seed, sigma_c))
    elif model == "poly":
        lo, hi = float(xs[:, 0].min()), float(xs[:, 0].max())
        if not hi > lo:
            raise InputError("ACCRUE model 'poly' needs a feature that varies; all its values are equal")
        theta, history = _fit_poly(_poly_u(xs[:, 0], lo, hi), e, beta, opts.max_order, opts.tol, opts.maxiter)
        state.update(
            basis="legendre",
            u_range=[lo, hi],
            order=int(theta.size - 1),
            coef=theta.tolist(),
            history=history,
            tol=float(opts.tol),
        )
    else:
        hidden = tuple(int(h) for h in opts.hidden)
        if not hidden or min(hidden) < 1:
            raise UsageError(f"hidden sizes must be positive integers, got {hidden}")
        layers, info, best_k, n_val = _fit_mlp(
            xs,
            e,
            beta,
            hidden,
            opts.seed,
            opts.restarts,
            opts.validation_fraction,
            opts.patience,
            opts.maxiter,
        )
        state.update(
            hidden=list(hidden),
            activation="tanh",
            weights=[w.tolist() for w, _ in layers],
            biases=[b.tolist() for _, b in layers],
            restarts=info,
            best_restart=best_k,
            validation_rows=n_val,
            validation_fraction=float(opts.validation_fraction),
            patience=int(opts.patience),
        )


def apply_accrue(state: dict[str, Any], features: np.ndarray) -> np.ndarray:
    """Predicted standard deviations σ(x) of a fitted ACCRUE model.

    Parameters
    ----------
    state : output of :func:`fit_accrue` (or :func:`uqeval.recalibration.serialize.load_state`)
    features : (N,) or (N, d) array with the same d as at fit time

    Returns
    -------
    (N,) array of σ > 0.
    """
    _require(state, ("model", "n_features", "feature_mean", "feature_std", "sigma_constant"))
    x = _as_features(features)
    d = int(state["n_features"])
    if x.shape[1] != d:
        raise InputError(
            f"features must have {d} column(s) as when the ACCRUE model was fitted, got {x.shape[1]}"
        )
    xs = (x - np.asarray(state["feature_mean"], dtype=np.float64)) / np.asarray(
        state["feature_std"], dtype=np.float64
    )
    sigma_c = float(state["sigma_constant"])
    model = state["model"]
    if model == "constant":
        _require(state, ("sigma",))
        return np.full(x.shape[0], float(state["sigma"]))
    if model == "kmeans":
        _require(state, ("centroids", "cluster_sigma"))
        labels, _ = vq(xs, np.asarray(state["centroids"], dtype=np.float64))
        return np.asarray(state["cluster_sigma"], dtype=np.float64)[labels]
    if model == "poly":
        _require(state, ("coef", "u_range"))
        coef = np.asarray(state["coef"], dtype=np.float64)
        lo, hi = (float(v) for v in state["u_range"])
        s = _poly_design(_poly_u(xs[:, 0], lo, hi), coef.size - 1) @ coef
    elif model == "mlp":
        _require(state, ("weights", "biases"))
        layers = [
            (np.asarray(w, dtype=np.float64), np.asarray(b, dtype=np.float64))
            for w, b in zip(state["weights"], state["biases"])
        ]
        s, _ = _mlp_forward(layers, xs)
    else:
        raise InputError(
            f"unknown ACCRUE model {model!r} in the saved state; expected one of {', '.join(MODELS)}"
        )
    return sigma_c * np.exp(np.clip(s, -_LOG_SIGMA_CLIP, _LOG_SIGMA_CLIP))


def _require(state: dict[str, Any], keys: tuple[str, ...]) -> None:
    missing = [k for k in keys if k not in state]
    if missing:
        raise InputError(
            f"the ACCRUE state is missing {', '.join(missing)}; refit the recalibrator or pass an unmodified saved file"
        )
