"""Regenerate tests/reference/data/diebold_mariano_reference.json: the Diebold–Mariano test with the
Harvey–Leybourne–Newbold (1997) correction and a Student t(n - 1) reference (issue 25), for
tests/metrics/test_comparison.py.

Reference library (never imported by uqeval or its tests): ``scores`` 2.7.0 (Australian Bureau of
Meteorology), ``scores.stats.statistical_tests.diebold_mariano(..., method="HLN",
statistic_distribution="t")``. Its ``h`` is the forecast horizon: the long-run variance sums the
autocovariances of lags 0 .. h - 1 with uniform weights, which is uqeval's ``lag = h - 1``. scores
reports ``confidence_gt_0`` = the t(n - 1) CDF at the statistic; the two-sided p-value frozen here is
``2 * min(c, 1 - c)`` of it. Run in a side venv::

    uv venv /work/venv-ref-pval && uv pip install --python /work/venv-ref-pval scores==2.7.0
    /work/venv-ref-pval/bin/python tests/reference/regen_diebold_mariano.py

Data: seeded score differences (numpy ``default_rng``), written to the JSON with the values: white
noise with a shift, MA(2) differences (3-step forecasts), and short series (n = 8, 12, 30).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "data" / "diebold_mariano_reference.json"


def cases() -> list[tuple[str, np.ndarray, int]]:
    rng = np.random.default_rng(25)
    white = rng.normal(0.3, 1.0, 30)
    e = rng.normal(size=202)
    ma2 = e[2:] + 0.8 * e[1:-1] + 0.5 * e[:-2] + 0.2  # 3-step forecast errors: MA(2)
    short = rng.normal(0.5, 1.0, 8)
    skewed = rng.gamma(2.0, size=12) - rng.gamma(2.2, size=12)
    alternating = np.array([1.0, -1.0] * 6) + 0.1  # lag-1 autocovariance < 0: HLN's variance <= 0 at h = 2
    out = []
    for h in (1, 2, 4):
        out.append((f"white_n30_h{h}", white, h))
    for h in (1, 3, 5):
        out.append((f"ma2_n200_h{h}", ma2, h))
    out += [
        ("short_n8_h1", short, 1),
        ("short_n8_h2", short, 2),
        ("skewed_n12_h1", skewed, 1),
        ("alternating_n12_h2", alternating, 2),
    ]
    return out


def main() -> None:
    import scores
    import xarray as xr
    from scores.stats.statistical_tests import diebold_mariano

    rows = []
    for name, d, h in cases():
        da = xr.DataArray([d], dims=["series", "t"], coords={"series": [0], "h": ("series", [h])})
        r = diebold_mariano(da, "series", "h", method="HLN", statistic_distribution="t")
        stat = float(r["dm_test_stat"].values[0])
        c = float(r["confidence_gt_0"].values[0])
        rows.append(
            {
                "name": name,
                "lag": h - 1,
                "d": d.tolist(),
                "statistic": stat,
                "p_value": 2.0 * min(c, 1.0 - c) if np.isfinite(c) else None,
            }
        )
    doc = {"library": f"scores {scores.__version__}", "method": "HLN, t(n-1)", "cases": rows}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT} ({len(rows)} cases)")


if __name__ == "__main__":
    main()
