"""A user lists framework releases as a matrix axis; each runs in its own environment, and the report
names the versions the racers actually ran."""

from __future__ import annotations

import json

import pytest
from kits.runs import run_text

from chaos.envs import env_root, python_for

VERSIONS = """\
name: fork_versions_small
kind: fork
target: {framework: langgraph, backend: sqlite}
workload: gate_after_interrupt
resume: "command:approve"
trials: 1
seed: 6663
matrix:
  version: ["1.0.10"]
"""


@pytest.mark.slow
def test_an_older_release_runs_in_its_own_environment_and_is_named_per_cell(tmp_path):
    python = python_for("langgraph", "1.0.10")  # built once (.ci/envs.sh), then cached
    assert python.startswith(str(env_root()))
    out = run_text(tmp_path, VERSIONS)
    (cell,) = out.results.cells
    assert cell.version == "1.0.10" and cell.versions["langgraph"] == "1.0.10"
    meta = json.loads((out.run_dir / "run.json").read_text())
    assert meta["cell_versions"]["version=1.0.10"] == {"asked": "1.0.10", "ran": cell.versions}
    assert "| version=1.0.10 | 1.0.10 | langgraph 1.0.10" in (out.run_dir / "report.md").read_text()
    # issue 6663 is already there in 1.0.10
    assert next(v for v in cell.verdicts if v.property == "FD").status == "violated"
