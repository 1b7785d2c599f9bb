"""Self-contained HTML report of one or more score summaries.

:func:`render_report` turns summaries (the ``uqeval.score/1`` JSON), optional UCC results
and encoded figures into one HTML string that needs nothing else: inline CSS, images as
base64 data URIs, no JavaScript, no network (a Content-Security-Policy forbids any fetch
other than ``data:`` images). Writing the file is the caller's job (atomically).

Every string that comes from the input — file names, column names, group values, metric
keys, captions — goes through :func:`html.escape`; element ids are built from a
restricted alphabet. The output is deterministic (no timestamps), so it can be diffed.

The sections, in order, with their ids and the best-value rules: docs/guide/report.md.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._version import __version__
from ..catalogue.paths import flatten, is_number as _is_number, metric_orientation
from ..errors import InputError, option
from ..glossary import find_entry
from ..text import HTML, fmt_number, xml_text

__all__ = ["flatten", "image_data_uri", "render_report", "ORIENTATION_TEXT"]

#: How an orientation from the summary is shown.
ORIENTATION_TEXT: dict[str, str] = {
    "lower": "↓ lower is better",
    "higher": "↑ higher is better",
    "target": "◎ closest to target",
}

# Orientation of UCC outputs when the UCC result does not carry its own.
_UCC_ORIENTATION = {"ucc.auucc": "lower", "ucc.auucc_const": "lower", "ucc.gain": "higher"}

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

_CSS = """
:root { --fg: #1b1b1b; --muted: #5f6368; --line: #d9dce1; --head: #f3f5f7; --accent: #0072B2; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: var(--fg); margin: 0 auto; max-width: 1200px; padding: 1.5rem 2rem 3rem; }
h1 { font-size: 1.7rem; margin: 0 0 .3rem; }
h2 { font-size: 1.35rem; margin: 1.6rem 0 .6rem; padding-bottom: .25rem;
     border-bottom: 2px solid var(--line); }
h3 { font-size: 1.1rem; margin: 1.4rem 0 .4rem; }
p.meta, p.note { color: var(--muted); margin: .2rem 0 .8rem; }
nav ol { margin: .2rem 0 .6rem; padding: 0; list-style: none; display: flex; flex-wrap: wrap;
         gap: .2rem 1.2rem; font-size: .9rem; }
p.lead { font-size: 1.05rem; margin: .4rem 0 .6rem; }
table.scoreboard th span.orient { color: var(--muted); font-weight: normal; font-size: .8rem;
                                  white-space: nowrap; }
table.scoreboard thead th { vertical-align: bottom; }
table.scoreboard thead th code { overflow-wrap: normal; }
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
code { font: .88em/1.4 ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
       overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; margin: .3rem 0 1rem; }
table { border-collapse: collapse; font-size: .92rem; }
th, td { border: 1px solid var(--line); padding: .28rem .6rem; vertical-align: top;
         text-align: left; }
thead th { background: var(--head); position: sticky; top: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.orient { color: var(--muted); white-space: nowrap; font-size: .85rem; }
td.missing { color: #9aa0a6; text-align: center; }
strong.best { color: #0b6b2f; }
td.list { min-width: 12rem; }
td.alarm { color: #b2182b; font-weight: 600; }
tr.total th, tr.total td { border-top: 2px solid var(--muted); }
svg.spark { display: block; margin-bottom: .15rem; }
details summary { cursor: pointer; color: var(--muted); font-size: .85rem; }
details .vals { font-size: .82rem; overflow-wrap: anywhere; }
.figs { display: flex; flex-wrap: wrap; gap: 1rem; }
figure { margin: 0; flex: 1 1 460px; max-width: 560px; border: 1px solid var(--line);
         border-radius: 4px; padding: .5rem; }
figure img { width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: .88rem; margin-top: .3rem; }
dl.glossary dt { font-weight: 600; margin-top: 1rem; }
dl.glossary dd { margin: .2rem 0 0 1.2rem; }
.formula { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace;
           font-size: .86rem; background: var(--head); padding: .3rem .5rem;
           border-radius: 3px; margin: .3rem 0; overflow-wrap: anywhere; }
.ref { color: var(--muted); font-size: .86rem; }
div.verdict { margin: .2rem 0 .6rem; font-size: .9rem; }
div.verdict ul { margin: 0; padding-left: 1.1rem; }
div.verdict li { margin: .1rem 0; }
div.verdict li.v-good b { color: #0b6b2f; }
div.verdict li.v-bad b { color: #b2182b; }
div.verdict li.v-action b { color: var(--accent); }
span.v-rule, p.v-note { color: var(--muted); font-size: .8rem; }
p.v-note { margin: .1rem 0 .3rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
@media print { thead th { position: static; } figure { break-inside: avoid; } }
""".strip()


# ----------------------------------------------------------------------------- helpers
def _esc(value: Any) -> str:
    return html.escape(xml_text(value), quote=True)  # control characters shown as \xNN


#: the characters an element id may not hold
_ID_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class _Ids:
    """Unique, attribute-safe element ids."""

    def __init__(self) -> None:
        self._seen: set[str] = set()

    def make(self, *parts: Any) -> str:
        raw = "-".join(str(p) for p in parts)
        base = _ID_UNSAFE.sub("-", raw).strip("-") or "x"
        ident, k = base, 2
        while ident in self._seen:
            ident, k = f"{base}-{k}", k + 1
        self._seen.add(ident)
        return ident


def _fmt_number(v: float | int) -> str:
    return fmt_number(v, HTML)


def image_data_uri(data: bytes) -> str:
    """``data:`` URI for PNG, SVG, JPEG or GIF bytes (type from the content, not a name)."""
    if not isinstance(data, (bytes, bytearray)):
        raise InputError(f"figure data must be bytes, got {type(data).__name__}")
    head = bytes(data[:256]).lstrip()
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        mime = "image/png"
    elif head.startswith(b"\xff\xd8\xff"):
        mime = "image/jpeg"
    elif head.startswith((b"GIF87a", b"GIF89a")):
        mime = "image/gif"
    elif head.startswith(b"<?xml") or head.startswith(b"<svg"):
        mime = "image/svg+xml"
    else:
        raise InputError(
            "figure data is not a PNG, SVG, JPEG or GIF image "
            f"(starts with {bytes(data[:8])!r}); encode figures with figure_to_bytes"
        )
    return f"data:{mime};base64,{base64.b64encode(bytes(data)).decode('ascii')}"


def _sparkline(values: Sequence[float]) -> str:
    pts = [(i, float(v)) for i, v in enumerate(values) if _is_number(v) and math.isfinite(v)]
    if len(pts) < 2:
        return ""
    w, h, pad = 120.0, 26.0, 2.0
    lo, hi = min(v for _, v in pts), max(v for _, v in pts)
    span = hi - lo or 1.0
    n = len(values) - 1 or 1
    coords = " ".join(
        f"{pad + (w - 2 * pad) * i / n:.1f},{h - pad - (h - 2 * pad) * (v - lo) / span:.1f}" for i, v in pts
    )
    return (
        f'<svg class="spark" width="{w:.0f}" height="{h:.0f}" viewBox="0 0 {w:.0f} {h:.0f}" '
        f'role="img" aria-label="trend of {len(values)} values">'
        f'<polyline fill="none" stroke="#0072B2" stroke-width="1.5" points="{coords}"/></svg>'
    )


def _list_cell(values: Sequence[Any]) -> str:
    """A list-valued metric: sparkline, size and range, the values folded away."""
    if len(values) == 0:
        return '<td class="list">[] (empty)</td>'
    nums = all(_is_number(v) for v in values)
    if len(values) <= 4:  # short lists are shown as they are
        text = ", ".join(_fmt_number(v) if _is_number(v) else str(v) for v in values)
        return f'<td class="list">[{_esc(text)}]</td>'
    if nums:
        finite = [float(v) for v in values if math.isfinite(float(v))]
        rng = f"{_fmt_number(min(finite))} … {_fmt_number(max(finite))}" if finite else "no finite values"
        text = ", ".join(_fmt_number(v) for v in values)
        summary = f"{len(values)} values, {rng}"
        spark = _sparkline(values)
    else:
        text = ", ".join(str(v) for v in values)
        summary = f"{len(values)} values"
        spark = ""
    return (
        f'<td class="list">{spark}<span>{_esc(summary)}</span>'
        f'<details><summary>values</summary><div class="vals">{_esc(text)}</div></details></td>'
    )


def _value_cell(value: Any, best: bool = False) -> str:
    if value is None:
        return '<td class="missing">—</td>'
    if isinstance(value, (list, tuple)):
        return _list_cell(value)
    if isinstance(value, Mapping):  # an empty mapping (non-empty ones are flattened)
        return '<td class="missing">{}</td>'
    if isinstance(value, bool):
        return f'<td class="num">{"true" if value else "false"}</td>'
    if _is_number(value):
        text = _fmt_number(value)
        if best:
            text = f'<strong class="best">{text}</strong>'
        return f'<td class="num">{text}</td>'
    return f"<td>{_esc(value)}</td>"


def _best_columns(
    values: Sequence[Any], orient: str | None, targets: Sequence[float | None] | None = None
) -> set[int]:
    """Columns holding the best value: the lowest, the highest, or (``"target"``) the one closest to its
    column's target. Ties are all best; NaN, null and non-numbers never are; nobody is best with fewer than
    two comparable values or when they are all equal."""
    if orient not in ("lower", "higher", "target") or len(values) < 2:
        return set()
    if orient == "target":
        if targets is None:
            return set()
        nums = [
            (i, abs(float(v) - float(t)))
            for i, (v, t) in enumerate(zip(values, targets))
            if _is_number(v) and math.isfinite(v) and t is not None and math.isfinite(t)
        ]
        orient = "lower"  # the distance to the target
    else:
        nums = [(i, float(v)) for i, v in enumerate(values) if _is_number(v) and math.isfinite(v)]
    if len(nums) < 2:
        return set()
    pick = min if orient == "lower" else max
    top = pick(v for _, v in nums)
    tol = 1e-12 * max(1.0, abs(top))  # rounding noise (0.95 - 0.93 vs 0.97 - 0.95) is a tie
    best = {i for i, v in nums if abs(v - top) <= tol}
    return set() if len(best) == len(nums) else best  # all equal: nobody is best


def _target(summary: Mapping[str, Any] | None, path: str) -> float | None:
    """Target of the ``"target"``-oriented metric at ``path`` of a summary (:func:`uqeval.commands.check.target_of`),
    None where the summary does not hold it."""
    if summary is None:
        return None
    from ..commands.check import target_of

    try:
        return float(target_of(summary, path))
    except (InputError, KeyError, TypeError, ValueError):
        return None


def _matrix_table(
    paths: Sequence[str],
    columns: Sequence[str],
    flats: Sequence[Mapping[str, Any]],
    orientations: Sequence[tuple[Mapping[str, str], str | None]] | None,
    table_class: str,
    first_header: str = "metric",
    link_glossary: bool = True,
    summaries: Sequence[Mapping[str, Any]] | None = None,
) -> str:
    """Rows = paths, columns = files (or group values); orientation column when given
    (``orientations``: each summary's orientation map and representation); ``summaries``: the summary of
    each column, for the targets of target-oriented rows."""
    head = [f"<th>{_esc(first_header)}</th>"]
    if orientations is not None:
        head.append("<th>better</th>")
    head += [f'<th scope="col">{_esc(c)}</th>' for c in columns]
    rows = []
    for path in paths:
        values = [f.get(path) for f in flats]
        orient = None
        if orientations is not None:
            for o, kind in orientations:  # first summary that declares it
                orient = metric_orientation(path, o, kind)
                if orient:
                    break
        label = f"<code>{_esc(path)}</code>"
        if link_glossary:
            label = _glossary_link(path, label)
        cells = [f'<th scope="row">{label}</th>']
        if orientations is not None:
            # orient None is simply not a key: "—" is shown
            better = ORIENTATION_TEXT.get(orient, orient or "—")  # type: ignore[arg-type]
            cells.append(f'<td class="orient">{_esc(better)}</td>')
        targets = (
            [_target(sm, path) if v is not None else None for sm, v in zip(summaries, values)]
            if orient == "target" and summaries
            else None
        )
        best = _best_columns(values, orient, targets)
        cells += [_value_cell(v, i in best) for i, v in enumerate(values)]
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return _table(table_class, "".join(head), "".join(rows))


def _glossary_id(key: str) -> str:
    return "glossary-" + _ID_UNSAFE.sub("-", key)


def _glossary_link(path: str, label: str) -> str:
    """``label`` linked to the glossary entry of the metric at ``path`` (its title on hover), if it has one."""
    entry = find_entry(path)
    if not entry:
        return label
    return f'<a href="#{_glossary_id(entry[0])}" title="{_esc(entry[1]["title"])}">{label}</a>'


def _table(table_class: str, head: str, body: str) -> str:
    """A table that scrolls sideways when too wide: ``head`` its header cells, ``body`` its rows (HTML)."""
    return (
        f'<div class="table-wrap"><table class="{table_class}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _union(seqs: Iterable[Iterable[str]]) -> list[str]:
    return list(dict.fromkeys(p for s in seqs for p in s))


# ----------------------------------------------------------------------------- entries
def _check_entries(entries: Sequence[Mapping[str, Any]]) -> None:
    if not isinstance(entries, Sequence) or isinstance(entries, (str, bytes)) or not entries:
        raise InputError("the report needs at least one entry (a scored file)")
    for i, e in enumerate(entries):
        if not isinstance(e, Mapping) or "name" not in e or not isinstance(e.get("summary"), Mapping):
            raise InputError(
                f"report entry {i} must be a mapping with 'name' and a 'summary' mapping "
                "(the JSON written by uqeval score)"
            )
        for j, fig in enumerate(e.get("figures") or ()):
            if not (isinstance(fig, (tuple, list)) and len(fig) == 2):
                raise InputError(f"figure {j} of report entry {i} must be a (caption, bytes) pair")


def _ucc_block(ucc: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, str]]:
    """Flattened ``ucc.*`` scalars of a UCC result and their orientation."""
    if not ucc:
        return {}, {}
    if isinstance(ucc.get("ucc"), Mapping) and len(ucc) == 1:
        ucc = ucc["ucc"]
    orient = dict(_UCC_ORIENTATION)
    if isinstance(ucc.get("orientation"), Mapping):
        orient.update(
            {(k if str(k).startswith("ucc.") else f"ucc.{k}"): v for k, v in ucc["orientation"].items()}
        )
    body = {k: v for k, v in ucc.items() if k != "orientation"}
    return dict(flatten(body, "ucc")), orient


# ----------------------------------------------------------------------------- sections
def _section_inputs(entries, names, ids: _Ids) -> str:
    flats = []
    for e in entries:
        s = e["summary"]
        top = {k: v for k, v in s.items() if v is None or isinstance(v, (str, bool, int, float))}
        flat = dict(flatten(top))
        flat.update(flatten(s.get("input") or {}, "input"))
        flats.append(flat)
    paths = _union(f.keys() for f in flats)
    table = _matrix_table(paths, names, flats, None, "inputs", first_header="field", link_glossary=False)
    settings = [dict(flatten(e["summary"].get("settings") or {}, "settings")) for e in entries]
    spaths = _union(f.keys() for f in settings)
    stable = (
        _matrix_table(spaths, names, settings, None, "settings", first_header="setting", link_glossary=False)
        if spaths
        else '<p class="note">No settings recorded.</p>'
    )
    n_fields = len(paths) + len(spaths)
    return (
        f'<section id="{ids.make("inputs")}"><h2>Inputs and settings</h2>'
        f"<details><summary>{n_fields} input fields and settings of {len(names)} file(s)</summary>{table}"
        f'<h3 id="{ids.make("settings")}">Settings</h3>{stable}</details></section>'
    )


def _metric_flats(entries) -> tuple[list[dict[str, Any]], list[tuple[dict[str, str], str | None]]]:
    """Each entry's flattened metrics (its UCC's scalars as the ``ucc`` group) and (orientation map,
    representation)."""
    flats, orients = [], []
    for e in entries:
        s = e["summary"]
        flat = dict(flatten(s.get("metrics") or {}))
        orient = dict(s.get("orientation") or {})
        ucc_flat, ucc_orient = _ucc_block(e.get("ucc"))
        flat.update(ucc_flat)
        for k, v in ucc_orient.items():
            orient.setdefault(k, v)
        flats.append(flat)
        orients.append((orient, (s.get("input") or {}).get("representation")))
    return flats, orients


def _section_metrics(entries, names, ids: _Ids, flats, orients) -> tuple[str, list[str]]:
    paths = _union(f.keys() for f in flats)
    groups: dict[str, list[str]] = {}
    for p in paths:
        groups.setdefault(p.split(".", 1)[0], []).append(p)
    summaries = [e["summary"] for e in entries]
    parts = [
        f'<section id="{ids.make("metrics")}"><h2>All metrics</h2>',
        '<p class="note">Per-file detail. Orientation: ↓ lower is better, ↑ higher is better, ◎ closest to its '
        "target (e.g. coverage to the nominal level). With several files the best value of "
        "each row is in bold (for ◎, the value closest to its target). Metric names link to their "
        "explanation in the glossary.</p>",
    ]
    if not groups:
        parts.append('<p class="note">No metrics.</p>')
    for group, gpaths in groups.items():
        parts.append(f'<h3 id="{ids.make("metrics", group)}">{_esc(group)}</h3>')
        parts.append(_matrix_table(gpaths, names, flats, orients, "metrics", summaries=summaries))
    parts.append("</section>")
    return "".join(parts), paths


def _group_columns(groups: Mapping[str, Any]) -> tuple[str | None, dict[str, dict[str, Any]], dict]:
    """(grouping column, {group value: flat metrics}, other scalars) of a ``groups`` block."""
    by = None
    for k in ("by", "column"):
        if isinstance(groups.get(k), str):
            by = groups[k]
    listed = groups.get("values")
    values = listed if isinstance(listed, Mapping) else groups
    cols: dict[str, dict[str, Any]] = {}
    other: dict[str, Any] = {}
    for k, v in values.items():
        if isinstance(v, Mapping):
            inner = v.get("metrics")
            if isinstance(inner, Mapping):  # {"n_rows": .., "metrics": {...}}
                flat = dict(flatten(inner))
                flat.update(flatten({kk: vv for kk, vv in v.items() if kk != "metrics"}))
            else:  # the metric groups directly
                flat = dict(flatten(v))
            cols[str(k)] = flat
        elif k not in ("by", "column"):
            other[str(k)] = v
    return by, cols, other


def _section_groups(entries, names, ids: _Ids) -> tuple[str, list[str]]:
    blocks, paths_all = [], []
    for i, (e, name) in enumerate(zip(entries, names)):
        groups = e["summary"].get("groups")
        if not isinstance(groups, Mapping) or not groups:
            continue
        by, cols, other = _group_columns(groups)
        head = f"{name} — by {by}" if by else name
        blocks.append(f'<h3 id="{ids.make("groups", i + 1)}">{_esc(head)}</h3>')
        if other:
            items = ", ".join(f"{_esc(k)} = {_esc(v)}" for k, v in other.items())
            blocks.append(f'<p class="note">{items}</p>')
        if cols:
            paths = _union(c.keys() for c in cols.values())
            paths_all += paths
            s = e["summary"]
            orient = (s.get("orientation") or {}, (s.get("input") or {}).get("representation"))
            blocks.append(
                _matrix_table(
                    paths, list(cols), list(cols.values()), [orient], "groups", summaries=[s] * len(cols)
                )
            )
    if not blocks:
        return "", []
    return (
        f'<section id="{ids.make("groups")}"><h2>Metrics by group</h2>{"".join(blocks)}</section>'
    ), paths_all


def _section_figures(entries, names, ids: _Ids) -> str:
    parts = [f'<section id="{ids.make("figures")}"><h2>Figures per file</h2>']
    any_fig = False
    for i, (e, name) in enumerate(zip(entries, names)):
        figs = list(e.get("figures") or ())
        if not figs:
            continue
        any_fig = True
        parts.append(f'<h3 id="{ids.make("figures", i + 1)}">{_esc(name)}</h3><div class="figs">')
        for caption, data in figs:
            uri = image_data_uri(data)
            parts.append(
                f'<figure><img src="{uri}" alt="{_esc(caption)}">'
                f"<figcaption>{_esc(caption)}</figcaption></figure>"
            )
        parts.append("</div>")
    if not any_fig:
        parts.append('<p class="note">No figures.</p>')
    parts.append("</section>")
    return "".join(parts)


_SHORT_ORIENTATION = {"lower": "↓ lower", "higher": "↑ higher"}


def _scoreboard_columns(names, flats, orients) -> list[tuple[str, list[str | None]]]:
    """``(catalogue path, [summary path of each entry or None])`` of every headline metric
    (:data:`uqeval.catalogue.HEADLINE`) some entry has, in the order of the first representation that lists it."""
    from ..catalogue import headline_paths

    columns: dict[str, list[str | None]] = {}
    for i, (flat, (_, kind)) in enumerate(zip(flats, orients)):
        for cat, path in headline_paths(kind, flat.keys()):
            columns.setdefault(cat, [None] * len(names))[i] = path
    return list(columns.items())


def _section_summary(entries, names, ids: _Ids, flats, orients, comparison) -> str:
    columns = _scoreboard_columns(names, flats, orients)
    parts = [
        f'<section id="{ids.make("summary")}"><h2>Summary</h2>',
        _verdict_block(entries, names, comparison),
    ]
    if not columns:
        parts.append(
            '<p class="note">No headline metric applies to these predictions; see all metrics below.</p>'
        )
    else:
        head = ['<th scope="col">file</th>']
        wins: list[list[str]] = [[] for _ in names]  # the columns where each file holds the best value
        body: list[list[str]] = [[] for _ in names]
        for cat, paths in columns:
            values = [flats[i].get(p) if p else None for i, p in enumerate(paths)]
            first = next(i for i, p in enumerate(paths) if p)
            shown_path = str(paths[first])
            orient = metric_orientation(shown_path, orients[first][0], orients[first][1])
            targets = [
                _target(entries[i]["summary"], p) if (p and orient == "target") else None
                for i, p in enumerate(paths)
            ]
            shown = {t for t in targets if t is not None}
            if orient == "target":
                better = (
                    f"◎ closest to {_fmt_number(next(iter(shown)))}"
                    if len(shown) == 1
                    else "◎ closest to target"
                )
            else:
                better = _SHORT_ORIENTATION.get(orient or "", "—")
            group, _, rest = shown_path.partition(".")
            code = f"<code>{_esc(group)}.<wbr>{_esc(rest)}</code>"  # breaks after the group
            label = _glossary_link(shown_path, code)
            head.append(f'<th scope="col">{label}<br><span class="orient">{_esc(better)}</span></th>')
            best = _best_columns(values, orient, targets)
            for i, v in enumerate(values):
                if i in best:
                    wins[i].append(cat.split(".", 1)[1])
                body[i].append(_value_cell(v, i in best))
        if len(names) > 1:
            head.append('<th scope="col">best on</th>')
        rows = []
        for i, name in enumerate(names):
            cells = [f'<th scope="row">{_esc(name)}</th>', *body[i]]
            if len(names) > 1:
                cells.append(f'<td class="num">{len(wins[i])} of {len(columns)}</td>')
            rows.append(f"<tr>{''.join(cells)}</tr>")
        parts.append(f'<p class="lead">{_verdict(names, wins, len(columns))}</p>')
        parts.append(_table("scoreboard", "".join(head), "".join(rows)))
        parts.append(
            '<p class="note">The headline metrics of each representation, one row per file; the best value of '
            "each column is in bold (↓ the lowest, ↑ the highest, ◎ the closest to its target; ties are all "
            "bold, missing values never). Every metric is in the per-file detail below.</p>"
        )
    if comparison:
        parts.append(_comparison_tests(comparison, ids))
    parts.append("</section>")
    return "".join(parts)


def _verdict_block(entries, names: Sequence[str], comparison: Mapping[str, Any] | None) -> str:
    """The verdict of every file and of the comparison (issue 39), above the scoreboard (escaped HTML)."""
    from .verdict import html_verdict

    shown: list[tuple[str, Any]] = [
        (name if len(names) > 1 else "", e["summary"]) for name, e in zip(names, entries)
    ]
    if comparison is not None:
        shown.append(("", comparison))
    elif len(names) > 1 and any("verdict" in e["summary"] for e in entries):
        shown.append(
            (
                "",
                {
                    "verdict": {
                        "aspects": [
                            {
                                "aspect": "comparison",
                                "label": "not tested",
                                "rule": "paired-holm",
                                "sentence": f"not tested: the paired tests need {option('compare')} (the files must hold "
                                "the same targets in the same order)",
                            }
                        ]
                    }
                },
            )
        )
    return html_verdict(shown)


def _verdict(names: Sequence[str], wins: Sequence[Sequence[str]], n_columns: int) -> str:
    """One sentence: which file holds the best value of how many headline metrics (escaped HTML)."""
    if len(names) == 1:
        return f"One file, <strong>{_esc(names[0])}</strong>: its headline metrics. Give several files to compare them."
    order = sorted(range(len(names)), key=lambda i: -len(wins[i]))
    if not wins[order[0]]:
        return "No file is best on any headline metric (the values are equal or missing)."
    top = [i for i in order if len(wins[i]) == len(wins[order[0]])]
    who = " and ".join(f"<strong>{_esc(names[i])}</strong>" for i in top)
    shown = ", ".join(_esc(w) for w in wins[top[0]])
    rest = "; ".join(f"{_esc(names[i])} on {len(wins[i])}" for i in order if i not in top)
    sentence = f"{who} {'holds' if len(top) == 1 else 'hold'} the best value on {len(wins[top[0]])} of {n_columns} headline metrics"
    sentence += f" ({shown})" if len(top) == 1 else ""
    return sentence + (f"; {rest}." if rest else ".")


def _comparison_tests(comparison: Mapping[str, Any], ids: _Ids) -> str:
    """The paired tests of a ``uqeval compare`` result (``uqeval.compare/1``): each model against the best."""
    rows = []
    for t in comparison.get("tests") or ():
        if not isinstance(t, Mapping):
            continue
        p_values = [t.get(k) for k in ("permutation_p", "dm_p")]
        finite = [float(p) for p in p_values if _is_number(p) and math.isfinite(float(p))]  # type: ignore[arg-type]
        verdict = (
            ("differs (p < 0.05)" if max(finite) < 0.05 else "no significant difference")
            if finite
            else "not tested"
        )
        rows.append(
            "<tr>"
            f'<th scope="row"><code>{_esc(t.get("metric"))}</code></th>'
            f"<td>{_esc(t.get('model'))}</td><td>{_esc(t.get('reference'))}</td>"
            + "".join(_value_cell(t.get(k)) for k in ("mean_diff", "permutation_p", "dm_p"))
            + f"<td>{_esc(verdict)}</td></tr>"
        )
    n_boot = (comparison.get("settings") or {}).get("n_boot")
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in (
            "metric",
            "model",
            "against",
            "mean difference",
            "permutation p",
            "Diebold–Mariano p",
            "verdict",
        )
    )
    table = _table("tests", head, "".join(rows)) if rows else '<p class="note">No paired test was run.</p>'
    return (
        f'<h3 id="{ids.make("summary-tests")}">Paired tests (uqeval compare)</h3>{table}'
        '<p class="note">Each model against the best one per comparison score (lower is better), on the same '
        "rows: mean per-row difference (model minus reference), sign-flip permutation and Diebold–Mariano "
        "p-values, unadjusted for multiple testing; “differs” when both are below 0.05"
        + (f"; {_esc(n_boot)} bootstrap resamples" if n_boot is not None else "")
        + ".</p>"
    )


def _section_monitor(monitor: Mapping[str, Any] | None, ids: _Ids) -> str:
    """The monitor section: a ``uqeval monitor`` document's windows (headline metrics), its anytime-valid
    tests with their alarms, and its plot (``monitor = {"name", "doc", "image"}``)."""
    if monitor is None:
        return ""
    from .monitor import in_alarm, test_table, window_table

    doc = monitor["doc"]
    inp = doc.get("input") or {}
    head, rows, caption = window_table(doc)
    alarm_col = len(head) - 1

    def row(cells: Sequence[str], last: bool) -> str:
        tag = '<tr class="total">' if last else "<tr>"
        out = [tag, f'<th scope="row">{_esc(cells[0])}</th>']
        for j, c in enumerate(cells[1:], start=1):
            cls = ' class="alarm"' if j == alarm_col and c else ""
            out.append(f"<td{cls}>{_esc(c)}</td>")
        return "".join(out) + "</tr>"

    thead = "".join(f'<th scope="col">{_esc(h)}</th>' for h in head)
    body = "".join(row(r, i == len(rows) - 1) for i, r in enumerate(rows))
    windows = _table("monitor", thead, body) + (f'<p class="meta">{_esc(caption)}</p>' if caption else "")
    n_win = len(doc.get("windows") or ())
    parts = [
        f'<section id="{ids.make("monitor")}"><h2>Monitor</h2>',
        f'<p class="meta">{_esc(monitor.get("name"))}: <code>{_esc(inp.get("path"))}</code>, '
        f"{_esc(n_win)} window(s) of {_esc(inp.get('window'))}"
        + (f" on <code>{_esc(inp.get('time'))}</code>" if inp.get("time") else "")
        + (
            f", change detectors with ARL ≥ {_esc(doc.get('arl'))} windows</p>"
            if doc.get("mode") == "detect"
            else f", family-wise alpha {_esc(doc.get('alpha'))}</p>"
        ),
    ]
    if monitor.get("image"):
        parts.append(
            f'<figure><img src="{image_data_uri(monitor["image"])}" alt="headline metrics per window with the '
            f'alarms marked"><figcaption>{_esc(monitor.get("name"))}: headline metrics per window, the '
            "cumulative value dashed, a dotted line at each test's first alarm</figcaption></figure>"
        )
    tests = doc.get("tests") or []
    if tests:
        thead_t, trows = test_table(doc)
        tbody = "".join(
            "<tr>"
            + f'<th scope="row"><code>{_esc(r[0])}</code></th>'
            + "".join(('<td class="alarm">' if c == "ALARM" else "<td>") + f"{_esc(c)}</td>" for c in r[1:])
            + "</tr>"
            for r in trows
        )
        n_alarm = sum(map(in_alarm, tests))
        kind = "Change detectors" if doc.get("mode") == "detect" else "Anytime-valid tests"
        parts.append(
            f'<h3 id="{ids.make("monitor-tests")}">{kind}: {n_alarm} in alarm</h3>'
            + _table("tests", "".join(f'<th scope="col">{_esc(h)}</th>' for h in thead_t), tbody)
        )
    parts.append(
        f'<h3 id="{ids.make("monitor-windows")}">Headline metrics per window</h3>'
        + (
            windows
            if n_win <= 40
            else f"<details><summary>{_esc(n_win)} windows</summary>{windows}</details>"
        )
    )
    notes = doc.get("notes") or []
    if notes:
        parts.append('<ul class="note">' + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def _section_key_figures(overlays, ids: _Ids) -> str:
    if not overlays:
        return ""
    parts = [
        f'<section id="{ids.make("key-figures")}"><h2>Key figures</h2>',
        '<p class="note">'
        + (
            "Every file on one figure per kind, one colour per file (the same colour in every figure); "
            "quantile files get a calibration curve and PIT histogram of their own (at their levels)."
            if any(len(o["models"]) > 1 for o in overlays)
            else "The figures that compare files when there are several (each file one colour)."
        )
        + "</p>",
        '<div class="figs">',
    ]
    for o in overlays:
        models = ", ".join(str(m) for m in o["models"])
        caption = f"{o['title']} — {models}"
        alt = f"{o['title']} of {models}" + (", overlaid" if len(o["models"]) > 1 else "")
        parts.append(
            f'<figure><img src="{image_data_uri(o["image"])}" alt="{_esc(alt)}">'
            f"<figcaption>{_esc(caption)}</figcaption></figure>"
        )
    parts.append("</div></section>")
    return "".join(parts)


def _section_glossary(paths: Iterable[str], ids: _Ids) -> str:
    keys: dict[str, dict[str, str]] = {}
    for p in paths:
        found = find_entry(p)
        if found:
            keys.setdefault(found[0], found[1])
    parts = [f'<section id="{ids.make("glossary")}"><h2>Glossary</h2>']
    if not keys:
        parts.append('<p class="note">No metric in this report has a glossary entry.</p>')
    else:
        parts.append('<dl class="glossary">')
        for key, entry in keys.items():
            gid = _glossary_id(key)
            ids.make(gid)
            parts.append(
                f'<dt id="{gid}">{_esc(entry["title"])} <code>{_esc(key)}</code></dt>'
                f"<dd><p>{_esc(entry['text'])}</p>"
                f'<div class="formula">{_esc(entry["formula"])}</div>'
                f'<div class="ref">Reference: {_esc(entry["reference"])}</div></dd>'
            )
        parts.append("</dl>")
    parts.append("</section>")
    return "".join(parts)


# ----------------------------------------------------------------------------- public
def render_report(
    entries: Sequence[Mapping[str, Any]],
    title: str = "uqeval report",
    overlays: Sequence[Mapping[str, Any]] | None = None,
    comparison: Mapping[str, Any] | None = None,
    monitor: Mapping[str, Any] | None = None,
) -> str:
    """One self-contained HTML document for the given scored files.

    Parameters
    ----------
    entries : sequence of mappings
        One per file: ``{"name": str, "summary": dict, "figures": [(caption, bytes), ...],
        "ucc": dict}``. ``summary`` is the ``uqeval score`` JSON (``input``, ``settings``,
        ``metrics``, ``orientation``, optional ``groups``); ``figures`` hold encoded images
        (PNG/SVG bytes, see :func:`uqeval.plots.common.figure_to_bytes`); ``ucc`` is an
        optional ``uqeval ucc`` result whose scalars are shown as the ``ucc`` metric group.
    title : str
        Document title and top heading.
    overlays : sequence of mappings, optional
        The key figures, every model on one figure: ``{"title": str, "models": [name, ...], "image": bytes}``
        (:class:`uqeval.plots.overlay.Overlays`); caption and alt text name every model.
    comparison : mapping, optional
        A ``uqeval compare`` result (``uqeval.compare/1``) of the same files: its paired tests join the summary.
    monitor : mapping, optional
        ``{"name": str, "doc": dict, "image": bytes or None}``: a ``uqeval monitor`` document
        (``uqeval.monitor/1``) shown after the summary (its windows' headline metrics, its tests and alarms,
        its plot).

    Returns
    -------
    str
        The HTML document: the summary (a scoreboard of the headline metrics), the key figures, then the
        per-file detail (metrics × files side by side, each file's figures), inputs and settings, glossary.
    """
    _check_entries(entries)
    for j, o in enumerate(overlays or ()):
        if not (isinstance(o, Mapping) and {"title", "models", "image"} <= set(o)):
            raise InputError(f"overlay {j} must be a mapping with 'title', 'models' and 'image'")
    if comparison is not None and not isinstance(comparison, Mapping):
        raise InputError("comparison must be the mapping uqeval compare writes (uqeval.compare/1)")
    if monitor is not None and not (
        isinstance(monitor, Mapping)
        and isinstance(monitor.get("doc"), Mapping)
        and monitor["doc"].get("schema") == "uqeval.monitor/1"
    ):
        raise InputError("monitor must be {'name', 'doc', 'image'} with doc the uqeval.monitor/1 document")
    names = [str(e["name"]) for e in entries]
    ids = _Ids()
    flats, orients = _metric_flats(entries)
    summary = _section_summary(entries, names, ids, flats, orients, comparison)
    monitored = _section_monitor(monitor, ids)
    key_figures = _section_key_figures(overlays, ids)
    metrics, metric_paths = _section_metrics(entries, names, ids, flats, orients)
    groups, group_paths = _section_groups(entries, names, ids)
    figures = _section_figures(entries, names, ids)
    inputs = _section_inputs(entries, names, ids)
    glossary = _section_glossary(metric_paths + group_paths, ids)

    toc = [("summary", "Summary")]
    if monitored:
        toc.append(("monitor", "Monitor"))
    if key_figures:
        toc.append(("key-figures", "Key figures"))
    toc.append(("metrics", "All metrics"))
    if groups:
        toc.append(("groups", "Metrics by group"))
    toc += [("figures", "Figures per file"), ("inputs", "Inputs and settings"), ("glossary", "Glossary")]
    nav = "".join(f'<li><a href="#{k}">{_esc(v)}</a></li>' for k, v in toc)
    files = ", ".join(f"<code>{_esc(n)}</code>" for n in names)
    body = "\n".join(
        x for x in (summary, monitored, key_figures, metrics, groups, figures, inputs, glossary) if x
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="generator" content="uqeval {_esc(__version__)}">'
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head>\n"
        f'<body><header id="top"><h1>{_esc(title)}</h1>'
        f'<p class="meta">{len(names)} file(s): {files}</p>'
        f'<nav id="contents"><ol>{nav}</ol></nav></header>\n'
        f"{body}\n"
        "<footer>Generated by uqeval "
        f"{_esc(__version__)}. Self-contained: no scripts, no "
        "network access; images are embedded.</footer></body></html>\n"
    )
