"""Tests of uqeval.metrics.classification.

Reference values are frozen from Google Uncertainty Metrics 0.0.81 (numpy
general_calibration_error) and scikit-learn 1.9.1 (log_loss); regenerate them with
tests/reference/regen_uncertainty_metrics.py. The slow loop-based functions below
are deliberately obvious re-statements of the definitions, used to check the fast
kernels on many small inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.conftest import softmax
from tests.reference.regen_uncertainty_metrics import make_datasets
from uqeval.errors import InputError
from uqeval.metrics.classification import (
    brier_decomposition,
    calibration_errors,
    classification_accuracy,
    prediction_sets,
    reliability_bins,
)

# ---------------------------------------------------------------------------
# frozen reference values
# ---------------------------------------------------------------------------

# Uncertainty Metrics 0.0.81 (numpy general_calibration_error), scikit-learn 1.9.1, numpy 2.4.6
# (re-run with scikit-learn 1.7.2 / numpy 1.23.5: identical values).
# num_bins=15, tace threshold=0.01. rmsce is the corrected L2 of the library's current
# source, computed from 0.0.81's per-bin accuracies/confidences (0.0.81's own l2 squares
# the weights: 0.03805639124830077 / 0.015335135716960612 / 0.13484185696173462).
UM_REFERENCE = {
    "multiclass": {
        "ece": 0.13736499868013555,
        "sce": 0.06336102694120621,
        "ace": 0.06305918847538962,
        "tace": 0.07338318496984156,
        "rmsce": 0.1472489468740251,
        "mce": 0.20500247809430217,
    },
    "binary": {
        "ece": 0.0447218800973909,
        "sce": 0.0664299215236959,
        "ace": 0.05659039043330226,
        "tace": 0.05710466378568324,
        "rmsce": 0.059381558530598,
        "mce": 0.11022744429399545,
    },
    "quantised": {
        "ece": 0.3877499999999999,
        "sce": 0.2468521918584003,
        "ace": 0.2468521918584003,
        "tace": 0.2468521918584003,
        "rmsce": 0.43490713271643455,
        "mce": 0.8484848484848485,
    },
}
# Uncertainty Metrics 0.0.81, GeneralCalibrationError(even, max_prob=True, l1, 15 bins):
# per-bin counts/accuracies/confidences of the quantised data; the 16th bin is the
# library's degenerate bin of top-label probabilities equal to 1.0.
UM_QUANTISED_BINS = {
    "counts": [0, 0, 0, 0, 0, 6, 52, 49, 66, 125, 52, 55, 84, 40, 38, 33],
    "accuracy": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.16666666666666666,
        0.25,
        0.2857142857142857,
        0.2727272727272727,
        0.296,
        0.5192307692307693,
        0.2545454545454545,
        0.4166666666666667,
        0.225,
        0.2631578947368421,
        0.15151515151515152,
    ],
    "confidence": [
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.35000000000000003,
        0.43365384615384583,
        0.5,
        0.55,
        0.6252000000000001,
        0.7,
        0.75,
        0.8249999999999996,
        0.8999999999999992,
        0.9499999999999998,
        1.0,
    ],
}
# scikit-learn 1.9.1 sklearn.metrics.log_loss(labels, proba, labels=range(K))
SKLEARN_LOG_LOSS = {
    "multiclass": 1.3263029819402228,
    "binary": 0.4749090710501641,
    "quantised": 6.657970069504506,
}
# Fingerprints of make_datasets(): sum(p * (arange % 7)) and sum(labels). A change
# means numpy's random streams changed and the frozen values must be regenerated.
FINGERPRINTS = {
    "multiclass": (3018.987804671473, 1849),
    "binary": (1687.8790079113312, 560),
    "quantised": (1790.2000000000003, 605),
}

DATASETS = make_datasets()


def _data(name):
    p, y = DATASETS[name]
    p = np.asarray(p, dtype=np.float64)
    if p.ndim == 1:  # binary: P(class 1) -> [1 - p, p], as Uncertainty Metrics' binary_converter
        p = np.column_stack([1.0 - p, p])
    return p, np.asarray(y, dtype=np.int64)


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_dataset_fingerprint(name):
    p, y = DATASETS[name]
    w = np.arange(1, p.size + 1).reshape(p.shape) % 7
    assert float(np.sum(p * w)) == pytest.approx(FINGERPRINTS[name][0], rel=1e-13)
    assert int(y.sum()) == FINGERPRINTS[name][1]


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_calibration_errors_match_uncertainty_metrics(name):
    got = calibration_errors(*_data(name), num_bins=15, tace_threshold=0.01)
    for key, want in UM_REFERENCE[name].items():
        assert got[key] == pytest.approx(want, rel=0, abs=1e-9), key


def test_reliability_bins_match_uncertainty_metrics_including_p_equal_1_bin():
    bins = reliability_bins(*_data("quantised"), num_bins=15)
    assert bins["counts"].tolist() == UM_QUANTISED_BINS["counts"]
    full = bins["counts"] > 0
    np.testing.assert_allclose(
        bins["accuracy"][full], np.array(UM_QUANTISED_BINS["accuracy"])[full], atol=1e-12
    )
    np.testing.assert_allclose(
        bins["confidence"][full], np.array(UM_QUANTISED_BINS["confidence"])[full], atol=1e-12
    )
    assert np.isnan(bins["accuracy"][~full]).all()
    assert bins["edges"].shape == (17,) and bins["edges"][-1] == bins["edges"][-2] == 1.0


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_nll_matches_sklearn_log_loss(name):
    assert classification_accuracy(*_data(name))["nll"] == pytest.approx(SKLEARN_LOG_LOSS[name], rel=1e-12)


# ---------------------------------------------------------------------------
# slow references
# ---------------------------------------------------------------------------


def slow_gce(proba, labels, adaptive, top_label, norm, num_bins, threshold=0.0):
    """Loop-by-loop statement of the general calibration error (Nixon et al.)."""
    n, k = proba.shape
    if top_label:
        groups = [
            ([max(row) for row in proba], [int(np.argmax(row) == lab) for row, lab in zip(proba, labels)])
        ]
    else:
        groups = [([row[j] for row in proba], [int(lab == j) for lab in labels]) for j in range(k)]
    total = 0.0
    for scores, hits in groups:
        pairs = [(s, h) for s, h in zip(scores, hits) if s > threshold]
        if not pairs:
            continue
        xs = sorted(s for s, _ in pairs)
        if adaptive:
            # the library's rank convention: round(linspace(0, n, M, endpoint=False)), half to even
            ranks = np.round(np.linspace(0, len(xs), num_bins, endpoint=False))
            idx = [min(int(r), len(xs) - 1) for r in ranks]
            upper = [xs[i] for i in idx][1:]
        else:
            upper = list(np.linspace(0, 1, num_bins + 1)[1:])
        bins: dict[int, list] = {}
        for s, h in pairs:
            b = sum(1 for e in upper if e <= s)
            bins.setdefault(b, []).append((s, h))
        err = 0.0
        for members in bins.values():
            conf = sum(s for s, _ in members) / len(members)
            acc = sum(h for _, h in members) / len(members)
            w = len(members) / len(pairs)
            err += w * (abs(acc - conf) if norm == "l1" else (acc - conf) ** 2)
        total += err
    if not top_label:
        total /= k
    return math.sqrt(total) if norm == "l2" else total


def slow_mce(proba, labels, num_bins):
    conf = proba.max(axis=1)
    hit = (proba.argmax(axis=1) == labels).astype(float)
    upper = np.linspace(0, 1, num_bins + 1)[1:]
    gaps = []
    for b in range(num_bins + 1):
        members = [i for i in range(len(conf)) if sum(1 for e in upper if e <= conf[i]) == b]
        if members:
            gaps.append(abs(hit[members].mean() - conf[members].mean()))
    return max(gaps)


def random_proba(seed, n, k, quantised=False):
    rng = np.random.default_rng(seed)
    if quantised:
        grid = rng.integers(0, 6, size=(n, k)).astype(float)
        grid[grid.sum(axis=1) == 0, 0] = 1.0
        p = grid / grid.sum(axis=1, keepdims=True)
    else:
        p = softmax(rng.standard_normal((n, k)) * rng.uniform(0.5, 4.0))
    y = rng.integers(0, k, n)
    return p, y


@pytest.mark.parametrize("num_bins", [1, 2, 7, 15, 40])
@pytest.mark.parametrize(
    "seed,n,k,quantised", [(1, 30, 3, False), (2, 25, 4, True), (3, 60, 2, False), (4, 9, 5, True)]
)
def test_calibration_errors_match_slow_reference(num_bins, seed, n, k, quantised):
    p, y = random_proba(seed, n, k, quantised)
    got = calibration_errors(p, y, num_bins=num_bins, tace_threshold=0.15)
    want = {
        "ece": slow_gce(p, y, False, True, "l1", num_bins),
        "rmsce": slow_gce(p, y, True, True, "l2", num_bins),
        "sce": slow_gce(p, y, False, False, "l1", num_bins),
        "ace": slow_gce(p, y, True, False, "l1", num_bins),
        "tace": slow_gce(p, y, True, False, "l1", num_bins, threshold=0.15),
        "mce": slow_mce(p, y, num_bins),
    }
    for key, val in want.items():
        assert got[key] == pytest.approx(val, rel=1e-12, abs=1e-14), key


@pytest.mark.parametrize("k,quantised", [(5, False), (4, True), (2, False)])
def test_calibration_errors_threaded_classes_equal_serial_bit_for_bit(monkeypatch, k, quantised):
    # from _THREAD_ROWS rows the classes are sorted two at a time (a worker thread); the sums must not change.
    # An odd K leaves the last class alone; quantised scores have zeros, ties and scores below the threshold.
    import uqeval.metrics.classification as mod

    p, y = random_proba(7 + k, 3000, k, quantised)
    monkeypatch.setattr(mod, "_THREAD_ROWS", 10**9)
    serial = calibration_errors(p, y, num_bins=15, tace_threshold=0.15)
    monkeypatch.setattr(mod, "_THREAD_ROWS", 1000)
    threaded = calibration_errors(p, y, num_bins=15, tace_threshold=0.15)
    assert threaded == serial  # dict of floats: exact equality
    assert serial["sce"] > 0 and serial["tace"] > 0


# ---------------------------------------------------------------------------
# calibration errors: hand-made cases and edge conventions
# ---------------------------------------------------------------------------


def test_calibration_hand_case():
    # top-label conf 0.9 (1 of 2 right) and 0.7 (2 of 2 right)
    p = np.array([[0.1, 0.9], [0.1, 0.9], [0.3, 0.7], [0.3, 0.7]])
    y = np.array([1, 0, 1, 1])
    got = calibration_errors(p, y)
    assert got["ece"] == pytest.approx(0.5 * 0.4 + 0.5 * 0.3)
    assert got["mce"] == pytest.approx(0.4)
    assert got["rmsce"] == pytest.approx(math.sqrt(0.5 * 0.16 + 0.5 * 0.09))


def test_probability_one_has_its_own_bin():
    # 0.95 right and 1.0 wrong: separate bins give 0.5*0.05 + 0.5*1.0; merging would give 0.475
    p = np.array([[0.05, 0.95], [0.0, 1.0]])
    y = np.array([1, 0])
    assert calibration_errors(p, y)["ece"] == pytest.approx(0.525)
    bins = reliability_bins(p, y)
    assert bins["counts"][-2] == 1 and bins["counts"][-1] == 1


def test_even_bins_are_left_closed():
    edges = np.linspace(0.0, 1.0, 16)
    p1 = np.array([edges[10], np.nextafter(edges[10], 0.0), edges[14]])
    bins = reliability_bins(np.column_stack([1.0 - p1, p1]), np.ones(3, dtype=int))
    assert bins["counts"][10] == 1 and bins["counts"][9] == 1 and bins["counts"][14] == 1


def test_perfectly_calibrated_bins_give_zero_ece():
    # 10 rows at 0.8 with 8 right, 10 rows at 0.6 with 6 right
    p = np.array([[0.2, 0.8]] * 10 + [[0.4, 0.6]] * 10)
    y = np.array([1] * 8 + [0] * 2 + [1] * 6 + [0] * 4)
    got = calibration_errors(p, y)
    assert got["ece"] == pytest.approx(0.0, abs=1e-15)
    assert got["mce"] == pytest.approx(0.0, abs=1e-15)
    assert got["rmsce"] == pytest.approx(0.0, abs=1e-7)


def test_calibration_errors_reject_bad_bins():
    p, y = random_proba(0, 10, 3)
    with pytest.raises(InputError, match="num_bins"):
        calibration_errors(p, y, num_bins=0)


def test_reliability_bins_reproduce_ece():
    p, y = _data("multiclass")
    bins = reliability_bins(p, y)
    full = bins["counts"] > 0
    ece = np.sum(bins["counts"][full] / len(y) * np.abs(bins["accuracy"][full] - bins["confidence"][full]))
    assert ece == pytest.approx(calibration_errors(p, y)["ece"], rel=1e-12)
    assert bins["counts"].sum() == len(y)


# ---------------------------------------------------------------------------
# accuracy, NLL, Brier
# ---------------------------------------------------------------------------


def test_accuracy_hand_case():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
    y = np.array([0, 2])
    got = classification_accuracy(p, y)
    assert got["accuracy"] == 0.5
    assert got["nll"] == pytest.approx(-(math.log(0.7) + math.log(0.3)) / 2, rel=1e-14)
    assert got["brier"] == pytest.approx((0.09 + 0.04 + 0.01 + 0.01 + 0.36 + 0.49) / 2, rel=1e-14)
    assert got["brier_um"] == pytest.approx(got["brier"] - 1.0, rel=1e-14)


def test_nll_clips_zero_probability_like_sklearn():
    p = np.array([[1.0, 0.0], [0.5, 0.5]])
    y = np.array([1, 0])
    eps = np.finfo(float).eps
    want = (-math.log(eps) - math.log(0.5)) / 2
    assert classification_accuracy(p, y)["nll"] == pytest.approx(want, rel=1e-14)


def test_brier_extremes():
    y = np.array([0, 1])
    assert classification_accuracy(np.eye(2), y)["brier"] == 0.0
    assert classification_accuracy(np.eye(2)[::-1], y)["brier"] == 2.0


# ---------------------------------------------------------------------------
# Brier decomposition
# ---------------------------------------------------------------------------


def slow_decomposition(p, y):
    """Uncertainty Metrics' formulas (tensorflow brier_decomposition), restated with loops."""
    n, k = p.shape
    pred = [int(np.argmax(row)) for row in p]
    conf = np.zeros((k, k))
    for a, b in zip(pred, y):
        conf[a, b] += 1
    weights = conf.sum(axis=1) / n
    pbar = conf.sum(axis=0) / n
    q = np.array([conf[a] / conf[a].sum() if conf[a].sum() else np.zeros(k) for a in range(k)])
    unc_um = -np.sum(pbar**2)
    res = sum(weights[a] * np.sum((pbar - q[a]) ** 2) for a in range(k))
    rel = sum(np.sum((q[pred[i]] - p[i]) ** 2) for i in range(n)) / n
    cross = sum(np.sum((p[i] - q[pred[i]]) * (q[pred[i]] - np.eye(k)[y[i]])) for i in range(n)) / n
    return unc_um, res, rel, cross


