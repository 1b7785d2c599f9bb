"""The models of a comparison and their alignment: every model predicts the same targets, in the same
order (to 1e-12) or after a join on an id column; a mismatch names the first differing row."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ...errors import InputError, UsageError, option, phrase
from ...predictions import Prediction

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class Model:
    """One model to compare: a display name, its prediction and where it came from."""

    name: str
    prediction: Prediction
    info: Mapping[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.prediction.kind

    @property
    def source(self) -> str:
        return str(self.info.get("path", self.name))


def model_names(paths: Sequence[str], names: Sequence[str] | None = None) -> list[str]:
    """Unique display names: ``names`` if given, else file stems (made unique by their path).

    Raises :class:`InputError` if ``names`` has the wrong length or repeats a name.
    """
    if names is not None:
        names = [n.strip() for n in names]
        if len(names) != len(paths):
            raise UsageError(
                f"{option('names')} gives {len(names)} name(s) for {len(paths)} file(s); give one per file"
            )
        dup = next((n for i, n in enumerate(names) if n in names[:i] or not n), None)
        if dup is not None:
            raise UsageError(
                f"{option('names')} must be non-empty and distinct, found {dup!r} twice or empty"
            )
        return list(names)
    from pathlib import Path

    stems = []
    for p in paths:
        name = Path(p).name
        for suffix in (".parquet", ".pq", ".csv.gz", ".csv"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        stems.append(name)
    out = []
    for stem, p in zip(stems, paths):
        out.append(stem if stems.count(stem) == 1 else str(p))
    for i, n in enumerate(out):  # the same path twice
        if n in out[:i]:
            out[i] = f"{n}#{i + 1}"
    return out


def _id_labels(ids: np.ndarray) -> np.ndarray:
    """Ids as strings, so 3, 3.0 and "3" join (integral floats print without '.0')."""
    arr = np.asarray(ids, dtype=object).ravel()
    out = []
    for v in arr.tolist():  # one str() per row: ids are arbitrary Python objects
        if isinstance(v, float) and v.is_integer():
            out.append(str(int(v)))
        else:
            out.append(str(v))
    return np.asarray(out, dtype=str)


def _file_row(pred: Prediction, i: int) -> int:
    return int(pred.rows[i]) if pred.rows is not None else int(i)


def _checked_ids(
    models: Sequence[Model], ids: Sequence[np.ndarray], id_column: str | None
) -> list[np.ndarray]:
    """Each model's ids as strings (:func:`_id_labels`), checked: one per row, unique."""
    if len(ids) != len(models):
        raise InputError(f"got {len(ids)} id arrays for {len(models)} models")
    labels = [_id_labels(a) for a in ids]
    for m, lab in zip(models, labels):
        if lab.size != m.prediction.n:
            raise InputError(f"{m.source}: {lab.size} ids for {m.prediction.n} rows")
        order = np.argsort(lab, kind="stable")
        s = lab[order]
        dup = np.flatnonzero(s[1:] == s[:-1])
        if dup.size:
            i = int(order[dup[0] + 1])
            raise InputError(
                f"{m.source}: id '{s[dup[0]]}' of column '{id_column}' occurs more than once "
                f"(again at row {_file_row(m.prediction, i)}); ids must be unique to join on them"
            )
    return labels


