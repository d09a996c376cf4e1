"""Launchers: where racers run (local processes, Docker containers, SSH hosts).

A launcher starts racers from specs and hands back ``RacerHandle``s. The orchestrator needs only
what is below: observe barrier arrivals and the process state, release (SIGCONT), kill (SIGKILL,
confirmed by the exit status), wait, and read the racer's result. A launcher also opens a race's
start gate for a whole group at once and reaps everything it started.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import Literal, Protocol

State = Literal["running", "stopped", "exited"]


@dataclass(frozen=True)
class ExitStatus:
    code: int | None
    signal: int | None

    @classmethod
    def from_wait(cls, status: int) -> "ExitStatus":
        if os.WIFSIGNALED(status):
            return cls(code=None, signal=os.WTERMSIG(status))
        return cls(code=os.WEXITSTATUS(status), signal=None)

    @property
    def killed(self) -> bool:
        return self.signal == signal.SIGKILL


class RacerHandle(Protocol):
    racer_id: str
    pid: int | None
    host: str

    def state(self) -> State: ...
    def arrivals(self) -> list[dict]: ...
    def release(self) -> None: ...
    def kill(self) -> ExitStatus | None: ...
    def exit_status(self) -> ExitStatus | None: ...
    def result(self) -> dict | None: ...
    def log_tail(self) -> str: ...


class Launcher(Protocol):
    name: str

    def start_group(self, specs: list[dict], workdir: str) -> list[RacerHandle]: ...
    def open_gate(self, handles: list[RacerHandle]) -> None: ...
    def reap(self) -> None: ...


def make_launcher(placement: object, python: str, run_id: str, extra_paths: list[str] | None = None) -> Launcher:
    """The launcher a cell's placement asks for, running racers with ``python``."""
    from chaos.envs import racer_env

    if placement == "local":
        from chaos.launchers.local import LocalLauncher

        return LocalLauncher(python=python, env=racer_env(python, extra_paths))
    from chaos.errors import EnvironmentProblem

    raise EnvironmentProblem(f"placement {placement!r} is not available in this build of chaos")
