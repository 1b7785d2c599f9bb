"""Classification metrics: accuracy and proper scores, the Brier decomposition, the
calibration-error family and prediction sets.

All kernels take ``proba`` (N, K) class probabilities (class axis last) and
``labels`` (N,) integer class ids in ``0..K-1``, as the prediction containers
(:mod:`uqeval.predictions`) validate them: the kernels only check shapes and the label range,
not the simplex.

Conventions shared by every kernel
----------------------------------
* The *predicted class* is ``argmax`` over the class axis; ties go to the lowest
  class index (``numpy.argmax``, as in Uncertainty Metrics). Only the
  top-label quantities (``accuracy``, ``ece``, ``rmsce``, ``mce`` and the Brier
  decomposition cells) depend on that rule, and only for rows whose top
  probability is tied.
* Losses are lower-is-better; accuracy and coverage are reported as shares.

References
----------
Guo, Pleiss, Sun, Weinberger (2017), On calibration of modern neural networks.
Nixon, Dusenberry, Zhang, Jerfel, Tran (2019), Measuring calibration in deep
learning (the general calibration error, GCE).
Google Uncertainty Metrics (``uncertainty_metrics.numpy.general_calibration_error``
and ``uncertainty_metrics.tensorflow.brier_decomposition``).
Kompa, Snoek, Beam (2021), Empirical frequentist coverage of deep learning
uncertainty quantification procedures, Eq. 4 (prediction sets).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..validation import check_level, check_nonempty
from .blocks import BLOCK
from .intervals import level_key
from .rowweights import CodeSums, row_units

__all__ = [
    "classification_accuracy",
    "brier_decomposition",
    "calibration_errors",
    "reliability_bins",
    "prediction_sets",
]

_EPS = float(np.finfo(np.float64).eps)

# Tolerance on the cumulative probability when building prediction sets: the
# running sum of K doubles carries a rounding error of order K * eps, so
# [0.6, 0.3, 0.1] must reach 0.9 with two classes although 0.6 + 0.3 rounds to
# 0.8999999999999999.
_SET_TOL = 1e-10

#: rows from which :func:`calibration_errors` sorts its score arrays two at a time, one in a worker
#: thread (below, the thread costs more than it saves)
_THREAD_ROWS = 100_000


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------


def _check(proba, labels) -> tuple[np.ndarray, np.ndarray]:
    """Cheap shape and label-range checks of the kernels (the simplex is checked by the prediction containers)."""
    p = np.asarray(proba, dtype=np.float64)
    y = np.asarray(labels)
    if p.ndim != 2 or p.shape[1] < 2:
        raise InputError(f"proba must be (N, K) with K >= 2, got shape {p.shape}")
    if y.ndim != 1 or len(y) != p.shape[0]:
        raise InputError(f"labels must be (N,) with N = {p.shape[0]}, got shape {y.shape}")
    check_nonempty(p.shape[0], "proba")
    if y.dtype.kind not in "iu":
        if y.dtype.kind == "f" and np.all(y == np.floor(y)):
            y = y.astype(np.int64)
        else:
            raise InputError(f"labels must be integers, got dtype {y.dtype}")
    if y.min() < 0 or y.max() >= p.shape[1]:
        raise InputError(f"labels must lie in 0..{p.shape[1] - 1}, found {y.min()}..{y.max()}")
    return p, y.astype(np.intp, copy=False)


# ----------------------------------------------------------------------------
# accuracy and proper scores
# ----------------------------------------------------------------------------


def classification_accuracy(proba, labels) -> dict[str, float]:
    r"""Accuracy, negative log-likelihood and Brier score.

    With :math:`p_{ik}` the probability of class :math:`k` for row :math:`i`,
    :math:`y_i` the label and :math:`\epsilon` the float64 machine epsilon,

    .. math::
        \mathrm{accuracy} &= \frac1N \sum_i \mathbb 1[\arg\max_k p_{ik} = y_i] \\
        \mathrm{nll} &= -\frac1N \sum_i \log \operatorname{clip}(p_{i y_i}, \epsilon, 1-\epsilon) \\
        \mathrm{brier} &= \frac1N \sum_i \sum_k (p_{ik} - \mathbb 1[y_i = k])^2 \in [0, 2] \\
        \mathrm{brier\_um} &= \frac1N \sum_i \Big(\sum_k p_{ik}^2 - 2 p_{i y_i}\Big) = \mathrm{brier} - 1

    ``nll`` clips the label's probability to :math:`[\epsilon, 1-\epsilon]` exactly as
    scikit-learn's ``log_loss`` does (scikit-learn >= 1.5, checked against 1.9.1),
    so a label given probability 0 costs :math:`-\log\epsilon \approx 36.04`
    instead of infinity, and ``log_loss`` values are reproduced to rounding.
    ``brier_um`` is the Brier score as Google Uncertainty Metrics defines it
    (README, "Brier score"): the same proper score shifted by -1, in [-1, 1].

    Returns
    -------
    dict with keys ``accuracy``, ``nll``, ``brier``, ``brier_um`` (floats).
    """
    r = classification_rows(proba, labels)
    brier_um = float(np.mean(r["brier_um"]))
    return {
        "accuracy": float(np.mean(r["accuracy"])),
        "nll": float(np.mean(r["nll"])),
        "brier": brier_um + 1.0,
        "brier_um": brier_um,
    }


def classification_rows(proba, labels) -> dict[str, np.ndarray]:
    """Per-row terms of :func:`classification_accuracy`, each (N,): their means are the metrics."""
    p, y = _check(proba, labels)
    p_y = p[np.arange(p.shape[0]), y]
    sq = np.einsum("ij,ij->i", p, p)
    brier_um = sq - 2.0 * p_y
    return {
        "accuracy": (np.argmax(p, axis=1) == y).astype(np.float64),
        "nll": -np.log(np.clip(p_y, _EPS, 1.0 - _EPS)),
        "brier": brier_um + 1.0,
        "brier_um": brier_um,
    }


def brier_decomposition(proba, labels, weights=None) -> dict[str, float]:
    r"""Murphy decomposition of the Brier score, cells = predicted class (Uncertainty Metrics).

    Following ``uncertainty_metrics.tensorflow.brier_decomposition``, the simplex is
    partitioned into K cells :math:`M_k = \{p : \arg\max_c p_c = k\}`. With
    :math:`n_k = |M_k|`, the empirical label distribution of cell :math:`k`,
    :math:`q_{kc} = \frac{1}{n_k}\sum_{i \in M_k} \mathbb 1[y_i = c]`, and the
    label frequencies :math:`\bar p_c = \frac1N \sum_i \mathbb 1[y_i = c]`:

    .. math::
        \mathrm{uncertainty} &= 1 - \sum_c \bar p_c^2 \\
        \mathrm{resolution} &= \sum_k \frac{n_k}{N} \sum_c (q_{kc} - \bar p_c)^2 \\
        \mathrm{reliability} &= \frac1N \sum_i \sum_c (q_{k(i) c} - p_{ic})^2,
        \quad k(i) = \arg\max_c p_{ic}

    Convention. ``resolution`` and ``reliability`` are Uncertainty Metrics'
    (without its ``1e-7`` added to the cell counts, a relative change below 1e-7;
    empty cells have weight 0). ``uncertainty`` is Murphy's :math:`1 - \sum_c \bar p_c^2`,
    so it pairs with ``brier`` in [0, 2]; Uncertainty Metrics returns
    :math:`-\sum_c \bar p_c^2` = ``uncertainty - 1``, which pairs with ``brier_um``.
    Then

    .. math::
        \mathrm{brier} = \mathrm{reliability} - \mathrm{resolution} + \mathrm{uncertainty}
        + \frac2N \sum_i \sum_c (p_{ic} - q_{k(i)c})(q_{k(i)c} - \mathbb 1[y_i = c]),

    and the last (within-cell covariance) term vanishes whenever the predictions
    are constant within each cell, e.g. when there is one distinct forecast per
    predicted class; then brier = reliability - resolution + uncertainty exactly.
    Otherwise it is the discretisation error Uncertainty Metrics' docstring
    mentions. Reliability lies in [0, 2], lower is better; resolution >= 0,
    higher is better.

    ``weights`` (N,): every count and sum is weighted (:func:`brier_stats`), :math:`N` the total weight.

    Returns
    -------
    dict with keys ``uncertainty``, ``resolution``, ``reliability`` (floats).
    """
    p, y = _check(proba, labels)
    return brier_decomposition_from_stats(*brier_stats(p, y, weights))


def brier_stats(p: np.ndarray, y: np.ndarray, weights=None) -> tuple[np.ndarray, np.ndarray, float]:
    """Sufficient statistics of :func:`brier_decomposition` (validated ``p``, integer ``y``):
    the (K, K) counts of (predicted class, label), the (K, K) sums of the forecasts per
    predicted class, and the sum of squared forecasts; ``weights`` (N,): weighted counts and sums. Sums
    over chunks give the whole data's."""
    k = p.shape[1]
    pred = np.argmax(p, axis=1)
    if weights is None:
        conf = np.bincount(pred * k + y, minlength=k * k).reshape(k, k).astype(np.float64)
        s = np.stack([np.bincount(pred, weights=p[:, c], minlength=k) for c in range(k)], axis=1)
        return conf, s, float(np.einsum("ij,ij->", p, p))
    w = np.asarray(weights, dtype=np.float64)
    counts = np.bincount(pred * k + y, weights=w, minlength=k * k).reshape(k, k)
    s = np.stack([np.bincount(pred, weights=w * p[:, c], minlength=k) for c in range(k)], axis=1)
    return counts, s, float(np.einsum("i,ij,ij->", w, p, p))


