"""The engines that run a command over its input: ``memory`` (one batch), ``stream`` (record batches
through mergeable states, bounded memory) and ``dask`` (partitions on a cluster, tree-reduced), with the
choice of engine, chunk sizes and progress display.

May import: errors, config, io, catalogue, metrics. Never imports a command (:mod:`uqeval.commands`),
a renderer or a front end.
"""
