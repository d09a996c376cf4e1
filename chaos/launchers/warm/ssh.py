"""Warm racers on SSH hosts: one fork server per host, driven over one SSH exec channel.

Why it looks like this:
- The server's stdin/stdout are the exec channel (``SshChannel``), its stderr the channel's
  stderr (kept in the run's work folder). Requests and events are the same JSON lines as locally,
  so ``ForkServerClient`` and ``WarmRacer`` are shared; only the transport differs.
- The server's events are the status channel: ``stopped`` (from ``waitpid(WUNTRACED)``, with the
  racer's barrier arrival records, since the orchestrator cannot read the host's files),
  ``continued`` and ``exit`` (raw status: a SIGKILL is confirmed by it). No ``/proc`` polling
  over the wire; signals and the gate's ``killpg`` are sent by the server, the racers' parent.
- A dropped connection is end of input for the server: it SIGKILLs and reaps every racer and
  exits (and if sshd kills the server instead, the racers' parent-death signal takes them along).
  ``reap`` also asks the host's control agent for any process still carrying the run's label and
  kills it, then removes the run's remote folder.
- Code, spec paths and Postgres requirements are the cold SSH launcher's (``SshLauncher``): the
  racer-side files are shipped once per host, paths move into the host's workdir, the result file
  and the log are fetched back by SFTP once the racer exited.
"""

from __future__ import annotations

import os
import posixpath
import shlex
import signal
from pathlib import Path

from chaos.launchers.ssh import SshLauncher
from chaos.launchers.warm.client import ForkServerClient, ForkServerLauncher, ServerLog, WarmRacer, module_args
from chaos.remote.ssh_session import HostError, HostSession


class SshChannel(ServerLog):
    """One exec channel running the fork server on a host (a Transport that also fetches files)."""

    def __init__(self, session: HostSession, command: str, log_path: Path):
        self.session = session
        self.where = f"the fork server on host {session.host.name}"
        self.log_path = log_path
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "ab")
        self.chan = session.open_channel()
        self.chan.exec_command(command)
        self._eof = False

    def _drain_stderr(self) -> None:
        while self.chan.recv_stderr_ready():
            data = self.chan.recv_stderr(1 << 16)
            if not data:
                break
            self._log.write(data)
            self._log.flush()

    def send(self, data: bytes) -> None:
        if self.chan.closed:
            raise OSError("the SSH channel is closed")
        self.chan.sendall(data)

    def recv(self, timeout: float) -> bytes | None:
        if self._eof:
            return b""
        self._drain_stderr()
        self.chan.settimeout(max(0.0, timeout))
        try:
            data = self.chan.recv(1 << 16)
        except TimeoutError:
            return None
        except (OSError, EOFError):
            data = b""
        if not data:
            self._eof = True
            self._drain_stderr()
        return data

    def fileno(self) -> int:
        return self.chan.fileno()

    def running(self) -> bool:
        return not self._eof and not self.chan.closed

    def close_input(self) -> None:
        try:
            self.chan.shutdown_write()  # end of input: the server kills and reaps every racer
        except (OSError, EOFError):
            pass

    def finish(self, timeout: float) -> None:
        self.chan.status_event.wait(max(0.1, timeout))
        try:
            self.chan.close()
        except (OSError, EOFError):
            pass
        self._log.close()

    # FetchesFiles
    def fetch(self, remote_path: str, local_path: str) -> bool:
        data = self.session.get_bytes(remote_path)
        if data is None:
            return False
        tmp = f"{local_path}.part"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, local_path)
        return True


def _session(client: ForkServerClient) -> HostSession:
    """The SSH session a fork server of this launcher runs over (its transport is an ``SshChannel``)."""
    t = client.transport
    assert isinstance(t, SshChannel), t
    return t.session


