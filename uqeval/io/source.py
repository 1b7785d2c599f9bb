"""Sources of record batches for the streaming engines: a file, a directory of Parquet files
(hive partitions included) or a glob, read with ``pyarrow.dataset``; CSV read in blocks with
``pyarrow.csv.open_csv``. Imported only by the streaming paths (the in-memory ``score`` path
never imports ``pyarrow.dataset``).

Any of these may also be a URI (``s3://bucket/preds/``, ``gs://...``, ``hdfs://...``,
``file:///data/x.parquet``, ``memory://...``): pyarrow's own filesystems open the schemes it was
built with, and any other scheme goes through fsspec where fsspec and the scheme's package
(s3fs, gcsfs, adlfs, ...) are installed. Nothing here imports them otherwise.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, option
from .inputs import Inputs, check_parts, expand_input, has_glob, one_format, select_parts, type_class
from .readers import (
    TableInfo,
    _short,
    csv_info,
    csv_records,
    decimal_point,
    inspect,
    open_csv_text,
    parquet_info,
    parse_options,
)
from .uri import SCHEME, as_spec, is_uri


@dataclass
class Source:
    """Where the rows come from: the header (:class:`TableInfo`, for column planning) and the files."""

    spec: str
    info: TableInfo
    files: list[str]
    fmt: str  # "parquet" or "csv"
    inputs: Inputs | None = None  # what the argument named: files read and skipped

    def record(self) -> dict[str, list[str]]:
        """The files read and skipped, for the JSON ``input`` of a directory or a pattern (``{}`` for a file)."""
        return self.inputs.record() if self.inputs is not None else {}

    def notes(self) -> list[str]:
        """A note when files other than hidden ones and writer metadata were skipped."""
        note = self.inputs.note() if self.inputs is not None else None
        return [note] if note else []


# --------------------------------------------------------------------------- URIs


def filesystem(uri: str):
    """``(pyarrow FileSystem, path inside it)`` for a URI: pyarrow's own filesystem for the scheme (with
    the ``--connect-timeout`` limits, :func:`uqeval.io.remote.bounded`), else fsspec's wrapped in
    :class:`pyarrow.fs.PyFileSystem`. Unknown schemes and missing packages are one-line
    :class:`InputError` s saying what to install; a scheme pyarrow knows but cannot open (no network,
    bad credentials) reports pyarrow's own reason."""
    import pyarrow as pa
    import pyarrow.fs as pafs

    from . import remote

    # only ever called with a URI (is_uri), so the match is never None
    scheme = SCHEME.match(uri).group(1).lower()  # type: ignore[union-attr]
    try:
        fs, path = remote.call(uri, pafs.FileSystem.from_uri, uri, limit=remote.deadline())
        return remote.bounded(fs), path
    except (pa.ArrowException, ValueError, OSError) as exc:
        native = _short(exc)
        if isinstance(exc, InputError):
            raise
        if isinstance(exc, OSError) and not _unsupported(native):
            # pyarrow has the scheme and could not reach the store (s3:// without network: the host that
            # could not be resolved), which no fsspec package would change: say so, not "install s3fs"
            raise InputError(f"{uri}: cannot open {scheme}:// ({native}){_hint(native)}") from None
    try:
        import fsspec
    except ImportError:
        raise InputError(
            f"{uri}: pyarrow cannot open {scheme}:// ({native}) and fsspec is not installed: "
            f"pip install fsspec and the package for {scheme}:// (s3fs, gcsfs, adlfs, ...)"
        ) from None
    try:
        fs, path = remote.call(uri, fsspec.core.url_to_fs, uri, limit=remote.deadline())
    except (ImportError, ValueError, OSError) as exc:
        if isinstance(exc, InputError):
            raise
        tried = "" if _unsupported(native) else f"pyarrow: {native}; "
        raise InputError(
            f"{uri}: no filesystem for {scheme}:// ({tried}{_short(exc)}); install the fsspec package "
            "for it (s3fs for s3://, gcsfs for gs://, adlfs for az://)"
        ) from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


def _unsupported(native: str) -> bool:
    """pyarrow's error says it has no filesystem for the scheme (so fsspec may have one)."""
    text = native.lower()
    return "unrecognized filesystem type" in text or "not built with" in text


