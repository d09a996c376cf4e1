"""The fork server: a pre-imported racer parent that forks one racer per request.

Why it exists: a cold racer pays for a Python start and the framework's imports (LangGraph: about
a second of CPU) before a few milliseconds of real work. The fork server pays that once per
(framework, version, host) and then forks racers that start with everything imported.

What it promises:

* **Fork safety.** The server imports the framework's modules (and builds each built-in workload
  once over an in-memory saver to fill the import-time caches) but opens no database connection,
  starts no thread and runs no event loop (a library that starts one at import, CrewAI's LanceDB,
  is imported by the adapter's ``PreloadsForFork`` hook, which stops it again and has every child
  start its own). Before every fork it checks that it still has exactly
  one thread and no file descriptor besides its own (stdio, its wake-up pipe, its socket), and
  refuses the request otherwise. Every connection a racer uses is opened by the racer itself.
* **A child is a racer like any other.** It runs ``chaos.racer.main.serve(spec)``, the same code a cold
  ``python -m chaos.racer.main`` runs. It leads a fresh process group or joins the group of the first
  racer of its request (so one ``killpg`` opens a race's gate for all of them), sets a
  parent-death signal (it dies with the server, which dies with *its* parent: kill the
  orchestrator and the whole tree goes), gets stdin from /dev/null and stdout/stderr to its log,
  default signal dispositions, and none of the server's descriptors.
* **A pool of pre-forked racers** (``--pool N``, default 2). The server forks up to N children ahead
  of need: at start, and whenever a racer has exited (a CPU is free then: in a sweep trial the pool
  fills while the resume racer runs after the victim's kill, not while the victim runs). A pooled child drops the server's descriptors, arms its
  parent-death signal and builds the workload the server last launched (the adapter's ``prewarm``:
  in memory, no store, no file; its copy-on-write page faults and caches are then paid), then
  blocks reading its pipe. It learns nothing of a trial until a ``spawn`` hands it its spec: the
  server moves it into the request's process group, writes the spec, and only then does the child
  open its log and run ``serve(spec)`` (which opens the ledger, the trial's store, everything per
  trial). So a pooled racer and a freshly forked one run the same code on the same spec; the
  pooled one starts with its pages already copied. A pooled child that dies before it is used is
  dropped silently (it never was anyone's racer) and the request forks afresh.
* **Exits are confirmed.** The server is the racers' parent, so it reaps them (``waitpid``) and
  reports every stop, continue and exit with the raw status: a SIGKILL is confirmed by the exit
  status itself. It signals only its own unreaped children (a pid it reports cannot be reused
  under the caller's feet), and on end of input or ``shutdown`` it kills and reaps every child.

Protocol: JSON lines, requests in, events out, over stdin/stdout (default) or one connection on a
unix socket (``--socket PATH``). Standard library only (plus the framework it preloads)::

    -> {"op": "spawn", "req": 1, "racers": [{"id": "r0", "spec": {...}, "log": "/path"}, ...],
        "pgid": 0}                        # 0: the first racer leads a new group
                                          # a racer entry with "arrivals": true gets its barrier
                                          # arrival records in each "stopped" event
    <- {"event": "reply", "req": 1, "ok": true, "pids": {"r0": 4242, ...}, "pgid": 4242, "fork_ms": [...]}
    -> {"op": "signal", "req": 2, "pid": 4242, "sig": 9}
    -> {"op": "killpg", "req": 3, "pgid": 4242, "sig": 18}
    -> {"op": "status", "req": 4}         # pid, threads, fds, children, preloaded, rss
    -> {"op": "shutdown", "req": 5}       # kill and reap every child, reply, exit 0
    <- {"event": "ready", "pid": ..., "preloaded": [...], "import_s": ...}   # once, at start
    <- {"event": "stopped" | "continued", "pid": ..., "id": ..., "sig": ...}
    <- {"event": "exit", "pid": ..., "id": ..., "code": ..., "signal": ..., "status": ...}
    <- {"event": "reply", "req": N, "ok": false, "error": "..."}            # a refused request

Usage: ``python -m chaos.racer.forkserver --target FRAMEWORK [--module ADAPTER] [--parent-pid PID] [--socket PATH] [--label TEXT] [--pool N]``.
``--module`` is the adapter module its racers' specs name (``target.module``; default: the
registry's for ``--target``), so a framework registered in the orchestrator alone is served too.
``--label`` is not read: it names the run (its folder) in the command line of the server and of
every racer it forks (a fork keeps its parent's command line), so ``ps`` and orphan checks can
tell whose racers they are.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from chaos.racer.protocol import RacerSpec

EXIT_PRELOAD_FAILED = 3
EXIT_ORPHANED = 97  # a child whose server died before it could arm its parent-death signal
DEFAULT_POOL = 0  # off: measured at low load it cut the victim's faults 3x but not a trial's wall time (bench/README.md)


def _child_exit(body: Callable[[], int]) -> NoReturn:
    """End a forked child with ``body``'s exit code (70 if it raised, after printing why): anything
    here must end the child, never return into the server loop."""
    code = 70
    try:
        code = body()
    except BaseException:
        try:
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
    finally:
        os._exit(code)


class Refused(Exception):
    """A request the server will not carry out (the reason goes back to the caller)."""


def _prctl_pdeathsig() -> bool:
    from chaos.racer.main import set_parent_death_signal

    return set_parent_death_signal()


def adapter_of(target: str, module: str | None) -> str:
    """The adapter module to serve: ``--module``, else the registry's for ``--target``."""
    from chaos.targets import get_target

    return module or get_target(target).module


