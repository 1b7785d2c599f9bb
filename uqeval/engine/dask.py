"""``--engine dask``: Parquet row groups mapped to partial states on a Dask cluster, tree-reduced with
the merge of the fold's states (the same state code as the stream engine; no metric logic here).

``--scheduler ADDRESS`` connects to an existing cluster; ``--workers N`` starts a ``LocalCluster`` of
N worker processes for the run. Dask is an optional extra (``pip install "uqeval[dask]"``), imported
only here.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

from .. import _children
from ..config import Settings
from ..errors import InputError, UsageError, option

if TYPE_CHECKING:
    from .options import EngineOptions

#: row groups are packed into tasks of about this many rows (at least one row group per task)
TASK_ROWS = 4_000_000


def _import_dask():
    try:
        import dask  # noqa: F401
        import distributed
    except ImportError:
        raise UsageError(
            f'{option("engine", "dask")} needs the Dask extra: pip install "uqeval[dask]" (dask[dataframe] and '
            "distributed)"
        ) from None
    return distributed


#: the address forms ``--scheduler`` takes: ``[tcp|tls|ws|wss]://host:port`` (host: a name, IPv4 or [IPv6])
_ADDRESS = re.compile(
    r"^(?:(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.\-]+):(?P<port>[0-9]{1,5})$"
)
_SCHEMES = ("tcp", "tls", "ws", "wss")


def scheduler_address(address: str) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of a ``--scheduler`` address, or a one-line :class:`UsageError`."""
    from ..text import plain

    m = _ADDRESS.match(address.strip())
    scheme = (m.group("scheme") or "tcp").lower() if m else ""
    if m is None or scheme not in _SCHEMES or not 0 < int(m.group("port")) < 65536:
        raise UsageError(
            f"{option('scheduler', repr(plain(address)[:200]))} is not a scheduler address; give it as tcp://host:8786 "
            f"(schemes {', '.join(_SCHEMES)}; port 1-65535)"
        )
    return scheme, m.group("host").strip("[]"), int(m.group("port"))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def _cannot_connect(address: str | None, why: str) -> UsageError:
    if address is None:
        return UsageError(f"{option('workers')}: cannot start a local Dask cluster ({why})")
    return UsageError(
        f"{option('scheduler', address)}: cannot connect to a Dask scheduler there ({why}); give its address as "
        f"tcp://host:8786, or use {option('workers', 'N')} for a local cluster"
    )


def probe(address: str, seconds: float) -> None:
    """Check that a Dask scheduler answers at ``tcp://host:port`` before distributed connects.

    A scheduler sends its handshake first: an 8-byte little-endian length, then that many bytes holding
    a frame count, the frame lengths and the frames (a few dozen bytes). A silent server, one that
    sends something else (an HTTP server, garbage) or a refused connection is a one-line
    :class:`UsageError` within ``seconds`` per step, never a hang or a huge allocation."""
    import socket
    import struct

    scheme, host, port = scheduler_address(address)
    if scheme != "tcp":
        return  # TLS and websockets: distributed's own handshake, bounded by the client's timeout
    try:
        with socket.create_connection((host, port), timeout=seconds) as sock:
            sock.settimeout(seconds)

            def read(n: int) -> bytes:
                data = b""
                while len(data) < n:
                    chunk = sock.recv(n - len(data))
                    if not chunk:
                        raise _cannot_connect(address, "the server closed the connection")
                    data += chunk
                return data

            (size,) = struct.unpack("<Q", read(8))
            if not 16 <= size <= 1 << 16:
                raise _cannot_connect(address, "the server there does not speak the Dask protocol")
            body = read(size)
            (frames,) = struct.unpack_from("<Q", body)
            lengths = struct.unpack_from(f"<{frames}Q", body, 8) if 1 <= frames <= 64 else None
            if lengths is None or 8 * (1 + frames) + sum(lengths) != size:
                raise _cannot_connect(address, "the server there does not speak the Dask protocol")
    except TimeoutError:
        raise _cannot_connect(
            address, f"no answer within {seconds:g} s; raise {option('connect_timeout')}"
        ) from None
    except OSError as exc:
        raise _cannot_connect(address, exc.strerror or type(exc).__name__) from None


@contextmanager
def dask_client(engine: EngineOptions) -> Iterator[tuple[Any, Any]]:
    """``(client, distributed)`` for the ``scheduler`` of ``engine`` (an existing cluster) or its ``workers``
    (a ``LocalCluster`` of that many single-threaded worker processes, closed afterwards).

    A scheduler address is validated and probed first (:func:`probe`); the connect waits at most
    ``--connect-timeout`` seconds per attempt in a helper thread, so SIGINT/SIGTERM still end the run."""
    from ..io import remote

    scheduler, workers = engine.scheduler, engine.workers
    if scheduler is not None:
        scheduler_address(scheduler)
    distributed = _import_dask()
    cluster = None
    seconds = remote.timeout()
    guard = contextlib.ExitStack()
    try:
        if scheduler is None:
            # its processes end with this one however it ends, even while they start
            guard.enter_context(_children.watchdog())
            # the scheduler's HTTP server (dashboard) on a free loopback port: never the fixed 8787 (taken
            # when another cluster runs) and never on the machine's other interfaces
            cluster = distributed.LocalCluster(
                n_workers=workers or 2,
                threads_per_worker=1,
                processes=True,
                dashboard_address="127.0.0.1:0",
                silence_logs=50,
            )
            guard.callback(cluster.close)  # closed before the watchdog ends
        if scheduler is not None:
            remote.call(option("scheduler", scheduler), probe, scheduler, seconds, limit=remote.deadline())
        try:
            client = remote.call(
                option("scheduler", scheduler),
                lambda: distributed.Client(scheduler or cluster, set_as_default=True, timeout=f"{seconds}s"),
                limit=remote.deadline(),
            )
        except InputError as exc:  # no answer in time
            raise _cannot_connect(scheduler, str(exc).split(": ", 1)[-1]) from None
        except UsageError:
            raise
        except Exception as exc:  # any failure to connect (refused, garbage, TLS settings): one line
            raise _cannot_connect(scheduler, _first_line(exc)) from None
        with client:
            try:  # the workers open remote files themselves: the same limits there
                remote.call(
                    "the Dask workers", client.run, remote.set_timeout, seconds, limit=remote.deadline()
                )
            except Exception as exc:
                raise _cannot_connect(scheduler, f"the workers do not answer: {_first_line(exc)}") from None
            yield client, distributed
    finally:
        guard.close()


