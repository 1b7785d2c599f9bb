"""tests/regenerate.py: one command rewrites the generated tables and goldens, keeping float noise out of
the diff."""

from __future__ import annotations

from .conftest import keep_close
from .regenerate import SCALING, streaming_page


def test_the_streaming_table_of_the_docs_is_what_regenerate_writes():
    text = SCALING.read_text(encoding="utf-8")
    assert streaming_page(text) == text, "run python tests/regenerate.py"


def test_a_regenerated_golden_keeps_values_within_tolerance_and_moves_the_rest():
    old = {"a": 0.1 + 0.2, "b": [1.0, 2.0], "c": {"d": 5.0}, "n": 3}
    new = {"a": 0.3, "b": [1.0 + 1e-13, 2.5], "c": {"d": 5.0, "e": 1.0}, "n": 4}
    kept = keep_close(new, old)
    assert kept == {"a": 0.1 + 0.2, "b": [1.0, 2.5], "c": {"d": 5.0, "e": 1.0}, "n": 4}
    assert repr(kept["a"]) == repr(0.1 + 0.2)  # the old text, not 0.3
