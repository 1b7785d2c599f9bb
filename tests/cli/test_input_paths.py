"""What an input argument names, the same for every command and engine (issue 31, items 3 and 4).

* An existing path is that file, even when its name holds ``*``, ``?`` or ``[`` (``b*.parquet`` next to
  ``b1.parquet``, ``a[1].parquet``); a name is a glob pattern only when no such file exists.
* A directory is its ``.parquet``/``.pq``/``.csv``/``.csv.gz`` parts; hidden and ``_``-prefixed files and
  other types are skipped and listed in ``input.skipped``; the parts' columns must agree with the first
  part's (footers / header lines), else one error line names the part and the column.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.errors import InputError
from uqeval.io.inputs import expand_input

runner = CliRunner()


def _cols(seed: int, n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    return {"y": mean + std * rng.normal(size=n), "mean": mean, "std": std}


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed", reason="the Dask extra is not installed")
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp://",  # --scheduler takes tcp/tls/ws/wss addresses, not inproc://
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        silence_logs=50,
    ) as c:
        yield c


# Every command that reads prediction files, as (name, argv builder, JSON on stdout?). ``out`` is a fresh
# directory for the command's output files.
def _commands(cluster_address: str | None = None):
    cmds = {
        "score": lambda f, out: ["score", f, "-f", "json"],
        "score-stream": lambda f, out: ["score", f, "--engine", "stream", "--chunk-rows", "64", "-f", "json"],
        "check": lambda f, out: ["check", f, "--rules", str(_rules(out)), "-f", "json"],
        "compare": lambda f, out: ["compare", f, f, "--bootstrap", "0", "-f", "json"],
        "ucc": lambda f, out: ["ucc", f, "-f", "json"],
        "coverage": lambda f, out: ["coverage", f, "-f", "json"],
        "plot": lambda f, out: ["plot", f, "--kind", "pit", "-o", str(out / "pit.png")],
        "report": lambda f, out: ["report", f, "-o", str(out / "r.html"), "--max-points", "100"],
        "recalibrate": lambda f, out: ["recalibrate", f, "--method", "std-scaling", "-f", "json"],
    }
    if cluster_address:
        cmds["score-dask"] = lambda f, out: [
            "score", f, "--engine", "dask", "--scheduler", cluster_address, "-f", "json"
        ]  # fmt: skip
    return cmds


STREAMING = ("score", "score-stream", "check", "compare", "ucc", "coverage", "score-dask")
MEMORY_ONLY = ("plot", "report", "recalibrate")


def _rules(out: Path) -> Path:
    p = out / "rules.toml"
    p.write_text('[rules]\n"scoring_rule.crps" = { max = 100 }\n')
    return p


def _run(argv: list[str]):
    return runner.invoke(app, [str(a) for a in argv])


def _n_rows(cmd: str, doc: dict) -> int:
    """The number of rows a command's JSON says it read."""
    if cmd in ("score", "score-stream", "score-dask"):
        return doc["input"]["n_rows"]
    if cmd in ("compare", "ucc"):
        return doc["n_rows"]
    if cmd == "coverage":
        return doc["points"][0]["n_rows"]
    if cmd == "recalibrate":
        return doc["files"]["calibration"]["n_rows"]
    raise AssertionError(cmd)


@pytest.fixture
def names(tmp_path):
    """``b*.parquet`` (300 rows) beside ``b1.parquet`` (200 rows), ``a[1].parquet`` (250 rows)."""
    d = tmp_path / "data"
    d.mkdir()
    pq.write_table(pa.table(_cols(1, 300)), d / "b*.parquet")
    pq.write_table(pa.table(_cols(2, 200)), d / "b1.parquet")
    pq.write_table(pa.table(_cols(3, 250)), d / "a[1].parquet")
    return d


COMMANDS = [*STREAMING, *MEMORY_ONLY]


