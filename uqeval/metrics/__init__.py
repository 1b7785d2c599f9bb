"""Metric kernels: pure numpy/scipy functions, arrays in, numbers or arrays out, one module per family.

The public array functions (observation first, broadcasting scalars) are :mod:`uqeval.functions`,
re-exported here and at the top level: ``uqeval.metrics.crps_normal is uqeval.crps_normal``.
"""

from __future__ import annotations


def __getattr__(name: str):
    from .. import functions

    if name in functions.__all__:
        return getattr(functions, name)
    raise AttributeError(f"module 'uqeval.metrics' has no attribute {name!r}")


def __dir__() -> list[str]:
    from .. import functions

    return sorted(set(globals()) | set(functions.__all__))
