r"""Uncertainty Characteristics Curve (UCC), its area (AUUCC), gains, operating points and
the paired permutation test (Navratil et al., *Uncertainty Characteristics Curves: a
systematic assessment of prediction intervals*; reference implementation IBM UQ360,
``uq360/metrics/uncertainty_characteristics_curve``).

Definitions
-----------
For row :math:`i` with target :math:`y_i`, prediction :math:`\hat y_i` and bounds
:math:`l_i \le \hat y_i \le u_i`, let :math:`d_i = y_i - \hat y_i` and the band widths
:math:`z^l_i = \hat y_i - l_i`, :math:`z^u_i = u_i - \hat y_i` (asymmetric allowed).
At scale :math:`k \ge 0` the interval is :math:`[\hat y_i - k z^l_i, \hat y_i + k z^u_i]`.
The *active width* is the width on the side of :math:`y_i`,
:math:`w_i = z^u_i` if :math:`d_i \ge 0` else :math:`z^l_i`, and the *critical scale*
(paper Eq. 7) is

.. math:: k_i = |d_i| / w_i ,

the smallest scale whose interval contains :math:`y_i`. Zero widths: :math:`d_i = 0`
gives :math:`k_i = 0` whatever the width; :math:`d_i \ne 0` with :math:`w_i = 0` gives
:math:`k_i = \infty`, a row that no scale covers (it counts as missed, with deficit
:math:`|d_i|`, at every operating point, and contributes no operating point).

Row :math:`i` is covered at scale :math:`k` iff :math:`k_i \le k` (bounds inclusive;
the comparison is on critical scales, so no floating-point round trip through re-scaled
bounds decides coverage, and tied rows are covered together). With :math:`N` rows:

.. math::

    \text{missrate}(k) &= \tfrac1N \#\{i : k_i > k\} \\
    \text{bandwidth}(k) &= \tfrac1N \sum_i \tfrac{k z^l_i + k z^u_i}{2} \\
    \text{excess}(k) &= \tfrac1N \sum_{i : k_i \le k} (k w_i - |d_i|)
                      = \tfrac1N \sum_{i : k_i \le k} w_i (k - k_i) \\
    \text{deficit}(k) &= \tfrac1N \sum_{i : k_i > k} (|d_i| - k w_i)

(excess is the slack between :math:`y` and the bound on :math:`y`'s side, as in UQ360 and
the issue; the paper's appendix Eq. 8 writes :math:`\min\{y - l, u - y\}`, the slack to the
*nearer* bound, which differs when the band on the far side is narrower than the slack).
``bandwidth``, ``excess`` and ``deficit`` are divided by the population standard deviation
of ``y_true`` (``numpy.std``, ``ddof=0``, as UQ360's ``set_std_unit``) when
``normalize="std"``; the miss rate is never normalised.

The UCC is the set of operating points at all finite critical scales (ties give repeated,
identical points), sorted by the x axis. Bandwidth and excess increase with :math:`k`,
miss rate and deficit decrease, so the curve is sorted by :math:`k` ascending for an
increasing x axis and descending for a decreasing one.

Algorithm and cost
------------------
One sort of the critical scales and cumulative sums (the paper's Algorithm 1 and UQ360
are :math:`O(N^2)`): with :math:`k_{(1)} \le \dots \le k_{(N)}`,
:math:`W_j = \sum_{m \le j} w_{(m)}` and :math:`\Delta_j = k_{(j+1)} - k_{(j)}`,

.. math::

    \text{excess}(k_{(j)}) = \tfrac1N \sum_{h < j} \Delta_h W_h, \qquad
    \text{deficit}(k_{(j)}) = \tfrac1N \Big(\sum_{k_i = \infty} |d_i|
        + \sum_{h \ge j} \Delta_h (W_{\text{tot}} - W_h)\Big),

sums of non-negative terms, so both are monotone by construction and free of
cancellation. Within a tie group :math:`\Delta_h = 0`, which makes these formulas exact for
ties; the miss rate uses the last index of each tie group. :math:`O(N \log N)` time,
:math:`O(N)` memory.

Errors
------
Bad arrays raise :class:`~uqeval.errors.InputError`; bad options (axis names,
``normalize``, ranges, ``cost``, ``k``) raise :class:`~uqeval.errors.UsageError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, TypeAlias

import numpy as np

from ..errors import InputError, UsageError, option
from ..validation import as_float_array, check_finite, check_nonempty, check_same_length
from .blocks import BLOCK, PairwiseSum, rowwise, trapezoid

__all__ = [
    "AXES",
    "NORMALIZE",
    "UCCCurve",
    "auucc",
    "critical_scales",
    "metrics_at_scale",
    "partial_auucc",
    "permutation_test",
    "ucc_curve",
    "ucc_curves",
    "ucc_summary",
    "ucc_summary_rows",
]

#: a partial range of an axis, ``(low, high)``, or None for none
Range: TypeAlias = "tuple[float, float] | None"

#: Axis names, in UQ360's order of its ``axes_name2idx`` table.
AXES: tuple[str, ...] = ("missrate", "bandwidth", "excess", "deficit")
#: Values of ``normalize``.
NORMALIZE: tuple[str, ...] = ("std", "none")
# True: the metric increases with the scale k; False: it decreases.
_INCREASING: dict[str, bool] = {
    "bandwidth": True,
    "excess": True,
    "missrate": False,
    "deficit": False,
}
# Elements of one permutation-test batch (B * N); bounds the batch's memory to ~150 MB.
_BATCH_ELEMENTS = 2_000_000


# --------------------------------------------------------------------------- validation


def _check_axes(x_axis: str, y_axis: str) -> None:
    for name, value in (("x_axis", x_axis), ("y_axis", y_axis)):
        if value not in AXES:
            raise UsageError(f"{option(name)} must be one of {', '.join(AXES)}, got {value!r}")
    if x_axis == y_axis:
        raise UsageError(f"{option('x_axis')} and {option('y_axis')} must differ, both are {x_axis}")


def _check_normalize(normalize: str) -> None:
    if normalize not in NORMALIZE:
        raise UsageError(f"{option('normalize')} must be one of {', '.join(NORMALIZE)}, got {normalize!r}")


def _check_band(y_true, pred, lower, upper) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Checked float arrays ``(y, pred, lower, upper)`` (no full-size float temporaries)."""
    names = ("y_true", "pred", "lower", "upper")
    arrays = [as_float_array(a, n) for a, n in zip((y_true, pred, lower, upper), names)]
    n = check_same_length(arrays, names)
    check_nonempty(n, "y_true")
    for a, name in zip(arrays, names):
        check_finite(a, name)
    y, p, lo, hi = arrays
    # a negative band p - lo < 0 (hi - p < 0) is lo > p (p > hi): the sign of a difference of finite numbers
    for mask, bound, rel in ((lo > p, "lower", "above"), (p > hi, "upper", "below")):
        bad = np.flatnonzero(mask)
        if bad.size:
            i = int(bad[0])
            raise InputError(
                f"{bound} must not lie {rel} pred: {bad.size} row(s) with a negative band "
                f"(first at row {i}: {bound}={(lo if bound == 'lower' else hi)[i]:g}, "
                f"pred={p[i]:g}); the interval must contain the prediction "
                "(check that lower/upper are not swapped and belong to this prediction)"
            )
    return y, p, lo, hi


