"""``uqeval monitor`` is one fold that every engine runs (issues 36 and 37): the same document in memory (the
Python API on a table), on the stream engine and on Dask, with ``--weights`` and with two inputs (``monitor A B``,
now on Dask too); the weighted state file holds numbers only; ``time=`` takes any datetime64 unit."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import uqeval
from uqeval.catalogue.paths import flatten
from uqeval.commands.monitor.core import monitor_file
from uqeval.config import Settings
from uqeval.engine.options import EngineOptions

from .test_monitor import _gaussian


def _close(a: dict, b: dict, what: str) -> None:
    fa, fb = dict(flatten(a)), dict(flatten(b))
    assert set(fa) == set(fb), (what, set(fa) ^ set(fb))
    for path, value in fa.items():
        np.testing.assert_allclose(
            np.asarray(value, dtype=float),
            np.asarray(fb[path], dtype=float),
            rtol=1e-12,
            atol=1e-14,
            equal_nan=True,
            err_msg=f"{what}: {path}",
        )


def assert_same_document(got: dict, want: dict) -> None:
    """Two monitor documents of the same rows: the windows' bounds and counts identical, every metric to
    1e-12, the tests' e-values to 1e-12 and their alarms, status and change points identical."""
    assert [(w["start"], w["end"], w["n_rows"], w["n_dropped"]) for w in got["windows"]] == [
        (w["start"], w["end"], w["n_rows"], w["n_dropped"]) for w in want["windows"]
    ]
    for i, (a, b) in enumerate(zip(got["windows"], want["windows"])):
        for key in ("metrics", "metrics_b"):
            _close(a.get(key, {}), b.get(key, {}), f"window {i} {key}")
        if "weight" in b:
            assert a["weight"] == pytest.approx(b["weight"], rel=1e-12)
    for key in ("metrics", "metrics_b"):
        _close(got["cumulative"].get(key, {}), want["cumulative"].get(key, {}), f"cumulative {key}")
    assert [t["name"] for t in got["tests"]] == [t["name"] for t in want["tests"]]
    for a, b in zip(got["tests"], want["tests"]):
        np.testing.assert_allclose(a["e_values"], b["e_values"], rtol=1e-12, err_msg=a["name"])
        for key in ("alarm", "status", "first_alarm", "first_alarm_window", "alarm_since", "change_window"):
            assert a.get(key) == b.get(key), (a["name"], key)
        assert [x["first_window"] for x in a["alarms"]] == [x["first_window"] for x in b["alarms"]]
        for key in ("mean_difference", "lower", "upper"):
            if key in b:
                np.testing.assert_allclose(
                    a[key], b[key], rtol=1e-12, atol=1e-14, err_msg=f"{a['name']} {key}"
                )
    if "weights" in want:
        assert set(got["weights"]) == set(want["weights"])
        assert got["weights"]["sum"] == pytest.approx(want["weights"]["sum"], rel=1e-12)
        assert got["weights"]["n_zero"] == want["weights"]["n_zero"]
        assert got["weights"]["not_weighted"] == want["weights"]["not_weighted"]
    assert got["input"]["not_streamed"] == want["input"]["not_streamed"]


def _parts(table: pa.Table, d, n: int = 3, row_group_size: int = 150):
    d.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(table.num_rows), n)):
        pq.write_table(table.take(pa.array(idx)), d / f"p{i}.parquet", row_group_size=row_group_size)
    return d


