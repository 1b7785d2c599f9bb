"""The catalogue's building blocks: :class:`Metric`, :class:`Family`, :class:`RowStat`, the helpers the
family modules share (levels, memos, per-row uncertainty, cover indices) and the entry builders."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..config import Settings
from ..errors import InputError, option
from ..metrics.blocks import rowwise
from ..metrics.intervals import level_key
from ..predictions import Prediction, Samples, _memo  # noqa: F401  (re-exported to the catalogue)

if TYPE_CHECKING:
    from ..predictions import Dirichlet, Gaussian, MemberCategorical

Compute = Callable[[Prediction, Settings], "dict | None"]
#: ``(B, N)`` row weights (a resample counts row ``i`` ``w[b, i]`` times) -> ``(B,)`` metric values.
Resampler = Callable[[np.ndarray], np.ndarray]

REGRESSION = ("gaussian", "point", "intervals", "quantiles", "samples")
CLASSIFICATION = ("categorical", "members", "dirichlet")  # all have .proba (the predictive mean) and .labels


@dataclass(frozen=True)
class RowStat:
    """How a metric comes out of its rows, for paired tests, the bootstrap and streaming.

    - ``score``: a per-row score whose mean is the metric (a paired test can use it);
    - ``terms`` (N, k) and/or ``codes`` (N,) ints in ``[0, n_codes)`` with ``finish``: the metric
      of any weighted set of rows is ``finish(sums, total)``, where ``sums`` (B, k + n_codes) holds
      the weighted sums of the terms and the weighted counts of each code, ``total`` (B,) the
      total weights (a mergeable state: sums over chunks add up);
    - ``weighted``: the metric of weighted rows directly, ``(B, N)`` weights -> ``(B,)``, for
      metrics that need order statistics; it takes ``blas=False`` too (:meth:`resampler`).

    A metric with only a score resamples as the weighted mean of the score.
    """

    score: np.ndarray | None = None
    terms: np.ndarray | None = None
    codes: np.ndarray | None = None
    n_codes: int = 0
    finish: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
    weighted: Callable[..., np.ndarray] | None = None

    @property
    def sums_form(self) -> tuple[np.ndarray | None, np.ndarray | None, int, Callable] | None:
        """``(terms, codes, n_codes, finish)`` where the metric is a function of weighted sums, else None."""
        if self.finish is not None:
            return self.terms, self.codes, self.n_codes, self.finish
        if self.weighted is None and self.score is not None:
            return self.score[:, None], None, 0, _mean_of_first
        return None

    def resampler(self, blas: bool = True) -> Resampler | None:
        """``(B, N)`` row weights -> ``(B,)``: the metric of the rows, row ``i`` counted ``w[b, i]`` times.

        ``blas=False``: the weighted sums by :func:`numpy.einsum` instead of a matrix product, for one set of
        weights (``--weights``): a (1, N) x (N, k) product through a multi-threaded BLAS is ~50x slower on a
        busy machine. The bootstrap keeps the matrix product (its replicates bit for bit)."""
        if (
            self.weighted is not None
        ):  # (its own sums; it takes blas=, see uqeval.metrics.accuracy.accuracy_rows)
            if blas:
                return self.weighted
            weighted = self.weighted
            return lambda w: weighted(w, blas=False)
        form = self.sums_form
        if form is None:
            return None
        finish = form[3]

        def fn(w: np.ndarray) -> np.ndarray:
            w = np.asarray(w, dtype=np.float64)
            return finish(self.weighted_sums(w, blas), w.sum(axis=1))

        return fn

    def weighted_sums(self, w: np.ndarray, blas: bool = True) -> np.ndarray:
        """``(B, k + n_codes)``: the weighted sums of the terms and the weighted counts of the codes that
        :attr:`sums_form`'s ``finish`` takes, for ``(B, N)`` row weights (sums over chunks add up: the
        state of weighted streaming). ``blas``: as for :meth:`resampler`."""
        form = self.sums_form
        assert form is not None  # called for forms with sums only
        terms, codes, n_codes, _ = form
        parts = [] if terms is None else [w @ terms if blas else np.einsum("bi,ik->bk", w, terms)]
        if codes is not None:
            parts.append(np.stack([np.bincount(codes, weights=row, minlength=n_codes) for row in w]))
        return np.concatenate(parts, axis=1)

    def sums(self, w: np.ndarray | None = None) -> np.ndarray:
        """``(k + n_codes,)``: :meth:`weighted_sums` for one set of ``(N,)`` row weights, or for unit weights
        (``w`` None: plain sums and counts, no product): the streamed state of the metric (sums of chunks add
        up)."""
        if w is not None:
            return self.weighted_sums(w[None, :], blas=False)[0]
        form = self.sums_form
        assert form is not None  # called for forms with sums only
        terms, codes, n_codes, _ = form
        parts = [] if terms is None else [np.asarray(terms, dtype=np.float64).sum(axis=0)]
        if codes is not None:
            parts.append(np.bincount(codes, minlength=n_codes).astype(np.float64))
        return np.concatenate(parts)


def _mean_of_first(sums: np.ndarray, total: np.ndarray) -> np.ndarray:
    return sums[:, 0] / total


RowsFn = Callable[[Prediction, Settings, Any], "RowStat | None"]

#: the rules of the nominal level that a ``"target"``-oriented metric may aim at (:attr:`Metric.target`): the
#: target at a level, and how it is said inside a sentence ("closest to ... is best")
TARGET_RULES: dict[str, tuple[Callable[[float], float], str]] = {
    "level": (lambda level: level, "its nominal level"),
    "half_miss": (lambda level: (1.0 - level) / 2.0, "half the nominal miss rate, (1 - level)/2,"),
}


@dataclass(frozen=True)
class Metric:
    """One catalogue entry. ``path`` (``group.name``) is its key in the JSON summary."""

    group: str
    name: str
    orientation: str | None
    description: str
    representations: tuple[str, ...] = ()  # filled from the family
    #: where the direction depends on the representation (rejection: accuracy vs RMSE)
    orientation_by_kind: Mapping[str, str] = field(default_factory=dict)
    #: "mean" (a mean of per-row scores), "moments" (a function of per-row sums), "counts"
    #: (fixed-bin counts), "order" (needs order statistics or a sort), "resampling"
    #: (random draws), "curve"/"histogram" (data for plots).
    reduction: str = "order"
    #: (prediction, settings, level) -> RowStat, or None where the metric has no cheap row form
    rows_fn: RowsFn | None = None
    by_level: bool = False
    #: the representations whose family computes this metric with row weights (:attr:`Family.weighted`: its
    #: kernel given the weights), for metrics without a per-row form (binned and equal-mass calibration
    #: errors, PAV fits, sorts)
    weighted_kinds: tuple[str, ...] = ()
    #: why the metric takes no weights, where a generic reason (by :attr:`reduction`) would not say it
    no_weights: str | None = None
    #: the value a ``"target"``-oriented metric aims at: a number (``spread_skill.ratio``: 1), or the name of a
    #: rule of the nominal level in :data:`TARGET_RULES` (``"level"``: coverage; ``"half_miss"``: the share of
    #: targets below the interval); None for the other orientations (:meth:`target_at`)
    target: float | str | None = None

    @property
    def path(self) -> str:
        return f"{self.group}.{self.name}"

    @property
    def supports_weights(self) -> bool:
        """Whether the metric takes per-row weights (``--weights``, ``weights=``) in every command: it does
        where it has a per-row form (:attr:`rows_fn`), whose :meth:`RowStat.resampler` gives the metric of
        weighted rows, the same function compare's bootstrap uses. With integer weights it equals the metric
        of the rows repeated that often; weights of 0 drop rows (:func:`uqeval.catalogue.compute_weighted_metrics`).
        A metric without one may still take weights where all the rows are at hand (:meth:`takes_weights`)."""
        return self.rows_fn is not None

    def takes_weights(self, kind: str) -> bool:
        """Whether the metric takes weights for ``kind`` predictions in memory (score, check, report,
        ``uqeval.evaluate``: :func:`uqeval.catalogue.compute_weighted_metrics`): by its per-row form
        (:attr:`supports_weights`) or by its family's kernels given the weights (:attr:`weighted_kinds`)."""
        return self.rows_fn is not None or kind in self.weighted_kinds

    @property
    def unweighted_reason(self) -> str | None:
        """Why the metric takes no weights in every command (None where it does): said wherever weights are
        refused (compare's metrics, check's rules)."""
        if self.supports_weights:
            return None
        if self.weighted_kinds:
            return (
                "its weighted form needs all the rows at once (no per-row form): every command computes it, "
                "compare without bootstrap intervals or paired tests"
            )
        if self.no_weights is not None:
            return self.no_weights
        return {
            "order": "it needs order statistics, a sort or bins of the rows, and has no weighted form",
            "resampling": "it draws random subsets of the rows, and has no weighted form",
            "curve": "it is a curve for plots, not a weighted summary",
            "histogram": "it is a histogram for plots, not a weighted summary",
        }.get(self.reduction, "it has no per-row form to weight")

    def unweighted_reason_for(self, kind: str) -> str | None:
        """Why the metric takes no weights for ``kind`` predictions in memory (None where it does)."""
        if self.takes_weights(kind):
            return None
        if self.weighted_kinds:  # weighted for other representations
            return self.no_weights or f"it has no weighted form for {kind} predictions"
        return self.unweighted_reason

    def target_at(self, level: float | None = None) -> float | None:
        """The value this metric aims at (its :attr:`target`), at the nominal ``level`` for a rule of the level;
        None where it has none, or where its target is a rule of the level and ``level`` is None."""
        if self.target is None or isinstance(self.target, (int, float)):
            return None if self.target is None else float(self.target)
        return None if level is None else TARGET_RULES[self.target][0](float(level))

    @property
    def target_text(self) -> str | None:
        """The target in words, as said inside a sentence (``"1"``, ``"its nominal level"``: ``uqeval explain``'s
        "closest to ... is best"), or None where the metric has none."""
        if self.target is None or isinstance(self.target, (int, float)):
            return None if self.target is None else f"{float(self.target):g}"
        return TARGET_RULES[self.target][1]

    def orientation_for(self, kind: str | None) -> str | None:
        return self.orientation_by_kind.get(kind, self.orientation) if kind is not None else self.orientation

    def applies_to(self, kind: str) -> bool:
        return kind in self.representations

    @property
    def explanation(self) -> dict[str, str] | None:
        """Title, text, formula and reference (:mod:`uqeval.glossary`)."""
        from ..glossary import find_entry

        found = find_entry(self.path)
        return found[1] if found else None


