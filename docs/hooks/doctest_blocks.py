"""A griffe extension for the API reference: doctest examples (``>>>`` lines and their output) in
uqeval's reST-style docstrings become fenced ``pycon`` blocks, so that Markdown shows them as code
instead of reading ``out["metrics"]["crps"]`` as a reference link, and Sphinx roles (``:func:`x` ``)
become code spans."""

from __future__ import annotations

import re
from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    out: list[str] = []
    block: list[str] = []
    indent = ""
    for line in [*text.split("\n"), ""]:
        stripped = line.lstrip()
        if block:
            if stripped and (line.startswith(indent) or stripped.startswith(">>>")):
                block.append(line[len(indent) :] if line.startswith(indent) else stripped)
                continue
            out += [f"{indent}```pycon", *(indent + b for b in block), f"{indent}```"]
            block = []
        if stripped.startswith(">>>"):
            indent = line[: len(line) - len(stripped)]
            block = [stripped]
        else:
            out.append(line)
    return "\n".join(out[:-1])


ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|attr|data|exc|obj):`~?([^`]+)`")


class DoctestBlocks(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is None:
            return
        text = ROLE.sub(r"``\1``", obj.docstring.value)
        obj.docstring.value = fence_doctests(text) if ">>>" in text else text
