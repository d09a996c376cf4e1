"""Clients of one Agent Server at once: k clients resume one interrupted thread, and a user sends a second message mid-answer.

``scenarios/agent_server.yaml``'s client cells in one run, as the shipped scenario runs them: the
cells ask for the same server, so it is started once and serves them one after another (idle in
between: ``chaos.running.services``), each trial on a thread of its own.

Races, two trials a strategy: one cell per ``multitask_strategy``, each client's HTTP outcome in the
trial record. What chaos measures is the verdict per strategy (CO: the gated payment fired at most
once; LIVENESS: at least once); what each strategy did to the clients it did not let through is
read from the record: ``reject`` answers 409 to the others, ``interrupt`` cancels the run it
replaces, ``rollback`` deletes it, ``enqueue`` runs them one after another.

Double texting, one trial a strategy: run 1 waits in flight (its ``draft`` effect fired, its
``hold`` node waiting for the trial's release), run 2 arrives with the cell's strategy, run 1 is
released. DT judges the outcome against the strategy's documented promise (docs/contract.md); the
record keeps both runs' statuses, the effects and the thread's log.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from kits.runs import run_text

from chaos.running.journal import read_journal

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def clients(tmp_path_factory):
    """One run of the race and double-texting cells (the server-kill sweeps: test_agent_server_sweep.py)."""
    text = (REPO / "scenarios" / "agent_server.yaml").read_text().replace("trials: 5", "trials: 2")
    lines = [line for line in text.splitlines() if "server-kill-sweep" not in line]
    lines = [line.replace("}}", "}, trials: 1}") if "- {name: dt-" in line else line for line in lines]
    return run_text(tmp_path_factory.mktemp("agent_server"), "\n".join(lines))


def _cells(run) -> dict[str, dict]:
    results = json.loads((run.run_dir / "results.json").read_text())
    return {c["cell_id"].removeprefix("case=race-"): c for c in results["cells"] if c["cell_id"].startswith("case=race-")}


def _records(run, strategy: str) -> list[dict]:
    records, torn = read_journal(run.run_dir / "journal.jsonl")
    assert not torn
    return [r for r in records if r.get("cell_id") == f"case=race-{strategy}"]


@pytest.mark.parametrize("strategy", ["reject", "enqueue", "interrupt", "rollback"])
def test_each_strategy_has_a_measured_verdict_and_every_client_an_http_outcome(clients, strategy):
    records = _records(clients, strategy)
    assert len(records) == 2 and all(r["valid"] for r in records), [r.get("invalid_reason") for r in records]
    for r in records:
        per = r["observations"]["per_racer"]
        assert len(per) == 4 and all(p.get("http") for p in per)
        assert r["observations"]["fires"] == sum(1 for row in r["ledger"] if row["task"] == "gate")
        # the server's worker fired the effects, tagged with the client whose run executed the node
        assert [row["racer_id"] for row in r["ledger"] if row["task"] == "pre"] == ["park"]
        fired_by = sorted(row["racer_id"] for row in r["ledger"] if row["task"] == "gate")
        assert fired_by == sorted(p["racer_id"] for p in per if p["fired"])


def test_reject_lets_one_client_through_and_answers_409_to_the_others(clients):
    for r in _records(clients, "reject"):
        codes = Counter(p["http"]["create"] for p in r["observations"]["per_racer"])
        # one run is created; the others arrive while it runs (409) or after it ended (200, nothing left to resume)
        assert codes[200] >= 1 and set(codes) <= {200, 409}
        assert all(p["outcome"] == "refused" for p in r["observations"]["per_racer"] if p["http"]["create"] == 409)


def test_interrupt_and_rollback_end_the_runs_they_replace(clients):
    ended: Counter[str] = Counter()
    # rollback cancels the run it replaces, then deletes it: read in between, it is still "interrupted"
    for strategy, statuses_ended in (("interrupt", {"interrupted"}), ("rollback", {"deleted", "interrupted"})):
        for r in _records(clients, strategy):
            statuses = [p["http"].get("run_status") for p in r["observations"]["per_racer"]]
            assert "success" in statuses
            assert set(statuses) <= {"success", *statuses_ended}
            ended[strategy] += sum(1 for s in statuses if s in statuses_ended)
    assert sum(ended.values()) >= 1, "no run was ever replaced: the clients never overlapped"


def test_the_verdicts_per_strategy(clients):
    cells = _cells(clients)
    assert set(cells) == {"reject", "enqueue", "interrupt", "rollback"}, list(cells)
    for strategy, c in cells.items():
        assert verdict_status(c, "LIVENESS") == "holds", strategy
        assert verdict_status(c, "CO") in ("holds", "violated"), strategy  # measured on valid trials, never unknown
    # reject and enqueue serialise the clients' runs: the first consumes the interrupt, the rest find none
    assert verdict_status(cells["reject"], "CO") == "holds", cells["reject"]["fires"]
    assert verdict_status(cells["enqueue"], "CO") == "holds", cells["enqueue"]["fires"]


def verdict_status(cell: dict, prop: str) -> str:
    return next(v["status"] for v in cell["verdicts"] if v["property"] == prop)


def _by_strategy(run) -> dict[str, dict]:
    records, torn = read_journal(run.run_dir / "journal.jsonl")
    assert not torn
    return {r["observations"]["strategy"]: r for r in records if r.get("kind") == "double_texting"}


def test_every_double_text_strategy_kept_its_documented_promise(clients):
    results = json.loads((clients.run_dir / "results.json").read_text())
    dt = [c for c in results["cells"] if c["cell_id"].startswith("case=dt-")]
    status = {c["cell_id"]: next(v["status"] for v in c["verdicts"] if v["property"] == "DT") for c in dt}
    assert status == {f"case=dt-{s}": "holds" for s in ("reject", "enqueue", "interrupt", "rollback")}, results["cells"]


def test_what_each_strategy_did_to_the_two_runs(clients):
    recs = _by_strategy(clients)
    assert all(r["valid"] and r["observations"]["first"]["status_when_second_sent"] == "running" for r in recs.values())
    o = {s: r["observations"] for s, r in recs.items()}
    assert o["reject"]["second"]["create"] == 409 and o["reject"]["effects"] == ["draft:m1", "send:m1"]
    assert o["enqueue"]["effects"] == ["draft:m1", "send:m1", "draft:m2", "send:m2"]
    assert o["interrupt"]["first"]["status"] == "interrupted" and "draft:m1" in o["interrupt"]["log"]
    # rollback reverts the thread's state, not the world: m1's draft effect had fired
    assert not any(e.endswith(":m1") for e in o["rollback"]["log"]) and "draft:m1" in o["rollback"]["effects"]