def _joined(
    first: Model, m: Model, ref_ids: np.ndarray, lab: np.ndarray, id_column: str | None
) -> Prediction:
    """Model ``m``'s prediction reordered to the rows of ``first`` by their ids (``ref_ids``, ``lab``); an
    id of one that the other lacks is an :class:`InputError` naming it and its row."""
    order = np.argsort(lab, kind="stable")
    s = lab[order]
    pos = np.minimum(np.searchsorted(s, ref_ids), max(s.size - 1, 0))
    found = s[pos] == ref_ids if s.size else np.zeros(ref_ids.size, dtype=bool)
    if not found.all():
        i = int(np.flatnonzero(~found)[0])
        raise InputError(
            f"id '{ref_ids[i]}' (row {_file_row(first.prediction, i)} of {first.source}) is not in "
            f"{m.source}: {int((~found).sum())} of {ref_ids.size} ids missing; every file must hold "
            f"the same ids in column '{id_column}'"
        )
    if s.size != ref_ids.size:
        extra = np.setdiff1d(lab, ref_ids)
        j = int(np.flatnonzero(lab == extra[0])[0]) if extra.size else 0
        raise InputError(
            f"{m.source} has {s.size} rows but {first.source} has {ref_ids.size}: id '{extra[0]}' "
            f"(row {_file_row(m.prediction, j)} of {m.source}) is not in {first.source}; every file must hold "
            f"the same ids in column '{id_column}'"
        )
    return m.prediction.subset(order[pos])


def align_models(
    models: Sequence[Model],
    ids: Sequence[np.ndarray] | None = None,
    id_column: str | None = None,
    tol: float = 1e-12,
    first_row: int = 0,
) -> list[Model]:
    r"""Check that all models predict the same targets; reorder them to the first model's rows.

    Without ``ids`` the rows must correspond one to one (same count, same order). With
    ``ids`` (one array per model, e.g. the values of an ``--id`` column) each model's ids
    must be unique and the same set as the first model's; rows are joined on them. Then
    the targets must agree: :math:`|y_i^{(k)} - y_i^{(1)}| \le 10^{-12}\max(1, |y_i^{(1)}|)`.

    Returns the models with their predictions reordered (``Prediction.subset``), so the
    per-row scores of all models line up. Raises :class:`InputError` naming the first
    differing row (and its id); ``first_row``: the index of the first row among all rows (a streamed batch).
    """
    if len(models) < 2:
        raise InputError(f"compare needs at least 2 models, got {len(models)}")
    first = models[0]
    # log-likelihoods alone already contain the targets: without a target column they are matched by row
    no_targets = all(m.kind == "loglik" and m.prediction.y_true is None for m in models)
    y0 = None if no_targets else first.prediction.require_targets()
    out = [first]
    how = f"join on {option('id', id_column)}" if id_column else phrase("join_ids")
    labels = None if ids is None else _checked_ids(models, ids, id_column)
    ref_ids = None if labels is None else labels[0]
    for k, m in enumerate(models[1:], start=1):
        pred = m.prediction
        y = None if no_targets else pred.require_targets()
        if labels is not None:
            pred = _joined(first, m, labels[0], labels[k], id_column)
            y = pred.y_true
        elif pred.n != first.prediction.n:
            raise InputError(
                f"{m.source} has {pred.n} rows but {first.source} has {first.prediction.n}"
                f"{' (after dropping NaN rows)' if m.info.get('n_dropped') or first.info.get('n_dropped') else ''}; "
                f"the files must hold the same targets in the same order, or {how}"
            )
        bad = (
            np.zeros(pred.n, dtype=bool)
            if y is None or y0 is None  # no_targets
            else ~(np.abs(y - y0) <= tol * np.maximum(1.0, np.abs(y0)))
        )
        if bad.any():
            assert y is not None and y0 is not None  # rows differ only where there are targets
            i = int(np.flatnonzero(bad)[0])
            where = f"row {i + first_row}"
            if ref_ids is not None:
                where += f" (id '{ref_ids[i]}')"
            rows = (
                f"; file rows {_file_row(first.prediction, i)} and {_file_row(pred, i)}"
                if _file_row(first.prediction, i) != i + first_row or _file_row(pred, i) != i + first_row
                else ""
            )
            count = f"{int(bad.sum())} row(s){' in a batch' if first_row else ''}"
            raise InputError(
                f"targets differ between {first.source} and {m.source}: {count}, first at "
                f"{where}{rows}: {float(y0[i])!r} vs {float(y[i])!r}; the files must hold the same targets in the same "
                f"order, or {how}"
            )
        out.append(replace(m, prediction=pred))
    return out
