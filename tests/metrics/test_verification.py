"""Forecast verification (issue 16 A): weighted CRPS, threshold exceedance, Murphy curves.

Reference values are frozen in tests/reference/data/weighted_scores.npz by
tests/reference/regen_weighted_scores.py from scoringrules 0.10.0 (crps_cnormal, crps_tnormal,
twcrps_ensemble, owcrps_ensemble, crps_normal) and scores 2.7.0 (murphy_score, murphy_thetas,
brier_score), on a seeded data set and on statsmodels' yearly sunspot series forecast by an AR(2)
model. Closed forms are also checked against scipy quadrature.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

from uqeval.metrics import exceedance as ex, murphy as mu_, weighted as w
from uqeval.metrics.samples import crps_ensemble
from uqeval.metrics.scoring import crps_gaussian

REF = np.load(Path(__file__).parents[1] / "reference" / "data" / "weighted_scores.npz")
DATASETS = ("synth", "sunspots")
RTOL, ATOL = 1e-9, 1e-12


def murphy_curve_direct(
    forecast, y_true, thetas, functional: str = "expectile", alpha: float = 0.5, block: int = 64
) -> np.ndarray:
    """The elementary scores (Ehm et al. 2016, eqs. 4-5) averaged over the rows at each threshold, in blocks
    of thresholds (O(N G) time): the obviously correct form ``uqeval.metrics.murphy.murphy_curve`` is
    tested against."""
    x = np.asarray(forecast, dtype=np.float64)[:, None]
    y = np.asarray(y_true, dtype=np.float64)[:, None]
    th = np.asarray(thetas, dtype=np.float64)
    out = np.empty(th.shape[0])
    for start in range(0, th.shape[0], block):  # blocks of thresholds, not rows
        t = th[None, start : start + block]
        s = np.where((x > t) & (y <= t), 1.0 - alpha, 0.0) + np.where((x <= t) & (y > t), alpha, 0.0)
        if functional == "expectile":
            s = s * np.abs(y - t)
        out[start : start + block] = s.mean(axis=0)
    return out


def _d(name: str, key: str) -> np.ndarray:
    return REF[f"{name}_{key}"]


def _regions(name: str):
    return [(a, b) for a, b in _d(name, "regions")]


# --------------------------------------------------------------------------- weighted CRPS vs scoringrules 0.10.0


@pytest.mark.parametrize("name", DATASETS)
def test_twcrps_gaussian_matches_scoringrules_crps_cnormal(name):
    y, m, s = _d(name, "y"), _d(name, "mu"), _d(name, "sd")
    for j, region in enumerate(_regions(name)):
        ref = _d(name, "twcrps_normal")[j]
        ok = np.isfinite(ref)  # scoringrules' censored-normal formula gives 0/0 deep in a tail
        assert ok.mean() > 0.85
        np.testing.assert_allclose(w.twcrps_gaussian(y, m, s, region)[ok], ref[ok], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", DATASETS)
def test_owcrps_gaussian_matches_scoringrules_crps_tnormal(name):
    y, m, s = _d(name, "y"), _d(name, "mu"), _d(name, "sd")
    for j, (a, b) in enumerate(_regions(name)):
        ref = _d(name, "owcrps_normal")[j]
        # scoringrules' truncated-normal CRPS loses digits when the region holds little mass (differences
        # of CDFs near 1): compared where the region holds >= 1% of the forecast; the rest by quadrature below
        mass = stats.norm.cdf(b, m, s) - stats.norm.cdf(a, m, s)
        ok = mass > 0.01
        assert ok.sum() >= 30
        np.testing.assert_allclose(w.owcrps_gaussian(y, m, s, (a, b))[ok], ref[ok], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", DATASETS)
def test_twcrps_samples_matches_scoringrules(name):
    y, ens = _d(name, "y"), _d(name, "ens")
    for j, region in enumerate(_regions(name)):
        np.testing.assert_allclose(
            w.twcrps_samples(y, ens, region), _d(name, "twcrps_ensemble")[j], rtol=RTOL, atol=ATOL
        )


@pytest.mark.parametrize("name", DATASETS)
def test_owcrps_samples_matches_scoringrules_and_documents_the_empty_region_convention(name):
    y, ens = _d(name, "y"), _d(name, "ens")
    for j, (a, b) in enumerate(_regions(name)):
        ref = _d(name, "owcrps_ensemble")[j]
        got = w.owcrps_samples(y, ens, (a, b))
        ok = np.isfinite(ref)
        assert ok.sum() > 20
        np.testing.assert_allclose(got[ok], ref[ok], rtol=RTOL, atol=ATOL)
        inside = (y >= a) & (y <= b)
        empty = ((ens >= a) & (ens <= b)).sum(axis=1) == 0
        assert np.all(got[~inside] == 0.0)  # scoringrules: NaN when no member is in R, else 0
        sel = inside & empty  # uqeval's convention: the chained members
        if sel.any():
            np.testing.assert_allclose(
                got[sel], crps_ensemble(np.clip(y[sel], a, b), np.clip(ens[sel], a, b)), rtol=1e-12
            )


@pytest.mark.parametrize("name", DATASETS)
def test_whole_line_region_gives_the_crps(name):
    y, m, s, ens = _d(name, "y"), _d(name, "mu"), _d(name, "sd"), _d(name, "ens")
    np.testing.assert_allclose(w.twcrps_gaussian(y, m, s), _d(name, "crps_normal"), rtol=RTOL)
    np.testing.assert_allclose(w.owcrps_gaussian(y, m, s), crps_gaussian(y, m, s), rtol=RTOL)
    # the threshold below every value: the samples' twCRPS is the CRPS exactly, the Gaussian's to the
    # mass of F below the threshold (here 40 sigma below every mean: nothing in double precision)
    t = min(y.min(), ens.min(), (m - 40 * s).min())
    np.testing.assert_array_equal(w.twcrps_samples(y, ens, (t, None)), crps_ensemble(y, ens))
    np.testing.assert_allclose(w.twcrps_gaussian(y, m, s, (t, None)), crps_gaussian(y, m, s), rtol=1e-12)
    np.testing.assert_allclose(w.owcrps_samples(y, ens, (t, None)), crps_ensemble(y, ens), rtol=1e-12)


def _quad(f, lo, hi, breaks):
    pts = sorted({lo, hi, *[b for b in breaks if lo < b < hi]})
    return sum(
        integrate.quad(f, p, q, epsabs=0, epsrel=1e-13, limit=200)[0] for p, q in zip(pts[:-1], pts[1:])
    )


@pytest.mark.filterwarnings("ignore::scipy.integrate.IntegrationWarning")
@pytest.mark.parametrize(
    "region", [(1.0, None), (None, -0.5), (-1.0, 2.0), (4.0, None), (None, -4.5), (3.0, 3.5)]
)
def test_gaussian_closed_forms_equal_their_integrals(region):
    """twCRPS = ∫_R (F − 1{y ≤ z})² dz and owCRPS = w(y) ∫ (F_w − 1{y ≤ z})² dz, by quadrature."""
    rng = np.random.default_rng(5)
    m, s = rng.normal(size=12), rng.uniform(0.3, 2.0, 12)
    y = m + 2.0 * s * rng.normal(size=12)
    y[:3] = [3.2, -4.7, 1.5]
    a = -np.inf if region[0] is None else region[0]
    b = np.inf if region[1] is None else region[1]
    tw, ow = w.twcrps_gaussian(y, m, s, region), w.owcrps_gaussian(y, m, s, region)
    for i in range(y.size):
        lo, hi = max(a, m[i] - 40 * s[i]), min(b, m[i] + 40 * s[i])
        if lo < hi:
            F = lambda z: stats.norm.cdf(z, m[i], s[i])  # noqa: E731
            want = _quad(lambda z: (F(z) - (y[i] <= z)) ** 2, lo, hi, [y[i]])
            assert tw[i] == pytest.approx(want, rel=1e-9, abs=1e-14), (i, region)
        if not a <= y[i] <= b:
            assert ow[i] == 0.0
            continue
        d = stats.norm.sf(a, m[i], s[i]) - stats.norm.sf(b, m[i], s[i])
        Fw = lambda z: (stats.norm.sf(a, m[i], s[i]) - stats.norm.sf(z, m[i], s[i])) / d  # noqa: E731
        lo, hi = max(a, min(y[i], m[i]) - 40 * s[i]), min(b, max(y[i], m[i]) + 40 * s[i])
        want = _quad(lambda z: (Fw(z) - (y[i] <= z)) ** 2, lo, hi, [y[i]])
        assert ow[i] == pytest.approx(want, rel=1e-9, abs=1e-14), (i, region)


def test_weighted_scores_are_zero_outside_and_nonnegative():
    y, m, s, ens = _d("synth", "y"), _d("synth", "mu"), _d("synth", "sd"), _d("synth", "ens")
    for region in _regions("synth"):
        for f in (
            w.twcrps_gaussian(y, m, s, region),
            w.owcrps_gaussian(y, m, s, region),
            w.twcrps_samples(y, ens, region),
            w.owcrps_samples(y, ens, region),
        ):
            assert np.all(f >= 0) and np.all(np.isfinite(f))
    # twCRPS <= CRPS (the integrand is restricted); equality for the whole line
    assert np.all(w.twcrps_gaussian(y, m, s, (0.0, None)) <= crps_gaussian(y, m, s) + 1e-12)


# --------------------------------------------------------------------------- exceedance


@pytest.mark.parametrize("name", DATASETS)
def test_exceedance_gaussian_matches_scipy_and_scores_brier(name):
    y, m, s = _d(name, "y"), _d(name, "mu"), _d(name, "sd")
    for j, t in enumerate(_d(name, "thresholds")):
        p = ex.exceedance_gaussian(m, s, t)
        np.testing.assert_allclose(p, _d(name, "exceed_prob")[j], rtol=RTOL, atol=1e-15)
        sc = ex.exceedance_scores(y, p, t)
        assert sc["brier"].mean() == pytest.approx(float(_d(name, "exceed_brier")[j]), rel=RTOL)
        np.testing.assert_array_equal(sc["crps"], sc["brier"])


def test_exceedance_crps_is_the_crps_of_the_bernoulli_forecast():
    """∫ (F_p(z) − 1{o ≤ z})² dz for Bernoulli(p) equals (p − o)²: checked by integrating the step CDFs."""
    p = np.array([0.0, 0.2, 0.7, 1.0])
    for o in (0.0, 1.0):
        grid = np.linspace(-0.5, 1.5, 200001)
        F = np.where(grid < 0, 0.0, np.where(grid < 1, 1 - p[:, None], 1.0))
        step = (grid >= o).astype(float)
        num = ((F - step) ** 2).sum(axis=1) * (grid[1] - grid[0])
        np.testing.assert_allclose(
            num, ex.exceedance_scores(np.full(4, 2.0 * o - 0.5), p, 0.0)["crps"], atol=1e-4
        )


def test_exceedance_samples_quantiles_and_points():
    s = np.array([[0.0, 1.0, 2.0, 3.0], [5.0, 5.0, 5.0, 5.0]])
    np.testing.assert_array_equal(ex.exceedance_samples(s, 1.5), [0.5, 1.0])
    ragged = np.array([[0.0, 1.0, np.nan, 3.0]])
    np.testing.assert_allclose(ex.exceedance_samples(ragged, 0.5), [2 / 3])
    q = np.array([[0.0, 1.0, 3.0]])
    lv = np.array([0.1, 0.5, 0.9])
    # linear between (q_j, tau_j): F(2) = 0.5 + 0.4/2 = 0.7; flat outside the outermost levels
    np.testing.assert_allclose(ex.exceedance_quantiles(q, lv, 2.0), [0.3])
    np.testing.assert_allclose(ex.exceedance_quantiles(q, lv, -10.0), [0.9])
    np.testing.assert_allclose(ex.exceedance_quantiles(q, lv, 10.0), [0.1])
    np.testing.assert_allclose(ex.exceedance_quantiles(q, lv, 1.0), [0.5])
    tied = np.array([[1.0, 1.0, 1.0]])  # tied quantiles: the CDF jumps to the highest level there
    np.testing.assert_allclose(ex.exceedance_quantiles(tied, lv, 1.0), [0.1])
    np.testing.assert_array_equal(ex.exceedance_point(np.array([0.0, 2.0]), 1.0), [0.0, 1.0])
    # Gaussian quantiles at many levels approach the Gaussian exceedance probability
    levels = np.linspace(0.001, 0.999, 999)
    qs = stats.norm.ppf(levels)[None, :]
    assert ex.exceedance_quantiles(qs, levels, 0.7)[0] == pytest.approx(stats.norm.sf(0.7), abs=1e-5)


# --------------------------------------------------------------------------- Murphy curves vs scores 2.7.0


@pytest.mark.parametrize("name", DATASETS)
def test_murphy_curves_match_scores(name):
    y, m, q = _d(name, "y"), _d(name, "mu"), _d(name, "q")
    th = _d(name, "murphy_mean_thetas")
    np.testing.assert_allclose(mu_.murphy_curve(m, y, th), _d(name, "murphy_mean"), rtol=RTOL, atol=ATOL)
    qth = _d(name, "murphy_quantile_thetas")
    for j, a in enumerate(REF["levels"]):
        np.testing.assert_allclose(
            mu_.murphy_curve(q[:, j], y, qth, "quantile", float(a)),
            _d(name, "murphy_quantile")[j],
            rtol=RTOL,
            atol=ATOL,
        )
    pth = _d(name, "murphy_prob_thetas")
    for j, t in enumerate(_d(name, "thresholds")):
        p = ex.exceedance_gaussian(_d(name, "mu"), _d(name, "sd"), t)
        np.testing.assert_allclose(
            mu_.murphy_curve(p, (y > t).astype(float), pth), _d(name, "murphy_prob")[j], rtol=RTOL, atol=ATOL
        )


@pytest.mark.parametrize("name", DATASETS)
def test_murphy_integral_is_the_consistent_score(name):
    """Exact integrals on a grid holding every jump point (forecasts and targets): between two neighbouring
    points a curve is constant (quantile) or linear (expectile), so the midpoint rule is exact."""
    y, m, q = _d(name, "y"), _d(name, "mu"), _d(name, "q")

    def integral(forecast, target, grid, *args):
        mid = 0.5 * (grid[1:] + grid[:-1])
        return float(np.sum(mu_.murphy_curve(forecast, target, mid, *args) * np.diff(grid)))

    grid = np.unique(np.concatenate([y, m, q.ravel(), [y.min() - 1.0, y.max() + 1.0]]))
    for j, a in enumerate(REF["levels"]):
        pinball = np.maximum(a * (y - q[:, j]), (a - 1) * (y - q[:, j])).mean()  # scoring.pinball_loss
        assert integral(q[:, j], y, grid, "quantile", float(a)) == pytest.approx(pinball, rel=1e-10)
    assert integral(m, y, grid) == pytest.approx(
        np.mean((m - y) ** 2) / 4.0, rel=1e-10
    )  # a quarter of the MSE
    # probabilities: a quarter of the Brier score
    t = _d(name, "thresholds")[0]
    p, o = ex.exceedance_gaussian(m, _d(name, "sd"), t), (y > t).astype(float)
    pgrid = np.unique(np.concatenate([[0.0, 1.0], p]))
    assert integral(p, o, pgrid) == pytest.approx(np.mean((p - o) ** 2) / 4, rel=1e-10)


def test_sorted_murphy_curve_equals_the_direct_sum():
    """The O((N + G) log N) suffix-sum form against the row-by-threshold sum (in blocks of 3 thresholds),
    with ties, forecasts equal to targets and thresholds on the jump points; and the left limits."""
    rng = np.random.default_rng(4)
    y = np.round(rng.normal(size=300), 1)
    x = np.round(y + rng.normal(size=300), 1)
    x[:30] = y[:30]
    th = np.concatenate([mu_.jump_points(x, y), np.linspace(-5, 5, 41)])
    for functional, a in (("quantile", 0.3), ("quantile", 0.5), ("expectile", 0.5), ("expectile", 0.9)):
        want = murphy_curve_direct(x, y, th, functional, a, block=3)
        np.testing.assert_allclose(
            mu_.murphy_curve(x, y, th, functional, a), want, rtol=1e-12, atol=1e-14 * want.max()
        )
        left = mu_.murphy_curve(x, y, th, functional, a, left_limit=True)
        np.testing.assert_allclose(left, murphy_curve_direct(x, y, th - 1e-9, functional, a, 3), atol=1e-8)


def test_dominance():
    assert mu_.dominates([0.0, 1.0, 2.0], [0.0, 1.5, 2.0])
    assert not mu_.dominates([0.0, 1.0, 2.0], [0.0, 1.0, 2.0])  # equal: neither dominates
    assert not mu_.dominates([0.0, 1.0, 2.5], [0.0, 1.5, 2.0])  # crossing curves
    assert not mu_.dominates([0.0, 1.0 + 1e-15, 2.0], [0.0, 1.0, 2.0])


# --------------------------------------------------------------------------- settings, flags, API, check, compare


def test_region_syntax():
    from uqeval.config import make_settings, parse_region, parse_thresholds
    from uqeval.errors import InputError, UsageError

    assert parse_region("1.5") == parse_region(">1.5") == parse_region(1.5) == (1.5, None)
    assert parse_region("<-2") == (None, -2.0)
    assert parse_region("0:2") == parse_region([0, 2]) == (0.0, 2.0)
    assert parse_region([None, 3]) == (None, 3.0)  # as written in a summary's settings
    for bad in ("2:1", "x", ">", "1:2:3", "inf", True, [None, None]):
        with pytest.raises(InputError):
            parse_region(bad)
    assert parse_thresholds(["0.5,1", "2", "1"]) == (0.5, 1.0, 2.0)
    with pytest.raises(UsageError):
        make_settings(tw_threshold="a:b")
    with pytest.raises(UsageError, match="at most 1,000"):
        make_settings(thresholds=",".join(str(i) for i in range(1001)))
    s = make_settings(tw_threshold="<0", thresholds=[1.0], murphy=True)
    assert s.to_json()["tw_threshold"] == [None, 0.0] and s.to_json()["thresholds"] == [1.0]
    assert make_settings(baseline=json.loads(json.dumps(s.to_json()))) == s  # round trip through a summary


def test_config_file_keys(tmp_path):
    from uqeval.config import make_settings

    cfg = tmp_path / "c.toml"
    cfg.write_text('[metrics]\ntw_threshold = "-1:1"\nthresholds = [0.5, 2]\nmurphy = true\n')
    s = make_settings(cfg)
    assert (s.tw_threshold, s.thresholds, s.murphy) == ((-1.0, 1.0), (0.5, 2.0), True)
    cfg.write_text('[metrics]\ntw_threshold = "1:0"\n')
    from uqeval.errors import InputError

    with pytest.raises(InputError, match="config file"):
        make_settings(cfg)


def test_python_api_keywords():
    import uqeval

    rng = np.random.default_rng(0)
    m = rng.normal(size=300)
    y = m + rng.normal(size=300)
    res = uqeval.evaluate(y, mean=m, std=np.ones(300), tw_threshold="1", thresholds=[0.0], murphy=True)
    res = json.loads(res.to_json())
    want = w.twcrps_gaussian(y, m, np.ones(300), (1.0, None)).mean()
    assert res["metrics"]["weighted_scoring"]["twcrps"] == pytest.approx(want, rel=1e-12)
    assert res["metrics"]["exceedance"]["0"]["brier"] == pytest.approx(
        np.mean((stats.norm.sf(0.0, m, 1.0) - (y > 0)) ** 2), rel=1e-12
    )
    assert len(res["metrics"]["murphy"]["mean"]) == mu_.GRID_POINTS
    assert res["settings"]["tw_threshold"] == [1.0, None]
    plain = json.loads(uqeval.evaluate(y, mean=m, std=np.ones(300)).to_json())["metrics"]
    assert not {"weighted_scoring", "exceedance", "murphy"} & set(plain)  # opt-in


def _files(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(3)
    n = 400
    m = rng.normal(size=n)
    y = m + 0.5 * rng.normal(size=n)
    paths = {}
    for name, cols in {
        "perfect": {"y": y, "mu": y, "sigma": np.full(n, 0.1)},
        "model": {"y": y, "mu": m, "sigma": np.full(n, 0.5)},
        "shifted": {"y": y, "mu": m + 1.5, "sigma": np.full(n, 0.5)},
    }.items():
        paths[name] = tmp_path / f"{name}.parquet"
        pd.DataFrame(cols).to_parquet(paths[name])
    return paths


def test_cli_score_check_and_compare_with_dominance(tmp_path):
    from typer.testing import CliRunner

    from uqeval.cli import app

    runner = CliRunner()
    f = _files(tmp_path)
    out = tmp_path / "s.json"
    r = runner.invoke(
        app,
        [
            "score",
            str(f["model"]),
            "--tw-threshold",
            "<0",
            "--threshold",
            "0.5",
            "--threshold",
            "1",
            "--murphy",
            "--plot-dir",
            str(tmp_path / "plots"),
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    summary = json.loads(out.read_text())
    assert set(summary["metrics"]["exceedance"]) == {"0.5", "1"}
    assert summary["settings"]["tw_threshold"] == [None, 0.0] and summary["settings"]["thresholds"] == [
        0.5,
        1.0,
    ]
    assert summary["orientation"]["weighted_scoring.owcrps"] == "lower"
    assert (tmp_path / "plots" / "murphy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # a rule on an exceedance path turns the group on for a predictions file; a weighted one names its flag
    rules = tmp_path / "r.toml"
    rules.write_text('[rules]\n"exceedance.2.brier" = { max = 1 }\n')
    r = runner.invoke(app, ["check", str(f["model"]), "--rules", str(rules), "--format", "json"])
    assert r.exit_code == 0, r.output
    rules.write_text('[rules]\n"weighted_scoring.twcrps" = { max = 1 }\n')
    r = runner.invoke(app, ["check", str(f["model"]), "--rules", str(rules)])
    assert r.exit_code == 3 and "--tw-threshold" in r.stderr
    r = runner.invoke(app, ["check", str(out), "--rules", str(rules), "--format", "json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["passed"] is True
    # compare: paired tests on the per-row scores; the perfect forecast dominates both (its curve is 0)
    r = runner.invoke(
        app,
        [
            "compare",
            str(f["perfect"]),
            str(f["model"]),
            str(f["shifted"]),
            "--murphy",
            "--tw-threshold",
            "1",
            "--metrics",
            "weighted_scoring.twcrps,weighted_scoring.owcrps,exceedance.0.5.brier",
            "--bootstrap",
            "50",
            "--permutations",
            "50",
            "--pairs",
            "all",
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert {t["metric"] for t in res["tests"]} == {
        "weighted_scoring.twcrps",
        "weighted_scoring.owcrps",
        "exceedance.0.5.brier",
    }
    assert res["settings"]["tw_threshold"] == [1.0, None] and res["settings"]["thresholds"] == [0.5]
    dom = {(d["model"], d["dominated"]) for d in res["murphy"]["dominates"]}
    assert ("perfect", "model") in dom and ("perfect", "shifted") in dom
    assert ("model", "perfect") not in dom and ("shifted", "perfect") not in dom
    curves = res["murphy"]["curves"]["mean"]
    assert set(curves) == {"perfect", "model", "shifted"} and len(curves["model"]) == len(
        res["murphy"]["thetas"]
    )
    assert not any(curves["perfect"])
    md = runner.invoke(
        app, ["compare", str(f["perfect"]), str(f["model"]), "--murphy", "--format", "markdown"]
    )
    assert md.exit_code == 0 and "Murphy-diagram dominance" in md.stdout


def test_murphy_plot_kind_is_opt_in():
    from uqeval.config import Settings
    from uqeval.plots.kinds import applicable_kinds, build_figures
    from uqeval.predictions import Categorical, Gaussian, Quantiles

    rng = np.random.default_rng(1)
    y = rng.normal(size=50)
    preds = [
        Gaussian(y_true=y, columns={}, rows=np.arange(50), mean=y + 0.1, std=np.ones(50)),
        Quantiles(
            y_true=y,
            columns={},
            rows=np.arange(50),
            quantiles=y[:, None] + np.array([-1.0, 0.0, 1.0]),
            levels=np.array([0.1, 0.5, 0.9]),
        ),
        Categorical(y_true=(y > 0).astype(int), columns={}, rows=np.arange(50), proba=stats.norm.cdf(y)),
    ]
    for pred in preds:
        assert "murphy" not in applicable_kinds(pred, Settings())
        assert "murphy" in applicable_kinds(pred, Settings(murphy=True))
        fig = build_figures(pred, settings=Settings(murphy=True), kinds=["murphy"], name="f.csv").figures[
            "murphy"
        ]
        assert "f.csv" in fig.axes[0].get_title() and fig.axes[0].lines


def test_ragged_samples_score_each_row_on_its_own_members():
    """--nan-policy omit keeps rows with missing members: each row is scored on the members it has."""
    from uqeval.catalogue import compute_metrics
    from uqeval.config import make_settings
    from uqeval.predictions import Samples

    rng = np.random.default_rng(8)
    s = rng.normal(size=(40, 6))
    s[0, 1] = np.nan
    s[5, :3] = np.nan
    y = rng.normal(size=40)
    pred = Samples(y_true=y, columns={}, rows=np.arange(40), samples=s, allow_missing=True)
    settings = make_settings(tw_threshold="-0.5:1", thresholds=[0.2])
    got = compute_metrics(pred, settings)[0]
    rows = [(y[i : i + 1], s[i : i + 1, np.isfinite(s[i])]) for i in range(40)]
    tw = np.mean([w.twcrps_samples(a, b, (-0.5, 1.0))[0] for a, b in rows])
    ow = np.mean([w.owcrps_samples(a, b, (-0.5, 1.0))[0] for a, b in rows])
    br = np.mean([(np.mean(b > 0.2) - (a[0] > 0.2)) ** 2 for a, b in rows])
    assert got["weighted_scoring"]["twcrps"] == pytest.approx(tw, rel=1e-12)
    assert got["weighted_scoring"]["owcrps"] == pytest.approx(ow, rel=1e-12)
    assert got["exceedance"]["0.2"]["brier"] == pytest.approx(br, rel=1e-12)


def test_owcrps_gaussian_far_out_region_is_finite_and_near_its_limit():
    y, m, s = np.array([41.0, 45.0, 0.0]), np.zeros(3), np.ones(3)
    got = w.owcrps_gaussian(y, m, s, (40.0, None))
    assert np.all(np.isfinite(got)) and got[2] == 0.0
    assert got[1] == pytest.approx(5.0, rel=0.01)  # F_w is a point mass at 40 in the limit
    moderate = w.owcrps_gaussian(np.array([21.0]), np.zeros(1), np.ones(1), (20.0, None))[0]
    assert np.isfinite(moderate) and 0.9 < moderate < 1.0  # the truncated normal sits just above 20


# --------------------------------------------------------------------------- twCRPS of quantile forecasts
QREF = np.load(Path(__file__).parents[1] / "reference" / "data" / "weighted_quantiles.npz")


@pytest.mark.parametrize("name", DATASETS)
def test_twcrps_quantiles_matches_scoringrules_crps_quantile_of_the_chained_forecast(name):
    """Frozen from scoringrules 0.10.0 ``crps_quantile`` (tests/reference/regen_weighted_quantiles.py)."""
    y = _d(name, "y")
    for key, q, lv in (("q3", _d(name, "q"), QREF["levels3"]), ("q7", QREF[f"{name}_q7"], QREF["levels7"])):
        for j, region in enumerate(_regions(name)):
            np.testing.assert_allclose(
                w.twcrps_quantiles(y, q, lv, region), QREF[f"{name}_twcrps_{key}"][j], rtol=RTOL, atol=ATOL
            )


@pytest.mark.parametrize("name", DATASETS)
def test_twcrps_quantiles_at_midpoint_levels_is_the_ensemble_twcrps(name):
    """At levels (j + 1/2)/M twice the mean pinball loss is the CRPS of the quantiles taken as members, so
    the quantile twCRPS equals scoringrules' ``twcrps_ensemble`` of the same numbers."""
    y, ens = _d(name, "y"), _d(name, "ens")
    lv = (np.arange(ens.shape[1]) + 0.5) / ens.shape[1]
    q = np.sort(ens, axis=1)
    for j, region in enumerate(_regions(name)):
        np.testing.assert_allclose(
            w.twcrps_quantiles(y, q, lv, region), _d(name, "twcrps_ensemble")[j], rtol=RTOL, atol=ATOL
        )


