"""The README's gallery: four figures drawn by ``uqeval`` itself from the bundled ``sample_data/``.

    python docs/gallery.py          # rewrite docs/img/*.png (run after changing how figures look)
    python docs/gallery.py --check  # exit 1 if a committed image is missing (CI-free sanity check)

Each figure is made by the command a user would type (``uqeval plot`` / ``uqeval ucc --plot``), run
as ``python -m uqeval`` from the repository root, so the gallery always shows the current figures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "img"

#: file name -> (what it shows, the uqeval arguments that draw it; {out} is the output path)
FIGURES = {
    "calibration.png": (
        "average calibration curve of a Gaussian forecast",
        ["plot", "sample_data/gaussian.parquet", "--kind", "calibration", "--output", "{out}"],
    ),
    "reliability.png": (
        "reliability diagram of a classifier",
        ["plot", "sample_data/classification.parquet", "--kind", "reliability", "--output", "{out}"],
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
    "pit.png": (
        "PIT histogram of an ensemble",
        ["plot", "sample_data/samples.parquet", "--kind", "pit", "--output", "{out}"],
    ),
}


def draw(name: str) -> Path:
    out = IMG / name
    args = [a.replace("{out}", str(out)) for a in FIGURES[name][1]]
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
