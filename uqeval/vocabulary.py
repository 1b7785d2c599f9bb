"""The one vocabulary of uqeval: how column roles, settings and metrics are named, declared once.

Every column role and every setting has one canonical spelling (the Python keyword, the settings key)
and documented aliases, the names scikit-learn and pandas users type (``y``/``target`` for ``y_true``,
``sample_weight`` for ``weights``, ``y_pred`` for ``mean``): the tables are :mod:`uqeval.names`. The
command line (its flags), the settings files (``[columns]``, ``[metrics]``, ``[input]`` and their
``[tool.uqeval...]`` forms) and the Python API (keyword arguments) all read names through them, so a
name accepted by one front end is accepted by the others (``tests/test_vocabulary.py``).

Metric names are resolved by :func:`resolve_metric` everywhere a metric is named (rules files, the
metrics of ``compare``, ``Scores[...]``): a full path (``scoring_rule.crps``) or a short name that is
unique (``crps``), with close matches when neither is found.

Ground floor: imports nothing of uqeval but :mod:`uqeval.errors` and :mod:`uqeval.names`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import InputError, UsageError
from .names import canonical


def with_canonical_keys(
    values: Mapping[str, Any], known: Iterable[str] | None = None, *, spell: str = "{}="
) -> dict[str, Any]:
    """``values`` with every alias key replaced by its canonical name (values that are None are dropped
    where an alias and its canonical name are both present). Two spellings of one name given with values
    are a :class:`~uqeval.errors.UsageError` naming both; ``known``: only aliases of these canonical names
    are translated (other keys are left as they are). ``spell``: how a key is shown (``"{}="``, ``"--{}"``)."""
    allowed = None if known is None else set(known)
    out: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    for key, value in values.items():
        name = canonical(key)
        if allowed is not None and name not in allowed:
            name = key
        if name in out and value is not None and out[name] is not None:
            raise UsageError(
                f"{spell.format(given_as[name])} and {spell.format(key)} name the same thing ({name}); give it once"
            )
        if name not in out or out[name] is None:
            out[name] = value
            given_as[name] = key
    return out


# --------------------------------------------------------------------------- metric names


class UnknownName(InputError, KeyError):
    """A metric (or another name) that is not known: an :class:`~uqeval.errors.InputError` (a ``ValueError``)
    and a ``KeyError`` (``Scores[...]`` is a mapping), with close matches in its one line."""

    def __str__(self) -> str:  # KeyError would quote the message
        return InputError.__str__(self)


class AmbiguousName(UnknownName):
    """A short name that several metrics share: the message lists them."""


def close_matches(word: str, choices: Iterable[str], n: int = 5) -> list[str]:
    """The choices close to ``word`` (misspellings, another group's metric of the same name), best first."""
    listed = list(dict.fromkeys(choices))
    found = difflib.get_close_matches(word, listed, n=n, cutoff=0.6)
    last = word.rsplit(".", 1)[-1]
    tails: dict[str, list[str]] = {}  # a short name misspelt: "crsp" is close to scoring_rule.crps
    for c in listed:
        tails.setdefault(c.rsplit(".", 1)[-1], []).append(c)
    for tail in [last, *difflib.get_close_matches(last, list(tails), n=n, cutoff=0.75)]:
        found += [c for c in tails.get(tail, ()) if c not in found]
    return found[: max(n, 8)]


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` (or ``"; did you mean one of 'x', 'y'?"``), or nothing."""
    found = close_matches(word, choices, n=3)[:3]
    if not found:
        return ""
    if len(found) == 1:
        return f"; did you mean {found[0]!r}?"
    return "; did you mean one of " + ", ".join(repr(f) for f in found) + "?"


def resolve_metric(name: str, paths: Iterable[str], what: str = "metric") -> str:
    """The metric path ``name`` means among ``paths``: ``name`` itself, else the one path whose last part
    (or dotted tail) is ``name`` (a score before its ``skill.`` form: ``crps`` is ``scoring_rule.crps``).

    Raises :class:`UnknownName` listing the candidates when ``name`` is ambiguous, and close matches when
    nothing matches.
    """
    known = list(paths)
    if name in known:
        return name
    found = [k for k in known if k.endswith("." + name)]
    if len(found) > 1 and not name.startswith("skill."):
        found = [k for k in found if not k.startswith("skill.")] or found
    if len(found) == 1:
        return found[0]
    if found:
        raise AmbiguousName(f"{what} {name!r} is ambiguous; use one of: {', '.join(found)}")
    close = close_matches(name, known)
    hint = ("; close matches: " + ", ".join(close)) if close else ""
    raise UnknownName(f"unknown {what} {name!r}{hint}")


# --------------------------------------------------------------------------- time windows

#: pandas offset aliases (``"D"``, ``"h"``, ``"T"``, ``"min"``, ``"S"``, ``"W"``) -> the units of ``--window``
_PANDAS_UNITS = {"T": "min", "S": "s", "sec": "s", "day": "D", "days": "D", "hour": "h", "hours": "h"}
_WINDOW = re.compile(r"^\s*(\d*)\s*([A-Za-z]+)\s*$")


def window_span(value: str | int) -> str | int:
    """A time window as ``--window`` takes it, from the spellings pandas takes too: ``"D"`` is ``"1D"``,
    ``"30T"`` is ``"30min"``, ``"15S"`` is ``"15s"``; a number of rows and anything else are returned as given."""
    if not isinstance(value, str):
        return value
    m = _WINDOW.match(value)
    if m is None or m.group(2).lower().startswith("row"):
        return value
    count, unit = m.group(1) or "1", m.group(2)
    return f"{count}{_PANDAS_UNITS.get(unit, unit)}"
