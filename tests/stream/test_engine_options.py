""":class:`uqeval.engine.options.EngineOptions`: the engine of a run chosen and its options checked once, the
errors spelled as the front end spells the options (``--chunk-rows`` on the command line, ``chunk_rows=`` from
Python)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.engine import local
from uqeval.engine.options import EngineOptions, not_streamed
from uqeval.errors import UsageError, front_end

from ..conftest import SAMPLE

# these tests call the core directly and check the flags its messages name (and Python's keywords)
pytestmark = pytest.mark.usefixtures("cli_voice")

SMALL = str(SAMPLE / "gaussian.parquet")  # below the size at which auto streams


def test_choose_picks_dask_over_stream_over_memory(monkeypatch, tmp_path):
    big = tmp_path / "big.csv"
    big.write_text("y,mean,std\n" + "0,0,1\n" * 200)
    assert EngineOptions().choose([SMALL]).engine == "memory"
    assert EngineOptions().choose([SMALL, str(tmp_path / "*.csv")]).engine == "stream"  # a glob streams
    monkeypatch.setattr(local, "AUTO_STREAM_BYTES", 1000)
    assert EngineOptions().choose([SMALL, str(big)]).engine == "stream"
    assert EngineOptions("dask").choose([SMALL, str(big)]).engine == "dask"
    assert EngineOptions("memory").choose([SMALL, str(big)]).engine == "memory"
    chosen = EngineOptions("auto", 50, quiet=True).choose([str(big)])
    assert chosen == EngineOptions("stream", 50, quiet=True)  # the other fields are kept
    assert chosen.choose([str(big)]) == chosen  # choosing again changes nothing


@pytest.mark.parametrize(
    ("options", "cli", "python"),
    [
        (
            EngineOptions("memory", chunk_rows=10),
            "--chunk-rows applies to --engine stream or --engine dask only",
            "chunk_rows= applies to engine='stream' or engine='dask' only",
        ),
        (
            EngineOptions("memory", 10, workers=2),
            "--chunk-rows and --workers apply to --engine stream or --engine dask only",
            "chunk_rows= and workers= apply to engine='stream' or engine='dask' only",
        ),
        (
            EngineOptions("memory", scheduler="tcp://h:8786"),
            "--scheduler applies to --engine dask only",
            "scheduler= applies to engine='dask' only",
        ),
        (
            EngineOptions("stream", 10, workers=2),
            "--workers applies to --engine dask only",
            "workers= applies to engine='dask' only",
        ),
    ],
)
def test_an_option_the_chosen_engine_does_not_take_is_refused(options, cli, python):
    with pytest.raises(UsageError) as exc:
        options.choose([SMALL])
    assert str(exc.value) == cli
    with front_end("python"), pytest.raises(UsageError) as exc:
        options.choose([SMALL])
    assert str(exc.value) == python


def test_the_options_that_apply_are_kept():
    assert EngineOptions("stream", 10).choose([SMALL]).chunk_rows == 10
    dask = EngineOptions("dask", 10, workers=3).choose([SMALL])
    assert (dask.engine, dask.chunk_rows, dask.workers) == ("dask", 10, 3)


@pytest.mark.parametrize(
    ("kw", "cli", "python"),
    [
        ({"engine": "disk"}, "--engine must be one of", "engine= must be one of"),
        ({"chunk_rows": 0}, "--chunk-rows must be an integer >= 1, got 0", "chunk_rows= must be an integer"),
        ({"chunk_rows": 2.5}, "--chunk-rows must be an integer >= 1", "chunk_rows= must be an integer"),
        (
            {"engine": "dask", "scheduler": "tcp://h:8786", "workers": 2},
            "give either --scheduler ADDRESS (an existing cluster) or --workers N (a local one)",
            "give either scheduler='ADDRESS' (an existing cluster) or workers='N' (a local one)",
        ),
    ],
)
def test_a_value_checks_itself_when_made(kw, cli, python):
    with pytest.raises(UsageError, match=re.escape(cli)):
        EngineOptions(**kw)
    with front_end("python"), pytest.raises(UsageError, match=re.escape(python)):
        EngineOptions(**kw)


def test_streamed_commands_refuse_memory_and_stream_auto():
    assert EngineOptions().streamed("monitor").engine == "stream"
    assert EngineOptions("dask", workers=2).streamed("monitor").engine == "dask"
    with pytest.raises(UsageError, match="monitor reads its rows in record batches: use --engine stream or"):
        EngineOptions("memory").streamed("monitor")
    with front_end("python"), pytest.raises(UsageError, match="use engine='stream' or engine='dask'"):
        EngineOptions("memory").streamed("monitor")
    with pytest.raises(UsageError, match="--workers applies to --engine dask only"):
        EngineOptions(workers=2).streamed("monitor")


def test_options_that_are_not_streamed():
    assert str(not_streamed("per_row")) == "--per-row needs every row in memory: use --engine memory"
    with front_end("python"):
        assert str(not_streamed("permutation_test")) == (
            "n_permutations= needs every row in memory: use engine='memory'"
        )
    stream = EngineOptions("stream")
    stream.memory_only(plot=None, permutation_test=0, murphy=False)  # none given
    with pytest.raises(UsageError, match="^--plot needs every row in memory"):
        stream.memory_only(permutation_test=0, plot="u.png")
    EngineOptions("memory").memory_only(plot="u.png")  # in memory: anything goes


def test_sized_takes_chunk_rows_or_the_smallest_automatic_one():
    from uqeval.config import Settings

    assert EngineOptions(chunk_rows=7).sized([SMALL], Settings()).chunk_rows == 7
    auto = local.auto_chunk_rows(SMALL, Settings())
    assert EngineOptions().sized([SMALL, str(SAMPLE / "samples_list.parquet")], Settings()).chunk_rows == min(
        auto, local.auto_chunk_rows(SAMPLE / "samples_list.parquet", Settings())
    )


def test_every_streamed_command_says_the_same(tmp_path):
    runner = CliRunner()
    rules = tmp_path / "rules.toml"
    rules.write_text('[rules."accuracy.mae"]\nmax = 5\n')
    for argv in (
        ["score", SMALL, "--chunk-rows", "10"],
        ["ucc", SMALL, "--chunk-rows", "10"],
        ["coverage", SMALL, "--chunk-rows", "10"],
        ["compare", SMALL, SMALL, "--chunk-rows", "10"],
        ["check", SMALL, "--rules", str(rules), "--chunk-rows", "10"],
    ):
        result = runner.invoke(app, argv)
        assert result.exit_code == 2, (argv, result.output)
        assert "error: --chunk-rows applies to --engine stream or --engine dask only" in result.output, argv
