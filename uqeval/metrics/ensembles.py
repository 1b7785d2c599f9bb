r"""Ensemble and Bayesian-output metrics (Google *Uncertainty Metrics*).

Pure numpy/scipy kernels for predictions that come as an ensemble (or a set of
posterior samples) of categorical distributions, as Dirichlet parameters, or as
a matrix of per-member log-likelihoods:

* :func:`ensemble_uncertainty` / :func:`ensemble_uncertainty_per_row` -- total,
  aleatoric (expected data) and epistemic (mutual information) uncertainty;
* :func:`dirichlet_uncertainty` / :func:`dirichlet_uncertainty_per_row` -- the
  same decomposition for Dirichlet outputs ("knowledge uncertainty");
* :func:`information_criteria` -- negative WAIC (types 1 and 2) and
  importance-sampling cross-validation from a log-likelihood matrix;
* :func:`diversity` -- pairwise disagreement, KL divergence, cosine similarity
  and double fault, averaged over member pairs;
* :func:`rejection_curve` and :func:`oracle_collaborative_accuracy`;
* :func:`bayesian_ece` / :func:`bayesian_ece_samples` -- posterior of the
  expected calibration error;
* :func:`spce` -- semiparametric (cross-fitted kernel) L2 calibration error with
  a bootstrap confidence interval.

Array conventions: ``member_proba`` has shape ``(N, M, K)`` (rows, members,
classes), ``loglik`` has shape ``(N, M)``, ``proba`` has shape ``(N, K)``.
Entropies and information quantities are in **nats** (natural logarithm).

References
----------
Uncertainty Metrics README and source (google/uncertainty-metrics, 2020).
Depeweg et al. (2018), *Decomposition of uncertainty in Bayesian deep learning*.
Malinin, Mlodozeniec & Gales (2019), *Ensemble distribution distillation*.
Malinin & Gales (2018), *Predictive uncertainty estimation via prior networks*.
Watanabe (2018), *Mathematical Theory of Bayesian Statistics*.
Gelfand, Dey & Chang (1992), *Model determination using predictive distributions*.
Kuncheva & Whitaker (2003), *Measures of diversity in classifier ensembles*.
Fort, Hu & Lakshminarayanan (2019), *Deep ensembles: a loss landscape perspective*.
Kivlichan et al. (2021), *Measuring and improving model-moderator collaboration
using uncertainty estimation* (oracle collaborative accuracy).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ..errors import InputError
from ..validation import as_float_array, check_finite, check_positive, check_same_length, is_trusted
from .blocks import BLOCK, PairwiseSum, sem_from_moments, sem_moments, trapezoid
from .normal import central_z
from .sequential import log_mean_exp

__all__ = [
    "ensemble_uncertainty",
    "ensemble_uncertainty_per_row",
    "dirichlet_uncertainty",
    "dirichlet_uncertainty_per_row",
    "information_criteria",
    "diversity",
    "rejection_curve",
    "oracle_collaborative_accuracy",
    "bayesian_ece",
    "bayesian_ece_samples",
    "spce",
]

#: Rows whose probabilities sum to 1 within this tolerance are accepted.
SIMPLEX_TOL = 1e-6


# --------------------------------------------------------------------------- #
# validation helpers (private)
# --------------------------------------------------------------------------- #


def _check_nonnegative(arr: np.ndarray, name: str) -> None:
    mask = (arr < 0).reshape(len(arr), -1).any(axis=1)
    if mask.any():
        first = int(np.flatnonzero(mask)[0])
        raise InputError(
            f"{name} must be >= 0: {int(mask.sum())} row(s) with negative probabilities "
            f"(first at row {first}, found {arr[first].min():g}); pass probabilities, not logits"
        )


def _check_member_proba(member_proba) -> np.ndarray:
    """Validate an ``(N, M, K)`` ensemble of categorical distributions."""
    p = as_float_array(member_proba, "member_proba", ndim=3)
    if is_trusted():  # validated by the MemberCategorical container
        return p
    n, m, k = p.shape
    if n == 0 or m == 0 or k == 0:
        raise InputError(f"member_proba must have at least one row, member and class, got shape {p.shape}")
    check_finite(p, "member_proba")
    _check_nonnegative(p, "member_proba")
    off = np.abs(p.sum(axis=2) - 1.0) > SIMPLEX_TOL  # (N, M)
    if off.any():
        row, member = (int(v) for v in np.argwhere(off)[0])
        raise InputError(
            f"member_proba must sum to 1 over classes: {int(off.any(axis=1).sum())} row(s) off the "
            f"simplex by more than {SIMPLEX_TOL:g} (first at row {row}, member {member}, sum "
            f"{p[row, member].sum():.9g}); renormalise each member's probabilities"
        )
    return p


def _check_proba(proba, name: str = "proba") -> np.ndarray:
    """Validate ``(N, K)`` class probabilities; a 1-d array is P(class 1) of a binary problem."""
    p = as_float_array(proba, name, ndim=(1, 2))
    if p.ndim == 1:
        p = np.stack([1.0 - p, p], axis=1)
    if p.shape[0] == 0:
        raise InputError(f"{name} has no rows to evaluate")
    if is_trusted():  # validated by the prediction container
        return p
    check_finite(p, name)
    _check_nonnegative(p, name)
    off = np.abs(p.sum(axis=1) - 1.0) > SIMPLEX_TOL
    if off.any():
        first = int(np.flatnonzero(off)[0])
        raise InputError(
            f"{name} must sum to 1 over classes: {int(off.sum())} row(s) off the simplex by more "
            f"than {SIMPLEX_TOL:g} (first at row {first}, sum {p[first].sum():.9g}); "
            "renormalise the probabilities"
        )
    return p


def _check_labels(labels, n_rows: int, n_classes: int, name: str = "labels") -> np.ndarray:
    """Validate integer class labels in ``0..n_classes-1``; return them as int64."""
    raw = np.asarray(labels)
    if raw.ndim != 1:
        raise InputError(f"{name} must have 1 dimension(s), got shape {raw.shape}")
    check_same_length([raw, np.empty(n_rows)], [name, "predictions"])
    try:
        lab = raw.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} must be integer class ids: {exc}") from None
    bad = ~np.isfinite(lab) | (lab != np.round(lab)) | (lab < 0) | (lab > n_classes - 1)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{name} must be integer class ids in 0..{n_classes - 1}: {int(bad.sum())} bad value(s) "
            f"(first at row {first}, found {raw[first]!r}); check the label column or the class count"
        )
    return lab.astype(np.int64)


def _check_unit_interval(arr: np.ndarray, name: str) -> None:
    bad = (arr < 0) | (arr > 1)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{name} must lie in [0, 1]: {int(bad.sum())} value(s) outside (first at row {first}, "
            f"found {arr[first]:g}); pass 1 for a correct and 0 for an incorrect prediction"
        )


def _top_label(p: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Confidence (max probability) and correctness (argmax == label) of each row."""
    pred = np.argmax(p, axis=1)
    conf = p[np.arange(len(p)), pred]
    return conf, (pred == labels).astype(np.float64)


# --------------------------------------------------------------------------- #
# entropy decompositions
# --------------------------------------------------------------------------- #


