"""A team's flight-support agent pauses before its sensitive tools with a static breakpoint, as
LangGraph's customer-support tutorial (part 3) teaches: ``interrupt_before=["sensitive_tools"]``,
approved with ``graph.invoke(None, config)``. chaos treats the breakpoint as the approval it is:
a thread waiting there is waiting, not stuck; the approval is ``invoke(None)``; races and stray
approvals run on it; and a crash recovery that walks past it and changes the booking with no human
approval is reported (approval authority, AA).

What LangGraph guarantees and these stories rely on: with ``durability: sync`` the checkpoint
whose next task is ``sensitive_tools`` is durable before the run stops there, and ``invoke(None)``
on a thread standing at that checkpoint passes the breakpoint (that is how the tutorial approves).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.racer.errors import ChaosError

WORKLOADS = Path(__file__).parent / "workloads"
AT_BREAKPOINT = "put(step=4,source=loop):after#1"  # the checkpoint whose next task is sensitive_tools
MID_RUN = "put(step=1,source=loop):after#1"  # fetch_user_info done, the assistant not yet run
IN_THE_TOOL = "effect(task=update_ticket):after#1"  # the approved change fired, not yet recorded
BOOKING = "update_ticket:7240005432906569->19250"


def _sweep(tmp_path: Path, extra: str, points: list[str]):
    shutil.copy(WORKLOADS / "customer_support.py", tmp_path / "customer_support.py")
    wanted = ", ".join(f'"{p.split("#")[0]}"' for p in points)
    out = run_text(
        tmp_path,
        f"""\
        name: support
        kind: kill_sweep
        target: {{durability: sync}}
        workload: customer_support:build
        resume: none
        kill_points: [{wanted}]
        trials: 1
        seed: 3
        {extra}
    """,
    )
    (cell,) = out.results.cells
    return out, cell, {p.point: p for p in cell.points}


def _verdict(point_or_cell, prop: str):
    return next(v for v in point_or_cell.verdicts if v.property == prop)


def test_a_thread_left_at_the_breakpoint_is_waiting_not_stuck(tmp_path):
    # no approval in the plan: every recovery that reaches the breakpoint leaves the thread there
    out, cell, points = _sweep(tmp_path, "answers: []", [MID_RUN])
    p = points[MID_RUN]
    assert p.reached == 1
    liveness = _verdict(p, "LIVENESS")
    assert liveness.status == "holds", liveness.reason
    assert "waiting at the static breakpoint before sensitive_tools" in liveness.reason
    assert p.effect_counts.get(BOOKING, [0]) == [0]  # nobody approved, nothing changed


def test_the_recovery_that_walks_past_the_breakpoint_changes_the_booking_unapproved(tmp_path):
    out, cell, points = _sweep(tmp_path, "", [MID_RUN, AT_BREAKPOINT, IN_THE_TOOL])
    # the dry run approved the breakpoint like the tutorial's user (invoke(None)): the baseline changes the booking once
    assert cell.baseline.effects == {BOOKING: 1}
    aa = _verdict(cell, "AA")
    assert aa.status == "violated", aa.reason
    assert aa.evidence.points == [AT_BREAKPOINT]
    assert aa.evidence.trial_ids and aa.evidence.ledger_seqs
    assert "invoke(None)" in aa.reason and "static breakpoint before sensitive_tools" in aa.reason and BOOKING in aa.reason
    at = points[AT_BREAKPOINT]
    assert at.effect_counts[BOOKING] == [1]  # once, as in the approved run: EO cannot see it, AA does
    assert _verdict(at, "EO").status == "holds"
    # killed mid-run, the recovery runs up to the breakpoint, which the plan then approves
    mid = points[MID_RUN]
    assert _verdict(mid, "AA").status == "holds" and _verdict(mid, "LIVENESS").status == "holds"
    assert mid.effect_counts[BOOKING] == [1]
    # killed after the approved change fired: the approval was given; the change fires again (EO's finding, not AA's)
    tool = points[IN_THE_TOOL]
    assert _verdict(tool, "AA").status == "holds"
    assert tool.effect_counts[BOOKING] == [2] and _verdict(tool, "EO").status == "violated"
    assert out.results.exit_code == 1


REJECT = """answers:
          - update: {messages: [{role: tool, tool_call_id: call-update, content: "API call denied by user. Reasoning: keep my flight"}]}
            as_node: sensitive_tools"""


def test_a_crash_recovery_changes_the_booking_the_user_would_have_rejected(tmp_path):
    # the user rejects as the tutorial shows: the tool call is answered with a ToolMessage
    # (update_state as sensitive_tools) and the run continues without changing the booking
    out, cell, points = _sweep(tmp_path, REJECT, [MID_RUN, AT_BREAKPOINT])
    assert cell.baseline.effects == {}  # the rejected run changes nothing
    mid = points[MID_RUN]
    assert mid.resume_outcomes == ["done"] and mid.effect_counts.get(BOOKING, [0]) == [0]  # the plan rejected it again
    at = points[AT_BREAKPOINT]
    assert at.effect_counts[BOOKING] == [1]  # the recovery's invoke(None) approved what the user would reject
    # an effect the uninterrupted run never fires is EO violated (issue 39: every effect judged, not only the baseline's)
    assert _verdict(at, "EO").status == "violated" and at.extra and all(e.startswith(BOOKING) for e in at.extra), at.extra
    aa = _verdict(cell, "AA")
    assert aa.status == "violated" and aa.evidence.points == [AT_BREAKPOINT], aa.reason


def test_with_a_pause_after_every_assistant_turn_the_booking_waits_behind_the_second(tmp_path):
    # interrupt_after=["assistant"]: the run pauses after the search is planned and after the change
    # is planned; the change is gated by the second approval
    shutil.copy(WORKLOADS / "customer_support.py", tmp_path / "customer_support.py")
    after_search, after_change = "put(step=2,source=loop):after#1", "put(step=4,source=loop):after#1"
    out = run_text(
        tmp_path,
        f"""\
        name: support_after
        kind: kill_sweep
        target: {{durability: sync}}
        workload: customer_support:review_after_assistant
        resume: none
        kill_points: ["{after_search.split("#")[0]}", "{after_change.split("#")[0]}"]
        trials: 1
        seed: 3
    """,
    )
    (cell,) = out.results.cells
    points = {p.point: p for p in cell.points}
    # the recovery walked past the first pause (a search), then the plan approved the change: approved
    assert _verdict(points[after_search], "AA").status == "holds"
    # the recovery walked past the pause in front of the change itself: unapproved
    aa = _verdict(points[after_change], "AA")
    assert aa.status == "violated" and "static breakpoint after assistant" in aa.reason, aa.reason
    assert all(_verdict(p, "LIVENESS").status == "holds" for p in cell.points)


def test_four_approvals_of_one_breakpoint_race(tmp_path):
    shutil.copy(WORKLOADS / "customer_support.py", tmp_path / "customer_support.py")
    out = run_text(
        tmp_path,
        """\
        name: support_race
        kind: race
        target: {durability: sync}
        workload: customer_support:build
        resume: none
        racers: {k: 4}
        trials: 3
        seed: 3
    """,
    )
    (cell,) = out.results.cells
    assert cell.valid_trials == 3  # the parking racer stopped at the breakpoint every time
    assert cell.max_fires is not None and 1 <= cell.max_fires <= 4
    assert all(f is not None and 1 <= f <= 4 for f in cell.fires_per_trial)
    co = _verdict(cell, "CO")
    assert co.status == ("violated" if cell.max_fires > 1 else "holds"), co.reason
    assert _verdict(cell, "LIVENESS").status == "holds"


def test_a_repeated_approval_of_a_per_invoke_breakpoint_is_inert(tmp_path):
    # the breakpoint is passed to every invoke by the workload, not compiled in
    shutil.copy(WORKLOADS / "customer_support.py", tmp_path / "customer_support.py")
    out = run_text(
        tmp_path,
        """\
        name: support_stray
        kind: stray_resume
        target: {durability: sync}
        workload: customer_support:per_invoke
        resume: none
        trials: 1
        seed: 3
    """,
    )
    (cell,) = out.results.cells
    assert cell.valid_trials == 1
    co = _verdict(cell, "CO")
    assert co.status == "holds" and "completed thread" in co.reason, co.reason


def test_a_breakpoint_has_no_id_to_address_and_says_so(tmp_path):
    shutil.copy(WORKLOADS / "customer_support.py", tmp_path / "customer_support.py")
    out = run_text(
        tmp_path,
        """\
        name: support_stray
        kind: stray_resume
        target: {durability: sync}
        workload: customer_support:build
        resume: "command:approve"
        resume_by: interrupt
        trials: 1
        seed: 3
    """,
    )
    (cell,) = out.results.cells
    co = _verdict(cell, "CO")
    assert co.status == "unknown"
    assert "static breakpoint" in str(cell.summary) or "static breakpoint" in co.reason, (co.reason, cell.summary)


@pytest.mark.parametrize(
    ("framework", "resume", "says"),
    [("langgraph", "input", "or 'none': the invoke(None) that approves a static breakpoint"), ("crewai", "none", "'command:<value>'")],
)
def test_a_race_that_cannot_approve_is_refused_at_load_with_the_reason(tmp_path, framework, resume, says):
    with pytest.raises(ChaosError, match="resumes a pending interrupt") as raised:
        run_text(
            tmp_path,
            f"""\
            name: r
            kind: race
            target: {{framework: {framework}}}
            workload: gate_after_interrupt
            resume: {resume}
            racers: {{k: 2}}
            trials: 1
        """,
        )
    assert says in str(raised.value)
    if framework == "crewai":
        assert "breakpoint" not in str(raised.value)


@pytest.mark.parametrize(
    ("kind", "field", "says"),
    [
        ("race", "distinct_values: true", "invoke(None), which carries none"),
        ("race", "answers: [ok]", "no answer of the plan is sent"),
        ("stray_resume", "resume_by: interrupt", "which addresses nothing"),
    ],
)
def test_a_field_that_means_nothing_for_an_invoke_none_approval_is_refused_at_load(tmp_path, kind, field, says):
    shutil.copy(WORKLOADS / "customer_support.py", tmp_path / "customer_support.py")
    with pytest.raises(ChaosError, match="scenario.yaml") as raised:
        run_text(
            tmp_path,
            f"""\
            name: r
            kind: {kind}
            workload: customer_support:build
            resume: none
            {field}
            racers: {{k: 2}}
            trials: 1
        """,
        )
    assert says in str(raised.value)
