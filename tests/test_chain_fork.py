"""Two writers fork one thread's chain (issue 26, LangGraph issue 8796).

Four workers resume one parked approval at once. Effects keyed for idempotency fire once (CO
holds), yet every worker commits a checkpoint whose parent is the one they all read: the chain
forks and the checkpoints of all but one writer are no longer reachable from the latest. After
every race chaos lists the thread's checkpoints through the saver (``saver.list``) and says so as
LC, per saver; one worker alone keeps the chain linear. At k=4 and no jitter every racer reads the
pending interrupt before the first commits (measured: 4 children in every one of 25 trials on five
savers), so three trials cannot all miss a fork.
"""

from __future__ import annotations

import pytest
from kits import framework_support as look
from kits.runs import run_text

from chaos.kinds.chain import chain_of

RACE = """
name: chain
kind: race
target: {{framework: langgraph, backend: {backend}, durability: sync}}
workload: approval_idempotent
resume: "command:true"
racers: {{k: {k}}}
trials: {trials}
seed: 8796
"""


def _cell(tmp_path, backend: str, k: int = 4, trials: int = 3):
    (cell,) = run_text(tmp_path, RACE.format(backend=backend, k=k, trials=trials)).results.cells
    assert cell.valid_trials == cell.trials == trials
    return cell


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_four_workers_fork_the_chain_though_the_payment_fires_once(tmp_path, backend, request, monkeypatch):
    if backend == "postgres":
        monkeypatch.setenv("CHAOS_PG_DSN", request.getfixturevalue("pg_dsn"))
    cell = _cell(tmp_path, backend)
    assert look.verdict(cell, "CO").status == "holds"  # idempotent: one fire
    lc = look.verdict(cell, "LC")
    assert lc.status == "violated", lc.reason
    assert "no writer asked for a fork" in lc.reason and "unreachable from the latest" in lc.reason
    assert lc.evidence.trial_ids


def test_one_worker_keeps_the_chain_linear(tmp_path):
    lc = look.verdict(_cell(tmp_path, "sqlite", k=1, trials=2), "LC")
    assert lc.status == "holds" and "read through saver.list" in lc.reason


def test_a_fork_and_its_orphans_are_named_per_namespace():
    tree = [
        {"id": "01", "ns": "", "parent": None, "step": -1},
        {"id": "02", "ns": "", "parent": "01", "step": 0},
        {"id": "03", "ns": "", "parent": "02", "step": 1},  # the writer that lost
        {"id": "04", "ns": "", "parent": "02", "step": 1},
        {"id": "05", "ns": "", "parent": "04", "step": 2},
        {"id": "11", "ns": "agent:t", "parent": None, "step": -1},
        {"id": "12", "ns": "agent:t", "parent": "11", "step": 0},
    ]
    chain = chain_of(tree)
    assert chain["forks"] == [{"ns": "", "parent": "02", "step": 0, "children": ["03", "04"]}]
    assert chain["unreachable"] == [{"ns": "", "id": "03", "step": 1}]
    assert chain["latest"] == {"": "05", "agent:t": "12"}
    assert chain_of([c for c in tree if c["id"] != "03"])["forks"] == []
    # a saver that lists no parents leaves nothing to judge: not read, never "all unreachable"
    assert "no parent" in chain_of([{**c, "parent": None} for c in tree])["error"]