@dataclass(frozen=True)
class Family:
    """Metrics computed together by one kernel call per representation."""

    name: str
    metrics: tuple[Metric, ...]
    compute: Mapping[str, Compute]
    by_level: bool = False
    #: a Settings field that must be set (truthy) for the family to be computed, e.g.
    #: ``"diagnostics"`` (``--diagnostics``); None: always computed where it applies
    option: str | None = None
    #: a long computation (spce's bootstrap): :func:`uqeval.catalogue.compute_metrics`, which computes the
    #: families in two threads, starts it first
    background: bool = False
    #: a long family that needs no thread of its own (CORP's sort and PAV fit): where two threads run, it
    #: is handed out right after the background ones, so that the two threads finish at about the same
    #: time instead of one waiting for it at the end (issue 31)
    heavy: bool = False
    #: modules its kernels import when they run (absolute names): where a background family applies,
    #: :func:`uqeval.catalogue.compute_metrics` imports them before it starts a second thread, so that no
    #: import runs in two threads at once (a concurrent circular import, or the CLI's lazy numpy modules,
    #: could hand one thread a half-initialised module). Declared by the families of the classification
    #: representations, the only ones with a background family
    imports: tuple[str, ...] = ()
    #: why the family's metrics are not defined for a prediction of a representation it applies to (the
    #: average calibration curve of quantiles at a single level), or None where they are. Such a family is
    #: computed nowhere (:func:`uqeval.catalogue.compute` and the per-row forms give nothing, in memory and
    #: streamed alike) and :func:`uqeval.catalogue.not_defined` gives the reason for the notes
    undefined: Callable[[Prediction], str | None] | None = None
    #: the representations whose compute function takes ``(N,)`` row weights as a third argument (its
    #: kernel with a weights argument; :func:`uqeval.catalogue.compute_weighted_metrics`). Of its result the
    #: metrics without a per-row form are kept (:attr:`Metric.weighted_kinds`; those with one are weighted
    #: by it, as in every family); with unit weights it equals the unweighted result to rounding
    weighted: tuple[str, ...] = ()
    #: where some of those weighted metrics are functions of weighted sums over fixed cells (the even bins of
    #: ECE, MCE and SCE; the (predicted class, label) cells of the Brier decomposition): ``(pred, settings,
    #: weights) -> sums``, whose sums over chunks add up, and ``(sums, settings) -> {metric: value}`` of the
    #: metrics they give (``weights`` None: unit weights). The streaming engines stream those exactly, weighted
    #: or not (:mod:`uqeval.catalogue.weighted`, :mod:`uqeval.catalogue.states`)
    weighted_sums: Callable[[Prediction, Settings, np.ndarray | None], np.ndarray | None] | None = None
    from_sums: Callable[[np.ndarray, Settings], dict] | None = None
    #: a by-level family's level keys for a prediction (the keys of its kernel's result, without running it:
    #: the streamed sums of its per-row forms are taken at these), or None (the keys of the kernel's result)
    levels: Callable[[Prediction, Settings], list[str]] | None = None

    def enabled(self, settings: Settings | None) -> bool:
        return self.option is None or settings is not None and bool(getattr(settings, self.option, None))

    def why_undefined(self, pred: Prediction) -> str | None:
        """Why this family's metrics are not defined for ``pred`` (see :attr:`undefined`), or None."""
        return None if self.undefined is None else self.undefined(pred)

    @property
    def representations(self) -> tuple[str, ...]:
        return tuple(self.compute)


