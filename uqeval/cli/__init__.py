"""The ``uqeval`` command line: ``app`` and ``main``.

Each command lives in its own module and only parses options, calls the core
and renders. Command modules import nothing heavy at module level, so
``uqeval --help`` and ``uqeval --version`` never load numpy's friends
(scipy, matplotlib, pandas). ``main`` imports only the module of the command it
runs (``uqeval score FILE`` never compiles the others); ``app``, the full
Typer application with every command, is built on first access.

The top floor: may import anything in the package; nothing imports it (but ``uqeval.__main__``).
"""

from __future__ import annotations

import sys
from importlib import import_module

import typer

from .._version import __version__
from . import interrupts
from ._lean import install as _lean_typer

#: command name -> its module under uqeval.cli (a function, or a typer.Typer group, of the same name),
#: in --help order
COMMANDS = (
    "score",
    "ucc",
    "coverage",
    "monitor",
    "check",
    "compare",
    "recalibrate",
    "plot",
    "report",
    "explain",
    "config",
    "schema",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"uqeval {__version__}")
        raise typer.Exit()


def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """uqeval: how good are your uncertainty estimates?"""


def build_app(commands: tuple[str, ...] = COMMANDS, completion: bool = True) -> typer.Typer:
    """The Typer application with ``commands`` registered (all of them by default).

    ``completion``: the root's ``--install-completion`` / ``--show-completion`` (and answering the
    shell's completion requests, ``_UQEVAL_COMPLETE``). :func:`main` leaves them out when a command is
    named (they are root options; typer's completion modules cost ~7 ms of every run)."""
    _lean_typer()
    from .panels import CommandsGroup

    application = typer.Typer(
        name="uqeval",
        cls=CommandsGroup,  # the commands' first sentences whole, wrapped (not cut with "...")
        help="Evaluate predictive uncertainty: calibration, scoring rules, coverage, UCC, recalibration.",
        no_args_is_help=True,
        add_completion=completion,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # plain click help and usage errors: no rich.markdown/pygments import (--help ~2x faster)
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    application.callback()(_root)
    for name in commands:
        command = getattr(import_module(f"{__name__}.{name}"), name)
        if isinstance(command, typer.Typer):  # a group of subcommands (uqeval config list/show)
            application.add_typer(command, name=name)
        else:
            from .panels import PanelCommand

            application.command(name, cls=PanelCommand)(command)
    return application


def __getattr__(name: str):
    if name == "app":
        globals()["app"] = application = build_app()
        return application
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _requested(argv: list[str]) -> tuple[str, ...]:
    """Only the command named on the command line (the root takes no option values), else every command
    (``uqeval --help``, a misspelt command: typer lists them all)."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return (first,) if first in COMMANDS else COMMANDS


#: numpy submodules that ``import scipy.special`` touches and no score path uses
_DEFERRED = frozenset(
    f"numpy.{m}" for m in ("f2py", "testing", "ma", "polynomial", "ctypeslib", "char", "rec", "strings")
)


def _defer_numpy_extras() -> None:
    """Load numpy's optional submodules on first use rather than on ``import scipy.special``.

    scipy >= 1.15 copies the numpy namespace when scipy.special is imported, which imports
    ``numpy.f2py``, ``numpy.testing``, ``numpy.ma`` and friends (~70 ms of start-up; f2py alone
    compiles hundreds of regular expressions). A finder hands them out with a
    :class:`importlib.util.LazyLoader`: real modules that execute on first attribute access.
    Only the CLI process installs it (numpy itself is not imported here); importing
    :mod:`uqeval` as a library changes nothing.

    Not thread-safe (Python 3.11's ``LazyLoader``): while one thread executes such a module, another
    sees it half-made (issue 31: ``cannot import name 'Polynomial' from 'numpy.polynomial'``). Hence
    uqeval's worker threads import nothing: :func:`uqeval.catalogue.compute_metrics` imports every
    module its families use (``Family.imports``) before it starts its second thread.
    """
    import importlib.machinery
    import importlib.util

    class LazyNumpyExtras:  # a meta path finder (importlib.abc is not imported for its base class)
        def find_spec(self, name, path, target=None):
            if name not in _DEFERRED:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is not None and spec.loader is not None:
                spec.loader = importlib.util.LazyLoader(spec.loader)
            return spec

    if not any(type(f).__name__ == "LazyNumpyExtras" for f in sys.meta_path):
        sys.meta_path.insert(0, LazyNumpyExtras())


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


def parallel_rendering() -> None:
    """Draw figures in two processes where there are two cores (``uqeval.plots.RENDER_PROCESSES``): a
    report's time is mostly matplotlib drawing its figures one by one (2 x 1e5 rows: 2.1 of 3.2 s).
    Only the CLI process starts the worker (spawned, never forked from this multi-threaded process:
    :func:`uqeval.plots.kinds.render_workers`), and only on Linux; the Python API draws in the caller's
    process."""
    import os

    from .. import plots

    if sys.platform.startswith("linux") and (os.cpu_count() or 1) >= 2:
        plots.RENDER_PROCESSES = 2


def main() -> None:
    """The ``uqeval`` command. An interrupt (SIGINT; SIGTERM while a command runs) exits 130 with the
    one line ``interrupted`` in every phase of the run (:mod:`uqeval.cli.interrupts`)."""
    interrupts.install()
    try:
        from .. import _children

        _children.WATCHDOG = True  # a local Dask cluster's processes end with this one (_children.watchdog)
        single_threaded_blas()
        parallel_rendering()
        _defer_numpy_extras()
        requested = _requested(sys.argv[1:])
        build_app(requested, completion=requested == COMMANDS)()
    except KeyboardInterrupt:  # SIGINT before a command's own handling began (importing, parsing)
        interrupts.report()
        interrupts.exit_now(130)
    except SystemExit as exc:
        interrupts.settle()  # the exit path ignores a late interrupt
        if exc.code == 130:  # an interrupted run (typer turns one while parsing into a silent exit 130)
            interrupts.report()
        remote = sys.modules.get("uqeval.io.remote")
        if remote is not None and remote.in_flight():
            # a native call (a remote read, a scheduler connect) still blocks a helper thread after
            # a signal or a timeout: exit now rather than wait for it at interpreter shutdown
            import os

            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(exc.code if isinstance(exc.code, int) else 1)
        if exc.code == 130:
            interrupts.exit_now(130)
        raise
