"""The documentation site (docs/, mkdocs.yml): its code runs, its generated references are complete, its
navigation lists every page, and the README stays a README.

The tutorial (docs/getting-started.md) trains scikit-learn models, so scikit-learn is in the ``test``
extra (the package does not depend on it). ``mkdocs build --strict`` itself runs in .ci/run.
"""

from __future__ import annotations

import importlib.util
import re

import pytest

from ._docs import blocks, run_page
from .conftest import ROOT

DOCS = ROOT / "docs"
#: pages written at build time by docs/hooks/generate.py
GENERATED = {
    "reference/metrics.md",
    "reference/cli.md",
    "reference/api.md",
    "changelog.md",
    "contributing.md",
}


def _hook():
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "hooks" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pages() -> list[str]:
    return sorted(
        str(p.relative_to(DOCS))
        for p in DOCS.rglob("*.md")
        if "hooks" not in p.parts and p.name != "_mapping.md"
    )


def test_tutorial_runs_every_block(tmp_path):
    pytest.importorskip(
        "sklearn", reason="the tutorial's models: pip install '.[test]' installs scikit-learn"
    )
    page = DOCS / "getting-started.md"
    found = blocks(page)
    assert {lang for lang, attrs, _ in found if 'title="' not in attrs} <= {"python", "bash"}
    assert sum(lang == "bash" for lang, _, _ in found) >= 6
    namespace = run_page(page, tmp_path)
    for name in (
        "gp.parquet",
        "ridge.parquet",
        "cancer.parquet",
        "report.html",
        "junit.xml",
        "baseline.json",
    ):
        assert (tmp_path / name).is_file(), name
    assert namespace["doc"]["metrics"]["crps"]["best"]
    assert 0 < namespace["scores"]["coverage.0.9.coverage"] <= 1


PYTHON_PAGES = [
    p
    for p in _pages()
    if p != "getting-started.md" and any(lang == "python" for lang, _, _ in blocks(DOCS / p))
]


@pytest.mark.parametrize("page", PYTHON_PAGES)
def test_python_blocks_of_a_page_run(page, tmp_path):
    """Each page's Python blocks, in order, in one namespace, in a directory that has the repository's
    sample_data/ (nothing the blocks write lands in the source tree)."""
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data", target_is_directory=True)
    namespace = run_page(DOCS / page, tmp_path, languages=("python",))
    assert namespace


def test_python_api_guide_runs_and_is_tested():
    assert "guide/python-api.md" in PYTHON_PAGES
    assert sum(lang == "python" for lang, _, _ in blocks(DOCS / "guide" / "python-api.md")) >= 3


def test_metrics_reference_lists_every_catalogue_metric():
    from uqeval.catalogue import METRICS
    from uqeval.glossary import GLOSSARY

    page = _hook().metrics_page()
    for path, metric in METRICS.items():
        assert f"\n### `{path}`\n" in page, path
        section = page.split(f"\n### `{path}`\n", 1)[1].split("\n### ", 1)[0]
        assert f"| `{metric.reduction}` |" in section, path
        entry = GLOSSARY[path]
        assert "Reference:" in section and entry["title"].split("(")[0].strip()[:20] in section.replace(
            "&amp;", "&"
        )


def test_metrics_reference_weights_column_reads_the_catalogue():
    """``Metric.supports_weights`` shows as yes, ``Metric.weighted_kinds`` as "in memory: kinds", else no."""
    from uqeval.catalogue import METRICS

    page = _hook().metrics_page()
    for path, expected in (
        (next(iter(METRICS)), "yes"),  # accuracy.mae: a per-row form
        ("calibration.ace", "in memory: `categorical`, `members`, `dirichlet`"),
        ("spce.spce", "no"),
    ):
        section = page.split(f"\n### `{path}`\n", 1)[1].split("\n### ", 1)[0]
        row = next(line for line in section.splitlines() if line.startswith("| ") and "`" in line)
        assert row.endswith(f"| {expected} |"), row


def test_cli_reference_lists_every_command_and_option():
    import typer

    from uqeval.cli import app

    page = _hook().cli_page()
    root = typer.main.get_command(app)

    def walk(cmd, path):
        assert f" `{' '.join(path)}`\n" in page, path
        for p in cmd.params:
            for opt in getattr(p, "opts", []):
                if opt.startswith("-"):
                    assert opt in page, (path, opt)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(root, ["uqeval"])
    assert "`uqeval config show`" in page


def test_api_reference_documents_every_public_name():
    import uqeval

    page = _hook().api_page()
    for name, module in uqeval._EXPORTS.items():
        assert f"::: uqeval.{module}.{name}\n" in page, name


def test_nav_lists_every_page_and_every_nav_entry_exists():
    nav = re.findall(r"^\s+-\s+(?:[^:\n]+:\s+)?([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert len(nav) == len(set(nav))
    written = set(_pages())
    assert set(nav) - GENERATED == written, (set(nav) ^ written) - GENERATED
    assert GENERATED <= set(nav)


def test_readme_is_short_and_its_gallery_is_committed():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400 and len(text.encode()) <= 32 * 1024
    images = re.findall(r"!\[[^\]]+\]\((docs/img/[\w.-]+\.png)\)", text)
    assert len(images) == 4
    gallery = _gallery()
    assert {f"docs/img/{name}" for name in gallery.FIGURES} == set(images)
    for image in images:
        assert (ROOT / image).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", image


def _gallery():
    spec = importlib.util.spec_from_file_location("docs_gallery", DOCS / "gallery.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_the_mapping_names_a_home_for_every_former_readme_section():
    """docs/_mapping.md: every section of the former README has a page (or a root file) that exists."""
    rows = re.findall(r"^\| (.+?) \| (.+?) \|$", (DOCS / "_mapping.md").read_text(encoding="utf-8"), re.M)[1:]
    assert len(rows) == 42  # the former README's 42 headings
    for _, homes in rows:
        for target in re.findall(r"`([\w/.-]+\.md)", homes):
            assert (DOCS / target).is_file() or (ROOT / target).is_file() or target in GENERATED, target
