"""Sources of record batches for the streaming engines: a file, a directory of Parquet files
(hive partitions included) or a glob, read with ``pyarrow.dataset``; CSV read in blocks with
``pyarrow.csv.open_csv``. Imported only by the streaming paths (the in-memory ``score`` path
never imports ``pyarrow.dataset``).
"""

from __future__ import annotations

import glob as _glob
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import InputError
from ..io.readers import TableInfo, _short, detect_format, inspect

from .engine import GLOB_CHARS


@dataclass
class Source:
    """Where the rows come from: the header (:class:`TableInfo`, for column planning) and the files."""

    spec: str
    info: TableInfo
    files: list[str]
    fmt: str  # "parquet" or "csv"
    partitioned: bool = False

    @property
    def size_bytes(self) -> int:
        return sum(Path(f).stat().st_size for f in self.files)


def _parquet_files(spec: str) -> tuple[list[str], bool]:
    p = Path(spec)
    if any(c in spec for c in GLOB_CHARS):
        files = sorted(f for f in _glob.glob(spec, recursive=True) if Path(f).is_file())
        if not files:
            raise InputError(f"{spec}: the pattern matches no file")
        return files, False
    if p.is_dir():
        files = sorted(str(f) for f in p.rglob("*") if f.is_file() and f.suffix.lower() in (".parquet", ".pq")
                       and not any(part.startswith((".", "_")) for part in f.relative_to(p).parts))
        if not files:
            raise InputError(f"{spec}: the directory holds no .parquet or .pq file")
        return files, True
    return [spec], False


def open_source(spec: str | Path) -> Source:
    """The header and files of ``spec`` (a CSV/Parquet file, a directory of Parquet files, or a glob)."""
    spec = str(spec)
    p = Path(spec)
    if not p.is_dir() and not any(c in spec for c in GLOB_CHARS) and detect_format(spec) == "csv":
        return Source(spec, inspect(p), [spec], "csv")
    files, partitioned = _parquet_files(spec)
    for f in files:
        detect_format(f)  # only .parquet/.pq (or .csv: a glob of CSV files is read file by file)
    if detect_format(files[0]) == "csv":
        return Source(spec, inspect(files[0]), files, "csv")
    if partitioned:
        import pyarrow as pa
        import pyarrow.dataset as ds

        try:
            dataset = ds.dataset(spec, format="parquet", partitioning="hive")
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{spec}: cannot open the Parquet dataset ({_short(exc)})") from None
        schema = dataset.schema
        lists = frozenset(f.name for f in schema if pa.types.is_list(f.type) or pa.types.is_large_list(f.type)
                          or pa.types.is_fixed_size_list(f.type))
        info = TableInfo(p, "parquet", list(schema.names), lists)
        return Source(spec, info, files, "parquet", partitioned=True)
    head = inspect(files[0])
    return Source(spec, TableInfo(p if len(files) == 1 else Path(spec), "parquet", head.columns, head.list_columns),
                  files, "parquet")


def iter_batches(src: Source, columns: list[str], chunk_rows: int,
                 numeric: frozenset[str] = frozenset()) -> Iterator[tuple[str, dict, int]]:
    """``(file, {column: pyarrow.Array}, n_rows)`` for record batches of at most ``chunk_rows`` rows, in file order.

    ``numeric``: CSV columns read as float64 whatever the first block looks like (a column of
    integers in the first block must not fix an integer type for the later ones)."""
    import pyarrow as pa

    columns = list(dict.fromkeys(columns))
    if src.fmt == "csv":
        for f in src.files:
            yield from _csv_batches(f, src.info if f == src.files[0] else inspect(f), columns, chunk_rows, numeric)
        return
    import pyarrow.parquet as pq

    # Each file is read with ParquetFile.iter_batches, pre_buffer=False and a 1 MiB read buffer: batches
    # are decoded page by page inside a row group, so memory stays flat whatever the row-group size.
    # (The pyarrow.dataset scanner, used for discovering hive partitions, decodes whole row groups and
    # by default keeps the pre-buffered column chunks: 1.5-2.4 GB for 1e6-row groups of 50 samples,
    # 4.4 GB peak on 1e8 Gaussian rows; these settings stay at 0.27 GB.)
    def reader(f):
        def make():
            with pq.ParquetFile(f, pre_buffer=False, buffer_size=1 << 20) as pf:
                yield from pf.iter_batches(batch_size=chunk_rows, columns=columns, use_threads=False)
        return make

    parts = [(f, reader(f)) for f in src.files]  # partitioned: the files pyarrow.dataset found, in path order
    for name, make in parts:
        try:
            for batch in make():
                yield from _slices(name, batch, columns, chunk_rows)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{name}: cannot read Parquet data ({_short(exc)})") from None