@pytest.mark.parametrize("seed,n,k,quantised", [(5, 200, 4, False), (6, 150, 3, True), (7, 80, 2, False)])
def test_brier_decomposition_matches_slow_reference(seed, n, k, quantised):
    p, y = random_proba(seed, n, k, quantised)
    got = brier_decomposition(p, y)
    unc_um, res, rel, cross = slow_decomposition(p, y)
    assert got["uncertainty"] - 1.0 == pytest.approx(unc_um, abs=1e-13)
    assert got["resolution"] == pytest.approx(res, abs=1e-13)
    assert got["reliability"] == pytest.approx(rel, abs=1e-13)
    # general relation: brier = rel - res + unc + 2 * within-cell covariance
    brier = classification_accuracy(p, y)["brier"]
    assert brier == pytest.approx(
        got["reliability"] - got["resolution"] + got["uncertainty"] + 2 * cross, abs=1e-12
    )


def test_brier_identity_exact_when_forecast_constant_within_cells():
    rng = np.random.default_rng(11)
    forecasts = np.array([[0.7, 0.2, 0.1], [0.25, 0.6, 0.15], [0.1, 0.3, 0.6]])  # one per predicted class
    cell = rng.integers(0, 3, 500)
    p = forecasts[cell]
    y = rng.integers(0, 3, 500)
    got = brier_decomposition(p, y)
    brier = classification_accuracy(p, y)["brier"]
    assert brier == pytest.approx(got["reliability"] - got["resolution"] + got["uncertainty"], abs=1e-13)


