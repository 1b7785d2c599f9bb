"""A seeded generator of hostile and unusual uqeval runs, and the invariants every run must keep.

One *case* is: a command (score, ucc, coverage, compare, recalibrate, check, report,
plot, explain), input files built from a small valid dataset and then damaged or
decorated (malformed CSV/Parquet, hostile names and values, tampered saved models,
malformed rules and baselines), odd output paths (a device, a FIFO, a symlink, a
read-only or missing directory, the input itself, a directory) and odd option values.
It runs in-process through :class:`typer.testing.CliRunner`.

Invariants checked for every case (:func:`check_case`):

* exit code in {0, 2, 3}; 1 only from ``check``; no traceback, no unexpected exception;
* a failure (exit 3) prints exactly one ``error:`` line, naming one of the case's files;
* nothing written on failure (the directory is unchanged, no temporary files left), no
  temporary files after success, inputs byte-for-byte unchanged, symlinks stay links,
  devices and FIFOs are never replaced;
* JSON on stdout and in output files is strict (``NaN``/``Infinity`` refused);
* no raw control characters in anything printed or written as text, no live rich markup
  (a ``[bold]`` planted in the input is still printed as ``[bold]``), Markdown tables keep
  their shape, HTML never contains a planted tag, JUnit XML parses.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import random
import re
import select
import stat
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from uqeval.text import plain

# Planted strings: escapes, C1 controls, carriage returns, rich markup, Markdown/HTML breakers.
MARK = "HX"
HOSTILE = [
    f"\x1b[31m{MARK}\x1b[0m",  # ANSI colour
    f"\x1b]0;{MARK}\x07",  # OSC window title
    f"ab\r{MARK}",  # carriage return
    f"\x9b31m{MARK}",  # C1 CSI
    "[bold]MK1[/bold]",  # rich markup: MK1 must always follow a literal [bold]
    "[/x]MK2",  # closing tag without opening (rich MarkupError): MK2 after [/x]
    f"a|{MARK}|b",  # Markdown cell breaker
    f"line\n{MARK}",  # newline
    f"<b>{MARK}</b>",  # HTML
    f"\u202e{MARK}",  # bidi override
    f"{MARK}\x00\x08\x7f",  # NUL, backspace, DEL
    f"$\\frac{{{MARK}$",  # broken matplotlib mathtext
]
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# the tag before the mark, as written or as Markdown escapes it (``\[bold\]MK1``: inert text)
LIVE_MARKUP = re.compile(r"(?<!\[bold\])(?<!\[bold\\\])MK1|(?<!\[/x\])(?<!\[/x\\\])MK2")
DATA_URI = re.compile(r"data:[a-z/+]+;base64,[A-Za-z0-9+/=]+")


def live_markup(text: str) -> bool:
    """A planted ``[bold]MK1`` / ``[/x]MK2`` printed without its tag (embedded images do not count)."""
    return bool(LIVE_MARKUP.search(DATA_URI.sub("", text)))


TRACEBACK = "Traceback (most recent call last)"


def _gaussian(rng: np.random.Generator, n: int) -> dict[str, Any]:
    mean = rng.normal(size=n)
    std = rng.uniform(0.5, 1.5, n)
    return {"y": mean + std * rng.normal(size=n), "mean": mean, "std": std}


def _quantiles(rng, n):
    g = _gaussian(rng, n)
    return {
        "y": g["y"],
        "q_0.05": g["mean"] - 1.64 * g["std"],
        "q_0.5": g["mean"],
        "q_0.95": g["mean"] + 1.64 * g["std"],
    }


def _intervals(rng, n):
    g = _gaussian(rng, n)
    return {
        "y": g["y"],
        "mean": g["mean"],
        "lower": g["mean"] - 2 * g["std"],
        "upper": g["mean"] + 2 * g["std"],
    }


def _samples(rng, n):
    g = _gaussian(rng, n)
    return {"y": g["y"], **{f"s_{j}": g["mean"] + g["std"] * rng.normal(size=n) for j in range(6)}}


def _classes(rng, n):
    z = rng.normal(size=(n, 3))
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    return {"label": rng.integers(0, 3, n), **{f"p_{k}": p[:, k] for k in range(3)}}


def _logits(rng, n):
    return {"label": rng.integers(0, 3, n), **{f"logit_{k}": rng.normal(size=n) for k in range(3)}}


def _members(rng, n):
    out: dict[str, Any] = {"label": rng.integers(0, 3, n)}
    for j in range(3):
        z = rng.normal(size=(n, 3))
        p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
        out.update({f"m{j}_p_{k}": p[:, k] for k in range(3)})
    return out


def _point(rng, n):
    g = _gaussian(rng, n)
    return {"y": g["y"], "mean": g["mean"]}


def _samples_list(rng, n):  # Parquet list column (a CSV cannot hold it: written as text, refused)
    g = _gaussian(rng, n)
    return {"y": g["y"], "samples": pa.array([list(g["mean"][i] + rng.normal(size=5)) for i in range(n)])}


def _member_lists(rng, n):
    z = rng.normal(size=(n, 3, 2))
    p = np.exp(z) / np.exp(z).sum(axis=2, keepdims=True)
    return {"label": rng.integers(0, 2, n), "member_proba": pa.array([[list(m) for m in row] for row in p])}


def _dirichlet(rng, n):
    return {"label": rng.integers(0, 3, n), **{f"alpha_{k}": rng.uniform(0.1, 5, n) for k in range(3)}}


DATASETS: dict[str, Callable] = {
    "gaussian": _gaussian,
    "quantiles": _quantiles,
    "intervals": _intervals,
    "samples": _samples,
    "classes": _classes,
    "logits": _logits,
    "members": _members,
    "point": _point,
    "samples_list": _samples_list,
    "member_lists": _member_lists,
    "dirichlet": _dirichlet,
}


@dataclass
class Case:
    """One run: argv, the files it reads, the paths it may write, and how to judge it."""

    seed: int
    command: str
    args: list[str] = field(default_factory=list)
    inputs: list[Path] = field(default_factory=list)
    outputs: list[Path] = field(default_factory=list)
    specials: list[Path] = field(default_factory=list)  # devices/FIFOs/links that must stay what they are
    fifos: list[Path] = field(default_factory=list)
    label: str = ""


# --------------------------------------------------------------------------- file builders


def write_data(path: Path, cols: dict[str, Any], fmt: str) -> Path:
    table = pa.table({k: pa.array(v) for k, v in cols.items()})
    if fmt == "parquet":
        pq.write_table(table, path)
    else:
        buf = pa.BufferOutputStream()
        pacsv.write_csv(table, buf)
        data = buf.getvalue().to_pybytes()
        path.write_bytes(gzip.compress(data, mtime=0) if str(path).endswith(".gz") else data)
    return path


def _damage_csv(data: bytes, r: random.Random) -> tuple[bytes, str]:
    kind = r.choice(
        [
            "truncate",
            "bom",
            "spaces",
            "ragged",
            "text",
            "nan",
            "bool",
            "badutf8",
            "empty",
            "header_only",
            "crlf",
            "dup",
            "quote_nl",
            "huge",
            "one_row",
            "nul",
            "cr_only",
            "long",
        ]
    )
    lines = data.split(b"\n")
    if kind == "nul":
        i = r.randrange(0, max(1, len(data)))
        return data[:i] + b"\x00" + data[i:], kind
    if kind == "cr_only":
        return data.replace(b"\n", b"\r"), kind
    if kind == "long":
        return lines[0] + b"\n" + b"1" * 200_000 + b"\n" + b"\n".join(lines[1:]), kind
    if kind == "truncate":
        return data[: r.randrange(1, max(2, len(data)))], kind
    if kind == "bom":
        return b"\xef\xbb\xbf" + data, kind
    if kind == "spaces":
        return lines[0].replace(b",", b", ") + b"\n" + b"\n".join(lines[1:]), kind
    if kind == "ragged":
        i = r.randrange(1, max(2, len(lines) - 1))
        lines[i] = lines[i] + b",1"
        return b"\n".join(lines), kind
    if kind == "text":
        i = r.randrange(1, max(2, len(lines) - 1))
        lines[i] = b"abc," + b",".join(lines[i].split(b",")[1:])
        return b"\n".join(lines), kind
    if kind == "nan":
        i = r.randrange(1, max(2, len(lines) - 1))
        parts = lines[i].split(b",")
        parts[r.randrange(len(parts))] = r.choice([b"nan", b"inf", b"", b"-inf", b"NULL"])
        lines[i] = b",".join(parts)
        return b"\n".join(lines), kind
    if kind == "bool":
        parts = lines[1].split(b",")
        body = [
            b",".join([r.choice([b"true", b"false"])] + ln.split(b",")[1:]) if ln else ln for ln in lines[1:]
        ]
        return b"\n".join([lines[0], *body]), kind
    if kind == "badutf8":
        return lines[0] + b"\n" + b"\xff\xfe\xfa," + b"\n".join(lines[1:]), kind
    if kind == "empty":
        return b"", kind
    if kind == "header_only":
        return lines[0] + b"\n", kind
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n"), kind
    if kind == "dup":
        head = lines[0].split(b",")
        head[-1] = head[0]
        return b",".join(head) + b"\n" + b"\n".join(lines[1:]), kind
    if kind == "quote_nl":
        head = lines[0].split(b",")
        head[0] = b'"' + head[0] + b'\nz"'
        return b",".join(head) + b"\n" + b"\n".join(lines[1:]), kind
    if kind == "huge":
        i = r.randrange(1, max(2, len(lines) - 1))
        lines[i] = b",".join(
            r.choice([b"1e308", b"-1e308", b"1e-320", b"9" * 400]) for _ in lines[i].split(b",")
        )
        return b"\n".join(lines), kind
    return b"\n".join(lines[:2]) + b"\n", kind  # one_row


def _odd_parquet_cols(cols: dict[str, Any], r: random.Random) -> tuple[dict[str, Any], str]:
    import decimal

    kind = r.choice(["decimal", "uint64", "bool", "string", "null", "extreme", "int"])
    cols = dict(cols)
    key = r.choice([k for k in cols if k != "grp"])
    v = np.asarray(cols[key])
    if kind == "decimal":
        cols[key] = pa.array([decimal.Decimal(f"{x:.4f}") for x in v], pa.decimal128(12, 4))
    elif kind == "uint64":
        cols[key] = pa.array(np.full(len(v), 2**63 + 12345, dtype=np.uint64))
    elif kind == "bool":
        cols[key] = pa.array(v > np.median(v))
    elif kind == "string":
        cols[key] = pa.array([r.choice(HOSTILE) for _ in v])
    elif kind == "null":
        cols[key] = pa.array([None] * len(v), pa.float64())
    elif kind == "extreme":
        with np.errstate(over="ignore"):
            cols[key] = v.astype(float) * 1e307 * r.choice([1, 10, -10])
    else:
        cols[key] = np.round(v.astype(float)).astype(np.int64)
    return cols, f"{kind}:{key}"


# --------------------------------------------------------------------------- the generator


class Generator:
    """Build :class:`Case` objects in ``root`` from a seeded :class:`random.Random`."""

    def __init__(self, root: Path, seed: int):
        self.root = root
        self.r = random.Random(seed)
        self.np = np.random.default_rng(seed)
        self.k = 0

    def _dir(self) -> Path:
        self.k += 1
        d = self.root / f"c{self.k:05d}"
        d.mkdir()
        return d

    def name(self, stem: str) -> str:
        if self.r.random() < 0.25:  # hostile file name (no slash, no NUL)
            h = self.r.choice([h for h in HOSTILE if "/" not in h and "\x00" not in h])
            return f"{stem}{h}"
        return stem

    def dataset(self, d: Path, kind: str | None = None, hostile_ok: bool = True) -> tuple[Path, str, dict]:
        r = self.r
        kind = kind or r.choice(list(DATASETS))
        n = r.choice([3, 12, 40])
        cols = DATASETS[kind](self.np, n)
        label = kind
        if hostile_ok and r.random() < 0.3:  # a --by style column with hostile values
            cols["grp"] = [r.choice(HOSTILE[:6] + ["a", "b"]) for _ in range(n)]
            label += "+grp"
        fmt = (
            r.choice(["csv", "parquet", "csv.gz"])
            if kind not in ("samples_list", "member_lists")
            else "parquet"
        )
        if fmt == "parquet" and r.random() < 0.3 and kind not in ("samples_list", "member_lists"):
            cols, what = _odd_parquet_cols(cols, r)
            label += f"+{what}"
        path = d / f"{self.name('pred')}.{fmt}"
        write_data(path, cols, "parquet" if fmt == "parquet" else "csv")
        if fmt != "parquet" and r.random() < 0.3:
            raw = path.read_bytes()
            raw = gzip.decompress(raw) if fmt == "csv.gz" else raw
            raw, what = _damage_csv(raw, r)
            if fmt == "csv.gz" and what != "truncate":
                raw = gzip.compress(raw, mtime=0)
            path.write_bytes(raw)
            label += f"+{what}"
        if fmt == "parquet" and r.random() < 0.1:
            raw = path.read_bytes()
            path.write_bytes(raw[: len(raw) // 2] if r.random() < 0.5 else raw[:4] + b"\x00" * 64 + raw[68:])
            label += "+corrupt"
        if r.random() < 0.15:  # a hostile column name, used through the column flags
            renamed = self._rename(path, fmt, cols)
            if renamed:
                label += "+hostile_col"
                return path, label, renamed
        return path, label, {}

    def _rename(self, path: Path, fmt: str, cols: dict) -> dict:
        role = {
            "y": "--y",
            "mean": "--mean",
            "std": "--std",
            "lower": "--lower",
            "upper": "--upper",
            "label": "--y",
        }
        keys = [k for k in cols if k in role]
        if not keys:
            return {}
        key = self.r.choice(keys)
        new = self.r.choice(HOSTILE).replace("\x00", "")
        cols2 = {(new if k == key else k): v for k, v in cols.items()}
        write_data(path, cols2, "parquet" if fmt == "parquet" else "csv")
        return {role[key]: new}

    def output(self, d: Path, ext: str, case: Case, inputs: list[Path]) -> str:
        r = self.r
        kind = r.choice(
            [
                "file",
                "file",
                "file",
                "devnull",
                "fifo",
                "symlink",
                "dangling",
                "readonly",
                "missing",
                "input",
                "dir",
                "dash",
                "existing",
            ]
        )
        name = f"{self.name('out')}.{ext}"
        if kind == "devnull":
            return "/dev/null"
        if kind == "dash":
            return "-"
        if kind == "fifo":
            p = d / f"fifo.{ext}"
            os.mkfifo(p)
            case.fifos.append(p)
            case.specials.append(p)
            return str(p)
        if kind in ("symlink", "dangling"):
            target = d / f"target.{ext}"
            if kind == "symlink":
                target.write_bytes(b"old")
            link = d / f"link.{ext}"
            link.symlink_to(target)
            case.specials.append(link)
            case.outputs.append(target)
            return str(link)
        if kind == "readonly":
            ro = d / "ro"
            ro.mkdir(exist_ok=True)
            ro.chmod(0o555)
            case.outputs.append(ro / name)
            return str(ro / name)
        if kind == "missing":
            return str(d / "missing" / name)
        if kind == "input" and inputs:
            return str(inputs[0])
        if kind == "dir":
            return str(d)
        p = d / name
        if kind == "existing":
            p.write_bytes(b"previous")
        case.outputs.append(p)
        return str(p)

    def column_flags(self, extra: dict) -> list[str]:
        out = []
        for flag, value in extra.items():
            out += [flag, value]
        return out

    def option_noise(self) -> list[str]:
        r = self.r
        if r.random() > 0.25:
            return []
        return r.choice(
            [
                ["--seed", "-1"],
                ["--num-bins", "100000000"],
                ["--num-bins", "1"],
                ["--resolution", "0"],
                ["--levels", "1.5"],
                ["--levels", "a,b"],
                ["--level", "0"],
                ["--seed", "3"],
                ["--nan-policy", "omit"],
                ["--by", r.choice(["grp", HOSTILE[4], "nope"])],
                ["--num-bins", "7"],
                ["--y-std", "-1"],
                ["--representation", "samples"],
            ]
        )

    def config(self, d: Path) -> list[str]:
        r = self.r
        if r.random() > 0.15:
            return []
        body = r.choice(
            [
                "[metrics]\nseed = -1\n",
                "[columns]\ny_true = 5\n",
                "[metrics]\nnum_bins = 100000000\n",
                '[metrics]\nlevels = ["a"]\n',
                "[input]\nnan_policy = 3\n",
                "a = " + "[" * 600 + "]" * 600,
                "[metrics]\nnum_bins = 20\n",
                "[[[\n",
                "[metrics]\nlevel = true\n",
            ]
        )
        p = d / f"{self.name('cfg')}.toml"
        p.write_text(body)
        return ["--config", str(p)]

    # ------------------------------------------------------------------ commands

    def case(self, seed: int) -> Case:
        command = self.r.choice(
            [
                "score",
                "score",
                "ucc",
                "coverage",
                "compare",
                "recalibrate",
                "recalibrate",
                "check",
                "check",
                "report",
                "plot",
                "explain",
            ]
        )
        d = self._dir()
        case = Case(seed=seed, command=command)
        getattr(self, f"_{command}")(d, case)
        return case

    def _score(self, d: Path, case: Case) -> None:
        f, label, cols = self.dataset(d)
        case.inputs.append(f)
        args = ["score", str(f), "-f", self.r.choice(["table", "json", "markdown"])]
        args += self.column_flags(cols) + self.option_noise() + self.config(d)
        if "grp" in label and self.r.random() < 0.7:
            args += ["--by", "grp"]
        if self.r.random() < 0.5:
            args += ["--output", self.output(d, "json", case, [f])]
        if self.r.random() < 0.15:
            case.outputs.append(d / "plots")
            args += ["--plot-dir", str(d / "plots")]
        case.args, case.label = args, label

    def _ucc(self, d: Path, case: Case) -> None:
        files = [
            self.dataset(d, self.r.choice(["gaussian", "intervals", "quantiles", "samples"]))
            for _ in range(self.r.choice([1, 2]))
        ]
        case.inputs += [f for f, _, _ in files]
        args = ["ucc", *map(str, case.inputs), "-f", self.r.choice(["table", "json", "markdown"])]
        for _, _, cols in files[:1]:
            args += self.column_flags(cols)
        if self.r.random() < 0.3:
            args += ["--permutation-test", self.r.choice(["20", "100000000"])]
        if self.r.random() < 0.4:
            args += ["--output", self.output(d, "json", case, case.inputs)]
        if self.r.random() < 0.3:
            args += ["--plot", self.output(d, "png", case, case.inputs)]
        case.args, case.label = args, "+".join(lab for _, lab, _ in files)

    def _coverage(self, d: Path, case: Case) -> None:
        files = [
            self.dataset(d, self.r.choice(["gaussian", "intervals", "quantiles", "classes"]))
            for _ in range(self.r.choice([1, 2]))
        ]
        case.inputs += [f for f, _, _ in files]
        args = ["coverage", *map(str, case.inputs), "-f", self.r.choice(["table", "json", "markdown"])]
        if self.r.random() < 0.6:
            args += ["--by", self.r.choice(["grp", "grp", "y", "nope"])]
        if self.r.random() < 0.3:
            args += ["--points-by", self.r.choice(["grp", "label", "nope"])]
        for _ in case.inputs:
            if self.r.random() < 0.3:
                args += ["--name", self.r.choice(HOSTILE)]
        if self.r.random() < 0.4:
            args += ["--output", self.output(d, "json", case, case.inputs)]
        if self.r.random() < 0.2:
            args += ["--plot", self.output(d, "png", case, case.inputs)]
        case.args, case.label = args, "+".join(lab for _, lab, _ in files)

    def _compare(self, d: Path, case: Case) -> None:
        kind = self.r.choice(["gaussian", "samples", "classes", "quantiles"])
        files = [self.dataset(d, kind, hostile_ok=False) for _ in range(2)]
        case.inputs += [f for f, _, _ in files]
        args = [
            "compare",
            *map(str, case.inputs),
            "-f",
            self.r.choice(["table", "json", "markdown"]),
            "--bootstrap",
            self.r.choice(["0", "20", "1000000000"]),
            "--permutations",
            self.r.choice(["0", "20"]),
        ]
        if self.r.random() < 0.4:
            args += ["--names", ",".join(self.r.choice(HOSTILE).replace(",", ";") for _ in case.inputs)]
        if self.r.random() < 0.4:
            args += ["--output", self.output(d, "json", case, case.inputs)]
        if self.r.random() < 0.2:
            args += ["--plot", self.output(d, "png", case, case.inputs)]
        case.args, case.label = args, "+".join(lab for _, lab, _ in files)

    def _recalibrate(self, d: Path, case: Case) -> None:
        r = self.r
        method = r.choice(["std-scaling", "isotonic", "conformal", "temperature", "accrue"])
        kind = {"temperature": "classes", "accrue": "point"}.get(method, "gaussian")
        calib, label, cols = self.dataset(d, kind, hostile_ok=False)
        apply, _, _ = self.dataset(d, kind, hostile_ok=False)
        case.inputs += [calib, apply]
        extra = (
            ["--model", r.choice(["constant", "poly", "kmeans"]), "--features", "mean"]
            if method == "accrue"
            else []
        )
        if r.random() < 0.35:  # a saved model, maybe tampered with
            model = d / f"{self.name('model')}.json"
            model.write_text(tampered_model(r, method))
            case.inputs[:] = [apply, model]  # the calibration file is not read
            args = ["recalibrate", "--load", str(model), "--apply", str(apply)]
            label = f"load:{method}"
        else:
            args = ["recalibrate", str(calib), "--method", method, *extra] + self.column_flags(cols)
            if r.random() < 0.4:
                args += ["--save", self.output(d, "json", case, case.inputs)]
            if r.random() < 0.6:
                args += ["--apply", str(apply)]
        if "--apply" in args:
            args += ["--output", self.output(d, r.choice(["parquet", "csv", "csv.gz"]), case, case.inputs)]
        args += ["-f", r.choice(["table", "json", "markdown"])]
        case.args, case.label = args, f"{method}:{label}"

    def _check(self, d: Path, case: Case) -> None:
        r = self.r
        f, label, cols = self.dataset(d, "gaussian")
        if r.random() < 0.25:  # a summary JSON as INPUT, maybe damaged
            f = d / f"{self.name('summary')}.json"
            f.write_text(malformed_baseline(r))
            cols, label = {}, "summary-input"
        case.inputs.append(f)
        rules = d / f"{self.name('rules')}.toml"
        rules.write_text(malformed_rules(r))
        case.inputs.append(rules)
        args = ["check", str(f), "--rules", str(rules), "-f", r.choice(["table", "json", "markdown"])]
        args += self.column_flags(cols)
        if r.random() < 0.5:
            base = d / f"{self.name('base')}.json"
            base.write_text(malformed_baseline(r))
            case.inputs.append(base)
            args += ["--baseline", str(base), "--allow-settings-mismatch"]
        if r.random() < 0.4:
            args += ["--junit", self.output(d, "xml", case, case.inputs)]
        if r.random() < 0.3:
            args += ["--output", self.output(d, "json", case, case.inputs)]
        case.args, case.label = args, label

    def _report(self, d: Path, case: Case) -> None:
        f, label, cols = self.dataset(d, self.r.choice(["gaussian", "classes", "quantiles", "point"]))
        case.inputs.append(f)
        args = ["report", str(f), "-o", self.output(d, "html", case, [f]), "--title", self.r.choice(HOSTILE)]
        args += self.column_flags(cols)
        if "grp" in label:
            args += ["--by", "grp"]
        case.args, case.label = args, label

    def _plot(self, d: Path, case: Case) -> None:
        from uqeval.plots import PLOT_KINDS

        f, label, cols = self.dataset(d)
        case.inputs.append(f)
        fmt = self.r.choice(["png", "svg", "pdf", "txt"])
        args = ["plot", str(f), "--kind", self.r.choice(PLOT_KINDS), "-o", self.output(d, fmt, case, [f])]
        args += self.column_flags(cols)
        if self.r.random() < 0.3:
            args += ["--x", self.r.choice(["grp", "y", "nope", HOSTILE[0]])]
        case.args, case.label = args, label

    def _explain(self, d: Path, case: Case) -> None:
        case.args = ["explain", self.r.choice(HOSTILE + ["crps", "nll", "ece", "accuracy.mae", ""])]
        case.label = "explain"


def tampered_model(r: random.Random, method: str) -> str:
    """A saved recalibrator: valid, or with one field broken (type, null, NaN, 1e999, nesting)."""
    states = {
        "std-scaling": {
            "method": "std_scaling",
            "criterion": "ma_cal",
            "factor": 1.3,
            "n_rows": 40,
            "num_bins": 100,
        },
        "isotonic": {
            "method": "isotonic",
            "direction": "quantile",
            "expected": [0.0, 0.5, 1.0],
            "observed": [0.0, 0.4, 1.0],
        },
        "conformal": {
            "method": "conformal",
            "normalized": True,
            "levels": [0.9],
            "score_quantile": [1.7],
            "rank": [37],
            "coverage_guaranteed": [0.9],
            "coverage_upper": [0.93],
        },
        "temperature": {"method": "temperature", "temperature": 1.5},
        "accrue": {
            "method": "accrue",
            "model": "constant",
            "n_features": 1,
            "feature_mean": [0.0],
            "feature_std": [1.0],
            "sigma_constant": 1.0,
            "sigma": 1.0,
            "features": ["mean"],
        },
    }
    state = states[method]
    text = json.dumps(
        {
            "format": "uqeval.recalibrator/1",
            "uqeval_version": "0.1.0",
            "method": state["method"],
            "state": state,
        }
    )
    how = r.choice(["valid", "type", "null", "nan", "big", "deep", "list", "negative", "truncate", "format"])
    key = r.choice([k for k in state if k != "method"])
    if how == "valid":
        return text
    if how == "truncate":
        return text[: r.randrange(1, len(text))]
    if how == "format":
        return text.replace("uqeval.recalibrator/1", "uqeval.recalibrator/9")
    if how == "deep":
        return text.replace('"state": {', '"state": {"x": ' + "[" * 5000 + "]" * 5000 + ", ", 1)
    value = {
        "type": '"abc"',
        "null": "null",
        "nan": "NaN",
        "big": "1e999",
        "list": "[[1], {}]",
        "negative": "-5",
    }[how]
    return re.sub(rf'("{key}": )(\[[^\]]*\]|"[^"]*"|[^,}}]+)', lambda m: m.group(1) + value, text, count=1)


def malformed_rules(r: random.Random) -> str:
    return r.choice(
        [
            '[rules]\n"accuracy.mae" = { max = 10.0 }\n',
            '[rules]\n"accuracy.mae" = { max = 0.0 }\n',  # fails: exit 1
            '[rules]\n"accuracy.mae" = { max = "x" }\n',
            '[rules]\n"nope.metric" = { max = 1 }\n',
            'require = ["accuracy.mae", 3]\n',
            "a = " + "[" * 800 + "]" * 800 + "\n",
            "[rules\n",
            '[rules]\n"accuracy.mae" = { max = nan }\n',
            '[rules]\n"accuracy.mae" = { max = inf }\n',
            '[rules]\n"accuracy.mae" = { max_regression = 0.1 }\n',
            f'[rules]\n"{HOSTILE[0]}" = {{ max = 1 }}\n'.replace("\x1b", "\\u001b").replace(
                "\x07", "\\u0007"
            ),
            '[rules]\n"[bold]x[/bold]" = { max = 1 }\n',
            "",
        ]
    )


def malformed_baseline(r: random.Random) -> str:
    good = {
        "schema": "uqeval.score/1",
        "uqeval_version": "0.1.0",
        "input": {"n_rows": 40, "representation": "gaussian"},
        "settings": {"num_bins": 100, "seed": 0},
        "metrics": {"accuracy": {"mae": 0.8}},
        "orientation": {"accuracy.mae": "lower"},
    }
    text = json.dumps(good)
    return r.choice(
        [
            text,
            text.replace("0.8", "NaN"),
            text.replace("0.8", "1e999"),
            text.replace("0.8", '"abc"'),
            text.replace('"metrics": {"accuracy": {"mae": 0.8}}', '"metrics": [1, 2]'),
            text.replace(
                '"settings": {"num_bins": 100, "seed": 0}', '"settings": {"num_bins": "x", "seed": [1]}'
            ),
            "[" * 5000 + "]" * 5000,
            text[:20],
            "",
            json.dumps({**good, "schema": "uqeval.score/7"}),
            text.replace('"input": {', '"input": {"path": "\\u001b[31mHX", '),
        ]
    )


# --------------------------------------------------------------------------- running and judging


def _tree(d: Path) -> dict[str, str]:  # noqa: C901
    """Relative path -> content hash (or link target / kind) of everything under ``d``."""
    out = {}
    for root, dirs, files in os.walk(d):
        for name in dirs + files:
            p = Path(root) / name
            rel = str(p.relative_to(d))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
            elif stat.S_ISFIFO(st.st_mode):
                out[rel] = "fifo"
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = "dir"
    return out


class _FifoReader:
    def __init__(self, path: Path | None):
        self.path, self.data, self.stop = path, b"", threading.Event()
        if path is not None:
            self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            self.thread = threading.Thread(target=self._run, daemon=True)
            self.thread.start()

    def _run(self) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                chunk = os.read(self.fd, 65536)
                self.data += chunk
                if chunk:
                    continue
            if self.stop.is_set():
                break
        os.close(self.fd)

    def close(self) -> bytes:
        if self.path is not None:
            self.stop.set()
            self.thread.join(5)
        return self.data


def _strict_json(text: str) -> Any:
    def refuse(name):
        raise ValueError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def _md_tables_ok(text: str) -> str | None:
    """Every Markdown table keeps one cell count per row (no cell broken by | or newline)."""
    counts: list[int] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            counts.append(len(re.findall(r"(?<!\\)\|", line)))
        elif counts:
            if len(set(counts)) != 1:
                return f"markdown table rows have {sorted(set(counts))} separators"
            counts = []
    return None


@dataclass
class Outcome:
    case: Case
    exit_code: int
    problems: list[str]
    stdout: str
    stderr: str


def run_case(runner, app, case: Case, workdir: Path) -> Outcome:
    before = _tree(workdir)
    specials = {p: (os.path.islink(p), stat.S_IFMT(os.lstat(p).st_mode)) for p in case.specials}
    readers = [_FifoReader(f) for f in case.fifos]
    try:
        result = runner.invoke(app, case.args, catch_exceptions=True)
    finally:
        fifo_data = {r.path: r.close() for r in readers}
    after = _tree(workdir)
    problems = check_case(case, result, before, after, fifo_data)
    for p, (was_link, mode) in specials.items():
        if os.path.islink(p) != was_link or stat.S_IFMT(os.lstat(p).st_mode) != mode:
            problems.append(f"special path {p.name!r} was replaced")
    out = result.stdout if result.stdout_bytes is not None else ""
    err = result.stderr if result.stderr_bytes is not None else ""
    return Outcome(case, result.exit_code, problems, out, err)


def _names(case: Case) -> list[str]:
    """Strings one of which an error line must contain: every path of the case, as printed."""
    names = []
    for a in case.args:
        if "/" in a or a.endswith((".csv", ".gz", ".parquet", ".json", ".toml")):
            names += [plain(a), plain(Path(a).name)]
    return [n for n in names if n]


def check_case(case: Case, result, before: dict, after: dict, fifo_data: dict[Path, bytes]) -> list[str]:
    problems: list[str] = []
    code = result.exit_code
    out = result.stdout
    err = result.stderr
    allowed = {0, 2, 3} | ({1} if case.command == "check" else set())
    if code not in allowed:
        problems.append(f"exit code {code}")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        problems.append(f"exception {type(result.exception).__name__}: {str(result.exception)[:120]}")
    if TRACEBACK in out or TRACEBACK in err:
        problems.append("traceback printed")
    binary_stdout = "-" in case.args and (result.stdout_bytes or b"").startswith(
        (b"\x89PNG", b"%PDF", b"PAR1", b"\x1f\x8b")
    )
    for where, text in (("stdout", out), ("stderr", err)):
        if where == "stdout" and binary_stdout:
            continue
        if CONTROL.search(text):
            problems.append(f"raw control character on {where}: {CONTROL.search(text).group(0)!r}")
        if live_markup(text):
            problems.append(f"rich markup rendered on {where}")
    if code == 3:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("error:")]
        others = [ln for ln in lines if not ln.startswith(("error:", "note:"))]
        if len(errors) != 1 or others:
            problems.append(f"failure printed {len(errors)} error line(s) and {len(others)} other line(s)")
        elif not any(n in errors[0] for n in _names(case)) and case.command != "explain":
            problems.append(f"error does not name a file: {errors[0][:160]!r}")
    # outputs: nothing on failure, no temporary files ever, inputs unchanged
    created = {k for k in after if k not in before}
    changed = {k for k in after if k in before and after[k] != before[k]}
    temps = [k for k in after if Path(k).name.startswith(".") and k.endswith(".tmp")]
    if temps:
        problems.append(f"temporary files left: {temps}")
    wrote = code == 0 or (code == 1 and case.command == "check")
    if not wrote and (created or changed):
        problems.append(f"failure wrote {sorted(created | changed)[:4]}")
    for p in case.inputs:
        k = p.name
        if k in before and after.get(k) != before[k]:
            problems.append(f"input {k!r} modified")
    # strict JSON, Markdown shape, no live markup
    fmt = case.args[case.args.index("-f") + 1] if "-f" in case.args else "table"
    if code in (0, 1) and fmt == "json" and out.strip() and "-" not in case.args:
        try:
            _strict_json(out)
        except ValueError as exc:
            problems.append(f"stdout is not strict JSON: {exc}")
    if fmt == "markdown" and code in (0, 1):
        bad = _md_tables_ok(out)
        if bad:
            problems.append(bad)
    if fmt == "markdown" and f"<b>{MARK}" in re.sub(r"`[^`\n]*`", "", out):  # code spans are literal
        problems.append("planted HTML tag is live in Markdown")
    if wrote:
        for p in case.outputs:
            problems += _check_output_file(p)
        for fifo, data in fifo_data.items():
            if data:
                problems += _check_bytes(fifo, data)
    return problems


def _check_output_file(p: Path) -> list[str]:
    if not p.exists() or p.is_dir():
        return []
    if p.read_bytes() in (b"old", b"previous"):
        return []
    return _check_bytes(p, p.read_bytes())


def _check_bytes(p: Path, data: bytes) -> list[str]:
    name = str(p)
    problems = []
    if name.endswith(".json"):
        try:
            _strict_json(data.decode("utf-8"))
        except ValueError as exc:
            problems.append(f"{p.name}: not strict JSON ({exc})")
    elif name.endswith(".xml"):
        try:
            ET.fromstring(data)
        except ET.ParseError as exc:
            problems.append(f"{p.name}: JUnit XML does not parse ({exc})")
        if CONTROL.search(data.decode("utf-8")):
            problems.append(f"{p.name}: raw control character in XML")
    elif name.endswith(".html"):
        text = data.decode("utf-8")
        if f"<b>{MARK}" in text or live_markup(text):
            problems.append(f"{p.name}: planted HTML tag or markup is live")
        if CONTROL.search(text):
            problems.append(f"{p.name}: raw control character in HTML")
    elif name.endswith(".parquet"):
        try:
            pq.read_table(pa.BufferReader(data))
        except Exception as exc:  # noqa: BLE001
            problems.append(f"{p.name}: written Parquet does not read back ({exc})")
    return problems
