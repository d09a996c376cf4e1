"""A user crashes a workflow at one point several times and learns whether recovery repeats itself (RD)."""

from __future__ import annotations

import pytest
from kits.runs import run_text

from chaos.kinds.recovery_determinism import point_rd
from chaos.records import Op, RacerOutcome, TrialRecord

RECOVERY = """\
name: recovery_small
kind: recovery_determinism
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 2
seed: 8039
kill_points: ["put_writes(node=b"]
"""


@pytest.fixture(scope="module")
def recovery_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("recovery"), RECOVERY)


def test_sync_durability_recovers_the_same_way_at_every_repeat(recovery_run):
    (cell,) = recovery_run.results.cells
    assert [p.point for p in cell.points] == [
        "put_writes(node=b,channels=log+branch:to:c):before#1",
        "put_writes(node=b,channels=log+branch:to:c):after#1",
    ]
    rd = cell.verdicts[0]
    assert rd.property == "RD" and rd.status == "holds", rd.reason
    assert all(p.reached == 2 for p in cell.points)
    assert cell.summary["decisions_per_point"] == {p.point: 1 for p in cell.points}


def _rec(trial: str, durable_checkpoints: int, ran_again: list[str]) -> TrialRecord:
    """A recorded recovery (the shape kill_trial journals) at one kill point."""
    return TrialRecord(
        run_id="r",
        cell_index=0,
        cell_id="c",
        trial_id=trial,
        point="effect(task=b):after#1",
        seed=1,
        kind="recovery_determinism",
        thread_id="t",
        valid=True,
        t_start_wall=0.0,
        wall_s=1.0,
        racers=[RacerOutcome(racer_id="resume", role="resume", status="ok")],
        history=[Op(racer_id="resume", type="ok", f="resume none")],
        ledger=[{"seq": i, "task": t, "racer_id": "resume"} for i, t in enumerate(ran_again)],
        observations={
            "at_kill": {"checkpoints": durable_checkpoints, "completed_tasks": ["a"][: durable_checkpoints - 1]},
            "resume_outcome": {"status": "done"},
            "after_resume": {"next": []},
        },
    )


def test_repeats_that_recover_differently_violate_rd_and_say_whether_the_durable_state_differed():
    # the shape async durability produced at effect(task=b):after (LangGraph issue 8039): the
    # checkpoint after ``a`` was durable in one repeat and not in the other
    v = point_rd("effect(task=b):after#1", [_rec("t0", 2, ["b", "c"]), _rec("t1", 1, ["a", "b", "c"])])
    assert v.status == "violated"
    assert "2 different recovery decisions, the durable state at the kill differed" in v.reason
    assert v.evidence.trial_ids == ["t0", "t1"]
    same_state = point_rd("p", [_rec("t0", 2, ["b", "c"]), _rec("t1", 2, ["a", "b", "c"])])
    assert same_state.status == "violated" and "from the same durable state" in same_state.reason


def test_one_repeat_cannot_show_determinism():
    v = point_rd("p", [_rec("t0", 2, ["b", "c"])])
    assert v.status == "unknown" and "at least 2" in v.reason
