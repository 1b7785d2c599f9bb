"""``uqeval monitor``'s tests and detectors under simulated nulls (issue 38), and the coverage of finite ensembles.

Small simulations (seeded, a few seconds): calibrated ensembles of M = 5, 10, 50 members cover the level (the
randomised PIT: ``coverage_error`` within Monte-Carlo error of 0), and no test alarms on calibrated Gaussians,
ensembles, quantiles or intervals more often than alpha; the e-detector's false alarms stay within Doob's bound
``T / A`` for T windows at threshold A. The window sums go through the monitor's own code (``test_sums`` on a
prediction container, ``_test_specs`` and ``_test_entry`` of ``commands/monitor/core.py``). The large runs (2,000
streams of a year, the delays after a change) are ``benchmarks/monitor_delay.py``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uqeval.catalogue import compute_metrics
from uqeval.commands.monitor.core import _test_entry, _test_specs, monitor_file
from uqeval.commands.monitor.windows import test_sums as window_sums
from uqeval.config import Settings
from uqeval.engine.options import EngineOptions
from uqeval.metrics import sequential
from uqeval.predictions import Gaussian, Intervals, Quantiles, Samples

from ..conftest import SAMPLE


def _calibrated(kind: str, n: int, rng: np.random.Generator, m: int = 10):
    """``n`` rows of a calibrated forecast of ``kind``: target and forecast drawn from N(mu, 1)."""
    from scipy.stats import norm

    mu = rng.normal(size=n)
    y = mu + rng.normal(size=n)
    if kind == "gaussian":
        return Gaussian(mu, np.ones(n), y_true=y)
    if kind == "samples":
        return Samples(mu[:, None] + rng.normal(size=(n, m)), y_true=y)
    if kind == "quantiles":
        levels = np.array([0.025, 0.25, 0.5, 0.75, 0.975])
        return Quantiles(mu[:, None] + norm.ppf(levels)[None, :], levels, y_true=y)
    levels = np.array([0.5, 0.9])
    z = norm.ppf(0.5 + levels / 2)
    return Intervals(mu[:, None] - z, mu[:, None] + z, levels, y_true=y)


@pytest.mark.parametrize("m", [5, 10, 50])
def test_a_calibrated_ensemble_covers_the_level_at_any_size(m):
    rng = np.random.default_rng(100 + m)
    n = 40_000
    pred = _calibrated("samples", n, rng, m)
    metrics, _ = compute_metrics(pred, Settings(levels=(0.5, 0.9, 0.95)))
    for key, level in (("0.5", 0.5), ("0.9", 0.9), ("0.95", 0.95)):
        got = metrics["coverage"][key]
        se = np.sqrt(level * (1 - level) / n)  # the randomised PIT's miss chances vary less than 0/1 misses
        assert abs(got["coverage_error"]) < 4 * se, (m, key, got)
        assert (
            abs(got["miss_below"] - (1 - level) / 2) < 4 * se
            and abs(got["miss_above"] - (1 - level) / 2) < 4 * se
        )
    # the interval between the members' empirical quantiles would not: (M + 1 - 2k)/(M + 1) at best
    lo, hi = pred.interval(0.95)
    inside = np.mean((pred.y_true >= lo) & (pred.y_true <= hi))
    assert inside < (m - 1) / (m + 1) + 4 * np.sqrt(0.25 / n)
    # and the coverage command's blocks give the same numbers (commands/coverage reads the same shares)
    from uqeval.commands.coverage.core import _point_metrics

    assert _point_metrics(pred, [0.95], None)["0.95"]["coverage"] == pytest.approx(
        metrics["coverage"]["0.95"]["coverage"], rel=1e-12
    )


def _stream_tests(kind: str, rng, n_windows: int, rows: int, detect: bool, threshold: float, m: int = 10):
    """The monitor's test entries of one calibrated stream of ``n_windows`` windows of ``rows`` rows."""
    settings = Settings(levels=(0.9,) if kind in ("gaussian", "samples") else None)
    windows, sums = {}, []
    for k in range(n_windows):
        pred = _calibrated(kind, rows, rng, m)
        levels = [0.5, 0.9] if kind == "intervals" else [0.5] if kind == "quantiles" else [0.9]
        windows[k] = {"tests": window_sums(pred, settings, levels)}
        sums.append(levels)
    win = SimpleNamespace(windows=windows, levels=sums[0])
    specs = _test_specs(win, list(range(n_windows)))  # type: ignore[arg-type]
    looks = [{"start": k, "end": k + 1} for k in range(n_windows)]
    return [_test_entry(spec, threshold, looks, detect) for spec in specs]