def ensemble_uncertainty_per_row(member_proba) -> dict[str, np.ndarray]:
    r"""Per-row total / aleatoric / epistemic uncertainty of an ensemble (nats).

    For row :math:`i` with member distributions :math:`p_{i,1}, \dots, p_{i,M}`
    and mean prediction :math:`\bar p_i = \frac1M \sum_m p_{i,m}`:

    .. math::

        \text{total}_i = H(\bar p_i), \qquad
        \text{aleatoric}_i = \frac1M \sum_{m=1}^M H(p_{i,m}), \qquad
        \text{epistemic}_i = \text{total}_i - \text{aleatoric}_i
        = \mathrm{MI}[y, \theta \mid x_i],

    with :math:`H(p) = -\sum_k p_k \log p_k` and :math:`0 \log 0 = 0`
    (``scipy.special.entr``). The epistemic part is the mutual information
    between the label and the member index ("model uncertainty" in
    Uncertainty Metrics, ``model_uncertainty``; Depeweg et al. 2018). It is
    non-negative by Jensen's inequality; rounding noise below zero is clipped.

    Parameters
    ----------
    member_proba : (N, M, K) array
        Class probabilities of each of the M members for each row.

    Returns
    -------
    dict with keys ``total``, ``aleatoric``, ``epistemic``, each an (N,) array.
    """
    rows = member_rows(member_proba)
    return {key: rows[key] for key in ("total", "aleatoric", "epistemic")}


#: rows per block of :func:`member_rows`: a (block, M, K) slice and its temporaries stay in cache
_BLOCK_ELEMENTS = 1 << 17


