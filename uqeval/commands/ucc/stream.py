r"""``uqeval ucc --engine stream|dask``: the Uncertainty Characteristics Curve from record batches, the part of
the fold (:class:`uqeval.commands.ucc.core.UccState`) that keeps cells of critical scales instead of rows.

Notation of :mod:`uqeval.metrics.ucc`: row :math:`i` has critical scale :math:`k_i = |d_i| / w_i`, active
width :math:`w_i` and :math:`|d_i| = k_i w_i`; every metric at a scale :math:`k` is a sum over rows of a
function of :math:`(k_i, w_i, |d_i|)` (and the half-widths, for the bandwidth).

State (mergeable: counts and sums add, minima and maxima combine)
-----------------------------------------------------------------
The finite critical scales fall into **cells** of a fixed grid: the float64 bit pattern of
:math:`k \ge 0` shifted right by :data:`SHIFT` (the exponent and the top 14 mantissa bits; bit patterns
of non-negative floats are monotone), so a cell :math:`[lo_j, hi_j)` spans a relative width of
:math:`2^{-14}` whatever the scale of :math:`k` (heavy tails included). Only non-empty cells are kept
(sorted codes), each with its row count :math:`c_j`, width sum :math:`W_j = \sum w_i`, slack sum
:math:`S_j = \sum w_i (k_i - lo_j)` (exact differences: :math:`lo_j \le k_i < 2 lo_j`), its smallest
critical scale :math:`F_j` with the count of rows equal to it, and its largest :math:`L_j`. Rows never
covered (:math:`w_i = 0 < |d_i|`) keep their count and :math:`\sum |d_i|`; the target keeps its moments
(Chan's merge) for ``--normalize std``. Merging two states is a union of codes with the per-cell
fields added (or min/max-ed), so the result does not depend on the chunking or the merge order.

Exact points
------------
:math:`F_j` and :math:`L_j` are critical scales, so their operating points are points of the exact
curve, and all four metrics there follow from the cell sums (sums of non-negative terms, as the in-memory
sweep): e.g. :math:`\text{excess}(L_j) = \text{excess}(F_j) + (L_j - F_j) W_{<j} + (L_j - lo_j) W_j - S_j`.
Between :math:`L_j` and :math:`F_{j+1}` there is no critical scale, so the exact curve is the straight
segment between the two points. The metrics at the original scale :math:`k = 1` (the ``op`` point) are
per-row sums at one scale: **exact**.

Bound
-----
Inside a cell the exact curve runs from the point of :math:`F_j` to that of :math:`L_j` through points
that all lie in the box these two span (every metric is monotone in :math:`k`), and both coordinates are
monotone along it. The streamed area replaces that piece by its chord (the trapezoid rule on the points
kept), so on cell :math:`j` it errs by at most half the box,

.. math:: |A_{stream} - A| \le B = \tfrac12 \sum_j |\Delta x_j|\,|\Delta y_j| ,

with :math:`\Delta x_j, \Delta y_j` the differences of the axes between :math:`F_j` and :math:`L_j`
(0 for a cell holding one distinct scale, so ties cost nothing). :math:`B` is computed from the data and
written to the JSON with the value. A partial area over an x range errs by at most half the box of each
cell inside the range and the overlap width times :math:`|\Delta y_j|` for a cell crossing a range end;
over a y range, by the full width times the larger y of a cell crossing a level (y >= 0). The gain's
bound follows from the two areas' by interval arithmetic. The minimum-cost point is searched over the
points kept: its cost is at most ``bound`` above the exact minimum (each box's lowest corner bounds the
points inside it).

The paired permutation test reshuffles the bands of every row between models: it is not streamed
(``--engine memory``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...config import Settings
from ...errors import InputError
from ...metrics.blocks import merge_moments
from ...metrics.rowweights import float_codes

if TYPE_CHECKING:
    from ...engine.options import EngineOptions
    from .core import UccOptions

#: float64 bit pattern >> SHIFT: a cell of critical scales spans a relative width of 2**-(52 - SHIFT) = 2**-14
SHIFT = 38
CELL_WIDTH = "2^-14"

State = dict[str, Any]

# --------------------------------------------------------------------------- one band


def band_state(
    k: np.ndarray, w: np.ndarray, a: np.ndarray, half: np.ndarray, weights: np.ndarray | None = None
) -> State:
    """The state of some rows of one band: critical scales ``k``, active widths ``w``, ``a = |d|`` and the
    half widths ``(zl + zu) / 2`` (one sort of the batch's finite scales). ``weights``: positive row weights
    (``--weights``): every count becomes a total weight and every sum a weighted sum; ``t`` is the total
    weight of the rows (their count without weights)."""
    fin = np.isfinite(k)
    order = np.argsort(k[fin], kind="stable")
    kf, wf = k[fin][order], w[fin][order]
    codes = float_codes(kf, SHIFT)
    lo = (codes << SHIFT).view(np.float64)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if kf.size else np.zeros(0, dtype=np.intp)
    ends = np.r_[starts[1:], kf.size].astype(np.intp)
    kmin = kf[starts]
    at_min = np.searchsorted(kf, kmin, side="right") - starts  # rows equal to each cell's smallest scale
    if weights is None:
        t, a_inf, half_sum = float(k.size), float(a[~fin].sum()), float(half.sum())
        c, cmin = (ends - starts).astype(np.int64), at_min.astype(np.int64)
    else:
        om = weights[fin][order]
        wf = wf * om
        t, a_inf, half_sum = float(weights.sum()), float(weights[~fin] @ a[~fin]), float(weights @ half)
        cum = np.r_[0.0, np.cumsum(om)]
        c, cmin = cum[ends] - cum[starts], cum[starts + at_min] - cum[starts]
    return {
        "n": int(k.size),
        "t": t,
        "a_inf": a_inf,
        "half": half_sum,
        "codes": codes[starts],
        "c": c,
        "w": np.add.reduceat(wf, starts) if kf.size else np.zeros(0),
        "s": np.add.reduceat(wf * (kf - lo), starts) if kf.size else np.zeros(0),
        "kmin": kmin,
        "cmin": cmin,
        "kmax": kf[ends - 1] if kf.size else np.zeros(0),
    }


def merge_band(a: State, b: State) -> State:
    """Two band states combined (associative, commutative up to float rounding of the sums)."""
    codes = np.union1d(a["codes"], b["codes"])
    ia, ib = np.searchsorted(codes, a["codes"]), np.searchsorted(codes, b["codes"])
    out: State = {
        "n": a["n"] + b["n"],
        "t": a["t"] + b["t"],
        "a_inf": a["a_inf"] + b["a_inf"],
        "half": a["half"] + b["half"],
        "codes": codes,
    }
    for key in ("c", "w", "s"):  # (counts: integers, or total weights)
        v = np.zeros(codes.size, dtype=np.result_type(a[key], b[key]))
        v[ia] += a[key]
        v[ib] += b[key]
        out[key] = v
    kmin = np.full(codes.size, np.inf)
    kmin[ia] = a["kmin"]
    kmin[ib] = np.minimum(kmin[ib], b["kmin"])
    cmin = np.zeros(codes.size, dtype=np.result_type(a["cmin"], b["cmin"]))
    cmin[ia] += np.where(a["kmin"] == kmin[ia], a["cmin"], 0)
    cmin[ib] += np.where(b["kmin"] == kmin[ib], b["cmin"], 0)
    kmax = np.full(codes.size, -np.inf)
    kmax[ia] = a["kmax"]
    kmax[ib] = np.maximum(kmax[ib], b["kmax"])
    out.update(kmin=kmin, cmin=cmin, kmax=kmax)
    return out


def _vertices(st: State) -> dict[str, np.ndarray]:
    """The four metrics (raw units) at every cell's smallest and largest critical scale: ``{name: (M, 2)}``
    with column 0 at ``F_j`` and column 1 at ``L_j``, and ``k`` (means over the rows' total weight ``t``:
    their count without weights)."""
    n = st["t"]
    c, w, s, lo = st["c"], st["w"], st["s"], (st["codes"] << SHIFT).view(np.float64)
    f, last = st["kmin"], st["kmax"]
    # widths before / after each cell as forward and reverse cumulative sums (no difference of large sums)
    w_before = np.r_[0.0, np.cumsum(w)[:-1]]
    w_after = np.r_[np.cumsum(w[::-1])[::-1][1:], 0.0]
    n_before = np.cumsum(c) - c
    span = last - f
    gap = f[1:] - last[:-1]  # no critical scale in between: the exact curve is a straight segment
    e_in = span * w_before + np.maximum((last - lo) * w - s, 0.0)
    e_gap = gap * (w_before + w)[:-1]
    exc_f = np.zeros(c.size)
    np.cumsum(e_in[:-1] + e_gap, out=exc_f[1:])
    d_in = span * w_after + np.maximum(s - (f - lo) * w, 0.0)
    d_gap = gap * (w + w_after)[1:]
    dfc_l = np.full(c.size, st["a_inf"])
    dfc_l[:-1] += np.cumsum((d_in[1:] + d_gap)[::-1])[::-1]
    h = st["half"] / n
    k = np.column_stack([f, last])
    return {
        "k": k,
        "bandwidth": k * h,
        "missrate": np.column_stack([n - n_before - st["cmin"], n - n_before - c]) / n,
        "excess": np.column_stack([exc_f, exc_f + e_in]) / n,
        "deficit": np.column_stack([dfc_l + d_in, dfc_l]) / n,
    }


def curve_of(st: State, x_axis: str, y_axis: str, normalize: str, unit: float):
    """``(curve, boxes)``: the :class:`~uqeval.metrics.ucc.UCCCurve` through the exact points kept (two per
    cell, sorted by x) and the cells' ``(x_F, x_L, y_F, y_L)`` in reported units, for the bounds."""
    from ...metrics.ucc import _INCREASING, AXES, UCCCurve

    if not st["codes"].size:
        raise InputError(
            f"no operating point: all {st['n']} rows have y_true != pred and a zero band width on "
            "y_true's side, so no scale of the intervals covers any row; pass non-degenerate intervals"
        )
    v = _vertices(st)
    for name in AXES:
        if name != "missrate" and unit != 1.0:
            v[name] = v[name] / unit
    order = slice(None) if _INCREASING[x_axis] else slice(None, None, -1)
    cols = {name: np.ascontiguousarray(v[name].ravel()[order]) for name in (*AXES, "k")}
    curve = UCCCurve(x_axis=x_axis, y_axis=y_axis, normalize=normalize, unit=unit, n_rows=st["n"], **cols)
    return curve, (v[x_axis][:, 0], v[x_axis][:, 1], v[y_axis][:, 0], v[y_axis][:, 1])


def area_bound(boxes) -> float:
    """:math:`\\tfrac12 \\sum_j |\\Delta x_j| |\\Delta y_j|` (module docstring)."""
    xf, xl, yf, yl = boxes
    return float(0.5 * np.sum(np.abs(xl - xf) * np.abs(yl - yf)))


def partial_bound(boxes, x_range: tuple[float, float] | None, y_range: tuple[float, float] | None) -> float:
    """The bound of a partial area over ``x_range`` or ``y_range`` (module docstring)."""
    xf, xl, yf, yl = boxes
    x0, x1, y0, y1 = np.minimum(xf, xl), np.maximum(xf, xl), np.minimum(yf, yl), np.maximum(yf, yl)
    dx, dy = x1 - x0, y1 - y0
    if x_range is not None:
        a, b = x_range
        inside = (x0 >= a) & (x1 <= b)
        overlap = np.maximum(np.minimum(x1, b) - np.maximum(x0, a), 0.0)
        return float(np.sum(np.where(inside, 0.5 * dx * dy, overlap * dy)))
    assert y_range is not None  # called only for a partial area, so one of the two ranges is given
    a, b = y_range
    inside = (y0 >= a) & (y1 <= b)
    outside = (y1 < a) | (y0 > b)
    return float(np.sum(np.where(inside, 0.5 * dx * dy, np.where(outside, 0.0, dx * y1))))


def _gain_bound(a_m: float, b_m: float, a_c: float, b_c: float) -> float | None:
    """Largest change of ``(a_c - a_m) / a_c`` with each area within its bound (None: not bounded)."""
    if not a_c > 0.0:
        return None
    if not a_c - b_c > 0.0:
        return math.inf
    g = 1.0 - a_m / a_c
    hi = 1.0 - max(a_m - b_m, 0.0) / (a_c + b_c)
    lo = 1.0 - (a_m + b_m) / (a_c - b_c)
    return max(hi - g, g - lo)


# --------------------------------------------------------------------------- one file


def file_state(
    y: np.ndarray, pred: np.ndarray, lower: np.ndarray, upper: np.ndarray, weights: np.ndarray | None = None
) -> State:
    """The state of a batch of one model: its band, the constant band, the op sums at ``k = 1`` and the
    target's moments; ``weights``: positive row weights (weighted sums and moments, ``t`` their total)."""
    from ...metrics.ucc import _active, _op_metrics, _op_sums, _validate

    y, d, zl, zu = _validate(y, pred, lower, upper)
    n = d.size
    k, w, a = _active(d, zl, zu)
    # means over the batch at k = 1, weighted by its total weight below
    op = _op_metrics(_op_sums(lambda i, j: (d[i:j], zl[i:j], zu[i:j]), n, 1.0, weights), n, 1.0, 1.0)
    if weights is None:
        t = float(n)
        mu = float(y.mean())
        m2 = float(np.square(y - mu).sum())
    else:
        t = float(weights.sum())
        mu = float(weights @ y) / t
        m2 = float(weights @ np.square(y - mu))
    return {
        "n": n,
        "t": t,
        "y_mean": mu,
        "y_m2": m2,
        "op": {key: t * v for key, v in op.items()},
        "model": band_state(k, w, a, 0.5 * (zl + zu), weights),
        "const": band_state(a, np.ones(n), a, np.ones(n), weights),
    }


def merge_file(a: State | None, b: State) -> State:
    """Two file states combined: sums add, the target's moments by Chan's merge over the total weights."""
    if a is None:
        return b
    t, y_mean, y_m2 = merge_moments(a["t"], a["y_mean"], a["y_m2"], b["t"], b["y_mean"], b["y_m2"])
    return {
        "n": a["n"] + b["n"],
        "t": t,
        "y_mean": y_mean,
        "y_m2": y_m2,
        "op": {key: a["op"][key] + b["op"][key] for key in a["op"]},
        "model": merge_band(a["model"], b["model"]),
        "const": merge_band(a["const"], b["const"]),
    }


APPROXIMATE = {
    "auucc": f"within input.bounds.auucc: the curve's points inside one {CELL_WIDTH}-relative cell of critical "
    "scales are replaced by the chord between the cell's smallest and largest scale (half the box they span)",
    "auucc_const": "within input.bounds.auucc_const (as auucc, for the constant band)",
    "gain": "within input.bounds.gain (interval arithmetic on the two areas' bounds)",
    "partial": "within input.bounds.partial_auucc, partial_auucc_const and partial_gain",
    "op_min": "a point of the exact curve whose cost is within input.bounds.op_min_cost of the minimum",
}


#: rows of the README's streaming table (:func:`uqeval.catalogue.states.streaming_table`) for ``uqeval ucc``
UCC_TABLE = (
    ("ucc.op", "exact", "per-row sums at the one scale k = 1"),
    (
        "ucc.auucc",
        "approximate",
        "within the data-dependent bound in input.bounds: half the box between the exact "
        f"points at each {CELL_WIDTH}-relative cell's smallest and largest critical scale",
    ),
    ("ucc.auucc_const", "approximate", "as auucc, for the constant band"),
    ("ucc.gain", "approximate", "within the bound of the two areas' intervals (input.bounds.gain)"),
    (
        "ucc.partial",
        "approximate",
        "within input.bounds.partial_auucc (cells inside the range: half box; "
        "crossing an end: overlap x box height, or box width x y for a y range)",
    ),
    (
        "ucc.op_min",
        "approximate",
        "a point of the exact curve; its cost at most input.bounds.op_min_cost above the minimum",
    ),
    ("ucc.permutation_test", "not streamed", "swaps the bands of every row between models"),
)


def finalize_file(st: State, options: UccOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(ucc summary, bounds)``: the dict of :func:`~uqeval.metrics.ucc.ucc_summary` from a merged state, and
    the bounds of its approximate values."""
    from ...metrics.ucc import summary_of_curves, unit_of_std

    x_axis, y_axis, normalize = options.x_axis, options.y_axis, options.normalize
    # (checked ranges: UccOptions makes them (a, b) tuples)
    px = cast("tuple[float, float] | None", options.partial_x)
    py = cast("tuple[float, float] | None", options.partial_y)
    c = float(options.cost)
    n = st["t"]  # the total weight of the rows (their count without weights)
    unit = unit_of_std(math.sqrt(st["y_m2"] / n), normalize)
    model, boxes_m = curve_of(st["model"], x_axis, y_axis, normalize, unit)
    const, boxes_c = curve_of(st["const"], x_axis, y_axis, normalize, unit)
    op = {key: v / n / (unit if key != "missrate" else 1.0) for key, v in st["op"].items()}
    summ = summary_of_curves(model, const, op, px, py, c)
    b_m, b_c = area_bound(boxes_m), area_bound(boxes_c)
    bounds: dict[str, Any] = {
        "auucc": b_m,
        "auucc_const": b_c,
        "gain": _gain_bound(summ["auucc"], b_m, summ["auucc_const"], b_c),
    }
    if summ["partial"] is not None:
        pb_m, pb_c = partial_bound(boxes_m, px, py), partial_bound(boxes_c, px, py)
        bounds.update(
            partial_auucc=pb_m,
            partial_auucc_const=pb_c,
            partial_gain=_gain_bound(summ["partial"]["auucc"], pb_m, summ["partial"]["auucc_const"], pb_c),
        )
    xf, xl, yf, yl = boxes_m
    lowest = float(np.min(c * np.minimum(xf, xl) + (1.0 - c) * np.minimum(yf, yl)))
    bounds["op_min_cost"] = max(summ["op_min"]["cost"] - lowest, 0.0)
    return summ, bounds


# --------------------------------------------------------------------------- the command


def ucc_with_engine(
    files: Sequence[str | Path],
    names: Sequence[str],
    settings: Settings,
    engine: EngineOptions,
    options: UccOptions,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The ``uqeval.ucc/1`` document of :func:`uqeval.commands.ucc.core.ucc_report` on a streaming engine
    (``engine``: ``stream`` or ``dask``, as :meth:`~uqeval.engine.options.EngineOptions.choose` chose it), with
    ``input.engine``, ``input.approximate`` and ``input.bounds`` per model. The files are read in aligned
    record batches (:func:`~uqeval.engine.aligned.over_aligned`: on Dask, row ranges on the workers) and
    folded into a :class:`~uqeval.commands.ucc.core.UccState` that keeps the cells of critical scales, their
    targets compared batch by batch, so memory stays about one batch per file (per task on Dask)."""
    from functools import partial

    from ...engine.aligned import over_aligned
    from .core import UccState, check_request, crossing_note, finish

    specs = [str(f) for f in files]
    column = settings.columns.get("weights")
    check_request(options, len(specs), column is not None, needs_all_rows=False)
    with over_aligned(specs, settings, engine, progress) as run:
        state = run.fold(partial(UccState, list(names), specs, options))
    sources = [m.src for m in run.models]
    inputs = []
    for i, src in enumerate(sources):
        n_rows, n_dropped, n_fixed = (int(v) for v in state.counts[i])
        info = {
            "path": str(src.spec),
            "format": src.fmt,
            "n_rows": n_rows,
            "n_dropped": n_dropped,
            **({"n_fixed_crossing": n_fixed} if n_fixed else {}),
            **state.infos[i],
            "engine": run.engine,
            **run.info,
            "n_files": len(src.files),
            **src.record(),
        }
        if column and i == 0:  # the weights are the first file's column (as in memory)
            info["weights"] = column
        if n_fixed:
            state.notes[i].append(crossing_note(str(src.spec), n_fixed))
        inputs.append(info)
    notes = list(dict.fromkeys(n for src in sources for n in src.notes()))
    return finish(state, inputs, run.engine, column, notes)
