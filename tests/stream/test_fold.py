"""The engine's fold additions that no command's document pins alone: ``Rows.parts`` and ``Aligned.parts`` (the
Dask tasks a fold's states run on), ``over_rows(skip=)`` (files left out before a row is read) and
``over_aligned(extra=)`` (columns every input carries with its rows), on the stream and Dask engines."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from uqeval.config import Settings
from uqeval.engine.aligned import over_aligned
from uqeval.engine.fold import over_rows
from uqeval.engine.options import EngineOptions

SETTINGS = Settings(columns={"y_true": "y", "mean": "mu", "std": "sigma"})


class Seen:
    """A fold that keeps, per piece, its first global row, its rows and its ``extra`` values (row order)."""

    def __init__(self) -> None:
        self.pieces: list[tuple[int, int, list]] = []

    def add(self, piece) -> None:
        extra = piece.extra if isinstance(piece.extra, dict) else piece.extra[0]
        kept = {k: np.asarray(v.to_numpy(zero_copy_only=False)).tolist() for k, v in extra.items()}
        self.pieces.append((piece.offset, piece.rows, kept.get("tag", [])))

    def merge(self, other: Seen) -> Seen:
        out = Seen()
        out.pieces = self.pieces + other.pieces
        return out

    @property
    def tags(self) -> list:
        return [t for _, _, tags in self.pieces for t in tags]


def _files(d, n: int = 3, rows: int = 40) -> list:
    d.mkdir()
    out = []
    rng = np.random.default_rng(0)
    for i in range(n):
        f = d / f"p{i}.parquet"
        table = pa.table(
            {
                "y": rng.normal(size=rows),
                "mu": np.zeros(rows),
                "sigma": np.ones(rows),
                "tag": [f"{i}:{j}" for j in range(rows)],
            }
        )
        pq.write_table(table, f, row_group_size=15)
        out.append(f)
    return out


@pytest.mark.parametrize("dask", [False, True])
def test_over_rows_skips_the_files_asked_and_numbers_the_rest_from_0(tmp_path, scheduler, dask):
    files = _files(tmp_path / "d")
    engine = EngineOptions("dask", 10, scheduler) if dask else EngineOptions("stream", 10)
    asked = []

    def skip(src):
        asked.append(len(src.files))
        return {str(files[1])}

    with over_rows(tmp_path / "d", SETTINGS, engine, extra=("tag",), skip=skip) as rows:
        seen = rows.fold(Seen)
        if dask:  # the tasks: the row groups of the files read, numbered without the one left out
            assert rows.parts is not None and [t[0] for t in rows.parts] == [str(files[0]), str(files[2])]
            assert [t[2] for t in rows.parts] == [0, 40]
        else:
            assert rows.parts is None
    assert asked == [3]
    assert seen.tags == [f"{i}:{j}" for i in (0, 2) for j in range(40)]
    starts = [p[0] for p in seen.pieces]
    assert starts == sorted(starts) and starts[0] == 0 and sum(p[1] for p in seen.pieces) == 80


@pytest.mark.parametrize("dask", [False, True])
def test_over_aligned_carries_the_extra_columns_of_every_input(tmp_path, scheduler, dask):
    _files(tmp_path / "a")
    _files(tmp_path / "b")
    engine = EngineOptions("dask", 10, scheduler) if dask else EngineOptions("stream", 10)
    with over_aligned([tmp_path / "a", tmp_path / "b"], SETTINGS, engine, extra=("tag",)) as run:
        assert (run.parts is None) != dask
        seen = run.fold(Seen)
    assert seen.tags == [f"{i}:{j}" for i in range(3) for j in range(40)]
    if dask:
        assert run.parts is not None and [t[2] for t in run.parts] == [0, 40, 80]
