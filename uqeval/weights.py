"""Per-row weights (``--weights COL``, ``weights=``, ``[columns] weights``): their checks and the JSON block
that says how they were used.

A weight is how many times a row counts: area weights on a grid, importance or survey weights. Every metric
that takes weights (:meth:`uqeval.catalogue.Metric.takes_weights`: by its per-row form, or by its family's
kernels given the weights) is computed from the weighted rows (:func:`uqeval.catalogue.compute_weighted_metrics`);
with integer weights it equals the metric of the rows repeated that often, and rows of weight 0 are dropped.
Scaling every weight by the same factor changes nothing. The calibration tests and the information criteria's
standard errors take the statistic of the weighted rows with Kish's effective number of rows as their number
of independent rows (:func:`uqeval.metrics.rowweights.effective_rows`; docs/guide/weights.md). A metric that
takes no weights (those that draw at random) is never computed unweighted: it is left out and named, with
the reason, in the summary's ``weights.not_weighted``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import InputError, UsageError, option


def check_weights(
    weights: Any,
    column: str | None = None,
    rows: np.ndarray | None = None,
    n: int | None = None,
    offset: int = 0,
    require_positive: bool = True,
) -> np.ndarray:
    """``weights`` as a float64 (N,) array, or an :class:`InputError` naming ``column`` (or the ``weights``
    option) and the first bad row (``rows``: the file's row number of each entry, else ``offset`` + its
    position).

    Weights must be finite and >= 0, and (``require_positive``) not all 0; ``n``: the number of rows they
    must match.
    """
    name = f"column '{column}'" if column else option("weights")
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"weights in {name} must be numbers") from None
    if w.ndim != 1:
        raise InputError(f"weights in {name} must be one number per row, found shape {w.shape}")
    if n is not None and w.size != n:
        raise InputError(f"weights in {name} has {w.size} rows but the predictions have {n}")
    for bad, what in ((~np.isfinite(w), "NaN/inf"), (w < 0, "negative")):
        idx = np.flatnonzero(bad)
        if idx.size:
            i = int(idx[0])
            row = int(rows[i]) if rows is not None else offset + i
            raise InputError(
                f"weights must be finite and >= 0: {idx.size} {what} value(s) in {name} "
                f"(first at row {row}, found {w[i]:g}); give rows that should not count weight 0"
            )
    with np.errstate(over="ignore"):
        total = w.sum()
    if not np.isfinite(total):
        i = int(np.argmax(w))
        row = int(rows[i]) if rows is not None else offset + i
        raise InputError(
            f"weights in {name} sum to more than the largest float (the largest at row {row}: {w[i]:g}); "
            "scale them down: only their ratios matter"
        )
    if require_positive and not (w > 0).any():
        raise InputError(f"weights in {name} are all 0: no row counts; give some rows a positive weight")
    return w


def drop_zero(weights: np.ndarray, *rows: Any) -> tuple[np.ndarray, list[Any], int]:
    """Rows of weight 0 dropped, the one rule of every weighted computation (exactly the result without
    them): ``(the positive weights, each of rows on those rows, how many rows were dropped)``. A row set
    is a prediction (its ``subset``), an array (its first axis) or None (left None); nothing is copied when
    no weight is 0. ``weights`` must have been checked (:func:`check_weights`: finite, >= 0)."""
    w = np.asarray(weights, dtype=np.float64)
    keep = w > 0
    if keep.all():
        return w, list(rows), 0
    kept = [
        None if r is None else r.subset(keep) if hasattr(r, "subset") else np.asarray(r)[keep] for r in rows
    ]
    return w[keep], kept, int(w.size - np.count_nonzero(keep))


def weights_block(
    column: str | None, total: float, n_zero: int, not_weighted: dict[str, str]
) -> dict[str, Any]:
    """The summary's ``weights`` object: the column (None for an array), the sum of the weights, how many
    rows have weight 0, and ``not_weighted``: every applicable metric that takes no weights, with the reason
    (those metrics are not computed)."""
    return {
        "column": column,
        "sum": float(total),
        "n_zero": int(n_zero),
        "not_weighted": dict(sorted(not_weighted.items())),
    }


def refuse_weights(what: str, fix: str = "leave it out for unweighted results") -> UsageError:
    """The error of a command or function that does not take weights yet (never run unweighted silently)."""
    return UsageError(
        f"{option('weights')} is not supported by {what} yet (weights are taken by score, check, compare, "
        f"ucc, coverage, report and monitor, and by uqeval.evaluate / evaluate_file / compare / ucc / monitor); {fix}"
    )
