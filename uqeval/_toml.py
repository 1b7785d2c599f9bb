"""tomllib on Python >= 3.11; its backport tomli on 3.10 (a conditional dependency)."""

try:
    import tomllib  # type: ignore[import-not-found]
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

__all__ = ["tomllib"]
