"""Bad input on the ADK target gets one line and exit 3, before any trial.

An App with resumability off cannot resume a paused invocation in another process; a factory that
does not build is the team's to fix; a Postgres session database that refuses the run's DSN is
named with the fix. No run folder is written.
"""

from __future__ import annotations

import pytest
from kits.robustkit import one_line
from typer.testing import CliRunner

from chaos.cli.app import app


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("adk")


APP = """
from chaos.workloads.adk import ADKWorkload, app_of, effect_tool

def not_resumable(ctx):
    return ADKWorkload(app=app_of("x", ["a"], [effect_tool(ctx, "a")], resumable=False), tasks={"a": "a"})

def broken(ctx):
    raise RuntimeError("no model named gemini-9")
"""


def _run(tmp_path, monkeypatch, workload: str, backend: str = "sqlite"):
    (tmp_path / "adk_bad_app.py").write_text(APP)
    path = tmp_path / "scenario.yaml"
    path.write_text(
        f"name: adk_bad\nkind: kill_sweep\ntarget: {{framework: adk, backend: {backend}}}\n"
        f"workload: {workload}\nresume: none\ntrials: 1\nseed: 1\ntimeout_s: 60\n"
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "out"), "-q"])
    assert result.exit_code == 3, result.output
    assert not any((tmp_path / "out").rglob("run.json"))
    line = one_line(result.stderr)
    assert line.startswith("chaos: error: "), line
    return line


def test_an_app_with_resumability_off_is_refused_naming_the_fix(tmp_path, monkeypatch):
    line = _run(tmp_path, monkeypatch, "adk_bad_app:not_resumable")
    assert "resumability off" in line and "ResumabilityConfig(is_resumable=True)" in line, line


def test_a_factory_that_does_not_build_is_refused_with_its_error(tmp_path, monkeypatch):
    line = _run(tmp_path, monkeypatch, "adk_bad_app:broken")
    assert "no model named gemini-9" in line, line


def test_a_postgres_session_database_that_refuses_the_dsn_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAOS_PG_DSN", "postgresql://chaos:wrong-password@127.0.0.1:1/chaos")
    line = _run(tmp_path, monkeypatch, "three_step", backend="postgres")
    assert "Postgres" in line and "CHAOS_PG_DSN" in line, line
