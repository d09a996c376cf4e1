"""Whose fault it was: only the framework's failures become verdicts.

A user's node that raises is an app error (the trial is unknown, exit 2 with the reason), never
LIVENESS violated, also when what it raises is a ``BaseException`` that is not an ``Exception``
(pydantic-core's ``PanicException`` is one): the racer still writes its result, and the error is
the app's, not chaos's. A racer whose thread died of an exception and that then exited without a
result is blamed on whoever owned that thread, with the thread's error as the evidence: the
user's here, the framework's for CrewAI's checkpoint listener; only chaos's own threads leave it a
harness error. A racer killed by a signal chaos did not send makes its trial unknown (an
environment fault, repeated within ``env_retries``), never valid. A workflow left unfinished while
the framework logged and retried failed database connections (DBOS raises nothing when its
database goes away) is the environment's fault too when chaos did not plan the outage: unknown,
never LIVENESS violated (a planned one, ``fault: db_restart``, is judged: test_target_dbos.py).
Real LangGraph, real racers, real SIGKILLs.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.kinds.checking import trial_class
from chaos.racer.main import BackgroundErrors
from chaos.running.blame import blame_after_background, blame_stalled
from chaos.running.stored import StoredTrials

WORKLOADS = Path(__file__).parent / "workloads"


def _journal(out):
    return list(StoredTrials(out.run_dir / "journal.jsonl"))


def _raw_results(out) -> dict:
    """Each racer's full result file of the run's first trial, by racer id, as journaled (the records
    read back keep only its scalar fields)."""
    first = json.loads((out.run_dir / "journal.jsonl").read_text().splitlines()[0])
    return {o["racer_id"]: o["result"] for o in first["racers"]}


def test_a_typeerror_in_the_users_node_is_an_app_error_not_a_liveness_violation(tmp_path):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    out = run_text(
        tmp_path,
        """\
        name: mine
        kind: race
        target: {durability: sync}  # a user's workload runs with LangGraph's default durability unless pinned: these assertions were made under sync
        workload: user_workloads:approval_reads_amount
        resume: "command:approve"
        distinct_values: true
        racers: {k: 2}
        trials: 2
        seed: 3
    """,
    )
    res = out.results
    assert res.exit_code == 2  # unknown with the reason, not 1: the framework did nothing wrong
    assert not res.violations()
    (cell,) = res.cells
    liveness = next(v for v in cell.verdicts if v.property == "LIVENESS")
    assert liveness.status == "unknown"
    assert res.summary.app_error == 2 and res.summary.valid == 0
    records = _journal(out)
    assert [trial_class(r) for r in records] == ["app_error", "app_error"]
    for r in records:
        assert r.fault == "app" and not r.valid
        assert "app error: TypeError in user_workloads.py:" in (r.invalid_reason or "")
        assert "(gate)" in (r.invalid_reason or "")  # the node that raised
        blamed = [o for o in r.racers if o.blame == "app"]
        assert len(blamed) == 2  # both racers' resumes raised in the user's node
    assert "app error: TypeError" in liveness.reason
    # the journal keeps the user's traceback, pointing at the line that raised
    raw = [json.loads(line) for line in (out.run_dir / "journal.jsonl").read_text().splitlines()]
    error = next(o for o in raw[0]["racers"] if o["blame"] == "app")["result"]["outcomes"][-1]["error"]
    assert 'answer["amount"]' in error["traceback"]
    # and the console summary (cell.app_errors) and report.md show where, with the traceback
    assert cell.app_errors and cell.app_errors[0].startswith("app error: TypeError in user_workloads.py:")
    assert 'answer["amount"]' in cell.app_errors[0]
    report = (out.run_dir / "report.md").read_text()
    assert "## App errors" in report and 'answer["amount"]' in report


def test_a_racer_killed_by_someone_else_after_the_gate_makes_its_trial_unknown(tmp_path):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    out = run_text(
        tmp_path,
        """\
        name: mine
        kind: race
        target: {durability: sync}  # a user's workload runs with LangGraph's default durability unless pinned: these assertions were made under sync
        workload: user_workloads:approval_dies
        resume: "command:yes"
        distinct_values: true
        racers: {k: 2}
        trials: 2
        env_retries: 1
        seed: 3
    """,
    )
    res = out.results
    records = _journal(out)
    # every attempt loses the racer that runs the node to a SIGKILL chaos did not send (whichever
    # reads the pending interrupt first; a racer that reads it answered runs nothing): environment,
    # repeated once, never valid
    assert [r.trial_id for r in records] == ["c000-t0000", "c000-t0000-e1", "c000-t0001", "c000-t0001-e1"]
    assert all(r.fault == "environment" and not r.valid for r in records)
    assert all("killed by signal 9, not by chaos" in (r.invalid_reason or "") for r in records)
    assert [r.retry_of for r in records] == [None, "c000-t0000", None, "c000-t0001"]
    assert res.summary.environment == 4 and res.summary.retried == 2 and res.summary.valid == 0
    (cell,) = res.cells
    assert {v.property: v.status for v in cell.verdicts} == {"CO": "unknown", "LIVENESS": "unknown", "LC": "unknown"}
    assert res.exit_code == 2


RACE_OF = """\
    name: mine
    kind: race
    target: {{durability: sync}}
    workload: user_workloads:{workload}
    resume: "command:approve"
    distinct_values: true
    racers: {{k: 2}}
    trials: 1
    seed: 3
