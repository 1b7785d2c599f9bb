"""tomllib on Python >= 3.11; its backport tomli on 3.10 (a conditional dependency)."""

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["tomllib"]