def test_brier_decomposition_perfect_forecast():
    y = np.array([0, 1, 2, 2, 1])
    got = brier_decomposition(np.eye(3)[y], y)
    assert got["reliability"] == pytest.approx(0.0, abs=1e-15)
    assert got["resolution"] == pytest.approx(got["uncertainty"], abs=1e-15)
    assert got["uncertainty"] == pytest.approx(1 - (0.2**2 + 0.4**2 + 0.4**2))


# ---------------------------------------------------------------------------
# prediction sets
# ---------------------------------------------------------------------------


def test_prediction_set_top_class_suffices():
    p = np.array([[0.96, 0.03, 0.01], [0.96, 0.03, 0.01]])
    got = prediction_sets(p, np.array([0, 1]), [0.95])["0.95"]
    assert got == {"coverage": 0.5, "mean_size": 1.0, "size_histogram": [2, 0, 0]}


def test_prediction_set_float_rounding_of_cumulative_sum():
    # 0.6 + 0.3 == 0.8999999999999999 in doubles; the 0.9 set still has two classes
    got = prediction_sets(np.array([[0.6, 0.3, 0.1]]), np.array([1]), [0.9])["0.9"]
    assert got["mean_size"] == 2.0 and got["coverage"] == 1.0


def test_prediction_set_multiple_levels_and_keys():
    p = np.array([[0.5, 0.3, 0.15, 0.05], [0.1, 0.2, 0.3, 0.4]])
    y = np.array([2, 0])
    got = prediction_sets(p, y, [0.5, 0.8, 0.95, 0.99])
    assert list(got) == ["0.5", "0.8", "0.95", "0.99"]
    # row 0 needs 1, 2, 3, 4 classes; row 1 needs 2, 3, 4, 4
    assert [got[k]["mean_size"] for k in got] == [1.5, 2.5, 3.5, 4.0]
    assert got["0.5"]["size_histogram"] == [1, 1, 0, 0]
    assert got["0.95"]["size_histogram"] == [0, 0, 1, 1]
    assert [got[k]["coverage"] for k in got] == [0.0, 0.0, 1.0, 1.0]


