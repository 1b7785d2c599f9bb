"""Tests of uqeval.metrics.ensembles.

Slow, obviously correct reference implementations (explicit loops over pairs,
rows and draws) live in this file; the vectorised kernels are checked against
them, against closed forms (verified by numerical integration), and against
hand-computed small cases.
"""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats as sps

from uqeval.errors import InputError
from uqeval.metrics.ensembles import (
    bayesian_ece,
    bayesian_ece_samples,
    dirichlet_uncertainty,
    dirichlet_uncertainty_per_row,
    diversity,
    ensemble_uncertainty,
    ensemble_uncertainty_per_row,
    information_criteria,
    oracle_collaborative_accuracy,
    rejection_curve,
    spce,
)

HYP = settings(max_examples=40, deadline=None, derandomize=True)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _random_members(seed: int, n: int = 50, m: int = 4, k: int = 3, spread: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, 1, k))
    return _softmax(base + spread * rng.normal(size=(n, m, k)))


@st.composite
def member_arrays(draw):
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(1, 12))
    m = draw(st.integers(2, 5))
    k = draw(st.integers(2, 4))
    return _random_members(seed, n, m, k, spread=draw(st.floats(0.0, 3.0)))


def _entropy(p) -> float:
    return -sum(v * math.log(v) for v in p if v > 0)


# --------------------------------------------------------------------------- #
# ensemble uncertainty
# --------------------------------------------------------------------------- #


def test_hand_computed_two_members_two_classes():
    # members [0.5, 0.5] and [1, 0]: mean [0.75, 0.25]
    out = ensemble_uncertainty(np.array([[[0.5, 0.5], [1.0, 0.0]]]))
    total = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    assert out["total"] == pytest.approx(total, abs=1e-12)
    assert out["aleatoric"] == pytest.approx(math.log(2) / 2, abs=1e-12)
    assert out["epistemic"] == pytest.approx(total - math.log(2) / 2, abs=1e-12)


def test_disagreeing_one_hot_members_are_purely_epistemic():
    out = ensemble_uncertainty(np.array([[[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]]]))
    assert out["aleatoric"] == 0.0
    assert out["total"] == pytest.approx(math.log(2) / 2, abs=1e-12)  # row 1: ln 2, row 2: 0
    assert out["epistemic"] == pytest.approx(math.log(2) / 2, abs=1e-12)


@HYP
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 10), m=st.integers(1, 6), k=st.integers(2, 5))
def test_identical_members_have_zero_epistemic(seed, n, m, k):
    p = _softmax(np.random.default_rng(seed).normal(size=(n, 1, k)) * 3)
    rows = ensemble_uncertainty_per_row(np.repeat(p, m, axis=1))
    assert np.allclose(rows["epistemic"], 0.0, atol=1e-12)
    expected = [_entropy(row) for row in p[:, 0]]
    assert np.allclose(rows["total"], expected, atol=1e-12)
    assert np.allclose(rows["aleatoric"], expected, atol=1e-12)


@HYP
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 10), m=st.integers(1, 6), k=st.integers(2, 5))
def test_one_hot_members_have_zero_aleatoric(seed, n, m, k):
    votes = np.random.default_rng(seed).integers(0, k, size=(n, m))
    p = np.eye(k)[votes]
    rows = ensemble_uncertainty_per_row(p)
    assert np.all(rows["aleatoric"] == 0.0)
    expected = [_entropy(np.bincount(v, minlength=k) / m) for v in votes]
    assert np.allclose(rows["total"], expected, atol=1e-12)
    assert np.allclose(rows["epistemic"], rows["total"], atol=1e-12)


@HYP
@given(member_arrays())
def test_ensemble_uncertainty_matches_loops_and_is_nonnegative(p):
    rows = ensemble_uncertainty_per_row(p)
    for i in range(p.shape[0]):
        mean = p[i].mean(axis=0)
        total = _entropy(mean)
        aleatoric = statistics.fmean(_entropy(member) for member in p[i])
        assert rows["total"][i] == pytest.approx(total, abs=1e-12)
        assert rows["aleatoric"][i] == pytest.approx(aleatoric, abs=1e-12)
    assert np.all(rows["epistemic"] >= 0)
    agg = ensemble_uncertainty(p)
    assert agg["epistemic"] == pytest.approx(rows["epistemic"].mean(), abs=1e-15)
    assert agg["total"] <= math.log(p.shape[2]) + 1e-12


