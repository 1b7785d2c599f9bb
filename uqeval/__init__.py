"""uqeval: evaluate predictive uncertainty from the command line or Python.

>>> import uqeval
>>> summary = uqeval.score_file("sample_data/gaussian.parquet")   # doctest: +SKIP

Heavy modules (numpy, scipy, pandas) load on first use, so ``uqeval --help``
stays fast.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "score_file", "score_prediction", "load_predictions", "Settings", "make_settings"]


def __getattr__(name: str):
    if name in ("score_file", "score_prediction"):
        from . import api

        return getattr(api, name)
    if name == "load_predictions":
        from .io.load import load_predictions

        return load_predictions
    if name in ("Settings", "make_settings"):
        from . import config

        return getattr(config, name)
    raise AttributeError(f"module 'uqeval' has no attribute {name!r}")