def test_twcrps_quantiles_whole_line_and_cli(tmp_path):
    from typer.testing import CliRunner

    from uqeval.cli import app
    from uqeval.metrics.scoring import pinball_loss

    y, q, lv = _d("synth", "y"), QREF["synth_q7"], QREF["levels7"]
    np.testing.assert_allclose(
        w.twcrps_quantiles(y, q, lv), 2 * pinball_loss(y, q, lv).mean(axis=1), rtol=1e-15
    )
    assert np.all(w.twcrps_quantiles(y, q, lv, (1.0, None)) >= 0)
    # a quantile file: twcrps only (no owCRPS for quantiles, README); 2 x pinball for a region holding all
    src = Path(__file__).parents[2] / "sample_data" / "quantiles.parquet"
    runner = CliRunner()
    outs = []
    for region in ("-1e6:1e6", "1"):
        r = runner.invoke(app, ["score", str(src), "--tw-threshold", region, "--format", "json"])
        assert r.exit_code == 0, r.output
        outs.append(json.loads(r.stdout))
    assert set(outs[0]["metrics"]["weighted_scoring"]) == {"twcrps"}
    assert outs[0]["metrics"]["weighted_scoring"]["twcrps"] == pytest.approx(
        2 * outs[0]["metrics"]["scoring_rule"]["pinball"], rel=1e-12
    )
    assert (
        0
        < outs[1]["metrics"]["weighted_scoring"]["twcrps"]
        < outs[0]["metrics"]["weighted_scoring"]["twcrps"]
    )
    r = runner.invoke(
        app, ["score", str(src).replace("quantiles", "intervals"), "--tw-threshold", "1", "--format", "json"]
    )
    assert r.exit_code == 0 and "twcrps" in json.loads(r.stdout)["metrics"]["weighted_scoring"]
