"""The engines: ``memory`` (today's path), ``stream`` (record batches through mergeable states, bounded
memory) and ``dask`` (partitions mapped to partial states on a Dask cluster, tree-reduced with the same
:func:`~uqeval.stream.states.merge`).

``auto`` streams inputs above :data:`AUTO_STREAM_BYTES` (and directories and globs), else reads in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import InputError, UsageError

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
    from .uri import as_spec, is_uri

    s = as_spec(spec)
    if is_uri(s):
        return True
    p = Path(s)
    return p.is_dir() or (has_glob(s) and not p.exists())


def choose_engine(engine: str, spec: str | Path) -> str:
    """``memory`` or ``stream`` (or ``dask``) for ``--engine engine`` on input ``spec``."""
    from .uri import as_spec, is_uri

    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "memory" and is_uri(spec):
        raise UsageError(
            f"{as_spec(spec)}: --engine memory reads local files; use --engine stream or dask for a URI"
        )
    if engine == "dask" and as_spec(spec) == "-":
        raise UsageError(
            "-: --engine dask cannot read standard input (its workers open files by path); use --engine stream "
            "(standard input is spooled to a temporary file and read from it in chunks) or save it to a file"
        )
    if engine != "auto":
        return engine
    if is_multi(spec):
        return "stream"
    p = Path(spec)
    return "stream" if p.is_file() and p.stat().st_size > AUTO_STREAM_BYTES else "memory"


def _signature(pred) -> tuple:
    """The per-row shape of a chunk's arrays (members, classes, levels): every chunk must agree."""
    return tuple(
        (a, getattr(pred, a).shape[1:])
        for a in ("quantiles", "samples", "proba", "member_proba", "alpha", "lower", "loglik")
        if getattr(pred, a, None) is not None
    )


class Partial:
    """Counts and the metric state of some rows (one chunk, one partition, or all merged)."""

    def __init__(self) -> None:
        from . import states

        self.state = states.init()
        self.n_rows = self.n_dropped = self.n_members_dropped = self.n_fixed = 0
        self.columns: dict[str, Any] | None = None
        self.signature: tuple | None = None
        self.first_file: str | None = None
        self.selection: dict | None = None  # what the second pass collects (uqeval.stream.states.selection)
        self.second: dict | None = None  # the merged second-pass state
        #: families not defined for these rows' shape (uqeval.catalogue.not_defined; every batch has the same)
        self.undefined: list[tuple[str, str]] = []

    def add(self, batch, n_rows: int, settings: Settings, where: str) -> None:

        self.n_rows += n_rows
        self.n_dropped += batch.n_dropped
        self.n_members_dropped += batch.n_members_dropped
        pred = batch.prediction
        if pred is None:
            return
        sig = _signature(pred)
        if self.signature is None:
            from ..catalogue import not_defined

            self.signature, self.columns, self.first_file = sig, batch.columns, where
            self.undefined = not_defined(pred, settings)
        elif sig != self.signature:
            raise InputError(
                f"{where}: rows from global row {int(pred.row_numbers()[0])} on have per-row shapes {dict(sig)}, "
                f"but {self.first_file} has {dict(self.signature)}; every row needs the same number "
                "of members, classes and levels"
            )
        self.n_fixed += int(getattr(pred, "n_fixed", 0) or 0)
        self.state = self.merge_states(self.state, self.batch_state(batch, settings))

    def merge_states(self, a, b):
        """Two states of this kind of partial combined (:func:`uqeval.stream.states.merge`; weighted states:
        :func:`uqeval.stream.weighted.merge_weighted`)."""
        from . import states

        return states.merge(a, b)

    def batch_state(self, batch, settings: Settings):
        """The metric state of one batch's rows (:class:`uqeval.stream.groups.GroupedPartial` also keeps
        one per ``--by`` value)."""
        from . import states

        return states.batch_state(batch.prediction, settings)

    def add_second(self, second, group_second: dict[str, Any], kind: str) -> None:
        """Fold a second-pass state of some rows (exact MdAE) into the whole data's (``group_second``: the
        per-group ones of :class:`~uqeval.stream.groups.GroupedPartial`; none here)."""
        from . import states

        self.second = states.merge_second(self.second, second, kind)

    def merge(self, other: Partial) -> Partial:

        if self.signature is not None and other.signature is not None and self.signature != other.signature:
            raise InputError(
                f"{other.first_file}: per-row shapes {dict(other.signature)} differ from "
                f"{self.first_file}'s {dict(self.signature)}"
            )
        out = type(self)()
        out.state = self.merge_states(self.state, other.state)
        for k in ("n_rows", "n_dropped", "n_members_dropped", "n_fixed"):
            setattr(out, k, getattr(self, k) + getattr(other, k))
        first = self if self.signature is not None else other
        out.columns, out.signature, out.first_file = first.columns, first.signature, first.first_file
        out.undefined = first.undefined
        return out