# --------------------------------------------------------------------------- helpers


def _expected(s: Settings) -> np.ndarray:
    from ..metrics.calibration import expected_proportions

    return expected_proportions(s.num_bins)


def coverage_levels(p: Prediction, s: Settings) -> list[float]:
    """Central levels a representation is scored at: ``--levels`` (default 0.95) where any level
    exists (Gaussians, samples), else the levels the file carries or the requested subset of them."""
    carried = p.carried_levels()
    if carried is None:
        return list(s.levels or (0.95,))
    return pick_levels(carried, s.levels, f"the {p.kind} columns carry central levels")


def pick_levels(available, requested, where: str, error: type[Exception] = InputError) -> list[float]:
    """The ``requested`` levels (all ``available`` ones if None), matched by level key.

    A requested level that is not available raises ``error`` naming it and ``where`` they come from.
    """
    available = [float(v) for v in available]
    if not requested:
        return available
    keys = {level_key(c): c for c in available}
    missing = [lv for lv in requested if level_key(lv) not in keys]
    if missing:
        raise error(
            f"{option('levels', ', '.join(level_key(m) for m in missing))} not available: {where} "
            f"{', '.join(keys) or 'none'}"
        )
    return [keys[level_key(lv)] for lv in requested]


def error_spread(p: Prediction) -> np.ndarray:
    """The predicted standard deviation of ``y − point`` that spread calibration and spread–skill compare with
    the error: σ of a Gaussian; for samples the members' ddof-1 standard deviation times √((M + 1)/M)
    (:meth:`uqeval.predictions.Samples.ensemble_spread`, the finite-ensemble correction)."""
    if isinstance(p, Samples):
        return p.ensemble_spread()
    spread = p.spread()
    if spread is None:  # the families that call this apply to Gaussians and samples only
        raise InputError(f"{p.kind} predictions carry no predicted standard deviation")
    return spread


