"""Command cores: one module per command (``score``, ``compare``, ``check``, ``ucc``, ``coverage``,
``recalibrate``, ``plot``, ``report``), each pairing with ``uqeval/cli/<command>.py``.

A core computes and returns data (dicts, figures, tables); it neither renders nor writes files,
and it never prints. Rendering lives in :mod:`uqeval.report`, terminal output in :mod:`uqeval.cli`.
"""
