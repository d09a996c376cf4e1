"""A user crashes LangGraph graphs whose branches run in parallel and reads, per kill point, how
many repeats ended which way.

The graphs run at LangGraph's default concurrency, so which branch had fired or saved when the
kill came is the scheduler's choice. These tests assert only what holds whatever it chose: a
branch whose own effect stopped the process had no durable writes, so it runs again; a branch
whose write was durable at the kill never runs again (LangGraph replays it); and each point's
distribution accounts for every repeat.
Which of the others ran again, and whether the next step had already run, is left open.
"""

from __future__ import annotations

import threading

import pytest
from kits.runs import racers_alive, run_text

from chaos import rerun
from chaos.racer.ledger import SqliteLedger

W0_SAVED = "put_writes(node=w0,channels=log+join:w0+w1+w2+gate:join):after#1"
ALL_WORKERS_SAVED = "put_writes(node=0000000000,channels=log+branch:to:join):after#3"  # Send tasks' path ends in an index

PARALLEL = """\
name: parallel_small
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: parallel_send
resume: none
trials: 3
seed: 8115
matrix:
  case:
    - {name: send, kill_points: ["effect(task=worker):after#1", "branch:to:join):after#3"]}
    - {name: tools, workload: parallel_tools, trials: 2, kill_points: ["put_writes(node=tools"]}
    - {name: gate-exit, workload: parallel_gate, durability: exit, resume: "command:true",
       kill_points: ["put_writes(node=w0,channels=log+join:w0+w1+w2+gate:join):after"]}
"""


@pytest.fixture(scope="module")
def parallel_run(tmp_path_factory):
    return run_text(tmp_path_factory.mktemp("parallel"), PARALLEL)


def _cell(run, name):
    return next(c for c in run.results.cells if c.cell_id == f"case={name}")


def _point(cell, point):
    return next(p for p in cell.points if p.point == point)


def test_each_point_counts_every_repeat_once(parallel_run):
    for cell in parallel_run.results.cells:
        for p in cell.points:
            assert sum(p.distribution.values()) == p.trials, (cell.cell_id, p.point, p.distribution)
            assert p.reached == p.trials, f"{cell.cell_id} {p.point}: {p.resume_outcomes}"


def test_a_worker_killed_right_after_its_effect_runs_again(parallel_run):
    send = _cell(parallel_run, "send")
    p = _point(send, "effect(task=worker):after#1")
    # the worker that stopped the process had saved nothing: every repeat duplicates some worker
    # (which one, and whether a sibling too, is the scheduler's choice)
    assert all(o.startswith("duplicated worker:") for o in p.distribution), p.distribution
    eo = next(v for v in p.verdicts if v.property == "EO")
    assert eo.status == "violated" and f"(in {p.trials} of {p.trials} repeats)" in eo.reason
    assert next(v for v in send.verdicts if v.property == "EO").status == "violated"


def test_once_every_workers_write_is_durable_no_worker_runs_twice(parallel_run):
    p = _point(_cell(parallel_run, "send"), ALL_WORKERS_SAVED)
    for w in ("worker:0", "worker:1", "worker:2"):
        assert p.effect_counts[w] == [1] * p.reached, (w, p.effect_counts)
    # the writes are saved on LangGraph's background threads: by the third one's commit, join may
    # already have run (and fired) in the killed process, so join's fate is open (seen: 1 in 3)
    assert set(p.distribution) <= {"exactly once", "duplicated join"}, p.distribution
    pc = next(v for v in p.verdicts if v.property == "PC")
    assert pc.status == "holds", pc.reason


def test_parallel_tool_calls_run_again_together_until_the_tool_node_is_saved(parallel_run):
    tools = _cell(parallel_run, "tools")
    before = _point(tools, "put_writes(node=tools,channels=messages+branch:to:agent):before#1")
    after = _point(tools, "put_writes(node=tools,channels=messages+branch:to:agent):after#1")
    # ToolNode runs the message's three calls in one task: they run again together or not at all
    # (not at all if the next step's checkpoint, saved on another thread, recorded the task first)
    together = "duplicated tool:lookup_fare, tool:notify_crew, tool:reserve_seat"
    assert set(before.distribution) <= {together, "exactly once"}, before.distribution
    assert after.distribution == {"exactly once": after.trials}


def test_a_kill_in_the_exit_flush_keeps_the_branches_already_written(parallel_run):
    gate = _cell(parallel_run, "gate-exit")
    p = _point(gate, W0_SAVED)
    # w0's write was durable at the kill: LangGraph replays it, never runs w0 again; w1 and w2
    # were written (or not) by the flush's other threads, so their fate is open
    assert p.effect_counts["w0"] == [1] * p.reached
    possible = {"exactly once", "nothing durable", "duplicated w1", "duplicated w2", "duplicated w1, w2"}
    assert set(p.distribution) <= possible, p.distribution
    pc = next(v for v in gate.verdicts if v.property == "PC")
    assert pc.status in ("holds", "unknown"), pc.reason  # unknown only if nothing was durable in every repeat


def test_the_report_shows_the_distribution_and_nothing_is_left_running(parallel_run):
    md = (parallel_run.run_dir / "report.md").read_text()
    assert "Outcomes per kill point over its repeats:" in md
    assert "x exactly once" in md
    assert racers_alive(str(parallel_run.run_dir)) == []


def test_rerun_reproduces_a_duplicated_worker(parallel_run, tmp_path):
    send = _cell(parallel_run, "send")
    eo = next(v for v in _point(send, "effect(task=worker):after#1").verdicts if v.property == "EO")
    again = rerun(parallel_run.run_dir, eo.evidence.trial_ids[0])
    (cell,) = again.cells
    assert next(v for v in cell.verdicts if v.property == "EO").status == "violated"


def test_parallel_branches_firing_idempotent_effects_at_once_share_the_ledger(tmp_path):
    # one racer, several LangGraph worker threads, one SQLite connection: each append_once is one
    # transaction at a time (a second BEGIN inside another thread's transaction used to fail)
    ledger = SqliteLedger(str(tmp_path / "ledger.sqlite"), {"run_id": "r", "trial_id": "t"})
    start, errors = threading.Barrier(8), []

    def branch(i: int) -> None:
        start.wait()
        try:
            for n in range(20):
                ledger.append_once(task="worker", value=str(n % 5), thread_id="th")
        except Exception as exc:  # recorded, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=branch, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(r["effect_key"] for r in ledger.rows(run_id="r")) == [f"worker:{n}" for n in range(5)]
    ledger.close()
