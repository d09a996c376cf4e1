"""DU and CV as a reader of a power-loss report sees them: the checker is a pure function of the
trial records, so each story is a record the way a faulted sweep journals it."""

from __future__ import annotations

from chaos.kinds.faults import explain, point_cv, point_du
from chaos.records import TrialRecord

POINT = "put(step=2,source=loop):after#1"
LOST = {"fault": "power_loss", "lost_ops": 5, "lost_bytes": 900, "files": ["t/checkpoints.sqlite-wal"], "torn": None}


def _rec(*, fault: dict, at_kill: dict, outcome: dict, fired: list[str] | None = None, victim: tuple[str, ...] = ("a", "b")) -> TrialRecord:
    rows = [{"seq": i + 1, "racer_id": "victim", "task": t, "effect_key": t} for i, t in enumerate(victim)]
    return TrialRecord(
        run_id="r",
        cell_index=0,
        cell_id="fault=power_loss",
        trial_id="c000-p000-r000",
        point=POINT,
        seed=1,
        kind="kill_sweep",
        thread_id="t",
        valid=True,
        ledger=rows,
        observations={"fault": fault, "at_kill": at_kill, "resume_outcome": outcome, "resume_fired": fired or []},
        t_start_wall=0.0,
        wall_s=1.0,
    )


def test_a_checkpoint_the_run_went_on_from_and_lost_violates_du_with_the_lost_writes():
    r = _rec(
        fault=LOST, at_kill={"completed_tasks": [], "checkpoints": 0}, outcome={"status": "error", "error": {"type": "EmptyInputError"}}
    )
    v = point_du(POINT, [r])
    assert v.status == "violated"
    assert "a had been checkpointed and the run went on" in v.reason and "5 unsynced write(s) (900 bytes)" in v.reason
    (line,) = explain(r)
    assert "then a power loss" in line and "a is no longer recorded complete" in line


def test_du_holds_when_every_acknowledged_task_survived_and_is_vacuous_before_any():
    kept = _rec(fault=LOST, at_kill={"completed_tasks": ["a", "b"], "checkpoints": 3}, outcome={"status": "done"})
    assert point_du(POINT, [kept]).status == "holds"
    early = _rec(fault=LOST, at_kill={"completed_tasks": [], "checkpoints": 0}, outcome={"status": "done"}, victim=("a",))
    v = point_du(POINT, [early])
    assert v.status == "unknown" and v.vacuous


def test_a_torn_store_refused_as_it_loads_holds_cv_but_a_late_failure_violates_it():
    torn = {**LOST, "fault": "torn", "torn": {"path": "t/ck.json", "seq": 9, "offset": 0, "length": 100, "persisted": 50}}
    loud = _rec(
        fault=torn, at_kill={"completed_tasks": ["?"], "checkpoints": 1}, outcome={"status": "error", "error": {"type": "ValidationError"}}
    )
    assert point_cv(POINT, [loud], {}).status == "holds"
    late = _rec(
        fault=torn,
        at_kill={"completed_tasks": ["a"], "checkpoints": 2},
        outcome={"status": "error", "error": {"type": "KeyError"}},
        fired=["b"],
    )
    v = point_cv(POINT, [late], {})
    assert v.status == "violated" and "refused too late" in v.reason
    partial = _rec(fault=torn, at_kill={"completed_tasks": ["a", "b"], "checkpoints": 2}, outcome={"status": "done"})
    v = point_cv(POINT, [partial], {partial.trial_id: ["c"]})
    assert v.status == "violated" and "partial state" in v.reason


def test_a_fault_that_touched_only_the_sqlite_memory_index_exercises_no_cv():
    shm = {**LOST, "files": ["t/checkpoints.sqlite-shm"]}
    r = _rec(fault=shm, at_kill={"completed_tasks": ["a"], "checkpoints": 2}, outcome={"status": "done"})
    v = point_cv(POINT, [r], {})
    assert v.status == "unknown" and v.vacuous
