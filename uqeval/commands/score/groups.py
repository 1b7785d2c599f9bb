"""``uqeval score --by COL --engine stream``: one mergeable state per group value.

A batch's rows are split by their ``--by`` label (:func:`uqeval.commands.score.core.group_labels`, the labels of
the in-memory ``--by``) and each part updates its group's state (:func:`uqeval.catalogue.states.batch_state`);
the states of a group merge with :func:`~uqeval.catalogue.states.merge` like the whole file's, so a dict of
states keyed by label is itself mergeable (union of keys, merge on common keys). The whole file's state is
the merge of the batch's group states (no metric is computed twice). Exact metrics equal the in-memory
``--by`` ones to float rounding; the two-pass MdAE selects its rows per group (weighted or not). Between batches a group's
large histograms are kept as their non-zeros (:func:`pack`), so memory grows with the rows of a group, not
with the 2**20 bins of each histogram.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...catalogue import states
from ...catalogue.states import pack, unpack
from ...config import Settings
from .core import check_group_count
from .stream import Partial

if TYPE_CHECKING:
    from ...engine.fold import Piece


def _split(batch) -> list[tuple[str, np.ndarray]]:
    """``(label, row indices)`` of each group in a batch, labels sorted (a loop over groups, not rows)."""
    from .core import group_labels

    labels = group_labels(batch.groups)
    values, inverse = np.unique(labels, return_inverse=True)
    return [(str(v), np.flatnonzero(inverse == j)) for j, v in enumerate(values)]


def merge_groups(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two ``{label: (packed) state}`` dicts combined: the union of labels, common ones merged
    (:func:`~uqeval.catalogue.states.merge`, associative)."""
    out = dict(a)
    for label, st in b.items():
        out[label] = states.merge(out[label], st) if label in out else st
    return out


class GroupedPartial(Partial):
    """A :class:`~uqeval.commands.score.stream.Partial` that also keeps one state per ``--by`` label (``groups``)
    and, after the second pass, the per-group selections and second-pass states (``group_selection``,
    ``group_second``)."""

    def __init__(self, settings: Settings | None = None, needs_all_rows: bool = False) -> None:
        super().__init__(settings, needs_all_rows)
        self.groups: dict[str, Any] = {}
        self.group_selection: dict[str, Any] = {}
        self.group_second: dict[str, Any] = {}
        self.path = ""

    def add(self, piece: Piece) -> None:
        self.path = piece.file  # (for the message of too many groups)
        super().add(piece)

    def batch_state(self, batch, settings: Settings):
        from .stream import batch_weights

        whole = states.init()
        for label, idx in _split(batch):
            # (weighted: the group's rows of weight 0 dropped and counted)
            st = states.batch_state(
                batch.prediction.subset(idx), settings, weights=batch_weights(batch, settings, idx)
            )
            whole = states.merge(whole, st)
            self.groups = merge_groups(self.groups, {label: pack(st)})
            check_group_count(len(self.groups), self.path)
        return whole

    # a GroupedPartial is only ever merged with another of the same grouped run (narrower than Partial)
    def merge_sums(self, other: GroupedPartial) -> GroupedPartial:  # type: ignore[override]
        """Both parts' rows: the whole state as :meth:`Partial.merge_sums`, the groups by :func:`merge_groups`."""
        out = cast("GroupedPartial", Partial.merge_sums(self, other))
        out.groups = merge_groups(self.groups, other.groups)
        out.path = self.path or other.path
        check_group_count(len(out.groups), self.path or other.path)
        return out

    def selections(self) -> dict[str, Any]:
        """``{label: selection}`` of the groups whose metrics need a second pass (exact MdAE, weighted or not;
        a group whose weights are all 0 has no rows, so none)."""
        return {g: sel for g, st in self.groups.items() if (sel := states.selection(unpack(st))) is not None}

    def add_second(
        self, second, group_second: dict[str, Any], kind: str, group_selection: dict | None = None
    ) -> None:
        """Fold second-pass states (of some rows) into the whole data's and each group's."""
        super().add_second(second, group_second, kind)
        self.group_selection = group_selection or self.group_selection
        for label, st in group_second.items():
            self.group_second[label] = states.merge_second(self.group_second.get(label), st, kind)


def second_states(
    batches, settings: Settings, sel: dict | None, group_sel: dict[str, Any]
) -> tuple[Any, dict[str, Any]]:
    """``(second-pass state of all rows, {label: second-pass state})`` of ``batches`` for the selections
    :func:`uqeval.catalogue.states.selection` made of the whole data (``sel``) and of each group (``group_sel``)."""
    from .stream import batch_weights

    second: Any = None
    group_second: dict[str, Any] = {}
    for batch in batches:
        pred = batch.prediction
        if pred is None:
            continue
        if sel is not None:
            weights = batch_weights(batch, settings)
            second = states.merge_second(second, states.second_state(sel, pred, settings, weights), pred.kind)
        if not group_sel:  # (no group needs a second pass: no split of the rows by group)
            continue
        for label, idx in _split(batch):
            if label in group_sel:  # (weighted: the group's rows of weight 0 dropped, as in its first pass)
                group_second[label] = states.merge_second(
                    group_second.get(label),
                    states.second_state(
                        group_sel[label], pred.subset(idx), settings, batch_weights(batch, settings, idx)
                    ),
                    pred.kind,
                )
    return second, group_second


def groups_of(part: GroupedPartial, settings: Settings) -> dict[str, Any]:
    """The ``groups`` block of the summary, as :func:`uqeval.commands.score.core.score_groups` writes it: per label
    (sorted) its row count and streamed metrics (the not-streamed ones are named in ``input.not_streamed``), and
    ``bounds`` of its approximate metrics when there are any."""
    values: dict[str, Any] = {}
    for label in sorted(part.groups):
        st = unpack(part.groups[label])
        n_rows = int(st["n"]) + int(st.get("n_zero", 0))
        if not st["n"]:  # as in memory: a group whose weights are all 0
            note = "no metric computed: every row of the group has weight 0"
            values[label] = {"n_rows": n_rows, "metrics": {}, "notes": [note]}
            continue
        bounds: dict[str, float] = {}
        metrics, _ = states.finalize(
            st, settings, part.group_selection.get(label), part.group_second.get(label), bounds
        )
        values[label] = {"n_rows": n_rows, "metrics": metrics}
        if bounds:  # the group's own data-dependent bounds of the approximate metrics (RS, ACCRUE)
            values[label]["bounds"] = bounds
    return {"column": settings.columns.get("by"), "values": values}
