"""CrewAI Flows (plain methods, no LLM) under real SIGKILLs.

What a user sees: with ``@persist``, resuming by state id (``kickoff(inputs={"id": ...})``) runs
the flow from its first method again, so every method that had finished fires its effect twice;
and on a SQLite older than 3.45 the SQLite checkpoint provider writes nothing (``jsonb`` is
missing) while CrewAI only logs it: chaos reports the cell unknown with that reason instead of
measuring a run that persisted nothing. A cold CrewAI racer takes seconds, so this test keeps to
one kill point.
"""

from __future__ import annotations

import subprocess

import pytest
from kits import framework_support as look
from kits.runs import run_text

from chaos.kinds.sweep import DRY_RUN_FAILED
from chaos.running.stored import StoredTrials


@pytest.fixture(scope="module")
def crewai_python():
    from chaos.envs import python_for

    return python_for("crewai")


def _sqlite_version(python: str) -> tuple[int, ...]:
    out = subprocess.run(
        [python, "-c", "import sqlite3; print(sqlite3.sqlite_version)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return tuple(int(x) for x in out.split("."))


def _crewai_locks() -> set[str]:
    """CrewAI's named-lock files (``crewai_core.lock_store``: ``crewai:<md5>.lock`` in the temp folder)."""
    import tempfile
    from pathlib import Path

    return {p.name for p in Path(tempfile.gettempdir()).glob("crewai:*.lock")}


def test_resume_by_id_reruns_finished_methods_and_old_sqlite_checkpoints_are_reported(tmp_path, crewai_python):
    locks_before = _crewai_locks()
    results = run_text(
        tmp_path,
        """
name: crew_sweep
kind: kill_sweep
target: {framework: crewai, backend: sqlite}
workload: three_step
resume: none
trials: 1
seed: 13
timeout_s: 120
kill_points: ["effect(task=b)"]
matrix:
  backend: [sqlite, checkpoint_sqlite]
""",
    ).results
    persisted = look.cell(results, "backend=sqlite")
    (p,) = persisted.points
    assert p.point == "effect(task=b):after#1"
    # a's state was saved; the resume by id runs a again, then b and c
    assert p.effect_counts == {"a": [2], "b": [2], "c": [1]}
    eo = look.verdict(persisted, "EO")
    assert eo.status == "violated" and eo.evidence.ledger_seqs
    assert look.verdict(persisted, "PC").status == "violated"

    checkpointed = look.cell(results, "backend=checkpoint_sqlite")
    if _sqlite_version(crewai_python) < (3, 45):
        # nothing was measured, and every verdict says why
        assert checkpointed.failure and not checkpointed.points
        for v in checkpointed.verdicts:
            assert v.status == "unknown" and v.reason == checkpointed.failure
        if "dictionary changed size" in checkpointed.failure:
            # CrewAI itself sometimes fails in this dry run (pydantic-core, its checkpoint threads dumping
            # the state at once: a PanicException, about 1 run in 10, that may end the flow's kickoff)
            assert checkpointed.failure.startswith(f"{DRY_RUN_FAILED} (framework:") or "persistence failed silently" in checkpointed.failure
        else:
            assert "persistence failed silently" in checkpointed.failure and "jsonb" in checkpointed.failure
    elif checkpointed.failure:  # a new enough SQLite, but CrewAI's own dry run failed (the panic above)
        assert checkpointed.failure.startswith(f"{DRY_RUN_FAILED} (framework:") and "dictionary changed size" in checkpointed.failure
    else:  # a new enough SQLite: the provider works and the point is measured
        assert checkpointed.points
    assert results.exit_code == 1
    # what the racers dropped in their temp folder went with the run's work folder
    assert _crewai_locks() == locks_before


@pytest.mark.slow
def test_a_fork_of_the_paused_flow_takes_the_new_answer_and_a_bad_state_value_is_saved_silently(tmp_path, crewai_python):
    out = run_text(
        tmp_path,
        """
name: crew_contract
kind: fork
target: {framework: crewai, backend: sqlite}
workload: gate_after_interrupt
resume: "command:approve"
trials: 1
seed: 5
timeout_s: 120
matrix:
  case:
    - {name: fork, kind: fork, fork_via: explicit, workload_params: {checkpoints: json}}
    - {name: invalid, kind: invalid_state, workload: invalid_type, resume: none}
""",
    )
    fork, invalid = out.results.cells
    fd = look.verdict(fork, "FD")
    if fork.valid_trials == 0 or fd.status == "unknown":
        # CrewAI's checkpoint listener sometimes dies mid-save (pydantic-core: "dictionary changed size
        # during iteration", or its PanicException, seen in about 1 run in 4 with checkpoints on): the
        # trial is not valid (the first answer's run failed), or the fork's own kickoff failed; FD is
        # unknown, never a pass; and the failure is CrewAI's, never chaos's (the racer records the dead
        # thread, or the panic as its action's error)
        assert fd.status == "unknown", fd.reason
        if fork.valid_trials:
            assert "the fork was refused: PanicException: dictionary changed size" in fd.reason, fd.reason
        blames = [(o.racer_id, o.blame, o.blame_reason) for r in StoredTrials(out.run_dir / "journal.jsonl") for o in r.racers]
        assert not [b for b in blames if b[1] == "harness"], blames
    else:
        # Flow.fork restores the checkpoint taken before the pause; the pause is asked again and answered with v2
        assert fd.status == "holds", fd.reason
        assert "the fork saw 'approve#fork' and fired gate:approve#fork" in fd.reason
        fi = look.verdict(fork, "FI")
        assert fi.status == "holds" and "Flow.fork" in fi.reason
    # a pydantic state validates construction, not assignment: @persist saves the str, the restore refuses it
    cv = look.verdict(invalid, "CV")
    assert cv.status == "violated", cv.reason
    assert "persisted silently: the checkpoint holds count='not-a-number'" in cv.reason
    assert "continuing it: error (ValidationError)" in cv.reason


@pytest.mark.slow
def test_a_flow_that_pauses_in_its_first_method_is_told_what_happened_not_that_crewai_refused(tmp_path, crewai_python):
    out = run_text(
        tmp_path,
        """
name: crew_first_pause
kind: kill_sweep
target: {framework: crewai, backend: sqlite}
workload: tests.workloads.crew_workloads:approval_first
resume: "command:approve"
trials: 1
seed: 3
timeout_s: 120
matrix:
  case:
    - {name: sweep, kind: kill_sweep, kill_points: ["effect(task=notify)", "save_pending(method=ask):before"]}
    - {name: fork, kind: fork, fork_via: explicit, workload_params: {checkpoints: json}}
""",
    )
    sweep, fork = out.results.cells
    # the approver was notified, and the kill came before the pause was saved: no run to answer
    announced = look.point_verdict(sweep, "save_pending(method=ask):before", "EO")
    assert announced.vacuous and "the pause was announced (whoever it notifies was asked) but never saved" in announced.reason
    # FCL is judged on CrewAI (the first_checkpoint kind runs there): the vacuous point names its judge
    for v in (announced, look.point_verdict(sweep, "effect(task=notify)", "EO")):
        assert "a crash before the first checkpoint loses the run, which FCL judges" in v.reason, v.reason
        assert "is not judged on crewai" not in v.reason, v.reason
    # no checkpoint precedes a pause in the first method: chaos found nothing to fork, CrewAI refused nothing
    fd = look.verdict(fork, "FD")
    assert fd.status == "unknown", fd.reason
    assert "NoSuchCheckpoint" not in fd.reason, fd.reason
    if fork.valid_trials:  # (CrewAI's checkpoint listener can panic in the first run: then no trial is valid)
        assert "nothing to fork from: the run saved no checkpoint before its pause (no checkpoint before ask" in fd.reason
        assert "refused" not in fd.reason.replace("the framework refused nothing", "")
