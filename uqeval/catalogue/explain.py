"""``uqeval explain``'s text: a metric's glossary entry (:mod:`uqeval.glossary`) with the direction its
catalogue orientation gives. Here, above both, so that the glossary (texts) never imports the catalogue."""

from __future__ import annotations

import difflib

from ..errors import InputError
from ..glossary import GLOSSARY, canonical_path, format_entry, matches, names


def explain(name: str) -> str:
    """Plain-text explanation of a metric by full path (``scoring_rule.crps``) or short name.

    A short name that several groups use (``nll``, ``coverage``) returns every match,
    after a line listing them. Unknown names raise :class:`InputError` with close matches.
    """
    found = matches(name)
    if not found:
        key = canonical_path(name)
        close = difflib.get_close_matches(key, sorted(set(names())), n=5, cutoff=0.6)
        group = key.split(".", 1)[0]
        members = [k for k in GLOSSARY if "." in key and k.startswith(group + ".")]
        if members:  # an unknown key under a known group: close ones first, then the rest of the group
            close = list(
                dict.fromkeys(
                    [c for c in close if c in members]
                    + difflib.get_close_matches(key, members, n=len(members), cutoff=0.0)
                )
            )
        hint = f"did you mean {', '.join(close)}? " if close else ""
        raise InputError(
            f"unknown metric {str(name)!r}: {hint}Metric names are the 'group.key' paths of "
            "the JSON summary (e.g. 'scoring_rule.crps') or their last part (e.g. 'crps')"
        )
    if len(found) == 1:
        return _with_direction(found[0])
    head = f"{name!r} matches {len(found)} metrics: {', '.join(found)}"
    return "\n\n".join([head] + [_with_direction(k) for k in found])


def direction(key: str) -> str | None:
    """Which way is better for the metric ``key``, from its catalogue orientation (None: not declared)."""
    from . import lookup

    metric = lookup(key)
    if metric is None:  # computed outside the catalogue (ucc, skill scores)
        return _DIRECTIONS.get(key) or ("higher is better" if key.startswith("skill.") else None)
    say = {
        "lower": "lower is better",
        "higher": "higher is better",
        "target": "closest to its target is best",
    }

    def one(orientation: str | None) -> str | None:
        if orientation == "target" and metric.target_text is not None:
            return f"closest to {metric.target_text} is best"
        return say.get(orientation or "")

    base = one(metric.orientation)
    kinds = {k: one(o) for k, o in metric.orientation_by_kind.items() if one(o) != base}
    if not kinds:
        return base
    parts = [f"{text} for {kind}" for kind, text in sorted(kinds.items())]
    return "; ".join(([f"{base} (other representations)"] if base else []) + parts)


#: Directions of metrics the catalogue does not hold
_DIRECTIONS = {
    "ucc.auucc": "lower is better",
    "ucc.auucc_const": "lower is better (the reference band's area)",
    "ucc.gain": "higher is better",
    "ucc.partial": "lower is better",
}


def _with_direction(key: str) -> str:
    """The glossary entry of ``key`` with a line saying which way is better."""
    text = format_entry(key)
    if "." not in key:  # a whole group
        return text
    better = direction(key) or "none: it describes the data or feeds a plot, it is not a score"
    title, rest = text.split("\n", 1)
    return f"{title}\nDirection: {better}\n{rest}"
