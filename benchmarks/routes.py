"""Which streamed state each catalogue metric takes, without and with ``--weights`` (issue 36: one state per
metric). Prints a table: path, representation, the unweighted route, the weighted route, and whether the
metric has a per-row sums form (:attr:`uqeval.catalogue.RowStat.sums_form`).

Routes: ``sums`` (the summed per-row form), ``family-sums`` (a family's cell sums, ``Family.weighted_sums``),
``linear`` (the family kernel run per batch, weighted by row count), ``special:<State>`` (a mergeable state of
:mod:`uqeval.catalogue.states`), ``-`` (not streamed), ``n/w`` (takes no weights).

Run from /tmp: ``python /path/to/benchmarks/routes.py`` (``--summary``: counts per route pair only).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import numpy as np

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
FILES = {
    "gaussian": "gaussian.parquet",
    "point": "point.csv",
    "intervals": "intervals_multi.csv",
    "quantiles": "quantiles.parquet",
    "samples": "samples.parquet",
    "categorical": "classification.parquet",
    "members": "ensemble_classification.parquet",
    "dirichlet": "dirichlet.parquet",
    "loglik": "loglik.parquet",
}


def _special(state, name: str) -> str:
    """``special:<State>``: the state (or the part of a composite state) that gives metric ``name``."""
    parts = getattr(state, "parts", (state,))
    return "special:" + next(type(p).__name__ for p in parts if name in p.metrics)


def routes(kind: str, file: str) -> list[tuple[str, str, str, str, str]]:
    from uqeval.catalogue import families_for, rows, states
    from uqeval.catalogue.weighted import weighted_state
    from uqeval.config import Settings
    from uqeval.io.load import load_predictions

    settings = Settings(diagnostics=True)
    pred = load_predictions(SAMPLE / file, settings, require_targets=kind != "loglik").prediction
    st = states.batch_state(pred, settings)
    wst = weighted_state(pred, settings, np.ones(pred.n))
    wfams = wst["families"]  # (weighted: the sums of the forms, the cells, the states, at unit weights here)
    summed = {(f, n) for f, e in wfams.items() for (_, n, _) in e.get("sums", {})}
    out = []
    for f in families_for(pred.kind, settings):
        plan = states._plan(f, pred.kind)
        special = plan.special
        entry = st["families"].get(f.name, {})
        for m in f.metrics:
            if not m.applies_to(pred.kind):
                continue
            if m.name in plan.summed:
                un = "sums"
            elif m.name in plan.cells:
                un = "family-sums"
            elif m.name in plan.linear:
                un = "linear"
            elif special is not None and m.name in special.metrics:
                un = _special(special, m.name)
            else:
                un = "-"
            if f.name not in st["families"] and un != "-":
                un += " (not here)"
            sp = states.SPECIAL.get(f.name)
            state = sp(pred.kind) if sp else None
            if (f.name, m.name) in summed:
                w = "sums"
            elif m.path in wst["not_streamed"]:
                w = "-"
            elif "cells" in wfams.get(f.name, {}) and pred.kind in m.weighted_kinds:
                w = "family-sums"
            elif "special" in wfams.get(f.name, {}) and state is not None and m.name in state.metrics:
                w = _special(state, m.name)
            elif m.path in wst["not_weighted"]:
                w = "n/w"
            else:
                w = "-"
            keys = [k for k, _, _ in entry.get("sums", {})] + list(entry.get("linear", {}))
            key = keys[0] if keys else None
            stat = rows(m, pred, settings, key if f.by_level else None)
            form = "sums" if stat is not None and stat.sums_form is not None else ("weighted" if stat else "")
            out.append((m.path, kind, un, w, form))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--summary", action="store_true", help="counts per (unweighted, weighted, form) only")
    args = ap.parse_args()
    table = [r for kind, file in FILES.items() for r in routes(kind, file)]
    if args.summary:
        for (un, w, form), n in sorted(Counter((r[2], r[3], r[4]) for r in table).items()):
            print(f"{n:4d}  unweighted={un:32s} weighted={w:28s} row form={form or '-'}")
        return
    print(f"{'metric':44s} {'kind':12s} {'unweighted':32s} {'weighted':28s} row form")
    for path, kind, un, w, form in table:
        print(f"{path:44s} {kind:12s} {un:32s} {w:28s} {form or '-'}")


if __name__ == "__main__":
    main()