def per_row_uncertainty(p: Prediction) -> dict[str, np.ndarray] | None:
    """Per-row ``total``/``aleatoric``/``epistemic`` (nats) of an ensemble or Dirichlet prediction, else None.

    Ensembles (``members``): entropy of the mean, mean member entropy and their difference
    (mutual information). Dirichlet outputs: the same decomposition of Dir(alpha); the
    epistemic part is the knowledge uncertainty MI[y, pi]. Computed once per prediction.
    """
    from ..metrics.ensembles import dirichlet_uncertainty_per_row

    if p.kind == "members":
        rows = _member_rows(p)
        return {k: rows[k] for k in ("total", "aleatoric", "epistemic")}
    if p.kind == "dirichlet":
        return _memo(p, "uncertainty_rows", lambda: dirichlet_uncertainty_per_row(cast("Dirichlet", p).alpha))
    return None


def _member_rows(p: Prediction) -> dict[str, np.ndarray]:
    """Per-row terms of the ensemble uncertainty and diversity families: one pass over (N, M, K)."""
    from ..metrics.ensembles import member_rows

    m = cast("MemberCategorical", p)  # the ensemble families run on members predictions only
    return _memo(
        p, "member_rows", lambda: member_rows(m.member_proba, None if m.y_true is None else m.labels)
    )


