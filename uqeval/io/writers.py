"""Atomic writers: data goes to a temporary file in the target directory, then is renamed.

An interrupted run therefore never leaves a half-written output, and an
existing file is replaced in one step. Writing over an input file is refused.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from ..errors import InputError


def check_output_path(path: str | Path, inputs: Iterable[str | Path] = ()) -> Path:
    """Fail early (before any work) when ``path`` cannot be written or would overwrite an input."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise InputError(f"{p}: output directory '{parent}' does not exist; create it first")
    if not parent.is_dir():
        raise InputError(f"{p}: '{parent}' is not a directory")
    if p.is_dir():
        raise InputError(f"{p}: is a directory; give a file name for the output")
    for src in inputs:
        try:
            if p.exists() and Path(src).exists() and os.path.samefile(p, src):
                raise InputError(f"{p}: refusing to overwrite an input file; choose another output path")
        except OSError:
            pass
    return p


def _umask_mode() -> int:
    """The mode a plain ``open(path, "w")`` would give a new file (mkstemp uses 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def _replacing(path: str | Path) -> Iterator[str]:
    """Yield a temporary file name next to ``path``; on success rename it over ``path``, else delete it."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.", suffix=".tmp")
    os.fchmod(fd, _umask_mode())
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with _replacing(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays to plain Python; NaN and inf become ``None`` (strict JSON)."""
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
    """Write a pyarrow Table atomically."""
    import pyarrow.parquet as pq

    with _replacing(path) as tmp:
        pq.write_table(table, tmp)


def write_figure(path: str | Path, fig: Any, dpi: int = 150) -> None:
    """Render a matplotlib Figure (Agg) to PNG/SVG/PDF by extension, atomically."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    if fmt not in ("png", "svg", "pdf"):
        raise InputError(f"{path}: plots are written as .png, .svg or .pdf")
    if fig.canvas is None or not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    atomic_write_bytes(path, buf.getvalue())
