"""The verdict (issue 39): answers under the numbers, each named by the rule that produced it.

One function, :func:`with_verdict`, attaches ``document["verdict"]`` (``uqeval.verdict/1``) to the
document a command returned; every front end calls it (the CLI's ``score``, ``compare``, ``check`` and
``report``, and :func:`uqeval.evaluate` / :func:`uqeval.compare` in Python), the renderers of
:mod:`uqeval.report.verdict` show it. Every label comes from a test at level :data:`ALPHA` with its
multiplicity stated, never a threshold picked by taste. The rules (``pit-moments``, ``coverage-binomial``,
``top-label-mean``, ``paired-holm``, ``check-rules``, the actions), their formulas, assumptions and error
rates are on docs/guide/verdicts.md; ``benchmarks/verdict_sim.py`` measures the error rates. Every test
assumes independent rows (compare's resampling setting says when its tests assumed clusters or blocks).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import option
from ..metrics.calibration_tests import two_sided_normal_p
from ..metrics.normal import central_z, ndtr  # no scipy: score on a Gaussian file imports none (startup time)
from ..metrics.rowweights import effective_rows

if TYPE_CHECKING:
    from ..predictions import Prediction

SCHEMA = "uqeval.verdict/1"
#: the family-wise level of every rule
ALPHA = 0.05
#: most confidence bins of the classifier's "where it is off" (equal-count; fewer below 50 rows a bin)
MAX_BINS = 10
MIN_BIN_ROWS = 50
#: most rows the temperature of the classifier's action is fitted on (a seeded random subset beyond)
FIT_ROWS = 100_000


# --------------------------------------------------------------------------------------------- entry


def with_verdict(
    document: dict[str, Any], prediction: Prediction | None = None, weights: np.ndarray | None = None
) -> dict[str, Any]:
    """Attach ``document["verdict"]`` (see :func:`verdict_of`) and return the document.

    ``prediction`` (and its ``weights``): the rows the document was computed from, where they are still in
    memory; without them a score document gets the ``coverage-binomial`` rule only."""
    verdict = verdict_of(document, prediction, weights)
    if verdict is not None:
        document["verdict"] = verdict
    return document


def verdict_of(
    document: dict[str, Any], prediction: Prediction | None = None, weights: np.ndarray | None = None
) -> dict[str, Any] | None:
    """The ``uqeval.verdict/1`` block of a ``score``, ``compare``, ``check`` or ``monitor`` document
    (``None`` for any other document): ``{"schema", "uqeval_version", "alpha", "aspects": [...]}``, one
    aspect per answer, each ``{"aspect", "label", "rule", "sentence", "assumes", "evidence", ...}``."""
    from .._version import __version__

    tag = document.get("schema")
    if tag == "uqeval.score/1":
        aspects = score_aspects(document, prediction, weights)
    elif tag == "uqeval.compare/1":
        aspects = [comparison_aspect(document)]
    elif tag == "uqeval.check/1":
        aspects = [check_aspect(document)]
    elif tag == "uqeval.monitor/1":
        aspects = [monitor_aspect(document)]
    else:
        return None
    return {"schema": SCHEMA, "uqeval_version": __version__, "alpha": ALPHA, "aspects": aspects}


def check_verdict(report: dict[str, Any], summary: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The verdict of a ``uqeval.check/1`` report: which rule failed and by how much, then the calibration
    of the scored ``summary`` (its own verdict when it has one, else from the document alone)."""
    verdict = verdict_of(report)
    if verdict is not None and summary is not None and summary.get("schema") == "uqeval.score/1":
        own = (summary.get("verdict") or {}).get("aspects")  # a summary JSON judged with its rows: kept
        if isinstance(own, list) and own:
            verdict["aspects"] += [a for a in own if isinstance(a, dict)]
        else:
            verdict["aspects"] += score_aspects(summary, None, None)
    return verdict


# --------------------------------------------------------------------------------------------- helpers


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(float(v)) else None


def _f(v: float | None, digits: int = 3) -> str:
    if v is None:
        return "n/a"
    return f"{v:.{digits}g}"


def _p(p: float | None) -> str:
    if p is None:
        return "p n/a"
    return "p < 1e-16" if p < 1e-16 else f"p = {p:.2g}"