def test_prediction_set_ties_count_expected_coverage():
    # level 0.6: sizes 2; the second slot is shared by two classes at 0.3
    p = np.array([[0.4, 0.3, 0.3]] * 3)
    y = np.array([0, 1, 2])
    got = prediction_sets(p, y, 0.6)["0.6"]
    assert got["mean_size"] == 2.0
    assert got["coverage"] == pytest.approx((1.0 + 0.5 + 0.5) / 3)
    # uniform: 2 of 4 tied classes needed, each covered with probability 1/2
    u = np.full((4, 4), 0.25)
    got = prediction_sets(u, np.arange(4), 0.5)["0.5"]
    assert got == {"coverage": 0.5, "mean_size": 2.0, "size_histogram": [0, 4, 0, 0]}
    # a tie below the threshold value does not matter
    got = prediction_sets(np.array([[0.5, 0.25, 0.25]]), np.array([0]), 0.5)["0.5"]
    assert got["coverage"] == 1.0 and got["mean_size"] == 1.0


def test_prediction_set_size_capped_at_k():
    p = np.array([[0.5, 0.3, 0.1999999]])  # sums to 1 - 1e-7, within the simplex tolerance
    got = prediction_sets(p, np.array([2]), 0.99999999)["0.99999999"]
    assert got["mean_size"] == 3.0 and got["coverage"] == 1.0


