"""A team answers approvals through the Agent Server's runs API: k clients resume one interrupted thread at once.

``scenarios/agent_server.yaml``, cut to two trials a strategy: one cell per ``multitask_strategy``,
the server started once per cell, each client's HTTP outcome in the trial record. What chaos
measures is the verdict per strategy (CO: the gated payment fired at most once; LIVENESS: at
least once); what each strategy did to the clients it did not let through is read from the
record: ``reject`` answers 409 to the others, ``interrupt`` cancels the run it replaces, ``rollback``
deletes it, ``enqueue`` runs them one after another.
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
def server_race(tmp_path_factory):
    text = (REPO / "scenarios" / "agent_server.yaml").read_text().replace("trials: 5", "trials: 2")
    # the other cells have their own tests (test_agent_server_sweep.py, test_agent_server_double_texting.py)
    text = "\n".join(line for line in text.splitlines() if "server-kill-sweep" not in line and "- {name: dt-" not in line)
    return run_text(tmp_path_factory.mktemp("agent_server"), text)


def _cells(run) -> dict[str, dict]:
    results = json.loads((run.run_dir / "results.json").read_text())
    return {c["cell_id"].removeprefix("case=race-"): c for c in results["cells"]}


def _records(run, strategy: str) -> list[dict]:
    records, torn = read_journal(run.run_dir / "journal.jsonl")
    assert not torn
    return [r for r in records if r.get("cell_id") == f"case=race-{strategy}"]


@pytest.mark.parametrize("strategy", ["reject", "enqueue", "interrupt", "rollback"])
def test_each_strategy_has_a_measured_verdict_and_every_client_an_http_outcome(server_race, strategy):
    records = _records(server_race, strategy)
    assert len(records) == 2 and all(r["valid"] for r in records), [r.get("invalid_reason") for r in records]
    for r in records:
        per = r["observations"]["per_racer"]
        assert len(per) == 4 and all(p.get("http") for p in per)
        assert r["observations"]["fires"] == sum(1 for row in r["ledger"] if row["task"] == "gate")
        # the server's worker fired the effects, tagged with the client whose run executed the node
        assert [row["racer_id"] for row in r["ledger"] if row["task"] == "pre"] == ["park"]
        fired_by = sorted(row["racer_id"] for row in r["ledger"] if row["task"] == "gate")
        assert fired_by == sorted(p["racer_id"] for p in per if p["fired"])


def test_reject_lets_one_client_through_and_answers_409_to_the_others(server_race):
    for r in _records(server_race, "reject"):
        codes = Counter(p["http"]["create"] for p in r["observations"]["per_racer"])
        # one run is created; the others arrive while it runs (409) or after it ended (200, nothing left to resume)
        assert codes[200] >= 1 and set(codes) <= {200, 409}
        assert all(p["outcome"] == "refused" for p in r["observations"]["per_racer"] if p["http"]["create"] == 409)


def test_interrupt_and_rollback_end_the_runs_they_replace(server_race):
    ended: Counter[str] = Counter()
    # rollback cancels the run it replaces, then deletes it: read in between, it is still "interrupted"
    for strategy, statuses_ended in (("interrupt", {"interrupted"}), ("rollback", {"deleted", "interrupted"})):
        for r in _records(server_race, strategy):
            statuses = [p["http"].get("run_status") for p in r["observations"]["per_racer"]]
            assert "success" in statuses
            assert set(statuses) <= {"success", *statuses_ended}
            ended[strategy] += sum(1 for s in statuses if s in statuses_ended)
    assert sum(ended.values()) >= 1, "no run was ever replaced: the clients never overlapped"


def test_the_verdicts_per_strategy(server_race):
    cells = _cells(server_race)
    assert set(cells) == {"reject", "enqueue", "interrupt", "rollback"}, list(cells)
    for strategy, c in cells.items():
        assert verdict_status(c, "LIVENESS") == "holds", strategy
        assert verdict_status(c, "CO") in ("holds", "violated"), strategy  # measured on valid trials, never unknown
    # reject and enqueue serialise the clients' runs: the first consumes the interrupt, the rest find none
    assert verdict_status(cells["reject"], "CO") == "holds", cells["reject"]["fires"]
    assert verdict_status(cells["enqueue"], "CO") == "holds", cells["enqueue"]["fires"]


def verdict_status(cell: dict, prop: str) -> str:
    return next(v["status"] for v in cell["verdicts"] if v["property"] == prop)
