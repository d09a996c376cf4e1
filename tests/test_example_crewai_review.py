"""The CrewAI worked example (examples/crewai_review) through chaos, as a team would put it in CI.

A content review on CrewAI Flows: the ``@start`` method drafts a post and pauses for an
asynchronous ``@human_feedback`` review (its provider sends the request, then raises
``HumanFeedbackPending``); a ``@router`` sends the flow to one of two ends, publish or archive.
What a team must see: the flow is finished at either end, a flow that had finished when it was
killed is "nothing to resume", a reviewer asked about a flow whose pause was never saved is FCL's
finding, and the fixed flow comes out clean. The runs are cut down to one or two kill points.
And a run leaves nothing in the user's temp folder: CrewAI's lock files go with chaos's own folders.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kits.robustkit import chaos as chaos_cli

import chaos

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = REPO / "examples" / "crewai_review" / "scenarios"


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("crewai")


def _run(name: str, out: Path, cases: list[str], kill_points: list[str]) -> chaos.RunResults:
    data = yaml.safe_load((SCENARIOS / f"{name}.yaml").read_text())
    data["kill_points"] = kill_points
    data["matrix"]["case"] = [c for c in data["matrix"]["case"] if c["name"] in cases]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # the scenarios name the app as examples.crewai_review.app:<variant>
        return chaos.run(data, out=out)


def _cell(results: chaos.RunResults, case: str):
    (cell,) = [c for c in results.cells if c.axes["case"]["name"] == case]
    return cell


def _point_verdict(cell, point: str, prop: str):
    p = next(p for p in cell.points if p.point.startswith(point))
    return next(v for v in p.verdicts if v.property == prop)


def test_the_flow_is_finished_at_either_end_of_its_router(tmp_path):
    # killed once the review is saved: the fresh process answers it and the flow ends at publish
    # (approved) or at archive (rejected); either is the flow's own end
    results = _run("stock", tmp_path, ["approve", "reject"], ["save_pending(method=draft):after"])
    approve, reject = _cell(results, "approve"), _cell(results, "reject")
    assert approve.points[0].effect_counts == {"notify_reviewer:post-7": [1], "publish_post:post-7": [1]}
    assert reject.points[0].effect_counts == {"notify_reviewer:post-7": [1], "archive_draft:post-7": [1]}
    for cell in (approve, reject):
        live = _point_verdict(cell, "save_pending(method=draft):after", "LIVENESS")
        assert live.status == "holds", live.reason
        assert cell.points[0].resume_outcomes == ["done"]


def test_a_finished_flow_is_nothing_to_resume_and_a_reviewer_asked_about_nothing_is_fcls(tmp_path):
    results = _run("stock", tmp_path, ["approve", "first-save"], ["effect(task=notify_reviewer)", "save_state(method=publish):after"])
    approve = _cell(results, "approve")
    done = _point_verdict(approve, "save_state(method=publish):after", "LIVENESS")
    assert done.status == "holds" and "nothing to resume" in done.reason
    assert _point_verdict(approve, "save_state(method=publish):after", "EO").status == "holds"
    # killed right after the review request went out, before CrewAI saved the pending review
    first = _cell(results, "first-save")
    fcl = next(v for v in first.verdicts if v.property == "FCL")
    assert fcl.status == "violated" and "notify_reviewer:post-7" in fcl.reason and "known nowhere" in fcl.reason
    eo = next(v for v in first.verdicts if v.property == "EO")
    assert eo.status == "unknown" and "which FCL judges" in eo.reason


def test_the_fixed_flow_comes_out_clean(tmp_path):
    results = _run("fixed", tmp_path, ["approve"], ["save_pending(method=review):after", "effect(task=publish_post)"])
    (cell,) = results.cells
    assert len(cell.points) == 2 and all(p.reached == 1 for p in cell.points)
    for v in cell.verdicts:
        assert v.status == "holds", (v.property, v.reason)
    assert results.exit_code == 0


def test_the_teams_own_resume_driver_plugs_in(tmp_path):
    # killed once the review is saved, the team's driver answers it with from_pending(id).resume(...)
    results = _run("stock", tmp_path, ["own-driver"], ["save_pending(method=draft):after"])
    (cell,) = results.cells
    (point,) = cell.points
    assert point.reached == 1 and point.resume_outcomes == ["done"]
    assert point.effect_counts == {"notify_reviewer:post-7": [1], "publish_post:post-7": [1]}
    assert next(v for v in cell.verdicts if v.property == "LIVENESS").status == "holds"


def test_a_run_leaves_nothing_in_the_users_temp_folder(tmp_path):
    # the preflight runs the team's flow once in the racers' Python, then racers run it: CrewAI
    # locks its store by name in the temp folder (crewai:<md5>.lock), and each such file goes with
    # the folder chaos made for that process, never into the user's (the preflight's used to)
    users_tmp = tmp_path / "tmp"
    users_tmp.mkdir()
    data = yaml.safe_load((SCENARIOS / "fixed.yaml").read_text())
    data["kill_points"] = ["effect(task=publish_post)"]
    data["matrix"]["case"] = [c for c in data["matrix"]["case"] if c["name"] == "approve"]
    scenario = tmp_path / "fixed.yaml"
    scenario.write_text(yaml.safe_dump(data))
    proc = chaos_cli(["run", str(scenario), "--out", str(tmp_path / "out"), "-q"], tmp_path / "state", env={"TMPDIR": str(users_tmp)})
    assert proc.returncode == 0, proc.stderr
    assert list(users_tmp.iterdir()) == []
