"""A user reads which anomaly a history of agents sharing state shows, and the operations proving it.

The classifier is pure: these histories are written by hand, as the ledger rows agents record
(``ss.read`` / ``ss.write`` / ``ss.effect``, in commit order). Clean histories, serial or guarded,
must classify as nothing (no false positive), and say whether they exposed the anomaly at all.
"""

from __future__ import annotations

import json

from chaos.kinds.shared_history import classify, exposure, guard_cost, history_of
from chaos.kinds.shared_state import all_schedules, nth_schedule, sampled_schedule, schedule_count


def rows(*ops: dict) -> list[dict]:
    """Ledger rows as agents write them: seq in commit order, task ss.<op>, JSON value."""
    return [{"seq": i + 1, "task": f"ss.{o['op']}", "value": json.dumps(o)} for i, o in enumerate(ops)]


def read(agent, key, version, **value):
    return {"op": "read", "agent": agent, "key": key, "version": version, "value": value}


def write(agent, key, version, frm, compensates=None, **value):
    w = {"op": "write", "agent": agent, "key": key, "version": version, "from": frm, "value": value}
    if compensates:
        w["compensates"] = compensates
    return w


def effect(agent, name, based_on, tool=None, detail=None):
    return {"op": "effect", "agent": agent, "name": name, "based_on": based_on, "tool": tool, "detail": detail}


def codes(*ops):
    return [a.code for a in classify(history_of(rows(*ops)))]


# ---------------------------------------------------------------------------- lost update


def test_two_agents_writing_back_what_they_both_read_lose_one_update():
    ops = history_of(
        rows(
            read(0, "memory", "v0", facts=[]),
            read(1, "memory", "v0", facts=[]),
            write(0, "memory", "v1@a0", "v0", facts=["a"]),
            write(1, "memory", "v1@a1", "v0", facts=["b"]),
        )
    )
    (lu,) = classify(ops)
    assert (lu.code, lu.agent, lu.seqs) == ("LU", 1, (2, 3, 4))
    assert lu.text == (
        "agent 1 read memory v0 (facts=[]) at #2; agent 0 wrote memory v1@a0 (facts=['a']) (computed from v0) at #3; "
        "agent 1 wrote memory v1@a1 (facts=['b']) (computed from v0) at #4: the write of agent 0 is lost"
    )
    assert exposure(ops) == {"LU"}


def test_serial_writers_and_a_validated_retry_lose_nothing():
    serial = (
        read(0, "memory", "v0", facts=[]),
        write(0, "memory", "v1@a0", "v0", facts=["a"]),
        read(1, "memory", "v1@a0", facts=["a"]),
        write(1, "memory", "v1@a1", "v1@a0", facts=["a", "b"]),
    )
    assert codes(*serial) == []
    assert exposure(history_of(rows(*serial))) == {"LU"}  # a clean verdict on it is not vacuous
    retried = rows(
        read(0, "memory", "v0"),
        read(1, "memory", "v0"),
        write(0, "memory", "v1@a0", "v0", facts=["a"]),
        {"op": "retry", "agent": 1, "reason": "memory moved v0 -> v1@a0"},
        read(1, "memory", "v1@a0", facts=["a"]),
        write(1, "memory", "v1@a1", "v1@a0", facts=["a", "b"]),
    )
    assert classify(history_of(retried)) == []
    assert guard_cost(history_of(retried)) == {"retries": 1, "waits": 0}


# ------------------------------------------------------------------------ stale generation


def test_a_booking_made_from_a_date_the_user_changed_meanwhile_is_a_stale_generation():
    ops = history_of(
        rows(
            read(1, "trip", "v0", date="June 14"),
            read(0, "trip", "v0", date="June 14"),
            write(0, "trip", "v1@a0", "v0", date="June 21"),
            effect(1, "book_flight", {"trip": "v0"}, detail="book flight on June 14"),
        )
    )
    (sg,) = classify(ops)
    assert (sg.code, sg.seqs) == ("SG", (1, 3, 4))
    assert sg.text == (
        "agent 1 read trip v0 (date=June 14) at #1; agent 0 wrote trip v1@a0 (date=June 21) (computed from v0) at #3; "
        "agent 1 fired book_flight (book flight on June 14) with trip v0 at #4: trip was at v1@a0 when agent 1 acted on v0"
    )


def test_a_booking_made_after_reading_the_new_date_is_clean():
    ops = (
        read(0, "trip", "v0", date="June 14"),
        write(0, "trip", "v1@a0", "v0", date="June 21"),
        read(1, "trip", "v1@a0", date="June 21"),
        effect(1, "book_flight", {"trip": "v1@a0"}),
    )
    assert codes(*ops) == []
    assert exposure(history_of(rows(*ops))) == {"SG"}


def test_an_effect_nobody_else_could_have_invalidated_exposes_nothing():
    ops = history_of(rows(read(1, "trip", "v0"), effect(1, "book_flight", {"trip": "v0"})))
    assert classify(ops) == [] and exposure(ops) == set()


# ---------------------------------------------------------------------------- phantom tool


def test_calling_a_tool_removed_from_the_registry_after_reading_it_is_a_phantom_tool():
    ops = history_of(
        rows(
            read(1, "registry", "v0", tools=["lookup", "refund"]),
            read(0, "registry", "v0", tools=["lookup", "refund"]),
            write(0, "registry", "v1@a0", "v0", tools=["lookup"]),
            effect(1, "tool:refund", {"registry": "v0"}, tool="refund"),
        )
    )
    (pt,) = classify(ops)
    assert (pt.code, pt.seqs) == ("PT", (1, 3, 4))
    assert pt.text.endswith("agent 1 fired tool:refund with registry v0 at #4: refund was no longer in the registry")
    assert exposure(ops) == {"PT"}


