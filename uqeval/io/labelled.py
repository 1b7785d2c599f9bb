"""Labelled (gridded) inputs: NetCDF and Zarr files read through xarray, one more source (issue 41).

How a Dataset becomes rows (one per combination of the non-member, non-quantile coordinates; members as
``samples``, quantiles as ``q_<level>``), ``--obs`` (aligned by coordinates, an inner join),
``--preserve-dims`` / ``--reduce-dims`` (the key column :data:`CELL`, grouped by ``score``'s ``--by``
machinery; :func:`write_metrics` writes the per-cell document as NetCDF) and ``--weights lat`` (the column
``cos(lat)``): docs/guide/gridded.md.

The flattened rows are written once to a private temporary Parquet file, a slab of the leading dimension
at a time (one row group per slab, a Zarr chunk's height when the store is chunked along it), and read from
there like standard input's spooled file: every reader, the loader, each engine and every command run on
it unchanged, the stream engine a row group at a time. Messages name the original file.

xarray is imported only here, and only when such a file is read (``pip install 'uqeval[xarray]'``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, UsageError, option
from .columns import ALIASES
from .readers import Spooled, _short

#: default names of the ensemble member dimension, in the order they are looked for
MEMBER_DIMS = ("member", "ensemble", "realization", "realisation", "number")
QUANTILE_DIMS = ("quantile",)
#: the key column of the kept coordinates (``--preserve-dims``)
CELL = "cell"
#: names of a latitude coordinate, for ``--weights lat``
LATITUDES = ("lat", "latitude")


@dataclass(frozen=True)
class GridOptions:
    """How a labelled file is flattened (the command line's ``--obs``, ``--member-dim``, ...)."""

    obs: str | None = None
    member_dim: str | None = None
    quantile_dim: str | None = None
    preserve_dims: tuple[str, ...] | None = None
    reduce_dims: tuple[str, ...] | None = None
    weights: str | None = None  # a latitude coordinate: its cos(lat) column is written


_DEFAULT = GridOptions()
_OPTIONS: ContextVar[GridOptions | None] = ContextVar("uqeval_grid_options", default=None)


@contextmanager
def grid_options(opts: GridOptions) -> Iterator[None]:
    """Read labelled inputs with ``opts`` while the context lasts."""
    token = _OPTIONS.set(opts)
    try:
        yield
    finally:
        _OPTIONS.reset(token)


def weights_column(name: str | None) -> str | None:
    """The column ``--weights NAME`` reads from a flattened labelled file: ``cos(NAME)`` for a latitude."""
    if name is not None and name.lower() in LATITUDES:
        return f"cos({name})"
    return name


def parse_dims(text: str | None) -> tuple[str, ...] | None:
    """``"lat,lon"`` -> ``("lat", "lon")``; None stays None."""
    if text is None:
        return None
    return tuple(d.strip() for d in text.split(",") if d.strip())


class LabelledFile(Spooled):
    """The flattened rows of a labelled file: read directly, a slab of array chunks at a time, by the stream
    engine (:meth:`batches`), and spooled to a private Parquet file the first time something opens it as a
    file through :func:`os.fspath` (the memory and Dask engines); named by the original file in messages
    (``str``)."""

    def __init__(self, real: str, name: str, spool: _Spool | None = None) -> None:
        self.real, self.name, self.spool = real, name, spool

    def __fspath__(self) -> str:
        if not self.real and self.spool is not None:
            self.real = _write(self.spool)
        return self.real

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__

    def __reduce__(self):  # to a Dask worker: the spooled file
        return (LabelledFile, (os.fspath(self), self.name))

    @property
    def direct(self) -> bool:
        """Whether the rows are read from the arrays (not yet spooled to Parquet)."""
        return not self.real and self.spool is not None

    @property
    def n_rows(self) -> int | None:
        return None if self.spool is None else self.spool.n_rows

    def values_per_row(self, column: str) -> int:
        """Numbers per row of ``column`` (members of ``samples``), for the batch size."""
        if self.spool is None or not self.spool.layout.member or column != "samples":
            return 1
        return int(self.spool.ds.sizes[self.spool.layout.member])

    @property
    def schema(self):
        """The Arrow schema of the rows (of the first row, flattened alone)."""
        assert self.spool is not None  # (only a directly read file is asked)
        return next(_slabs(self.spool, rows=1)).schema

    def batches(self, columns: list[str], chunk_rows: int) -> Iterator[tuple[str, dict, int]]:
        """``(file, {column: Arrow array}, rows)`` of at most ``chunk_rows`` rows, straight from the arrays (the
        record batches :func:`uqeval.io.source.iter_batches` yields for a Parquet file)."""
        assert self.spool is not None  # (only a directly read file is asked)
        for table in _slabs(self.spool, columns=columns):
            for start in range(0, table.num_rows, chunk_rows):
                part = table.slice(start, chunk_rows)
                yield self.name, {c: part.column(c) for c in columns}, part.num_rows


@dataclass
class _Spool:
    file: LabelledFile
    notes: list[str]
    kept: tuple[str, ...]  # the dims of the CELL key (empty: no key column)
    cells: dict[str, tuple[Any, ...]]  # key -> coordinate values of the kept dims
    coords: dict[str, tuple[np.ndarray, dict[str, Any]]]  # kept dim -> (values in order, attrs)
    ds: Any = None  # the opened Dataset (slabs are read from it)
    layout: Any = None  # its _Layout
    step: int = 1  # values of the leading dimension per slab
    n_rows: int = 0


_SPOOLS: dict[tuple[str, GridOptions, tuple[float, ...]], _Spool] = {}


def _key(spec: str | Path) -> tuple[str, GridOptions, tuple[float, ...]]:
    """A spool is reused while the options and the files' modification times are the same."""
    opts = _OPTIONS.get() or _DEFAULT
    stamps = []
    for f in (str(spec), opts.obs):
        try:
            stamps.append(os.stat(f).st_mtime if f is not None else 0.0)
        except OSError:
            stamps.append(-1.0)
    return (str(spec), opts, tuple(stamps))


def _import_xarray():
    try:
        import xarray as xr
    except ImportError:
        raise InputError(
            "reading NetCDF or Zarr needs xarray and a backend: pip install 'uqeval[xarray]' "
            "(xarray, h5netcdf or netCDF4, zarr)"
        ) from None
    return xr


def open_dataset(spec: str):
    """The Dataset of a NetCDF file or a Zarr store, lazily (values are read when a slab is flattened)."""
    xr = _import_xarray()
    p = Path(spec)
    if not p.exists():
        raise InputError(f"{spec}: file does not exist")
    zarr = p.is_dir() or str(spec).rstrip("/").lower().endswith(".zarr")
    try:
        if zarr:
            return xr.open_zarr(spec, chunks=None, decode_timedelta=True)
        return xr.open_dataset(spec, chunks=None, decode_timedelta=True)
    except Exception as exc:  # every backend has its own errors: one line naming the file
        kind = "Zarr store" if zarr else "NetCDF file"
        raise InputError(f"{spec}: cannot read the {kind} ({_short(exc)})") from None


def _named_dim(ds, spec: str, name: str, given: str | None, usual: Sequence[str]) -> str | None:
    """The dimension the option ``name`` (``member_dim``, ``quantile_dim``) gives, checked, else the first of
    its ``usual`` names the Dataset has."""
    if given is not None:
        if given not in ds.dims:
            raise InputError(
                f"{spec}: {option(name, given)} is not a dimension; dimensions: {', '.join(map(str, ds.dims))}"
            )
        return given
    return next((d for d in usual if d in ds.dims), None)


#: a target variable's names: a table's target column names (io.columns), and an observation file's
_TARGETS = (*ALIASES["y_true"], "obs", "observation", "observations")


def _with_obs(ds, spec: str, obs_spec: str, extra: Sequence[str], obs: Any = None) -> tuple[Any, list[str]]:
    """The forecast Dataset ``ds`` with the target ``y`` of ``obs_spec`` (or of the Dataset or DataArray
    ``obs`` named so in messages), inner-joined on the shared coordinates; the notes of what the join dropped."""
    xr = _import_xarray()
    if obs is None:
        obs = open_dataset(obs_spec)
    elif isinstance(obs, xr.DataArray):
        obs = obs.to_dataset(name=str(obs.name) if obs.name is not None else "y")
    names = [str(v) for v in obs.data_vars]
    if len(names) == 1:
        name = names[0]
    else:
        hits = [n for n in names if n.lower() in _TARGETS]
        if len(hits) != 1:
            raise InputError(
                f"{obs_spec}: holds {len(names)} variables ({', '.join(names[:10])}); the observation file "
                "needs one variable, or one named y, target or obs"
            )
        name = hits[0]
    target = obs[name]
    extra_dims = [str(d) for d in target.dims if d not in ds.dims]
    if extra_dims:
        raise InputError(
            f"{obs_spec}: variable '{name}' has dimension(s) {', '.join(extra_dims)} that the forecast {spec} "
            f"lacks (forecast dimensions: {', '.join(map(str, ds.dims))}); the observations must share the "
            "forecast's dimensions"
        )
    fvars = [str(v) for v in ds.data_vars if v not in extra]
    units = target.attrs.get("units")
    for v in fvars:
        u = ds[v].attrs.get("units")
        if units is not None and u is not None and str(u) != str(units):
            raise InputError(
                f"{obs_spec}: variable '{name}' is in units '{units}' but the forecast's '{v}' in {spec} is "
                f"in '{u}'; convert one of them"
            )
    if "y" in ds.data_vars or "y" in ds.coords:
        raise InputError(
            f"{spec}: already holds a variable 'y'; give the targets once (drop {option('obs')})"
        )
    if len(fvars) == 1 and not any(d in MEMBER_DIMS or d in QUANTILE_DIMS for d in ds[fvars[0]].dims):
        if fvars[0] not in ("mean", "mu", "y_pred", "pred"):
            ds = ds.rename({fvars[0]: "mean"})
    shared = [str(d) for d in target.dims]
    before = {d: ds.sizes[d] for d in shared}
    obs_before = {d: obs.sizes[d] for d in shared}
    try:
        fc, ob = xr.align(ds, target.to_dataset(name="y"), join="inner", exclude=set(ds.dims) - set(shared))
    except Exception as exc:  # xarray's own message: duplicate or non-comparable coordinates
        raise InputError(f"{obs_spec}: cannot align with {spec} by coordinates ({_short(exc)})") from None
    notes = []
    for d in shared:
        n = fc.sizes[d]
        if n == 0:
            raise InputError(
                f"{obs_spec}: no {d} value in common with {spec} (forecast {before[d]}, observations "
                f"{obs_before[d]} values); the files do not overlap"
            )
        if n < before[d] or n < obs_before[d]:
            notes.append(
                f"{spec}: aligned with {obs_spec} on '{d}': kept {n} values in both, dropped "
                f"{before[d] - n} of the forecast's and {obs_before[d] - n} of the observations'"
            )
    return fc.assign(y=ob["y"]), notes


def _label(value: Any) -> str:
    """A coordinate value as text: integers without ``.0``, times in ISO form."""
    if isinstance(value, np.datetime64):
        return str(np.datetime_as_string(value))
    if isinstance(value, np.timedelta64):
        return str(value)
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        return str(value.item())
    return str(value)


def _kept_dims(row_dims: list[str], spec: str, opts: GridOptions) -> tuple[str, ...]:
    if opts.preserve_dims is not None and opts.reduce_dims is not None:
        raise UsageError(f"give {option('preserve_dims')} or {option('reduce_dims')}, not both")
    given = opts.preserve_dims if opts.preserve_dims is not None else opts.reduce_dims
    if given is None:
        return ()
    which = "preserve_dims" if opts.preserve_dims is not None else "reduce_dims"
    for d in given:
        if d not in row_dims:
            raise InputError(
                f"{spec}: {option(which, ','.join(given))}: '{d}' is not a dimension of the rows; "
                f"dimensions: {', '.join(row_dims)}"
            )
    if opts.preserve_dims is not None:
        return tuple(d for d in row_dims if d in given)
    return tuple(d for d in row_dims if d not in given)


def _layout(ds, spec: str, opts: GridOptions):
    """``(row dims, member dim, quantile dim, variables)`` of the Dataset, checked."""
    member = _named_dim(ds, spec, "member_dim", opts.member_dim, MEMBER_DIMS)
    quant = _named_dim(ds, spec, "quantile_dim", opts.quantile_dim, QUANTILE_DIMS)
    names = [str(v) for v in ds.data_vars]
    if not names:
        raise InputError(f"{spec}: holds no data variable")
    row_dims: list[str] = []
    target = next((n for n in names if n.lower() in _TARGETS), names[0])
    for n in [target, *names]:
        for d in ds[n].dims:
            if d not in (member, quant) and d not in row_dims:
                row_dims.append(str(d))
    if not row_dims:
        raise InputError(
            f"{spec}: its variables have no dimension besides members or quantiles; nothing to score"
        )
    for n in names:
        if member in ds[n].dims and quant in ds[n].dims:
            raise InputError(
                f"{spec}: variable '{n}' has both the member dimension '{member}' and the quantile dimension "
                f"'{quant}'; give one representation per variable"
            )
    along_members = [n for n in names if member is not None and member in ds[n].dims]
    if len(along_members) > 1:
        raise InputError(
            f"{spec}: variables {', '.join(along_members)} all have the member dimension '{member}'; keep one "
            "ensemble per file"
        )
    for d in row_dims:
        if d in ds.data_vars:
            raise InputError(f"{spec}: '{d}' is both a dimension and a variable; rename one")
    return row_dims, member, quant, names


def _quantile_names(ds, quant: str, spec: str) -> list[str]:
    levels = np.asarray(ds[quant].values, dtype=float) if quant in ds.coords else None
    if levels is None or not np.all((levels > 0) & (levels < 1)):
        raise InputError(
            f"{spec}: the quantile dimension '{quant}' needs a coordinate of levels in (0, 1) "
            f"(found {None if levels is None else levels.tolist()[:5]})"
        )
    return [f"q_{_label(float(q))}" for q in levels]


def _slab_rows(ds, row_dims: list[str], width: int) -> int:
    """How many values of the leading dimension make one row group: about a million numbers, rounded to
    the Zarr chunk height along it where the store is chunked."""
    lead = row_dims[0]
    per = int(np.prod([ds.sizes[d] for d in row_dims[1:]], dtype=np.int64)) * max(width, 1)
    step = max(1, (4_000_000 // max(per, 1)))
    chunk = None
    for v in ds.data_vars:
        enc = ds[v].encoding.get("chunks") or ds[v].encoding.get("preferred_chunks")
        if isinstance(enc, dict):
            chunk = enc.get(lead)
        elif isinstance(enc, (tuple, list)) and lead in ds[v].dims:
            chunk = enc[list(ds[v].dims).index(lead)]
        if chunk:
            break
    if chunk:
        step = max(int(chunk), (step // int(chunk)) * int(chunk))
    return min(step, ds.sizes[lead])


def _coord_values(ds, d: str) -> np.ndarray:
    return np.asarray(ds[d].values) if d in ds.coords else np.arange(ds.sizes[d])


def _arrow(values: np.ndarray):
    import pyarrow as pa

    if values.dtype.kind == "M":
        return pa.array(values.astype("datetime64[ns]"))
    if values.dtype.kind == "m":
        return pa.array(values.astype("timedelta64[ns]"))
    if values.dtype.kind in "OUS":
        return pa.array([None if v is None else str(v) for v in values.tolist()], type=pa.string())
    return pa.array(values)


@dataclass(frozen=True)
class _Layout:
    """What every slab of a Dataset is flattened by (:func:`_spool`)."""

    spec: str
    row_dims: list[str]
    kept: Sequence[str]
    member: str | None
    quant: str | None
    names: list[str]
    qnames: list[str]
    coords: dict[str, np.ndarray]
    keys: np.ndarray | None
    weights: str | None


def _cell_keys(ds, kept: Sequence[str], coords: dict[str, np.ndarray]):
    """``({key: coordinates}, keys shaped like the kept dims)``: the ``--preserve-dims`` key of each kept cell
    (``lat=-30,lon=90``); ``({}, None)`` when nothing is kept. A loop over the kept cells, not the rows."""
    cells: dict[str, tuple[Any, ...]] = {}
    if not kept:
        return cells, None
    grids = np.meshgrid(*[np.arange(ds.sizes[d]) for d in kept], indexing="ij")
    labels = []
    for pos in zip(*[g.ravel() for g in grids]):
        at = tuple(coords[d][i] for d, i in zip(kept, pos))
        key = ",".join(f"{d}={_label(v)}" for d, v in zip(kept, at))
        cells[key] = at
        labels.append(key)
    return cells, np.array(labels, dtype=object).reshape([ds.sizes[d] for d in kept])


def _slab_columns(
    part, start: int, step: int, layout: _Layout, columns: Sequence[str] | None = None
) -> dict[str, Any]:
    """The Arrow columns of one slab ``part`` (rows ``start`` to ``start + step`` of the leading dimension):
    the coordinates, the ``--preserve-dims`` key, the cos(lat) weights and the variables (``columns``: only
    these)."""
    import pyarrow as pa

    row_dims, kept, keys = layout.row_dims, layout.kept, layout.keys
    sub = [part.sizes[d] for d in row_dims]
    wanted = set(columns) if columns is not None else None

    def want(name: str) -> bool:
        return wanted is None or name in wanted

    cols: dict[str, Any] = {}
    for i, d in enumerate(row_dims):
        if want(d):
            vals = layout.coords[d][start : start + step] if i == 0 else layout.coords[d]
            view = np.broadcast_to(vals.reshape([-1 if j == i else 1 for j in range(len(row_dims))]), sub)
            cols[d] = _arrow(view.ravel())
    if keys is not None and want(CELL):
        kv = keys[start : start + step] if row_dims[0] in kept else keys
        kv = kv.reshape([sub[row_dims.index(d)] if d in kept else 1 for d in row_dims])
        cols[CELL] = pa.array(np.broadcast_to(kv, sub).ravel(), type=pa.string())  # (no Python list per row)
    if layout.weights is not None and want(f"cos({layout.weights})"):
        lat = _on_rows(part[layout.weights], row_dims, part)
        cols[f"cos({layout.weights})"] = pa.array(np.cos(np.deg2rad(lat.astype(float))).ravel())
    cols.update(_variable_columns(part, layout, want))
    return cols


def _on_rows(da, row_dims: list[str], part) -> np.ndarray:
    """The values of ``da`` (over some of the row dimensions) repeated over the others, in row order."""
    missing = [d for d in row_dims if d not in da.dims]
    if missing:
        da = da.expand_dims({d: part.sizes[d] for d in missing})
    return np.asarray(da.transpose(*row_dims, ...).values)


def _variable_columns(part, layout: _Layout, want) -> dict[str, Any]:
    """The Arrow columns of a slab's variables: ``samples`` (members), ``q_<level>`` (quantiles) or its name."""
    import pyarrow as pa

    member, quant, spec = layout.member, layout.quant, layout.spec
    n_rows = int(np.prod([part.sizes[d] for d in layout.row_dims], dtype=np.int64))
    cols: dict[str, Any] = {}
    for n in layout.names:
        da = part[n]
        inner = [d for d in (member, quant) if d is not None and d in da.dims]
        if member is not None and member in inner:
            if not want("samples"):
                continue
        elif quant is not None and quant in inner:
            if not any(want(q) for q in layout.qnames):
                continue
        else:
            if n in layout.row_dims or n == CELL:
                raise InputError(f"{spec}: variable '{n}' clashes with a column of the same name")
            if not want(n):
                continue
        arr = _on_rows(da.transpose(..., *inner), layout.row_dims, part)
        if arr.dtype.kind not in "fiub":
            raise InputError(f"{spec}: variable '{n}' holds {arr.dtype}, expected numbers")
        arr = arr.astype(np.float64, copy=False)
        if member is not None and member in inner:
            cols["samples"] = pa.FixedSizeListArray.from_arrays(pa.array(arr.reshape(-1)), arr.shape[-1])
        elif quant is not None and quant in inner:
            block = arr.reshape(n_rows, -1)
            for j, q in enumerate(layout.qnames):
                cols[q] = pa.array(block[:, j])
        else:
            cols[n] = pa.array(arr.reshape(-1))
    return cols


def _spool(spec: str, opts: GridOptions, dataset: Any = None, obs: Any = None) -> _Spool:
    """Open ``spec`` (or take the in-memory ``dataset``, named ``spec`` in messages) and plan its flattening:
    the layout every slab is flattened by (nothing is read yet; :func:`_slabs` reads, :func:`_write` spools)."""
    ds = open_dataset(spec) if dataset is None else dataset
    notes: list[str] = []
    if opts.obs is not None or obs is not None:
        ds, notes = _with_obs(ds, spec, opts.obs or "obs", (), obs)
    row_dims, member, quant, names = _layout(ds, spec, opts)
    kept = _kept_dims(row_dims, spec, opts)
    weights = _latitude(ds, spec, row_dims, opts.weights)
    qnames = (
        _quantile_names(ds, quant, spec)
        if quant is not None and any(quant in ds[n].dims for n in names)
        else []
    )
    coords = {d: _coord_values(ds, d) for d in row_dims}
    cells, keys = _cell_keys(ds, kept, coords)
    for n in (*row_dims, *(names)):
        if n == CELL and kept:
            raise InputError(f"{spec}: already holds '{CELL}'; rename it to use {option('preserve_dims')}")
    width = sum(
        ds.sizes[member] if member in ds[n].dims else len(qnames) if quant in ds[n].dims else 1 for n in names
    )
    layout = _Layout(spec, row_dims, kept, member, quant, names, qnames, coords, keys, weights)
    attrs: dict[str, tuple[np.ndarray, dict[str, Any]]] = {d: (coords[d], {}) for d in kept}
    n_rows = int(np.prod([ds.sizes[d] for d in row_dims], dtype=np.int64))
    out = _Spool(
        LabelledFile("", spec), notes, kept, cells, attrs, ds, layout, _slab_rows(ds, row_dims, width), n_rows
    )
    out.file.spool = out
    return out


def _latitude(ds, spec: str, row_dims: list[str], name: str | None) -> str | None:
    """The latitude coordinate ``--weights`` names (a dimension's, or a 2-D coordinate of a curvilinear grid
    over row dimensions), checked; None where ``name`` is not a latitude name."""
    if name is None or name.lower() not in LATITUDES:
        return None
    if name not in ds.coords and name not in ds.data_vars:
        raise InputError(
            f"{spec}: {option('weights', name)} names no latitude coordinate; dimensions: {', '.join(row_dims)}"
        )
    lat = ds[name]
    if not set(map(str, lat.dims)) <= set(row_dims):
        raise InputError(
            f"{spec}: latitude '{name}' has dimensions {', '.join(map(str, lat.dims))}; cos(lat) weights need a "
            f"latitude over the row dimensions ({', '.join(row_dims)})"
        )
    values = np.asarray(lat.values, dtype=float)
    if np.any(np.abs(values) > 90) or not np.all(np.isfinite(values)):
        raise InputError(
            f"{spec}: latitude '{name}' holds values outside [-90, 90]; cannot weight by cos(lat)"
        )
    return name


def _slabs(spool: _Spool, columns: Sequence[str] | None = None, rows: int | None = None):
    """The Arrow tables of ``spool``'s rows, a slab of the leading dimension at a time (``columns``: only
    these; ``rows``: only the first ``rows`` values of the leading dimension)."""
    import pyarrow as pa

    ds, layout = spool.ds, spool.layout
    lead = layout.row_dims[0]
    size = ds.sizes[lead] if rows is None else min(rows, ds.sizes[lead])
    step = min(spool.step, size)
    try:
        for start in range(0, size, step):
            part = ds.isel({lead: slice(start, min(start + step, size))})
            yield pa.table(_slab_columns(part, start, step, layout, columns))
    except InputError:
        raise
    except (OSError, ValueError, RuntimeError, pa.ArrowException) as exc:
        raise InputError(f"{layout.spec}: cannot read its values ({_short(exc)})") from None


def _write(spool: _Spool) -> str:
    """Write ``spool``'s rows to a private Parquet file (one row group per slab); its path."""
    import atexit
    import tempfile

    import pyarrow.parquet as pq

    fd, real = tempfile.mkstemp(prefix="uqeval-labelled-", suffix=".parquet")
    os.close(fd)
    atexit.register(lambda: os.path.exists(real) and os.unlink(real))  # type: ignore[func-returns-value]
    writer = None
    try:
        for table in _slabs(spool):
            if writer is None:
                writer = pq.ParquetWriter(real, table.schema, compression="none")
            writer.write_table(table, row_group_size=max(table.num_rows, 1))
    except OSError as exc:
        raise InputError(
            f"{spool.layout.spec}: cannot write its rows to a temporary file ({_short(exc)})"
        ) from None
    finally:
        if writer is not None:
            writer.close()
    return real


def to_table(
    data: Any,
    obs: Any = None,
    *,
    member_dim: str | None = None,
    quantile_dim: str | None = None,
    weights: str | None = None,
):
    """An xarray Dataset (or a forecast DataArray with ``obs``) flattened to the pyarrow Table the readers
    would see for it as a file (see the module docstring): coordinates as columns, members as ``samples``,
    quantiles as ``q_<level>``, ``obs`` aligned by coordinates as the target ``y``; the column ``cos(lat)``
    for a latitude dimension ``lat`` or ``latitude`` (``weights=`` names it; by default the one present).
    ``uqeval.evaluate(ds)`` scores a Dataset through this (``weights="cos(lat)"``: area weights)."""
    import pyarrow as pa

    xr = _import_xarray()
    if isinstance(data, xr.DataArray):
        name = str(data.name) if data.name is not None else "forecast"
        data = data.to_dataset(name=name)
    if not isinstance(data, xr.Dataset):
        raise InputError(f"data: expected an xarray Dataset or DataArray, got {type(data).__name__}")
    if obs is not None and not isinstance(obs, (xr.Dataset, xr.DataArray)):
        raise InputError(f"obs: expected an xarray Dataset or DataArray, got {type(obs).__name__}")
    if weights is None:
        weights = next((d for d in map(str, data.dims) if d.lower() in LATITUDES), None)
    opts = GridOptions(member_dim=member_dim, quantile_dim=quantile_dim, weights=weights)
    return pa.concat_tables(list(_slabs(_spool("data", opts, dataset=data, obs=obs))))


def labelled_file(spec: str | Path) -> LabelledFile:
    """The spooled Parquet file of labelled input ``spec`` under the current options (flattened once per run)."""
    key = _key(spec)
    if key not in _SPOOLS:
        _SPOOLS[key] = _spool(str(spec), key[1])
    return _SPOOLS[key].file


def notes_of(spec: str | Path) -> list[str]:
    """The notes of flattening ``spec`` (what the alignment with ``--obs`` dropped)."""
    s = _SPOOLS.get(_key(spec))
    return list(s.notes) if s is not None else []


def cell_count(spec: str | Path) -> int:
    """How many cells ``--preserve-dims``/``--reduce-dims`` keep for ``spec`` (0: none kept)."""
    labelled_file(spec)
    return len(_SPOOLS[_key(spec)].cells)


def kept_dims(spec: str | Path) -> tuple[str, ...]:
    """The dimensions ``--preserve-dims``/``--reduce-dims`` keep for ``spec`` (flattening it if not yet)."""
    labelled_file(spec)
    return _SPOOLS[_key(spec)].kept


# --------------------------------------------------------------------------- writing metrics per cell


def _leaves(obj: Any, out: dict[str, Any]) -> None:
    """Number leaves as floats, lists of numbers (a rank histogram per cell) as float arrays."""
    from ..catalogue.paths import flatten, is_number

    for path, v in flatten(obj, empty=False):
        if is_number(v):
            out[path] = float(v)
        elif isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
            out[path] = np.asarray(v, dtype=float)


def metrics_dataset(summary: dict[str, Any], spool: _Spool | None = None):
    """The per-cell metrics of a ``score`` document grouped by :data:`CELL`, as an xarray Dataset with the
    kept dimensions as coordinates (NaN where a cell had no row). A document without groups: one value per
    metric, no dimension."""
    xr = _import_xarray()
    groups = summary.get("groups")
    if not groups:
        flat: dict[str, Any] = {}
        _leaves(summary.get("metrics", {}), flat)
        return xr.Dataset({k: (_extra_dims(k, np.ndim(v)), v) for k, v in flat.items()})
    if spool is None:
        spool = next((s for s in reversed(list(_SPOOLS.values())) if s.kept), None)
    if spool is None or groups.get("column") != CELL:
        raise UsageError(
            f"{option('output')} .nc writes metrics per cell of {option('preserve_dims')}; "
            "write other documents as .json"
        )
    dims = spool.kept
    sizes = [len(spool.coords[d][0]) for d in dims]
    index = {d: {_label(v): i for i, v in enumerate(spool.coords[d][0])} for d in dims}
    at: list[tuple[int, ...]] = []  # each cell's position
    found: dict[str, tuple[list[int], list[Any]]] = {}  # metric -> (cells, values)
    for key, entry in groups.get("values", {}).items():
        vals = spool.cells.get(key)
        if vals is None:
            continue
        at.append(tuple(index[d][_label(v)] for d, v in zip(dims, vals)))
        leaves: dict[str, Any] = {"n_rows": float(entry.get("n_rows", np.nan))}
        _leaves(entry.get("metrics", {}), leaves)
        for k, v in leaves.items():
            cells_k, values_k = found.setdefault(k, ([], []))
            cells_k.append(len(at) - 1)
            values_k.append(v)
    where = np.array(at, dtype=np.intp).reshape(-1, len(dims))
    data: dict[str, np.ndarray] = {}
    for k, (cells_k, values_k) in found.items():
        shape = np.shape(values_k[0])
        same = [
            i for i, v in enumerate(values_k) if np.shape(v) == shape
        ]  # (a list of another length: left out)
        data[k] = np.full([*sizes, *shape], np.nan)
        data[k][tuple(where[np.asarray(cells_k)[same]].T)] = np.asarray(
            [values_k[i] for i in same], dtype=float
        )
    coords = {d: spool.coords[d][0] for d in dims}
    return xr.Dataset(
        {k: ((*dims, *_extra_dims(k, v.ndim - len(dims))), v) for k, v in data.items()}, coords=coords
    )


def _extra_dims(name: str, ndim: int) -> tuple[str, ...]:
    """The dimension of a list-valued metric (``ndim`` 1): ``rank`` for a rank histogram, else ``<name>_bin``."""
    if ndim == 0:
        return ()
    return ("rank",) if name.endswith("rank_histogram") else (f"{name}_bin",)


def write_metrics(path: str | Path, summary: dict[str, Any]) -> None:
    """Write ``summary``'s metrics as NetCDF (``.nc``) or as a Zarr store (``.zarr``), atomically: per kept
    coordinate with ``--preserve-dims``."""
    from .writers import atomic_write_bytes

    ds = metrics_dataset(summary)
    ds.attrs["source"] = "uqeval score"
    if str(path).rstrip("/").lower().endswith(".zarr"):
        _write_zarr(Path(path), ds)
        return
    try:
        data = ds.to_netcdf(engine="scipy")
    except (ValueError, TypeError) as exc:
        raise InputError(f"{path}: cannot write the metrics as NetCDF ({_short(exc)})") from None
    atomic_write_bytes(path, bytes(data))


def _write_zarr(path: Path, ds) -> None:
    """``ds`` as a new Zarr store at ``path``: written beside it, then renamed into place (a store already
    there is refused: nothing is deleted)."""
    import shutil
    import tempfile

    if path.exists() or path.is_symlink():
        raise InputError(
            f"{path}: already exists; give a new name for the Zarr store (nothing is overwritten)"
        )
    parent = path.parent if str(path.parent) else Path(".")
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=parent))
    try:
        ds.to_zarr(tmp / "store", mode="w")
        os.replace(tmp / "store", path)
    except ImportError:
        raise InputError(
            f"{path}: writing Zarr needs the zarr package: pip install 'uqeval[xarray]'"
        ) from None
    except (OSError, ValueError, TypeError) as exc:
        raise InputError(f"{path}: cannot write the metrics as Zarr ({_short(exc)})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
