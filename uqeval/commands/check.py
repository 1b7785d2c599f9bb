"""CI rule gate: thresholds and baseline regressions on a ``uqeval score`` summary.

Pure functions: TOML text and summary dicts in, a :class:`GateResult` out (rendered by
:mod:`uqeval.report.check`); nothing reads files, prints or exits. The rules file, its options and the
settings-mismatch stop are documented in docs/commands/check.md; what the code decides beyond it:

- A *path* is a summary's ``metrics`` keys joined by dots; keys that contain a dot (levels such as
  ``"0.95"``) match whole: at each level the longest key that is a prefix of the rest is tried first,
  with backtracking, never a naive ``split(".")``. Only numeric scalars (NaN included) are metrics: a
  rule on a list or an object is an error listing the scalars under it; list elements have no path.
- Orientation: the summary's exact full-path ``orientation`` entry first; else the path's catalogue entry
  (:func:`uqeval.catalogue.lookup`, ``coverage.width`` for ``coverage.0.95.width``) names its key in that
  map or, when the summary lacks it, gives its own for the representation. Never guessed from a name.
- The target of a ``target`` metric, in order: the rule's ``target``; ``summary["targets"][key]`` (a number
  or ``"level"``); :func:`uqeval.catalogue.target`, the target its catalogue entry declares (the enclosing
  level for ``coverage.0.95.coverage``, (1 - level)/2 for ``miss_below``/``miss_above``, 0 for
  ``coverage_error``); else 0.
- ``max_regression`` is ``value - baseline`` (lower is better), ``baseline - value`` (higher) or
  ``|value - t| - |baseline - t|`` (target ``t``); the ``_rel`` forms divide by ``|baseline|``, so a zero
  baseline makes any positive change infinite (FAIL). ``max_increase``/``max_decrease`` are raw (the row
  says so when one limits an improvement). Limits ``max_*`` must be ``>= 0``. Comparisons forgive rounding
  (relative 1e-9, absolute 1e-12): identical summaries always pass.
- Baseline checks are SKIP without a baseline (FAIL with ``require_baseline``); a baseline lacking the path
  fails. NaN or ``null`` fails every check. A ``require`` path that is missing is a FAIL row with close
  matches; a rule on an unknown path is an :class:`~uqeval.errors.InputError`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from ..catalogue import FAMILIES, target as metric_target
from ..catalogue.paths import flatten, is_number, metric_orientation
from ..config import key_lines, line_of
from ..errors import InputError, option, phrase
from ..strict import loads_json, loads_toml, tomllib
from ..text import DETAIL, fmt_number
from ..vocabulary import AmbiguousName, UnknownName, close_matches, resolve_metric

SUMMARY_SCHEMA = "uqeval.score/1"

Orientation = Literal["lower", "higher", "target"]
Status = Literal["PASS", "FAIL", "SKIP"]

ABSOLUTE_OPTIONS = ("min", "max")
BASELINE_OPTIONS = (
    "max_increase",
    "max_decrease",
    "max_increase_rel",
    "max_decrease_rel",
    "max_regression",
    "max_regression_rel",
)
CHECK_OPTIONS = ABSOLUTE_OPTIONS + BASELINE_OPTIONS
RULE_OPTIONS = CHECK_OPTIONS + ("target",)
TOP_LEVEL_KEYS = ("require", "settings", "rules")
SETTINGS_DEFAULTS: dict[str, bool] = {"require_baseline": False, "allow_settings_mismatch": False}

_RTOL = 1e-9
_ATOL = 1e-12


# --------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class Check:
    """One check of a rule: ``path`` must satisfy ``option`` with ``threshold``."""

    path: str
    option: str
    threshold: float
    target: float | None = None
    line: int | None = None


@dataclass(frozen=True)
class Rules:
    """Parsed rules file (format: docs/commands/check.md)."""

    checks: tuple[Check, ...]
    require: tuple[str, ...] = ()
    settings: Mapping[str, bool] = field(default_factory=lambda: dict(SETTINGS_DEFAULTS))
    source: str = "rules.toml"
    require_line: int | None = None


@dataclass(frozen=True)
class GateRow:
    """The outcome of one check (one row of the report, one JUnit test case)."""

    path: str
    check: str
    value: float | None
    baseline: float | None
    limit: str
    status: Status
    message: str
    orientation: str | None = None
    line: int | None = None

    @property
    def name(self) -> str:
        return f"{self.path} {self.check}"


@dataclass(frozen=True)
class GateResult:
    """All rows of a gate run, plus free-text notes (e.g. settings mismatches)."""

    rows: tuple[GateRow, ...]
    rules_source: str = "rules.toml"
    notes: tuple[str, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        out = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        for row in self.rows:
            out[row.status] += 1
        return out

    @property
    def passed(self) -> bool:
        return all(row.status != "FAIL" for row in self.rows)

    @property
    def failures(self) -> tuple[GateRow, ...]:
        return tuple(row for row in self.rows if row.status == "FAIL")

    def with_notes(self, *notes: str) -> GateResult:
        """A copy with ``notes`` appended (e.g. from :func:`settings_mismatch`)."""
        return dataclasses.replace(self, notes=self.notes + tuple(notes))


# --------------------------------------------------------------------------- summaries


def validate_summary(obj: Any, source: str = "summary") -> dict:
    """Check that ``obj`` is a ``uqeval.score/1`` summary; return it unchanged.

    Raises :class:`InputError` saying what is wrong and how to produce a summary.
    """
    how = f"pass {phrase('summary')}"
    if not isinstance(obj, dict):
        raise InputError(
            f"{source} is not a uqeval summary: expected a JSON object, found {type(obj).__name__}; {how}"
        )
    schema = obj.get("schema")
    if schema is None:
        keys = ", ".join(sorted(map(str, obj))[:8]) or "none"
        raise InputError(f"{source} is not a uqeval summary: no 'schema' key (top-level keys: {keys}); {how}")
    if not isinstance(schema, str) or not schema.startswith("uqeval.score/"):
        raise InputError(
            f"{source} is not a uqeval score summary: schema is {schema!r}, expected "
            f"{SUMMARY_SCHEMA!r}; {how}"
        )
    if schema != SUMMARY_SCHEMA:
        raise InputError(
            f"{source} has unsupported summary schema {schema!r}; this uqeval reads "
            f"{SUMMARY_SCHEMA!r}: re-score the predictions with this version of uqeval"
        )
    for key in ("metrics", "orientation", "settings", "input"):  # the last two may be missing
        if (key in obj or key in ("metrics", "orientation")) and not isinstance(obj.get(key), dict):
            found = "missing" if key not in obj else type(obj[key]).__name__
            raise InputError(
                f"{source} is not a valid uqeval summary: '{key}' must be a JSON object, found {found}; {how}"
            )
    return obj


def summary_from_json(text: str, source: str = "summary.json") -> dict:
    """Parse and validate a summary JSON document (see :func:`validate_summary`)."""
    try:
        obj = loads_json(text, source)
    except InputError as exc:
        raise InputError(f"{exc}; pass {phrase('summary')}") from None
    if isinstance(obj, dict) and str(obj.get("schema", "")).startswith("uqeval.monitor/"):
        from .monitor.core import (
            as_summary,  # rules on a monitor document: last.*, cumulative.*, tests.*, alarms
        )

        return validate_summary(as_summary(obj), source)
    return validate_summary(obj, source)


def _leaves(node: Any, prefix: str = "") -> dict[str, Any]:
    """Numeric and ``null`` leaves below ``node`` by dotted path (lists are not metrics)."""
    return {p: v for p, v in flatten(node, prefix, empty=False) if is_number(v) or v is None}


def flatten_metrics(summary: Mapping[str, Any]) -> dict[str, float | int]:
    """Every numeric scalar of ``summary["metrics"]`` keyed by its dotted path.

    Lists and ``null`` are skipped (lists are not metrics; see the module docstring).
    Keys containing dots are kept whole, so ``"coverage.0.95.coverage"`` appears as is.
    """
    return {p: v for p, v in _leaves(summary.get("metrics", {})).items() if v is not None}


def _resolve(node: Any, path: str) -> tuple[bool, Any, tuple[str, ...]]:
    """Walk ``path`` through nested dicts, longest matching key first, with backtracking."""
    if not isinstance(node, dict):
        return False, None, ()
    if path in node:
        return True, node[path], (path,)
    candidates = [k for k in node if isinstance(k, str) and path.startswith(k + ".")]
    for key in sorted(candidates, key=len, reverse=True):
        ok, val, keys = _resolve(node[key], path[len(key) + 1 :])
        if ok:
            return True, val, (key,) + keys
    return False, None, ()


def resolve_path(summary: Mapping[str, Any], path: str, known: bool = True) -> tuple[Any, tuple[str, ...]]:
    """Return ``(value, keys)`` at ``path`` of ``summary["metrics"]``.

    ``keys`` are the JSON keys the path resolved to. Raises :class:`InputError`
    with close matches if nothing is at ``path`` (without any: some known paths, unless ``known`` is false).
    """
    metrics = summary.get("metrics", {})
    ok, val, keys = _resolve(metrics, path)
    if not ok and "." not in path:  # a short name (crps) is the one metric of that name (scoring_rule.crps)
        try:
            ok, val, keys = _resolve(metrics, resolve_metric(path, _leaves(metrics)))
        except AmbiguousName:
            raise
        except UnknownName:
            pass  # the message below says what the summary has
    if not ok:
        raise InputError(_unknown_path_message(summary, path, known))
    return val, keys


def _close_matches(summary: Mapping[str, Any], path: str) -> list[str]:
    names = list(_leaves(summary.get("metrics", {})))
    matches = close_matches(path, names)  # also the same metric name in another group: ma_cal
    matches += [name for name in names if name.endswith("." + path) and name not in matches]
    return matches[:8]


def opt_in_options(rules: Rules) -> dict[str, list[str]]:
    """``{option: [group, ...]}``: the opt-in catalogue families (``Family.option``, e.g. ``diagnostics``)
    whose groups the rules name, so that checking a predictions file can compute them."""
    groups = {p.split(".", 1)[0] for p in (*rules.require, *(c.path for c in rules.checks))}
    out: dict[str, list[str]] = {}
    for f in FAMILIES:
        if f.option is not None and f.name in groups:
            out.setdefault(f.option, []).append(f.name)
    return out


def _opt_in_hint(path: str) -> str:
    """Why an opt-in group is missing from a summary, and how to get it."""
    group = path.split(".", 1)[0]
    family = next((f for f in FAMILIES if f.option is not None and f.name == group), None)
    if family is None or family.option is None:  # the search above kept only families with an option
        return ""
    return (
        f" ({group} is computed only with {option(family.option)}: score the predictions with it, "
        "or check the predictions file itself)"
    )


#: how :func:`_unknown_path_message` lists some of the summary's metric paths
_KNOWN = "known metric paths include: "


def _unknown_path_message(summary: Mapping[str, Any], path: str, known: bool = True) -> str:
    given = summary.get("input")
    inp: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    not_streamed = inp.get("not_streamed")
    left_out: Mapping[str, Any] = not_streamed if isinstance(not_streamed, Mapping) else {}
    parts = path.split(".")
    for key, why in left_out.items():  # streamed summaries (issue 14) leave some metrics out
        if key == path or len(parts) >= 2 and key == f"{parts[0]}.{parts[-1]}":
            return (
                f'"{path}" is not computed by {option("engine", inp.get("engine", "stream"))} ({why}); '
                f"score with {option('engine', 'memory')} to check it"
            )
    weights = summary.get("weights")
    not_weighted = weights.get("not_weighted") if isinstance(weights, Mapping) else None
    for key, why in (not_weighted if isinstance(not_weighted, Mapping) else {}).items():  # issue 25
        if key == path or len(parts) >= 2 and key == f"{parts[0]}.{parts[-1]}":
            return f'"{path}" is not computed with weights ({why}); check it on an unweighted score'
    hint = "" if path.split(".", 1)[0] in (summary.get("metrics") or {}) else _opt_in_hint(path)
    if hint:
        return f'no metric at path "{path}" in the summary{hint}'
    matches = _close_matches(summary, path)
    if matches:
        hint = "close matches: " + ", ".join(f'"{m}"' for m in matches)
    elif known:
        paths = sorted(flatten_metrics(summary))
        hint = _KNOWN + (", ".join(f'"{m}"' for m in paths[:10]) or "none")
    if path.split(".", 1)[0] == "skill" and "skill" not in summary.get("metrics", {}):  # issue 16
        hint = (
            f"skill scores are computed only against a reference forecast: score with {option('reference', 'FILE')}, "
            f"{option('reference', 'climatology')} {option('train', 'FILE')} or {option('reference', 'persistence')} "
            f"{option('time', 'COLUMN')}"
        )
    return f'no metric at path "{path}" in the summary' + (f"; {hint}" if hint else "")


def _scalar_at(summary: Mapping[str, Any], path: str, known: bool = True) -> tuple[Any, tuple[str, ...]]:
    """Value at ``path``; an :class:`InputError` if it is an object or a list (``known``: :func:`resolve_path`)."""
    val, keys = resolve_path(summary, path, known)
    if isinstance(val, dict):
        sub = _leaves(val, path)
        listed = ", ".join(f'"{p}"' for p in list(sub)[:8]) or "none"
        raise InputError(f'"{path}" is a group of metrics, not one metric; pick one of: {listed}')
    if isinstance(val, (list, tuple)):
        raise InputError(
            f'"{path}" is a list ({len(val)} values), not a scalar metric; rules apply to scalars only'
        )
    return val, keys


def orientation_of(summary: Mapping[str, Any], path: str) -> Orientation:
    """Orientation of the metric at ``path``: the summary's ``orientation`` map, else the
    metric catalogue (:func:`uqeval.catalogue.paths.metric_orientation`)."""
    _, keys = resolve_path(summary, path)
    kind = (summary.get("input") or {}).get("representation")
    val = metric_orientation(keys, summary.get("orientation") or {}, kind)
    if val is None:
        raise InputError(
            f'the summary declares no orientation for "{path}" and the metric catalogue has none; use '
            "max_increase/max_decrease, which do not need one, or re-score with a uqeval that writes it"
        )
    if val not in ("lower", "higher", "target"):
        raise InputError(
            f'summary orientation of "{path}" is {val!r}; expected "lower", "higher" or "target"'
        )
    return cast(Orientation, val)  # one of the three, checked just above


def target_of(summary: Mapping[str, Any], path: str, override: float | None = None) -> float:
    """Target value of a ``"target"``-oriented metric (see the module docstring)."""
    if override is not None:
        return float(override)
    _, keys = resolve_path(summary, path)
    okey = f"{keys[0]}.{keys[-1]}" if len(keys) >= 2 else path
    level = _enclosing_level(keys)
    targets = summary.get("targets")
    if isinstance(targets, dict):
        for key in (path, okey):
            if key in targets:
                tv = targets[key]
                if tv == "level" and level is not None:
                    return level
                if is_number(tv):
                    return float(tv)

    target = metric_target(keys[0], keys[-1], level) if len(keys) >= 2 else None
    return 0.0 if target is None else target


def _enclosing_level(keys: tuple[str, ...]) -> float | None:
    from .verdict import level_of

    return next((lv for key in reversed(keys[:-1]) if (lv := level_of(key)) is not None), None)


def settings_mismatch(summary: Mapping[str, Any], baseline: Mapping[str, Any]) -> list[str]:
    """Describe every scoring setting that differs between ``summary`` and ``baseline``.

    Compares every key of ``"settings"`` (bins, resolution, seed, levels, ...) plus
    ``input.representation`` and ``input.n_rows``. Returns one sentence per difference,
    empty if the two were scored alike.
    """
    out: list[str] = []

    def cmp(name: str, a: Any, b: Any, present_a: bool, present_b: bool) -> None:
        if not present_a and not present_b:
            return
        if not present_a or not present_b:
            where = "baseline" if present_a else "candidate"
            have = a if present_a else b
            out.append(f"{name}: missing in the {where} (the other has {_show(have)})")
        elif not _same(a, b):
            out.append(f"{name}: candidate {_show(a)}, baseline {_show(b)}")

    sa = summary.get("settings") or {}
    sb = baseline.get("settings") or {}
    for key in list(sa) + [k for k in sb if k not in sa]:
        cmp(f"settings.{key}", sa.get(key), sb.get(key), key in sa, key in sb)
    ia = summary.get("input") or {}
    ib = baseline.get("input") or {}
    for key in ("representation", "n_rows"):
        cmp(f"input.{key}", ia.get(key), ib.get(key), key in ia, key in ib)
    return out


def _same(a: Any, b: Any) -> bool:
    if is_number(a) and is_number(b):
        return a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12, abs_tol=0)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _show(x: Any) -> str:
    return json.dumps(x) if not isinstance(x, str) else repr(x)


# --------------------------------------------------------------------------- rules


_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_rules(text: str, source: str = "rules.toml") -> Rules:
    """Parse a rules file (TOML; format: docs/commands/check.md).

    Raises :class:`InputError` naming the file and line for malformed TOML, unknown
    top-level keys, settings or rule options, and bad values: one error for every
    problem of the file, in line order.
    """
    try:
        doc = loads_toml(text, source)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = _TOML_POS.search(msg)
        line = getattr(exc, "lineno", None) or (int(m.group(1)) if m else None)
        col = getattr(exc, "colno", None) or (int(m.group(2)) if m else None)
        reason = _TOML_POS.sub("", msg).strip()
        where = (
            f"line {line}, column {col}"
            if line
            else f"end of document (line {max(len(text.splitlines()), 1)})"
        )
        raise InputError(f"{source}: invalid TOML at {where}: {reason}; fix the syntax there") from None

    problems = _Problems(source)
    for key in doc:
        if key not in TOP_LEVEL_KEYS:
            close = difflib.get_close_matches(key, TOP_LEVEL_KEYS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            if isinstance(doc[key], dict) and not close:
                hint += "; metric rules go under a [rules] table"
            problems.add(
                _find_key_line(text, key),
                f"unknown top-level key '{key}'{hint}; allowed: {', '.join(TOP_LEVEL_KEYS)}",
            )

    require, require_line = _parse_require(doc.get("require", []), text, problems)
    settings = _parse_settings(doc.get("settings", {}), text, problems)

    rules_tbl = doc.get("rules", {})
    checks: list[Check] = []
    if not isinstance(rules_tbl, dict):
        problems.add(
            _find_key_line(text, "rules"),
            f"'rules' must be a table ([rules]), found {type(rules_tbl).__name__}",
        )
    else:
        for path, opts in _rule_tables(rules_tbl, (), text, problems):
            checks.extend(_parse_rule(path, opts, text, problems))
    problems.raise_any()

    if not checks and not require:
        raise InputError(
            f"{source}: defines no checks; add metric rules under a [rules] table "
            '(e.g. "accuracy.mae" = { max = 1.0 }) or a top-level require = [...] list'
        )
    return Rules(tuple(checks), tuple(require), settings, source, require_line)


class _Problems:
    """Every problem found in one rules file, raised together as one :class:`InputError`, in line order
    (the CLI prints one line: several problems are joined with ``; ``)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.items: list[tuple[int | None, str]] = []

    def add(self, line: int | None, message: str) -> None:
        self.items.append((line, message))

    def raise_any(self) -> None:
        if not self.items:
            return
        items = sorted(self.items, key=lambda item: (item[0] is None, item[0] or 0))  # stable: file order
        if len(items) == 1:
            line, msg = items[0]
            raise InputError(f"{self.source}, line {line}: {msg}" if line else f"{self.source}: {msg}")
        listed = "; ".join(f"line {line}: {msg}" if line else msg for line, msg in items)
        raise InputError(f"{self.source}: {len(items)} problems, in line order: {listed}")


