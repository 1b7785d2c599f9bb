"""Output writers: regular files are written atomically, special files are written through.

* A regular file (or a new path) gets a temporary file in the same directory that
  is renamed over it once complete, so an interrupted run never leaves a
  half-written output. A symlink is followed: the temporary file goes next to the
  link's final target and replaces that target; the link itself stays a link.
* ``-`` means stdout; character devices (``/dev/stdout``, ``/dev/null``) and FIFOs
  are opened and written directly. Nothing is ever renamed over a non-regular file;
  directories, sockets and block devices are refused.
* An output that is one of the run's input files (also through a link or a hard
  link) is refused: every file a run reads is registered with :func:`register_input`.
* Inside :func:`output_batch` (the CLI wraps every command in one) writes are
  staged: each output is fully written to its temporary file (or kept in memory
  for a device), and all of them are renamed/written only when the command
  succeeds, so a run's outputs appear together or not at all. Messages about
  them ("wrote X") wait for that too (:func:`after_write`). At most one output
  goes to stdout, and then nothing else does (:func:`stdout_taken`).
* Temporary files are tracked from before they exist (the name is registered,
  then created exclusively); any failure, ``KeyboardInterrupt`` or SIGTERM (the
  CLI turns it into ``KeyboardInterrupt``) removes them.

OS errors while writing become :class:`InputError` naming the output path.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, UsageError

_LIVE: set[str] = set()  # temporary files (maybe) created and not yet renamed
_INPUTS: set[tuple[int, int]] = set()  # (st_dev, st_ino) of files read in this run
_BATCH: list[list[tuple[str, Any, Any]]] = []  # stack of staged (kind, target, tmp-or-data)
_AFTER: list[list[Callable[[], None]]] = []  # per batch: what to do once its outputs are written


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    with contextlib.suppress(OSError, ValueError):
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            return st.st_dev, st.st_ino
    return None


def register_input(path: str | os.PathLike[str]) -> None:
    """Remember that this run reads ``path``: writing an output onto it will be refused.

    Only inside :func:`output_batch` (a CLI run); a library caller's reads leave no trace.
    """
    if not _BATCH:
        return
    _READ.pop(str(path), None)  # the last registered is the last key
    _READ[str(path)] = os.fspath(path)
    ident = _identity(path)
    if ident is not None:
        _INPUTS.add(ident)


def _os_error(path: Any, exc: OSError) -> InputError:
    why = exc.strerror or str(exc) or type(exc).__name__
    return InputError(f"{path}: cannot write output ({why})")


def _resolve(path: str | Path, inputs: Iterable[str | Path] = ()) -> tuple[str, Path | None]:
    """``("stdout", None)``, ``("through", path)`` for a device/FIFO, or ``("file", real path)``."""
    if str(path) == "-":
        return "stdout", None
    p = Path(path)
    try:
        st = os.stat(p)  # follows links
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _os_error(p, exc) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            return "through", p
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{p}: is a directory; give a file name for the output")
        raise InputError(
            f"{p}: is neither a regular file, a character device nor a FIFO; refusing to write to it"
        )
    if st is not None and (
        (st.st_dev, st.st_ino) in _INPUTS or (st.st_dev, st.st_ino) in map(_identity, inputs)
    ):
        raise InputError(f"{p}: refusing to overwrite an input file of this run; choose another output path")
    real = Path(os.path.realpath(p))
    if not real.parent.is_dir():
        if os.path.islink(p):
            raise InputError(f"{p}: is a link into '{real.parent}', which does not exist; create it first")
        raise InputError(f"{p}: output directory '{p.parent}' does not exist; create it first")
    return "file", real


def check_output_path(path: str | Path, inputs: Iterable[str | Path] = ()) -> Path:
    """Fail early (before any work) when ``path`` cannot be written or would overwrite an input."""
    inputs = list(inputs)
    for src in inputs:
        register_input(src)
    p = Path(path)
    kind, real = _resolve(p, inputs)
    if kind == "file":
        assert real is not None  # _resolve gives ("file", real path)
        if not os.access(real.parent, os.W_OK | os.X_OK):
            raise InputError(f"{p}: cannot write output (directory '{real.parent}' is not writable)")
    return p


def _new_temp(real: Path) -> tuple[int, str]:
    """A new temporary file next to ``real``: its name is registered in ``_LIVE`` *before* it is created.

    So an interrupt at any point (signals may be handled between any two bytecodes, and
    blocking them in one thread does not stop another thread from receiving them) leaves
    nothing that :func:`discard_temps` does not know about.
    """
    for _ in range(100):
        tmp = str(real.parent / f".{real.name}.{os.urandom(8).hex()}.tmp")
        _LIVE.add(tmp)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies, as for open()
        except FileExistsError:  # someone else's file: never ours to delete
            _LIVE.discard(tmp)
            continue
        return (
            fd,
            tmp,
        )  # (on any other exception the name stays registered; deleting a missing file is harmless)
    raise InputError(f"{real}: cannot create a temporary file next to it")


def discard_temps() -> None:
    """Delete every temporary output file not yet renamed (after a failure or an interrupt)."""
    for tmp in list(_LIVE):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _LIVE.discard(tmp)


def _write_temp(real: Path, data: bytes) -> str:
    fd = -1
    try:
        fd, tmp = _new_temp(real)
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        return tmp
    except BaseException:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        if not _BATCH:
            discard_temps()
        raise


def _write_through(kind: str, target: Path | None, data: bytes) -> None:
    if kind == "stdout":
        out = getattr(sys.stdout, "buffer", None)
        if out is None:
            sys.stdout.write(data.decode("utf-8", "replace"))
        else:
            sys.stdout.flush()
            out.write(data)
        sys.stdout.flush()
        return
    with open(target, "wb") as fh:  # type: ignore[arg-type]
        fh.write(data)


def _commit(kind: str, target: Any, payload: Any) -> None:
    if kind == "file":
        os.replace(payload, target)
        _LIVE.discard(payload)
    else:
        _write_through(kind, target, payload)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` (see the module docstring for what kind of path gets what)."""
    try:
        kind, real = _resolve(path)
        if kind == "file":
            tmp = _write_temp(real, data)  # type: ignore[arg-type]
            if _BATCH:
                _BATCH[-1].append((kind, real, tmp))
            else:
                try:
                    _commit(kind, real, tmp)
                except BaseException:
                    discard_temps()
                    raise
        elif _BATCH:
            if kind == "stdout" and stdout_taken():
                raise UsageError("two outputs are given as '-' (stdout); only one output can go to stdout")
            _BATCH[-1].append((kind, real, bytes(data)))
        else:
            _write_through(kind, real, data)
    except OSError as exc:
        raise _os_error(path, exc) from None


