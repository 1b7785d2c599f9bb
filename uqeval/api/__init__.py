"""The Python API: :func:`evaluate` arrays, a prediction, a DataFrame or a file and get :class:`Scores`;
:func:`compare`, :func:`ucc`, :func:`monitor` and :func:`plot` as the commands of the same names do.

A thin front over the commands (:mod:`uqeval.commands`) and the metric catalogue, so a notebook gets the
numbers and the JSON documents the command line gives. ``inputs`` turns the column keywords of every call
(the roles) into validated containers, in one place; ``scores`` is :class:`Scores`; ``score`` and
``commands`` are the public functions.

The top floor with :mod:`uqeval.cli`: may import anything in the package but the command line.
"""

from __future__ import annotations

from .. import _EXPORTS
from .commands import Comparison, compare, monitor, ucc  # noqa: F401  # re-exported (__all__ below)
from .score import evaluate, evaluate_file, explain, list_metrics, list_schemas, plot, schema  # noqa: F401
from .scores import Scores  # noqa: F401

#: the names :mod:`uqeval` exports from here (listed once, in ``uqeval._EXPORTS``)
__all__ = [name for name, module in _EXPORTS.items() if module == "api"]