def _rule_tables(tbl: dict, prefix: tuple[str, ...], text: str, problems: _Problems):
    """Yield ``(path, options)``; nested tables from bare dotted keys are joined back."""
    for key, val in tbl.items():
        parts = prefix + (key,)
        path = ".".join(parts)
        if not isinstance(val, dict):
            hint = ""
            if path == "require" and isinstance(val, list):
                hint = "; `require = [...]` must come before the first [table] header"
            problems.add(
                _find_path_line(text, path),
                f'rule "{path}" must be a table of options such as {{ max = 0.05 }}, found {_show(val)}{hint}',
            )
            continue
        nested = [k for k, v in val.items() if isinstance(v, dict)]
        if nested and len(nested) == len(val):
            yield from _rule_tables(val, parts, text, problems)
        elif nested:
            bad = next(k for k in val if isinstance(val[k], dict))
            yield path, {bad: val[bad], **{k: v for k, v in val.items() if k != bad}}
        else:
            yield path, val


def _parse_rule(path: str, opts: dict, text: str, problems: _Problems) -> list[Check]:
    line = _find_path_line(text, path)
    if not opts:
        problems.add(line, f'rule "{path}" has no options; give at least one of {", ".join(CHECK_OPTIONS)}')
        return []
    values: dict[str, float] = {}
    found = len(problems.items)
    for opt, val in opts.items():
        oline = _find_option_line(text, path, opt)
        if opt not in RULE_OPTIONS:
            close = difflib.get_close_matches(opt, RULE_OPTIONS, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.add(
                oline, f"rule \"{path}\": unknown option '{opt}'{hint}; allowed: {', '.join(RULE_OPTIONS)}"
            )
        elif not is_number(val) or not math.isfinite(val):
            problems.add(
                oline, f"rule \"{path}\": option '{opt}' must be a finite number, found {_show(val)}"
            )
        elif opt.startswith("max_") and val < 0:
            problems.add(
                oline,
                f"rule \"{path}\": option '{opt}' must be >= 0 (a limit on the size of a change), found {val:g}",
            )
        else:
            values[opt] = float(val)
    if "min" in values and "max" in values and values["min"] > values["max"]:
        problems.add(line, f'rule "{path}": min ({values["min"]:g}) is greater than max ({values["max"]:g})')
    if "target" in values and not any(o.startswith("max_regression") for o in values):
        problems.add(
            line, f"rule \"{path}\": option 'target' is only used by max_regression/max_regression_rel"
        )
    if len(problems.items) > found:
        return []
    target = values.get("target")
    return [
        Check(
            path,
            opt,
            values[opt],
            target if opt.startswith("max_regression") else None,
            _find_option_line(text, path, opt),
        )
        for opt in opts
        if opt != "target"
    ]


def _parse_require(val: Any, text: str, problems: _Problems) -> tuple[list[str], int | None]:
    line = _find_key_line(text, "require")
    if not isinstance(val, list) or not all(isinstance(p, str) and p for p in val):
        problems.add(line, f"'require' must be a list of metric paths (strings), found {_show(val)}")
        return [], line
    return list(dict.fromkeys(val)), line


def _parse_settings(val: Any, text: str, problems: _Problems) -> dict[str, bool]:
    out = dict(SETTINGS_DEFAULTS)
    if not isinstance(val, dict):
        problems.add(_find_key_line(text, "settings"), "'settings' must be a table")
        return out
    for key, v in val.items():
        line = _find_key_line(text, "settings", key)
        if key not in SETTINGS_DEFAULTS:
            close = difflib.get_close_matches(key, list(SETTINGS_DEFAULTS), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.add(line, f"unknown setting '{key}'{hint}; allowed: {', '.join(SETTINGS_DEFAULTS)}")
        elif not isinstance(v, bool):
            problems.add(line, f"setting '{key}' must be true or false, found {_show(v)}")
        else:
            out[key] = v
    return out


@functools.lru_cache(maxsize=4)
def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """:func:`uqeval.config.key_lines` of a rules file (computed once per text; not to be modified)."""
    return key_lines(text)


def _find_key_line(text: str, *path: str) -> int | None:
    """Line of the key ``path`` (``("settings", "require_baseline")``; one part: a top-level key)."""
    return line_of(_key_lines(text), *path)


def _rule_key(text: str, path: str) -> tuple[str, ...] | None:
    """The key under ``[rules]`` that defines the rule ``path`` (quoted, bare dotted or a sub-table header)."""
    found = [k for k in _key_lines(text) if k[:1] == ("rules",) and ".".join(k[1:]) == path]
    return min(found, key=lambda k: _key_lines(text)[k]) if found else None


def _find_path_line(text: str, path: str) -> int | None:
    """Line defining the rule ``path`` (its key, or the ``[rules."path"]`` header)."""
    key = _rule_key(text, path)
    return _key_lines(text)[key] if key is not None else None


def _find_option_line(text: str, path: str, option: str) -> int | None:
    """Line of ``option`` in the rule ``path``: the ``option = ...`` line of a ``[rules."path"]`` sub-table,
    the rule's own line for an inline table (``"path" = { ... }``)."""
    key = _rule_key(text, path)
    return line_of(_key_lines(text), *key, option) if key is not None else None


# --------------------------------------------------------------------------- evaluation


def fmt_value(x: float | None) -> str:
    """A value, limit or target as a check quotes it (messages, the table, JUnit details)."""
    return fmt_number(x, DETAIL)


def _le(x: float, limit: float) -> bool:
    return x <= limit or math.isclose(x, limit, rel_tol=_RTOL, abs_tol=_ATOL)


def _rel(change: float, base: float) -> float:
    if base != 0:
        return change / abs(base)
    if math.isclose(change, 0.0, abs_tol=_ATOL):
        return 0.0
    return math.copysign(math.inf, change)


def _pct(x: float) -> str:
    return f"{x:+.3g}%" if math.isfinite(x) else ("+inf%" if x > 0 else "-inf%")


def _number_or_none(val: Any) -> float | None:
    return float(val) if is_number(val) else None


def _bad_value(val: Any) -> str | None:
    if val is None:
        return "value is null (not computed for this input)"
    if not is_number(val):
        return f"value is not a number ({_show(val)})"
    if math.isnan(val):
        return "value is NaN"
    return None


def evaluate(
    rules: Rules,
    summary: Mapping[str, Any],
    baseline: Mapping[str, Any] | None = None,
) -> GateResult:
    """Evaluate every check of ``rules`` on ``summary`` (and ``baseline`` if given).

    Returns one :class:`GateRow` per ``require`` entry, then one per check, in file
    order. Raises :class:`InputError` if a rule's path is not in the summary (with
    close matches and the rules-file line) or points at a list/object: one error for
    every such rule, in line order.
    """
    validate_summary(summary, "summary")
    if baseline is not None:
        validate_summary(baseline, "baseline")
    rows: list[GateRow] = []

    for path in rules.require:
        ok, val, _ = _resolve(summary.get("metrics", {}), path)
        if not ok:
            msg = _unknown_path_message(summary, path)
        elif isinstance(val, (dict, list)):
            msg = f'"{path}" is a group or list, not a scalar metric'
        else:
            bad = _bad_value(val) or (None if math.isfinite(val) else f"value is {fmt_value(val)}")
            msg = f"present but {bad}" if bad else "present"
        status: Status = "PASS" if msg == "present" else "FAIL"
        rows.append(
            GateRow(
                path, "require", _number_or_none(val), None, "present", status, msg, line=rules.require_line
            )
        )

    skipped = 0
    problems = _Problems(rules.source)  # every rule on an unknown path at once, in line order
    bad_paths: set[str] = set()
    for chk in rules.checks:
        if chk.path in bad_paths:
            continue  # the rule's other options: its path is reported once
        try:
            listed = any(_KNOWN in message for _, message in problems.items)  # the known paths: listed once
            val, _ = _scalar_at(summary, chk.path, known=not listed)
            row = _evaluate_check(chk, val, summary, baseline, rules)
        except InputError as exc:
            problems.add(chk.line, str(exc))
            bad_paths.add(chk.path)
            continue
        skipped += row.status == "SKIP"
        rows.append(row)
    problems.raise_any()

    notes: list[str] = []
    if skipped and baseline is None:
        notes.append(f"no baseline given: {skipped} regression check(s) skipped")
    return GateResult(tuple(rows), rules.source, tuple(notes))


def _evaluate_check(
    chk: Check,
    val: Any,
    summary: Mapping[str, Any],
    baseline: Mapping[str, Any] | None,
    rules: Rules,
) -> GateRow:
    opt, x = chk.option, chk.threshold
    value = _number_or_none(val)

    def row(
        status: Status, limit: str, msg: str, base: float | None = None, orient: str | None = None
    ) -> GateRow:
        return GateRow(chk.path, opt, value, base, limit, status, msg, orient, chk.line)

    if opt in ABSOLUTE_OPTIONS:
        limit = f">= {fmt_value(x)}" if opt == "min" else f"<= {fmt_value(x)}"
        bad = _bad_value(val)
        if bad:
            return row("FAIL", limit, bad)
        assert value is not None  # a number: _bad_value found nothing wrong
        ok = _le(x, value) if opt == "min" else _le(value, x)
        if ok:
            return row("PASS", limit, f"{fmt_value(value)} {limit}")
        op = "<" if opt == "min" else ">"
        return row("FAIL", limit, f"{fmt_value(value)} {op} {opt} {fmt_value(x)}")

    rel = opt.endswith("_rel")
    kind = opt.removeprefix("max_").removesuffix("_rel")  # increase | decrease | regression
    orient: str | None = None
    target: float | None = None
    if kind == "regression":
        try:
            orient = orientation_of(summary, chk.path)
        except InputError as exc:  # evaluate() adds the rules file and line
            raise InputError(f'rule "{chk.path}": {exc}') from None
        if orient == "target":
            target = target_of(summary, chk.path, chk.target)
    else:
        try:
            orient = orientation_of(summary, chk.path)
        except InputError:
            orient = None

    unit = "% of baseline" if rel else ""
    shown = f"{x * 100:.6g}{unit}" if rel else fmt_value(x)
    limit = f"{kind} <= {shown}"
    if kind == "regression" and orient == "target":
        limit += f" (target {fmt_value(target)})"

    if baseline is None:
        if rules.settings.get("require_baseline", False):
            return row("FAIL", limit, "no baseline given (require_baseline = true)", None, orient)
        return row("SKIP", limit, "no baseline given", None, orient)
    ok_b, bval, _ = _resolve(baseline.get("metrics", {}), chk.path)
    if not ok_b or isinstance(bval, (dict, list)):
        return row(
            "FAIL",
            limit,
            f'the baseline has no metric "{chk.path}"; re-score the baseline with the current settings',
            None,
            orient,
        )
    base = _number_or_none(bval)
    bad = _bad_value(val)
    if bad:
        return row("FAIL", limit, bad, base, orient)
    bbad = _bad_value(bval)
    if bbad:
        return row("FAIL", limit, f"baseline {bbad}", base, orient)
    assert value is not None and base is not None  # numbers: _bad_value found nothing wrong with either

    if kind == "increase":
        change = value - base
    elif kind == "decrease":
        change = base - value
    elif orient == "lower":
        change = value - base
    elif orient == "higher":
        change = base - value
    else:  # target
        assert target is not None  # regression of a "target" metric: target_of gave it
        change = abs(value - target) - abs(base - target)
    amount = _rel(change, base) if rel else change
    ok = _le(amount, x)
    amount_txt = _pct(amount * 100) if rel else f"{change:+.6g}"

    if kind == "regression":
        what = f"distance to target {fmt_value(target)}" if orient == "target" else f"{orient} is better"
        desc = f"regression {amount_txt} ({what})"
    else:
        desc = f"{kind} {amount_txt}"
    if ok:
        return row("PASS", limit, f"{desc}, allowed {shown}", base, orient)
    msg = f"{desc} exceeds allowed {shown}"
    if (kind == "increase" and orient == "higher") or (kind == "decrease" and orient == "lower"):
        msg += (
            f"; note: this {kind} is an improvement ({orient} is better): use max_regression "
            "to limit only changes for the worse"
        )
    return row("FAIL", limit, msg, base, orient)
