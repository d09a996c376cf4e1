"""Launchers: where racers run (local processes, Docker containers, SSH hosts).

A launcher starts racers from specs and hands back ``RacerHandle``s. The orchestrator needs only
what is below: observe barrier arrivals and the process state, release (SIGCONT), kill (SIGKILL,
confirmed by the exit status), wait, and read the racer's result. A launcher also opens a race's
start gate for a whole group at once and reaps everything it started.

A local launcher (cold or warm) also gives its racers a temp folder of their own (``TMPDIR``,
``racer_tmp``): ``tmp`` inside the launcher's folder, so what a framework drops in the temp folder
(CrewAI's ``crewai:<md5>.lock``) goes with that folder, whoever drives the launcher (``chaos run``,
a test, a benchmark), and never lands in the machine's ``/tmp``.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, cast, runtime_checkable

from chaos.racer.protocol import BackgroundError, background_path
from chaos.racer.redact import masked_tail

State = Literal["running", "stopped", "exited"]


def racer_tmp(folder: str | os.PathLike) -> str:
    """The temp folder of a launcher's racers: ``tmp`` inside ``folder``, the launcher's own (its log
    folder, else the run's work folder: the parent of the trials' folders), made if missing.

    One per launcher, not one per racer: racers that share a store share it, so a framework's named
    file locks there (CrewAI locks its SQLite store by name) still exclude each other across them."""
    d = Path(folder) / "tmp"
    d.mkdir(parents=True, exist_ok=True)
    return str(d)


@dataclass(frozen=True)
class ExitStatus:
    code: int | None
    signal: int | None

    @classmethod
    def from_wait(cls, status: int) -> ExitStatus:
        if os.WIFSIGNALED(status):
            return cls(code=None, signal=os.WTERMSIG(status))
        return cls(code=os.WEXITSTATUS(status), signal=None)

    @property
    def killed(self) -> bool:
        return self.signal == signal.SIGKILL


class RacerFiles:
    """What every handle reads the same way: the racer's result file and its log, both local files
    (remote launchers fetch them back before the orchestrator reads them)."""

    spec: dict
    log_path: Path

    def result(self) -> dict | None:
        try:
            with open(self.spec["result_path"], "rb") as f:
                return json.loads(f.read())
        except (FileNotFoundError, ValueError):
            return None

    def background_errors(self) -> list[BackgroundError]:
        """The racer's threads that died of an unhandled exception, as it wrote them beside its result
        the moment they died (``chaos.racer.main.BackgroundErrors``): read even when the racer then
        died without writing its result. [] when none died."""
        try:
            with open(background_path(self.spec["result_path"]), "rb") as f:
                errors = json.loads(f.read())
        except (FileNotFoundError, ValueError):
            return []
        return [cast(BackgroundError, e) for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []

    def log_tail(self, n: int = 2000) -> str:
        try:
            return masked_tail(self.log_path.read_bytes(), n)  # quoted in reasons: secrets masked first
        except FileNotFoundError:
            return ""


class RacerHandle(Protocol):
    racer_id: str
    host: str

    @property
    def pid(self) -> int | None: ...  # read-only here: a warm racer's is always known (int), a container's once it has started

    def state(self) -> State: ...
    def arrivals(self) -> list[dict]: ...
    def release(self) -> None: ...
    def kill(self) -> ExitStatus | None: ...
    def exit_status(self) -> ExitStatus | None: ...
    def result(self) -> dict | None: ...
    def background_errors(self) -> list[BackgroundError]: ...
    def log_tail(self) -> str: ...


H = TypeVar("H", bound=RacerHandle)


class Launcher(Protocol[H]):
    """Starts racers and opens the gate of the racers it started (``H``: its handle type)."""

    name: str

    def start_group(self, specs: list[dict], workdir: str) -> list[H]: ...
    def open_gate(self, handles: list[H]) -> None: ...
    def reap(self) -> None: ...


# What some launchers can do beyond ``Launcher``: small runtime-checkable protocols, asked with
# ``isinstance`` (as ``chaos.kinds.base.Explains`` is), never by probing for an attribute's name.


@runtime_checkable
class Named(Protocol):
    """A launcher that says what it is (``local``, ``warm``, ``docker``, ...): trials record it."""

    name: str


@runtime_checkable
class WaitsForChange(Protocol):
    """A launcher whose racers report their state changes (the warm launchers): ``wait_change``
    returns as soon as one arrives, or after ``timeout``; a trial idles there instead of sleeping."""

    def wait_change(self, timeout: float) -> None: ...


@runtime_checkable
class ForgetsHandles(Protocol):
    """A launcher that keeps per-racer state (local, warm): ``forget`` drops a finished trial's racers,
    so a long run holds nothing per racer ever started."""

    def forget(self, handles: list[RacerHandle]) -> None: ...


@runtime_checkable
class StartsAhead(Protocol):
    """A launcher whose racers come from a server that takes long to start (warm: a fork server
    importing the framework): ``start_ahead`` starts it now, for the racers of ``framework`` (its
    adapter ``module``) in the run's work folder ``folder``, without waiting for it to be ready; the
    first ``start_group`` waits. So a server nobody waits for yet starts while other work runs."""

    def start_ahead(self, framework: str, folder: str, module: str | None = None) -> None: ...


@runtime_checkable
class PassesEnv(Protocol):
    """A launcher whose racers take their environment from it (local racers; the warm fork server's
    forked racers inherit it): the run's labels go into ``env``."""

    env: dict[str, str] | None


