"""A team's graph behind the LangGraph Agent Server: chaos starts the real server, and leaves nothing behind.

The server is ``langgraph dev`` (langgraph-api over the in-memory runtime) from the target's own
environment. Started, it answers ``/ok`` and serves the built-in graphs; stopped, its process group,
port and folder are gone; when the orchestrator that started it is SIGKILLed, the server dies with
it (parent-death signal) and the next reaper finds the run's folder and removes it. Bad input (a
langgraph.json that does not load, a port in use, a server that never answers) is one line, exit 3,
nothing left running.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from chaos.envs import chaos_root, python_for
from chaos.racer.errors import TargetError
from chaos.targets.langgraph_server.host import AgentServer, builtin_config, port_in_use


@pytest.fixture(scope="module")
def server_python() -> str:
    return python_for("langgraph_server")


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _gone(pid: int, timeout: float = 20.0) -> bool:
    try:
        p = psutil.Process(pid)
        p.wait(timeout=timeout)
    except psutil.NoSuchProcess:
        return True
    except psutil.TimeoutExpired:
        return p.status() == psutil.STATUS_ZOMBIE
    return True


def test_started_it_answers_and_serves_the_builtins_stopped_nothing_is_left(server_python, tmp_path):
    folder = tmp_path / "srv"
    s = AgentServer(server_python, folder, builtin_config(("gate_after_interrupt", "three_step"))).start()
    assert s.proc is not None and s.port is not None
    port = s.port
    assert s.alive() and _listening(port)
    assert (folder / "langgraph.json").exists()
    from langgraph_sdk import get_sync_client

    graphs = {a["graph_id"] for a in get_sync_client(url=s.url).assistants.search(limit=100)}
    assert {"gate_after_interrupt", "three_step"} <= graphs
    pids = [s.proc.pid] + [c.pid for c in psutil.Process(s.proc.pid).children(recursive=True)]
    s.stop()
    assert all(_gone(p) for p in pids)
    assert not _listening(port) and not port_in_use(port)
    assert not folder.exists()


ORCHESTRATOR = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from chaos.running import registry
    from chaos.targets.langgraph_server.host import AgentServer, builtin_config
    run_id, run_dir, work_dir, python = sys.argv[1:5]
    with registry.ActiveRun(run_id, Path(run_dir), Path(work_dir)) as active:
        Path(work_dir).mkdir(parents=True, exist_ok=True)
        s = AgentServer(python, Path(work_dir) / "agent-server-0", builtin_config(("gate_after_interrupt",)),
                        labels=active.env()).start()
        print(json.dumps({"pid": s.proc.pid, "port": s.port, "folder": str(s.folder)}), flush=True)
        time.sleep(600)
    """
)


def test_an_orchestrator_sigkilled_leaves_no_server_port_or_folder(server_python, tmp_path, monkeypatch):
    state = tmp_path / "state"
    monkeypatch.setenv("CHAOS_STATE_DIR", str(state))
    run_id, run_dir, work_dir = "r-agent-server-kill", tmp_path / "run", tmp_path / "work"
    run_dir.mkdir()
    env = {**os.environ, "PYTHONPATH": chaos_root(), "CHAOS_STATE_DIR": str(state)}
    orch = subprocess.Popen(
        [sys.executable, "-c", ORCHESTRATOR, run_id, str(run_dir), str(work_dir), server_python], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        line = orch.stdout.readline() if orch.stdout else ""
        info = json.loads(line)
        from chaos.running import registry

        # the server carries the run's labels: a reaper finds it as it finds a stray racer
        assert info["pid"] in [pid for pid, _, _ in registry.racer_processes(run_id)]
        assert _listening(info["port"])
        orch.send_signal(signal.SIGKILL)
        orch.wait(timeout=30)
        assert _gone(info["pid"]), "the server outlived the orchestrator that started it"
        deadline = time.monotonic() + 20
        while _listening(info["port"]) and time.monotonic() < deadline:
            time.sleep(0.1)  # the kernel closes the listening socket with the process: observed, not assumed
        assert not _listening(info["port"])
        reaped = registry.reap_stale()
        assert any(r.run_id == run_id for r in reaped)
        assert not Path(info["folder"]).exists() and not work_dir.exists()
        assert registry.racer_processes(run_id) == []
    finally:
        if orch.poll() is None:
            orch.kill()


def test_a_langgraph_json_that_does_not_load_is_one_line_and_nothing_runs(server_python, tmp_path):
    folder = tmp_path / "bad"
    cfg = {"graphs": {"agent": str(tmp_path / "missing.py") + ":graph"}, "dependencies": ["."]}
    s = AgentServer(server_python, folder, cfg, ready_timeout_s=60)
    with pytest.raises(TargetError) as err:
        s.start()
    assert err.value.exit_code == 3 and "\n" not in err.value.message
    assert "did not start" in err.value.message and err.value.hint and "server.log" in err.value.hint
    assert not s.alive() and not _listening(s.port or 0)


def test_a_port_in_use_is_refused_before_anything_starts(server_python, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        s = AgentServer(server_python, tmp_path / "srv", builtin_config(("three_step",)), port=port)
        with pytest.raises(TargetError) as err:
            s.start()
    assert f"port {port} is in use" in err.value.message and s.proc is None


def test_a_server_that_never_answers_is_killed_and_named(server_python, tmp_path):
    s = AgentServer(server_python, tmp_path / "srv", builtin_config(("three_step",)), ready_timeout_s=0.5)
    with pytest.raises(TargetError) as err:
        s.start()
    assert "did not answer within" in err.value.message
    assert s.proc is not None and _gone(s.proc.pid) and not s.alive()


@pytest.mark.parametrize("workload", ["nope", "mypkg.graphs:agent"])
def test_a_graph_the_server_does_not_serve_is_refused_at_load_one_line_exit_3(tmp_path, workload):
    scenario = tmp_path / "s.yaml"
    text = (Path(__file__).resolve().parent.parent / "scenarios" / "agent_server.yaml").read_text()
    text = text.replace("workload: gate_after_interrupt", f"workload: {workload}").split("matrix:")[0]
    scenario.write_text(text)
    env = {**os.environ, "PYTHONPATH": chaos_root(), "CHAOS_STATE_DIR": str(tmp_path / "state")}
    out = subprocess.run(
        [sys.executable, "-m", "chaos", "run", str(scenario), "--out", str(tmp_path / "out")], capture_output=True, text=True, env=env
    )
    assert out.returncode == 3, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"unknown workload {workload!r}" in lines[0] and "built-in: gate_after_interrupt" in lines[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("agent-server-*"))
