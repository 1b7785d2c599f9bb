"""Metric paths in documents: the leaves of a nested metric tree as dotted paths (``coverage.0.95.width``)
and the orientation of the metric at a path, looked up in the catalogue, never guessed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def leaves(
    tree: Any, prefix: tuple[str, ...] = (), *, empty: bool = True
) -> list[tuple[tuple[str, ...], Any]]:
    """Leaves of nested mappings as ``(keys, value)`` in insertion order.

    Scalars and lists are leaves. An empty mapping is a ``None`` leaf when ``empty`` is
    true, and left out otherwise.
    """
    out: list[tuple[tuple[str, ...], Any]] = []
    if isinstance(tree, Mapping):
        for k, v in tree.items():
            keys = (*prefix, str(k))
            if isinstance(v, Mapping) and (v or not empty):
                out.extend(leaves(v, keys, empty=empty))
            else:
                out.append((keys, None if isinstance(v, Mapping) else v))
    elif prefix:
        out.append((prefix, tree))
    return out


def flatten(tree: Any, prefix: str = "", *, empty: bool = True) -> list[tuple[str, Any]]:
    """Leaves of nested mappings as ``(dotted path, value)`` (see :func:`leaves`).

    Keys containing dots are kept whole, so ``coverage -> 0.95 -> width`` is
    ``"coverage.0.95.width"``.
    """
    return [(".".join(keys), v) for keys, v in leaves(tree, (prefix,) if prefix else (), empty=empty)]


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def metric_orientation(
    keys: Sequence[str] | str, orientation: Mapping[str, str] | None, kind: str | None = None
) -> str | None:
    """Orientation of the metric at ``keys`` (a key tuple or a dotted path), never guessed.

    The summary's ``orientation`` map answers first, for the exact path; otherwise the
    catalogue entry of the path (:func:`uqeval.catalogue.lookup`; a value keyed by level
    below a metric, such as ``scoring_rule.interval_by_level.0.9``, belongs to the metric
    at its longest prefix) gives its key in that map, or failing that its own orientation
    for the representation ``kind``. None when neither knows it (curves, histograms).
    """
    from . import lookup

    table = orientation or {}
    parts = keys.split(".") if isinstance(keys, str) else list(keys)
    path = ".".join(parts)
    if path in table:
        return table[path]
    for n in range(len(parts), 1, -1):
        entry = lookup(".".join(parts[:n]))
        if entry is not None:
            return table.get(entry.path) or entry.orientation_for(kind)
    return None
