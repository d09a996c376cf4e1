"""pydantic-graph (1.x FileStatePersistence) under real SIGKILLs: at most once, but stuck.

What a user sees: a crash never makes an effect fire twice (a node's snapshot is ``running`` when
its effect fires, and ``iter_from_persistence`` only takes ``created`` snapshots), but a crash
inside a node leaves a run nothing can continue, and a crash inside a save leaves the file lock
behind so every later resume times out.
"""

from __future__ import annotations

import re

import pytest
from kits import framework_support as look
from kits.runs import run_text


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("pydantic_graph")


SWEEP = """
name: pg_sweep
kind: kill_sweep
target: {framework: pydantic_graph, backend: file}
workload: three_step
resume: none
trials: 1
seed: 11
timeout_s: 60
"""


def test_crash_mid_node_is_at_most_once_but_the_run_is_stuck(tmp_path):
    results = run_text(
        tmp_path,
        SWEEP
        + """
workload_params: {clear_stale_lock: true}
kill_points: ["effect(task=b)", "save(node=C,status=created):after"]
""",
    ).results
    c = look.cell(results)
    assert [p.point for p in c.points] == ["effect(task=b):after#1", "save(node=C,status=created):after#1"]
    eo = look.verdict(c, "EO")
    assert eo.status == "holds", eo.reason
    # killed right after b's effect: b's snapshot says "running"; nothing is "created", so no resume
    # (c, which the uninterrupted run fires, is counted as never fired: the run is stuck, not lost)
    mid = look.point(c, "effect(task=b)")
    assert mid.effect_counts == {"a": [1], "b": [1], "c": [0]}
    assert mid.lost == []
    assert mid.resume_outcomes == ["error: GraphRuntimeError"]
    assert look.point_verdict(c, "effect(task=b)", "LIVENESS").status == "violated"
    # killed once C's snapshot is durable: the resume runs C once and ends
    ok = look.point(c, "save(node=C,status=created)")
    assert ok.effect_counts == {"a": [1], "b": [1], "c": [1]} and ok.resume_outcomes == ["done"]
    assert look.point_verdict(c, "save(node=C", "LIVENESS").status == "holds"
    assert look.verdict(c, "LIVENESS").status == "violated"
    assert results.exit_code == 1


def test_crash_inside_a_save_leaves_the_lock_and_every_resume_times_out(tmp_path):
    results = run_text(
        tmp_path,
        SWEEP
        + """
kill_points: ["save(node=C,status=created):after"]
""",
    ).results
    c = look.cell(results)
    (p,) = c.points
    assert p.resume_outcomes == ["error: TimeoutError"], p.resume_outcomes
    live = look.verdict(c, "LIVENESS")
    # the framework's error keeps its type; the reason says in words why it came (anyio's is empty)
    assert (
        live.status == "violated"
        and "TimeoutError: stale lock: the persistence lock file is still held (by a process that died inside a save" in live.reason
    )
    assert look.verdict(c, "EO").status == "holds"


def test_a_crash_inside_a_node_says_which_snapshot_nothing_can_resume(tmp_path):
    results = run_text(tmp_path, SWEEP + 'kill_points: ["effect(task=b)"]\n').results
    live = look.verdict(look.cell(results), "LIVENESS")
    assert live.status == "violated"
    assert "GraphRuntimeError: nothing 'created' to resume: B(running) was taken by a process that has not finished it" in live.reason


def test_a_string_in_an_int_field_is_saved_and_refused_only_when_the_next_step_loads_it(tmp_path):
    results = run_text(tmp_path, look.tampered_state("pydantic_graph")).results
    cv = look.verdict(look.cell(results), "CV")
    assert cv.status == "violated", cv.reason
    assert "persisted, refused too late: the checkpoint holds count='not-a-number'; ValidationError" in cv.reason
    assert cv.evidence.trial_ids


def test_three_racers_answering_one_pause_fire_the_gate_at_most_once(tmp_path):
    results = run_text(tmp_path, look.pause_answers("pydantic_graph", "race", seed=5, trials=2, k=3)).results
    c = look.cell(results)
    assert c.valid_trials == 2
    assert look.verdict(c, "CO").status in ("holds", "unknown")  # unknown only if no racer won at all
    assert c.max_fires is not None and c.max_fires <= 1
    # the losers are refused loudly: load_next found no "created" snapshot
    assert c.racer_errors >= 2 * 2


def test_a_race_loser_is_told_what_it_found_and_no_killed_process_is_invented(tmp_path):
    out = run_text(tmp_path, look.pause_answers("pydantic_graph", "race", seed=5, trials=2, k=3))
    journal = (out.run_dir / "journal.jsonl").read_text()
    refused = re.findall(r"nothing 'created' to resume: .*? \(Unable to restore", journal)
    assert refused, "the losers were refused: the winner had taken the pause"
    # nothing was killed in a race: a loser's reason says what the file held, not that a process died
    assert not [d for d in refused if "killed" in d], refused
    # what a loser finds depends on how far the winner got: its snapshot taken, a later one, or the end
    found = ("was taken by a process that has not finished it", "the run had ended", "the last snapshot is ")
    assert all(any(f in d for f in found) for d in refused), refused
    assert "killed process" not in (out.run_dir / "report.html").read_text()


def test_a_stray_second_answer_to_a_completed_run_is_refused(tmp_path):
    results = run_text(tmp_path, look.pause_answers("pydantic_graph", "stray_resume", seed=6, trials=1)).results
    co = look.verdict(look.cell(results), "CO")
    assert co.status == "holds" and "GraphRuntimeError" in co.reason