"""


def test_a_base_exception_in_the_users_node_is_an_app_error_and_the_racer_still_reports(tmp_path):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    out = run_text(tmp_path, RACE_OF.format(workload="approval_panics"))
    res = out.results
    (r,) = _journal(out)
    # both resumes raised NodePanic (a BaseException) in the user's node: an app error, not chaos's
    assert trial_class(r) == "app_error" and r.fault == "app" and not r.valid
    assert "app error: NodePanic in user_workloads.py:" in (r.invalid_reason or "") and "(gate)" in (r.invalid_reason or "")
    resumes = [o for o in r.racers if o.role == "resume"]
    assert [o.blame for o in resumes] == ["app", "app"]
    results = _raw_results(out)
    for o in resumes:
        # each racer wrote its result: the action's outcome is the error, with the user's traceback
        assert o.status == "ok" and o.result is not None, o
        err = results[o.racer_id]["outcomes"][-1]["error"]
        assert err["type"] == "NodePanic" and "cannot handle 'approve#r" in err["message"]
        assert "raise NodePanic" in (o.blame_traceback or "")
    assert res.summary.app_error == 1 and res.summary.errored == 0
    assert res.exit_code == 2 and not res.violations()


def test_a_racer_that_exits_without_a_result_after_its_thread_died_is_blamed_on_the_threads_owner(tmp_path):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    out = run_text(tmp_path, RACE_OF.format(workload="approval_thread_dies"))
    (r,) = _journal(out)
    r0, r1 = (next(o for o in r.racers if o.racer_id == rid) for rid in ("r0", "r1"))
    # r0's helper thread died, and r0 went on: its result records the thread's death
    assert r0.status == "ok" and r0.blame is None
    (died,) = _raw_results(out)["r0"]["background_errors"]
    assert died["thread"] == "user-saver" and died["type"] == "RuntimeError"
    assert "dictionary changed size during iteration" in died["message"] and died["frames"][-1]["func"] == "helper"
    # r1's died too, then r1 exited with no result: the user's thread is the evidence, chaos is not blamed
    assert r1.status == "crashed" and r1.result is None and r1.exit_code == 70
    assert r1.blame == "app", r1.blame_reason
    assert "app error: RuntimeError in user_workloads.py:" in (r1.blame_reason or "") and "(helper)" in (r1.blame_reason or "")
    assert "background thread 'user-saver'" in (r1.blame_reason or "") and "then racer r1 exited" in (r1.blame_reason or "")
    assert "dictionary changed size" in (r1.blame_traceback or "")
    assert trial_class(r) == "app_error" and r.fault == "app" and not r.valid
    assert out.results.summary.errored == 0


def _died_in(module: str, thread: str) -> dict:
    """What a racer records (``chaos.racer.main.BackgroundErrors``) when a thread running code of
    ``module`` dies of an exception: a save that iterates a dict another thread changes."""
    code = compile(
        "def save(state):\n    for k in state:\n        state[k + 'x'] = 1\n", f"/site-packages/{module.replace('.', '/')}.py", "exec"
    )
    scope: dict = {"__name__": module}
    exec(code, scope)
    with BackgroundErrors(None) as background:
        t = threading.Thread(target=scope["save"], args=({"a": 1},), name=thread)
        t.start()
        t.join()
    (died,) = background.errors
    return dict(died)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the threads die on purpose
def test_a_frameworks_thread_that_died_before_the_racer_did_is_the_frameworks_fault_and_chaoss_own_stays_chaoss():
    then = "racer r0 exited (code 70) without a result"
    listener = _died_in("crewai.state.checkpoint_listener", "CrewAISyncHandler_0")
    b = blame_after_background([listener], "crewai", "gate_after_interrupt", then)
    assert b is not None and b.party == "framework" and b.fault is None
    assert b.reason.startswith("framework error: RuntimeError: dictionary changed size during iteration")
    assert "'CrewAISyncHandler_0'" in b.reason and b.reason.endswith(then)
    # a thread of chaos's own machinery is no evidence against anyone else: the failure stays the harness's
    ours = _died_in("chaos.racer.barrier", "barrier-watch")
    assert blame_after_background([ours], "crewai", "gate_after_interrupt", then) is None
    assert blame_after_background([ours, listener], "crewai", "gate_after_interrupt", then).party == "framework"
    assert blame_after_background([], "crewai", "gate_after_interrupt", then) is None


def test_a_workflow_left_unfinished_by_an_unplanned_database_outage_is_the_environments_fault_not_a_verdict():
    # what the DBOS adapter reports when its workflow neither ended nor waited within wait_s while
    # DBOS's db_retry logged failed connections (chaos.targets.dbos.session: DBOSLog), outside any planned fault
    retried = "Database connection failed: (psycopg.OperationalError) connection failed: Connection refused. Retrying in 1.02s (attempt 1)"
    stalled = {"status": "done", "stalled": True, "workflow_status": "PENDING", "waited_s": 20.0, "connection_errors": [retried] * 3}
    b = blame_stalled(stalled)
    assert b is not None and b.party == "environment" and b.fault == "environment"
    assert b.reason.startswith("environment fault: database connection lost: the framework retried 3 failed connection(s)")
    assert "Connection refused" in b.reason
    # a stall with no lost connection is the framework's (LIVENESS judges it); a finished run is no failure
    assert blame_stalled({**stalled, "connection_errors": []}) is None
    assert blame_stalled({"status": "done", "connection_errors": [retried]}) is None
