"""``score --preserve-dims`` on many kept cells (issue 41): every per-cell metric from per-row sums.

A grid of 64 x 128 points keeps 8,192 cells; scoring each with every metric (the ``--by`` loop of
:mod:`.groups`, at most ``LIMITS["groups"]`` groups) does not scale to that. Above that many kept cells a
run keeps one mergeable state for all of them, a few arrays with a row per cell:

- the metrics that are functions of weighted sums of their per-row form (:attr:`uqeval.catalogue.RowStat.
  sums_form`: the CRPS and its fair form, MAE, MARPD, coverage, width, the PIT calibration errors,
  sharpness, the spread–skill ratio, ...; not RMSE, R² and correlation, whose per-row form is a function of
  all the rows): the per-row terms of a batch are computed once
  for all its rows, and summed per cell with :func:`numpy.bincount` (codes: counted per (cell, code)); a cell's
  metric is the form's own ``finish`` of its sums, the function weighted streaming and the bootstrap use, so
  no formula is written here;
- the rank histogram of an ensemble (``--diagnostics``): rows per (cell, members below, members tied) and
  each cell's :func:`~uqeval.metrics.calibration_tests.data_key`, the sums the whole file's state keeps
  (:class:`uqeval.catalogue.states.RankHistogram`), so ties are broken per cell as ``--by`` breaks them, and
  the χ² test of its counts.

The other metrics (order statistics, adaptive bins, resampling, RMSE) are computed for the whole data only;
a note names them. States merge by adding their arrays (the union of the cells seen), on every engine; the whole
data's metrics are the usual ones (:class:`~.stream.Partial`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ...config import Settings
from ...errors import InputError, option
from .stream import Partial

if TYPE_CHECKING:
    from ...predictions import Prediction

#: most codes of a per-row form summed per cell (the PIT calibration's 101 cover indices fit; a 2**20-bin
#: histogram does not)
CELL_CODES = 4096

#: a metric's key in a cell state: (family, level key or None, metric)
Key = tuple[str, "str | None", str]


def many_cells(spec: Any, settings: Settings) -> bool:
    """Whether ``spec`` is a labelled input whose ``--preserve-dims``/``--reduce-dims`` keep more cells than
    ``LIMITS["groups"]`` (scored here, not one group at a time)."""
    from ...config import LIMITS
    from ...io.readers import is_labelled

    if spec is None or not is_labelled(spec):
        return False
    from ...io import labelled

    if settings.columns.get("by") != labelled.CELL:
        return False
    n = labelled.cell_count(spec)
    if n > LIMITS["cells"]:
        raise InputError(
            f"{spec}: {option('preserve_dims')} keeps {n:,} cells; at most {LIMITS['cells']:,} are scored "
            "(each keeps its sums in memory); keep fewer dimensions or a coarser grid"
        )
    return n > LIMITS["groups"]


def _cell_index(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, codes)``: the sorted distinct labels of a batch's key column (the labelled source's
    strings, hashed by Arrow: no sort of the rows' strings) and each row's index."""
    import pyarrow as pa

    encoded = pa.array(groups, type=pa.string()).dictionary_encode()
    if encoded.null_count:  # (the key column has no null; any other column goes the --by way)
        from .core import group_codes

        labels, codes = group_codes(groups)
        return labels.astype(str), codes.astype(np.intp)
    names = np.asarray(encoded.dictionary.to_numpy(zero_copy_only=False), dtype=str)
    order = np.argsort(names, kind="stable")
    rank = np.empty(order.size, dtype=np.intp)
    rank[order] = np.arange(order.size)
    return names[order], rank[np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.intp)]


def _sum_form(stat, codes: np.ndarray, g: int, w: np.ndarray | None) -> np.ndarray | None:
    """``(g, k + n_codes)``: a per-row form's weighted sums of terms and weighted counts of codes per cell
    (``codes``: each row's cell), the sums :meth:`uqeval.catalogue.RowStat.weighted_sums` gives all rows."""
    terms, rcodes, n_codes, _ = stat.sums_form
    if n_codes > CELL_CODES:
        return None
    parts = []
    if terms is not None:
        t = np.asarray(terms, dtype=np.float64).reshape(codes.size, -1)
        if w is not None:
            t = t * w[:, None]
        parts += [np.bincount(codes, weights=t[:, j], minlength=g)[:, None] for j in range(t.shape[1])]
    if rcodes is not None:
        flat = codes * n_codes + np.asarray(rcodes, dtype=np.intp)
        parts.append(np.bincount(flat, weights=w, minlength=g * n_codes).reshape(g, n_codes).astype(float))
    return np.concatenate(parts, axis=1)


