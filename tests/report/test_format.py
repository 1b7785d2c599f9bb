"""Tests of uqeval.report.format: the one number formatter, flattener, orientation lookup and tables."""

from __future__ import annotations

import math

import pytest

from uqeval.catalogue.paths import flatten, leaves, metric_orientation
from uqeval.report.format import md_cell, md_table
from uqeval.text import DASHED, DETAIL, HTML, TABLE, fmt_number, fmt_p, fmt_percent


@pytest.mark.parametrize(
    "value, style, text",
    [
        (None, TABLE, "n/a"),
        (None, DASHED, "—"),
        (None, DETAIL, "—"),
        (0.0, TABLE, "0"),
        (-0.0, TABLE, "0"),  # never "-0"
        (-0.0, HTML, "0"),
        (0.123456789, TABLE, "0.1235"),
        (1.5e-7, TABLE, "1.500e-07"),
        (2.5e6, TABLE, "2.500e+06"),
        (0.123456789, DETAIL, "0.123457"),
        (1.5e-7, DETAIL, "1.5e-07"),
        (math.nan, DETAIL, "NaN"),
        (math.nan, DASHED, "—"),
        (math.nan, TABLE, "nan"),
        (1.5e-7, HTML, "1.5000e-07"),
        (math.inf, HTML, "∞"),
        (-math.inf, HTML, "−∞"),
        (0.0, HTML, "0"),
        (3, TABLE, "3"),
        (True, TABLE, "True"),
        ("abc", TABLE, "abc"),
        ([0.5, 0.25], TABLE, "[0.5, 0.25]"),
        ([1.0, 2.0, 3.0, 4.0, 5.0], TABLE, "1 … 5 (5)"),
    ],
)
def test_fmt_number_styles(value, style, text):
    assert fmt_number(value, style) == text


@pytest.mark.parametrize(
    "value, text",
    [
        (0.123, "+12.3%"),
        (-0.5, "-50.0%"),
        (0.0, "0.0%"),
        (-0.0, "0.0%"),
        (-1e-5, "0.0%"),  # rounds to zero: never "-0.0%" (issue 35)
        (2.2e-16, "0.0%"),
        (None, "n/a"),
        (math.nan, "nan"),
    ],
)
def test_fmt_percent(value, text):
    assert fmt_percent(value) == text


def test_fmt_p():
    assert fmt_p(None) == "—" and fmt_p(math.nan) == "—"
    assert fmt_p(0.01234) == "0.0123" and fmt_p(1.7e-6) == "1.7e-06" and fmt_p(0.0) == "0.0e+00"


def test_flatten_keeps_dotted_keys_and_orders_leaves():
    tree = {
        "coverage": {"0.95": {"width": 1.0, "coverage": 0.9}},
        "accuracy": {"mae": 0.5, "curve": [1, 2]},
        "empty": {},
    }
    assert flatten(tree) == [
        ("coverage.0.95.width", 1.0),
        ("coverage.0.95.coverage", 0.9),
        ("accuracy.mae", 0.5),
        ("accuracy.curve", [1, 2]),
        ("empty", None),
    ]
    assert ("empty", None) not in flatten(tree, empty=False)
    assert leaves(tree)[0] == (("coverage", "0.95", "width"), 1.0)
    assert flatten({"a": 1}, "top") == [("top.a", 1)]


def test_metric_orientation_reads_the_summary_then_the_catalogue():
    table = {"coverage.width": "lower", "accuracy.r2": "higher"}
    assert metric_orientation("accuracy.r2", table) == "higher"
    assert metric_orientation(("coverage", "0.95", "width"), table) == "lower"
    assert metric_orientation("coverage.0.9.width", {**table, "coverage.0.9.width": "higher"}) == "higher"
    # absent from the summary: the catalogue's entry (never the key's name)
    assert metric_orientation("accuracy.mae", {}) == "lower"
    assert metric_orientation("scoring_rule.interval_by_level.0.9", {}) == "lower"
    assert metric_orientation("rejection.auc_rejection", {}, "samples") == "lower"
    # curves and histograms have none; unknown paths have none
    assert metric_orientation("avg_calibration.pit_histogram", {}) is None
    assert metric_orientation("accuracy.new_loss", {}) is None


def test_md_table_escapes_every_cell():
    lines = md_table(["a|b", "n"], [["x|y", "1\n2"], ["back\\slash", 3]], "lr")
    assert lines == ["| a\\|b | n |", "|---|---:|", "| x\\|y | 1 2 |", "| back\\\\slash | 3 |"]
    assert md_cell("a\r\nb") == "a b"
