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
    streamed = runner.invoke(app, ["score", "-", "--engine", "stream"], input=b"y,mean,std\n1,2,x\n")
    assert streamed.exit_code == 3 and streamed.stderr.startswith("error: <stdin>: cannot read CSV data")
    assert "column 'std' is not numeric at row 0" in streamed.stderr, streamed.stderr
    dask = runner.invoke(app, ["score", "-", "--engine", "dask"], input=_parquet(_gauss()))
    assert dask.exit_code == 2 and "--engine dask cannot read standard input" in dask.stderr, dask.stderr


@pytest.mark.parametrize("kind", ["csv", "csv.gz", "parquet"])
def test_stdin_streams_in_chunks_like_the_file(tmp_path, kind):
    """``--engine stream`` reads ``-`` from its spool file in record batches: the same numbers as the file."""
    cols = _gauss(n=500, seed=4)
    data = _parquet(cols) if kind == "parquet" else _csv(cols)
    path = tmp_path / f"g.{kind}"
    path.write_bytes(gzip.compress(data) if kind == "csv.gz" else data)
    args = ["--engine", "stream", "--chunk-rows", "128", "-f", "json"]
    piped = runner.invoke(app, ["score", "-", *args], input=path.read_bytes())
    assert piped.exit_code == 0, piped.output
    got = json.loads(piped.stdout)
    want = json.loads(runner.invoke(app, ["score", str(path), *args]).stdout)
    assert (got["input"]["path"], got["input"]["engine"], got["input"]["n_rows"]) == ("-", "stream", 500)
    assert got["input"]["format"] == ("parquet" if kind == "parquet" else "csv")
    assert got["metrics"] == want["metrics"]
    in_memory = json.loads(runner.invoke(app, ["score", "-", "-f", "json"], input=path.read_bytes()).stdout)
    assert got["metrics"]["scoring_rule"]["crps"] == pytest.approx(
        in_memory["metrics"]["scoring_rule"]["crps"]
    )


def test_stdin_is_read_once_per_run_and_again_by_the_next_run():
    first = runner.invoke(app, ["compare", "-", "-", "-f", "json"], input=_csv(_gauss(seed=1)))
    assert first.exit_code == 0, first.output
    a = runner.invoke(app, ["score", "-", "-f", "json"], input=_csv(_gauss(seed=2)))
    b = runner.invoke(app, ["score", "-", "-f", "json"], input=_csv(_gauss(seed=3)))
    assert json.loads(a.stdout)["metrics"] != json.loads(b.stdout)["metrics"]


# --------------------------------------------------------------------------- configuration is found