def test_prediction_set_rejects_bad_level():
    with pytest.raises(InputError, match="level"):
        prediction_sets(np.array([[0.5, 0.5]]), np.array([0]), [1.0])


def slow_prediction_sets(p, y, level):
    sizes, cov = [], []
    for row, lab in zip(p, y):
        order = sorted(row, reverse=True)
        total, size = 0.0, 0
        for v in order:
            size += 1
            total += v
            if total >= level - 1e-10:
                break
        t = order[size - 1]
        gt = sum(1 for v in row if v > t)
        eq = sum(1 for v in row if v == t)
        cov.append(1.0 if row[lab] > t else ((size - gt) / eq if row[lab] == t else 0.0))
        sizes.append(size)
    return np.mean(cov), np.mean(sizes)


@pytest.mark.parametrize("seed,quantised", [(21, False), (22, True), (23, True)])
def test_prediction_sets_match_slow_reference(seed, quantised):
    p, y = random_proba(seed, 120, 4, quantised)
    levels = [0.3, 0.5, 0.8, 0.9, 0.95]
    got = prediction_sets(p, y, levels)
    for lv in levels:
        cov, size = slow_prediction_sets(p, y, lv)
        assert got[repr(lv)]["coverage"] == pytest.approx(cov, abs=1e-14)
        assert got[repr(lv)]["mean_size"] == pytest.approx(size, abs=1e-14)
    sizes = [got[repr(lv)]["mean_size"] for lv in levels]
    assert sizes == sorted(sizes)