def _prepare(spec: str | Path, settings: Settings, allow_by: bool = False, weights_ok: bool = False):
    """``(source, plan, numeric columns)`` of ``spec``; ``weights_ok``: the caller uses the batches' weights
    (weighted scoring), else a weights column is refused (never unweighted silently)."""
    from ..io.load import plan_for
    from .source import open_source

    src = open_source(spec)
    plan = plan_for(src.info, settings)
    if "weights" in plan.roles:
        from ..weights import refuse_weights

        if "by" in plan.roles:
            raise refuse_weights("--by with --engine stream or dask", "score the groups with --engine memory")
        if not weights_ok:
            raise refuse_weights("this command")
    if "by" in plan.roles and not allow_by:
        raise UsageError("--by is not streamed yet: score per group with --engine memory")
    numeric = frozenset(
        c for role, v in plan.roles.items() if role != "by" for c in (v if isinstance(v, list) else [v])
    )
    return src, plan, numeric


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
    from ..errors import SchemaError
    from ..io.load import build_batch
    from .source import iter_batches

    if chunk_rows < 1:
        raise UsageError(f"--chunk-rows must be >= 1, got {chunk_rows}")
    src, plan, numeric = _prepare(spec, settings, allow_by, weights_ok)
    for e in extra:
        if e not in src.info.columns:
            raise SchemaError(
                f"{src.spec}: column '{e}' not found; available columns: {', '.join(src.info.columns[:20])}"
            )

    def gen():
        offset = 0
        for f, cols, k in iter_batches(src, [*plan.needed(), *extra], chunk_rows, numeric, skip):
            yield (
                f,
                build_batch(f, plan, cols, k, settings, offset=offset, allow_empty=True),
                k,
                offset,
                {e: cols[e] for e in extra},
            )
            offset += k

    return src, gen()


def new_partial(settings: Settings) -> Partial:
    """An empty :class:`Partial`: a weighted one (:class:`uqeval.stream.weighted.WeightedPartial`) where the
    settings name a weights column."""
    if settings.columns.get("weights"):
        from .weighted import WeightedPartial

        return WeightedPartial()
    return Partial()


def stream_partial(
    spec: str | Path,
    settings: Settings,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Callable[[int], None] | None = None,
) -> tuple[Any, Partial]:
    """Read ``spec`` in record batches of at most ``chunk_rows`` rows and fold them into one :class:`Partial`;
    when a metric needs one (:func:`uqeval.stream.states.selection`: exact MdAE), read the rows a second time."""
    from . import states

    src, batches = iter_batches_of(spec, settings, chunk_rows, weights_ok=True)
    part = new_partial(settings)
    for f, batch, k, _, _ in batches:
        part.add(batch, k, settings, f)
        if progress is not None:
            progress(part.n_rows)
    part.selection = states.selection(part.state) if part.state["n"] else None
    if part.selection is not None:
        _, batches = iter_batches_of(spec, settings, chunk_rows, weights_ok=True)
        for _, batch, _, _, _ in batches:
            if batch.prediction is not None:
                part.second = states.merge_second(
                    part.second,
                    states.second_state(part.selection, batch.prediction, settings),
                    part.state["kind"],
                )
    return src, part


