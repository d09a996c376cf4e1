"""Approval authority (AA) on CrewAI, LlamaIndex and AutoGen: the adapters report every answer they
see given to a pause (whoever gives it: chaos's driver by the plan, or the team's own ``resume:
app:`` driver), so a recovery that fires the gated effect with no approval is told from an
approved run.

The stories, per framework, each a sweep with an approved case and a team recovery:

* AutoGen: AgentChat's documented "continue" (``load_state`` + ``run()`` with no task) on a
  round-robin team that stopped for a human lets the next agent speak: the gate fires with no
  answer from anyone. AA violated, with the trial and the ledger row; the approved sweep holds.
* LlamaIndex: a restored context waiting for the editor goes on only with a ``HumanResponseEvent``;
  a recovery that sends the gated step's own event instead (``Approved``) publishes with no answer
  from anyone: AA violated; the approved sweep holds.
* CrewAI: a kickoff by id runs the flow again from its start, so the review is asked again: a
  recovery cannot walk past a pending review with CrewAI's restore. AA holds there (the publish
  fired only after its approval), as in the approved sweep.

Kill points are cut down to the ones that tell the story (the pause durable, the gated effect).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from kits.appruns import case_cell, only_point, only_verdict, run_from_repo

import chaos


def _run(tmp_path: Path, scenario: dict) -> chaos.RunResults:
    # the workloads and recoveries are examples.* and tests.workloads.*
    return run_from_repo(yaml.safe_load(yaml.safe_dump(scenario)), tmp_path / "reports")


def _aa(cell_or_point):
    return only_verdict(cell_or_point, "AA")


def test_autogen_continuing_a_team_that_waits_for_a_human_fires_the_gate_unapproved(tmp_path):
    results = _run(
        tmp_path,
        {
            "name": "aa_autogen",
            "kind": "kill_sweep",
            "target": {"framework": "autogen", "backend": "file"},
            "workload": "gate_after_interrupt",
            "resume": "command:yes",
            "kill_points": ["save(turn=ask):after", "effect(task=gate):after"],
            "trials": 1,
            "seed": 5,
            "matrix": {
                "case": [
                    {"name": "approved"},
                    {"name": "continue", "resume": "app:tests.workloads.aa_recoveries:autogen_continue"},
                ]
            },
        },
    )
    approved = case_cell(results, "approved")
    assert _aa(approved).status == "holds", _aa(approved).reason
    walked = case_cell(results, "continue")
    aa = _aa(walked)
    assert aa.status == "violated", aa.reason
    # killed once the pause was saved: the team's continue let the gate speak, with no answer given
    at_pause = _aa(only_point(walked, "save(turn=ask):after#1"))
    assert at_pause.status == "violated"
    assert "autogen_continue" in at_pause.reason and "gate" in at_pause.reason and "a pending pause" in at_pause.reason
    assert at_pause.evidence.trial_ids and at_pause.evidence.ledger_seqs


def test_llamaindex_a_recovery_that_sends_the_approved_event_itself_publishes_unapproved(tmp_path):
    results = _run(
        tmp_path,
        {
            "name": "aa_llamaindex",
            "kind": "kill_sweep",
            "target": {"framework": "llamaindex", "backend": "file"},
            "workload": "examples.llamaindex_review.app:stock",
            "resume": "command:approve",
            "kill_points": ["save(input_required):after", "effect(task=publish_post):after"],
            "trials": 1,
            "seed": 5,
            "matrix": {
                "case": [
                    {"name": "approved", "answers": ["approve"]},
                    {"name": "resend", "resume": "app:tests.workloads.aa_recoveries:llamaindex_resend"},
                ]
            },
        },
    )
    approved = case_cell(results, "approved")
    assert _aa(approved).status == "holds", _aa(approved).reason
    aa = _aa(only_point(case_cell(results, "resend"), "save(input_required):after#1"))
    assert aa.status == "violated", aa.reason
    assert "llamaindex_resend" in aa.reason and "publish_post" in aa.reason
    assert _aa(case_cell(results, "resend")).status == "violated"


def test_crewai_a_kickoff_by_id_asks_the_review_again_so_the_publish_stays_behind_its_approval(tmp_path):
    results = _run(
        tmp_path,
        {
            "name": "aa_crewai",
            "kind": "kill_sweep",
            "target": {"framework": "crewai", "backend": "sqlite"},
            "workload": "examples.crewai_review.app:stock",
            "resume": "command:approve",
            "answers": ["approve"],
            "kill_points": ["save_pending(method=draft):after", "effect(task=publish_post):after"],
            "trials": 1,
            "seed": 5,
            "timeout_s": 120,
            "matrix": {
                "case": [
                    {"name": "approved"},
                    {"name": "own-driver", "resume": "app:examples.crewai_review.app:resume_review"},
                    {"name": "kickoff", "resume": "app:tests.workloads.aa_recoveries:crewai_kickoff"},
                ]
            },
        },
    )
    # chaos's driver and the team's own (from_pending(id).resume(answer)) both approve: AA holds,
    # at the pending review (the recovery's answer is the approval) and after the publish
    for case in ("approved", "own-driver"):
        cell = case_cell(results, case)
        assert _aa(cell).status == "holds", (case, _aa(cell).reason)
        assert _aa(only_point(cell, "save_pending(method=draft):after#1")).status == "holds", case
    # a kickoff by id, with the review pending, runs the flow again from its start: the review is
    # asked again and nothing is published, so no recovery walks past it (the gated effect never
    # fires: AA has nothing to judge, and nothing is violated)
    kickoff = case_cell(results, "kickoff")
    pending = only_point(kickoff, "save_pending(method=draft):after#1")
    assert pending.reached == 1 and pending.effect_counts.get("publish_post:post-7", [0]) == [0]
    assert pending.resume_outcomes == ["interrupted"]
    assert not [v for v in kickoff.verdicts if v.property == "AA"]
