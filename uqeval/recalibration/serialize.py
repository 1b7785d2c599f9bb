"""JSON (never pickle) serialisation of fitted recalibrators.

A saved recalibrator is one JSON object::

    {"format": "uqeval.recalibrator/1", "uqeval_version": "0.1.0",
     "method": "<state['method']>", "state": {...}}

Compatibility rule: the ``format`` tag must match exactly (a change of the state
layout bumps its number), and the file must come from the same major uqeval version
as the running one. NaN and infinities are refused in both directions (strict JSON).
Writing the text to disk atomically is the caller's job (``uqeval.io``).
"""

from __future__ import annotations

import json
from typing import Any

from .._version import __version__
from ..errors import InputError

FORMAT = "uqeval.recalibrator/1"

#: Keys each known method's state must carry (other methods are passed through).
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "std_scaling": ("criterion", "factor"),
    "isotonic": ("direction", "expected", "observed"),
    "conformal": ("normalized", "levels", "score_quantile"),
    "accrue": ("model", "n_features", "feature_mean", "feature_std", "sigma_constant"),
    "temperature": ("temperature",),
}


def _major(version: str) -> int:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        raise InputError(f"saved recalibrator has an unreadable uqeval_version {version!r}") from None


def _non_finite(node: Any, path: str) -> tuple[str, float] | None:
    """The first ``(path, value)`` holding NaN/inf in a nested state, or ``None``."""
    import math

    stack = [(node, path)]
    while stack:
        v, p = stack.pop()
        if isinstance(v, dict):
            stack.extend((x, f"{p}.{k}") for k, x in reversed(list(v.items())))
        elif isinstance(v, (list, tuple)):
            stack.extend((x, f"{p}[{i}]") for i, x in reversed(list(enumerate(v))))
        elif isinstance(v, float) and not math.isfinite(v):
            return p, v
    return None


def save_state(state: dict[str, Any]) -> str:
    """Serialise a fitted recalibrator state to JSON text.

    Parameters
    ----------
    state : a dict returned by one of the ``fit_*`` functions (must have ``method``)

    Returns
    -------
    str, JSON with ``format``, ``uqeval_version``, ``method`` and ``state``.

    Raises
    ------
    InputError
        if the state has no ``method`` or holds values JSON cannot represent
        (NaN, infinity, arrays, objects).
    """
    if not isinstance(state, dict) or not isinstance(state.get("method"), str):
        raise InputError("a recalibrator state must be a dict with a 'method' string")
    import math

    for key in ("before", "after"):  # diagnostics, not parameters: a metric that overflowed is saved as null
        if isinstance(state.get(key), dict):
            state = {
                **state,
                key: {
                    k: None if isinstance(v, float) and not math.isfinite(v) else v
                    for k, v in state[key].items()
                },
            }
    bad = _non_finite(state, "state")
    if bad is not None:
        raise InputError(
            f"recalibrator state is not plain JSON data: non-finite value at '{bad[0]}' ({bad[1]}); "
            "the calibration data are too extreme or degenerate to fit and save"
        )
    doc = {"format": FORMAT, "uqeval_version": __version__, "method": state["method"], "state": state}
    try:
        return json.dumps(doc, allow_nan=False, indent=1, sort_keys=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"recalibrator state is not plain JSON data: {exc}") from None


def load_state(text: str | bytes, source: str = "saved recalibrator") -> dict[str, Any]:
    """Parse JSON text written by :func:`save_state` and return the state dict.

    ``source`` (the file name) starts every error message.

    Raises
    ------
    InputError
        malformed JSON (or NaN/Infinity/1e999 in it, or deep nesting), a different ``format``
        tag, a file from another major uqeval version, or a state that does not match its
        method's schema (:func:`validate_state`: every field's type, shape and range).
    """
    from ..strict import loads_json

    try:
        doc = loads_json(text, source)
    except InputError as exc:
        raise InputError(f"{source} is not valid JSON: {str(exc).removeprefix(source + ': ')}") from None
    try:
        return _load_state(doc)
    except InputError as exc:
        msg = str(exc)
        if msg.startswith(source):
            raise
        raise InputError(f"{source}: {msg}") from None


