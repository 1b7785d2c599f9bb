"""Settings: built-in defaults, overridden by a TOML config file, overridden by flags.

``configs/default.toml`` in the repository spells out exactly these defaults
(a test keeps the two in step). A config file has the tables ``[metrics]``,
``[columns]`` and ``[input]``; unknown keys are an error naming the key and line.

The command line also finds a config it was not given (:func:`find_config`, the way ruff, pytest
and mypy find theirs): ``--config FILE``, else the file named by ``UQEVAL_CONFIG``, else the
``[tool.uqeval.metrics]``/``[tool.uqeval.columns]``/``[tool.uqeval.input]`` tables of the nearest
``pyproject.toml`` that has them. The Python API reads only the config it is given. The source is
written to the JSON under ``settings.config``.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from .errors import InputError, UsageError, labelled, option
from .names import ROLES, SETTINGS, canonical
from .vocabulary import with_canonical_keys

#: the column roles, canonical spellings (their aliases: :data:`uqeval.names.ROLES`)
COLUMN_ROLES = tuple(ROLES)


@dataclass(frozen=True)
class Settings:
    """Every tunable of a scoring run; written to the JSON summary under ``settings``."""

    num_bins: int = 100  # avg calibration: expected proportions linspace(0, 1, num_bins)
    resolution: int = 99  # check / interval score: levels linspace(0.01, 0.99, resolution)
    seed: int = 0  # adversarial group calibration, bootstrap, permutation tests
    adv_num_group_sizes: int = 10  # group fractions linspace(0.01, 1, adv_num_group_sizes)
    adv_num_trials: int = 10
    adv_num_group_draws: int = 10
    levels: tuple[float, ...] | None = (
        None  # coverage levels; None: 0.95, or the levels quantiles/intervals carry
    )
    level: float = 0.95  # nominal level of a single lower/upper pair
    class_bins: int = 15  # classification calibration bins
    tace_threshold: float = 0.01
    oca_fraction: float = (
        0.01  # oracle collaborative accuracy: share of most uncertain rows sent to the oracle
    )
    bayes_samples: int = 500  # posterior draws of the Bayesian ECE
    diagnostics: bool = (
        False  # also compute the opt-in diagnostic groups (catalogue families with option="diagnostics")
    )
    # forecast verification (issue 16 A): opt-in groups weighted_scoring, exceedance, murphy
    tw_threshold: tuple[float | None, float | None] | None = None  # weight region [a, b] (None: unbounded)
    thresholds: tuple[float, ...] | None = None  # exceedance thresholds t: the events Y > t
    murphy: bool = False  # Murphy diagrams (elementary scores over a threshold grid)
    # only these metric groups (the JSON groups, e.g. scoring_rule); None: every group that applies
    groups: tuple[str, ...] | None = None
    nan_policy: str = "raise"
    fix_crossing: bool = False
    renormalize: bool = False
    logits: bool = (
        False  # the class columns hold logits: [input] logits, or named by [columns] logits / --logits
    )
    y_std: float | None = None  # reference std of training targets (coverage width_norm)
    representation: str | None = None
    sep: str | None = None  # CSV field separator (None: ",", or ";" with decimal = ",")
    decimal: str | None = None  # CSV decimal mark (None: "."; "," for decimal commas)
    columns: dict[str, Any] = field(default_factory=dict)
    # where the config came from: {"path": ..., "from": "--config" | "UQEVAL_CONFIG" | "pyproject.toml"
    # | "config argument"}; None: built-in defaults and flags only
    config: dict[str, str] | None = field(default=None, compare=False)  # a source, not a setting

    def __post_init__(self) -> None:
        if self.columns.get("logits"):  # class columns named as logits ([columns] logits, --logits COLS)
            object.__setattr__(self, "logits", True)  # say so, whoever named them
        _validate(self)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("levels", "tw_threshold", "thresholds", "groups"):  # tuples as JSON arrays
            d[key] = None if d[key] is None else list(d[key])
        for key in ("sep", "decimal", "groups"):  # written only when not the default
            if d[key] is None:
                del d[key]
        return d


#: Upper limits of the settings that scale time or memory, checked before any work
#: (flags: exit 2 via the options' ``max``; config files: exit 3 naming the file).
LIMITS: dict[str, int] = {
    "num_bins": 100_000,  # calibration curve: O(N * num_bins) comparisons
    "resolution": 10_000,  # check / interval scores: an (N, resolution) profile
    "class_bins": 100_000,
    "adv_num_group_sizes": 1_000,
    "adv_num_trials": 10_000,
    "adv_num_group_draws": 10_000,
    "bayes_samples": 1_000_000,
    "seed": 2**63 - 1,
    "bootstrap": 100_000,  # compare --bootstrap (resampled in bounded-memory chunks)
    "permutations": 1_000_000,  # compare --permutations, ucc --permutation-test
    "groups": 1_000,  # distinct --by values scored one by one
    "cells": 1_048_576,  # cells kept by --preserve-dims / --reduce-dims (per-cell sums, uqeval.commands.score.cells)
    "max_points": 1_000_000,
    "clusters": 10_000,
}

_TABLES = {
    "metrics": {
        "num_bins",
        "resolution",
        "seed",
        "adv_num_group_sizes",
        "adv_num_trials",
        "adv_num_group_draws",
        "levels",
        "level",
        "class_bins",
        "tace_threshold",
        "y_std",
        "oca_fraction",
        "bayes_samples",
        "diagnostics",
        "tw_threshold",
        "thresholds",
        "murphy",
        "groups",
    },
    "input": {"nan_policy", "fix_crossing", "renormalize", "logits", "representation", "sep", "decimal"},
    "columns": set(COLUMN_ROLES),
}


_KEY_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_HEADER = re.compile(rf"^\s*\[\[?\s*({_DOTTED})\s*\]")
_ASSIGN = re.compile(rf"^\s*({_DOTTED})\s*=")


def _key_parts(dotted: str) -> tuple[str, ...]:
    import json

    out = []
    for part in re.findall(_KEY_PART, dotted):
        if part.startswith('"'):
            try:
                part = json.loads(part)
            except ValueError:
                part = part[1:-1]
        elif part.startswith("'"):
            part = part[1:-1]
        out.append(part)
    return tuple(out)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The line (1-based) where each table and key of a TOML document is defined: ``("metrics",)`` for
    ``[metrics]``, ``("metrics", "seed")`` for ``seed = 1`` under it (or ``metrics.seed = 1`` at the top).

    A line scan, enough to point at a line in error messages (the document has been parsed already):
    lines inside multi-line strings are skipped; the first definition of a path wins.
    """
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    quote = None  # the delimiter of an open multi-line string
    for i, line in enumerate(text.splitlines(), 1):
        if quote is not None:
            if line.count(quote) % 2:
                quote = None
            continue
        m = _HEADER.match(line)
        if m:
            table = _key_parts(m.group(1))
            for k in range(1, len(table) + 1):  # [a.b] defines a (if nothing did before) and a.b
                lines.setdefault(table[:k], i)
        else:
            m = _ASSIGN.match(line)
            if m:
                path = table + _key_parts(m.group(1))
                for k in range(len(table) + 1, len(path) + 1):  # a.b.c = 1 defines a, a.b and a.b.c
                    lines.setdefault(path[:k], i)
        for q in ('"""', "'''"):
            if line.count(q) % 2:
                quote = q
                break
    return lines