@HYP
@given(member_arrays(), st.randoms(use_true_random=False))
def test_member_order_does_not_matter(p, rnd):
    perm = list(range(p.shape[1]))
    rnd.shuffle(perm)
    q = p[:, perm]
    labels = np.argmax(p.mean(axis=1), axis=1)
    for key, val in ensemble_uncertainty(p).items():
        assert ensemble_uncertainty(q)[key] == pytest.approx(val, abs=1e-12)
    for key, val in diversity(p, labels).items():
        assert diversity(q, labels)[key] == pytest.approx(val, abs=1e-10)
    ll = np.log(p[:, :, 0])
    for key, val in information_criteria(ll).items():
        if not math.isnan(val):
            assert information_criteria(ll[:, perm])[key] == pytest.approx(val, abs=1e-10)


def test_bad_member_proba_raises():
    with pytest.raises(InputError, match="sum to 1.*row 1, member 0"):
        ensemble_uncertainty(np.array([[[0.5, 0.5]], [[0.5, 0.6]]]))
    with pytest.raises(InputError, match=">= 0"):
        ensemble_uncertainty(np.array([[[1.5, -0.5]]]))
    with pytest.raises(InputError, match="dimension"):
        ensemble_uncertainty(np.array([[0.5, 0.5]]))
    with pytest.raises(InputError, match="finite"):
        ensemble_uncertainty(np.array([[[np.nan, 1.0]]]))


# --------------------------------------------------------------------------- #
# Dirichlet (knowledge) uncertainty
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("a, b", [(0.5, 0.5), (1.0, 1.0), (2.0, 7.0), (30.0, 12.0)])
def test_dirichlet_k2_matches_numerical_integration(a, b):
    def h(x):
        return -(x * math.log(x) + (1 - x) * math.log(1 - x)) if 0 < x < 1 else 0.0

    expected_entropy, _ = integrate.quad(lambda x: h(x) * sps.beta.pdf(x, a, b), 0, 1, limit=200)
    out = dirichlet_uncertainty_per_row(np.array([[a, b]]))
    m = a / (a + b)
    assert out["total"][0] == pytest.approx(h(m), abs=1e-12)
    assert out["aleatoric"][0] == pytest.approx(expected_entropy, abs=1e-7)
    assert out["epistemic"][0] == pytest.approx(h(m) - expected_entropy, abs=1e-7)


def test_dirichlet_k3_matches_monte_carlo():
    alpha = np.array([[0.7, 2.0, 4.5]])
    draws = np.random.default_rng(3).dirichlet(alpha[0], size=400_000)
    mc = float(np.mean(-(draws * np.log(draws)).sum(axis=1)))
    out = dirichlet_uncertainty(alpha)
    assert out["aleatoric"] == pytest.approx(mc, abs=3e-3)


def test_dirichlet_concentrated_has_vanishing_epistemic():
    out = dirichlet_uncertainty_per_row(np.array([[1e7, 1e7, 2e7], [0.1, 0.1, 0.2]]))
    assert out["epistemic"][0] < 1e-6
    assert out["epistemic"][1] > 0.3  # a flat-ish Dirichlet carries much knowledge uncertainty
    assert np.allclose(out["total"], _entropy([0.25, 0.25, 0.5]))


def test_dirichlet_rejects_nonpositive_alpha():
    with pytest.raises(InputError, match="alpha must be > 0"):
        dirichlet_uncertainty(np.array([[1.0, 0.0]]))


# --------------------------------------------------------------------------- #
# information criteria
# --------------------------------------------------------------------------- #


def _naive_ic(ll: np.ndarray, ddof: int = 1) -> dict[str, float]:
    n, m = ll.shape
    w1, w2, cv = [], [], []
    for i in range(n):
        row = [float(v) for v in ll[i]]
        lpd = math.log(sum(math.exp(v) for v in row) / m)
        mean = sum(row) / m
        var = sum((v - mean) ** 2 for v in row) / (m - ddof)
        w1.append(lpd - var)
        w2.append(2 * mean - lpd)
        cv.append(-math.log(sum(math.exp(-v) for v in row) / m))
    out = {"waic1": statistics.fmean(w1), "waic2": statistics.fmean(w2), "iscv": statistics.fmean(cv)}
    for key, vals in (("waic1", w1), ("waic2", w2), ("iscv", cv)):
        out[key + "_se"] = statistics.stdev(vals) / math.sqrt(n)
    return out


