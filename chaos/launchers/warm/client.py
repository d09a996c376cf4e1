"""Warm racers: racers forked from a pre-imported parent (``chaos.racer.forkserver``), wherever it runs.

Why: a cold racer spends a second importing the framework before milliseconds of real work; a
warm racer is a ``fork`` of a server that imported it once. What the orchestrator sees does not
change: each racer is a process with its own pid and process group (one per trial's group on one
server, so ``open_gate`` is one ``killpg`` per server), a parent-death signal chain, and an exit
status from ``waitpid`` (taken by the server, its parent, and reported back): a SIGKILL is
confirmed by the status itself, never assumed.

The server speaks JSON lines; what carries them is a ``Transport``: a local pipe (this module),
a container's attached stdio (``chaos.launchers.warm.docker``) or an SSH exec channel
(``chaos.launchers.warm.ssh``). ``ForkServerClient`` (the protocol) and ``WarmRacer`` (the racer
handle) are the same for all of them. What differs is stated as optional capabilities of the
transport, each a small protocol:

* ``SeesRacerPids``: the racers' pids are this machine's pids (local): their state is also read
  from ``/proc`` and leftovers are swept by pid. Without it the server's events are the only
  status channel (``stopped`` is reported by ``waitpid(WUNTRACED)`` once every thread stopped).
* ``FetchesFiles``: the racers write their files on another machine (SSH): barrier arrivals come
  with the ``stopped`` events, result and log are fetched back once the racer exited.

Signals go through the server, which refuses to signal anything but its own unreaped children, so
a reused pid is never hit. End of input makes a server SIGKILL and reap every racer, so closing the
transport (or losing it) leaves no racer behind. The orchestrator stays single-threaded: events
are read whenever a handle is asked for its state, and ``wait_change`` sleeps until a server
reports something.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections import deque
from io import BufferedWriter
from pathlib import Path
from typing import Protocol, runtime_checkable

from chaos.launchers import ExitStatus, RacerFiles, State, racer_tmp
from chaos.racer.barrier import read_arrivals
from chaos.racer.errors import EnvironmentProblem
from chaos.racer.procfs import all_threads_stopped, proc_state
from chaos.racer.protocol import background_path
from chaos.racer.redact import masked_tail

START_TIMEOUT_S = 300.0  # importing a framework on a loaded 2-core machine can take a while
REPLY_TIMEOUT_S = 60.0
KILL_CONFIRM_S = 10.0


class ForkServerGone(EnvironmentProblem):
    """The fork server exited or stopped answering."""


# ---------------------------------------------------------------------------------- transports


class Transport(Protocol):
    """What carries the protocol's lines between the orchestrator and one fork server."""

    where: str  # names the server in messages ("local fork server", "container X", "host lab1")

    def send(self, data: bytes) -> None:
        """Write request bytes; raises OSError once the server no longer reads."""

    def recv(self, timeout: float) -> bytes | None:
        """Event bytes: what is there, waiting up to ``timeout``; None if nothing came, b"" at end of output."""

    def fileno(self) -> int:
        """A descriptor that polls readable when ``recv`` has something (to wait on several servers)."""

    def running(self) -> bool:
        """False once the server is known to be gone."""

    def close_input(self) -> None:
        """End of input: the server kills and reaps every racer (reporting each exit), then exits."""

    def finish(self, timeout: float) -> None:
        """Wait for the server to be gone (forcefully after ``timeout``) and release the transport."""

    def log_tail(self, n: int = 600) -> str:
        """The end of the server's stderr."""


@runtime_checkable
class SeesRacerPids(Protocol):
    """The racers are processes of this machine: pids in the server's events are ours."""

    def proc_state(self, pid: int) -> str | None: ...

    def all_threads_stopped(self, pid: int) -> bool: ...

    def is_racer(self, pid: int) -> bool:
        """``pid`` is still one of this server's racers (a leftover to kill if its exit was never reported)."""


