"""Blocked kernels (issue 18): the same numbers as the whole-array code they replace, bit for bit.

The Gaussian kernels evaluate per-row terms block by block (``uqeval.metrics.blocks``) and place
residuals among fixed break points through a lookup table (``uqeval.metrics.search``); both must
give exactly what the straightforward whole-array numpy expressions give, across block boundaries.
"""

import numpy as np
import pytest
from scipy.special import erfc, ndtr, ndtri

from uqeval.metrics import blocks
from uqeval.metrics.accuracy import regression_accuracy
from uqeval.metrics.blocks import row_argmax, rowwise
from uqeval.metrics.calibration import interval_cover_index
from uqeval.metrics.intervals import coverage_metrics
from uqeval.metrics.reliability import reliability_gaussian
from uqeval.metrics.scoring import crps_gaussian_mean, scoring_rules_gaussian
from uqeval.metrics.search import searchsorted_fixed
from uqeval.metrics.sharpness import sharpness


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 1,000 rows, so that a few thousand rows cross many block boundaries."""
    monkeypatch.setattr(blocks, "BLOCK", 1000)


def _data(n=5_503, seed=0):
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 2.0, n)
    return mean + 1.1 * std * rng.normal(size=n), mean, std


def test_rowwise_and_row_argmax_equal_the_whole_array_expression():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=10_007), rng.normal(size=10_007)
    fn = lambda a, b: np.exp(-a * a) / (1.0 + b * b) - ndtr(a)  # noqa: E731
    out = rowwise(fn, x, y, block=1000)
    assert out.tobytes() == fn(x, y).tobytes()
    ranks = lambda i, a: i / x.size - a  # noqa: E731
    whole = ranks(np.arange(1, x.size + 1, dtype=np.float64), x)
    assert rowwise(ranks, x, positions=True, block=999).tobytes() == whole.tobytes()
    xt = np.repeat(x[:50], 200)  # ties: the first maximum, as np.argmax
    k, v = row_argmax(lambda a: a, xt, block=64)
    assert (k, v) == (int(np.argmax(xt)), float(xt.max()))


def test_gaussian_kernels_do_not_depend_on_the_block_size(small_blocks):
    """Blocks of 1,000 rows give bitwise what one block (the whole array) gives."""
    y, mean, std = _data()
    got = (
        scoring_rules_gaussian(y, mean, std),
        reliability_gaussian(y, mean, std),
        regression_accuracy(y, mean),
        sharpness(std),
        coverage_metrics(y, mean - 2 * std, mean + 2 * std, 0.95),
    )
    blocks.BLOCK = 1 << 20
    whole = (
        scoring_rules_gaussian(y, mean, std),
        reliability_gaussian(y, mean, std),
        regression_accuracy(y, mean),
        sharpness(std),
        coverage_metrics(y, mean - 2 * std, mean + 2 * std, 0.95),
    )
    assert repr(got) == repr(whole)


def test_blocked_kernels_equal_the_plain_formulas():
    """The blocked kernels against the plain whole-array expressions they replaced."""
    y, mean, std = _data(20_011)
    eps = y - mean
    z = eps / std
    nll = np.mean(0.5 * np.log(2.0 * np.pi) + np.log(std) + 0.5 * z * z)
    pdf = 1.0 / np.sqrt(2.0 * np.pi) * np.exp(-0.5 * z * z)
    crps = np.mean(std * (z * (2.0 * ndtr(z) - 1.0) + 2.0 * pdf - 1.0 / np.sqrt(np.pi)))
    got = scoring_rules_gaussian(y, mean, std)
    assert got["nll"] == float(nll) and got["crps"] == float(crps)
    # the mean the catalogue makes once and hands to both families is bitwise each family's own
    shared = crps_gaussian_mean(y, mean, std)
    assert shared == float(crps)
    assert scoring_rules_gaussian(y, mean, std, crps=shared) == got
    assert reliability_gaussian(y, mean, std, crps_mean=shared) == reliability_gaussian(y, mean, std)
    zs = np.sort(z)
    i = np.arange(1, z.size + 1, dtype=np.float64)
    eta = zs / np.sqrt(2.0)
    terms = (eta / z.size) * (erfc(-eta) - (2.0 * i - 1.0) / z.size) + np.exp(-eta * eta) / (
        z.size * np.sqrt(np.pi)
    )
    assert reliability_gaussian(y, mean, std)["rs"] == float(np.sum(terms) - 0.5 * np.sqrt(2.0 / np.pi))
    u = ndtr(zs)
    mce = max(np.max(i / z.size - u), np.max(u - (i - 1.0) / z.size))
    assert reliability_gaussian(y, mean, std)["max_cal_err"] == float(mce)
    acc = regression_accuracy(y, mean)
    assert acc["mae"] == float(np.mean(np.abs(eps))) and acc["mdae"] == float(np.median(np.abs(eps)))
    assert acc["rmse"] == float(np.sqrt(np.mean(np.square(eps))))
    lo, hi = mean - std, mean + 1.5 * std
    cov = coverage_metrics(y, lo, hi, 0.8, y_std=2.0)
    inside = ((y >= lo) & (y <= hi)).astype(float)
    assert cov["coverage"] == float(np.mean(inside)) and cov["width"] == float(np.mean(hi - lo))
    assert cov["width_norm"] == float(np.mean((hi - lo) / 2.0)) and cov["miss_below"] == float(
        np.mean(y < lo)
    )
    assert cov["coverage_error"] == float(np.mean(inside) - 0.8)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_fixed_equals_searchsorted(side):
    rng = np.random.default_rng(1)
    levels = np.linspace(0.01, 0.99, 99)
    x = np.concatenate(
        [
            rng.normal(size=100_000) * 2,
            rng.standard_cauchy(10_000),
            [np.inf, -np.inf, 0.0, -0.0, 9.0, -9.0, 1e300, -1e300, 5e-324],
        ]
    )
    for breaks in (
        ndtri(levels),
        ndtri(0.5 + levels / 2),
        ndtri(0.5 - levels / 2)[::-1],
        ndtri(0.5 + np.linspace(0, 1, 100) / 2),  # 0 ... inf
        np.array([-20.0, -9.0, 0.0, 9.0, 20.0]),
        np.linspace(-1e-3, 1e-3, 50),
    ):  # the last: shared cells
        finite = breaks[np.isfinite(breaks)]
        xs = np.concatenate([x, finite, np.nextafter(finite, np.inf), np.nextafter(finite, -np.inf)])
        assert np.array_equal(searchsorted_fixed(breaks, xs, side), np.searchsorted(breaks, xs, side))


def test_cover_index_equals_searchsorted_on_the_thresholds():
    a = np.abs(np.random.default_rng(2).normal(size=50_000)) * 1.3
    expected = np.linspace(0.0, 1.0, 100)
    assert np.array_equal(
        interval_cover_index(a, expected), np.searchsorted(ndtri(0.5 + expected / 2.0), a, side="left")
    )


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 1000, 1001])
def test_median_selection_equals_np_median(n):
    """mdae's selection (np.median's partition and middle-pair mean, without its numpy.ma NaN check)."""
    from uqeval.metrics.accuracy import _weighted_median

    rng = np.random.default_rng(n)
    for x in (rng.normal(size=n), np.round(rng.normal(size=n), 1), np.full(n, 0.1)):
        assert _weighted_median(x.copy(), None, overwrite=True)[0] == np.median(x)
        assert _weighted_median(x, None)[0] == np.median(x)


def _quantile_data(n=5_503, levels=(0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975), seed=4):
    rng = np.random.default_rng(seed)
    tau = np.array(levels)
    mean, std = rng.normal(size=n), rng.uniform(0.5, 2.0, n)
    q = mean[:, None] + std[:, None] * ndtri(tau)[None, :]
    return mean + 1.1 * std * rng.normal(size=n), np.asfortranarray(q), tau


def test_quantile_scores_are_those_of_the_whole_score_arrays(small_blocks):
    """Pinball per level, interval score per pair and WIS made block by block (no (N, Q) array) equal
    the means of the whole arrays, bit for bit (quantiles column-major, as the Quantiles container keeps them)."""
    from uqeval.metrics.intervals import central_pairs, level_key
    from uqeval.metrics.quantiles import _wis_rows, pinball_rows, quantile_scores, weighted_interval_score
    from uqeval.metrics.scoring import interval_score, pinball_loss

    y, q, tau = _quantile_data()
    got = quantile_scores(y, q, tau)
    pin = pinball_loss(y, q, tau).mean(axis=0)
    assert got["pinball"] == float(pin.mean())
    assert got["pinball_by_level"] == {level_key(t): float(v) for t, v in zip(tau, pin)}
    assert got["interval_by_level"] == {
        level_key(lv): float(interval_score(y, q[:, i], q[:, j], lv).mean())
        for i, j, lv in central_pairs(tau)
    }
    assert got["wis"] == float(_wis_rows(y, q, tau).mean())
    assert weighted_interval_score(y, q, tau).tobytes() == _wis_rows(y, q, tau).tobytes()
    assert pinball_rows(y, q, tau).tobytes() == pinball_loss(y, q, tau).mean(axis=1).tobytes()
    blocks.BLOCK = 1 << 20
    assert repr(quantile_scores(y, q, tau)) == repr(got)


def test_prediction_sets_do_not_depend_on_the_block_size(small_blocks):
    """Sorted probabilities and running sums block by block: the same coverage, sizes and histograms."""
    from uqeval.metrics.classification import prediction_set_rows, prediction_sets

    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.full(6, 0.7), size=4_321)
    p[:200] = np.round(p[:200], 1)  # ties at the threshold
    p /= p.sum(axis=1, keepdims=True)
    y = rng.integers(0, 6, size=len(p))
    got = prediction_sets(p, y, levels=(0.5, 0.9, 0.95)), prediction_set_rows(p, y, 0.9)
    blocks.BLOCK = 1 << 20
    whole = prediction_sets(p, y, levels=(0.5, 0.9, 0.95)), prediction_set_rows(p, y, 0.9)
    assert repr(got[0]) == repr(whole[0])
    assert all(a.tobytes() == b.tobytes() for a, b in zip(got[1], whole[1]))


def test_quantile_container_keeps_a_column_major_block_and_gives_interval_views():
    """The loader's column-major block in level order is kept as it is (no (N, Q) copy); any other is
    stored column-major, as before. Carried intervals are read-only views of the stored columns."""
    from uqeval.predictions import Intervals, Quantiles

    y, q, tau = _quantile_data(n=100)
    pred = Quantiles(y_true=y, quantiles=q, levels=tau)
    assert pred.quantiles is q
    c = Quantiles(y_true=y, quantiles=np.ascontiguousarray(q), levels=tau)
    assert c.quantiles.flags.f_contiguous and np.array_equal(c.quantiles, q)
    lo, hi = pred.interval(0.9)
    assert np.shares_memory(lo, q) and not lo.flags.writeable
    assert np.array_equal(lo, q[:, 1]) and np.array_equal(hi, q[:, 7])  # levels 0.05 and 0.95
    with pytest.raises(KeyError):
        pred.interval(0.3)
    iv = Intervals(y_true=y, lower=q[:, :2], upper=q[:, -1:-3:-1], levels=[0.95, 0.9])
    lo, hi = iv.interval(0.9)
    assert not hi.flags.writeable and np.array_equal(lo, q[:, 1]) and np.array_equal(hi, q[:, -2])
    with pytest.raises(KeyError):
        iv.interval(0.5)


def test_coverage_from_block_bounds_is_coverage_of_the_whole_bounds(small_blocks):
    """Bounds made block by block (the Gaussian's mean -/+ z std) give what coverage_metrics gives on the
    whole arrays, and the mean widths are np.mean's, bit for bit."""
    from uqeval.metrics.intervals import coverage_from_bounds
    from uqeval.predictions import Gaussian

    y, mean, std = _data()
    pred = Gaussian(y_true=y, mean=mean, std=std)
    lo, hi = pred.interval(0.9)
    got = coverage_from_bounds(y, lambda a, b: pred.subset(slice(a, b)).interval(0.9), 0.9, y_std=1.7)
    assert repr(got) == repr(coverage_metrics(y, lo, hi, 0.9, y_std=1.7))
    assert got["width"] == float(np.mean(hi - lo)) and got["width_norm"] == float(np.mean((hi - lo) / 1.7))


@pytest.mark.parametrize(("offset", "rtol"), [(0.0, 1e-14), (1e8, 1e-7)])
def test_merge_moments_equals_the_moments_of_all_rows(offset, rtol):
    """merge_moments (Chan, Golub & LeVeque's update, the one the catalogue's moment states, the Diebold-Mariano
    moments and the UCC's target moments call) equals the weighted mean and centred sum of squares (West 1979)
    of the joined rows, per column or as the co-moment matrix; near 1e8 to the digits the means themselves
    keep (raw sums of squares would keep none)."""
    rng = np.random.default_rng(3)
    x = offset + rng.normal(size=(301, 2))
    w = rng.uniform(0.1, 3.0, size=301)

    def moments(x, w):
        t = w.sum()
        mu = w @ x / t
        d = x - mu
        return t, mu, (d * w[:, None]).T @ d

    ref = moments(x, w)
    a, b = moments(x[:120], w[:120]), moments(x[120:], w[120:])
    for comoments in (False, True):
        m2a, m2b, m2r = (a[2], b[2], ref[2]) if comoments else (np.diag(a[2]), np.diag(b[2]), np.diag(ref[2]))
        n, mu, m2 = blocks.merge_moments(a[0], a[1], m2a, b[0], b[1], m2b, comoments)
        assert n == pytest.approx(ref[0], rel=1e-15)
        np.testing.assert_allclose(mu, ref[1], rtol=1e-15)
        np.testing.assert_allclose(m2, m2r, rtol=rtol)