@pytest.mark.parametrize("ddof", [1, 0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_information_criteria_match_naive_formulas(seed, ddof):
    rng = np.random.default_rng(seed)
    ll = rng.normal(-1.0, 0.8, size=(7, 5)) - rng.exponential(size=(7, 1))
    got = information_criteria(ll, ddof=ddof)
    want = _naive_ic(ll, ddof=ddof)
    assert set(got) == set(want)
    for key in want:
        assert got[key] == pytest.approx(want[key], rel=1e-12, abs=1e-12), key


def test_information_criteria_hand_case():
    # one row, two members with p = 0.5 and 0.25
    ll = np.log(np.array([[0.5, 0.25], [0.5, 0.25]]))
    out = information_criteria(ll)
    lpd = math.log(0.375)
    var = (math.log(2) / 2) ** 2 * 2  # two deviations of ln(2)/2, ddof=1
    assert out["waic1"] == pytest.approx(lpd - var, abs=1e-14)
    assert out["waic2"] == pytest.approx(math.log(0.5) + math.log(0.25) - lpd, abs=1e-14)
    assert out["iscv"] == pytest.approx(-math.log((2 + 4) / 2), abs=1e-14)
    assert out["waic1_se"] == 0.0  # identical rows


def test_information_criteria_stable_for_tiny_likelihoods():
    rng = np.random.default_rng(5)
    ll = rng.normal(-1.0, 0.5, size=(6, 4))
    base = information_criteria(ll)
    shifted = information_criteria(ll - 2000.0)  # exp(-2000) underflows: needs log-sum-exp
    for key in ("waic1", "waic2", "iscv"):
        assert shifted[key] == pytest.approx(base[key] - 2000.0, rel=1e-12)
        assert shifted[key + "_se"] == pytest.approx(base[key + "_se"], rel=1e-9)


def test_information_criteria_ordering_and_se_over_rows():
    # Jensen: ISCV <= lpd, WAIC2 <= lpd; the SE shrinks with rows, not members
    rng = np.random.default_rng(9)
    ll = rng.normal(-1.0, 0.5, size=(400, 8))
    out = information_criteria(ll)
    lpd = float(np.mean(np.log(np.mean(np.exp(ll), axis=1))))
    assert out["iscv"] <= lpd and out["waic2"] <= lpd and out["waic1"] <= lpd
    big = information_criteria(np.tile(ll, (4, 1)))
    assert big["waic1_se"] == pytest.approx(out["waic1_se"] / 2, rel=0.01)


def test_information_criteria_input_errors():
    with pytest.raises(InputError, match="at least 2 members"):
        information_criteria(np.zeros((3, 1)))
    with pytest.raises(InputError, match="finite"):
        information_criteria(np.array([[0.0, -np.inf]]))
    assert math.isnan(information_criteria(np.array([[-1.0, -2.0]]))["iscv_se"])


# --------------------------------------------------------------------------- #
# diversity
# --------------------------------------------------------------------------- #


def _naive_diversity(p: np.ndarray, labels: np.ndarray | None, eps: float = 1e-12) -> dict[str, float]:
    n, m, _ = p.shape
    dis, kl, cos, df = [], [], [], []
    for a, b in itertools.combinations(range(m), 2):
        pa, pb = p[:, a], p[:, b]
        ya, yb = pa.argmax(axis=1), pb.argmax(axis=1)
        dis.append(np.mean(ya != yb))

        def kl_rows(first, second):
            return [
                sum(x * (math.log(max(x, eps)) - math.log(max(z, eps))) for x, z in zip(r, s))
                for r, s in zip(first, second)
            ]

        kab, kba = kl_rows(pa, pb), kl_rows(pb, pa)
        kl.append((np.mean(kab) + np.mean(kba)) / 2)
        cos.append(np.mean([r @ s / np.linalg.norm(r) / np.linalg.norm(s) for r, s in zip(pa, pb)]))
        if labels is not None:
            df.append(np.mean((ya != labels) & (yb != labels)))
    out = {"disagreement": np.mean(dis), "kl": np.mean(kl), "cosine_similarity": np.mean(cos)}
    if labels is not None:
        out["double_fault"] = np.mean(df)
    return out


@HYP
@given(member_arrays(), st.integers(0, 2**31 - 1))
def test_diversity_matches_pairwise_loops(p, seed):
    labels = np.random.default_rng(seed).integers(0, p.shape[2], size=p.shape[0])
    got = diversity(p, labels)
    want = _naive_diversity(p, labels)
    assert set(got) == set(want)
    for key in want:
        assert got[key] == pytest.approx(want[key], abs=1e-10), key


def test_diversity_hand_case_and_zero_probabilities():
    p = np.array(
        [
            [[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]],  # argmax 0, 1, 0
            [[0.2, 0.8], [0.2, 0.8], [0.2, 0.8]],  # all agree on 1
        ]
    )
    out = diversity(p, labels=np.array([0, 0]))
    assert out["disagreement"] == pytest.approx((2 / 3 + 0) / 2)
    # row 0: cosines 0, 1/sqrt2, 1/sqrt2; row 1: all 1
    assert out["cosine_similarity"] == pytest.approx(((2 / math.sqrt(2)) / 3 + 1) / 2)
    # row 0 wrong: member 1 only -> 0 of 3 pairs; row 1: all wrong -> 3 of 3 pairs
    assert out["double_fault"] == pytest.approx(0.5)
    assert np.isfinite(out["kl"]) and out["kl"] > 0
    assert out == pytest.approx(_naive_diversity(p, np.array([0, 0])))
    assert "double_fault" not in diversity(p)


def test_identical_members_have_no_diversity():
    p = np.repeat(_random_members(4, n=20, m=1, k=4), 3, axis=1)
    out = diversity(p, np.zeros(20, dtype=int))
    assert out["disagreement"] == 0.0
    assert out["kl"] == pytest.approx(0.0, abs=1e-12)
    assert out["cosine_similarity"] == pytest.approx(1.0, abs=1e-12)


def test_diversity_input_errors():
    with pytest.raises(InputError, match="at least 2"):
        diversity(np.full((3, 1, 2), 0.5))
    with pytest.raises(InputError, match="labels must be integer class ids in 0..1"):
        diversity(np.full((2, 2, 2), 0.5), labels=np.array([0, 2]))
    with pytest.raises(InputError, match="inconsistent numbers of rows"):
        diversity(np.full((2, 2, 2), 0.5), labels=np.array([0]))


# --------------------------------------------------------------------------- #
# rejection curves and OCA
# --------------------------------------------------------------------------- #


def _naive_rejection(v, u, fractions, kind):
    out = []
    order = np.argsort(u)  # callers use distinct uncertainties
    for f in fractions:
        keep = len(v) - int(math.floor(f * len(v) + 1e-9))
        kept = [v[i] for i in order[:keep]]
        if kind == "accuracy":
            out.append(statistics.fmean(kept))
        else:
            out.append(math.sqrt(statistics.fmean(x * x for x in kept)))
    return np.array(out)


@pytest.mark.parametrize("kind", ["accuracy", "rmse"])
def test_rejection_curve_matches_naive_loop(kind):
    rng = np.random.default_rng(11)
    u = rng.permutation(200).astype(float)
    if kind == "accuracy":
        v = (rng.uniform(size=200) > u / 250).astype(float)
    else:
        v = rng.normal(size=200) * (1 + u / 50)
    fr = np.linspace(0, 0.99, 34)
    out = rejection_curve(v, u, fr, kind=kind)
    assert np.allclose(out["values"], _naive_rejection(v, u, fr, kind), atol=1e-12)
    trapezoids = (out["values"][1:] + out["values"][:-1]) / 2 * np.diff(fr)
    assert out["auc_rejection"] == pytest.approx(np.sum(trapezoids))


def test_rejection_curve_starts_at_overall_metric_and_oracle_dominates():
    rng = np.random.default_rng(12)
    correct = (rng.uniform(size=1000) < 0.7).astype(float)
    unc = rng.uniform(size=1000) + 0.5 * (1 - correct)  # informative but imperfect
    out = rejection_curve(correct, unc)
    assert out["fractions"].shape == out["values"].shape == out["oracle_values"].shape == (100,)
    assert out["values"][0] == pytest.approx(correct.mean())
    assert out["oracle_values"][0] == pytest.approx(correct.mean())
    assert np.all(out["oracle_values"] >= out["values"] - 1e-12)
    assert out["auc_oracle"] >= out["auc_rejection"]
    assert out["values"][60] > correct.mean()  # informative uncertainty helps

    err = rng.normal(size=1000) * (1 + unc)
    reg = rejection_curve(err, unc, kind="rmse")
    assert reg["values"][0] == pytest.approx(math.sqrt(np.mean(err**2)))
    assert np.all(reg["oracle_values"] <= reg["values"] + 1e-12)


def test_rejection_curve_ties_use_expected_value():
    correct = np.array([1.0, 0.0, 1.0, 0.0])
    flat = rejection_curve(correct, np.zeros(4), fractions=[0.0, 0.25, 0.5, 0.75])
    assert np.allclose(flat["values"], 0.5)  # constant uncertainty: flat curve, order-free
    # rows 0,1 tie at low uncertainty, rows 2,3 tie at high uncertainty
    out = rejection_curve(correct, np.array([0.0, 0.0, 1.0, 1.0]), fractions=[0.0, 0.25, 0.5, 0.75])
    assert np.allclose(out["values"], [0.5, (1 + 0 + 0.5) / 3, 0.5, 0.5])
    rev = rejection_curve(correct[::-1], np.array([1.0, 1.0, 0.0, 0.0]), fractions=[0.0, 0.25, 0.5, 0.75])
    assert np.allclose(rev["values"], out["values"])


def test_rejection_curve_input_errors():
    with pytest.raises(InputError, match="fractions"):
        rejection_curve([1, 0], [0.1, 0.2], fractions=[0.0, 1.0])
    with pytest.raises(InputError, match="increasing"):
        rejection_curve([1, 0], [0.1, 0.2], fractions=[0.5, 0.1])
    with pytest.raises(InputError, match="inconsistent"):
        rejection_curve([1, 0], [0.1])
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        rejection_curve([1, 2], [0.1, 0.2])
    with pytest.raises(InputError, match="kind"):
        rejection_curve([1, 0], [0.1, 0.2], kind="mae")


def test_oca_hand_case_and_limits():
    correct = np.array([1, 1, 0, 1, 0, 1, 1, 1, 1, 0], dtype=float)
    unc = np.array([0.1, 0.2, 0.95, 0.3, 0.9, 0.4, 0.5, 0.6, 0.7, 0.8])
    assert oracle_collaborative_accuracy(correct, unc, 0.0) == pytest.approx(0.7)
    assert oracle_collaborative_accuracy(correct, unc, 0.1) == pytest.approx(0.8)  # row 2 to the oracle
    assert oracle_collaborative_accuracy(correct, unc, 0.3) == pytest.approx(1.0)
    assert oracle_collaborative_accuracy(correct, unc, 0.19) == pytest.approx(0.8)  # floor(1.9) = 1
    assert oracle_collaborative_accuracy(correct, unc, 1.0) == 1.0
    # a tie at the cut counts the expected accuracy of the tied rows
    tied = oracle_collaborative_accuracy([1.0, 0.0, 1.0], [1.0, 1.0, 0.0], 1 / 3)
    assert tied == pytest.approx((1 + 1 + 0.5) / 3)


@HYP
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 60))
def test_oca_is_monotone_in_fraction(seed, n):
    rng = np.random.default_rng(seed)
    correct = (rng.uniform(size=n) < 0.6).astype(float)
    unc = rng.integers(0, 5, size=n).astype(float)  # many ties
    vals = [oracle_collaborative_accuracy(correct, unc, f) for f in np.linspace(0, 1, 21)]
    assert np.all(np.diff(vals) >= -1e-12)
    assert vals[0] == pytest.approx(correct.mean()) and vals[-1] == 1.0


