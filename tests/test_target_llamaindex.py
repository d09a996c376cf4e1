"""LlamaIndex Workflows with the context saved at step boundaries, under real SIGKILLs.

What a user sees: a crash after a step's effect and before the context that records it is saved
runs the step again on restore (a duplicate effect), while a crash right after the save does not;
a run that already finished is not run again (nothing to resume); and concurrent answers to one
``InputRequiredEvent`` each fire the gated effect.
"""

from __future__ import annotations

import pytest
from kits import framework_support as look
from kits.runs import run_text


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("llamaindex")


def test_kill_between_effect_and_save_duplicates_the_effect(tmp_path):
    results = run_text(
        tmp_path,
        """
name: li_sweep
kind: kill_sweep
target: {framework: llamaindex, backend: file}
workload: three_step
resume: none
trials: 1
seed: 12
timeout_s: 60
kill_points: ["effect(task=a)", "effect(task=b)", "save(after=b):after", "save(after=c):after"]
""",
    ).results
    c = look.cell(results)
    eo = look.verdict(c, "EO")
    assert eo.status == "violated"
    assert "effect(task=b):after#1" in eo.evidence.points and eo.evidence.ledger_seqs
    assert look.point(c, "effect(task=b)").duplicates == ["b"]
    # the save after b records it: no duplicate
    assert look.point_verdict(c, "save(after=b)", "EO").status == "holds"
    assert look.point(c, "save(after=b)").effect_counts == {"a": [1], "b": [1], "c": [1]}
    # killed once the finished run is saved, the run has ended: nothing to resume, nothing runs
    # again (LlamaIndex would start a restored finished context over; the driver does not run a
    # finished run), so every property holds there
    done = look.point(c, "save(after=c)")
    assert done.effect_counts == {"a": [1], "b": [1], "c": [1]}
    assert {v.property: v.status for v in done.verdicts} == {"EO": "holds", "PC": "holds", "LIVENESS": "holds"}
    assert results.exit_code == 1


def test_a_kill_before_the_applications_first_save_is_vacuous_not_a_harness_error(tmp_path):
    """LlamaIndex persists nothing itself: killed after a's effect and before the application's first
    save, the run is known nowhere. No resume is possible, so the point judges no resume property,
    says why in words, and blames no one (the trial is valid)."""
    results = run_text(
        tmp_path,
        """
name: li_first
kind: kill_sweep
target: {framework: llamaindex, backend: file}
workload: three_step
resume: none
trials: 1
seed: 12
timeout_s: 60
kill_points: ["effect(task=a)"]
""",
    ).results
    c = look.cell(results)
    for prop in ("EO", "PC", "LIVENESS"):
        v = look.point_verdict(c, "effect(task=a)", prop)
        assert v.status == "unknown" and v.vacuous, (prop, v)
        assert "nothing to continue" in v.reason and "persists nothing" in v.reason
    assert c.errored_trials == 0 and c.unknown_trials == 0 and c.valid_trials == c.trials


def test_concurrent_answers_to_one_pause_each_fire(tmp_path):
    results = run_text(tmp_path, look.pause_answers("llamaindex", "race", seed=5, trials=1, k=3)).results
    c = look.cell(results)
    assert c.valid_trials == 1
    co = look.verdict(c, "CO")
    assert co.status == "violated" and co.evidence.ledger_seqs
    assert c.max_fires == 3


def test_a_stray_second_answer_to_a_completed_run_is_nothing_to_resume(tmp_path):
    """The run ended and was saved: a repeated answer finds nothing to resume. Nothing fires and
    the saved run does not move (LlamaIndex would start the restored context over and feed it the
    answer; the driver checks the saved run's end first)."""
    results = run_text(tmp_path, look.pause_answers("llamaindex", "stray_resume", seed=6, trials=1)).results
    co = look.verdict(look.cell(results), "CO")
    assert co.status == "holds", co.reason


def test_a_string_in_a_typed_state_int_is_saved_silently_and_breaks_the_restore(tmp_path):
    results = run_text(tmp_path, look.tampered_state("llamaindex")).results
    c = look.cell(results)
    cv = look.verdict(c, "CV")
    # edit_state does not validate the assignment and Context.to_dict saves it; from_dict refuses it later
    assert cv.status == "violated", cv.reason
    assert "persisted silently: the checkpoint holds count='not-a-number' and the run raised nothing" in cv.reason
    assert "continuing it: error (ValidationError)" in cv.reason
