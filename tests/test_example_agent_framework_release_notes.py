"""The Agent Framework worked example (examples/agent_framework_release_notes) through chaos, as a team would put it in CI.

The framework's own checkpoint + human-in-the-loop sample, ported with a scripted chat client, and a
publish on approval. The stock variant publishes from the review gateway's response handler with a
plain call: a crash after the publish and before the superstep's checkpoint publishes again on
resume, and three processes answering the same request all publish (and fork the checkpoint
chain). The fixed variant (an idempotency key on the publish, a storage that keeps the chain linear)
comes out clean. Cut down: the kill points around the publish, two race trials.
"""

from __future__ import annotations

import pytest
import yaml
from kits.appruns import REPO, case_cell, only_verdict, point_with, run_from_repo

import chaos

KILL_POINTS = ["effect(task=publish)", "save(responses=review_gateway)", "save(superstep=4,idle)"]


@pytest.fixture(scope="module", autouse=True)
def _env():
    from chaos.envs import python_for

    python_for("agent_framework")


def _run(variant: str, out) -> chaos.RunResults:
    data = yaml.safe_load((REPO / "examples" / "agent_framework_release_notes" / "scenarios" / f"{variant}.yaml").read_text())
    data["kill_points"] = KILL_POINTS
    for case in data["matrix"]["case"]:
        if case["kind"] == "race":
            case["trials"] = 2
    return run_from_repo(data, out)


def test_stock_publishes_again_after_a_crash_and_once_per_answering_process(tmp_path):
    results = _run("stock", tmp_path)
    sweep = case_cell(results, "sweep")
    assert only_verdict(sweep, "EO").status == "violated"
    assert point_with(sweep, "effect(task=publish)").duplicates == ["publish:release-notes-v1"]
    # once the superstep that published is checkpointed, a crash publishes nothing again
    assert only_verdict(point_with(sweep, "save(superstep=4,idle):after"), "EO").status == "holds"
    race = case_cell(results, "race-k3")
    assert only_verdict(race, "CO").status == "violated"
    assert only_verdict(race, "LC").status == "violated"
    assert only_verdict(case_cell(results, "stray"), "CO").status == "holds"  # the framework refuses an answered request
    assert results.exit_code == 1


def test_fixed_comes_out_clean(tmp_path):
    results = _run("fixed", tmp_path)
    for cell in results.cells:
        assert all(v.status == "holds" for v in cell.verdicts), [(v.property, v.status, v.reason) for v in cell.verdicts]
    assert results.exit_code == 0
