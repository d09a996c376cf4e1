"""A bug in one property's checker costs that property, never the others (Jepsen's ``compose``,
check-safe per property): per cell (``chaos.kinds.checking.compose``) and, in a sweep, per kill
point (``chaos.kinds.sweep.at_point``). tests/kinds/test_registry_kinds.py tells the same story for a
race cell; here a sweep after a power loss, whose DU and CV come from another judge than EO, PC and
liveness."""

from __future__ import annotations

import dataclasses

from kits.runkit import one_point_sweep

import chaos.kinds.faults
import chaos.kinds.sweep
from chaos.kinds.sweep import Sweep, check_sweep
from chaos.records import TrialRecord
from chaos.scenario.model import expand, parse_scenario

POWER_LOSS = "name: x\nkind: kill_sweep\ntarget: {framework: langgraph}\nworkload: three_step\nfault: power_loss\n"


def _records() -> list[TrialRecord]:
    """The dry run (one boundary, p) and one trial killed at p whose resume finished the run."""
    return one_point_sweep({})


def test_a_power_loss_judge_that_raises_costs_du_and_cv_not_eo_pc_or_liveness(monkeypatch):
    (cell,) = expand(parse_scenario(POWER_LOSS), check=False)
    healthy = {v.property: v for v in check_sweep(cell, _records(), Sweep()).verdicts}
    assert list(healthy) == ["EO", "PC", "LIVENESS", "DU", "CV"]

    def buggy(*args):
        raise KeyError("after_power_loss")

    monkeypatch.setattr(chaos.kinds.faults, "ADD_ON", dataclasses.replace(chaos.kinds.faults.ADD_ON, judge=buggy))
    result = check_sweep(cell, _records(), Sweep())
    got = {v.property: v for v in result.verdicts}
    assert list(got) == ["EO", "PC", "LIVENESS", "DU", "CV"]
    for code in ("EO", "PC", "LIVENESS"):  # judged as if nothing had gone wrong
        assert got[code] == healthy[code], code
    for code in ("DU", "CV"):
        assert got[code].status == "unknown"
        assert f"p: the {code} checker failed: KeyError: 'after_power_loss'" in got[code].reason
    (point,) = result.points
    assert [v.property for v in point.verdicts] == ["EO", "PC", "LIVENESS", "DU", "CV"] and result.failure is None


def test_a_pc_judge_that_raises_at_a_point_costs_pc_there_not_eo_or_liveness(monkeypatch):
    """EO, PC and LIVENESS at a kill point are three judges, each check-safe: a bug in one costs
    that property at that point, and the cell's verdict for it says which checker failed."""
    (cell,) = expand(parse_scenario(POWER_LOSS.replace("fault: power_loss\n", "")), check=False)
    healthy = {v.property: v for v in check_sweep(cell, _records(), Sweep()).verdicts}
    assert list(healthy) == ["EO", "PC", "LIVENESS"]

    def buggy(*args):
        raise KeyError("at_kill")

    monkeypatch.setattr(chaos.kinds.sweep, "_point_pc", buggy)
    result = check_sweep(cell, _records(), Sweep())
    got = {v.property: v for v in result.verdicts}
    assert got["EO"] == healthy["EO"] and got["LIVENESS"] == healthy["LIVENESS"]
    assert got["PC"].status == "unknown"
    assert "p: the PC checker failed: KeyError: 'at_kill'" in got["PC"].reason
    (point,) = result.points
    assert [(v.property, v.status) for v in point.verdicts] == [
        ("EO", healthy["EO"].status),
        ("PC", "unknown"),
        ("LIVENESS", healthy["LIVENESS"].status),
    ]
