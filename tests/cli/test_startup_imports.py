"""Start-up: `uqeval score` on a Gaussian file loads only what it needs (issue 18's start-up budget)."""

import subprocess
import sys

from ..conftest import ROOT

# pandas: pyarrow's Array.to_numpy imports it, so float columns are read from their buffers
# (uqeval.io.readers.float64_numpy); dask: only the --engine dask path
HEAVY = ("scipy.stats", "matplotlib", "pyarrow.dataset", "pandas", "dask")


def test_score_on_a_gaussian_file_imports_no_heavy_module(tmp_path):
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['uqeval', 'score', 'sample_data/gaussian.parquet', '--format', 'markdown', "
        f"'--output', {str(tmp_path / 'out.json')!r}]\n"
        "try:\n    runpy.run_module('uqeval', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"print('MODULES', sorted({{m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r}}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    loaded = [line for line in out.stdout.splitlines() if line.startswith("MODULES")]
    assert loaded == ["MODULES []"], out.stdout[-500:]


def test_report_on_a_gaussian_file_does_not_import_scipy_stats(tmp_path):
    # the PIT histogram's binomial band comes from scipy.special (importing scipy.stats: ~0.8 s)
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['uqeval', 'report', 'sample_data/gaussian.parquet', '--output', {str(tmp_path / 'r.html')!r}]\n"
        "try:\n    runpy.run_module('uqeval', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('MODULES', sorted(m for m in sys.modules if m == 'scipy.stats' or m.startswith('scipy.stats.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "PIT histogram" in (tmp_path / "r.html").read_text(encoding="utf-8")
    loaded = [line for line in out.stdout.splitlines() if line.startswith("MODULES")]
    assert loaded == ["MODULES []"], out.stdout[-500:]
