"""Row numbers in messages (issue 35): data rows count from 0; for a CSV input the CLI adds the line of
the file an editor shows (:func:`uqeval.io.readers.with_csv_lines`), computed, not assumed to be r + 2."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.io.readers import csv_records, row_ref, with_csv_lines

from ..conftest import write_table

runner = CliRunner()


def test_csv_records_count_rows_as_the_readers_do_and_give_each_record_its_first_line():
    text = '"y\nname",mean\n1,2\n\n3,"4\n5"\n6,7\n'  # header over two lines, an empty line, a quoted newline
    got = [(row, line, rec) for row, line, rec in csv_records(io.StringIO(text, newline=""))]
    assert got == [(0, 3, ["1", "2"]), (1, 5, ["3", "4\n5"]), (2, 7, ["6", "7"])]


@pytest.fixture
def files(tmp_path):
    plain = tmp_path / "a.csv"
    plain.write_text("y,mean\n" + "".join(f"{i},{i}\n" for i in range(30)))
    odd = tmp_path / "b.csv.gz"
    with gzip.open(odd, "wt", newline="") as fh:
        fh.write('"y\nq",mean\n\n' + "".join(f"{i},{i}\n" for i in range(30)))  # data from line 4
    pq = write_table(tmp_path / "c.parquet", {"y": np.zeros(30)})
    return {str(p): str(p) for p in (plain, odd, pq)}, str(plain), str(odd), str(pq)


def test_rows_of_csv_inputs_get_their_line(files):
    inputs, a, b, c = files
    assert with_csv_lines(f"{a}: bad value (first at row 20, found -1)", inputs) == (
        f"{a}: bad value (first at {row_ref(20, 22)}, found -1)"
    )
    assert row_ref(20, 22) == "row 20 (line 22 of the file)"
    assert with_csv_lines(f"{b}: bad at row 0 and row 29", inputs) == (
        f"{b}: bad at row 0 (line 4 of the file) and row 29 (line 33 of the file)"
    )
    # a row of another file says so; a Parquet file keeps its row
    assert with_csv_lines(f"{c}: target at row 3 but row 5 of {a} holds 1", inputs) == (
        f"{c}: target at row 3 but row 5 (line 7) of {a} holds 1"
    )


@pytest.mark.parametrize(
    "message",
    [
        "targets differ between a and b: first at row 3",  # no file to count lines in
        "{a}: rows from global row 12 on",  # a directory's or glob's row
        "{a}: at row 3 (line 5: 3 fields)",  # a line given already
        "{a}: first at row 31",  # beyond the file: not made up
        "{c}: first at row 3",  # Parquet
    ],
)
def test_rows_without_a_line_to_give_are_left_as_they_are(files, message):
    inputs, a, _, c = files
    text = message.format(a=a, c=c)
    assert with_csv_lines(text, inputs) == text


def test_the_cli_names_the_line_of_a_csv_row_and_only_the_row_of_parquet(tmp_path):
    rng = np.random.default_rng(0)
    cols = {"y": rng.normal(size=30), "mean": rng.normal(size=30), "std": np.ones(30)}
    cols["std"][20] = -1.0
    for name, want in (
        ("bad.csv", "first at row 20 (line 22 of the file)"),
        ("bad.parquet", "first at row 20)"),
    ):
        r = runner.invoke(app, ["score", str(write_table(tmp_path / name, cols))])
        lines = r.stderr.strip().splitlines()
        assert r.exit_code == 3 and len(lines) == 1, r.output
        assert want in lines[0], lines[0]
    text = (tmp_path / "bad.csv").read_text().splitlines()
    assert text[22 - 1].split(",")[2] in ("-1", "-1.0")  # line 22 of the file is the row the message names