def _cover_index(p: Prediction, s: Settings) -> np.ndarray:
    """First expected central level whose interval holds each row (interval-mode calibration), as the
    smallest unsigned integers that hold ``0 .. num_bins`` (one byte a row up to 255 bins: it is kept
    for the bootstrap of every model that ``compare`` resamples)."""
    expected = _expected(s)
    dtype = np.min_scalar_type(expected.size)

    def make():
        if p.kind == "gaussian":  # exact on |z|, as the toolbox (no round trip through the PIT)
            from ..metrics.calibration import interval_cover_index

            g = cast("Gaussian", p)
            return rowwise(
                lambda y, mean, std: interval_cover_index(np.abs(y - mean) / std, expected),
                # metrics are computed for predictions with targets only (catalogue.rows, compute_metrics)
                g.y_true,  # type: ignore[arg-type]
                g.mean,
                g.std,
                dtype=dtype,
            )
        from ..metrics.quantiles import pit_cover_index

        # the other every-level kinds (samples, climatology, point mass) have an exact PIT, never None
        return pit_cover_index(p.pit(), expected).astype(dtype)  # type: ignore[arg-type]

    return _memo(p, f"cover_index_{s.num_bins}", make)


# --------------------------------------------------------------------------- the catalogue


def _m(name: str, orientation: str | None, description: str, reduction: str = "order", **kw) -> dict:
    return dict(name=name, orientation=orientation, description=description, reduction=reduction, **kw)


def _family(
    name: str,
    specs: list[dict],
    compute: Mapping[str, Compute],
    rows: Callable | None = None,
    by_level: bool = False,
    no_rows: tuple[str, ...] = (),
    option: str | None = None,
    background: bool = False,
    heavy: bool = False,
    imports: tuple[str, ...] = (),
    undefined: Callable[[Prediction], str | None] | None = None,
    weighted: tuple[str, ...] = (),
    no_weights: Mapping[str, str] | None = None,
    other_kinds: str | None = None,
    weighted_sums: Callable[[Prediction, Settings, np.ndarray | None], np.ndarray | None] | None = None,
    from_sums: Callable[[np.ndarray, Settings], dict] | None = None,
    levels: Callable[[Prediction, Settings], list[str]] | None = None,
) -> Family:
    """A family whose metrics share a per-row form ``rows(p, s, level) -> {metric: RowStat}``.

    ``weighted``: the representations whose compute function takes row weights (:attr:`Family.weighted`);
    its metrics take weights there, except those named in ``no_weights`` (name -> why not). ``other_kinds``:
    why the family's metrics take no weights for its other representations. ``weighted_sums``, ``from_sums``:
    the mergeable weighted sums of the metrics that are functions of them (:attr:`Family.weighted_sums`)."""

    def family_rows(p, s, level):  # one computation per prediction, settings and level for all its metrics
        if undefined is not None and undefined(p) is not None:  # not defined for this data: no per-row form
            return {}
        key = ("rows", name, level, s.resolution, s.num_bins, s.y_std, option and getattr(s, option, None))
        assert rows is not None  # family_rows is only used when rows is given (below)
        return _memo(p, key, lambda: rows(p, s, level) or {})

    metrics = []
    for spec in specs:
        fn = None
        if rows is not None and spec["name"] not in no_rows and spec.get("orientation") is not None:
            fn = (lambda key: lambda p, s, level=None: family_rows(p, s, level).get(key))(spec["name"])
        spec.setdefault("representations", tuple(compute))
        refused = (no_weights or {}).get(spec["name"])
        # the kernels' weights reach the metrics without a per-row form (those with one take its weights)
        kinds = (
            () if refused or fn is not None else tuple(k for k in weighted if k in spec["representations"])
        )
        metrics.append(
            Metric(
                group=name,
                rows_fn=fn,
                by_level=by_level,
                weighted_kinds=kinds,
                no_weights=refused or (other_kinds if kinds else None),
                **spec,
            )
        )
    return Family(
        name,
        tuple(metrics),
        compute,
        by_level,
        option,
        background,
        heavy,
        imports,
        undefined,
        weighted,
        weighted_sums,
        from_sums,
        levels,
    )
