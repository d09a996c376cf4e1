"""The Agents SDK worked example (examples/openai_agents_support) through chaos, as a team would put it in CI.

The support agent of the SDK's human-in-the-loop guide: ``cancel_order`` needs approval, the run's
state is saved when it stops and restored, approved and run in a fresh process. The stock variant
cancels the order again when a worker dies after the cancellation and before the state is saved,
and once per worker when four approve the same saved state; the fixed variant (a claim on the
approval, read again under it, and idempotent tools) comes out clean. Cut down: the file store's
sweep at three kill points, the session's at one, two race trials.
"""

from __future__ import annotations

import pytest
import yaml
from kits.appruns import REPO, case_cell, only_verdict, point_with, run_from_repo

import chaos

KILL_POINTS = ["save_state(interruptions=1):after", "effect(task=cancel_order)", "save_state(final_output):before"]
SESSION_POINT = "session.add_items(n=1,kind=message):after"


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("openai_agents")


def _run(variant: str, out) -> chaos.RunResults:
    data = yaml.safe_load((REPO / "examples" / "openai_agents_support" / "scenarios" / f"{variant}.yaml").read_text())
    for case in data["matrix"]["case"]:
        if case["name"] == "sweep":
            case["kill_points"] = KILL_POINTS
        if case["name"] == "sweep-session":
            case["kill_points"] = [SESSION_POINT]
        if case["kind"] == "race":
            case["trials"] = 2
    return run_from_repo(data, out)


def test_stock_cancels_again_per_crash_and_per_worker(tmp_path):
    results = _run("stock", tmp_path)
    sweep = case_cell(results, "sweep")
    assert only_verdict(sweep, "EO").status == "violated"
    assert point_with(sweep, "effect(task=cancel_order)").duplicates == ["cancel_order:101"]
    # once the waiting state is saved, a kill before the approval loses nothing
    assert point_with(sweep, "save_state(interruptions=1):after").duplicates == []
    # the whole conversation durable in the SDK's session, the saved state still waiting: the
    # resume runs from the state, and cancels again
    session = case_cell(results, "sweep-session")
    assert "cancel_order:101" in point_with(session, SESSION_POINT).duplicates
    race = case_cell(results, "race-k4")
    assert only_verdict(race, "CO").status == "violated" and race.max_fires == 4
    assert results.exit_code == 1


def test_fixed_cancels_once_however_it_is_resumed(tmp_path):
    results = _run("fixed", tmp_path)
    for case in ("sweep", "sweep-session", "race-k4", "stray"):
        cell = case_cell(results, case)
        assert all(v.status != "violated" for v in cell.verdicts), (case, [(v.property, v.status, v.reason) for v in cell.verdicts])
    assert case_cell(results, "race-k4").max_fires == 1
    assert results.exit_code == 0