@pytest.mark.parametrize(
    ("kind", "m"),
    [("gaussian", 0), ("samples", 5), ("samples", 10), ("samples", 50), ("quantiles", 0), ("intervals", 0)],
)
def test_no_test_alarms_on_calibrated_streams_more_often_than_alpha(kind, m):
    rng = np.random.default_rng(7 + m + len(kind))
    alpha, n_streams = 0.1, 120
    alarms, names = [], None
    for _ in range(n_streams):
        tests = _stream_tests(kind, rng, 8, 100, False, 1.0, m or 10)  # thresholds below
        names = [t["name"] for t in tests]
        threshold = len(tests) / alpha  # Bonferroni, as build_document
        alarms.append(any(max(t["log_e_values"]) >= np.log(threshold) for t in tests))
    assert "pit_uniform" in names and "pit_mean" in names  # every representation has its PIT tests now
    share = np.mean(alarms)
    assert share <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / n_streams), (kind, m, share)


@pytest.mark.parametrize("kind", ["gaussian", "samples", "quantiles"])
def test_detector_false_alarms_stay_within_doobs_bound(kind):
    """P(the SR e-detector reaches A within T windows) <= T / A (M_t is a non-negative submartingale with mean
    at most t): at A = 4 T the share of calibrated streams with an alarm is at most 1/4 within MC error."""
    rng = np.random.default_rng(11 + len(kind))
    n_windows, n_streams = 6, 150
    threshold = 4.0 * n_windows
    hits = []
    for _ in range(n_streams):
        tests = _stream_tests(kind, rng, n_windows, 100, True, threshold, 5)
        hits.extend(t["alarm"] for t in tests)
    share = np.mean(hits)
    assert share <= 0.25 + 2 * np.sqrt(0.25 * 0.75 / len(hits)), (kind, share)


def test_detector_finds_a_change_after_a_long_calibrated_past_within_two_windows():
    """The delay of a detector does not grow with the history (the anytime-valid test's does)."""
    rng = np.random.default_rng(5)
    h, after, rows = 120, 4, 300
    n = np.full(h + after, float(rows))
    k = np.concatenate([rng.binomial(rows, 0.05, h), rng.binomial(rows, 0.24, after)]).astype(float)
    factors = sequential.coverage_log_factors(n, k, 0.05)
    threshold = np.log(4 * 3650.0)
    detector = np.flatnonzero(sequential.detector_log_path(factors) >= threshold)
    process = np.flatnonzero(sequential.process_log_path(factors) >= np.log(4 / 0.05))
    assert detector.size and detector[0] - h <= 1
    assert sequential.change_window(factors, int(detector[0])) == h
    assert not process.size or process[0] > detector[0]


def test_detector_path_is_the_sum_of_the_restarted_mixtures():
    rng = np.random.default_rng(3)
    factors = rng.normal(-0.5, 1.0, size=(30, 7))
    brute = [
        np.log(sum(np.mean(np.exp(factors[j : t + 1].sum(axis=0))) for j in range(t + 1))) for t in range(30)
    ]
    np.testing.assert_allclose(sequential.detector_log_path(factors), brute, rtol=1e-12)
    # a restart's e-process at its first window is the mixture of that window's factors
    np.testing.assert_allclose(
        sequential.process_log_path(factors),
        np.log(np.mean(np.exp(np.cumsum(factors, axis=0)), axis=1)),
        rtol=1e-12,
    )


def test_binned_pit_factors_are_the_mean_beta_density_over_each_bin():
    from scipy import integrate
    from scipy.stats import beta

    lo, hi = np.array([0.0, 0.2, 0.2, 0.9]), np.array([0.1, 0.5, 0.5, 1.0])
    got = sequential.pit_bin_log_sums(lo, hi)
    a, b = (g.ravel() for g in np.meshgrid(sequential.PIT_GRID, sequential.PIT_GRID))
    for j in (0, 17, 40, 80):
        want = sum(
            np.log(integrate.quad(lambda u: beta.pdf(u, a[j], b[j]), l_, h_)[0] / (h_ - l_))
            for l_, h_ in zip(lo, hi)
        )
        assert got[j] == pytest.approx(want, rel=1e-7)


