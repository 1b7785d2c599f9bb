"""``uqeval monitor``: the catalogue's metrics per time window and cumulatively, and anytime-valid tests.

The monitor's state (:class:`Windows`; two models side by side: :class:`Pair`) is a fold the engines run
(:mod:`uqeval.commands.monitor.stream`): each record batch is split by window and every part updates its
window's mergeable state
(:func:`uqeval.catalogue.states.batch_state`, the states of ``score --engine stream``: no metric is written
here). A window's metrics are :func:`~uqeval.catalogue.states.finalize` of its state, so they equal ``score`` on
that window's rows; the cumulative metrics are the merge of all windows. The tests
(:mod:`uqeval.metrics.sequential`) need a few sums per window (rows, misses per level, PIT log-sums), and are
evaluated at the end of each window from the cumulative sums.

Windows
-------
``--window N`` (an integer): consecutive blocks of N rows in read order, ``[k N, (k + 1) N)`` by row number
(dropped rows count). ``--window 1D`` / ``7D`` / ``1h`` / ``30min`` / ``15s`` / ``2W``: half-open time
intervals ``[origin + k span, origin + (k + 1) span)`` of the ``--time`` column, aligned to ``origin``
(default 1970-01-01T00:00:00, the Unix epoch: ``1D`` windows are calendar days of the column's clock,
``7D`` windows start on Thursdays unless ``--origin`` says otherwise). Time-zone-aware columns are taken
in UTC. Rows need not be sorted: each row goes to its window whatever its position.

A window has no rows in a window table when no row fell in it (windows without rows are not listed).
The metrics that need a second pass over the rows (exact MdAE) are left out: a monitor reads each row once,
so that a resumed run needs only the new rows.

Rows counted once
-----------------
A saved state (``--state``) records what it has counted (:class:`Seen`): the latest time of the rows counted
(the *mark*; time windows) and a fingerprint of every input file read (:func:`input_fingerprint`). A resumed
run does not count a row at or before the mark (ties included: a row at exactly the mark counted, so
re-reading a file is idempotent) nor a file whose fingerprint the state holds; without ``skip_seen`` such a
run is refused, with it those rows are left out and a note says how many.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import pickle
import re
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ...catalogue import coverage_levels, lookup, rows, states
from ...catalogue.states import pack
from ...config import Settings
from ...errors import InputError, UsageError, option
from ...metrics.intervals import level_key
from ...metrics.sequential import mean_sums, pit_bin_log_sums, pit_mean_sums, pit_sums
from ...text import plain
from ...weights import drop_zero

SCHEMA = "uqeval.monitor/1"
#: a state file: a pickled ``{"format", "sha256", "payload"}`` whose payload (the pickled state) must match
#: its checksum (a file edited by hand or cut short is refused); states saved before have the format ``/1``
#: and are the payload itself
STATE_FORMAT = "uqeval.monitor-state/2"
STATE_FORMAT_1 = "uqeval.monitor-state/1"

_UNITS = {"s": 1, "min": 60, "h": 3600, "H": 3600, "D": 86400, "d": 86400, "W": 7 * 86400, "w": 7 * 86400}
_SPAN = re.compile(r"^\s*(\d+)\s*(s|min|h|H|D|d|W|w|rows?)?\s*$")
NS = 1_000_000_000


def parse_window(span: str | int) -> tuple[str, int]:
    """``("rows", N)`` or ``("time", nanoseconds)`` of a ``--window`` value."""
    m = _SPAN.match(str(span))
    if m is None or int(m.group(1)) < 1:
        raise UsageError(
            f"{option('window', str(span))} is not a window: give a number of rows (1000) or a time span "
            "such as 1D, 7D, 1h, 30min, 15s, 2W"
        )
    n, unit = int(m.group(1)), m.group(2)
    if unit is None or unit.startswith("row"):
        return "rows", n
    return "time", n * _UNITS[unit] * NS


def parse_origin(origin: str | None) -> int:
    """Nanoseconds since the epoch of ``--origin`` (an ISO date or time; default the epoch)."""
    if origin is None:
        return 0
    try:
        return int(np.datetime64(origin, "ns").astype(np.int64))
    except ValueError:
        raise UsageError(
            f"{option('origin', origin)} is not a date or time; give it as 2024-01-01 or 2024-01-01T06:00"
        ) from None


def time_ns(values: Any, column: str, where: str, offset: int) -> np.ndarray:
    """Nanoseconds since the epoch (int64) of a time column (a pyarrow array of timestamps, dates or
    ISO strings, or numpy datetime64)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = np.asarray(values)
        if values.dtype.kind == "M":  # any unit (datetime64[h], [D], [m]): Arrow takes s, ms, us and ns only
            values = values.astype("datetime64[ns]")
    arr = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(values)
    t = arr.type
    try:
        if pa.types.is_timestamp(t):
            arr = arr.cast(pa.timestamp("ns", tz=t.tz)) if t.unit != "ns" else arr
        elif pa.types.is_date(t):
            arr = arr.cast(pa.timestamp("ns"))
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            arr = pc.cast(arr, pa.timestamp("ns"))
        else:
            raise InputError(
                f"{where}: time column '{column}' holds {t}, not times; give it as timestamps or ISO "
                f"strings (2024-01-31T12:00), or use {option('window', 'N')} (rows)"
            )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        bad = _first_unparsed(arr)
        raise InputError(
            f"{where}: time column '{column}' has a value that is not a time at row {offset + bad} "
            f"({plain(str(arr[bad]))[:40]!r}); give ISO dates or times such as 2024-01-31T12:00"
        ) from None
    if arr.null_count:
        first = int(np.flatnonzero(np.asarray(pc.is_null(arr)))[0])
        raise InputError(
            f"{where}: time column '{column}' has {arr.null_count} missing value(s) (first at row "
            f"{offset + first}); every row needs a time"
        )
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.cast(pa.int64()).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)  # no pandas