def preload(target: str, adapter_name: str) -> list[str]:
    """Import the racer side and the target's adapter module with what its racers import; run its pre-warm hook."""
    loaded = ["chaos.racer.main", "chaos.racer.barrier", "chaos.racer.ledger", "chaos.targets.base"]
    for name in loaded:
        importlib.import_module(name)
    from chaos.racer.main import preimport
    from chaos.targets.base import PreloadsForFork, load_racer_half

    adapter = load_racer_half(adapter_name)
    loaded.append(adapter_name)
    loaded.extend(preimport(adapter))
    adapter.prewarm()
    if isinstance(adapter, PreloadsForFork):  # what a racer's first call imports, made safe to fork
        loaded.extend(adapter.preload_for_fork())
    others = _other_native_threads()
    if others:
        # threading.active_count() sees Python threads only; a C library's pool (OpenBLAS, gRPC, a
        # Rust runtime) shows up here, and a fork would copy a process whose workers vanish
        raise RuntimeError(
            f"importing {target} left {len(others)} native thread(s) running besides the main one ({', '.join(others)}): not safe to fork"
        )
    return loaded


def _other_native_threads() -> list[str]:
    """Names of this process's kernel threads other than the main one (Linux; [] elsewhere)."""
    try:
        tids = [t for t in os.listdir("/proc/self/task") if int(t) != os.getpid()]
    except OSError:
        return []
    names = []
    for t in tids:
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                names.append(f"{f.read().strip()}[{t}]")
        except OSError:
            continue  # ended meanwhile
    return names


def _own_fds() -> list[int]:
    return sorted(int(n) for n in os.listdir("/proc/self/fd"))