def line_of(lines: dict[tuple[str, ...], int], *path: str) -> int | None:
    """The line of the key ``path`` in :func:`key_lines`' ``lines`` (or of the nearest enclosing table
    that has one: a key inside an inline table is on its table's line), else None."""
    for k in range(len(path), 0, -1):
        if path[:k] in lines:
            return lines[path[:k]]
    return None


def _in_line(line: int | None) -> str:
    """`` (line N)``, or nothing."""
    return f" (line {line})" if line is not None else ""


#: the environment variable naming a config file (used when no ``--config`` is given)
ENV_VAR = "UQEVAL_CONFIG"
_PYPROJECT_TABLE = re.compile(r"^\s*\[\s*tool\s*\.\s*(uqeval|\"uqeval\")\s*[.\]]", re.MULTILINE)


def find_config(start: str | Path | None = None, environ: Any = None) -> tuple[Path, str] | None:
    """The config the command line uses when no ``--config`` is given: ``(path, how it was found)``.

    The file named by ``UQEVAL_CONFIG`` (``"UQEVAL_CONFIG"``), else the nearest ``pyproject.toml``
    from ``start`` (the working directory) upwards that has a ``[tool.uqeval...]`` table
    (``"pyproject.toml"``; one without it is passed over, as ruff and pytest do), else None.
    """
    import os

    env = os.environ if environ is None else environ
    if env.get(ENV_VAR):
        return Path(env[ENV_VAR]), ENV_VAR
    here = Path(start if start is not None else os.getcwd()).absolute()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        try:
            text = candidate.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError):
            continue
        if _PYPROJECT_TABLE.search(text):
            return candidate, "pyproject.toml"
    return None


