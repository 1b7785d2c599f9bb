"""Weighted streaming: ``--weights`` with ``--engine stream`` and ``--engine dask``.

The state of some rows holds, per weighted metric (and level), the weighted sums of its per-row form
(:meth:`uqeval.catalogue.RowStat.weighted_sums`: weighted sums of terms and weighted counts of codes) and the
total weight; states merge by adding them, and the metric is the form's ``finish`` of the merged sums, the
function the in-memory run applies to the sums of all rows at once: stream and memory agree to rounding
(~1e-15). The per-row forms come from :func:`uqeval.catalogue.weighted_forms`, as in memory.

The weighted RMSE, R² and correlation are kept as weighted moments and the weighted MdAE as a histogram of
weights over float bit patterns (the family's mergeable state, :data:`uqeval.catalogue.states.SPECIAL`, given
the weights); the MdAE is finished by a second pass over the rows (:func:`uqeval.catalogue.states.selection`,
:func:`~uqeval.catalogue.states.second_state` with the weights), which ``score`` makes for the whole data and
each ``--by`` group. The state has the layout of the unweighted one, and merges and finishes by the same
functions. Metrics whose family kernels take the weights and need every row (the equal-mass calibration
errors, CORP, ENCE/UCE, rejection curves, RS/ACCRUE, the calibration tests, ...) are not streamed with
weights: they are named in ``input.not_streamed``. A family whose kernels take the weights streams the
metrics that are functions of its weighted cell sums (:attr:`uqeval.catalogue.Family.weighted_sums`: ECE,
MCE, SCE, the Brier decomposition), added up over the chunks like the per-row sums, and those of its weighted
mergeable state (the information criteria's standard errors: the weighted moments of
:class:`~uqeval.catalogue.states.RowTermMoments`, the unweighted state's at unit weights). Metrics that take
no weights at all are named in ``weights.not_weighted``, as in memory.
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
#: and each group
TWO_PASS = ("mdae",)
NOT_STREAMED_TWO_PASS = (
    "its weighted form needs a second pass over the rows (score makes one, for the whole data and each "
    "group; compare and monitor windows do not); score in memory"
)
#: the metrics whose family kernels take the weights (:attr:`uqeval.catalogue.Family.weighted`)
NOT_STREAMED_KERNEL = (
    "its weighted form needs all the rows at once (equal-mass bins, a PAV fit or a sort of the weighted "
    "rows); score in memory"
)


def weighted_state(pred: Prediction, settings: Settings, weights: np.ndarray) -> State:
    """The weighted state of one batch of rows (rows of weight 0 dropped first, as in memory), laid out as the
    unweighted one (:func:`uqeval.catalogue.states.batch_state`: per family the ``sums`` of the per-row forms,
    the ``cells`` sums, the ``special`` state), so :func:`~uqeval.catalogue.states.merge`,
    :func:`~uqeval.catalogue.states.selection` and :func:`~uqeval.catalogue.states.finalize` serve both; plus
    the total weight ``w``, the rows of weight 0 ``n_zero`` and the metrics ``not_weighted`` and
    ``not_streamed`` with their reasons."""
    from ..weights import drop_zero
    from . import weighted_forms
    from .states import sums_key

    w, (pred,), n_zero = drop_zero(weights, pred)
    if not w.size:
        return {"n": 0, "families": {}, "n_zero": n_zero}
    forms, families, not_weighted = weighted_forms(pred, settings)
    fams: dict[str, dict[str, Any]] = {}
    # a family weighted by its kernels streams the metrics that are functions of its weighted cell sums
    # (Family.weighted_sums: ECE, MCE, SCE, the Brier decomposition) or of its weighted mergeable state (the
    # information criteria's standard errors); the others (equal-mass bins, PAV fits, sorts) need every row:
    # named, never streamed with a different number
    not_streamed: dict[str, str] = {}
    for f in families:
        summed: set[str] = set()
        if f.weighted_sums is not None and f.from_sums is not None:
            cells = f.weighted_sums(pred, settings, w)
            if cells is None:  # the family does not apply to these data (as its kernel's None in memory)
                continue
            fams[f.name] = {"cells": cells}
            summed = set(f.from_sums(cells, settings))
        kernel = [m for m in f.metrics if pred.kind in m.weighted_kinds and m.name not in summed]
        sp = next((x for m in kernel if (x := weighted_special(f.name, pred.kind, m.name))), None)
        if sp is not None:
            st = sp.update(pred, settings, w)
            if st is None:  # the family does not apply to these data (as its kernel's None in memory)
                continue
            fams.setdefault(f.name, {})["special"] = st
            summed.update(sp.metrics)
        not_streamed.update({m.path: NOT_STREAMED_KERNEL for m in kernel if m.name not in summed})
    for f, key, m, stat in forms:
        entry = fams.setdefault(f.name, {})
        if stat.sums_form is not None:
            entry.setdefault("sums", {})[sums_key(key, m.name, stat)] = stat.sums(w)
        elif (sp := weighted_special(f.name, pred.kind, m.name)) is not None:  # weighted moments; MdAE
            if "special" not in entry:
                entry["special"] = sp.update(pred, settings, w)
            if m.name in TWO_PASS:  # exact after a second pass over the rows (score, whole data)
                not_streamed[m.path] = NOT_STREAMED_TWO_PASS
        else:
            not_streamed[m.path] = NOT_STREAMED
    return {
        "n": pred.n,
        "kind": pred.kind,
        "families": {k: v for k, v in fams.items() if v},
        "w": float(w.sum()),
        "n_zero": n_zero,
        "not_weighted": not_weighted,
        "not_streamed": not_streamed,
        "probe": pred.subset(np.arange(min(pred.n, 2))),  # the finishing functions' settings and levels
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

    return cast("Special", SPECIAL[family](kind))  # (a family with a "special" entry has one)
