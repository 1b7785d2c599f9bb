"""Start-up: `uqeval score` on a Gaussian file loads only what it needs (issue 18's start-up budget)."""

import subprocess
import sys

from ..conftest import ROOT

# scipy: the normal CDF and quantile come from uqeval.metrics.normal; pandas: pyarrow's Array.to_numpy imports it, so float columns are read from their buffers
# (uqeval.io.readers.float64_numpy); dask: only the --engine dask path; pyarrow.compute: only for columns
# that need a cast or hold nulls; pydantic: typer's option adapters (uqeval.cli._lean coerces plain options);
# rich: only the table output
HEAVY = ("scipy", "matplotlib", "pyarrow.dataset", "pandas", "dask", "pyarrow.compute", "pydantic", "rich")
# modules that must not run: the other commands' modules (only the dispatched one is imported), the
# numpy submodules scipy.special touches (uqeval.cli._defer_numpy_extras leaves them unexecuted)
NOT_RUN = ("uqeval.cli.compare", "uqeval.cli.ucc", "uqeval.cli.recalibrate", "uqeval.cli.report",
           "uqeval.cli.check", "uqeval.cli.coverage", "uqeval.cli.explain",
           "numpy.f2py.crackfortran", "numpy.testing._private", "numpy.polynomial.polynomial")


def _loaded(tmp_path, fmt: str) -> list[str]:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['uqeval', 'score', 'sample_data/gaussian.parquet', '--format', {fmt!r}, "
        f"'--output', {str(tmp_path / 'out.json')!r}]\n"
        "try:\n    runpy.run_module('uqeval', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"print('MODULES', sorted({{m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r} "
        f"or m in {NOT_RUN!r}}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("MODULES")]


def test_score_on_a_gaussian_file_imports_no_heavy_module(tmp_path):
    assert _loaded(tmp_path, "markdown") == ["MODULES []"]
    assert _loaded(tmp_path, "json") == ["MODULES []"]


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
