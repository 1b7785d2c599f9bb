"""URIs among the inputs (``s3://bucket/preds/``): recognised without importing anything heavy, so that
choosing an engine costs nothing on the in-memory path (:mod:`uqeval.io.source` opens them)."""

from __future__ import annotations

import re
from pathlib import Path

SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+)://")
# what a CLI ``Path`` argument makes of ``s3://bucket/key``: ``s3:/bucket/key`` (one slash lost)
_COLLAPSED = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):/(?!/)")


def as_spec(arg: str | Path) -> str:
    """The input as a string: a local path or a URI.

    A ``pathlib.Path`` (the CLI's argument type) turns ``s3://bucket/key`` into ``s3:/bucket/key``;
    when no local file or directory has that name, the URI is restored (``file:`` with an empty
    host, ``file:///data/x``). A single-letter
    scheme is a Windows drive (``C:/``), never a URI."""
    s = str(arg)
    m = _COLLAPSED.match(s)
    if isinstance(arg, Path) and m and not Path(s).exists():
        # file:///data/x folds to file:/data/x: a local file URI has an empty host
        s = f"{m.group(1)}://{'/' if m.group(1).lower() == 'file' else ''}{s[m.end() :]}"
    return s


def is_uri(spec: str | Path) -> bool:
    """``scheme://...`` (two letters or more in the scheme)."""
    return bool(SCHEME.match(as_spec(spec)))
