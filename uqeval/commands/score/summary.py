"""The JSON summary of a scoring run (schema ``uqeval.score/1``).

Layout (keys are a contract)::

    {
      "schema": "uqeval.score/1",
      "uqeval_version": "0.1.0",
      "input": {"path", "format", "n_rows", "n_dropped", "representation", "columns"},
      "settings": {...every Settings field...},
      "metrics": {group: {key: value}},            # level-keyed groups: {group: {"0.95": {key: value}}}
      "orientation": {"group.key": "lower" | "higher" | "target"},
      "groups": {"column": name, "values": {group value: {"n_rows": n, "metrics": {...}}}},  # only with --by
      "notes": ["..."]                               # only when there is something to point out
    }

Values are plain JSON numbers; NaN/inf are written as null.
"""

from __future__ import annotations

from typing import Any

from ..._version import __version__
from ...config import Settings
from ...io.writers import jsonable

SCHEMA = "uqeval.score/1"


def build_summary(
    info: dict[str, Any],
    settings: Settings,
    metrics: dict[str, Any],
    orientation: dict[str, str],
    groups: dict[str, Any] | None = None,
    notes: list[str] | None = None,
    weights: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON summary; ``weights`` (:func:`uqeval.weights.weights_block`) only where weights were given,
    so that unweighted summaries are unchanged."""
    out: dict[str, Any] = {
        "schema": SCHEMA,
        "uqeval_version": __version__,
        "input": info,
        "settings": settings.to_json(),
        "metrics": jsonable(metrics),
        "orientation": dict(sorted(orientation.items())),
    }
    if weights is not None:
        out["weights"] = jsonable(weights)
    if groups is not None:
        out["groups"] = jsonable(groups)
    notes = list(notes or []) + non_finite_notes(metrics)
    if notes:
        out["notes"] = list(notes)
    return out


def non_finite_notes(metrics: dict[str, Any]) -> list[str]:
    """One note naming every metric that came out NaN/inf (written as null), with the likely reason."""
    import math

    import numpy as np

    from ...catalogue.paths import flatten

    bad = []
    for path, v in flatten(metrics):
        values = v if isinstance(v, (list, tuple, np.ndarray)) else [v]
        if any(
            isinstance(x, (float, np.floating)) and not math.isfinite(float(x))
            for x in np.asarray(values, dtype=object).ravel()
        ):
            bad.append(path)
    if not bad:
        return []
    shown = ", ".join(bad[:8]) + (f" and {len(bad) - 8} more" if len(bad) > 8 else "")
    return [
        f"{len(bad)} metric(s) could not be computed finitely and are reported as null: {shown} "
        "(undefined for this data, e.g. constant values, or overflow with extreme magnitudes)"
    ]
