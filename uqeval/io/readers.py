"""Read CSV (optionally gzipped) and Parquet files into numpy arrays, column by column.

The header (or Parquet schema) is read first so that only the columns a
command needs are parsed. Every failure becomes an :class:`InputError` naming
the file; the input file is only ever opened for reading.
"""

from __future__ import annotations

import csv
import gzip
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

import numpy as np

from ..errors import InputError, SchemaError
from .dialect import csv_dialect  # the CSV dialect (issue 40): --sep, --decimal

FORMATS = {".csv": "csv", ".csv.gz": "csv", ".parquet": "parquet", ".pq": "parquet"}


def parse_options():
    """pyarrow's CSV parse options for the dialect read now (its field separator)."""
    import pyarrow.csv as pacsv

    return pacsv.ParseOptions(delimiter=csv_dialect()[0])


def decimal_point() -> dict[str, str]:
    """pyarrow's ``ConvertOptions`` keyword for the decimal mark read now (none for the default ``.``)."""
    mark = csv_dialect()[1]
    return {} if mark == "." else {"decimal_point": mark}


def detect_format(path: str | Path) -> str:
    """``"csv"`` or ``"parquet"`` from the file name (standard input: from its first bytes); anything else
    is an error."""
    if isinstance(path, Spooled):  # standard input, or a NetCDF/Zarr input read as rows (uqeval.io.labelled)
        return path.format
    name = str(path).lower()
    for ext in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(ext):
            return FORMATS[ext]
    raise InputError(f"{path}: unsupported file type; uqeval reads .csv, .csv.gz, .parquet and .pq files")


#: the input name that reads standard input (``uqeval score -``)
STDIN = "-"


class Spooled(os.PathLike):
    """An input read through a private copy or a reader of its own (standard input, a NetCDF/Zarr input's
    rows: :class:`uqeval.io.labelled.LabelledFile`): its :attr:`format` says how the copy reads."""

    format = "parquet"


#: the names of NetCDF files and Zarr stores (read as rows by :mod:`uqeval.io.labelled`)
LABELLED_SUFFIXES = (".nc", ".nc4", ".netcdf", ".cdf", ".zarr")


def is_labelled(spec: object) -> bool:
    """A NetCDF file or a Zarr store, by its name (a directory holding Zarr metadata too); nothing imported."""
    if isinstance(spec, Spooled):
        return False  # read through its copy already
    s = str(spec).rstrip("/").lower()
    if s.endswith(LABELLED_SUFFIXES):
        return True
    p = Path(str(spec))
    return p.is_dir() and any((p / m).exists() for m in (".zgroup", "zarr.json", ".zmetadata"))


def labelled_format(spec: object) -> str | None:
    """``"zarr"`` or ``"netcdf"`` for a labelled input (the ``input.format`` of its documents), else None."""
    spec = getattr(spec, "name", spec) if isinstance(spec, Spooled) else spec
    if spec is None or not is_labelled(spec):
        return None
    s = str(spec).rstrip("/").lower()
    return "zarr" if s.endswith(".zarr") or Path(str(spec)).is_dir() else "netcdf"


class StdinFile(Spooled):
    """Standard input, spooled to a private temporary file: opened through :func:`os.fspath` (pyarrow,
    ``open``), named ``<stdin>`` in messages (``str``)."""

    def __init__(self, real: str, fmt: str) -> None:
        self.real, self.format = real, fmt

    def __fspath__(self) -> str:
        return self.real

    def __str__(self) -> str:
        return "<stdin>"

    __repr__ = __str__


#: (the stream read, its file): a second ``-`` in the same run reads the same bytes
_SPOOLED: list[tuple[object, StdinFile]] = []


def is_stdin(path: object) -> bool:
    return isinstance(path, StdinFile) or str(path) == STDIN


