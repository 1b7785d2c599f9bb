"""Python entry points shared by the CLI commands: load, score, group."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...catalogue import compute_metrics, not_computed_notes, not_defined
from ...config import Settings
from ...io.load import Loaded
from ...predictions import Prediction
from .cells import many_cells
from .summary import build_summary


def score_prediction(
    pred: Prediction,
    settings: Settings | None = None,
    skipped: list[tuple[str, str]] | None = None,
    weights: np.ndarray | None = None,
    not_weighted: dict[str, str] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """``(metrics, orientation)`` of every metric group that applies to ``pred``.

    ``skipped``: collect ``(group, reason)`` for groups not defined on this data instead of failing.
    ``weights``: checked per-row weights (:func:`uqeval.catalogue.compute_weighted_metrics`); the metrics
    that take none are left out and named in ``not_weighted`` with the reason.
    """
    settings = settings or Settings()
    if pred.kind != "loglik":  # log-likelihoods alone already contain the targets
        pred.require_targets()
    if weights is None:
        return compute_metrics(pred, settings, skipped)
    from ...catalogue import compute_weighted_metrics

    metrics, orientation, skipped_weights = compute_weighted_metrics(pred, settings, weights, skipped)
    if not_weighted is not None:
        not_weighted.update(skipped_weights)
    return metrics, orientation


def _group_label(v: Any) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "null"
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


#: numpy dtype of an object --by column whose values (None aside) are all of one of these types
_TYPED = {int: np.int64, float: np.float64, str: np.str_, bool: np.bool_}


def group_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct labels of a ``--by`` column, sorted as strings, and each row's index into them.

    A value's label is ``"null"`` for None and NaN, an integer-valued float without its ``.0``,
    else ``str(value)``. The rows are factorised by :func:`numpy.unique` on the column's own type
    (an object column of ints, floats, strings or booleans and None as that type) and only the
    distinct values are labelled: a loop over distinct values, not rows. An object column of
    mixed or other types is labelled row by row.
    """
    v = np.asarray(values)
    missing = np.zeros(v.shape, dtype=bool)
    typed = v
    if v.dtype == object:
        # elementwise "is None" of an object array (the stubs know no None operand)
        missing = np.asarray(np.equal(v, None), dtype=bool)  # type: ignore[call-overload]
        present = v[~missing].tolist()
        kinds = set(map(type, present))
        dtype = _TYPED.get(kinds.pop()) if len(kinds) == 1 else None
        try:
            converted: np.ndarray | None = np.array(present, dtype=dtype) if dtype is not None else None
        except OverflowError:  # ints beyond int64
            converted = None
        if converted is None and present:
            return np.unique(np.array([_group_label(x) for x in v.tolist()], dtype=str), return_inverse=True)
        typed = np.empty(0) if converted is None else converted
    distinct, inverse = np.unique(typed, return_inverse=True)
    labels = [_group_label(x) for x in distinct.tolist()] + ["null"]  # the last one: None
    codes = np.full(v.shape, len(distinct), dtype=np.intp)
    codes[~missing] = inverse.reshape(-1)
    values, relabel = np.unique(np.array(labels, dtype=str), return_inverse=True)
    codes = relabel.reshape(-1)[codes.reshape(-1)]
    used = np.bincount(codes, minlength=len(values)) > 0  # "null" is a label only when some row has it
    return values[used], (np.cumsum(used) - 1)[codes]


def group_labels(values: np.ndarray) -> np.ndarray:
    """Each row's ``--by`` label (:func:`group_codes`' labels), a str array."""
    labels, codes = group_codes(values)
    return labels[codes]


def check_group_count(n_groups: int, path: Any) -> None:
    """At most ``LIMITS["groups"]`` distinct ``--by`` values (each group runs every metric)."""
    from ...config import LIMITS
    from ...errors import InputError, option

    if n_groups > LIMITS["groups"]:
        raise InputError(
            f"{path}: {option('by')} column has {n_groups:,} distinct values; at most "
            f"{LIMITS['groups']:,} groups are scored (each runs every metric); group by a coarser column"
        )


