"""DBOS Transact (3.4.0) under real SIGKILLs, with its system database on SQLite and on Postgres.

What a DBOS user sees, as its docs promise it: a workflow recovered by a fresh process resumes from
its last completed step; a step killed after its effect and before its output was checkpointed runs
again (the documented "may run more than once", measured here as EO violated at exactly those
points, with the ledger rows); a step whose output was checkpointed never runs again (PC holds
everywhere); a kill before the workflow's first row leaves nothing to recover (vacuous, not a
verdict); an approval answered by ``DBOS.send`` fires the gated step once however the answer's
rows are crashed; and three processes recovering and answering one PENDING workflow at once make
one recovery and one run of it (CO holds, with the recovery count per trial). With DBOS's queue
polled faster than its launches are apart, a second run may start (docs/contract.md, DBOS: one
executor id, two runs): the runs a race reports are the dispatches DBOS counted on the row.
"""

from __future__ import annotations

import os

import pytest
from kits import framework_support as look
from kits.runs import run_text

from chaos.running.journal import read_journal


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("dbos")


def _records(run_dir) -> list[dict]:
    """Every record the run journaled."""
    return [d.get("record") or d for d in read_journal(run_dir / "journal.jsonl")[0]]


def _per_racer(run_dir) -> dict[str, list[dict]]:
    """Each race trial's per-racer records (with the adapter's ``facts``), from the run's journal."""
    out: dict[str, list[dict]] = {}
    for rec in _records(run_dir):
        per = (rec.get("observations") or {}).get("per_racer")
        if per:
            out[rec["trial_id"]] = per
    return out


def test_a_step_killed_before_its_output_is_checkpointed_runs_again_and_a_checkpointed_one_never(tmp_path):
    results = run_text(
        tmp_path,
        """
name: dbos_sweep
kind: kill_sweep
target: {framework: dbos, backend: sqlite}
workload: three_step
resume: none
trials: 1
seed: 7
timeout_s: 90
kill_points: ["status(PENDING)", "effect(task=b)", "step(name=b,n=2)", "status(SUCCESS):after"]
""",
    ).results
    c = look.cell(results)
    eo = look.verdict(c, "EO")
    assert eo.status == "violated"
    assert "effect(task=b):after#1" in eo.evidence.points and eo.evidence.ledger_seqs
    # after b's effect, and at the write of its output (not yet committed): b runs again on recovery
    assert look.point(c, "effect(task=b)").duplicates == ["b"]
    assert look.point(c, "step(name=b,n=2):before").duplicates == ["b"]
    # once b's output row is committed, recovery resumes after it: nothing runs twice, a and c once
    assert look.point_verdict(c, "step(name=b,n=2):after", "EO").status == "holds"
    assert look.point(c, "step(name=b,n=2):after").effect_counts == {"a": [1], "b": [1], "c": [1]}
    # no step durable at the kill ran again anywhere, and every recovery finished the workflow
    assert look.verdict(c, "PC").status == "holds"
    assert look.point_verdict(c, "effect(task=b)", "LIVENESS").status == "holds"
    # killed before the workflow's first row: DBOS has nothing to recover, which is no resume's fault
    first = look.point_verdict(c, "status(PENDING):before", "LIVENESS")
    assert first.status == "unknown" and "first write" in first.reason
    # killed after the SUCCESS row: nothing to resume, nothing runs
    assert look.point(c, "status(SUCCESS):after").effect_counts == {"a": [1], "b": [1], "c": [1]}
    assert results.exit_code == 1


def test_the_approval_sent_with_dbos_send_fires_the_gate_once_however_its_rows_are_crashed(tmp_path):
    results = run_text(
        tmp_path,
        """
name: dbos_gate
kind: kill_sweep
target: {framework: dbos, backend: sqlite}
workload: gate_after_interrupt
resume: "command:true"
trials: 1
seed: 8
timeout_s: 90
kill_points: ["recv_wait(topic=approve)", "send(topic=approve)", "recv(topic=approve)", "effect(task=gate)"]
""",
    ).results
    c = look.cell(results)
    for p in ("recv_wait(topic=approve):after", "send(topic=approve):after", "recv(topic=approve):before", "recv(topic=approve):after"):
        assert look.point_verdict(c, p, "EO").status == "holds", p
        assert look.point(c, p).effect_counts == {"end": [1], "gate:True": [1], "pre": [1]}, p
    # the gate step's own output was not yet checkpointed: it runs again (DBOS's documented at-least-once step)
    assert look.point(c, "effect(task=gate)").duplicates == ["gate:True"]
    assert look.verdict(c, "PC").status == "holds"
    assert look.verdict(c, "LIVENESS").status == "holds"