# --------------------------------------------------------------------------- #
# Bayesian ECE
# --------------------------------------------------------------------------- #


def _plain_ece(proba: np.ndarray, labels: np.ndarray, num_bins: int) -> float:
    conf = proba.max(axis=1)
    correct = proba.argmax(axis=1) == labels
    total = 0.0
    for b in range(num_bins):
        lo, hi = b / num_bins, (b + 1) / num_bins
        inside = (conf >= lo) & ((conf < hi) if b < num_bins - 1 else (conf <= hi))
        if inside.any():
            total += inside.mean() * abs(correct[inside].mean() - conf[inside].mean())
    return total


def _overconfident(seed: int, n: int, k: int = 4):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * 1.5
    cdf = np.cumsum(_softmax(logits), axis=1)
    labels = np.minimum((rng.uniform(size=(n, 1)) > cdf).sum(axis=1), k - 1)
    return _softmax(2.0 * logits), labels  # sharpened: overconfident


def test_bayesian_ece_concentrates_on_plain_ece_for_large_n():
    proba, labels = _overconfident(0, 40_000)
    plain = _plain_ece(proba, labels, 15)
    out = bayesian_ece(proba, labels, num_bins=15, num_samples=400, seed=1)
    assert plain > 0.05
    assert out["mean"] == pytest.approx(plain, abs=0.005)
    assert out["q10"] <= out["q50"] <= out["q90"]
    assert out["q90"] - out["q10"] < 0.01