@runtime_checkable
class FetchesFiles(Protocol):
    """The racers write their files on another machine; they are copied back after the racer exits."""

    def fetch(self, remote_path: str, local_path: str) -> bool:
        """Copy one file back (atomically); False if it does not exist there."""


def adapter_module(spec: dict) -> str | None:
    """The adapter module a racer spec names (``target.module``): the fork server that serves it
    preloads that one (``--module``), not its own registry's for the framework."""
    return spec["target"].get("module")


def module_args(spec: dict) -> list[str]:
    """``--module ADAPTER`` for the fork server of ``spec``'s racers (none for a spec that names none)."""
    module = adapter_module(spec)
    return ["--module", module] if module else []


class ServerLog:
    """The server's log (its stderr, or what the transport carries of it) in the run's folder:
    every transport keeps one and reads its tail the same way."""

    log_path: Path
    _log: BufferedWriter  # the open binary file

    def log_tail(self, n: int = 600) -> str:
        try:
            if not self._log.closed:
                self._log.flush()
            return masked_tail(self.log_path.read_bytes(), n).strip()  # quoted in errors: secrets masked first
        except OSError:
            return ""


class PipeTransport(ServerLog):
    """A local fork server, a child process of the orchestrator, over its stdin/stdout pipes."""

    def __init__(
        self,
        python: str,
        target: str,
        env: dict | None,
        log_path: Path,
        label: str | None = None,
        pool: int | None = None,
        module: str | None = None,
    ):
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen(
            [
                python,
                "-m",
                "chaos.racer.forkserver",
                "--target",
                target,
                *(["--module", module] if module else []),
                "--parent-pid",
                str(os.getpid()),
                *(["--label", label] if label else []),
                *(["--pool", str(pool)] if pool is not None else []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            process_group=0,  # not in the terminal's group: Ctrl-C reaches the orchestrator, which reaps
            close_fds=True,
        )
        self.where = f"the {target} fork server ({python}, pid {self.proc.pid})"
        assert self.proc.stdin is not None and self.proc.stdout is not None  # both are PIPEs (above)
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        self._out = self._stdout.fileno()
        os.set_blocking(self._out, False)

    def send(self, data: bytes) -> None:
        self._stdin.write(data)
        self._stdin.flush()

    def recv(self, timeout: float) -> bytes | None:
        try:
            return os.read(self._out, 1 << 16)
        except BlockingIOError:
            pass
        if timeout <= 0 or not select.select([self._out], [], [], timeout)[0]:
            return None
        try:
            return os.read(self._out, 1 << 16)
        except BlockingIOError:
            return None

    def fileno(self) -> int:
        return self._out

    def running(self) -> bool:
        return self.proc.poll() is None

    def close_input(self) -> None:
        try:
            self._stdin.close()
        except OSError:
            pass

    def finish(self, timeout: float) -> None:
        try:
            self.proc.wait(timeout=max(0.1, timeout))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        try:
            self._stdout.close()
        except OSError:
            pass
        self._log.close()

    # SeesRacerPids
    def proc_state(self, pid: int) -> str | None:
        return proc_state(pid)

    def all_threads_stopped(self, pid: int) -> bool:
        return all_threads_stopped(pid)

    def is_racer(self, pid: int) -> bool:
        """A fork keeps the server's command line; after the server's death the racer may have
        been reparented to init or a subreaper."""
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            return False
        return b"chaos.racer.forkserver" in cmd and pid != self.proc.pid and proc_state(pid) not in (None, "Z", "X")


# ---------------------------------------------------------------------------------- the protocol


class ForkServerClient:
    """The orchestrator's end of one fork server: requests out, events in, over any transport."""

    def __init__(self, transport: Transport, target: str):
        self.transport, self.target = transport, target
        # the transport's optional capabilities, asked once: a runtime protocol check costs tens of
        # microseconds, and a racer's state and arrivals are read at every look of every wait
        self.sees_pids: SeesRacerPids | None = transport if isinstance(transport, SeesRacerPids) else None
        self.fetches: FetchesFiles | None = transport if isinstance(transport, FetchesFiles) else None
        self.exits: dict[int, ExitStatus] = {}
        self.stopped: dict[int, bool] = {}
        self.arrivals: dict[int, list[dict]] = {}  # reported with "stopped" (racers that asked for it)
        self.ready: dict = {}
        self._replies: dict[int, dict] = {}
        self._buf = b""
        self._req = 0
        self._eof = False
        self.known: set[int] = set()  # every pid this server forked for us
        try:
            first = self._next_event(START_TIMEOUT_S)
        except BaseException:  # Ctrl-C while the framework imports: no server may outlive us
            self.close()
            raise
        if first is None or first.get("event") != "ready":
            detail = (first or {}).get("message") or self.log_tail()
            self.close()
            raise EnvironmentProblem(f"{transport.where} did not start: {detail}", hint="run with --racers cold to bypass warm racers")
        self.ready = first
        self.pid = int(first["pid"])  # in the server's pid namespace (1 as a container's process)

    # ------------------------------------------------------------------ reading
    def _take_line(self) -> dict | None:
        if b"\n" not in self._buf:
            return None
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {"event": "garbled", "line": line[:200].decode(errors="replace")}

    def _receive(self, timeout: float) -> bool:
        """Read what the transport has (waiting up to ``timeout``); True if bytes came."""
        if self._eof:
            return False
        data = self.transport.recv(timeout)
        if data == b"":
            self._eof = True
        elif data:
            self._buf += data
            return True
        return False

    def _next_event(self, timeout: float) -> dict | None:
        """The next raw event (None on timeout or end of output); for the handshake only."""
        deadline = time.monotonic() + timeout
        while True:
            ev = self._take_line()
            if ev is not None:
                return ev
            left = deadline - time.monotonic()
            if self._eof or left <= 0:
                return None
            self._receive(left)

    def _apply(self, ev: dict) -> None:
        kind = ev.get("event")
        if kind == "exit":
            self.exits[int(ev["pid"])] = ExitStatus(code=ev.get("code"), signal=ev.get("signal"))
            self.stopped.pop(int(ev["pid"]), None)
        elif kind == "stopped":
            self.stopped[int(ev["pid"])] = True
            if "arrivals" in ev:
                self.arrivals[int(ev["pid"])] = list(ev["arrivals"])
        elif kind == "continued":
            self.stopped[int(ev["pid"])] = False
        elif kind == "reply" and ev.get("req") is not None:
            self._replies[int(ev["req"])] = ev

    def pump(self, timeout: float = 0.0) -> bool:
        """Apply every event the server has sent; wait up to ``timeout`` for one. True if any came."""
        deadline = time.monotonic() + timeout
        got = False
        while True:
            while (ev := self._take_line()) is not None:
                self._apply(ev)
                got = True
            if self._eof:
                return got
            left = deadline - time.monotonic()
            if self._receive(0.0 if got else max(0.0, left)):
                continue
            if got or left <= 0:
                return got

    @property
    def alive(self) -> bool:
        return not self._eof and self.transport.running()

    def adopt(self, pid: int) -> None:
        """A pid the server just forked for us.

        Nothing recorded for ``pid`` is cleared here: the server may report the new racer's
        ``stopped`` (or even its ``exit``) *before* the spawn reply (it reaps from its SIGCHLD
        handler while still forking the group's later racers), and clearing it lost that racer's
        stop: it stood at the gate unseen until the trial timed out (measured under load in
        Docker, where no /proc fallback hides it). Nothing stale can be there either: a pid is
        reused only after its old process was reaped, whose ``exit`` event already dropped its
        ``stopped`` and ``arrivals``, and its exit record was dropped by ``forget`` before this
        spawn was sent (``ForkServerLauncher._forget_exited``)."""
        self.known.add(pid)

    def forget(self, pid: int) -> None:
        """Nothing more will be asked about ``pid`` (its exit was collected by its handle)."""
        self.exits.pop(pid, None)
        self.stopped.pop(pid, None)
        self.arrivals.pop(pid, None)
        self.known.discard(pid)

    # ------------------------------------------------------------------ requests
    def send_request(self, op: str, **fields) -> int:
        """Send one request without waiting (several servers can then work at once); its number."""
        if not self.alive:
            raise ForkServerGone(f"{self.transport.where} is gone: {self.log_tail()}")
        self._req += 1
        n = self._req
        data = (json.dumps({"op": op, "req": n, **fields}, separators=(",", ":"), default=repr) + "\n").encode()
        try:
            self.transport.send(data)
        except (BrokenPipeError, OSError, EOFError) as exc:
            raise ForkServerGone(f"{self.transport.where} stopped reading: {exc}; {self.log_tail()}") from None
        return n

    def await_reply(self, n: int, op: str, timeout: float = REPLY_TIMEOUT_S) -> dict:
        deadline = time.monotonic() + timeout
        while n not in self._replies:
            left = deadline - time.monotonic()
            if self._eof or left <= 0:
                raise ForkServerGone(f"{self.transport.where} did not answer {op!r}: {self.log_tail()}")
            self.pump(min(left, 0.5))
        reply = self._replies.pop(n)
        if not reply.get("ok"):
            raise EnvironmentProblem(f"{self.transport.where} refused {op!r}: {reply.get('error')}")
        return reply

    def request(self, op: str, timeout: float = REPLY_TIMEOUT_S, **fields) -> dict:
        return self.await_reply(self.send_request(op, **fields), op, timeout)

    def wait_exit(self, pid: int, timeout: float) -> ExitStatus | None:
        deadline = time.monotonic() + timeout
        while pid not in self.exits:
            left = deadline - time.monotonic()
            if left <= 0 or self._eof:
                self.pump(0.0)
                break
            self.pump(min(left, 0.05))
        return self.exits.get(pid)

    def log_tail(self, n: int = 600) -> str:
        return self.transport.log_tail(n)

    def close(self) -> None:
        """Shut the server down: end of input makes it kill and reap every racer (reporting each
        exit), then exit. Forcefully if it does not within ``KILL_CONFIRM_S``.

        End of input rather than a ``shutdown`` request: it works even when a signal interrupted
        us in the middle of writing a request.
        """
        self.transport.close_input()
        deadline = time.monotonic() + KILL_CONFIRM_S
        while not self._eof and time.monotonic() < deadline:
            self.pump(0.05)
        self.transport.finish(deadline - time.monotonic())
        if self.sees_pids is not None:
            # a server that died uncleanly took its racers with it (parent-death signal); make sure
            for pid in self.known - set(self.exits):
                if self.sees_pids.is_racer(pid):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass


# ---------------------------------------------------------------------------------- the racer


class WarmRacer(RacerFiles):
    """One forked racer, seen through its server's events (and ``/proc`` where the pids are ours)."""

    def __init__(
        self,
        racer_id: str,
        pid: int,
        pgid: int,
        client: ForkServerClient,
        spec: dict,
        log_path: Path,
        host: str = "localhost",
        remote: dict | None = None,
    ):
        self.racer_id = racer_id
        self.pid: int = pid
        self.pgid = pgid
        self.host = host
        self.client = client
        self.spec = spec
        self.log_path = log_path
        self.remote = remote  # the server's view of the racer ("spec", "log") when its files are elsewhere
        self._fetched = False
        self._exit: ExitStatus | None = None  # kept here once known, so the client can forget the pid

    def _pids_here(self) -> SeesRacerPids | None:
        return self.client.sees_pids

    def state(self) -> State:
        if self.exit_status() is not None:
            return "exited"
        view = self._pids_here()
        if view is None:
            # the server's events are the status channel: "stopped" comes from waitpid(WUNTRACED),
            # which the kernel reports once the group stop is complete (every thread stopped)
            if not self.client.alive:
                return "exited"  # the server is gone and took its racers along; no status: unconfirmed
            return "stopped" if self.client.stopped.get(self.pid) else "running"
        s = view.proc_state(self.pid)
        if s in ("T", "t"):
            # no need to read every /proc/<pid>/task/*/stat (k of them, each poll) once the server said so
            if self.client.stopped.get(self.pid):
                return "stopped"
            return "stopped" if view.all_threads_stopped(self.pid) else "running"
        if s is None or s in ("Z", "X"):
            # dead; its exit status is on its way from the server (or never comes: the server is
            # gone, and the racer is "exited" with no status, i.e. unconfirmed)
            if self.client.wait_exit(self.pid, KILL_CONFIRM_S) is not None or not self.client.alive:
                return "exited"
            return "running"
        return "running"

    def arrivals(self) -> list[dict]:
        if self.client.fetches is not None:
            self.client.pump()
            return list(self.client.arrivals.get(self.pid, []))
        return read_arrivals(self.spec["barrier"]["dir"], self.racer_id)

    def release(self) -> None:
        if self.exit_status() is None:
            # "running" before the request goes out, not once it is answered: the racer may stop at its
            # next barrier before the reply is read, and that "stopped" event, applied with the reply
            # (one read of a slow transport: Docker's attach stream), must not be overwritten
            self.client.stopped[self.pid] = False
            try:
                self.client.request("signal", pid=self.pid, sig=int(signal.SIGCONT))
            except EnvironmentProblem:
                pass  # exited meanwhile: its exit is reported

    def kill(self) -> ExitStatus | None:
        """SIGKILL and wait for the exit status that proves it (None: could not confirm)."""
        if self.exit_status() is None:
            try:
                self.client.request("signal", pid=self.pid, sig=int(signal.SIGKILL))
            except EnvironmentProblem:
                pass  # exited (or the server is gone): the status below says which
            self._exit = self.client.wait_exit(self.pid, KILL_CONFIRM_S)
        return self._exit

    def exit_status(self) -> ExitStatus | None:
        if self._exit is None:
            self.client.pump()
            self._exit = self.client.exits.get(self.pid)
        return self._exit

    # files written elsewhere are fetched once the racer is done
    def _fetch(self, force_log: bool = False) -> None:
        t = self.client.fetches
        if self.remote is None or t is None:
            return
        done = self.exit_status() is not None or not self.client.alive
        if done and not self._fetched:
            self._fetched = True
            rres, lres = self.remote["spec"]["result_path"], self.spec["result_path"]
            for remote, local in (
                (rres, lres),
                (background_path(rres), background_path(lres)),
                (self.remote["log"], str(self.log_path)),
            ):
                try:
                    t.fetch(remote, local)
                except Exception:  # a lost connection: the result is missing, as it would be
                    pass
        elif force_log and not done:
            try:
                t.fetch(self.remote["log"], str(self.log_path))
            except Exception:
                pass

    def result(self) -> dict | None:
        self._fetch()
        return super().result()

    def log_tail(self, n: int = 2000) -> str:
        self._fetch(force_log=True)
        return super().log_tail(n)


# ---------------------------------------------------------------------------------- launchers


class ForkServerLauncher:
    """What every warm launcher does the same way, whatever transport reaches its servers.

    A subclass says which server a spec goes to (``server_for``) and how the server sees the
    racer's files (``entry``); starting groups, the gate, waiting and reaping are here.
    """

    name = "warm"

    def __init__(self) -> None:
        self._racers: list[WarmRacer] = []
        self.fork_ms: deque[float] = deque(maxlen=4096)  # the last forks' times in the server (for the benchmark)

    # ------------------------------------------------------------------ hooks
    def server_for(self, spec: dict, index: int, workdir: str) -> ForkServerClient:
        raise NotImplementedError

    def clients(self) -> list[ForkServerClient]:
        raise NotImplementedError

    def entry(self, spec: dict, workdir: str, client: ForkServerClient) -> dict:
        """The spawn request's entry for one racer: its id, the spec and log path as the server sees them."""
        return {"id": spec["racer_id"], "spec": spec, "log": str(Path(workdir) / f"racer-{spec['racer_id']}.log")}

    def handle(self, spec: dict, entry: dict, pid: int, pgid: int, client: ForkServerClient, workdir: str) -> WarmRacer:
        return WarmRacer(spec["racer_id"], pid, pgid, client, spec, Path(entry["log"]))

    # ------------------------------------------------------------------ Launcher
    def start_group(self, specs: list[dict], workdir: str) -> list[WarmRacer]:
        """One spawn request per server (all sent before any reply is awaited): the racers of one
        server share a fresh process group."""
        if not specs:
            return []
        self._forget_exited()
        plan: dict[int, tuple[ForkServerClient, list[tuple[dict, dict]]]] = {}
        for i, s in enumerate(specs):
            c = self.server_for(s, i, workdir)
            plan.setdefault(id(c), (c, []))[1].append((s, self.entry(s, workdir, c)))
        sent = [(c, items, c.send_request("spawn", racers=[e for _, e in items], pgid=0)) for c, items in plan.values()]
        made: dict[str, WarmRacer] = {}
        failure: EnvironmentProblem | None = None
        for c, items, n in sent:
            try:
                reply = c.await_reply(n, "spawn")
            except EnvironmentProblem as exc:
                failure = failure or exc
                continue
            self.fork_ms.extend(reply.get("fork_ms") or [])
            pgid = int(reply["pgid"])
            for s, e in items:
                pid = int(reply["pids"][s["racer_id"]])
                c.adopt(pid)
                h = self.handle(s, e, pid, pgid, c, workdir)
                made[s["racer_id"]] = h
                self._racers.append(h)
        if failure is not None:
            for h in made.values():
                h.kill()  # all or nothing, as within one server
            raise failure
        return [made[s["racer_id"]] for s in specs]

    def open_gate(self, handles: list[WarmRacer]) -> None:
        """Continue every racer: one ``killpg(SIGCONT)`` per server (sent by the racers' parent),
        all requests sent before any reply is awaited."""
        groups: dict[tuple[int, int], list[WarmRacer]] = {}
        for h in handles:
            if h.exit_status() is None:
                groups.setdefault((id(h.client), h.pgid), []).append(h)
        sent = []
        for (_, pgid), hs in groups.items():
            for h in hs:  # before the request, as in ``WarmRacer.release``: a stop seen with the reply stands
                h.client.stopped[h.pid] = False
            try:
                sent.append((hs, hs[0].client.send_request("killpg", pgid=pgid, sig=int(signal.SIGCONT))))
            except EnvironmentProblem:
                pass  # the server is gone: its racers are too
        for hs, n in sent:
            try:
                hs[0].client.await_reply(n, "killpg")
            except EnvironmentProblem:
                continue  # every member exited meanwhile: their exits are reported

    def wait_change(self, timeout: float) -> None:
        """Sleep until a server reports something or ``timeout`` passes."""
        live = [c for c in self.clients() if c.alive]
        if len(live) == 1:
            live[0].pump(timeout)
        elif live:
            select.select([c.transport.fileno() for c in live], [], [], timeout)
            for c in live:
                c.pump(0.0)
        else:
            time.sleep(timeout)

    def _forget_exited(self) -> None:
        """Drop what we know of racers whose exit is in (their handles keep their own status), so a
        1,000-trial run at k=64 does not keep 64,000 handles, specs and exit records."""
        live = []
        for h in self._racers:
            if h.exit_status() is None:
                live.append(h)
            else:
                h.client.forget(h.pid)
        self._racers = live

    def forget(self, handles: list[WarmRacer]) -> None:
        """Drop finished racers (a trial's, at its end): a long run holds no state per racer ever started."""
        done = {id(h) for h in handles if h.exit_status() is not None}
        for h in self._racers:
            if id(h) in done:
                h.client.forget(h.pid)
        self._racers = [h for h in self._racers if id(h) not in done]

    def close_servers(self) -> None:
        raise NotImplementedError

    def reap(self) -> None:
        """Kill and collect every racer (each server does it and reports), then stop the servers."""
        self.close_servers()
        self._racers.clear()


class OneServerLauncher(ForkServerLauncher):
    """A warm launcher with a single fork server (locally, or in one container): ``self.client``."""

    client: ForkServerClient | None = None

    def clients(self) -> list[ForkServerClient]:
        return [self.client] if self.client is not None else []

    def close_servers(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None


class WarmLauncher(OneServerLauncher):
    """Local warm racers: one fork server per launcher, i.e. per (framework, version) of a run,
    started on the first ``start_group`` and shut down by ``reap``. Its log and its racers' temp
    folder (``TMPDIR``: ``tmp`` there) are in ``log_dir``, else in the run's work folder (the parent
    of the first trial folder)."""

    name = "warm"

    def __init__(
        self, python: str | None = None, env: dict | None = None, log_dir: str | os.PathLike | None = None, pool: int | None = None
    ):
        super().__init__()
        self.pool = pool  # pre-forked racers the server keeps ready (None: its default, chaos.racer.forkserver)
        self.python = python or sys.executable
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        # the server (and so every racer) runs this very chaos, whatever the current folder is
        from chaos.envs import chaos_root

        paths = [p for p in self.env.get("PYTHONPATH", "").split(os.pathsep) if p and p != chaos_root()]
        self.env["PYTHONPATH"] = os.pathsep.join([chaos_root(), *paths])
        self.log_dir = Path(log_dir) if log_dir else None
        self.ahead: tuple[str, str | None, PipeTransport] | None = (
            None  # a server started ahead (``start_ahead``): framework, module, process
        )

    def _spawn(self, target: str, folder: Path, module: str | None) -> PipeTransport:
        """The server's process, started (not yet ready): ``folder`` is the run's work folder."""
        log_dir = self.log_dir or folder
        # the server's temp folder, which every racer it forks inherits, is inside the launcher's folder
        env = {**self.env, "TMPDIR": racer_tmp(log_dir)}
        # the run's folder goes into the command line of the server and every racer it forks
        return PipeTransport(
            self.python, target, env, log_dir / f"forkserver-{target}.log", label=str(folder), pool=self.pool, module=module
        )

    def start_ahead(self, framework: str, folder: str, module: str | None = None) -> None:
        """Start the fork server now (``StartsAhead``); the first ``server`` call waits for it to be
        ready. Nothing if one runs or is starting already."""
        if self.client is None and self.ahead is None:
            self.ahead = (framework, module, self._spawn(framework, Path(folder), module))

    def server(self, target: str, workdir: str, module: str | None = None) -> ForkServerClient:
        if self.client is not None and not self.client.alive:
            self.client.close()
            self.client = None
        if self.client is None:
            ahead, self.ahead = self.ahead, None
            if ahead is not None and ahead[:2] != (target, module):  # started for another adapter: not this one
                _stop(ahead[2])
                ahead = None
            transport = ahead[2] if ahead is not None else self._spawn(target, Path(workdir).parent, module)
            self.client = ForkServerClient(transport, target)
        elif self.client.target != target:
            raise EnvironmentProblem(f"this warm launcher serves {self.client.target}, not {target}")
        return self.client

    def close_servers(self) -> None:
        ahead, self.ahead = self.ahead, None
        if ahead is not None:  # started ahead, never used
            _stop(ahead[2])
        super().close_servers()

    def server_for(self, spec: dict, index: int, workdir: str) -> ForkServerClient:
        return self.server(spec["target"]["framework"], workdir, adapter_module(spec))


def _stop(transport: PipeTransport) -> None:
    """Stop a server that was started but never spoken to: it has forked no racer, so it is killed
    at once if end of input does not end it (it may still be importing the framework)."""
    transport.close_input()
    transport.finish(0.0)