def _race(tmp_path, backend: str):
    out = run_text(
        tmp_path,
        f"""
name: dbos_race_{backend}
kind: race
target: {{framework: dbos, backend: {backend}}}
workload: gate_after_interrupt
resume: "command:true"
racers: {{k: 3}}
trials: 3
seed: 9
timeout_s: 90
""",
    )
    c = look.cell(out.results)
    assert look.verdict(c, "LIVENESS").status == "holds"
    per = _per_racer(out.run_dir)
    assert len(per) == 3
    twice = []
    for trial, racers in per.items():
        facts = [p["facts"] for p in racers]
        # three processes launched DBOS on the PENDING workflow; each run is one a recovery queued.
        # Launches within one queue check (1 s; the gate releases them within ~0.1 s) make that one
        # recovery and one run, but DBOS does not promise it: a launch after another racer's dequeue
        # re-queues the workflow (all share executor id "local") and a second process runs it
        # (docs/contract.md, the staggered race). So one run fires the gate once; two may fire it twice.
        runs = sum(f["runs"] for f in facts)
        assert runs == sum(f["recoveries"] for f in facts) >= 1, (trial, facts)
        if runs == 1:
            assert sum(p["fired"] for p in racers) == 1, (trial, racers)
        else:
            twice.append(trial)
    co = look.verdict(c, "CO")
    assert co.status == "holds" or (co.status == "violated" and twice), (co.reason, twice)


def test_three_processes_recovering_and_answering_one_pending_workflow_recover_it_once_sqlite(tmp_path):
    _race(tmp_path, "sqlite")


@pytest.mark.skipif(not os.environ.get("CHAOS_PG_DSN"), reason="needs CHAOS_PG_DSN")
def test_three_processes_recovering_and_answering_one_pending_workflow_recover_it_once_postgres(tmp_path):
    _race(tmp_path, "postgres")


@pytest.mark.skipif(not os.environ.get("CHAOS_PG_DSN"), reason="needs CHAOS_PG_DSN")
def test_a_connection_terminated_under_dbos_is_reconnected_and_the_workflow_finishes_durably(tmp_path):
    # fault: db_disconnect on DBOS's Postgres system database: at each point the victim stands stopped
    # while chaos terminates its own backends (found by the application_name chaos gives DBOS's engine);
    # DBOS's pool pings a connection before handing it out (pool_pre_ping), so it reconnects
    out = run_text(
        tmp_path,
        """
name: dbos_disconnect
kind: kill_sweep
target: {framework: dbos, backend: postgres}
workload: three_step
resume: none
fault: db_disconnect
trials: 1
seed: 10
timeout_s: 90
kill_points: ["step(name=b,n=2):before", "effect(task=b):after", "status(SUCCESS):before"]
""",
    )
    c = look.cell(out.results)
    cl = look.verdict(c, "CL")
    assert cl.status == "holds", cl.reason
    for p in ("step(name=b,n=2):before", "effect(task=b):after", "status(SUCCESS):before"):
        v = look.point_verdict(c, p, "CL")
        assert v.status == "holds" and "reconnected" in v.reason, (p, v.reason)
        # nothing killed: the victim ran on after the disconnect, every step once
        assert look.point(c, p).effect_counts == {"a": [1], "b": [1], "c": [1]}, p
    faults = []
    for rec in _records(out.run_dir):
        fault = (rec.get("observations") or {}).get("fault")
        if fault:
            faults.append(fault)
    assert len(faults) == 3 and all(f["terminated"] and f["application_name"].endswith("-victim") for f in faults), faults


RESTART = """
name: dbos_restart
kind: kill_sweep
target: {framework: dbos, backend: postgres}
workload: three_step
resume: none
fault: db_restart
crash_depth: 2
trials: 1
seed: 716
timeout_s: 90
kill_points: ["effect(task=b):after"]
recovery_kill_points: ["recover(enqueue):before"]
matrix:
  case:
    - {name: shipped}
    - {name: no-retry, workload_params: {wait_s: 5, retry_connection_errors: false}}
"""


def _restarts(run_dir) -> dict[str, dict]:
    """Each judged trial's ``observations.restart`` (what chaos did to the recovering racer's database)."""
    out = {}
    for rec in _records(run_dir):
        if (rec.get("observations") or {}).get("restart"):
            out[rec["trial_id"]] = rec["observations"]["restart"]
    return out


