"""The local launcher: racers as child processes of the orchestrator on this machine.

Each group of racers (one trial's racers) shares a fresh process group, so one ``killpg`` opens a
race's start gate for all of them at once and one ``killpg`` reaps them. The racer also sets a
parent-death signal, so it dies with the orchestrator even if the orchestrator is SIGKILLed.
State is read from ``/proc/<pid>/stat``; exits are collected with ``waitpid`` so a kill is
confirmed by the exit status itself (killed by SIGKILL), not assumed. Racers get ``TMPDIR`` inside
the run's work folder (the parent of the trial folder; ``chaos.launchers.racer_tmp``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from chaos.launchers import ExitStatus, RacerFiles, State, racer_tmp
from chaos.racer.barrier import read_arrivals
from chaos.racer.procfs import all_threads_stopped, proc_state


class LocalRacer(RacerFiles):
    def __init__(self, racer_id: str, proc: subprocess.Popen, spec: dict, log_path: Path):
        self.racer_id = racer_id
        self.proc = proc
        self.pid: int | None = proc.pid
        self.host = "localhost"
        self.spec = spec
        self.log_path = log_path
        self._status: ExitStatus | None = None

    def _poll(self, block: bool = False) -> ExitStatus | None:
        if self._status is None:
            try:
                pid, st = os.waitpid(self.proc.pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                pid, st = self.proc.pid, 0
            if pid:
                self._status = ExitStatus.from_wait(st)
                self.proc.returncode = self._status.code if self._status.code is not None else -(self._status.signal or 0)
        return self._status

    def state(self) -> State:
        if self._poll() is not None:
            return "exited"
        s = proc_state(self.proc.pid)
        if s in ("T", "t"):
            # the leader stops first; "stopped" means no thread can still run
            return "stopped" if all_threads_stopped(self.proc.pid) else "running"
        if s is None or s in ("Z", "X"):
            # exited but not yet visible to waitpid: wait for it, it is a zombie already
            self._poll(block=s is not None)
            return "exited" if self._status is not None else "running"
        return "running"

    def arrivals(self) -> list[dict]:
        return read_arrivals(self.spec["barrier"]["dir"], self.racer_id)

    def release(self) -> None:
        if self._status is None:
            try:
                os.kill(self.proc.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def kill(self) -> ExitStatus | None:
        """SIGKILL and wait for the exit status that proves it (None: could not confirm)."""
        if self._status is None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + 10
            while self._poll() is None and time.monotonic() < deadline:
                time.sleep(0.0005)
        return self._status

    def exit_status(self) -> ExitStatus | None:
        return self._poll()


class LocalLauncher:
    name = "local"

    def __init__(self, python: str | None = None, env: dict | None = None):
        self.python = python or sys.executable
        self.env = env
        self._groups: list[int] = []
        self._racers: list[LocalRacer] = []

    def start_group(self, specs: list[dict], workdir: str) -> list[LocalRacer]:
        handles: list[LocalRacer] = []
        pgid = 0
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        env["TMPDIR"] = racer_tmp(Path(workdir).parent)  # what the framework leaves there goes with the run's work folder
        for spec in specs:
            spec_path = Path(workdir) / f"spec-{spec['racer_id']}.json"
            spec_path.write_text(json.dumps(spec))
            log_path = Path(workdir) / f"racer-{spec['racer_id']}.log"
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [self.python, "-m", "chaos.racer.main", str(spec_path)],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    process_group=pgid,
                    close_fds=True,
                )
            if pgid == 0:
                pgid = proc.pid
                self._groups.append(pgid)
            h = LocalRacer(spec["racer_id"], proc, spec, log_path)
            handles.append(h)
            self._racers.append(h)
        return handles

    def open_gate(self, handles: list[LocalRacer]) -> None:
        """Continue every racer of the group with one signal to the process group."""
        groups = {os.getpgid(h.proc.pid) for h in handles if h.exit_status() is None}
        for g in groups:
            try:
                os.killpg(g, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def forget(self, handles: list[LocalRacer]) -> None:
        """Drop finished racers (a trial's, at its end) so a long run holds no handle per racer ever
        started; one still running is kept for ``reap``."""
        done = {id(h) for h in handles if h.exit_status() is not None}
        self._racers = [h for h in self._racers if id(h) not in done]
        live_groups = {h.proc.pid for h in self._racers} | {os.getpgid(h.proc.pid) for h in self._racers if h.exit_status() is None}
        self._groups = [g for g in self._groups if g in live_groups]

    def reap(self) -> None:
        """Kill and collect every racer this launcher started that is still around."""
        for g in self._groups:
            try:
                os.killpg(g, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        for h in self._racers:
            h.kill()
        self._groups.clear()
        self._racers.clear()