def brier_sums(p: np.ndarray, y: np.ndarray, weights=None) -> np.ndarray:
    """:func:`brier_stats` as one flat array ``[counts (K²), forecast sums (K²), sum of squares]`` (sums over
    chunks add up; :func:`brier_decomposition_from_sums`)."""
    conf, s, sum_sq = brier_stats(p, y, weights)
    return np.concatenate([conf.ravel(), s.ravel(), [sum_sq]])


def brier_decomposition_from_sums(sums: np.ndarray) -> dict[str, float]:
    """:func:`brier_decomposition` from :func:`brier_sums` (summed over chunks when streaming)."""
    k = int(round(np.sqrt((sums.size - 1) / 2)))
    return brier_decomposition_from_stats(
        sums[: k * k].reshape(k, k), sums[k * k : 2 * k * k].reshape(k, k), float(sums[-1])
    )


def brier_decomposition_from_stats(conf: np.ndarray, s: np.ndarray, sum_sq: float) -> dict[str, float]:
    """:func:`brier_decomposition` from :func:`brier_stats` (summed over chunks when streaming)."""
    n = float(conf.sum())
    n_k = conf.sum(axis=1)
    pbar = conf.sum(axis=0) / n
    q = np.divide(conf, n_k[:, None], out=np.zeros_like(conf), where=n_k[:, None] > 0)
    uncertainty = 1.0 - float(np.sum(pbar**2))
    resolution = float(np.sum(n_k / n * np.sum((q - pbar) ** 2, axis=1)))
    # sum_i ||q_k(i) - p_i||^2 = sum_k n_k ||q_k||^2 - 2 sum_k q_k . S_k + sum_i ||p_i||^2,
    # with S_k the sum of the forecasts in cell k: O(NK) without an (N, K) gather.
    total = np.sum(n_k * np.sum(q * q, axis=1)) - 2.0 * np.sum(q * s) + sum_sq
    reliability = max(float(total) / n, 0.0)
    return {"uncertainty": uncertainty, "resolution": resolution, "reliability": reliability}


