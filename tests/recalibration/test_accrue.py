"""ACCRUE: cost, analytic gradients, models, synthetic problems G and W, datasets."""

import json
import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import minimize_scalar
from scipy.special import erf

from sample_data.accrue_problems import PROBLEMS, make_5d, make_g, make_problem, make_w, make_y
from uqeval.errors import InputError, UsageError
from uqeval.metrics.reliability import accrue_score, max_calibration_error, pit_gaussian, reliability_score
from uqeval.metrics.scoring import crps_gaussian
from uqeval.recalibration import accrue as A
from uqeval.recalibration.accrue import (
    accrue_beta,
    accrue_objective,
    apply_accrue,
    crps_and_grad,
    fit_accrue,
    reliability_and_grad,
)
from uqeval.recalibration.serialize import load_state, save_state
from uqeval.recalibration.std_scaling import crps_scale


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    eps = rng.normal(scale=rng.uniform(0.3, 2.0, size=n))
    sigma = rng.uniform(0.3, 2.0, size=n)
    return eps, sigma


def _fd(fun, sigma, h=1e-6):
    """Central finite differences of a scalar function of each sigma_i."""
    out = np.empty_like(sigma)
    for i in range(sigma.size):  # test helper: a loop over a few rows is fine
        up, dn = sigma.copy(), sigma.copy()
        up[i] += h
        dn[i] -= h
        out[i] = (fun(up) - fun(dn)) / (2 * h)
    return out


# ----------------------------------------------------------------------------- kernels


def test_crps_matches_scoring_module_and_fd():
    eps, sigma = _data()
    crps, grad = crps_and_grad(eps, sigma)
    np.testing.assert_allclose(crps, crps_gaussian(eps, np.zeros_like(eps), sigma), rtol=1e-13, atol=1e-15)
    fd = _fd(lambda s: crps_and_grad(eps, s)[0].sum(), sigma)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-9)


def test_crps_minimum_per_row():
    # Eq. 4: the minimiser is sigma^2 = eps^2 / log 2, where CRPS = |eps| erf(sqrt(log 2 / 2))
    eps = np.array([0.3, -1.7, 4.0])
    s_min = np.abs(eps) / np.sqrt(np.log(2.0))
    crps, grad = crps_and_grad(eps, s_min)
    np.testing.assert_allclose(grad, 0.0, atol=1e-15)
    np.testing.assert_allclose(crps, np.abs(eps) * erf(np.sqrt(np.log(2.0) / 2.0)), rtol=1e-14)


def _rs_by_integration(eta):
    """Eq. 6 integrated numerically, piecewise between the sorted eta."""
    e = np.sort(eta)
    n = e.size
    phi = lambda t: 0.5 * (1.0 + math.erf(t))  # noqa: E731
    total = quad(lambda t: phi(t) ** 2, -np.inf, e[0], epsabs=1e-13)[0]
    for k in range(1, n):
        total += quad(lambda t: (phi(t) - k / n) ** 2, e[k - 1], e[k], epsabs=1e-13)[0]
    total += quad(lambda t: (phi(t) - 1.0) ** 2, e[-1], np.inf, epsabs=1e-13)[0]
    return total


def test_reliability_closed_form_vs_integration_and_metric():
    eps, sigma = _data(n=9, seed=3)
    rs, _ = reliability_and_grad(eps, sigma)
    eta = eps / (np.sqrt(2.0) * sigma)
    assert rs == pytest.approx(_rs_by_integration(eta), abs=1e-10)
    assert rs == pytest.approx(reliability_score(eps, np.zeros_like(eps), sigma), abs=1e-14)


def test_reliability_gradient_vs_fd():
    eps, sigma = _data(n=60, seed=4)
    _, grad = reliability_and_grad(eps, sigma)
    fd = _fd(lambda s: reliability_and_grad(eps, s)[0], sigma, h=1e-7)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-9)


