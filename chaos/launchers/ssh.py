"""The SSH launcher: racers on other machines, reached with paramiko.

Why it looks like this:
- Host keys are verified against the inventory's known_hosts file (reject by default). Trust on
  first use happens only when the inventory or the CLI asks, and prints the fingerprint it trusts.
  A changed key is always refused.
- The racer-side files of the chaos package and each racer's spec are shipped by SFTP to the
  host's workdir (code in a folder named by its content hash, shipped once per host). Paths in the
  spec are rewritten to that workdir; the ledger and the checkpoint store must be shared services
  (Postgres), since the orchestrator reads the ledger from its own machine.
- A racer runs under ``chaos.racer.wrapper`` (remote parent that waits for it and prints its exit
  status), started with a command line built only with ``shlex.quote`` from fixed words and
  validated inventory values. The wrapper reports the racer's pid, and the racer echoes its
  barrier arrivals (``chaos.racer.barrier.ECHO_PREFIX``) on the channel's stdout.
- "stopped" is confirmed by reading ``/proc/<pid>/stat`` on the host; release and kill are signals
  sent by ``chaos.racer.remote_agent`` (one per host, on its own channel); a kill is confirmed by the wrapper's exit report
  (killed by signal 9). If the connection drops, the wrapper sees end of stdin and kills the racer:
  no remote racer outlives its session.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import shlex
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import chaos
from chaos.launchers import ExitStatus, RacerFiles, State
from chaos.racer.barrier import ECHO_PREFIX
from chaos.racer.protocol import BACKGROUND_SUFFIX
from chaos.racer.wrapper import PREFIX as WRAPPER_PREFIX
from chaos.remote.inventory import Host, Inventory, load_inventory
from chaos.remote.ssh_session import HostError, HostSession, fingerprint  # noqa: F401  (re-exported)

if TYPE_CHECKING:
    import paramiko

# The racer side is three packages (see chaos.racer): what a remote racer, fork server, wrapper and
# control agent import. They ship with chaos/__init__.py, whose public API is imported lazily.
RACER_SIDE = ("racer", "targets", "workloads")


def racer_files() -> dict[str, bytes]:
    """Relative path -> content of every racer-side file of the running chaos package."""
    root = Path(chaos.__file__).resolve().parent
    out: dict[str, bytes] = {"chaos/__init__.py": (root / "__init__.py").read_bytes()}
    for pkg in RACER_SIDE:
        for f in sorted((root / pkg).rglob("*.py")):
            out[f"chaos/{f.relative_to(root).as_posix()}"] = f.read_bytes()
    return out


def code_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for k in sorted(files):
        h.update(k.encode() + b"\0" + files[k] + b"\0")
    return h.hexdigest()[:16]


class SshRacer(RacerFiles):
    """A racer on a remote host, seen through its SSH channel."""

    def __init__(self, launcher: SshLauncher, session: HostSession, spec: dict, rspec: dict, log_path: Path):
        self.launcher = launcher
        self.session = session
        self.racer_id = spec["racer_id"]
        self.spec = spec
        self.rspec = rspec
        self.host = session.host.name
        self.log_path = log_path
        self.pid: int | None = None
        self.wrapper_pid: int | None = None
        self._arrivals: list[dict] = []
        self._released = 0
        self._stopped = False
        self._status: ExitStatus | None = None
        self._exit_event: ExitStatus | None = None
        self.channel_exit: int | None = None
        self._done = threading.Event()
        self._started = threading.Event()
        self._chan: paramiko.Channel | None = None

    def start(self, command: str) -> None:
        chan = self.session.open_channel()
        chan.set_combine_stderr(True)
        chan.exec_command(command)
        self._chan = chan
        threading.Thread(target=self._read, args=(chan,), daemon=True, name=f"ssh-{self.host}-{self.racer_id}").start()

    def _read(self, chan: paramiko.Channel) -> None:
        buf = b""
        with open(self.log_path, "ab") as log:
            while True:
                try:
                    data = chan.recv(65536)
                except Exception as exc:  # the connection broke: the wrapper kills the racer (stdin EOF)
                    log.write(f"\n[chaos: channel lost: {exc}]\n".encode())
                    break
                if not data:
                    break
                log.write(data)
                log.flush()
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self._line(line.decode(errors="replace"))
        chan.status_event.wait(30)  # set by the exit status, or by the channel's close (-1)
        self.channel_exit = code = chan.exit_status
        self._fetch_result()
        # the wrapper's report; if it never spoke (it was killed itself), the channel's exit status
        self._status = self._exit_event or (ExitStatus(code=None, signal=code - 128) if code > 128 else ExitStatus(code=code, signal=None))
        self._done.set()
        self._started.set()

    def _line(self, line: str) -> None:
        if line.startswith(ECHO_PREFIX):
            try:
                self._arrivals.append(json.loads(line[len(ECHO_PREFIX) :]))
            except ValueError:
                pass
        elif line.startswith(WRAPPER_PREFIX):
            ev = json.loads(line[len(WRAPPER_PREFIX) :])
            if ev.get("event") == "started":
                self.pid, self.wrapper_pid = int(ev["pid"]), int(ev["wrapper_pid"])
                self._started.set()
            elif ev.get("event") == "exit":
                self._exit_event = ExitStatus(code=ev.get("code"), signal=ev.get("signal"))

    def _fetch_result(self) -> None:
        """Copy back the result and the background errors written beside it (either may be missing)."""
        for suffix in ("", BACKGROUND_SUFFIX):
            try:
                data = self.session.get_bytes(self.rspec["result_path"] + suffix)
            except Exception:
                data = None
            if data is not None:
                tmp = self.spec["result_path"] + suffix + ".part"
                with open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, self.spec["result_path"] + suffix)

    # ------------------------------------------------------------------ RacerHandle
    def state(self) -> State:
        if self._done.is_set():
            return "exited"
        if self.pid is None:
            return "running"
        if len(self._arrivals) > self._released and not self._stopped:
            # it announced an arrival: confirm on the host that it has stopped itself
            st = self.launcher._proc_state(self.session, self.pid)
            self._stopped = st in ("T", "t")
        if self._done.is_set():
            return "exited"
        return "stopped" if self._stopped else "running"

    def arrivals(self) -> list[dict]:
        return list(self._arrivals)

    def _mark_released(self) -> None:
        self._released = len(self._arrivals)
        self._stopped = False

    def release(self) -> None:
        if not self._done.is_set() and self.pid:
            self._mark_released()
            self.session.agent(op="signal", pids=[self.pid], sig=int(signal.SIGCONT))

    def kill(self) -> ExitStatus | None:
        """SIGKILL the remote racer; confirmed by the wrapper's report (killed by signal 9)."""
        if not self._done.is_set():
            self._started.wait(30)
            if self.pid and not self._done.is_set():
                self.session.agent(op="signal", pids=[self.pid], sig=int(signal.SIGKILL))
            elif self._chan is not None:
                self._chan.close()  # never started properly: end of stdin makes the wrapper kill it
            self._done.wait(30)
        return self._status if self._done.is_set() else None

    def exit_status(self) -> ExitStatus | None:
        return self._status if self._done.is_set() else None