def score_groups(loaded: Loaded, settings: Settings) -> dict[str, Any]:
    """Every metric per value of the ``--by`` column (a loop over groups, not rows)."""
    assert loaded.groups is not None  # the only caller checks it
    if many_cells(loaded.info.get("path"), settings):  # score --preserve-dims on many cells (.cells)
        from .cells import CellSums, cell_groups

        cells = CellSums.of(loaded.prediction, loaded.groups, settings, loaded.weights)
        return cell_groups(cells, settings, settings.columns["by"])
    values, inverse = group_codes(loaded.groups)
    check_group_count(len(values), loaded.info.get("path"))
    out: dict[str, Any] = {}
    for j, value in enumerate(values):
        idx = np.flatnonzero(inverse == j)
        skipped: list[tuple[str, str]] = []  # a small group reports the metrics defined on it
        w = None if loaded.weights is None else loaded.weights[idx]
        if w is not None and not (w > 0).any():
            out[str(value)] = {"n_rows": int(idx.size), "metrics": {}}
            out[str(value)]["notes"] = ["no metric computed: every row of the group has weight 0"]
            continue
        metrics, _ = score_prediction(loaded.prediction.subset(idx), settings, skipped, w)
        out[str(value)] = {"n_rows": int(idx.size), "metrics": metrics}
        if skipped:
            out[str(value)]["notes"] = not_computed_notes(skipped)
    return {"column": loaded.prediction.columns.get("by") or settings.columns.get("by"), "values": out}


def worst_groups(metrics: dict[str, Any], orientation: dict[str, str], groups: dict[str, Any]) -> None:
    """``conditional_coverage.<level>.worst_group`` and ``worst_group_coverage`` (issue 15, --diagnostics):
    the ``--by`` value with the lowest coverage at each level (``coverage.<level>.coverage``, or
    ``prediction_sets.<level>.coverage`` for classifiers; ties go to the first value in sorted order),
    filled in place. Groups where the coverage was not computed are left out."""
    conditional = metrics.get("conditional_coverage")
    if not isinstance(conditional, dict):
        return
    source = "prediction_sets" if "prediction_sets" in metrics else "coverage"
    for level, body in conditional.items():
        found = [
            (body_g["metrics"].get(source, {}).get(level, {}).get("coverage"), value)
            for value, body_g in groups["values"].items()
        ]
        found = [(c, v) for c, v in found if isinstance(c, float) and np.isfinite(c)]
        if found:
            c, v = min(found, key=lambda cv: cv[0])
            body["worst_group"], body["worst_group_coverage"] = v, c
            orientation["conditional_coverage.worst_group_coverage"] = "target"


def train_std(path: str | Path, settings: Settings) -> float:
    """Standard deviation (ddof=0) of the target column of a training file: the unit of ``width_norm``."""
    from ...errors import InputError
    from ...io.load import read_targets

    y, col = read_targets(path, settings, at_least=2)
    sd = float(np.std(y))
    if not sd > 0:
        raise InputError(f"{path}: targets in column '{col}' are constant; their std is 0")
    return sd


def per_row_table(pred: Prediction):
    """Per-row ``total``/``aleatoric``/``epistemic`` uncertainty (nats) of an ensemble or Dirichlet
    prediction as a pyarrow Table, with the original row number of each row in ``row``."""
    import pyarrow as pa

    from ...catalogue import per_row_uncertainty
    from ...errors import UsageError, option

    values = per_row_uncertainty(pred)
    if values is None:
        raise UsageError(
            f"{option('per_row')} needs ensemble members (m<j>_p_<k> columns or a member_proba list column) or Dirichlet "
            f"outputs (alpha_<k>); this file holds {pred.kind} predictions"
        )
    rows = pred.row_numbers()
    return pa.table({"row": np.asarray(rows, dtype=np.int64), **values})


def reference_time(loaded: Loaded, reference) -> np.ndarray | None:
    """Persistence references: the time of each kept row (``--time``: a column of the file, or an array)."""
    if reference is None or reference.kind != "persistence":
        return None
    if not isinstance(reference.time, str):
        return np.asarray(reference.time)
    pred = loaded.prediction
    rows = pred.row_numbers()
    return read_extra_column(loaded.info["path"], reference.time, rows)


def reference_ids(loaded: Loaded, reference) -> np.ndarray | None:
    """``--reference FILE --id COLUMN``: the id of each kept row of the model (its file's column, unless given)."""
    if reference is None or reference.id is None or reference.model_ids is not None:
        return None
    pred = loaded.prediction
    return read_extra_column(loaded.info["path"], reference.id, pred.row_numbers())


