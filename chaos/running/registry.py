"""The run registry: which runs are alive, and reaping everything a dead run left behind.

Why: an orchestrator that is SIGKILLed (or a machine that reboots) runs no cleanup code, so the
*next* ``chaos`` command must be able to find what the dead run created and remove it.

What it promises:

* While a run executes, ``<state>/active/<run_id>.json`` exists and the orchestrator holds an
  exclusive ``flock`` on it (``<state>`` is ``$CHAOS_STATE_DIR``, default ``~/.cache/chaos``).
  The kernel drops the lock the instant the orchestrator dies, however it dies, so "lock free"
  means "orchestrator dead" without trusting pids (which are reused).
* Every local racer of the run carries ``CHAOS_RUN_ID=<run_id>``, ``CHAOS_RUN_REGISTRY=<that
  file>`` and ``CHAOS_RUN_LOCK=<device:inode of that file>`` in its environment, so a stray racer
  is found through ``/proc/*/environ`` even when its registry file is gone. Docker racers carry
  the label ``chaos.run=<run_id>``.
* Liveness is the lock itself, never the file's presence: a registry file deleted by a tmp or
  cache cleaner is still locked by the live orchestrator's open descriptor, and the kernel lists
  that lock (``/proc/locks``, by device and inode). A racer is a stray only when no process holds
  the lock of its run's registry entry.
* ``reap_stale()`` (run by ``chaos clean`` and at the start of ``chaos run``) takes every registry
  entry whose lock is free, kills its racers (and any racer whose registry is gone or unlocked),
  removes its containers, its Postgres run schema (with ``CHAOS_PG_DSN``), what its racers made on
  shared servers (its entry's ``racer_stores``, removed by the framework's ``ReapsStore``), its lazy filesystem mount
  (``fault: power_loss | torn``: found by the run id in its fsname) and its work folder, marks
  its run.json as interrupted, removes the entry, and returns a list of what it removed. A run
  whose orchestrator is alive is never touched.
* A run that made a Postgres schema says so in its entry (``pg_schema``). Its entry stays, with
  the reason (``pending``), until the schema is really dropped: without a DSN, or with the server
  down, nothing is forgotten; ``chaos clean --pg DSN`` drops it later and only then removes the entry.
* The run *folder*'s lock (``chaos.running.folderlock``) outranks the entry: a run whose folder is
  executed by a live process (a resume from another state folder, user or shell) is never reaped,
  whatever its entry says: its racers, schema, mount and work folder are that process's now.
* A run that keeps its Postgres schema, or what its racers made on shared servers (ADK's MariaDB
  database: ``ReapsStore.store_names``), on purpose (``--keep-work``) leaves a *kept* record,
  ``<state>/kept/<run_id>.json``: the start-of-run reaper leaves it alone, ``chaos clean`` names
  it, and ``chaos clean --kept`` (or ``--pg DSN``) drops the schema and stores, then the record
  (``reap_kept``).
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

from chaos.launchers import LabelsRacers, PassesEnv
from chaos.racer.procfs import proc_state
from chaos.running.folderlock import locked_exclusively

ENV_RUN_ID = "CHAOS_RUN_ID"
ENV_REGISTRY = "CHAOS_RUN_REGISTRY"
ENV_LOCK = "CHAOS_RUN_LOCK"
ENV_RUN_DIR = "CHAOS_RUN_DIR"  # the run folder, whose lock (chaos.running.folderlock) says the run is alive
DOCKER_LABEL = "chaos.run"


def state_dir() -> Path:
    return Path(os.environ.get("CHAOS_STATE_DIR", "~/.cache/chaos")).expanduser()


def active_dir() -> Path:
    return state_dir() / "active"


def entry_path(run_id: str) -> Path:
    return active_dir() / f"{run_id}.json"


def kept_dir() -> Path:
    """Records of what finished runs kept on purpose (``--keep-work``): their Postgres schemas."""
    return state_dir() / "kept"


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
        self.lock_id = lock_id_of(os.fstat(fd))
        return self

    def note(self, **info: object) -> None:
        """Add facts to the entry (e.g. ``pg_schema``: what a reaper must remove), rewritten under the lock."""
        self.info.update(info)
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, json.dumps(self.info, indent=2).encode(), 0)
        os.fsync(self._fd)

    def env(self) -> dict[str, str]:
        """The labels every racer of this run carries in its environment."""
        return {
            ENV_RUN_ID: self.run_id,
            ENV_REGISTRY: str(self.path.resolve()),
            ENV_LOCK: self.lock_id,
            ENV_RUN_DIR: str(self.info["run_dir"]),
        }

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            racer_stores = self.info.get("racer_stores")
            stores = _store_names(self.run_id, racer_stores) if self.info.get("keep_work") and isinstance(racer_stores, list) else []
            if self.info.get("keep_work") and (self.info.get("pg_schema") or stores):
                # the schema, the racers' stores outlive the run on purpose: written down before the entry goes
                _record_kept({**self.info, "kept_stores": stores})
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            os.close(self._fd)
            self._fd = -1


def _store_names(run_id: str, stores: list) -> list[str]:
    """What the run's racers made on shared servers (``racer_stores``: framework, racers' Python,
    backends), as each framework that makes such a store names it (``ReapsStore.store_names``)."""
    from chaos.targets import ReapsStore, hooks_of

    names: list[str] = []
    for framework, _python, backends in stores:
        with contextlib.suppress(Exception):  # a framework gone from this chaos: nothing named, nothing lost (reap asks again)
            hooks = hooks_of(framework)
            if isinstance(hooks, ReapsStore):
                names += hooks.store_names(run_id, list(backends))
    return names


def _record_kept(info: dict) -> None:
    """Write ``<state>/kept/<run_id>.json``: a schema, or stores on shared servers (``kept_stores``),
    kept by ``--keep-work`` that no entry records any more."""
    with contextlib.suppress(OSError):  # a full disk: the schema is still found by its name, by hand
        kept_dir().mkdir(parents=True, exist_ok=True)
        path = kept_dir() / f"{info['run_id']}.json"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps({**info, "kept": _dt.datetime.now(_dt.UTC).isoformat()}, indent=2))
        os.replace(tmp, path)


def kept_runs() -> list[dict]:
    """The kept records (``--keep-work`` schemas and racers' stores not dropped yet), oldest name first."""
    d = kept_dir()
    out = []
    for path in sorted(d.glob("*.json")) if d.exists() else []:
        try:
            info = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and (info.get("pg_schema") or info.get("kept_stores")):
            out.append({**info, "_path": str(path)})
    return out


def describe_kept(info: dict) -> str:
    """One line naming what a kept record keeps and how ``chaos clean`` drops it."""
    what = ([f"Postgres schema {info['pg_schema']}"] if info.get("pg_schema") else []) + list(info.get("kept_stores") or [])
    return f"kept by --keep-work: {', '.join(what)} of run {info.get('run_id')} (`chaos clean --kept` drops it)"


def reap_kept(dsn: str | None) -> list[Reaped]:
    """Drop what ``--keep-work`` runs kept: their Postgres schemas (server ``dsn``) and their racers'
    stores on shared servers (each framework's ``ReapsStore``), then their records. What cannot be
    dropped keeps its record, with the reason."""
    out = []
    for info in kept_runs():
        run_id = info.get("run_id") or Path(info["_path"]).stem
        if info.get("run_dir") and _folder_live(info["run_dir"]):
            continue  # resumed and executing again: its schema is in use
        rep = Reaped(run_id=run_id, run_dir=info.get("run_dir"))
        where, asked = info.get("pg_server"), server_of(dsn)
        if not info.get("pg_schema"):
            pass
        elif where and asked != where:  # another server: "not there" would forget a schema that is
            rep.pending = f"Postgres schema {info['pg_schema']} is kept on {where}, not {asked}: give that server's DSN to --pg"
        else:
            rep.schemas, rep.pending = _pg_reap(run_id, dsn, expected=True, schema=info["pg_schema"])
        if info.get("kept_stores"):
            rep.stores, why = _stores_reap(run_id, info.get("racer_stores") or [])
            rep.pending = rep.pending or why
        if not rep.pending:
            with contextlib.suppress(FileNotFoundError):
                Path(info["_path"]).unlink()
        out.append(rep)
    return out


def server_of(dsn: str | None) -> str:
    """``host:port/database`` of a DSN (no user, no password): which server a kept schema is on."""
    if not dsn:
        return ""
    try:
        from psycopg.conninfo import conninfo_to_dict

        d = conninfo_to_dict(dsn)
    except Exception:  # not a DSN psycopg reads: compared as nothing known
        return ""
    return f"{d.get('host') or 'localhost'}:{d.get('port') or 5432}/{d.get('dbname') or d.get('user') or ''}"


def _folder_live(run_dir: str | Path) -> bool:
    """Is the run folder executed by a live process other than this one (its folder lock)?"""
    from chaos.running.folderlock import held_elsewhere

    try:
        return held_elsewhere(run_dir)
    except OSError:
        return True  # cannot tell: alive is the safe answer


def label_launcher(launcher: object, labels: dict[str, str]) -> None:
    """Give a launcher's racers the run's labels (environment entries), where racers take their
    environment from here: a local launcher passes ``env`` to every racer, a warm one to its fork
    server, whose forked racers inherit it; remote and container launchers label by run id themselves."""
    if isinstance(launcher, PassesEnv):
        env = launcher.env
        env = dict(os.environ) if env is None else env
        env.update(labels)
        launcher.env = env
    if isinstance(launcher, LabelsRacers) and isinstance(launcher.labels, dict):
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
        if sep and k in (ENV_RUN_ID.encode(), ENV_REGISTRY.encode(), ENV_LOCK.encode(), ENV_RUN_DIR.encode()):
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
    return locked_exclusively(fd)


def lock_id_of(st: os.stat_result) -> str:
    """The id ``/proc/locks`` gives a file's locks: ``major:minor:inode`` (device numbers in hex)."""
    return f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"


def _lock_listed(lock_id: str) -> bool:
    """True while the kernel lists an flock on the file ``lock_id`` (whether or not its name still exists)."""
    try:
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except OSError:
        return True  # cannot tell: alive is the safe answer
    for line in lines:
        parts = line.split()
        if "->" in parts:  # a waiter, not a holder
            continue
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == lock_id:
            return True
    return False


def registry_alive(path: str | Path, lock_id: str | None) -> bool:
    """Is the run whose registry entry is ``path`` (lock ``lock_id``, if known) alive? By its lock:
    the file's lock if the file is still that one, else the kernel's list of locks by inode."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and (lock_id is None or lock_id_of(st) == lock_id):
        return _is_locked(path)
    return _lock_listed(lock_id) if lock_id else False


DEATH_GRACE_S = 5.0  # a SIGKILLed orchestrator's lock can outlast it while the kernel finishes its exit


def run_is_alive(run_id: str) -> bool:
    """True while the run's orchestrator holds its registry entry's lock. An entry locked whose
    orchestrator (the pid it wrote, on this host) is already dead is waited for, at most
    ``DEATH_GRACE_S``: under load the kernel drops a SIGKILLed process's locks only once its exit
    is done (seen over 0.5 s), and a resume must not take that moment for a live run."""
    path = entry_path(run_id)
    if not _is_locked(path):
        return False
    try:
        info = json.loads(Path(path).read_text() or "{}")
    except (OSError, ValueError):
        return True
    pid = info.get("pid") if isinstance(info, dict) else None
    if not isinstance(pid, int) or info.get("host") != socket.gethostname():
        return True
    if proc_state(pid) not in (None, "Z", "X"):
        return True  # its orchestrator runs
    deadline = time.monotonic() + DEATH_GRACE_S
    while time.monotonic() < deadline:
        if not _is_locked(path):
            return False
        time.sleep(0.01)  # the kernel's release of a dead process's lock sends nothing: look again
    return True


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


def kill_run_racers(run_id: str) -> list[int]:
    """SIGKILL every racer on this machine labelled with ``run_id``; returns those seen gone."""
    return _kill_and_wait([pid for pid, _, _ in racer_processes(run_id)])


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


def _pg_reap(run_id: str, dsn: str | None = None, *, expected: bool = False, schema: str | None = None) -> tuple[list[str], str | None]:
    """Drop the run's Postgres schema on the server ``dsn`` (default ``CHAOS_PG_DSN``): the name the
    run recorded (``schema``, its entry's ``pg_schema``), else ``schema_name(run_id)``; never a name
    matched by prefix. Returns (schemas dropped, why it could not be dropped): the reason is None
    when the schema is gone; a run that made a schema (``expected``) without a DSN to reach it
    keeps it, with that reason."""
    from chaos.running import pgstore

    dsn = dsn or os.environ.get("CHAOS_PG_DSN")
    name = schema or pgstore.schema_name(run_id)
    if not dsn:
        return [], (f"Postgres schema {name} not dropped: no DSN (run `chaos clean --pg DSN`)" if expected else None)
    try:
        return pgstore.drop_schema(dsn, name), None
    except Exception as exc:  # server down: the schema stays, and so does the entry that names it
        from chaos.racer.redact import redact_text

        return [], f"Postgres schema {name} not dropped: {type(exc).__name__}: {redact_text(str(exc))[:200]}"


def _stores_reap(run_id: str, stores: list) -> tuple[list[str], str | None]:
    """What the run's racers made on shared servers (its entry's ``racer_stores``: framework, racers'
    Python, backends), removed by each framework that makes such a store (``ReapsStore``); returns
    (names removed, why one could not be)."""
    from chaos.targets import ReapsStore, hooks_of

    removed: list[str] = []
    for framework, python, backends in stores:
        try:
            hooks = hooks_of(framework)
            if isinstance(hooks, ReapsStore):
                removed += hooks.reap_store(run_id, python, list(backends))
        except Exception as exc:  # server down, Python gone: the entry stays, with the reason
            from chaos.racer.redact import redact_text

            return removed, f"{framework} store of the run not removed: {type(exc).__name__}: {redact_text(str(exc))[:200]}"
    return removed, None


# ------------------------------------------------------------------------------------ reaping


@dataclass
class Reaped:
    """What ``reap_stale`` removed for one dead run (or for racers whose run is unknown)."""

    run_id: str
    run_dir: str | None = None
    racers: list[int] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)
    schemas: list[str] = field(default_factory=list)
    stores: list[str] = field(default_factory=list)  # what racers made on shared servers (a framework's ``ReapsStore``)
    folders: list[str] = field(default_factory=list)
    mounts: list[str] = field(default_factory=list)  # lazy filesystems (fault: power_loss | torn) unmounted
    pending: str | None = None  # what could not be removed yet (its entry stays until it is)
    note: str | None = None  # why nothing was removed (its folder is live in another process)

    def describe(self) -> str:
        parts = []
        if self.racers:
            parts.append(f"{len(self.racers)} racer process(es) {self.racers}")
        if self.containers:
            parts.append(f"{len(self.containers)} container(s)")
        if self.schemas:
            parts.append("Postgres schema(s) " + ", ".join(self.schemas))
        if self.stores:
            parts.append("framework store(s) " + ", ".join(self.stores))
        if self.mounts:
            parts.append("lazy filesystem mount(s) " + ", ".join(self.mounts))
        if self.folders:
            parts.append("folder(s) " + ", ".join(self.folders))
        what = "; ".join(parts) or "its registry entry"
        if self.note:
            return f"run {self.run_id}: removed its stale registry entry; {self.note}"
        if self.pending:
            return f"run {self.run_id}: removed {'; '.join(parts) or 'nothing'}; kept its registry entry: {self.pending}"
        return f"run {self.run_id}: removed {what}"


def _mark_interrupted(run_dir: str) -> None:
    from chaos.running.runfolder import mark_reaped

    mark_reaped(run_dir)


def _lazyfs_reap(run_id: str | None = None) -> list[str]:
    """Unmount the lazy filesystems of ``run_id`` (None: of every run not alive) and kill their processes."""
    from chaos.lazyfs import unmount_stale

    if run_id is None:  # by their processes: a run of another state folder is never touched
        return unmount_stale()
    return unmount_stale(alive=lambda rid: rid != run_id)


def reap_run(run_id: str, info: dict | None = None, dsn: str | None = None) -> Reaped:
    """Remove what the (dead) run ``run_id`` left: racers, containers, its Postgres schema, its work
    folder. What could not be removed is ``pending`` (the caller then keeps the entry)."""
    info = info or {}
    rep = Reaped(run_id=run_id, run_dir=info.get("run_dir"))
    if info.get("run_dir") and _folder_live(info["run_dir"]):
        # another live process executes the folder (a resume from another state folder): its
        # racers, schema, mount and work folder carry this run id and are in use; only the stale entry goes
        rep.note = f"its folder {info['run_dir']} is executed by a live chaos process: left alone"
        return rep
    pids = [pid for pid, _, _ in racer_processes(run_id)]
    rep.racers = _kill_and_wait(pids)
    rep.containers = _docker_reap(run_id)
    rep.schemas, rep.pending = _pg_reap(run_id, dsn, expected=bool(info.get("pg_schema")), schema=info.get("pg_schema"))
    rep.stores, why = _stores_reap(run_id, info.get("racer_stores") or [])
    rep.pending = rep.pending or why
    rep.mounts = _lazyfs_reap(run_id)  # before the work folder: a dead mount cannot be removed
    work = info.get("work_dir")
    if work and not info.get("keep_work") and Path(work).exists():
        shutil.rmtree(work, ignore_errors=True)
        rep.folders.append(work)
    if info.get("run_dir"):
        _mark_interrupted(info["run_dir"])
    return rep


def reap_stale(dsn: str | None = None) -> list[Reaped]:
    """Reap every run whose orchestrator is dead, and every racer whose run is not alive (by its
    lock, never by its file's presence). ``dsn``: the Postgres server of dead runs' schemas
    (default ``CHAOS_PG_DSN``)."""
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
            rep = reap_run(run_id, info, dsn)
            out.append(rep)
            if rep.pending:  # the entry names what is left: it stays until that is removed too
                info["pending"] = rep.pending
                os.ftruncate(fd, 0)
                os.pwrite(fd, json.dumps(info, indent=2).encode(), 0)
                os.fsync(fd)
                continue
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        finally:
            os.close(fd)
    # racers whose registry entry is gone or unlocked (e.g. the entry was deleted by hand)
    strays: dict[str, list[int]] = {}
    for pid, run_id, reg in racer_processes():
        labels = _environ(pid) or {}
        if labels.get(ENV_RUN_DIR) and _folder_live(labels[ENV_RUN_DIR]):
            continue  # its run folder is executed by a live process: never a stray
        if reg and not registry_alive(reg, labels.get(ENV_LOCK)):
            strays.setdefault(run_id, []).append(pid)
    for run_id, pids in strays.items():
        gone = _kill_and_wait(pids)
        prev = next((r for r in out if r.run_id == run_id), None)
        if prev is not None:
            prev.racers.extend(gone)
        else:
            out.append(Reaped(run_id=run_id, racers=gone, containers=_docker_reap(run_id)))
    # lazy filesystems whose run is not alive (its entry deleted by hand, or a mount left by a crash)
    for mount in _lazyfs_reap():
        out.append(Reaped(run_id="?", mounts=[mount]))
    return out