def _fd_target(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"


class Server:
    def __init__(self, rfd: int, wfd: int, extra_fds: tuple[int, ...] = (), pool: int = 0):
        self.rfd, self.wfd = rfd, wfd
        self.pool_size = max(0, pool)
        self.pool: list[tuple[int, int]] = []  # (pid, write end of its spec pipe), oldest first
        self.hint: str | None = None  # the workload of the last racer launched: what pooled children prewarm
        self.target: str | None = None
        self.adapter: str | None = None  # the adapter module it preloaded (what pooled children prewarm with)
        self.pid = os.getpid()
        self.children: dict[int, str] = {}  # unreaped child pid -> racer id
        self.groups: dict[int, set[int]] = {}  # pgid -> unreaped member pids
        self.report_arrivals: dict[int, tuple[str, str]] = {}  # pid -> (barrier dir, racer id)
        self.preloaded: list[str] = []
        self.import_s = 0.0
        self._buf = b""
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        self.allowed_fds = {0, 1, 2, rfd, wfd, self._wake_r, self._wake_w, *extra_fds}
        signal.signal(signal.SIGCHLD, lambda *_: None)  # a Python handler, so the wake-up fd trips
        signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)

    # ------------------------------------------------------------------ output
    def say(self, event: dict) -> None:
        data = (json.dumps(event, separators=(",", ":"), default=repr) + "\n").encode()
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.wfd, view)
            except InterruptedError:
                continue
            view = view[n:]

    # ------------------------------------------------------------------ safety
    def fork_unsafe(self) -> str | None:
        """Why forking now would be unsafe (None: it is safe)."""
        if threading.active_count() != 1:
            return f"the server has {threading.active_count()} threads: {[t.name for t in threading.enumerate()]}"
        extra = [fd for fd in _own_fds() if fd not in self.allowed_fds]
        # listdir itself holds one descriptor open while it reads /proc/self/fd
        extra = [fd for fd in extra if _fd_target(fd) != "?" and not _fd_target(fd).startswith("/proc/")]
        if extra:
            return "the server holds descriptors it did not open for the protocol: " + ", ".join(f"{fd}->{_fd_target(fd)}" for fd in extra)
        return None

    # ------------------------------------------------------------------ children
    def reap(self, block: bool = False) -> int:
        """Collect every child state change; report stops, continues and exits (returns how many racers exited)."""
        exited = 0
        flags = (0 if block else os.WNOHANG) | os.WUNTRACED | os.WCONTINUED
        while True:  # also orphans reparented to us when we are a container's PID 1
            try:
                pid, status = os.waitpid(-1, flags)
            except ChildProcessError:
                return exited
            except InterruptedError:
                continue
            if pid == 0:
                return exited
            if pid in self._pool_pids():
                if not (os.WIFSTOPPED(status) or os.WIFCONTINUED(status)):
                    self._drop_pooled(pid)  # never anyone's racer: nothing to report
                    if block:
                        return exited
                continue
            rid = self.children.get(pid)
            if os.WIFSTOPPED(status):
                self.say({"event": "stopped", "pid": pid, "id": rid, "sig": os.WSTOPSIG(status), **self._arrivals_of(pid)})
            elif os.WIFCONTINUED(status):
                self.say({"event": "continued", "pid": pid, "id": rid})
            else:
                self.children.pop(pid, None)
                self.report_arrivals.pop(pid, None)
                for members in self.groups.values():
                    members.discard(pid)
                self.groups = {g: m for g, m in self.groups.items() if m}
                code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
                sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
                self.say({"event": "exit", "pid": pid, "id": rid, "code": code, "signal": sig, "status": status})
                exited += 1
                if block:
                    return exited

    def spawn(self, racers: list[dict], pgid: int = 0) -> dict:
        if not racers:
            raise Refused("spawn: no racers given")
        if pgid and pgid not in self.groups:
            raise Refused(f"spawn: process group {pgid} is not one of this server's live groups")
        pids: dict[str, int] = {}
        fork_ms: list[float] = []
        try:
            for r in racers:
                why = self.fork_unsafe()
                if why:
                    raise Refused(f"refusing to fork: {why}")
                t0 = time.monotonic()
                pid = self._take_pooled(r, pgid) or self._fork_one(r, pgid)
                fork_ms.append(round((time.monotonic() - t0) * 1000, 3))
                if not pgid:
                    pgid = pid
                pids[r["id"]] = pid
                self.children[pid] = r["id"]
                self._note_arrivals(pid, r)
                self.groups.setdefault(pgid, set()).add(pid)
            workload = (r.get("spec") or {}).get("workload")
            if isinstance(workload, str):
                self.hint = workload
        except BaseException:
            # all or nothing: the caller gets no handle on a half-started group, so none may live
            for pid in pids.values():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            raise
        return {"pids": pids, "pgid": pgid, "fork_ms": fork_ms}

    def _note_arrivals(self, pid: int, racer: dict) -> None:
        """A racer whose barrier folder the caller cannot read (an SSH orchestrator) asks with
        ``"arrivals": true`` to get its arrival records with every ``stopped`` event."""
        if racer.get("arrivals"):
            self.report_arrivals[pid] = (racer["spec"]["barrier"]["dir"], racer["id"])

    def _arrivals_of(self, pid: int) -> dict:
        """The racer's arrival records (written before it stopped itself), for a ``stopped`` event."""
        where = self.report_arrivals.get(pid)
        if where is None:
            return {}
        from chaos.racer.barrier import read_arrivals

        return {"arrivals": read_arrivals(*where)}

    def _fork_one(self, racer: dict, pgid: int) -> int:
        spec, log = racer["spec"], racer.get("log") or os.devnull
        server_pid = self.pid
        pid = os.fork()
        if pid == 0:  # the racer; never returns
            _child_exit(lambda: self._become_racer(spec, log, pgid, server_pid))
        try:
            os.setpgid(pid, pgid or pid)  # also in the parent: no window where the child is outside it
        except OSError:
            pass  # the child has set it already, or is gone (its exit is reported)
        return pid

    def _become_racer(self, spec: RacerSpec, log: str, pgid: int, server_pid: int) -> int:
        os.setpgid(0, pgid)
        _prctl_pdeathsig()
        if os.getppid() != server_pid:
            return EXIT_ORPHANED  # the server died between fork and prctl: do not run unowned
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        devnull = os.open(os.devnull, os.O_RDONLY)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(devnull, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        for fd in {self.rfd, self.wfd, self._wake_r, self._wake_w, devnull, out, *(w for _, w in self.pool)} - {0, 1, 2}:
            try:
                os.close(fd)
            except OSError:
                pass
        # The preloaded objects stay frozen (gc.freeze in main): a collection in the racer never
        # walks them, so it neither copies their pages nor pauses longer than for the racer's own.
        from chaos.racer.main import serve

        code = serve(spec, forked=True)
        _finalize()
        return code

    # ------------------------------------------------------------------ the pool
    def _pool_pids(self) -> set[int]:
        return {pid for pid, _ in self.pool}

    def _drop_pooled(self, pid: int) -> None:
        for entry in [e for e in self.pool if e[0] == pid]:
            self.pool.remove(entry)
            self.allowed_fds.discard(entry[1])
            try:
                os.close(entry[1])
            except OSError:
                pass

    def refill(self) -> None:
        """Fork pooled children until the pool is full (none while forking would be unsafe)."""
        while len(self.pool) < self.pool_size and self.fork_unsafe() is None:
            self.pool.append(self._fork_pooled())
            self.allowed_fds.add(self.pool[-1][1])

    def _fork_pooled(self) -> tuple[int, int]:
        r, w = os.pipe()
        server_pid, hint = self.pid, self.hint
        pid = os.fork()
        if pid == 0:  # a pooled child; never returns
            _child_exit(lambda: self._pooled(r, server_pid, hint))
        os.close(r)
        return pid, w

    def _pooled(self, r: int, server_pid: int, hint: str | None) -> int:
        """A pooled child: get ready without touching anything of a trial, then wait for a spec."""
        _prctl_pdeathsig()
        if os.getppid() != server_pid:
            return EXIT_ORPHANED
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        for fd in _own_fds():  # the server's protocol and its other pooled children's pipes
            if fd > 2 and fd != r:
                try:
                    os.close(fd)
                except OSError:
                    pass
        if hint and self.adapter:
            try:  # the same throwaway in-memory build a held racer does (chaos.racer.main)
                from chaos.racer.main import PREWARMED
                from chaos.targets.base import load_racer_half

                load_racer_half(self.adapter).prewarm(only=hint)
                PREWARMED.add(hint)
            except Exception:
                pass  # a throwaway build; the real one reports its own failure
        buf = b""
        while not buf.endswith(b"\n"):
            try:
                chunk = os.read(r, 1 << 16)
            except InterruptedError:
                continue
            if not chunk:
                return 0  # the server let us go unused
            buf += chunk
        os.close(r)
        job = json.loads(buf)
        os.setpgid(0, job["pgid"])  # the server has moved us already; a no-op then
        out = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        from chaos.racer.main import serve

        code = serve(job["spec"], forked=True)
        _finalize()
        return code

    def _take_pooled(self, racer: dict, pgid: int) -> int | None:
        """Hand ``racer`` to a pooled child (None: the pool is empty or its children are gone)."""
        self.reap()  # a pooled child that died is noticed before it is handed a spec
        while self.pool:
            pid, w = self.pool.pop(0)
            self.allowed_fds.discard(w)
            try:
                os.setpgid(pid, pgid or pid)
                data = json.dumps({"spec": racer["spec"], "log": racer.get("log") or os.devnull, "pgid": pgid or pid}) + "\n"
                view = memoryview(data.encode())
                while view:
                    view = view[os.write(w, view) :]
                return pid
            except OSError:
                try:
                    os.kill(pid, signal.SIGKILL)  # unusable; reaped (silently) as it exits
                except ProcessLookupError:
                    pass
                self._reap_lost(pid)
            finally:
                os.close(w)
        return None

    def _reap_lost(self, pid: int) -> None:
        try:
            os.waitpid(pid, 0)
        except (ChildProcessError, InterruptedError):
            pass

    def signal_child(self, pid: int, sig: int) -> None:
        if pid not in self.children:
            raise Refused(f"signal: pid {pid} is not a live child of this server")
        os.kill(pid, sig)

    def signal_group(self, pgid: int, sig: int) -> None:
        if pgid not in self.groups:
            raise Refused(f"killpg: process group {pgid} has no live child of this server")
        os.killpg(pgid, sig)

    def kill_all(self) -> None:
        for pid, w in self.pool:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.close(w)
            self._reap_lost(pid)
        self.pool.clear()
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while self.children:
            self.reap(block=True)

    def status(self) -> dict:
        fds = {fd: _fd_target(fd) for fd in _own_fds()}
        rss_kb = None
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss_kb = int(line.split()[1])
        except OSError:
            pass
        return {
            "pid": self.pid,
            "ppid": os.getppid(),
            "threads": threading.active_count(),
            "fds": fds,
            "children": {str(p): r for p, r in self.children.items()},
            "groups": sorted(self.groups),
            "pool": [pid for pid, _ in self.pool],
            "preloaded": self.preloaded,
            "import_s": self.import_s,
            "rss_kb": rss_kb,
            "python": sys.version.split()[0],
            "fork_unsafe": self.fork_unsafe(),
        }

    # ------------------------------------------------------------------ loop
    def handle(self, req: dict) -> bool:
        """Carry out one request; False when the server should stop."""
        op = req.get("op")
        reply: dict = {"event": "reply", "req": req.get("req"), "ok": True}
        keep_going = True
        try:
            if op == "spawn":
                reply.update(self.spawn(list(req.get("racers") or []), int(req.get("pgid") or 0)))
            elif op == "signal":
                self.signal_child(int(req["pid"]), int(req["sig"]))
            elif op == "killpg":
                self.signal_group(int(req["pgid"]), int(req["sig"]))
            elif op == "status":
                reply.update(self.status())
            elif op == "ping":
                pass
            elif op == "shutdown":
                self.kill_all()
                keep_going = False
            else:
                raise Refused(f"unknown op {op!r}; known: spawn, signal, killpg, status, ping, shutdown")
        except Refused as exc:
            reply.update(ok=False, error=str(exc))
        except (KeyError, TypeError, ValueError, OSError) as exc:
            reply.update(ok=False, error=f"{op}: {type(exc).__name__}: {exc}")
        self.say(reply)
        return keep_going

    def serve(self) -> int:
        try:
            self.refill()
            while True:
                try:
                    ready, _, _ = select.select([self.rfd, self._wake_r], [], [])
                except InterruptedError:
                    continue
                if self._wake_r in ready:
                    try:
                        while os.read(self._wake_r, 512):
                            pass
                    except BlockingIOError:
                        pass
                    if self.reap():
                        self.refill()
                if self.rfd in ready:
                    try:
                        chunk = os.read(self.rfd, 1 << 16)
                    except InterruptedError:
                        continue
                    if not chunk:
                        return 0  # end of input: our owner is gone
                    self._buf += chunk
                    while b"\n" in self._buf:
                        line, self._buf = self._buf.split(b"\n", 1)
                        if not line.strip():
                            continue
                        try:
                            req = json.loads(line)
                            if not isinstance(req, dict):
                                raise ValueError("a request is a JSON object")
                        except ValueError as exc:
                            self.say({"event": "reply", "req": None, "ok": False, "error": f"bad request line: {exc}"})
                            continue
                        if not self.handle(req):
                            return 0
                    if self.reap():
                        self.refill()
        except BrokenPipeError:
            return 0  # nobody listens any more
        finally:
            self.kill_all()


def _finalize() -> None:
    """What interpreter shutdown would do in a cold racer: join threads, run atexit, flush."""
    try:
        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
    except BaseException:
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def _parse(argv: list[str]) -> dict:
    opts: dict = {"target": None, "module": None, "parent_pid": None, "socket": None, "label": None, "pool": str(DEFAULT_POOL)}
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("--target", "--module", "--parent-pid", "--socket", "--label", "--pool") and args:
            opts[a[2:].replace("-", "_")] = args.pop(0)
        else:
            raise SystemExit(
                f"usage: python -m chaos.racer.forkserver --target FRAMEWORK [--module ADAPTER] [--parent-pid PID] [--socket PATH] (bad argument {a!r})"
            )
    if not opts["target"]:
        raise SystemExit("usage: python -m chaos.racer.forkserver --target FRAMEWORK [--module ADAPTER] [--parent-pid PID] [--socket PATH]")
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = _parse(sys.argv[1:] if argv is None else argv)
    first_parent = int(opts["parent_pid"]) if opts["parent_pid"] else os.getppid()
    _prctl_pdeathsig()
    if os.getppid() != first_parent:
        return EXIT_ORPHANED  # the owner died before we could tie our life to it
    out_fd = os.dup(1)  # events go here; fd 1 then points at stderr so stray prints cannot corrupt them
    os.dup2(2, 1)
    t0 = time.monotonic()
    try:
        adapter = adapter_of(opts["target"], opts["module"])
        loaded = preload(opts["target"], adapter)
    except BaseException as exc:
        msg = json.dumps({"event": "error", "message": f"preloading {opts['target']} failed: {type(exc).__name__}: {exc}"})
        os.write(out_fd, (msg + "\n").encode())
        return EXIT_PRELOAD_FAILED
    gc.collect()
    gc.freeze()  # what the preload made stays out of the children's collections: fewer copied pages
    import_s = time.monotonic() - t0
    if opts["socket"]:
        lsock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.unlink(opts["socket"])
        except FileNotFoundError:
            pass
        lsock.bind(opts["socket"])
        lsock.listen(1)
        conn, _ = lsock.accept()
        lsock.close()
        os.unlink(opts["socket"])
        rfd = wfd = conn.detach()
        os.set_inheritable(rfd, False)
        os.close(out_fd)
        extra: tuple[int, ...] = ()
    else:
        rfd, wfd = 0, out_fd
        extra = ()
    server = Server(rfd, wfd, extra, pool=int(opts["pool"]))
    server.preloaded, server.import_s, server.target = loaded, import_s, opts["target"]
    server.adapter = adapter
    why = server.fork_unsafe()
    if why:
        server.say({"event": "error", "message": f"not fork-safe after preloading {opts['target']}: {why}"})
        return EXIT_PRELOAD_FAILED
    server.say({"event": "ready", "pid": server.pid, "preloaded": loaded, "import_s": round(import_s, 4), "python": sys.version.split()[0]})
    return server.serve()


if __name__ == "__main__":
    sys.exit(main())