def test_reliability_gradient_is_eq9():
    # dRS_i/dsigma_i = eta_i / (N sigma_i) ((2 r_i - 1)/N - erf eta_i - 1), r_i the rank
    eps, sigma = _data(n=5, seed=5)
    _, grad = reliability_and_grad(eps, sigma)
    eta = eps / (np.sqrt(2) * sigma)
    rank = np.argsort(np.argsort(eta)) + 1
    expected = eta / (5 * sigma) * ((2 * rank - 1) / 5 - erf(eta) - 1)
    np.testing.assert_allclose(grad, expected, rtol=1e-14)


def test_objective_matches_accrue_score_and_fd():
    eps, sigma = _data(n=50, seed=6)
    y, mu = eps + 1.0, np.ones_like(eps)
    cost, grad = accrue_objective(y, mu, sigma)
    ref = accrue_score(y, mu, sigma)
    assert cost == pytest.approx(ref["accrue"], rel=1e-13)
    assert accrue_beta(eps) == pytest.approx(ref["beta"], rel=1e-15)
    fd = _fd(lambda s: accrue_objective(y, mu, s, beta=ref["beta"])[0], sigma, h=1e-7)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-10)


def test_mlp_gradient_vs_fd():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(30, 2))
    e = rng.normal(size=30)
    shapes = A._layer_shapes(2, (5, 3))
    theta = A._mlp_init(shapes, rng)
    theta[-1] = 0.3  # non-trivial output bias
    _, grad = A._mlp_cost_grad(theta, shapes, x, e, 0.4)
    fd = np.empty_like(theta)
    h = 1e-6
    for j in range(theta.size):  # 45 parameters
        up, dn = theta.copy(), theta.copy()
        up[j] += h
        dn[j] -= h
        fd[j] = (A._mlp_cost_grad(up, shapes, x, e, 0.4)[0] - A._mlp_cost_grad(dn, shapes, x, e, 0.4)[0]) / (
            2 * h
        )
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-9)


def test_poly_log_sigma_gradient_vs_fd():
    rng = np.random.default_rng(8)
    u = rng.uniform(-1, 1, size=40)
    e = rng.normal(size=40)
    design = A._poly_design(u, 3)
    theta = np.array([0.1, -0.2, 0.3, 0.05])

    def cost(t):
        return A._log_sigma_to_cost(design @ t, e, 0.45)[0]

    g = design.T @ A._log_sigma_to_cost(design @ theta, e, 0.45)[1]
    fd = np.array([(cost(theta + h) - cost(theta - h)) / 2e-6 for h in np.eye(4) * 1e-6])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-10)


# ----------------------------------------------------------------------------- models


def test_constant_is_crps_optimal():
    rng = np.random.default_rng(9)
    y = rng.normal(scale=1.3, size=400)
    state = fit_accrue(rng.uniform(size=400), y, np.zeros(400), model="constant")
    ref = minimize_scalar(
        lambda s: crps_gaussian(y, np.zeros(400), np.full(400, s)).mean(),
        bounds=(0.1, 10),
        method="bounded",
        options={"xatol": 1e-10},
    ).x
    assert state["sigma"] == pytest.approx(ref, rel=1e-6)
    np.testing.assert_array_equal(apply_accrue(state, [0.1, 0.9]), [state["sigma"]] * 2)


def test_kmeans_one_cluster_is_constant_and_seeded():
    d = make_g(300, seed=1)
    const = fit_accrue(d["x"], d["y"], d["mean"], model="constant")
    one = fit_accrue(d["x"], d["y"], d["mean"], model="kmeans", clusters=1)
    assert one["cluster_sigma"][0] == pytest.approx(const["sigma"], rel=1e-12)
    a = fit_accrue(d["x"], d["y"], d["mean"], model="kmeans", clusters=4, seed=3)
    b = fit_accrue(d["x"], d["y"], d["mean"], model="kmeans", clusters=4, seed=3)
    assert a == b
    assert sum(a["cluster_sizes"]) == 300
    # sigma grows with x in G: the cluster of the largest x has the largest sigma
    centres = np.array(a["centroids"])[:, 0]
    assert np.argmax(centres) == np.argmax(a["cluster_sigma"])


