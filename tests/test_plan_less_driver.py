"""A team's own driver that answers by itself (``resume: app:`` without ``answers:``): the
uninterrupted run chaos compares with stops at the pause nobody answered, so it cannot say how
often one answer fires the gated effect, nor what fires past the pause. A race's CO and a sweep's
EO then judge only what is known.

The app (``tests/workloads/plan_less_driver.py``) notifies the requester twice per approval, by
itself: by hand (plain LangGraph, SqliteSaver, the driver run once after the pause), one answer
sends ``notify:approve`` twice. One worker approving it is no duplicate of a race's making:

* with the plan (``answers: [approve]``) the uninterrupted run answers, shows the two
  notifications, and CO says the workflow's own duplicate needs no race;
* without it, the uninterrupted run stops at the pause, and CO is unknown with that reason (before:
  "violated, fired more than once", blamed on the race).

And a sweep killed once the question is saved: the driver approves and notifies (twice, as one
answer does); the notification is no "effect the uninterrupted run never fires" (before, on
LangGraph: it was, since the dry run's approval of static breakpoints, which found none, counted
as an answer).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from kits import framework_support as look
from kits.runs import run_text

WORKLOADS = Path(__file__).parent / "workloads"

SCENARIO = """
name: plan_less
kind: race
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: plan_less_driver:notify_twice
resume: "app:plan_less_driver:approve"
racers: {k: 1}
trials: 2
matrix:
  case:
    - {name: no-plan}
    - {name: plan, answers: [approve]}
"""


def test_a_race_judged_against_a_baseline_stopped_at_its_pause_says_what_it_cannot_know(tmp_path):
    shutil.copy(WORKLOADS / "plan_less_driver.py", tmp_path / "plan_less_driver.py")
    results = run_text(tmp_path, SCENARIO).results
    no_plan, plan = look.cell(results, "case=no-plan"), look.cell(results, "case=plan")

    assert no_plan.valid_trials == 2 and no_plan.fires == {"2": 2}  # one worker's answer: two notifications
    assert no_plan.baseline.stopped_at and no_plan.baseline.effects == {}
    co = look.verdict(no_plan, "CO")
    assert co.status == "unknown" and "stopped at its pause unanswered" in co.reason and "answers:" in co.reason
    assert look.verdict(no_plan, "LIVENESS").status == "holds"

    assert plan.baseline.stopped_at is None and plan.baseline.effects == {"notify:approve": 2}
    co = look.verdict(plan, "CO")
    assert co.status == "violated" and "needs no race" in co.reason and "the race added no fire" in co.reason


SWEEP = """
name: plan_less_sweep
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: plan_less_driver:notify_twice
resume: "app:plan_less_driver:approve"
kill_points: ["put_writes(node=review,channels=__interrupt__):after"]
trials: 1
"""


def test_a_sweep_through_the_teams_driver_files_no_extra_effect_past_the_unanswered_pause(tmp_path):
    shutil.copy(WORKLOADS / "plan_less_driver.py", tmp_path / "plan_less_driver.py")
    c = look.cell(run_text(tmp_path, SWEEP).results)
    assert c.baseline.stopped_at == "approve the request?" and c.baseline.effects == {}
    p = look.point(c, "put_writes(node=review,channels=__interrupt__):after#1")
    assert p.effect_counts["notify:approve"] == [2]  # by hand: the driver approves, one answer notifies twice
    eo = look.point_verdict(c, "put_writes(node=review,channels=__interrupt__):after#1", "EO")
    assert "never fires" not in eo.reason
