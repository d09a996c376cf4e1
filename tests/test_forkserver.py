"""The fork server: a pre-imported parent that forks racers, safely, and tells the truth about them.

One server (LangGraph preloaded) is shared by the tests of this module; each story starts its
racers in a fresh folder.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from kits.runs import racers_alive
from kits.warmkit import gone, spec

from chaos.launchers.local import proc_state
from chaos.launchers.warm.client import WarmLauncher
from chaos.running.trial import wait_until

ROOT = str(Path(__file__).resolve().parent.parent)


@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    base = tmp_path_factory.mktemp("forkserver")
    lau = WarmLauncher(log_dir=base)
    yield lau
    lau.reap()


def _started(launcher, tmp_path, specs):
    handles = launcher.start_group(specs, str(tmp_path))
    return launcher.client, handles


def test_the_server_preloads_the_framework_but_holds_no_thread_and_no_database(launcher, tmp_path):
    # a racer does real SQLite work (checkpoints and ledger) in its own process...
    client, (h,) = _started(launcher, tmp_path, [spec(tmp_path, "a")])
    assert wait_until(lambda: h.state() == "exited", 120)
    assert h.exit_status().code == 0, h.log_tail()
    result = h.result()
    assert result["status"] == "ok" and result["outcomes"][-1]["status"] == "done"
    assert result["late_imports"] == []  # everything it ran was preloaded: nothing compiled again per racer
    # ...and the rows it appended carry its own pid, not the server's
    import sqlite3

    rows = sqlite3.connect(tmp_path / "ledger.sqlite").execute("SELECT task, pid FROM effects ORDER BY seq").fetchall()
    assert [t for t, _ in rows] == ["a", "b", "c"]
    assert {p for _, p in rows} == {h.pid} and h.pid != client.pid
    # the parent imported LangGraph, yet has one thread and no descriptor on any database
    st = client.request("status")
    assert "langgraph.graph" in st["preloaded"] and "langgraph.checkpoint.sqlite" in st["preloaded"]
    assert st["threads"] == 1
    assert st["fork_unsafe"] is None
    targets = list(st["fds"].values())
    assert not [t for t in targets if ".sqlite" in t or t.startswith("socket:")], targets
    assert st["children"] == {}  # reaped


def test_racers_of_one_request_share_a_fresh_process_group_and_are_children_of_the_server(launcher, tmp_path):
    specs = [spec(tmp_path, f"r{i}", workload="gate_after_interrupt", gate=True, thread=f"g{i}") for i in range(3)]
    client, handles = _started(launcher, tmp_path, specs)
    assert wait_until(lambda: all(h.state() == "stopped" for h in handles), 120), [h.log_tail() for h in handles]
    leader = handles[0].pid
    assert {os.getpgid(h.pid) for h in handles} == {leader}  # one group, led by the first racer
    assert os.getpgid(client.pid) != leader  # the server is not in it: killpg never hits it
    for h in handles:
        with open(f"/proc/{h.pid}/stat", "rb") as f:
            data = f.read()
        assert int(data[data.rfind(b")") + 2 :].split()[1]) == client.pid  # ppid: the server reaps them
        assert [a["barrier"] for a in h.arrivals()] == ["gate"]
    # the gate opens for all with one killpg; all run on and exit 0
    launcher.open_gate(handles)
    assert wait_until(lambda: all(h.state() == "exited" for h in handles), 120)
    assert [h.exit_status().code for h in handles] == [0, 0, 0], [h.log_tail() for h in handles]
    released = [h.result()["t_released_mono_ns"] for h in handles]
    assert all(released)


def test_a_kill_at_a_barrier_is_confirmed_by_the_exit_status_the_server_reports(launcher, tmp_path):
    point = "put(step=1,source=loop):before#1"
    client, (h,) = _started(launcher, tmp_path, [spec(tmp_path, "victim", armed=(point,))])
    assert wait_until(lambda: h.state() == "stopped", 120), h.log_tail()
    assert [a["barrier"] for a in h.arrivals()] == [point]
    assert proc_state(h.pid) == "T"  # observable in /proc like any local racer
    status = h.kill()
    assert status is not None and status.killed and status.signal == signal.SIGKILL
    assert h.state() == "exited" and h.result() is None  # a killed racer writes no result
    assert gone(h.pid)


def test_the_server_refuses_to_fork_once_it_has_a_thread_or_a_database_connection(tmp_path):
    # a bare server (no preload) in a clean process, pushed into each unsafe state in turn
    code = textwrap.dedent(
        """
        import json, os, sqlite3, sys, threading
        from chaos.racer.forkserver import Server, Refused
        r, w = os.pipe()
        s = Server(r, w)
        out = {"clean": s.fork_unsafe()}
        conn = sqlite3.connect(sys.argv[1])
        conn.execute("CREATE TABLE t (x)")
        try:
            s.spawn([{"id": "x", "spec": {}, "log": os.devnull}])
            out["db"] = None
        except Refused as exc:
            out["db"] = str(exc)
        conn.close()
        ev = threading.Event()
        t = threading.Thread(target=ev.wait, name="stray")
        t.start()
        try:
            s.spawn([{"id": "x", "spec": {}, "log": os.devnull}])
            out["thread"] = None
        except Refused as exc:
            out["thread"] = str(exc)
        ev.set(); t.join()
        out["children"] = len(s.children)
        print(json.dumps(out))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "db.sqlite")], capture_output=True, text=True, cwd=ROOT, timeout=120, close_fds=True
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["clean"] is None
    assert out["db"] and "db.sqlite" in out["db"]
    assert out["thread"] and "2 threads" in out["thread"] and "stray" in out["thread"]
    assert out["children"] == 0  # nothing was forked


