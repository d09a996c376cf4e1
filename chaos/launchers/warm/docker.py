"""Warm racers in Docker: one container per (framework, version) runs the fork server.

Why it looks like this:
- The container's process *is* ``python -m chaos.racer.forkserver`` (PID 1 of its namespace; the
  racers it forks are not, so their own thread-directed SIGSTOP stops them). Its stdin/stdout are
  the protocol, carried by the engine's attach stream (``ContainerStdio``); stderr goes to the
  server's log in the run's work folder. End of input (we close our side, or the orchestrator dies
  and the engine drops the stream) makes the server SIGKILL and reap every racer and exit; the
  container is created with ``auto_remove``, so nothing of it remains.
- The run's work folder and the folders of every absolute path in the first spec (ledger,
  checkpoints) are bind-mounted at the *same* paths, as for cold containers: specs need no
  rewriting, and arrivals, results and logs are plain local files. A later spec needing a folder
  the container lacks gets a new container (once the old one is idle), never a silent miss.
- Pids in the server's events are the container's: state, kill confirmation (exit status from the
  server's ``waitpid``) and the gate (one ``killpg`` by the server) all go through the protocol.
- The container carries ``chaos.run=<run id>``: ``reap_run`` and ``chaos clean`` find it as they
  find cold racer containers.
"""

from __future__ import annotations

import os
import re
import secrets
import select
import socket
import struct
from pathlib import Path

import chaos
from chaos.launchers.docker import (
    _SAFE,
    LABEL_RUN,
    DockerError,
    client,
    extra_volumes,
    mounts_for,
    racer_environment,
    racer_image,
    reap_run,
)
from chaos.launchers.warm.client import ForkServerClient, OneServerLauncher, ServerLog, WarmRacer, module_args

_HEADER = struct.Struct(">BxxxL")  # the engine's multiplexed stream: stream id, payload size