def test_bayesian_ece_weights_bins_by_their_mass():
    # bin of conf 0.95 with accuracy 0.95 (calibrated), bin of conf 0.55 with accuracy 0.15:
    # ECE = 0.5 * 0 + 0.5 * 0.4 = 0.2 (weighting bins by P(bin | correct), as the library's
    # _compute_ece does, would give about 0.054)
    conf = np.repeat([0.95, 0.55], 10_000)
    correct = np.concatenate([np.arange(10_000) < 9_500, np.arange(10_000) < 1_500])
    proba = np.stack([conf, 1 - conf], axis=1)
    labels = np.where(correct, 0, 1)
    assert _plain_ece(proba, labels, 15) == pytest.approx(0.2)
    out = bayesian_ece(proba, labels, num_bins=15, seed=0)
    assert out["mean"] == pytest.approx(0.2, abs=0.01)


def test_bayesian_ece_is_wide_for_small_n_and_reproducible():
    proba, labels = _overconfident(1, 60)
    a = bayesian_ece(proba, labels, seed=3)
    b = bayesian_ece(proba, labels, seed=3)
    c = bayesian_ece(proba, labels, seed=4)
    assert a == b
    assert a != c
    assert a["q90"] - a["q10"] > 0.05
    draws = bayesian_ece_samples(proba, labels, num_samples=300, seed=3)
    assert draws.shape == (300,) and np.all(draws >= 0) and np.all(draws <= 1)


