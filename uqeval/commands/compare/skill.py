r"""Skill scores against a reference forecast (``--reference``): the pure core behind ``score``,
``check``, ``report`` and ``compare``.

The reference is one of

* a prediction file (any representation) over the same targets, row for row (``--reference FILE``), or
  joined to the model's rows on an id column both files hold (``--id COLUMN``);
* the **climatology** of a training file (``--reference climatology --train FILE``): the empirical
  distribution of its targets, the same for every row (:class:`~uqeval.predictions.Climatology`;
  for classifiers the base rates of its labels, a :class:`~uqeval.predictions.Categorical`);
* **persistence** (``--reference persistence --time COLUMN``): each row's forecast is the target of
  the previous row in time order, a point mass (:class:`~uqeval.predictions.PointMass`): its CRPS is
  the absolute error; it has no log score. The first row in time order has no previous row and is
  left out of the skill scores of both forecasts.

Skill ``1 - S / S_ref`` (:func:`uqeval.metrics.skill.skill_score`) is computed for each score in
:data:`SKILL_SCORES` that both forecasts have, from their per-row scores on a common level grid
(:func:`uqeval.commands.compare.core.comparison_score`), so a Gaussian model and a climatology are scored on the
same quantile levels. A second prediction is data, not a setting, so skill is computed here rather
than by a catalogue family; its orientation (``higher``) is declared in the summary.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import numpy as np

from ...catalogue import CLASSIFICATION
from ...config import Settings
from ...errors import InputError, UsageError, option
from ...predictions import Prediction

#: Scores a skill is computed for (those both forecasts have), in JSON order.
SKILL_SCORES: tuple[str, ...] = ("crps", "nll", "brier", "pinball", "interval", "wis", "mse")
#: Scores that can be <= 0 (the log score): their skill is the mean score difference S_ref - S (nats for
#: the log score, :func:`uqeval.metrics.skill.skill_difference`), never the ratio 1 - S/S_ref, whose sign
#: flips when the means are negative. The others are >= 0 and keep the ratio.
DIFFERENCE_SCORES: frozenset[str] = frozenset({"nll"})


def skill_value(name: str, score: np.ndarray, reference: np.ndarray, kept: int | None = None) -> float:
    """The skill of score ``name``: the ratio ``1 - S/S_ref``, or for :data:`DIFFERENCE_SCORES` the mean
    difference ``S_ref - S`` over the ``kept`` rows (rows left out are 0 in both arrays)."""
    from ...metrics.skill import skill_difference, skill_score

    if name in DIFFERENCE_SCORES:
        return skill_difference(score, reference, kept)
    return skill_score(score, reference)


_TOL = 1e-12  # targets of the model and the reference agree to this relative tolerance (as compare's)


@dataclass(frozen=True)
class Reference:
    """What ``--reference`` names: ``kind`` is ``file``, ``prediction``, ``climatology`` or ``persistence``."""

    kind: str
    path: str | None = None  # file: the reference predictions; climatology: the training file
    time: Any = None  # persistence: a column name, or (Python API) an array of times
    prediction: Prediction | None = None
    values: np.ndarray | None = None  # climatology from the Python API: the training targets themselves
    id: str | None = None  # file: join on this column of both files (--id) instead of row order
    model_ids: np.ndarray | None = (
        None  # the model's ids when they do not come from its file (API tables, compare)
    )


def reference_spec(
    reference: Any, train: Any = None, time: Any = None, id: str | None = None
) -> Reference | None:
    """The reference that ``--reference``/``--train``/``--time``/``--id`` describe (None: no skill scores)."""
    if reference is None:
        if time is not None:
            raise UsageError(f"{option('time')} only applies with {option('reference', 'persistence')}")
        if id is not None:
            ref_file = option("reference", "FILE")
            raise UsageError(f"{option('id')} joins a {ref_file} to the model's rows; give {ref_file}")
        return None
    if id is not None and (
        isinstance(reference, Prediction) or str(reference) in ("climatology", "persistence")
    ):
        raise UsageError(
            f"{option('id')} only applies with {option('reference', 'FILE')} (a predictions file holding the id column); "
            "climatology, persistence and prediction containers have no ids"
        )
    if isinstance(reference, Prediction):
        return Reference("prediction", prediction=reference)
    text = str(reference)
    if text == "climatology":
        if train is None:
            raise UsageError(
                f"{option('reference', 'climatology')} needs {option('train', 'FILE')} (the training targets it is "
                "built from)"
            )
        if not isinstance(train, (str, Path)):  # Python API: the training targets as an array
            return Reference("climatology", path="<array>", values=np.asarray(train))
        return Reference("climatology", path=str(train))
    if time is not None and text != "persistence":
        raise UsageError(f"{option('time')} only applies with {option('reference', 'persistence')}")
    if text == "persistence":
        if time is None:
            raise UsageError(
                f"{option('reference', 'persistence')} needs {option('time', 'COLUMN')} (the column that orders "
                "the rows in time)"
            )
        return Reference("persistence", time=time)
    return Reference("file", path=text, id=id)


def _same_targets(model: Prediction, ref: Prediction, source: str, ref_source: str) -> None:
    if ref.n != model.n:
        raise InputError(
            f"the reference {ref_source} has {ref.n} rows but {source} has {model.n}; "
            "the reference must hold the same targets in the same row order"
        )
    y0, y = model.require_targets(), ref.require_targets()
    bad = ~(np.abs(y - y0) <= _TOL * np.maximum(1.0, np.abs(y0)))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"targets differ between {source} and the reference {ref_source}: {int(bad.sum())} row(s), "
            f"first at row {i}: {float(y0[i])!r} vs {float(y[i])!r}; the reference must hold the same "
            f"targets in the same row order, or pass {option('id', 'COLUMN')} to join the files on an id column"
        )


def _keep_model_rows(pred: Prediction, model: Prediction, source: str, ref_source: str) -> Prediction:
    """``--nan-policy omit`` dropped different rows of the two files: keep the reference's rows that the
    model kept (by file row number); a model row the reference dropped is an error naming it."""
    ref_rows, model_rows = pred.row_numbers(), model.row_numbers()
    pos = np.searchsorted(ref_rows, model_rows)
    found = (pos < ref_rows.size) & (ref_rows[np.minimum(pos, ref_rows.size - 1)] == model_rows)
    if not found.all():
        i = int(model_rows[np.flatnonzero(~found)[0]])
        raise InputError(
            f"row {i} of {source} is not among the {pred.n} rows the reference {ref_source} kept "
            f"(dropped for NaN/inf under {option('nan_policy', 'omit')}, or missing); the reference must forecast "
            "every row the model forecasts, in the same row order"
        )
    return pred.subset(pos)


def _time_order(values: np.ndarray, name: str) -> np.ndarray:
    try:
        keys = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        keys = np.asarray(
            [str(v) for v in np.asarray(values, dtype=object).tolist()]
        )  # ISO dates sort as text
    if keys.dtype.kind == "f" and not np.isfinite(keys).all():
        raise InputError(
            f"{option('time')} column '{name}' has missing or non-finite values; persistence needs a time per row"
        )
    return np.argsort(keys, kind="stable")


def _join_on_id(
    model: Prediction, pred: Prediction, source: str, ref: Reference, model_ids: np.ndarray | None
) -> Prediction:
    """The reference's rows reordered to the model's by ``--id`` (:func:`uqeval.commands.compare.core.align_models`:
    unique ids, the same set in both files, the same target per id, each error naming file, column and row)."""
    from ..score.core import read_extra_column
    from .core import Model, align_models

    if model_ids is None:
        raise InputError(f"{option('id', ref.id)}: the ids of {source} are unknown; pass the model's ids")
    assert ref.path is not None and ref.id is not None  # a file reference joined on --id (the caller checks)
    ref_ids = read_extra_column(ref.path, ref.id, pred.row_numbers())
    aligned = align_models(
        [Model(source, model, {"path": source}), Model(str(ref.path), pred, {"path": ref.path})],
        [np.asarray(model_ids), ref_ids],
        id_column=ref.id,
    )
    return aligned[1].prediction


def _climatology(
    ref: Reference, model: Prediction, source: str, settings: Settings
) -> tuple[Prediction, np.ndarray | None, dict[str, Any]]:
    """The climatology reference of :func:`build_reference`: the training targets' distribution (classifiers:
    their base rates)."""
    from ...predictions import Categorical, Climatology

    y = model.require_targets()
    labels = model.kind in CLASSIFICATION
    if ref.values is not None:
        train, col = np.asarray(ref.values, dtype=np.float64), "train"
        train = train[np.isfinite(train)]
        if train.size < 1:
            raise InputError("the training targets of the climatology hold no finite value")
    else:
        assert ref.path is not None  # climatology without values names the training file (reference_spec)
        from ...io.load import read_targets

        train, col = read_targets(ref.path, settings, labels)
    info = {
        "kind": "climatology",
        "path": ref.path,
        "column": col,
        "n_train": int(train.size),
        "n_rows": int(model.n),
    }
    if labels:
        k = cast(Any, model).proba.shape[1]  # every CLASSIFICATION kind has .proba
        if not (np.all(train == np.round(train)) and train.min() >= 0 and train.max() < k):
            raise InputError(
                f"{ref.path}: training labels in column '{col}' must be integers 0..{k - 1} "
                f"(the classes of {source})"
            )
        rates = np.bincount(train.astype(np.int64), minlength=k) / train.size
        info["base_rates"] = rates.tolist()
        return (
            Categorical(
                y_true=y,
                proba=np.broadcast_to(rates, (model.n, k)).copy(),
                columns={"proba": "base rates"},
            ),
            None,
            info,
        )
    return Climatology(y_true=y, values=train, columns={"values": f"{ref.path}:{col}"}), None, info


def build_reference(
    ref: Reference,
    model: Prediction,
    source: str,
    settings: Settings,
    time_values: np.ndarray | None = None,
    model_ids: np.ndarray | None = None,
) -> tuple[Prediction, np.ndarray | None, dict[str, Any]]:
    """The reference forecast on ``model``'s rows: ``(prediction, mask, info)``.

    ``mask``: the rows scored (None: all); ``info``: the JSON ``input.reference`` block.
    ``time_values``: persistence, the time of each row of ``model`` (read from its file by the caller).
    ``model_ids``: ``--id``, the id of each row of ``model`` (default ``ref.model_ids``).
    """
    from ...predictions import PointMass

    y = model.require_targets()
    if ref.kind in ("file", "prediction"):
        if ref.kind == "file":
            from ...io.load import load_predictions

            ref_settings = replace(
                settings,
                representation=None,
                columns={k: v for k, v in settings.columns.items() if k == "y_true"},
            )
            assert ref.path is not None  # a file reference names its file (reference_spec)
            loaded = load_predictions(ref.path, ref_settings)
            pred, ref_source = loaded.prediction, str(ref.path)
        else:
            assert ref.prediction is not None  # kind "prediction" holds it (reference_spec)
            pred, ref_source = ref.prediction, "prediction"
        if (pred.kind in CLASSIFICATION) != (model.kind in CLASSIFICATION):
            raise InputError(
                f"the reference {ref_source} holds {pred.kind} predictions but {source} holds "
                f"{model.kind}; a reference must forecast the same kind of target"
            )
        if ref.id is not None:
            pred = _join_on_id(
                model, pred, source, ref, model_ids if model_ids is not None else ref.model_ids
            )
        else:
            if (
                settings.nan_policy == "omit"
                and pred.n
                and not np.array_equal(model.row_numbers(), pred.row_numbers())
            ):
                pred = _keep_model_rows(pred, model, source, ref_source)
            _same_targets(model, pred, source, ref_source)
        info = {"kind": ref.kind, "path": ref.path, "representation": pred.kind, "n_rows": int(pred.n)}
        if ref.id is not None:
            info["id"] = ref.id
        return pred, None, info
    if ref.kind == "climatology":
        return _climatology(ref, model, source, settings)
    if ref.kind == "persistence":
        if model.kind in CLASSIFICATION:
            raise InputError(
                f"{option('reference', 'persistence')} applies to regression targets; use climatology (base rates) "
                "or a reference file for classifiers"
            )
        if time_values is None:
            raise InputError(
                f"{option('reference', 'persistence')} needs the time of every row ({option('time', 'COLUMN')})"
            )
        if len(time_values) != model.n:
            raise InputError(f"{option('time')} gives {len(time_values)} values for {model.n} rows")
        if model.n < 2:
            raise InputError(
                f"{option('reference', 'persistence')} needs at least 2 rows (the first has no previous row)"
            )
        order = _time_order(time_values, str(ref.time))
        mean = np.empty(model.n)
        mean[order[1:]] = y[order[:-1]]
        mean[order[0]] = y[order[0]]  # no previous row: left out through the mask
        mask = np.ones(model.n, dtype=bool)
        mask[order[0]] = False
        info = {
            "kind": "persistence",
            "time": ref.time if isinstance(ref.time, str) else "array",
            "n_rows": int(model.n - 1),
        }
        return PointMass(y_true=y, mean=mean, rows=model.rows), mask, info
    raise AssertionError(ref.kind)


def row_scores(pred: Prediction, grids, settings: Settings) -> dict[str, np.ndarray]:
    """Per-row scores (lower is better) of ``pred`` for every name in :data:`SKILL_SCORES` it has."""
    from ...metrics.skill import crps_empirical
    from ...predictions import Climatology
    from .core import comparison_score

    out: dict[str, np.ndarray] = {}
    # skill is scored on the model's rows and targets (build_reference: the reference carries them too)
    y = cast("np.ndarray", pred.y_true)
    for name in ("crps", "nll", "brier", "pinball", "interval"):
        if isinstance(pred, Climatology):
            score = (
                crps_empirical(y, pred.values)
                if name == "crps"
                else None
                if name in ("nll", "brier")
                else comparison_score(pred, name, grids, settings)
            )
        else:
            score = comparison_score(pred, name, grids, settings)
        if score is not None:
            out[name] = np.asarray(score, dtype=np.float64)
    if grids.quantile_levels is not None and not grids.toolbox_quantiles and pred.quantile_keys() != set():
        from ...metrics.quantiles import weighted_interval_score

        try:
            out["wis"] = weighted_interval_score(
                y, np.ascontiguousarray(pred.quantiles_at(grids.quantile_levels)), grids.quantile_levels
            )
        except InputError:  # levels without central pairs: no WIS
            pass
    point = pred.point() if pred.kind not in CLASSIFICATION else None
    if point is not None:
        out["mse"] = (y - point) ** 2
    return out


@dataclass(frozen=True)
class SkillRows:
    """Per-row scores of a forecast (``score``) and its reference (``reference``), 0 on rows left out."""

    score: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]
    notes: tuple[str, ...] = ()
    mask: np.ndarray | None = None  # the rows scored (None: all)

    def kept(self) -> int:
        """How many rows are scored."""
        n = next(iter(self.score.values())).size if self.score else 0
        return n if self.mask is None else int(np.count_nonzero(self.mask))


def skill_rows(
    model: Prediction,
    ref: Prediction,
    mask: np.ndarray | None,
    settings: Settings,
    ref_label: str = "reference",
) -> SkillRows:
    """Per-row scores of ``model`` and ``ref`` for every score in :data:`SKILL_SCORES` both have."""
    from .core import Model, common_grids

    grids = common_grids([Model("model", model), Model("reference", ref)], settings.resolution)
    ms, rs = row_scores(model, grids, settings), row_scores(ref, grids, settings)
    out_s, out_r, notes = {}, {}, []
    for name in SKILL_SCORES:
        if name in ms and name in rs:
            s, r = ms[name], rs[name]
            if mask is not None:
                s, r = np.where(mask, s, 0.0), np.where(mask, r, 0.0)
            out_s[name], out_r[name] = s, r
        elif name in ms and name in ("crps", "nll", "brier", "wis"):
            why = "has no density (no log score)" if name == "nll" else f"has no {name}"
            notes.append(f"skill.{name} not computed: the {ref_label} {why}")
    return SkillRows(out_s, out_r, tuple(notes) + tuple(grids.notes), mask)


def _label(info: dict, pred: Prediction) -> str:
    kind = "point mass" if info["kind"] == "persistence" else pred.kind
    return f"{info['kind']} reference" + (f" ({kind})" if kind != info["kind"] else "")


def evaluate_skill(
    model: Prediction,
    source: str,
    ref: Reference,
    settings: Settings,
    time_values: np.ndarray | None = None,
    model_ids: np.ndarray | None = None,
) -> tuple[dict[str, float], dict[str, Any], list[str]]:
    """``(skill, input.reference block, notes)`` of ``model`` against ``ref``."""
    pred, mask, info = build_reference(ref, model, source, settings, time_values, model_ids)
    rows = skill_rows(model, pred, mask, settings, ref_label=_label(info, pred))
    skill = {name: skill_value(name, s, rows.reference[name], rows.kept()) for name, s in rows.score.items()}
    notes = list(rows.notes)
    if ref.kind == "persistence":
        notes.append(
            "skill against persistence: the first row in time order has no previous row and is left out"
        )
    if not skill:
        notes.append(
            f"no skill score: {source} ({model.kind}) and the {info['kind']} reference share no score"
        )
    return skill, info, notes


def refuse_weighted_skill() -> UsageError:
    """The error of weights with a reference forecast (skill scores are not weighted yet)."""
    return UsageError(
        f"{option('weights')} with {option('reference')}: weighted comparisons are not taken by skill scores "
        f"yet; leave out {option('weights')} or {option('reference')}"
    )


def compare_skill(
    models,
    ref: Reference,
    settings: Settings,
    time_values: np.ndarray | None = None,
    n_boot: int = 1000,
    seed: int | None = 0,
    ci_level: float = 0.95,
    units: np.ndarray | None = None,
    block_size: int | None = None,
) -> dict[str, Any]:
    """Skill of each aligned model against ``ref`` with bootstrap percentile intervals, resampled as
    :func:`~uqeval.commands.compare.core.compare_models` resamples the metrics (which calls it): ``units``, the
    cluster or block of each row, resampled as a whole (None: rows), and ``block_size``, circular blocks of
    rows (:meth:`uqeval.resample.Resampling.units`).

    The model's and the reference's per-row scores are resampled with the same Poisson weights as
    ``compare``'s other metrics (:func:`uqeval.commands.compare.core.poisson_bootstrap` with ``seed``; the skill
    of a replicate is :func:`uqeval.metrics.skill.skill_from_sums` of its weighted sums). Returns
    ``{"reference": info, "skill": {score: {model: {estimate, low, high}}}, "notes": [...]}``.
    """
    from ...catalogue import RowStat
    from ...metrics.skill import difference_from_sums, skill_from_sums
    from .core import poisson_bootstrap

    first = models[0]
    pred, mask, info = build_reference(ref, first.prediction, first.source, settings, time_values)
    out: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    alpha = 1.0 - ci_level
    columns: list[tuple[str, str, RowStat]] = []
    for m in models:
        rows = skill_rows(m.prediction, pred, mask, settings, ref_label=_label(info, pred))
        notes += [f"{m.name}: {n}" for n in rows.notes]
        for name, s in rows.score.items():
            r = rows.reference[name]
            out.setdefault(name, {})[m.name] = {
                "estimate": skill_value(name, s, r, rows.kept()),
                "low": float("nan"),
                "high": float("nan"),
            }
            if name in DIFFERENCE_SCORES:  # (S_ref - S) / kept rows of each resample
                kept = np.ones(s.size) if mask is None else mask.astype(np.float64)
                stat = RowStat(terms=np.column_stack([s, r, kept]), finish=difference_from_sums)
            else:
                stat = RowStat(terms=np.column_stack([s, r]), finish=skill_from_sums)
            columns.append((name, m.name, stat))
    if n_boot and columns:
        reps = poisson_bootstrap(
            [c[2] for c in columns], first.prediction.n, int(n_boot), seed or 0, units, block_size
        )
        from .assemble import _percentile_interval

        for (name, model, _), rep in zip(columns, reps):
            out[name][model]["low"], out[name][model]["high"] = _percentile_interval(rep, alpha)
    return {
        "reference": info,
        "skill": out,
        "orientation": {f"skill.{k}": "higher" for k in out},
        "notes": notes,
    }