def _rel_err(state, test):
    s = apply_accrue(state, test["x"])
    return float(np.mean(np.abs(s - test["true_std"]) / test["true_std"]))


@pytest.mark.parametrize("model", ["poly", "mlp"])
def test_g_problem_recovers_sigma(model):
    # issue acceptance: 2000 fit rows, fresh test rows, mean |s - sigma| / sigma <= 0.10
    fit = make_g(2000, seed=11)
    test = make_g(5000, seed=12)
    state = fit_accrue(fit["x"], fit["y"], fit["mean"], model=model, seed=0)
    assert _rel_err(state, test) <= 0.10
    assert state["cost"] < state["cost_constant"]
    # the constant baseline is clearly worse (sigma spans 0.5..1)
    const = fit_accrue(fit["x"], fit["y"], fit["mean"], model="constant")
    assert _rel_err(const, test) > 0.15


def test_w_problem_calibration():
    # issue acceptance: 2000 fit rows; test max_cal_err: mlp <= 0.06, constant ~0.16, true ~0.03
    fit = make_w(2000, seed=21)
    test = make_w(2000, seed=22)

    def mce(std):
        return max_calibration_error(pit_gaussian(test["y"], test["mean"], std))

    mlp = fit_accrue(fit["x"], fit["y"], fit["mean"], model="mlp", seed=0)
    const = fit_accrue(fit["x"], fit["y"], fit["mean"], model="constant")
    assert mce(apply_accrue(mlp, test["x"])) <= 0.06
    assert 0.12 <= mce(apply_accrue(const, test["x"])) <= 0.20
    assert mce(test["true_std"]) <= 0.05
    # the paper's remark: a polynomial in log sigma gets there too
    poly = fit_accrue(fit["x"], fit["y"], fit["mean"], model="poly")
    assert mce(apply_accrue(poly, test["x"])) <= 0.06


def test_mlp_is_reproducible_and_serialisable():
    d = make_g(300, seed=2)
    kw = dict(model="mlp", seed=5, hidden=(8, 4), restarts=2)
    a = fit_accrue(d["x"], d["y"], d["mean"], **kw)
    b = fit_accrue(d["x"], d["y"], d["mean"], **kw)
    assert a == b
    text = save_state(a)
    loaded = load_state(text)
    np.testing.assert_array_equal(apply_accrue(loaded, d["x"]), apply_accrue(a, d["x"]))
    assert [np.asarray(w).shape for w in a["weights"]] == [(1, 8), (8, 4), (4, 1)]
    assert len(a["restarts"]) == 2 and a["validation_rows"] == 60


def test_poly_state_and_extrapolation_is_clipped():
    d = make_g(500, seed=3)
    state = fit_accrue(d["x"], d["y"], d["mean"], model="poly")
    assert json.loads(json.dumps(state)) == state
    assert 1 <= state["order"] <= 10 and len(state["coef"]) == state["order"] + 1
    assert state["history"][0]["order"] == 0
    s = apply_accrue(state, [0.0, 1.0, -5.0, 6.0])
    assert s[2] == pytest.approx(apply_accrue(state, [d["x"].min()])[0])
    assert s[3] == pytest.approx(apply_accrue(state, [d["x"].max()])[0])


