"""``uqeval monitor``: each window's metrics equal ``score --engine stream`` on that window's rows, the cumulative
ones equal it on all rows; resuming from a saved state equals one run; the Python API (in memory) and the
Dask engine equal the stream engine; the e-processes are valid and detect a change."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import uqeval
from uqeval.catalogue import states
from uqeval.cli import app
from uqeval.commands.monitor.core import monitor_file
from uqeval.commands.score.stream import score_with_engine
from uqeval.config import Settings
from uqeval.engine.options import EngineOptions
from uqeval.errors import InputError, UsageError
from uqeval.metrics import sequential

from ..conftest import SAMPLE
from .test_states import assert_same

runner = CliRunner()

FILES = [
    "gaussian.parquet",
    "intervals_multi.csv",
    "quantiles.parquet",
    "samples.parquet",
    "classification.parquet",
]


def _read(name: str) -> pa.Table:
    path = SAMPLE / name
    return pacsv.read_csv(path) if name.endswith(".csv") else pq.read_table(path)


def _skipped(kind: str) -> dict[str, str]:
    return {**states.not_streamed(kind), **{p: "two passes" for p in states.two_pass(kind)}}


@pytest.mark.parametrize("name", FILES)
def test_each_window_and_all_rows_equal_score_on_those_rows(tmp_path, name):
    table = _read(name)
    whole = tmp_path / "whole.parquet"
    pq.write_table(table, whole)
    doc, _ = monitor_file(
        whole, Settings(), window=800, engine=EngineOptions(chunk_rows=300), adversarial_windows=True
    )
    # by default the windows leave out the adversarial draws (input.not_per_window), the rest is the same
    lean, _ = monitor_file(whole, Settings(), window=800, engine=EngineOptions(chunk_rows=300))
    adv = doc["cumulative"]["metrics"].get("adv_group_calibration")
    assert set(lean["input"]["not_per_window"]) == {f"adv_group_calibration.{k}" for k in adv or {}}
    assert doc["input"]["not_per_window"] == {}
    assert lean["cumulative"] == doc["cumulative"]
    for a, b in zip(lean["windows"], doc["windows"]):
        assert a["metrics"] == {k: v for k, v in b["metrics"].items() if k != "adv_group_calibration"}
    assert [w["n_rows"] for w in doc["windows"]] == [800, 800, 400]
    assert [(w["start"], w["end"]) for w in doc["windows"]] == [(0, 800), (800, 1600), (1600, 2400)]
    kind = doc["input"]["representation"]
    for i, w in enumerate(doc["windows"]):
        part = tmp_path / f"w{i}.parquet"
        pq.write_table(table.slice(800 * i, 800), part)
        ref = score_with_engine(part, Settings(), EngineOptions("stream")).summary
        assert_same(
            w["metrics"],
            ref["metrics"],
            _skipped(kind),
            ref["input"]["approximate"],
            ref["input"].get("bounds"),
        )
    ref = score_with_engine(whole, Settings(), EngineOptions("stream")).summary
    assert_same(
        doc["cumulative"]["metrics"],
        ref["metrics"],
        _skipped(kind),
        ref["input"]["approximate"],
        ref["input"].get("bounds"),
    )
    assert "accuracy.mdae" not in json.dumps(doc["cumulative"]["metrics"])


def _gaussian(n: int = 3000, days: int = 10, shrink_from: int | None = None, seed: int = 3) -> pa.Table:
    rng = np.random.default_rng(seed)
    secs = rng.uniform(0, days * 86400, n)  # unsorted times: each row goes to its window wherever it is
    t = np.datetime64("2024-03-01T00:00", "ns") + (secs * 1e9).astype("timedelta64[ns]")
    mu = rng.normal(size=n)
    sd = rng.uniform(0.5, 2.0, n)
    y = mu + sd * rng.normal(size=n)
    if shrink_from is not None:
        sd = np.where(secs >= shrink_from * 86400, 0.6 * sd, sd)
    return pa.table({"t": t, "y": y, "mu": mu, "sigma": sd})


def test_time_windows_are_half_open_days_and_equal_score(tmp_path):
    table = _gaussian()
    f = tmp_path / "g.parquet"
    pq.write_table(table, f, row_group_size=700)
    epoch, _ = monitor_file(f, Settings(), window="2D", time="t", engine=EngineOptions(chunk_rows=1000))
    assert epoch["windows"][0]["start"] == "2024-02-29T00:00:00"  # 2D windows from the epoch: even days
    doc, _ = monitor_file(
        f,
        Settings(),
        window="4D",
        time="t",
        origin="2024-03-01",
        engine=EngineOptions(chunk_rows=1000),
        adversarial_windows=True,
        detect=False,
    )
    detected, _ = monitor_file(
        f, Settings(), window="4D", time="t", origin="2024-03-01", engine=EngineOptions(chunk_rows=1000)
    )
    t = table.column("t").to_numpy()
    assert doc["windows"][0]["start"] == "2024-03-01T00:00:00"
    assert [w["end"] for w in doc["windows"]] == [
        "2024-03-05T00:00:00",
        "2024-03-09T00:00:00",
        "2024-03-13T00:00:00",
    ]
    for i, w in enumerate(doc["windows"]):
        inside = (t >= np.datetime64(w["start"])) & (t < np.datetime64(w["end"]))
        assert w["n_rows"] == inside.sum()
        part = tmp_path / f"d{i}.parquet"
        pq.write_table(table.filter(pa.array(inside)), part)
        ref = score_with_engine(part, Settings(), EngineOptions("stream")).summary
        assert_same(
            w["metrics"],
            ref["metrics"],
            _skipped("gaussian"),
            ref["input"]["approximate"],
            ref["input"].get("bounds"),
        )
    # the tests at each look are the e-processes of the cumulative sums (here by hand from the rows)
    cov = next(x for x in doc["tests"] if x["name"] == "coverage@0.95")
    y, mu, sd = (table.column(c).to_numpy() for c in ("y", "mu", "sigma"))
    from scipy.stats import norm

    miss = np.abs(y - mu) > norm.ppf(0.975) * sd
    ends = np.array([np.datetime64(w["end"]) for w in doc["windows"]])
    n = np.array([(t < e).sum() for e in ends])
    k = np.array([miss[t < e].sum() for e in ends])
    under, over = sequential.coverage_log_e(n, k, 0.05)
    np.testing.assert_allclose(cov["e_values"], 0.5 * (np.exp(under) + np.exp(over)), rtol=1e-9)
    # the detector: the sum over restarts at every window of the same e-process on the rows since then
    det = next(x for x in detected["tests"] if x["name"] == "coverage@0.95")
    starts = np.array([np.datetime64(w["start"]) for w in doc["windows"]])
    by_hand = []
    for e in ends:
        total = 0.0
        for s in starts[starts < e]:
            inside = (t >= s) & (t < e)
            u, o = sequential.coverage_log_e(inside.sum(), miss[inside].sum(), 0.05)
            total += 0.5 * (np.exp(u) + np.exp(o))
        by_hand.append(total)
    np.testing.assert_allclose(det["e_values"], by_hand, rtol=1e-9)
    assert detected["mode"] == "detect" and det["threshold"] == 3 * 3650  # coverage, pit_uniform, pit_mean


def test_resuming_from_a_state_equals_one_run(tmp_path):
    table = _gaussian(days=6)
    t = table.column("t").to_numpy()
    cut = np.datetime64("2024-03-04T12:00")  # the window of day 4 (2D windows: 3-5 March) spans both runs
    pq.write_table(table, tmp_path / "all.parquet")
    pq.write_table(table.filter(pa.array(t < cut)), tmp_path / "day1.parquet")
    pq.write_table(table.filter(pa.array(t >= cut)), tmp_path / "day2.parquet")
    state = tmp_path / "state.bin"
    opts = ["--time", "t", "--window", "2D", "-f", "json", "-q"]
    for day in ("day1", "day2"):
        r = runner.invoke(app, ["monitor", str(tmp_path / f"{day}.parquet"), "--state", str(state), *opts])
        assert r.exit_code == 0, r.output
    resumed = json.loads(r.stdout)
    once = json.loads(runner.invoke(app, ["monitor", str(tmp_path / "all.parquet"), *opts]).stdout)
    assert_same(resumed["cumulative"]["metrics"], once["cumulative"]["metrics"], {})
    for a, b in zip(resumed["windows"], once["windows"]):
        assert (a["start"], a["end"], a["n_rows"]) == (b["start"], b["end"], b["n_rows"])
        assert_same(a["metrics"], b["metrics"], {})
    np.testing.assert_allclose(
        [x["e_values"] for x in resumed["tests"]], [x["e_values"] for x in once["tests"]], rtol=1e-12
    )
    # the detectors (the default) resume exactly: their paths, alarms, change points and status
    assert resumed["mode"] == once["mode"] == "detect"
    for a, b in zip(resumed["tests"], once["tests"]):
        assert (a["status"], a["alarms"], a["metric"]) == (b["status"], b["alarms"], b["metric"])
    # so do the anytime-valid tests (--test)
    r = runner.invoke(
        app, ["monitor", str(tmp_path / "day1.parquet"), "--state", str(tmp_path / "t.bin"), "--test", *opts]
    )
    r = runner.invoke(
        app, ["monitor", str(tmp_path / "day2.parquet"), "--state", str(tmp_path / "t.bin"), "--test", *opts]
    )
    tested = json.loads(r.stdout)
    plain = json.loads(runner.invoke(app, ["monitor", str(tmp_path / "all.parquet"), "--test", *opts]).stdout)
    assert tested["mode"] == "test"
    np.testing.assert_allclose(
        [x["e_values"] for x in tested["tests"]], [x["e_values"] for x in plain["tests"]], rtol=1e-12
    )
    # another window than the state's is refused (exit 2)
    r = runner.invoke(
        app,
        ["monitor", str(tmp_path / "day2.parquet"), "--state", str(state), "--time", "t", "--window", "1D"],
    )
    assert r.exit_code == 2 and "state" in r.output


def test_row_windows_resume_their_numbering(tmp_path):
    table = _read("gaussian.parquet")
    pq.write_table(table.slice(0, 1100), tmp_path / "a.parquet")
    pq.write_table(table.slice(1100), tmp_path / "b.parquet")
    pq.write_table(table, tmp_path / "all.parquet")
    _, state = monitor_file(tmp_path / "a.parquet", Settings(), window=500)
    doc, _ = monitor_file(tmp_path / "b.parquet", Settings(), window=500, state=state)
    once, _ = monitor_file(tmp_path / "all.parquet", Settings(), window=500)
    assert [w["n_rows"] for w in doc["windows"]] == [500, 500, 500, 500]
    for a, b in zip(doc["windows"], once["windows"]):
        assert_same(a["metrics"], b["metrics"], {})


def test_python_api_in_memory_equals_stream(tmp_path):
    table = _gaussian(n=1500, days=4)
    f = tmp_path / "g.parquet"
    pq.write_table(table, f)
    streamed = uqeval.monitor(str(f), time="t", window="1D", chunk_rows=400)
    memory = uqeval.monitor(table.to_pandas(), time="t", window="1D", y="y", mean="mu", std="sigma")
    assert memory["input"]["engine"] == "memory"
    assert len(memory["windows"]) == len(streamed["windows"]) == 4
    for a, b in zip(memory["windows"], streamed["windows"]):
        assert (a["start"], a["n_rows"]) == (b["start"], b["n_rows"])
        assert_same(a["metrics"], b["metrics"], {})
    assert [x["e_value"] for x in memory["tests"]] == pytest.approx(
        [x["e_value"] for x in streamed["tests"]], rel=1e-12
    )
    with pytest.raises(uqeval.UsageError, match="window="):
        uqeval.monitor(str(f), time="t", window="1 fortnight")


def test_dask_in_process_cluster_equals_stream(tmp_path):
    distributed = pytest.importorskip("distributed")
    table = _gaussian(n=1200, days=3)
    d = tmp_path / "parts"
    d.mkdir()
    for i, idx in enumerate(np.array_split(np.arange(table.num_rows), 3)):
        pq.write_table(table.take(pa.array(idx)), d / f"p{i}.parquet", row_group_size=150)
    streamed, _ = monitor_file(d, Settings(), window="1D", time="t", engine=EngineOptions(chunk_rows=200))
    with distributed.LocalCluster(
        n_workers=1, processes=False, protocol="tcp", dashboard_address="127.0.0.1:0", silence_logs=50
    ) as c:
        dasked, _ = monitor_file(
            d, Settings(), window="1D", time="t", engine=EngineOptions("dask", 200, c.scheduler_address)
        )
    for a, b in zip(dasked["windows"], streamed["windows"]):
        assert a["n_rows"] == b["n_rows"]
        assert_same(a["metrics"], b["metrics"], {})
    np.testing.assert_allclose(
        [x["e_values"] for x in dasked["tests"]], [x["e_values"] for x in streamed["tests"]], rtol=1e-12
    )


@pytest.mark.parametrize("window", ["6h", 150])
def test_dask_tasks_finish_the_windows_no_other_task_has(tmp_path, window):
    from uqeval.commands.monitor.stream import plan_run
    from uqeval.commands.monitor.windows import Layout, Windows
    from uqeval.engine.dask import partitions, task_batches
    from uqeval.engine.fold import Piece
    from uqeval.engine.local import _prepare

    distributed = pytest.importorskip("distributed")
    table = _gaussian(n=1200, days=3)
    table = table.take(pa.compute.sort_indices(table, [("t", "ascending")]))  # time order across files
    d = tmp_path / "parts"
    d.mkdir()
    for i in range(3):
        pq.write_table(table.slice(400 * i, 400), d / f"p{i}.parquet", row_group_size=100)
    kw = {"window": window, "time": "t"}
    streamed, _ = monitor_file(d, Settings(), engine=EngineOptions(chunk_rows=100), **kw)
    with distributed.LocalCluster(
        n_workers=1, processes=False, protocol="tcp", dashboard_address=":0", silence_logs=50
    ) as c:
        dasked, _ = monitor_file(d, Settings(), engine=EngineOptions("dask", 100, c.scheduler_address), **kw)
    assert [w["n_rows"] for w in dasked["windows"]] == [w["n_rows"] for w in streamed["windows"]]
    for a, b in zip(dasked["windows"], streamed["windows"]):
        assert_same(a["metrics"], b["metrics"], {})
    assert_same(dasked["cumulative"]["metrics"], streamed["cumulative"]["metrics"], {})
    # each task shares at most its edge windows with its neighbours: the merge of two tasks' states finishes
    # every window of theirs that the third task cannot hold rows of (the states travel with a few windows)
    tasks = partitions(sorted(str(p) for p in d.iterdir()))
    layout = Layout(window, "t")
    plan = plan_run(layout, None, tasks)
    assert all(hi - lo <= 6 for lo, hi in plan.ranges)
    _, col_plan, _ = _prepare(d, Settings(), allow_by=True)
    states = []
    for task in tasks[:2]:
        win = Windows(layout, Settings(), plan)
        for b, rows, offset, cols in task_batches(
            task, col_plan, Settings(), 100, list(col_plan.needed()), {"t": "t"}
        ):
            win.add(Piece(task[0], b, rows, offset, cols))
        states.append(win)
    merged = states[0].merge(states[1])
    still_open = [k for k, w in merged.windows.items() if w["state"] is not None]
    assert 0 < len(still_open) <= 2 and len(merged.windows) > len(still_open)
    lo, hi = plan.ranges[2]
    assert all(lo <= k <= hi or k in plan.held for k in still_open)


def test_overconfidence_alarms_and_check_rules(tmp_path):
    table = _gaussian(n=4000, days=10, shrink_from=6, seed=5)
    f = tmp_path / "g.parquet"
    pq.write_table(table, f)
    out = tmp_path / "m.json"
    r = runner.invoke(
        app,
        [
            "monitor",
            str(f),
            "--time",
            "t",
            "--window",
            "1D",
            "-o",
            str(out),
            "--plot",
            str(tmp_path / "m.png"),
            "-f",
            "markdown",
        ],
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = json.loads(out.read_text())
    cov = next(x for x in doc["tests"] if x["name"] == "coverage@0.95")
    assert cov["alarm"] and cov["first_alarm_window"] in (6, 7)  # the change starts in window 6
    assert all(x < cov["threshold"] for x in cov["e_values"][:6])
    assert (
        cov["status"] == "alarm" and cov["change_window"] == 6 and cov["change_at"] == "2024-03-07T00:00:00"
    )
    assert cov["metric"]["name"] == "coverage" and cov["metric"]["value"] < 0.85
    # one line per test first, then the windows
    assert r.stdout.index("| coverage@0.95 | ALARM |") < r.stdout.index("| window | rows |")
    assert "| 2024-03-07\\* |" in r.stdout  # Markdown-escaped *
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules]\n"alarms" = { max = 0 }\n"last.coverage.0.95.coverage" = { min = 0.9 }\n')
    r = runner.invoke(app, ["check", str(out), "--rules", str(rules)])
    assert r.exit_code == 1 and "alarms" in r.output
    rules.write_text(
        '[rules]\n"cumulative.coverage.0.95.coverage" = { min = 0.5 }\n"tests.pit_uniform.e_value" = { min = 0 }\n'
    )
    assert runner.invoke(app, ["check", str(out), "--rules", str(rules)]).exit_code == 0


def test_two_models_confidence_sequence(tmp_path):
    table = _gaussian(n=2000, days=4)
    worse = table.set_column(3, "sigma", pa.array(table.column("sigma").to_numpy() * 1.5))
    pq.write_table(table, tmp_path / "a.parquet", row_group_size=300)
    pq.write_table(worse, tmp_path / "b.parquet", row_group_size=170)  # other batch boundaries: rows matched
    doc, _ = monitor_file(
        [tmp_path / "a.parquet", tmp_path / "b.parquet"],
        Settings(),
        window="1D",
        time="t",
        engine=EngineOptions(chunk_rows=250),
        bound=10.0,
    )
    diff = next(x for x in doc["tests"] if x["name"].startswith("mean_difference"))
    from uqeval.functions import crps_normal

    y, mu, sd = (table.column(c).to_numpy() for c in ("y", "mu", "sigma"))
    d = crps_normal(y, mu, sd, reduce=None) - crps_normal(y, mu, 1.5 * sd, reduce=None)
    assert diff["mean_difference"][-1] == pytest.approx(d.mean(), rel=1e-9)
    assert diff["lower"][-1] <= d.mean() <= diff["upper"][-1]
    assert (
        doc["cumulative"]["metrics_b"]["scoring_rule"]["crps"]
        > doc["cumulative"]["metrics"]["scoring_rule"]["crps"]
    )
    r = runner.invoke(
        app,
        [
            "monitor",
            str(tmp_path / "a.parquet"),
            str(tmp_path / "b.parquet"),
            "--time",
            "t",
            "--window",
            "1D",
        ],
    )
    assert r.exit_code == 2 and "--bound" in r.output


def test_bad_window_and_time_column_exit_cleanly(tmp_path):
    f = tmp_path / "g.parquet"
    pq.write_table(_gaussian(n=200, days=2), f)
    r = runner.invoke(app, ["monitor", str(f), "--window", "3 weeks", "--time", "t"])
    assert r.exit_code == 2 and "--window" in r.output
    r = runner.invoke(app, ["monitor", str(f), "--window", "1D"])
    assert r.exit_code == 2 and "--time" in r.output
    r = runner.invoke(app, ["monitor", str(f), "--window", "1D", "--time", "y"])
    assert r.exit_code == 3 and "'y'" in r.output and "Traceback" not in r.output
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "day,y,mu,sigma\n" + "".join(f"{'soon' if i == 7 else '2024-01-01'},0.1,0,1\n" for i in range(30))
    )
    r = runner.invoke(app, ["monitor", str(bad), "--window", "1D", "--time", "day"])
    assert r.exit_code == 3 and "not a time at row 7 (line 9 of the file) ('soon')" in r.output


def test_coverage_e_process_by_hand_and_valid_on_calibrated_streams():
    # one look after 10 rows with 3 misses at m = 0.1: the mean of the grid's likelihood ratios
    p = 0.1 + 0.9 * sequential.COVERAGE_GRID
    under, _ = sequential.coverage_log_e(np.array([10]), np.array([3]), 0.1)
    assert np.exp(under[0]) == pytest.approx(np.mean((p / 0.1) ** 3 * ((1 - p) / 0.9) ** 7), rel=1e-12)
    # calibrated Bernoulli(0.05) misses, 400 streams of 5,000 rows looked at after every row
    rng = np.random.default_rng(11)
    x = rng.random((400, 5000)) < 0.05
    n = np.arange(1, 5001)
    alarms = []
    for row in x:
        under, over = sequential.coverage_log_e(n, np.cumsum(row), 0.05)
        alarms.append(np.any(0.5 * (np.exp(under) + np.exp(over)) >= 1 / 0.05))
    rate = np.mean(alarms)
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 400)
    # each step of the PIT mixture has mean one under a uniform PIT (a martingale): E f(U) = 1 by quadrature
    u = (np.arange(200_000) + 0.5) / 200_000
    sums = np.column_stack([np.ones_like(u), np.log(u), np.log1p(-u)])
    assert np.exp(sequential.pit_log_e(sums)).mean() == pytest.approx(1.0, rel=2e-3)


def test_document_has_what_its_json_schema_requires(tmp_path):
    from importlib.resources import files

    schema = json.loads((files("uqeval") / "schemas" / "monitor.schema.json").read_text())
    doc, _ = monitor_file(SAMPLE / "classification.parquet", Settings(), window=1000)
    assert doc["schema"] == schema["properties"]["schema"]["const"]
    assert set(schema["required"]) <= set(doc)
    assert set(schema["properties"]["input"]["required"]) <= set(doc["input"])
    window_keys = set(schema["properties"]["windows"]["items"]["required"])
    assert all(window_keys <= set(w) for w in doc["windows"])
    test_keys = set(schema["properties"]["tests"]["items"]["required"])
    assert [t["name"] for t in doc["tests"]] == ["coverage@0.95"]  # prediction sets of a classifier
    assert all(test_keys <= set(t) for t in doc["tests"])
    # an overwhelming e-value stays a finite number (capped), its logarithm is exact
    t = doc["tests"][0]
    assert all(isinstance(v, float) for v in t["e_values"]) and t["log_e_values"][-1] > 0


def test_old_windows_are_finished_to_bound_memory_and_give_the_same_document(tmp_path, monkeypatch):
    from uqeval.commands.monitor import windows as mon

    table = _read("gaussian.parquet")
    f = tmp_path / "g.parquet"
    pq.write_table(table, f)
    pq.write_table(table.slice(0, 1050), tmp_path / "a.parquet")
    pq.write_table(table.slice(1050), tmp_path / "b.parquet")
    kept, _ = monitor_file(f, Settings(), window=250, engine=EngineOptions(chunk_rows=300))
    monkeypatch.setattr(mon, "MAX_OPEN_WINDOWS", 2)
    closed, _ = monitor_file(f, Settings(), window=250, engine=EngineOptions(chunk_rows=300))
    _, state = monitor_file(
        tmp_path / "a.parquet", Settings(), window=250, engine=EngineOptions(chunk_rows=300)
    )
    resumed, _ = monitor_file(
        tmp_path / "b.parquet", Settings(), window=250, engine=EngineOptions(chunk_rows=300), state=state
    )
    for doc in (closed, resumed):
        assert [w["n_rows"] for w in doc["windows"]] == [250] * 8
        for a, b in zip(doc["windows"], kept["windows"]):
            assert_same(a["metrics"], b["metrics"], {})
        assert_same(doc["cumulative"]["metrics"], kept["cumulative"]["metrics"], {})
        np.testing.assert_allclose(
            [t["e_values"] for t in doc["tests"]], [t["e_values"] for t in kept["tests"]]
        )
    # the saved run's rows again (their windows finished): one clean error that says they were counted, not
    # "give the rows in time order" (issue 35)
    pq.write_table(_gaussian(n=500, days=5), tmp_path / "t.parquet")
    _, state = monitor_file(tmp_path / "t.parquet", Settings(), window="1D", time="t")
    with pytest.raises(
        InputError, match=r"all 500 rows are at or before 2024-03-05T23:58:34\.9\d+, the latest"
    ):
        monitor_file(tmp_path / "t.parquet", Settings(), window="1D", time="t", state=state)


def test_by_gives_each_window_the_metrics_per_group_of_score_by(tmp_path):
    table = _read("gaussian.parquet")
    whole = tmp_path / "whole.parquet"
    pq.write_table(table, whole)
    doc, _ = monitor_file(
        whole,
        Settings(columns={"by": "shift"}),
        window=1000,
        engine=EngineOptions(chunk_rows=600),
        adversarial_windows=True,
    )
    for i, w in enumerate(doc["windows"]):
        part = tmp_path / f"w{i}.parquet"
        pq.write_table(table.slice(1000 * i, 1000), part)
        ref = score_with_engine(part, Settings(columns={"by": "shift"}), EngineOptions("stream")).summary
        assert sorted(w["groups"]) == sorted(ref["groups"]["values"])
        for label, g in w["groups"].items():
            want = ref["groups"]["values"][label]
            assert g["n_rows"] == want["n_rows"]
            assert_same(
                g["metrics"],
                want["metrics"],
                _skipped("gaussian"),
                ref["input"]["approximate"],
                want.get("bounds", {}),
            )


def test_two_models_resume_from_a_state(tmp_path):
    table = _gaussian(n=1200, days=4)
    other = table.set_column(2, "mu", pa.array(table.column("mu").to_numpy() + 0.3))
    t = table.column("t").to_numpy()
    early = pa.array(t < np.datetime64("2024-03-02T12:00"))
    for name, tab in (("a", table), ("b", other)):
        pq.write_table(tab, tmp_path / f"{name}.parquet")
        pq.write_table(tab.filter(early), tmp_path / f"{name}1.parquet")
        pq.write_table(tab.filter(pa.compute.invert(early)), tmp_path / f"{name}2.parquet")
    kw = {"window": "1D", "time": "t", "bound": 10.0}
    _, state = monitor_file([tmp_path / "a1.parquet", tmp_path / "b1.parquet"], Settings(), **kw)
    resumed, _ = monitor_file(
        [tmp_path / "a2.parquet", tmp_path / "b2.parquet"], Settings(), state=state, **kw
    )
    once, _ = monitor_file([tmp_path / "a.parquet", tmp_path / "b.parquet"], Settings(), **kw)
    for a, b in zip(resumed["tests"], once["tests"]):
        assert a["name"] == b["name"]
        np.testing.assert_allclose(a["e_values"], b["e_values"], rtol=1e-12)
    diff = resumed["tests"][-1]
    assert diff["mean_difference"] == pytest.approx(once["tests"][-1]["mean_difference"], rel=1e-12)
    assert (
        diff["lower"][-1] <= diff["mean_difference"][-1] < 0 <= diff["upper"][-1]
    )  # B worse; |d| <= 10 is wide
    with pytest.raises(uqeval.UsageError, match="two inputs"):
        monitor_file(tmp_path / "a2.parquet", Settings(), window="1D", time="t", state=state)


def test_weighted_windows_equal_score_with_weights_and_tests_stay_unweighted(tmp_path):
    from uqeval.catalogue.paths import flatten

    table = _read("gaussian.parquet")
    w = np.random.default_rng(5).uniform(0.0, 3.0, table.num_rows)
    w[::7] = 0.0
    table = table.append_column("w", pa.array(w))
    whole = tmp_path / "whole.parquet"
    pq.write_table(table, whole)
    weighted = Settings(columns={"weights": "w"})
    doc, _ = monitor_file(whole, weighted, window=800, engine=EngineOptions(chunk_rows=300), detect=False)
    assert any("tests are not" in n for n in doc["notes"])
    for i, win in enumerate([*doc["windows"], None]):
        part = tmp_path / f"w{i}.parquet"
        pq.write_table(table if win is None else table.slice(800 * i, 800), part)
        ref = score_with_engine(part, weighted, EngineOptions("stream")).summary
        got = dict(flatten(doc["cumulative"]["metrics"] if win is None else win["metrics"]))
        want = dict(flatten(ref["metrics"]))
        # score streams the weighted MdAE in a second pass over the rows; the monitor's windows take one pass
        # and name it (issue 37)
        assert "accuracy.mdae" in want and "accuracy.mdae" in doc["input"]["not_streamed"]
        want.pop("accuracy.mdae")
        assert got and set(got) == set(want)
        for path, value in got.items():
            np.testing.assert_allclose(value, want[path], rtol=1e-12, atol=1e-14, err_msg=path)
        if win is not None:
            assert win["weight"] == pytest.approx(ref["weights"]["sum"], rel=1e-13)
    assert doc["weights"]["sum"] == pytest.approx(w.sum(), rel=1e-13)
    assert doc["weights"]["n_zero"] == int((w == 0).sum())
    # the tests: unweighted, over the rows of positive weight
    pq.write_table(table.filter(pa.array(w > 0)), tmp_path / "pos.parquet")
    plain, _ = monitor_file(tmp_path / "pos.parquet", Settings(), window=10_000, detect=False)
    assert [t["e_value"] for t in doc["tests"]][:1] != []
    np.testing.assert_allclose(
        [t["e_values"][-1] for t in doc["tests"]], [t["e_value"] for t in plain["tests"]], rtol=1e-12
    )
    with pytest.raises(UsageError, match="weights"):
        monitor_file([whole, whole], weighted, window=800)
    # --weights with --state (issue 37): the state file holds numbers only (the safe loader reads it), and a
    # run resumed from it equals one run
    pq.write_table(table.slice(0, 1200), tmp_path / "h1.parquet")
    pq.write_table(table.slice(1200), tmp_path / "h2.parquet")
    kw = {"window": 800, "engine": EngineOptions(chunk_rows=300), "detect": False}
    _, saved = monitor_file(tmp_path / "h1.parquet", weighted, state_source="s", **kw)
    resumed, _ = monitor_file(tmp_path / "h2.parquet", weighted, state=saved, state_source="s", **kw)
    assert [w["n_rows"] for w in resumed["windows"]] == [w["n_rows"] for w in doc["windows"]]
    for a, b in zip([*resumed["windows"], resumed["cumulative"]], [*doc["windows"], doc["cumulative"]]):
        got, want = dict(flatten(a["metrics"])), dict(flatten(b["metrics"]))
        assert got and set(got) == set(want)
        for path, value in got.items():
            np.testing.assert_allclose(value, want[path], rtol=1e-12, atol=1e-14, err_msg=path)
    assert resumed["weights"] == doc["weights"]
    np.testing.assert_allclose(
        [t["e_values"] for t in resumed["tests"]], [t["e_values"] for t in doc["tests"]], rtol=1e-12
    )


def test_a_state_saved_from_standard_input_reads_back(tmp_path):
    table = _gaussian(n=400, days=4)
    t = table.column("t").to_numpy()
    cut = pa.array(t < np.datetime64("2024-03-03"))
    state = tmp_path / "mon.state"
    opts = ["--time", "t", "--window", "1D", "--state", str(state), "-f", "json", "-q"]
    for part in (table.filter(cut), table.filter(pa.compute.invert(cut))):
        buf = pa.BufferOutputStream()
        pacsv.write_csv(part, buf)
        r = runner.invoke(app, ["monitor", "-", *opts], input=buf.getvalue().to_pybytes())
        assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["cumulative"]["n_rows"] == 400


def test_dask_leaves_the_latest_window_open_for_the_next_run(tmp_path):
    distributed = pytest.importorskip("distributed")
    table = _gaussian(n=600, days=4)
    table = table.take(pa.compute.sort_indices(table, [("t", "ascending")]))
    early = pa.compute.less(table.column("t"), pa.scalar(np.datetime64("2024-03-03T12:00", "ns")))
    pq.write_table(table.filter(early), tmp_path / "a.parquet", row_group_size=100)
    pq.write_table(table.filter(pa.compute.invert(early)), tmp_path / "b.parquet")
    pq.write_table(table, tmp_path / "all.parquet")
    kw = {"window": "1D", "time": "t"}
    with distributed.LocalCluster(
        n_workers=1, processes=False, protocol="tcp", dashboard_address="127.0.0.1:0", silence_logs=50
    ) as c:
        _, state = monitor_file(
            tmp_path / "a.parquet",
            Settings(),
            engine=EngineOptions("dask", scheduler=c.scheduler_address),
            **kw,
        )
    # the rest of 3 March comes the next day: its window was finished on Dask, and these rows were refused
    resumed, _ = monitor_file(tmp_path / "b.parquet", Settings(), state=state, **kw)
    once, _ = monitor_file(tmp_path / "all.parquet", Settings(), **kw)
    assert [w["n_rows"] for w in resumed["windows"]] == [w["n_rows"] for w in once["windows"]]
    for a, b in zip(resumed["windows"], once["windows"]):
        assert_same(a["metrics"], b["metrics"], {})
