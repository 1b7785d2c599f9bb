"""``monitor --state`` counts every row once (issue 35): a state records what it counted (the latest time, the
input files read); a run that brings those rows again is refused with one line (exit 3), or with
``--skip-seen`` leaves them out, so that re-running the same command gives the same document."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.cli import app
from uqeval.commands.monitor.core import monitor_file
from uqeval.config import Settings
from uqeval.engine.options import EngineOptions
from uqeval.errors import InputError, UsageError

from .test_states import assert_same

runner = CliRunner()
T0 = np.datetime64("2024-03-01T00:00", "ns")


def _table(n: int = 900, days: int = 5, seed: int = 3, start: float = 0.0) -> pa.Table:
    """Gaussian predictions with times spread over ``days`` days from ``T0 + start`` days (sorted)."""
    rng = np.random.default_rng(seed)
    secs = np.sort(rng.uniform(start * 86400, (start + days) * 86400, n))
    t = T0 + (secs * 1e9).astype("timedelta64[ns]")
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, n)
    return pa.table({"t": t, "y": mu + sd * rng.normal(size=n), "mu": mu, "sigma": sd})


def _write(table: pa.Table, path) -> str:
    if str(path).endswith(".csv"):
        pacsv.write_csv(table, path)
    else:
        pq.write_table(table, path, row_group_size=200)
    return str(path)


def _before(table: pa.Table, when: str) -> pa.Array:
    return pc.less(table.column("t"), pa.scalar(np.datetime64(when, "ns")))


OPTS = ["--time", "t", "--window", "1D", "--mean", "mu", "--std", "sigma", "-f", "json", "-q"]


def _run(*args: str):
    return runner.invoke(app, ["monitor", *args, *OPTS])


def _error_line(result) -> str:
    lines = [ln for ln in result.stderr.splitlines() if ln.strip() and not ln.startswith("note:")]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


def _same_but_notes(a: dict, b: dict) -> None:
    assert {k: v for k, v in a.items() if k != "notes"} == {k: v for k, v in b.items() if k != "notes"}


def _skip_note(doc: dict) -> str:
    notes = [n for n in doc.get("notes", []) if "left out" in n]
    assert len(notes) == 1, doc.get("notes")
    return notes[0]


def test_the_same_file_twice_is_refused_and_skip_seen_gives_the_same_document(tmp_path):
    day = _write(_table(), tmp_path / "day.csv")
    state, out = tmp_path / "mon.state", tmp_path / "m.json"
    r = _run(day, "--state", str(state), "-o", str(out))
    assert r.exit_code == 0, r.output
    once = json.loads(out.read_text())
    assert once["cumulative"]["n_rows"] == 900
    saved, written = state.read_bytes(), out.read_bytes()
    # a CI retry: refused with one line that says what was counted and how to go on; nothing written
    r = _run(day, "--state", str(state), "-o", str(out))
    assert r.exit_code == 3
    line = _error_line(r)
    assert f"{day}: already counted by {state} (900 row(s) read by an earlier run)" in line
    assert "--skip-seen" in line
    assert state.read_bytes() == saved and out.read_bytes() == written
    # --skip-seen: the same numbers as one run, and a note that says what was left out
    for _ in range(2):
        r = _run(day, "--state", str(state), "-o", str(out), "--skip-seen")
        assert r.exit_code == 0, r.output
        again = json.loads(out.read_text())
        _same_but_notes(again, once)
        assert again["notes"][:-1] == once["notes"]
        assert _skip_note(again) == (
            f"--skip-seen: left out 900 row(s) of 1 input(s) it had read ({day}), already counted by {state}"
        )
        assert "note: --skip-seen: left out 900 row(s)" in r.stderr
    assert [w["n_rows"] for w in again["windows"]] == [w["n_rows"] for w in once["windows"]]


def test_a_copy_of_a_counted_file_is_the_same_input(tmp_path):
    day = _write(_table(), tmp_path / "day.parquet")
    state = tmp_path / "mon.state"
    assert _run(day, "--state", str(state)).exit_code == 0
    copy = tmp_path / "downloaded again.parquet"
    shutil.copyfile(day, copy)
    os.utime(copy, (1e9, 1e9))  # another path and another modification time: the same size and content
    r = _run(str(copy), "--state", str(state))
    assert r.exit_code == 3
    assert (
        f"{copy}: already counted by {state} (900 row(s) read by an earlier run, the same size and content as "
        in (_error_line(r))
    )


def test_an_overlapping_file_is_refused_and_skip_seen_counts_only_its_new_rows(tmp_path):
    table = _table()
    old = table.filter(_before(table, "2024-03-03T12:00"))
    overlap = table.filter(pc.invert(_before(table, "2024-03-02T12:00")))  # a day and a half counted again
    state = tmp_path / "mon.state"
    assert _run(_write(old, tmp_path / "d1.csv"), "--state", str(state)).exit_code == 0
    saved = state.read_bytes()
    d2 = _write(overlap, tmp_path / "d2.csv")
    r = _run(d2, "--state", str(state))
    assert r.exit_code == 3 and state.read_bytes() == saved
    n_old = overlap.num_rows - (table.num_rows - old.num_rows)
    last = str(old.column("t").to_numpy().max())
    line = _error_line(r)
    assert (
        f"{d2}: {n_old} of its {overlap.num_rows} rows are at or before {last}, the latest time {state} "
        in line
    )
    assert f"({old.num_rows} row(s) up to then); give only the rows after it, or --skip-seen" in line
    assert "exactly at that time" not in line
    r = _run(d2, "--state", str(state), "--skip-seen")
    assert r.exit_code == 0, r.output
    resumed = json.loads(r.stdout)
    assert f"left out {n_old} row(s) at or before its latest time {last}" in _skip_note(resumed)
    once = json.loads(_run(_write(table, tmp_path / "all.csv")).stdout)
    assert [w["n_rows"] for w in resumed["windows"]] == [w["n_rows"] for w in once["windows"]]
    assert resumed["cumulative"]["n_rows"] == once["cumulative"]["n_rows"] == 900
    for a, b in zip(resumed["windows"], once["windows"]):
        assert_same(a["metrics"], b["metrics"], {})
    np.testing.assert_allclose(
        [t["e_values"] for t in resumed["tests"]], [t["e_values"] for t in once["tests"]], rtol=1e-12
    )


def test_rows_that_straddle_the_mark_and_rows_at_exactly_the_mark(tmp_path):
    table = _table()
    t = table.column("t").to_numpy()
    d1 = table.filter(_before(table, "2024-03-03T12:00"))
    d2 = table.filter(pc.invert(_before(table, "2024-03-03T12:00")))
    mark = t[d1.num_rows - 1]
    # five late rows of yesterday (new rows, but before the latest time counted) come with today's
    late = _table(n=5, days=1, seed=9, start=1.0)
    state = tmp_path / "mon.state"
    assert _run(_write(d1, tmp_path / "d1.parquet"), "--state", str(state)).exit_code == 0
    mixed = _write(pa.concat_tables([late, d2]), tmp_path / "d2.parquet")
    r = _run(mixed, "--state", str(state))
    assert r.exit_code == 3
    assert f"5 of its {d2.num_rows + 5} rows are at or before {mark}" in _error_line(r)
    r = _run(mixed, "--state", str(state), "--skip-seen")
    assert r.exit_code == 0, r.output
    assert "left out 5 row(s)" in _skip_note(json.loads(r.stdout))
    assert json.loads(r.stdout)["cumulative"]["n_rows"] == 900  # the late rows are not counted
    # ties: a row at exactly the mark counts as counted (so a file read again is idempotent), also when it is
    # a new row of the same time; the message then says why
    state.unlink()
    assert _run(_write(d1, tmp_path / "d1.parquet"), "--state", str(state)).exit_code == 0
    same_time = d2.slice(0, 3).set_column(0, "t", pa.array([mark] * 3, pa.timestamp("ns")))
    r = _run(_write(same_time, tmp_path / "tie.parquet"), "--state", str(state))
    assert r.exit_code == 3
    assert f"all 3 rows are at or before {mark}" in _error_line(r)
    assert "(all exactly at that time: rows of one time must come in one run)" in _error_line(r)


def test_two_inputs_a_b(tmp_path):
    table = _table(n=600, days=4)
    other = table.set_column(2, "mu", pa.compute.add(table.column("mu"), 0.3))
    early = _before(table, "2024-03-02T12:00")
    names = {}
    for name, tab in (("a", table), ("b", other)):
        names[name] = _write(tab, tmp_path / f"{name}.parquet")
        names[name + "1"] = _write(tab.filter(early), tmp_path / f"{name}1.parquet")
        names[name + "2"] = _write(tab, tmp_path / f"{name}2.parquet")  # all rows: overlaps the first part
    state = tmp_path / "mon.state"
    pair = ["--bound", "10", "--state", str(state)]
    r = _run(names["a"], names["b"], *pair)
    assert r.exit_code == 0, r.output
    once = json.loads(r.stdout)
    r = _run(names["a"], names["b"], *pair)
    assert r.exit_code == 3 and "already counted" in _error_line(r)
    r = _run(names["a"], names["b"], *pair, "--skip-seen")
    assert r.exit_code == 0, r.output
    _same_but_notes(json.loads(r.stdout), once)
    # the first part, then both whole inputs again (an overlap on both sides): the mark leaves out the rows
    # counted on both sides alike
    state.unlink()
    assert _run(names["a1"], names["b1"], *pair).exit_code == 0
    r = _run(names["a2"], names["b2"], *pair)
    assert r.exit_code == 3 and "rows are at or before" in _error_line(r)
    r = _run(names["a2"], names["b2"], *pair, "--skip-seen")
    assert r.exit_code == 0, r.output
    resumed = json.loads(r.stdout)
    n_early = int(pc.sum(early).as_py())
    assert [n for n in resumed["notes"] if "left out" in n] == [
        f"{side}: --skip-seen: left out {n_early} row(s) at or before its latest time "
        f"{table.column('t').to_numpy()[n_early - 1]}, already counted by {state}"
        for side in ("A", "B")
    ]
    for a, b in zip(resumed["tests"], once["tests"]):
        np.testing.assert_allclose(a["e_values"], b["e_values"], rtol=1e-12)
    assert resumed["tests"][-1]["mean_difference"] == pytest.approx(once["tests"][-1]["mean_difference"])


def test_row_windows_recognise_inputs_by_their_fingerprint(tmp_path):
    table = _table(n=1000)
    parts = tmp_path / "parts"
    parts.mkdir()
    _write(table.slice(0, 450), parts / "p1.parquet")
    state = tmp_path / "mon.state"
    rows = ["--window", "200"]  # the later --window wins over OPTS' 1D
    r = runner.invoke(app, ["monitor", str(parts), "--state", str(state), *OPTS, *rows])
    assert r.exit_code == 0, r.output
    # the directory grows by one part: the part already read is refused, or left out with --skip-seen
    _write(table.slice(450), parts / "p2.parquet")
    r = runner.invoke(app, ["monitor", str(parts), "--state", str(state), *OPTS, *rows])
    assert r.exit_code == 3
    assert f"{parts / 'p1.parquet'}: already counted by {state} (450 row(s)" in _error_line(r)
    for _ in range(2):  # and once more: the second part is now counted too
        r = runner.invoke(app, ["monitor", str(parts), "--state", str(state), *OPTS, *rows, "--skip-seen"])
        assert r.exit_code == 0, r.output
        resumed = json.loads(r.stdout)
    assert "left out 1000 row(s) of 2 input(s)" in _skip_note(resumed)
    whole = tmp_path / "whole"
    whole.mkdir()
    _write(table, whole / "all.parquet")
    once = json.loads(runner.invoke(app, ["monitor", str(whole), *OPTS, *rows]).stdout)
    assert [w["n_rows"] for w in resumed["windows"]] == [200] * 5
    assert [(w["start"], w["end"]) for w in resumed["windows"]] == [
        (w["start"], w["end"]) for w in once["windows"]
    ]
    for a, b in zip(resumed["windows"], once["windows"]):
        assert_same(a["metrics"], b["metrics"], {})


def test_dask_engine(tmp_path, dask_cluster):
    table = _table(n=1200, days=6)
    parts = tmp_path / "parts"
    parts.mkdir()
    early = _before(table, "2024-03-04T06:00")
    _write(table.filter(early), parts / "p1.parquet")
    kw = {"window": "1D", "time": "t"}
    kw["engine"] = EngineOptions("dask", 150, scheduler=dask_cluster.scheduler_address)
    s = Settings(columns={"mean": "mu", "std": "sigma"})
    first, state = monitor_file(parts, s, state_source="mon.state", **kw)
    with pytest.raises(InputError, match=r"p1\.parquet: already counted by mon\.state \(\d+ row\(s\)"):
        monitor_file(parts, s, state=state, state_source="mon.state", **kw)
    again, same = monitor_file(parts, s, state=state, state_source="mon.state", skip_seen=True, **kw)
    _same_but_notes(again, first)
    # an overlapping part (the last day of p1 and the rest) next to p1: p1 is left out by its fingerprint, the
    # overlap's old rows by the mark, on the workers
    _write(table.filter(pc.invert(_before(table, "2024-03-03T00:00"))), parts / "p2.parquet")
    with pytest.raises(InputError, match="already counted"):
        monitor_file(parts, s, state=same, state_source="mon.state", **kw)
    doc, _ = monitor_file(parts, s, state=same, state_source="mon.state", skip_seen=True, **kw)
    n_overlap = int(pc.sum(early).as_py()) - int(pc.sum(_before(table, "2024-03-03T00:00")).as_py())
    note = _skip_note(doc)
    assert "1 input(s) it had read" in note and f" and {n_overlap} row(s) at or before its latest" in note
    whole = tmp_path / "whole.parquet"
    _write(table, whole)
    once, _ = monitor_file(whole, s, window="1D", time="t", engine=EngineOptions("stream", 150))
    assert [w["n_rows"] for w in doc["windows"]] == [w["n_rows"] for w in once["windows"]]
    for a, b in zip(doc["windows"], once["windows"]):
        assert_same(a["metrics"], b["metrics"], {})
    np.testing.assert_allclose(
        [t["e_values"] for t in doc["tests"]], [t["e_values"] for t in once["tests"]], rtol=1e-12
    )


def test_python_api(tmp_path):
    table = _table(n=600, days=3)
    f = _write(table, tmp_path / "day.parquet")
    state = tmp_path / "mon.state"
    kw = {"time": "t", "window": "1D", "mean": "mu", "std": "sigma", "state": state}
    once = uqeval.monitor(f, **kw)
    with pytest.raises(uqeval.InputError, match=r"already counted .* or skip_seen= to leave out") as err:
        uqeval.monitor(f, **kw)
    assert "--" not in str(err.value)
    again = uqeval.monitor(f, skip_seen=True, **kw)
    _same_but_notes(again, once)
    assert _skip_note(again).startswith("skip_seen=: left out 600 row(s)")
    # a table in memory: known by the fingerprint of its arrays, and its rows by the mark
    df = table.to_pandas()
    mem = tmp_path / "mem.state"
    kw = {"time": "t", "window": "1D", "y": "y", "mean": "mu", "std": "sigma", "state": mem}
    once = uqeval.monitor(df, **kw)
    with pytest.raises(uqeval.InputError, match=r"<table>: already counted .* or skip_seen= to leave out"):
        uqeval.monitor(df, **kw)
    again = uqeval.monitor(df, skip_seen=True, **kw)
    _same_but_notes(again, once)
    assert "left out 600 row(s) of 1 input(s) it had read (<table>)" in _skip_note(again)
    tail = df.iloc[200:]  # another table: its rows the state counted are known by the mark
    with pytest.raises(
        uqeval.InputError, match=r"all 400 rows are at or before .* or skip_seen= to leave out"
    ):
        uqeval.monitor(tail, **kw)
    _same_but_notes(uqeval.monitor(tail, skip_seen=True, **kw), once)
    # row windows in memory: arrays only, the fingerprint alone recognises them
    rng = np.random.default_rng(1)
    y = rng.normal(size=500)
    rows = {"window": 100, "mean": 0.0, "std": 1.0, "state": tmp_path / "rows.state"}
    first = uqeval.monitor(y_true=y, **rows)
    with pytest.raises(uqeval.InputError, match=r"<arrays>: already counted"):
        uqeval.monitor(y_true=y, **rows)
    _same_but_notes(uqeval.monitor(y_true=y, skip_seen=True, **rows), first)
    assert (
        uqeval.monitor(y_true=y[::-1].copy(), **rows)["cumulative"]["n_rows"] == 1000
    )  # other rows: counted
    with pytest.raises(UsageError, match=r"skip_seen= .* give state= as well"):
        uqeval.monitor(df, time="t", window="1D", y="y", mean="mu", std="sigma", skip_seen=True)
    with pytest.raises(UsageError, match=r"skip_seen= .* give state='FILE' as well"):
        uqeval.monitor(f, time="t", window="1D", mean="mu", std="sigma", skip_seen=True)
    r = _run(f, "--skip-seen")
    assert (
        r.exit_code == 2 and "--skip-seen leaves out the rows a state counted: give --state FILE" in r.output
    )


def test_a_run_that_fails_leaves_the_state_as_it_was(tmp_path, monkeypatch):
    from uqeval.commands.monitor import windows as mon
    from uqeval.io import writers

    table = _table()
    d1 = _write(table.filter(_before(table, "2024-03-03")), tmp_path / "d1.parquet")
    d2 = _write(table.filter(pc.invert(_before(table, "2024-03-03"))), tmp_path / "d2.parquet")
    state, out = tmp_path / "mon.state", tmp_path / "m.json"
    assert _run(d1, "--state", str(state)).exit_code == 0
    saved = state.read_bytes()
    # a crash while reading (the third batch)
    real_add, calls = mon.Windows.add, []

    def crash(self, *args, **kw):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_add(self, *args, **kw)

    monkeypatch.setattr(mon.Windows, "add", crash)
    r = runner.invoke(
        app, ["monitor", d2, "--state", str(state), "-o", str(out), *OPTS, "--chunk-rows", "100"]
    )
    assert r.exit_code != 0 and state.read_bytes() == saved and not out.exists()
    monkeypatch.setattr(mon.Windows, "add", real_add)
    # the document cannot be written: the state, written after it, stays as it was
    real_commit = writers._commit

    def fail_json(kind, target, payload):
        if str(target).endswith(".json"):
            raise OSError(28, "No space left on device")
        return real_commit(kind, target, payload)

    monkeypatch.setattr(writers, "_commit", fail_json)
    r = runner.invoke(app, ["monitor", d2, "--state", str(state), "-o", str(out), *OPTS])
    assert r.exit_code == 3 and "No space left" in r.output and state.read_bytes() == saved
    monkeypatch.setattr(writers, "_commit", real_commit)
    # the retry counts d2 once
    r = runner.invoke(app, ["monitor", d2, "--state", str(state), "-o", str(out), *OPTS])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["cumulative"]["n_rows"] == 900


def _rewrap(data: bytes, edit) -> bytes:
    """A state file whose pickled state ``edit`` changed, with a valid checksum (a file written by hand)."""
    import hashlib
    import pickle

    outer = pickle.loads(data)
    inner = pickle.loads(outer["payload"])
    edit(inner)
    body = pickle.dumps(inner)
    return pickle.dumps({**outer, "sha256": hashlib.sha256(body).hexdigest(), "payload": body})


def _set(path: list, value):
    def edit(d):
        for k in path[:-1]:
            d = d[k]
        if value is KeyError:
            del d[path[-1]]
        else:
            d[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    "how",
    [
        "truncated",
        "byte flipped",
        "bytes appended",
        "empty",
        "json",
        "other pickle",
        "checksum",
        "format 9",
        "mark not a time",
        "inputs not a list",
        "fingerprint without size",
        "negative rows",
        "window without state",
        "no layout",
        "no windows",
        "levels",
        "tests sums",
    ],
)
def test_a_state_changed_by_hand_or_cut_short_is_refused_in_one_line(tmp_path, how):
    import pickle

    day = _write(_table(n=300, days=2), tmp_path / "day.parquet")
    state = tmp_path / "mon.state"
    assert _run(day, "--state", str(state)).exit_code == 0
    good = state.read_bytes()
    bad = {
        "truncated": lambda: good[: len(good) // 2],
        "byte flipped": lambda: (
            good[: len(good) // 2] + bytes([good[len(good) // 2] ^ 1]) + good[len(good) // 2 + 1 :]
        ),
        "bytes appended": lambda: good + b"junk",
        "empty": lambda: b"",
        "json": lambda: b'{"format": "uqeval.monitor-state/2"}',
        "other pickle": lambda: pickle.dumps([1, 2, 3]),
        "checksum": lambda: pickle.dumps({**pickle.loads(good), "sha256": "0" * 64}),
        "format 9": lambda: _rewrap(good, _set(["format"], "uqeval.monitor-state/9")),
        "mark not a time": lambda: _rewrap(good, _set(["single", "mark"], "yesterday")),
        "inputs not a list": lambda: _rewrap(good, _set(["single", "inputs"], {"a": 1})),
        "fingerprint without size": lambda: _rewrap(good, _set(["single", "inputs", 0, "size"], KeyError)),
        "negative rows": lambda: _rewrap(good, _set(["single", "n_seen"], -5)),
        "window without state": lambda: _rewrap(
            good, lambda d: d["single"]["windows"][next(iter(d["single"]["windows"]))].pop("state")
        ),
        "no layout": lambda: _rewrap(good, _set(["layout"], KeyError)),
        "no windows": lambda: _rewrap(good, _set(["single", "windows"], [1, 2])),
        "levels": lambda: _rewrap(good, _set(["single", "levels"], ["0.95"])),
        "tests sums": lambda: _rewrap(
            good, lambda d: next(iter(d["single"]["windows"].values()))["tests"].update(miss=np.zeros(7))
        ),
    }[how]()
    state.write_bytes(bad)
    tomorrow = _write(_table(n=300, days=2, seed=4, start=2.0), tmp_path / "tomorrow.parquet")
    r = _run(tomorrow, "--state", str(state))
    assert r.exit_code == 3, r.output
    line = _error_line(r)
    assert line.startswith(f"error: {state}: ") and ("delete it" in line or "restore" in line), line
    assert state.read_bytes() == bad


def test_a_state_saved_before_the_mark_still_loads(tmp_path):
    import pickle

    from uqeval.commands.monitor.windows import STATE_FORMAT_1

    table = _table()
    d1 = _write(table.filter(_before(table, "2024-03-03")), tmp_path / "d1.parquet")
    d2 = _write(table.filter(pc.invert(_before(table, "2024-03-03"))), tmp_path / "d2.parquet")
    state = tmp_path / "mon.state"
    assert _run(d1, "--state", str(state)).exit_code == 0
    # the state as an earlier uqeval wrote it: the pickled state itself, format /1, no mark and no inputs
    payload = pickle.loads(pickle.loads(state.read_bytes())["payload"])
    for key in ("mark", "inputs"):
        del payload["single"][key]
    state.write_bytes(pickle.dumps({**payload, "format": STATE_FORMAT_1}))
    r = _run(d2, "--state", str(state))
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["cumulative"]["n_rows"] == 900
    # saved again with what it counted from now on: the latest time covers d1's rows too
    r = _run(d1, "--state", str(state))
    assert r.exit_code == 3 and "rows are at or before" in _error_line(r)


def test_a_uri_is_fingerprinted_through_its_filesystem(tmp_path):
    day = _write(_table(n=300, days=2), tmp_path / "day.parquet")
    state = tmp_path / "mon.state"
    uri = (tmp_path / "day.parquet").as_uri()
    assert _run(uri, "--state", str(state)).exit_code == 0
    r = _run(day, "--state", str(state))  # the same file by its path: the same size and content
    assert r.exit_code == 3 and f"{day}: already counted by {state}" in _error_line(r)
    assert f"the same size and content as {uri}" in _error_line(r)
    missing = tmp_path / "gone.parquet"
    from uqeval.commands.monitor.windows import input_fingerprint

    with pytest.raises(InputError, match=r"gone\.parquet: cannot read it to fingerprint it for state="):
        input_fingerprint(missing.as_uri())


def test_two_inputs_with_row_windows_read_in_part_are_refused(tmp_path):
    table = _table(n=400)
    other = table.set_column(2, "mu", pa.compute.add(table.column("mu"), 0.3))
    dirs = [tmp_path / "A", tmp_path / "B"]
    for d, tab in zip(dirs, (table, other)):
        d.mkdir()
        _write(tab.slice(0, 150), d / "p1.parquet")
    state = tmp_path / "mon.state"
    argv = [
        "monitor",
        *map(str, dirs),
        "--window",
        "100",
        "--bound",
        "10",
        "--state",
        str(state),
        "-f",
        "json",
    ]
    assert runner.invoke(app, argv).exit_code == 0
    for d, tab in zip(dirs, (table, other)):
        _write(tab.slice(150), d / "p2.parquet")
    r = runner.invoke(app, [*argv, "--skip-seen"])
    assert r.exit_code == 3
    assert "--skip-seen leaves out a whole run of row windows, but the state has read only some of these" in (
        _error_line(r)
    )
