"""Every source and sink: local files, directories of parts, globs, standard input and URIs (``source``,
``uri``, ``remote`` with its timeouts), column detection (``columns``), readers, the in-memory loader
(``load``) and atomic writers (``writers``).

May import: errors, validation, text, strict, config, predictions, weights, catalogue, glossary.
Never engine, commands, renderers or front ends.
"""
