"""examples/autogen_refund migrated to the Agent Framework (examples/agent_framework_refund), through chaos.

The same bugs survive the migration: a crash after the refund and before the superstep's checkpoint
refunds again on resume, and four workers answering one request each refund; the framework refuses a
repeated answer by its request id. The fixed variant (an idempotency key, a storage that keeps the
chain linear) comes out clean. Cut down: the refund's kill points, two race trials.
"""

from __future__ import annotations

import pytest
import yaml
from kits.appruns import REPO, case_cell, only_verdict, point_with, run_from_repo

import chaos


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("agent_framework")


def _run(variant: str, out) -> chaos.RunResults:
    data = yaml.safe_load((REPO / "examples" / "agent_framework_refund" / "scenarios" / f"{variant}.yaml").read_text())
    data["kill_points"] = ["effect(task=refund_flight)", "save(responses=flights_refunder):after"]
    for case in data["matrix"]["case"]:
        if case["kind"] == "race":
            case["trials"] = 2
    return run_from_repo(data, out)


def test_the_autogen_bugs_survive_the_migration(tmp_path):
    results = _run("stock", tmp_path)
    sweep = case_cell(results, "sweep")
    assert point_with(sweep, "effect(task=refund_flight)").duplicates == ["refund_flight:ABC123"]
    assert only_verdict(case_cell(results, "race-k4"), "CO").status == "violated"
    assert only_verdict(case_cell(results, "stray"), "CO").status == "holds"
    assert results.exit_code == 1


def test_the_fixed_port_comes_out_clean(tmp_path):
    results = _run("fixed", tmp_path)
    assert results.exit_code == 0, [(c.cell_id, [(v.property, v.status) for v in c.verdicts]) for c in results.cells]