@pytest.mark.parametrize("window", ["1D", 250])
def test_weighted_monitor_is_the_same_document_in_memory_streamed_and_on_dask(tmp_path, scheduler, window):
    table = _gaussian(n=1500, days=4, shrink_from=2, seed=11)
    w = np.random.default_rng(2).integers(0, 4, table.num_rows).astype(float)  # some rows of weight 0
    table = table.append_column("w", pa.array(w))
    d = _parts(table, tmp_path / "parts")
    kw = {"time": "t", "window": window, "weights": "w", "mean": "mu", "std": "sigma"}
    memory = uqeval.monitor(table.to_pandas(), y="y", **kw)
    assert memory["input"]["weights"] == "w"
    streamed = uqeval.monitor(str(d), chunk_rows=200, **kw)
    settings = Settings(columns={"weights": "w", "y_true": "y", "mean": "mu", "std": "sigma"})
    dasked, _ = monitor_file(
        d, settings, window=window, time="t", engine=EngineOptions("dask", 200, scheduler)
    )
    assert (memory["input"]["engine"], streamed["input"]["engine"], dasked["input"]["engine"]) == (
        "memory",
        "stream",
        "dask",
    )
    assert memory["weights"]["n_zero"] == int((w == 0).sum()) > 0
    assert_same_document(streamed, memory)
    assert_same_document(dasked, memory)


def test_weighted_state_holds_numbers_only_and_resumes_on_every_engine(tmp_path, scheduler):
    from uqeval.commands.monitor.windows import _unpickle

    table = _gaussian(n=1200, days=4, seed=12)
    table = table.take(pa.compute.sort_indices(table, [("t", "ascending")]))
    w = np.random.default_rng(3).uniform(0, 2, table.num_rows)
    table = table.append_column("w", pa.array(w))
    day2 = int(np.searchsorted(table.column("t").to_numpy(), np.datetime64("2024-03-03T00:00", "ns")))
    first, second = _parts(table.slice(0, day2), tmp_path / "a"), _parts(table.slice(day2), tmp_path / "b")
    whole = _parts(table, tmp_path / "whole")
    settings = Settings(columns={"weights": "w", "y_true": "y", "mean": "mu", "std": "sigma"})
    one, _ = monitor_file(whole, settings, window="1D", time="t")
    for engine in (EngineOptions(chunk_rows=100), EngineOptions("dask", 100, scheduler)):
        _, saved = monitor_file(first, settings, window="1D", time="t", engine=engine, state_source="s")
        payload = _unpickle(_unpickle(saved, "s")["payload"], "s")  # the safe loader: numbers and text only
        probes = [w["state"]["probe"] for w in payload["single"]["windows"].values() if w["state"]]
        assert probes and all(isinstance(p, dict) for p in probes)
        resumed, _ = monitor_file(
            second, settings, window="1D", time="t", engine=engine, state=saved, state_source="s"
        )
        assert_same_document(resumed, one)


@pytest.mark.parametrize("window", ["1D", 300])
def test_two_models_on_dask_equal_the_stream_engine(tmp_path, scheduler, window):
    table = _gaussian(n=2000, days=4, seed=13)
    worse = table.set_column(3, "sigma", pa.array(table.column("sigma").to_numpy() * 1.5))
    a = _parts(table, tmp_path / "a", row_group_size=300)
    b = _parts(worse, tmp_path / "b", row_group_size=170)  # other row groups: rows matched by number
    kw = {"window": window, "time": "t", "bound": 10.0}
    settings = Settings(columns={"y_true": "y", "mean": "mu", "std": "sigma"})
    streamed, _ = monitor_file([a, b], settings, engine=EngineOptions(chunk_rows=250), **kw)
    dasked, _ = monitor_file([a, b], settings, engine=EngineOptions("dask", 250, scheduler), **kw)
    assert dasked["input"]["engine"] == "dask" and "path_b" in dasked["input"]
    assert any(t["name"].startswith("mean_difference") for t in dasked["tests"])
    assert_same_document(dasked, streamed)
    if window == "1D":  # (the times are unsorted: a resume by halves would bring rows before the mark)
        return
    # a run resumed on Dask from the stream engine's state equals one run
    half = table.num_rows // 2
    a1, b1 = _parts(table.slice(0, half), tmp_path / "a1"), _parts(worse.slice(0, half), tmp_path / "b1")
    a2, b2 = _parts(table.slice(half), tmp_path / "a2"), _parts(worse.slice(half), tmp_path / "b2")
    _, saved = monitor_file([a1, b1], settings, engine=EngineOptions(chunk_rows=250), **kw)
    resumed, _ = monitor_file(
        [a2, b2], settings, engine=EngineOptions("dask", 250, scheduler), state=saved, **kw
    )
    assert_same_document(resumed, streamed)