def _first_unparsed(arr) -> int:
    """Index of the first string of ``arr`` that does not cast to a timestamp (bisection: log2(N) casts)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def ok(lo: int, hi: int) -> bool:
        try:
            pc.cast(arr.slice(lo, hi - lo), pa.timestamp("ns"))
            return True
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return False

    lo, hi = 0, len(arr)  # arr[lo:hi] holds a bad value
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(lo, mid):
            lo = mid
        else:
            hi = mid
    return lo


#: families a window finishes only when asked (``adversarial_windows``): their seeded random-subset draws cost
#: ~7 ms per window whatever its rows (Generator.multivariate_hypergeometric, which cannot be vectorised across
#: windows without changing the draws), so a monitor of many small windows would spend most of its time there;
#: the cumulative metrics always have them
WINDOW_OPT_IN = {
    "adv_group_calibration": "per window only with --adversarial-windows (its random-subset draws cost ~7 ms a "
    "window); the cumulative metrics have it",
}


class Layout:
    """How rows map to windows: ``kind`` ``"rows"`` or ``"time"``, ``span`` (rows or ns), ``origin`` (ns)."""

    def __init__(
        self, window: str | int, time: str | None, origin: str | None = None, adversarial: bool = False
    ) -> None:
        self.window = str(window)
        self.adversarial = adversarial
        #: the families the windows leave out (WINDOW_OPT_IN; the cumulative metrics have them)
        self.skip: frozenset[str] = frozenset() if adversarial else frozenset(WINDOW_OPT_IN)
        self.kind, self.span = parse_window(window)
        self.time = time
        self.origin = parse_origin(origin)
        self.origin_text = origin
        if self.kind == "time" and not time:
            raise UsageError(
                f"{option('window', str(window))} is a time span: name the time column with "
                f"{option('time', 'COLUMN')}"
            )

    def keys(self, n_raw: int, offset: int, times: np.ndarray | None) -> np.ndarray:
        """The window number of each raw row of a batch."""
        if self.kind == "rows":
            return (offset + np.arange(n_raw, dtype=np.int64)) // self.span
        assert times is not None
        return (times - self.origin) // self.span

    def bounds(self, key: int) -> tuple[Any, Any]:
        """``[start, end)`` of window ``key``: row numbers, or ISO times."""
        if self.kind == "rows":
            return key * self.span, (key + 1) * self.span
        start = self.origin + key * self.span
        return _iso(start), _iso(start + self.span)

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "window": self.window,
            "time": self.time,
            "origin": self.origin_text or "1970-01-01T00:00:00",
        }
        if self.adversarial:  # a state saved with it finished its windows with it
            out["adversarial_windows"] = True
        return out


def _iso(ns: int) -> str:
    text = (
        str(np.datetime64(int(ns), "ns").astype("datetime64[s]"))
        if ns % NS == 0
        else str(np.datetime64(int(ns), "ns"))
    )
    return text


# --------------------------------------------------------------------------- the tests' sums


def _covered(pred, settings: Settings, level: float) -> np.ndarray | None:
    """The per-row coverage indicator at ``level`` from the catalogue's per-row form."""
    for path in ("coverage.coverage", "prediction_sets.coverage"):
        metric = lookup(path)
        if metric is None or not metric.applies_to(pred.kind):
            continue
        try:
            stat = rows(metric, pred, settings, level_key(level))
        except (KeyError, ValueError):
            stat = None
        if stat is not None and stat.score is not None:
            return stat.score
    return None


def test_levels(pred, settings: Settings) -> list[float]:
    try:
        levels = coverage_levels(pred, settings)
    except (InputError, KeyError):
        return []
    if not levels:  # classifiers: prediction sets at --levels (default 0.95), as the prediction_sets family
        levels = list(settings.levels or (0.95,))
    return [lv for lv in levels if _covered(pred.subset(slice(0, min(pred.n, 1))), settings, lv) is not None]


#: representations whose PIT is continuous (uniform under calibration)
PIT_KINDS = ("gaussian",)
#: representations whose PIT is known up to a bin (an ensemble's rank, the bin between carried quantiles): their
#: PIT tests take the randomised PIT's expectations given the bin (:func:`~uqeval.metrics.sequential.pit_bin_log_sums`)
BIN_PIT_KINDS = ("samples", "quantiles", "intervals")