def _validate(y_true, pred, lower, upper) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Checked float arrays ``(y, d, zl, zu)``: target, error and both band widths."""
    y, p, lo, hi = _check_band(y_true, pred, lower, upper)
    return y, y - p, p - lo, hi - p


def _unit(y: np.ndarray, normalize: str, weights: np.ndarray | None = None) -> float:
    """Axis unit: population std of the target (UQ360's ``np.std(gt)``; with row ``weights`` the weighted
    population std) or 1."""
    if normalize == "none":
        return 1.0
    if weights is None:
        return unit_of_std(float(np.std(y)), normalize)
    total = float(weights.sum())
    centre = float(np.einsum("i,i->", weights, y)) / total
    c = y - centre
    return unit_of_std(math.sqrt(float(np.einsum("i,i,i->", weights, c, c)) / total), normalize)


def unit_of_std(s: float, normalize: str) -> float:
    """Axis unit from the population std ``s`` of the target (streamed: from merged moments) or 1."""
    if normalize == "none":
        return 1.0
    if not s > 0.0:
        raise InputError(
            "cannot normalise the UCC axes by std(y_true): y_true is constant "
            f"(std = {s:g}); pass {option('normalize', 'none')} for raw units"
        )
    return s


def _check_range(rng: Sequence[float] | None, name: str) -> tuple[float, float] | None:
    if rng is None:
        return None
    try:
        a, b = (float(v) for v in rng)
    except (TypeError, ValueError):
        raise UsageError(f"{option(name)} must be two numbers 'a,b', got {rng!r}") from None
    if math.isnan(a) or math.isnan(b) or not a < b:
        raise UsageError(f"{option(name)} must be an increasing range a < b, got [{a:g}, {b:g}]")
    return a, b


def _check_cost(cost: float) -> float:
    c = float(cost)
    if not 0.0 <= c <= 1.0:
        raise UsageError(f"{option('cost')} must lie in [0, 1] (weight of the x axis), got {c:g}")
    return c


# --------------------------------------------------------------------------- kernels


def _active(d: np.ndarray, zl: np.ndarray, zu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(k, w, a)``: critical scale, active width and |d| of each row (any shape)."""
    up = d >= 0
    w = np.where(up, zu, zl)
    a = np.abs(d)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = a / w  # a > 0, w = 0 -> inf (never covered); 0/0 -> nan, fixed below
    k[a == 0] = 0.0
    return k, w, a


def critical_scales(y_true, pred, lower, upper) -> np.ndarray:
    r"""Critical scale of each row (paper Definition 2, Eq. 7).

    .. math:: k_i = \begin{cases} d_i / z^u_i & d_i \ge 0 \\ -d_i / z^l_i & d_i < 0
              \end{cases}, \quad d_i = y_i - \hat y_i,\ z^l_i = \hat y_i - l_i,\
              z^u_i = u_i - \hat y_i

    The smallest scale :math:`k` at which :math:`[\hat y - k z^l, \hat y + k z^u]` contains
    :math:`y`. Zero widths: :math:`d_i = 0` gives 0; :math:`d_i \ne 0` with a zero width on
    :math:`y_i`'s side gives ``inf`` (no scale covers the row).

    Parameters
    ----------
    y_true, pred, lower, upper : (N,) arrays, finite, ``lower <= pred <= upper``.

    Returns
    -------
    (N,) float array, ``>= 0``, possibly ``inf``.

    Raises
    ------
    InputError
        NaN/inf, unequal lengths, no rows, or a negative band (names the first bad row).
    """
    _, d, zl, zu = _validate(y_true, pred, lower, upper)
    return _active(d, zl, zu)[0]