def test_a_tool_still_listed_after_the_registry_changed_is_stale_but_not_phantom():
    assert codes(
        read(1, "registry", "v0", tools=["lookup", "refund"]),
        write(0, "registry", "v1@a0", "v0", tools=["lookup"]),
        effect(1, "tool:lookup", {"registry": "v0"}, tool="lookup"),
    ) == ["SG"]


# --------------------------------------------------------------------------- causal cascade


def test_a_booking_built_on_a_hold_that_is_then_rolled_back_is_a_causal_cascade():
    ops = history_of(
        rows(
            read(0, "trip", "v0", date="June 14", hold=None),
            write(0, "trip", "v1@a0", "v0", date="June 28", hold="tentative"),
            read(1, "trip", "v1@a0", date="June 28", hold="tentative"),
            effect(1, "book_flight", {"trip": "v1@a0"}),
            read(0, "trip", "v1@a0", date="June 28", hold="tentative"),
            write(0, "trip", "v2@a0", "v1@a0", compensates="v1@a0", date="June 14", hold=None),
        )
    )
    (cc,) = classify(ops)
    assert (cc.code, cc.agent, cc.seqs) == ("CC", 1, (2, 3, 4, 6))
    assert cc.text.endswith("agent 1 built on a write that was rolled back")
    assert "agent 0 rolled v1@a0 back, writing trip v2@a0" in cc.text
    assert exposure(ops) == {"SG", "CC"}


def test_booking_after_the_rollback_on_the_rolled_back_read_is_stale_not_a_cascade():
    assert codes(
        write(0, "trip", "v1@a0", "v0", hold="tentative"),
        read(1, "trip", "v1@a0", hold="tentative"),
        write(0, "trip", "v2@a0", "v1@a0", compensates="v1@a0", hold=None),
        effect(1, "book_flight", {"trip": "v1@a0"}),
    ) == ["SG"]


def test_booking_on_the_final_state_after_a_rollback_is_clean():
    ops = (
        write(0, "trip", "v1@a0", "v0", hold="tentative"),
        write(0, "trip", "v2@a0", "v1@a0", compensates="v1@a0", hold=None),
        read(1, "trip", "v2@a0", hold=None),
        effect(1, "book_flight", {"trip": "v2@a0"}),
    )
    assert codes(*ops) == []
    assert exposure(history_of(rows(*ops))) == {"SG", "CC"}


# ---------------------------------------------------------------------- tool effect reordering


def tool(agent, name, plan, step=1):
    return {"op": "effect", "agent": agent, "name": f"tool:{name}", "tool": name, "plan": plan, "step": step, "based_on": {"order": "v0"}}


def test_tool_effects_landing_against_the_plan_are_a_reordering():
    ops = history_of(rows(read(0, "order", "v0"), tool(0, "charge_card", 1), tool(0, "reserve_seat", 0)))
    (tr,) = classify(ops)
    assert (tr.code, tr.agent, tr.seqs) == ("TR", 0, (2, 3))
    assert tr.text == (
        "agent 0's model planned reserve_seat, charge_card, in that order; "
        "the effects landed charge_card (call 1) at #2; reserve_seat (call 0) at #3"
    )
    assert exposure(ops) == {"TR"}


def test_tool_effects_in_plan_order_or_in_different_steps_are_not_a_reordering():
    in_order = (tool(0, "reserve_seat", 0), tool(1, "charge_card", 1), tool(1, "reserve_seat", 0, step=2), tool(0, "charge_card", 1))
    assert codes(*in_order) == []  # agent 0 in order; agent 1's two calls were planned in two steps
    parked = rows(tool(0, "reserve_seat", 0), {"op": "park", "agent": 0, "reason": "charge_card waits"}, tool(0, "charge_card", 1))
    assert classify(history_of(parked)) == [] and guard_cost(history_of(parked)) == {"retries": 0, "waits": 1}


def test_rows_of_other_tasks_in_the_ledger_are_not_part_of_the_history():
    ledger = [{"seq": 1, "task": "a", "value": None}, *rows(read(0, "trip", "v0"))]
    assert [o.op for o in history_of(ledger)] == ["read"]


# -------------------------------------------------------------------------------- schedules


def test_two_agents_have_six_schedules_each_read_before_its_commit():
    assert schedule_count([2, 2]) == 6
    assert all_schedules([2, 2]) == [[0, 0, 1, 1], [0, 1, 0, 1], [0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 1, 0], [1, 1, 0, 0]]
    assert [nth_schedule([2, 2], n) for n in range(6)] == all_schedules([2, 2])
    assert [nth_schedule([3, 2], n) for n in range(10)] == all_schedules([3, 2])
    assert schedule_count([2, 2, 2]) == 90 and schedule_count([2] * 4) == 2520


def test_a_sampled_schedule_is_a_function_of_the_seed():
    s = sampled_schedule([2, 2, 2, 2], 1234)
    assert sorted(s) == [0, 0, 1, 1, 2, 2, 3, 3]
    assert s == sampled_schedule([2, 2, 2, 2], 1234)
    assert len({tuple(sampled_schedule([2, 2, 2, 2], seed)) for seed in range(50)}) > 1
