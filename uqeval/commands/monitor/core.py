"""The ``uqeval.monitor/1`` document: per-window and cumulative metrics of a
:class:`~uqeval.commands.monitor.windows.Windows` state, and the tests (:mod:`uqeval.metrics.sequential`) evaluated
at the end of every window: coverage at each level (two-sided), the PIT's uniformity and its mean (Gaussians; other
representations through the randomised PIT given the bin), and with two inputs the mean score difference.

Each test is a mixture of constant bets whose log capital adds per-window log factors (``factors``). Two uses:

- ``detect`` (the default): the Shiryaev-Roberts e-detector of Shin, Ramdas & Rinaldo (2024), the same e-process
  restarted at every window and summed. With ``K`` detectors each alarms at ``K * arl``: the sum of the
  detectors minus ``K t`` is a supermartingale under the null, so the first alarm of any of them comes after
  ``arl`` windows on average (optional stopping). Its delay after a change does not grow with the history; the
  window where the winning restart began estimates where the change began.
- ``test``: the e-processes from the first window, anytime-valid tests of "calibrated all along" at family-wise
  level ``alpha``: with ``K`` tests each alarms when its e-value reaches ``K / alpha``, so the chance that any of
  them ever raises a false alarm is at most ``alpha`` (a union bound over Ville's inequality).

Both assume rows independent given the past (the windows' order is the time order).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...catalogue import states
from ...config import Settings
from ...errors import InputError, UsageError, option
from ...metrics.sequential import (
    capped_exp,
    change_window,
    coverage_log_e,
    coverage_log_factors,
    detector_log_path,
    mean_cs,
    mean_log_factors,
    pit_log_e,
    pit_log_factors,
    process_log_path,
    two_sided_log_e,
)
from ...weights import refuse_weights, weights_block
from .windows import SCHEMA, Windows

if TYPE_CHECKING:
    from ...engine.options import EngineOptions

#: the default average run length to a false alarm of the change detectors, in windows (ten years of days)
DEFAULT_ARL = 3650.0


def check_arl(arl: float) -> float:
    """``arl`` if it is a number of windows above 1, else a :class:`~uqeval.errors.UsageError`."""
    if not (isinstance(arl, (int, float)) and np.isfinite(arl) and arl > 1):
        raise UsageError(
            f"{option('arl', arl)} must be a number of windows above 1 (e.g. 3650: ten years of days)"
        )
    return float(arl)


def _test_specs(win: Windows, keys: list[int], prefix: str = "") -> list[dict[str, Any]]:
    """One entry per test: name, null, the per-window log factors of its bets (``factors``, windows x bets: the
    e-process and the e-detector are both made of them), and per-window sums for the metric behind it."""
    from ...metrics.intervals import level_key
    from .windows import PIT_BETS

    tests: list[dict[str, Any]] = []
    sums = [win.windows[k]["tests"] if k in win.windows else None for k in keys]
    present = [s for s in sums if s is not None]
    if not present:
        return tests

    def per_window(key: str, width: int) -> np.ndarray:
        """A sum per window (windows x width); a window without it (no row, or a state saved before the sum
        existed) adds nothing."""
        zero = np.zeros(width)
        return np.array([s.get(key, zero) if s else zero for s in sums], dtype=np.float64)

    n_w = np.array([s["n"] if s else 0 for s in sums], dtype=np.float64)
    n = np.cumsum(n_w)
    levels = win.levels or []
    miss_w = per_window("miss", len(levels))
    miss = np.cumsum(miss_w, axis=0)
    for j, lv in enumerate(levels):
        under, over = coverage_log_e(n, miss[:, j], 1.0 - lv)
        tests.append(
            _spec(
                f"{prefix}coverage@{level_key(lv)}",
                f"the {level_key(lv)} intervals miss at rate {level_key(1 - lv)} (two-sided)",
                two_sided_log_e(under, over),
                coverage_log_factors(n_w, miss_w[:, j], 1.0 - lv),
                ("coverage", n_w, n_w - miss_w[:, j], lv),
                e_under=capped_exp(under),
                e_over=capped_exp(over),
                miss_rate=miss[:, j] / np.maximum(n, 1),
            )
        )
    if "pit" in present[0]:
        pit_w = per_window("pit", 3)
        null = "the PIT is uniform on (0, 1)"
        tests.append(
            _spec(f"{prefix}pit_uniform", null, pit_log_e(np.cumsum(pit_w, axis=0)), pit_log_factors(pit_w))
        )
    elif any("pit_bins" in s for s in present):  # a PIT known up to a bin: its bets' log factors, per window
        factors = per_window("pit_bins", PIT_BETS)
        null = "the randomised PIT is uniform on (0, 1)"
        tests.append(_spec(f"{prefix}pit_uniform", null, process_log_path(factors), factors))
    if any("pit_mean" in s for s in present):
        mean_w = per_window("pit_mean", 3)
        factors = mean_log_factors(mean_w, 0.5)
        metric = ("mean PIT", mean_w[:, 0], mean_w[:, 1] + 0.5 * mean_w[:, 0], 0.5)
        null = "the mean PIT is 1/2 (no bias; two-sided)"
        tests.append(_spec(f"{prefix}pit_mean", null, process_log_path(factors), factors, metric))
    return tests


def _spec(
    name: str, null: str, log_path: np.ndarray, factors: np.ndarray, metric: Any = None, **extra: Any
) -> dict[str, Any]:
    """A test before its alarms: its name, null, e-process (``log_path``), per-window log factors of its bets,
    the metric behind it (``(name, rows per window, numerator sums per window, target)``) and ``extra`` paths
    per window for the document."""
    return {
        "name": name,
        "null": null,
        "log_path": log_path,
        "factors": factors,
        "metric": metric,
        "extra": extra,
    }


def _looks(values: np.ndarray) -> list[float | None]:
    from ...io.writers import jsonable

    return jsonable([float(v) for v in values])


def _windows_of(win: Windows, keys: list[int], settings: Settings):
    """Per window ``(metrics, n_rows, n_dropped)`` entries, the cumulative metrics and the orientation."""
    from .windows import finish_window, has_rows

    windows: list[dict[str, Any]] = []
    orientation: dict[str, str] = {}
    total = win.total  # the closed windows' (Windows.close_old)
    for k in keys:
        w = win.windows.get(k)
        if w is not None and w["state"] is None:  # closed: finished when it was closed
            windows.append(w["metrics"])
            orientation.update(w["orientation"])
            continue
        if w is None or not w["state"]["n"]:
            if w is not None and has_rows(w["state"]):  # weighted: rows of weight 0 only
                total = states.merge(total, w["state"])
            windows.append({})
            continue
        metrics, o = finish_window(w["state"], settings, win.skip)
        orientation.update(o)
        total = states.merge(total, w["state"])
        windows.append(metrics)
    cumulative, o = finish_window(total, settings) if total["n"] else ({}, {})
    orientation.update(o)
    return windows, cumulative, orientation, total


def _window_entries(win: Windows, keys: list, metrics: list, settings: Settings) -> list[dict[str, Any]]:
    """One entry per window of the document: its bounds, rows, metrics (and per ``--by`` label)."""
    from .windows import group_metrics

    windows = []
    for i, k in enumerate(keys):
        w = win.windows.get(k, {"n_rows": 0, "n_dropped": 0})
        start, end = win.layout.bounds(k)
        windows.append(
            {
                "start": start,
                "end": end,
                "n_rows": w["n_rows"],
                "n_dropped": w["n_dropped"],
                "metrics": metrics[i],
                **({"weight": w["weight"]} if "weight" in w else {}),
            }
        )
        if "groups" in w:  # --by: the window's metrics per label
            windows[-1]["groups"] = group_metrics(w["groups"], settings, win.skip)
    return windows


def _difference_spec(pair: Any, keys: list, threshold: float) -> dict[str, Any]:
    """The A/B test: a confidence sequence for the mean score difference (:func:`~uqeval.metrics.sequential.mean_cs`)."""
    per = np.array([pair.diffs.get(k, np.zeros(4)) for k in keys], dtype=np.float64)
    sums = np.cumsum(per, axis=0)
    cs = mean_cs(sums[:, :3], float(pair.bound or 0), threshold)
    return _spec(
        f"mean_difference:{pair.score}",
        f"A and B have the same mean {pair.score} (difference A - B = 0), rows |A - B| <= {pair.bound:g}",
        cs["log_e"],
        mean_log_factors(per[:, :3], float(pair.bound or 0)),
        ("mean difference", per[:, 0], per[:, 1], 0.0),
        mean_difference=sums[:, 1] / np.maximum(sums[:, 0], 1),
        lower=cs["lower"],
        upper=cs["upper"],
        n_clipped=sums[:, 3],
    )


def _episodes(above: np.ndarray) -> list[tuple[int, int]]:
    """``(first, last)`` windows of each run of windows whose statistic is at or above the threshold."""
    edges = np.diff(np.concatenate([[0], above.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1).tolist(), (np.flatnonzero(edges == -1) - 1).tolist()))


def _metric_since(spec: dict[str, Any], first: int, last: int) -> dict[str, Any] | None:
    """The metric behind a test over windows ``first..last``: its value and its target under the null."""
    if spec.get("metric") is None:
        return None
    name, n_w, num_w, target = spec["metric"]
    n = float(np.sum(n_w[first : last + 1]))
    return {
        "name": name,
        "value": float(np.sum(num_w[first : last + 1]) / n) if n else None,
        "target": float(target),
        "n_rows": int(n),
    }


def _test_entry(
    spec: dict[str, Any], threshold: float, windows: list[dict[str, Any]], detect: bool
) -> dict[str, Any]:
    """A test of the document: its e-values per window (``detect``: the e-detector's), its alarms when one reaches
    ``threshold``, the status at the last window (a detector: in alarm while at or above the threshold; a test:
    from its first alarm on, as its null stays rejected), and (``detect``) the change point of each alarm."""
    factors = np.asarray(spec["factors"], dtype=np.float64)
    log_path = detector_log_path(factors) if detect else np.asarray(spec["log_path"], dtype=np.float64)
    path = capped_exp(log_path)
    above = log_path >= np.log(threshold)
    hit = np.flatnonzero(above)
    first = int(hit[0]) if hit.size else None
    last = len(windows) - 1
    alarms = []
    for a, b in _episodes(above):
        cp = change_window(factors, a) if detect else 0
        alarms.append(
            {
                "first_window": a,
                "last_window": b,
                "first_alarm": windows[a]["end"],
                **({"change_window": cp, "change_at": windows[cp]["start"]} if detect else {}),
            }
        )
    if detect:  # a detector is in alarm while it is at or above its threshold
        now = alarms[-1] if alarms and alarms[-1]["last_window"] == last else None
    else:  # a test that rejected "calibrated all along" stays rejected
        now = alarms[0] if alarms else None
    since = (now.get("change_window", 0) if now else 0) if detect else 0
    return {
        "name": spec["name"],
        "null": spec["null"],
        "e_value": float(path[-1]),
        "log10_e_value": float(log_path[-1] / np.log(10.0)),
        "threshold": threshold,
        "alarm": first is not None,
        "status": "alarm" if now is not None else "ok",
        "first_alarm": None if first is None else windows[first]["end"],
        "first_alarm_window": first,
        "alarm_since_window": None if now is None else now["first_window"],
        "alarm_since": None if now is None else now["first_alarm"],
        **(
            {
                "change_window": None if now is None else now["change_window"],
                "change_at": None if now is None else now["change_at"],
            }
            if detect
            else {}
        ),
        "alarms": alarms,
        "metric": _metric_since(spec, since, last),
        "max_e_value": float(path.max()),
        "e_values": _looks(path),
        "log_e_values": _looks(log_path),
        **{k: _looks(v) for k, v in spec["extra"].items()},
    }


def _left_out(
    src_info: dict[str, Any], win: Windows, total: dict[str, Any], settings: Settings
) -> tuple[dict[str, str], dict[str, Any] | None, list[str]]:
    """``(metrics not streamed with the reason, the weights block or None, notes)`` of the merged state
    ``total``; with ``--weights`` (weighted window states, uqeval.catalogue.weighted) a run whose weights are
    all 0 is an error."""
    if "w" not in total:  # (a weighted state has its total weight)
        left_out = states.not_streamed_in(total, settings)
        left_out.update(
            {
                p: "needs a second pass over the rows; monitor reads each row once"
                for p in states.two_pass(cast("str", win.kind), settings)  # (build_document checked it)
            }
        )
        return left_out, None, []

    if not total["n"]:
        raise InputError(
            f"{src_info.get('path')}: the weights are all 0 on the rows kept: no row counts; give some rows a "
            "positive weight"
        )
    weights = weights_block(
        settings.columns.get("weights"), total["w"], total["n_zero"], total["not_weighted"]
    )
    notes = []
    if total["not_weighted"]:
        notes.append(
            f"{len(total['not_weighted'])} metric(s) take no weights and were not computed (listed with the "
            "reason under weights.not_weighted)"
        )
    notes.append(
        f"{option('weights')}: the window and cumulative metrics are weighted; the anytime-valid tests are not "
        "(they count every row of positive weight once: a weighted e-process is not a standard test)"
    )
    return dict(total["not_streamed"]), weights, notes


def _tests_note(n: int, detect: bool, arl: float, alpha: float, threshold: float) -> str:
    """How the ``n`` tests alarm: the detectors' ARL, or the tests' family-wise level."""
    if detect:
        return (
            f"{n} change detector(s) with an average run length to a false alarm of at least {arl:g} "
            f"windows together: each alarms when its e-detector reaches {threshold:g} (= {n} x {arl:g})"
        )
    return (
        f"{n} test(s) at family-wise level {alpha:g}: each alarms when its e-value reaches "
        f"{threshold:g} (= {n} / alpha, Bonferroni), checked at the end of every window"
    )


def build_document(
    src_info: dict[str, Any],
    run: Any,
    settings: Settings,
    alpha: float,
    detect: bool = True,
    arl: float = DEFAULT_ARL,
) -> dict[str, Any]:
    """The JSON document of ``uqeval monitor`` of a :class:`~uqeval.commands.monitor.windows.Windows` (one input) or a
    :class:`~uqeval.commands.monitor.windows.Pair` (two inputs: model A's metrics, ``metrics_b`` model B's).
    ``detect``: the tests are e-detectors (alarm threshold ``K * arl``), else anytime-valid tests (``K / alpha``)."""
    from ..._version import __version__
    from ...io.writers import jsonable
    from .windows import WINDOW_OPT_IN, Pair

    pair = run if isinstance(run, Pair) else None
    win: Windows = pair.a if pair is not None else run
    keys = sorted(set(win.windows) | (set(pair.b.windows) if pair else set()))
    n_rows = sum(w["n_rows"] for w in win.windows.values())
    if n_rows == 0:
        raise InputError(f"{src_info.get('path')}: no data rows")
    if win.kind is None:
        raise InputError(
            f"{src_info.get('path')}: every row has NaN/inf in a used column; nothing left to evaluate"
        )
    metrics_a, cumulative, orientation, total = _windows_of(win, keys, settings)
    windows = _window_entries(win, keys, metrics_a, settings)
    specs = _test_specs(win, keys, "A: " if pair else "")
    if pair is not None:
        metrics_b, cumulative_b, orientation_b, _ = _windows_of(pair.b, keys, settings)
        for entry, m in zip(windows, metrics_b):
            entry["metrics_b"] = m
        specs += _test_specs(pair.b, keys, "B: ")
    n_tests = len(specs) + (1 if pair is not None and pair.diffs else 0)
    level_threshold = n_tests / alpha if n_tests else 1 / alpha
    if pair is not None and pair.diffs:  # its confidence sequence is at the family-wise level alpha
        specs.append(_difference_spec(pair, keys, level_threshold))
    threshold = n_tests * arl if detect else level_threshold
    tests = [_test_entry(spec, threshold, windows, detect) for spec in specs]
    weighted = "w" in total
    left_out, weights, notes = _left_out(src_info, win, total, settings)
    if tests:
        notes.append(_tests_note(len(tests), detect, arl, alpha, threshold))
    if win.n_fixed:
        notes.append(
            f"{win.n_fixed} row(s) had crossing quantiles and were sorted ({option('fix_crossing')})"
        )
    doc: dict[str, Any] = {
        "schema": SCHEMA,
        "uqeval_version": __version__,
        "input": {
            **src_info,
            "n_rows": n_rows,
            "n_dropped": sum(w["n_dropped"] for w in win.windows.values()),
            "representation": win.kind,
            "columns": win.columns,
            **win.layout.record(),
            "n_windows": len(windows),
            "not_streamed": left_out,
            "not_per_window": {
                p: why
                for name, why in WINDOW_OPT_IN.items()
                if name in win.skip and not weighted
                for p in (f"{name}.{k}" for k in cumulative.get(name, {}))
            },
            "approximate": {}
            if weighted
            else {
                k: v
                for k, v in states.approximate(win.kind, settings).items()
                if k.split(".")[0] in cumulative
            },
        },
        "settings": settings.to_json(),
        "mode": "detect" if detect else "test",
        "alpha": alpha,
        **({"arl": arl} if detect else {}),
        "windows": windows,
        "cumulative": {"n_rows": n_rows, "metrics": cumulative},
        "orientation": dict(sorted(orientation.items())),
        "tests": jsonable(tests),
    }
    if pair is not None:
        doc["cumulative"]["metrics_b"] = cumulative_b
        doc["orientation"] = dict(sorted({**orientation_b, **orientation}.items()))
    if weights is not None:
        doc["input"]["weights"] = weights["column"]
        doc["weights"] = weights
    if notes:
        doc["notes"] = notes
    return doc


def as_summary(doc: dict[str, Any]) -> dict[str, Any]:
    """A monitor document as a ``uqeval.score/1`` summary for ``uqeval check``: its metrics are ``last.*``
    (the last window's), ``cumulative.*``, ``tests.<name>.e_value`` / ``.alarm`` (0 or 1: it alarmed at some
    window) / ``.in_alarm`` (0 or 1: it is in alarm at the last window), ``alarms`` (the number of tests that
    alarmed) and ``in_alarm`` (the number in alarm now: a detector whose alarm ended counts no more)."""
    from ..score.summary import SCHEMA as SCORE

    last = doc["windows"][-1]["metrics"] if doc.get("windows") else {}
    tests = {
        t["name"]: {
            "e_value": t["e_value"],
            "alarm": int(bool(t["alarm"])),
            "in_alarm": int(t.get("status") == "alarm"),
        }
        for t in doc.get("tests", [])
    }
    orientation = {}
    for key, value in doc.get("orientation", {}).items():
        orientation[f"last.{key}"] = orientation[f"cumulative.{key}"] = value
    return {
        "schema": SCORE,
        "input": doc.get("input", {}),
        "settings": doc.get("settings", {}),
        "metrics": {
            "last": last,
            "cumulative": doc.get("cumulative", {}).get("metrics", {}),
            "tests": tests,
            "alarms": sum(t["alarm"] for t in tests.values()),
            "in_alarm": sum(t["in_alarm"] for t in tests.values()),
        },
        "orientation": {**orientation, "alarms": "lower", "in_alarm": "lower"},
    }


@dataclass(frozen=True)
class Options:
    """The options of one monitor run, checked on construction.

    ``window``, ``time`` and ``origin``: the windows (:class:`~uqeval.commands.monitor.windows.Layout`);
    ``adversarial_windows``: also finish the adversarial group calibration of every window
    (:data:`~uqeval.commands.monitor.windows.WINDOW_OPT_IN`). ``detect`` (default): every test is an e-detector
    (:func:`~uqeval.metrics.sequential.detector_log_path`) whose alarms together come on average no sooner than
    ``arl`` windows on calibrated rows, and which reports where the change began; else the anytime-valid tests
    of "calibrated for ever" at family-wise level ``alpha``. ``bound``: of the score difference of
    ``monitor A B``. A state is kept when ``state`` (its bytes,
    :func:`~uqeval.commands.monitor.windows.dump_state`) or ``state_source`` (the state file's name; a first
    run has no bytes yet) is given: rows it counted (at or before its mark) and input files it read are
    refused, or left out with ``skip_seen`` and counted in a note (:class:`~uqeval.commands.monitor.windows.Seen`).
    The tests are functions of the per-window sums the state keeps, so a resumed run equals one run."""

    window: str | int
    time: str | None = None
    origin: str | None = None
    alpha: float = 0.05
    detect: bool = True
    arl: float = DEFAULT_ARL
    bound: float | None = None
    state: bytes | None = None
    state_source: str | None = None
    skip_seen: bool = False
    adversarial_windows: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise UsageError(f"{option('alpha', self.alpha)} must be in (0, 1)")
        check_arl(self.arl)
        if self.skip_seen and self.state is None and self.state_source is None:
            raise UsageError(
                f"{option('skip_seen')} leaves out the rows a state counted: give {option('state', 'FILE')} as well"
            )

    def start(self, settings: Settings, two: bool) -> tuple[Any, Any]:
        """``(Layout, the state to add to)``: the saved state read, or an empty one when a state is kept (a
        first run, which records what it reads), else None."""
        from .windows import Layout, Pair, load_state

        if two and settings.columns.get("weights"):
            raise refuse_weights("monitor A B", f"monitor each model alone with {option('weights')}")
        layout = Layout(self.window, self.time, self.origin, self.adversarial_windows)
        if self.state is not None:
            return layout, load_state(
                self.state, layout, settings, self.state_source or "the state", pair=two
            )
        if self.state_source is None:
            return layout, None
        fresh = Windows(layout, settings)
        return layout, Pair(fresh, Windows(layout, settings), self.bound) if two else fresh

    def finish(self, info: dict[str, Any], run: Any, settings: Settings) -> tuple[dict[str, Any], bytes]:
        """``(document, state bytes)`` of a folded run (what ``skip_seen`` left out in its notes)."""
        from .windows import dump_state, seen_notes

        skipped = seen_notes(run, self.skip_seen, str(info["path"]))
        doc = build_document(info, run, settings, self.alpha, self.detect, self.arl)
        if skipped:
            doc["notes"] = [*doc.get("notes", []), *skipped]
        return doc, dump_state(run)


def monitor_file(
    spec: Any,
    settings: Settings,
    *,
    engine: EngineOptions | None = None,
    progress: Callable[[int], None] | None = None,
    **options: Any,
) -> tuple[dict[str, Any], bytes]:
    """``(document, state bytes)`` of the rows of ``spec`` (a list of two: model A and model B) with the
    :class:`Options` ``options``, added to their saved ``state``, read on ``engine`` (stream or dask; default:
    stream) as one fold (:mod:`uqeval.commands.monitor.stream`)."""
    from ...engine.options import EngineOptions
    from .stream import pair_with_engine, windows_with_engine

    opts = Options(**options)
    two = isinstance(spec, (list, tuple))
    layout, start = opts.start(settings, two)
    engine = (
        (engine or EngineOptions("stream")).streamed("monitor").sized([spec[0] if two else spec], settings)
    )
    run: Any
    if two:
        src, src_b, run = pair_with_engine(
            spec, layout, settings, engine, opts.bound, start, progress, opts.skip_seen
        )
    else:
        src, run = windows_with_engine(spec, layout, settings, engine, start, progress, opts.skip_seen)
    info: dict[str, Any] = {
        "path": str(src.spec),
        "format": src.fmt,
        "engine": engine.engine,
        "n_files": len(src.files),
        "chunk_rows": cast("int", engine.chunk_rows),
        **({"path_b": str(src_b.spec)} if two else {}),
    }
    return opts.finish(info, run, settings)


def monitor_rows(
    piece: Any, info: dict[str, Any], settings: Settings, **options: Any
) -> tuple[dict[str, Any], bytes]:
    """:func:`monitor_file` of rows held in memory: one :class:`~uqeval.engine.fold.Piece` (a table given to
    ``uqeval.monitor``, its ``extra`` holding the times under the name ``time``) folded into the state, the
    one-batch case of the fold; ``info``: the document's ``input`` entries. A table has no file: with a
    state it is known by the fingerprint of its arrays
    (:func:`~uqeval.commands.monitor.windows.memory_fingerprint`)."""
    from .windows import memory_fingerprint, time_ns

    opts = Options(**options)
    layout, start = opts.start(settings, False)
    run = start if start is not None else Windows(layout, settings)
    if start is not None:  # rows it has counted: refused, or left out with skip_seen
        times = time_ns(piece.extra[opts.time], str(opts.time), piece.file, 0) if opts.time else None
        fp = memory_fingerprint(piece.file, piece.batch.prediction, piece.rows, piece.batch.n_dropped, times)
    if start is None or not run.seen.check_prints([fp], opts.skip_seen):
        run.add(piece)
    return opts.finish(info, run, settings)