def skill_of(
    loaded: Loaded, reference, settings: Settings
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """``(skill, input.reference, notes)``: the skill scores of a loaded input against ``reference`` (a
    :class:`uqeval.commands.compare.skill.Reference`), its rows matched by time or id as the reference says."""
    from ..compare.skill import evaluate_skill

    return evaluate_skill(
        loaded.prediction,
        str(loaded.info.get("path")),
        reference,
        settings,
        reference_time(loaded, reference),
        reference_ids(loaded, reference),
    )


def score_loaded(loaded: Loaded, settings: Settings, reference=None) -> dict[str, Any]:
    """The full JSON summary (see :mod:`uqeval.commands.score.summary`) of an input loaded in memory: how
    ``score``'s fold finishes a state that kept every row (:func:`~.stream.score_with_engine`, the memory
    engine), with the exact kernels, the ``--by`` groups and the skill scores.

    ``reference``: a :class:`uqeval.commands.compare.skill.Reference`; adds the ``skill`` group and ``input.reference``.
    """
    from ...errors import naming, option, phrase

    skill_notes: list[str] = []
    not_weighted: dict[str, str] = {}
    if loaded.weights is not None and reference is not None:
        from ...weights import refuse_weights

        raise refuse_weights("skill scores against a reference")
    with naming(loaded.info.get("path")):
        metrics, orientation = score_prediction(
            loaded.prediction, settings, weights=loaded.weights, not_weighted=not_weighted
        )
        groups = score_groups(loaded, settings) if loaded.groups is not None else None
        if reference is not None:  # forecast verification (issue 16): skill against a reference forecast
            skill, loaded.info["reference"], skill_notes = skill_of(loaded, reference, settings)
            if skill:
                metrics["skill"] = skill
                orientation.update({f"skill.{k}": "higher" for k in skill})
            if groups is not None:
                skill_notes.append(f"skill scores are computed over all rows, not per {option('by')} group")
    if groups is not None:
        loaded.info["columns"]["by"] = groups["column"]
        worst_groups(metrics, orientation, groups)
    notes = not_computed_notes(not_defined(loaded.prediction, settings))
    if loaded.prediction.kind == "point" and loaded.prediction.loglik is None:
        notes.append(
            "point predictions only: accuracy metrics are all that apply; "
            f"{phrase('accrue')} can give them a calibrated std"
        )
    for value, body in (groups or {}).get("values", {}).items():
        assert groups is not None  # without groups there is nothing to loop over
        notes += [
            f"{option('by', groups['column'])}={value} ({body['n_rows']} rows): {n}"
            for n in body.get("notes", [])
        ]
    notes += skill_notes
    if loaded.info.get("n_fixed_crossing"):
        notes.append(
            f"{loaded.info['n_fixed_crossing']} row(s) had crossing quantiles and were sorted "
            f"({option('fix_crossing')})"
        )
    weights = None
    if loaded.weights is not None:
        from ...weights import weights_block

        w = loaded.weights
        weights = weights_block(loaded.info.get("weights"), float(w.sum()), int((w == 0).sum()), not_weighted)
        if not_weighted:
            notes.append(
                f"{len(not_weighted)} metric(s) take no weights and were not computed (listed with the reason "
                "under weights.not_weighted)"
            )
    summary = build_summary(loaded.info, settings, metrics, orientation, groups, notes, weights)
    if groups is not None and many_cells(loaded.info.get("path"), settings):
        from .cells import with_cell_note

        with_cell_note(summary, groups)
    return summary


def score_file(path: str | Path, settings: Settings | None = None, reference=None) -> dict[str, Any]:
    """Load ``path`` and return the full JSON summary (see :mod:`uqeval.commands.score.summary`), as
    ``uqeval score --engine memory`` does (:func:`~.stream.score_with_engine`)."""
    from ...engine.options import EngineOptions
    from .stream import score_with_engine

    return score_with_engine(
        path, settings or Settings(), EngineOptions("memory"), reference=reference
    ).summary


def column_not_found(table: Any, column: str) -> Exception:
    """The :class:`~uqeval.errors.SchemaError` of a ``column`` the file of ``table`` (its header) does not have."""
    from ...errors import SchemaError

    return SchemaError(
        f"{table.path}: column '{column}' not found; available columns: {', '.join(table.columns[:20])}"
    )


def read_extra_column(path: str | Path, column: str, rows: np.ndarray | slice) -> np.ndarray:
    """One more column of ``path`` (any type), aligned with the kept ``rows`` of a loaded prediction."""
    from ...io.columns import match_column
    from ...io.readers import inspect, read_columns

    table = inspect(path)
    name = match_column(table.columns, column)
    if name is None:
        raise column_not_found(table, column)
    cols, _ = read_columns(table, [name])
    column_data: Any = cols[name]  # a pyarrow array
    return np.asarray(column_data.to_numpy(zero_copy_only=False), dtype=object)[rows]
