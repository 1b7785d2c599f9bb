"""Find the columns of each role by name, and the representation they make up.

Names are matched case-insensitively. Explicit choices (flags or the config
file's ``[columns]`` table) always win; two automatic candidates for one role
are an error that says which flag picks one.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError, SchemaError, option

ALIASES: dict[str, tuple[str, ...]] = {
    "y_true": ("y", "y_true", "target"),
    "label": ("label",),
    "mean": ("mean", "mu", "y_pred", "pred"),
    "std": ("std", "sigma", "y_std"),
    "var": ("var", "variance"),
    "lower": ("lower",),
    "upper": ("upper",),
}

#: Other names people use, consulted only when no name of :data:`ALIASES` matches the role, and
#: used only when exactly one column matches (a spread found this way never competes with another
#: representation's columns).
MORE_ALIASES: dict[str, tuple[str, ...]] = {
    "y_true": ("truth", "actual"),
    "mean": ("prediction", "y_hat", "yhat"),
    "std": ("stddev", "sd", "pred_std"),
}

_NUM = r"(\d*\.?\d+(?:[eE]-?\d+)?)"
QUANTILE_RE = re.compile(rf"^(?:q|quantile)_?{_NUM}$", re.I)
LOWER_RE = re.compile(rf"^lower_{_NUM}$", re.I)
UPPER_RE = re.compile(rf"^upper_{_NUM}$", re.I)
SAMPLE_RE = re.compile(r"^(?:s|sample)_(\d+)$", re.I)
PROBA_RE = re.compile(r"^(?:p|prob)_(\d+)$", re.I)
LOGIT_RE = re.compile(r"^logit_(\d+)$", re.I)
MEMBER_RE = re.compile(r"^m(\d+)_p_(\d+)$", re.I)  # ensemble member j, class k
ALPHA_RE = re.compile(r"^alpha_(\d+)$", re.I)  # Dirichlet concentrations
LOGLIK_RE = re.compile(r"^loglik_(\d+)$", re.I)  # log p(y | member j)
MV_MEMBER_RE = re.compile(r"^m(\d+)_(\d+)$", re.I)  # multivariate ensembles: member j, component k
MV_TARGET_RE = re.compile(r"^y_(\d+)$", re.I)  # multivariate targets y_1..y_d
#: What each representation reads, for the error when ``--representation`` finds none of it (``{role}``: the
#: option that names that role's columns, as the front end spells it).
NEEDS: dict[str, str] = {
    "gaussian": "a spread column: std (std, sigma, y_std, sd, stddev or {std}) or a variance (var, variance or {var})",
    "intervals": "lower and upper bound columns (lower/upper, lower_<level>/upper_<level>, or {lower}/{upper})",
    "quantiles": "quantile columns q_<level> (e.g. q_0.05, q_0.5, q_0.95)",
    "samples": "sample columns s_0 .. s_<M-1>, or a Parquet list column 'samples'",
    "categorical": "class probability columns p_0 .. p_<K-1> (or logit_<k>, or a Parquet list column 'proba', or columns named with {proba})",
    "members": "ensemble member columns m<j>_p_<k>, or a Parquet list column 'member_proba'",
    "dirichlet": "concentration columns alpha_0 .. alpha_<K-1>, or a Parquet list column 'alpha'",
    "loglik": "log-likelihood columns loglik_<j>, or a Parquet list column 'loglik'",
    "multivariate": "member columns m<j>_<k> with targets y_<k>, or a Parquet list-of-lists column 'samples'",
}


@dataclass
class ColumnPlan:
    """Which file columns feed which role of which representation."""

    representation: str
    roles: dict[str, Any] = field(default_factory=dict)  # role -> column name or list of names
    levels: list[float] | None = None  # quantile levels or interval levels
    list_roles: set[str] = field(default_factory=set)  # roles read from one Parquet list column
    logits: bool = False
    classes: int | None = None  # K of flat m{j}_p_{k} member columns (member-major)

    def needed(self) -> list[str]:
        out: list[str] = []
        for v in self.roles.values():
            out.extend(v if isinstance(v, list) else [v])
        return out


def match_column(columns: Sequence[str], name: str) -> str | None:
    """The column of ``columns`` that ``name`` names (a role's ``--NAME COLUMN``, ``--x``, ``--points-by``, a
    feature, ``--cluster``): the same name, else the one that matches it case-insensitively; None if none."""
    if name in columns:
        return name
    return {c.lower(): c for c in columns}.get(name.lower())  # (of two such, the last, as it always was)


def _find(names: list[str], role: str, explicit: dict[str, str], path: str) -> str | None:
    if role in explicit:
        want = explicit[role]
        found = match_column(names, want)
        if found is not None:
            return found
        raise SchemaError(
            f"{path}: column '{want}' given for {role} ({option(role)}) not found; "
            f"available columns: {', '.join(names[:20])}{' ...' if len(names) > 20 else ''}"
        )
    for aliases in (ALIASES.get(role, ()), MORE_ALIASES.get(role, ())):
        hits = [n for n in names if n.lower() in aliases]
        if len(hits) > 1:
            raise SchemaError(
                f"{path}: ambiguous {role} column: {', '.join(repr(h) for h in hits)} all match; "
                f"choose one with {option(role, 'COLUMN')}"
            )
        if hits:
            return hits[0]
    return None


def _named_columns(names: list[str], spec: Any, role: str, path: str) -> list[str]:
    """The columns ``spec`` names: a list of names, or one string of comma-separated names and
    globs (``'p0,p1,p2'``, ``'p*'``; case-insensitive). Glob matches are ordered by the number in
    their name (``p2`` before ``p10``), else as in the file."""
    parts = list(spec) if isinstance(spec, (list, tuple)) else [t.strip() for t in str(spec).split(",")]
    parts = [t for t in parts if t]
    lower = {n.lower(): n for n in names}
    out: list[str] = []
    for part in parts:
        if any(c in part for c in "*?["):
            hits = [n for n in names if fnmatch.fnmatchcase(n.lower(), part.lower())]
            if all(re.search(r"\d+", h) for h in hits):
                hits.sort(key=lambda h: int(re.findall(r"\d+", h)[-1]))
        else:
            hits = [lower[part.lower()]] if part.lower() in lower else []
        if not hits:
            raise SchemaError(
                f"{path}: {'no column matches' if any(c in part for c in '*?[') else 'no column named'} "
                f"'{part}' given for {role} ({option(role)}); available columns: "
                f"{', '.join(names[:20])}{' ...' if len(names) > 20 else ''}"
            )
        out += [h for h in hits if h not in out]
    if not out:
        raise SchemaError(f"{path}: {option(role)} names no column; give names or a glob such as 'p*'")
    return out


def _indexed(names: list[str], regex: re.Pattern[str], what: str, path: str) -> list[str]:
    """Columns like s_0..s_{M-1}, ordered by index; the indices must be 0..M-1."""
    found = sorted(((int(m.group(1)), n) for n in names if (m := regex.match(n))), key=lambda t: t[0])
    if not found:
        return []
    idx = [i for i, _ in found]
    if idx != list(range(len(idx))):
        raise SchemaError(
            f"{path}: {what} columns must be numbered 0..{len(idx) - 1} without gaps or repeats; found {idx}"
        )
    return [n for _, n in found]


_LEVEL_PREFIX = {
    QUANTILE_RE: re.compile(r"^(?:q|quantile)_", re.I),
    LOWER_RE: re.compile(r"^lower_", re.I),
    UPPER_RE: re.compile(r"^upper_", re.I),
}


def _leveled(names: list[str], regex: re.Pattern[str], path: str = "input") -> list[tuple[float, str]]:
    """Columns whose name carries a level (``q_0.05``, ``lower_0.9``), sorted by level.

    A name with the prefix but no parsable level in (0, 1) is an error, not silently ignored.
    """
    out = []
    for n in names:
        m = regex.match(n)
        if m:
            level = float(m.group(1))
            if not 0.0 < level < 1.0:
                raise SchemaError(
                    f"{path}: column '{n}' names level {m.group(1)}, which is not strictly between "
                    "0 and 1; write levels as fractions, e.g. q_0.05"
                )
            out.append((level, n))
        elif _LEVEL_PREFIX[regex].match(n):
            raise SchemaError(
                f"{path}: cannot parse the level of column '{n}'; name it like "
                f"{'q_0.05' if regex is QUANTILE_RE else regex.pattern[1:6] + '_0.9'} "
                "(or rename the column if it is not a prediction)"
            )
    return sorted(out)


def _member_grid(names: list[str], path: str) -> tuple[list[str], int]:
    """``m{j}_p_{k}`` columns ordered member-major, and K; they must form a full M x K grid."""
    cells = [((int(m.group(1)), int(m.group(2))), n) for n in names if (m := MEMBER_RE.match(n))]
    if not cells:
        return [], 0
    found: dict[tuple[int, int], str] = {}
    for cell, name in cells:
        if cell in found:
            raise SchemaError(
                f"{path}: ensemble member columns '{found[cell]}' and '{name}' name the same member "
                "and class; rename or drop one"
            )
        found[cell] = name
    members = sorted({j for j, _ in found})
    classes = sorted({k for _, k in found})
    n_m, n_k = len(members), len(classes)
    if members != list(range(n_m)) or classes != list(range(n_k)):
        raise SchemaError(
            f"{path}: ensemble member columns m<j>_p_<k> must be numbered j = 0..M-1 and k = 0..K-1 without gaps; "
            f"found members {members} and classes {classes}"
        )
    missing = [f"m{j}_p_{k}" for j in range(n_m) for k in range(n_k) if (j, k) not in found]
    if missing:
        raise SchemaError(
            f"{path}: ensemble member columns must cover every member and class ({n_m} members x {n_k} classes); "
            f"missing {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}"
        )
    return [found[(j, k)] for j in range(n_m) for k in range(n_k)], n_k


def plan_columns(
    names: list[str],
    list_columns: frozenset[str] | set[str] = frozenset(),
    explicit: dict[str, Any] | None = None,
    representation: str | None = None,
    logits: bool = False,
    path: str = "input",
) -> ColumnPlan:
    """Detect the representation and the column of each role."""
    explicit = {k: v for k, v in (explicit or {}).items() if v}
    lc = {n.lower(): n for n in list_columns}
    fam: dict[str, ColumnPlan] = {}
    _class_plans(fam, names, lc, explicit, representation, logits, path)
    loglik: list[str] | str = _indexed(names, LOGLIK_RE, "log-likelihood", path)  # or one list column
    if not loglik and "loglik" in lc:
        loglik = lc["loglik"]
    _regression_plans(fam, names, lc, explicit, path)
    chosen = _chosen(fam, representation, bool(loglik), names, explicit, path)
    if loglik:  # per-member log-likelihoods ride along with any representation
        chosen.roles["loglik"] = loglik
        if isinstance(loglik, str):
            chosen.list_roles.add("loglik")
    if chosen.representation not in ("loglik", "multivariate"):
        _target_and_mean(chosen, names, explicit, path)
    for role in ("by", "weights"):
        if role in explicit:
            chosen.roles[role] = _find(names, role, explicit, path)
    return chosen


def _class_plans(
    fam: dict[str, ColumnPlan],
    names: list[str],
    lc: dict[str, str],
    explicit: dict[str, Any],
    representation: str | None,
    logits: bool,
    path: str,
) -> None:
    """Add to ``fam`` the class-probability plans the columns fit: classifiers (probabilities or logits,
    named or detected), ensembles of classifiers and Dirichlet outputs (``explicit``'s logits become proba)."""
    # classification
    named_as = "proba"  # the role the class columns were named by (messages name its option)
    if "logits" in explicit:  # --logits 'z*', [columns] logits = "z*": the named class columns hold logits
        if "proba" in explicit:
            raise SchemaError(
                f"{path}: class columns are named twice (proba and logits); name them once: "
                f"with {option('logits')} if they hold logits, else with {option('proba')}"
            )
        explicit["proba"], logits, named_as = explicit.pop("logits"), True, "logits"
    proba_cols: list[str] = []
    if "proba" not in explicit:
        proba_cols = _indexed(
            names, LOGIT_RE if logits else PROBA_RE, "logit" if logits else "probability", path
        )
        if not logits and not proba_cols:
            logit_cols = _indexed(names, LOGIT_RE, "logit", path)
            if logit_cols:
                proba_cols, logits = logit_cols, True
    if proba_cols or "proba" in lc or "proba" in explicit:
        plan = ColumnPlan("categorical", logits=logits)
        spec = explicit.get("proba")
        if isinstance(spec, str) and spec.lower() in lc:  # one Parquet list column
            plan.roles["proba"] = lc[spec.lower()]
            plan.list_roles.add("proba")
        elif spec is not None:
            plan.roles["proba"] = _named_columns(names, spec, named_as, path)
        else:
            _found_or_list(plan, "proba", proba_cols, lc)
        fam["categorical"] = plan
    elif representation in (None, "categorical"):
        single = [n for n in names if n.lower() == "p"]
        if single:
            fam["categorical"] = ColumnPlan("categorical", roles={"proba": single}, logits=False)

    # ensembles of classifiers, and Dirichlet outputs
    members, n_classes = _member_grid(names, path)
    if members or "member_proba" in lc:
        if members:
            fam["members"] = ColumnPlan("members", roles={"member_proba": members}, classes=n_classes)
        else:
            fam["members"] = ColumnPlan(
                "members", roles={"member_proba": lc["member_proba"]}, list_roles={"member_proba"}
            )
    alphas = _indexed(names, ALPHA_RE, "Dirichlet alpha", path)
    if alphas or "alpha" in lc:
        if alphas:
            fam["dirichlet"] = ColumnPlan("dirichlet", roles={"alpha": alphas})
        else:
            fam["dirichlet"] = ColumnPlan("dirichlet", roles={"alpha": lc["alpha"]}, list_roles={"alpha"})


def _found_or_list(plan: ColumnPlan, role: str, found: list[str], lc: dict[str, str]) -> None:
    """``plan`` reads ``role`` from the columns ``found`` by name, else from its one Parquet list column."""
    if found:
        plan.roles[role] = found
    else:
        plan.roles[role] = lc[role]
        plan.list_roles.add(role)


def _regression_plans(
    fam: dict[str, ColumnPlan], names: list[str], lc: dict[str, str], explicit: dict[str, Any], path: str
) -> None:
    """Add to ``fam`` the regression plans the columns fit: samples, quantiles, intervals, multivariate
    ensembles, Gaussian (std or variance)."""
    samples = _indexed(names, SAMPLE_RE, "sample", path)
    if samples or "samples" in lc:
        plan = ColumnPlan("samples")
        _found_or_list(plan, "samples", samples, lc)
        fam["samples"] = plan

    quants = _leveled(names, QUANTILE_RE, path)
    if quants:
        fam["quantiles"] = ColumnPlan(
            "quantiles", roles={"quantiles": [n for _, n in quants]}, levels=[lv for lv, _ in quants]
        )

    lows, ups = _leveled(names, LOWER_RE, path), _leveled(names, UPPER_RE, path)
    lower, upper = _find(names, "lower", explicit, path), _find(names, "upper", explicit, path)
    if lows or ups:
        lo_levels, up_levels = [lv for lv, _ in lows], [lv for lv, _ in ups]
        if lo_levels != up_levels:
            raise SchemaError(
                f"{path}: lower_*/upper_* columns must come in pairs; lower levels {lo_levels}, upper levels {up_levels}"
            )
        fam["intervals"] = ColumnPlan(
            "intervals", roles={"lower": [n for _, n in lows], "upper": [n for _, n in ups]}, levels=lo_levels
        )
    elif lower or upper:
        if not (lower and upper):
            missing = "upper" if lower else "lower"
            raise SchemaError(
                f"{path}: found a '{lower or upper}' column but no {missing} bound; "
                f"add it or name it with {option(missing)}"
            )
        fam["intervals"] = ColumnPlan("intervals", roles={"lower": [lower], "upper": [upper]}, levels=None)

    mv = _multivariate_plan(names, path)  # forecast verification (issue 16): multivariate ensembles
    if mv is not None:
        fam["multivariate"] = mv

    std, var = _find(names, "std", explicit, path), _find(names, "var", explicit, path)
    if std and (var or fam) and "std" not in explicit and std.lower() not in ALIASES["std"]:
        std = None  # a spread found by one of MORE_ALIASES' names (sd, stddev) never competes with other columns
    if std and var:
        raise SchemaError(
            f"{path}: both a std column ('{std}') and a variance column ('{var}') found; "
            f"pick one with {option('std')} or {option('var')}"
        )
    if std or var:
        fam["gaussian"] = ColumnPlan("gaussian", roles={"std": std} if std else {"var": var})


def _chosen(
    fam: dict[str, ColumnPlan],
    representation: str | None,
    loglik: bool,
    names: list[str],
    explicit: dict[str, Any],
    path: str,
) -> ColumnPlan:
    """The plan of the representation asked for, or the only one the columns fit (point predictions or
    log-likelihoods alone when none does)."""
    if representation is not None:
        if representation == "point":
            chosen = ColumnPlan("point")
        elif representation == "loglik" and loglik:
            chosen = ColumnPlan("loglik")
        elif representation not in fam:
            need = NEEDS.get(representation, "").format(
                **{r: option(r) for r in ("std", "var", "lower", "upper", "proba")}
            )
            raise SchemaError(
                f"{path}: {option('representation', representation)} requested but its columns were not found "
                f"(detected: {', '.join(sorted(fam)) or 'none'}){f'; it needs {need}' if need else ''}"
            )
        else:
            chosen = fam[representation]
    elif len(fam) > 1:
        raise SchemaError(
            f"{path}: the columns fit several representations ({', '.join(sorted(fam))}); "
            f"choose one with {option('representation')}"
        )
    elif fam:
        chosen = next(iter(fam.values()))
    elif loglik and _find(names, "mean", explicit, path) is None:
        chosen = ColumnPlan("loglik")  # log-likelihoods alone: information criteria, no target needed
    else:
        chosen = ColumnPlan("point")
    return chosen


def _target_and_mean(chosen: ColumnPlan, names: list[str], explicit: dict[str, Any], path: str) -> None:
    """The target (the label of a classifier) and point-prediction columns of ``chosen``."""
    if chosen.representation in ("categorical", "members", "dirichlet"):
        target = _find(
            names, "label", {"label": explicit["y_true"]} if "y_true" in explicit else {}, path
        ) or _find(names, "y_true", explicit, path)
    else:
        target = _find(names, "y_true", explicit, path)
    if target:
        chosen.roles["y_true"] = target
    if chosen.representation in ("gaussian", "point", "intervals"):
        mean = _find(names, "mean", explicit, path)
        if mean:
            chosen.roles["mean"] = mean
        elif chosen.representation != "intervals":
            if chosen.representation == "point":
                other = {str(explicit[r]).lower() for r in ("by", "weights") if r in explicit}
                taken = {n for n in names if n.lower() in other}  # --by region is not a prediction
                raise SchemaError(no_predictions_message(names, path, target, taken))
            raise SchemaError(
                f"{path}: no mean column found (mean/mu/y_pred/pred, or one of prediction/y_hat/yhat); "
                f"name it with {option('mean', 'COLUMN')}"
            )


#: words in a column's name that hint at its role when no alias matched (``obs_temp``, ``fcst``, ``unc``);
#: a name with words of two roles hints at the later one (``pred_std``: a spread, ``y_pred``: a mean)
HINT_WORDS: dict[str, frozenset[str]] = {
    "y_true": frozenset(
        "y obs observed observation observations actual actuals truth true target label measured "
        "measurement outcome response verification".split()
    ),
    "mean": frozenset(
        "pred prediction predicted predictions forecast forecasts fcst fc guess estimate est mean mu yhat "
        "hat expected expectation median point model".split()
    ),
    "std": frozenset("std sd sigma stdev stddev unc uncertainty spread scale var variance error err".split()),
}


def _words(name: str) -> set[str]:
    """The words of a column name: split at non-letters and camelCase (``obsTemp2`` -> obs, temp)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return {w.lower() for w in re.split(r"[^A-Za-z]+", spaced) if w}


def _role_hint(names: list[str], roles: list[str], numeric: set[str] | None) -> dict[str, str]:
    """``{role: column}`` for the roles a column's name hints at (:data:`HINT_WORDS`), each column once;
    columns known not to hold numbers (dates, text: ``numeric`` is the set of those that do) never."""
    hint: dict[str, str] = {}
    for name in names:
        if numeric is not None and name not in numeric:
            continue
        words = _words(name)
        hits = [
            r for r in ("std", "mean", "y_true") if r in roles and r not in hint and words & HINT_WORDS[r]
        ]
        if hits:
            hint[hits[0]] = name
    return hint


def no_predictions_message(
    names: list[str],
    path: str,
    target: str | None,
    taken: Collection[str] = (),
    numeric: set[str] | None = None,
) -> str:
    """The error for a file without prediction columns: the columns it has, the options that name
    them, and a hint when the header looks mis-read.

    The options are filled in from the columns' names (``--y obs --mean fcst --std unc``: words of
    :data:`HINT_WORDS`), never by position; a column named with another role (``taken``: ``--by``,
    ``--weights``) or known not to hold numbers (``numeric``: the columns that do; default: those of
    :func:`numeric_columns` of ``path``) is never suggested. Without a name to go by, the options
    are shown with ``COLUMN`` (``--std`` only when a name hints at a spread)."""
    shown = ", ".join(repr(n) for n in names[:20]) + (" ..." if len(names) > 20 else "")
    head = f"{path}: no prediction columns found among the columns {shown}"
    if len(names) == 1:
        for sep, what in ((";", "semicolons"), ("\t", "tabs"), ("|", "'|'")):
            if sep in names[0]:
                return (
                    f"{head}: the header was read as one column, so the file seems separated by {what}; "
                    f"pass {option('sep')}{'' if option('sep').endswith('=') else ' '}{sep!r} (and "
                    f"{option('decimal')}{'' if option('decimal').endswith('=') else ' '}',' for decimal commas)"
                )
    if numeric is None:
        numeric = numeric_columns(path, names)
    free = [n for n in names if n != target and n not in taken]
    numbered: dict[str, list[str]] = {}
    for n in free:
        m = re.fullmatch(r"(.*?[A-Za-z_])\d+", n)
        if m:
            numbered.setdefault(m.group(1), []).append(n)
    prefix = max(numbered, key=lambda k: len(numbered[k]), default=None)
    if prefix is not None and len(numbered[prefix]) >= 2:  # p0, p1, p2: class probabilities
        label = target or next((n for n in free if n.lower() in ("label", "class")), None)
        rest = [n for n in free if n not in numbered[prefix] and n != label]
        y = label or _role_hint(rest, ["y_true"], numeric).get("y_true")
        hint = (f"{option('y_true', _quoted(y))} " if y and not target else "") + option(
            "proba", repr(_quoted(prefix) + "*")
        )
        return (
            f"{head}; name class probability columns with {hint} (add {option('logits')} if they hold logits)"
        )
    roles = ([] if target else ["y_true"]) + ["mean", "std"]
    named = _role_hint(free, roles, numeric)
    hint = " ".join(  # a spread only where a name hints at one: point predictions need none
        option(r, _quoted(named[r]) if r in named else "COLUMN") for r in roles if r != "std" or r in named
    )
    expected = (
        "expected a mean (mean/mu/y_pred/pred/prediction/y_hat), a spread (std/sigma/sd or var), "
        "lower/upper, q_<level>, s_<i> or p_<k> columns"
    )
    glob = option("proba", "'p*'")
    return f"{head}; {expected}, or name yours, e.g. {hint} (class probabilities: {glob})"


def numeric_columns(path: str, names: list[str]) -> set[str] | None:
    """The columns of the file at ``path`` that hold numbers (a Parquet schema's integer, float and
    decimal columns; a CSV column whose first 200 values are numbers or empty), or None when the file
    cannot be read here (standard input, a URI, an in-memory table). For messages only."""
    import csv
    import zlib
    from pathlib import Path

    from .readers import detect_format, open_csv_text

    p = Path(path)
    try:
        fmt = detect_format(path)
    except InputError:
        return None
    if not p.is_file():
        return None
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(p)
        except (pa.ArrowException, OSError):
            return None
        return {
            f.name
            for f in schema
            if pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type)
        }
    from .dialect import csv_dialect

    sep, decimal = csv_dialect()  # the --sep and --decimal of this run
    try:
        with open_csv_text(p) as fh:
            reader = csv.reader(fh, delimiter=sep)
            header = [h.strip() for h in next(reader, [])]
            numeric = set(header)
            for i, record in enumerate(reader):
                if i >= 200:
                    break
                for name, value in zip(header, record):
                    if name in numeric and value.strip() and not _is_number(value.replace(decimal, ".")):
                        numeric.discard(name)
            return numeric
    except (OSError, ValueError, csv.Error, EOFError, zlib.error):  # UnicodeDecodeError is a ValueError
        return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _quoted(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_.-]+", name) else repr(name)


def _multivariate_plan(names: list[str], path: str) -> ColumnPlan | None:
    """Multivariate ensembles: member columns ``m<j>_<k>`` (member j = 0..M-1, component k) over
    the components of the target columns ``y_<k>``; ordered member-major, ``classes`` = d."""
    cells = {(int(m.group(1)), int(m.group(2))): n for n in names if (m := MV_MEMBER_RE.match(n))}
    if not cells:
        return None
    targets = {int(m.group(1)): n for n in names if (m := MV_TARGET_RE.match(n))}
    members = sorted({j for j, _ in cells})
    comps = sorted({k for _, k in cells})
    if members != list(range(len(members))):
        raise SchemaError(
            f"{path}: multivariate member columns m<j>_<k> must be numbered j = 0..M-1 without gaps; "
            f"found members {members}"
        )
    if sorted(targets) != comps:
        raise SchemaError(
            f"{path}: multivariate member columns m<j>_<k> name components {comps} but the target "
            f"columns y_<k> are {sorted(targets) or 'missing'}; give one y_<k> per component"
        )
    missing = [f"m{j}_{k}" for j in members for k in comps if (j, k) not in cells]
    if missing:
        raise SchemaError(
            f"{path}: multivariate member columns must cover every member and component "
            f"({len(members)} x {len(comps)}); missing {', '.join(missing[:5])}"
            f"{' ...' if len(missing) > 5 else ''}"
        )
    return ColumnPlan(
        "multivariate",
        roles={
            "y_true": [targets[k] for k in comps],
            "samples": [cells[(j, k)] for j in members for k in comps],
        },
        classes=len(comps),
    )
