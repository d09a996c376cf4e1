"""ADK's long-running-tool sample (examples/adk_reimburse) through chaos, as a team would put it in CI.

The manager's approval is not an ``adk_request_confirmation``: ``ask_for_approval`` is a
``LongRunningFunctionTool`` that answers "pending", and the app sends the decision later as a
``FunctionResponse`` of the same call id. What the team sees (truth by hand, without chaos, in the
closing note of issue 39): the run pauses there; killed after the reimbursement and before the
tool's response event, the recovered invocation reimburses again (EO); killed once the run has
answered, a recovery has nothing to send and reimburses nothing more; the approval delivered twice
reimburses twice (ADK hands the agent the history from the approved call on, so the model acts on
the approval again).
"""

from __future__ import annotations

import pytest
import yaml
from kits import framework_support as look
from kits.appruns import REPO, case_cell, run_from_repo

import chaos

KILL_POINTS = [
    "append(author=reimbursement_agent,kind=call:ask_for_approval)",
    "effect(task=reimburse)",
    "append(author=reimbursement_agent,kind=empty)",
]


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("adk")


def _run(out) -> chaos.RunResults:
    data = yaml.safe_load((REPO / "examples" / "adk_reimburse" / "scenarios" / "stock.yaml").read_text())
    data["kill_points"] = KILL_POINTS
    for case in data["matrix"]["case"]:
        case["trials"] = 2 if case["kind"] == "race" else 1
    return run_from_repo(data, out)


def test_the_managers_pending_ticket_is_the_pause_and_only_a_crash_inside_the_tool_reimburses_twice(tmp_path):
    results = _run(tmp_path)
    sweep = case_cell(results, "sweep")
    # the uninterrupted run answered the ticket and reimbursed once
    assert sweep.baseline is not None and sweep.baseline.effects == {"reimburse:conference travel:200": 1}
    eo = look.verdict(sweep, "EO")
    assert eo.status == "violated" and eo.evidence.points == ["effect(task=reimburse):after#1"]
    # killed between the long-running call and its "pending" response: the ticket is answered, one reimbursement
    assert look.point_verdict(sweep, "append(author=reimbursement_agent,kind=call:ask_for_approval):after", "LIVENESS").status == "holds"
    # killed after the run answered: the recovery sends nothing, nothing is reimbursed again
    for when in ("before", "after"):
        assert look.point_verdict(sweep, f"append(author=reimbursement_agent,kind=empty):{when}", "EO").status == "holds"
    assert look.verdict(sweep, "LIVENESS").status == "holds"
    race = case_cell(results, "race-k3")
    assert race.valid_trials == race.trials  # every racer was shown the pending ticket
    stray = case_cell(results, "stray")
    assert look.verdict(stray, "CO").status == "violated"  # the approval delivered twice reimburses twice
    assert results.exit_code == 1


def test_a_stray_approval_is_judged_when_the_reimbursement_declares_its_ticket_as_its_identity(tmp_path):
    """fixed keys the reimbursement by its ticket (``ctx.effect_once(..., key=ticket)``: identity
    ``reimburse@reimbursement-ticket-001``); the first approval consumed the ticket, and the second
    reimburses nothing more (by hand: 1 reimbursement in 2 of 2)."""
    data = yaml.safe_load((REPO / "examples" / "adk_reimburse" / "scenarios" / "fixed.yaml").read_text())
    data["target"]["backend"] = "db_sqlite"  # the key, not the back end, decides a stray
    data["matrix"]["case"] = [{"name": "stray", "kind": "stray_resume", "trials": 1}]
    results = run_from_repo(data, tmp_path)
    stray = case_cell(results, "stray")
    assert stray.valid_trials == 1, stray.failure
    assert look.verdict(stray, "CO").status == "holds"
