"""Recalibration: fit/apply pairs whose fitted state is a plain JSON-serialisable dict.

Every ``fit_*`` returns a dict with a ``method`` key; :func:`save_state` /
:func:`load_state` turn it into versioned JSON text and back (never pickle).
"""

from .accrue import accrue_objective, apply_accrue, fit_accrue
from .conformal import apply_conformal, fit_conformal
from .isotonic import (
    fit_isotonic,
    isotonic_cdf,
    isotonic_equivalent_std,
    isotonic_intervals,
    isotonic_quantiles,
)
from .serialize import load_state, save_state
from .std_scaling import apply_std_scaling, fit_std_scaling
from .temperature import apply_temperature, fit_temperature

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
