"""The pydantic-graph worked example (examples/pg_quiz) through chaos, as a team would put it in CI.

The quiz is pydantic-graph's documented question graph: a loop that asks again after a wrong
answer. What a team must see: the learner's two answers reach the two passes of the loop (the
plan's n-th answer for the n-th pause), the loop's second pass is progress, not a completed node
running again (PC by snapshot identity), the documentation's own driver (plugged in with
``resume: app:``) starts the quiz over after a crash and sends the first question twice, and the
fixed driver comes out clean. The runs are cut down to a few kill points.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import chaos

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "examples" / "pg_quiz" / "scenarios"
BASELINE = {"send_question:q1": 1, "send_feedback:q1": 1, "send_question:q2": 1, "award_badge:q2": 1}


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("pydantic_graph")


def _run(name: str, out: Path, cases: list[str], kill_points: list[str]) -> chaos.RunResults:
    data = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    data["kill_points"] = kill_points
    if "matrix" in data:
        data["matrix"]["case"] = [c for c in data["matrix"]["case"] if c["name"] in cases]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # the scenarios name the app as examples.pg_quiz.app:<variant>
        return chaos.run(data, out=out)


def _verdict(cell, prop: str):
    return next(v for v in cell.verdicts if v.property == prop)


def _point_verdict(cell, point: str, prop: str):
    p = next(p for p in cell.points if p.point.startswith(point))
    return next(v for v in p.verdicts if v.property == prop)


def test_the_second_pass_of_the_loop_gets_the_second_answer_and_is_progress(tmp_path):
    # killed once the second question is about to be asked (Ask's second snapshot durable), the
    # operator having removed the dead process's lock: the resume asks it, takes the second answer
    # ("4") and ends; the first pass of Ask is durable and does not run again
    results = _run("stock", tmp_path, ["adapter-driver-unlocked"], ["save(node=Ask,status=created):after#2"])
    (cell,) = results.cells
    assert cell.baseline is not None and cell.baseline.effects == BASELINE
    (point,) = cell.points
    assert point.effect_counts == {k: [1] for k in BASELINE}
    assert point.resume_outcomes == ["done"]
    pc = _point_verdict(cell, "save(node=Ask,status=created):after#2", "PC")
    assert pc.status == "holds", pc.reason
    assert _verdict(cell, "EO").status == "holds"
    assert _verdict(cell, "LIVENESS").status == "holds"


def test_the_documented_driver_starts_over_after_a_crash_and_asks_the_first_question_twice(tmp_path):
    results = _run("stock", tmp_path, ["docs-driver-unlocked"], ["effect(task=send_question):after#1", "save(end):after"])
    (cell,) = results.cells
    start_over = next(p for p in cell.points if p.point.startswith("effect(task=send_question):after#1"))
    # Ask's snapshot was left 'running': load_next finds nothing, and the driver starts a new quiz
    assert start_over.effect_counts["send_question:q1"] == [2]
    assert _verdict(cell, "EO").status == "violated"
    # killed once the End snapshot was written: the run had finished, there is nothing to resume
    end = _point_verdict(cell, "save(end):after", "LIVENESS")
    assert end.status == "holds" and "nothing to resume" in end.reason


def test_a_lock_left_by_a_dead_process_is_the_frameworks_refusal_even_inside_the_teams_driver(tmp_path):
    results = _run("stock", tmp_path, ["docs-driver"], ["save(node=Answer,status=created):after#1"])
    (cell,) = results.cells
    (point,) = cell.points
    assert point.reached == 1  # a verdict, not an app error
    live = _verdict(cell, "LIVENESS")
    assert live.status == "violated" and "stale lock" in live.reason


def test_the_fixed_driver_comes_out_clean(tmp_path):
    points = ["effect(task=send_question):after#1", "save(node=Answer,status=pending):after#1", "save(node=Reprimand,status=success):after"]
    results = _run("fixed", tmp_path, [], points)
    (cell,) = results.cells
    assert len(cell.points) == 3 and all(p.reached == 1 for p in cell.points)
    for prop in ("EO", "PC", "LIVENESS"):
        assert _verdict(cell, prop).status == "holds", _verdict(cell, prop).reason
    assert results.exit_code == 0