def test_scale_equivariance():
    # the ACCRUE argmin is scale-free: scaling targets and means by c scales sigma by c
    d = make_y(400, seed=4)
    for model in ("constant", "kmeans", "poly"):
        ref = fit_accrue(d["x"], d["y"], d["mean"], model=model)
        base = apply_accrue(ref, d["x"])
        for c in (1e-3, 7.0):
            state = fit_accrue(d["x"], c * d["y"], c * d["mean"], model=model)
            scaled = apply_accrue(state, d["x"])
            if model == "poly":
                # same cost history; an order-10 fit on 400 rows has nearly flat
                # directions, so the optimiser's end point moves by a fraction of a percent
                np.testing.assert_allclose(
                    [h["cost"] for h in state["history"]], [h["cost"] for h in ref["history"]], rtol=1e-6
                )
                np.testing.assert_allclose(scaled, c * base, rtol=0.02)
            else:
                np.testing.assert_allclose(scaled, c * base, rtol=1e-9)


def test_multifeature_mlp_and_kmeans_5d():
    d = make_5d(600, seed=5)
    for model in ("kmeans", "mlp"):
        state = fit_accrue(d["x"], d["y"], d["mean"], model=model, restarts=1, hidden=(10, 5))
        s = apply_accrue(state, d["x"][:7])
        assert s.shape == (7,) and np.all(s > 0)
        assert state["n_features"] == 5


def test_bad_input():
    d = make_g(100, seed=6)
    x, y, mu = d["x"], d["y"], d["mean"]
    with pytest.raises(UsageError, match="model"):
        fit_accrue(x, y, mu, model="gp")
    with pytest.raises(InputError, match="features must be finite"):
        fit_accrue(np.r_[np.nan, x[1:]], y, mu, model="constant")
    with pytest.raises(InputError, match="need at least 50"):
        fit_accrue(x[:30], y[:30], mu[:30], model="mlp")
    with pytest.raises(InputError, match="exactly one feature"):
        fit_accrue(np.c_[x, x], y, mu, model="poly")
    with pytest.raises(InputError, match="need at least 120"):
        fit_accrue(x, y, mu, model="kmeans", clusters=60)
    with pytest.raises(InputError, match="residuals"):
        fit_accrue(x, y, y, model="constant")
    with pytest.raises(InputError, match="inconsistent"):
        fit_accrue(x[:-1], y, mu, model="constant")
    state = fit_accrue(x, y, mu, model="constant")
    with pytest.raises(InputError, match="1 column"):
        apply_accrue(state, np.c_[x, x])
    with pytest.raises(InputError, match="finite"):
        apply_accrue(state, [np.nan])
    with pytest.raises(InputError, match="missing"):
        apply_accrue({"method": "accrue", "model": "poly"}, x)


def test_constant_sigma_at_the_edges_of_the_doubles():
    # issue 35: residuals near 1e308 overflowed brentq's bracket (ValueError: function value is NaN)
    rng = np.random.default_rng(3)
    y, mu = rng.normal(size=200), np.zeros(200)
    ref = crps_scale(np.abs(y - mu))
    for c in (1e-300, 1e300):  # scale-equivariant over the whole range of the doubles
        assert crps_scale(np.abs(c * (y - mu))) == pytest.approx(c * ref, rel=1e-9)
    # a residual far beyond sigma contributes e^-inf = 0 whatever its size: 1e308 counts as 1e6 does
    for big in (1e308, -1e308):
        far = np.r_[big, (y - mu)[1:]]
        assert crps_scale(np.abs(far)) == pytest.approx(crps_scale(np.abs(np.r_[1e6, far[1:]])), rel=1e-12)


