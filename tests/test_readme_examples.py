"""The README's examples run: its Python block, its shell commands (the Quick start's uqeval command, the
column-name examples, one example per command in the commands table) and the CI job's check command."""

import re
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ._docs import blocks, run_bash, run_page, shim
from .conftest import ROOT

README = ROOT / "README.md"
QUICK_START = (
    'pip install . && uqeval score sample_data/gaussian.parquet\npip install ".[test]" && python -m pytest\n'
)


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def _workdir(path):
    """A directory with the bundled samples and configs, as at the repository root."""
    shutil.copytree(ROOT / "sample_data", path / "sample_data", ignore=shutil.ignore_patterns("*.py"))
    shutil.copytree(ROOT / "configs", path / "configs")
    return path


def test_quick_start_is_the_two_commands_and_ci_runs_the_second():
    quick = _section(README.read_text(encoding="utf-8"), "Quick start")
    assert f"```bash\n{QUICK_START}```" in quick
    assert 'pip install ".[test]" && python -m pytest\n' in (ROOT / ".ci" / "run").read_text()


def test_readme_python_blocks_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    code = [c for lang, _, c in blocks(README) if lang == "python"]
    assert code
    namespace: dict = {}
    for block in code:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own documentation
    assert namespace["scores"]["crps"] > 0
    assert namespace["table"].shape[0] > 20


def test_readme_shell_examples_run(tmp_path):
    """The column-name examples on a user's own files (made here), reading pyproject.toml as the README says."""
    work = _workdir(tmp_path)
    g = pacsv.read_csv(ROOT / "sample_data" / "gaussian.csv")
    pacsv.write_csv(
        pa.table({"truth": g["y"], "guess": g["mean"], "unc": g["std"]}), work / "my_predictions.csv"
    )
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=50)
    pacsv.write_csv(
        pa.table({"label": rng.integers(0, 3, 50), "p0": p[:, 0], "p1": p[:, 1], "p2": p[:, 2]}),
        work / "my_classifier.csv",
    )
    text = README.read_text(encoding="utf-8")
    section = _section(text, "Your own column names")
    page = work / "section.md"
    page.write_text(section)
    run_page(page, work)
    assert (work / "summary.json").is_file() and (work / "pyproject.toml").is_file()


def test_readme_commands_table_and_ci_job_run(tmp_path):
    work = _workdir(tmp_path)
    env = shim(work)
    text = README.read_text(encoding="utf-8")
    commands = re.findall(r"^\| `\w+` \| [^|]+ \| `(uqeval [^`]+)` \|$", _section(text, "Commands"), re.M)
    from uqeval.cli import COMMANDS

    assert len(commands) == len(COMMANDS), commands  # one example per command
    failing = [c for c in commands if c.startswith("uqeval check ")]  # the sample fails two rules, as it says
    assert len(failing) == 1
    run_bash(f"rc=0; {failing[0]} || rc=$?; test $rc -eq 1", work, env, "README check example (exit 1)")
    passing = ["uqeval score sample_data/gaussian.parquet", *(c for c in commands if c not in failing)]
    run_bash("\n".join(passing), work, env, "README commands")
    assert (work / "report.html").is_file() and (work / "calibration.png").is_file()
    # the CI job: baseline, rules file, then the job's check command on the predictions
    ci = _section(text, "CI gate")
    (work / "ci").mkdir()
    for _, attrs, code in blocks(README):
        if 'title="ci/rules.toml"' in attrs:
            (work / "ci" / "rules.toml").write_text(code)
    job = next(code for lang, _, code in blocks(README) if lang == "yaml" and code in ci)
    check = re.search(r"run: >-\n\s+(uqeval check .*?)(?=\n\s+- )", job, re.S).group(1)
    check = " ".join(check.split())
    rng = np.random.default_rng(1)  # a calibrated model, which passes the README's rules
    mean, std = rng.normal(size=4000), rng.uniform(0.5, 2.0, size=4000)
    pq.write_table(
        pa.table({"y": mean + std * rng.normal(size=4000), "mean": mean, "std": std}), work / "preds.parquet"
    )
    run_bash(f"uqeval score preds.parquet --output ci/baseline.json\n{check}", work, env, "README CI job")
    assert "PASS" in (work / "uqeval-check.md").read_text() and (work / "uqeval-junit.xml").is_file()


def test_every_command_has_a_docs_page_and_a_readme_row():
    # issue 40: a command added to the command line is added to the site and the README too
    from uqeval.cli import COMMANDS

    rows = re.findall(r"^\| `(\w+)` \| ", _section(README.read_text(encoding="utf-8"), "Commands"), re.M)
    assert rows == list(dict.fromkeys(rows)) and set(rows) == set(COMMANDS), rows
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for name in COMMANDS:
        page = ROOT / "docs" / "commands" / f"{name}.md"
        assert page.is_file(), f"no page docs/commands/{name}.md"
        assert f"`uqeval {name}`" in page.read_text(encoding="utf-8").splitlines()[0], name
        assert f"- {name}: commands/{name}.md" in mkdocs, (
            f"docs/commands/{name}.md is not in mkdocs.yml's nav"
        )


def test_the_build_backend_leaves_nothing_in_the_tree():
    # issue 40: `pip install .` with setuptools left a build/ copy of the package and uqeval.egg-info in the
    # checkout; hatchling builds the wheel from the tree (.ci/wheel_smoke.sh checks a real build)
    from uqeval.strict import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["build-system"]["build-backend"] == "hatchling.build"
    assert "setuptools" not in project.get("tool", {})
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["uqeval"]
    assert "-n auto" in project["tool"]["pytest"]["ini_options"]["addopts"]  # the suite on every core