def _argv(request, cmd: str, f: str, out: Path) -> list[str]:
    address = request.getfixturevalue("cluster").scheduler_address if cmd == "score-dask" else None
    return _commands(address)[cmd](f, out)


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.parametrize("name,rows", [("b*.parquet", 300), ("a[1].parquet", 250)])
def test_an_existing_file_is_that_file_whatever_its_name(request, names, tmp_path, cmd, name, rows):
    out = tmp_path / "out"
    out.mkdir()
    r = _run(_argv(request, cmd, str(names / name), out))
    assert r.exit_code == 0, r.output
    if cmd == "plot":
        assert (out / "pit.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    elif cmd == "check":  # the gate scored that file: its CRPS, not the glob's
        (tmp_path / "plain.parquet").write_bytes((names / name).read_bytes())
        ref = json.loads(_run(["score", str(tmp_path / "plain.parquet"), "-f", "json"]).stdout)
        assert json.loads(r.stdout)["rows"][0]["value"] == pytest.approx(
            ref["metrics"]["scoring_rule"]["crps"]
        )
    elif cmd == "report":
        html = (out / "r.html").read_text()
        assert f'<code>input.n_rows</code></th><td class="num">{rows}</td>' in html
    else:
        assert _n_rows(cmd, json.loads(r.stdout)) == rows  # not 500: the glob b*.parquet would add b1.parquet


@pytest.mark.parametrize("cmd", COMMANDS)
def test_a_name_that_is_no_file_is_a_pattern(request, names, tmp_path, cmd):
    out = tmp_path / "out"
    out.mkdir()
    (names / "a[1].parquet").rename(names / "a1.parquet")
    # a[1].parquet no longer exists: the pattern names a1.parquet, for every command
    r = _run(_argv(request, cmd, str(names / "a[1].parquet"), out))
    assert r.exit_code == 0, r.output
    if cmd not in ("plot", "report", "check"):
        assert _n_rows(cmd, json.loads(r.stdout)) == 250
    # a pattern that matches nothing is one error line naming it
    r = _run(_argv(request, cmd, str(names / "z?.parquet"), out))
    assert r.exit_code == 3, r.output
    assert "z?.parquet: no such file, and as a glob pattern it matches no file" in r.output.replace("\n", "")
    assert "Traceback" not in r.output


def test_a_pattern_over_literal_names_streams_every_match(names):
    r = _run(["score", str(names / "b?.parquet"), "-f", "json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["input"]
    assert got["n_rows"] == 500 and got["engine"] == "stream"
    assert got["files"] == [str(names / "b*.parquet"), str(names / "b1.parquet")] and got["skipped"] == []
    # the in-memory readers take one file: a pattern naming two is refused in one line
    r = _run(["score", str(names / "b?.parquet"), "--engine", "memory"])
    assert r.exit_code == 3 and "names 2 files" in r.output and "--engine stream" in r.output, r.output


# ------------------------------------------------------------------------------- directories


def _parts(d: Path, tables: list[pa.Table], names: list[str] | None = None) -> Path:
    d.mkdir()
    for i, t in enumerate(tables):
        pq.write_table(t, d / (names[i] if names else f"part-{i}.parquet"))
    return d


def _disagreeing(tmp_path: Path) -> dict[str, tuple[Path, str, str]]:
    """Directories whose second part disagrees with the first: ``{case: (dir, bad part, column)}``."""
    a, b = pa.table(_cols(4, 120)), pa.table(_cols(5, 130))
    return {
        "renamed": (
            _parts(tmp_path / "renamed", [a, b.rename_columns(["y", "mu", "std"])]),
            "part-1",
            "mean",
        ),
        "first-lacks-std": (_parts(tmp_path / "nostd", [a.drop(["std"]), b]), "part-1", "std"),
        "text-std": (
            _parts(tmp_path / "text", [a, b.set_column(2, "std", pa.array(b["std"].to_numpy().astype(str)))]),
            "part-1",
            "std",
        ),
    }


@pytest.mark.parametrize("cmd", STREAMING)
@pytest.mark.parametrize("case", ["renamed", "first-lacks-std", "text-std"])
def test_parts_that_disagree_are_refused_naming_part_and_column(request, tmp_path, cmd, case):
    d, part, column = _disagreeing(tmp_path)[case]
    out = tmp_path / "out"
    out.mkdir()
    r = _run(_argv(request, cmd, str(d), out))
    assert r.exit_code == 3, r.output
    errors = [line for line in r.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in r.output, r.output
    assert f"{part}.parquet" in errors[0] and f"column '{column}'" in errors[0], errors[0]


@pytest.mark.parametrize("cmd", STREAMING)
def test_a_csv_among_parquet_parts_is_refused(request, tmp_path, cmd):
    d = _parts(tmp_path / "mixed", [pa.table(_cols(6, 100))])
    (d / "part-1.csv").write_text("y,mean,std\n0.1,0.0,1.0\n")
    out = tmp_path / "out"
    out.mkdir()
    r = _run(_argv(request, cmd, str(d), out))
    assert r.exit_code == 3, r.output
    assert "mixes Parquet parts" in r.output and "part-1.csv" in r.output.replace("\n", ""), r.output


@pytest.mark.parametrize("cmd", STREAMING)
def test_writer_metadata_and_other_files_are_skipped_and_listed(request, tmp_path, cmd):
    whole = _cols(7, 400)
    d = _parts(tmp_path / "spark", [pa.table({k: v[:150] for k, v in whole.items()})])
    pq.write_table(pa.table({k: v[150:] for k, v in whole.items()}), d / "part-1.parquet")
    for junk in ("_SUCCESS", ".part-0.parquet.crc", "README.txt"):
        (d / junk).write_text("not data")
    (d / "_temporary").mkdir()
    pq.write_table(pa.table({"other": [1.0]}), d / "_temporary" / "half-written.parquet")
    out = tmp_path / "out"
    out.mkdir()
    r = _run(_argv(request, cmd, str(d), out))
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    if cmd != "check":
        assert _n_rows(cmd, doc) == 400
    if cmd.startswith("score"):
        assert doc["input"]["files"] == [str(d / "part-0.parquet"), str(d / "part-1.parquet")]
        assert sorted(Path(f).name for f in doc["input"]["skipped"]) == sorted(
            [".part-0.parquet.crc", "README.txt", "_SUCCESS", "half-written.parquet"]
        )
    if cmd == "compare":
        assert [m["files"] for m in doc["models"]] == [
            [str(d / "part-0.parquet"), str(d / "part-1.parquet")]
        ] * 2
    assert "skipped 1 file(s) that are not .parquet" in r.output and "README.txt" in r.output


@pytest.mark.parametrize("cmd", MEMORY_ONLY)
def test_memory_only_commands_read_a_one_part_directory_and_refuse_several(tmp_path, cmd):
    out = tmp_path / "out"
    out.mkdir()
    one = _parts(tmp_path / "one", [pa.table(_cols(8, 150))])
    (one / "_SUCCESS").write_text("")
    r = _run(_commands()[cmd](str(one), out))
    assert r.exit_code == 0, r.output
    two = _parts(tmp_path / "two", [pa.table(_cols(8, 150)), pa.table(_cols(9, 150))])
    r = _run(_commands()[cmd](str(two), out))
    assert r.exit_code == 3, r.output
    assert "the directory names 2 files" in r.output and "Traceback" not in r.output, r.output


def test_expand_input_rule(tmp_path):
    f = tmp_path / "x[1].csv"
    f.write_text("y,mean\n1,2\n")
    assert expand_input(f).files == [str(f)] and expand_input(f).kind == "file"
    (tmp_path / "x1.csv").write_text("y,mean\n1,2\n")
    got = expand_input(tmp_path / "x*.csv")  # no file of that name: a pattern over both
    assert got.kind == "pattern" and [Path(p).name for p in got.files] == ["x1.csv", "x[1].csv"]
    (tmp_path / "x2.csv").write_text("y,mu\n1,2\n")  # CSV parts: header lines are compared
    with pytest.raises(InputError, match=r"x2\.csv: column 'mean' is missing"):
        expand_input(tmp_path / "x*.csv")
    with pytest.raises(InputError, match="file does not exist"):
        expand_input(tmp_path / "absent.csv")
    empty = tmp_path / "empty"
    (empty / ".hidden").mkdir(parents=True)
    (empty / "notes.md").write_text("")
    with pytest.raises(InputError, match=r"is a directory with no \.parquet.*notes\.md"):
        expand_input(empty)