# ----------------------------------------------------------------------------
# calibration errors (general calibration error family)
# ----------------------------------------------------------------------------


def _even_upper_edges(num_bins: int) -> np.ndarray:
    # np.histogram_bin_edges([], bins=num_bins, range=(0, 1)) is this linspace.
    return np.linspace(0.0, 1.0, num_bins + 1)[1:]


def _adaptive_upper_edges(xs: np.ndarray, num_bins: int) -> np.ndarray:
    """Upper edges of equal-mass bins over sorted scores ``xs`` (Uncertainty Metrics' ``get_adaptive_bins``).

    The edges are the order statistics ``xs[r_m]``, ``r_m = round(m n / M)`` (``numpy.round``, half to even)
    clipped to ``n - 1``, for ``m = 1..M-1`` (with row weights: :func:`_weighted_calibration_errors`).
    """
    return xs[adaptive_positions(xs.size, num_bins).astype(np.intp)]


def adaptive_positions(n: float, num_bins: int) -> np.ndarray:
    r"""The 0-based sorted positions :math:`r_m = \min(\mathrm{round}(m n / M), n - 1)`, m = 1..M-1, of the
    equal-mass upper edges among ``n`` scores (``n`` repeated rows with weights): the one place of this rule,
    for :func:`_adaptive_upper_edges` and :func:`_weighted_calibration_errors`."""
    return np.minimum(np.round(np.linspace(0, n, num_bins, endpoint=False)), max(n - 1.0, 0.0))[1:]


