"""A team tests its own recovery procedure (``resume: app:package.module:recover``): a run killed
before its first checkpoint is lost with LangGraph's ``invoke(None)``, and recovered by the team's
acceptance ledger, which replays the accepted job. FCL judges the team's procedure."""

from __future__ import annotations

import pytest
from kits.runs import run_text

from chaos.racer.errors import ChaosError

FCL = """\
name: acceptance
kind: first_checkpoint
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: chaos.workloads.acceptance:stock
trials: 1
seed: 8764
matrix:
  case:
    - {name: stock, workload: "chaos.workloads.acceptance:stock", resume: none}
    - {name: fixed, workload: "chaos.workloads.acceptance:fixed", resume: "app:chaos.workloads.acceptance:recover"}
"""


@pytest.fixture(scope="module")
def fcl_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("fcl"), FCL)


def _v(cell, prop):
    return next(v for v in cell.verdicts if v.property == prop)


def test_without_the_teams_ledger_a_run_killed_before_its_first_checkpoint_is_lost(fcl_run):
    stock = fcl_run.results.cells[0]
    assert _v(stock, "FCL").status == "violated", _v(stock, "FCL").reason
    assert "EmptyInputError" in _v(stock, "FCL").reason


def test_the_teams_acceptance_ledger_recovers_it(fcl_run):
    fixed = fcl_run.results.cells[1]
    assert fixed.valid_trials >= 1
    assert _v(fixed, "FCL").status == "holds", _v(fixed, "FCL").reason
    assert _v(fixed, "LIVENESS").status == "holds", _v(fixed, "LIVENESS").reason
    assert _v(fixed, "EO").status == "holds", _v(fixed, "EO").reason


def test_a_recovery_that_cannot_be_found_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(ChaosError, match=r"resume: the recovery 'chaos.workloads.acceptance:nope' cannot be found"):
        run_text(
            tmp_path,
            """\
            name: bad
            kind: first_checkpoint
            workload: three_step
            resume: "app:chaos.workloads.acceptance:nope"
            trials: 1
            """,
        )
