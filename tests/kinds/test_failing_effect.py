"""A user's provider charges the card and then times out: does a retry, a handler or a resume charge it twice?

The effect fault (``effect_fault``) lets the effect do its work and commit its ledger row, then
raises. LangGraph's ``RetryPolicy`` performs it again in the same process; an ``error_handler`` that
already ran and committed runs again when the thread is resumed (LangGraph issue 9002); idempotent
effects absorb both.
"""

from __future__ import annotations

import pytest
from kits.runs import run_text

from chaos.kinds.failing_effect import trial_eo, trial_liveness
from chaos.racer.errors import ChaosError
from chaos.records import TrialRecord
from chaos.running.blame import blame_error
from chaos.scenario.model import parse_scenario

EFFECTS = """\
name: effect_faults_small
kind: failing_effect
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step_retry
effect_fault: {task: b}
resume: none
trials: 1
seed: 9002
matrix:
  case:
    - {name: retry, workload: three_step_retry}
    - {name: retry-idempotent, workload: three_step_retry_idempotent}
    - {name: handler, workload: charge_with_handler, effect_fault: {task: charge}, resume: "command:true"}
"""


@pytest.fixture(scope="module")
def effects_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("effects"), EFFECTS)


def _verdicts(cell):
    return {v.property: v for v in cell.verdicts}


def test_a_retry_performs_the_failed_effect_again_in_the_same_process(effects_run):
    retry = effects_run.results.cells[0]
    eo = _verdicts(retry)["EO"]
    assert eo.status == "violated", eo.reason
    assert "'b' fired twice, fired again within one call (the framework ran the node again, e.g. a RetryPolicy) (run: run x2;" in eo.reason
    assert eo.evidence.trial_ids == ["c000-t0000"] and len(eo.evidence.ledger_seqs) == 2
    assert _verdicts(retry)["LIVENESS"].status == "holds"
    assert retry.summary["faults_fired"] == 1 and retry.summary["run_status"] == {"done": 1}


def test_an_idempotent_effect_absorbs_the_retry(effects_run):
    eo = _verdicts(effects_run.results.cells[1])["EO"]
    assert eo.status == "holds", eo.reason
    assert "(a x1, b x1, c x1)" in eo.reason


def test_an_error_handler_that_already_committed_runs_again_on_resume_langgraph_9002(effects_run):
    handler = effects_run.results.cells[2]
    eo = _verdicts(handler)["EO"]
    assert eo.status == "violated", eo.reason
    assert "'refund' fired twice, fired again by the resume in a fresh process (run: run x1; resume: answer True x1;" in eo.reason
    assert "refund is the failure path's own effect" in eo.reason
    assert handler.summary["run_status"] == {"interrupted": 1} and handler.summary["resume_status"] == {"done": 1}
    assert _verdicts(handler)["LIVENESS"].status == "holds"


def test_a_fault_on_an_effect_the_workload_never_fires_is_refused_before_any_trial(tmp_path):
    text = EFFECTS.split("matrix:")[0].replace("effect_fault: {task: b}", "effect_fault: {task: payment}")
    with pytest.raises(ChaosError) as err:
        run_text(tmp_path, text)
    msg = str(err.value)
    assert "workload 'three_step_retry' fires no effect 'payment' in an uninterrupted run" in msg
    assert "effects fired: a, b, c" in msg and "\n" not in msg
    assert not (tmp_path / "reports").exists() or not any((tmp_path / "reports").rglob("journal.jsonl"))


def _rec(ledger: list[tuple[str, str]], *, final: str = "done", base: dict | None = None, resumed: bool = True) -> TrialRecord:
    rows = [
        {"seq": i + 1, "effect_key": key, "task": key, "racer_id": racer, "value": None, "trial_id": "c000-t0000"}
        for i, (key, racer) in enumerate(ledger)
    ]
    obs = {
        "baseline_effects": {"a": 1, "b": 1, "c": 1} if base is None else base,
        "effect_fault": {"task": "b", "times": 1},
        "run": {"status": "error"},
        "resume": {"status": final, "error": "GraphRecursionError: x" if final == "error" else None},
        "resumed": resumed,
    }
    return TrialRecord(
        run_id="r", cell_index=0, cell_id="default", trial_id="c000-t0000", seed=1, kind="failing_effect",
        thread_id="t", valid=True, ledger=rows, observations=obs, t_start_wall=0.0, wall_s=0.0,
    )  # fmt: skip


def test_a_completed_recovery_that_skipped_an_effect_loses_it():
    status, why = trial_eo(_rec([("a", "run"), ("b", "run")]))
    assert status == "violated" and "lost 'c': the run completed without it" in why


def test_a_recovery_that_ends_in_the_frameworks_error_is_not_live():
    assert trial_liveness(_rec([("a", "run"), ("b", "run")], final="error")) == (
        "violated",
        "the trial ended with an error after the resume: GraphRecursionError: x",
    )


def test_the_injected_fault_is_the_trials_premise_not_a_fault():
    err = {"type": "EffectFault", "module": "chaos.workloads", "message": "effect 'b' was performed, then failed", "frames": []}
    blame = blame_error(err, "langgraph", "three_step")
    assert blame.party == "injected" and blame.fault is None


def test_a_backend_that_keeps_nothing_across_processes_is_refused():
    text = EFFECTS.split("matrix:")[0].replace("backend: sqlite", "backend: memory")
    with pytest.raises(ChaosError, match=r"scenario.yaml:1: \(top level\): a failing_effect trial resumes in a fresh process"):
        parse_scenario(text, "scenario.yaml")
