"""A database connection lost under the saver (issue 26 item 5; LangGraph 5675, 7304, 8419).

What the user sees: with ``fault: db_disconnect`` a sweep does not kill the racer at a kill point;
it terminates that racer's own saver connection (its ``application_name``, no other session) and
lets it run on. CL then says whether the saver reconnected and the write is durable, the call
failed loudly, or the write was lost silently; the lost connection is the measurement, never an
environment fault that makes the trial unknown. A backend with no connection is refused at load.
With ``fault: db_restart`` the database is restarted under a recovery instead (connections cut,
reconnects refused); LangGraph's saver fails loudly there, and LIVENESS says the restart was
planned. A restart with no database, or no recovery to restart it under, is refused at load.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from kits.runs import run_text, write_scenario

SWEEP = """\
name: disconnect
kind: kill_sweep
target: {{framework: langgraph, backend: {backend}, durability: sync}}
workload: {workload}
resume: none
fault: db_disconnect
trials: 1
kill_points: {points}
seed: 26
"""


def _sweep(tmp_path, backend: str, workload: str, points: list[str]):
    out = run_text(tmp_path, SWEEP.format(backend=backend, workload=workload, points=points))
    (cell,) = out.results.cells
    assert cell.failure is None, cell.failure
    return cell, {v.property: v for v in cell.verdicts}


@pytest.mark.parametrize("backend", ["postgres", "postgres_async", "postgres_pool"])
def test_a_lost_connection_fails_loudly_in_langgraphs_postgres_savers(tmp_path, repo, monkeypatch, pg_dsn, backend):
    import psycopg

    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    bystander = psycopg.connect(pg_dsn, autocommit=True, application_name="not-a-racer")  # another helper's session
    try:
        cell, v = _sweep(tmp_path, backend, "three_step", ["put(step=1,source=loop):before", "put(step=3,source=loop):after"])
        assert bystander.execute("SELECT 1").fetchone() == (1,)  # chaos terminated the racer's connection only
    finally:
        bystander.close()
    assert cell.valid_trials == cell.trials == 2  # the lost connection is evidence, not an environment fault
    by_point = {p.point.split("#")[0]: {x.property: x for x in p.verdicts} for p in cell.points}
    loud = by_point["put(step=1,source=loop):before"]["CL"]
    assert loud.status == "holds" and "failed loudly (OperationalError" in loud.reason, loud
    last = by_point["put(step=3,source=loop):after"]["CL"]  # the run was saved already: nothing at stake
    assert last.status == "unknown" and last.vacuous and "no saver call after" in last.reason, last
    assert v["CL"].status == "holds" and "1 vacuous" in v["CL"].reason, v["CL"]
    # the fresh process then resumes what was durable, as after a kill
    assert v["LIVENESS"].status == "holds" and v["PC"].status == "holds"


def test_a_saver_that_swallows_the_failed_write_loses_it_silently(tmp_path, repo, monkeypatch, pg_dsn):
    monkeypatch.chdir(repo)  # the workload is named from the repository root
    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    cell, v = _sweep(tmp_path, "postgres", "tests.workloads.lossy_saver:swallowing_three_step", ["put(step=1,source=loop):before"])
    cl = v["CL"]
    assert cl.status == "violated", cl
    assert "lost silently: the racer finished (done) with no error, yet the store holds 2 of 5 checkpoints" in cl.reason, cl
    assert cl.evidence.trial_ids == [cell.points[0].verdicts[0].evidence.trial_ids[0]] == ["c000-p000-r000"]
    # the resume then re-runs what the store lost, as a crash would: which steps (b alone, or a, b
    # and c) depends on which of the swallowed writes LangGraph's background thread had sent
    eo = v["EO"]
    assert eo.status == "violated" and "duplicated" in eo.reason and "b" in eo.reason.split("duplicated", 1)[1], eo


def test_a_fault_on_a_backend_with_no_connection_is_refused_in_one_line(tmp_path, repo):
    path = write_scenario(tmp_path, SWEEP.format(backend="sqlite", workload="three_step", points=[]))
    p = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=repo
    )
    assert p.returncode == 3, p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and "scenario.yaml" in line and "db_disconnect" in line and "backend 'sqlite' has none" in line, line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("results.json"))


RESTART = """\
name: restart
kind: kill_sweep
target: {{framework: dbos, backend: {backend}}}
workload: three_step
resume: none
fault: db_restart
crash_depth: {depth}
seed: 716
"""


@pytest.mark.parametrize(
    ("backend", "depth", "says"),
    [
        ("sqlite", 2, "fault 'db_restart' restarts the database under a recovering racer: backend 'sqlite' has none"),
        ("postgres", 1, "fault 'db_restart' restarts the database during the recovery of a kill: set crash_depth: 2"),
    ],
)
def test_a_restart_with_no_database_or_no_recovery_to_restart_it_under_is_refused_in_one_line(tmp_path, repo, backend, depth, says):
    path = write_scenario(tmp_path, RESTART.format(backend=backend, depth=depth))
    p = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(path), "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=repo
    )
    assert p.returncode == 3, p.stderr
    line = p.stderr.strip()
    assert "\n" not in line and "scenario.yaml" in line and says in line, line


def test_a_database_restarted_under_a_langgraph_recovery_makes_it_fail_loudly_and_the_reason_says_it_was_planned(
    tmp_path, repo, monkeypatch, pg_dsn
):
    # fault: db_restart is no DBOS special: killed after the first step's checkpoint, the recovering
    # racer's database is restarted as it saves step 2 (its connections cut, reconnects refused).
    # PostgresSaver's one connection does not reconnect: the recovery raises, LIVENESS names both
    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    out = run_text(
        tmp_path,
        """
name: lg_restart
kind: kill_sweep
target: {framework: langgraph, backend: postgres, durability: sync}
workload: three_step
resume: none
fault: db_restart
crash_depth: 2
trials: 1
seed: 716
kill_points: ["put(step=1,source=loop):after"]
recovery_kill_points: ["put(step=2,source=loop):before"]
""",
    )
    (cell,) = out.results.cells
    assert cell.failure is None and cell.valid_trials == cell.trials == 1  # the lost database is evidence
    (point,) = cell.points
    live = next(v for v in point.verdicts if v.property == "LIVENESS")
    assert live.status == "violated", live.reason
    assert "after a planned database restart during the recovery (at put(step=2,source=loop):before" in live.reason, live.reason
    assert "the recovery failed loudly: OperationalError" in live.reason, live.reason
