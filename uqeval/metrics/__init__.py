"""Metric kernels: pure numpy/scipy functions, arrays in, numbers or arrays out, one module per family.

May import: :mod:`uqeval.errors`, :mod:`uqeval.validation` (and numpy/scipy); never paths, frames,
settings, printing or CLI words. The public array functions that validate and document their arguments
(observation first, broadcasting scalars) are :mod:`uqeval.functions`, exported at the top level
(``uqeval.crps_normal``); they call these kernels.
"""
