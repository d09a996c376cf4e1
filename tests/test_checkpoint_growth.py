"""Checkpoints that grow without bound (issue 26 item 4: a 135 GB SQLite checkpoint database).

What the user sees: every LangGraph sweep cell reports the bytes of each checkpoint of its
uninterrupted run, their growth per checkpoint, the thread's bytes in the store and the store's own
size (SQLite pages, Postgres pg_total_relation_size of the run's schema) in results.json and the
reports; a scenario's ``bounds`` turns them into SB. A state that appends a message every step
crosses a per-checkpoint bound for real; a small state stays within it.
"""

from __future__ import annotations

import json

import pytest
from kits.runs import run_text

from chaos.racer.errors import ScenarioError
from chaos.scenario.model import parse_scenario

GROWING = """\
name: growth
kind: kill_sweep
target: {{framework: langgraph, backend: {backend}, durability: sync}}
workload: {workload}
workload_params: {params}
resume: none
trials: 1
kill_points: ["effect(task=s1)", "effect(task=a)"]
bounds: {{bytes_per_checkpoint: 16384}}
seed: 26
"""


def _cell(tmp_path, backend="sqlite", workload="growing_messages", params="{steps: 6, message_bytes: 4096}"):
    out = run_text(tmp_path, GROWING.format(backend=backend, workload=workload, params=params))
    (cell,) = out.results.cells
    assert cell.failure is None, cell.failure
    return out, cell, {v.property: v for v in cell.verdicts}


def test_a_message_list_appended_every_step_breaks_the_checkpoint_bound(tmp_path):
    out, cell, v = _cell(tmp_path)
    size = cell.store_size
    sizes = size["checkpoint_bytes"]
    # input, then one checkpoint per step: each carries the whole list, 4 KiB more than the last
    assert size["source"] == "sqlite" and len(sizes) == 8 == size["checkpoints"]
    steps = [b - a for a, b in zip(sizes[:-1], sizes[1:-1], strict=False)]
    assert all(4096 <= d <= 4096 * 1.1 for d in steps), sizes  # one message (and its envelope) more each step
    assert size["growth_per_checkpoint_bytes"] == round((sizes[-1] - sizes[0]) / 7) and sizes[-1] > 6 * 4096
    assert size["thread_bytes"] > sum(sizes[:-1]) // 2 and size["store_bytes"] >= size["thread_bytes"]
    sb = v["SB"]
    assert sb.status == "violated" and sb.evidence.trial_ids == ["c000-dry"], sb
    assert "checkpoint 5 of 8 is" in sb.reason and "above bytes_per_checkpoint 16,384" in sb.reason, sb.reason
    saved = json.loads((out.run_dir / "results.json").read_text())["cells"][0]
    assert saved["store_size"]["checkpoint_bytes"] == sizes
    assert "Checkpoint sizes of the uninterrupted run: 8 checkpoint(s)" in (out.run_dir / "report.md").read_text()
    assert "checkpoint sizes of the uninterrupted run" in (out.run_dir / "report.html").read_text()


def test_a_state_that_stays_small_holds_the_same_bound(tmp_path):
    _, cell, v = _cell(tmp_path, workload="three_step", params="{}")
    assert v["SB"].status == "holds" and "within its bounds: 5 checkpoint(s)" in v["SB"].reason, v["SB"]
    assert cell.store_size["max_checkpoint_bytes"] < 2048


def test_postgres_reports_the_run_schemas_own_size_and_the_threads_rows(tmp_path, monkeypatch, pg_dsn):
    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    _, cell, v = _cell(tmp_path, backend="postgres", params="{steps: 3, message_bytes: 8192}")
    size = cell.store_size
    assert size["source"] == "postgres" and set(size["tables"]) == {"checkpoints", "checkpoint_blobs", "checkpoint_writes"}
    assert size["store_bytes"] == sum(size["tables"].values()) > 0
    assert size["thread_bytes"] >= 3 * 8192 and size["max_checkpoint_bytes"] > 16384
    assert v["SB"].status == "violated" and "(postgres)" in v["SB"].reason, v["SB"]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("kind: kill_sweep\nbounds: {bytes_per_checkpoint: 0}\n", "bounds.bytes_per_checkpoint"),
        ("kind: kill_sweep\nbounds: {bytes_per_message: 10}\n", "bounds.bytes_per_message"),
        ("kind: race\nresume: 'command:true'\nbounds: {bytes_per_thread: 10}\n", "kind race does not read it"),
    ],
)
def test_a_bound_that_cannot_be_judged_is_refused_at_load(text, words):
    with pytest.raises(ScenarioError) as err:
        parse_scenario("name: b\nworkload: three_step\n" + text, "b.yaml")
    assert str(err.value).startswith("b.yaml:") and words in str(err.value) and "\n" not in str(err.value), str(err.value)