@runtime_checkable
class LabelsRacers(Protocol):
    """A launcher that labels what it starts itself (``labels``: added to every container's)."""

    labels: dict[str, str]


def make_launcher(
    placement: object,
    python: str | None = None,
    run_id: str = "adhoc",
    extra_paths: list[str] | None = None,
    start: str | None = None,
    **options,
) -> Launcher[Any]:
    """The launcher a cell's placement asks for.

    ``placement`` is ``"local"`` (racers run with ``python``), ``"docker"`` (racers in containers
    of the racer image, with the image's Python) or ``{"hosts": [...], "inventory": path}`` (a
    dict or the scenario's ``HostsPlacement``: racers on SSH hosts, with each host's inventory
    ``python``). ``run_id`` labels containers and names remote folders; ``extra_paths`` (folders
    of user workload modules) go on the racers' PYTHONPATH (docker mounts them read-only);
    ``start`` is how racers start: ``warm`` (forked from a pre-imported parent,
    ``chaos.racer.forkserver``: one per run locally, one container for docker, one per host over SSH;
    the default everywhere) or ``cold`` (a fresh Python, container or SSH command per racer).
    ``options`` go to the launcher (``image=`` for docker, ``trust_on_first_use=`` for ssh).
    """
    import sys

    from chaos.racer.errors import EnvironmentProblem

    if placement is None or placement == "local":
        from chaos.envs import racer_env

        python = python or sys.executable
        if start in (None, "warm"):
            from chaos.launchers.warm.client import WarmLauncher

            return WarmLauncher(python=python, env=racer_env(python, extra_paths), **options)
        from chaos.launchers.local import LocalLauncher

        return LocalLauncher(python=python, env=racer_env(python, extra_paths), **options)
    if python and os.path.realpath(python) != os.path.realpath(sys.executable):
        raise EnvironmentProblem(
            f"racers.placement {placement!r} runs the framework installed in the image or on the hosts, not the"
            f" environment {python} that target.version asks for: drop target.version, or install that version"
            " there (compose/Dockerfile, the inventory's python)"
        )
    warm = start in (None, "warm")
    if placement == "docker":
        if warm:
            from chaos.launchers.warm.docker import DockerWarmLauncher

            return DockerWarmLauncher(run_id, extra_paths=extra_paths, **options)
        from chaos.launchers.docker import DockerLauncher

        return DockerLauncher(run_id, extra_paths=extra_paths, **options)
    if isinstance(placement, dict):
        hosts, inventory = placement.get("hosts"), placement.get("inventory")
    else:
        hosts, inventory = getattr(placement, "hosts", None), getattr(placement, "inventory", None)
    if hosts:
        from chaos.launchers.ssh import SshLauncher
        from chaos.launchers.warm.ssh import SshWarmLauncher

        return (SshWarmLauncher if warm else SshLauncher)(run_id, hosts=list(hosts), inventory=inventory or "hosts/lab.yaml", **options)
    raise EnvironmentProblem(f"unknown racers.placement {placement!r}: use local, docker or {{hosts: [...], inventory: FILE}}")
