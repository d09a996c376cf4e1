"""A user runs agents that share a LangGraph store and sees which interleavings lose an update.

Real racers (one process per agent), a real shared ``SqliteStore``, real barriers: the orchestrator
holds each agent at its generation and continues the agents in the order of the trial's schedule.
With two agents there are six schedules; exactly the four that overlap the two read-generate-write
windows lose an update when nothing guards the commit, and a version check at commit or a
pessimistic lock keeps all six clean, at a cost the summary reports.
"""

from __future__ import annotations

import json

import pytest
from kits.runs import run_text

from chaos.api import rerun
from chaos.racer.errors import ScenarioError
from chaos.running.options import RunOptions
from chaos.scenario.model import parse_scenario

LOST_UPDATE = """\
name: shared_small
kind: shared_state
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: shared_lost_update
racers: {k: 2}
trials: 6
matrix:
  workload: [shared_lost_update, shared_lost_update_cas, shared_lost_update_lock]
"""


@pytest.fixture(scope="module")
def lost_update_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("shared"), LOST_UPDATE)


def _cell(outcome, workload):
    return next(c for c in outcome.results.cells if c.workload == workload)


def test_every_schedule_of_two_agents_runs_and_the_overlapping_ones_lose_an_update(lost_update_run):
    stock = _cell(lost_update_run, "shared_lost_update")
    assert (stock.trials, stock.valid_trials) == (6, 6)
    assert stock.summary["schedules"] == {"explored": 6, "of": 6, "mode": "exhaustive"}
    lu = next(v for v in stock.verdicts if v.property == "LU")
    assert lu.status == "violated", lu.reason
    # the serial schedules (a0 a0 a1 a1 and a1 a1 a0 a0, trials 0 and 5) are the clean ones
    assert lu.evidence.trial_ids == ["c000-t0001", "c000-t0002", "c000-t0003", "c000-t0004"]
    assert lu.reason.startswith("in 4/6 schedules: agent ")
    assert " is lost" in lu.reason and len(lu.evidence.ledger_seqs) == 3
    # no effect and a single key: the other anomalies were never set up, so they are not "holds"
    assert {v.property: v.status for v in stock.verdicts if v.property != "LU"} == {
        "SG": "unknown",
        "PT": "unknown",
        "CC": "unknown",
        "TR": "unknown",
    }


@pytest.mark.parametrize("guarded", ["shared_lost_update_cas", "shared_lost_update_lock"])
def test_a_guarded_commit_loses_nothing_over_the_same_schedules_and_says_what_it_cost(lost_update_run, guarded):
    cell = _cell(lost_update_run, guarded)
    assert (cell.trials, cell.valid_trials) == (6, 6)
    lu = next(v for v in cell.verdicts if v.property == "LU")
    assert lu.status == "holds", lu.reason
    cost = cell.summary["cost"]
    # the four overlapping schedules each cost one retry (cas) or at least one lock wait (lock)
    if guarded.endswith("_cas"):
        assert (cost["retries"], cost["waits"]) == (4, 0)
    else:
        assert cost["retries"] == 0 and cost["waits"] >= 4
    assert cost["wall_s_mean"] > 0


def test_the_final_memory_keeps_both_facts_only_when_guarded(lost_update_run):
    journal = [json.loads(line) for line in (lost_update_run.run_dir / "journal.jsonl").read_text().splitlines()]
    finals: dict[str, list[int]] = {}
    for rec in journal:
        if "trial_id" not in rec:
            continue
        writes = [json.loads(r["value"]) for r in rec["ledger"] if r["task"] == "ss.write"]
        finals.setdefault(rec["cell_id"], []).append(len(writes[-1]["value"]["facts"]))
    assert sorted(finals["workload=shared_lost_update"]) == [1, 1, 1, 1, 2, 2]
    assert finals["workload=shared_lost_update_cas"] == [2] * 6
    assert finals["workload=shared_lost_update_lock"] == [2] * 6


def test_rerun_replays_a_violating_schedule_exactly(lost_update_run, tmp_path):
    again = rerun(lost_update_run.run_dir, ["c000-t0002"], RunOptions(out=tmp_path))
    (cell,) = again.cells
    lu = next(v for v in cell.verdicts if v.property == "LU")
    assert (lu.status, lu.evidence.trial_ids) == ("violated", ["c000-t0002"])
    recs = [json.loads(line) for line in (again.run_dir / "journal.jsonl").read_text().splitlines()]
    (rec,) = [r for r in recs if r.get("trial_id") == "c000-t0002"]
    assert rec["observations"]["schedule"]["order"] == [0, 1, 1, 0]


TOOL_REORDER = """\
name: shared_tools
kind: shared_state
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: shared_tool_reorder
racers: {k: 2}
trials: 3
seed: 7
matrix:
  workload: [shared_tool_reorder, shared_tool_reorder_seq]
"""


def test_toolnode_lets_the_tool_answered_first_fire_first_and_a_sequencer_restores_the_plan(tmp_path):
    """12 interleavings (6 agent schedules x 2 response orders) exceed 3 trials: each trial samples one
    with its seed. A trial's tool effects land out of plan order exactly when charge_card's service
    answered first; with the sequencer they never do."""
    outcome = run_text(tmp_path, TOOL_REORDER)
    journal = [json.loads(line) for line in (outcome.run_dir / "journal.jsonl").read_text().splitlines()]
    for cell in outcome.results.cells:
        assert (cell.valid_trials, cell.summary["schedules"]["mode"], cell.summary["schedules"]["of"]) == (3, "sampled", 12)
        tr = next(v for v in cell.verdicts if v.property == "TR")
        swapped = sorted(
            r["trial_id"] for r in journal if r.get("cell_id") == cell.cell_id and r["observations"]["schedule"]["responses"] == [1, 0]
        )
        if cell.workload == "shared_tool_reorder_seq":
            assert tr.status == "holds", tr.reason
            assert cell.summary["cost"]["waits"] == 2 * len(swapped)  # each agent parks charge_card once
        else:
            assert swapped, "seed 7 samples charge_card answered first in some trial"
            assert (tr.status, tr.evidence.trial_ids) == ("violated", swapped), tr.reason


def test_one_agent_alone_cannot_share_anything_and_agents_share_a_local_file():
    with pytest.raises(ScenarioError, match=r"t.yaml:1: \(top level\): shared_state needs at least 2 agents: set racers.k to 2 or more"):
        parse_scenario("name: t\nkind: shared_state\nworkload: shared_lost_update\nracers: {k: 1}\n", "t.yaml")
    with pytest.raises(ScenarioError, match="use racers.placement local"):
        parse_scenario("name: t\nkind: shared_state\nworkload: shared_lost_update\nracers: {k: 2, placement: docker}\n", "t.yaml")
