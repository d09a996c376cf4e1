"""The worked examples on LlamaIndex Workflows and AutoGen AgentChat (examples/llamaindex_review,
examples/autogen_refund) through chaos, as a team would put them in CI.

Each is a team's own app written from its framework's docs, with a fake model: a review loop that
pauses with ``InputRequiredEvent`` and publishes on approval; a ``Swarm`` that hands off to the
customer and refunds on approval. The stock variants have real bugs and chaos must keep finding
them: a worker killed right after the irreversible write writes again on resume, and four workers
answering one pause each write. The fixed variants (idempotency keys) come out clean, resumed by
chaos's driver with an answer plan and by the app's own driver (``resume: app:``).

What must hold for a user to trust this: the n-th pause gets the n-th answer (the review loop's
second review gets ``approve``, so the sweep reaches the publish), a Swarm's handoff to the user is
a pause whose answer goes back to the agent that handed off, and a LlamaIndex step that asks is
saved once, with its question (no restored run waits for an answer nobody was asked for).
The runs are cut down (a few kill points, two race trials).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kits.appruns import REPO, case_cell, only_verdict, point_with, run_from_repo

import chaos

# per example: the kill points that tell its story (before the first save, the first pause, the
# second pass of the loop, right after the irreversible write, and before the last save)
KILL_POINTS = {
    "llamaindex_review": [
        "save(after=draft):before#1",
        "save(input_required):before#1",
        "save(input_required):after#2",
        "effect(task=publish_post)",
    ],
    "autogen_refund": ["save(turn=travel_agent):before#1", "save(turn=flights_refunder):after#1", "effect(task=refund_flight)"],
}


# per example: the boundary where the first pause is durable
PAUSED = {"llamaindex_review": "save(input_required):after#1", "autogen_refund": "save(turn=flights_refunder):after#1"}


def _run(example: str, variant: str, out: Path) -> chaos.RunResults:
    data = yaml.safe_load((REPO / "examples" / example / "scenarios" / f"{variant}.yaml").read_text())
    data["kill_points"] = KILL_POINTS[example]
    for case in data["matrix"]["case"]:
        if case["kind"] == "race":
            case["trials"] = 2
        if str(case.get("resume", "")).startswith("app:"):
            # the app's driver answers the durable pause itself: kill once it is saved
            case["kill_points"] = [PAUSED[example]]
    return run_from_repo(data, out)  # the scenarios name the app as examples.<example>.app:<variant>


@pytest.fixture(scope="module")
def li_stock(tmp_path_factory) -> chaos.RunResults:
    return _run("llamaindex_review", "stock", tmp_path_factory.mktemp("li_stock"))


@pytest.fixture(scope="module")
def li_fixed(tmp_path_factory) -> chaos.RunResults:
    return _run("llamaindex_review", "fixed", tmp_path_factory.mktemp("li_fixed"))


@pytest.fixture(scope="module")
def ag_stock(tmp_path_factory) -> chaos.RunResults:
    return _run("autogen_refund", "stock", tmp_path_factory.mktemp("ag_stock"))


@pytest.fixture(scope="module")
def ag_fixed(tmp_path_factory) -> chaos.RunResults:
    return _run("autogen_refund", "fixed", tmp_path_factory.mktemp("ag_fixed"))


# ------------------------------------------------------------- LlamaIndex: the review loop


def test_the_second_review_gets_the_second_answer_and_a_kill_after_publishing_publishes_again(li_stock):
    sweep = case_cell(li_stock, "sweep")
    # answers: [revise, approve]: the first review loops back to draft, the second approves, so
    # the sweep reaches the publish; killed right after it, the resumed worker publishes again
    # (the step had not been saved complete)
    point = point_with(sweep, "effect(task=publish_post):after#1")
    assert point.reached == 1
    assert point.effect_counts == {"publish_post:post-1": [2]}
    assert only_verdict(sweep, "EO").status == "violated"
    # the loop's second pass is progress, not a completed step run again
    assert only_verdict(point_with(sweep, "save(input_required):after#2"), "PC").status == "holds"
    assert point_with(sweep, "save(input_required):after#2").effect_counts == {"publish_post:post-1": [1]}


def test_a_kill_before_the_pause_is_saved_leaves_the_run_asking_not_stuck(li_stock):
    sweep = case_cell(li_stock, "sweep")
    # the step that asks is saved once, with its question: killed before that save, the restored
    # run (after draft) asks again, and the plan answers it
    point = point_with(sweep, "save(input_required):before#1")
    assert only_verdict(point, "LIVENESS").status == "holds"
    assert point.effect_counts == {"publish_post:post-1": [1]}
    boundaries = [p.point for p in sweep.points]
    assert not any("save(after=ask)" in b for b in boundaries), boundaries


def test_four_editors_approving_one_review_publish_more_than_once(li_stock):
    race = case_cell(li_stock, "race-k4")
    assert race.valid_trials == 2
    assert only_verdict(race, "CO").status == "violated"


def test_the_fixed_review_publishes_once_resumed_either_way_and_exits_0(li_fixed):
    for case in ("sweep", "sweep-app"):
        cell = case_cell(li_fixed, case)
        assert {v.property: v.status for v in cell.verdicts} == {"EO": "holds", "PC": "holds", "LIVENESS": "holds", "AA": "holds"}, case
    assert only_verdict(case_cell(li_fixed, "race-k4"), "CO").status == "holds"
    assert li_fixed.exit_code == 0


# ----------------------------------------------------------------- AutoGen: the refund Swarm


def test_a_handoff_to_the_customer_is_a_pause_and_a_kill_after_the_refund_refunds_again(ag_stock):
    sweep = case_cell(ag_stock, "sweep")
    # the answer goes back to the refunder as a HandoffMessage from the user; it refunds, and
    # killed right after the refund (the turn not yet saved) the resumed worker refunds again
    point = point_with(sweep, "effect(task=refund_flight):after#1")
    assert point.reached == 1
    assert point.effect_counts == {"refund_flight:ABC123": [2]}
    assert only_verdict(sweep, "EO").status == "violated"
    # killed once the handoff is saved, the pause is answered once: one refund
    assert point_with(sweep, "save(turn=flights_refunder):after#1").effect_counts == {"refund_flight:ABC123": [1]}
    assert only_verdict(sweep, "LIVENESS").status == "holds"


def test_four_workers_answering_one_handoff_refund_more_than_once(ag_stock):
    race = case_cell(ag_stock, "race-k4")
    assert race.valid_trials == 2
    assert only_verdict(race, "CO").status == "violated"


def test_the_fixed_refund_happens_once_resumed_either_way_and_exits_0(ag_fixed):
    for case in ("sweep", "sweep-app"):
        cell = case_cell(ag_fixed, case)
        assert {v.property: v.status for v in cell.verdicts} == {"EO": "holds", "PC": "holds", "LIVENESS": "holds", "AA": "holds"}, case
    assert only_verdict(case_cell(ag_fixed, "race-k4"), "CO").status == "holds"
    assert ag_fixed.exit_code == 0
