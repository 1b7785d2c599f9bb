"""The ``uqeval.monitor/1`` document: per-window and cumulative metrics of a
:class:`~uqeval.stream.monitor.Windows` state, and the anytime-valid tests (:mod:`uqeval.metrics.sequential`)
evaluated at the end of every window.

Family-wise level: the tests reported share ``alpha`` equally (Bonferroni): with ``K`` tests each alarms when
its e-value reaches ``K / alpha``, so the chance that any of them ever raises a false alarm is at most
``alpha`` (a union bound over Ville's inequality).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..config import Settings
from ..errors import UsageError
from ..stream.monitor import SCHEMA, Windows


def _finalize(state: dict[str, Any], settings: Settings) -> tuple[dict[str, Any], dict[str, str]]:
    from ..io.writers import jsonable
    from ..stream import states

    metrics, orientation = states.finalize(state, settings)
    return jsonable(metrics), orientation


def _test_specs(win: Windows, keys: list[int], compare: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One entry per test: name, kind, and the cumulative e-value at each look (window end)."""
    from ..metrics.intervals import level_key
    from ..metrics.sequential import coverage_e, pit_e

    tests: list[dict[str, Any]] = []
    sums = [win.windows[k]["tests"] for k in keys]
    present = [s for s in sums if s is not None]
    if not present:
        return tests
    n = np.cumsum([s["n"] if s else 0 for s in sums])
    levels = win.levels or []
    if levels:
        miss = np.cumsum([s["miss"] if s else np.zeros(len(levels)) for s in sums], axis=0)
        for j, lv in enumerate(levels):
            under, over = coverage_e(n, miss[:, j], 1.0 - lv)
            tests.append(
                {
                    "name": f"coverage@{level_key(lv)}",
                    "null": f"the {level_key(lv)} intervals miss at rate {level_key(1 - lv)} (two-sided)",
                    "path": (0.5 * (under + over)),
                    "extra": {"e_under": under, "e_over": over, "miss_rate": miss[:, j] / np.maximum(n, 1)},
                }
            )
    if "pit" in present[0]:
        pit = np.cumsum([s["pit"] if s else np.zeros(3) for s in sums], axis=0)
        tests.append(
            {"name": "pit_uniform", "null": "the PIT is uniform on (0, 1)", "path": pit_e(pit), "extra": {}}
        )
    if compare is not None:
        tests.append(compare)
    return tests


def _looks(values: np.ndarray) -> list[float | None]:
    from ..io.writers import jsonable

    return jsonable([float(v) for v in values])