def _bin_stats(
    xs: np.ndarray, xh: np.ndarray, upper: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Counts, sums of scores and numbers of hits per bin, from sorted data.

    ``xs`` are all scores sorted ascending, ``xh`` the sorted scores whose outcome
    is 1, ``upper`` the non-decreasing upper edges. A score goes to bin
    ``#{edges <= score}`` (``numpy.digitize`` with ``right=False``), so in sorted
    order every bin is a contiguous run and its boundaries are
    ``searchsorted(xs, edge, "left")``: O(M log N) after the sort.
    """
    nb = upper.size + 1
    bnd = np.empty(nb + 1, dtype=np.intp)
    bnd[0], bnd[-1] = 0, xs.size
    bnd[1:-1] = np.searchsorted(xs, upper, side="left")
    hb = np.empty(nb + 1, dtype=np.intp)
    hb[0], hb[-1] = 0, xh.size
    hb[1:-1] = np.searchsorted(xh, upper, side="left")
    return np.diff(bnd), _run_sums(xs, bnd), np.diff(hb).astype(np.float64)


def _run_sums(values: np.ndarray, bnd: np.ndarray) -> np.ndarray:
    """Sums of ``values`` over the runs ``[bnd[b], bnd[b + 1])`` (0 for an empty run)."""
    out = np.zeros(bnd.size - 1)
    full = np.diff(bnd) > 0
    if full.any():
        # the non-empty runs tile the values, so reduceat over their starts sums each run exactly once
        out[full] = np.add.reduceat(values, bnd[:-1][full])
    return out


def _above(xs: np.ndarray, threshold: float) -> np.ndarray:
    """The part of sorted ``xs`` strictly above ``threshold`` (a view)."""
    return xs[np.searchsorted(xs, threshold, side="right") :]


def _l1_gap(xs: np.ndarray, xh: np.ndarray, upper: np.ndarray) -> float:
    r"""L1 gap :math:`\sum_b \frac{n_b}{n} |\mathrm{acc}_b - \mathrm{conf}_b|`, computed as
    :math:`\frac1n \sum_b |\mathrm{hits}_b - \sum_{B_b} x|`; 0 when no score is kept."""
    if xs.size == 0:
        return 0.0
    return _l1_max(*_bin_stats(xs, xh, upper))[0]


def _l2_gap(counts: np.ndarray, s_conf: np.ndarray, s_hit: np.ndarray) -> float:
    r"""L2 gap :math:`\big(\sum_b \frac{n_b}{n} (\mathrm{acc}_b - \mathrm{conf}_b)^2\big)^{1/2}` (rmsce) from
    per-bin counts, score sums and hits (weighted or not), as :math:`\big(\frac1n \sum_{b: n_b > 0}
    (\mathrm{hits}_b - \sum_{B_b} x)^2 / n_b\big)^{1/2}`."""
    nz = counts > 0
    return float(np.sqrt(np.sum((s_hit[nz] - s_conf[nz]) ** 2 / counts[nz]) / np.sum(counts)))


def _l1_max(counts: np.ndarray, s_conf: np.ndarray, s_hit: np.ndarray) -> tuple[float, float]:
    """``(L1 gap, max gap over non-empty bins)`` from per-bin counts, score sums and hits; (0, nan) when empty."""
    n = np.sum(counts)
    if n == 0:
        return 0.0, float("nan")
    gap_sum = np.abs(s_hit - s_conf)
    nz = counts > 0
    return float(np.sum(gap_sum)) / float(n), float(np.max(gap_sum[nz] / counts[nz]))


def even_bin_stats(p: np.ndarray, y: np.ndarray, num_bins: int, weights=None) -> np.ndarray:
    """Per-bin ``(counts, score sums, hits)`` of the even bins of :func:`calibration_errors`, unsorted:
    a ``(K + 1, 3, M + 1)`` array, row 0 the top label, row 1 + k class k (scores > 0 only); ``weights``
    (N,): weighted counts, sums and hits.

    Sums over chunks give the whole data's, so ece, mce and sce stream exactly
    (:func:`even_bin_errors`); the adaptive-bin metrics need the sorted scores.
    """
    even = _even_upper_edges(int(num_bins))
    nb = even.size + 1
    n, k = p.shape
    conf, hit = _top_label(p, y)
    scores = np.concatenate([conf[:, None], p], axis=1)  # (N, K + 1)
    outcome = np.concatenate([hit[:, None], y[:, None] == np.arange(k)[None, :]], axis=1)
    keep = scores > 0.0
    cell = (np.arange(k + 1)[None, :] * nb + np.searchsorted(even, scores, side="right"))[keep]
    size = (k + 1) * nb
    if weights is None:
        counts = np.bincount(cell, minlength=size).astype(np.float64)
        scores, hits = scores[keep], outcome[keep].astype(np.float64)
    else:
        w = np.broadcast_to(np.asarray(weights, dtype=np.float64)[:, None], scores.shape)[keep]
        counts = np.asarray(np.bincount(cell, weights=w, minlength=size), dtype=np.float64)
        scores, hits = w * scores[keep], w * outcome[keep]
    out = np.stack(
        [
            counts,
            np.bincount(cell, weights=scores, minlength=size),
            np.bincount(cell, weights=hits, minlength=size),
        ]
    )
    return out.reshape(3, k + 1, nb).transpose(1, 0, 2)


def even_bin_errors(stats: np.ndarray) -> dict[str, float]:
    """``ece``, ``mce`` and ``sce`` of :func:`calibration_errors` from :func:`even_bin_stats`."""
    ece, mce = _l1_max(*stats[0])
    k = stats.shape[0] - 1
    return {"ece": ece, "mce": mce, "sce": sum(_l1_max(*stats[1 + j])[0] for j in range(k)) / k}


def _top_label(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pred = np.argmax(p, axis=1)
    conf = p[np.arange(p.shape[0]), pred]
    return conf, pred == y


def _sort_all(arrays):
    """Sort each array in place; return them."""
    for a in arrays:
        a.sort()
    return arrays


def _sorted_in_pairs(items: list, threaded: bool):
    """Yield ``item()``'s arrays (new arrays) for each item, in order, sorted here in place.

    With ``threaded``, two items at a time: a worker thread sorts the second while this thread sorts
    the first (sorting, most of the time, releases the GIL; ~45% less wall time for
    :func:`calibration_errors` at 1e6 x 10 on 2 cores when a core is free). The arrays are made in
    this thread (so the memory freed with them stays with its allocator) and no more than two items'
    arrays are held at once; the sorted arrays are the same either way.
    """
    if not threaded:
        for item in items:
            yield _sort_all(item())
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        for i in range(0, len(items), 2):  # pairs of items
            first = items[i]()
            second = items[i + 1]() if i + 1 < len(items) else None
            done = None if second is None else pool.submit(_sort_all, second)
            first = _sort_all(first)
            second = None if done is None else done.result()
            yield first
            first = None  # freed while the second is used
            if second is not None:
                yield second


def calibration_errors(
    proba, labels, num_bins: int = 15, tace_threshold: float = 0.01, weights=None
) -> dict[str, float]:
    r"""The general calibration error family of Nixon et al. (2019), as Uncertainty Metrics computes it.

    For a set of scores :math:`x_i \in [0, 1]` with outcomes :math:`o_i \in \{0, 1\}`
    split into bins :math:`B_b` with :math:`n_b` members out of :math:`n`,
    :math:`\mathrm{acc}_b = \frac{1}{n_b}\sum_{B_b} o_i` and
    :math:`\mathrm{conf}_b = \frac{1}{n_b}\sum_{B_b} x_i`:

    .. math::
        \mathrm{ece} &= \sum_b \tfrac{n_b}{N} |\mathrm{acc}_b - \mathrm{conf}_b|
            && \text{top label, even bins} \\
        \mathrm{rmsce} &= \Big(\sum_b \tfrac{n_b}{N} (\mathrm{acc}_b - \mathrm{conf}_b)^2\Big)^{1/2}
            && \text{top label, adaptive bins} \\
        \mathrm{mce} &= \max_{b: n_b > 0} |\mathrm{acc}_b - \mathrm{conf}_b|
            && \text{top label, even bins} \\
        \mathrm{sce} &= \frac1K \sum_k \sum_b \tfrac{n_{kb}}{n_k} |\mathrm{acc}_{kb} - \mathrm{conf}_{kb}|
            && \text{every class, even bins} \\
        \mathrm{ace} &= \text{as sce} && \text{every class, adaptive bins} \\
        \mathrm{tace} &= \text{as ace, keeping only } p_{ik} > \text{tace\_threshold}

    For the top label, :math:`x_i = \max_k p_{ik}` and :math:`o_i = \mathbb 1[\arg\max_k p_{ik} = y_i]`.
    For class :math:`k`, :math:`x_i = p_{ik}`, :math:`o_i = \mathbb 1[y_i = k]`, and
    :math:`n_k` counts the kept scores of class :math:`k`; every score must exceed the
    threshold (0 for ``sce``/``ace``, so exact zeros are dropped; ``tace_threshold``
    for ``tace``), and a class with no kept score contributes 0 but still counts in
    the :math:`1/K`. This is ``uncertainty_metrics.numpy.gce`` with
    ``(binning_scheme, max_prob, class_conditional, norm)`` = (even, True, False, l1)
    for ece, (adaptive, True, False, l2) for rmsce, (even, False, True, l1) for sce,
    (adaptive, False, True, l1) for ace and tace. ``rmsce`` is the corrected L2 of the
    library's current source (squared gap weighted by :math:`n_b/N`); release 0.0.81
    squares the weights as well. ``mce`` (Naeini et al. 2015) is not in the library.

    Bin edges (M = ``num_bins``). A score goes to bin ``#{upper edges <= score}``
    (``numpy.digitize``, ``right=False``), so every bin is closed on the left and open
    on the right. Even bins have upper edges ``linspace(0, 1, M + 1)[1:]``: bin
    :math:`b` is :math:`[b/M, (b+1)/M)` for :math:`b < M`, and a score of exactly 1.0
    (or a hair above, within the simplex tolerance) lands in an extra bin
    :math:`[1, \infty)` of its own, as in the library (and torchmetrics'
    ``calibration_error``) -- it is not merged into the last regular bin (netcal clips it to
    1 − ε, into the last bin; scikit-learn's ``calibration_curve`` closes bins on the right;
    README "Conventions"). Adaptive bins, computed separately for the top label, each
    class and (for tace) after thresholding, have the M - 1 upper edges
    :math:`x_{(r_m)}`, :math:`r_m = \min(\mathrm{round}(m n / M), n - 1)`, m = 1..M-1,
    of the n sorted kept scores (``numpy.round`` of ``linspace(0, n, M,
    endpoint=False)``, half to even): equal counts, except that a score equal to an
    edge goes to the bin above, so ties can make bins unequal or empty.

    Cost: one O(n log n) sort per class and for the top label (from 100,000 rows two
    at a time, one in a worker thread); each bin is then a contiguous run of the sorted
    scores, found by binary search.

    Weights. ``weights`` (N,) >= 0 count row :math:`i` :math:`w_i` times: every count above is a sum of
    weights, and the equal-mass edges are the order statistics of the repeated rows, a row counting
    :math:`w_i / \min_j w_j` rows (:func:`~uqeval.metrics.rowweights.row_units`): integer weights with a 1
    among them equal the repeated rows, and a common factor changes nothing. The even-bin errors are
    weighted bin sums.

    Returns
    -------
    dict with keys ``ece``, ``rmsce``, ``mce``, ``sce``, ``ace``, ``tace`` (floats in [0, 1]).
    """
    p, y = _check(proba, labels)
    num_bins = int(num_bins)
    if num_bins < 1:
        raise InputError(f"num_bins must be >= 1, got {num_bins}")
    even = _even_upper_edges(num_bins)
    thr = float(tace_threshold)
    if weights is not None:
        return _weighted_calibration_errors(p, y, num_bins, thr, weights)

    k = p.shape[1]

    def top_label() -> tuple[np.ndarray, np.ndarray]:
        conf, hit = _top_label(p, y)
        return conf, conf[hit]

    def one_class(j: int):
        return lambda: (p[:, j].copy(), p[y == j, j])

    # Sorting the scores once gives every bin as a contiguous run (see _bin_stats): one sort of the
    # top-label scores, and one per class that serves sce, ace and tace.
    sorted_scores = _sorted_in_pairs(
        [top_label] + [one_class(j) for j in range(k)], threaded=p.shape[0] >= _THREAD_ROWS
    )

    # Top label. The library keeps scores > 0, which every top-label probability is.
    xs, xh = next(sorted_scores)
    xs, xh = _above(xs, 0.0), _above(xh, 0.0)
    ece, mce = _l1_max(*_bin_stats(xs, xh, even))
    rmsce = _l2_gap(*_bin_stats(xs, xh, _adaptive_upper_edges(xs, num_bins)))
    del xs, xh

    # Class-conditional (a loop over the K classes; each step vectorised over rows).
    sce = ace = tace = 0.0
    for xs, xh in sorted_scores:
        xs, xh = _above(xs, 0.0), _above(xh, 0.0)
        sce += _l1_gap(xs, xh, even)
        if xs.size:
            ace += _l1_gap(xs, xh, _adaptive_upper_edges(xs, num_bins))
        xs_t, xh_t = _above(xs, thr), _above(xh, thr)
        if xs_t.size:
            tace += _l1_gap(xs_t, xh_t, _adaptive_upper_edges(xs_t, num_bins))
        del xs, xh, xs_t, xh_t  # freed before the next class's arrays are made
    return {"ece": ece, "rmsce": rmsce, "mce": mce, "sce": sce / k, "ace": ace / k, "tace": tace / k}


def _weighted_calibration_errors(
    p: np.ndarray, y: np.ndarray, num_bins: int, thr: float, weights
) -> dict[str, float]:
    """:func:`calibration_errors` with row weights, in O(N) per class without sorting the rows: each set of
    scores (the top label, every class) is summed once per float-bit code (:class:`~uqeval.metrics.rowweights.CodeSums`), and every bin
    (even, equal-mass, above a threshold) comes from those sums and the few rows of the codes that hold an
    edge; the same bins and gaps as the repeated rows."""
    u = row_units(weights)
    k = p.shape[1]
    even = _even_upper_edges(num_bins)

    def stats(sums: CodeSums, above: float, adaptive: bool) -> tuple[np.ndarray, ...]:
        """``(counts, score sums, hits)`` per bin of the scores > ``above``: even or equal-mass bins."""
        cut = np.nextafter(above, np.inf)  # a score goes up from the cut: score > above
        if not adaptive:
            return tuple(v[1:] for v in sums.bins(np.concatenate(([cut], even))))
        below = float(sums.bins(np.array([cut]))[0][0])  # the units at or under the cut
        n = sums.total - below
        edges = sums.order_statistics(below + adaptive_positions(n, num_bins))
        return tuple(v[1:] for v in sums.bins(np.concatenate(([cut], edges))))

    conf, correct = _top_label(p, y)
    top = CodeSums(conf, u, correct)
    ece, mce = _l1_max(*stats(top, 0.0, adaptive=False))
    rmsce = _l2_gap(*stats(top, 0.0, adaptive=True))
    del top
    sce = ace = tace = 0.0
    columns = np.ascontiguousarray(p.T)  # (a class's scores contiguous)
    for j in range(k):  # a loop over the K classes; each step vectorised over rows
        sums = CodeSums(columns[j], u, y == j)
        sce += _l1_max(*stats(sums, 0.0, adaptive=False))[0]
        if sums.total > sums.bins(np.array([np.nextafter(0.0, 1.0)]))[0][0]:  # a score > 0
            ace += _l1_max(*stats(sums, 0.0, adaptive=True))[0]
        if (columns[j] > thr).any():
            tace += _l1_max(*stats(sums, thr, adaptive=True))[0]
    return {"ece": ece, "rmsce": rmsce, "mce": mce, "sce": sce / k, "ace": ace / k, "tace": tace / k}


def reliability_bins(proba, labels, num_bins: int = 15) -> dict[str, np.ndarray]:
    """Per-bin data of the top-label reliability diagram, on the bins of ``ece``.

    Returns
    -------
    dict with
    ``edges`` : (M + 2,) ``[0, 1/M, ..., 1, 1]``; bin b < M spans ``[edges[b], edges[b+1])``
        and the last bin holds the top-label probabilities equal to 1.0 (see the
        bin-edge convention of :func:`calibration_errors`);
    ``confidence`` : (M + 1,) mean top-label probability per bin (NaN if empty);
    ``accuracy`` : (M + 1,) share of correct top labels per bin (NaN if empty);
    ``counts`` : (M + 1,) int64 number of rows per bin.
    ``sum(counts / N * |accuracy - confidence|)`` over non-empty bins is ``ece``.
    """
    p, y = _check(proba, labels)
    num_bins = int(num_bins)
    if num_bins < 1:
        raise InputError(f"num_bins must be >= 1, got {num_bins}")
    conf, hit = _top_label(p, y)
    counts, s_conf, s_hit = _bin_stats(np.sort(conf), np.sort(conf[hit]), _even_upper_edges(num_bins))
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = np.where(counts > 0, s_conf / counts, np.nan)
        accuracy = np.where(counts > 0, s_hit / counts, np.nan)
    edges = np.concatenate(([0.0], _even_upper_edges(num_bins), [1.0]))
    return {
        "edges": edges,
        "confidence": confidence,
        "accuracy": accuracy,
        "counts": counts.astype(np.int64),
    }


# ----------------------------------------------------------------------------
# prediction sets
# ----------------------------------------------------------------------------


def prediction_sets(
    proba, labels, levels: float | Iterable[float] = (0.95,), weights=None
) -> dict[str, dict]:
    r"""Coverage and size of top-class prediction sets (Kompa, Snoek, Beam 2021, Eq. 4).

    For a level :math:`1-\alpha`, the set of row :math:`i` is the smallest set of
    classes with the largest probabilities such that

    .. math:: \sum_{c \in S_i} p_{ic} \ge 1 - \alpha .

    Its size is :math:`k_i = \min\{k : \sum_{j \le k} p_{i(j)} \ge 1 - \alpha\}` with
    :math:`p_{i(1)} \ge p_{i(2)} \ge \dots` the sorted probabilities (capped at K when
    rounding keeps a row's total just under the level). The running sum is compared
    with :math:`1 - \alpha - 10^{-10}` so that float rounding of the sum
    (``0.6 + 0.3 < 0.9`` in doubles) does not add a class.

    Ties. The size is determined by the sorted values alone. Which classes enter is
    ambiguous only when the last probability admitted, :math:`t_i = p_{i(k_i)}`, is
    shared by more classes (:math:`m_i` of them, :math:`r_i` needed). Coverage then
    counts the label as covered with probability :math:`r_i/m_i` -- the expected
    coverage under uniformly random tie-breaking -- so a row contributes
    :math:`\mathbb 1[p_{iy_i} > t_i] + \frac{r_i}{m_i}\mathbb 1[p_{iy_i} = t_i]`.
    This keeps every result independent of the order of the classes.

    Parameters
    ----------
    proba, labels : see the module docstring.
    levels : one level or an iterable of levels :math:`1-\alpha` in (0, 1).
    weights : (N,) row weights, optional: weighted means, and the size histogram in units of rows
        (:func:`~uqeval.metrics.rowweights.row_units`: a row of weight w counts w / min(w) rows; floats).

    Returns
    -------
    dict mapping each level's key (:func:`uqeval.metrics.intervals.level_key`, e.g.
    ``"0.95"``) to a dict with ``coverage`` (float), ``mean_size`` (float) and
    ``size_histogram`` (list of K ints: number of rows whose set has size 1, 2, ..., K).
    """
    p, y = _check(proba, labels)
    k = p.shape[1]
    lv = np.atleast_1d(np.asarray(levels, dtype=np.float64))
    for v in lv:
        check_level(v, "level")
    out: dict[str, dict] = {}
    units = None
    if weights is not None:
        units = row_units(weights)
    for level, (covered, size) in zip(lv, _set_rows_blocks(p, y, lv)):
        if units is None:
            out[level_key(level)] = {
                "coverage": float(np.mean(covered)),
                "mean_size": float(np.mean(size)),
                "size_histogram": np.bincount(size - 1, minlength=k).astype(int).tolist(),
            }
            continue
        out[level_key(level)] = {
            "coverage": float(np.average(covered, weights=units)),
            "mean_size": float(np.average(size, weights=units)),
            "size_histogram": np.bincount(size - 1, weights=units, minlength=k).tolist(),
        }
    return out


def prediction_set_rows(proba, labels, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-row coverage (fractional under ties) and set size at ``level``: the terms of :func:`prediction_sets`."""
    p, y = _check(proba, labels)
    return _set_rows_blocks(p, y, [check_level(level, "level")])[0]


def _set_rows_blocks(p: np.ndarray, y: np.ndarray, levels) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(covered, size)`` of :func:`_set_rows` at each level, computed block by block of rows: the
    sorted probabilities and their running sums (each (N, K)) are only ever held for one block."""
    n = p.shape[0]
    out = [(np.empty(n), np.empty(n, dtype=np.intp)) for _ in levels]
    for start in range(0, n, BLOCK):  # a loop over blocks of rows; every row's numbers are its own
        pb, yb = p[start : start + BLOCK], y[start : start + BLOCK]
        srt = np.ascontiguousarray(np.sort(pb, axis=1)[:, ::-1])  # descending
        shared = _SetParts(pb[np.arange(pb.shape[0]), yb], np.cumsum(srt, axis=1))  # the same for every level
        for (covered, size), level in zip(out, levels):
            covered[start : start + BLOCK], size[start : start + BLOCK] = _set_rows(
                pb, yb, srt, level, shared
            )
    return out


class _SetParts(NamedTuple):
    """What :func:`_set_rows` needs at every level: the label's probability and the running sums."""

    p_y: np.ndarray
    csum: np.ndarray


def _set_rows(
    p: np.ndarray, y: np.ndarray, srt: np.ndarray, level: float, shared: _SetParts | None = None
) -> tuple[np.ndarray, np.ndarray]:
    n, k = p.shape
    rows = np.arange(n)
    if shared is None:
        shared = _SetParts(p[rows, y], np.cumsum(srt, axis=1))
    p_y, csum = shared
    size = np.count_nonzero(csum < level - _SET_TOL, axis=1) + 1
    np.minimum(size, k, out=size)
    t = srt[rows, size - 1]
    covered = (p_y > t).astype(np.float64)
    # rows whose label shares the threshold probability; only when the threshold is
    # also shared by a neighbour in sorted order (a tie) is coverage fractional
    at_t = np.flatnonzero(p_y == t)
    covered[at_t] = 1.0
    s_t = size[at_t]
    tied = (s_t < k) & (srt[at_t, np.minimum(s_t, k - 1)] == t[at_t])
    tied |= (s_t > 1) & (srt[at_t, np.maximum(s_t - 2, 0)] == t[at_t])
    ti = at_t[tied]
    if ti.size:
        pt, tt = p[ti], t[ti, None]
        n_gt = np.count_nonzero(pt > tt, axis=1)
        n_eq = np.count_nonzero(pt == tt, axis=1)
        covered[ti] = (size[ti] - n_gt) / n_eq
    return covered, size