@pytest.mark.parametrize("model", ["constant", "kmeans", "poly", "mlp"])
@pytest.mark.parametrize("role", ["y", "mean"])
# the second fit's mean |residual| overflows on purpose (reported as NaN): numpy warns of that sum, and only of it
@pytest.mark.filterwarnings("ignore:overflow encountered in reduce:RuntimeWarning")
def test_a_target_or_mean_and_a_feature_near_1e308_are_fitted(model, role):
    d = make_g(120, seed=2)
    x, y, mu = d["x"].copy(), d["y"].copy(), d["mean"].copy()
    (y if role == "y" else mu)[3] = 1e308 if role == "y" else -1e308
    x[5] = -1e308
    state = fit_accrue(x, y, mu, model=model, restarts=1, hidden=(5,))
    sigma = apply_accrue(state, x)
    assert np.all(np.isfinite(sigma) & (sigma > 0))
    assert 0.5 < state["sigma_constant"] < 5  # the other 119 rows set it
    assert state["feature_std"][0] > 1e305  # moments of the feature computed without overflow
    json.dumps(state, allow_nan=False)
    # several such rows: still fitted (the cost's mean |residual| overflows: reported as NaN, not raised)
    y[[7, 8]], x[9] = [1e308, -1.3e308], 1.7e308
    state = fit_accrue(x, y, mu, model=model, restarts=1, hidden=(5,))
    assert np.all(np.isfinite(apply_accrue(state, x)))


def test_residuals_beyond_the_doubles_are_refused_naming_the_row():
    d = make_g(100, seed=6)
    y, mu = d["y"].copy(), d["mean"].copy()
    y[4], mu[4] = 1e308, -1e308  # y - mean overflows
    with pytest.raises(InputError, match=r"'y_true' - 'mean' is beyond the largest double .*first at row 4"):
        fit_accrue(d["x"], y, mu, model="constant")
    # sigma_c ~0.8: a residual of 1.7e308 is not a double in units of sigma_c
    y, mu = d["y"].copy(), d["mean"].copy()
    y[9] = 1.7e308
    with pytest.raises(
        InputError, match=r"more than 1.8e308 times the fitted constant sigma .*first at row 9"
    ):
        fit_accrue(d["x"], y, mu, model="poly")
    # every residual near the largest double: the CRPS-optimal sigma (~1.2 |residual|) is not a double
    with pytest.raises(InputError, match="sigma of the residuals y_true - mean is beyond the largest double"):
        fit_accrue(d["x"], np.full(100, 1.7e308), np.zeros(100), model="constant")


# ----------------------------------------------------------------------------- datasets


def test_datasets_shapes_seeds_and_formulas():
    for name, gen in PROBLEMS.items():
        a, b = gen(50, seed=1), gen(50, seed=1)
        for key in ("x", "y", "mean", "true_std"):
            np.testing.assert_array_equal(a[key], b[key])
        assert not np.array_equal(a["y"], gen(50, seed=2)["y"])
        assert a["y"].shape == a["mean"].shape == a["true_std"].shape == (50,)
        np.testing.assert_array_equal(make_problem(name.lower(), 50, seed=1)["y"], a["y"])
    g = make_g(1000)
    np.testing.assert_allclose(g["true_std"], g["x"] / 2 + 0.5)
    np.testing.assert_allclose(g["mean"], 2 * np.sin(2 * np.pi * g["x"]))
    assert 0 <= g["x"].min() and g["x"].max() <= 1
    w = make_w(1000)
    assert 0 <= w["x"].min() and w["x"].max() <= np.pi
    assert 0.01 <= w["true_std"].min() and w["true_std"].max() <= 1.01
    yy = make_y(1000)
    np.testing.assert_allclose(yy["true_std"], np.exp(np.sin(2 * np.pi * yy["x"])) / 3)
    five = make_5d(20_000)
    assert five["x"].shape == (20_000, 5) and np.all(five["mean"] == 0)
    # the paper: sigma ranges in [0.09, 0.99]
    assert five["true_std"].min() >= 0.09 - 1e-12 and five["true_std"].max() <= 0.99 + 1e-12
    # residuals have the stated spread: standardised residuals are N(0, 1)
    z = (g["y"] - g["mean"]) / g["true_std"]
    assert abs(z.std() - 1) < 0.07
    with pytest.raises(InputError, match="unknown synthetic problem"):
        make_problem("Q", 10)
    with pytest.raises(InputError, match="positive integer"):
        make_g(0)
