"""Exactly-once has two halves, judged against a crash-free run of the same workflow.

A sweep's dry run is the baseline: the workflow run once, uninterrupted, answering its interrupts.
Its effects are what a recovery must produce: after a recovery that completes, each fired at least
once (otherwise *lost*) and no more often than in the baseline (otherwise *duplicated* by the
crash). An effect the baseline itself fires twice is the workflow's own duplicate, explained as
needing no crash. Kill points where nothing fired are vacuous: EO holds over the points that
exercised it, so a fixed workflow exits 0.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.records import TrialRecord
from chaos.reports.explain import explain_duplicates
from chaos.running.journal import read_journal
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_scenario

WORKLOADS = Path(__file__).parent / "workloads"
SCENARIOS = Path(__file__).parent.parent / "scenarios"


def _sweep(tmp_path: Path, workload: str):
    shutil.copy(WORKLOADS / "user_workloads.py", tmp_path / "user_workloads.py")
    return run_text(
        tmp_path,
        f"""\
        name: eo
        kind: kill_sweep
        target: {{framework: langgraph, backend: sqlite, durability: sync}}
        workload: user_workloads:{workload}
        resume: none
        trials: 1
        seed: 12
    """,
    )


def _records(run) -> list[TrialRecord]:
    records, _ = read_journal(run.run_dir / "journal.jsonl")
    return [TrialRecord.model_validate(r) for r in records]


@pytest.fixture(scope="module")
def lost_run(tmp_path_factory):
    return _sweep(tmp_path_factory.mktemp("lost"), "commit_before_execute")


def test_a_step_marked_done_before_its_effect_loses_the_effect_and_eo_says_so(lost_run):
    (cell,) = lost_run.results.cells
    assert cell.baseline is not None and cell.baseline.effects == {"a": 1, "reserve": 1, "charge": 1, "c": 1}
    points = {p.point: p for p in cell.points}
    # killed after the reservation, the re-run sees the step "done" and skips the charge; the run completes
    between = points["effect(task=reserve):after#1"]
    assert between.resume_outcomes == ["done"]
    assert between.effect_counts["charge"] == [0] and between.lost == ["charge"] and between.duplicates == []
    eo = next(v for v in between.verdicts if v.property == "EO")
    assert eo.status == "violated" and "lost 'charge'" in eo.reason and "recorded instead" in eo.reason
    # killed after the charge, nothing is lost (and the step is not re-run: no duplicate either)
    assert points["effect(task=charge):after#1"].lost == []
    cell_eo = next(v for v in cell.verdicts if v.property == "EO")
    assert cell_eo.status == "violated" and "effect(task=reserve):after#1" in cell_eo.evidence.points
    # the two halves apart: a and c (plain effects) are re-run when killed before their writes are durable
    assert cell_eo.reason.startswith("lost charge at 1 kill point(s); duplicated a, c at 4 kill point(s) | ")
    assert lost_run.results.exit_code == 1


def test_the_lost_effect_is_reported_and_explained_with_its_kill_point(lost_run):
    report = (lost_run.run_dir / "report.md").read_text()
    assert "Boundaries where a completed recovery lost an effect" in report and "`effect(task=reserve):after#1`" in report
    rec = next(r for r in _records(lost_run) if r.point == "effect(task=reserve):after#1")
    (sentence,) = explain_duplicates(rec)
    assert sentence.startswith("effect charge was lost") and "effect(task=reserve):after#1" in sentence
    assert "recorded instead: a x1, c x1, reserve x1" in sentence


def test_a_duplicate_of_the_uninterrupted_run_is_the_workflows_own_and_needs_no_crash(tmp_path):
    run = _sweep(tmp_path, "workflow_duplicate")
    (cell,) = run.results.cells
    assert cell.baseline is not None and cell.baseline.workflow_duplicates == {"notify": 2}
    points = {p.point: p for p in cell.points}
    # once b's writes are durable, the recovery does not run b again: notify fired twice, as without a crash
    after = next(p for p in cell.points if p.point.startswith("put_writes(node=b,") and p.point.endswith(":after#1"))
    assert after.effect_counts["notify"] == [2] and after.duplicates == []
    assert {v.property: v.status for v in after.verdicts}["EO"] == "holds"
    # killed after b's first notify, the recovery runs b again: one more than the workflow's own two
    assert points["effect(task=notify):after#1"].effect_counts["notify"] == [3]
    assert points["effect(task=notify):after#1"].duplicates == ["notify"]
    eo = next(v for v in cell.verdicts if v.property == "EO")
    assert eo.status == "violated" and "a duplicate that needs no crash" in eo.reason
    assert "c000-dry" in eo.evidence.trial_ids
    recs = _records(run)
    dry = next(r for r in recs if r.trial_id.endswith("-dry"))
    (said,) = explain_duplicates(dry)
    assert said.startswith("effect notify fired twice in an uninterrupted run") and "needs no crash" in said
    after_rec = next(r for r in recs if r.point == after.point)
    (said,) = explain_duplicates(after_rec)
    assert "as it does in an uninterrupted run: a duplicate that needs no crash" in said
    assert "before its checkpoint was written" not in said


def test_a_fixed_workflow_exits_0_and_counts_its_vacuous_kill_points(tmp_path):
    out = run_scenario(SCENARIOS / "kill_point_sweep_idempotent.yaml", RunOptions(out=tmp_path))
    assert out.results.exit_code == 0
    cells = {c.cell_id: c for c in out.results.cells}
    steps, approval = cells["case=steps"], cells["case=approval"]
    assert {v.property: v.status for v in steps.verdicts} == {"EO": "holds", "PC": "holds", "LIVENESS": "holds"}
    eo = next(v for v in approval.verdicts if v.property == "EO")
    vacuous = [p for p in approval.points if next(v for v in p.verdicts if v.property == "EO").vacuous]
    # a kill before the human's answer is recovered as a restarted app is (issue 39): it continues,
    # is asked again and answers, so the effect fires and is judged; only a kill before the first
    # checkpoint leaves no durable interrupt to answer at all: vacuous, and said why
    assert vacuous and all(set(p.resume_outcomes) <= {"interrupted", "nothing to answer"} for p in vacuous)
    n = len(approval.points)
    assert eo.status == "holds"
    assert eo.reason.startswith(f"holds at {n - len(vacuous)} of {n} kill points; {len(vacuous)} vacuous (")
    assert "nothing was durable at the kill" in eo.reason


def test_a_workflow_that_fires_nothing_is_vacuous_with_a_hint_where_effects_belong(tmp_path):
    run = _sweep(tmp_path, "quiet")
    (cell,) = run.results.cells
    assert cell.baseline is not None and cell.baseline.effects == {}
    eo = next(v for v in cell.verdicts if v.property == "EO")
    assert eo.status == "unknown" and eo.vacuous
    assert "the uninterrupted run fired none either: call ctx.effect inside the node" in eo.reason


def test_over_kill_points_vacuous_is_counted_not_unknown_unless_every_point_is_vacuous():
    from chaos.kinds.checking import combine, verdict

    held = verdict("EO", "holds", "p1: every effect at most once", points=["p1"], trial_ids=["t1"])
    empty = verdict("EO", "unknown", "p0: vacuous, no effect fired at all", points=["p0"], vacuous=True)
    blind = verdict("EO", "unknown", "p2: barrier p2 was never reached", points=["p2"])
    both = combine("EO", [empty, held])
    assert (both.status, both.reason) == ("holds", "holds at 1 of 2 kill points; 1 vacuous (no effect fired at all)")
    assert both.evidence.trial_ids == ["t1"] and "p0" in both.evidence.note
    only_empty = combine("EO", [empty, empty])
    assert only_empty.status == "unknown" and only_empty.vacuous and "vacuous at all 2 kill points" in only_empty.reason
    # a point that could not be measured is still an unknown: vacuous is not a way around it
    assert combine("EO", [empty, held, blind]).status == "unknown"