def read_text(path: Path, what: str) -> str:
    """The text of a file the user named (``what``: "config file", "rules file"), or a one-line InputError."""
    try:
        return path.read_text(
            encoding="utf-8-sig"
        )  # a byte-order mark (Windows editors) is not part of the text
    except FileNotFoundError:
        raise InputError(f"{what} '{path}' does not exist") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {what} '{path}': {exc}") from None


def load_config(path: str | Path) -> dict[str, Any]:
    """Read a TOML config file into flat ``Settings`` keyword overrides.

    A ``pyproject.toml`` holds the same tables under ``[tool.uqeval]`` (``[tool.uqeval.metrics]``, ...).
    """
    p = Path(path)
    text = read_text(p, "config file")
    from .strict import loads_toml, tomllib

    try:
        data = loads_toml(text, f"config file '{p}'")
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"config file '{p}' is not valid TOML: {exc}") from None
    out: dict[str, Any] = {}
    lines = key_lines(text)
    if not isinstance(data, dict):  # pragma: no cover - tomllib always returns a table
        raise InputError(f"config file '{p}' must hold TOML tables")
    prefix: tuple[str, ...] = ()
    if p.name == "pyproject.toml":
        prefix = ("tool", "uqeval")
        tool = data.get("tool")
        section = tool.get("uqeval") if isinstance(tool, dict) else None
        if not isinstance(section, dict):
            raise InputError(
                f"config file '{p}' has no [tool.uqeval] tables; put the settings under [tool.uqeval.metrics], "
                "[tool.uqeval.columns] and [tool.uqeval.input]"
            )
        data = section
    name = ".".join(prefix + ("",))  # "tool.uqeval." or ""
    home = {key: t for t, keys in _TABLES.items() for key in keys}
    problems: list[tuple[int | None, str]] = []  # every problem of the file, reported together
    keys: dict[str, tuple[str, int | None]] = {}  # setting -> (its table, its line)
    for table, body in data.items():
        if table not in _TABLES or not isinstance(body, dict):
            at = line_of(lines, *prefix, table)
            line = _in_line(at)
            if table in home and not isinstance(body, dict):
                top = f"[{name[:-1]}]" if name else "the top"
                problems.append((at, f"key '{table}' at {top}{line}; it belongs in [{name}{home[table]}]"))
            else:
                expected = sorted(name + t for t in _TABLES)
                problems.append((at, f"unknown table [{name}{table}]{line}; expected one of {expected}"))
            continue
        seen: dict[str, str] = {}  # canonical key -> the spelling used (an alias and its name: an error)
        for given, value in body.items():
            at = line_of(lines, *prefix, table, given)
            where = _in_line(at)
            key = canonical(given)
            if key not in _TABLES[table]:
                allowed = ", ".join(sorted(_TABLES[table]))
                aliases = sorted(a for k in _TABLES[table] for a in (*ROLES.get(k, ()), *SETTINGS.get(k, ())))
                also = f" (or their aliases {', '.join(aliases)})" if aliases else ""
                from .vocabulary import did_you_mean

                near = did_you_mean(given, [*_TABLES[table], *aliases])
                problems.append(
                    (at, f"unknown key '{given}' in [{name}{table}]{where}; allowed: {allowed}{also}{near}")
                )
            elif key in seen:
                problems.append((at, f"[{name}{table}] names {key} twice{where}: as {seen[key]} and {given}"))
            elif table == "columns":
                if not _column_spec(value):
                    what = f"must be a column name (a string) or a list of names, got {_show(value)}"
                    problems.append((at, f"[{name}columns] {key}{where} {what}"))
                else:
                    out.setdefault("columns", {})[key] = value
            else:
                out[key] = value
                keys[key] = (table, at)
            seen.setdefault(key, given)
    # every value checked here, so a bad one names the file (a bad flag is a usage error): each alone, then
    # together (a constraint between two settings)
    for key, (table, at) in keys.items():
        msg = _error_alone(key, out[key])
        if msg is not None:
            problems.append((at, f"{name}{table}.{key}{_in_line(at)}: {msg}"))
    if not problems:
        msg = _error_alone(None, {k: v for k, v in out.items() if k != "columns"})
        if msg is not None:
            problems.append((None, msg))
    if problems:
        problems.sort(key=lambda item: (item[0] is None, item[0] or 0))  # in line order (stable)
        listed = "; ".join(text for _, text in problems)
        if len(problems) > 1:
            listed = f"{len(problems)} problems, in line order: {listed}"
        raise InputError(f"config file '{p}': {listed}")
    return out