def test_when_the_orchestrator_dies_the_server_and_its_racers_die_too(tmp_path):
    # an orchestrator with one warm racer standing at its start gate...
    code = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from chaos.launchers.warm.client import WarmLauncher
        from chaos.running.trial import wait_until
        from kits.warmkit import spec
        base = Path(sys.argv[1])
        lau = WarmLauncher(log_dir=base, pool=2)
        (base / "trial").mkdir()
        (h,) = lau.start_group([spec(base, "r0", workload="gate_after_interrupt", gate=True)], str(base / "trial"))
        assert wait_until(lambda: h.state() == "stopped", 120)
        pool = lau.client.request("status")["pool"]
        print(json.dumps({{"server": lau.client.pid, "racer": h.pid, "pool": pool}}), flush=True)
        sys.stdin.read()
        """
    )
    orch = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        pids = json.loads(orch.stdout.readline())
        assert not gone(pids["server"]) and proc_state(pids["racer"]) == "T"
        # all carry the run's folder in their command line (the server's pre-forked racers too):
        # `ps` (and the orphan checks) find them
        assert pids["pool"], "the server keeps racers pre-forked"
        assert {p.pid for p in racers_alive(str(tmp_path))} == {pids["server"], pids["racer"], *pids["pool"]}
        # ...is SIGKILLed: no chance to clean up
        orch.kill()
        orch.wait()
        everyone = [pids["server"], pids["racer"], *pids["pool"]]
        assert wait_until(lambda: all(gone(p) for p in everyone), 30), "orphans survived the orchestrator"
    finally:
        orch.kill()
        orch.wait()


def test_end_of_input_kills_and_reaps_every_racer(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "chaos.racer.forkserver", "--target", "langgraph"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
        close_fds=True,
    )
    try:
        ready = json.loads(proc.stdout.readline())
        assert ready["event"] == "ready", ready
        s = spec(tmp_path, "r0", workload="gate_after_interrupt", gate=True)
        proc.stdin.write(
            (json.dumps({"op": "spawn", "req": 1, "racers": [{"id": "r0", "spec": s, "log": str(tmp_path / "r0.log")}]}) + "\n").encode()
        )
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        pid = reply["pids"]["r0"]
        assert json.loads(proc.stdout.readline()) == {"event": "stopped", "pid": pid, "id": "r0", "sig": signal.SIGSTOP}
        proc.stdin.close()  # the owner's channel closes (an SSH session drops, say)
        exit_ev = json.loads(proc.stdout.readline())
        assert exit_ev["event"] == "exit" and exit_ev["pid"] == pid and exit_ev["signal"] == signal.SIGKILL
        assert proc.wait(timeout=30) == 0
        assert gone(pid)
    finally:
        proc.kill()
        proc.wait()


def test_a_remote_launcher_can_drive_the_server_over_a_unix_socket(tmp_path):
    path = str(tmp_path / "fs.sock")
    proc = subprocess.Popen(
        [sys.executable, "-m", "chaos.racer.forkserver", "--target", "langgraph", "--socket", path],
        stdin=subprocess.DEVNULL,
        cwd=ROOT,
        close_fds=True,
    )
    try:
        assert wait_until(lambda: os.path.exists(path) or proc.poll() is not None, 180)
        sock = socket.socket(socket.AF_UNIX)
        sock.connect(path)
        f = sock.makefile("rwb")
        assert json.loads(f.readline())["event"] == "ready"
        s = spec(tmp_path, "r0")
        f.write(
            (json.dumps({"op": "spawn", "req": 1, "racers": [{"id": "r0", "spec": s, "log": str(tmp_path / "r0.log")}]}) + "\n").encode()
        )
        f.write(b'{"op": "signal", "req": 2, "pid": 1, "sig": 9}\n')  # not its child: refused
        f.flush()
        events = [json.loads(f.readline()) for _ in range(3)]
        spawned, refused, exited = (
            next(e for e in events if pred(e))
            for pred in (lambda e: e.get("req") == 1, lambda e: e.get("req") == 2, lambda e: e.get("event") == "exit")
        )
        assert spawned["ok"] and exited["pid"] == spawned["pids"]["r0"] and exited["code"] == 0
        assert refused["ok"] is False and "not a live child" in refused["error"]
        assert json.loads((tmp_path / "result-r0.json").read_text())["status"] == "ok"
        f.close()
        sock.close()  # end of the connection ends the server
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


def test_if_the_server_dies_its_racers_die_and_their_kills_are_reported_unconfirmed(tmp_path):
    lau = WarmLauncher(log_dir=tmp_path)
    try:
        (h,) = lau.start_group([spec(tmp_path, "r0", workload="gate_after_interrupt", gate=True)], str(tmp_path))
        assert wait_until(lambda: h.state() == "stopped", 120), h.log_tail()
        os.kill(lau.client.pid, signal.SIGKILL)  # the server crashes
        assert wait_until(lambda: h.state() == "exited", 30)
        assert gone(h.pid)  # its parent-death signal took it down
        assert h.exit_status() is None and h.kill() is None  # nobody saw its exit: not confirmed
        # the next group gets a fresh server
        (h2,) = lau.start_group([spec(tmp_path, "r1")], str(tmp_path))
        assert wait_until(lambda: h2.state() == "exited", 120)
        assert h2.exit_status().code == 0, h2.log_tail()
    finally:
        lau.reap()


def test_a_stop_reported_before_the_spawn_reply_is_read_is_not_lost(launcher, tmp_path):
    """Under load a racer can reach its start gate before the orchestrator reads the spawn reply:
    the reply and the server's ``stopped`` event are then both read before the handle exists.
    The stop must survive the handle's creation: in Docker and over SSH the server's events are the
    only status channel, and a lost stop left a racer unseen at the gate until the trial timed out."""
    s = spec(tmp_path, "early", gate=True)
    client = launcher.server("langgraph", str(tmp_path))

    def children() -> set[int]:
        return {int(p) for p in Path(f"/proc/{client.pid}/task/{client.pid}/children").read_text().split()}

    def stopped() -> list[int]:  # the server's pre-forked children wait in a read, never stopped
        return [p for p in children() if proc_state(p) == "T"]

    assert not stopped()
    n_spawn = client.send_request("spawn", racers=[launcher.entry(s, str(tmp_path), client)], pgid=0)
    assert wait_until(lambda: bool(stopped()), 120)  # stands at its gate
    (pid,) = stopped()
    # read the server's events, the spawn reply among them, until its stop is in: the handle does not exist yet
    assert wait_until(lambda: [client.pump(0.05)] and client.stopped.get(pid) is True, 30)
    assert int(client.await_reply(n_spawn, "spawn")["pids"]["early"]) == pid
    client.adopt(pid)
    assert client.stopped.get(pid) is True
    client.request("signal", pid=pid, sig=int(signal.SIGKILL))
    assert client.wait_exit(pid, 30).signal == signal.SIGKILL


def test_a_stop_read_with_the_reply_to_a_release_is_not_lost(launcher, tmp_path, monkeypatch):
    """A held racer, released, can reach its next barrier before the orchestrator reads the reply to
    its release: in Docker the attach stream then hands over the reply and the server's ``stopped``
    event in one read. The stop must stand: marking the racer running once the reply is in hid it,
    and a race's racers stood unseen at the gate until the trial timed out (1-3 of 8 races in Docker)."""
    s = spec(tmp_path, "held", gate=True)
    s["hold"] = True
    client, (h,) = _started(launcher, tmp_path, [s])
    assert wait_until(lambda: h.state() == "stopped" and [a["barrier"] for a in h.arrivals()] == ["hold"], 120)
    await_reply = client.await_reply

    def read_late(n, op, timeout=30):
        # a slow transport: the racer is at its gate, stopped, before the reply is read
        wait_until(lambda: "gate" in [a["barrier"] for a in h.arrivals()] and proc_state(h.pid) == "T", 60)
        return await_reply(n, op, timeout)

    monkeypatch.setattr(client, "await_reply", read_late)
    monkeypatch.setattr(client, "sees_pids", None)  # as from Docker: the server's events are the only status channel
    h.release()
    assert wait_until(lambda: h.state() == "stopped", 10)
    monkeypatch.undo()
    assert [a["barrier"] for a in h.arrivals()] == ["hold", "gate"]
    h.kill()
