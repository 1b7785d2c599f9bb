"""One home per command: ``score``, ``compare``, ``ucc``, ``coverage`` and ``monitor`` are packages
(``core``: plan and document; ``stream``: the mergeable fold that the stream and Dask engines run),
``check`` and ``recalibrate`` are modules.

A command computes and returns data (documents as dicts, arrays); it never renders, prints or writes
files. May import: errors, config, metrics, predictions, resample, weights, catalogue, glossary, io,
engine, recalibration. Renderers (:mod:`uqeval.report`, :mod:`uqeval.plots`) and front ends
(:mod:`uqeval.cli`, :mod:`uqeval.api`) import commands, never the other way round.
"""