@pytest.mark.skipif(not os.environ.get("CHAOS_PG_DSN"), reason="needs CHAOS_PG_DSN")
def test_a_database_restart_during_recovery_is_survived_by_dbos_retries_and_strands_the_workflow_without_them(tmp_path):
    # dbos-transact-py 716: the victim is killed after b's effect; a fresh process launches and
    # recovers the PENDING workflow; as DBOS hands it back to its queue (recover(enqueue):before),
    # chaos restarts the database under that process (its connections cut, reconnects refused for 2 s)
    out = run_text(tmp_path, RESTART)
    by_case = {c.cell_id: c for c in out.results.cells}
    shipped = next(c for k, c in by_case.items() if "shipped" in k)
    bare = next(c for k, c in by_case.items() if "no-retry" in k)
    for c in (shipped, bare):  # the lost database is the measurement: no trial is an environment fault
        assert c.valid_trials == c.trials == 1, (c.cell_id, [p.resume_outcomes for p in c.points])
    restarts = _restarts(out.run_dir)
    assert len(restarts) == 2
    for r in restarts.values():
        assert r["fault"] == "db_restart" and r["racer"] == "resume" and r["point"].startswith("recover(enqueue):before")
        # down for the outage's 2 s: neither racer ends before (the shipped one retries until the
        # database is back, the other waits its wait_s); chaos's own reads never meet the outage
        assert r["cut"] >= 1 and r["refused"] >= 1 and r["down_s"] >= 2.0 and r["ended"] == "back after the outage", r
    # as shipped, DBOS retries a lost connection until the database is back (db_retry): the recovery
    # re-enqueues the workflow and it finishes
    assert look.verdict(shipped, "LIVENESS").status == "holds", look.verdict(shipped, "LIVENESS").reason
    live = look.point_verdict(shipped, "effect(task=b):after", "LIVENESS")
    assert live.status == "holds", live.reason
    assert "after a planned database restart during the recovery (at recover(enqueue):before" in live.reason, live.reason
    assert look.verdict(shipped, "PC").status == "holds"
    # with DBOS's retries off (its own SystemDatabase switch, as before dbos-transact-py 717), the
    # recovery's call fails, DBOS logs it and goes on: the workflow stays PENDING, named
    stuck = look.verdict(bare, "LIVENESS")
    assert stuck.status == "violated", stuck.reason
    (trial,) = stuck.evidence.trial_ids
    assert "after a planned database restart during the recovery" in stuck.reason, stuck.reason
    assert "is PENDING in the system database" in stuck.reason and f"-{trial} is PENDING" in stuck.reason, stuck.reason
    assert "the framework logged its recovery's error and went on: OperationalError" in stuck.reason, stuck.reason
    # nothing ran again or was lost: the recovery never ran the workflow
    assert look.verdict(bare, "EO").status == "holds" and look.verdict(bare, "PC").status == "holds"


@pytest.mark.skipif(not os.environ.get("CHAOS_PG_DSN"), reason="needs CHAOS_PG_DSN")
def test_a_database_lost_under_the_recovery_without_a_planned_fault_leaves_the_point_unknown_not_violated(tmp_path, repo, monkeypatch):
    # the same recovery as above, but nothing chaos planned: the team's own step c, run by the
    # recovering process, points DBOS at a database that is gone for good (tests/workloads/dbos_outage.py).
    # DBOS raises nothing (it logs and retries every write, and its threads keep the process alive
    # at exit); the workflow never ends. That is the environment's fault: unknown, never LIVENESS violated
    monkeypatch.chdir(repo)  # the workload is named from the repository root
    out = run_text(
        tmp_path,
        """
name: dbos_unplanned
kind: kill_sweep
target: {framework: dbos, backend: postgres}
workload: tests.workloads.dbos_outage:three_step
workload_params: {wait_s: 3}
resume: none
trials: 1
seed: 716
timeout_s: 30
env_retries: 0
kill_points: ["step(name=outage_b,n=2):after"]
""",
    )
    c = look.cell(out.results)
    assert c.failure is None and c.trials == 1 and c.valid_trials == 0
    for prop in ("EO", "PC", "LIVENESS"):
        v = look.verdict(c, prop)
        assert v.status == "unknown", (prop, v.reason)
    live = look.point_verdict(c, "step(name=outage_b,n=2):after", "LIVENESS")
    assert "racer resume: environment fault: database connection lost: the framework retried" in live.reason, live.reason
    assert "planned" not in live.reason


def test_the_runs_a_race_reports_are_the_dispatches_dbos_counted_on_the_workflow(tmp_path):
    # DBOS's queue polled every 50 ms: a recoverer that launches after another has dequeued the
    # workflow may re-enqueue it (every racer has the executor id "local") and a second run starts
    # (docs/contract.md, DBOS: one executor id, two runs). Whether it happens is timing; what holds in
    # every trial is that the runs chaos reports are the dispatches DBOS itself counted on the row
    # (recovery_attempts: 1 for the parked run's start, 1 more per dequeue), and the workflow ends
    import sqlite3

    out = run_text(
        tmp_path,
        """
name: dbos_race_fast_queue
kind: race
target: {framework: dbos, backend: sqlite}
workload: gate_after_interrupt
resume: "command:true"
racers: {k: 3}
workload_params: {queue_poll_s: 0.05}
trials: 4
seed: 11
timeout_s: 90
""",
        keep_work=True,
    )
    c = look.cell(out.results)
    assert look.verdict(c, "LIVENESS").status == "holds"
    per = _per_racer(out.run_dir)
    assert len(per) == 4
    for trial, racers in per.items():
        runs = sum((p["facts"] or {}).get("runs", 0) for p in racers)
        recoveries = sum((p["facts"] or {}).get("recoveries", 0) for p in racers)
        (db,) = (out.run_dir / "work" / trial).glob("*.dbos.sqlite")
        with sqlite3.connect(db) as conn:
            status, attempts = conn.execute("SELECT status, recovery_attempts FROM workflow_status").fetchone()
        assert status == "SUCCESS", (trial, status)
        assert runs == attempts - 1, (trial, runs, attempts, racers)
        assert 1 <= runs == recoveries, (trial, runs, recoveries)
