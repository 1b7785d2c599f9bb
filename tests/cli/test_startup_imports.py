"""Start-up: `uqeval score` on a Gaussian file loads only what it needs (issue 18's start-up budget)."""

import subprocess
import sys

import pytest

from ..conftest import ROOT

# scipy: the normal CDF and quantile come from uqeval.metrics.normal; pandas: pyarrow's Array.to_numpy imports it, so float columns are read from their buffers
# (uqeval.io.readers.float64_numpy); dask: only the --engine dask path; pyarrow.compute: only for columns
# that need a cast or hold nulls; pydantic: typer's option adapters (uqeval.cli._lean coerces plain options);
# rich: only the table output
HEAVY = ("scipy", "matplotlib", "pyarrow.dataset", "pandas", "dask", "pyarrow.compute", "pydantic", "rich")
# modules that must not run: the other commands' modules (only the dispatched one is imported), the
# numpy submodules scipy.special touches (uqeval.cli._defer_numpy_extras leaves them unexecuted)
NOT_RUN = (
    "uqeval.cli.compare",
    "uqeval.cli.ucc",
    "uqeval.cli.recalibrate",
    "uqeval.cli.report",
    "uqeval.cli.check",
    "uqeval.cli.coverage",
    "uqeval.cli.explain",
    "numpy.f2py.crackfortran",
    "numpy.testing._private",
    "numpy.polynomial.polynomial",
)


def _loaded(tmp_path, fmt: str, path: str = "sample_data/gaussian.parquet", heavy=HEAVY) -> list[str]:
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['uqeval', 'score', {path!r}, '--format', {fmt!r}, "
        f"'--output', {str(tmp_path / 'out.json')!r}]\n"
        "try:\n    runpy.run_module('uqeval', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        f"print('MODULES', sorted({{m for m in sys.modules if m.split('.')[0] in {heavy!r} or m in {heavy!r} "
        f"or m in {NOT_RUN!r}}}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("MODULES")]


def test_score_on_a_gaussian_file_imports_no_heavy_module(tmp_path):
    assert _loaded(tmp_path, "markdown") == ["MODULES []"]
    assert _loaded(tmp_path, "json") == ["MODULES []"]


# the other representations need scipy.special (entropies, digamma, log-sum-exp) but none of scipy's
# slow subpackages: the Bayesian ECE's truncated normals come from scipy.special (not scipy.stats, ~0.6 s),
# the rejection curves' areas from numpy (not scipy.integrate, which loads scipy.optimize: ~0.15 s)
SLOW_SCIPY = ("scipy.stats", "scipy.integrate", "scipy.optimize", "scipy.sparse", "scipy.linalg")


@pytest.mark.parametrize(
    "path",
    [
        "sample_data/classification.parquet",
        "sample_data/ensemble_classification.parquet",
        "sample_data/dirichlet.parquet",
        "sample_data/samples.parquet",
        "sample_data/loglik.parquet",
        "sample_data/quantiles.parquet",
        "sample_data/intervals.parquet",
    ],
)
def test_score_on_other_representations_imports_no_slow_scipy_subpackage(tmp_path, path):
    heavy = (
        tuple(m for m in HEAVY if m not in ("scipy", "pyarrow.compute")) + SLOW_SCIPY
    )  # integer labels: a cast
    assert _loaded(tmp_path, "json", path, heavy) == ["MODULES []"]


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


@pytest.mark.parametrize(
    "args",
    [
        ["coverage", "sample_data/gaussian.parquet", "--format", "json"],
        ["monitor", "sample_data/gaussian.parquet", "--window", "500", "--format", "json"],
    ],
)
def test_a_command_without_a_figure_imports_no_matplotlib(args):
    # matplotlib (and the deprecation warnings of old pyparsing releases it brings) loads only to draw
    code = (
        "import sys, runpy\n"
        f"sys.argv = ['uqeval', *{args!r}]\n"
        "try:\n    runpy.run_module('uqeval', run_name='__main__')\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
        "print('MATPLOTLIB', 'matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "MATPLOTLIB False"