def _error_alone(key: str | None, value: Any) -> str | None:
    """The message of the settings error of ``key = value`` alone (``key`` None: ``value`` is a dict of
    settings, checked together), without the flag hints (they do not apply to a file); None if valid."""
    given = value if key is None else {key: value}
    try:
        _validate(replace(Settings(), **{k: _CONVERT.get(k, _same)(v) for k, v in given.items()}))
    except (InputError, TypeError, ValueError) as exc:
        return re.sub(r" \(--[a-z-]+\)", "", str(exc))
    return None


def _column_spec(value: Any) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _levels(value: Any) -> tuple[float, ...]:
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in value
    ):
        raise InputError(f"setting levels must be a list of numbers, got {_show(value)}")
    return tuple(float(v) for v in value)


def make_settings(
    config: str | Path | None = None,
    baseline: dict[str, Any] | None = None,
    *,
    discover: bool = False,
    **overrides: Any,
) -> Settings:
    """The one settings resolution: defaults <- ``baseline`` (the ``settings`` of a baseline
    summary) <- config file <- non-None ``overrides`` (flags). Validated on construction.

    Invalid baseline settings are bad input (:class:`InputError`, checked alone first); the config
    file is checked on reading; what is left came from flags (:class:`UsageError`).

    ``discover``: without ``config``, use the one :func:`find_config` finds (``UQEVAL_CONFIG``, a
    ``pyproject.toml``). The command line passes True; the Python API never discovers (it reads only
    the config it is given), so a notebook's results do not depend on its working directory. The
    config's source is kept in ``Settings.config`` (``"--config"`` when the command line gave it).
    """
    values: dict[str, Any] = {}
    columns: dict[str, Any] = {}
    if baseline is not None:
        known = {f.name for f in fields(Settings)} - {"columns", "config"}
        values.update({k: v for k, v in baseline.items() if k in known and v is not None})
        columns.update({k: v for k, v in (baseline.get("columns") or {}).items() if k != "by" and v})
        try:  # checked alone first, so a tampered baseline is bad input (3), not a usage error
            make_settings(None, discover=False, columns=dict(columns), **values)
        except (UsageError, TypeError) as exc:
            raise InputError(f"the baseline's settings are invalid: {exc}") from None
    source = None
    if config is not None:
        source = {"path": str(config), "from": "--config" if discover else "config argument"}
    elif discover:
        found = find_config()
        if found is not None:
            config, how = found
            source = {"path": str(config), "from": how}
    if config is not None:
        cfg = load_config(config)
        columns.update(cfg.pop("columns", {}) or {})
        values.update(cfg)
    overrides = with_canonical_keys(overrides, SETTINGS)
    given = {k: v for k, v in with_canonical_keys(overrides.pop("columns", None) or {}).items() if v}
    for a, b in (("proba", "logits"), ("logits", "proba")):  # a flag naming the class columns replaces the
        if a in given:  # config's naming of them, whichever role it used
            columns.pop(b, None)
    columns.update(given)
    values.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in fields(Settings)} - {"config"}
    unknown = set(values) - known
    if unknown:
        from .vocabulary import did_you_mean

        first = sorted(unknown)[0]
        raise InputError(f"unknown settings: {sorted(unknown)}{did_you_mean(first, sorted(known))}")
    try:
        for k in set(values) & set(_CONVERT):
            values[k] = _CONVERT[k](values[k])
        return replace(Settings(), **values, columns={k: v for k, v in columns.items() if v}, config=source)
    except InputError as exc:  # the config file was checked on reading: what is left came from flags
        raise UsageError(str(exc)) from None