class ContainerStdio(ServerLog):
    """The attached stdin/stdout/stderr of a created container (a Transport), started once attached."""

    def __init__(self, api, container_id: str, name: str, log_path: Path):
        self.api, self.id, self.name = api, container_id, name
        self.where = f"the fork server in container {name}"
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "ab")
        sock = api.attach_socket(container_id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        self._sock: socket.socket = getattr(sock, "_sock", sock)
        self._keep = sock  # the wrapper owns the socket's lifetime
        self._frames = b""
        self._eof = False
        api.start(container_id)  # attached first: not a byte of the server's output is missed

    def send(self, data: bytes) -> None:
        self._sock.sendall(data)

    def recv(self, timeout: float) -> bytes | None:
        if self._eof:
            return b""
        if not select.select([self._sock], [], [], max(0.0, timeout))[0]:
            return None
        try:
            chunk = self._sock.recv(1 << 16)
        except (ConnectionError, OSError):
            chunk = b""
        if not chunk:
            self._eof = True
            return b""
        self._frames += chunk
        out = bytearray()
        while len(self._frames) >= _HEADER.size:
            stream, size = _HEADER.unpack_from(self._frames)
            if len(self._frames) < _HEADER.size + size:
                break
            payload = self._frames[_HEADER.size : _HEADER.size + size]
            self._frames = self._frames[_HEADER.size + size :]
            if stream == 1:
                out += payload
            else:
                self._log.write(payload)
                self._log.flush()
        return bytes(out) or None

    def fileno(self) -> int:
        return self._sock.fileno()

    def running(self) -> bool:
        return not self._eof

    def close_input(self) -> None:
        try:
            self._sock.shutdown(socket.SHUT_WR)  # the engine closes the server's stdin (StdinOnce)
        except OSError:
            pass

    def finish(self, timeout: float) -> None:
        import docker

        try:
            if not self._eof:
                self.api.kill(self.id)  # did not end on end of input within the time it had
            # auto_remove: the container goes once the server exited; wait until it is gone
            self.api.wait(self.id, timeout=max(5.0, timeout), condition="removed")
        except docker.errors.NotFound:
            pass  # removed already
        except Exception:  # a hung engine: force the removal
            _remove(self.api, self.id)
        for closable in (self._keep, self._sock):
            try:
                closable.close()
            except OSError:
                pass
        self._log.close()


def _remove(api, container_id: str) -> None:
    import docker

    try:
        api.remove_container(container_id, force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise


class DockerWarmLauncher(OneServerLauncher):
    name = "docker-warm"

    def __init__(
        self, run_id: str, *, image: str | None = None, network: str = "host", docker_client=None, extra_paths: list[str] | None = None
    ):
        super().__init__()
        self.run_id = run_id
        self.extra_paths = [os.path.realpath(p) for p in (extra_paths or []) if os.path.isdir(p)]
        self.docker = docker_client or client()
        self.image, self.python = racer_image(self.docker, image)
        self.network = network
        self.src = str(Path(chaos.__file__).resolve().parent)
        self.mounts: list[str] = []
        self.hostname = ""

    def _covered(self, spec: dict, workdir: str) -> bool:
        return all(any(d == m or d.startswith(m + "/") for m in self.mounts) for d in mounts_for(spec, workdir))

    def server_for(self, spec: dict, index: int, workdir: str) -> ForkServerClient:
        target = spec["target"]["framework"]
        if self.client is not None and (not self.client.alive or not self._covered(spec, workdir)):
            if self.client.alive and any(h.exit_status() is None for h in self._racers):
                raise DockerError(
                    f"docker: racer folders {mounts_for(spec, workdir)} are not mounted in the running"
                    f" fork server container (it has {self.mounts}): keep a run's files in one folder"
                )
            self.close_servers()
        if self.client is None:
            self.client = self._start(target, spec, workdir)
        elif self.client.target != target:
            raise DockerError(f"this warm docker launcher serves {self.client.target}, not {target}")
        return self.client

    def _start(self, target: str, spec: dict, workdir: str) -> ForkServerClient:
        work = str(Path(workdir).parent)  # the run's work folder: every trial's folder lies in it
        self.mounts = sorted(set(self.mounts) | set(mounts_for(spec, work)))
        volumes = extra_volumes({d: {"bind": d, "mode": "rw"} for d in self.mounts}, self.extra_paths, self.python, self.src)
        name = f"chaos-{_SAFE.sub('_', self.run_id)}-warm-{_SAFE.sub('_', target)}-{secrets.token_hex(3)}"[:120]
        self.hostname = re.sub(r"[^a-z0-9-]", "-", f"c-warm-{target}".lower())[:63].strip("-")
        api = self.docker.api
        created = api.create_container(
            self.image,
            [self.python, "-m", "chaos.racer.forkserver", "--target", target, *module_args(spec), "--label", work],
            stdin_open=True,
            detach=False,  # so the engine sets StdinOnce: closing our stream closes the server's stdin
            name=name,
            hostname=self.hostname,
            labels={LABEL_RUN: self.run_id, "chaos.role": "forkserver", "chaos.target": target},
            environment=racer_environment(self.extra_paths),
            user=f"{os.getuid()}:{os.getgid()}",
            working_dir=work,
            host_config=api.create_host_config(binds=volumes, network_mode=self.network, auto_remove=True, init=False),
        )
        transport = ContainerStdio(api, created["Id"], name, Path(work) / f"forkserver-{target}-docker.log")
        return ForkServerClient(transport, target)

    def handle(self, spec: dict, entry: dict, pid: int, pgid: int, client: ForkServerClient, workdir: str) -> WarmRacer:
        return WarmRacer(spec["racer_id"], pid, pgid, client, spec, Path(entry["log"]), host=self.hostname)

    def reap(self) -> None:
        """Stop the server (it kills and reaps every racer), then remove anything left with the run's label."""
        super().reap()
        reap_run(self.run_id, self.docker)
