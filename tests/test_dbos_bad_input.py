"""Bad input on the DBOS target gets one line and exit 3, before any trial.

A team's factory that returns a workflow DBOS never registered (a plain function, not a
``@DBOS.workflow``) cannot be recovered by a fresh process: the preflight racer refuses it, naming
the function and the fix, and no run folder is written.
"""

from __future__ import annotations

import pytest
from kits.robustkit import one_line
from typer.testing import CliRunner

from chaos.cli.app import app


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("dbos")


APP = """
from chaos.workloads.dbos import DBOSWorkload


def pay_later(amount):
    return amount


def build(ctx):
    return DBOSWorkload(workflow=pay_later, args=(1,), steps={}, topic=None)
"""

SCENARIO = """
name: dbos_unregistered
kind: kill_sweep
target: {framework: dbos, backend: sqlite}
workload: dbos_unregistered_app:build
resume: none
trials: 1
seed: 1
timeout_s: 60
"""


def test_a_workflow_dbos_never_registered_is_refused_in_one_line(tmp_path, monkeypatch):
    (tmp_path / "dbos_unregistered_app.py").write_text(APP)
    path = tmp_path / "scenario.yaml"
    path.write_text(SCENARIO)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 3, result.output
    line = one_line(result.stderr)
    assert line.startswith("chaos: error: "), line
    assert "pay_later is not a registered DBOS workflow" in line and "@DBOS.workflow" in line, line
    assert not any((tmp_path / "out").rglob("run.json"))