def _hint(native: str) -> str:
    """How to give a slow store more time, when pyarrow's error was a timeout."""
    return f"; raise {option('connect_timeout')} for a slow store" if "timeout" in native.lower() else ""


def _uri_of(spec: str, path: str) -> str:
    """The URI of ``path`` on the filesystem of ``spec`` (same scheme)."""
    # spec is a URI (is_uri), so the match is never None
    return SCHEME.match(spec).group(0) + path  # type: ignore[union-attr]


def remote_inputs(spec: str, check: bool = True) -> Inputs:
    """The :class:`~uqeval.io.inputs.Inputs` of a URI, by the local rule
    (:func:`uqeval.io.inputs.expand_input`): an existing object is that file, a directory its parts, else a
    glob pattern (``*`` also matches ``/``). The listing is bounded by ``--connect-timeout``."""
    from . import remote

    fs, path = filesystem(spec)
    inputs = remote.call(spec, _list_remote, spec, fs, path, limit=remote.deadline())
    if inputs.kind == "file":
        return inputs
    one_format(inputs)
    if check and len(inputs.files) > 1:
        check_parts(inputs.files, inputs.fmt, _remote_columns)
    return inputs


def _list_remote(spec: str, fs, path: str) -> Inputs:
    import pyarrow as pa
    import pyarrow.fs as pafs

    try:
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.Directory:
            base = info.path.rstrip("/")
            infos = fs.get_file_info(pafs.FileSelector(info.path, recursive=True))
            inputs = select_parts(spec, [i.path for i in infos if i.type == pafs.FileType.File], base)
            uri = lambda f: _uri_of(spec, f)  # noqa: E731
            inputs = Inputs(
                spec,
                "directory",
                [uri(f) for f in inputs.files],
                [uri(f) for f in inputs.skipped],
                [uri(f) for f in inputs.odd],
            )
        elif info.type != pafs.FileType.NotFound:
            return Inputs(spec, "file", [spec])
        elif has_glob(path):
            parts = path.split("/")
            fixed = next(i for i, part in enumerate(parts) if has_glob(part))
            base = "/".join(parts[:fixed]) or "/"
            infos = fs.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True))
            files = sorted(
                i.path for i in infos if i.type == pafs.FileType.File and fnmatch.fnmatchcase(i.path, path)
            )
            if not files:
                raise InputError(f"{spec}: no such file, and as a glob pattern it matches no file")
            inputs = Inputs(spec, "pattern", [_uri_of(spec, f) for f in files])
        else:
            raise InputError(f"{spec}: no such file or directory")
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{spec}: cannot list ({_short(exc)}){_hint(_short(exc))}") from None
    return inputs


def _remote_columns(f: str, fmt: str) -> dict[str, str]:
    """``{column: type class}`` of a remote part, from its footer or header line."""
    if fmt == "csv":
        return dict.fromkeys(_remote_info(f, fmt).columns, "text")
    import pyarrow as pa

    try:
        with parquet_file(f) as pf:
            schema = pf.schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{f}: cannot read Parquet file ({_short(exc)})") from None
    return {n: type_class(t) for n, t in zip(schema.names, schema.types)}


@contextmanager
def parquet_file(f: str | Path):
    """``pyarrow.parquet.ParquetFile`` of a local path or a URI, read page by page (``pre_buffer=False``,
    a 1 MiB buffer): memory stays flat whatever the row-group size."""
    import pyarrow.parquet as pq

    if is_uri(f):
        from . import remote

        spec = as_spec(f)
        fs, path = filesystem(spec)

        def open_remote():
            fh = fs.open_input_file(path)
            try:
                return fh, pq.ParquetFile(fh, pre_buffer=False, buffer_size=1 << 20)
            except BaseException:
                fh.close()
                raise

        fh, pf = remote.call(spec, open_remote, limit=remote.deadline())
        with fh, pf:
            yield pf
        return
    with pq.ParquetFile(f, pre_buffer=False, buffer_size=1 << 20) as pf:
        yield pf


