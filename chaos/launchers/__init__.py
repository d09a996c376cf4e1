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


def make_launcher(placement, run_ctx=None, **options) -> Launcher:
    """The launcher a scenario's ``racers.placement`` asks for.

    ``placement`` is ``"local"`` (default), ``"docker"`` or ``{"hosts": [...], "inventory": path}``
    (a dict or the scenario's ``HostsPlacement``). ``run_ctx`` gives the run id (container labels,
    remote folders); ``options`` go to the launcher (e.g. ``image=`` for docker,
    ``trust_on_first_use=`` for ssh).
    """
    run_id = getattr(run_ctx, "run_id", None) or options.pop("run_id", None) or "adhoc"
    if placement is None or placement == "local":
        from chaos.launchers.local import LocalLauncher

        return LocalLauncher(**options)
    if placement == "docker":
        from chaos.launchers.docker import DockerLauncher

        return DockerLauncher(run_id, **options)
    hosts = getattr(placement, "hosts", None) or (placement.get("hosts") if isinstance(placement, dict) else None)
    if hosts:
        from chaos.launchers.ssh import SshLauncher

        inventory = getattr(placement, "inventory", None) if not isinstance(placement, dict) else placement.get("inventory")
        return SshLauncher(run_id, hosts=list(hosts), inventory=inventory or "hosts/lab.yaml", **options)
    raise ValueError(f"unknown racers.placement {placement!r}: use local, docker or {{hosts: [...], inventory: FILE}}")