@contextlib.contextmanager
def output_batch(commit_on: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Stage every output written inside; rename/write them all at the end, or none on failure.

    ``commit_on``: exception types after which the staged outputs are still committed
    (``uqeval check`` writes its reports and then fails with :class:`~uqeval.errors.GateFailure`).
    """
    _BATCH.append([])
    _AFTER.append([])
    committed = False
    try:
        try:
            yield
        except commit_on:
            _finish(_BATCH[-1])
            committed = True
            _run_after()
            raise
        _finish(_BATCH[-1])
        committed = True
        _run_after()
    finally:
        staged = _BATCH.pop()
        _AFTER.pop()
        if not committed:
            for kind, _, payload in staged:
                if kind == "file":
                    with contextlib.suppress(OSError):
                        os.unlink(payload)
                    _LIVE.discard(payload)
        if not _BATCH:
            discard_temps()
            _INPUTS.clear()
            _READ.clear()


def after_write(action: Callable[[], None]) -> None:
    """Run ``action`` (say, print "wrote X") once this run's outputs are written: at the end of the
    current :func:`output_batch` if they were, never if writing failed; at once outside a batch."""
    if _AFTER:
        _AFTER[-1].append(action)
    else:
        action()


def _run_after() -> None:
    actions, _AFTER[-1][:] = list(_AFTER[-1]), []
    for action in actions:
        action()


def stdout_taken() -> bool:
    """True when an output of the current batch goes to stdout (``-``): then stdout holds that output
    alone, and the command prints no table, Markdown or JSON rendering next to it."""
    return bool(_BATCH) and any(kind == "stdout" for kind, _, _ in _BATCH[-1])


def _finish(staged: list[tuple[str, Any, Any]]) -> None:
    try:
        for i, (kind, target, payload) in enumerate(staged):
            _commit(kind, target, payload)
            staged[i] = ("done", target, None)
    except OSError as exc:
        raise _os_error(target, exc) from None


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays to plain Python; NaN and inf become ``None`` (strict JSON)."""
    kind = type(obj)  # the plain types first, by identity: a per-cell document has millions of leaves
    if kind is float:
        return obj if math.isfinite(obj) else None
    if kind is str or kind is int or obj is None:
        return obj
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    return obj


def dumps_json(obj: Any) -> str:
    return json.dumps(jsonable(obj), indent=2, allow_nan=False) + "\n"


def write_json(path: str | Path, obj: Any) -> None:
    atomic_write_text(path, dumps_json(obj))


def write_parquet(path: str | Path, table: Any) -> None:
    """Write a pyarrow Table (serialised in memory, then like any other output)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


# each file this run read: its name in messages -> its path (<stdin>: the spooled copy)
_READ: dict[str, str] = {}


def inputs_read() -> dict[str, str]:
    """The files this run registered (:func:`register_input`): the name messages use -> the path to open."""
    return dict(_READ)


def last_input() -> str | None:
    """The file this run registered last (named in errors that do not say which file they are about)."""
    return next(reversed(_READ), None)


def output_format(path: str | Path) -> str:
    """``"parquet"`` or ``"csv"`` from the output file name (UsageError otherwise)."""
    name = str(path).lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    from ..errors import option

    raise UsageError(f"{option('output', str(path))}: give a .parquet, .pq, .csv or .csv.gz file name")


def write_table(path: str | Path, table) -> None:
    """Write ``table`` atomically as Parquet or CSV (by extension: :func:`output_format`)."""
    import gzip
    import io

    if output_format(path) == "parquet":
        write_parquet(path, table)
        return
    import pyarrow.csv as pacsv

    from .readers import is_list_type

    nested = [f.name for f in table.schema if is_list_type(f.type)]
    if nested:
        raise InputError(
            f"{path}: list column(s) {', '.join(nested)} cannot be written to CSV; write a .parquet output instead"
        )
    buf = io.BytesIO()
    pacsv.write_csv(table, buf)
    data = buf.getvalue()
    if str(path).lower().endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(path, data)