def summary_of(
    src,
    part: Partial,
    settings: Settings,
    engine: str,
    extra_info: dict | None = None,
    groups: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON summary (schema ``uqeval.score/1``) of a merged :class:`Partial`."""
    from ..catalogue import get_family, not_computed_notes
    from ..report.summary import build_summary
    from . import states

    if part.n_rows == 0:
        raise InputError(f"{src.spec}: no data rows")
    weighted = bool(settings.columns.get("weights"))
    if weighted and part.state["n"] == 0 and part.state.get("n_zero"):
        raise InputError(
            f"{src.spec}: weights in column '{settings.columns['weights']}' are all 0 on the rows kept: no row "
            "counts; give some rows a positive weight"
        )
    if part.state["n"] == 0:
        raise InputError(f"{src.spec}: every row has NaN/inf in a used column; nothing left to evaluate")
    bounds: dict[str, float] = {}
    if weighted:
        from .weighted import finalize_weighted

        metrics, orientation = finalize_weighted(part.state, settings)
    else:
        metrics, orientation = states.finalize(part.state, settings, part.selection, part.second, bounds)
    kind = part.state["kind"]
    info: dict[str, Any] = {
        "path": str(src.spec),
        "format": src.fmt,
        "n_rows": part.n_rows,
        "n_dropped": part.n_dropped,
        "representation": kind,
        "columns": part.columns,
        "engine": engine,
        "n_files": len(src.files),
        **src.record(),
        **(extra_info or {}),
    }
    if part.n_fixed:
        info["n_fixed_crossing"] = part.n_fixed
    if part.n_members_dropped:
        info["n_members_dropped"] = part.n_members_dropped
    notes = src.notes() + not_computed_notes(part.undefined)
    left_out = dict(part.state["not_streamed"]) if weighted else states.not_streamed_in(part.state, settings)
    for path in [] if weighted else states.streamed(kind, settings):  # a two-pass metric whose selection
        # was too large (MdAE)
        group, name = path.split(".", 1)
        if (
            group in metrics
            and name not in metrics[group]
            and not get_family(group).by_level
            and path in states.two_pass(kind, settings)
        ):
            left_out[path] = (
                f"the rows around the median exceed {states.MEDIAN_CAP:,} in one histogram code "
                "(many equal values); score in memory"
            )
    info["not_streamed"] = dict(left_out)
    approx = (
        {}
        if weighted
        else {k: v for k, v in states.approximate(kind, settings).items() if k.split(".")[0] in metrics}
    )
    info["approximate"] = approx  # every other metric is exact
    if bounds:
        info["bounds"] = {k: v for k, v in bounds.items() if k.split(".")[0] in metrics}
    if left_out:
        notes.append(
            f"--engine {engine}: {len(left_out)} metric(s) not computed because they do not merge over "
            f"chunks: "
            + "; ".join(f"{k} ({why})" for k, why in left_out.items())
            + "; use --engine memory for them"
        )
    for path, bound in approx.items():
        notes.append(f"--engine {engine}: {path} is approximate: {bound}")
    if part.n_fixed:
        notes.append(f"{part.n_fixed} row(s) had crossing quantiles and were sorted (--fix-crossing)")
    if groups is not None:  # score --by (uqeval.stream.groups)
        info["columns"] = {**(info["columns"] or {}), "by": groups["column"]}
    weights = None
    if weighted:
        from ..weights import weights_block

        st = part.state
        info["weights"] = settings.columns.get("weights")
        weights = weights_block(info["weights"], st["w"], st["n_zero"], st["not_weighted"])
        if st["not_weighted"]:
            notes.append(
                f"{len(st['not_weighted'])} metric(s) take no weights and were not computed (listed with the "
                "reason under weights.not_weighted)"
            )
    return build_summary(info, settings, metrics, orientation, groups, notes, weights)


def score_stream(
    spec: str | Path,
    settings: Settings | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The JSON summary of ``spec`` scored in record batches (bounded memory)."""
    settings = settings or Settings()
    if settings.columns.get("by"):  # score --by: one state per group (uqeval.stream.groups)
        from .groups import score_stream_by

        return score_stream_by(spec, settings, chunk_rows, progress)
    src, part = stream_partial(spec, settings, chunk_rows, progress)
    return summary_of(src, part, settings, "stream", {"chunk_rows": int(chunk_rows)})


def _values_per_row(src, column: str) -> int:
    """Numbers per row of a column: 1, or a list column's mean length from the first row group's footer."""
    if column not in src.info.list_columns or src.fmt != "parquet":
        return 1
    from .source import parquet_file

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


def score_with_engine(
    spec: str | Path,
    settings: Settings,
    engine: str = "stream",
    chunk_rows: int | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The JSON summary of ``spec`` on a streaming engine (``stream`` or ``dask``)."""
    chunk_rows = int(chunk_rows or auto_chunk_rows(spec, settings))
    if engine == "dask":
        from .dask_engine import score_dask

        return score_dask(spec, settings, chunk_rows, scheduler=scheduler, workers=workers, progress=progress)
    if scheduler is not None or workers is not None:
        raise UsageError("--scheduler and --workers apply to --engine dask only")
    return score_stream(spec, settings, chunk_rows, progress)


def total_rows(spec: str | Path) -> int | None:
    """Rows of a Parquet input from the file footers (for the progress bar's ETA); None for CSV."""
    from .source import open_source

    try:
        src = open_source(spec)
        if src.fmt != "parquet":
            return None
        from .source import parquet_file

        total = 0
        for f in src.files:
            with parquet_file(f) as pf:
                total += pf.metadata.num_rows
        return total
    except InputError:
        from .uri import is_uri

        if is_uri(spec):  # a store that does not answer: say so now rather than wait for it twice
            raise
        return None
    except Exception:  # only an estimate: the real read reports any problem
        return None
