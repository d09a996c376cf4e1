"""The LangGraph Agent Server chaos starts, waits for, kills, restarts and stops (orchestrator side).

Why: the ``langgraph_server`` target tests the graph as deployed behind LangGraph's Agent Server
(``langgraph dev``: ``langgraph-api`` over the in-memory runtime), so the system under test is a
server process, not a racer. One server serves one cell (started once, before its first trial;
again only after a kill), and the later cells of the run that would start it alike (the same
graphs and environment: ``share_key``), as long as it is idle between them (``idle``: no run of
an earlier cell pending or running; ``chaos.running.services``); racers are its clients
(``chaos.targets.langgraph_server.session``), told its URL in their spec.

What it promises:

* ``AgentServer.start()`` writes a ``langgraph.json`` in its own folder (the built-ins of
  ``chaos.targets.langgraph_server.app``; a team's own graph beside them; or, for a workload
  ``path/to/langgraph.json#id``, the team's file with its paths made absolute:
  ``chaos.targets.langgraph_server.config``), starts
  ``langgraph dev --no-browser --no-reload`` on 127.0.0.1 in a process group of its own, with the
  run's registry labels in its environment (a dead orchestrator's server is found and killed by
  ``chaos clean`` / the next ``chaos run``, as a stray racer is) and a parent-death signal (it dies
  with the orchestrator), and returns when ``/ok`` answers. It phones nowhere: CLI analytics,
  version check and LangSmith tracing are off (``OFFLINE_ENV``); without a license key the server's
  metadata loop does not start.
* Every way it can fail to come up (a ``langgraph.json`` that does not load, a graph id it does
  not serve, a port in use, no answer within ``ready_timeout_s``) is a ``TargetError``: one line
  naming what and what to do (exit 3), the server's process group killed first.
* ``kill()`` SIGKILLs the whole group (the victim of a server kill) and waits; ``restart()`` starts
  it again on the same folder and port; ``stop()`` asks it to shut down (SIGTERM: the in-memory
  runtime flushes ``.langgraph_api/`` then), SIGKILLs what remains after ``grace_s``, and removes
  the folder. No process, port or folder is left behind.
* ``host(cell, context)`` (``chaos.targets.hooks.HostsCells``) is the cell's server, made from what
  the engine hands over (``HostContext``: the racers' Python, the work folder, the run's labels,
  where a team's files are found, the ledger); the engine starts and stops it around the cell's
  trials and hands each racer its ``url`` (``RacerSpec.service_url``). Nothing here reads the run
  folder or the run registry.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from chaos.racer.errors import TargetError
from chaos.racer.protocol import LedgerSpec
from chaos.targets.langgraph_server.config import ConfigError, is_config_ref
from chaos.targets.langgraph_server.config import load as load_config
from chaos.targets.langgraph_server.offline import OFFLINE_ENV, free_port

if TYPE_CHECKING:
    from chaos.scenario.model import Cell
    from chaos.targets.hooks import HostContext

READY_TIMEOUT_S = 90.0
APP_MODULE = Path(__file__).with_name("app.py")


def port_in_use(port: int) -> bool:
    """Something listens on ``port`` (bound as the server binds it: connections in TIME_WAIT do not count)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def builtin_config(graphs: tuple[str, ...]) -> dict:
    """The ``langgraph.json`` serving chaos's built-in workloads (graph id = workload name)."""
    return {"graphs": {g: f"{APP_MODULE}:{g}" for g in graphs}, "dependencies": ["."]}


# the graph id a team's own graph (workload ``package.module:graph``) is served under
APP_GRAPH = "app"


def graphs_for(workload: str) -> dict[str, str]:
    """The graphs a server for ``workload`` serves: the built-ins, and a team's own graph
    (``package.module:graph``, a graph factory as langgraph.json names one: the server calls it with
    the run's config) as ``app``."""
    from chaos.targets.langgraph_server.app import DEPLOYED

    graphs = dict(builtin_config(DEPLOYED)["graphs"])
    if ":" in workload:
        graphs[APP_GRAPH] = workload
    return graphs


