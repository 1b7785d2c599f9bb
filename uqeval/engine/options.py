"""How a command runs over its input: :class:`EngineOptions`, parsed once by each front end (the command
line's ``--engine``, ``--chunk-rows``, ``--scheduler``, ``--workers`` and ``--quiet``; the Python API's
keywords) and handed to the command as one value.

The choice of engine for a set of inputs and the check of which option applies to which engine are made
here, once; so is the error of an option a streamed engine cannot honour (:func:`not_streamed`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, option
from .local import ENGINES, auto_chunk_rows, check_chunk_rows, choose_engine, total_rows

if TYPE_CHECKING:
    from ..config import Settings

#: the options that only a streamed engine takes, and those that only Dask takes
_STREAMED = ("chunk_rows", "scheduler", "workers")
_DASK = ("scheduler", "workers")


def _listed(names: Sequence[str]) -> str:
    """``--a``, ``--a and --b``, ``--a, --b and --c`` (as the front end spells them) and the verb's ending."""
    shown = [option(n) for n in names]
    text = shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
    return f"{text} {'applies' if len(shown) == 1 else 'apply'}"


def not_streamed(name: str, why: str = "", value: object = None, alternative: str = "") -> UsageError:
    """The one error of an option (``name``, given as ``value``) that needs every row in memory, given on
    the stream or Dask engine: ``why`` says what it does with all the rows; ``alternative``: another way,
    after "use --engine memory, or"."""
    because = f" ({why})" if why else ""
    other = f", or {alternative}" if alternative else ""
    return UsageError(
        f"{option(name, value)} needs every row in memory{because}: use {option('engine', 'memory')}{other}"
    )


@dataclass(frozen=True)
class EngineOptions:
    """The engine a command runs on and its settings.

    ``engine``: ``"auto"`` (stream inputs above :data:`~uqeval.engine.local.AUTO_STREAM_BYTES`, directories,
    globs and URIs; read the others in memory), ``"memory"``, ``"stream"`` or ``"dask"``. ``chunk_rows``: rows
    per record batch when streaming (None: :func:`~uqeval.engine.local.auto_chunk_rows`). ``scheduler``: the
    address of a Dask scheduler, or ``workers``: the worker processes of a local Dask cluster (at most one of
    them; default a local cluster of 2). ``quiet``: no progress bar.

    A value checks itself when made; :meth:`choose` resolves ``"auto"`` for the inputs of a run and checks
    that every option given applies to the engine chosen.
    """

    engine: str = "auto"
    chunk_rows: int | None = None
    scheduler: str | None = None
    workers: int | None = None
    quiet: bool = False

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise UsageError(f"{option('engine')} must be one of {', '.join(ENGINES)}, got {self.engine!r}")
        if self.chunk_rows is not None:
            check_chunk_rows(self.chunk_rows)
        if self.scheduler is not None and self.workers is not None:
            raise UsageError(
                f"give either {option('scheduler', 'ADDRESS')} (an existing cluster) or "
                f"{option('workers', 'N')} (a local one)"
            )

    @property
    def streams(self) -> bool:
        """The engine reads record batches (``stream`` or ``dask``; after :meth:`choose`)."""
        return self.engine in ("stream", "dask")

    def choose(self, specs: Sequence[str | Path]) -> EngineOptions:
        """These options on the engine for the inputs ``specs``: :func:`~uqeval.engine.local.choose_engine` of
        each, Dask over stream over memory; a :class:`UsageError` for an option the engine does not take."""
        chosen = {choose_engine(self.engine, s) for s in specs}
        return self._on(next((e for e in ("dask", "stream") if e in chosen), "memory"))

    def streamed(self, command: str) -> EngineOptions:
        """These options for ``command``, which only streams: ``auto`` is ``stream``; ``memory`` is refused."""
        if self.engine == "memory":
            raise UsageError(
                f"{command} reads its rows in record batches: use {option('engine', 'stream')} or "
                f"{option('engine', 'dask')}"
            )
        return self._on("dask" if self.engine == "dask" else "stream")

    def _on(self, engine: str) -> EngineOptions:
        takes = {"memory": (), "stream": ("chunk_rows",), "dask": _STREAMED}[engine]
        given = [n for n in _STREAMED if getattr(self, n) is not None and n not in takes]
        if given:
            where = (
                f"{option('engine', 'dask')} only"
                if set(given) <= set(_DASK)
                else f"{option('engine', 'stream')} or {option('engine', 'dask')} only"
            )
            raise UsageError(f"{_listed(given)} to {where}")
        return replace(self, engine=engine)

    def memory_only(self, **given: Any) -> None:
        """Refuse, on a streamed engine, the options in ``given`` (name -> value) that were given (not None,
        False or 0): they are not streamed (:func:`not_streamed`)."""
        if not self.streams:
            return
        for name, value in given.items():
            if value is not None and value is not False and not (isinstance(value, int) and value == 0):
                raise not_streamed(name)

    def sized(self, specs: Sequence[str | Path], settings: Settings | Sequence[Settings]) -> EngineOptions:
        """These options with ``chunk_rows`` set: as given, else the smallest
        :func:`~uqeval.engine.local.auto_chunk_rows` of the inputs (``settings``: one, or one per input)."""
        if self.chunk_rows is not None:
            return self

        per = [settings] * len(specs) if not isinstance(settings, Sequence) else list(settings)
        return replace(self, chunk_rows=min(auto_chunk_rows(s, st) for s, st in zip(specs, per)))

    @contextlib.contextmanager
    def progress(self, specs: Sequence[str | Path]) -> Iterator[Callable[[int], None] | None]:
        """The progress bar's callback ``update(rows done)`` while the rows of ``specs`` are read (None when
        ``quiet`` or stderr is not a terminal); its total is their rows, where the footers tell."""
        from .progress import row_progress

        total = None
        if not self.quiet:
            counts = [total_rows(s) for s in specs]
            total = None if None in counts else sum(c for c in counts if c is not None)
        with row_progress(total, self.quiet) as update:
            yield update