class SshLauncher:
    name = "ssh"

    def __init__(
        self, run_id: str, *, hosts: list[str], inventory: str | os.PathLike | Inventory, trust_on_first_use: bool | None = None, say=None
    ):
        self.run_id = run_id
        self.inv = inventory if isinstance(inventory, Inventory) else load_inventory(inventory)
        self.hosts = [self.inv.host(n) for n in hosts]
        self.tofu = trust_on_first_use
        self.say = say
        self.sessions: dict[str, HostSession] = {}
        self._code_dir: dict[str, str] = {}
        self._racers: list[SshRacer] = []
        self.files = racer_files()
        self.code_hash = code_hash(self.files)
        self._connect_all()

    # ------------------------------------------------------------------ hosts
    def _connect_all(self) -> None:
        def one(h: Host) -> HostSession:
            s = HostSession(h, self.inv, trust_on_first_use=self.tofu, say=self.say).connect()
            s.check_python()
            return s

        errors = []
        with ThreadPoolExecutor(max_workers=len(self.hosts)) as pool:
            futs = {h.name: pool.submit(one, h) for h in self.hosts}
            for name, f in futs.items():
                try:
                    self.sessions[name] = f.result()
                except HostError as exc:
                    errors.append(exc.message)
        if errors:
            self.close()
            raise HostError("; ".join(errors))
        for s in self.sessions.values():
            self._ship_code(s)

    def _ship_code(self, s: HostSession) -> None:
        base = posixpath.join(s.host.workdir, f"src-{self.code_hash}")
        if s.get_bytes(posixpath.join(base, ".complete")) is None:
            dirs = sorted({posixpath.dirname(posixpath.join(base, p)) for p in self.files})
            s.mkdirs(dirs[0]) if len(dirs) == 1 else s.run(["mkdir", "-p", "--", *dirs])
            for rel, data in self.files.items():
                s.put_bytes(posixpath.join(base, rel), data)
            s.put_bytes(posixpath.join(base, ".complete"), self.code_hash.encode())
        self._code_dir[s.host.name] = base
        s.start_agent(base)

    def _proc_state(self, s: HostSession, pid: int) -> str | None:
        return s.agent(op="stat", pid=int(pid))["state"]

    def _host_for(self, spec: dict, index: int) -> HostSession:
        """The i-th racer of a group runs on the i-th host (cyclically): same spec, same host, every trial."""
        name = spec.get("host_name") or self.hosts[index % len(self.hosts)].name
        return self.sessions[name]

    def remote_spec(self, spec: dict, s: HostSession, trial_dir_name: str) -> dict:
        """The spec with its paths moved into the host's workdir (and arrivals echoed)."""
        for what in ("ledger", "store"):
            cfg = spec.get(what) or {}
            if "path" in cfg:
                raise HostError(
                    f"host {s.host.name}: the {what} is a local file ({cfg['path']}); racers on other hosts need a shared"
                    " service: use backend postgres and a Postgres ledger (CHAOS_PG_DSN)"
                )
        rtrial = posixpath.join(s.host.workdir, "runs", self.run_id, trial_dir_name)
        r = json.loads(json.dumps(spec))
        r["barrier"] = dict(r["barrier"], dir=posixpath.join(rtrial, "barriers"), echo=True)
        r["result_path"] = posixpath.join(rtrial, f"result-{spec['racer_id']}.json")
        r.pop("host_name", None)
        return r

    # ------------------------------------------------------------------ Launcher
    def start_group(self, specs: list[dict], workdir: str) -> list[SshRacer]:
        if not self.sessions:
            self._connect_all()  # after a reap
        trial_dir_name = Path(workdir).name
        handles: list[SshRacer] = []
        prepared = []
        for i, spec in enumerate(specs):
            s = self._host_for(spec, i)
            rspec = self.remote_spec(spec, s, trial_dir_name)
            prepared.append((spec, s, rspec))
        made: set[tuple[str, str]] = set()
        for spec, s, rspec in prepared:
            rdir = posixpath.dirname(rspec["result_path"])
            if (s.host.name, rdir) not in made:
                s.run(["mkdir", "-p", "--", rspec["barrier"]["dir"]])
                made.add((s.host.name, rdir))
            spec_path = posixpath.join(rdir, f"spec-{spec['racer_id']}.json")
            s.put_bytes(spec_path, json.dumps(rspec).encode())
            Path(workdir, f"spec-{spec['racer_id']}.json").write_text(json.dumps(rspec))
            py = s.host.python
            argv = [
                "env",
                f"PYTHONPATH={self._code_dir[s.host.name]}",
                "PYTHONDONTWRITEBYTECODE=1",
                "PYTHONUNBUFFERED=1",
                py,
                "-m",
                "chaos.racer.wrapper",
                "--watch-stdin",
                "--",
                py,
                "-m",
                "chaos.racer.main",
                spec_path,
            ]
            command = f"cd {shlex.quote(rdir)} && exec {shlex.join(argv)}"
            h = SshRacer(self, s, spec, rspec, Path(workdir) / f"racer-{spec['racer_id']}.log")
            h.start(command)
            handles.append(h)
            self._racers.append(h)
        for h in handles:
            if not h._started.wait(60):
                raise HostError(f"host {h.host}: racer {h.racer_id} did not start within 60s; see {h.log_path}")
        return handles

    def open_gate(self, handles: list[SshRacer]) -> None:
        """SIGCONT every racer: one agent request per host, sent to all hosts at once."""
        by_host: dict[str, list[SshRacer]] = {}
        for h in handles:
            if h.exit_status() is None and h.pid:
                by_host.setdefault(h.host, []).append(h)
        for hs in by_host.values():
            for h in hs:
                h._mark_released()

        def cont(hs: list[SshRacer]) -> None:
            hs[0].session.agent(op="signal", pids=[h.pid for h in hs], sig=int(signal.SIGCONT))

        if len(by_host) == 1:
            cont(next(iter(by_host.values())))
        elif by_host:
            with ThreadPoolExecutor(max_workers=len(by_host)) as pool:
                list(pool.map(cont, by_host.values()))

    def remote_racers(self) -> dict[str, list[int]]:
        """Pids of this run's racers still alive on each host (by their spec path in the command line)."""
        out: dict[str, list[int]] = {}
        for name, s in self.sessions.items():
            if s.client is None:
                continue
            out[name] = s.agent(op="find", marker=posixpath.join(s.host.workdir, "runs", self.run_id) + "/")["pids"]
        return out

    def reap(self, *, remove_files: bool = True) -> None:
        """Kill every racer still running (confirmed), remove this run's remote folders, disconnect.

        The launcher reconnects on its next ``start_group``, so a reaped launcher can be reused.
        """
        for h in self._racers:
            if h.exit_status() is None:
                h.kill()
        self._racers.clear()
        for s in self.sessions.values():
            if s.client is not None and remove_files:
                try:
                    s.run(["rm", "-rf", "--", posixpath.join(s.host.workdir, "runs", self.run_id)])
                except Exception:
                    pass  # a host that went away keeps its folder; its racers died with the session
        self.close()

    def close(self) -> None:
        for s in self.sessions.values():
            s.close()
        self.sessions.clear()
