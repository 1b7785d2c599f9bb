"""Issue 26, command line: ``-`` reads standard input; configuration is found (--config, UQEVAL_CONFIG,
``[tool.uqeval]`` of the nearest pyproject.toml) and named in the JSON ``settings``."""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from uqeval.cli import app

runner = CliRunner()


def _gauss(n: int = 60, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    return {"y": mean + std * rng.normal(size=n), "mean": mean, "std": std}


def _csv(cols: dict) -> bytes:
    names = list(cols)
    lines = [",".join(names)] + [
        ",".join(repr(float(cols[c][i])) for c in names) for i in range(len(cols["y"]))
    ]
    return ("\n".join(lines) + "\n").encode()


def _parquet(cols: dict) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table(cols), buf)
    return buf.getvalue()


# --------------------------------------------------------------------------- `-` reads standard input


@pytest.mark.parametrize("kind", ["csv", "csv.gz", "parquet"])
def test_score_reads_stdin_like_the_file(tmp_path, kind):
    cols = _gauss()
    data = _parquet(cols) if kind == "parquet" else _csv(cols)
    path = tmp_path / f"g.{kind}"
    path.write_bytes(gzip.compress(data) if kind == "csv.gz" else data)
    piped = runner.invoke(app, ["score", "-", "-f", "json"], input=path.read_bytes())
    assert piped.exit_code == 0, piped.output
    from_file = runner.invoke(app, ["score", str(path), "-f", "json"])
    got, want = json.loads(piped.stdout), json.loads(from_file.stdout)
    assert got["input"]["path"] == "-"
    assert got["input"]["format"] == ("parquet" if kind == "parquet" else "csv")
    assert got["metrics"] == want["metrics"]


def test_stdin_errors_name_stdin_in_one_line():
    empty = runner.invoke(app, ["score", "-"], input=b"")
    assert empty.exit_code == 3 and "<stdin>: standard input is empty" in empty.stderr
    bad = runner.invoke(app, ["score", "-"], input=b"a,b\n1,2\n")
    assert bad.exit_code == 3 and bad.stderr.startswith("error: <stdin>: no prediction columns"), bad.stderr
    streamed = runner.invoke(app, ["score", "-", "--engine", "stream"], input=_csv(_gauss()))
    assert streamed.exit_code == 3 and "standard input is read in memory" in streamed.stderr


def test_stdin_is_read_once_per_run_and_again_by_the_next_run():
    first = runner.invoke(app, ["compare", "-", "-", "-f", "json"], input=_csv(_gauss(seed=1)))
    assert first.exit_code == 0, first.output
    a = runner.invoke(app, ["score", "-", "-f", "json"], input=_csv(_gauss(seed=2)))
    b = runner.invoke(app, ["score", "-", "-f", "json"], input=_csv(_gauss(seed=3)))
    assert json.loads(a.stdout)["metrics"] != json.loads(b.stdout)["metrics"]
