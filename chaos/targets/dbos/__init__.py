"""DBOS Transact: workflows and steps durable in DBOS's system database.

``INFO`` is the light half (standard library only); ``session`` runs in racers; ``preflight`` before any trial.
"""

from __future__ import annotations

from chaos.targets import BRANCHES, OWN_APP_READS, TargetInfo

INFO = TargetInfo(
    framework="dbos",
    module="chaos.targets.dbos.session",
    about="DBOS Transact: @DBOS.workflow with @DBOS.step steps, durable in its system database (SQLite in the trial's folder, or Postgres); DBOS.recv as the approval pause",
    backends=("sqlite", "postgres"),
    workloads={
        "three_step": "@DBOS.workflow running @DBOS.step a, b, c, one effect each",
        "gate_after_interrupt": "step pre -> DBOS.recv('approve') (the pause) | DBOS.send(id, answer, 'approve') -> step gate (effect keyed by the answer) -> step end",
        "two_gates": "step pre -> recv | send -> step gate (keyed by the 1st answer) -> recv | send -> step gate2 (keyed by the 2nd) -> step end: two pauses, for answers plans",
        "upgrade_step_added": "upgrade pair: gate_after_interrupt as v1; v2 adds step audit after the approval (one source: the version is workload_params.application_version)",
        "upgrade_step_inserted": "upgrade pair: gate_after_interrupt as v1; v2 adds step check before the approval, where v1 recorded its recv",
    },
    kinds=("kill_sweep", "race", "stray_resume", "fork", "recovery_determinism", "upgrade"),
    properties=("EO", "PC", "LIVENESS", "CO", "AA", "DU", "CV", "FD", "FI", "RD", "CL", "UP"),
    distributions=("dbos",),
    boundaries=(
        "status(PENDING|SUCCESS|ERROR), step(name=X,n=N), recv_wait(topic=T), recv(topic=T), send(topic=T), set_event(key=K), "
        "recover(enqueue), resume_workflow, fork, each :before/:after (SystemDatabase writes, read from dbos 3.4.0); effect(task):after"
    ),
    unsupported={
        BRANCHES: "no parallel-branch workload for DBOS yet (steps of one workflow run one after another here)",
        "shared_state": "no shared-state agent workloads for DBOS yet",
        "first_checkpoint": "DBOS records a workflow before it accepts it: start_workflow commits its first row (PENDING, "
        "with its inputs: SystemDatabase.init_workflow, from _init_workflow in dbos/_core.py) before it runs the workflow or "
        "returns a handle, and DBOSClient.enqueue returns only after its ENQUEUED row committed (dbos/_client.py): there is "
        "no accepted-but-unrecorded window; the one point before it, status(PENDING):before, is in every sweep (vacuous: "
        "nothing accepted, nothing fired)",
        "FCL": "needs first_checkpoint",
        "invalid_state": "DBOS keeps no typed state to break: a step's output is stored as the step returned it (serialized), "
        "and recovery hands it back as recorded; DBOS validates only workflow inputs (pydantic, its validation extra), which "
        "these workloads do not declare",
        "failing_effect": "not measured yet: no DBOS workload with a step retry (retries_allowed) around an effect",
        "fork:checkpoint": "DBOS addresses a past step only through its explicit fork, DBOS.fork_workflow(id, start_step): use fork_via: explicit",
        "durability": "every DBOS write is a committed transaction; there is no durability mode to vary",
    },
    reads=OWN_APP_READS,
    packages=("dbos", "pydantic_ai"),
    trial_s=2.0,
    # AA's reasons name the call a recovery of each resume form makes here
    recovery_calls={
        "none": "DBOS.launch() recovery",
        "input": "start_workflow with the same id",
        "command": "DBOS.launch() recovery, continuing the workflow",
    },
    import_name="dbos",
    default_version="3.4.0",
    pins=("dbos=={version}", "pydantic-ai-slim[dbos]==2.68.0"),
    preflight="chaos.targets.dbos.preflight",
)
