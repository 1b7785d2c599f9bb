"""``uqeval explain METRIC``: what a metric means, its formula and its source."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import handle_errors


@handle_errors
def explain(
    metric: Annotated[
        str | None,
        typer.Argument(
            help="Metric path from the JSON summary (scoring_rule.crps) or its last part (crps); omit to list every metric."
        ),
    ] = None,
) -> None:
    """Explain a metric: plain-language meaning, formula and reference.

    Names are the 'group.key' paths of the JSON summary (e.g. avg_calibration.miscal_area)
    or their last part (e.g. miscal_area); a short name used by several groups (nll,
    coverage) shows each of them. Level parts of a path (coverage.0.95.width) are ignored.
    Without METRIC, list every metric that has an explanation.
    """
    from ..catalogue.explain import explain as explain_text
    from ..glossary import GLOSSARY

    if metric is None:
        width = max(len(k) for k in GLOSSARY)
        typer.echo("\n".join(f"{k:<{width}}  {v['title']}" for k, v in GLOSSARY.items()))
        return
    typer.echo(explain_text(metric))
