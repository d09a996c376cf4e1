"""A public ADK example judged (examples/adk_shipping): the 5-Day AI Agents course's shipping coordinator.

Stock: an order killed before the tool's response event is placed again when the course's workflow
resumes the invocation with its id (EO). Fixed: an idempotency key and the confirmation declared
on the tool come out clean on Postgres. Cut down: two kill points, the race in 3 trials (stock's CO
is judged only when a trial duplicated, so the test asserts EO, which every run finds).
"""

from __future__ import annotations

import os

import pytest
import yaml
from kits.appruns import REPO, case_cell, run_from_repo

import chaos

KILL_POINTS = ["effect(task=place_order)", "append(author=shipping_agent,kind=response:place_shipping_order)"]


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("adk")


def _run(variant: str, out) -> chaos.RunResults:
    data = yaml.safe_load((REPO / "examples" / "adk_shipping" / "scenarios" / f"{variant}.yaml").read_text())
    data["kill_points"] = KILL_POINTS
    for case in data["matrix"]["case"]:
        if case["kind"] == "race":
            case["trials"] = 3
    return run_from_repo(data, out)


def _verdict(cell, prop: str):
    return next(v for v in cell.verdicts if v.property == prop)


def test_stock_places_the_order_again_when_the_resumed_invocation_runs_the_confirmed_tool_again(tmp_path):
    results = _run("stock", tmp_path)
    eo = _verdict(case_cell(results, "sweep"), "EO")
    assert eo.status == "violated" and "effect(task=place_order):after#1" in eo.evidence.points
    assert results.exit_code == 1


@pytest.mark.skipif(
    not os.environ.get("CHAOS_PG_DSN"), reason="fixed keeps its sessions on Postgres: needs CHAOS_PG_DSN (scripts/postgres.sh)"
)
def test_fixed_places_one_order_however_it_is_crashed_raced_or_answered_twice(tmp_path):
    results = _run("fixed", tmp_path)
    for name in ("sweep", "race-k4", "stray"):
        cell = case_cell(results, name)
        assert all(v.status == "holds" for v in cell.verdicts), (name, [(v.property, v.status) for v in cell.verdicts])
    assert results.exit_code == 0
