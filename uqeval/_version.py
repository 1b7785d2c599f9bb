"""The one source of uqeval's version (pyproject.toml reads it; every JSON document carries it)."""

__version__ = "0.1.0"