@pytest.mark.parametrize("unit", ["h", "D", "m", "s", "ms", "us", "ns"])
def test_python_api_takes_times_of_any_datetime64_unit(unit):
    rng = np.random.default_rng(0)
    hours = np.sort(rng.integers(0, 72, 300))
    times = (np.datetime64("2024-03-01T00", "h") + hours).astype(f"datetime64[{unit}]")
    y = rng.normal(size=300)
    doc = uqeval.monitor(y_true=y, mean=0.0, std=1.0, time=times, window="1D")
    want = [
        int(np.sum((times >= d) & (times < d + np.timedelta64(1, "D"))))
        for d in np.unique(times.astype("datetime64[D]"))
    ]
    assert [w["n_rows"] for w in doc["windows"]] == want
    assert doc["windows"][0]["start"] == "2024-03-01T00:00:00"


def test_daily_resumes_keep_a_bounded_number_of_windows_open(tmp_path, monkeypatch):
    """A state resumed day after day finishes its old windows (at most MAX_OPEN_WINDOWS stay open however many
    runs), and the last run's document equals one run over every day."""
    from uqeval.commands.monitor import windows as mon

    monkeypatch.setattr(mon, "MAX_OPEN_WINDOWS", 2)
    table = _gaussian(n=1200, days=6, seed=14)
    table = table.take(pa.compute.sort_indices(table, [("t", "ascending")]))
    t = table.column("t").to_numpy()
    whole = tmp_path / "whole.parquet"
    pq.write_table(table, whole)
    settings = Settings(columns={"y_true": "y", "mean": "mu", "std": "sigma"})
    one, _ = monitor_file(whole, settings, window="1D", time="t")
    saved = None
    for day in range(6):
        lo, hi = (np.datetime64("2024-03-01", "ns") + np.timedelta64(d, "D") for d in (day, day + 1))
        part = tmp_path / f"d{day}.parquet"
        pq.write_table(table.filter(pa.array((t >= lo) & (t < hi))), part)
        doc, saved = monitor_file(part, settings, window="1D", time="t", state=saved, state_source="s")
        payload = mon._read_payload(saved, "s")["single"]
        assert sum(w["state"] is not None for w in payload["windows"].values()) <= 2
    assert_same_document(doc, one)


def test_model_b_windows_are_planned_from_its_own_row_groups(tmp_path):
    """On Dask, ``monitor A B`` finishes model B's time windows as it finishes A's: the window keys of each
    task's rows in B come from the statistics of B's row groups that hold those rows (other cuts than A's)."""
    from uqeval.commands.monitor.stream import key_ranges, other_ranges
    from uqeval.commands.monitor.windows import Layout
    from uqeval.engine.dask import partitions

    table = _gaussian(n=1200, days=6, seed=15)
    table = table.take(pa.compute.sort_indices(table, [("t", "ascending")]))
    a = _parts(table, tmp_path / "a", row_group_size=200)
    b = _parts(table, tmp_path / "b", n=2, row_group_size=170)
    layout = Layout("1D", "t")
    tasks = partitions(sorted(str(p) for p in a.iterdir()))
    own = key_ranges(tasks, layout, 0)
    other = other_ranges(tasks, sorted(str(p) for p in b.iterdir()), layout)
    assert len(other) == len(own) == 3
    for (lo, hi), (blo, bhi) in zip(own, other):
        assert blo <= lo <= hi <= bhi and bhi - blo <= hi - lo + 2  # B's cuts reach at most a window further
