"""The lazy filesystem: what a power loss and a torn write take from a real SQLite database.

Every test mounts the real filesystem (FUSE, its own process), lets a real process write through it
and die of a real SIGKILL, drops what was never fsynced, and reopens the database. SQLite's own
documentation says what must survive: in DELETE journal mode with synchronous=FULL every committed
transaction; in WAL mode with synchronous=NORMAL none that no checkpoint made durable.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from chaos.lazyfs import LazyMount, is_mounted, lazy_mounts, missing, unmount_stale

pytestmark = pytest.mark.skipif(missing() is not None, reason=f"no lazy filesystem here: {missing()}")

WRITER = r"""
import os, signal, sqlite3, sys
mode, sync, db = sys.argv[1:4]
c = sqlite3.connect(db, isolation_level=None)
c.execute(f"PRAGMA journal_mode={mode}")
c.execute(f"PRAGMA synchronous={sync}")
c.execute("CREATE TABLE IF NOT EXISTS t(x)")
for i in range(3):
    c.execute("INSERT INTO t VALUES (?)", (i,))
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def lazy(tmp_path: Path):
    with LazyMount(tmp_path / "below", tmp_path / "mnt", log=tmp_path / "ops.jsonl") as m:
        yield m
    assert not is_mounted(str(tmp_path / "mnt")), "the mount outlived its LazyMount"


def _write_and_die(db: Path, mode: str, sync: str) -> None:
    p = subprocess.run([sys.executable, "-c", WRITER, mode, sync, str(db)], capture_output=True, check=False)
    assert p.returncode == -signal.SIGKILL, p.stderr


def _rows(db: Path) -> list[int] | str:
    c = sqlite3.connect(db)
    try:
        return [r[0] for r in c.execute("SELECT x FROM t ORDER BY x")]
    except sqlite3.DatabaseError as exc:
        return f"refused: {exc}"
    finally:
        c.close()


def _case(lazy: LazyMount, name: str) -> Path:
    (lazy.mount / name).mkdir()
    return lazy.mount / name / "x.db"


def test_a_kill_alone_keeps_everything_the_page_cache_held(lazy: LazyMount):
    db = _case(lazy, "kill")
    _write_and_die(db, "WAL", "OFF")
    assert _rows(db) == [0, 1, 2]


def test_power_loss_keeps_every_commit_of_delete_journal_with_full_sync(lazy: LazyMount):
    db = _case(lazy, "full")
    _write_and_die(db, "DELETE", "FULL")
    report = lazy.power_loss("full")
    assert report["lost_ops"] == 0  # every commit was fsynced before it returned
    assert _rows(db) == [0, 1, 2]


def test_power_loss_takes_what_wal_with_normal_sync_never_fsynced(lazy: LazyMount):
    db = _case(lazy, "normal")
    _write_and_die(db, "WAL", "NORMAL")
    report = lazy.power_loss("normal")
    assert report["lost_ops"] > 0 and "normal/x.db-wal" in report["files"]
    assert _rows(db) == "refused: no such table: t"  # the WAL frames never reached the disk
    # the operation log names each lost write
    log = (lazy.log or Path()).read_text().splitlines()
    assert any('"op": "power_loss"' in line for line in log)


def test_the_durable_image_is_what_a_power_loss_leaves_and_it_drops_nothing(lazy: LazyMount, tmp_path: Path):
    """A recorded sweep copies each kill point's power-loss state while the writer goes on: the copy
    is the database a power loss would leave, the answer names what it would lose, and the live
    files keep every write."""
    db = _case(lazy, "image")
    _write_and_die(db, "WAL", "NORMAL")
    pending = lazy.stats()["pending_ops"]
    image = lazy.durable_image("image", tmp_path / "image")
    assert lazy.stats()["pending_ops"] == pending > 0  # nothing dropped: the writes stay in the cache
    assert _rows(tmp_path / "image" / "x.db") == "refused: no such table: t"  # a plain folder, only what was synced
    report = lazy.power_loss("image")
    assert image == report  # the same account as the power loss itself gives
    assert _rows(db) == _rows(tmp_path / "image" / "x.db")


def test_a_torn_durable_image_keeps_the_prefix_the_torn_write_would(lazy: LazyMount, tmp_path: Path):
    (lazy.mount / "t").mkdir()
    f = lazy.mount / "t" / "doc.json"
    f.write_text('{"step": 1, "done": true}')  # written, closed, never fsynced
    image = lazy.durable_image("t", tmp_path / "image", torn=True)
    assert f.read_text() == '{"step": 1, "done": true}'  # the live file keeps every byte
    assert (tmp_path / "image" / "doc.json").read_text() == '{"step": 1, '
    assert image == lazy.torn("t") and f.read_text() == '{"step": 1, '


def test_wal_with_full_sync_survives_a_power_loss(lazy: LazyMount):
    db = _case(lazy, "walfull")
    _write_and_die(db, "WAL", "FULL")
    lazy.power_loss("walfull")
    assert _rows(db) == [0, 1, 2]


def test_a_torn_write_leaves_a_prefix_that_a_reader_sees(lazy: LazyMount):
    f = lazy.mount / "doc.json"
    f.write_text('{"step": 1, "done": true}')  # written, closed, never fsynced
    report = lazy.torn()
    assert report["torn"] == {"path": "doc.json", "seq": report["torn"]["seq"], "offset": 0, "length": 25, "persisted": 12}
    assert f.read_text() == '{"step": 1, '


def test_a_fault_is_scoped_to_its_folder(lazy: LazyMount):
    (lazy.mount / "a").mkdir()
    (lazy.mount / "b").mkdir()
    (lazy.mount / "a" / "f").write_bytes(b"aaaa")
    (lazy.mount / "b" / "f").write_bytes(b"bbbb")
    fd = os.open(lazy.mount / "b" / "f", os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    assert lazy.power_loss("a")["files"] == ["a/f"]
    assert (lazy.mount / "a" / "f").read_bytes() == b""  # created (metadata is durable), data lost
    assert (lazy.mount / "b" / "f").read_bytes() == b"bbbb"


@pytest.mark.exclusive  # an orphan mount on purpose: any other run's start on this machine would unmount it first
def test_a_killed_filesystem_process_is_unmounted_by_the_reaper(tmp_path: Path):
    m = LazyMount(tmp_path / "below", tmp_path / "mnt", run_id="deadrun")
    m.start()
    assert m.proc is not None
    m.proc.send_signal(signal.SIGKILL)  # the daemon dies as with a SIGKILLed orchestrator's clean-up
    m.proc.wait()
    assert ("chaos-lazyfs-deadrun", str(tmp_path / "mnt")) in lazy_mounts()
    assert unmount_stale() == [str(tmp_path / "mnt")]  # its process is gone
    assert not is_mounted(str(tmp_path / "mnt"))
    m.proc = None


def test_a_finished_trials_folder_leaves_the_cache_with_its_data_kept(lazy: LazyMount):
    (lazy.mount / "done").mkdir()
    (lazy.mount / "done" / "f").write_bytes(b"kept")
    assert lazy.stats()["pending_ops"] == 2  # the truncate of open(O_TRUNC), then the write
    assert lazy.forget("done") == {"forgotten": 1}
    assert lazy.stats()["files"] == 0
    assert (lazy.below / "done" / "f").read_bytes() == b"kept"
