"""The engines: ``memory`` (today's path), ``stream`` (record batches through mergeable states, bounded
memory) and ``dask`` (partitions mapped to partial states on a Dask cluster, tree-reduced with the same
:func:`~uqeval.catalogue.states.merge`).

``auto`` streams inputs above :data:`AUTO_STREAM_BYTES` (and directories and globs), else reads in memory.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from ..config import Settings
from ..errors import InputError, SchemaError, UsageError, option

ENGINES = ("auto", "memory", "stream", "dask")
#: inputs larger than this (bytes on disk, summed over files) are streamed by ``--engine auto``
AUTO_STREAM_BYTES = 1 << 30
#: rows per record batch when streaming (``--chunk-rows``), at most
DEFAULT_CHUNK_ROWS = 1_000_000
#: numbers per record batch when ``--chunk-rows`` is not given: wide rows (50 samples, 10 classes) get
#: fewer rows per batch, so that the kernels' temporaries stay bounded (1e7 x 50 samples at 1e6 rows per
#: batch peaked at 5 GB)
CHUNK_VALUES = 4_000_000


def is_multi(spec: str | Path) -> bool:
    """A directory, a glob pattern (a name with ``*?[`` that is no existing file) or a URI: ``--engine auto``
    streams these (:func:`uqeval.io.inputs.expand_input` is the rule)."""
    from ..io.inputs import has_glob
    from ..io.uri import as_spec, is_uri

    s = as_spec(spec)
    if is_uri(s):
        return True
    p = Path(s)
    return p.is_dir() or (has_glob(s) and not p.exists())


def choose_engine(engine: str, spec: str | Path) -> str:
    """``memory`` or ``stream`` (or ``dask``) for engine ``engine`` (one of :data:`ENGINES`) on input ``spec``
    (:meth:`uqeval.engine.options.EngineOptions.choose` asks for every input of a run)."""
    from ..io.uri import as_spec, is_uri

    if engine == "memory" and is_uri(spec):
        raise UsageError(
            f"{as_spec(spec)}: {option('engine', 'memory')} reads local files; use {option('engine', 'stream')} "
            "or dask for a URI"
        )
    if engine == "dask" and as_spec(spec) == "-":
        raise UsageError(
            f"-: {option('engine', 'dask')} cannot read standard input (its workers open files by path); use "
            f"{option('engine', 'stream')} (standard input is spooled to a temporary file and read from it in "
            "chunks) or save it to a file"
        )
    if engine != "auto":
        return engine
    if is_multi(spec):
        return "stream"
    p = Path(spec)
    return "stream" if p.is_file() and p.stat().st_size > AUTO_STREAM_BYTES else "memory"


def check_chunk_rows(chunk_rows: int) -> None:
    """A :class:`UsageError` unless ``chunk_rows`` (rows per record batch) is an integer >= 1."""
    from ..validation import is_count

    if not is_count(chunk_rows):
        raise UsageError(f"{option('chunk_rows')} must be an integer >= 1, got {chunk_rows!r}")


def row_signature(pred) -> tuple:
    """The per-row shape of a chunk's arrays (members, classes, levels): every chunk must agree."""
    return tuple(
        (a, getattr(pred, a).shape[1:])
        for a in ("quantiles", "samples", "proba", "member_proba", "alpha", "lower", "loglik")
        if getattr(pred, a, None) is not None
    )


def _prepare(spec: str | Path, settings: Settings, allow_by: bool = False, weights_ok: bool = False):
    """``(source, plan, numeric columns)`` of ``spec``; ``weights_ok``: the caller uses the batches' weights
    (weighted scoring), else a weights column is refused (never unweighted silently)."""
    from ..io.load import plan_for
    from ..io.source import open_source

    src = open_source(spec)
    plan = plan_for(src.info, settings)
    if "weights" in plan.roles and not weights_ok:
        from ..weights import refuse_weights

        raise refuse_weights("this command")
    if "by" in plan.roles and not allow_by:
        raise UsageError(f"{option('by')} is not streamed by this command: use {option('engine', 'memory')}")
    numeric = frozenset(
        c for role, v in plan.roles.items() if role != "by" for c in (v if isinstance(v, list) else [v])
    )
    return src, plan, numeric


def check_columns(src, columns: Collection[str]) -> dict[str, str]:
    """Each of ``columns`` -> the source ``src``'s column it names (matched as the in-memory loader matches
    its further columns: :func:`~uqeval.io.columns.match_column`); a :class:`~uqeval.errors.SchemaError`
    naming the first it does not have."""
    from ..io.columns import match_column

    found = {}
    for c in columns:
        name = match_column(src.info.columns, c)
        if name is None:
            raise SchemaError(
                f"{src.spec}: column '{c}' not found; available columns: {', '.join(src.info.columns[:20])}"
            )
        found[c] = name
    return found


def iter_batches_of(
    spec: str | Path,
    settings: Settings,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    extra: tuple[str, ...] = (),
    allow_by: bool = False,
    weights_ok: bool = False,
    skip: Collection[str] = (),
):
    """``(source, generator)``: the generator yields ``(file, Batch, n_rows, offset, extra columns)`` per record
    batch, the batch built and validated by the in-memory loader's :func:`~uqeval.io.load.build_batch`.
    ``skip``: files of the source not to read (looked up as the generator reaches each file)."""
    from ..io.load import build_batch
    from ..io.source import iter_batches

    check_chunk_rows(chunk_rows)
    src, plan, numeric = _prepare(spec, settings, allow_by, weights_ok)
    names = check_columns(src, extra)  # the pieces carry them under the names asked for

    def gen():
        offset = 0
        for f, cols, k in iter_batches(src, [*plan.needed(), *names.values()], chunk_rows, numeric, skip):
            yield (
                f,
                build_batch(f, plan, cols, k, settings, offset=offset, allow_empty=True),
                k,
                offset,
                {e: cols[name] for e, name in names.items()},
            )
            offset += k

    return src, gen()


def _values_per_row(src, column: str) -> int:
    """Numbers per row of a column: 1, or a list column's mean length from the first row group's footer."""
    if column not in src.info.list_columns or src.fmt != "parquet":
        return 1
    if hasattr(src.files[0], "values_per_row"):  # a NetCDF/Zarr input read directly (uqeval.io.labelled)
        return int(src.files[0].values_per_row(column))
    from ..io.source import parquet_file

    try:
        with parquet_file(src.files[0]) as pf:
            meta = pf.metadata
        if meta.num_row_groups == 0:
            return 1
        rg = meta.row_group(0)
        values = sum(
            rg.column(j).num_values
            for j in range(rg.num_columns)
            if rg.column(j).path_in_schema.split(".")[0] == column
        )
        return max(1, -(-values // max(rg.num_rows, 1)))
    except Exception:  # only a size hint: the read reports any real problem
        return 1


def auto_chunk_rows(spec: str | Path, settings: Settings) -> int:
    """Rows per record batch when ``--chunk-rows`` is not given: about :data:`CHUNK_VALUES` numbers, at
    most :data:`DEFAULT_CHUNK_ROWS` rows, at least 1,000 rows."""
    src, plan, _ = _prepare(spec, settings, allow_by=True, weights_ok=True)  # (sizes only)
    width = sum(
        _values_per_row(src, c) for v in plan.roles.values() for c in (v if isinstance(v, list) else [v])
    )
    return int(min(DEFAULT_CHUNK_ROWS, max(1000, CHUNK_VALUES // max(width, 1))))


def total_rows(spec: str | Path) -> int | None:
    """Rows of a Parquet input from the file footers (for the progress bar's ETA); None for CSV."""
    from ..io.source import open_source

    try:
        src = open_source(spec)
        if src.fmt != "parquet":
            return None
        from ..io.source import parquet_file

        total = 0
        for f in src.files:
            rows = getattr(f, "n_rows", None)  # a NetCDF/Zarr input read directly (uqeval.io.labelled)
            if rows is not None:
                total += int(rows)
                continue
            with parquet_file(f) as pf:
                total += pf.metadata.num_rows
        return total
    except InputError:
        from ..io.uri import is_uri

        if is_uri(spec):  # a store that does not answer: say so now rather than wait for it twice
            raise
        return None
    except Exception:  # only an estimate: the real read reports any problem
        return None
