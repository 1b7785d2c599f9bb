"""Start-up: `uqeval score` on a Gaussian file loads only what it needs (issue 18's start-up budget)."""

import subprocess
import sys

from ..conftest import ROOT

# pandas is still loaded: pyarrow's Array.to_numpy imports it (pyarrow 26); see the stop note of issue 12/18
HEAVY = ("scipy.stats", "matplotlib", "pyarrow.dataset")


def test_score_on_a_gaussian_file_imports_no_heavy_module(tmp_path):
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['uqeval', 'score', 'sample_data/gaussian.parquet', '--format', 'markdown', "
        f"'--output', {str(tmp_path / 'out.json')!r}]\n"
        "try:\n    runpy.run_module('uqeval', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"print('MODULES', sorted({{m.split('.')[0] for m in sys.modules if m.startswith({HEAVY!r})}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loaded = [line for line in out.stdout.splitlines() if line.startswith("MODULES")]
    assert loaded == ["MODULES []"], out.stdout[-500:]