def member_rows(member_proba, labels=None, eps: float = 1e-12) -> dict[str, np.ndarray]:
    r"""Every per-row quantity of the ensemble metrics, in one pass over the (N, M, K) block.

    Rows are processed in blocks of about ``2**17`` probabilities, so the temporaries
    (logarithms, normalised members) never reach the size of the input. Returns (N,)
    arrays: ``total``, ``aleatoric``, ``epistemic`` (:func:`ensemble_uncertainty_per_row`),
    ``kl`` (mean KL over ordered member pairs), ``cosine`` (sum of pairwise cosine
    similarities), ``agree`` (number of agreeing member pairs) and, with ``labels``,
    ``wrong`` (number of members whose top class is not the label), from which
    :func:`diversity` reduces its metrics. ``eps`` floors the probabilities inside the
    KL logarithm (see :func:`diversity`).
    """
    p = _check_member_proba(member_proba)
    n, m, k = p.shape
    y = None if labels is None else _check_labels(labels, n, k)
    names = ("total", "aleatoric", "epistemic", "kl", "cosine", "agree") + (() if y is None else ("wrong",))
    out = {name: np.full(n, np.nan) if m < 2 and name in ("kl", "cosine") else np.empty(n) for name in names}
    step = max(1, _BLOCK_ELEMENTS // max(m * k, 1))
    offsets = k * np.arange(step)[:, None]
    log_eps = math.log(eps)
    for a in range(0, n, step):  # loop over row blocks; each block is vectorised
        b = min(a + step, n)
        pb = p[a:b]
        nb = b - a
        # one logarithm serves both families: log max(p, eps) = max(log p, log eps), and
        # p log max(p, eps) is the exact p log p (entr) unless 0 < p < eps somewhere in the block
        with np.errstate(divide="ignore"):
            logp = np.log(pb)
        np.maximum(logp, log_eps, out=logp)
        plogp = np.einsum("imk,imk->i", pb, logp)  # p = 0 gives 0 * log(eps) = 0 exactly
        if ((pb > 0) & (pb < eps)).any():
            aleatoric = special.entr(pb).sum(axis=2).mean(axis=1)
        else:
            aleatoric = -plogp / m
        psum = np.einsum("imk->ik", pb)  # einsum: much faster than a reduction over the middle axis
        mean = psum / m
        with np.errstate(divide="ignore"):
            log_mean = np.log(mean)
        total = -np.einsum("ik,ik->i", mean, np.where(mean > 0, log_mean, 0.0))  # sum of entr(mean)
        out["total"][a:b] = total
        out["aleatoric"][a:b] = aleatoric
        out["epistemic"][a:b] = np.maximum(total - aleatoric, 0.0)
        if m >= 2:
            cross = np.einsum("ik,ik->i", psum, np.einsum("imk->ik", logp))
            out["kl"][a:b] = np.maximum(m * plogp - cross, 0.0) / (m * (m - 1))
            sq = np.einsum("imk,imk->im", pb, pb)
            norm = np.sqrt(sq)
            s = np.einsum("imk,im->ik", pb, 1.0 / norm)  # sum of the unit-norm members
            out["cosine"][a:b] = (np.einsum("ik,ik->i", s, s) - (sq / (norm * norm)).sum(axis=1)) / 2.0
        pred = np.argmax(pb, axis=2)  # (B, M)
        votes = np.bincount((pred + offsets[:nb]).ravel(), minlength=nb * k).reshape(nb, k)
        out["agree"][a:b] = (votes * (votes - 1) / 2.0).sum(axis=1)
        if y is not None:
            out["wrong"][a:b] = (pred != y[a:b, None]).sum(axis=1)
    return out


def ensemble_uncertainty(member_proba) -> dict[str, float]:
    r"""Total, aleatoric and epistemic uncertainty of an ensemble, averaged over rows (nats).

    The row means of :func:`ensemble_uncertainty_per_row`:

    .. math::

        \text{total} = \frac1N \sum_i H\Big(\frac1M \sum_m p_{i,m}\Big), \quad
        \text{aleatoric} = \frac1{NM} \sum_{i,m} H(p_{i,m}), \quad
        \text{epistemic} = \text{total} - \text{aleatoric}.

    Parameters
    ----------
    member_proba : (N, M, K) array

    Returns
    -------
    dict with float values ``total``, ``aleatoric``, ``epistemic``.

    Examples
    --------
    >>> import numpy as np
    >>> out = ensemble_uncertainty(np.array([[[1.0, 0.0], [0.0, 1.0]]]))
    >>> round(out["epistemic"], 6) == round(float(np.log(2)), 6)
    True
    """
    rows = ensemble_uncertainty_per_row(member_proba)
    return {key: float(val.mean()) for key, val in rows.items()}


def dirichlet_uncertainty_per_row(alpha) -> dict[str, np.ndarray]:
    r"""Per-row uncertainty decomposition of Dirichlet outputs (nats).

    For :math:`\pi \sim \mathrm{Dir}(\alpha)` with :math:`\alpha_0 = \sum_k \alpha_k`
    (Malinin & Gales 2018; Malinin et al. 2019; Uncertainty Metrics README,
    "knowledge uncertainty"):

    .. math::

        \text{total} &= H(\mathbb{E}[\pi]) = H(\alpha / \alpha_0), \\
        \text{aleatoric} &= \mathbb{E}_{\pi}[H(\pi)]
            = -\sum_k \frac{\alpha_k}{\alpha_0}
              \big(\psi(\alpha_k + 1) - \psi(\alpha_0 + 1)\big), \\
        \text{epistemic} &= \mathrm{MI}[y, \pi] = \text{total} - \text{aleatoric},

    where :math:`\psi` is the digamma function. The epistemic term is the
    "knowledge uncertainty"; it is clipped at 0 against rounding noise.

    Parameters
    ----------
    alpha : (N, K) array of Dirichlet concentrations, all > 0.

    Returns
    -------
    dict with keys ``total``, ``aleatoric``, ``epistemic``, each an (N,) array.
    """
    a = as_float_array(alpha, "alpha", ndim=2)
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise InputError(f"alpha must have at least one row and one class, got shape {a.shape}")
    check_finite(a, "alpha")
    check_positive(a, "alpha")
    a0 = a.sum(axis=1, keepdims=True)
    mean = a / a0
    total = special.entr(mean).sum(axis=1)
    aleatoric = -(mean * (special.digamma(a + 1.0) - special.digamma(a0 + 1.0))).sum(axis=1)
    epistemic = np.maximum(total - aleatoric, 0.0)
    return {"total": total, "aleatoric": aleatoric, "epistemic": epistemic}


def dirichlet_uncertainty(alpha) -> dict[str, float]:
    r"""Row means of :func:`dirichlet_uncertainty_per_row` (nats).

    Parameters
    ----------
    alpha : (N, K) array of Dirichlet concentrations, all > 0.

    Returns
    -------
    dict with float values ``total``, ``aleatoric``, ``epistemic``
    (the last is the knowledge uncertainty :math:`\mathrm{MI}[y, \pi]`).
    """
    rows = dirichlet_uncertainty_per_row(alpha)
    return {key: float(val.mean()) for key, val in rows.items()}


# --------------------------------------------------------------------------- #
# information criteria
# --------------------------------------------------------------------------- #


#: the information criteria whose per-row terms :func:`information_criteria_rows` gives
IC_TERMS = ("waic1", "waic2", "iscv")


def information_criteria(loglik, ddof: int = 1) -> dict[str, float]:
    r"""Negative WAIC (types 1 and 2) and importance-sampling CV from a log-likelihood matrix.

    ``loglik[i, j]`` is :math:`\ell_{ij} = \log p(y_i \mid x_i, \theta_j)` for
    row :math:`i = 1..N` and ensemble member / posterior sample :math:`j = 1..M`.
    All three criteria estimate the expected held-out log predictive density
    per row, so **higher is better** (Uncertainty Metrics README; Watanabe
    2018; Gelfand et al. 1992):

    .. math::

        \mathrm{lpd}_i &= \log \frac1M \sum_j e^{\ell_{ij}}
            \quad\text{(log-sum-exp)}, \\
        \mathrm{nWAIC}_1 &= \frac1N \sum_i \big(\mathrm{lpd}_i - \hat V_i\big),
            \qquad \hat V_i = \frac{1}{M - \text{ddof}} \sum_j
            \big(\ell_{ij} - \bar\ell_i\big)^2, \\
        \mathrm{nWAIC}_2 &= \frac1N \sum_i \big(2 \bar\ell_i - \mathrm{lpd}_i\big),
            \qquad \bar\ell_i = \frac1M \sum_j \ell_{ij}, \\
        \mathrm{ISCV} &= -\frac1N \sum_i \log \frac1M \sum_j e^{-\ell_{ij}}.

    Each ``*_se`` is the standard error of the mean of the per-row terms
    over the **N rows**, :math:`s_t / \sqrt N` with the sample standard
    deviation :math:`s_t` (ddof = 1); NaN when N < 2.

    Deviations from the Uncertainty Metrics source, on purpose:

    * the library's standard error divides the row variance by the number of
      **members** M; a standard error of a mean over rows must divide by N;
    * ``ddof=1`` (default) follows the README's :math:`1/(m-1)` variance; the
      library's TensorFlow code uses the population variance, obtained with
      ``ddof=0``.

    Parameters
    ----------
    loglik : (N, M) array of finite log-likelihoods, M >= 2.
    ddof : {1, 0}
        Delta degrees of freedom of the WAIC-1 variance term.

    Returns
    -------
    dict with float values ``waic1``, ``waic2``, ``iscv``, ``waic1_se``,
    ``waic2_se``, ``iscv_se``.
    """
    ll = as_float_array(loglik, "loglik", ndim=2)
    n, m = ll.shape
    if n == 0:
        raise InputError("loglik has no rows to evaluate")
    if m < 2:
        raise InputError(
            f"loglik needs at least 2 members (columns) for information criteria, got {m}; "
            "pass one log-likelihood column per ensemble member or posterior sample"
        )
    if ddof not in (0, 1):
        raise InputError(f"ddof must be 0 or 1, got {ddof!r}")
    check_finite(ll, "loglik")
    t = information_criteria_rows(ll, ddof)
    se = sem_from_moments(sem_moments(np.column_stack([t[k] for k in IC_TERMS])))
    return {
        **{k: float(t[k].mean()) for k in IC_TERMS},
        **{f"{k}_se": float(v) for k, v in zip(IC_TERMS, se)},
    }


def information_criteria_rows(loglik: np.ndarray, ddof: int = 1) -> dict[str, np.ndarray]:
    """Per-row terms of :func:`information_criteria` (``waic1``, ``waic2``, ``iscv``, each (N,)):
    their means are the criteria."""
    ll = np.asarray(loglik, dtype=np.float64)
    n = ll.shape[0]
    out = {name: np.empty(n) for name in ("waic1", "waic2", "iscv")}
    # block by block of rows: every row goes through the same operations (bitwise the whole-array result)
    # with cache-sized (B, M) temporaries instead of page-faulting (N, M) ones
    for start in range(0, n, BLOCK):  # a loop over blocks of rows, each vectorised
        b = ll[start : start + BLOCK]
        lpd = log_mean_exp(b, axis=1)
        out["waic1"][start : start + BLOCK] = lpd - np.var(b, axis=1, ddof=ddof)
        out["waic2"][start : start + BLOCK] = 2.0 * b.mean(axis=1) - lpd
        out["iscv"][start : start + BLOCK] = -log_mean_exp(-b, axis=1)
    return out


# --------------------------------------------------------------------------- #
# diversity
# --------------------------------------------------------------------------- #


def diversity(member_proba, labels=None, eps: float = 1e-12) -> dict[str, float]:
    r"""Pairwise ensemble diversity, averaged over member pairs and rows.

    For members :math:`m \ne m'` with predicted classes :math:`\hat y_{i,m} =
    \arg\max_k p_{i,m,k}` (first maximum on ties):

    .. math::

        \text{disagreement} &= \binom{M}{2}^{-1} \sum_{m<m'} \frac1N \sum_i
            \mathbb 1[\hat y_{i,m} \ne \hat y_{i,m'}], \\
        \text{kl} &= \frac{1}{M(M-1)} \sum_{m \ne m'} \frac1N \sum_i
            \sum_k p_{i,m,k} \log \frac{p_{i,m,k}}{p_{i,m',k}}, \\
        \text{cosine\_similarity} &= \binom{M}{2}^{-1} \sum_{m<m'} \frac1N \sum_i
            \frac{p_{i,m} \cdot p_{i,m'}}{\lVert p_{i,m} \rVert \, \lVert p_{i,m'} \rVert}, \\
        \text{double\_fault} &= \binom{M}{2}^{-1} \sum_{m<m'} \frac1N \sum_i
            \mathbb 1[\hat y_{i,m} \ne y_i]\, \mathbb 1[\hat y_{i,m'} \ne y_i].

    (Uncertainty Metrics ``average_pairwise_diversity``; Fort et al. 2019;
    Kuncheva & Whitaker 2003 for the double fault.) Computed without a loop
    over pairs, in :math:`O(NMK)`: agreeing pairs per row are
    :math:`\sum_k \binom{c_k}{2}` with :math:`c_k` members voting for class
    :math:`k`; :math:`\sum_{m<m'} u_m \cdot u_{m'} = (\lVert\sum_m u_m\rVert^2 -
    \sum_m \lVert u_m\rVert^2)/2`; and :math:`\sum_{m\ne m'} \mathrm{KL}(p_m \Vert
    p_{m'}) = M \sum_m \sum_k p_{m,k}\log p_{m,k} - \sum_k (\sum_m p_{m,k})
    (\sum_{m'} \log p_{m',k})`.

    Deviations from the library: ``kl`` averages over **ordered** pairs (the
    symmetrised KL), so that it does not depend on member order (the library
    takes KL(first || second) over pairs in index order); probabilities are
    floored at ``eps`` inside the logarithm, so a member that gives zero mass
    to a class another member supports adds a large finite term instead of
    infinity (:math:`0 \log 0 = 0` is kept exact).

    Parameters
    ----------
    member_proba : (N, M, K) array, M >= 2.
    labels : (N,) integer array, optional
        True classes; when given, ``double_fault`` is added to the result.
    eps : float
        Floor of the probabilities inside the logarithm of the KL divergence.

    Returns
    -------
    dict with float values ``disagreement``, ``kl``, ``cosine_similarity``
    and, if ``labels`` is given, ``double_fault``.
    """
    p = _check_member_proba(member_proba)
    n, m, k = p.shape
    if m < 2:
        raise InputError(f"diversity needs at least 2 ensemble members, got {m}")
    return diversity_from_rows(member_rows(p, labels, eps), m)


def diversity_from_rows(rows: dict[str, np.ndarray], m: int, weights=None) -> dict[str, float]:
    """:func:`diversity` from the per-row terms of :func:`member_rows` of an M-member ensemble; ``weights``
    (N,): weighted means over the rows."""
    n_pairs = m * (m - 1) / 2.0

    def mean(values: np.ndarray) -> float:
        return float(values.mean() if weights is None else np.average(values, weights=weights))

    out = {
        "disagreement": 1.0 - mean(rows["agree"]) / n_pairs,
        "kl": mean(rows["kl"]),
        "cosine_similarity": mean(rows["cosine"]) / n_pairs,
    }
    if "wrong" in rows:
        wrong = rows["wrong"]
        out["double_fault"] = mean(wrong * (wrong - 1) / 2.0) / n_pairs
    return out


# --------------------------------------------------------------------------- #
# rejection curves and oracle collaborative accuracy
# --------------------------------------------------------------------------- #


def _kept_sums(
    values: np.ndarray, uncertainty: np.ndarray, n_keep: np.ndarray, units: np.ndarray | None = None
) -> np.ndarray:
    """Sum of ``values`` over the ``n_keep`` least uncertain rows, for each ``n_keep``.

    Ties in ``uncertainty`` that straddle the cut are resolved by the expected
    value under a uniformly random order within the tied group: the kept part
    of the group contributes ``(#kept from group) * (group mean)``.
    O(N log N) for the sort, O(len(n_keep)) afterwards. The sort need not be stable (the
    default one is ~6x faster): rows only ever count through the sums of whole tied groups and
    of everything before them, the same sets of rows in any order within a tie. ``units``: each row's
    weight in rows (:func:`~uqeval.metrics.rowweights.row_units`; ``n_keep`` then counts repeated rows,
    the sums are weighted and a tied group's mean is its weighted mean).
    """
    order = np.argsort(uncertainty)
    u = uncertainty[order]
    weighted = values if units is None else units * values
    cs = np.empty(u.size + 1)  # cs[i]: the sum over the i least uncertain rows
    cs[0] = 0.0
    np.cumsum(weighted[order], out=cs[1:])
    kk = np.asarray(n_keep, dtype=np.int64 if units is None else np.float64)
    out = np.zeros(kk.shape, dtype=np.float64)
    pos = kk > 0
    if units is None:
        cw = None
        last = kk[pos] - 1  # the last row kept
    else:
        cw = np.concatenate([[0.0], np.cumsum(units[order])])  # repeated rows before each sorted row
        last = np.minimum(np.searchsorted(cw[1:], kk[pos], side="left"), u.size - 1)
    # the tied group [a, b) of sorted positions around each cut: the rows equal to the last one kept
    # (found in the sorted values; no per-row group ids)
    cut = u[last]
    a, b = np.searchsorted(u, cut, side="left"), np.searchsorted(u, cut, side="right")
    if cw is None:
        out[pos] = cs[a] + (kk[pos] - a) * (cs[b] - cs[a]) / (b - a)
    else:
        out[pos] = cs[a] + (kk[pos] - cw[a]) * (cs[b] - cs[a]) / (cw[b] - cw[a])
    return out


def _n_rejected(fractions: np.ndarray, n: float) -> np.ndarray:
    # floor(f * N), robust to f * N landing a hair below an integer (0.29 * 100 = 28.999...)
    return np.floor(fractions * n + 1e-9).astype(np.int64)


def _ranked_rows(
    values, uncertainty, names: tuple[str, str], weights
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, float]:
    """``(values, uncertainty, units, n)`` of :func:`rejection_curve` and :func:`oracle_collaborative_accuracy`,
    checked: one finite value and uncertainty per row, and each row's weight in rows (None without
    ``weights``; :func:`~uqeval.metrics.rowweights.row_units`), ``n`` their number (or sum)."""
    v = as_float_array(values, names[0], ndim=1)
    u = as_float_array(uncertainty, "uncertainty", ndim=1)
    n = check_same_length([v, u], [names[0], "uncertainty"])
    if n == 0:
        raise InputError(f"{names[0]} has no rows to evaluate")
    check_finite(v, names[0])
    check_finite(u, "uncertainty")
    if weights is None:
        return v, u, None, float(n)
    from .rowweights import row_units

    units = row_units(weights)
    return v, u, units, float(units.sum())


def _oracle_kept(sorted_values: np.ndarray, n_keep: np.ndarray, units: np.ndarray | None) -> np.ndarray:
    """Sums of the first ``n_keep`` (repeated) rows of ``sorted_values`` (the oracle's order); ``units``: the
    sorted rows' weights in rows."""
    if units is None:
        return np.concatenate([[0.0], np.cumsum(sorted_values)])[n_keep]
    from .rowweights import repeated_prefix_sums

    return repeated_prefix_sums(units, sorted_values, n_keep)


def rejection_curve(
    correct_or_error,
    uncertainty,
    fractions=None,
    kind: str = "accuracy",
    weights=None,
) -> dict[str, np.ndarray | float]:
    r"""Accuracy or RMSE of the rows kept after rejecting the most uncertain fraction.

    For each rejection fraction :math:`f`, the :math:`r = \lfloor fN \rfloor`
    rows with the largest ``uncertainty`` are rejected and the metric is
    computed on the :math:`N - r` rows kept:

    .. math::

        \text{accuracy}(f) = \frac{1}{N-r} \sum_{i \in \text{kept}} c_i,
        \qquad
        \text{RMSE}(f) = \Big(\frac{1}{N-r} \sum_{i \in \text{kept}} e_i^2\Big)^{1/2}.

    The oracle curve rejects by the true outcome instead (incorrect rows
    first, or largest :math:`|e_i|` first), so for accuracy it is an upper
    bound and for RMSE a lower bound of any uncertainty ranking. The areas
    ``auc_rejection`` and ``auc_oracle`` are trapezoidal integrals over the
    given ``fractions`` (not normalised by their range).

    **Ties.** Rows with equal uncertainty that straddle the cut are counted
    by their expected contribution under a uniformly random order within the
    tie (for RMSE: the expected sum of squares), so the result does not depend
    on row order and a constant uncertainty gives a flat curve at the overall
    metric. One sort plus cumulative sums: :math:`O(N \log N)`.

    **Weights.** ``weights`` (N,) count row :math:`i` :math:`w_i` times: :math:`N` is the number of
    repeated rows, a row of weight :math:`w` counting :math:`w / \min_j w_j` rows
    (:func:`~uqeval.metrics.rowweights.row_units`; integer weights with a 1 among them equal the repeated
    rows, a common factor changes nothing), and a row at the cut is kept in part.

    Parameters
    ----------
    correct_or_error : (N,) array
        ``kind="accuracy"``: correctness in [0, 1] (1 = correct).
        ``kind="rmse"``: residuals (or absolute errors) of the point prediction.
    uncertainty : (N,) array
        Higher means less certain (entropy, MI, predictive std, ...).
    fractions : (F,) array, optional
        Increasing rejection fractions in [0, 1); default
        ``np.linspace(0, 0.99, 100)``. At least one row is always kept.
    kind : {"accuracy", "rmse"}
    weights : (N,) array, optional
        Row weights (>= 0, finite, one positive).

    Returns
    -------
    dict with ``fractions`` (F,), ``values`` (F,), ``oracle_values`` (F,),
    ``auc_rejection`` (float) and ``auc_oracle`` (float).
    """
    if kind not in ("accuracy", "rmse"):
        raise InputError(f"kind must be 'accuracy' or 'rmse', got {kind!r}")
    v, u, units, n = _ranked_rows(correct_or_error, uncertainty, ("correct_or_error", "uncertainty"), weights)
    if fractions is None:
        fr = np.linspace(0.0, 0.99, 100)
    else:
        fr = as_float_array(fractions, "fractions", ndim=1)
    if fr.size == 0 or not np.all(np.isfinite(fr)) or fr.min() < 0 or fr.max() >= 1:
        raise InputError("fractions must be a non-empty array of rejection fractions in [0, 1)")
    if np.any(np.diff(fr) < 0):
        raise InputError("fractions must be sorted in increasing order")

    if kind == "accuracy":
        _check_unit_interval(v, "correct_or_error")
        contrib = v
        oracle_order = np.argsort(-v, kind="stable")  # keep correct rows first
    else:
        contrib = v * v
        oracle_order = np.argsort(contrib, kind="stable")  # keep the smallest errors first
    if units is None:
        n_keep = np.maximum(int(n) - _n_rejected(fr, n), 1)
    else:
        n_keep = np.maximum(n - _n_rejected(fr, n), 1.0)
    kept = _kept_sums(contrib, u, n_keep, units)
    oracle_kept = _oracle_kept(contrib[oracle_order], n_keep, None if units is None else units[oracle_order])
    values = kept / n_keep
    oracle = oracle_kept / n_keep
    if kind == "rmse":
        values = np.sqrt(values)
        oracle = np.sqrt(oracle)
    return {
        "fractions": fr,
        "values": values,
        "oracle_values": oracle,
        "auc_rejection": trapezoid(fr, values),
        "auc_oracle": trapezoid(fr, oracle),
    }


def oracle_collaborative_accuracy(correct, uncertainty, fraction: float = 0.01, weights=None) -> float:
    r"""Oracle collaborative accuracy (OCA): the most uncertain rows go to an oracle.

    The :math:`r = \lfloor \text{fraction} \cdot N \rfloor` most uncertain rows
    are handed to an oracle that labels them correctly; the model keeps the
    rest (Uncertainty Metrics ``OracleCollaborativeAccuracy``; Kivlichan et
    al. 2021):

    .. math:: \mathrm{OCA} = \frac{1}{N}\Big(r + \sum_{i \in \text{kept}} c_i\Big).

    The library ranks by 100 confidence bins and takes the expected accuracy
    of the bin that is split; here rows are ranked exactly by ``uncertainty``
    and only a tie straddling the cut is split, by its expected accuracy
    (same tie rule as :func:`rejection_curve`). OCA is non-decreasing in
    ``fraction``, equals the accuracy at 0 and 1 at 1.

    Parameters
    ----------
    correct : (N,) array of correctness in [0, 1].
    uncertainty : (N,) array, higher = less certain.
    fraction : float in [0, 1].
    weights : (N,) array, optional: row weights, as :func:`rejection_curve`'s.

    Returns
    -------
    float
    """
    c, u, units, n = _ranked_rows(correct, uncertainty, ("correct", "uncertainty"), weights)
    _check_unit_interval(c, "correct")
    fraction = float(fraction)
    if not (0.0 <= fraction <= 1.0):
        raise InputError(f"fraction must be in [0, 1], got {fraction:g}")
    r = _n_rejected(np.array([fraction]), n)[0]
    kept = _kept_sums(c, u, np.array([n - r]), units)[0]
    return float((r + kept) / n)


# --------------------------------------------------------------------------- #
# Bayesian ECE
# --------------------------------------------------------------------------- #


def _even_bins(conf: np.ndarray, num_bins: int) -> np.ndarray:
    """Even-width bin index of each confidence: bin b holds [b/B, (b+1)/B); 1.0 is in the last bin.

    The edges are ``np.linspace(0, 1, B + 1)`` as in Uncertainty Metrics' numpy
    GCE (``np.digitize`` on the upper edges) and ``uqeval.metrics.classification``,
    except that a confidence of exactly 1.0 joins the last bin instead of an
    extra bin ``[1, inf)``: the truncated Normal over the bin mean needs a bin
    of positive width, and the library's TensorFlow Bayesian ECE
    (``histogram_fixed_width_bins``) does the same.
    """
    edges = np.linspace(0.0, 1.0, num_bins + 1)
    return np.searchsorted(edges[1:-1], conf, side="right")


def bayesian_ece_samples(
    proba, labels, num_bins: int = 15, num_samples: int = 500, seed: int = 0
) -> np.ndarray:
    r"""Draws from the posterior of the top-label expected calibration error.

    Model (Uncertainty Metrics, "Bayesian ECE"): every row falls in one of
    :math:`2B` cells (correct or not :math:`\times` confidence bin :math:`b`),

    .. math::

        q \sim \mathrm{Dirichlet}(a\,\mathbb 1_{2 \times B}), \qquad
        (z_i, b_i) \sim \mathrm{Categorical}(q), \qquad
        p_i \sim \mathcal N_{[b/B,\,(b+1)/B)}(\mu_{b_i}, \sigma^2),

    with the Perks prior :math:`a = 1/B` of the library. The posterior
    factorises: :math:`q \mid Z, B \sim \mathrm{Dirichlet}(n_{z,b} + a)` and,
    with prior :math:`\mu_b \sim \mathcal N(c_b, \sigma_0^2)` at the bin
    centre :math:`c_b`, the conjugate Normal posterior
    :math:`\mu_b \mid P \sim \mathcal N(m_b, s_b^2)` truncated to the bin,
    :math:`s_b^{-2} = n_b/\sigma^2 + 1/\sigma_0^2`,
    :math:`m_b = s_b^2 (c_b/\sigma_0^2 + n_b \bar p_b / \sigma^2)`. Each draw
    gives

    .. math::

        \mathrm{ECE}(q, \mu) = \sum_b w_b \Big| \frac{q_{1,b}}{w_b} - \mu_b \Big|
                             = \sum_b \big| q_{1,b} - w_b \mu_b \big|,
        \qquad w_b = q_{0,b} + q_{1,b}.

    Deviations from the library source, on purpose: (i) bins are weighted by
    their posterior mass :math:`w_b` (the library's ``_compute_ece`` weights
    by :math:`q_{1,b} / \sum_b q_{1,b}`, which does not converge to the ECE);
    (ii) :math:`\sigma^2 = \sigma_0^2 = (1/B)^2/12`, the variance of a uniform
    over one bin as the library's comment intends (its code uses
    :math:`(1/B)/12`). With these, the posterior concentrates on the plain
    even-bin ECE as N grows. Binning is even-width on the top-label
    confidence (see ``_even_bins``: a small private copy of the even binning of
    ``uqeval.metrics.classification``'s ECE, to keep the modules independent;
    it differs only for confidences of exactly 1.0).

    Vectorised over draws: Dirichlet draws as normalised Gamma variates and
    truncated Normals by the inverse CDF of uniforms (:func:`_truncnorm_ppf`, the
    draws of ``scipy.stats.truncnorm.rvs``), all from one ``numpy.random.Generator(seed)``.

    Parameters
    ----------
    proba : (N, K) array of class probabilities (or (N,) P(class 1)).
    labels : (N,) integer array of true classes.
    num_bins : int, number of even-width confidence bins B.
    num_samples : int, number of posterior draws.
    seed : int, seed of the random generator.

    Returns
    -------
    (num_samples,) array of ECE draws.
    """
    p = _check_proba(proba)
    y = _check_labels(labels, len(p), p.shape[1])
    num_bins = int(num_bins)
    num_samples = int(num_samples)
    if num_bins < 1:
        raise InputError(f"num_bins must be >= 1, got {num_bins}")
    if num_samples < 1:
        raise InputError(f"num_samples must be >= 1, got {num_samples}")
    conf, correct = _top_label(p, y)
    b = _even_bins(conf, num_bins)
    counts = np.bincount(correct.astype(np.int64) * num_bins + b, minlength=2 * num_bins)
    bin_n = counts[:num_bins] + counts[num_bins:]
    conf_sum = np.bincount(b, weights=conf, minlength=num_bins)
    pmean = np.divide(conf_sum, bin_n, out=np.zeros(num_bins), where=bin_n > 0)

    width = 1.0 / num_bins
    lo = np.arange(num_bins) * width
    hi = lo + width
    centers = lo + 0.5 * width
    sigma0_sq = sigma_sq = width * width / 12.0
    post_var = 1.0 / (bin_n / sigma_sq + 1.0 / sigma0_sq)
    post_mean = post_var * (centers / sigma0_sq + bin_n * pmean / sigma_sq)
    post_sd = np.sqrt(post_var)

    rng = np.random.default_rng(seed)
    g = rng.gamma(shape=counts + 1.0 / num_bins, size=(num_samples, 2 * num_bins))
    q = g / g.sum(axis=1, keepdims=True)
    q0, q1 = q[:, :num_bins], q[:, num_bins:]
    u = rng.uniform(size=(num_samples, num_bins))
    mu = _truncnorm_ppf(u, (lo - post_mean) / post_sd, (hi - post_mean) / post_sd) * post_sd + post_mean
    return np.abs(q1 - (q0 + q1) * mu).sum(axis=1)


def _log_normal_mass(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    r""":math:`\log(\Phi(b) - \Phi(a))` for :math:`a < b`, accurate in both tails: from the log-CDFs in the
    lower tail (:math:`b \le 0`), by symmetry in the upper tail (:math:`a > 0`), as
    :math:`\log(1 - \Phi(a) - \Phi(-b))` across zero. The difference of two logs is a complex
    log-sum-exp with :math:`-e^x = e^{x + i\pi}`."""

    def lower(lo, hi):
        return special.logsumexp([special.log_ndtr(hi), special.log_ndtr(lo) + np.pi * 1j], axis=0)

    out = np.full(a.shape, np.nan, dtype=np.complex128)
    left, right = b <= 0, a > 0
    central = ~(left | right)
    if left.any():
        out[left] = lower(a[left], b[left])
    if right.any():
        out[right] = lower(-b[right], -a[right])
    if central.any():
        out[central] = special.log1p(-special.ndtr(a[central]) - special.ndtr(-b[central]))
    return out.real


def _truncnorm_ppf(q, a, b) -> np.ndarray:
    r"""Quantile ``q`` of the standard normal truncated to :math:`[a, b]`, by inverting
    :math:`\Phi(x) = \Phi(a) + q\,(\Phi(b) - \Phi(a))` in log space (``ndtri_exp``), reflected to the
    lower tail when :math:`a \ge 0`.

    ``scipy.stats.truncnorm`` computes its quantiles and (from uniforms) its draws this way; this
    evaluates the same expressions with ``scipy.special`` so that the Bayesian ECE's draws equal
    ``truncnorm.rvs``'s bit for bit (tested) without importing ``scipy.stats`` (~0.6 s of start-up
    for every classification file)."""
    q, a, b = np.broadcast_arrays(np.asarray(q, dtype=np.float64), a, b)
    out = np.empty(q.shape)
    left = a < 0
    mass = _log_normal_mass(a, b)
    with np.errstate(divide="ignore"):
        if left.any():
            log_cdf = special.logsumexp([special.log_ndtr(a[left]), np.log(q[left]) + mass[left]], axis=0)
            out[left] = special.ndtri_exp(log_cdf)
        right = ~left
        if right.any():
            log_sf = special.logsumexp(
                [special.log_ndtr(-b[right]), np.log1p(-q[right]) + mass[right]], axis=0
            )
            out[right] = -special.ndtri_exp(log_sf)
    return out


def bayesian_ece(
    proba, labels, num_bins: int = 15, num_samples: int = 500, seed: int = 0
) -> dict[str, float]:
    r"""Posterior summary of the top-label ECE: mean and 10/50/90 % quantiles.

    Summarises :func:`bayesian_ece_samples` (see there for the model, the
    prior and the deviations from the Uncertainty Metrics source). Quantiles
    use numpy's default linear interpolation.

    Returns
    -------
    dict with float values ``mean``, ``q10``, ``q50``, ``q90``.
    """
    draws = bayesian_ece_samples(proba, labels, num_bins=num_bins, num_samples=num_samples, seed=seed)
    q10, q50, q90 = np.quantile(draws, [0.1, 0.5, 0.9])
    return {"mean": float(draws.mean()), "q10": float(q10), "q50": float(q50), "q90": float(q90)}


# --------------------------------------------------------------------------- #
# semiparametric calibration error
# --------------------------------------------------------------------------- #


def _stratified_folds(y: np.ndarray, num_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold id of each row: random order, then round-robin within each outcome class."""
    perm = rng.permutation(y.size)
    order = perm[np.argsort(y[perm], kind="stable")]
    folds = np.empty(y.size, dtype=np.int64)
    folds[order] = np.arange(y.size) % num_folds
    return folds


class _BinnedSmoother:
    """Cross-fitted Nadaraya-Watson regression of ``y - p`` on ``p`` via linear binning.

    The data are linearly binned onto ``G`` equally spaced grid nodes per
    fold; for fold f the training statistics are the totals minus fold f's.
    The Gaussian-kernel smoother is evaluated at the nodes (a G x G kernel
    matrix) and interpolated linearly back to the held-out rows. Cost per
    bandwidth: O(G^2 F + N), instead of the O(N^2) of the exact estimate; the
    cross-fitted squared error of a bandwidth (:meth:`squared_error`) costs
    O(G^2 F), from per-(node, fold) sums of the interpolation weights.
    """

    def __init__(self, p: np.ndarray, resid: np.ndarray, folds: np.ndarray, num_folds: int, grid_size: int):
        self.num_folds = num_folds
        lo, hi = float(p.min()), float(p.max())
        self.span = max(hi - lo, 1e-12)
        g = grid_size
        self.delta = self.span / (g - 1)
        pos = (p - lo) / self.delta
        i0 = np.clip(np.floor(pos).astype(np.int64), 0, g - 2)
        w1 = np.clip(pos - i0, 0.0, 1.0)
        del pos
        w0 = 1.0 - w1
        # kept per row: the upper weight and the row's (node i0, fold) in the (G, F) node estimates, raveled
        # (the lower weight and (node i0 + 1, fold) = flat0 + F are recomputed where needed: fewer (N,) arrays)
        self.w1 = w1
        self.flat0 = i0 * num_folds + folds
        key0 = folds * g + i0
        del i0
        size = num_folds * g

        def binned(weights: np.ndarray, upper: bool = False) -> np.ndarray:  # rows at node i0 (+ 1 if upper)
            return np.bincount(key0 + 1 if upper else key0, weights=weights, minlength=size).reshape(
                num_folds, g
            )

        res0 = binned(resid * w0)
        cnt = (binned(w0) + binned(w1, True)).T  # (G, F)
        res = (res0 + binned(resid * w1, True)).T
        self.cnt_train = cnt.sum(axis=1, keepdims=True) - cnt
        self.res_train = res.sum(axis=1, keepdims=True) - res
        tot_cnt = self.cnt_train.sum(axis=0)
        self.fallback = np.divide(
            self.res_train.sum(axis=0), tot_cnt, out=np.zeros(num_folds), where=tot_cnt > 0
        )
        # sum_i (m_i - r_i)^2 with m_i = w0_i a_i + w1_i b_i (a, b: the estimates at the row's two nodes)
        # is a quadratic form in the node estimates whose coefficients are these per-(fold, node) sums
        # (nodes 0..G-2: the lower node of each row)
        self.sq = [binned(w0 * w0)[:, :-1], 2.0 * binned(w0 * w1)[:, :-1], binned(w1 * w1)[:, :-1]]
        self.cross = [res0[:, :-1], binned(resid * w1)[:, :-1]]
        self.resid_sq = float(np.dot(resid, resid))
        # the kernel matrix is Toeplitz: gather it from the 2G - 1 offsets
        self.offsets = np.arange(-(g - 1), g) * self.delta
        idx = np.arange(g)
        self.toeplitz_idx = idx[:, None] - idx[None, :] + (g - 1)

    def at_nodes(self, bandwidth: float) -> np.ndarray:
        """(G, F): the estimate of E[y - p | p] at each node, fitted without each fold."""
        kern = np.exp(-0.5 * (self.offsets / bandwidth) ** 2)[self.toeplitz_idx]
        # einsum, not matmul: a (G, G) x (G, F) product is too small for BLAS threads, whose start-up
        # and spinning cost ~30x the product itself on a loaded machine
        num = np.einsum("gh,hf->gf", kern, self.res_train)
        den = np.einsum("gh,hf->gf", kern, self.cnt_train)
        ok = den > 1e-300
        return np.where(ok, num / np.where(ok, den, 1.0), self.fallback[None, :])

    def predict(self, bandwidth: float) -> np.ndarray:
        """Cross-fitted estimate of E[y - p | p] at every row."""
        flat = self.at_nodes(bandwidth).ravel()  # one flat take per node instead of 2-d fancy indexing
        lower = flat.take(self.flat0)
        lower *= 1.0 - self.w1  # the lower weight w0
        upper = flat.take(self.flat0 + self.num_folds)
        upper *= self.w1
        lower += upper
        return lower

    def squared_error(self, bandwidth: float) -> float:
        r""":math:`\sum_i (\hat m(p_i) - (y_i - p_i))^2` of the cross-fitted estimate, in O(G^2 F)."""
        nodes = self.at_nodes(bandwidth).T  # (F, G)
        a, b = nodes[:, :-1], nodes[:, 1:]
        quad = np.sum(self.sq[0] * a * a + self.sq[1] * a * b + self.sq[2] * b * b)
        return float(quad - 2.0 * np.sum(self.cross[0] * a + self.cross[1] * b) + self.resid_sq)


def _spce_inputs(
    proba, labels, num_folds, n_bootstrap, grid_size, num_bandwidths, level
) -> tuple[np.ndarray, np.ndarray]:
    """The checked ``(p, y)`` of :func:`spce` (confidence and 0/1 outcome per row) and its checked options."""
    raw = as_float_array(proba, "proba", ndim=(1, 2))
    if raw.ndim == 1:
        check_finite(raw, "proba")
        _check_unit_interval(raw, "proba")
        y = _check_labels(labels, raw.size, 2).astype(np.float64)
        p = raw
    else:
        pk = _check_proba(raw)
        p, y = _top_label(pk, _check_labels(labels, len(pk), pk.shape[1]))
    n = p.size
    num_folds, n_bootstrap, grid_size = int(num_folds), int(n_bootstrap), int(grid_size)
    if num_folds < 2:
        raise InputError(f"num_folds must be >= 2, got {num_folds}")
    if n < 2 * num_folds:
        raise InputError(
            f"spce needs at least {2 * num_folds} rows for {num_folds}-fold cross-fitting, got {n}"
        )
    if n_bootstrap < 2:
        raise InputError(f"n_bootstrap must be >= 2, got {n_bootstrap}")
    if grid_size < 16:
        raise InputError(f"grid_size must be >= 16, got {grid_size}")
    if int(num_bandwidths) < 1:
        raise InputError(f"num_bandwidths must be >= 1, got {num_bandwidths}")
    if not (0.0 < float(level) < 1.0):
        raise InputError(f"level must be strictly between 0 and 1, got {level:g}")
    return p, y


def _bootstrap_means(psi: np.ndarray, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """The means of ``n_bootstrap`` resamples of ``psi`` (rows drawn by ``rng``, block by block), each
    ``np.mean(psi.take(idx))`` bit for bit."""
    n = psi.size
    boot = np.empty(n_bootstrap)
    chunk = max(1, min(n_bootstrap, 2_000_000 // n))  # bound the index block to ~16 MB

    # each resample's mean gathered leaf by leaf of numpy's pairwise summation into one cache-sized buffer: no
    # (chunk, N) array of gathered values
    leaves = PairwiseSum(n, leaf=1 << 15).leaves
    buf = np.empty(max(leaves))

    def resample_mean(rows: np.ndarray) -> float:
        total, at = PairwiseSum(n, leaf=1 << 15), 0
        for m in leaves:  # a loop over ~N / 2**15 leaves
            total.add(psi.take(rows[at : at + m], out=buf[:m]))
            at += m
        return total.total() / n

    blocks = [(start, min(start + chunk, n_bootstrap)) for start in range(0, n_bootstrap, chunk)]
    from concurrent.futures import ThreadPoolExecutor

    # a loop over resample blocks, not rows; a worker thread draws the next block's indices (numpy releases
    # the GIL there) while this one averages the current block: the same draws in the same order, ~40% less
    # wall time at 1e6 rows (drawing and gathering cost about the same)
    with ThreadPoolExecutor(max_workers=1) as pool:

        def draw(block: tuple[int, int]):
            return pool.submit(rng.integers, 0, n, size=(block[1] - block[0], n))

        pending = draw(blocks[0])
        for i, (start, stop) in enumerate(blocks):
            idx = pending.result()
            if i + 1 < len(blocks):
                pending = draw(blocks[i + 1])
            boot[start:stop] = [resample_mean(rows) for rows in idx]
    return boot


def spce(
    proba,
    labels,
    seed: int = 0,
    n_bootstrap: int = 200,
    num_folds: int = 5,
    level: float = 0.95,
    grid_size: int = 512,
    num_bandwidths: int = 20,
) -> dict[str, float]:
    r"""Semiparametric L2 calibration error (SPCE) with a bootstrap confidence interval.

    With confidence :math:`p_i` and outcome :math:`y_i \in \{0, 1\}`, the
    target is the root-mean-square calibration error
    :math:`\sqrt{\theta}`, :math:`\theta = \mathbb E[(p - c(p))^2]`,
    :math:`c(p) = \mathbb E[y \mid p]`. Following the Uncertainty Metrics
    ``SemiparametricCalibrationError`` (defaults: kernel smoothing, constant
    weights, non-orthogonal point estimate), with a cross-fitted estimate
    :math:`\hat c` (each row's :math:`\hat c` is fitted on the other folds):

    .. math::

        \hat\theta = \frac1N \sum_i (p_i - y_i)(p_i - \hat c(p_i)), \qquad
        \psi_i = (p_i - \hat c(p_i))(p_i + \hat c(p_i) - 2 y_i),

        \mathrm{SPCE} = \sqrt{\max(\hat\theta, 0)}, \qquad
        \mathrm{CI} = \Big[\sqrt{\max(\hat\theta - z\,\widehat{se}, 0)},\;
                          \sqrt{\max(\hat\theta + z\,\widehat{se}, 0)}\Big],

    where :math:`\widehat{se}` is the standard deviation of the means of
    ``n_bootstrap`` seeded bootstrap resamples of the influence-function
    terms :math:`\psi_i`, and :math:`z = \Phi^{-1}((1 + \text{level})/2)`.

    **Calibration function.** :math:`\hat c(p) = p + \hat m(p)` where
    :math:`\hat m` is a Nadaraya-Watson regression of :math:`y - p` on
    :math:`p` with a Gaussian kernel :math:`\exp(-d^2 / 2h^2)`, fitted on the
    other ``num_folds - 1`` folds (folds stratified by :math:`y`, seeded).
    **Bandwidth:** ``num_bandwidths`` values of :math:`h` geometrically
    spaced from two grid steps to the range of :math:`p` are tried; the one
    with the smallest cross-fitted squared error :math:`\frac1N\sum_i (\hat
    c(p_i) - y_i)^2` is chosen and then undersmoothed, :math:`h \cdot
    N^{-0.04}` (the library's :math:`\sigma \cdot N^{0.08}` for its
    :math:`\exp(-\sigma d^2)` kernel), but not below one grid step.
    **Complexity.** The exact kernel estimate is :math:`O(N^2)` (the
    library's); here the data are linearly binned onto ``grid_size`` nodes,
    so each candidate bandwidth costs :math:`O(G^2 F)` (its squared error is a
    quadratic form in the node estimates, whose coefficients are binned once in
    :math:`O(N)`) and the chosen one :math:`O(G^2 F + N)`; the binning error is
    :math:`O(\delta^2)` in the grid step :math:`\delta = \text{range}/(G-1)`.
    The bootstrap costs :math:`O(N \cdot n_\text{bootstrap})`; its indices are drawn in a worker
    thread, a block ahead of the averaging.

    Inputs: a 1-d ``proba`` is P(class 1) of a binary problem and ``labels``
    are 0/1 (binary calibration, :math:`y = \text{label}`); a 2-d ``proba``
    (N, K) is evaluated top-label (:math:`p` = max probability, :math:`y` =
    argmax is correct).

    Parameters
    ----------
    proba : (N,) or (N, K) array.
    labels : (N,) integer array.
    seed : int, seeds the folds and the bootstrap.
    n_bootstrap : int, number of bootstrap resamples (>= 2).
    num_folds : int, number of cross-fitting folds (>= 2).
    level : float in (0, 1), confidence level of the interval.
    grid_size : int, number of binning nodes G (>= 16).
    num_bandwidths : int, number of candidate bandwidths (>= 1).

    Returns
    -------
    dict with float values ``spce``, ``ci_low``, ``ci_high``.
    """
    p, y = _spce_inputs(proba, labels, num_folds, n_bootstrap, grid_size, num_bandwidths, level)
    n, num_folds = p.size, int(num_folds)
    rng = np.random.default_rng(seed)
    folds = _stratified_folds(y, num_folds, rng)
    smoother = _BinnedSmoother(p, y - p, folds, num_folds, int(grid_size))
    candidates = np.geomspace(2.0 * smoother.delta, smoother.span, int(num_bandwidths))
    errors = [smoother.squared_error(h) for h in candidates]  # n times the mean squared error
    h = max(candidates[int(np.argmin(errors))] * n**-0.04, smoother.delta)
    c_hat = p + smoother.predict(h)
    del smoother, folds

    theta = float(np.mean((p - y) * (p - c_hat)))
    psi = (p - c_hat) * (p + c_hat - 2.0 * y)
    del p, y, c_hat  # only psi is resampled
    se = float(np.std(_bootstrap_means(psi, int(n_bootstrap), rng)))
    z = float(central_z(float(level)))
    return {
        "spce": math.sqrt(max(theta, 0.0)),
        "ci_low": math.sqrt(max(theta - z * se, 0.0)),
        "ci_high": math.sqrt(max(theta + z * se, 0.0)),
    }
