"""The run registry: which runs are alive, and reaping everything a dead run left behind.

Why: an orchestrator that is SIGKILLed (or a machine that reboots) runs no cleanup code, so the
*next* ``chaos`` command must be able to find what the dead run created and remove it.

What it promises:

* While a run executes, ``<state>/active/<run_id>.json`` exists and the orchestrator holds an
  exclusive ``flock`` on it (``<state>`` is ``$CHAOS_STATE_DIR``, default ``~/.cache/chaos``).
  The kernel drops the lock the instant the orchestrator dies, however it dies, so "lock free"
  means "orchestrator dead" without trusting pids (which are reused).
* Every local racer of the run carries ``CHAOS_RUN_ID=<run_id>`` and
  ``CHAOS_RUN_REGISTRY=<that file>`` in its environment, so a stray racer is found through
  ``/proc/*/environ`` even when its registry file is gone. Docker racers carry the label
  ``chaos.run=<run_id>``.
* ``reap_stale()`` (run by ``chaos clean`` and at the start of ``chaos run``) takes every registry
  entry whose lock is free, kills its racers (and any racer whose registry is gone or unlocked),
  removes its containers, its Postgres run schema (with ``CHAOS_PG_DSN``) and its work folder, marks
  its run.json as interrupted, removes the entry, and returns a list of what it removed. A run
  whose orchestrator is alive is never touched.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import shutil
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from chaos.racer.procfs import proc_state

ENV_RUN_ID = "CHAOS_RUN_ID"
ENV_REGISTRY = "CHAOS_RUN_REGISTRY"
DOCKER_LABEL = "chaos.run"


def state_dir() -> Path:
    return Path(os.environ.get("CHAOS_STATE_DIR", "~/.cache/chaos")).expanduser()


def active_dir() -> Path:
    return state_dir() / "active"


def entry_path(run_id: str) -> Path:
    return active_dir() / f"{run_id}.json"


class ActiveRun:
    """The live registration of one run: the entry file, locked for the orchestrator's lifetime."""

    def __init__(self, run_id: str, run_dir: Path, work_dir: Path, *, keep_work: bool = False):
        self.run_id = run_id
        self.path = entry_path(run_id)
        self.info = {
            "run_id": run_id,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "run_dir": str(Path(run_dir).resolve()),
            "work_dir": str(Path(work_dir).resolve()),
            "keep_work": keep_work,
            "started": _dt.datetime.now(_dt.UTC).isoformat(),
        }
        self._fd = -1

    def __enter__(self) -> ActiveRun:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            from chaos.racer.errors import ChaosError

            raise ChaosError(
                f"run {self.run_id} is already being executed by another chaos process",
                hint=f"wait for it, or stop it; its registry entry is {self.path}",
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(self.info, indent=2).encode())
        os.fsync(fd)
        self._fd = fd
        return self

    def env(self) -> dict[str, str]:
        """The labels every racer of this run carries in its environment."""
        return {ENV_RUN_ID: self.run_id, ENV_REGISTRY: str(self.path.resolve())}

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            os.close(self._fd)
            self._fd = -1


def label_launcher(launcher: object, labels: dict[str, str]) -> None:
    """Give a launcher's racers the run's labels (a local launcher passes ``env`` to every racer, a
    warm one to its fork server, whose forked racers inherit it; remote and container launchers
    label by run id themselves)."""
    if getattr(launcher, "name", None) in ("local", "warm") and hasattr(launcher, "env"):
        env = launcher.env
        env = dict(os.environ) if env is None else env
        env.update(labels)
        launcher.env = env
    if hasattr(launcher, "labels") and isinstance(launcher.labels, dict):
        launcher.labels.update({DOCKER_LABEL: labels[ENV_RUN_ID]})


# ------------------------------------------------------------------------------ finding strays


def _environ(pid: int) -> dict[str, str] | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    out = {}
    for item in raw.split(b"\0"):
        k, sep, v = item.partition(b"=")
        if sep and k in (ENV_RUN_ID.encode(), ENV_REGISTRY.encode()):
            out[k.decode()] = v.decode(errors="replace")
    return out


def racer_processes(run_id: str | None = None) -> list[tuple[int, str, str]]:
    """(pid, run id, registry path) of every process on this machine labelled as a chaos racer."""
    me = os.getpid()
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        env = _environ(int(name))
        if not env or ENV_RUN_ID not in env:
            continue
        if run_id is not None and env[ENV_RUN_ID] != run_id:
            continue
        out.append((int(name), env[ENV_RUN_ID], env.get(ENV_REGISTRY, "")))
    return out


