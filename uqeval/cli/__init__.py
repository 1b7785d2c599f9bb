"""The ``uqeval`` command line: ``app`` and ``main``.

Each command lives in its own module and only parses options, calls the core
and renders. Command modules import nothing heavy at module level, so
``uqeval --help`` and ``uqeval --version`` never load numpy's friends
(scipy, matplotlib, pandas).
"""

from __future__ import annotations

import typer

from .. import __version__
from . import check as _check
from . import compare as _compare
from . import coverage as _coverage
from . import explain as _explain
from . import plot as _plot
from . import recalibrate as _recalibrate
from . import report as _report
from . import score as _score
from . import ucc as _ucc

app = typer.Typer(
    name="uqeval",
    help="Evaluate predictive uncertainty: calibration, scoring rules, coverage, UCC, recalibration.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help and usage errors: no rich.markdown/pygments import (--help ~2x faster)
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"uqeval {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """uqeval: how good are your uncertainty estimates?"""


app.command("score")(_score.score)
app.command("ucc")(_ucc.ucc)
app.command("coverage")(_coverage.coverage)
app.command("check")(_check.check)
app.command("compare")(_compare.compare)
app.command("recalibrate")(_recalibrate.recalibrate)
app.command("plot")(_plot.plot)
app.command("report")(_report.report)
app.command("explain")(_explain.explain)


#: BLAS thread variables a user may set; when none is set the CLI runs BLAS on one thread
BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_blas(environ=None) -> None:
    """Run BLAS on one thread unless the user set one of :data:`BLAS_THREAD_VARS`.

    uqeval's products are many small blocks (compare's resampling, sample CRPS), where OpenBLAS's
    threads cost more than they give: compare of 3 x 1e6 rows took 16.4 s on one thread and 18.3 s
    on two (33 s of CPU), and on a busy machine its spinning threads took 48 s against 22 s. Set
    before numpy is first imported (``uqeval.cli`` does not import it), so it reaches OpenBLAS; the
    Python API leaves the environment alone."""
    import os

    env = os.environ if environ is None else environ
    if not any(v in env for v in BLAS_THREAD_VARS):
        env["OPENBLAS_NUM_THREADS"] = "1"
        env["MKL_NUM_THREADS"] = "1"


def main() -> None:
    single_threaded_blas()
    app()
