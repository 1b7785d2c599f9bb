"""What an input argument names: one rule for every command and engine.

:func:`expand_input` turns an argument into the list of files it names:

1. **A path that exists is that file** (``b*.parquet`` and ``a[1].parquet`` are read as the files of
   those names when they exist, never as patterns).
2. **A directory is its parts**: the files under it (recursively) whose names end in ``.parquet``,
   ``.pq``, ``.csv`` or ``.csv.gz``, in path order. Hidden files and writer metadata (any path part
   starting with ``.`` or ``_``: ``_SUCCESS``, ``_metadata``, ``.part-0.crc``, ``_temporary/``) and files of
   other types (``README.txt``) are skipped and listed as skipped. A directory mixing Parquet and CSV
   parts is refused.
3. **Otherwise a name with ``*``, ``?`` or ``[`` is a glob pattern** (``**`` crosses directories); it is an
   error when it matches no file. To glob over names that also exist literally, write another pattern
   for the same files (``b?.parquet``).

Several parts must agree: every part's columns (from the Parquet footer or the CSV header line, never the
data) are checked against the first part's, and a part that lacks a column, adds one or stores it with
another kind of type is refused with one line naming the part and the column.

Nothing heavy is imported here: the common case (one existing file) costs two ``stat`` calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, option

GLOB_CHARS = frozenset("*?[")
DATA_SUFFIXES = (".parquet", ".pq", ".csv", ".csv.gz")


@dataclass(frozen=True)
class Inputs:
    """The files an input argument names (see the module docstring for the rule)."""

    spec: str
    kind: str  # "file", "directory" or "pattern"
    files: list[str]
    skipped: list[str] = field(default_factory=list)
    odd: list[str] = field(default_factory=list)  # skipped files that are neither hidden nor writer metadata

    @property
    def fmt(self) -> str:
        from .readers import detect_format

        return detect_format(self.files[0])

    def record(self) -> dict[str, Any]:
        """``{"files": [...], "skipped": [...]}`` for a directory or a pattern (the JSON ``input``); ``{}`` for a
        single file, whose summary stays as it was."""
        if self.kind == "file":
            from .readers import labelled_format

            fmt = labelled_format(self.files[0]) if self.files else None
            return {"format": fmt} if fmt else {}  # NetCDF/Zarr read as rows (uqeval.io.labelled)
        return {"files": list(self.files), "skipped": list(self.skipped)}

    def note(self) -> str | None:
        """A note for skipped files that are neither hidden nor writer metadata (``README.txt``), else None."""
        if not self.odd:
            return None
        shown = ", ".join(self.odd[:3]) + (", ..." if len(self.odd) > 3 else "")
        return (
            f"{self.spec}: skipped {len(self.odd)} file(s) that are not .parquet, .pq, .csv or .csv.gz: {shown} "
            "(input.skipped lists every skipped file)"
        )


def has_glob(spec: str) -> bool:
    return any(c in spec for c in GLOB_CHARS)


def _hidden(rel: str) -> bool:
    return any(part.startswith((".", "_")) for part in rel.split("/") if part)


def is_data_file(name: str) -> bool:
    return name.lower().endswith(DATA_SUFFIXES)


def select_parts(spec: str, files: list[str], base: str | None = None) -> Inputs:
    """The :class:`Inputs` of directory ``spec`` holding ``files`` (every regular file under it, paths that
    start with ``base``, by default ``spec``): the parts by the rule above, the rest skipped. Shared by local
    directories and URIs."""
    base = (spec if base is None else base).rstrip("/")
    parts, skipped, odd = [], [], []
    for f in sorted(files):
        rel = f[len(base) :]
        if _hidden(rel):
            skipped.append(f)
        elif not is_data_file(rel):
            skipped.append(f)
            odd.append(f)
        else:
            parts.append(f)
    if not parts:
        shown = (
            f" (skipped: {', '.join(skipped[:3])}{', ...' if len(skipped) > 3 else ''})" if skipped else ""
        )
        raise InputError(f"{spec}: is a directory with no .parquet, .pq, .csv or .csv.gz file{shown}")
    return Inputs(spec, "directory", parts, skipped, odd)


def one_format(inputs: Inputs) -> None:
    from .readers import detect_format

    for f in inputs.files:  # a pattern may match a file of another type: name it
        detect_format(f)
    fmts = {detect_format(f): f for f in inputs.files}
    if len(fmts) > 1:
        raise InputError(
            f"{inputs.spec}: mixes Parquet parts ({fmts['parquet']}) and CSV parts ({fmts['csv']}); "
            "every part must have the same format: convert or move the odd ones out"
        )


def expand_input(spec: str | Path, check: bool = True) -> Inputs:
    """The files ``spec`` names: an existing path is that file, a directory its parts, else a glob pattern.

    ``check``: with several parts, refuse parts whose columns disagree with the first part's
    (:func:`check_parts`; footers and header lines only). URIs follow the same rule on their filesystem
    (:func:`uqeval.io.source.remote_inputs`)."""
    from .uri import as_spec, is_uri

    s = as_spec(spec)
    if s == "-":  # spooled to a temporary file once (uqeval.io.readers.stdin_file), read from there in chunks
        from .readers import stdin_file

        return Inputs(s, "file", [stdin_file()])  # type: ignore[list-item]  # a PathLike named <stdin>
    from .readers import is_labelled

    if is_labelled(s):  # NetCDF or Zarr: flattened once to a Parquet file (uqeval.io.labelled)
        from .labelled import labelled_file

        return Inputs(s, "file", [labelled_file(s)])  # type: ignore[list-item]  # a PathLike named as the file
    if is_uri(s):
        from .source import remote_inputs

        return remote_inputs(s, check)
    p = Path(s)
    if p.is_dir():
        inputs = select_parts(s, [str(f) for f in p.rglob("*") if f.is_file()], str(p))
    elif p.exists() or p.is_symlink():
        return Inputs(s, "file", [s])
    elif has_glob(s):
        import glob

        files = sorted(f for f in glob.glob(s, recursive=True) if Path(f).is_file())
        if not files:
            raise InputError(f"{s}: no such file, and as a glob pattern it matches no file")
        inputs = Inputs(s, "pattern", files)
    else:
        from .readers import detect_format

        detect_format(s)  # an unsupported type is the first thing to say
        raise InputError(f"{s}: file does not exist")
    one_format(inputs)
    if check and len(inputs.files) > 1:
        check_parts(inputs.files, inputs.fmt)
    return inputs


def single_file(spec: str | Path) -> Path:
    """The one file ``spec`` names, for the in-memory readers; several files are refused (they stream)."""
    inputs = expand_input(spec, check=False)
    if len(inputs.files) != 1:
        what = "directory" if inputs.kind == "directory" else "pattern"
        raise InputError(
            f"{inputs.spec}: the {what} names {len(inputs.files)} files ({inputs.files[0]}, ...); the in-memory "
            f"reader takes one file: name one, or stream them with {option('engine', 'stream')} (score, check, "
            "compare, ucc, coverage)"
        )
    return Path(inputs.files[0])


def type_class(typ) -> str:
    """A column type up to what the readers convert anyway: integers, floats and decimals are numbers,
    every list is a list of its values' class; ``"null"`` (an all-null column) agrees with anything."""
    import pyarrow as pa

    from .readers import is_list_type

    if pa.types.is_null(typ):
        return "null"
    if pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ):
        return "number"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return "string"
    if is_list_type(typ):
        return f"list<{type_class(typ.value_type)}>"
    return str(typ)


