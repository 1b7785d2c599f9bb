"""``uqeval check INPUT --rules FILE``: the CI gate (thresholds and regressions against a baseline)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import Output, ScoringFlags, check_outputs, console, engine_command, show

if TYPE_CHECKING:
    from ..engine.options import EngineOptions

#: Settings that change metric values; only these (and the input's representation and
#: row count) are compared between candidate and baseline.
RESULT_SETTINGS = (
    "num_bins",
    "resolution",
    "levels",
    "level",
    "seed",
    "class_bins",
    "tace_threshold",
    "y_std",
)


def result_view(summary: dict[str, Any]) -> dict[str, Any]:
    """The parts of a summary that a settings mismatch is judged on."""
    settings = summary.get("settings") or {}
    inp = summary.get("input") or {}
    return {
        "settings": {k: v for k, v in settings.items() if k in RESULT_SETTINGS or k.startswith("adv_")},
        "input": {k: inp[k] for k in ("representation", "n_rows") if k in inp},
    }


def _no_scoring_options(input: Path, flags: ScoringFlags) -> None:
    """Refuse scoring options given with a summary JSON (it is already scored)."""
    from ..errors import UsageError
    from ..names import cli_flag

    given = [*flags.given(), *flags.columns]
    given += [
        name for name in ("config", "train", "reference", "time", "id") if getattr(flags, name) is not None
    ]
    if given:
        shown = ", ".join(cli_flag(g) for g in given)
        raise UsageError(
            f"{shown}: scoring options apply to a predictions INPUT, but {input} is a summary "
            "JSON that is already scored; drop them or pass the predictions file"
        )


def _read_summary(path: Path, what: str) -> dict:
    from ..commands.check import summary_from_json
    from ..config import read_text

    return summary_from_json(read_text(path, what), str(path))


InputArg = Annotated[
    Path,
    typer.Argument(
        help="Predictions file (CSV/Parquet, scored on the fly) or a summary JSON from `uqeval score --output` (.json)."
    ),
]
RulesOpt = Annotated[
    Path,
    typer.Option(
        "--rules",
        "-r",
        help="Rules file (TOML): limits, regressions, required metrics; example: uqeval config show ci.",
        dir_okay=False,
    ),
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        help="Baseline summary JSON (`uqeval score --output baseline.json`) for the regression checks.",
        dir_okay=False,
    ),
]
AllowSettingsMismatchOpt = Annotated[
    bool,
    typer.Option(
        "--allow-settings-mismatch",
        help="Report, instead of refusing, a baseline scored with other settings (bins, levels, seed, representation, row count).",
    ),
]
JunitOpt = Annotated[
    Path | None,
    typer.Option(
        "--junit",
        help="Also write a JUnit XML report here (one test case per check), atomically.",
        dir_okay=False,
    ),
]
OutputOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Also write the check result JSON here (atomically).", dir_okay=False
    ),
]


@engine_command(dask=False, output=OutputOpt)
def check(
    input: InputArg,
    rules: RulesOpt,
    baseline: BaselineOpt = None,
    allow_settings_mismatch: AllowSettingsMismatchOpt = False,
    junit: JunitOpt = None,
    *,
    out: Output,
    engine_options: EngineOptions,
    flags: ScoringFlags,
) -> None:
    """Check a model against CI rules: metric limits, regressions against a baseline, required metrics.

    A predictions INPUT is scored first, with the baseline's settings (flags and --config
    override them); a .json INPUT is an existing `uqeval score` summary. Prints every
    check with its value, baseline, limit and PASS/FAIL, and exits 0 if all pass, 1 if a
    check failed (after printing and writing the reports), 2 on usage errors, 3 on bad
    input or a bad rules file (naming the line).
    """
    from ..commands.check import evaluate, load_rules, opt_in_options, settings_mismatch
    from ..config import read_text
    from ..errors import GateFailure, InputError
    from ..io.writers import atomic_write_text, write_json
    from ..report.check import rich_tables, to_dict, to_junit, to_markdown

    is_summary = input.suffix.lower() == ".json"
    if is_summary:
        _no_scoring_options(input, flags)
    check_outputs([p for p in (input, rules, baseline, flags.train) if p is not None], junit, out.path)

    rule_set = load_rules(read_text(rules, "rules file"), str(rules))
    base = _read_summary(baseline, "baseline") if baseline is not None else None

    notes: list[str] = []
    if is_summary:
        summary = _read_summary(input, "summary")
    else:
        from dataclasses import replace

        from ..catalogue import settings_for_paths

        settings = flags.settings(baseline=None if baseline is None or base is None else (baseline, base))
        # a rule on an opt-in group turns its option on: on/off options (corp.brier.mcb -> --diagnostics,
        # murphy.* -> --murphy), and the thresholds named in exceedance.<t>.* paths
        wanted = {o: True for o in opt_in_options(rule_set) if getattr(settings, o, None) is False}
        if wanted:
            settings = replace(settings, **wanted)
        settings = settings_for_paths(settings, [c.path for c in rule_set.checks] + list(rule_set.require))
        engine = engine_options.choose([input])
        reference = flags.reference_spec()  # usage errors (--id without --reference FILE) on every engine
        engine.memory_only(reference=flags.reference)
        from .score import run_score

        summary = run_score(input, settings, engine, reference).summary
        if engine.streams:
            from ..io.inputs import expand_input

            skipped = expand_input(input, check=False).note()  # files of a directory that were not read
            notes += [skipped] if skipped else []
        if base is not None:
            changed = (
                " (overridden by flags/--config)" if flags.config or flags.given() or flags.columns else ""
            )
            notes.append(f"{input} scored with the baseline's settings{changed}")

    if base is not None:
        diffs = settings_mismatch(result_view(summary), result_view(base))
        if diffs:
            allowed = allow_settings_mismatch or bool(rule_set.settings.get("allow_settings_mismatch"))
            if not allowed:
                raise InputError(
                    f"{input} and the baseline {baseline} were scored differently: {'; '.join(diffs)}; score "
                    "both with the same settings and data, or pass --allow-settings-mismatch (or set "
                    "allow_settings_mismatch = true under [settings] in the rules file) to compare anyway"
                )
            notes += [f"settings mismatch (allowed): {d}" for d in diffs]

    result = evaluate(rule_set, summary, base).with_notes(*notes)

    report = to_dict(result)
    report["input"] = str(input)
    report["baseline"] = str(baseline) if baseline is not None else None
    if out.verdict:
        from ..commands.verdict import check_verdict

        report["verdict"] = check_verdict(report, summary)
    if junit is not None:
        atomic_write_text(junit, to_junit(result))
    if out.path is not None:
        write_json(out.path, report)
    show(
        report,
        out.fmt,
        lambda: to_markdown(result, report),
        lambda: rich_tables(result, report),
        console(140),
    )
    if not result.passed:
        failed = [r.name for r in result.failures]
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        raise GateFailure(f"{len(failed)} of {len(result.rows)} checks failed: {', '.join(failed[:3])}{more}")