def _sweep(
    k: np.ndarray,
    w: np.ndarray | None,
    a: np.ndarray | None,
    half: np.ndarray,
    metrics: Sequence[str],
    inplace: bool = False,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Raw-unit metrics at every sorted critical scale, for ``B`` curves at once.

    ``k, w, a`` are ``(B, N)``; ``half`` is ``(B,)``, the mean of ``(zl + zu) / 2``.
    ``w=None`` means every active width is 1 (the constant band): a value sort suffices.
    ``inplace``: a value sort may sort ``k`` itself (the caller's array is then overwritten).
    Returns ``ks`` (``(B, N)``, ascending per row, ``inf`` last) and ``{metric: (B, N)}``
    at those scales (only the ``metrics`` asked for); entries at ``ks == inf`` are meaningless
    (callers drop or mask them).

    ``weights`` (B, N): the rows' own weights (> 0; ``--weights``): the miss rate is the weight of the rows
    not covered over the total weight, excess and deficit weighted sums over the total weight (``half``
    is then the weighted mean half width); with integer weights, the values of the repeated rows.
    """
    if weights is not None:  # the same sweep with each row's active width times its weight, the miss rate
        # from the weight of the rows past each tie group (a reverse cumulative sum of the sorted weights, read
        # at the group's last position)
        b, n = k.shape
        order = np.argsort(k, axis=1, kind="stable")
        ks = np.take_along_axis(k, order, axis=1)
        om = np.take_along_axis(weights, order, axis=1)
        total = om.sum(axis=1)
        weighted: dict[str, np.ndarray] = {}
        if "bandwidth" in metrics:
            weighted["bandwidth"] = _bandwidth(ks, half)
        if "missrate" in metrics:
            ends = np.ones((b, n), dtype=bool)  # the last position of each tie group
            np.not_equal(ks[:, 1:], ks[:, :-1], out=ends[:, :-1])
            last = np.where(ends, np.arange(n), n - 1)
            last = np.minimum.accumulate(last[:, ::-1], axis=1)[:, ::-1]
            after = np.zeros((b, n))  # weight of the rows after each position
            np.cumsum(om[:, :0:-1], axis=1, out=after[:, -2::-1])
            weighted["missrate"] = np.take_along_axis(after, last, axis=1) / total[:, None]
        if "excess" in metrics or "deficit" in metrics:
            ws = om * (1.0 if w is None else np.take_along_axis(w, order, axis=1))
            # a is given whenever the deficit is asked for
            never = np.where(np.isinf(k), a * weights, 0.0).sum(axis=1) if "deficit" in metrics else None
            weighted.update(_slack_metrics(ks, ws, never, metrics, total[:, None]))
        return ks, weighted
    b, n = k.shape
    need_w = "excess" in metrics or "deficit" in metrics
    # |d| of never-covered rows, before k is sorted (perhaps in place)
    # a is given whenever the deficit is asked for (docstring of _curve_of)
    never = np.where(np.isinf(k), a, 0.0).sum(axis=1) if "deficit" in metrics else None  # type: ignore[arg-type]
    if w is None or not need_w:  # the widths are not needed: a value sort suffices
        if inplace:
            k.sort(axis=1)
            ks = k
        else:
            ks = np.sort(k, axis=1)
        ws = np.ones((b, n)) if need_w else None
    else:
        order = np.argsort(k, axis=1)
        ks = np.take_along_axis(k, order, axis=1)
        ws = np.take_along_axis(w, order, axis=1) if need_w else None
        del order
    out: dict[str, np.ndarray] = {}
    if "bandwidth" in metrics:
        out["bandwidth"] = _bandwidth(ks, half)
    if "missrate" in metrics:
        # coverage at position j counts the whole tie group of ks[j]: its last index, the smallest group end
        # at or after j -- a running minimum from the right, made block by block from the last block back
        # (``after``: the smallest group end past the block)
        miss = np.empty((b, n))
        after = np.full((b, 1), n - 1, dtype=np.intp)
        for stop in range(n, 0, -BLOCK):  # blocks of positions, not positions
            start = max(stop - BLOCK, 0)
            ends = np.ones((b, stop - start), dtype=bool)  # the last position ends its group
            inner = min(stop, n - 1)
            np.not_equal(ks[:, start + 1 : inner + 1], ks[:, start:inner], out=ends[:, : inner - start])
            last = np.where(ends, np.arange(start, stop), n - 1)
            last = np.minimum.accumulate(last[:, ::-1], axis=1)[:, ::-1]
            np.minimum(last, after, out=last)
            after = last[:, :1].copy()
            miss[:, start:stop] = (n - 1 - last) / n
        out["missrate"] = miss
    if need_w:
        assert ws is not None  # need_w: set in both branches above
        out.update(_slack_metrics(ks, ws, never, metrics, n))
    return ks, out


def _bandwidth(ks: np.ndarray, half: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # inf scales (never-covered rows): masked by the callers
        return ks * half[:, None]


def _slack_metrics(
    ks: np.ndarray, ws: np.ndarray, never: np.ndarray | None, metrics: Sequence[str], norm: Any
) -> dict[str, np.ndarray]:
    """Excess and deficit (those in ``metrics``) at the sorted scales ``ks`` (B, N) from the active widths
    ``ws`` in the same order (times the rows' weights when weighted), ``never`` (B,): the (weighted) |d| of
    the never-covered rows, divided by ``norm`` (N, or the (B, 1) total weights)."""
    b, n = ks.shape
    out: dict[str, np.ndarray] = {}
    finite = np.isfinite(ks)
    with np.errstate(invalid="ignore"):  # inf - inf among never-covered rows
        dk = np.diff(ks, axis=1)
    # the step into the never-covered rows (inf - finite, inf - inf) carries no width
    dk[~finite[:, 1:]] = 0.0
    del finite
    if "excess" in metrics:
        cum = np.cumsum(ws, axis=1)  # width covered through position h
        exc = np.zeros((b, n))
        np.cumsum(dk * cum[:, :-1], axis=1, out=exc[:, 1:])
        del cum
        exc /= norm
        out["excess"] = exc
    if "deficit" in metrics:
        assert never is not None  # made when the deficit is asked for
        # width still missed after position h: sum of ws[h+1:], as a reverse cumsum
        rest = np.cumsum(ws[:, :0:-1], axis=1)[:, ::-1]
        inc = dk * rest
        del rest
        dfc = np.zeros((b, n))
        np.cumsum(inc[:, ::-1], axis=1, out=dfc[:, -2::-1])
        del inc
        dfc += never[:, None]
        dfc /= norm
        out["deficit"] = dfc
    return out


@dataclass(frozen=True)
class UCCCurve:
    """Operating points of one UCC, sorted by the x axis.

    Attributes
    ----------
    k : (M,) critical scales of the points (``M`` = rows with a finite critical scale).
    bandwidth, missrate, excess, deficit : (M,) the four metrics at each ``k``, in the
        reported units (``bandwidth``, ``excess``, ``deficit`` divided by ``unit``); the
        curves of :func:`ucc_summary` hold its two axes only (the others are None).
    x_axis, y_axis : names of the chosen axes (any two of :data:`AXES`).
    normalize : ``"std"`` or ``"none"``.
    unit : the divisor applied (population std of ``y_true``, or 1).
    n_rows : N, all rows; ``n_rows - M`` rows are never covered (zero active width).
    """

    k: np.ndarray
    bandwidth: np.ndarray | None
    missrate: np.ndarray | None
    excess: np.ndarray | None
    deficit: np.ndarray | None
    x_axis: str
    y_axis: str
    normalize: str
    unit: float
    n_rows: int

    @property
    def x(self) -> np.ndarray:
        """Values of the x axis (ascending)."""
        return getattr(self, self.x_axis)

    @property
    def y(self) -> np.ndarray:
        """Values of the y axis, aligned with :attr:`x`."""
        return getattr(self, self.y_axis)

    def __len__(self) -> int:
        return int(self.k.size)


def _scales(
    d: np.ndarray, zl: np.ndarray | None, zu: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, float]:
    """``(k, w, a, half)`` of :func:`_curve_of` for the bands ``zl, zu`` with errors ``d``; ``None, None``: the
    constant band of width 1 (critical scales ``|d|``)."""
    if zl is None:
        a = np.abs(d)
        return a, None, a, 1.0
    assert zu is not None  # zl and zu come together (both None: the constant band)
    k, w, a = _active(d, zl, zu)
    return k, w, a, float(0.5 * (zl.mean() + zu.mean()))


def _curve_of(
    k: np.ndarray,
    w: np.ndarray | None,
    a: np.ndarray | None,
    half: float,
    n: int,
    x_axis: str,
    y_axis: str,
    normalize: str,
    unit: float,
    metrics: Sequence[str] = AXES,
    inplace: bool = False,
    weights: np.ndarray | None = None,
) -> UCCCurve:
    """The UCC of critical scales ``k``, active widths ``w`` (None: all 1) and ``|d|`` = ``a`` (N,; only
    read for the deficit) with mean half width ``half``; the metrics not in ``metrics`` are None;
    ``inplace``: ``k`` may be sorted in place; ``weights``: the rows' weights (:func:`_sweep`)."""
    ks, m = _sweep(
        k[None, :],
        None if w is None else w[None, :],
        None if a is None else a[None, :],
        np.array([half]),
        metrics,
        inplace=inplace,
        weights=None if weights is None else weights[None, :],
    )
    del k, w, a
    n_fin = int(np.searchsorted(ks[0], np.inf))
    if n_fin == 0:
        raise InputError(
            f"no operating point: all {n} rows have y_true != pred and a zero band width on "
            "y_true's side, so no scale of the intervals covers any row; pass non-degenerate "
            "intervals"
        )
    step = 1 if _INCREASING[x_axis] else -1  # ascending x
    sl = slice(None, n_fin) if step == 1 else slice(n_fin - 1, None, -1)
    cols: dict[str, np.ndarray | None] = dict.fromkeys(AXES)
    for name in metrics:
        v = np.ascontiguousarray(m.pop(name)[0, sl])
        if name != "missrate" and unit != 1.0:
            v /= unit
        cols[name] = v
    return UCCCurve(
        k=np.ascontiguousarray(ks[0, sl]),
        x_axis=x_axis,
        y_axis=y_axis,
        normalize=normalize,
        unit=unit,
        n_rows=n,
        **cols,
    )


def ucc_curve(
    y_true, pred, lower, upper, x_axis: str = "bandwidth", y_axis: str = "missrate", normalize: str = "std"
) -> UCCCurve:
    r"""The exact UCC: the operating points at all critical scales (paper Def. 1, App. 7).

    Each point is :math:`(\text{bandwidth}, \text{missrate}, \text{excess},
    \text{deficit})(k_j)` at a critical scale :math:`k_j` (see the module docstring for the
    formulas); all four metrics are returned so any pair can be plotted. Computed from one
    sort of the critical scales and cumulative sums: :math:`O(N \log N)` time, :math:`O(N)`
    memory (UQ360 re-evaluates all rows at every scale, :math:`O(N^2)`).

    Parameters
    ----------
    y_true, pred, lower, upper : (N,) arrays, ``lower <= pred <= upper``.
    x_axis, y_axis : two different names from :data:`AXES` (the curve is sorted by x).
    normalize : ``"std"`` divides bandwidth, excess and deficit by ``numpy.std(y_true)``
        (population std, as UQ360); ``"none"`` keeps the units of ``y_true``.

    Returns
    -------
    UCCCurve
        ``M`` points (rows with a finite critical scale; tied scales repeat a point).
    """
    _check_axes(x_axis, y_axis)
    _check_normalize(normalize)
    y, d, zl, zu = _validate(y_true, pred, lower, upper)
    return _curve_of(*_scales(d, zl, zu), d.size, x_axis, y_axis, normalize, _unit(y, normalize))


def ucc_curves(
    y_true, pred, lower, upper, x_axis: str = "bandwidth", y_axis: str = "missrate", normalize: str = "std"
) -> tuple[UCCCurve, UCCCurve]:
    """The model's UCC and its constant-band reference around the same ``pred``.

    The reference has all widths equal to 1 (paper Sec. 2.2; UQ360 uses ``std(pred)``):
    its critical scales are :math:`|d_i|` and its curve, in any units, does not depend on
    the constant (a constant :math:`c` divides every scale by :math:`c` and multiplies every
    width by :math:`c`). Returns ``(model_curve, const_curve)``; :func:`ucc_summary_rows` gives
    the curves of two axes from bounds made block by block with their summary.
    """
    _check_axes(x_axis, y_axis)
    _check_normalize(normalize)
    y, d, zl, zu = _validate(y_true, pred, lower, upper)
    unit = _unit(y, normalize)
    model = _curve_of(*_scales(d, zl, zu), d.size, x_axis, y_axis, normalize, unit)
    return model, _curve_of(*_scales(d, None, None), d.size, x_axis, y_axis, normalize, unit)


def metrics_at_scale(y_true, pred, lower, upper, k: float = 1.0, normalize: str = "std") -> dict[str, float]:
    r"""The four UCC metrics at one scale ``k`` (vectorised over rows; :math:`O(N)`).

    Coverage is :math:`k_i \le k` on critical scales, as on the curve, so at
    :math:`k = k_j` this returns the curve's point :math:`j`. Per row, excess
    :math:`\max(k w_i - |d_i|, 0)` on covered rows and deficit :math:`|d_i| - k w_i` on
    missed rows (see the module docstring). ``k = 1`` is the original operating point.

    Returns
    -------
    dict with float ``bandwidth``, ``missrate``, ``excess``, ``deficit`` (reported units).
    """
    _check_normalize(normalize)
    k = float(k)
    if not (math.isfinite(k) and k >= 0.0):
        raise UsageError(f"k must be a finite scale >= 0, got {k:g}")
    y, d, zl, zu = _validate(y_true, pred, lower, upper)
    unit = _unit(y, normalize)
    return _metrics_at(d, zl, zu, k, unit)


def _metrics_at(d: np.ndarray, zl: np.ndarray, zu: np.ndarray, k: float, unit: float) -> dict[str, float]:
    n = d.size
    return _op_metrics(_op_sums(lambda a, b: (d[a:b], zl[a:b], zu[a:b]), n, k), n, k, unit)


def _op_sums(rows, n: int, k: float, weights: np.ndarray | None = None) -> dict[str, float]:
    """The sums behind :func:`_metrics_at` over ``n`` rows handed out in blocks by ``rows(start, stop)
    -> (d, zl, zu)``: the means of ``zl`` and ``zu``, the covered rows and the excess and deficit sums,
    each bit for bit its whole-array value (:class:`~.blocks.PairwiseSum`) with block-sized temporaries.
    ``weights``: the rows' weights: weighted means and sums, ``missed`` the weight of the rows not covered
    and ``total`` the total weight."""
    keys = ("zl", "zu", "excess", "deficit") + (() if weights is None else ("missed",))
    totals = {key: PairwiseSum(n) for key in keys}
    covered_rows = 0
    for start in range(0, n, BLOCK):  # blocks of rows, not rows
        stop = min(start + BLOCK, n)
        d, zl, zu = rows(start, stop)
        kc, w, a = _active(d, zl, zu)
        covered = kc <= k
        slack = k * w - a
        excess = np.maximum(slack, 0.0, where=covered, out=np.zeros_like(slack))
        deficit = np.maximum(-slack, 0.0, where=~covered, out=np.zeros_like(slack))
        if weights is not None:
            om = weights[start:stop]
            excess, deficit, zl, zu = excess * om, deficit * om, zl * om, zu * om
            totals["missed"].add(np.where(covered, 0.0, om))
        totals["excess"].add(excess)
        totals["deficit"].add(deficit)
        totals["zl"].add(zl)
        totals["zu"].add(zu)
        covered_rows += int(np.count_nonzero(covered))
    out = {key: t.total() for key, t in totals.items()}
    if weights is not None:
        out["total"] = float(weights.sum())
        out["zl"], out["zu"] = out["zl"] / out["total"], out["zu"] / out["total"]
        return out
    out["zl"], out["zu"] = out["zl"] / n, out["zu"] / n  # np.mean
    out["covered"] = covered_rows
    return out


def _op_metrics(sums: dict[str, float], n: int, k: float, unit: float) -> dict[str, float]:
    """The four metrics at scale ``k`` from :func:`_op_sums` (weighted sums: over their total weight)."""
    if "total" in sums:
        t = sums["total"]
        return {
            "bandwidth": k * 0.5 * (sums["zl"] + sums["zu"]) / unit,
            "missrate": sums["missed"] / t,
            "excess": sums["excess"] / t / unit,
            "deficit": sums["deficit"] / t / unit,
        }
    return {
        "bandwidth": k * 0.5 * (sums["zl"] + sums["zu"]) / unit,
        "missrate": float(n - sums["covered"]) / n,
        "excess": sums["excess"] / n / unit,
        "deficit": sums["deficit"] / n / unit,
    }


# --------------------------------------------------------------------------- areas


def auucc(curve: UCCCurve) -> float:
    r"""Area under the UCC by the trapezoid rule (paper Sec. 2.3, "AUUCC").

    .. math:: A = \sum_j (x_{j+1} - x_j) \frac{y_j + y_{j+1}}{2}

    over the points sorted by x, from the smallest critical scale to the largest finite
    one, as UQ360's ``get_AUUCC(aucfct="trapz")``; no point is added at :math:`k = 0` or
    at the axes. Differences from UQ360, all deliberate: the area is always positive (UQ360
    integrates in the order of increasing :math:`k`, so a decreasing x axis, miss rate or
    deficit, gives it a negative sign); a curve with two distinct points has its trapezoid
    area (UQ360 returns 0 when fewer than three points remain after dropping leading
    points with equal x); a single point has area 0.
    """
    return trapezoid(curve.x, curve.y)


def _area_to(x: np.ndarray, y: np.ndarray, cum: np.ndarray, t: float) -> float:
    """Area under the polyline from ``x[0]`` to ``t`` (``x[0] <= t <= x[-1]``)."""
    m = x.size
    i = int(np.searchsorted(x, t, side="right")) - 1
    i = min(max(i, 0), m - 2)
    x0, x1, y0, y1 = x[i], x[i + 1], y[i], y[i + 1]
    yt = y0 + (y1 - y0) * ((t - x0) / (x1 - x0)) if x1 > x0 else y1
    return float(cum[i] + (t - x0) * (y0 + yt) * 0.5)


def _x_at_level(x: np.ndarray, v: np.ndarray, level: float, first: bool) -> float | None:
    """On a polyline with ``v`` non-decreasing, the first (or last) ``x`` where ``v``
    reaches ``level`` from below (or is still ``<= level``); None if there is none."""
    m = x.size
    if first:
        i = int(np.searchsorted(v, level, side="left"))  # first vertex with v >= level
        if i == 0:
            return float(x[0])
        if i == m:
            return None
        j0, j1 = i - 1, i
    else:
        i = int(np.searchsorted(v, level, side="right")) - 1  # last vertex with v <= level
        if i == m - 1:
            return float(x[-1])
        if i < 0:
            return None
        j0, j1 = i, i + 1
    frac = (level - v[j0]) / (v[j1] - v[j0])
    return float(x[j0] + frac * (x[j1] - x[j0]))


def partial_auucc(
    curve: UCCCurve, x_range: Sequence[float] | None = None, y_range: Sequence[float] | None = None
) -> float:
    r"""Area under the part of the UCC with x (or y) in a range (paper Sec. 2.3).

    The curve is the polyline through its points (the trapezoid rule's interpolant).
    ``x_range=(a, b)``: :math:`\int_a^b y(x)\,dx`. ``y_range=(a, b)``: the same area, over
    the x interval where :math:`a \le y(x) \le b` (y is monotone along every UCC). Range
    ends are interpolated on the polyline, not snapped to the nearest point (UQ360 snaps
    to its closest points), and clipped to the curve's extent; a range that misses the
    curve gives 0. Either range over the whole curve gives :func:`auucc`.
    """
    xr = _check_range(x_range, "x_range")
    yr = _check_range(y_range, "y_range")
    if (xr is None) == (yr is None):
        raise UsageError("give exactly one of x_range and y_range")
    x, y = curve.x, curve.y
    if x.size < 2:
        return 0.0
    cum = np.zeros(x.size)
    np.cumsum(np.diff(x) * (y[1:] + y[:-1]) * 0.5, out=cum[1:])
    lo: float | None
    hi: float | None
    if xr is not None:
        lo, hi = max(xr[0], float(x[0])), min(xr[1], float(x[-1]))
    else:
        assert yr is not None  # exactly one of the ranges (checked above)
        if y[0] <= y[-1]:  # y non-decreasing along the curve
            v, level_lo, level_hi = y, yr[0], yr[1]
        else:
            v, level_lo, level_hi = -y, -yr[1], -yr[0]
        lo = _x_at_level(x, v, level_lo, first=True)
        hi = _x_at_level(x, v, level_hi, first=False)
        if lo is None or hi is None:
            return 0.0
    if not hi > lo:
        return 0.0
    return _area_to(x, y, cum, hi) - _area_to(x, y, cum, lo)


def _gain(a_const: float, a_model: float, points: int = 1) -> float | None:
    """``(a_const - a_model) / a_const``, exactly 0 when the areas differ by their rounding only.

    Each area is a sum over the ``points`` of its curve, so its rounding error is below ``points`` ulps
    of it (measured: ~5 % of that bound at 1e5 points); two areas that close are equal. A model whose
    band is the constant one gave a gain of 2.2e-16 or -1e-12, printed "-0.0%"."""
    if not a_const > 0.0:
        return None
    ulps = max(points, 64) * np.finfo(np.float64).eps
    if abs(a_const - a_model) <= ulps * max(abs(a_const), abs(a_model)):
        return 0.0
    return (a_const - a_model) / a_const


def _operating_point(k: float, x: float, y: float, cost: float) -> dict[str, float]:
    return {"k": float(k), "x": float(x), "y": float(y), "cost": float(cost * x + (1.0 - cost) * y)}


def _min_cost_point(curve: UCCCurve, cost: float) -> dict[str, float]:
    x, y, m = curve.x, curve.y, len(curve)
    spans = [(start, min(start + BLOCK, m)) for start in range(0, m, BLOCK)]  # blocks of points, not points

    def costs(start: int, stop: int) -> np.ndarray:
        return cost * x[start:stop] + (1.0 - cost) * y[start:stop]

    # a cost is NaN where an axis overflowed (targets near 1e308: inf / inf): such a point is no minimum
    known = [c[~np.isnan(c)] for c in (costs(*span) for span in spans)]
    if not any(c.size for c in known):
        return _operating_point(np.nan, np.nan, np.nan, cost)  # no point has a cost: written as null
    c_min = min(float(c.min()) for c in known if c.size)
    best = np.concatenate([start + np.flatnonzero(costs(start, stop) == c_min) for start, stop in spans])
    j = best[np.argmin(curve.k[best])]  # ties: the smallest scale (UQ360: first in k order)
    return _operating_point(curve.k[j], curve.x[j], curve.y[j], cost)


def ucc_summary(y_true, pred, lower, upper, *args: Any, **options: Any) -> dict:
    r"""AUUCC, gain over the constant band, partial area and operating points of one model.

    Gain (paper Eq. 6, as a fraction rather than a percentage):

    .. math:: G = \frac{A_{\text{const}} - A_{\text{model}}}{A_{\text{const}}}

    UQ360's ``regression_metrics.auucc_gain`` divides by :math:`A_{\text{model}}` instead
    (and uses excess/missrate axes); we follow the paper and the issue. Linear cost
    (paper Eq. 5) :math:`C(k) = c\,x(k) + (1 - c)\,y(k)` in the reported units; its
    minimum is searched over the curve's points (exact over :math:`k \ge k_{\min}`, where
    every metric is affine between consecutive critical scales and the miss rate only
    drops at them), ties resolved to the smallest scale.

    Returns
    -------
    dict (JSON-serialisable) with keys ``x_axis``, ``y_axis``, ``normalize``, ``auucc``,
    ``auucc_const``, ``gain`` (None when ``auucc_const`` is 0), ``partial`` (None, or
    ``{"x" | "y": [a, b], "auucc", "auucc_const", "gain"}``, each curve clipped to its own
    extent), ``op`` (``{"k": 1.0, "x", "y", "cost"}``, the original intervals) and
    ``op_min`` (``{"k", "x", "y", "cost"}``, the minimum-cost point). Use
    :func:`ucc_curves` for the curves themselves. ``args``, ``options``: the arguments of
    :func:`ucc_summary_rows` after its bounds, in its order (``x_axis="bandwidth"``, ``y_axis="missrate"``,
    ``normalize="std"``, ``partial_x``, ``partial_y``, ``cost=0.5``, ``weights``).
    """
    _, _, lo, hi = _check_band(y_true, pred, lower, upper)
    return ucc_summary_rows(y_true, pred, lambda a, b: (lo[a:b], hi[a:b]), *args, **options)


def _summary_options(x_axis: str, y_axis: str, normalize: str, partial_x, partial_y, cost: float):
    """The checked options of a summary: ``(partial_x, partial_y, cost)``."""
    _check_axes(x_axis, y_axis)
    _check_normalize(normalize)
    px = _check_range(partial_x, "partial_x")
    py = _check_range(partial_y, "partial_y")
    if px is not None and py is not None:
        raise UsageError(f"give at most one of {option('partial_x')} and {option('partial_y')}")
    return px, py, _check_cost(cost)


def ucc_summary_rows(
    y_true,
    pred,
    bounds,
    x_axis: str = "bandwidth",
    y_axis: str = "missrate",
    normalize: str = "std",
    partial_x: Sequence[float] | None = None,
    partial_y: Sequence[float] | None = None,
    cost: float = 0.5,
    weights: np.ndarray | None = None,
    curves: list[UCCCurve] | None = None,
) -> dict:
    """:func:`ucc_summary` with the bounds handed out block by block: ``bounds(start, stop) -> (lower,
    upper)`` of rows ``start:stop`` (e.g. a Gaussian's ``mean -+ z std``, never held whole). The same
    numbers, bit for bit; bounds that are not finite or do not contain ``pred`` are made whole once to
    raise :func:`ucc_summary`'s message. ``weights``: checked positive row weights (the weighted UCC,
    :func:`_sweep`; the axis unit is the weighted std of the targets); with integer weights the summary
    of the repeated rows. ``curves``: a list that gets the two curves summarised, the model's and the
    constant band's, as :func:`ucc_curves` makes them with only the ``x_axis`` and ``y_axis`` metrics (the
    others None; what the UCC plot draws); None: each curve is dropped once summarised."""
    px, py, c = _summary_options(x_axis, y_axis, normalize, partial_x, partial_y, cost)
    y, p = _check_band_rows(y_true, pred, bounds)
    # every per-row array is made block by block, each curve holds its two axes only and is summarised
    # before the next one is made
    sums, unit, made = _curves_rows(y, p, bounds, x_axis, y_axis, normalize, weights)
    parts = []
    for cost_of in (c, None):  # the minimum-cost point of the model's curve only
        curve = next(made)
        parts.append(_curve_part(curve, px, py, cost_of))
        if curves is not None:
            curves.append(curve)
        del curve
    return _summary(parts[0], parts[1], _op_metrics(sums, y.size, 1.0, unit), px, py, c)


def _check_band_rows(y_true, pred, bounds) -> tuple[np.ndarray, np.ndarray]:
    """Checked ``(y, pred)``; bounds from ``bounds(start, stop)`` checked block by block (bad ones are made
    whole once to raise :func:`_check_band`'s message)."""
    y = as_float_array(y_true, "y_true")
    p = as_float_array(pred, "pred")
    n = check_same_length([y, p], ["y_true", "pred"])
    check_nonempty(n, "y_true")
    check_finite(y, "y_true")
    check_finite(p, "pred")
    for start in range(0, n, BLOCK):  # blocks of rows, not rows
        stop = min(start + BLOCK, n)
        lo, hi = bounds(start, stop)
        pb = p[start:stop]
        if not (np.isfinite(lo).all() and np.isfinite(hi).all() and (lo <= pb).all() and (pb <= hi).all()):
            whole = [
                np.concatenate(v) for v in zip(*(bounds(a, min(a + BLOCK, n)) for a in range(0, n, BLOCK)))
            ]
            _check_band(y, p, *whole)  # raises
    return y, p


def _band_rows(y: np.ndarray, p: np.ndarray, bounds):
    """``rows(start, stop) -> (d, zl, zu)`` of rows ``start:stop``, each value as :func:`_validate` makes it."""

    def rows(start: int, stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        yb, pb = y[start:stop], p[start:stop]
        lo, hi = bounds(start, stop)
        return yb - pb, pb - lo, hi - pb

    return rows


def _curves_rows(
    y: np.ndarray, p: np.ndarray, bounds, x_axis: str, y_axis: str, normalize: str, weights: np.ndarray | None
) -> tuple[dict, float, Iterator[UCCCurve]]:
    """``(sums, unit, curves)`` of checked arrays and bounds handed out by ``bounds(start, stop)``: the
    :func:`_op_sums` at ``k = 1``, the unit of ``normalize`` and :func:`_curves_of_rows`."""
    rows = _band_rows(y, p, bounds)
    sums = _op_sums(rows, y.size, 1.0, weights)
    unit = _unit(y, normalize, weights)
    half = 0.5 * (sums["zl"] + sums["zu"])
    return sums, unit, _curves_of_rows(rows, y, p, x_axis, y_axis, normalize, unit, half, weights)


def _curves_of_rows(
    rows,
    y: np.ndarray,
    p: np.ndarray,
    x_axis: str,
    y_axis: str,
    normalize: str,
    unit: float,
    half: float,
    weights: np.ndarray | None = None,
) -> Iterator[UCCCurve]:
    """The model's curve of the two axes, then the constant band's (a generator: the first can be dropped
    before the second is made), from per-row arrays made block by block by ``rows`` (no full-size d, zl,
    zu; each value as :func:`_active` makes it from the whole arrays)."""
    n, axes = y.size, (x_axis, y_axis)
    need_w = "excess" in axes or "deficit" in axes
    k, w = np.empty(n), np.empty(n) if need_w else None
    for start in range(0, n, BLOCK):  # blocks of rows, not rows
        stop = min(start + BLOCK, n)
        kb, wb, _ = _active(*rows(start, stop))
        k[start:stop] = kb
        if need_w:
            assert w is not None  # made when need_w
            w[start:stop] = wb
    a = rowwise(lambda yb, pb: np.abs(yb - pb), y, p) if "deficit" in axes else None
    curve = _curve_of(k, w, a, half, n, x_axis, y_axis, normalize, unit, axes, inplace=True, weights=weights)
    del k, w, a
    yield curve
    del curve  # the caller's reference is the only one left
    a = rowwise(lambda yb, pb: np.abs(yb - pb), y, p)
    yield _curve_of(a, None, a, 1.0, n, x_axis, y_axis, normalize, unit, axes, inplace=True, weights=weights)


def summary_of_curves(
    model: UCCCurve, const: UCCCurve, op: dict[str, float], px: Range, py: Range, c: float
) -> dict:
    """The dict of :func:`ucc_summary` from the two curves, the metrics at ``k = 1`` (``op``), checked
    partial ranges and cost (the streamed UCC, :mod:`uqeval.commands.ucc.stream`, passes curves through a subset
    of the operating points)."""
    return _summary(_curve_part(model, px, py, c), _curve_part(const, px, py), op, px, py, c)


def _curve_part(curve: UCCCurve, px: Range, py: Range, c: float | None = None) -> dict:
    """What a summary takes from one curve: its axes, area, partial area (or None) and, with a cost ``c``,
    its minimum-cost point."""
    partial = None
    if px is not None:
        partial = partial_auucc(curve, x_range=px)
    elif py is not None:
        partial = partial_auucc(curve, y_range=py)
    return {
        "x_axis": curve.x_axis,
        "y_axis": curve.y_axis,
        "normalize": curve.normalize,
        "area": auucc(curve),
        "points": len(curve),
        "partial": partial,
        "op_min": _min_cost_point(curve, c) if c is not None else None,
    }


def _summary(model: dict, const: dict, op: dict[str, float], px: Range, py: Range, c: float) -> dict:
    """The dict of :func:`ucc_summary` from the :func:`_curve_part` of the model and constant curves."""
    x_axis, y_axis = model["x_axis"], model["y_axis"]
    a_m, a_c = model["area"], const["area"]
    points = max(model["points"], const["points"])
    partial = None
    if px is not None or py is not None:
        key, rng = ("x", px) if px is not None else ("y", py)
        assert rng is not None  # px or py is given here
        p_m, p_c = model["partial"], const["partial"]
        partial = {key: [rng[0], rng[1]], "auucc": p_m, "auucc_const": p_c, "gain": _gain(p_c, p_m, points)}
    return {
        "x_axis": x_axis,
        "y_axis": y_axis,
        "normalize": model["normalize"],
        "auucc": a_m,
        "auucc_const": a_c,
        "gain": _gain(a_c, a_m, points),
        "partial": partial,
        "op": _operating_point(1.0, op[x_axis], op[y_axis], c),
        "op_min": model["op_min"],
    }


# --------------------------------------------------------------------------- significance


def _auucc_batch(
    d: np.ndarray, zl: np.ndarray, zu: np.ndarray, x_axis: str, y_axis: str, unit: float
) -> np.ndarray:
    """AUUCC of ``B`` band sets around the same ``d``: ``zl, zu`` are ``(B, N)``."""
    k, w, a = _active(np.broadcast_to(d, zl.shape), zl, zu)
    half = 0.5 * (zl.mean(axis=1) + zu.mean(axis=1))
    ks, m = _sweep(k, w, a, half, (x_axis, y_axis))
    del k, w, a
    seg = np.isfinite(ks[:, 1:])  # both ends finite (ks ascending, inf last)
    x, y = m[x_axis], m[y_axis]
    with np.errstate(invalid="ignore"):  # values at inf scales are masked out
        dx = np.where(seg, np.diff(x, axis=1), 0.0)
        ysum = np.where(seg, y[:, 1:] + y[:, :-1], 0.0)
    area = 0.5 * np.sum(dx * ysum, axis=1)
    if not _INCREASING[x_axis]:
        area = -area  # points are in ascending k, i.e. descending x
    for name in (x_axis, y_axis):
        if name != "missrate":
            area = area / unit
    return area


def _closed_form_applies(x_axis: str, y_axis: str, ka: np.ndarray, kb: np.ndarray) -> bool:
    """Whether :func:`_auucc_closed` gives every permuted AUUCC of the pair ``(ka, kb)``.

    The axes must be bandwidth and miss rate, and no two rows may share a positive finite
    critical scale under any permutation: the pooled candidates (each row's one or two
    distinct values) hold no positive duplicate across rows. Ties at zero (rows with
    ``y == pred``) are allowed: zero is then the smallest scale of every permutation."""
    if {x_axis, y_axis} != {"bandwidth", "missrate"}:
        return False
    pooled = np.concatenate([ka, kb[kb != ka]])
    pooled = pooled[np.isfinite(pooled) & (pooled > 0)]
    pooled.sort()
    return not bool(np.any(pooled[1:] == pooled[:-1]))


def _auucc_closed(k: np.ndarray, half: np.ndarray, x_axis: str, unit: float, any_inf: bool) -> np.ndarray:
    r"""AUUCC of ``B`` bandwidth/miss-rate curves in :math:`O(N)` each, without a sort.

    ``k`` is ``(B, N)`` critical scales, ``half`` the ``(B, N)`` half widths
    :math:`(z^l + z^u)/2`; valid where no two rows share a positive critical scale
    (:func:`_closed_form_applies`). With :math:`M` finite scales, their sum :math:`S`,
    extremes :math:`k_{\min}, k_{\max}`, :math:`n_{\min}` rows at :math:`k_{\min}`,
    :math:`N_\infty = N - M` never-covered rows and mean half width :math:`\bar h`, the
    trapezoid sum of :func:`auucc` telescopes (the miss rate steps by :math:`1/N` at each
    scale above the smallest):

    .. math::

        A_{\text{bandwidth, missrate}} &= \bar h \Big(\tfrac1N \big(S - M k_{\min}
            + N_\infty (k_{\max} - k_{\min})\big) - \tfrac{k_{\max} - k_{\min}}{2N}\Big) \\
        A_{\text{missrate, bandwidth}} &= \tfrac{\bar h}{2N} \big(2S - 2 n_{\min} k_{\min}
            + k_{\min} - k_{\max}\big)

    (the first is :math:`\bar h \int_{k_{\min}}^{k_{\max}} \text{missrate}(k)\,dk` less
    half a step per point). Curves with fewer than two points have area 0. The bandwidth
    axis is divided by ``unit``.
    """
    n = k.shape[1]
    if any_inf:
        fin = np.isfinite(k)
        m = np.count_nonzero(fin, axis=1)
        kmax = np.where(fin, k, -np.inf).max(axis=1)
        s = np.where(fin, k, 0.0).sum(axis=1)
        del fin
    else:
        m = np.full(k.shape[0], n)
        kmax = k.max(axis=1)
        s = k.sum(axis=1)
    kmin = k.min(axis=1)
    h = half.mean(axis=1)
    with np.errstate(invalid="ignore"):  # no finite scale: inf - inf, masked below
        span = kmax - kmin
        if x_axis == "bandwidth":
            area = h * ((s - m * kmin + (n - m) * span) / n - span / (2 * n))
        else:
            n_min = np.count_nonzero(k == kmin[:, None], axis=1)
            area = h * (2 * s - 2 * n_min * kmin - span) / (2 * n)
    area[m < 2] = 0.0
    return area / unit


def permutation_key(
    y: np.ndarray, err: np.ndarray, lows: Sequence[np.ndarray], highs: Sequence[np.ndarray]
) -> int:
    """The data key of the permutation test's draws: the
    :func:`~uqeval.metrics.calibration_tests.data_key` of the targets, the errors ``y - pred`` and every
    model's band widths below and above the prediction (validated float64 arrays)."""
    from .calibration_tests import data_key

    return data_key(y, err, *lows, *highs)


def _permutation_options(n_permutations: int, bands: Sequence[tuple], names: Sequence[str] | None):
    """The checked ``(n_permutations, bands, names)`` of :func:`permutation_test`."""
    n_perm = int(n_permutations)
    if n_perm < 1:
        raise UsageError(f"n_permutations must be >= 1, got {n_permutations}")
    bands = list(bands)
    if len(bands) < 2:
        raise UsageError(f"the permutation test needs at least 2 models, got {len(bands)}")
    if names is None:
        names = [f"model_{i}" for i in range(len(bands))]
    names = [str(s) for s in names]
    if len(names) != len(bands):
        raise UsageError(f"{len(names)} names given for {len(bands)} models")
    return n_perm, bands, names


def _permuted_hits(
    rng: np.random.Generator,
    n_perm: int,
    batch: int,
    d: np.ndarray,
    a: tuple[np.ndarray, ...],
    b: tuple[np.ndarray, ...],
    x_axis: str,
    y_axis: str,
    unit: float,
    obs: float,
    progress: Callable[[int], None] | None,
) -> int:
    """How many of ``n_perm`` permutations of the bands of models ``a`` and ``b`` (each ``(critical scales,
    half widths, zl, zu)``) give an AUUCC difference at least as large as the observed ``obs`` (in batches
    of ``batch``): the count of :func:`permutation_test`'s p-value."""
    closed = _closed_form_applies(x_axis, y_axis, a[0], b[0])
    any_inf = closed and not (np.isfinite(a[0]).all() and np.isfinite(b[0]).all())
    if closed:  # the observed difference in the same arithmetic as the permuted ones
        two = _auucc_closed(np.stack([a[0], b[0]]), np.stack([a[1], b[1]]), x_axis, unit, any_inf)
        obs = float(two[0] - two[1])
    thresh = abs(obs) * (1.0 - 1e-12)

    def area(swap: np.ndarray, first: tuple[np.ndarray, ...], second: tuple[np.ndarray, ...]) -> np.ndarray:
        """The areas of the model with ``first``'s bands where not swapped (``second``'s where swapped)."""
        if closed:
            pick = [np.where(swap, second[k], first[k]) for k in (0, 1)]
            return _auucc_closed(pick[0], pick[1], x_axis, unit, any_inf)
        pick = [np.where(swap, second[k], first[k]) for k in (2, 3)]
        return _auucc_batch(d, pick[0], pick[1], x_axis, y_axis, unit)

    hits = done = 0
    while done < n_perm:
        bsz = min(batch, n_perm - done)
        swap = rng.random((bsz, d.size)) < 0.5
        diff = area(swap, a, b) - area(swap, b, a)
        del swap
        hits += int(np.count_nonzero(np.abs(diff) >= thresh))
        done += bsz
        if progress is not None:
            progress(bsz)
    return hits


def permutation_test(
    y_true,
    pred,
    bands: Sequence[tuple],
    n_permutations: int = 1000,
    seed: int = 0,
    x_axis: str = "bandwidth",
    y_axis: str = "missrate",
    normalize: str = "std",
    names: Sequence[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict:
    r"""Paired permutation test of AUUCC differences between models (paper Sec. 2.3, Dwass 1957).

    ``progress(k)``, if given, is called after each batch of ``k`` permutations of a pair.

    For each pair of models :math:`(a, b)` sharing ``y_true`` and ``pred``, every
    permutation swaps each row's bands between the two models with probability 1/2 and
    recomputes :math:`\Delta^* = A_a^* - A_b^*`. Two-sided p-value with the +1 correction

    .. math:: p = \frac{1 + \#\{|\Delta^*| \ge |\Delta_{\text{obs}}|\}}{1 + n_{\text{perm}}}

    (ties are counted with a relative tolerance of 1e-12, so a permutation that reproduces
    the observed bands always counts). Because both models share :math:`\hat y`, they
    share the constant-band reference, so this also tests their gain difference. Models
    with different predictions are not comparable on one UCC (paper Sec. 2.3, App. 10)
    and are not supported: pass the bands around one common ``pred``.

    Cost: ``n_permutations`` x pairs x 2 curves, computed in vectorised batches of about two
    million elements. On the bandwidth/miss-rate axes (the default), when no two rows can
    share a positive critical scale (continuous data), each permuted area is a closed form
    of sums and extremes (:func:`_auucc_closed`, :math:`O(N)`, no sort); otherwise each curve
    costs :math:`O(N \log N)` (a value sort where the axes need no widths). Both give the
    same areas up to floating-point rounding. Reproducible for one data set and seed, and
    different between data sets: pair ``p`` (in the order of ``itertools.combinations``) draws
    from ``numpy.random.default_rng(keyed_seed_sequence(seed, key).spawn(n_pairs)[p])`` with
    ``key`` = :func:`permutation_key` (the targets, the errors and every model's band) (:func:`~uqeval.metrics.calibration_tests.keyed_seed_sequence`).

    Parameters
    ----------
    bands : list of ``(lower, upper)`` pairs of (N,) arrays, one per model (>= 2).
    names : model names (default ``model_0``, ``model_1``, ...).

    Returns
    -------
    dict with ``x_axis``, ``y_axis``, ``normalize``, ``n_permutations``, ``seed``,
    ``names``, ``auucc`` (list per model), ``pairs`` (list of ``{"a", "b", "auucc_a",
    "auucc_b", "diff", "p_value"}``) and ``p_values`` (models x models list of lists,
    1.0 on the diagonal).
    """
    _check_axes(x_axis, y_axis)
    _check_normalize(normalize)
    n_perm, bands, names = _permutation_options(n_permutations, bands, names)
    zls, zus = [], []
    for lo, hi in bands:
        y, d, zl, zu = _validate(y_true, pred, lo, hi)
        zls.append(zl)
        zus.append(zu)
    unit = _unit(y, normalize)
    n = d.size
    area = [float(_auucc_batch(d, zl[None], zu[None], x_axis, y_axis, unit)[0]) for zl, zu in zip(zls, zus)]
    pairs_idx = list(combinations(range(len(bands)), 2))
    from .calibration_tests import keyed_seed_sequence, monte_carlo_p

    # the draws come from the seed and the data (every model's band), so they differ between data sets
    children = keyed_seed_sequence(seed, permutation_key(y, d, zls, zus)).spawn(len(pairs_idx))
    batch = max(1, _BATCH_ELEMENTS // n)
    pmat = [[1.0] * len(bands) for _ in bands]
    pairs = []
    scales = [_active(d, zl, zu)[0] for zl, zu in zip(zls, zus)]
    halves = [0.5 * (zl + zu) for zl, zu in zip(zls, zus)]
    for (i, j), child in zip(pairs_idx, children):
        obs = area[i] - area[j]
        hits = _permuted_hits(
            np.random.default_rng(child),
            n_perm,
            batch,
            d,
            (scales[i], halves[i], zls[i], zus[i]),
            (scales[j], halves[j], zls[j], zus[j]),
            x_axis,
            y_axis,
            unit,
            obs,
            progress,
        )
        p = monte_carlo_p(hits, n_perm)
        pmat[i][j] = pmat[j][i] = p
        pairs.append(
            {"a": names[i], "b": names[j], "auucc_a": area[i], "auucc_b": area[j], "diff": obs, "p_value": p}
        )
    return {
        "x_axis": x_axis,
        "y_axis": y_axis,
        "normalize": normalize,
        "n_permutations": n_perm,
        "seed": int(seed),
        "names": names,
        "auucc": area,
        "pairs": pairs,
        "p_values": pmat,
    }
