"""Seeded fuzz test over every command (see :mod:`tests.fuzz.harness` for the cases and invariants).

The fast subset runs in the suite. The long profile runs by hand::

    UQEVAL_FUZZ_CASES=2000 python -m pytest tests/fuzz -q -s -p no:cacheprovider

(``UQEVAL_FUZZ_SEED`` picks another seed); it prints the count per outcome class.
"""

from __future__ import annotations

import collections
import os
import resource

import pytest
from typer.testing import CliRunner

from uqeval.cli import app

from .harness import Generator, live_markup, run_case

CASES = int(os.environ.get("UQEVAL_FUZZ_CASES", "60"))
SEED = int(os.environ.get("UQEVAL_FUZZ_SEED", "17"))
PEAK_RSS_MB = 3000


def test_fuzz_every_command(tmp_path):
    runner = CliRunner()
    gen = Generator(tmp_path, SEED)
    counts: collections.Counter[str] = collections.Counter()
    per_command: collections.Counter[str] = collections.Counter()
    failures = []
    for i in range(CASES):
        case = gen.case(SEED * 100_000 + i)
        workdir = tmp_path / f"c{gen.k:05d}"
        outcome = run_case(runner, app, case, workdir)
        counts[f"exit {outcome.exit_code}"] += 1
        per_command[case.command] += 1
        if outcome.problems:
            counts["FAILED"] += 1
            failures.append((i, case.command, case.label, case.args, outcome.problems, outcome.stderr[-400:]))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"\nfuzz: {CASES} cases, seed {SEED}: {dict(sorted(counts.items()))}; per command "
        f"{dict(sorted(per_command.items()))}; peak RSS {peak_mb:.0f} MB"
    )
    assert peak_mb < PEAK_RSS_MB
    assert not failures, "\n\n".join(
        f"case {i} [{cmd} {label}]\n  args: {args!r}\n  problems: {probs}\n  stderr: {err!r}"
        for i, cmd, label, args, probs, err in failures[:15]
    )


@pytest.mark.parametrize(
    "command", ["score", "ucc", "coverage", "compare", "recalibrate", "check", "report", "plot", "explain"]
)
def test_generator_covers_every_command(tmp_path, command):
    gen = Generator(tmp_path, SEED)
    seen = {gen.case(i).command for i in range(80)}
    assert command in seen


@pytest.mark.parametrize(
    ("text", "live"),
    [
        ("[bold]MK1 [/x]MK2", False),  # printed as written
        ("\\[bold\\]MK1 | \\[/x\\]MK2", False),  # a Markdown cell escapes the brackets (seed 4242 flagged it)
        ("MK1", True),  # rich ate the tag
        ("MK2", True),
        ("\\[bold]MK1", False),
    ],
)
def test_live_markup_tells_rendered_from_escaped(text, live):
    assert live_markup(text) is live