@pytest.mark.parametrize("seed", range(40))
def test_truncated_normal_draws_equal_scipy_stats_truncnorm_bit_for_bit(seed):
    # the Bayesian ECE's truncated normals without importing scipy.stats: the same inverse-CDF draws
    # as scipy.stats.truncnorm.rvs (scipy 1.12+: log-space quantile), on bins from the centre to far
    # tails (posterior sds down to 1e-4 of the bin width, means outside their bins)
    from scipy import stats

    from uqeval.metrics.ensembles import _truncnorm_ppf

    rng = np.random.default_rng(seed)
    bins, draws = int(rng.integers(1, 30)), int(rng.integers(1, 60))
    lo = np.arange(bins) / bins
    hi = lo + 1.0 / bins
    mean, sd = rng.uniform(-0.5, 1.5, bins), 10.0 ** rng.uniform(-4, 0.5, bins)
    a, b = (lo - mean) / sd, (hi - mean) / sd
    want = stats.truncnorm.rvs(
        a, b, loc=mean, scale=sd, size=(draws, bins), random_state=np.random.default_rng(seed)
    )
    u = np.random.default_rng(seed).uniform(size=(draws, bins))
    np.testing.assert_array_equal(_truncnorm_ppf(u, a, b) * sd + mean, want)


def test_bayesian_ece_perfect_calibration_gives_small_posterior():
    rng = np.random.default_rng(2)
    conf = rng.uniform(0.5, 1.0, size=50_000)
    correct = rng.uniform(size=conf.size) < conf
    proba = np.stack([conf, 1 - conf], axis=1)
    labels = np.where(correct, 0, 1)
    out = bayesian_ece(proba, labels, num_bins=10, seed=0)
    assert out["mean"] < 0.01


def test_bayesian_ece_input_errors():
    with pytest.raises(InputError, match="labels"):
        bayesian_ece(np.array([[0.5, 0.5]]), np.array([1.5]))
    with pytest.raises(InputError, match="num_bins"):
        bayesian_ece(np.array([[0.5, 0.5]]), np.array([1]), num_bins=0)


# --------------------------------------------------------------------------- #
# SPCE
# --------------------------------------------------------------------------- #


