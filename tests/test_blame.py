"""Whose fault it was: only the framework's failures become verdicts.

A user's node that raises is an app error (the trial is unknown, exit 2 with the reason), never
LIVENESS violated; a racer killed by a signal chaos did not send makes its trial unknown (an
environment fault, repeated within ``env_retries``), never valid. Real LangGraph, real racers,
real SIGKILLs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kits.runs import run_text

from chaos.kinds.checking import trial_class
from chaos.running.stored import StoredTrials

WORKLOADS = Path(__file__).parent / "workloads"


def _journal(out):
    return list(StoredTrials(out.run_dir / "journal.jsonl"))


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
        workload: user_workloads:approval_dies_on_r1
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
    # every attempt loses racer r1 to a SIGKILL chaos did not send: environment, repeated once, never valid
    assert [r.trial_id for r in records] == ["c000-t0000", "c000-t0000-e1", "c000-t0001", "c000-t0001-e1"]
    assert all(r.fault == "environment" and not r.valid for r in records)
    assert all("killed by signal 9, not by chaos" in (r.invalid_reason or "") for r in records)
    assert [r.retry_of for r in records] == [None, "c000-t0000", None, "c000-t0001"]
    assert res.summary.environment == 4 and res.summary.retried == 2 and res.summary.valid == 0
    (cell,) = res.cells
    assert {v.property: v.status for v in cell.verdicts} == {"CO": "unknown", "LIVENESS": "unknown"}
    assert res.exit_code == 2
