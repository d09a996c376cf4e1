"""A user sends a second message while the agent is still answering the first: what each multitask_strategy does.

``scenarios/agent_server.yaml``'s double-texting cells, one trial each: run 1 waits in flight (its
``draft`` effect fired, its ``hold`` node waiting for the trial's release), run 2 arrives with the
cell's strategy, run 1 is released. DT judges the outcome against the strategy's documented
promise (docs/contract.md); the record keeps both runs' statuses, the effects and the thread's log.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.running.journal import read_journal

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def double_texted(tmp_path_factory):
    lines = (REPO / "scenarios" / "agent_server.yaml").read_text().replace("trials: 5", "trials: 1").splitlines()
    text = "\n".join(line for line in lines if "- {name: race-" not in line and "server-kill-sweep" not in line)
    return run_text(tmp_path_factory.mktemp("agent_server_dt"), text)


def _by_strategy(run) -> dict[str, dict]:
    records, torn = read_journal(run.run_dir / "journal.jsonl")
    assert not torn
    return {r["observations"]["strategy"]: r for r in records if r.get("kind") == "double_texting"}


def test_every_strategy_kept_its_documented_promise(double_texted):
    results = json.loads((double_texted.run_dir / "results.json").read_text())
    status = {c["cell_id"]: next(v["status"] for v in c["verdicts"] if v["property"] == "DT") for c in results["cells"]}
    assert status == {f"case=dt-{s}": "holds" for s in ("reject", "enqueue", "interrupt", "rollback")}, results["cells"]


def test_what_each_strategy_did_to_the_two_runs(double_texted):
    recs = _by_strategy(double_texted)
    assert all(r["valid"] and r["observations"]["first"]["status_when_second_sent"] == "running" for r in recs.values())
    o = {s: r["observations"] for s, r in recs.items()}
    assert o["reject"]["second"]["create"] == 409 and o["reject"]["effects"] == ["draft:m1", "send:m1"]
    assert o["enqueue"]["effects"] == ["draft:m1", "send:m1", "draft:m2", "send:m2"]
    assert o["interrupt"]["first"]["status"] == "interrupted" and "draft:m1" in o["interrupt"]["log"]
    # rollback reverts the thread's state, not the world: m1's draft effect had fired
    assert not any(e.endswith(":m1") for e in o["rollback"]["log"]) and "draft:m1" in o["rollback"]["effects"]