def _rank_histogram_on(kind: str, settings: Settings) -> bool:
    """Whether the settings compute the rank histogram's group (``--diagnostics``, or ``--groups`` naming it)."""
    from ...catalogue import families_for

    return any(f.name == "calibration_tests" for f in families_for(kind, settings))


def _rank_sums(pred: Prediction, codes: np.ndarray, g: int) -> dict[str, Any] | None:
    """Rows per (cell, members below, members tied) and each cell's data key (the whole file's rank-histogram
    state, :class:`uqeval.catalogue.states.RankHistogram`, per cell)."""
    from ...catalogue.states import histogram
    from ...metrics import calibration_tests as ct

    if pred.kind != "samples" or pred.ragged:  # type: ignore[attr-defined]
        return None
    m = pred.samples.shape[1]  # type: ignore[attr-defined]
    lo, hi = pred.pit_bounds()  # type: ignore[attr-defined]  # (as the whole data's state: computed once)
    ell = np.rint(lo * (m + 1)).astype(np.int64)
    t = np.rint(hi * (m + 1)).astype(np.int64) - ell - 1
    side = (m + 1) ** 2
    keys = np.zeros(g, dtype=np.uint64)
    np.add.at(keys, codes, ct.row_hashes(pred.require_targets(), lo, hi))  # sums mod 2**64, as data_key's
    return {"m": m, "table": histogram(codes * side + ell * (m + 1) + t, g * side), "keys": keys}


class CellSums:
    """Per-cell sums of some rows (:mod:`uqeval.commands.score.cells`): ``labels`` (sorted), rows ``n`` and
    rows of weight 0 ``n_zero`` per cell, total weight ``w``, ``blocks`` of per-row-form sums ((cells, k)
    arrays, shared by the metrics of one form), ``forms`` (metric key -> block), the ``rank`` sums and a
    ``probe`` (two rows, to rebuild each form's ``finish``)."""

    def __init__(self) -> None:
        self.labels = np.array([], dtype=str)
        self.n = np.zeros(0, dtype=np.int64)
        self.n_zero = np.zeros(0, dtype=np.int64)
        self.w: np.ndarray = np.zeros(0)
        self.blocks: dict[str, np.ndarray] = {}
        self.forms: dict[Key, str] = {}
        self.rank: dict[str, Any] | None = None
        self.probe: Prediction | None = None
        self.kind: str | None = None

    @classmethod
    def of(cls, pred: Prediction, groups: np.ndarray, settings: Settings, weights=None) -> CellSums:
        """The sums of one batch's rows (``groups``: their key column; ``weights``: row weights or None)."""
        from ...catalogue import weighted_forms

        out = cls()
        labels, codes = _cell_index(groups)
        g = labels.size
        out.labels, out.kind = labels, pred.kind
        w = None
        out.n_zero = np.zeros(g, dtype=np.int64)
        if weights is not None:
            from ...weights import drop_zero

            out.n_zero = np.bincount(codes[np.asarray(weights) == 0], minlength=g)
            w, (pred, codes), _ = drop_zero(weights, pred, codes)
        out.n = np.bincount(codes, minlength=g)
        out.w = out.n.astype(float) if w is None else np.bincount(codes, weights=w, minlength=g)
        if not pred.n:
            return out
        out.probe = pred.subset(np.arange(min(pred.n, 2)))
        forms, _, _ = weighted_forms(pred, settings)
        made: dict[tuple[int, int, int], str] = {}
        for f, key, m, stat in forms:
            form = stat.sums_form
            if form is None:
                continue
            ident = (id(stat.terms), id(stat.codes), id(stat.score))  # (``forms`` keeps them alive)
            if ident not in made:
                block = _sum_form(stat, codes, g, w)
                if block is None:
                    continue
                made[ident] = name = f"{f.name}.{key}.{m.name}"
                out.blocks[name] = block
            out.forms[(f.name, key, m.name)] = made[ident]
        if w is None and _rank_histogram_on(pred.kind, settings):  # it takes no weights (as in memory)
            out.rank = _rank_sums(pred, codes, g)
        return out

    def merge(self, other: CellSums) -> CellSums:
        """Both parts' rows (associative; the union of their cells)."""
        if not self.labels.size:
            return other
        if not other.labels.size:
            return self
        labels = np.union1d(self.labels, other.labels)
        ia, ib = np.searchsorted(labels, self.labels), np.searchsorted(labels, other.labels)
        g = labels.size

        def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            out = np.zeros((g, *a.shape[1:]), dtype=np.result_type(a, b))
            out[ia] += a
            out[ib] += b
            return out

        out = CellSums()
        out.labels, out.kind = labels, self.kind or other.kind
        out.n, out.n_zero, out.w = add(self.n, other.n), add(self.n_zero, other.n_zero), add(self.w, other.w)
        first = self if self.probe is not None else other
        out.probe, out.forms = first.probe, {**other.forms, **self.forms}
        widths = {k: v.shape[1] for part in (self, other) for k, v in part.blocks.items()}
        out.blocks = {
            k: add(
                self.blocks.get(k, np.zeros((self.labels.size, width))),
                other.blocks.get(k, np.zeros((other.labels.size, width))),
            )
            for k, width in widths.items()
        }
        out.rank = _merge_rank(self.rank, other.rank, ia, ib, g)
        return out


