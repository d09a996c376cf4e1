"""A team deploys v2 while threads wait at an approval under v1, and learns what the resume does (UP).

Each story runs the real racers on the pinned LangGraph: v1 parks (or is killed), a fresh process
resumes under v2, and v2 alone gives the expected result. The outcomes asserted are what this
LangGraph release does with each change, every time (no race is involved): a deferred gate is
refused with a TypeError (issue 8629), a renamed field resumes into a KeyError after the approval
already fired, a dropped node resumes as v2 would run.
"""

from __future__ import annotations

import pytest
from kits.runs import run_text

from chaos.kinds.upgrade import trial_up
from chaos.records import TrialRecord
from chaos.running.options import RunOptions
from chaos.running.resume import rerun

PAIRS = """\
name: upgrade_small
kind: upgrade
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: upgrade_field_renamed
resume: "command:true"
trials: 1
matrix:
  workload: [upgrade_field_renamed, upgrade_node_removed, upgrade_defer_single]
"""


def _verdicts(outcome):
    return {c.cell_id: (c.verdicts[0].status, c.verdicts[0].reason, c.summary["outcome"]) for c in outcome.results.cells}


def test_each_change_is_refused_resumed_as_v2_or_resumed_wrong_and_a_rerun_agrees(tmp_path):
    out = run_text(tmp_path, PAIRS)
    got = _verdicts(out)
    status, reason, outcome = got["workload=upgrade_field_renamed"]
    assert (status, outcome) == ("violated", {"resumed wrong": 1})
    assert "resumed, then failed midway" in reason and "never fired end:40" in reason
    assert "KeyError: 'total'" in reason and "after firing gate:True" in reason
    status, reason, outcome = got["workload=upgrade_node_removed"]
    assert (status, outcome) == ("holds", {"resumed as v2": 1}), reason
    status, reason, outcome = got["workload=upgrade_defer_single"]
    assert (status, outcome) == ("holds", {"refused": 1}), reason
    assert "refused loudly (TypeError: cannot unpack non-iterable NoneType object)" in reason
    # the KeyError is the measurement, not an app error that spoils the trial
    assert out.results.summary.trials == 3 and all(c.valid_trials == 1 and not c.app_errors for c in out.results.cells)

    again, comparison = rerun(out.run_dir, ["c000-t0000", "c002-t0000"], RunOptions(out=tmp_path / "rerun"))
    assert sorted((c["property"], c["was"], c["now"]) for c in comparison) == [("UP", "holds", "holds"), ("UP", "violated", "violated")]


RELEASES = """\
name: invoice_deploy
kind: upgrade
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: tests.workloads.deploy_workloads:invoice_v1
upgrade_to: {workload: tests.workloads.deploy_workloads:invoice_v2}
resume: "command:true"
trials: 1
matrix:
  case:
    - {name: two-factories}
    - {name: one-factory, workload: "tests.workloads.deploy_workloads:invoice", upgrade_to: {}}
"""


@pytest.mark.slow  # two preflights per release (a cold Python each) before the trials
def test_a_teams_two_releases_resume_a_paused_thread_with_a_missing_field(tmp_path, monkeypatch, repo):
    monkeypatch.chdir(repo)
    cells = run_text(tmp_path, RELEASES).results.cells
    assert [c.cell_id for c in cells] == ["case=two-factories", "case=one-factory"]
    for cell in cells:
        (up,) = cell.verdicts
        assert up.status == "violated", up.reason
        assert (
            "resumed silently wrong: send_invoice acted on another value: fired send_invoice where v2 alone fires send_invoice:EUR"
            in up.reason
        )
        assert "currency missing (v2 alone: 'EUR')" in up.reason


KILLED = """\
name: upgrade_killed
kind: upgrade
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: upgrade_node_added
resume: "command:true"
kill_points: ["effect(task=pre)", "effect(task=gate)"]
trials: 1
"""


def test_a_kill_before_the_deploy_is_judged_against_the_same_kill_under_v2(tmp_path):
    (cell,) = run_text(tmp_path, KILLED).results.cells
    (up,) = cell.verdicts
    # killed after pre's effect: v2 re-runs from the start, enrich included, as its twin does (the
    # duplicate pre is the crash's, not the deploy's); killed after the gate's: enrich is skipped
    assert cell.summary["outcome"] == {"resumed as v2": 1, "resumed wrong": 1}
    assert up.status == "violated" and up.evidence.trial_ids == ["c000-p001-r000"], up.reason
    assert "never fired enrich" in up.reason


def _record(v1: list[str], v2: dict, scratch: dict) -> TrialRecord:
    return TrialRecord(
        run_id="r",
        cell_index=0,
        cell_id="default",
        trial_id="c000-t0000",
        seed=1,
        kind="upgrade",
        thread_id="t",
        valid=True,
        observations={"v1": {"fired": v1}, "v2": v2, "scratch": scratch},
        t_start_wall=0.0,
        wall_s=1.0,
    )


def test_a_node_run_twice_is_resumed_wrong_and_a_refusal_that_wrote_nothing_holds():
    done = {"status": "done", "error": None, "values": {"log": ["pre", "gate", "end"]}}
    twice = _record(
        ["pre"],
        {"status": "done", "fired": ["pre", "gate:True", "end"], "after": {"values": {"log": ["pre", "gate", "end"]}}},
        {**done, "fired": ["pre", "gate:True", "end"]},
    )
    assert trial_up(twice) == ("resumed wrong", "resumed silently wrong: fired pre beyond what v2 alone fires")
    head = {"checkpoint": "c1", "durable_checkpoints": 2}
    refused = _record(
        ["pre"],
        {"status": "error", "fired": [], "error": {"type": "ValueError", "message": "bad"}, "before": head, "after": head},
        {**done, "fired": ["pre", "gate:True", "end"]},
    )
    assert trial_up(refused) == ("refused", "refused loudly (ValueError: bad): no effect fired, no checkpoint written")
    moved = _record(
        ["pre"],
        {
            "status": "error",
            "fired": [],
            "error": {"type": "ValueError", "message": "bad"},
            "before": head,
            "after": {**head, "checkpoint": "c2"},
        },
        {**done, "fired": ["pre", "gate:True", "end"]},
    )
    assert trial_up(moved)[0] == "resumed wrong"  # it wrote a checkpoint before it raised: not a clean refusal


def test_a_thread_the_framework_leaves_for_its_own_version_holds_only_if_nothing_ran_under_v2():
    done = {"status": "done", "error": None, "values": None}
    head = {"checkpoint": "3", "durable_checkpoints": 3, "workflow_status": "PENDING"}
    left = _record(
        ["pre"],
        {"status": "done", "fired": [], "before": head, "after": head, "left_for_version": "1", "app_version": "2"},
        {**done, "fired": ["pre", "gate:True", "end"]},
    )
    outcome, why = trial_up(left)
    assert outcome == "left for v1"
    assert "'1'" in why and "'2'" in why and "PENDING" in why
    # a version mismatch is no excuse for what did run: an effect fired under v2 is judged as any resume
    ran = _record(
        ["pre"],
        {"status": "done", "fired": ["gate:True"], "before": head, "after": head, "left_for_version": "1", "app_version": "2"},
        {**done, "fired": ["pre", "gate:True", "end"]},
    )
    assert trial_up(ran)[0] == "resumed wrong"