def pit_bins(pred) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)``: the bin of each row's PIT (an ensemble's rank over M + 1; the carried quantile levels that
    bracket the target; for intervals the levels (1 -/+ level)/2 of its central levels)."""
    return cast("tuple[np.ndarray, np.ndarray]", pred.pit_bounds())  # (the containers': computed once)


def test_sums(pred, settings: Settings, levels: list[float]) -> dict[str, Any]:
    """The sums the tests need from some rows: misses per level (an ensemble's randomised-PIT miss chances,
    :meth:`~uqeval.predictions.Prediction.coverage_shares`), the PIT's log-sums (continuous PIT) or its Beta
    bets' log factors (a PIT known up to a bin), and the mean PIT's moments."""
    miss = np.array(
        [pred.n - float(np.sum(cast("np.ndarray", _covered(pred, settings, lv)))) for lv in levels]
    )
    out: dict[str, Any] = {"n": pred.n, "miss": miss}
    if pred.kind in PIT_KINDS:
        u = pred.pit()
        out["pit"] = pit_sums(u)
        out["pit_mean"] = pit_mean_sums(u)
    elif pred.kind in BIN_PIT_KINDS and pred.y_true is not None:
        lo, hi = pit_bins(pred)
        out["pit_bins"] = pit_bin_log_sums(lo, hi)
        out["pit_mean"] = pit_mean_sums(lo, hi)
    return out


def _merge_sums(a: dict[str, Any] | None, b: dict[str, Any]) -> dict[str, Any]:
    """Two windows' test sums added (a state saved before a test existed lacks its sums: the other's are kept)."""
    if a is None:
        return b
    return {k: a[k] + b[k] if k in a and k in b else a[k] if k in a else b[k] for k in {**a, **b}}


# --------------------------------------------------------------------------- windows of states


#: closed-window states kept unmerged at most (the balanced merge of Windows._close): memory stays bounded by
#: MAX_OPEN_WINDOWS + MAX_CLOSED states however many windows
MAX_CLOSED = 6

#: windows whose states the stream engine keeps at most (the latest ones); older windows are finished
#: (their metrics computed, their state merged into the running total) so that memory stays bounded when rows
#: come in time order: a Gaussian window of many rows holds ~28 MB of histograms
MAX_OPEN_WINDOWS = 8


def _runs(keys: np.ndarray) -> tuple[np.ndarray, list, np.ndarray]:
    """``(window keys, rows of each, counts)`` of a batch: slices (views, no sort) when the keys do not
    decrease (rows in time order), else sorted index arrays."""
    if keys.size and np.all(keys[1:] >= keys[:-1]):
        cuts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
        starts = np.concatenate([[0], cuts])
        ends = np.concatenate([cuts, [keys.size]])
        return keys[starts], [slice(int(a), int(b)) for a, b in zip(starts, ends)], ends - starts
    order = np.argsort(keys, kind="stable")
    wk, starts, n_in = np.unique(keys[order], return_index=True, return_counts=True)
    return wk, [np.sort(order[a : a + c]) for a, c in zip(starts, n_in)], n_in


def has_rows(state: dict[str, Any]) -> bool:
    """Whether a state counts anything: rows, or (weighted) rows of weight 0."""
    return bool(state["n"] or state.get("n_zero"))


def finish_window(state: Any, settings: Settings, skip: frozenset[str] = frozenset()) -> tuple[dict, dict]:
    """``(metrics, orientation)`` of one window's (packed or dense) state, without the families ``skip``
    (a weighted state: its weighted metrics)."""
    from ...io.writers import jsonable

    if skip:
        state = {**state, "families": {k: v for k, v in state["families"].items() if k not in skip}}
    metrics, orientation = states.finalize(state, settings)
    return jsonable(metrics), orientation


def group_metrics(
    groups: dict[str, Any], settings: Settings, skip: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """``{label: {n_rows, metrics}}`` of a window's ``--by`` states (labels sorted), as ``score --by`` reports
    its groups; already-finished groups (dicts with ``metrics``) are returned as they are."""
    out = {}
    for label in sorted(groups):
        g = groups[label]
        if isinstance(g, dict) and "metrics" in g and "families" not in g:
            out[label] = g
            continue
        metrics, _ = finish_window(g, settings, skip)
        out[label] = {"n_rows": int(g["n"]), "metrics": metrics}
    return out


# --------------------------------------------------------------------------- what a state has counted

#: bytes read from each end of an input file for its fingerprint
EDGE_BYTES = 1 << 16


def input_fingerprint(f: Any) -> dict[str, Any]:
    """``{path, size, mtime_ns, sha256}`` of one input file (local or a URI): the SHA-256 of its size and of
    its first and last :data:`EDGE_BYTES` bytes (two reads, whatever the file's size). Two files are the same
    input when their sizes and hashes are equal; the path and modification time are recorded for messages.

    A change in the middle of a file larger than 128 KiB that keeps its size and both ends escapes it; a
    re-exported file of the same rows usually differs in a header, a footer or the first rows' times."""
    from ...io.uri import is_uri

    where = str(f)
    try:
        if is_uri(where):
            size, mtime, head, tail = _remote_edges(where)
        else:
            with open(f, "rb") as fh:
                st = os.fstat(fh.fileno())
                size, mtime = st.st_size, st.st_mtime_ns
                head = fh.read(EDGE_BYTES)
                fh.seek(max(0, size - EDGE_BYTES))
                tail = fh.read(EDGE_BYTES)
    except InputError:
        raise
    except (OSError, ValueError, NotImplementedError) as exc:  # pyarrow's errors of a remote store too
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise InputError(
            f"{where}: cannot read it to fingerprint it for {option('state')} ({plain(why)})"
        ) from None
    digest = hashlib.sha256(size.to_bytes(8, "little") + head + tail).hexdigest()
    return {"path": where, "size": int(size), "mtime_ns": mtime, "sha256": digest}


def memory_fingerprint(name: str, pred: Any, n_raw: int, n_dropped: int, times: Any) -> dict[str, Any]:
    """The fingerprint of a table given in memory (``uqeval.monitor(data, state=...)``), which has no file:
    the SHA-256 of its prediction's arrays, its times and its row counts (one pass over the arrays)."""
    arrays = [np.asarray([n_raw, n_dropped])]
    arrays += [] if pred is None else [getattr(pred, k) for k in pred._array_fields()]
    arrays += [] if times is None else [times]
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(repr(a.tolist()).encode() if a.dtype.kind == "O" else a.tobytes())  # labels as text
    return {
        "path": name,
        "size": int(sum(np.asarray(a).nbytes for a in arrays)),
        "mtime_ns": None,
        "sha256": h.hexdigest(),
    }


def _remote_edges(uri: str) -> tuple[int, int | None, bytes, bytes]:
    from ...io import remote
    from ...io.source import filesystem

    fs, path = filesystem(uri)

    def edges():
        info = fs.get_file_info(path)
        size = int(info.size or 0)
        with fs.open_input_file(path) as fh:
            head = fh.read_at(min(EDGE_BYTES, size), 0)
            tail = fh.read_at(min(EDGE_BYTES, size), max(0, size - EDGE_BYTES))
        return size, info.mtime_ns, bytes(head), bytes(tail)

    return remote.call(uri, edges, limit=remote.deadline())


class Seen:
    """What a monitor state has counted, so that a resumed run counts no row twice.

    Saved with the state: ``mark``, the latest time of the rows counted (ns since the epoch; time windows
    only, None before any), and ``inputs``, the fingerprints (:func:`input_fingerprint`) of the input files
    read, each with its ``n_rows``. About this run only: ``prior``, the resumed state's mark (a row at or
    before it was counted: it is left out of the windows and counted in ``n_old``, ``n_tie`` of them at
    exactly the mark), ``rows`` (raw rows read per file), ``new`` (the fingerprints of the files read) and
    ``skipped`` (the saved fingerprints of the files left out because the state had read them)."""

    def __init__(self, mark: int | None = None, inputs: list[dict[str, Any]] | None = None) -> None:
        self.mark = mark
        self.inputs = list(inputs or [])
        self.prior = mark
        self.source = "the state"  # the state file, for messages
        self.n_counted = 0  # rows the resumed state counted (its windows' n_rows)
        self.n_old = self.n_tie = 0
        self.rows: dict[str, int] = {}
        self.new: list[dict[str, Any]] = []
        self.skipped: list[dict[str, Any]] = []

    def add_times(self, times: np.ndarray) -> np.ndarray | None:
        """The rows of ``times`` (ns) not counted yet (a mask; None: all of them); moves the mark."""
        fresh = None
        if self.prior is not None:
            old = times <= self.prior
            n_old = int(np.count_nonzero(old))
            if n_old:
                self.n_old += n_old
                self.n_tie += int(np.count_nonzero(times == self.prior))
                fresh = ~old
        new = times if fresh is None else times[fresh]
        if new.size:
            top = int(new.max())
            self.mark = top if self.mark is None else max(self.mark, top)
        return fresh

    def merge(self, other: Seen) -> Seen:
        marks = [m for m in (self.mark, other.mark) if m is not None]
        out = Seen(max(marks) if marks else None, self.inputs + other.inputs)
        out.prior = self.prior if self.prior is not None else other.prior
        out.source = self.source if self.source != "the state" else other.source
        out.n_counted = self.n_counted + other.n_counted
        out.n_old, out.n_tie = self.n_old + other.n_old, self.n_tie + other.n_tie
        out.rows = {k: self.rows.get(k, 0) + other.rows.get(k, 0) for k in {**self.rows, **other.rows}}
        out.new, out.skipped = self.new + other.new, self.skipped + other.skipped
        return out

    def saved(self) -> dict[str, Any]:
        """The fields a state file keeps: the mark and every input read, this run's included."""
        read = [{**fp, "n_rows": int(self.rows.get(fp["path"], 0))} for fp in self.new]
        return {"mark": self.mark, "inputs": self.inputs + read}

    def check_inputs(self, files: list, skip_seen: bool) -> set[str]:
        """Fingerprint this run's input ``files``: the paths of those the state has read, to leave out with
        ``skip_seen`` (refused without it)."""
        return self.check_prints([input_fingerprint(f) for f in files], skip_seen)

    def check_prints(self, prints: list[dict[str, Any]], skip_seen: bool) -> set[str]:
        """:meth:`check_inputs` of fingerprints already taken."""
        counted = {(fp["size"], fp["sha256"]): fp for fp in self.inputs}
        skip: set[str] = set()
        for fp in prints:
            old = counted.get((fp["size"], fp["sha256"]))
            if old is None:
                self.new.append(fp)
            else:
                skip.add(fp["path"])
                self.skipped.append(old)
        if skip and not skip_seen:
            first = self.skipped[0]
            path = next(fp["path"] for fp in prints if fp["path"] in skip)
            more = f" and {len(skip) - 1} other file(s)" if len(skip) > 1 else ""
            same = "" if first["path"] == path else f", the same size and content as {first['path']}"
            raise InputError(
                f"{path}{more}: already counted by {self.source} ({first['n_rows']} row(s) read by an earlier "
                f"run{same}); give only new rows, or {option('skip_seen')} to leave out what it counted"
            )
        return skip

    def note(self) -> str | None:
        """What ``skip_seen`` left out, or None."""
        parts = []
        if self.skipped:
            n = sum(int(fp["n_rows"]) for fp in self.skipped)
            names = ", ".join(fp["path"] for fp in self.skipped[:3]) + (
                ", ..." if len(self.skipped) > 3 else ""
            )
            parts.append(f"{n} row(s) of {len(self.skipped)} input(s) it had read ({names})")
        if self.n_old:
            assert self.prior is not None
            parts.append(f"{self.n_old} row(s) at or before its latest time {_iso(self.prior)}")
        if not parts:
            return None
        return f"{option('skip_seen')}: left out {' and '.join(parts)}, already counted by {self.source}"

    def refuse_old(self, where: str) -> InputError:
        """The error of a run that brings rows at or before the mark without ``skip_seen``."""
        assert self.prior is not None
        n = sum(self.rows.values())
        what = f"all {n} rows are" if self.n_old == n else f"{self.n_old} of its {n} rows are"
        # every row left out at exactly the mark: a time split between two runs, not an overlap
        tie = (
            " (all exactly at that time: rows of one time must come in one run)"
            if self.n_tie == self.n_old
            else ""
        )
        return InputError(
            f"{where}: {what} at or before {_iso(self.prior)}, the latest time {self.source} counted "
            f"({self.n_counted} row(s) up to then){tie}; give only the rows after it, or "
            f"{option('skip_seen')} to leave out the rows already counted"
        )


@dataclass(frozen=True)
class RunPlan:
    """What the states of one run know before they read a row (:func:`uqeval.commands.monitor.stream.plan_run`).

    ``base``: raw rows of earlier runs (row windows continue their numbering); ``prior``: the resumed state's
    mark (:class:`Seen`); ``held``: windows no state of this run finishes (a resumed state's open windows,
    which the merge with it needs open; on Dask the latest, which a later run may add to); ``finished``: the
    windows the resumed state finished (a row for one is refused); on Dask, per task (the engine's
    ``parts``), ``starts`` its first global row and ``ranges`` the window keys ``[lo, hi]`` its rows can fall
    in: a window is finished once the states merged hold every task whose range holds it."""

    base: int = 0
    prior: int | None = None
    held: frozenset[int] = frozenset()
    finished: frozenset[int] = frozenset()
    starts: tuple[int, ...] = ()
    ranges: tuple[tuple[float, float], ...] = ()


class Windows:
    """The mergeable state of a monitor run: per window its metric state (packed), raw and dropped row
    counts and the tests' sums. Two of them merge window by window (associative); a record batch is folded
    in by :meth:`add` (the engine's fold: :func:`uqeval.engine.fold.over_rows`), with ``plan`` saying which
    windows it may finish (:class:`RunPlan`).

    A *closed* window (:meth:`close_old`) keeps its finished metrics (``metrics``, ``orientation``) and its
    tests' sums, its state (``None``) merged into ``total``; a row for it afterwards is an error."""

    def __init__(self, layout: Layout, settings: Settings, plan: RunPlan | None = None) -> None:
        self.layout = layout
        self.settings = settings
        self.plan = plan or RunPlan()
        self.parts: frozenset[int] = frozenset()  # the tasks (plan.starts) whose rows this state holds
        self.skip = layout.skip  # families the windows leave out (WINDOW_OPT_IN)
        self.windows: dict[int, dict[str, Any]] = {}
        self.levels: list[float] | None = None
        self.kind: str | None = None
        self.signature: tuple | None = None
        self.columns: dict[str, Any] | None = None
        self.first_file: str | None = None
        self.n_fixed = self.n_members_dropped = 0
        # raw rows of earlier runs (a resumed state): row windows continue their numbering
        self.base = self.plan.base
        self.n_seen = 0  # raw rows read, this run and earlier ones
        self.seen = Seen()  # what the state counted (the mark, the inputs read) and what this run left out
        self.seen.prior = self.plan.prior
        # the closed windows' states, merged as a balanced tree (a stack whose sizes at least double from top
        # to bottom, timsort's rule): merging each small window into one big total costs O(total bins) per
        # window (2**20-bin histograms), the tree O(window bins x log windows)
        self._closed: list[dict[str, Any]] = []

    @property
    def total(self) -> dict[str, Any]:
        """The merged state of the closed windows."""
        while len(self._closed) > 1:
            b = self._closed.pop()
            self._closed[-1] = states.merge(self._closed[-1], b)
        return self._closed[0] if self._closed else states.init()

    @total.setter
    def total(self, value: dict[str, Any]) -> None:
        self._closed = [value] if has_rows(value) else []

    def _close(self, st: dict[str, Any]) -> None:
        stack = self._closed
        stack.append(st)
        while len(stack) > 1 and (stack[-2]["n"] <= 2 * stack[-1]["n"] or len(stack) > MAX_CLOSED):
            b = stack.pop()
            stack[-1] = states.merge(stack[-1], b)

    def _window(self, key: int, where: str = "") -> dict[str, Any]:
        w = self.windows.get(key)
        if w is None and key not in self.plan.finished:
            w = self.windows[key] = {"n_rows": 0, "n_dropped": 0, "state": states.init(), "tests": None}
        elif w is None or w["state"] is None:
            start, end = self.layout.bounds(key)
            raise InputError(
                f"{where}: rows of the window [{start}, {end}) come after that window was finished (the monitor "
                f"keeps the latest {MAX_OPEN_WINDOWS} windows open, or it was finished by an earlier run "
                f"saved with {option('state')}); give the rows in time order"
            )
        return w

    def held(self, key: int) -> bool:
        """Whether window ``key`` must stay open: the plan holds it, or a task whose rows this state does not
        hold may have rows of it (:class:`RunPlan`)."""
        return key in self.plan.held or any(
            lo <= key <= hi for i, (lo, hi) in enumerate(self.plan.ranges) if i not in self.parts
        )

    def close_old(self, keep: int | None = None) -> None:
        """Finish all but the latest ``keep`` open windows: their metrics are computed now and their states
        merged into :attr:`total` (memory stays bounded by ``keep`` window states). Windows :meth:`held`
        stays open and do not count."""
        keep = MAX_OPEN_WINDOWS if keep is None else keep
        open_keys = sorted(k for k, w in self.windows.items() if w["state"] is not None and not self.held(k))
        for key in open_keys[: max(0, len(open_keys) - keep)]:
            self.finish(key)

    def finish(self, key: int) -> None:
        """Finish window ``key``: its metrics computed from its packed state (the histograms' finishing steps
        read the non-zero bins only), its state merged into :attr:`total`."""
        w = self.windows[key]
        st = w["state"]
        if st["n"]:
            w["metrics"], w["orientation"] = finish_window(st, self.settings, self.skip)
            self._close(st)
            if "groups" in w:
                w["groups"] = group_metrics(w["groups"], self.settings, self.skip)
        else:
            if has_rows(st):  # weighted: rows of weight 0 only (counted in weights.n_zero)
                self._close(st)
            w["metrics"], w["orientation"] = {}, {}
        w["state"] = None

    def add(self, piece: Any) -> None:
        """Fold one record batch in (a :class:`~uqeval.engine.fold.Piece`), then finish the windows that
        memory cannot keep open (:meth:`close_old`)."""
        self.add_rows(piece.batch, piece.rows, piece.offset, piece.extra, piece.file)
        self.close_old()

    def add_rows(
        self, batch, n_raw: int, offset: int, extra: dict[str, Any], where: str
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Fold one record batch in; returns the window of each kept row (None when no row was kept) and which
        rows of the batch's prediction they are (None: all of them; rows the resumed state counted, at or
        before its mark, are left out: :class:`Seen`)."""
        from ...engine.local import row_signature

        if self.plan.starts:  # the task of these rows (Dask)
            self.parts |= {bisect.bisect_right(self.plan.starts, offset) - 1}
        lay = self.layout
        times = time_ns(extra[lay.time], lay.time, where, offset) if lay.kind == "time" and lay.time else None
        raw_keys = lay.keys(n_raw, self.base + offset, times)
        self.n_seen += n_raw
        self.seen.rows[str(where)] = self.seen.rows.get(str(where), 0) + n_raw
        fresh = self.seen.add_times(times) if times is not None else None
        if fresh is not None and fresh.all():
            fresh = None
        if fresh is None or fresh.any():  # a batch that straddles the mark keeps its counts whole (rare)
            self.n_members_dropped += batch.n_members_dropped
        uk, _, counts = _runs(raw_keys if fresh is None else raw_keys[fresh])
        for key, c in zip(uk.tolist(), counts.tolist()):
            self._window(key, where)["n_rows"] += c
        pred = batch.prediction
        kept = np.zeros(len(uk), dtype=np.int64)
        keys = sel = None
        if pred is not None:
            sig = row_signature(pred)
            if self.signature is None:
                self.signature, self.columns, self.first_file, self.kind = (
                    sig,
                    batch.columns,
                    str(where),  # text: standard input's file is a StdinFile, which a state file cannot hold
                    pred.kind,
                )
                self.levels = test_levels(pred, self.settings)
            elif sig != self.signature or pred.kind != self.kind:
                raise InputError(
                    f"{where}: rows from global row {int(pred.row_numbers()[0])} on have per-row shapes "
                    f"{dict(sig)}, but {self.first_file} has {dict(self.signature)}; every row needs the same "
                    "number of members, classes and levels"
                )
            at = pred.row_numbers() - offset
            if fresh is not None:  # rows the state counted: left out
                sel = np.flatnonzero(fresh[at])
                at = at[sel]
            if sel is None or sel.size:  # whole for a batch that straddles the mark: no per-row flag is kept
                self.n_fixed += int(getattr(pred, "n_fixed", 0) or 0)
            keys = raw_keys[at]
            wk, pieces, n_in = _runs(keys)
            if sel is not None:  # the pieces index the prediction's rows
                pieces = [sel[p] for p in pieces]
            kept[np.searchsorted(uk, wk)] = n_in
            labels = None
            if batch.groups is not None and self.settings.columns.get("by"):
                from ..score.core import group_labels

                labels = group_labels(batch.groups)
            for key, piece, c in zip(wk.tolist(), pieces, n_in.tolist()):
                sub = pred if c == pred.n else pred.subset(piece)
                w = self._window(key)
                tested = sub
                if batch.weights is not None:  # --weights: batches carry weights only when asked
                    wts = batch.weights if c == pred.n else batch.weights[piece]
                    w["state"] = states.merge(w["state"], states.batch_state(sub, self.settings, weights=wts))
                    w["weight"] = w.get("weight", 0.0) + float(np.sum(wts))
                    _, (tested,), _ = drop_zero(wts, sub)  # the tests count the rows that count, unweighted
                else:
                    if labels is None:
                        new = states.batch_state(sub, self.settings)
                    else:  # --by: one state per label; the window's is their merge (no metric computed twice)
                        new = self._add_groups(w, sub, labels[piece], where)
                    # packed histograms add sparsely (states.Packed): a window of a few rows stays small
                    w["state"] = pack(states.merge(w["state"], new))
                if tested.n:
                    w["tests"] = _merge_sums(w["tests"], test_sums(tested, self.settings, self.levels or []))
        for key, c, k in zip(uk.tolist(), counts.tolist(), kept.tolist()):
            self._window(key)["n_dropped"] += c - k
        return keys, sel

    def _add_groups(self, w: dict[str, Any], sub, labels: np.ndarray, where: str) -> dict[str, Any]:
        """Fold the rows ``sub`` into window ``w``'s per-label states (``--by``); returns their merged state."""
        from ..score.core import check_group_count
        from ..score.groups import merge_groups

        values, inverse = np.unique(labels, return_inverse=True)
        whole = states.init()
        for j, label in enumerate(values.tolist()):
            st = states.batch_state(sub.subset(np.flatnonzero(inverse == j)), self.settings)
            whole = states.merge(whole, st)
            w["groups"] = merge_groups(w.get("groups") or {}, {str(label): pack(st)})
            check_group_count(len(w["groups"]), where)
        return whole

    def merge(self, other: Windows) -> Windows:
        """Both parts' rows (window by window); on Dask, the windows no task left out holds rows of are
        finished (:meth:`held`)."""
        out = self._merged(other)
        if self.plan.starts and other.plan == self.plan:
            out.plan, out.parts = self.plan, self.parts | other.parts
            out.close_old(keep=0)
        return out

    def _merged(self, other: Windows) -> Windows:
        from ..score.groups import merge_groups

        if (
            self.signature is not None
            and other.signature is not None
            and (self.signature != other.signature or self.kind != other.kind)
        ):
            raise InputError(
                f"{other.first_file}: {other.kind} rows with per-row shapes {dict(other.signature)} cannot "
                f"join {self.first_file}'s {self.kind} rows with {dict(self.signature)}"
            )
        out = Windows(self.layout, self.settings)
        first = self if self.signature is not None else other
        out.signature, out.columns, out.first_file = first.signature, first.columns, first.first_file
        out.kind, out.levels = first.kind, first.levels
        out.n_fixed = self.n_fixed + other.n_fixed
        out.n_seen = self.n_seen + other.n_seen
        out.n_members_dropped = self.n_members_dropped + other.n_members_dropped
        out.seen = self.seen.merge(other.seen)
        out.windows = dict(self.windows)
        out.total = states.merge(self.total, other.total)
        for key, w in other.windows.items():
            a = out.windows.get(key)
            if a is None:
                out.windows[key] = w
                continue
            if a["state"] is None or w["state"] is None:
                start, end = self.layout.bounds(key)
                raise InputError(
                    f"{other.first_file or self.first_file}: rows of the window [{start}, {end}) come after that "
                    "window was finished; give the rows in time order"
                )
            both = out.windows[key] = {
                "n_rows": a["n_rows"] + w["n_rows"],
                "n_dropped": a["n_dropped"] + w["n_dropped"],
                "state": states.merge(a["state"], w["state"]),
                "tests": _merge_sums(a["tests"], w["tests"]) if w["tests"] else a["tests"],
            }
            if "groups" in a or "groups" in w:
                both["groups"] = merge_groups(a.get("groups") or {}, w.get("groups") or {})
            if "weight" in a or "weight" in w:
                both["weight"] = a.get("weight", 0.0) + w.get("weight", 0.0)
        return out


# --------------------------------------------------------------------------- saved states


_ALLOWED = {
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy._core.multiarray", "scalar"),
    ("builtins", "frozenset"),
    ("builtins", "set"),
    ("builtins", "complex"),
    ("uqeval.catalogue.states", "Packed"),
}
#: where a class of a state file written by an earlier version lives now
_MOVED = {("uqeval.stream.states", "Packed"): "uqeval.catalogue.states"}


class _Unpickler(pickle.Unpickler):
    """Numbers, numpy arrays and sparse histograms only: a state file runs no code when read."""

    def find_class(self, module: str, name: str) -> Any:
        module = _MOVED.get((module, name), module)
        if (module, name) in _ALLOWED or (module.startswith("numpy") and name.endswith("DType")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a monitor state")


def _fingerprint(settings: Settings) -> dict[str, Any]:
    """The settings that change a state (columns and metric options), as JSON."""
    out = settings.to_json()
    return {k: v for k, v in out.items() if k not in ("seed",)} if isinstance(out, dict) else {}


#: what a saved state holds of a :class:`Windows` besides its windows
_FIELDS = (
    "levels",
    "kind",
    "signature",
    "columns",
    "first_file",
    "n_fixed",
    "n_members_dropped",
    "n_seen",
    "total",
)


def _saved(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """A window's state as a state file keeps it: histograms packed; its probe (the rows of
    :func:`~uqeval.catalogue.states.batch_state` and :func:`~uqeval.catalogue.weighted.weighted_state`, a prediction of a few rows that tells the finishing
    functions its shape) as its fields, numbers and text the safe loader reads (:func:`_probe`)."""
    if state is None or "probe" not in state:
        return None if state is None else pack(state)
    import dataclasses

    probe = state["probe"]
    fields = {f.name: getattr(probe, f.name) for f in dataclasses.fields(probe) if f.init}
    return {**pack(state), "probe": {"class": type(probe).__name__, "fields": fields}}


def _probe(state: Any, source: str) -> Any:
    """A saved window state with its probe a prediction again (:func:`_saved`)."""
    from ... import predictions

    saved = state.get("probe") if isinstance(state, dict) else None
    if not isinstance(saved, dict):
        return state
    cls = getattr(predictions, str(saved.get("class")), None)
    try:
        if not (isinstance(cls, type) and issubclass(cls, predictions.Prediction)):
            raise TypeError(saved.get("class"))
        return {**state, "probe": cls(**saved["fields"])}
    except Exception:  # a field the prediction refuses: a file written by hand
        raise InputError(
            f"{source}: not a valid uqeval monitor state (the state's rows); restore a saved copy, "
            "or delete it to start afresh"
        ) from None


def _payload(win: Windows) -> dict[str, Any]:
    return {
        "windows": {k: {**w, "state": _saved(w["state"])} for k, w in win.windows.items()},
        **{k: _saved(win.total) if k == "total" else getattr(win, k) for k in _FIELDS},
        **win.seen.saved(),
    }


def _restore(payload: dict[str, Any], layout: Layout, settings: Settings, source: str) -> Windows:
    win = Windows(layout, settings)
    win.windows = {k: {**w, "state": _probe(w.get("state"), source)} for k, w in payload["windows"].items()}
    for k in _FIELDS:
        setattr(win, k, _probe(payload[k], source) if k == "total" else payload[k])
    win.base = win.n_seen
    # a state saved before uqeval kept what it counted has neither: its rows are not checked again
    win.seen = Seen(payload.get("mark"), payload.get("inputs"))
    win.seen.source = source
    win.seen.n_counted = sum(int(w["n_rows"]) for w in win.windows.values())
    return win


def dump_state(run: Windows | Pair) -> bytes:
    """A monitor state as bytes (``--state FILE``): the window states, the tests' sums and what was counted
    (:class:`Seen`), with the SHA-256 of the pickled state (:data:`STATE_FORMAT`)."""
    head = {
        "format": STATE_FORMAT,
        "layout": run.layout.record() if isinstance(run, Windows) else run.a.layout.record(),
    }
    payload: dict[str, Any]
    if isinstance(run, Windows):
        payload = {**head, "settings": _fingerprint(run.settings), "single": _payload(run)}
    else:
        payload = {
            **head,
            "settings": _fingerprint(run.a.settings),
            "a": _payload(run.a),
            "b": _payload(run.b),
            "diffs": run.diffs,
            "score": run.score,
            "bound": run.bound,
        }
    inner = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
    outer = {"format": STATE_FORMAT, "sha256": hashlib.sha256(inner).hexdigest(), "payload": inner}
    return pickle.dumps(outer, protocol=pickle.HIGHEST_PROTOCOL)


def _unpickle(data: bytes, source: str) -> Any:
    import io

    buf = io.BytesIO(data)
    try:
        out = _Unpickler(buf).load()
    except Exception as exc:  # a truncated or foreign file
        raise InputError(
            f"{source}: not a uqeval monitor state ({type(exc).__name__}); delete it to start afresh"
        ) from None
    if buf.read(1):
        raise InputError(
            f"{source}: not a uqeval monitor state (bytes after its end); delete it to start afresh"
        )
    return out


def _read_payload(data: bytes, source: str) -> dict[str, Any]:
    """The pickled state of a state file: checked against its SHA-256 (format /2), or as it is (/1)."""
    outer = _unpickle(data, source)
    fmt = outer.get("format") if isinstance(outer, dict) else None
    if fmt == STATE_FORMAT_1:
        return outer
    if fmt != STATE_FORMAT:
        raise InputError(f"{source}: not a uqeval monitor state ({STATE_FORMAT}); delete it to start afresh")
    inner, digest = outer.get("payload"), outer.get("sha256")
    if (
        not isinstance(inner, bytes)
        or not isinstance(digest, str)
        or hashlib.sha256(inner).hexdigest() != digest
    ):
        raise InputError(
            f"{source}: the monitor state was changed or damaged after it was written (its checksum does not "
            "match); restore a saved copy, or delete it to start afresh"
        )
    payload = _unpickle(inner, source)
    if not isinstance(payload, dict) or payload.get("format") != STATE_FORMAT:
        raise InputError(f"{source}: not a uqeval monitor state ({STATE_FORMAT}); delete it to start afresh")
    return payload


def _is_int(x: Any, low: int = 0) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) and bool(x >= low)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _is_array(x: Any, shape: tuple[int, ...] | None = None) -> bool:
    return isinstance(x, np.ndarray) and x.dtype.kind in "fiu" and (shape is None or x.shape == shape)


def _check_sums(t: Any, n_levels: int) -> bool:
    return (
        isinstance(t, dict)
        and _is_num(t.get("n"))
        and _is_array(t.get("miss"), (n_levels,))
        and ("pit" not in t or _is_array(t["pit"], (3,)))
        and ("pit_mean" not in t or _is_array(t["pit_mean"], (3,)))
        and ("pit_bins" not in t or _is_array(t["pit_bins"], (PIT_BETS,)))
    )


#: the Beta bets of the PIT test (:data:`~uqeval.metrics.sequential.PIT_GRID` squared)
PIT_BETS = 81


def _check_windows(p: Any) -> str | None:
    """What is wrong with the saved fields of one :class:`Windows` (None: nothing found)."""
    if not isinstance(p, dict) or not isinstance(p.get("windows"), dict):
        return "no windows"
    missing = [k for k in _FIELDS if k not in p]
    if missing:
        return f"missing {', '.join(missing)}"
    levels = p["levels"]
    if levels is not None and not (
        isinstance(levels, list) and all(_is_num(v) and 0 < v < 1 for v in levels)
    ):
        return "levels"
    for k, t in (("kind", str), ("first_file", str), ("signature", tuple), ("columns", dict)):
        if p[k] is not None and not isinstance(p[k], t):
            return k
    if not all(_is_int(p[k]) for k in ("n_fixed", "n_members_dropped", "n_seen")):
        return "row counts"
    if not isinstance(p["total"], dict) or not isinstance(p["total"].get("families"), dict):
        return "total"
    for key, w in p["windows"].items():
        if not _is_int(key, low=-(2**62)) or not isinstance(w, dict):
            return "a window"
        if not (_is_int(w.get("n_rows")) and _is_int(w.get("n_dropped")) and w["n_dropped"] <= w["n_rows"]):
            return f"the row counts of window {key}"
        st = w.get("state", 0)
        if st is None:
            if not (isinstance(w.get("metrics"), dict) and isinstance(w.get("orientation"), dict)):
                return f"the metrics of window {key}"
        elif not (isinstance(st, dict) and _is_num(st.get("n")) and isinstance(st.get("families"), dict)):
            return f"the state of window {key}"
        if w.get("tests") is not None and not _check_sums(w["tests"], len(levels or [])):
            return f"the test sums of window {key}"
        if "groups" in w and not isinstance(w["groups"], dict):
            return f"the groups of window {key}"
    mark, inputs = p.get("mark"), p.get("inputs", [])
    if mark is not None and not _is_int(mark, low=-(2**63)):
        return "mark"
    if not isinstance(inputs, list) or not all(
        isinstance(fp, dict)
        and isinstance(fp.get("path"), str)
        and _is_int(fp.get("size"))
        and _is_int(fp.get("n_rows"))
        and isinstance(fp.get("sha256"), str)
        for fp in inputs
    ):
        return "inputs"
    return None


def _check_payload(payload: dict[str, Any], source: str) -> None:
    """Refuse a state whose fields are not what :func:`dump_state` writes (a file written by hand)."""
    pair = "a" in payload
    if not isinstance(payload.get("layout"), dict) or not isinstance(payload.get("settings"), dict):
        what: str | None = "layout and settings"
    elif pair:
        diffs = payload.get("diffs")
        what = next(
            (f"{side}: {why}" for side in ("a", "b") if (why := _check_windows(payload.get(side)))), None
        )
        if what is None and not (
            isinstance(diffs, dict)
            and all(_is_int(k, -(2**62)) and _is_array(v, (4,)) for k, v in diffs.items())
        ):
            what = "diffs"
        if what is None and not (
            (payload.get("score") is None or isinstance(payload.get("score"), str))
            and (payload.get("bound") is None or _is_num(payload.get("bound")))
        ):
            what = "score and bound"
    else:
        what = _check_windows(payload.get("single"))
    if what is not None:
        raise InputError(
            f"{source}: not a valid uqeval monitor state ({what}); restore a saved copy, or delete it to start "
            "afresh"
        )


def read_state(path: str | os.PathLike[str] | None) -> bytes | None:
    """The bytes of the state file ``path`` (``--state``), None when there is none yet (a first run)."""
    if path is None or not os.path.exists(path):
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"cannot read {option('state', str(path))}: {exc}") from None


def load_state(
    data: bytes, layout: Layout, settings: Settings, source: str, pair: bool = False
) -> Windows | Pair:
    """The :class:`Windows` (or :class:`Pair`) saved by :func:`dump_state`, checked against this run's
    window and settings."""
    payload = _read_payload(data, source)
    _check_payload(payload, source)
    if payload["layout"] != layout.record():
        raise UsageError(
            f"{source} was saved with window {payload['layout']}, this run asks for {layout.record()}; "
            f"use the same {option('time')}, {option('window')} and {option('origin')}, or a new state file"
        )
    if payload["settings"] != _fingerprint(settings):
        raise UsageError(
            f"{source} was saved with other settings (columns, levels or metric options); use the same "
            "options, or a new state file"
        )
    if ("a" in payload) != pair:
        raise UsageError(
            f"{source} was saved by a monitor of {'two inputs' if 'a' in payload else 'one input'}; "
            "give as many inputs as then, or a new state file"
        )
    if not pair:
        return _restore(payload["single"], layout, settings, source)
    out = Pair(
        _restore(payload["a"], layout, settings, source),
        _restore(payload["b"], layout, settings, source),
        payload["bound"],
    )
    out.diffs, out.score = payload["diffs"], payload["score"]
    return out


def seen_notes(run: Windows | Pair, skip_seen: bool, where: str) -> list[str]:
    """After a resumed run: refuse it when it brought rows the state counted (at or before its mark) without
    ``skip_seen``; else the notes of what ``skip_seen`` left out."""
    sides = [("A: ", run.a), ("B: ", run.b)] if isinstance(run, Pair) else [("", run)]
    for _, win in sides:
        if win.seen.n_old and not skip_seen:
            raise win.seen.refuse_old(where)
    return [prefix + note for prefix, win in sides if (note := win.seen.note())]


# --------------------------------------------------------------------------- two models on the same rows

#: the per-row score compared by ``monitor A B``, by preference (the first that applies), and the bound of
#: the difference where the score has one
PAIR_SCORES = ("scoring_rule.crps", "scoring_rule.wis", "scoring_rule.interval", "accuracy.brier")
SCORE_BOUNDS = {"accuracy.brier": 2.0}


def pair_score(kind: str) -> str:
    for path in PAIR_SCORES:
        metric = lookup(path)
        if metric is not None and metric.applies_to(kind):
            return path
    raise UsageError(
        f"monitor A B compares a mean score, but {kind} predictions have none of {', '.join(PAIR_SCORES)}"
    )


def row_scores(pred, settings: Settings, path: str) -> np.ndarray:
    """The per-row score (the catalogue's per-row form of ``path``)."""
    metric = lookup(path)
    stat = rows(metric, pred, settings) if metric is not None else None
    if stat is None or stat.score is None:
        raise UsageError(f"{path} has no per-row score for {pred.kind} predictions")
    return np.asarray(stat.score, dtype=np.float64)


class Pair:
    """Two models' :class:`Windows` and, per window, the sums of their clipped score differences
    (``[n, sum d, sum d^2, n clipped]``)."""

    def __init__(self, a: Windows, b: Windows, bound: float | None) -> None:
        self.a, self.b = a, b
        self.settings = a.settings
        self.bound = bound
        self.score: str | None = None
        self.diffs: dict[int, np.ndarray] = {}

    def add_diffs(self, keys: np.ndarray, sa: np.ndarray, sb: np.ndarray, where: str) -> None:
        if self.bound is None:
            self.bound = SCORE_BOUNDS.get(self.score or "")
            if self.bound is None:
                raise UsageError(
                    f"{where}: the confidence sequence of the mean {self.score} difference needs a bound on "
                    f"|score A - score B|: give {option('bound', 'B')} (rows beyond it are clipped and counted)"
                )
        d = sa - sb
        clipped = np.abs(d) > self.bound
        d = np.clip(d, -self.bound, self.bound)
        wk, pieces, _ = _runs(keys)
        for key, idx in zip(wk.tolist(), pieces):
            add = np.append(mean_sums(d[idx]), float(clipped[idx].sum()))
            self.diffs[key] = self.diffs[key] + add if key in self.diffs else add

    def add(self, rows: Any) -> None:
        """Fold one :class:`~uqeval.engine.aligned.Rowset` in (both inputs' batches of the same global rows):
        each model's windows, and the score differences of the rows both kept (matched by row number)."""
        (ka, sel_a), (kb, sel_b) = (
            win.add_rows(batch, rows.rows, rows.offset, extra, f)
            for win, batch, extra, f in zip((self.a, self.b), rows.batches, rows.extra, rows.files)
        )
        self.a.close_old()
        self.b.close_old()
        if ka is None or kb is None:
            return
        pa_, pb_ = rows.batches[0].prediction, rows.batches[1].prediction
        if self.score is None:
            self.score = pair_score(pa_.kind)
        ra, sa = pa_.row_numbers(), row_scores(pa_, self.settings, self.score)
        rb, sb = pb_.row_numbers(), row_scores(pb_, self.settings, self.score)
        if sel_a is not None:  # rows the state counted (at or before its mark): left out
            ra, sa = ra[sel_a], sa[sel_a]
        if sel_b is not None:
            rb, sb = rb[sel_b], sb[sel_b]
        _, ia, ib = np.intersect1d(ra, rb, assume_unique=True, return_indices=True)
        if ia.size:
            self.add_diffs(ka[ia], sa[ia], sb[ib], rows.files[0])

    def merge(self, other: Pair) -> Pair:
        out = Pair(self.a.merge(other.a), self.b.merge(other.b), self.bound or other.bound)
        out.score = self.score or other.score
        out.diffs = dict(self.diffs)
        for k, v in other.diffs.items():
            out.diffs[k] = out.diffs[k] + v if k in out.diffs else v
        return out


def _pair_inputs(pair: Pair, src_a, src_b, skip_seen: bool) -> set[str]:
    """The files of ``monitor A B`` to leave out (``skip_seen``): all of them when the state has read both
    inputs whole, else none (time windows: the mark leaves out the rows counted on both sides alike; row
    windows: rows are matched by number, so an input read in part is refused)."""
    skip = pair.a.seen.check_inputs(src_a.files, skip_seen) | pair.b.seen.check_inputs(src_b.files, skip_seen)
    if not skip or len(skip) == len({str(f) for f in [*src_a.files, *src_b.files]}):
        return skip
    if pair.a.layout.kind == "rows":
        raise InputError(
            f"{src_a.spec}, {src_b.spec}: {option('skip_seen')} leaves out a whole run of row windows, but "
            "the state has read only some of these files; give A and B with the new rows only"
        )
    for win in (pair.a, pair.b):  # read again: the mark leaves their rows out
        win.seen.skipped = []
    return set()
