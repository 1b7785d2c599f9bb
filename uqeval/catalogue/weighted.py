"""Weighted streaming: ``--weights`` with ``--engine stream`` and ``--engine dask``.

The state of some rows holds, per weighted metric (and level), the weighted sums of its per-row form
(:meth:`uqeval.catalogue.RowStat.weighted_sums`: weighted sums of terms and weighted counts of codes) and the
total weight; states merge by adding them, and the metric is the form's ``finish`` of the merged sums, the
function the in-memory run applies to the sums of all rows at once: stream and memory agree to rounding
(~1e-15). The per-row forms come from :func:`uqeval.catalogue.weighted_forms`, as in memory.

The weighted RMSE, R² and correlation are kept as weighted moments and the weighted MdAE as a histogram of
weights over float bit patterns (the family's mergeable state, :data:`uqeval.catalogue.states.SPECIAL`, given
the weights: ``specials``); the MdAE is finished by a second pass over the rows (:func:`weighted_selection`,
:func:`weighted_second_state`), which ``score`` makes for the whole data. Metrics whose family kernels take the
weights and need every row (the equal-mass calibration errors, CORP, ENCE/UCE, rejection curves, RS/ACCRUE,
the calibration tests, ...) are not streamed with weights: they are named in ``input.not_streamed``. A family
whose kernels take the weights streams the metrics that are functions of its weighted cell sums
(:attr:`uqeval.catalogue.Family.weighted_sums`: ECE, MCE, SCE, the Brier decomposition and the information
criteria's standard errors), added up over the chunks like the per-row sums. Metrics that take no weights at
all are named in ``weights.not_weighted``, as in memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..config import Settings
from ..predictions import Prediction

if TYPE_CHECKING:
    from .states import Special

State = dict[str, Any]

NOT_STREAMED = "its weighted form needs all the rows at once (not a function of sums); score in memory"
#: the metrics exact after a second pass over the rows (the weighted MdAE); ``score`` makes it for the whole data
TWO_PASS = ("mdae",)
NOT_STREAMED_TWO_PASS = (
    "its weighted form needs a second pass over the rows (score makes one for the whole data; score --by "
    "groups and monitor windows do not); score in memory"
)
#: the metrics whose family kernels take the weights (:attr:`uqeval.catalogue.Family.weighted`)
NOT_STREAMED_KERNEL = (
    "its weighted form needs all the rows at once (equal-mass bins, a PAV fit or a sort of the weighted "
    "rows); score in memory"
)


def weighted_state(pred: Prediction, settings: Settings, weights: np.ndarray) -> State:
    """The weighted state of one batch of rows (rows of weight 0 dropped first, as in memory)."""
    from . import weighted_forms

    w = np.asarray(weights, dtype=np.float64)
    n_zero = int((w == 0).sum())
    if n_zero:
        keep = w > 0
        if not keep.any():
            return {"n": 0, "families": {}, "n_zero": n_zero}
        pred, w = pred.subset(keep), w[keep]
    forms, families, not_weighted = weighted_forms(pred, settings)
    sums: dict[tuple[str, str | None, str], np.ndarray] = {}
    # a family weighted by its kernels streams the metrics that are functions of its weighted cell sums
    # (Family.weighted_sums: ECE, MCE, SCE, the Brier decomposition); the others (equal-mass bins, PAV fits,
    # sorts) need every row: named, never streamed with a different number
    family_sums: dict[str, np.ndarray] = {}
    not_streamed: dict[str, str] = {}
    for f in families:
        summed: set[str] = set()
        if f.weighted_sums is not None and f.from_sums is not None:
            cells = f.weighted_sums(pred, settings, w)
            if cells is None:  # the family does not apply to these data (as its kernel's None in memory)
                continue
            family_sums[f.name] = cells
            summed = set(f.from_sums(cells, settings))
        not_streamed.update(
            {
                m.path: NOT_STREAMED_KERNEL
                for m in f.metrics
                if pred.kind in m.weighted_kinds and m.name not in summed
            }
        )
    specials: dict[str, Any] = {}
    for f, key, m, stat in forms:
        if stat.sums_form is not None:
            sums[(f.name, key, m.name)] = stat.weighted_sums(w[None, :], blas=False)[0]
        elif (
            weighted_special(f.name, pred.kind, m.name) is not None
        ):  # weighted moments; MdAE's weighted histogram
            if f.name not in specials:
                specials[f.name] = cast("Special", weighted_special(f.name, pred.kind, m.name)).update(
                    pred, settings, w
                )
            if m.name in TWO_PASS:  # exact after a second pass over the rows (score, whole data)
                not_streamed[m.path] = NOT_STREAMED_TWO_PASS
        else:
            not_streamed[m.path] = NOT_STREAMED
    return {
        "n": pred.n,
        "kind": pred.kind,
        "families": {},  # no unweighted state (uqeval.catalogue.states.selection finds no second pass)
        "w": float(w.sum()),
        "n_zero": n_zero,
        "sums": sums,
        "family_sums": family_sums,
        "specials": specials,
        "not_weighted": not_weighted,
        "not_streamed": not_streamed,
        "probe": pred.subset(np.arange(min(pred.n, 2))),  # the finishing functions' settings and levels
    }


def merge_weighted(a: State, b: State) -> State:
    """Two weighted states combined (associative; an empty state is the identity)."""
    if not a["n"] or not b["n"]:
        out = dict(b if not a["n"] else a)
        out["n_zero"] = a.get("n_zero", 0) + b.get("n_zero", 0)
        return out
    sums = dict(a["sums"])
    for k, v in b["sums"].items():
        sums[k] = sums[k] + v if k in sums else v
    family_sums = dict(a.get("family_sums", {}))
    for name, v in b.get("family_sums", {}).items():
        family_sums[name] = family_sums[name] + v if name in family_sums else v
    specials = dict(a.get("specials", {}))
    for name, v in b.get("specials", {}).items():
        specials[name] = (
            weighted_special_of(name, a["kind"]).merge(specials[name], v) if name in specials else v
        )
    return {
        **a,
        "specials": specials,
        "n": a["n"] + b["n"],
        "w": a["w"] + b["w"],
        "n_zero": a["n_zero"] + b["n_zero"],
        "sums": sums,
        "family_sums": family_sums,
        "not_weighted": {**a["not_weighted"], **b["not_weighted"]},
        "not_streamed": {**a["not_streamed"], **b["not_streamed"]},
    }


def finalize_weighted(
    state: State, settings: Settings, sel: dict[str, Any] | None = None, second: State | None = None
) -> tuple[dict[str, Any], dict[str, str]]:
    """``(metrics, orientation)`` of a merged weighted state, laid out as in memory; with the second pass
    (``sel`` of :func:`weighted_selection`, ``second`` of :func:`weighted_second_state`s merged), MdAE too."""
    from . import METRICS, assemble, get_family, rows

    values = []
    total = np.array([state["w"]])
    for (family, key, name), sums in state["sums"].items():
        stat = rows(METRICS[f"{family}.{name}"], state["probe"], settings, key)
        form = None if stat is None else stat.sums_form
        assert form is not None  # the probe's rows have the form the batches had
        values.append(
            (get_family(family), key, METRICS[f"{family}.{name}"], float(form[3](sums[None, :], total)[0]))
        )
    results = {}
    for name, cells in state.get("family_sums", {}).items():
        f = get_family(name)
        assert f.from_sums is not None  # (weighted_state kept the sums of such families only)
        keep = {m.name for m in f.metrics if state["kind"] in m.weighted_kinds}
        results[name] = {k: v for k, v in f.from_sums(cells, settings).items() if k in keep}
    for name, st in state.get("specials", {}).items():
        sp = weighted_special_of(name, state["kind"])
        done = sp.finalize(st, settings)
        if sel and second and name in sel:
            done.update(sp.finalize2(st, sel[name], second[name], settings))
        values += [(get_family(name), None, METRICS[f"{name}.{k}"], float(v)) for k, v in done.items()]
    return assemble(values, state["kind"], results)


def weighted_selection(state: State) -> dict[str, Any] | None:
    """What the second pass over the rows collects for the weighted states' two-pass metrics (MdAE), or None."""
    from .states import unpack

    out = {}
    for name, st in state.get("specials", {}).items():
        sel = weighted_special_of(name, state["kind"]).select(unpack(st))
        if sel is not None:
            out[name] = sel
    return out or None


def weighted_second_state(
    sel: dict[str, Any], pred: Prediction, settings: Settings, weights: np.ndarray
) -> State:
    """The second-pass state of one batch of weighted rows (rows of weight 0 dropped, as in the first pass)."""
    w = np.asarray(weights, dtype=np.float64)
    keep = w > 0
    if not keep.all():
        pred, w = pred.subset(keep), w[keep]
    return {
        name: weighted_special_of(name, pred.kind).update2(v, pred, settings, w) for name, v in sel.items()
    }


def weighted_special(family: str, kind: str, metric: str) -> Special | None:
    """The family's mergeable state (:data:`uqeval.catalogue.states.SPECIAL`) where it takes row weights and
    gives ``metric``, else None."""
    from .states import SPECIAL

    make = SPECIAL.get(family)
    sp = make(kind) if make else None
    return sp if sp is not None and sp.weighted and metric in sp.metrics else None


def weighted_special_of(family: str, kind: str) -> Special:
    from .states import SPECIAL

    return cast("Special", SPECIAL[family](kind))  # (a family with a state in "specials" has one)