def _load_state(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise InputError("saved recalibrator must be a JSON object with 'format' and 'state'")
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise InputError(
            f"saved recalibrator has format {fmt!r}, this uqeval {__version__} reads {FORMAT!r}; "
            "refit the recalibrator with this version"
        )
    saved_version = doc.get("uqeval_version")
    if not isinstance(saved_version, str):
        raise InputError("saved recalibrator has no 'uqeval_version'; refit the recalibrator")
    if _major(saved_version) != _major(__version__):
        raise InputError(
            f"saved recalibrator was written by uqeval {saved_version}, incompatible with uqeval {__version__} "
            "(different major version); refit the recalibrator with this version"
        )
    state = doc.get("state")
    if not isinstance(state, dict) or not isinstance(state.get("method"), str):
        raise InputError("saved recalibrator has no 'state' object with a 'method'")
    if doc.get("method", state["method"]) != state["method"]:
        raise InputError(
            f"saved recalibrator is inconsistent: method {doc.get('method')!r} outside, {state['method']!r} in the state"
        )
    missing = [k for k in REQUIRED_KEYS.get(state["method"], ()) if k not in state]
    if missing:
        raise InputError(
            f"saved {state['method']} recalibrator is missing {', '.join(missing)}; refit the recalibrator"
        )
    validate_state(state)
    return state


# --------------------------------------------------------------------------- schema
# A field spec: a checker called as check(value, field_name); checkers raise InputError.


def _bad(name: str, want: str, value: Any) -> InputError:
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return InputError(f"field 'state.{name}' must be {want}, found {shown}; refit the recalibrator")


def _is_num(v: Any) -> bool:
    import math

    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _num(lo: float | None = None, hi: float | None = None, *, open_lo: bool = False, open_hi: bool = False):
    def check(v: Any, name: str) -> None:
        ok = (
            _is_num(v)
            and (lo is None or (v > lo if open_lo else v >= lo))
            and (hi is None or (v < hi if open_hi else v <= hi))
        )
        if not ok:
            rng = (
                ""
                if lo is None and hi is None
                else (
                    f" in {'(' if open_lo else '['}{lo if lo is not None else '-inf'}, "
                    f"{hi if hi is not None else 'inf'}{')' if open_hi else ']'}"
                )
            )
            raise _bad(name, f"a finite number{rng}", v)

    return check


def _int(lo: int = 0):
    def check(v: Any, name: str) -> None:
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise _bad(name, f"an integer >= {lo}", v)

    return check


def _bool(v: Any, name: str) -> None:
    if not isinstance(v, bool):
        raise _bad(name, "true or false", v)


def _str(*choices: str):
    def check(v: Any, name: str) -> None:
        if not isinstance(v, str) or (choices and v not in choices):
            raise _bad(name, "one of " + ", ".join(repr(c) for c in choices) if choices else "a string", v)

    return check


def _list(item, min_len: int = 0, max_len: int | None = None):
    def check(v: Any, name: str) -> None:
        if not isinstance(v, list) or len(v) < min_len or (max_len is not None and len(v) > max_len):
            size = (
                f"at least {min_len}"
                if max_len is None
                else (f"{min_len}" if min_len == max_len else f"{min_len} to {max_len}")
            )
            raise _bad(name, f"a list of {size} values", v if not isinstance(v, list) else f"{len(v)} values")
        for i, x in enumerate(v):
            item(x, f"{name}[{i}]")

    return check


def _dict(v: Any, name: str) -> None:
    if not isinstance(v, dict):
        raise _bad(name, "an object", v)


def _optional(check):
    def inner(v: Any, name: str) -> None:
        if v is not None:
            check(v, name)

    return inner


_LEVEL = _num(0, 1, open_lo=True, open_hi=True)
_POS = _num(0, open_lo=True)
_NUMS = _list(_num(), 1)

_COMMON = {"n_rows": _int(0), "num_bins": _int(2), "apply_defaults": _dict, "before": _dict, "after": _dict}
_SCHEMAS: dict[str, dict[str, Any]] = {
    "std_scaling": {"criterion": _str(), "factor": _POS, "at_bound": _bool},
    "isotonic": {
        "direction": _str("quantile"),
        "expected": _list(_num(0, 1), 2),
        "observed": _list(_num(0, 1), 2),
    },
    "conformal": {
        "normalized": _bool,
        "levels": _list(_LEVEL, 1),
        "score_quantile": _list(_num(0), 1),
        "rank": _list(_optional(_int(0))),
        "coverage_guaranteed": _list(_optional(_num(0, 1))),
        "coverage_upper": _list(_optional(_num(0, 1))),
        "score_sample": _list(_num(0)),
    },
    "accrue": {
        "model": _str("poly", "mlp", "constant", "kmeans"),
        "n_features": _int(1),
        "feature_mean": _NUMS,
        "feature_std": _list(_POS, 1),
        "sigma_constant": _POS,
        "seed": _int(0),
        "features": _list(_str(), 1),
        "sigma": _POS,
        "basis": _str("legendre", "monomial"),
        "u_range": _list(_num(), 2, 2),
        "order": _int(0),
        "coef": _NUMS,
        "hidden": _list(_int(1), 1),
        "activation": _str("tanh"),
        "weights": _list(_list(_NUMS, 1), 1),
        "biases": _list(_NUMS, 1),
        "centroids": _list(_NUMS, 1),
        "cluster_sigma": _list(_POS, 1),
        "clusters": _int(1),
    },
    "temperature": {"temperature": _POS},
}
_APPLY_DEFAULTS = {"levels": _optional(_list(_LEVEL, 1)), "quantiles": _bool, "equivalent_std": _bool}


def validate_state(state: dict[str, Any]) -> None:
    """Check a loaded state field by field (type, range, shapes); raise :class:`InputError` naming the field.

    Fields a method does not use are left alone; ``null`` is refused wherever a value is
    required (``"normalized": null`` would silently change the intervals).
    """
    method = state["method"]
    schema = _SCHEMAS.get(method)
    if schema is None:
        raise InputError(
            f"field 'state.method' is {method!r}, not a method this uqeval knows "
            f"({', '.join(sorted(_SCHEMAS))})"
        )
    for key, check in {**_COMMON, **schema}.items():
        if key in state:
            check(state[key], key)
    for key, check in _APPLY_DEFAULTS.items():
        if key in state.get("apply_defaults", {}):
            check(state["apply_defaults"][key], f"apply_defaults.{key}")
    _check_shapes(method, state)


def _check_shapes(method: str, s: dict[str, Any]) -> None:
    def same(a: str, b: str) -> None:
        if a in s and b in s and len(s[a]) != len(s[b]):
            raise InputError(
                f"fields 'state.{a}' and 'state.{b}' must have the same length, found "
                f"{len(s[a])} and {len(s[b])}; refit the recalibrator"
            )

    if method == "isotonic":
        same("expected", "observed")
    elif method == "conformal":
        for k in ("score_quantile", "rank", "coverage_guaranteed", "coverage_upper"):
            same("levels", k)
    elif method == "accrue":
        d = s["n_features"]
        for k in ("feature_mean", "feature_std", "features"):
            if k in s and len(s[k]) != d:
                raise InputError(
                    f"field 'state.{k}' must have n_features = {d} values, found {len(s[k])}; "
                    "refit the recalibrator"
                )
        model = s["model"]
        need = {
            "poly": ("coef", "u_range"),
            "mlp": ("weights", "biases"),
            "constant": ("sigma",),
            "kmeans": ("centroids", "cluster_sigma"),
        }[model]
        missing = [k for k in need if k not in s]
        if missing:
            raise InputError(
                f"saved accrue {model} recalibrator is missing {', '.join(missing)}; refit the recalibrator"
            )
        if model == "poly" and d != 1:
            raise InputError(
                f"field 'state.n_features' must be 1 for the poly model, found {d}; refit the recalibrator"
            )
        if model == "kmeans":
            same("centroids", "cluster_sigma")
            for i, c in enumerate(s["centroids"]):
                if len(c) != d:
                    raise InputError(f"field 'state.centroids[{i}]' must have {d} values, found {len(c)}")
        if model == "mlp":
            w, b = s["weights"], s["biases"]
            if len(w) != len(b):
                raise InputError(
                    f"fields 'state.weights' and 'state.biases' must have the same length, found "
                    f"{len(w)} and {len(b)}; refit the recalibrator"
                )
            width = d
            for i, (wi, bi) in enumerate(zip(w, b)):
                cols = len(wi[0])
                if len(wi) != width or any(len(r) != cols for r in wi):
                    raise InputError(
                        f"field 'state.weights[{i}]' must be a {width} x {cols} matrix; "
                        "refit the recalibrator"
                    )
                if len(bi) != cols:
                    raise InputError(
                        f"field 'state.biases[{i}]' must have {cols} values, found {len(bi)}; "
                        "refit the recalibrator"
                    )
                width = cols
            if width != 1:
                raise InputError(
                    f"field 'state.weights[{len(w) - 1}]' must end in one output, found {width}; "
                    "refit the recalibrator"
                )
