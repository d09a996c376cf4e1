"""A racer stopped at a barrier is frozen whole: nothing it guards can become durable."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from chaos.launchers import ExitStatus
from chaos.launchers.local import all_threads_stopped, proc_state
from chaos.racer.barrier import BarrierClient, read_arrivals
from chaos.running.trial import wait_until


def _spec(tmp_path, armed):
    (tmp_path / "b").mkdir(exist_ok=True)
    return {
        "run_id": "r",
        "cell_id": "c",
        "trial_id": "t",
        "racer_id": "victim",
        "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
        "workload": "three_step",
        "thread_id": "th",
        "store": {"path": str(tmp_path / "cp.sqlite")},
        "ledger": {"kind": "sqlite", "path": str(tmp_path / "ledger.sqlite")},
        "barrier": {"dir": str(tmp_path / "b"), "armed": [armed]},
        "actions": [{"op": "run"}],
        "result_path": str(tmp_path / "result.json"),
        "seed": 1,
    }


def _checkpoints(path) -> int:
    if not os.path.exists(path):
        return 0
    c = sqlite3.connect(path)
    try:
        return c.execute("select count(*) from checkpoints").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        c.close()


@pytest.mark.parametrize("attempt", range(5))
def test_a_kill_at_put_before_leaves_no_checkpoint(tmp_path, attempt):
    """Regression: with a process-directed SIGSTOP the arriving thread sometimes ran on into the
    commit, so a checkpoint became durable 'before' its own put (2 of 4 trials)."""
    spec = _spec(tmp_path, "put(step=-1,source=input):before#1")
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    p = subprocess.Popen([sys.executable, "-m", "chaos.racer.main", str(tmp_path / "spec.json")])
    try:
        assert wait_until(lambda: read_arrivals(spec["barrier"]["dir"]) and all_threads_stopped(p.pid), 60)
        assert _checkpoints(spec["store"]["path"]) == 0
    finally:
        p.kill()
        _, status = os.waitpid(p.pid, 0)
        p.returncode = -9
    assert ExitStatus.from_wait(status).killed
    assert _checkpoints(spec["store"]["path"]) == 0  # not even after WAL recovery


def test_released_racer_finishes_and_records_every_boundary(tmp_path):
    spec = _spec(tmp_path, "put(step=0,source=loop):after#1")
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    p = subprocess.Popen([sys.executable, "-m", "chaos.racer.main", str(tmp_path / "spec.json")])
    try:
        assert wait_until(lambda: proc_state(p.pid) == "T" and all_threads_stopped(p.pid), 60)
        (arrival,) = read_arrivals(spec["barrier"]["dir"])
        assert arrival["barrier"] == "put(step=0,source=loop):after#1" and arrival["pid"] == p.pid
        os.kill(p.pid, 18)  # SIGCONT
        assert p.wait(60) == 0
    finally:
        if p.poll() is None:
            p.kill()
    result = json.loads((tmp_path / "result.json").read_text())
    trace = [t["barrier"] for t in result["trace"]]
    assert "put(step=0,source=loop):after#1" in trace and "effect(task=c):after#1" in trace
    assert result["outcomes"][0]["status"] == "done"


def test_occurrences_are_counted_per_name_and_arrivals_serialised(tmp_path):
    client = BarrierClient(directory=str(tmp_path), racer_id="x")
    ids = [client.hit("put(step=1)") for _ in range(3)] + [client.hit("other")]
    assert ids == ["put(step=1)#1", "put(step=1)#2", "put(step=1)#3", "other#1"]
    # concurrent hits from many threads never lose or duplicate an occurrence number
    threads = [threading.Thread(target=lambda: [client.hit("t") for _ in range(100)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = sorted(int(e["barrier"].split("#")[1]) for e in client.trace if e["barrier"].startswith("t#"))
    assert got == list(range(1, 801))


def test_an_arrival_while_another_thread_is_inside_a_write_names_that_write(monkeypatch, tmp_path):
    """A recording keeps a crash state only where one thread writes: the arrival says when not."""
    import chaos.racer.barrier as barrier

    monkeypatch.setattr(barrier.signal, "pthread_kill", lambda *a: None)  # arrivals written, no stop of the test's process
    client = BarrierClient(directory=str(tmp_path), racer_id="rec", armed=frozenset({"w(b):before#1", "w(b):before#2"}))
    client.hit("w(a):before")  # this thread is inside its write
    other = threading.Thread(target=client.hit, args=("w(b):before",), name="writer-b")
    other.start()
    other.join(10)
    client.hit("w(a):after")
    again = threading.Thread(target=client.hit, args=("w(b):before",), name="writer-b")
    again.start()
    again.join(10)
    first, second = read_arrivals(str(tmp_path))
    assert first["writing"] == ["w(a):before#1 on MainThread"]
    assert "writing" not in second  # a's write is done: one writer
