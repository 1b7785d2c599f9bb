"""``report --weights`` (issue 25): the metric tables are score's weighted summary; the figures take no
weights, so every caption says they are unweighted (never silently), and the UCC numbers are left out."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from uqeval.cli import app
from uqeval.cli.report import UNWEIGHTED

runner = CliRunner()


def test_report_weights(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    y = rng.normal(size=n)
    w = rng.uniform(0, 2, n)
    pd.DataFrame({"y": y, "mu": np.zeros(n), "sigma": np.ones(n), "w": w}).to_csv(
        tmp_path / "a.csv", index=False
    )
    pd.DataFrame({"y": y, "mu": rng.normal(0, 0.3, n), "sigma": np.full(n, 1.4), "w": w}).to_csv(
        tmp_path / "b.csv", index=False
    )
    files = [str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]
    out = tmp_path / "r.html"
    r = runner.invoke(app, ["report", *files, "--weights", "w", "--compare", "-o", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "the figures take no weights" in r.output
    html = out.read_text()
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", html, flags=re.S)
    assert captions and all("unweighted: figures take no weights" in c for c in captions)
    plain = tmp_path / "p.html"
    r = runner.invoke(app, ["report", *files, "-o", str(plain), "--quiet"])
    assert r.exit_code == 0, r.output
    assert UNWEIGHTED.strip() not in plain.read_text()
    # the weighted MAE is in the weighted report, the unweighted one only in the other
    mae_w = np.sum(w * np.abs(y)) / w.sum()
    mae = np.mean(np.abs(y))
    fmt = [f"{v:.4g}" for v in (mae_w, mae)]
    assert fmt[0] != fmt[1]
    assert fmt[0] in html and fmt[0] not in plain.read_text()