def _open_text(f: str):
    """A text handle on a (possibly gzipped) CSV file, local or remote."""
    import io

    if is_uri(f):
        fs, path = filesystem(f)
        raw = fs.open_input_stream(path, compression="gzip" if f.lower().endswith(".gz") else None)
        return io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
    return open_csv_text(f)  # standard input: a spooled StdinFile


def _remote_info(f: str, fmt: str) -> TableInfo:
    """The header of a remote file (:func:`uqeval.io.readers.inspect` for URIs)."""
    import csv
    import zlib

    import pyarrow as pa

    from . import remote

    def header() -> TableInfo:
        with _open_text(f) as fh:
            return csv_info(f, fh)

    try:
        if fmt == "parquet":
            with parquet_file(f) as pf:
                return parquet_info(f, pf.schema_arrow)
        return remote.call(f, header, limit=remote.deadline())
    except (pa.ArrowException, OSError, UnicodeDecodeError, EOFError, zlib.error, csv.Error) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{f}: cannot read {fmt.upper()} file ({_short(exc)}){_hint(_short(exc))}") from None


def open_source(spec: str | Path) -> Source:
    """The header and files of ``spec`` (a CSV/Parquet file, a directory of parts, or a glob; a local path or a
    URI), expanded by :func:`uqeval.io.inputs.expand_input` (parts checked against the first one)."""
    spec = as_spec(spec)
    remote = is_uri(spec)
    inputs = expand_input(spec)
    files, fmt = inputs.files, inputs.fmt
    header = (lambda f: _remote_info(f, fmt)) if remote else inspect
    if fmt == "csv":
        return Source(spec, header(files[0]), files, "csv", inputs=inputs)
    if inputs.kind == "directory":
        import pyarrow as pa
        import pyarrow.dataset as ds

        # the parts found above (not the directory: a README.txt must not break it), hive partition keys
        # (region=eu/...) read from the paths below the directory
        try:
            if remote:
                from . import remote as _remote

                fs, path = filesystem(spec)
                dataset = _remote.call(
                    spec,
                    lambda: ds.dataset(
                        [filesystem(f)[1] for f in files],
                        filesystem=fs,
                        format="parquet",
                        partitioning="hive",
                        partition_base_dir=fs.get_file_info(path).path,
                    ),
                    limit=_remote.deadline(),
                )
            else:
                dataset = ds.dataset(
                    files, format="parquet", partitioning="hive", partition_base_dir=str(Path(spec))
                )
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{spec}: cannot open the Parquet dataset ({_short(exc)})") from None
        info = parquet_info(spec if remote else Path(spec), dataset.schema)
        return Source(spec, info, files, "parquet", inputs=inputs)
    head = header(files[0])
    where = head.path if inputs.kind == "file" else (spec if remote else Path(spec))
    # TableInfo.path holds the URI string for a remote input (as parquet_info's does; see its field comment)
    info = TableInfo(where, "parquet", head.columns, head.list_columns)  # type: ignore[arg-type]
    return Source(spec, info, files, "parquet", inputs=inputs)


def iter_batches(
    src: Source,
    columns: list[str],
    chunk_rows: int,
    numeric: frozenset[str] = frozenset(),
    skip: Collection[str] = (),
) -> Iterator[tuple[str, dict, int]]:
    """``(file, {column: pyarrow.Array}, n_rows)`` for record batches of at most ``chunk_rows`` rows, in file order.

    ``numeric``: CSV columns read as float64 whatever the first block looks like (a column of
    integers in the first block must not fix an integer type for the later ones). ``skip``: files not to
    read (``monitor --skip-seen``: files a state has read)."""
    import pyarrow as pa

    columns = list(dict.fromkeys(columns))
    if src.fmt == "csv":
        for f in src.files:
            if str(f) in skip:
                continue
            yield from _csv_batches(
                f, src.info if f == src.files[0] else inspect(f), columns, chunk_rows, numeric
            )
        return

    # Each file is read with ParquetFile.iter_batches, pre_buffer=False and a 1 MiB read buffer: batches
    # are decoded page by page inside a row group, so memory stays flat whatever the row-group size.
    # (The pyarrow.dataset scanner, used for discovering hive partitions, decodes whole row groups and
    # by default keeps the pre-buffered column chunks: 1.5-2.4 GB for 1e6-row groups of 50 samples,
    # 4.4 GB peak on 1e8 Gaussian rows; these settings stay at 0.27 GB.)
    for name in src.files:  # partitioned: the files pyarrow.dataset found, in path order
        if str(name) in skip:
            continue
        if getattr(name, "direct", False):  # a NetCDF/Zarr input: its slabs straight from the arrays
            yield from name.batches(columns, chunk_rows)  # type: ignore[attr-defined]
            continue
        try:
            with parquet_file(name) as pf:  # a remote open: bounded (--connect-timeout), in a helper thread
                batches = pf.iter_batches(batch_size=chunk_rows, columns=columns, use_threads=False)
                if is_uri(name):  # remote reads in a helper thread: a signal still ends the run at once
                    from . import remote

                    batches = remote.iterate(name, batches)
                for batch in batches:
                    yield from _slices(name, batch, columns, chunk_rows)
        except (pa.ArrowException, OSError) as exc:
            raise InputError(f"{name}: cannot read Parquet data ({_short(exc)})") from None