def _merge_rank(a, b, ia: np.ndarray, ib: np.ndarray, g: int) -> dict[str, Any] | None:
    """Two parts' rank sums on the union of their cells (``ia``, ``ib``: each part's cells in it)."""
    from ...catalogue.states import Packed

    if a is None or b is None:
        return a or b
    side = (a["m"] + 1) ** 2

    def moved(table: Any, to: np.ndarray) -> Packed:
        p = table if isinstance(table, Packed) else Packed.of(np.asarray(table))
        cell, rest = np.divmod(p.index, side)
        return Packed(to[cell] * side + rest, p.values, (g * side,), p.dtype)  # (still sorted: to increases)

    keys = np.zeros(g, dtype=np.uint64)
    np.add.at(keys, ia, a["keys"])
    np.add.at(keys, ib, b["keys"])
    return {"m": a["m"], "table": moved(a["table"], ia) + moved(b["table"], ib), "keys": keys}


def _form_values(cells: CellSums, settings: Settings, keep: np.ndarray) -> list[tuple[Key, np.ndarray]]:
    """``(metric key, values of the cells ``keep``)`` of every summed form: its own ``finish`` of the sums."""
    from ...catalogue import METRICS, rows

    out = []
    for (family, key, name), block in cells.forms.items():
        stat = rows(METRICS[f"{family}.{name}"], cells.probe, settings, key)  # type: ignore[arg-type]
        assert stat is not None and stat.sums_form is not None  # the probe's rows had it
        with np.errstate(divide="ignore", invalid="ignore"):
            values = stat.sums_form[3](cells.blocks[block][keep], cells.w[keep])
        out.append(((family, key, name), np.asarray(values, dtype=np.float64)))
    return out