def build_document(
    src_info: dict[str, Any],
    win: Windows,
    settings: Settings,
    alpha: float,
    compare: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON document of ``uqeval monitor`` (``compare``: the two-model test, from :mod:`uqeval.stream.monitor`)."""
    from .. import __version__
    from ..errors import InputError
    from ..io.writers import jsonable
    from ..stream import states

    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be in (0, 1), got {alpha}")
    keys = sorted(win.windows)
    n_rows = sum(w["n_rows"] for w in win.windows.values())
    if n_rows == 0:
        raise InputError(f"{src_info.get('path')}: no data rows")
    if win.kind is None:
        raise InputError(
            f"{src_info.get('path')}: every row has NaN/inf in a used column; nothing left to evaluate"
        )
    windows = []
    orientation: dict[str, str] = {}
    total = states.init()
    for k in keys:
        w = win.windows[k]
        start, end = win.layout.bounds(k)
        entry: dict[str, Any] = {
            "start": start,
            "end": end,
            "n_rows": w["n_rows"],
            "n_dropped": w["n_dropped"],
        }
        st = states.unpack(w["state"])
        if st["n"]:
            entry["metrics"], o = _finalize(st, settings)
            orientation.update(o)
            total = states.merge(total, st)
        else:
            entry["metrics"] = {}
        windows.append(entry)
    cumulative, o = _finalize(total, settings)
    orientation.update(o)

    specs = _test_specs(win, keys, compare)
    threshold = len(specs) / alpha if specs else 1 / alpha
    tests = []
    for t in specs:
        path = np.asarray(t["path"], dtype=np.float64)
        hit = np.flatnonzero(path >= threshold)
        first = int(hit[0]) if hit.size else None
        tests.append(
            {
                "name": t["name"],
                "null": t["null"],
                "e_value": float(path[-1]),
                "threshold": threshold,
                "alarm": first is not None,
                "first_alarm": None if first is None else windows[first]["end"],
                "first_alarm_window": first,
                "max_e_value": float(path.max()),
                "e_values": _looks(path),
                **{k: _looks(v) for k, v in t["extra"].items()},
            }
        )
    left_out = states.not_streamed_in(total, settings)
    left_out.update(
        {
            p: "needs a second pass over the rows; monitor reads each row once"
            for p in states.two_pass(win.kind, settings)
        }
    )
    notes = []
    if tests:
        notes.append(
            f"{len(tests)} test(s) at family-wise level {alpha:g}: each alarms when its e-value reaches "
            f"{threshold:g} (= {len(tests)} / alpha, Bonferroni), checked at the end of every window"
        )
    if win.n_fixed:
        notes.append(f"{win.n_fixed} row(s) had crossing quantiles and were sorted (--fix-crossing)")
    return {
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
            "approximate": {
                k: v
                for k, v in states.approximate(win.kind, settings).items()
                if k.split(".")[0] in cumulative
            },
        },
        "settings": settings.to_json(),
        "alpha": alpha,
        "windows": windows,
        "cumulative": {"n_rows": n_rows, "metrics": cumulative},
        "orientation": dict(sorted(orientation.items())),
        "tests": jsonable(tests),
        **({"notes": notes} if notes else {}),
    }


def as_summary(doc: dict[str, Any]) -> dict[str, Any]:
    """A monitor document as a ``uqeval.score/1`` summary for ``uqeval check``: its metrics are ``last.*``
    (the last window's), ``cumulative.*``, ``tests.<name>.e_value`` / ``.alarm`` (0 or 1) and ``alarms``
    (the number of tests that alarmed)."""
    from ..report.summary import SCHEMA as SCORE

    last = doc["windows"][-1]["metrics"] if doc.get("windows") else {}
    tests = {
        t["name"]: {"e_value": t["e_value"], "alarm": int(bool(t["alarm"]))} for t in doc.get("tests", [])
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
        },
        "orientation": {**orientation, "alarms": "lower"},
    }


def monitor_file(
    spec: Any,
    settings: Settings,
    *,
    window: str | int,
    time: str | None = None,
    origin: str | None = None,
    alpha: float = 0.05,
    engine: str = "stream",
    chunk_rows: int | None = None,
    state: bytes | None = None,
    state_source: str = "state",
    scheduler: str | None = None,
    workers: int | None = None,
    progress=None,
) -> tuple[dict[str, Any], Windows]:
    """``(document, Windows)`` of the rows of ``spec`` (added to a saved ``state``: :func:`~uqeval.stream.monitor.dump_state`)."""
    from ..stream.engine import auto_chunk_rows
    from ..stream.monitor import Layout, load_state, monitor_windows

    if not 0 < alpha < 1:
        raise UsageError(f"{_opt('alpha', alpha)} must be in (0, 1)")
    layout = Layout(window, time, origin)
    start = load_state(state, layout, settings, state_source) if state is not None else None
    chunk = int(chunk_rows or auto_chunk_rows(spec, settings))
    if engine == "dask":
        from ..stream.monitor_dask import monitor_dask

        src, win = monitor_dask(spec, layout, settings, chunk, scheduler, workers, start)
    elif engine == "stream":
        if scheduler is not None or workers is not None:
            raise UsageError("--scheduler and --workers apply to --engine dask only")
        src, win = monitor_windows(spec, layout, settings, chunk, progress, start)
    else:
        raise UsageError(f"{_opt('engine', engine)}: monitor runs on the stream or dask engine")
    info = {
        "path": str(src.spec),
        "format": src.fmt,
        "engine": engine,
        "n_files": len(src.files),
        "chunk_rows": chunk,
    }
    return build_document(info, win, settings, alpha), win


def _opt(key: str, value: Any) -> str:
    from ..errors import option

    return option(key, value)
