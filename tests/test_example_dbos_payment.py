"""The DBOS worked example (examples/dbos_payment) through chaos, as a team would put it in CI.

A pydantic-ai agent made durable with DBOS (``DBOSDurability``: each model request a DBOS step), its
``pay`` tool behind ``DBOS.recv("approve")``, a ``FunctionModel`` for the LLM. The stock variant's
tool runs in workflow code, not in a step: chaos must keep finding that a recovery after the
payment and before the workflow's SUCCESS row pays again, even once the model's next answer is
recorded. The fixed variant (a ``@DBOS.step`` with an idempotency key) comes out clean, resumed by
chaos's recovery and by the app's own (``resume: app:``). A deploy of a new application version while
the payment waits for its approval leaves the workflow for v1's executors, in both variants (DBOS's
version check), and nothing is paid under v2. Cut down: three kill points, two race trials, the
deploy parked at the approval (no kill points).
"""

from __future__ import annotations

import pytest
import yaml
from kits.appruns import REPO, case_cell, run_from_repo

import chaos

KILL_POINTS = ["recv(topic=approve):after", "effect(task=pay)", "model.request,n=4):after"]


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("dbos")


def _run(variant: str, out) -> chaos.RunResults:
    data = yaml.safe_load((REPO / "examples" / "dbos_payment" / "scenarios" / f"{variant}.yaml").read_text())
    data["kill_points"] = KILL_POINTS
    for case in data["matrix"]["case"]:
        if case["kind"] == "race":
            case["trials"] = 2
        if str(case.get("resume", "")).startswith("app:"):
            case["kill_points"] = ["recv_wait(topic=approve):after"]
        if case["kind"] == "upgrade":
            case["kill_points"] = []
    return run_from_repo(data, out)


def _verdict(cell, prop: str):
    return next(v for v in cell.verdicts if v.property == prop)


def test_stock_pays_again_on_every_recovery_before_the_workflow_ends(tmp_path):
    results = _run("stock", tmp_path)
    sweep = case_cell(results, "sweep")
    eo = _verdict(sweep, "EO")
    assert eo.status == "violated" and eo.evidence.ledger_seqs
    by_point = {p.point.split("#")[0]: p for p in sweep.points}
    # the plain tool re-ran after its own effect, and after the model's next answer was recorded
    assert by_point["effect(task=pay):after"].duplicates == ["pay:42"]
    assert by_point["step(name=payer_stock__model.request,n=4):after"].duplicates == ["pay:42"]
    # the recorded approval is replayed: recovery there pays once
    assert by_point["recv(topic=approve):after"].duplicates == []
    assert _verdict(sweep, "PC").status == "holds"
    race = case_cell(results, "race-k3")
    assert _verdict(race, "CO").status == "holds"
    _left_for_v1(case_cell(results, "deploy"))
    assert results.exit_code == 1


def _left_for_v1(deploy) -> None:
    """The deploy of application version '2' over a workflow of '1': DBOS ran nothing under v2."""
    up = _verdict(deploy, "UP")
    assert up.status == "holds" and "left for v1" in up.reason and "'1'" in up.reason and "'2'" in up.reason


def test_fixed_pays_once_however_it_is_recovered(tmp_path):
    results = _run("fixed", tmp_path)
    assert results.exit_code == 0
    for case in ("sweep", "race-k3", "stray", "sweep-app", "deploy"):
        cell = case_cell(results, case)
        assert all(v.status != "violated" for v in cell.verdicts), (case, [(v.property, v.status, v.reason) for v in cell.verdicts])
    app = case_cell(results, "sweep-app")
    assert _verdict(app, "LIVENESS").status == "holds"
    _left_for_v1(case_cell(results, "deploy"))
