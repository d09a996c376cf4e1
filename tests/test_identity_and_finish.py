"""What a team sees on a graph chaos did not write: a loop's next pass is progress, a run that had
finished before the kill is "nothing to resume", and a reason names what judges a lost first save
only where something does. The verdicts are pure functions of the records, so these stories build
the records a sweep on pydantic-graph or CrewAI leaves (the adapters' own reports are exercised by
tests/test_example_pg_quiz.py and tests/test_example_crewai_review.py)."""

from __future__ import annotations

import pytest
from kits.runkit import race_record

from chaos.kinds.sweep import Sweep, check_sweep
from chaos.records import TrialRecord
from chaos.scenario.model import ScenarioError, expand, parse_scenario


def _trial(rows: list[dict], at_kill: dict, outcome: dict | None, action: dict | None = None) -> TrialRecord:
    rec = race_record("c000-p000-r000", fired_by=[])
    ledger = [
        {**rec.ledger[0], "seq": 10 + i, "racer_id": "resume", "effect_key": r["task"], "value": None, **r} for i, r in enumerate(rows)
    ]
    return rec.model_copy(
        update={
            "kind": "kill_sweep",
            "point": "p",
            "ledger": ledger,
            "observations": {
                "kill": {"point": "p"},
                "at_kill": at_kill,
                "resume_outcome": outcome,
                "resume_action": action or {"op": "resume", "form": "none"},
            },
        }
    )


def _verdict(rec: TrialRecord, prop: str, framework: str = "pydantic_graph"):
    dry = rec.model_copy(update={"trial_id": "c000-dry", "point": None, "ledger": [], "observations": {"boundaries": ["p"]}})
    backend = {"pydantic_graph": "file", "llamaindex": "file", "crewai": "sqlite", "langgraph": "sqlite"}[framework]
    text = f"name: x\nkind: kill_sweep\ntarget: {{framework: {framework}, backend: {backend}}}\nworkload: three_step\n"
    (cell,) = expand(parse_scenario(text))
    result = check_sweep(cell, [dry, rec], Sweep())
    return next(v for v in result.points[0].verdicts if v.property == prop)


DONE = {"status": "done", "action": {"op": "resume", "form": "command"}}
# pydantic-graph, killed while the question loop waits for its second answer: the first pass of Ask
# is durable (snapshot Ask:1f), the resume runs the second pass (snapshot Ask:2e)
LOOP_AT_KILL = {
    "checkpoints": 5,
    "completed_tasks": ["send_feedback", "send_question"],
    "completed_task_ids": ["Ask:1f", "Answer:1a", "Evaluate:1b", "Reprimand:1c"],
    "completed_by_namespace": {"": ["Answer", "Ask", "Evaluate", "Reprimand"]},
}


def test_the_next_pass_of_a_loop_is_progress_not_a_completed_node_running_again():
    second_pass = {"task": "send_question", "node": "Ask", "namespace": "", "task_id": "Ask:2e", "outside_task": 0}
    pc = _verdict(_trial([second_pass], LOOP_AT_KILL, DONE), "PC")
    assert pc.status == "holds", pc.reason


def test_the_same_pass_running_again_is_still_a_violation():
    same_pass = {"task": "send_question", "node": "Ask", "namespace": "", "task_id": "Ask:1f", "outside_task": 0}
    pc = _verdict(_trial([same_pass], LOOP_AT_KILL, DONE), "PC")
    assert pc.status == "violated" and "Ask recorded complete at the kill, ran again" in pc.reason


def test_a_crewai_method_pass_is_compared_by_its_count():
    at_kill = {
        "checkpoints": 3,
        "completed_tasks": ["a", "b"],
        "completed_task_ids": ["a#1", "b#1"],
        "completed_by_namespace": {"": ["a", "b"]},
    }
    rerun = {"task": "a", "node": "a", "namespace": "", "task_id": "a#1", "outside_task": 0}  # a kickoff by id runs a again
    assert _verdict(_trial([rerun], at_kill, DONE), "PC", "crewai").status == "violated"
    loop = {"task": "b", "node": "b", "namespace": "", "task_id": "b#2", "outside_task": 0}  # a router's loop back to b
    assert _verdict(_trial([loop], at_kill, DONE), "PC", "crewai").status == "holds"


def test_a_run_that_had_finished_before_the_kill_is_nothing_to_resume():
    at_kill = {"checkpoints": 9, "completed_tasks": ["publish"], "ended": True, "next": []}
    refused = {"status": "error", "error": {"type": "ValueError", "message": "No pending feedback found for flow_id: t"}}
    live = _verdict(_trial([], at_kill, refused, {"op": "resume", "form": "command"}), "LIVENESS", "crewai")
    assert live.status == "holds"
    assert "nothing to resume, the run had finished before the kill" in live.reason


def test_a_run_not_finished_at_the_kill_still_needs_its_resume_to_finish():
    at_kill = {"checkpoints": 2, "completed_tasks": ["a"], "ended": False}
    refused = {"status": "error", "error": {"type": "GraphRuntimeError", "message": "Unable to restore snapshot"}}
    assert _verdict(_trial([], at_kill, refused), "LIVENESS").status == "violated"


@pytest.mark.parametrize(
    ("framework", "said"),
    [
        ("langgraph", "which FCL judges"),
        ("crewai", "which FCL judges"),
        ("llamaindex", "a run lost before its first save is not judged on llamaindex (FCL: the framework persists nothing itself"),
    ],
)
def test_a_crash_before_the_first_save_names_fcl_only_where_fcl_is_judged(framework, said):
    nothing = _trial([], {"checkpoints": 0}, None, {"op": "resume", "form": "command", "only_if_durable": True})
    eo = _verdict(nothing, "EO", framework)
    assert eo.status == "unknown" and said in eo.reason


def test_an_answer_plan_on_a_crewai_checkpoint_backend_is_refused_at_load():
    text = "name: x\nkind: kill_sweep\ntarget: {framework: crewai, backend: checkpoint_json}\nworkload: three_step\nanswers: [a, b]\n"
    with pytest.raises(ScenarioError, match=r"answers: crewai on backend checkpoint_json cannot follow an answer plan: .*@persist"):
        expand(parse_scenario(text, "plan.yaml"), path="plan.yaml")
