"""LS (lost state) judged from hand-built sweep records: violated with the lost thread ids, holds with
the kept ones, unknown when the recovery could not tell; and judged only where the target declares
it (a LangGraph sweep's verdicts are EO, PC and LIVENESS as before)."""

from __future__ import annotations

from typing import Any

from kits.runkit import one_point_sweep

from chaos.kinds.sweep import Sweep, check_sweep
from chaos.records import TrialRecord
from chaos.scenario.model import expand, parse_scenario

SERVER = "name: x\nkind: kill_sweep\ntarget: {framework: langgraph_server, backend: inmem}\nworkload: three_step\nresume: none\n"
LANGGRAPH = "name: x\nkind: kill_sweep\ntarget: {framework: langgraph}\nworkload: three_step\nresume: none\n"


def _records(at_kill: dict[str, Any]) -> list[TrialRecord]:
    """The dry run (one boundary, p) and one trial killed at p whose recovery found ``at_kill``."""
    return one_point_sweep({"checkpoints": 0, **at_kill})


def _ls(text: str, at_kill: dict[str, Any]):
    (cell,) = expand(parse_scenario(text), check=False)
    return {v.property: v for v in check_sweep(cell, _records(at_kill), Sweep()).verdicts}


def test_a_thread_the_restarted_server_no_longer_knows_is_lost_state_named_by_its_id():
    got = _ls(SERVER, {"thread_found": False, "lost_thread": "t-41"})
    assert list(got) == ["EO", "PC", "LIVENESS", "LS"]
    ls = got["LS"]
    assert ls.status == "violated" and "no longer knows thread t-41" in ls.reason
    assert ls.evidence.trial_ids == ["c000-p000-r000"] and "lost t-41 (c000-p000-r000)" in ls.evidence.note


def test_a_thread_found_after_the_restart_is_kept_and_a_recovery_that_cannot_tell_is_unknown():
    kept = _ls(SERVER, {"thread_found": True, "server_thread": "t-42", "checkpoints": 3})["LS"]
    assert kept.status == "holds" and "t-42" in kept.reason and "kept t-42" in kept.evidence.note
    untold = _ls(SERVER, {})["LS"]
    assert untold.status == "unknown" and "did not say" in untold.reason


def test_ls_is_judged_only_where_the_target_declares_it():
    assert list(_ls(LANGGRAPH, {"thread_found": False, "lost_thread": "t-43"})) == ["EO", "PC", "LIVENESS"]
