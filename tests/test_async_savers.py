"""LangGraph's async API under chaos: ``sqlite_async`` and ``postgres_async`` backends.

LangGraph's server runs ``ainvoke`` over ``AsyncSqliteSaver`` / ``AsyncPostgresSaver`` (issue 8136
reports "database is locked" under concurrent ``aput``). A racer on an async backend opens the
async saver on an event loop of its own and drives the graph with ``ainvoke``; the barriers sit on
``aput`` and ``aput_writes``. What the user sees: the race runs and reports saturation on both,
the racers really held the async savers, and a kill sweep through ``aput`` finds, point for
point, what the sync saver's sweep finds (the built-in workloads pin one task at a time, so the
persistence order is the same).
"""

from __future__ import annotations

import pytest
from kits.runs import run_text

RACE = """\
name: race_async
kind: race
target: {{framework: langgraph, backend: {backend}, durability: sync}}
workload: tests.workloads.async_workloads:observed_gate
resume: "command:true"
racers: {{k: 4, placement: local}}
trials: 2
seed: 8136
"""


def _race(tmp_path, backend: str):
    out = run_text(tmp_path, RACE.format(backend=backend))
    (cell,) = out.results.cells
    assert cell.backend == backend and cell.valid_trials == cell.trials == 2, cell
    assert cell.saturation is not None and 0 < cell.saturation <= 1  # reported: mean gated fires / k
    assert sum(cell.fires.values()) == 2 and all(1 <= int(f) <= 4 for f in cell.fires)
    assert {v.property: v.status for v in cell.verdicts}.keys() == {"CO", "LIVENESS", "LC"}
    assert all(v.status != "unknown" for v in cell.verdicts), cell.verdicts
    return out


def test_the_race_runs_on_sqlite_async_and_reports_saturation(tmp_path, repo, monkeypatch):
    monkeypatch.chdir(repo)  # the workload is named from the repository root
    out = _race(tmp_path, "sqlite_async")
    assert '"AsyncSqliteSaver"' in (out.run_dir / "journal.jsonl").read_text()


def test_the_race_runs_on_postgres_async_and_reports_saturation(tmp_path, repo, monkeypatch, pg_dsn):
    monkeypatch.chdir(repo)
    monkeypatch.setenv("CHAOS_PG_DSN", pg_dsn)
    out = _race(tmp_path, "postgres_async")
    assert '"AsyncPostgresSaver"' in (out.run_dir / "journal.jsonl").read_text()


@pytest.mark.slow
def test_a_sweep_through_aput_finds_what_the_sync_sweep_finds(tmp_path):
    out = run_text(
        tmp_path,
        """\
        name: sweep_async
        kind: kill_sweep
        target: {framework: langgraph, durability: sync}
        workload: three_step
        resume: none
        kill_points: ["(node=b", "(task=b)", "put(step=2"]
        trials: 1
        seed: 3
        matrix: {backend: [sqlite, sqlite_async]}
        """,
    )
    sync, async_ = out.results.cells
    assert (sync.backend, async_.backend) == ("sqlite", "sqlite_async")
    points = [(p.point, p.reached, p.duplicates, p.durable_checkpoints) for p in sync.points]
    assert points and points == [(p.point, p.reached, p.duplicates, p.durable_checkpoints) for p in async_.points]
    assert any(p.duplicates == ["b"] for p in async_.points)
    assert {v.property: v.status for v in async_.verdicts}["EO"] == "violated"
