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

from .. import __version__
from ..errors import InputError

FORMAT = "uqeval.recalibrator/1"

#: Keys each known method's state must carry (other methods are passed through).
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "std_scaling": ("criterion", "factor"),
    "isotonic": ("direction", "expected", "observed"),
    "conformal": ("normalized", "levels", "score_quantile"),
    "accrue": ("model", "n_features", "feature_mean", "feature_std", "sigma_constant"),
}


def _major(version: str) -> int:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        raise InputError(f"saved recalibrator has an unreadable uqeval_version {version!r}") from None


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
    doc = {"format": FORMAT, "uqeval_version": __version__, "method": state["method"], "state": state}
    try:
        return json.dumps(doc, allow_nan=False, indent=1, sort_keys=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"recalibrator state is not plain JSON data: {exc}") from None


def _reject_constant(name: str):
    raise ValueError(f"non-finite number {name}")


def load_state(text: str | bytes) -> dict[str, Any]:
    """Parse JSON text written by :func:`save_state` and return the state dict.

    Raises
    ------
    InputError
        malformed JSON (or NaN/Infinity in it), a different ``format`` tag, a file from
        another major uqeval version, or a state missing its method's required keys.
    """
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, TypeError) as exc:  # JSONDecodeError is a ValueError
        raise InputError(f"saved recalibrator is not valid JSON: {exc}") from None
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
    return state
