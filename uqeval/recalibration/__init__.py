"""Recalibration: fit/apply pairs whose fitted state is a plain JSON-serialisable dict.

Every ``fit_*`` returns a dict with a ``method`` key; :func:`save_state` /
:func:`load_state` turn it into versioned JSON text and back (never pickle).

May import: errors, validation, metrics, strict, _version. Commands (``recalibrate``) call it.
"""

from importlib import import_module

#: public name -> submodule. Submodules are imported on first use (PEP 562), so that e.g.
#: ``recalibrate --method temperature`` does not pay ACCRUE's scipy.cluster/optimize imports (~1 s).
_EXPORTS = {
    "accrue_objective": "accrue",
    "apply_accrue": "accrue",
    "fit_accrue": "accrue",
    "apply_conformal": "conformal",
    "fit_conformal": "conformal",
    "fit_isotonic": "isotonic",
    "isotonic_cdf": "isotonic",
    "isotonic_equivalent_std": "isotonic",
    "isotonic_intervals": "isotonic",
    "isotonic_quantiles": "isotonic",
    "load_state": "serialize",
    "save_state": "serialize",
    "apply_std_scaling": "std_scaling",
    "fit_std_scaling": "std_scaling",
    "apply_temperature": "temperature",
    "fit_temperature": "temperature",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "accrue_objective",
    "apply_accrue",
    "apply_conformal",
    "apply_std_scaling",
    "apply_temperature",
    "fit_accrue",
    "fit_conformal",
    "fit_isotonic",
    "fit_std_scaling",
    "fit_temperature",
    "isotonic_cdf",
    "isotonic_equivalent_std",
    "isotonic_intervals",
    "isotonic_quantiles",
    "load_state",
    "save_state",
]
