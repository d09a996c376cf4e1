"""An outage a run can finish (issue 40, point 6): its own Postgres stopped for 8 s mid-run.

Before: the run spent its repeats while the server was down (60 environment faults in 10 s), exited
3 asking for `--resume`, and that resume re-ran nothing: the trials spoiled by the outage stayed,
a cell whose dry run died in the outage stayed 0/0. Now the run waits (bounded, said on the
terminal) for its database before spending a repeat, and a resume re-runs what an outage spoiled.

The server is the test's own cluster (``kits.pgcluster``): stopping the shared one would cut
every other test and helper on the machine.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kits.pgcluster import Cluster
from kits.robustkit import chaos, chaos_bg, journal_lines, wait_for
from kits.runs import write_scenario

SCENARIO = """\
name: outage_story
kind: kill_sweep
target: {framework: langgraph, backend: postgres, durability: sync}
workload: three_step
resume: none
trials: 4
seed: 3
"""


@pytest.fixture
def private_pg():
    cluster = Cluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


def _outage(private_pg, tmp_path: Path, wait_s: str) -> tuple[int, str, Path]:
    """Run the sweep on the private server; once a trial is journaled, stop the server for 8 s."""
    path = write_scenario(tmp_path, SCENARIO)
    out, state = tmp_path / "out", tmp_path / "state"
    proc = chaos_bg(["run", str(path), "--out", str(out), "-q"], state, env={"CHAOS_PG_DSN": private_pg.dsn, "CHAOS_OUTAGE_WAIT_S": wait_s})
    try:
        journal = wait_for(lambda: next(out.glob("outage_story/2*/journal.jsonl"), None), 300, "the run's journal")
        wait_for(lambda: journal_lines(journal) >= 2, 300, "two journaled trials")
        private_pg.stop()
        time.sleep(8)  # the outage itself: how long the server is down is the story, not a synchronisation
        private_pg.start()
        stdout, stderr = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, stdout + stderr, journal.parent


def _lost(run_dir: Path) -> list[str]:
    """Trials (and dry runs) with no attempt that was not spoiled by the environment."""
    recs = [json.loads(x) for x in (run_dir / "journal.jsonl").read_text().splitlines()]
    base = {r["trial_id"] if r["retry_of"] is None else r["retry_of"] for r in recs}
    good = {r["retry_of"] or r["trial_id"] for r in recs if r["fault"] != "environment"}
    return sorted(base - good)


def test_a_run_waits_for_its_database_instead_of_spending_its_repeats(private_pg, tmp_path):
    code, text, run_dir = _outage(private_pg, tmp_path, "120")
    assert "does not answer: waiting up to 120 s" in text, text
    assert "answers again" in text, text
    assert code in (0, 1, 2), text
    assert _lost(run_dir) == []


def test_a_resume_re_runs_what_an_outage_spoiled(private_pg, tmp_path):
    code, text, run_dir = _outage(private_pg, tmp_path, "2")  # the run gives up waiting: exit 3, resumable
    assert code == 3 and "--resume" in text, text
    r = chaos(["run", "--resume", str(run_dir), "-q"], tmp_path / "state", env={"CHAOS_PG_DSN": private_pg.dsn})
    assert r.returncode in (0, 1, 2), r.stdout + r.stderr
    assert _lost(run_dir) == []


def test_the_ledger_reads_again_after_its_backend_is_terminated(private_pg):
    """chaos's own connection to its Postgres ledger (racers on other hosts share it): its backend
    terminated (a failover, an admin's pg_terminate_backend), the next read reconnects instead of
    ending the run with "no trial ran"."""
    import psycopg

    from chaos.racer.ledger import open_ledger

    cfg = {"kind": "postgres", "dsn": private_pg.dsn, "table": "chaos_effects"}
    writer = open_ledger(cfg, {"run_id": "R", "cell_id": "c", "trial_id": "t1", "racer_id": "r0", "host": "h"})
    reader = open_ledger(cfg)
    try:
        writer.append(task="pay", value="40EUR", thread_id="th1")
        with psycopg.connect(private_pg.dsn, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
            )
        assert [r["effect_key"] for r in reader.rows(run_id="R")] == ["pay:40EUR"]
    finally:
        writer.close()
        reader.close()
