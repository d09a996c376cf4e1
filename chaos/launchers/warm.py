"""The warm launcher: local racers forked from a pre-imported parent (``chaos.forkserver``).

Why: a cold racer spends a second importing the framework before milliseconds of real work; a
warm racer is a ``fork`` of a server that imported it once. What the orchestrator sees does not
change: each racer is a process with its own pid and process group (one per trial's group, so
``open_gate`` is one ``killpg``), a parent-death signal chain (orchestrator -> server -> racer),
its state in ``/proc``, and an exit status from ``waitpid`` (taken by the server, its parent, and
reported back): a SIGKILL is confirmed by the status itself, never assumed.

One server per launcher, i.e. per (framework, version) of a run, started on the first
``start_group`` and shut down (every racer killed and reaped) by ``reap``. Signals go through the
server, which refuses to signal anything but its own unreaped children, so a reused pid is never
hit. The orchestrator stays single-threaded: events are read whenever a handle is asked for its
state, and ``wait_change`` lets the trial's waits sleep until the server reports something.
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
from pathlib import Path

from chaos.barrier import read_arrivals
from chaos.errors import EnvironmentProblem
from chaos.launchers import ExitStatus, RacerFiles, State
from chaos.launchers.local import all_threads_stopped, proc_state

START_TIMEOUT_S = 300.0  # importing a framework on a loaded 2-core machine can take a while
REPLY_TIMEOUT_S = 60.0
KILL_CONFIRM_S = 10.0


class ForkServerGone(EnvironmentProblem):
    """The fork server exited or stopped answering."""


class ForkServerClient:
    """The orchestrator's end of one fork server process (JSON lines over its stdin/stdout)."""

    def __init__(self, python: str, target: str, env: dict | None, log_path: Path, label: str | None = None):
        self.python, self.target, self.env, self.log_path = python, target, env, log_path
        self.exits: dict[int, ExitStatus] = {}
        self.stopped: dict[int, bool] = {}
        self.ready: dict = {}
        self._replies: dict[int, dict] = {}
        self._buf = b""
        self._req = 0
        self._eof = False
        self.known: set[int] = set()  # every pid this server forked for us
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen(
            [python, "-m", "chaos.forkserver", "--target", target, "--parent-pid", str(os.getpid()),
             *(["--label", label] if label else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            process_group=0,  # not in the terminal's group: Ctrl-C reaches the orchestrator, which reaps
            close_fds=True,
        )
        self._out = self.proc.stdout.fileno()  # type: ignore[union-attr]
        os.set_blocking(self._out, False)
        try:
            first = self._next_event(START_TIMEOUT_S)
        except BaseException:  # Ctrl-C while the framework imports: no server may outlive us
            self.close()
            raise
        if first is None or first.get("event") != "ready":
            detail = (first or {}).get("message") or self.log_tail()
            self.close()
            raise EnvironmentProblem(f"the {target} fork server ({python}) did not start: {detail}",
                                     hint="run with --racers cold to bypass warm racers")
        self.ready = first
        self.pid = self.proc.pid

    # ------------------------------------------------------------------ reading
    def _read_available(self) -> None:
        while not self._eof:
            try:
                chunk = os.read(self._out, 1 << 16)
            except BlockingIOError:
                return
            if not chunk:
                self._eof = True
                return
            self._buf += chunk

    def _take_line(self) -> dict | None:
        if b"\n" not in self._buf:
            return None
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {"event": "garbled", "line": line[:200].decode(errors="replace")}

    def _next_event(self, timeout: float) -> dict | None:
        """The next raw event (None on timeout or end of output); for the handshake only."""
        deadline = time.monotonic() + timeout
        while True:
            ev = self._take_line()
            if ev is not None:
                return ev
            if self._eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            select.select([self._out], [], [], left)
            self._read_available()

    def _apply(self, ev: dict) -> None:
        kind = ev.get("event")
        if kind == "exit":
            self.exits[int(ev["pid"])] = ExitStatus(code=ev.get("code"), signal=ev.get("signal"))
            self.stopped.pop(int(ev["pid"]), None)
        elif kind == "stopped":
            self.stopped[int(ev["pid"])] = True
        elif kind == "continued":
            self.stopped[int(ev["pid"])] = False
        elif kind == "reply" and ev.get("req") is not None:
            self._replies[int(ev["req"])] = ev

    def pump(self, timeout: float = 0.0) -> bool:
        """Apply every event the server has sent; wait up to ``timeout`` for one. True if any came."""
        self._read_available()
        got = False
        while (ev := self._take_line()) is not None:
            self._apply(ev)
            got = True
        if got or timeout <= 0 or self._eof:
            return got
        r, _, _ = select.select([self._out], [], [], timeout)
        if r:
            return self.pump(0.0)
        return False

    @property
    def alive(self) -> bool:
        return not self._eof and self.proc.poll() is None

    # ------------------------------------------------------------------ requests
    def request(self, op: str, timeout: float = REPLY_TIMEOUT_S, **fields) -> dict:
        if not self.alive:
            raise ForkServerGone(f"the {self.target} fork server (pid {self.proc.pid}) is gone: {self.log_tail()}")
        self._req += 1
        n = self._req
        data = (json.dumps({"op": op, "req": n, **fields}, separators=(",", ":"), default=repr) + "\n").encode()
        try:
            self.proc.stdin.write(data)  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError) as exc:
            raise ForkServerGone(f"the {self.target} fork server stopped reading: {exc}; {self.log_tail()}") from None
        deadline = time.monotonic() + timeout
        while n not in self._replies:
            left = deadline - time.monotonic()
            if self._eof or left <= 0:
                raise ForkServerGone(f"the {self.target} fork server did not answer {op!r}: {self.log_tail()}")
            self.pump(min(left, 0.5))
        reply = self._replies.pop(n)
        if not reply.get("ok"):
            raise EnvironmentProblem(f"the {self.target} fork server refused {op!r}: {reply.get('error')}")
        return reply

    def forget(self, pid: int) -> None:
        """Nothing more will be asked about ``pid`` (its exit was collected by its handle)."""
        self.exits.pop(pid, None)
        self.stopped.pop(pid, None)
        self.known.discard(pid)

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
        try:
            self._log.flush()
            return self.log_path.read_bytes()[-n:].decode(errors="replace").strip()
        except OSError:
            return ""

    def close(self) -> None:
        """Shut the server down: end of input makes it kill and reap every racer (reporting each
        exit), then exit. Forcefully if it does not within ``KILL_CONFIRM_S``.

        End of input rather than a ``shutdown`` request: it works even when a signal interrupted
        us in the middle of writing a request.
        """
        try:
            self.proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        deadline = time.monotonic() + KILL_CONFIRM_S
        while not self._eof and time.monotonic() < deadline:
            self.pump(0.05)
        try:
            self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        # a server that died uncleanly took its racers with it (parent-death signal); make sure
        for pid in self.known - set(self.exits):
            if proc_state(pid) not in (None, "Z", "X") and _is_racer_of(pid, self.proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            self.proc.stdout.close()  # type: ignore[union-attr]
        except OSError:
            pass
        self._log.close()


def _is_racer_of(pid: int, server_pid: int) -> bool:
    """True if ``pid`` is still a racer the server forked (a fork keeps the server's command line;
    after the server's death the racer may have been reparented to init or a subreaper)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read()
    except OSError:
        return False
    return b"chaos.forkserver" in cmd and pid != server_pid


class WarmRacer(RacerFiles):
    def __init__(self, racer_id: str, pid: int, pgid: int, client: ForkServerClient, spec: dict, log_path: Path):
        self.racer_id = racer_id
        self.pid: int | None = pid
        self.pgid = pgid
        self.host = "localhost"
        self.client = client
        self.spec = spec
        self.log_path = log_path
        self._exit: ExitStatus | None = None  # kept here once known, so the client can forget the pid

    def state(self) -> State:
        if self.exit_status() is not None:
            return "exited"
        s = proc_state(self.pid)  # type: ignore[arg-type]
        if s in ("T", "t"):
            # The server's "stopped" event comes from waitpid(WUNTRACED), which the kernel reports
            # only once the group stop is complete, i.e. every thread is stopped: no need to read
            # every /proc/<pid>/task/*/stat (k of them, each poll) as the cold launcher does.
            if self.client.stopped.get(self.pid):  # type: ignore[arg-type]
                return "stopped"
            return "stopped" if all_threads_stopped(self.pid) else "running"  # type: ignore[arg-type]
        if s is None or s in ("Z", "X"):
            # dead; its exit status is on its way from the server (or never comes: the server is
            # gone, and the racer is "exited" with no status, i.e. unconfirmed)
            if self.client.wait_exit(self.pid, KILL_CONFIRM_S) is not None or not self.client.alive:  # type: ignore[arg-type]
                return "exited"
            return "running"
        return "running"

    def arrivals(self) -> list[dict]:
        return read_arrivals(self.spec["barrier"]["dir"], self.racer_id)

    def release(self) -> None:
        if self.exit_status() is None:
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
            self._exit = self.client.wait_exit(self.pid, KILL_CONFIRM_S)  # type: ignore[arg-type]
        return self._exit

    def exit_status(self) -> ExitStatus | None:
        if self._exit is None:
            self.client.pump()
            self._exit = self.client.exits.get(self.pid)  # type: ignore[arg-type]
        return self._exit



class WarmLauncher:
    name = "warm"

    def __init__(self, python: str | None = None, env: dict | None = None, log_dir: str | os.PathLike | None = None):
        self.python = python or sys.executable
        self.env = dict(os.environ if env is None else env)
        self.env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        # the server (and so every racer) runs this very chaos, whatever the current folder is
        from chaos.envs import chaos_root

        paths = [p for p in self.env.get("PYTHONPATH", "").split(os.pathsep) if p and p != chaos_root()]
        self.env["PYTHONPATH"] = os.pathsep.join([chaos_root(), *paths])
        self.log_dir = Path(log_dir) if log_dir else None
        self.client: ForkServerClient | None = None
        self._racers: list[WarmRacer] = []
        self.fork_ms: deque[float] = deque(maxlen=4096)  # the last forks' times in the server (for the benchmark)

    def server(self, target: str, workdir: str) -> ForkServerClient:
        if self.client is not None and not self.client.alive:
            self.client.close()
            self.client = None
        if self.client is None:
            log_dir = self.log_dir or Path(workdir).parent
            # the run's folder goes into the command line of the server and every racer it forks
            self.client = ForkServerClient(self.python, target, self.env, log_dir / f"forkserver-{target}.log",
                                           label=str(Path(workdir).parent))
        elif self.client.target != target:
            raise EnvironmentProblem(f"this warm launcher serves {self.client.target}, not {target}")
        return self.client

    def start_group(self, specs: list[dict], workdir: str) -> list[WarmRacer]:
        if not specs:
            return []
        client = self.server(specs[0]["target"]["framework"], workdir)
        self._forget_exited()
        racers = [{"id": s["racer_id"], "spec": s, "log": str(Path(workdir) / f"racer-{s['racer_id']}.log")} for s in specs]
        reply = client.request("spawn", racers=racers, pgid=0)
        self.fork_ms.extend(reply.get("fork_ms") or [])
        pgid = int(reply["pgid"])
        handles = []
        for s, r in zip(specs, racers):
            pid = int(reply["pids"][s["racer_id"]])
            client.known.add(pid)
            h = WarmRacer(s["racer_id"], pid, pgid, client, s, Path(r["log"]))
            handles.append(h)
            self._racers.append(h)
        return handles

    def _forget_exited(self) -> None:
        """Drop what we know of racers whose exit is in (their handles keep their own status), so a
        1,000-trial run at k=64 does not keep 64,000 handles, specs and exit records."""
        live = []
        for h in self._racers:
            if h.exit_status() is None:
                live.append(h)
            else:
                h.client.forget(h.pid)  # type: ignore[arg-type]
        self._racers = live

    def open_gate(self, handles: list[WarmRacer]) -> None:
        """Continue every racer of the group with one ``killpg`` (sent by their parent, the server)."""
        groups = {h.pgid for h in handles if h.exit_status() is None}
        for g in groups:
            try:
                handles[0].client.request("killpg", pgid=g, sig=int(signal.SIGCONT))
            except EnvironmentProblem:
                pass  # every member exited meanwhile: their exits are reported

    def wait_change(self, timeout: float) -> None:
        """Sleep until the server reports a state change or ``timeout`` passes."""
        if self.client is not None and self.client.alive:
            self.client.pump(timeout)
        else:
            time.sleep(timeout)

    def reap(self) -> None:
        """Kill and collect every racer (the server does it and reports), then stop the server."""
        if self.client is not None:
            self.client.close()
            self.client = None
        self._racers.clear()