def _validate(s: Settings) -> None:
    from .validation import check_level

    for name in (
        "num_bins",
        "resolution",
        "adv_num_group_sizes",
        "adv_num_trials",
        "adv_num_group_draws",
        "class_bins",
    ):
        v = getattr(s, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 2:
            raise InputError(f"setting {name} must be an integer >= 2, got {_show(v)}")
        if v > LIMITS[name]:
            raise InputError(
                f"setting {name} = {v} is above the limit {LIMITS[name]:,} (time and memory grow with it)"
            )
    if isinstance(s.seed, bool) or not isinstance(s.seed, int) or not 0 <= s.seed <= LIMITS["seed"]:
        raise InputError(f"{labelled('seed')} must be an integer from 0 to 2**63-1, got {_show(s.seed)}")
    for name in ("level", "y_std", "tace_threshold"):
        v = getattr(s, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise InputError(f"setting {name} must be a number, got {_show(v)}")
    for name in ("nan_policy", "representation", "sep", "decimal"):
        v = getattr(s, name)
        if v is not None and not isinstance(v, str):
            raise InputError(f"setting {name} must be a string, got {_show(v)}")
    if s.sep is not None and (len(s.sep) != 1 or s.sep in '"\r\n'):
        raise InputError(f"{labelled('sep')} must be one character such as ';' or a tab, got {_show(s.sep)}")
    if s.decimal is not None and s.decimal not in (".", ","):
        raise InputError(f"{labelled('decimal')} must be '.' or ',', got {_show(s.decimal)}")
    if s.decimal is not None and s.decimal == s.sep:
        raise InputError(
            f"{labelled('decimal')} {s.decimal!r} is the field separator too: pass {option('sep', ';')}"
        )
    for name in ("fix_crossing", "renormalize", "logits", "diagnostics", "murphy"):
        if not isinstance(getattr(s, name), bool):
            raise InputError(f"setting {name} must be true or false, got {_show(getattr(s, name))}")
    for lv in s.levels or ():
        check_level(lv, labelled("levels", "coverage level"))
    _validate_verification(s)
    if s.groups is not None and parse_groups(s.groups) != tuple(s.groups):
        raise InputError(f"{labelled('groups')} must be distinct group names, got {_show(s.groups)}")
    check_level(s.level, labelled("level", "interval level"))
    if s.nan_policy not in ("raise", "omit"):
        raise InputError(f"nan_policy must be 'raise' or 'omit', got {s.nan_policy!r}")
    if s.y_std is not None and not (s.y_std > 0):
        raise InputError(f"y_std must be > 0, got {s.y_std!r}")
    if (
        isinstance(s.oca_fraction, bool)
        or not isinstance(s.oca_fraction, (int, float))
        or not 0.0 <= s.oca_fraction <= 1.0
    ):
        raise InputError(f"{labelled('oca_fraction')} must be a number in [0, 1], got {s.oca_fraction!r}")
    if (
        isinstance(s.bayes_samples, bool)
        or not isinstance(s.bayes_samples, int)
        or not 1 <= s.bayes_samples <= LIMITS["bayes_samples"]
    ):
        raise InputError(
            f"{labelled('bayes_samples')} must be an integer from 1 to {LIMITS['bayes_samples']:,}, "
            f"got {_show(s.bayes_samples)}"
        )


# --------------------------------------------------------------------------- forecast verification (issue 16 A)
# --tw-threshold / tw_threshold: the weight region of weighted_scoring, one small syntax parsed here only.
#   "t" or ">t": above t, w(z) = 1{z >= t}     "<t": below t, w(z) = 1{z <= t}     "a:b": the interval [a, b]
# A config file may also give a number (above it) or a pair [a, b]; the JSON writes [a, b] with null
# for an open end. --threshold / thresholds: exceedance thresholds, numbers (a list, or "0.5,1").


def _same(value: Any) -> Any:
    return value


def parse_region(value: Any) -> tuple[float | None, float | None] | None:
    """The weight region ``(a, b)`` (None: open end) of a ``--tw-threshold`` value; InputError if malformed."""
    if value is None:
        return None
    how = "'t' or '>t' (above t), '<t' (below t) or 'a:b' (between a and b)"

    def num(text: Any) -> float:
        if isinstance(text, bool):
            raise ValueError
        v = float(text)
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError
        return v

    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            region: tuple[float | None, float | None] = (num(value), None)
        elif isinstance(value, (list, tuple)):
            a, b = value
            region = (None if a is None else num(a), None if b is None else num(b))
        elif isinstance(value, str):
            text = value.strip()
            if text.startswith(">"):
                region = (num(text[1:].lstrip("=")), None)
            elif text.startswith("<"):
                region = (None, num(text[1:].lstrip("=")))
            elif ":" in text:
                a, b = text.split(":")
                region = (num(a), num(b))
            else:
                region = (num(text), None)
        else:
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f"{labelled('tw_threshold')} takes {how}, got {_show(value)}") from None
    if (
        region == (None, None)
        or region[0] is not None
        and region[1] is not None
        and not region[0] < region[1]
    ):
        raise InputError(f"{labelled('tw_threshold')} needs a < b in 'a:b', got {_show(value)}")
    return region


def parse_thresholds(value: Any) -> tuple[float, ...] | None:
    """Exceedance thresholds from a number, a list, or comma-separated text (duplicates dropped, order kept)."""
    if value is None:
        return None
    items = value if isinstance(value, (list, tuple)) else [value]
    out: list[float] = []
    for item in items:
        parts = item.split(",") if isinstance(item, str) else [item]
        for part in parts:
            if isinstance(part, str) and not part.strip():
                continue
            try:
                if isinstance(part, bool):
                    raise ValueError
                v = float(part)
            except (TypeError, ValueError):
                raise InputError(f"{labelled('thresholds')} must be numbers, got {_show(part)}") from None
            if v != v or v in (float("inf"), float("-inf")):
                raise InputError(f"{labelled('thresholds')} must be finite, got {_show(part)}")
            if v not in out:
                out.append(v)
    if not out:
        raise InputError(f"{labelled('thresholds')} is empty")
    return tuple(out)


def parse_groups(value: Any) -> tuple[str, ...] | None:
    """Metric groups from a list or comma-separated text (blanks and duplicates dropped, order kept); the
    catalogue checks the names (:func:`uqeval.catalogue.families_for`)."""
    if value is None:
        return None
    parts = value.split(",") if isinstance(value, str) else value
    if not isinstance(parts, (list, tuple)) or not all(isinstance(p, str) for p in parts):
        raise InputError(f"{labelled('groups')} must be group names (a list, or 'a,b'), got {_show(value)}")
    out = tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))
    if not out:
        raise InputError(f"{labelled('groups')} is empty")
    return out