def _log10(v: float | None) -> float | None:
    return math.log10(v) if v is not None and v > 0 else None


def _evidence(name: str, value: float | None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "value": value}
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def _aspect(aspect: str, label: str, rule: str, sentence: str, assumes: str, evidence: list, **extra: Any):
    return {
        "aspect": aspect,
        "label": label,
        "rule": rule,
        "sentence": sentence,
        "assumes": assumes,
        "evidence": evidence,
        **extra,
    }


def wilson(k: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion ``k / n`` (Wilson 1927; close to its nominal level
    down to a few dozen rows, unlike the Wald interval)."""
    z = float(central_z(level))
    phat = k / n
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _binom_p(k: int, n: int, p: float) -> float:
    """Exact two-sided binomial p-value: twice the smaller tail (at most 1), a valid, slightly conservative
    test."""
    from scipy.special import bdtr, bdtrc

    lower = float(bdtr(k, n, p))  # P(X <= k)
    upper = float(bdtrc(k - 1, n, p)) if k > 0 else 1.0  # P(X >= k)
    return min(1.0, 2.0 * min(lower, upper))


def level_of(key: str) -> float | None:
    """The probability level a metric key names (``"0.95"`` -> 0.95), else None."""
    try:
        v = float(key)
    except ValueError:
        return None
    return v if 0.0 < v < 1.0 else None


def _coverages(document: dict[str, Any], n: int) -> Iterator[tuple[str, float, float, dict[str, Any]]]:
    """``(key, level, coverage, body)`` of each level of ``metrics.coverage`` that has one (none without rows)."""
    for key, body in ((document.get("metrics") or {}).get("coverage") or {}).items():
        level, cov = level_of(key), _num((body or {}).get("coverage"))
        if level is not None and cov is not None and n > 0:
            yield key, level, cov, body


def _coverage_item(key: str, level: float, cov: float, n: int, **extra: Any) -> dict[str, Any]:
    """The evidence of the coverage at one level with its Wilson 95% interval (independent rows)."""
    low, high = wilson(round(cov * n), n)
    return _evidence(f"coverage at {key}", cov, low=low, high=high, target=level, **extra)


def _coverage_evidence(document: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """Coverage at each level of ``metrics.coverage`` with its Wilson 95% interval (independent rows)."""
    return [_coverage_item(key, level, cov, n) for key, level, cov, _ in _coverages(document, n)]


def _spread_skill(document: dict[str, Any]) -> list[dict[str, Any]]:
    ratio = _num(((document.get("metrics") or {}).get("spread_skill") or {}).get("ratio"))
    note = "shown, not tested (1 for a calibrated Gaussian forecast; below 1: spread too small)"
    return [_evidence("spread-skill ratio", ratio, note=note)] if ratio is not None else []


def _pit_tests(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The calibration tests of ``--diagnostics`` where the document has them (shown, not in the rule)."""
    tests = (document.get("metrics") or {}).get("calibration_tests") or {}
    out = []
    for key, name in (
        ("pit_ks_p", "PIT Kolmogorov-Smirnov test"),
        ("pit_ad_p", "PIT Anderson-Darling test"),
        ("spiegelhalter_p", "Spiegelhalter test"),
        ("hosmer_lemeshow_p", "Hosmer-Lemeshow test"),
    ):
        p = _num(tests.get(key))
        if p is not None:
            out.append(
                _evidence(name, None, p_value=p, note=f"{option('diagnostics')}; shown, not in the rule")
            )
    return out


# --------------------------------------------------------------------------------------------- score


def score_aspects(
    document: dict[str, Any], prediction: Prediction | None, weights: np.ndarray | None
) -> list[dict[str, Any]]:
    """The calibration aspect of a score document and, when it is not calibrated, the action aspect."""
    kind = (document.get("input") or {}).get("representation")
    if prediction is not None and getattr(prediction, "kind", None) == "gaussian":
        return _gaussian(document, prediction, weights)
    if prediction is not None and hasattr(prediction, "top_label"):
        return _classifier(document, prediction, weights)
    if (document.get("metrics") or {}).get("coverage"):
        return _coverage_rule(document, kind)
    reason = (
        "classifiers need their rows in memory (the streaming engines keep none)"
        if kind in ("categorical", "members", "dirichlet", "binary")
        else f"no calibration rule applies to {kind} predictions (no PIT, no central intervals)"
    )
    return [_not_assessed("none", reason, _pit_tests(document))]


def _not_assessed(rule: str, reason: str, evidence: list[dict[str, Any]]) -> dict[str, Any]:
    return _aspect("calibration", "not assessed", rule, f"calibration not assessed: {reason}", "", evidence)


def _no_action(kind: str | None, why: str) -> dict[str, Any]:
    """The action aspect when no ``uqeval recalibrate`` method applies to ``kind`` predictions (``why``)."""
    return _aspect(
        "action",
        "none",
        "action-none",
        f"no uqeval recalibrate method applies to {kind} predictions {why}",
        "",
        [],
    )


def _wmean(x: np.ndarray, weights: np.ndarray | None) -> float:
    if weights is None:
        return float(np.mean(x))
    return float(np.average(x, weights=weights))


def _gaussian(document: dict[str, Any], prediction: Any, weights: np.ndarray | None) -> list[dict[str, Any]]:
    # one array, rewritten in place: z = (y - mean)/std, then u - 1/2 = Φ(z) - 1/2, then |u - 1/2| (kept for
    # the action): the verdict stays a small share of score's time (benchmarks/verdict_sim.py cost)
    d = np.subtract(prediction.require_targets(), prediction.mean, dtype=np.float64)
    d /= prediction.std
    n_eff = float(len(d)) if weights is None else effective_rows(weights)
    zz = float(np.einsum("i,i->", d, d)) / len(d) if weights is None else _wmean(d * d, weights)
    d = ndtr(d)
    d -= 0.5
    if weights is None:
        m1 = float(d.mean()) + 0.5
        m2 = float(np.einsum("i,i->", d, d)) / len(d)
    else:
        m1 = _wmean(d, weights) + 0.5
        m2 = _wmean(d * d, weights)
    np.abs(d, out=d)
    m_abs = float(d.mean()) if weights is None else _wmean(d, weights)
    # the mean test takes the larger of the PIT's sample variance and 1/12: a too narrow forecast has a
    # U-shaped PIT whose variance exceeds 1/12, which the null variance alone would call biased
    var_u = max(m2 - (m1 - 0.5) ** 2, 1.0 / 12.0)
    z_mean = (m1 - 0.5) / math.sqrt(var_u / n_eff)
    # the spread: |u - 1/2| is uniform on [0, 1/2] under calibration (mean 1/4, variance 1/48), a mean of
    # uniforms whose normal approximation holds at 200 rows (the squared deviation is skewed: it did not)
    z_spread = (m_abs - 0.25) / math.sqrt(1.0 / (48.0 * n_eff))
    p_mean, p_spread = two_sided_normal_p(z_mean), two_sided_normal_p(z_spread)
    cut = ALPHA / 2.0  # Bonferroni over the two tests
    half = float(central_z(0.95)) * math.sqrt(var_u / n_eff)
    evidence = [
        _evidence("mean PIT", m1, low=m1 - half, high=m1 + half, target=0.5, p_value=p_mean),
        _evidence("PIT spread mean |u - 1/2|", m_abs, target=0.25, p_value=p_spread),
        *_coverage_evidence(document, int(round(n_eff))),
        *_spread_skill(document),
        *_pit_tests(document),
    ]
    assumes = "independent rows; PIT uniform under calibration (exact for Gaussian forecasts)"
    tests = (
        f"mean PIT {m1:.3f} ({_p(p_mean)}), PIT spread {_p(p_spread)}; Bonferroni over 2 tests at α = {ALPHA}"
    )
    if p_mean < cut:
        label = "biased"
        direction = "forecasts too high" if m1 < 0.5 else "forecasts too low"
        sentence = f"biased ({direction}): {tests}"
    elif p_spread < cut:
        label = "overconfident" if z_spread > 0 else "underconfident"
        shape = "too narrow" if z_spread > 0 else "too wide"
        sentence = f"{label} (predictive distributions {shape}): {_cov_phrase(evidence)}{tests}"
    else:
        label = "calibrated"
        sentence = f"calibrated: no evidence of miscalibration ({tests})"
    out = [_aspect("calibration", label, "pit-moments", sentence, assumes, evidence)]
    if label != "calibrated":
        out.append(_gaussian_action(document, prediction, weights, label, zz, d))
    return out


def _cov_phrase(evidence: list[dict[str, Any]]) -> str:
    parts = [
        f"{e['name']} {e['value']:.3f} (95% interval {e['low']:.3f} to {e['high']:.3f}), "
        for e in evidence
        if e["name"].startswith("coverage at ")
    ]
    return "".join(parts[:2])


def _gaussian_action(
    document: dict[str, Any],
    prediction: Any,
    weights: np.ndarray | None,
    label: str,
    zz: float,
    abs_d: np.ndarray,
):
    """The action of a miscalibrated Gaussian forecast; ``zz`` is the mean of z², ``abs_d`` is |u - 1/2|."""
    assumes = "in-sample: fitted and judged on the same rows, so optimistic; fit it on held-out rows"
    if label == "biased":
        shift = _wmean(prediction.require_targets(), weights) - _wmean(prediction.mean, weights)
        sentence = (
            f"recalibrate the predictive CDF (the mean error y - mean is {shift:.3g}): "
            "uqeval recalibrate --method isotonic on held-out rows; in-sample figures are optimistic"
        )
        return _aspect(
            "action",
            "isotonic",
            "action-isotonic",
            sentence,
            assumes,
            [_evidence("mean error y - mean", shift)],
            command="uqeval recalibrate --method isotonic",
            parameters={"mean_error": shift},
        )
    factor = math.sqrt(zz)  # the NLL-optimal std-scaling factor, closed form
    evidence = [_evidence("std-scaling factor (NLL)", factor)]
    restored = []
    for key in ((document.get("metrics") or {}).get("coverage") or {}).keys():
        level = level_of(key)
        if level is None:
            continue
        # |z| <= s·c  is  |u - 1/2| <= Φ(s·c) - 1/2
        inside = abs_d <= float(ndtr(np.array(factor * float(central_z(level))))) - 0.5
        after = float(np.count_nonzero(inside)) / len(abs_d) if weights is None else _wmean(inside, weights)
        evidence.append(_evidence(f"coverage at {key} after scaling (in-sample)", after, target=level))
        restored.append(f"{key} coverage {after:.3f}")
    gives = f" gives {', '.join(restored[:2])} on these rows (in-sample, optimistic)" if restored else ""
    sentence = (
        f"std-scaling by {factor:.3g}{gives}; fit it on held-out rows: "
        "uqeval recalibrate --method std-scaling --criterion nll"
    )
    return _aspect(
        "action",
        "std-scaling",
        "action-std-scaling",
        sentence,
        assumes,
        evidence,
        command="uqeval recalibrate --method std-scaling --criterion nll",
        parameters={"factor": factor},
    )


def _coverage_rule(document: dict[str, Any], kind: str | None) -> list[dict[str, Any]]:
    inp = document.get("input") or {}
    n = int(inp.get("n_rows") or 0)
    if "weights" in document:
        reason = (
            "the coverage rule counts unweighted rows, and these are weighted (the Python API and `uqeval "
            "score` with the rows in memory judge Gaussian and classifier predictions with weights)"
        )
        return [_not_assessed("coverage-binomial", reason, _coverage_evidence(document, n))]
    tests: list[tuple[str, float, str]] = []  # (what, p, direction)
    evidence = []
    for key, level, cov, body in _coverages(document, n):
        p = _binom_p(round(cov * n), n, level)
        evidence.append(_coverage_item(key, level, cov, n, p_value=p))
        tests.append((f"coverage at {key}", p, "low" if cov < level else "high"))
        below, above = _num(body.get("miss_below")), _num(body.get("miss_above"))
        if below is not None and above is not None:
            kb, ka = int(round(below * n)), int(round(above * n))
            if kb + ka > 0:
                ps = _binom_p(kb, kb + ka, 0.5)
                evidence.append(_evidence(f"misses below at {key}", kb / (kb + ka), target=0.5, p_value=ps))
                tests.append((f"miss split at {key}", ps, "below" if kb > ka else "above"))
    evidence += _spread_skill(document) + _pit_tests(document)
    assumes = "independent rows; each central interval exact at its level under calibration" + (
        "" if kind != "samples" else " (an ensemble's empirical quantiles are, only for many members)"
    )
    if not tests:
        return [_not_assessed("coverage-binomial", "no coverage", evidence)]
    cut = ALPHA / len(tests)
    hits = [t for t in tests if t[1] < cut]
    how = f"exact binomial tests, Bonferroni over {len(tests)} at α = {ALPHA}"
    split = [t for t in hits if t[0].startswith("miss split")]
    cover = [t for t in hits if t[0].startswith("coverage")]
    if split:
        side = split[0][2]
        direction = "forecasts too high" if side == "below" else "forecasts too low"
        label, sentence = "biased", f"biased ({direction}: misses fall {side}, {_p(split[0][1])}); {how}"
    elif cover and all(t[2] == "low" for t in cover):
        label = "overconfident"
        sentence = f"overconfident (intervals too narrow): {_cov_phrase(evidence)}{how}"
    elif cover and all(t[2] == "high" for t in cover):
        label = "underconfident"
        sentence = f"underconfident (intervals too wide): {_cov_phrase(evidence)}{how}"
    elif cover:
        label = "miscalibrated"
        sentence = f"miscalibrated (coverage too low at some levels, too high at others): {how}"
    else:
        label = "calibrated"
        sentence = f"calibrated: no evidence of miscalibration ({_cov_phrase(evidence)}{how})"
    out = [_aspect("calibration", label, "coverage-binomial", sentence, assumes, evidence)]
    if label in ("overconfident", "underconfident") and kind not in ("gaussian",):
        out.append(
            _no_action(
                kind,
                "(they need a mean and a std, or class probabilities); widen or narrow the intervals with a "
                "conformal step fitted on held-out rows",
            )
        )
    elif label != "calibrated" and kind == "gaussian":
        out.append(
            _aspect(
                "action",
                "std-scaling" if label != "biased" else "isotonic",
                "action-document",
                "recalibrate on held-out rows: uqeval recalibrate --method "
                + ("std-scaling" if label != "biased" else "isotonic")
                + " (its fitted parameter needs the rows: run with the rows in memory to see it)",
                "",
                [],
                command="uqeval recalibrate --method " + ("std-scaling" if label != "biased" else "isotonic"),
            )
        )
    return out


def _classifier(
    document: dict[str, Any], prediction: Any, weights: np.ndarray | None
) -> list[dict[str, Any]]:
    conf, correct = prediction.top_label()
    conf = np.asarray(conf, dtype=np.float64)
    w = np.ones_like(conf) if weights is None else np.asarray(weights, dtype=np.float64)
    var = np.dot(w * w, conf * (1.0 - conf))
    diff = float(np.dot(w, correct - conf))
    # unweighted, the sum of right answers moves in steps of 1: a continuity correction of 1/2 keeps the
    # normal approximation's size at or below alpha at a few hundred rows (measured: benchmarks/verdict_sim.py)
    step = 0.5 if weights is None else 0.0
    z = math.copysign(max(abs(diff) - step, 0.0), diff) / math.sqrt(var) if var > 0 else 0.0
    p = two_sided_normal_p(z) if var > 0 else 1.0
    acc, mconf = _wmean(correct, weights), _wmean(conf, weights)
    half = float(central_z(0.95)) * math.sqrt(var) / float(w.sum())
    evidence = [
        _evidence(
            "accuracy - mean confidence",
            acc - mconf,
            low=acc - mconf - half,
            high=acc - mconf + half,
            target=0.0,
            p_value=p,
        ),
        _evidence("accuracy", acc),
        _evidence("mean confidence", mconf),
    ]
    corp = (document.get("metrics") or {}).get("corp") or {}
    for key, body in corp.items():
        mcb = _num((body or {}).get("mcb"))
        if mcb is not None:
            evidence.append(
                _evidence(f"CORP MCB ({key})", mcb, note=f"{option('diagnostics')}; shown, not in the rule")
            )
    evidence += _pit_tests(document)
    assumes = "independent rows; under calibration each top label is right with probability its confidence"
    how = f"accuracy {acc:.3f} vs mean confidence {mconf:.3f}, {_p(p)} (z-test at α = {ALPHA})"
    if p >= ALPHA:
        sentence = f"calibrated: no evidence of miscalibration of the top label ({how})"
        return [_aspect("calibration", "calibrated", "top-label-mean", sentence, assumes, evidence)]
    label = "overconfident" if z < 0 else "underconfident"
    where, bins = _where_off(conf, correct, w, z < 0, step)
    evidence += bins
    sentence = f"{label} (top-label confidence too {'high' if z < 0 else 'low'}): {how}{where}"
    out = [_aspect("calibration", label, "top-label-mean", sentence, assumes, evidence)]
    seed = (document.get("settings") or {}).get("seed")
    out.append(_temperature_action(prediction, seed if isinstance(seed, int) and seed >= 0 else 0))
    return out


def _where_off(conf: np.ndarray, correct: np.ndarray, w: np.ndarray, over: bool, step: float = 0.0):
    """The confidence range whose bins are off in the direction ``over`` (Bonferroni over the bins).

    Bins of (about) equal counts between confidence quantiles; every per-bin sum is one ``bincount``
    (O(n): no sort of the rows)."""
    n = len(conf)
    k = int(min(MAX_BINS, n // MIN_BIN_ROWS))
    if k < 2:
        return "", []
    # edges from every row up to 100,000 rows, from an even stride of them beyond (the bins stay close to
    # equal counts; the per-bin tests use every row)
    edges = np.quantile(conf[:: max(1, n // FIT_ROWS)], np.linspace(0.0, 1.0, k + 1))
    edges[0], edges[-1] = min(edges[0], float(conf.min())), max(edges[-1], float(conf.max()))
    which = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, k - 1)
    sw = np.bincount(which, weights=w, minlength=k)
    var = np.bincount(which, weights=w * w * conf * (1.0 - conf), minlength=k)
    d = np.bincount(which, weights=w * (correct - conf), minlength=k)
    cut = ALPHA / k
    flagged, evidence = [], []
    for i in range(k):
        if sw[i] <= 0:
            continue
        zb = math.copysign(max(abs(d[i]) - step, 0.0), d[i]) / math.sqrt(var[i]) if var[i] > 0 else 0.0
        pb = two_sided_normal_p(zb) if var[i] > 0 else 1.0
        lo, hi = float(edges[i]), float(edges[i + 1])
        evidence.append(
            _evidence(
                f"confidence bin {lo:.3f} to {hi:.3f}: accuracy - confidence",
                float(d[i] / sw[i]),
                p_value=pb,
                target=0.0,
            )
        )
        if pb < cut and (zb < 0) == over:
            flagged.append((lo, hi))
    if not flagged:
        return f"; no single one of {k} confidence bins is off on its own (Bonferroni)", evidence
    lo, hi = min(f[0] for f in flagged), max(f[1] for f in flagged)
    return (
        f"; off for confidence {lo:.2f} to {hi:.2f} ({len(flagged)} of {k} equal-count bins, Bonferroni)",
        evidence,
    )


def _temperature_action(prediction: Any, seed: int = 0) -> dict[str, Any]:
    if getattr(prediction, "kind", None) != "categorical":
        return _no_action(
            prediction.kind, "(temperature scaling takes one classifier's probabilities or logits)"
        )
    proba, labels = prediction.proba, prediction.labels
    on = "these rows"
    if len(labels) > FIT_ROWS:  # a one-parameter fit: a seeded random 100,000 rows pin it to a few per mille
        rows = np.random.default_rng(seed).choice(len(labels), FIT_ROWS, replace=False)
        proba, labels, on = proba[rows], labels[rows], f"a seeded random {FIT_ROWS:,} of these rows"
    from ..recalibration.temperature import fit_temperature

    # a probability of 0 at the label is clipped to the smallest double (recalibrate refuses it by name)
    t = fit_temperature(np.maximum(proba, np.finfo(np.float64).tiny), labels, kind="proba")["temperature"]
    sentence = (
        f"temperature scaling by T = {t:.3g} (fitted by NLL on {on}: in-sample, optimistic); fit it on "
        "held-out rows: uqeval recalibrate --method temperature"
    )
    return _aspect(
        "action",
        "temperature",
        "action-temperature",
        sentence,
        "in-sample: fitted and judged on the same rows, so optimistic; fit it on held-out rows",
        [_evidence("temperature", t)],
        command="uqeval recalibrate --method temperature",
        parameters={"temperature": t},
    )


# --------------------------------------------------------------------------------------------- compare


def holm(pvalues: list[float], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down: which hypotheses are rejected at family-wise level ``alpha``."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    reject = [False] * len(pvalues)
    m = len(pvalues)
    for rank, i in enumerate(order):
        if pvalues[i] < alpha / (m - rank):
            reject[i] = True
        else:
            break
    return reject


def comparison_aspect(document: dict[str, Any]) -> dict[str, Any]:
    """The comparison of a compare document under rule ``paired-holm``."""
    tests = [t for t in document.get("tests") or [] if isinstance(t, dict)]
    resampling = (document.get("settings") or {}).get("resampling") or {}
    scheme = resampling.get("scheme") if isinstance(resampling, dict) else None
    assumes = (
        "independent rows" if scheme in (None, "rows") else f"resampling by {scheme} (see settings)"
    ) + "; the reference of each test is the best model on that metric, chosen on the same rows"
    usable = []
    for t in tests:
        p = _num(t.get("permutation_p"))
        which = "paired permutation"
        if p is None:
            p, which = _num(t.get("dm_p")), "Diebold-Mariano"
        if p is not None:
            usable.append((t, p, which))
    if not usable:
        return _aspect(
            "comparison",
            "not tested",
            "paired-holm",
            "comparison not tested: no paired test in the document (paired tests need per-row scores)",
            assumes,
            [],
        )
    reject = holm([p for _, p, _ in usable])
    level = _num((document.get("settings") or {}).get("ci_level")) or 0.95
    evidence: list[dict[str, Any]] = []
    better: dict[tuple[str, str], list[str]] = {}
    same: list[str] = []
    for (t, p, which), r in zip(usable, reject):
        metric, model, ref = str(t.get("metric")), str(t.get("model")), str(t.get("reference"))
        diff = ((document.get("metrics") or {}).get(metric) or {}).get("values", {}).get(model, {}) or {}
        d = diff.get("diff_vs_best") if isinstance(diff, dict) else None
        est = _num((d or {}).get("estimate")) if isinstance(d, dict) else None
        est = _num(t.get("mean_diff")) if est is None else est
        low = _num((d or {}).get("low")) if isinstance(d, dict) else None
        high = _num((d or {}).get("high")) if isinstance(d, dict) else None
        evidence.append(
            _evidence(
                f"{metric}: {model} - {ref}",
                est,
                low=low,
                high=high,
                p_value=p,
                test=which,
                significant=r,
            )
        )
        interval = (
            f", {level:.0%} interval {_f(low)} to {_f(high)}" if low is not None and high is not None else ""
        )
        if r:
            by = _f(abs(est) if est is not None else None)
            better.setdefault((ref, model), []).append(f"{metric} by {by} ({_p(p)}{interval})")
        else:
            same.append(f"{metric} ({model} vs {ref}, {_p(p)}{interval})")
    how = f"{usable[0][2]} tests, Holm over {len(usable)} at α = {ALPHA}"
    if better:
        label = "distinguishable"
        parts = [f"{ref} better than {model} on {', '.join(on)}" for (ref, model), on in better.items()]
        sentence = (
            "; ".join(parts) + (f"; not distinguishable on {', '.join(same)}" if same else "") + f"; {how}"
        )
    else:
        label = "not distinguishable"
        sentence = f"not distinguishable on {'; '.join(same)}; {how}"
    return _aspect("comparison", label, "paired-holm", sentence, assumes, evidence)


# --------------------------------------------------------------------------------------------- check

_LIMIT = re.compile(r"^\s*(<=|>=)\s*([-+0-9.eEinfa]+)\s*$")


def check_aspect(document: dict[str, Any]) -> dict[str, Any]:
    """Which rule of a check failed and by how much (rule ``check-rules``)."""
    rows = [r for r in document.get("rows") or [] if isinstance(r, dict)]
    failed = [r for r in rows if r.get("status") == "FAIL"]
    evidence = []
    for r in failed:
        value, by = _num(r.get("value")), None
        m = _LIMIT.match(str(r.get("limit") or ""))
        if m and value is not None:
            try:
                limit = float(m.group(2))
            except ValueError:
                limit = None
            if limit is not None and math.isfinite(limit):
                by = value - limit if m.group(1) == "<=" else limit - value
        evidence.append(
            _evidence(
                f"{r.get('path')} {r.get('check')}",
                value,
                limit=str(r.get("limit")),
                by=by,
                line=r.get("line") if isinstance(r.get("line"), int) else None,
                message=str(r.get("message") or ""),
            )
        )
    if not failed:
        return _aspect(
            "check",
            "passed",
            "check-rules",
            f"every rule passed ({len(rows)} checks)",
            "the rules file",
            evidence,
        )
    parts = [
        f"{e['name']} {e.get('message', '')}" + (f" (by {e['by']:.3g})" if e.get("by") is not None else "")
        for e in evidence[:3]
    ]
    more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
    sentence = f"failed {len(failed)} of {len(rows)} checks: {'; '.join(parts)}{more}"
    return _aspect(
        "check", "failed", "check-rules", sentence, "the rules file (uqeval adds no test)", evidence
    )


# --------------------------------------------------------------------------------------------- monitor


def monitor_aspect(document: dict[str, Any]) -> dict[str, Any]:
    """The alarm sentence of a monitor document (issue 38): which tests are in alarm, since when, where the
    change is estimated to begin and the metric behind it; under ``--detect`` the detectors' ARL, under
    ``--test`` the family-wise level."""
    tests = [t for t in document.get("tests") or [] if isinstance(t, dict)]
    detect = document.get("mode", "test") == "detect"
    arl, alpha = _num(document.get("arl")), _num(document.get("alpha"))
    evidence = [
        _evidence(
            str(t.get("name")),
            _num(t.get("log10_e_value")),
            threshold=_log10(_num(t.get("threshold"))),
            first_alarm=None if t.get("first_alarm") is None else str(t.get("first_alarm")),
            note="log10 of the e-value (e-detector under --detect)",
        )
        for t in tests
    ]
    if detect:
        how = f"change detectors, ARL {_f(arl, 6)} windows" if arl is not None else "change detectors"
        assumes = (
            "e-detectors (Shiryaev-Roberts sums of e-processes restarted every window): false alarms on "
            "average no sooner than the ARL in windows; independent rows within a window"
        )
    else:
        how = f"anytime-valid tests at α = {alpha}" if alpha is not None else "anytime-valid tests"
        assumes = "the monitor's e-value tests (anytime-valid; Bonferroni over its tests); independent rows"
    alarms = [t for t in tests if t.get("status") == "alarm" or (t.get("status") is None and t.get("alarm"))]
    if not alarms:
        return _aspect(
            "monitor",
            "no alarm",
            "monitor-e-values",
            f"no alarm ({how}) over {len(tests)} tests",
            assumes,
            evidence,
        )

    def at(v: Any) -> str:  # a window's start: a row number, or a time
        return f"row {v}" if isinstance(v, int) else str(v)

    def one(t: dict[str, Any]) -> str:
        text = f"{t.get('name')} since {at(t.get('alarm_since', t.get('first_alarm')))}"
        if t.get("change_at") is not None:
            text += f", change estimated at {at(t.get('change_at'))}"
        metric = t.get("metric") if isinstance(t.get("metric"), dict) else None
        if metric and _num(metric.get("value")) is not None and _num(metric.get("target")) is not None:
            text += (
                f" ({metric.get('name')} {_f(_num(metric.get('value')))} vs {_f(_num(metric.get('target')))})"
            )
        return text

    sentence = f"alarm ({how}): " + "; ".join(one(t) for t in alarms[:3])
    if len(alarms) > 3:
        sentence += f" and {len(alarms) - 3} more"
    return _aspect("monitor", "alarm", "monitor-e-values", sentence, assumes, evidence)
