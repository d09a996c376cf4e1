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


def _run(tmp_path, monkeypatch, text: str, name: str = "scenario.yaml"):
    path = tmp_path / name
    path.write_text(text)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 3, result.output
    line = one_line(result.stderr)
    assert line.startswith("chaos: error: "), line
    assert not any((tmp_path / "out").rglob("run.json"))
    return line


BUILTIN = """
name: dbos_bad
kind: kill_sweep
target: {{framework: dbos, backend: {backend}}}
workload: three_step
workload_params: {params}
resume: none
trials: 1
seed: 1
timeout_s: 60
kill_points: ["step(name=b,n=2)"]
"""


def test_an_executor_id_beside_recover_by_resume_workflow_is_refused_before_any_trial(tmp_path, monkeypatch):
    # before: every racer raised the clash, a run of errored trials; now the adapter's preflight refuses it
    params = "{executor_id: e1, recover_by: resume_workflow}"
    line = _run(tmp_path, monkeypatch, BUILTIN.format(backend="sqlite", params=params))
    assert "executor_id 'e1' clashes with recover_by: resume_workflow" in line and "drop one" in line, line


def test_an_unknown_recover_by_is_refused_naming_the_forms(tmp_path, monkeypatch):
    line = _run(tmp_path, monkeypatch, BUILTIN.format(backend="sqlite", params="{recover_by: fork}"))
    assert "recover_by is 'fork'" in line and "launch, resume_workflow" in line, line


def test_a_postgres_system_database_that_refuses_dbos_is_refused_in_one_line(tmp_path, monkeypatch):
    # the DSN opened with DBOS's own driver (SQLAlchemy over psycopg); the password is not printed
    monkeypatch.setenv("CHAOS_PG_DSN", "postgresql://chaos:not-the-password@127.0.0.1:5432/chaos")
    line = _run(tmp_path, monkeypatch, BUILTIN.format(backend="postgres", params="{}"))
    assert "DBOS cannot open its Postgres system database at 127.0.0.1:5432/chaos" in line, line
    assert "not-the-password" not in line and "CHAOS_PG_DSN" in line, line


def test_an_unwritable_place_for_the_sqlite_system_database_is_refused_in_one_line(tmp_path, monkeypatch):
    # the SQLite system database lives in each trial's folder, under --out: a folder that cannot be made
    (tmp_path / "a-file").write_text("")
    (tmp_path / "scenario.yaml").write_text(BUILTIN.format(backend="sqlite", params="{}"))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "a-file" / "out"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "scenario.yaml"), "--out", str(out), "-q"])
    assert result.exit_code == 3, result.output
    line = one_line(result.stderr)
    assert line.startswith("chaos: error: ") and "cannot make the run folder" in line and "--out" in line, line


def test_a_dbos_environment_that_cannot_import_dbos_names_the_command_that_builds_it(tmp_path, monkeypatch):
    # a ready-marked environment whose dbos is gone (a real interpreter, without the framework)
    import subprocess
    import sys

    from chaos.envs import env_path
    from chaos.targets import get_target

    monkeypatch.setenv("CHAOS_ENV_DIR", str(tmp_path / "envs"))
    path = env_path("dbos", None, get_target("dbos").requirements())
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    (path / ".chaos-ready").write_text("{}")
    line = _run(tmp_path, monkeypatch, BUILTIN.format(backend="sqlite", params="{}"))
    assert "cannot import dbos" in line and "`bash .ci/envs.sh dbos`" in line, line


def test_a_dbos_environment_that_cannot_be_built_names_the_command_that_builds_it(tmp_path, monkeypatch):
    # no environment, and pip may not reach an index: the build fails before any trial
    monkeypatch.setenv("CHAOS_ENV_DIR", str(tmp_path / "envs"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    line = _run(tmp_path, monkeypatch, BUILTIN.format(backend="sqlite", params="{}"))
    assert "could not build the dbos" in line and "`bash .ci/envs.sh dbos`" in line, line