def _separator(value: Any) -> Any:
    """A CSV field separator as typed on a command line or in a file: ``\\t`` or ``tab`` is a tab."""
    return "\t" if value in ("\\t", "tab") else value


_CONVERT = {
    "levels": _levels,
    "tw_threshold": parse_region,
    "thresholds": parse_thresholds,
    "groups": parse_groups,
    "sep": _separator,
}


def _validate_verification(s: Settings) -> None:
    if s.tw_threshold is not None and parse_region(s.tw_threshold) != tuple(s.tw_threshold):
        raise InputError(f"tw_threshold must be a region (a, b), got {_show(s.tw_threshold)}")
    if s.thresholds is not None and parse_thresholds(s.thresholds) != tuple(s.thresholds):
        raise InputError(f"thresholds must be distinct finite numbers, got {_show(s.thresholds)}")
    if s.thresholds is not None and len(s.thresholds) > MAX_THRESHOLDS:
        raise InputError(
            f"{labelled('thresholds')}: {len(s.thresholds):,} given, at most {MAX_THRESHOLDS:,} "
            "(each is a pass over the rows)"
        )


#: At most this many exceedance thresholds (each costs a pass over the rows and a JSON entry).
MAX_THRESHOLDS = 1_000


# --------------------------------------------------------------------------- bundled example files


#: what each bundled example file is (``uqeval config list``)
_BUNDLED_ABOUT = {
    "default": "every built-in setting, as a --config file spells it",
    "ci": "annotated rules for uqeval check --rules (the CI gate)",
}


def bundled_configs() -> dict[str, str]:
    """The example files installed with uqeval (``uqeval/configs/*.toml``): name -> what it is.

    ``default`` spells out every built-in setting (a ``--config`` file); ``ci`` is an annotated
    ``uqeval check --rules`` file. The repository's top-level ``configs/`` holds the same files.
    """
    from importlib.resources import files

    out = {}
    for entry in sorted(files("uqeval.configs").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            stem = entry.name[: -len(".toml")]
            out[stem] = _BUNDLED_ABOUT.get(stem, "")
    return out


def bundled_config(name: str) -> str:
    """The text of the bundled example file ``name`` (``default`` or ``ci``; ``.toml`` may be given)."""
    from importlib.resources import files

    known = bundled_configs()
    stem = name[: -len(".toml")] if name.endswith(".toml") else name
    if stem not in known:
        raise UsageError(f"no bundled config {name!r}; bundled: {', '.join(known)} (uqeval config list)")
    return files("uqeval.configs").joinpath(f"{stem}.toml").read_text(encoding="utf-8")
