"""Size of every p-value family under its null hypothesis (issue 25): seeded simulations of calibrated
forecasts (or exchangeable models), each data set analysed exactly as ``uqeval`` analyses one file with
the default ``--seed 0``. The share of p < 0.05 must be within 3.5 Monte-Carlo standard errors
(sqrt(0.05 * 0.95 / R)) of 0.05.

Before issue 25 the randomised PIT tests drew the same random numbers for every data set: the share
was 0.12-0.17 for a tied ensemble and 0.18-0.20 (CvM, AD) for 90 % intervals. The Diebold–Mariano
size at n = 30 is in tests/metrics/test_comparison.py; benchmarks/null_sizes.py runs these
simulations with more replicates and prints every size with its standard error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from uqeval.catalogue import compute, get_family
from uqeval.config import make_settings
from uqeval.metrics import calibration_tests as ct
from uqeval.metrics.samples import pit_bounds_samples
from uqeval.predictions import Categorical, Gaussian, Intervals, Quantiles, Samples

SETTINGS = make_settings(diagnostics=True)  # seed 0, as the CLI's default
FAMILY = get_family("calibration_tests")
PIT_P = ("pit_ks_p", "pit_cvm_p", "pit_ad_p")
LEVELS = np.array([0.1, 0.25, 0.5, 0.75, 0.9])


def _assert_size(p: np.ndarray, what: str, alpha: float = 0.05) -> None:
    p = np.asarray(p, dtype=np.float64)
    assert np.isfinite(p).all(), what
    se = math.sqrt(alpha * (1 - alpha) / p.size)
    size = float(np.mean(p < alpha))
    assert abs(size - alpha) < 3.5 * se, f"{what}: size {size:.4f}, want {alpha} ± {3.5 * se:.4f}"


def _pit_pvalues(make, r: int, keys=PIT_P) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2500)
    out: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(r):
        res = compute(FAMILY, make(rng), SETTINGS)
        for k in keys:
            out[k].append(res[k])
    return {k: np.array(v) for k, v in out.items()}


def _gaussian(rng, n=40):
    mu = rng.normal(size=n)
    return Gaussian(mu, std=np.ones(n), y_true=mu + rng.normal(size=n))


def _tied_ensemble(rng, n=60, m=9):
    # target and members from the same law, rounded to integers: exchangeable, with many ties
    mu = rng.normal(size=n)
    y = np.round(mu + rng.normal(size=n))
    members = np.round(mu[:, None] + rng.normal(size=(n, m)))
    return Samples(members, y_true=y)


def _quantiles(rng, n=60):
    from scipy.stats import norm

    mu = rng.normal(size=n)
    return Quantiles(mu[:, None] + norm.ppf(LEVELS), levels=LEVELS, y_true=mu + rng.normal(size=n))


def _interval90(rng, n=60):
    mu = rng.normal(size=n)
    half = 1.6448536269514722
    return Intervals(mu - half, mu + half, levels=[0.9], y_true=mu + rng.normal(size=n))


@pytest.mark.parametrize(
    "make,r",
    [(_gaussian, 600), (_tied_ensemble, 800), (_quantiles, 800), (_interval90, 800)],
    ids=["gaussian", "tied_ensemble", "quantiles", "interval90"],
)
def test_pit_tests_hold_their_size(make, r):
    keys = PIT_P + (("rank_hist_chi2_p",) if make is _tied_ensemble else ())
    for k, p in _pit_pvalues(make, r, keys).items():
        _assert_size(p, f"{make.__name__} {k}")


def test_randomised_pit_is_reproducible_and_differs_between_data_sets():
    rng = np.random.default_rng(1)
    a, b = _tied_ensemble(rng), _tied_ensemble(rng)
    assert compute(FAMILY, a, SETTINGS) == compute(FAMILY, a, SETTINGS)  # one data set, one seed: one answer
    other_seed = make_settings(diagnostics=True, seed=1)
    assert compute(FAMILY, a, SETTINGS)["pit_ks_p"] != compute(FAMILY, a, other_seed)["pit_ks_p"]
    lo, hi = pit_bounds_samples(a.y_true, a.sorted_samples())
    lo2, hi2 = pit_bounds_samples(b.y_true, b.sorted_samples())
    assert ct.data_key(a.y_true, lo, hi) != ct.data_key(b.y_true, lo2, hi2)
    # the same intervals with other targets: other random numbers
    assert ct.data_key(a.y_true + 1, lo, hi) != ct.data_key(a.y_true, lo, hi)


def test_binary_tests_hold_their_size():
    rng = np.random.default_rng(8)
    r, n = 1000, 300
    sp, hl = [], []
    for _ in range(r):
        p = rng.uniform(0.05, 0.95, size=n)
        y = (rng.uniform(size=n) < p).astype(float)
        res = compute(FAMILY, Categorical(p, y_true=y), SETTINGS)
        sp.append(res["spiegelhalter_p"])
        hl.append(res["hosmer_lemeshow_p"])
    _assert_size(np.array(sp), "spiegelhalter_p")
    _assert_size(np.array(hl), "hosmer_lemeshow_p")


def test_compare_sign_flip_test_holds_its_size():
    """compare's sign-flip test as compare runs it (seed 0, the signs keyed by the seed and a hash of the data,
    :func:`uqeval.resample.flip_seed`), on 600 data sets of n = 30 symmetric paired differences."""
    from uqeval.commands.compare.core import sign_flip_tests
    from uqeval.resample import flip_seed

    rng = np.random.default_rng(9)
    d = rng.standard_t(4, size=(30, 600))
    seeds = [flip_seed(0, ct.data_key(d[:, r])) for r in range(d.shape[1])]
    assert len(set(seeds)) == len(seeds)  # every data set its own signs
    p = [sign_flip_tests(d[:, [r]], permutations=999, seed=s)[0] for r, s in enumerate(seeds)]
    _assert_size(np.array(p), "compare sign-flip")
    # as before: one fixed set of signs for every data set also holds its size at 999 flips
    _assert_size(sign_flip_tests(d, permutations=999, seed=0), "compare sign-flip, fixed signs")


def test_weighted_compare_tests_hold_their_size():
    """compare with --weights runs its paired tests on z = w d / mean(w) (uqeval/commands/compare/core.py): the sign
    flip (exact for symmetric d with weights fixed in advance) and the HLN Diebold-Mariano test on z (a t test
    of the mean of z at lag 0), on 600 data sets of n = 30 symmetric differences with uneven weights."""
    from uqeval.commands.compare.core import sign_flip_tests
    from uqeval.metrics.comparison import diebold_mariano
    from uqeval.resample import flip_seed

    rng = np.random.default_rng(17)
    d = rng.standard_t(4, size=(30, 600))
    w = rng.uniform(
        0.2, 3.0, size=d.shape
    )  # drawn apart from the outcomes, as the weights of a grid or survey
    z = w / w.mean(axis=0) * d
    seeds = [flip_seed(0, ct.data_key(z[:, r])) for r in range(z.shape[1])]
    flips = [sign_flip_tests(z[:, [r]], permutations=999, seed=s)[0] for r, s in enumerate(seeds)]
    _assert_size(np.array(flips), "weighted compare sign-flip")
    dm = [diebold_mariano(z[:, r], np.zeros(z.shape[0]))["p_value"] for r in range(z.shape[1])]
    _assert_size(np.array(dm), "weighted compare Diebold-Mariano")


def test_ucc_permutation_test_holds_its_size():
    """Two models whose bands are exchangeable row by row (drawn from one law): the AUUCC difference
    has no direction; 600 data sets of n = 40, 199 permutations, seed 0."""
    from uqeval.metrics.ucc import permutation_test

    rng = np.random.default_rng(10)
    p = []
    for _ in range(600):
        n = 40
        pred = rng.normal(size=n)
        y = pred + rng.normal(size=n)
        w1, w2 = rng.gamma(3.0, 1 / 3, size=(2, n))
        bands = [(pred - w1, pred + w1), (pred - w2, pred + w2)]
        p.append(permutation_test(y, pred, bands, n_permutations=199, seed=0)["pairs"][0]["p_value"])
    _assert_size(np.array(p), "ucc permutation")


def test_ucc_and_compare_draws_are_reproducible_and_differ_between_data_sets():
    import uqeval
    from uqeval.commands.compare.core import sign_flip_tests
    from uqeval.metrics.ucc import permutation_test
    from uqeval.resample import flip_seed, rows_key

    rng = np.random.default_rng(11)
    pred = rng.normal(size=40)
    y = pred + rng.normal(size=40)
    w1, w2 = rng.gamma(3.0, 1 / 3, size=(2, 40))
    bands = [(pred - w1, pred + w1), (pred - w2, pred + w2)]
    # one data set and seed: one answer; the same bands in the other order (other data): other draws
    one = permutation_test(y, pred, bands, n_permutations=99, seed=0)["pairs"][0]["p_value"]
    assert one == permutation_test(y, pred, bands, n_permutations=99, seed=0)["pairs"][0]["p_value"]
    swapped = permutation_test(y, pred, bands[::-1], n_permutations=99, seed=0)["pairs"][0]["p_value"]
    assert swapped != one
    # compare: the flips' seed comes from the seed and the first rows of every model
    models = {
        "a": Gaussian(y + rng.normal(size=40), std=np.ones(40), y_true=y),
        "b": Gaussian(y + rng.normal(size=40), std=np.ones(40), y_true=y),
    }
    kw = dict(metrics=["crps"], n_boot=0, n_permutations=499)
    out = uqeval.compare(models, **kw)
    assert out == uqeval.compare(models, **kw)
    from uqeval.catalogue import METRICS, rows

    scores = [rows(METRICS["scoring_rule.crps"], m, SETTINGS).score for m in models.values()]
    d = (scores[0] - scores[1])[:, None]
    seed = flip_seed(0, rows_key(list(models.values())))
    assert out["tests"][0]["permutation_p"] == pytest.approx(sign_flip_tests(d, 499, seed)[0], abs=1e-12)
    assert seed != flip_seed(0, rows_key(list(models.values())[::-1]))


def test_weighted_calibration_tests_hold_their_size():
    """The calibration tests with --weights (issue 37): the statistics of the weighted rows, their null at Kish's
    n_eff (Hosmer-Lemeshow: per group), on data sets with weights drawn apart from the outcomes (uniform on
    [0.2, 3]); benchmarks/null_sizes.py --only weighted runs 4000 with log-normal weights too."""
    rng = np.random.default_rng(37)
    pit: dict[str, list[float]] = {k: [] for k in PIT_P}
    binary: dict[str, list[float]] = {k: [] for k in ("spiegelhalter_p", "hosmer_lemeshow_p")}
    for _ in range(600):
        res = FAMILY.compute["gaussian"](_gaussian(rng), SETTINGS, rng.uniform(0.2, 3.0, 40))
        for k in pit:
            pit[k].append(res[k])
    for _ in range(800):
        p = rng.uniform(0.05, 0.95, size=300)
        y = (rng.uniform(size=300) < p).astype(float)
        res = FAMILY.compute["categorical"](Categorical(p, y_true=y), SETTINGS, rng.uniform(0.2, 3.0, 300))
        for k in binary:
            binary[k].append(res[k])
    for k, v in {**pit, **binary}.items():
        _assert_size(np.array(v), f"weighted {k}")


def test_weighted_standard_error_covers_the_mean():
    """information_criteria.*_se with weights (uqeval.metrics.ensembles.sem_from_moments, Kish's n_eff): a z test
    of a weighted mean of iid terms with uneven weights holds its size."""
    from uqeval.metrics.ensembles import sem_from_moments, sem_moments
    from uqeval.metrics.normal import ndtr

    rng = np.random.default_rng(38)
    p = []
    for _ in range(1000):
        st = sem_moments(rng.normal(size=(200, 1)), rng.uniform(0.2, 3.0, 200))
        p.append(2.0 * ndtr(-abs(st["mean"][0] / sem_from_moments(st)[0])))
    _assert_size(np.array(p), "weighted standard error")


def test_compare_serial_correlation_note_holds_its_size():
    """compare's lag-1 note (commands.compare.paired._Lag1) flags a pair when |rho_1| leaves its 99 % band for
    independent rows, Phi^-1(0.995)/sqrt(n) (Bartlett: rho_1 ~ N(0, 1/n)): on independent differences, folded
    in two blocks as the stream engine folds them, it fires in about 1 % of runs, never far more."""
    from uqeval.commands.compare.paired import _Lag1
    from uqeval.metrics.comparison import Moments

    rng = np.random.default_rng(41)
    r, n = 2000, 400
    fired = 0
    for _ in range(r):
        d = rng.normal(size=(n, 1)) + 0.3
        shift = d[:8].mean(axis=0)
        lag1, moments = _Lag1(1, shift), Moments.of(d[:150], 1, shift).merge(Moments.of(d[150:], 1, shift))
        lag1.add(d[:150])
        lag1.add(d[150:])
        fired += lag1.note(moments, [("crps", 0, 1)], ["a", "b"]) is not None
    se = math.sqrt(0.01 * 0.99 / r)
    assert abs(fired / r - 0.01) < 3.5 * se, f"fired in {fired} of {r} runs, want 1 % ± {3.5 * se:.4f}"