def _slices(name: str, batch, columns: list[str], chunk_rows: int) -> Iterator[tuple[str, dict, int]]:
    for start in range(0, batch.num_rows, chunk_rows):
        part = batch.slice(start, chunk_rows)
        yield name, {c: part.column(c) for c in columns}, part.num_rows


NULLS = ["", "NA", "N/A", "n/a", "NULL", "null", "NaN", "nan", "-NaN", "-nan", "None", "none", "#N/A"]


def _csv_batches(f: str, info: TableInfo, columns: list[str], chunk_rows: int,
                 numeric: frozenset[str]) -> Iterator[tuple[str, dict, int]]:
    import re

    import pyarrow as pa
    import pyarrow.csv as pacsv

    raw = [info.raw_names.get(n, n) for n in columns]
    try:
        reader = pacsv.open_csv(f, read_options=pacsv.ReadOptions(block_size=1 << 22, use_threads=False),
                                convert_options=pacsv.ConvertOptions(
                                    include_columns=raw, strings_can_be_null=True, null_values=NULLS,
                                    column_types={r: pa.float64() for r, c in zip(raw, columns) if c in numeric}))
    except (pa.ArrowException, OSError, UnicodeDecodeError, EOFError) as exc:
        raise InputError(f"{f}: cannot read CSV data{_bad_csv_row(f, info, columns, numeric, 0)} "
                         f"({_short(exc)})") from None
    done = 0
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except (pa.ArrowException, OSError, UnicodeDecodeError, EOFError) as exc:
            # a value that is not a number (or a ragged line) in a later block; find its global row
            raise InputError(f"{f}: cannot read CSV data{_bad_csv_row(f, info, columns, numeric, done)} "
                             f"({_short(exc)})") from None
        batch = batch.rename_columns(columns) if batch.num_columns == len(columns) else batch
        for item in _slices(f, batch, columns, chunk_rows):
            done += item[2]
            yield item


def _bad_csv_row(f: str, info: TableInfo, columns: list[str], numeric: frozenset[str], start: int) -> str:
    """`` in column 'C' at row R`` for the first value from data row ``start`` on that is not a number
    (or `` at row R`` for a line with the wrong field count). Only called after a parse error."""
    import csv
    import gzip

    index = {c: info.columns.index(c) for c in columns if c in numeric and c in info.columns}
    opener = gzip.open if f.lower().endswith(".gz") else open
    nulls = set(NULLS)
    try:
        with opener(f, "rt", encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            next(reader, None)
            for i, record in enumerate(reader):
                if i < start or not record:
                    continue
                if len(record) != len(info.columns):
                    return f" at row {i} ({len(record)} fields, the header has {len(info.columns)})"
                for c, j in index.items():
                    v = record[j].strip()
                    if v in nulls:
                        continue
                    try:
                        float(v)
                    except ValueError:
                        return f": column '{c}' is not numeric at row {i} (holds {v[:40]!r})"
    except (OSError, UnicodeDecodeError, csv.Error, EOFError):
        pass
    return ""
