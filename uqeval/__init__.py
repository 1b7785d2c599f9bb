"""uqeval: evaluate predictive uncertainty from the command line or Python.

>>> import numpy as np, uqeval
>>> y = np.array([0.1, -0.4, 1.2]); mu = np.zeros(3); sd = np.ones(3)
>>> scores = uqeval.evaluate(y, mean=mu, std=sd)
>>> round(scores["crps"], 6) == round(uqeval.crps_normal(y, mu, sd), 6)
True

``evaluate`` takes arrays, a prediction container, a DataFrame or (``evaluate_file``) a CSV or
Parquet file and returns :class:`Scores`; the array functions (``crps_normal``, ``crps_ensemble``,
``pinball_loss``, ``brier_score``, ...) score arrays directly. Heavy modules (numpy, scipy,
pandas) load on first use, so ``import uqeval`` and ``uqeval --help`` stay fast.
"""

from __future__ import annotations

from ._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (import uqeval stays light)
if TYPE_CHECKING:
    from typing import Any

#: public name -> module that defines it (loaded on first use)
_EXPORTS = {
    **{
        n: "api"
        for n in (
            "Scores",
            "Comparison",
            "evaluate",
            "evaluate_file",
            "plot",
            "ucc",
            "compare",
            "list_metrics",
            "explain",
            "monitor",
            "schema",
            "list_schemas",
        )
    },
    **{
        n: "functions"
        for n in (
            "crps_normal",
            "logs_normal",
            "crps_ensemble",
            "pinball_loss",
            "interval_score",
            "weighted_interval_score",
            "calibration_error",
            "coverage",
            "expected_calibration_error",
            "brier_score",
            "log_loss",
        )
    },
    **{
        n: "predictions"
        for n in (
            "Prediction",
            "Point",
            "Gaussian",
            "Intervals",
            "Quantiles",
            "Samples",
            "Categorical",
            "MemberCategorical",
            "Dirichlet",
            "LogLikelihood",
        )
    },
    **{n: "config" for n in ("Settings", "make_settings")},
    **{n: "errors" for n in ("UqevalError", "InputError", "SchemaError", "UsageError")},
    "load_predictions": "io.load",
    "score_file": "commands.score.core",
    "score_prediction": "commands.score.core",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'uqeval' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
