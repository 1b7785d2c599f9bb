"""`Scores`: the metrics of one evaluation as a read-only mapping, with its document and figures."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..config import Settings
from ..errors import UsageError
from ..predictions import (
    Prediction,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes


class Scores(Mapping):
    """The metrics of one evaluation: a read-only mapping with flat dotted keys.

    ``scores["scoring_rule.crps"]`` or, where the last part is unique, ``scores["crps"]``;
    level-keyed metrics read ``scores["coverage.0.95.coverage"]``. ``orientation`` maps each
    key to ``"lower"``, ``"higher"`` or ``"target"`` (curves and histograms have none),
    :meth:`nested` gives the JSON ``metrics`` block, :meth:`to_json` the whole ``uqeval
    score --format json`` document, :meth:`to_frame` one row per metric.
    """

    def __init__(
        self, summary: dict[str, Any], prediction: Prediction | None = None, settings: Settings | None = None
    ) -> None:
        self._summary = summary
        self._prediction, self._settings = prediction, settings  # what Scores.plot draws
        from ..catalogue.paths import flatten, metric_orientation

        self._flat = dict(flatten(summary["metrics"]))
        kind = summary["input"].get("representation")
        self.orientation: dict[str, str] = {}
        for key in self._flat:
            o = metric_orientation(key, summary.get("orientation"), kind)
            if o is not None:
                self.orientation[key] = o

    # Mapping
    def __getitem__(self, key: str) -> Any:
        """The value of metric ``key``: a path, or a short name that is unique (:func:`uqeval.vocabulary.resolve_metric`);
        an unknown or ambiguous name raises a ``KeyError`` (also a ``ValueError``) with close matches."""
        from ..vocabulary import resolve_metric

        if key in self._flat:
            return self._flat[key]
        if not isinstance(key, str):
            raise KeyError(key)
        return self._flat[resolve_metric(key, self._flat)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._flat)

    def __len__(self) -> int:
        return len(self._flat)

    @property
    def representation(self) -> str:
        return self._summary["input"]["representation"]

    @property
    def verdict(self) -> dict[str, Any] | None:
        """The verdict (``uqeval.verdict/1``, issue 39): calibrated / overconfident / underconfident / biased,
        the recalibration that would fix it, each aspect with its rule, sentence and evidence (the rules:
        docs/guide/verdicts.md). ``None`` only for a document without one."""
        import copy

        verdict = self._summary.get("verdict")
        return copy.deepcopy(verdict) if isinstance(verdict, dict) else None

    def nested(self) -> dict[str, Any]:
        """The metrics as the JSON summary nests them: ``{group: {key: value}}``."""
        import copy

        return copy.deepcopy(self._summary["metrics"])

    def to_json(self) -> str:
        """The ``uqeval.score/1`` document, exactly as ``uqeval score --format json`` writes it."""
        from ..io.writers import dumps_json

        return dumps_json(self._summary)

    def to_frame(self) -> pd.DataFrame:
        """A pandas DataFrame, one row per metric: ``metric``, ``group``, ``value``, ``orientation``."""
        import pandas as pd

        return pd.DataFrame(
            [
                {"metric": k, "group": k.split(".", 1)[0], "value": v, "orientation": self.orientation.get(k)}
                for k, v in self._flat.items()
            ]
        )

    def plot(self, kind: str, ax: Axes | None = None) -> Axes:
        """:func:`uqeval.plot` of the prediction these scores came from (``kind``, ``ax`` as there)."""
        if self._prediction is None:
            raise UsageError("these scores hold no prediction to plot; call uqeval.plot(data, kind) instead")
        if "weights" in self._summary:
            raise UsageError(
                "these scores are weighted (weights=) and the plots are not: plot the data with "
                "uqeval.plot(data, kind) instead"
            )
        from .score import plot

        return plot(self._prediction, kind, ax=ax, settings=self._settings)

    def _numbers(self) -> Iterator[tuple[str, str, str]]:
        """``(key, value as shown, orientation or "")`` of each number of the repr (curves and tables left out)."""
        from ..text import DETAIL, fmt_number

        for k, v in self._flat.items():
            if isinstance(v, (int, float)) or v is None:
                yield k, fmt_number(v, DETAIL), self.orientation.get(k, "")

    def __repr__(self) -> str:
        lines = [f"Scores({self.representation}, {self._summary['input'].get('n_rows')} rows)"]
        lines += [f"  {k}: {v}" + (f"  ({o})" if o else "") for k, v, o in self._numbers()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(k)}</td><td style='text-align:right'>{escape(v)}</td><td>{escape(o)}</td></tr>"
            for k, v, o in self._numbers()
        )
        return (
            f"<table><caption>uqeval scores: {escape(self.representation)}, "
            f"{self._summary['input'].get('n_rows')} rows</caption>"
            f"<tr><th>metric</th><th>value</th><th>better</th></tr>{rows}</table>"
        )