def test_spce_recovers_known_l2_calibration_error():
    # p ~ U(0, 1), P(y = 1 | p) = p**2; true L2 error sqrt(E[(p - p^2)^2]) by quadrature
    truth = math.sqrt(integrate.quad(lambda p: (p - p * p) ** 2, 0, 1)[0])
    assert truth == pytest.approx(math.sqrt(1 / 30), abs=1e-12)
    rng = np.random.default_rng(7)
    p = rng.uniform(size=20_000)
    y = (rng.uniform(size=p.size) < p * p).astype(int)
    out = spce(p, y, seed=0)
    assert out["spce"] == pytest.approx(truth, abs=0.01)
    assert out["ci_low"] <= truth <= out["ci_high"]
    assert out["ci_high"] - out["ci_low"] < 0.03


def test_spce_is_near_zero_when_calibrated_and_reproducible():
    rng = np.random.default_rng(8)
    p = rng.beta(2, 2, size=10_000)
    y = (rng.uniform(size=p.size) < p).astype(int)
    out = spce(p, y, seed=5)
    assert out["spce"] < 0.02
    assert out["ci_low"] == 0.0 or out["ci_low"] < 0.01
    assert spce(p, y, seed=5) == out
    assert spce(p, y, seed=6) != out


def test_spce_top_label_equals_binary_on_confidence_and_correctness():
    proba, labels = _overconfident(3, 3000)
    conf = proba.max(axis=1)
    correct = (proba.argmax(axis=1) == labels).astype(int)
    assert spce(proba, labels, seed=2) == spce(conf, correct, seed=2)
    assert spce(proba, labels, seed=2)["spce"] > 0.05  # the sharpened model is miscalibrated


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_spce_bandwidth_error_equals_the_per_row_sum(seed):
    """The O(G^2 F) squared error of a bandwidth is the per-row sum of the cross-fitted residuals."""
    from uqeval.metrics.ensembles import _BinnedSmoother, _stratified_folds

    rng = np.random.default_rng(seed)
    n = 3000
    p = rng.beta(2, 2, n)
    y = (rng.uniform(size=n) < p**1.3).astype(float)
    folds = _stratified_folds(y, 5, rng)
    smoother = _BinnedSmoother(p, y - p, folds, 5, 64)
    for h in np.geomspace(2.0 * smoother.delta, smoother.span, 6):
        direct = float(np.sum((p + smoother.predict(h) - y) ** 2))
        assert smoother.squared_error(h) == pytest.approx(direct, rel=1e-12)


def test_spce_input_errors():
    with pytest.raises(InputError, match="at least 10 rows"):
        spce(np.full(5, 0.5), np.zeros(5, dtype=int))
    with pytest.raises(InputError, match="labels must be integer class ids in 0..1"):
        spce(np.full(20, 0.5), np.full(20, 2))
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        spce(np.full(20, 1.5), np.zeros(20, dtype=int))


# Frozen from uncertainty-metrics 0.0.81 (numpy backend), spce_conf_int with its defaults,
# np.random.seed(0); regenerate with tests/reference/regen_ensembles.py. Values are
# (estimate, ci_low, ci_high). The library cross-fits on its own folds (sklearn
# StratifiedKFold, random_state=708) with an exact O(N^2) kernel smoother and 50 bandwidths;
# ours uses seeded folds and a binned smoother, so agreement is statistical (0.01), not exact.
SPCE_REFERENCE = {
    "p_squared": (0.189947, 0.170512, 0.20757),
    "calibrated": (0.01708, 0.0, 0.036718),
    "shrunk": (0.048641, 0.025859, 0.063743),
}


def _spce_reference_data():
    """Copy of tests/reference/regen_ensembles.py::spce_reference_data."""
    cases = {"p_squared": lambda p: p * p, "calibrated": lambda p: p, "shrunk": lambda p: 0.8 * p + 0.1}
    rng = np.random.default_rng(0)
    for name, calib in cases.items():
        p = rng.uniform(size=2000)
        y = (rng.uniform(size=p.size) < calib(p)).astype(np.int64)
        yield name, p, y


def test_spce_agrees_with_uncertainty_metrics():
    for name, p, y in _spce_reference_data():
        est, lo, hi = SPCE_REFERENCE[name]
        out = spce(p, y, seed=0)
        assert out["spce"] == pytest.approx(est, abs=0.01), name
        assert out["ci_low"] == pytest.approx(lo, abs=0.01), name
        assert out["ci_high"] == pytest.approx(hi, abs=0.01), name