def _is_locked(path: str | Path) -> bool:
    """True while some live process holds the registry entry's lock."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def run_is_alive(run_id: str) -> bool:
    return _is_locked(entry_path(run_id))


def _kill_and_wait(pids: list[int], timeout: float = 10.0) -> list[int]:
    """SIGKILL ``pids``; returns those observed gone within ``timeout``."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    gone: list[int] = []
    pending = list(pids)
    while pending and time.monotonic() < deadline:
        for pid in list(pending):
            st = proc_state(pid)
            if st is None or st in ("Z", "X"):
                # a zombie is dead; its parent (ours or init) collects it
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
                pending.remove(pid)
                gone.append(pid)
        if pending:
            time.sleep(0.005)
    return gone


def _docker_reap(run_id: str) -> list[str]:
    """Remove containers labelled with the run (nothing if the Docker SDK or engine is absent)."""
    try:
        import docker
    except ImportError:
        return []
    try:
        client = docker.from_env(timeout=5)
        containers = client.containers.list(all=True, sparse=True, filters={"label": f"{DOCKER_LABEL}={run_id}"})
    except Exception:  # engine not running / no permission: nothing we can remove
        return []
    removed = []
    for ct in containers:
        with contextlib.suppress(Exception):
            ct.remove(force=True)
            removed.append(ct.short_id)
    return removed


def _pg_reap(run_id: str) -> list[str]:
    """Drop the run's Postgres schema (``chaos_run_<run id>``) when ``CHAOS_PG_DSN`` names the
    server; nothing otherwise."""
    from chaos.running import pgstore

    dsn = os.environ.get("CHAOS_PG_DSN")
    if not dsn:
        return []
    try:
        name = pgstore.schema_name(run_id)
        if name not in pgstore.list_run_schemas(dsn):
            return []
        pgstore.drop_run_schema(dsn, run_id)
        return [name]
    except Exception:  # server down: the schema stays for the next clean
        return []


# ------------------------------------------------------------------------------------ reaping


@dataclass
class Reaped:
    """What ``reap_stale`` removed for one dead run (or for racers whose run is unknown)."""

    run_id: str
    run_dir: str | None = None
    racers: list[int] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)
    schemas: list[str] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)

    def describe(self) -> str:
        parts = []
        if self.racers:
            parts.append(f"{len(self.racers)} racer process(es) {self.racers}")
        if self.containers:
            parts.append(f"{len(self.containers)} container(s)")
        if self.schemas:
            parts.append("Postgres schema(s) " + ", ".join(self.schemas))
        if self.folders:
            parts.append("folder(s) " + ", ".join(self.folders))
        what = "; ".join(parts) or "its registry entry"
        return f"run {self.run_id}: removed {what}"


def _mark_interrupted(run_dir: str) -> None:
    from chaos.running.runfolder import mark_reaped

    mark_reaped(run_dir)


def reap_run(run_id: str, info: dict | None = None) -> Reaped:
    """Remove what the (dead) run ``run_id`` left: racers, containers, its work folder."""
    info = info or {}
    rep = Reaped(run_id=run_id, run_dir=info.get("run_dir"))
    pids = [pid for pid, _, _ in racer_processes(run_id)]
    rep.racers = _kill_and_wait(pids)
    rep.containers = _docker_reap(run_id)
    rep.schemas = _pg_reap(run_id)
    work = info.get("work_dir")
    if work and not info.get("keep_work") and Path(work).exists():
        shutil.rmtree(work, ignore_errors=True)
        rep.folders.append(work)
    if info.get("run_dir"):
        _mark_interrupted(info["run_dir"])
    return rep


def reap_stale() -> list[Reaped]:
    """Reap every run whose orchestrator is dead, and every racer whose run is not alive."""
    out: list[Reaped] = []
    d = active_dir()
    entries = sorted(d.glob("*.json")) if d.exists() else []
    for path in entries:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # alive: its orchestrator holds the lock
            try:
                info = json.loads(Path(path).read_text() or "{}")
            except ValueError:
                info = {}
            run_id = info.get("run_id") or path.stem
            out.append(reap_run(run_id, info))
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        finally:
            os.close(fd)
    # racers whose registry entry is gone or unlocked (e.g. the entry was deleted by hand)
    strays: dict[str, list[int]] = {}
    for pid, run_id, reg in racer_processes():
        if reg and not _is_locked(reg):
            strays.setdefault(run_id, []).append(pid)
    for run_id, pids in strays.items():
        gone = _kill_and_wait(pids)
        prev = next((r for r in out if r.run_id == run_id), None)
        if prev is not None:
            prev.racers.extend(gone)
        else:
            out.append(Reaped(run_id=run_id, racers=gone, containers=_docker_reap(run_id)))
    return out
