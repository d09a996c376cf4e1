"""Story: the fork server keeps racers pre-forked (``--pool N``) so a trial does not wait for a fork
and its copy-on-write page faults. A user must not be able to tell a pooled racer from a freshly
forked one: it runs the same spec to the same effects and barriers, in the process group of its
request, and until it is handed a spec it holds nothing of any trial (no trial file, none of the
server's descriptors). A pooled child that died unused is replaced without a word, and the pool dies
with the server. Real LangGraph racers over SQLite (~15 s here).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from kits.warmkit import gone, spec

from chaos.running.trial import wait_until

ROOT = str(Path(__file__).resolve().parent.parent)
POINT = "put(step=1,source=loop):before#1"  # the first step's checkpoint, before it is written


class Server:
    """A fork server driven over its JSON-lines stdin/stdout, as a launcher drives it."""

    def __init__(self, pool: int):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "chaos.racer.forkserver", "--target", "langgraph", "--pool", str(pool)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
            close_fds=True,
        )
        self.req = 0
        self.events: list[dict] = []
        ready = self.next_event()
        assert ready["event"] == "ready", ready

    def next_event(self) -> dict:
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        assert line, "the server ended its output"
        return json.loads(line)

    def request(self, op: str, **fields) -> dict:
        self.req += 1
        self.proc.stdin.write((json.dumps({"op": op, "req": self.req, **fields}) + "\n").encode())  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        while True:
            ev = self.next_event()
            if ev["event"] == "reply" and ev["req"] == self.req:
                assert ev["ok"], ev
                return ev
            self.events.append(ev)

    def exits(self, pids: set[int]) -> dict[int, dict]:
        """Wait for the exit events of ``pids`` (every event seen meanwhile is kept)."""
        seen = {e["pid"]: e for e in self.events if e["event"] == "exit"}
        while not pids <= set(seen):
            ev = self.next_event()
            self.events.append(ev)
            if ev["event"] == "exit":
                seen[ev["pid"]] = ev
        return seen

    def pool(self) -> list[int]:
        return self.request("status")["pool"]

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        assert self.proc.wait(timeout=30) == 0
        self.proc.stdout.close()  # type: ignore[union-attr]


@pytest.fixture
def server():
    s = Server(pool=2)
    yield s
    if s.proc.poll() is None:
        s.proc.kill()
        s.proc.wait()


def entry(base: Path, rid: str, **kw) -> dict:
    return {"id": rid, "spec": spec(base, rid, **kw), "log": str(base / f"{rid}.log")}


def effects(base: Path) -> list[tuple[str, int]]:
    return sqlite3.connect(base / "ledger.sqlite").execute("SELECT task, pid FROM effects ORDER BY seq").fetchall()


def test_a_pooled_child_holds_nothing_of_a_trial_until_it_is_handed_one(server, tmp_path):
    pool = server.pool()
    assert len(pool) == 2
    server_pgid = os.getpgid(server.proc.pid)
    for pid in pool:

        def fds(pid=pid) -> dict[int, str]:
            out = {}
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    out[int(fd)] = os.readlink(f"/proc/{pid}/fd/{fd}")
                except FileNotFoundError:
                    pass  # closed between the listing and the read: the child is dropping the server's
            return out

        # right after the fork it still has the server's; it drops them before anything else
        assert wait_until(lambda fds=fds: len(fds()) == 4 and {fds()[0], fds()[1], fds()[2]} == {os.devnull}, 30), fds()
        fds = fds()
        # besides stdio only the pipe its spec will come through: no socket, no database, no log
        assert [t for fd, t in fds.items() if fd > 2] and all(t.startswith("pipe:") for fd, t in fds.items() if fd > 2), fds
        assert os.getpgid(pid) == server_pgid  # in no racer group yet
        assert os.getppid() != pid and int(Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[1]) == server.proc.pid
    assert not list(tmp_path.iterdir())
    server.close()
    assert wait_until(lambda: all(gone(p) for p in pool), 30), "the pool outlived its server"


def test_a_pooled_racer_runs_its_spec_like_a_freshly_forked_one(server, tmp_path):
    pool = server.pool()
    pooled_dir, fresh_dir = tmp_path / "pooled", tmp_path / "fresh"
    reply = server.request("spawn", racers=[entry(pooled_dir, "r0", armed=(POINT,))])
    pid = reply["pids"]["r0"]
    assert pid in pool and reply["pgid"] == pid  # it leads a fresh group, as a fresh fork would
    stopped = server.next_event()
    assert stopped == {"event": "stopped", "pid": pid, "id": "r0", "sig": signal.SIGSTOP}
    assert os.getpgid(pid) == pid
    server.request("signal", pid=pid, sig=signal.SIGCONT)
    assert server.exits({pid})[pid]["code"] == 0, (pooled_dir / "r0.log").read_text()
    assert server.pool() and pid not in server.pool()  # used once, replaced
    server.close()

    fresh = Server(pool=0)
    try:
        assert fresh.pool() == []
        fpid = fresh.request("spawn", racers=[entry(fresh_dir, "r0", armed=(POINT,))])["pids"]["r0"]
        assert fresh.next_event()["event"] == "stopped"
        fresh.request("signal", pid=fpid, sig=signal.SIGCONT)
        assert fresh.exits({fpid})[fpid]["code"] == 0
        fresh.close()
    finally:
        if fresh.proc.poll() is None:
            fresh.proc.kill()
            fresh.proc.wait()
    # the same effects, each recorded under the racer's own pid, and the same barriers in order
    assert effects(pooled_dir) == [(t, pid) for t in ("a", "b", "c")]
    assert [t for t, _ in effects(fresh_dir)] == ["a", "b", "c"]
    results = [json.loads((d / "result-r0.json").read_text()) for d in (pooled_dir, fresh_dir)]
    assert results[0]["pid"] == pid and results[0]["status"] == results[1]["status"] == "ok"
    assert [b["barrier"] for b in results[0]["trace"]] == [b["barrier"] for b in results[1]["trace"]] != []


def test_racers_of_one_request_share_its_group_whether_pooled_or_forked(server, tmp_path):
    pool = server.pool()
    racers = [entry(tmp_path, f"r{i}", workload="gate_after_interrupt", gate=True, thread=f"t{i}") for i in range(3)]
    reply = server.request("spawn", racers=racers)
    pids = [reply["pids"][f"r{i}"] for i in range(3)]
    assert pids[:2] == pool and pids[2] not in pool  # two from the pool, the third forked on the spot
    stops = {e["pid"] for e in server.events if e["event"] == "stopped"}
    while stops != set(pids):
        ev = server.next_event()
        assert ev["event"] == "stopped", ev
        stops.add(ev["pid"])
    assert {os.getpgid(p) for p in pids} == {reply["pgid"]} == {pids[0]}
    server.request("killpg", pgid=reply["pgid"], sig=signal.SIGKILL)
    assert {e["signal"] for e in server.exits(set(pids)).values()} == {signal.SIGKILL}
    server.close()


def test_a_pooled_child_that_died_unused_is_replaced_silently(server, tmp_path):
    dead, alive = server.pool()
    os.kill(dead, signal.SIGKILL)
    assert wait_until(lambda: gone(dead), 30)
    reply = server.request("spawn", racers=[entry(tmp_path, "r0"), entry(tmp_path, "r1", thread="other")])
    pids = set(reply["pids"].values())
    assert dead not in pids and alive in pids
    exits = server.exits(pids)
    assert all(exits[p]["code"] == 0 for p in pids), [(tmp_path / f"r{i}.log").read_text() for i in (0, 1)]
    # the caller hears of its racers only: the dead pooled child was nobody's
    assert dead not in {e.get("pid") for e in server.events}
    assert len(server.pool()) == 2
    server.close()
