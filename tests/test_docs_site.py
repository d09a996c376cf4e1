"""A newcomer can walk the docs (issue 35): the README is an overview of at most 250 lines whose
set-up commands are the ones the guides and CI run, its links lead to files that exist, and the
documentation site builds from docs/ with mkdocs in strict mode, where a broken link fails the build.
The site checks skip, saying so, where mkdocs is not installed (`pip install -e '.[docs]'`)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)

needs_mkdocs = pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
    reason="mkdocs and mkdocs-material are not installed: pip install -e '.[docs]'",
)


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )


def _setup_commands(markdown: str) -> list[str]:
    """The lines of the first shell block: the set-up commands."""
    return SH_BLOCK.findall(markdown)[0].strip().splitlines()


def test_the_readme_is_an_overview_whose_two_commands_are_the_guides_and_cis():
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    commands = _setup_commands(text)
    assert commands == [
        "python -m pip install -e '.[test]' && chaos run scenarios/consume_once_k4.yaml",
        "python -m pytest",
    ]
    assert _setup_commands((ROOT / "docs" / "getting-started.md").read_text()) == commands
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[1] in ci, ".ci/run no longer runs the README's test command"


def test_every_link_of_the_readme_leads_to_a_file_that_exists():
    targets = [t for t in LINK.findall(README.read_text()) if "://" not in t and not t.startswith("#")]
    assert any(t.startswith("docs/") for t in targets), "the README points into docs/"
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


@needs_mkdocs
def test_the_site_builds_strictly_with_every_guide(tmp_path):
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    for page in ("getting-started", "frameworks/langgraph", "frameworks/dbos", "contract", "operations/shards"):
        assert (tmp_path / "site" / page / "index.html").is_file(), page
    assert "Testing your own graph" in (tmp_path / "site" / "frameworks" / "langgraph" / "index.html").read_text()


@needs_mkdocs
def test_a_link_to_an_anchor_that_does_not_exist_fails_the_build(tmp_path):
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    with (tmp_path / "docs" / "getting-started.md").open("a") as page:
        page.write("\nSee [the contract](contract.md#a-section-nobody-wrote).\n")
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "a-section-nobody-wrote" in done.stderr