def _rank_values(cells: CellSums, settings: Settings, keep: np.ndarray) -> list[tuple[Key, Any]]:
    """The rank histogram of each cell ``keep`` (at least 2 rows, as in memory) and its χ² test."""
    from ...catalogue.states import Packed
    from ...metrics.calibration_tests import ensemble_rank_counts, rank_counts_chi2

    rank = cells.rank
    if rank is None:
        return []
    m = rank["m"]
    side = (m + 1) ** 2
    table = rank["table"]
    p = table if isinstance(table, Packed) else Packed.of(np.asarray(table))
    bounds = np.searchsorted(p.index // side, np.arange(cells.labels.size + 1))
    counts = np.full((cells.labels.size, m + 1), -1, dtype=np.int64)
    for c in np.flatnonzero(keep & (cells.n >= 2)):  # a loop over cells, not rows
        one = np.zeros(side, dtype=np.int64)
        lo, hi = bounds[c], bounds[c + 1]
        one[p.index[lo:hi] - c * side] = p.values[lo:hi]
        counts[c] = ensemble_rank_counts(one.reshape(m + 1, m + 1), m, settings.seed, int(rank["keys"][c]))
    chi2, pval = rank_counts_chi2(np.maximum(counts, 0))
    have = counts[:, 0] >= 0
    hist = np.empty(counts.shape[0], dtype=object)  # (filled one by one: numpy would make lists a 2-D array)
    for c in np.flatnonzero(have):
        hist[c] = counts[c].tolist()
    return [
        (("calibration_tests", None, "rank_histogram"), hist[keep]),
        (("calibration_tests", None, "rank_hist_chi2"), np.where(have, chi2, np.nan)[keep]),
        (("calibration_tests", None, "rank_hist_chi2_p"), np.where(have, pval, np.nan)[keep]),
    ]


def cell_groups(cells: CellSums, settings: Settings, column: str) -> dict[str, Any]:
    """The ``groups`` block of the summary (as :func:`uqeval.commands.score.core.score_groups` writes it) of
    merged cell sums: per cell (sorted) its rows and the metrics of :mod:`.cells`. A loop over cells builds the
    document; the numbers come out of whole-array operations."""
    from ...catalogue import METRICS, assemble, get_family

    keep = cells.n > 0
    found = _form_values(cells, settings, keep) + _rank_values(cells, settings, keep)
    # the layout of one cell's metrics, its leaves the positions in ``found``, filled per cell
    layout, _ = assemble(
        [(get_family(f), k, METRICS[f"{f}.{n}"], float(i)) for i, ((f, k, n), _) in enumerate(found)],
        cells.kind or "",
    )
    columns = [v for _, v in found]

    def fill(tree: Any, j: int) -> Any:
        if isinstance(tree, dict):
            return {k: fill(v, j) for k, v in tree.items()}
        v = columns[int(tree)][j]
        return v if isinstance(v, list) or v is None else float(v)

    values: dict[str, Any] = {}
    n_rows = cells.n + cells.n_zero
    j = 0
    for c, label in enumerate(cells.labels.tolist()):
        if not keep[c]:
            note = "no metric computed: every row of the group has weight 0"
            values[label] = {"n_rows": int(n_rows[c]), "metrics": {}, "notes": [note]}
            continue
        values[label] = {"n_rows": int(n_rows[c]), "metrics": fill(layout, j)}
        j += 1
    return {"column": column, "values": values}


def per_cell_note(summary: dict[str, Any], groups: dict[str, Any]) -> str | None:
    """The note naming the whole data's metrics that are not given per cell (none: None)."""
    from ...catalogue.paths import flatten
    from ...errors import option

    whole = {p for p, _ in flatten(summary.get("metrics", {}))}
    cell: dict[str, Any] = next((b["metrics"] for b in groups["values"].values() if b.get("metrics")), {})
    per = {p for p, _ in flatten(cell)}
    left = sorted(whole - per)
    if not left:
        return None
    shown = ", ".join(left[:12]) + (f" and {len(left) - 12} more" if len(left) > 12 else "")
    return (
        f"{option('preserve_dims')}: {len(groups['values']):,} cells: each cell gets the metrics that are "
        f"functions of per-row sums (and the rank histogram); these are given for the whole data only: {shown}"
    )


def with_cell_note(summary: dict[str, Any], groups: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with the note of the metrics not given per cell (:func:`per_cell_note`)."""
    text = per_cell_note(summary, groups)
    if text is not None:
        summary["notes"] = [*summary.get("notes", []), text]
    return summary


class CellPartial(Partial):
    """A :class:`~.stream.Partial` (weighted where the settings name a weights column) that also keeps the
    :class:`CellSums` of its rows (``cells``)."""

    cells: CellSums

    def batch_state(self, batch, settings: Settings):
        if batch.groups is None:
            raise InputError("per-cell streaming needs the key column in every batch")
        part = CellSums.of(batch.prediction, batch.groups, settings, batch.weights)
        self.cells = getattr(self, "cells", CellSums()).merge(part)
        return super().batch_state(batch, settings)

    def merge_sums(self, other: Partial) -> CellPartial:
        out = cast("CellPartial", super().merge_sums(other))
        out.cells = getattr(self, "cells", CellSums()).merge(getattr(other, "cells", CellSums()))
        return out