def _pdeathsig() -> None:  # pragma: no cover - runs in the child between fork and exec
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class AgentServer:
    """One ``langgraph dev`` process (group) over one folder; see the module docstring."""

    def __init__(
        self,
        python: str,
        folder: Path,
        config: dict,
        *,
        ledger: LedgerSpec | None = None,
        labels: dict[str, str] | None = None,
        port: int | None = None,
        ready_timeout_s: float = READY_TIMEOUT_S,
        extra_env: dict[str, str] | None = None,
        keep_folder: bool = False,
    ):
        self.python = python
        self.folder = Path(folder)
        self.config = config
        self.ledger = ledger
        self.labels = dict(labels or {})
        self.port = port
        self.asked_port = port  # None: a free one, picked at start (``port`` is then the one it got)
        self.ready_timeout_s = ready_timeout_s
        self.extra_env = dict(extra_env or {})
        self.keep_folder = keep_folder
        self.proc: subprocess.Popen | None = None
        self.starts: list[float] = []  # seconds each start took until /ok answered

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.folder / "server.log"

    def _env(self) -> dict[str, str]:
        from chaos.envs import chaos_root

        env = dict(os.environ)
        env.update(OFFLINE_ENV)
        env.update(self.labels)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (chaos_root(), str(self.folder), env.get("PYTHONPATH", "")) if p)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        if self.ledger is not None:
            env["CHAOS_SERVER_LEDGER"] = json.dumps(self.ledger)
        extra = dict(self.extra_env)
        if "PYTHONPATH" in extra:  # added to chaos's own path, never replacing it
            env["PYTHONPATH"] = os.pathsep.join(p for p in (env["PYTHONPATH"], extra.pop("PYTHONPATH")) if p)
        env.update(extra)
        return env

    def start(self) -> AgentServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.port is None:
            self.port = free_port()
        elif port_in_use(self.port):
            raise TargetError(
                f"the Agent Server's port {self.port} is in use",
                hint="stop what listens there, or leave the port out (chaos picks a free one)",
            )
        cfg = self.folder / "langgraph.json"
        cfg.write_text(json.dumps(self.config, indent=2))
        cmd = [self.python, "-m", "langgraph_cli", "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1"]
        cmd += ["--port", str(self.port), "--config", str(cfg)]
        t0 = time.monotonic()
        log = open(self.log_path, "ab")  # the child inherits it; ours is closed below
        try:
            self.proc = subprocess.Popen(
                cmd, cwd=self.folder, env=self._env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_pdeathsig
            )
        finally:
            log.close()
        why = self._wait_ready()
        if why is not None:
            self.kill()
            raise TargetError(f"the LangGraph Agent Server did not start: {why}", hint=f"its log: {self.log_path}")
        self.starts.append(time.monotonic() - t0)
        return self

    def _wait_ready(self) -> str | None:
        """None once ``/ok`` answers and every graph id of the config is served; else why not."""
        deadline = time.monotonic() + self.ready_timeout_s
        delay = 0.02
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                return f"it exited ({self.proc.returncode if self.proc else '?'}): {self._last_error()}"
            try:
                with urllib.request.urlopen(f"{self.url}/ok", timeout=2) as r:
                    if r.status == 200:
                        return self._graphs_missing()
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(delay)  # polling a port that is not open yet: nothing to wait on but time
            delay = min(delay * 1.5, 0.2)
        return f"/ok did not answer within {self.ready_timeout_s:.0f} s"

    def _graphs_missing(self) -> str | None:
        """Why a graph of the config is not served (the server loads graphs at start-up and exits on a
        broken one, so this is a last check), or None."""
        want = sorted((self.config.get("graphs") or {}).keys())
        req = urllib.request.Request(
            f"{self.url}/assistants/search", data=b'{"limit": 1000}', headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                served = {a.get("graph_id") for a in json.loads(r.read())}
        except (urllib.error.URLError, OSError, ValueError) as exc:
            return f"its assistants could not be listed ({exc})"
        missing = [g for g in want if g not in served]
        return f"graph(s) {', '.join(missing)} not served" if missing else None

    def _last_error(self) -> str:
        try:
            lines = [ln.strip() for ln in self.log_path.read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return "no log"
        errs = [ln for ln in lines if "Error" in ln or "error" in ln]
        return (errs or lines or ["no output"])[-1][:300]

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def share_key(self) -> str:
        """``SharedService``: what a server is started with (Python, ``langgraph.json``, environment,
        ledger, folder kept or not); two cells whose servers would be started alike share one."""
        how = {
            "python": self.python,
            "config": self.config,
            "ledger": self.ledger,
            "labels": self.labels,
            "env": self.extra_env,
            "port": self.asked_port,
            "keep": self.keep_folder,
        }
        return json.dumps(how, sort_keys=True, default=str)

    def idle(self) -> bool:
        """``SharedService``: alive, and no thread of it busy (no run pending or running: a double
        text's held run, a client's enqueued run), so the next cell's runs meet no earlier cell's."""
        if not self.alive():
            return False
        req = urllib.request.Request(
            f"{self.url}/threads/search",
            data=json.dumps({"status": "busy", "limit": 1}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return json.loads(r.read()) == []
        except (urllib.error.URLError, OSError, ValueError):
            return False  # it cannot say: a fresh server for the next cell

    def kill(self) -> None:
        """SIGKILL the server's whole process group and reap it."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=30)

    def restart(self) -> AgentServer:
        """Start again on the same folder and port (after a kill)."""
        self.kill()
        return self.start()

    def shutdown(self, grace_s: float = 30.0) -> None:
        """SIGTERM (a clean shutdown: the in-memory runtime flushes its files), then SIGKILL after ``grace_s``."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
        self.kill()

    def stop(self) -> None:
        """Shut down, then SIGKILL what remains; the folder goes unless it is kept (``keep_folder``)."""
        self.shutdown()
        self.kill()  # whatever of the group outlived its leader
        if not self.keep_folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def host(cell: Cell, context: HostContext) -> AgentServer:
    """The (not yet started) server of ``cell`` (``HostsCells``): the built-ins and a team's own
    graph, or the scenario's own ``langgraph.json``; everything else is what the engine handed over."""
    paths = list(context.search)  # a team's module is looked up where its racers look it up
    config = {"graphs": graphs_for(cell.scenario.workload), "dependencies": ["."]}
    if is_config_ref(cell.scenario.workload):  # the team's own langgraph.json: its graphs, dependencies, env
        try:
            team = load_config(cell.scenario.workload, paths)
        except ConfigError as exc:
            raise TargetError(str(exc), hint="fix the file or the graph id after '#' in the scenario's workload") from None
        config = team.server_config()
        config["env"] = {k: v for k, v in team.env.items() if k not in OFFLINE_ENV}  # chaos phones nowhere, whatever the file says
        paths = [*team.paths, *paths]
    extra = {"PYTHONPATH": os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")])}
    folder = context.work_dir / f"agent-server-{cell.index}"
    return AgentServer(
        context.python, folder, config, ledger=context.ledger, labels=dict(context.labels), extra_env=extra, keep_folder=context.keep
    )


if __name__ == "__main__":  # a manual check: python -m chaos.targets.langgraph_server.host PYTHON
    s = AgentServer(sys.argv[1], Path(sys.argv[2]), builtin_config(("gate_after_interrupt",))).start()
    print(s.url, f"{s.starts[-1]:.2f}s")
    s.stop()
