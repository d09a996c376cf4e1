"""The effect ledger keeps every row whose commit returned, whatever happens to its writer next.

The SQLite ledger commits without fsync (``synchronous=NORMAL``, see ``chaos.racer.ledger``): the faults
chaos injects kill processes, not the machine, and a committed WAL write lives in the kernel. These
tests kill a real writer with SIGKILL right after its commit returned and read the row back.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from chaos.launchers import ExitStatus
from chaos.launchers.local import proc_state
from chaos.racer.ledger import SqliteLedger
from chaos.running.trial import wait_until

WRITER = textwrap.dedent("""
    import os, sys
    from chaos.racer.ledger import SqliteLedger
    led = SqliteLedger(sys.argv[1], {"run_id": "run", "trial_id": "t0", "racer_id": "victim", "host": "h"})
    seq = led.append(task="charge", value=None, thread_id="th")
    os.write(1, f"{seq}\\n".encode())
    os.kill(os.getpid(), {sig})  # the commit returned; nothing more of this process runs
""")


def _killed_writer(db, sig: int) -> tuple[int, ExitStatus]:
    p = subprocess.Popen([sys.executable, "-c", WRITER.replace("{sig}", str(int(sig))), str(db)], stdout=subprocess.PIPE)
    out = p.stdout.readline()  # the seq, written once the commit returned
    p.stdout.close()
    if sig == signal.SIGSTOP:  # stopped right after the commit, as at a barrier; then killed there
        assert wait_until(lambda: proc_state(p.pid) in ("T", "t"), 60), "the writer never stopped"
        os.kill(p.pid, signal.SIGKILL)
    _, status = os.waitpid(p.pid, 0)
    p.returncode = -9
    return int(out.split()[0]), ExitStatus.from_wait(status)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP], ids=["killed-at-once", "stopped-then-killed"])
@pytest.mark.parametrize("reader_open", [False, True], ids=["writer-alone", "orchestrator-connected"])
def test_a_row_committed_right_before_a_sigkill_is_read_afterwards(tmp_path, sig, reader_open):
    db = tmp_path / "ledger.sqlite"
    SqliteLedger(str(db)).close()  # the orchestrator makes the ledger before any racer runs
    keeper = SqliteLedger(str(db)) if reader_open else None
    try:
        seq, status = _killed_writer(db, sig)
        assert status.killed, f"the writer was not SIGKILLed: {status}"
        # with the writer alone, its WAL was never checkpointed: the row is only in the -wal file
        if not reader_open:
            assert os.path.getsize(str(db) + "-wal") > 0
        rows = SqliteLedger(str(db)).rows(run_id="run", trial_id="t0")
        assert [(r["seq"], r["effect_key"], r["racer_id"]) for r in rows] == [(seq, "charge", "victim")]
    finally:
        if keeper is not None:
            keeper.close()


def test_the_ledger_commits_in_wal_mode_without_fsync_per_commit(tmp_path):
    """What the module docstring argues for: WAL journal, synchronous NORMAL (1), on every connection."""
    led = SqliteLedger(str(tmp_path / "ledger.sqlite"))
    try:
        assert led._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert led._conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    finally:
        led.close()
    assert sqlite3.connect(str(tmp_path / "ledger.sqlite")).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