def stdin_file(stream=None) -> StdinFile:
    """Standard input read once (a second ``-`` in the same run reads the same bytes): Parquet when it
    starts with the magic bytes ``PAR1``, else CSV (gzip-compressed CSV is decompressed)."""
    import atexit
    import shutil
    import sys
    import tempfile

    src = stream if stream is not None else getattr(sys.stdin, "buffer", None)
    if _SPOOLED and _SPOOLED[0][0] is src:
        return _SPOOLED[0][1]
    key = src
    if src is None or (hasattr(src, "isatty") and src.isatty()):
        raise InputError(
            "-: standard input is a terminal; pipe a CSV or Parquet file into uqeval (... | uqeval score -)"
        )
    fd, real = tempfile.mkstemp(prefix="uqeval-stdin-")
    # the lambda's value (False or unlink's None) is never used
    atexit.register(lambda: os.path.exists(real) and os.unlink(real))  # type: ignore[func-returns-value]
    with os.fdopen(fd, "wb") as out:
        head = src.read(4) or b""
        if head[:2] == b"\x1f\x8b":  # gzip
            rest = src.read()
            try:
                data = gzip.decompress(head + rest)
            except (OSError, EOFError, zlib.error) as exc:
                raise InputError(f"<stdin>: cannot read gzip-compressed input ({_short(exc)})") from None
            head, src = data[:4], None
            out.write(data)
        else:
            out.write(head)
            shutil.copyfileobj(src, out, 1 << 20)
    if os.path.getsize(real) == 0:
        raise InputError("<stdin>: standard input is empty; pipe a CSV or Parquet file into uqeval")
    _SPOOLED[:] = [(key, StdinFile(real, "parquet" if head == b"PAR1" else "csv"))]
    return _SPOOLED[0][1]


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError(f"{path}: file does not exist")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, expected a CSV or Parquet file")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: file is empty")


@dataclass(frozen=True)
class TableInfo:
    path: Path  # or a URI string (``s3://bucket/key``) for the streaming engines' remote inputs
    format: str
    columns: list[str]
    list_columns: frozenset[str]  # Parquet list<number> columns (samples, proba, ...)
    raw_names: dict[str, str] = field(
        default_factory=dict
    )  # CSV: name -> header text as written (spaces kept)


def inspect(path: str | Path) -> TableInfo:
    """Column names (and which are list columns) without reading the data.

    ``path`` follows :func:`uqeval.io.inputs.expand_input` (an existing file is that file; a directory or a
    pattern must name exactly one file here, the in-memory readers read one)."""
    from .writers import register_input

    if is_stdin(path):
        spooled = stdin_file()
        register_input(spooled)
        return _inspect(spooled)
    if is_labelled(path) or (isinstance(path, Spooled) and not isinstance(path, StdinFile)):
        from .labelled import LabelledFile, labelled_file  # NetCDF or Zarr: its rows

        lf = path if isinstance(path, LabelledFile) else labelled_file(path)
        register_input(lf.name)
        if lf.direct:  # not spooled (yet): the schema of its first row
            return parquet_info(lf, lf.schema)
        return _inspect(lf, "parquet")  # type: ignore[arg-type]  # a PathLike named as the file
    p = Path(path)
    if not p.exists() or p.is_dir():
        from .inputs import single_file

        p = single_file(path)
    fmt = detect_format(p)
    _check_readable(p)
    register_input(p)
    return _inspect(p, fmt)


def _inspect(p: Path | StdinFile, fmt: str | None = None) -> TableInfo:
    if isinstance(p, StdinFile):
        fmt = p.format
    if fmt == "parquet":
        return parquet_info(p, parquet_schema(p))
    try:
        with open_csv_text(p) as fh:
            return csv_info(p, fh)
    except (OSError, UnicodeDecodeError, EOFError, zlib.error, csv.Error) as exc:
        raise InputError(f"{p}: cannot read CSV file ({_short(exc)})") from None