def _slices(name: str, batch, columns: list[str], chunk_rows: int) -> Iterator[tuple[str, dict, int]]:
    for start in range(0, batch.num_rows, chunk_rows):
        part = batch.slice(start, chunk_rows)
        yield name, {c: part.column(c) for c in columns}, part.num_rows


NULLS = ["", "NA", "N/A", "n/a", "NULL", "null", "NaN", "nan", "-NaN", "-nan", "None", "none", "#N/A"]


def _csv_batches(
    f: str, info: TableInfo, columns: list[str], chunk_rows: int, numeric: frozenset[str]
) -> Iterator[tuple[str, dict, int]]:

    import pyarrow as pa
    import pyarrow.csv as pacsv

    from . import remote

    raw = [info.raw_names.get(n, n) for n in columns]
    uri = is_uri(f)

    def open_reader():
        source = f
        if uri:
            fs, path = filesystem(f)
            source = fs.open_input_stream(path, compression="gzip" if f.lower().endswith(".gz") else None)
        return pacsv.open_csv(
            source,
            read_options=pacsv.ReadOptions(block_size=1 << 22, use_threads=False),
            parse_options=parse_options(),
            convert_options=pacsv.ConvertOptions(
                include_columns=raw,
                strings_can_be_null=True,
                null_values=NULLS,
                column_types={r: pa.float64() for r, c in zip(raw, columns) if c in numeric},
                **decimal_point(),
            ),
        )

    try:
        reader = remote.call(f, open_reader, limit=remote.deadline()) if uri else open_reader()
    except InputError:
        raise
    except (pa.ArrowException, OSError, UnicodeDecodeError, EOFError) as exc:
        raise _unreadable(f, info, columns, numeric, 0, exc) from None
    done = 0
    while True:
        try:
            batch = remote.call(f, reader.read_next_batch) if uri else reader.read_next_batch()
        except StopIteration:
            return
        except (pa.ArrowException, OSError, UnicodeDecodeError, EOFError) as exc:
            # a value that is not a number (or a ragged line) in a later block; find its global row
            raise _unreadable(f, info, columns, numeric, done, exc) from None
        batch = batch.rename_columns(columns) if batch.num_columns == len(columns) else batch
        for item in _slices(f, batch, columns, chunk_rows):
            done += item[2]
            yield item


def _unreadable(f: str, info: TableInfo, columns, numeric, done: int, exc: BaseException) -> InputError:
    """The error of a CSV block that cannot be read, naming its first bad row (from the ``done``-th on)."""
    return InputError(
        f"{f}: cannot read CSV data{_bad_csv_row(f, info, columns, numeric, done)} ({_short(exc)})"
    )


def _bad_csv_row(f: str, info: TableInfo, columns: list[str], numeric: frozenset[str], start: int) -> str:
    """`` in column 'C' at row R`` for the first value from data row ``start`` on that is not a number
    (or `` at row R`` for a line with the wrong field count). Only called after a parse error."""
    import csv

    index = {c: info.columns.index(c) for c in columns if c in numeric and c in info.columns}
    nulls = set(NULLS)
    try:
        with _open_text(f) as fh:
            for i, _, record in csv_records(fh):  # rows as the readers count them (empty lines are none)
                if i < start:
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
