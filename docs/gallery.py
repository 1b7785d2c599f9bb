"""The README's gallery: four figures drawn by ``uqeval`` itself from the bundled ``sample_data/``.

    python docs/gallery.py          # rewrite docs/img/*.png (run after changing how figures look)
    python docs/gallery.py --check  # exit 1 if a committed image is missing (CI-free sanity check)

Each figure is made the way a user would make it: a command (``uqeval ucc --plot``, run as
``python -m uqeval`` from the repository root) or, for models overlaid on one figure, the Python call
``uqeval.plot({name: table}, kind)``. So the gallery always shows the current figures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"

#: file name -> (what it shows, the uqeval arguments that draw it; {out} is the output path), or
#: (what it shows, (plot kind, {model name: sample file})) for models overlaid by ``uqeval.plot``
FIGURES: dict[str, tuple[str, list[str] | tuple[str, dict[str, str]]]] = {
    "calibration.png": (
        "average calibration curves of two Gaussian forecasts",
        ("calibration", {"heteroscedastic σ": "gaussian.parquet", "constant σ": "gaussian_const.parquet"}),
    ),
    "reliability.png": (
        "reliability diagrams of three classifiers",
        (
            "reliability",
            {
                "classifier": "classification.parquet",
                "Dirichlet": "dirichlet.parquet",
                "ensemble": "ensemble_classification.parquet",
            },
        ),
    ),
    "ucc.png": (
        "uncertainty characteristics curves of two models",
        [
            "ucc",
            "sample_data/gaussian.parquet",
            "sample_data/gaussian_const.parquet",
            "--plot",
            "{out}",
            "--format",
            "json",
        ],
    ),
    "spread_skill.png": (
        "spread–skill diagrams of a Gaussian forecast and an ensemble",
        ("spread_skill", {"Gaussian": "gaussian.parquet", "ensemble": "samples.parquet"}),
    ),
}


def draw(name: str) -> Path:
    out = IMG / name
    spec = FIGURES[name][1]
    if isinstance(spec, tuple):  # models overlaid on one Axes, as a notebook draws them
        import matplotlib

        matplotlib.use("Agg")
        import pandas as pd

        import uqeval

        kind, files = spec
        ax = uqeval.plot(
            {label: pd.read_parquet(ROOT / "sample_data" / f) for label, f in files.items()}, kind
        )
        ax.figure.savefig(out, dpi=100, metadata={"Software": None})
        return out
    args = [a.replace("{out}", str(out)) for a in spec]
    subprocess.run(
        [sys.executable, "-m", "uqeval", *args],
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return out


def main(argv: list[str]) -> int:
    if "--check" in argv:
        missing = [n for n in FIGURES if not (IMG / n).is_file()]
        for n in missing:
            print(f"docs/img/{n} is missing: run python docs/gallery.py", file=sys.stderr)
        return 1 if missing else 0
    IMG.mkdir(parents=True, exist_ok=True)
    for name in FIGURES:
        print(draw(name).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
