"""AutoGen AgentChat with the team state saved after every turn, under real SIGKILLs.

What a user sees: a crash after a step's effect and before the team state that records it is saved
runs the step again on restore (a duplicate effect), while a crash right after the save does not;
a team whose run finished is not run again (nothing to resume); and concurrent answers to one
paused team each fire the gated effect.
"""

from __future__ import annotations

import pytest
from kits import framework_support as look
from kits.runs import run_text


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("autogen")


def test_kill_between_effect_and_save_duplicates_the_effect(tmp_path):
    results = run_text(
        tmp_path,
        """
name: ag_sweep
kind: kill_sweep
target: {framework: autogen, backend: file}
workload: three_step
resume: none
trials: 1
seed: 12
timeout_s: 60
kill_points: ["effect(task=b)", "save(turn=b):after", "save(turn=c):after"]
""",
    ).results
    c = look.cell(results)
    eo = look.verdict(c, "EO")
    assert eo.status == "violated"
    assert "effect(task=b):after#1" in eo.evidence.points and eo.evidence.ledger_seqs
    assert look.point(c, "effect(task=b)").duplicates == ["b"]
    # the save after b's turn records it: no duplicate
    assert look.point_verdict(c, "save(turn=b)", "EO").status == "holds"
    assert look.point(c, "save(turn=b)").effect_counts == {"a": [1], "b": [1], "c": [1]}
    # killed once the finished team is saved, the run has ended: nothing to resume, nothing
    # runs again (AgentChat would go round again on a loaded finished team; the driver does not
    # run a finished run), so every property holds there
    done = look.point(c, "save(turn=c)")
    assert done.effect_counts == {"a": [1], "b": [1], "c": [1]}
    assert {v.property: v.status for v in done.verdicts} == {"EO": "holds", "PC": "holds", "LIVENESS": "holds"}
    assert results.exit_code == 1


def test_concurrent_answers_to_one_pause_each_fire(tmp_path):
    results = run_text(tmp_path, look.pause_answers("autogen", "race", seed=5, trials=1, k=3)).results
    c = look.cell(results)
    assert c.valid_trials == 1
    co = look.verdict(c, "CO")
    assert co.status == "violated" and co.evidence.ledger_seqs
    assert c.max_fires == 3


def test_a_tampered_team_state_is_refused_loudly_by_load_state(tmp_path):
    results = run_text(tmp_path, look.tampered_state("autogen")).results
    c = look.cell(results)
    cv = look.verdict(c, "CV")
    # the int sits in the saved state (written below AgentChat); load_state validates and refuses it
    assert cv.status == "holds", cv.reason
    assert "refused loudly when a fresh process loaded the state: ValueError (raised from ValidationError)" in cv.reason
    assert "messages.0.content=12345" in cv.reason
