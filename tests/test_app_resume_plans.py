"""A team's own resume driver (``resume: app:``) with an ``answers:`` plan on LlamaIndex and AutoGen
answers the whole run by the plan, as chaos's own driver does and as on pydantic-graph and CrewAI:
the dry run and every resume call the driver again at each pause the run reaches, with the plan's
n-th answer in ``thread.answer``, until the run ends or the plan is used up.

Before, the plan never reached these drivers: the review loop's driver answered its default
(``approve``) at the first review, so the sweep never saw the loop's second pass, and a refund the
plan denied was made anyway.
"""

from __future__ import annotations

from pathlib import Path

from kits.appruns import only_point, only_verdict, run_from_repo

import chaos


def _run(tmp_path: Path, scenario: dict) -> chaos.RunResults:
    return run_from_repo(scenario, tmp_path / "reports")  # the apps are examples.<example>.app


def test_the_review_loops_own_driver_answers_revise_then_approve_over_the_whole_run(tmp_path):
    results = _run(
        tmp_path,
        {
            "name": "li_app_plan",
            "kind": "kill_sweep",
            "target": {"framework": "llamaindex", "backend": "file"},
            "workload": "examples.llamaindex_review.app:fixed",
            "resume": "app:examples.llamaindex_review.app:recover",
            "answers": ["revise", "approve"],
            "kill_points": ["save(input_required):after"],
            "trials": 1,
            "seed": 7,
        },
    )
    (cell,) = results.cells
    # the dry run went round the loop (revise), asked again and published on approve
    boundaries = [p.point for p in cell.points]
    assert boundaries == ["save(input_required):after#1", "save(input_required):after#2"], boundaries
    # killed at either review, the driver answers from that review on by the plan: one publish
    for name in boundaries:
        p = only_point(cell, name)
        assert p.reached == 1 and p.effect_counts == {"publish_post:post-1": [1]}, (name, p.effect_counts)
        assert only_verdict(p, "LIVENESS").status == "holds"
    assert {v.property: v.status for v in cell.verdicts} == {"EO": "holds", "PC": "holds", "LIVENESS": "holds", "AA": "holds"}


def test_the_refund_swarms_own_driver_sends_the_plans_denial(tmp_path):
    results = _run(
        tmp_path,
        {
            "name": "ag_app_plan",
            "kind": "kill_sweep",
            "target": {"framework": "autogen", "backend": "file"},
            "workload": "examples.autogen_refund.app:fixed",
            "resume": "app:examples.autogen_refund.app:recover",
            "answers": ["deny"],
            "kill_points": ["save(turn=flights_refunder):after"],
            "trials": 1,
            "seed": 7,
        },
    )
    (cell,) = results.cells
    p = only_point(cell, "save(turn=flights_refunder):after#1")
    # the customer's "deny" reaches the refunder (the driver's default would have been "approve")
    assert p.reached == 1 and not p.effect_counts.get("refund_flight:ABC123", [0])[0]
    assert p.resume_outcomes == ["done"]
    assert only_verdict(cell, "LIVENESS").status == "holds"


def test_the_review_flows_own_driver_answers_the_review_its_own_kickoff_reopens(tmp_path):
    # killed before the pending review was saved, the team's driver finds nothing pending and kicks
    # the flow off by id: CrewAI asks the review again. The driver is called again for that review,
    # with the plan's answer for it, so the resume runs to the end by the plan
    results = _run(
        tmp_path,
        {
            "name": "crew_app_plan",
            "kind": "kill_sweep",
            "target": {"framework": "crewai", "backend": "sqlite"},
            "workload": "examples.crewai_review.app:stock",
            "resume": "app:examples.crewai_review.app:resume_review",
            "answers": ["approve", "approve"],
            "kill_points": ["save_pending(method=draft):before"],
            "trials": 1,
            "seed": 7,
            "timeout_s": 120,
        },
    )
    (cell,) = results.cells
    p = only_point(cell, "save_pending(method=draft):before#1")
    assert p.reached == 1 and p.resume_outcomes == ["done"], p.resume_outcomes
    assert p.effect_counts["publish_post:post-7"] == [1]
    assert only_verdict(p, "LIVENESS").status == "holds"