def _settings_of(args: list[str], **kw) -> dict:
    r = runner.invoke(app, ["score", *args, "-f", "json"], **kw)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["settings"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project whose pyproject.toml sets num_bins = 7; the run starts in a subdirectory."""
    monkeypatch.delenv("UQEVAL_CONFIG", raising=False)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.uqeval.metrics]\nnum_bins = 7\nseed = 3\n\n[tool.uqeval.columns]\ny_true = "y"\n'
    )
    sub = tmp_path / "data" / "runs"
    sub.mkdir(parents=True)
    (sub / "g.csv").write_bytes(_csv(_gauss()))
    monkeypatch.chdir(sub)
    return tmp_path


def test_nearest_pyproject_with_tool_uqeval_is_found(project):
    (project / "data" / "pyproject.toml").write_text('[project]\nname = "inner, no uqeval table"\n')
    s = _settings_of(["g.csv"])
    assert (s["num_bins"], s["seed"], s["columns"]) == (7, 3, {"y_true": "y"})
    assert s["config"] == {"path": str(project / "pyproject.toml"), "from": "pyproject.toml"}


def test_flags_over_config_and_config_flag_over_env_over_pyproject(project, monkeypatch, tmp_path_factory):
    assert _settings_of(["g.csv", "--num-bins", "9"])["num_bins"] == 9  # defaults < config < flags
    other = tmp_path_factory.mktemp("cfg")
    env_file, flag_file = other / "env.toml", other / "flag.toml"
    env_file.write_text("[metrics]\nnum_bins = 11\n")
    flag_file.write_text("[metrics]\nnum_bins = 13\n")
    monkeypatch.setenv("UQEVAL_CONFIG", str(env_file))
    s = _settings_of(["g.csv"])
    assert (s["num_bins"], s["seed"], s["config"]) == (
        11,
        0,
        {"path": str(env_file), "from": "UQEVAL_CONFIG"},
    )
    s = _settings_of(["g.csv", "--config", str(flag_file)])
    assert (s["num_bins"], s["config"]) == (13, {"path": str(flag_file), "from": "--config"})


def test_no_config_anywhere_records_null(tmp_path, monkeypatch):
    monkeypatch.delenv("UQEVAL_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.csv").write_bytes(_csv(_gauss()))
    s = _settings_of(["g.csv"])
    assert s["config"] is None and s["num_bins"] == 100


def test_pyproject_errors_name_the_tool_table_and_line(project):
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.uqeval.metrics]\nseed = 1\n\n[tool.uqeval.input]\nseed = 2\n'
    )
    r = runner.invoke(app, ["score", "g.csv"])
    assert r.exit_code == 3
    assert "unknown key 'seed' in [tool.uqeval.input] (line 8)" in r.stderr, r.stderr
    (project / "pyproject.toml").write_text("[tool.uqeval]\nseed = 3\n")
    r = runner.invoke(app, ["score", "g.csv"])
    assert r.exit_code == 3
    assert "key 'seed' at [tool.uqeval] (line 2); it belongs in [tool.uqeval.metrics]" in r.stderr, r.stderr


def test_a_key_in_two_tables_is_reported_where_it_is_wrong(tmp_path):
    """`seed` is valid in [metrics] (line 2) and unknown in [input] (line 5): the error names line 5."""
    cfg = tmp_path / "c.toml"
    cfg.write_text("[metrics]\nseed = 1\n\n[input]\nseed = 2\n")
    (tmp_path / "g.csv").write_bytes(_csv(_gauss()))
    r = runner.invoke(app, ["score", str(tmp_path / "g.csv"), "--config", str(cfg)])
    assert r.exit_code == 3
    assert "unknown key 'seed' in [input] (line 5)" in r.stderr, r.stderr
    # `logits` is a key of both [columns] (line 2) and [input] (line 5); the bad value is the second
    cfg.write_text('[columns]\nlogits = "z"\n\n[input]\nlogits = 5\n')
    r = runner.invoke(app, ["score", str(tmp_path / "g.csv"), "--config", str(cfg)])
    assert r.exit_code == 3
    assert "input.logits (line 5)" in r.stderr, r.stderr


def test_the_python_api_never_discovers_a_config_the_cli_does(project, monkeypatch):
    """Discovery is the command line's (``discover=True`` at its call sites), not a module state: building
    the CLI app in this process (imported above) does not make the API read the CWD's pyproject.toml."""
    import uqeval
    from uqeval.cli import build_app
    from uqeval.config import make_settings

    build_app()
    assert _settings_of(["g.csv"])["num_bins"] == 7  # the CLI finds [tool.uqeval]
    scores = uqeval.evaluate_file("g.csv")
    api = json.loads(scores.to_json())["settings"]
    assert (api["num_bins"], api["seed"], api["config"]) == (100, 0, None)
    assert make_settings().config is None and make_settings().num_bins == 100
    assert make_settings(discover=True).num_bins == 7
    monkeypatch.setenv("UQEVAL_CONFIG", str(project / "pyproject.toml"))
    assert (
        uqeval.evaluate(np.zeros(5), mean=np.zeros(5), std=np.ones(5))._summary["settings"]["config"] is None
    )