# The racers, the gate and start_group are the fork server's (the first base); SshLauncher lends its
# sessions, code upload and remote specs. mypy sees the two bases' racer lists as a conflict.
class SshWarmLauncher(ForkServerLauncher, SshLauncher):  # type: ignore[misc]
    name = "ssh-warm"

    def __init__(self, run_id: str, **options):
        ForkServerLauncher.__init__(self)
        self.servers: dict[str, ForkServerClient] = {}
        self._made: set[tuple[str, str]] = set()
        SshLauncher.__init__(self, run_id, **options)
        self._racers = []

    def _run_dir(self, s: HostSession) -> str:
        return posixpath.join(s.host.workdir, "runs", self.run_id)

    def _mkdirs(self, s: HostSession, *paths: str) -> None:
        """Create folders over SFTP (no shell start per trial), parents first."""
        with s.sftp() as sftp:
            for p in paths:
                if (s.host.name, p) in self._made:
                    continue
                try:
                    sftp.mkdir(p)
                except OSError:
                    try:
                        sftp.stat(p)
                    except OSError:
                        raise HostError(f"{s.where}: cannot create {p}: fix 'workdir' in the inventory") from None
                self._made.add((s.host.name, p))

    def server_for(self, spec: dict, index: int, workdir: str) -> ForkServerClient:
        s = self._host_for(spec, index)
        target = spec["target"]["framework"]
        c = self.servers.get(s.host.name)
        if c is not None and not c.alive:
            c.close()
            c = None
        if c is None:
            run_dir = self._run_dir(s)
            s.mkdirs(run_dir)
            self._made.add((s.host.name, run_dir))
            py = s.host.python
            argv = [
                "env",
                f"PYTHONPATH={self._code_dir[s.host.name]}",
                "PYTHONDONTWRITEBYTECODE=1",
                "PYTHONUNBUFFERED=1",
                py,
                "-m",
                "chaos.racer.forkserver",
                "--target",
                target,
                *module_args(spec),
                "--label",
                run_dir + "/",
            ]
            command = f"cd {shlex.quote(run_dir)} && exec {shlex.join(argv)}"
            log = Path(workdir).parent / f"forkserver-{target}-{s.host.name}.log"
            c = self.servers[s.host.name] = ForkServerClient(SshChannel(s, command, log), target)
        elif c.target != target:
            raise HostError(f"this warm SSH launcher serves {c.target}, not {target}")
        return c

    def entry(self, spec: dict, workdir: str, client: ForkServerClient) -> dict:
        s = _session(client)
        rspec = self.remote_spec(spec, s, Path(workdir).name)
        rspec["barrier"]["echo"] = False  # arrivals come with the server's "stopped" events
        rdir = posixpath.dirname(rspec["result_path"])
        self._mkdirs(s, rdir, rspec["barrier"]["dir"])
        return {"id": spec["racer_id"], "spec": rspec, "log": posixpath.join(rdir, f"racer-{spec['racer_id']}.log"), "arrivals": True}

    def handle(self, spec: dict, entry: dict, pid: int, pgid: int, client: ForkServerClient, workdir: str) -> WarmRacer:
        host = _session(client).host.name
        return WarmRacer(
            spec["racer_id"], pid, pgid, client, spec, Path(workdir) / f"racer-{spec['racer_id']}.log", host=host, remote=entry
        )

    # the fork server's start_group (warm racers), which mypy checks against SshLauncher's (SSH racers): the same conflict as above
    def start_group(self, specs: list[dict], workdir: str) -> list[WarmRacer]:  # type: ignore[override]
        if not self.sessions:
            self._connect_all()  # after a reap
        return ForkServerLauncher.start_group(self, specs, workdir)

    def clients(self) -> list[ForkServerClient]:
        return list(self.servers.values())

    def close_servers(self) -> None:
        for c in self.servers.values():
            c.close()
        self.servers.clear()

    def sweep(self) -> list[int]:
        """Kill any process on the hosts still carrying this run's label (none, normally); their pids."""
        killed: list[int] = []
        for s in self.sessions.values():
            if s.client is None:
                continue
            try:
                pids = s.agent(op="find", marker=self._run_dir(s) + "/")["pids"]
                if pids:
                    s.agent(op="signal", pids=pids, sig=int(signal.SIGKILL))
                    killed += pids
            except Exception:  # a host that went away: its processes went with the session
                pass
        return killed

    def reap(self, *, remove_files: bool = True) -> None:
        """Stop every host's server (it kills and reaps its racers, reporting each exit), sweep the
        hosts for anything left with the run's label, remove the run's remote folders, disconnect."""
        self.close_servers()
        self._racers.clear()
        self.sweep()
        self._made.clear()
        SshLauncher.reap(self, remove_files=remove_files)