def _merge(a, b):
    return a.merge(b)


def tree_reduce(client, futures: list):
    """Every future's result merged (``a.merge(b)``) pairwise on the cluster, in the futures' order."""
    level = list(futures)
    while len(level) > 1:
        level = [
            client.submit(_merge, level[i], level[i + 1], pure=False) if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
    return level[0].result()


def wait(
    distributed,
    futures: list,
    sizes: list[int],
    progress: Callable[[int], None] | None = None,
    start: int = 0,
) -> int:
    """Wait for ``futures`` in completion order, raising the first worker error here (its one-line InputError),
    and report ``start`` plus the rows (``sizes``, one per future) done so far; returns that count."""
    done = start
    position = {id(f): i for i, f in enumerate(futures)}
    for fut in distributed.as_completed(futures):
        if fut.status == "error":
            fut.result()  # raises the worker's InputError here
        done += sizes[position[id(fut)]]
        if progress is not None:
            progress(done)
    return done


def cluster_info(engine: EngineOptions, n_tasks: int) -> dict[str, Any]:
    """The JSON ``input`` entries of a Dask run on ``engine`` (its ``chunk_rows`` set: :meth:`EngineOptions.sized`)."""
    return {
        "chunk_rows": int(cast("int", engine.chunk_rows)),
        "n_partitions": n_tasks,
        "scheduler": engine.scheduler
        if engine.scheduler is not None
        else f"LocalCluster({engine.workers or 2} worker processes)",
    }


def footer(f: str):
    """The Parquet metadata of ``f`` (row groups and their rows), or a one-line InputError naming it."""
    import pyarrow as pa

    from ..io.source import parquet_file

    try:
        with parquet_file(f) as pf:
            return pf.metadata
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{f}: cannot read Parquet file ({exc})") from None


def partitions(files: list[str], task_rows: int = TASK_ROWS) -> list[tuple[str, list[int], int, int]]:
    """``(file, row groups, global offset, rows)`` tasks in file order, from the Parquet footers."""
    out = []
    offset = 0
    for f in files:
        meta = footer(f)
        groups: list[int] = []
        rows = 0
        for g in range(meta.num_row_groups):
            groups.append(g)
            rows += meta.row_group(g).num_rows
            if rows >= task_rows:
                out.append((f, groups, offset, rows))
                offset += rows
                groups, rows = [], 0
        if groups:
            out.append((f, groups, offset, rows))
            offset += rows
    return out


def task_batches(
    task: tuple[str, list[int], int, int],
    plan,
    settings: Settings,
    chunk_rows: int,
    columns: list[str],
    extra: dict[str, str] | None = None,
):
    """``(Batch, rows, global offset, {extra column: array})`` of one task's row groups, built and validated by
    the loader with global row numbers; ``extra``: the further columns, name asked for -> the file's column
    (:func:`parquet_tasks`)."""
    import pyarrow as pa

    from ..io.load import build_batch
    from ..io.source import parquet_file

    f, groups, offset, _ = task
    done = 0
    extra = extra or {}
    read = list(dict.fromkeys([*columns, *extra.values()]))
    try:
        with parquet_file(f) as pf:
            for batch in pf.iter_batches(
                batch_size=chunk_rows, row_groups=groups, columns=read, use_threads=False
            ):
                cols = {c: batch.column(c) for c in read}
                yield (
                    build_batch(
                        f, plan, cols, batch.num_rows, settings, offset=offset + done, allow_empty=True
                    ),
                    batch.num_rows,
                    offset + done,
                    {e: cols[name] for e, name in extra.items()},
                )
                done += batch.num_rows
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{f}: cannot read Parquet data ({exc})") from None


def parquet_tasks(
    spec, settings: Settings, allow_by: bool, weights_ok: bool = True, extra: tuple[str, ...] = ()
) -> tuple[Any, Any, list, list[str], dict[str, str]]:
    """``(source, column plan, partitions, columns to read, extra columns)`` of a Parquet input for the Dask
    engine; CSV is refused (the workers read row groups), and so is an ``extra`` column the input does not
    have (the others: name asked for -> the file's column, :func:`~uqeval.engine.local.check_columns`)."""
    from .local import _prepare, check_columns

    src, plan, _ = _prepare(spec, settings, allow_by=allow_by, weights_ok=weights_ok)
    if src.fmt != "parquet":
        raise UsageError(
            f"{option('engine', 'dask')} reads Parquet (files, directories, globs), not {src.spec}; stream CSV "
            f"with {option('engine', 'stream')}"
        )
    names = check_columns(src, extra)
    return src, plan, partitions(src.files), list(dict.fromkeys(plan.needed())), names
