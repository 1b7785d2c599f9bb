"""JSON Schemas (draft 2020-12) of the documents uqeval writes, installed with the package.

One file per document: ``uqeval/schemas/<name>.schema.json`` (``score``, ``compare``, ``ucc``,
``coverage``, ``check``, ``recalibrate``, ``recalibrator``, ...). The registry is the directory: a
new document needs only its file here. Each schema names its document by a ``const`` on the
document's tag key (``schema``, or ``format`` for a saved recalibrator), e.g. ``uqeval.score/1``.

uqeval itself never validates against these (``jsonschema`` is not a dependency); they are for
consumers of the JSON, and the test suite checks every command's output against them. May import only
:mod:`uqeval.errors` (the ground floor).
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import UsageError

SUFFIX = ".schema.json"
#: keys a document's tag may live under (the first the schema pins with ``const`` wins)
TAG_KEYS = ("schema", "format")


def _files() -> dict[str, Any]:
    from importlib.resources import files

    return {
        entry.name[: -len(SUFFIX)]: entry
        for entry in sorted(files(__name__).iterdir(), key=lambda e: e.name)
        if entry.name.endswith(SUFFIX)
    }


def document_tag(schema: dict[str, Any]) -> str | None:
    """The tag (``uqeval.score/1``) a schema pins on its document, or ``None``."""
    props = schema.get("properties", {})
    for key in TAG_KEYS:
        const = props.get(key, {}).get("const")
        if isinstance(const, str):
            return const
    return None


def _entry(name: str) -> Any:
    known = _files()
    stem = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    if stem not in known:
        by_tag = {tag: s for s in known if (tag := document_tag(_read(known[s]))) is not None}
        if stem not in by_tag:
            raise UsageError(
                f"no schema {name!r}; known: {', '.join(known)} (or their documents' tags: "
                f"{', '.join(by_tag)})"
            )
        stem = by_tag[stem]
    return known[stem]


def load(name: str) -> dict[str, Any]:
    """The schema of document ``name``: a file stem (``score``) or the document's tag (``uqeval.score/1``)."""
    return _read(_entry(name))


def _read(entry: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(entry.read_text(encoding="utf-8"))
    return out


def catalogue() -> dict[str, dict[str, str]]:
    """Every installed schema: name -> ``{"document": tag, "title": ...}``."""
    out = {}
    for stem, entry in _files().items():
        schema = _read(entry)
        out[stem] = {"document": document_tag(schema) or "", "title": str(schema.get("title", ""))}
    return out


def text(name: str) -> str:
    """The schema file of ``name``, as installed (what ``uqeval schema NAME`` prints)."""
    out: str = _entry(name).read_text(encoding="utf-8")
    return out
