"""``group_codes`` (the --by labels of score and coverage) against the row-by-row definition."""

from __future__ import annotations

import numpy as np
import pytest

from uqeval.commands.score.core import _group_label, group_codes


def row_by_row(values: np.ndarray) -> tuple[list[str], np.ndarray]:
    labels = np.array([_group_label(v) for v in values.tolist()], dtype=str)
    distinct, codes = np.unique(labels, return_inverse=True)
    return distinct.tolist(), codes


rng = np.random.default_rng(18)
CASES = {
    "int objects": np.asarray(rng.integers(0, 4, 500), dtype=object),
    "floats with NaN": np.asarray(
        np.where(rng.uniform(size=500) < 0.1, np.nan, rng.integers(-2, 3, 500) * 0.5), dtype=object
    ),
    "strings with None": np.array(
        [None if x < 1 else f"g{x}" for x in rng.integers(0, 5, 500)], dtype=object
    ),
    "ints with None": np.array([None if x < 1 else int(x) for x in rng.integers(0, 12, 500)], dtype=object),
    "None and NaN": np.array([None, np.nan, 1.0, None], dtype=object),
    "bools": np.asarray(rng.uniform(size=50) < 0.5, dtype=object),
    "mixed types": np.array([1, "a", None, 2.0, "b", 1.0, True], dtype=object),
    "-0.0 and 0.0": np.array([0.0, -0.0, 1.5, -1.5], dtype=object),
    "numeric floats": np.where(rng.uniform(size=100) < 0.1, np.nan, rng.integers(-2, 3, 100) * 1.0),
    "numeric ints": rng.integers(0, 20, 100),
    "only None": np.array([None, None], dtype=object),
    "ints beyond int64": np.array([2**70, 1, None, 1], dtype=object),
    "strings": np.array(["b", "a", "b", "10", "9"], dtype=object),
}


@pytest.mark.parametrize("name", list(CASES))
def test_group_codes_label_every_row_as_the_row_by_row_definition(name):
    values = CASES[name]
    want_labels, want_codes = row_by_row(values)
    labels, codes = group_codes(values)
    assert labels.tolist() == want_labels
    np.testing.assert_array_equal(codes, want_codes)