def _local_columns(f: str, fmt: str) -> dict[str, str]:
    """``{column: type class}`` of a local part (CSV: every column is ``"text"``)."""
    from .readers import inspect, parquet_schema

    if fmt == "csv":
        return dict.fromkeys(inspect(f).columns, "text")
    schema = parquet_schema(f)
    return {n: type_class(t) for n, t in zip(schema.names, schema.types)}


def check_parts(
    files: list[str], fmt: str, columns_of: Callable[[str, str], dict[str, str]] | None = None
) -> None:
    """Refuse parts whose columns differ from the first part's: a missing column, an extra one, or one stored
    as another kind of type (numbers, text, lists of numbers, ...). Reads footers / header lines only."""
    columns_of = columns_of or _local_columns
    first = files[0]
    ref = columns_of(first, fmt)
    for f in files[1:]:
        got = columns_of(f, fmt)
        for c in ref:
            if c not in got:
                raise InputError(
                    f"{f}: column '{c}' is missing, but the first part {first} has it; every part must "
                    "have the same columns"
                )
        for c in got:
            if c not in ref:
                raise InputError(
                    f"{f}: column '{c}' is not in the first part {first}; every part must have the same columns"
                )
            if ref[c] != got[c] and "null" not in (ref[c], got[c]):
                raise InputError(
                    f"{f}: column '{c}' holds {got[c]}, but the first part {first} holds {ref[c]}; every part "
                    "must store a column with the same type"
                )
