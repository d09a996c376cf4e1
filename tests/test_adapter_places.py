"""CONTRIBUTING's "Adding a framework adapter" lists the places outside the adapter's own files
that a new framework needs today; every adapter chaos ships is in each of them, so a sixth one that
is missing from one fails here, naming the place and the symptom CONTRIBUTING gives for it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from chaos.kinds.approval import RECOVERY_CALLS
from chaos.running.blame import FRAMEWORK_PACKAGES
from chaos.running.shard import FRAMEWORK_S
from chaos.targets import TARGETS

ROOT = Path(__file__).resolve().parents[1]
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text()


def test_contributing_names_every_place_this_test_checks():
    section = CONTRIBUTING[CONTRIBUTING.index("## Adding a framework adapter") : CONTRIBUTING.index("## Adding a launcher")]
    for place in (
        "FRAMEWORK_PACKAGES",
        "FRAMEWORK_S",
        "RECOVERY_CALLS",
        "tool.mypy.overrides",
        "contract_<framework>.yaml",
        "compare_results.py",
        ".ci/envs.sh",
    ):
        assert place in section, place


@pytest.mark.parametrize("framework", sorted(TARGETS))
def test_every_shipped_adapter_is_in_every_place(framework):
    info = TARGETS[framework]
    assert info.import_name.split(".")[0] in FRAMEWORK_PACKAGES[framework], "running/blame.py FRAMEWORK_PACKAGES"
    assert framework in FRAMEWORK_S, "running/shard.py FRAMEWORK_S"
    if info.supports("AA") is None:
        assert framework in RECOVERY_CALLS, "kinds/approval.py RECOVERY_CALLS"
    assert (ROOT / "scenarios" / f"contract_{framework}.yaml").is_file()
    compare = (ROOT / "scripts" / "compare_results.py").read_text()
    assert f"contract_{framework}.yaml" in compare or f'"{framework}"' in compare, "scripts/compare_results.py"
    assert framework in (ROOT / ".ci" / "envs.sh").read_text(), ".ci/envs.sh specs"
    if framework != "langgraph":  # LangGraph is installed in the orchestrator's own environment
        overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["overrides"]
        ignored = {m for o in overrides if o.get("ignore_missing_imports") for m in o["module"]}
        assert any(m.split(".")[0] in FRAMEWORK_PACKAGES[framework] for m in ignored), "pyproject.toml mypy overrides"