# ---------------------------------------------------------------------------
# invariances (hypothesis)
# ---------------------------------------------------------------------------


def all_metrics(p, y, levels=(0.5, 0.9)):
    out = {}
    out.update(classification_accuracy(p, y))
    out.update({f"bd_{k}": v for k, v in brier_decomposition(p, y).items()})
    out.update(calibration_errors(p, y, num_bins=10))
    for key, val in prediction_sets(p, y, levels).items():
        out[f"cov_{key}"] = val["coverage"]
        out[f"size_{key}"] = val["mean_size"]
        out[f"hist_{key}"] = tuple(val["size_histogram"])
    return out


def assert_same(a, b, keys=None):
    for key in keys or a:
        if isinstance(a[key], tuple):
            assert a[key] == b[key], key
        else:
            assert a[key] == pytest.approx(b[key], rel=1e-11, abs=1e-13), key


# metrics that do not involve argmax, hence invariant even when the top probability is tied
TIE_SAFE = [
    "nll",
    "brier",
    "brier_um",
    "sce",
    "ace",
    "tace",
    "cov_0.5",
    "size_0.5",
    "cov_0.9",
    "size_0.9",
    "hist_0.5",
    "hist_0.9",
]

_hyp = settings(
    max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@_hyp
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 120),
    k=st.integers(2, 7),
    perm_seed=st.integers(0, 10**6),
)
def test_class_permutation_invariance(seed, n, k, perm_seed):
    p, y = random_proba(seed, n, k)  # continuous: no ties in the top label
    perm = np.random.default_rng(perm_seed).permutation(k)
    inv = np.argsort(perm)
    assert_same(all_metrics(p, y), all_metrics(p[:, perm], inv[y]))


@_hyp
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 120),
    k=st.integers(2, 6),
    perm_seed=st.integers(0, 10**6),
)
def test_class_permutation_invariance_with_ties(seed, n, k, perm_seed):
    p, y = random_proba(seed, n, k, quantised=True)
    perm = np.random.default_rng(perm_seed).permutation(k)
    inv = np.argsort(perm)
    assert_same(all_metrics(p, y), all_metrics(p[:, perm], inv[y]), TIE_SAFE)


@_hyp
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(5, 120),
    k=st.integers(2, 6),
    quantised=st.booleans(),
    perm_seed=st.integers(0, 10**6),
)
def test_row_order_invariance(seed, n, k, quantised, perm_seed):
    p, y = random_proba(seed, n, k, quantised)
    perm = np.random.default_rng(perm_seed).permutation(n)
    assert_same(all_metrics(p, y), all_metrics(p[perm], y[perm]))


@_hyp
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(5, 120), k=st.integers(2, 6), quantised=st.booleans())
def test_ranges(seed, n, k, quantised):
    p, y = random_proba(seed, n, k, quantised)
    m = all_metrics(p, y)
    for key in ("ece", "rmsce", "mce", "sce", "ace", "tace", "accuracy", "bd_resolution", "bd_uncertainty"):
        assert 0.0 <= m[key] <= 1.0 + 1e-12, key
    assert 0.0 <= m["bd_reliability"] <= 2.0
    assert 0.0 <= m["brier"] <= 2.0 and m["nll"] >= 0.0
    assert m["ece"] <= m["mce"] + 1e-12 and m["rmsce"] <= 1.0


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------


def test_kernels_reject_labels_out_of_range():
    with pytest.raises(InputError, match="0..1"):
        classification_accuracy(np.array([[0.5, 0.5]]), np.array([2]))