@pytest.mark.parametrize(
    ("name", "cols"), [("samples.parquet", {}), ("quantiles.parquet", {}), ("intervals_multi.csv", {})]
)
def test_binned_pit_tests_are_the_same_in_any_batching_and_after_a_resume(tmp_path, name, cols):
    import pyarrow.csv as pacsv

    path = SAMPLE / name
    table = pacsv.read_csv(path) if name.endswith(".csv") else pq.read_table(path)
    whole = tmp_path / "all.parquet"
    pq.write_table(table, whole)
    pq.write_table(table.slice(0, 1100), tmp_path / "a.parquet")
    pq.write_table(table.slice(1100), tmp_path / "b.parquet")
    one, _ = monitor_file(whole, Settings(), window=200, engine=EngineOptions(chunk_rows=1000))
    small, _ = monitor_file(whole, Settings(), window=200, engine=EngineOptions(chunk_rows=70))
    _, state = monitor_file(tmp_path / "a.parquet", Settings(), window=200)
    resumed, _ = monitor_file(tmp_path / "b.parquet", Settings(), window=200, state=state)
    names = [t["name"] for t in one["tests"]]
    assert "pit_uniform" in names and "pit_mean" in names
    for other in (small, resumed):
        assert [t["name"] for t in other["tests"]] == names
        for a, b in zip(one["tests"], other["tests"]):
            np.testing.assert_allclose(a["log_e_values"], b["log_e_values"], rtol=1e-9, atol=1e-9)
            assert (a["status"], a["alarms"]) == (b["status"], b["alarms"])
    test_mode, _ = monitor_file(whole, Settings(), window=200, detect=False)
    assert test_mode["mode"] == "test" and "arl" not in test_mode


def test_a_calibrated_ensemble_file_does_not_alarm(tmp_path):
    """End to end: 30 days of 300 rows of a calibrated 10-member ensemble (the issue's case: coverage@0.95
    reached an e-value of 1e304 with the interval between member quantiles)."""
    rng = np.random.default_rng(9)
    days, per, m = 30, 300, 10
    n = days * per
    t = np.datetime64("2025-01-01", "ns") + (np.repeat(np.arange(days), per) * 86400 * 10**9).astype(
        "timedelta64[ns]"
    )
    mu = rng.normal(size=n)
    members = mu[:, None] + rng.normal(size=(n, m))
    cols = {"t": t, "y": mu + rng.normal(size=n), **{f"s_{j}": members[:, j] for j in range(m)}}
    f = tmp_path / "ens.parquet"
    pq.write_table(pa.table(cols), f)
    for detect in (True, False):
        doc, _ = monitor_file(f, Settings(), window="1D", time="t", detect=detect)
        assert [t["alarm"] for t in doc["tests"]] == [False] * len(doc["tests"]), doc["tests"]
        cov = next(x for x in doc["tests"] if x["name"] == "coverage@0.95")
        assert abs(cov["metric"]["value"] - 0.95) < 0.01


def test_mean_bets_are_one_formula_for_the_e_value_and_the_detector():
    """The empirical-Bernstein bets are written once (sequential._mean_bets): the mixture of the per-window
    factors of the e-detector (mean_log_factors, summed over windows) is mean_cs's e-value of "mean difference
    = 0" at every look (1e-12), and two_sided_log_e of two one-sided mixtures is the mixture of all the bets."""
    from uqeval.metrics.sequential import log_mean_exp, mean_cs, mean_log_factors, mean_sums, two_sided_log_e

    rng = np.random.default_rng(8)
    sums = np.array([mean_sums(rng.uniform(-0.6, 1.0, size=120)) for _ in range(30)])
    factors = mean_log_factors(sums, 1.0)
    path = log_mean_exp(np.cumsum(factors, axis=0))
    np.testing.assert_allclose(path, mean_cs(np.cumsum(sums, axis=0), 1.0, 20.0)["log_e"], rtol=1e-12)
    k = factors.shape[-1] // 2
    np.testing.assert_allclose(
        two_sided_log_e(log_mean_exp(factors[:, :k]), log_mean_exp(factors[:, k:])),
        log_mean_exp(factors),
        rtol=1e-12,
    )