def parquet_schema(path):
    """The Arrow schema of the Parquet file at ``path``; an unreadable file is an :class:`InputError`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_schema(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(
            f"{path}: cannot read Parquet file ({_short(exc)}); is it a valid Parquet file?"
        ) from None


def is_list_type(t) -> bool:
    """Whether the Arrow type ``t`` is a list (of any of Arrow's three list types)."""
    import pyarrow as pa

    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def parquet_info(where, schema) -> TableInfo:
    """The :class:`TableInfo` of a Parquet file at ``where`` (a path or a URI) with this Arrow schema."""
    lists = frozenset(f.name for f in schema if is_list_type(f.type))
    return TableInfo(where, "parquet", list(schema.names), lists)


def csv_info(where, fh) -> TableInfo:
    """The :class:`TableInfo` of a CSV file at ``where`` (a path or a URI) from its text handle ``fh``."""
    raw = next(csv.reader(fh, delimiter=csv_dialect()[0]), [])  # a quoted header name may span lines
    header = [h.strip() for h in raw]  # `y, mean, std` names y, mean and std
    if not header or all(not h for h in header):
        raise InputError(f"{where}: file has no header line; the first line must name the columns")
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise SchemaError(f"{where}: duplicate column name(s) {dupes}; column names must be unique")
    return TableInfo(where, "csv", header, frozenset(), dict(zip(header, raw)))


def _short(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def read_columns(info: TableInfo, names: list[str]) -> tuple[dict[str, object], int]:
    """Read the named columns; returns ``({name: pyarrow ChunkedArray}, n_rows)``."""
    import pyarrow as pa

    names = list(dict.fromkeys(names))
    try:
        if info.format == "parquet":
            import pyarrow.parquet as pq

            # ParquetFile, not read_table: the same columns without importing pyarrow.dataset and pandas
            # (~0.4 s of start-up)
            # pre_buffer=False with a 1 MB read buffer: column chunks are streamed rather than read into one
            # coalesced buffer first; on local files ~5x less CPU and ~0.4 GB less peak memory at 1e6 x 50
            with pq.ParquetFile(info.path, pre_buffer=False, buffer_size=1 << 20) as parquet:
                table = parquet.read(columns=names)
        else:
            import pyarrow.csv as pacsv

            raw = [info.raw_names.get(n, n) for n in names]
            table = pacsv.read_csv(
                info.path,
                read_options=pacsv.ReadOptions(block_size=1 << 24),
                parse_options=parse_options(),
                convert_options=pacsv.ConvertOptions(
                    include_columns=raw,
                    strings_can_be_null=True,
                    # only words are booleans: a 0/1 column with one stray `True` stays text, and the
                    # error names that row (with 0/1 as booleans the whole column turned boolean)
                    true_values=_TRUE,
                    false_values=_FALSE,
                    **decimal_point(),
                ),
            ).rename_columns(names)
    except (pa.ArrowException, OSError, UnicodeDecodeError, EOFError, zlib.error) as exc:
        where = _ragged_csv_row(info) if info.format == "csv" else ""
        raise InputError(
            f"{info.path}: cannot read {info.format.upper()} data{where} ({_short(exc)})"
        ) from None
    if table.num_rows == 0:
        raise InputError(f"{info.path}: no data rows (only a header)")
    return {n: table.column(n) for n in names}, table.num_rows


_TRUE, _FALSE = ["true", "True", "TRUE"], ["false", "False", "FALSE"]


def release_arrow_memory() -> None:
    """Hand the pages of freed Arrow buffers back to the system (Arrow's allocator keeps them for reuse)."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def read_block(
    info: TableInfo, names: list[str], n_rows: int, order: Literal["C", "F"] = "C"
) -> np.ndarray | None:
    """Parquet columns ``names`` as one (N, C) float64 block, decoded in batches of rows straight into it.

    Peak memory is the block plus one batch, instead of the whole Arrow table plus the block
    (samples and ensemble members: the widest inputs). Values are converted as :func:`to_float`
    does. None when a column is not stored as integers or floats (the caller reads it whole, so
    that an error names the file's row). ``order``: the block's memory layout (``"F"``: column-major).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = np.empty((n_rows, len(names)), order=order)
    start = 0
    try:
        with pq.ParquetFile(info.path, pre_buffer=False, buffer_size=1 << 20) as parquet:
            schema = parquet.schema_arrow
            if not all(
                pa.types.is_integer(t) or pa.types.is_floating(t)
                for t in (schema.field(name).type for name in names)
            ):
                return None
            # batches of ~2 MB of the block: writing a column into rows of C floats touches a page every
            # 4096 / 8C rows, and a larger batch's pages overflow the TLB (at 1e6 x 50: 0.35 s against 0.9-1.4 s)
            rows = min(1 << 15, max(1 << 10, (1 << 21) // (8 * len(names))))
            for batch in parquet.iter_batches(batch_size=rows, columns=list(names)):
                stop = start + batch.num_rows
                part = out[start:stop]
                for j, name in enumerate(names):
                    part[:, j] = to_float(batch.column(j), name, info.path)
                start = stop
    except (pa.ArrowException, OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{info.path}: cannot read PARQUET data ({_short(exc)})") from None
    finally:
        # the decoded batches are freed but Arrow's allocator keeps their pages (~0.2 GB at 1e6 x 50):
        # hand them back before the metrics allocate theirs
        release_arrow_memory()
    if start != n_rows:
        raise InputError(f"{info.path}: cannot read PARQUET data (expected {n_rows} rows, read {start})")
    return out


def _ragged_csv_row(info: TableInfo) -> str:
    """`` at row R (line L)`` for the first CSV record whose field count differs from the header.

    Only called after a parse error, so a plain pass over the file is fine here.
    """
    try:
        with open_csv_text(info.path) as fh:
            for i, line, record in csv_records(fh):
                if len(record) != len(info.columns):
                    return (
                        f" at row {i} (line {line}: {len(record)} fields, the header has {len(info.columns)})"
                    )
    except (OSError, UnicodeDecodeError, csv.Error, EOFError, zlib.error):
        pass
    return ""


def open_csv_text(path: str | Path | StdinFile):
    """A text handle on a local CSV file, gzipped when its name ends in ``.gz``; ``utf-8-sig``: a byte-order
    mark (Excel's CSV export) is not part of the first name."""
    opener = gzip.open if str(path).lower().endswith(".gz") else open
    return opener(path, "rt", encoding="utf-8-sig", newline="")


def csv_records(fh) -> Iterator[tuple[int, int, list[str]]]:
    """``(row, line, record)`` of each data record of a CSV text handle (after the header).

    ``row`` counts records as the readers do, from 0 (an empty line is no row: pyarrow skips it);
    ``line`` is the line of the file where the record starts (1-based; a quoted field may span lines).
    """
    reader = csv.reader(fh, delimiter=csv_dialect()[0])
    next(reader, None)  # the header (it may span lines too)
    row, start = 0, reader.line_num + 1
    for record in reader:
        if record:
            yield row, start, record
            row += 1
        start = reader.line_num + 1


#: the data rows a message's CSV lines are looked up for, at most (a scan on the error path only)
LINE_SCAN_ROWS = 5_000_000
_ROW = re.compile(r"(?<!global )\brow (\d+)\b(?! \(line)(?! of )")  # "global row": of a directory or glob


def row_ref(row: int, line: int | None, of: str | None = None) -> str:
    """How a message names a data row: ``row 20`` (rows count from 0 after the header), with the line of the
    file an editor shows for CSV: ``row 20 (line 22 of the file)``, ``row 20 (line 22) of b.csv``."""
    if of is None:
        return f"row {row}" + (f" (line {line} of the file)" if line is not None else "")
    return f"row {row}" + (f" (line {line})" if line is not None else "") + f" of {of}"


def with_csv_lines(message: str, files: dict[str, str]) -> str:
    """``message`` with the file line added to each row of a CSV file it names (:func:`row_ref`).

    ``files``: the inputs of the run, name in messages -> path. A bare ``row N`` counts rows of the file
    the message starts with (``a.csv: ...``), ``row N of b.csv`` rows of ``b.csv``; rows of a Parquet file,
    of a directory or glob, or of no named file are left as they are, and so is a row whose line cannot be
    found (the file changed, or the row is beyond :data:`LINE_SCAN_ROWS`)."""
    csvs = {name: path for name, path in files.items() if _format_of(path, name) == "csv"}
    if not csvs or "row " not in message:
        return message
    names = sorted(csvs, key=len, reverse=True)
    lead = next((n for n in names if message.startswith(f"{n}: ") or message.startswith(f"{n}, ")), None)
    of = re.compile(r"(?<!global )\brow (\d+) of (" + "|".join(re.escape(n) for n in names) + ")")
    wanted: dict[str, set[int]] = {}
    for m in of.finditer(message):
        wanted.setdefault(m.group(2), set()).add(int(m.group(1)))
    if lead is not None:
        wanted.setdefault(lead, set()).update(int(m.group(1)) for m in _ROW.finditer(message))
    lines = {name: _csv_lines(csvs[name], rows) for name, rows in wanted.items() if rows}
    out = of.sub(
        lambda m: row_ref(int(m.group(1)), lines[m.group(2)].get(int(m.group(1))), m.group(2)), message
    )
    if lead is not None:
        out = _ROW.sub(lambda m: row_ref(int(m.group(1)), lines[lead].get(int(m.group(1)))), out)
    return out


def _format_of(path: str, name: str) -> str | None:
    """:func:`detect_format` of a run's input (a spooled standard input by its name ``<stdin>``), or None."""
    if name == "<stdin>":
        return next((f.format for _, f in _SPOOLED if os.fspath(f) == path), None)
    try:
        return detect_format(path)
    except InputError:
        return None


def _csv_lines(path: str, rows: set[int]) -> dict[int, int]:
    """``{row: line}`` of the data rows ``rows`` of the CSV file at ``path`` (those found)."""
    last, out = max(rows), {}
    try:
        with open_csv_text(path) as fh:
            for row, line, _ in csv_records(fh):
                if row in rows:
                    out[row] = line
                if row >= last or row >= LINE_SCAN_ROWS:
                    break
    except (OSError, UnicodeDecodeError, csv.Error, EOFError, zlib.error):
        pass
    return out


def float64_numpy(column) -> np.ndarray:
    """A float64 Arrow array or chunked array without nulls as numpy, from its data buffers: zero-copy
    for one chunk. (pyarrow's ``to_numpy`` imports pandas, 0.2-0.4 s of start-up.)"""
    return cast("np.ndarray", numbers_numpy(column))  # float64 without nulls: never None


def numbers_numpy(column) -> np.ndarray | None:
    """A fixed-width integer or float Arrow array or chunked array without nulls as numpy, in its own
    dtype, from its data buffers (zero-copy for one chunk); None for any other column."""
    import pyarrow as pa

    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    typ = column.type
    if not (pa.types.is_integer(typ) or pa.types.is_floating(typ)) or any(c.null_count for c in chunks):
        return None
    dtype = np.dtype(typ.to_pandas_dtype())
    parts = [
        np.frombuffer(c.buffers()[1], dtype=dtype)[c.offset : c.offset + len(c)] for c in chunks if len(c)
    ]
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)


def to_float(column, name: str, path: str | Path, offset: int = 0) -> np.ndarray:
    """A numeric column as float64 (nulls become NaN); non-numeric data is a SchemaError.

    ``offset``: global row number of the first row (streamed chunks), used in messages."""
    import pyarrow as pa

    typ = column.type
    if (
        pa.types.is_float64(typ) and not column.null_count
    ):  # the common case: no cast (pyarrow.compute: ~30 ms to import)
        return float64_numpy(column)
    import pyarrow.compute as pc

    if pa.types.is_boolean(typ):
        valid = np.flatnonzero(pc.is_valid(column).to_numpy(zero_copy_only=False))
        at = f" (first at row {offset + int(valid[0])})" if valid.size else ""
        raise SchemaError(
            f"{path}: column '{name}' holds true/false values{at}; a boolean is not a number here: "
            "write labels, targets and predictions as numbers (0/1)"
        )
    if pa.types.is_decimal(typ):  # Parquet decimal128/256: exact decimals, read as float64
        column = pc.cast(column, pa.float64())
        typ = column.type
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_null(typ):
        # integers beyond 2**53 (uint64/int64) round to the nearest float64, as every metric computes in float64
        arr = pc.cast(column, pa.float64(), safe=False)
        if arr.null_count:
            arr = pc.fill_null(arr, np.nan)
        return float64_numpy(arr)
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        import pandas as pd

        values = pd.Series(column.to_numpy(zero_copy_only=False), dtype=object)
        text = values.astype("string").str.strip()

        out = pd.to_numeric(text, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.isnan(out) & text.notna().to_numpy() & (text != "").fillna(False).to_numpy()
        bad &= ~text.str.lower().isin(["nan", "na", "n/a", "null", "none"]).fillna(False).to_numpy()
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            shown = str(values[i]).strip()
            if shown.lower() in ("true", "false"):
                fix = "a boolean is not a number here: write labels, targets and predictions as numbers (0/1)"
            elif re.fullmatch(r"[-+]?[0-9]*,[0-9]+", shown):
                from ..errors import option

                flag = option("decimal")
                fix = f"this looks like a decimal comma: pass {flag}{'' if flag.endswith('=') else ' '}','"
            else:
                fix = "fix the value or map another column"
            raise SchemaError(
                f"{path}: column '{name}' is not numeric (row {offset + i} holds {str(values[i])[:40]!r}); {fix}"
            )
        return out
    raise SchemaError(f"{path}: column '{name}' has type {typ}, expected numbers")


def to_matrix(column, name: str, path: str | Path, offset: int = 0) -> np.ndarray:
    """A Parquet list column of equal-length numeric lists as an (N, M) float64 matrix."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if not is_list_type(chunks.type):
        raise SchemaError(f"{path}: column '{name}' must be a list column")
    lengths = pc.list_value_length(chunks).to_numpy(zero_copy_only=False)
    lengths = np.where(np.isnan(lengths.astype(float)), -1, lengths).astype(np.int64)
    if (lengths < 0).any():
        row = int(np.flatnonzero(lengths < 0)[0])
        raise InputError(f"{path}: column '{name}' has a missing list at row {offset + row}")
    if (lengths != lengths[0]).any():
        row = int(np.flatnonzero(lengths != lengths[0])[0])
        raise InputError(
            f"{path}: ragged list column '{name}': row {offset + row} has {lengths[row]} values but row {offset} has "
            f"{lengths[0]}; every row needs the same number of values"
        )
    flat = pc.list_flatten(chunks)
    if not (pa.types.is_integer(flat.type) or pa.types.is_floating(flat.type)):
        raise SchemaError(f"{path}: list column '{name}' holds {flat.type}, expected numbers")
    flat = pc.cast(flat, pa.float64())
    if flat.null_count:
        flat = pc.fill_null(flat, np.nan).to_numpy()
    else:  # no null: a plain (writable) copy, several times faster than fill_null's
        flat = np.array(flat.to_numpy(zero_copy_only=False))
    return flat.reshape(len(lengths), int(lengths[0]) if len(lengths) else 0)
