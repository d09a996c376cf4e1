"""Queue mode for shards: every shard pulls the next cell from a shared folder until none is left.

Why: ``--shard I/N`` (``chaos.running.shard``) splits the cells by estimated cost before anything
runs, so one wrong estimate makes one shard the night's wall time. In queue mode (``chaos nightly
--shard I/N --shard-queue DIR``, as Knapsack Pro's queue mode and pytest-xdist's worksteal) a shard
that finishes early takes more cells, so the shards end within about one cell of each other.

What it promises:

* The queue (``DIR/queue.json``, changed only under an ``flock`` of ``DIR/queue.lock``) is seeded
  once, by the first shard to arrive, from the suite's full deterministic cell list: the suite's
  entries in order, each entry's cells longest first by the costs the static plan uses. Every
  later shard checks it is of the same cells (a digest of the suite's cells and scenarios) and of
  the same night; one of another suite or night is refused (``ChaosError``, exit 3, naming the
  folder), as is a folder the shard cannot write.
* A claim is atomic (under the lock) and names the claimer: shard, host, pid and worker id. Cells
  keep their index and so their seeds (``chaos.scenario.seeds``) whichever shard runs them.
* A finished cell is first appended (fsynced) to the shard's own ``queued.jsonl`` in its night
  folder, then marked done in the queue. ``chaos merge`` reads the shards' ``queued.jsonl``
  (``credits``): each cell is credited to one shard (the lowest, if a shard died between the two
  writes and another ran the cell again: both ran it whole, with the same seeds).

When a shard counts as dead (the rule; no clock is involved): every shard holds an exclusive
``flock`` on its own ``DIR/workers/<worker>.alive`` from before its first claim until it exits.
The kernel drops that lock the moment the process is gone, however it died (SIGKILL, OOM). A claim
is re-queued only when another shard, holding the queue lock, takes that worker's lock itself,
so a live shard's cell is never run twice, whatever the timing, and a reused pid does not matter.
Across hosts the folder must be on a filesystem with working locks (NFSv4): a dead host's locks are
freed by the server when the host's lease expires (about 90 s), which is the lease of this rule.
Hosts that share no folder give a Postgres DSN instead (``chaos.running.pgqueue``: the queue is a
row, liveness a session advisory lock; the same rule, the connection's end instead of the process's).
A shard with nothing left to claim waits (blocking on a claimer's lock, not polling) while other
live shards hold claims, so a cell a shard dies holding is always finished by a survivor.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Literal, Protocol

from pydantic import ValidationError

from chaos.racer.errors import ChaosError
from chaos.records import Record
from chaos.running.runfolder import write_atomic
from chaos.running.shard import ShardPlan, digest
from chaos.scenario.model import Cell

QUEUE = "queue.json"
LOCK = "queue.lock"
WORKERS = "workers"
CREDITS = "queued.jsonl"  # in a queue shard's night folder: the cells it finished, one a line


class QueuedCell(Record):
    scenario: str
    index: int
    cell_id: str
    cost_s: float
    state: Literal["pending", "claimed", "done"] = "pending"
    shard: str | None = None  # "I/N" of the shard that claimed (or finished) it
    worker: str | None = None  # whose ``workers/<worker>.alive`` lock says the claimer lives
    host: str | None = None
    pid: int | None = None
    claims: int = 0  # how often it was claimed: more than once means a shard died holding it
    requeued_from: list[str] = []  # the workers that died holding it


class QueueFile(Record):
    suite: str | None
    date: str
    digest: str  # of the cell set (``chaos.running.shard.digest`` with no shard count)
    seeded_by: str
    cells: list[QueuedCell]


class Credit(Record):
    """One line of a shard's queued.jsonl: a cell it finished (``failure``: the cell's own failure)."""

    scenario: str
    index: int
    cell_id: str
    failure: str | None = None


def seed_of(plan: ShardPlan) -> QueueFile:
    """The queue a (queue-mode) shard plan seeds: the entries in suite order, each entry's cells
    longest first (ties: by cell id), by the plan's costs."""
    cells = [
        QueuedCell(scenario=r.scenario, index=c.index, cell_id=c.cell_id, cost_s=c.cost_s)
        for r in plan.runs
        for c in sorted(r.cells, key=lambda c: (-c.cost_s, c.cell_id))
    ]
    return QueueFile(suite=plan.suite, date=plan.date, digest=digest(plan.runs, 0, "queue"), seeded_by="", cells=cells)


def check_folder(folder: str | os.PathLike[str]) -> None:
    """Make sure a queue folder can hold a queue (made if missing, its lock file created): a
    ``ChaosError`` naming it otherwise (a Postgres queue is checked when it is joined). The
    command line asks before any progress is shown."""
    if is_dsn(folder):
        return
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        os.close(os.open(Path(folder) / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644))
    except OSError as exc:
        raise _unusable(str(folder), exc) from None


def _unusable(where: str, exc: OSError) -> ChaosError:
    return ChaosError(
        f"{where}: the shard queue is not usable ({exc.strerror or exc})",
        hint="--shard-queue needs a folder every shard can create files in and lock, or a Postgres DSN",
    )


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:60]


class FolderStore:
    """The queue in a folder: ``queue.json`` changed under an ``flock`` of ``queue.lock``; each
    shard's liveness is its ``flock`` of ``workers/<worker>.alive``."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.where = str(self.folder)
        self._alive_fd = -1

    def enter(self, worker: str, info: dict) -> None:
        (self.folder / WORKERS).mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / WORKERS / f"{worker}.alive", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a fresh name: only a bug could make it busy
        os.write(fd, json.dumps(info).encode())
        self._alive_fd = fd

    def leave(self) -> None:
        if self._alive_fd >= 0:
            os.close(self._alive_fd)  # the kernel drops the lock with the descriptor
            self._alive_fd = -1

    @contextlib.contextmanager
    def locked(self) -> Iterator[str | None]:
        fd = os.open(self.folder / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                text: str | None = (self.folder / QUEUE).read_text()
            except FileNotFoundError:
                text = None
            yield text
        finally:
            os.close(fd)

    def write(self, text: str) -> None:
        write_atomic(self.folder / QUEUE, text)

    def alive(self, worker: str) -> bool:
        try:
            fd = os.open(self.folder / WORKERS / f"{worker}.alive", os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)  # a lock we took dies with the descriptor
        return False

    def wait(self, worker: str) -> None:
        try:
            fd = os.open(self.folder / WORKERS / f"{worker}.alive", os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        finally:
            os.close(fd)


class QueueStore(Protocol):
    """Where a queue lives (``FolderStore``, or ``chaos.running.pgqueue.PgStore`` across hosts)."""

    where: str

    def enter(self, worker: str, info: dict) -> None: ...

    def leave(self) -> None: ...

    def locked(self) -> contextlib.AbstractContextManager[str | None]:
        """The queue's JSON (None: not seeded yet), with the queue locked until the block ends."""
        ...

    def write(self, text: str) -> None: ...

    def alive(self, worker: str) -> bool: ...

    def wait(self, worker: str) -> None: ...


def is_dsn(spec: str | os.PathLike[str]) -> bool:
    return str(spec).startswith(("postgresql://", "postgres://"))


def queue_name(spec: str) -> str:
    """How shard.json and night.json name a queue: a folder's absolute path, a DSN's password masked."""
    from chaos.racer.redact import redact_dsn

    return (redact_dsn(spec) or "") if is_dsn(spec) else str(Path(spec).resolve())


def open_store(spec: str | os.PathLike[str], seed: QueueFile) -> QueueStore:
    """The store ``--shard-queue`` names: a Postgres DSN, else a folder."""
    if is_dsn(spec):
        from chaos.running.pgqueue import PgStore

        return PgStore(str(spec), f"{seed.suite}/{seed.date}")
    return FolderStore(Path(spec))


class CellQueue:
    """This shard's handle on the queue: ``join`` it, ``claim``/``claims`` cells, ``done`` them."""

    def __init__(self, queue: str | os.PathLike[str], shard: str, seed: QueueFile, night_dir: Path):
        self.store, self.shard, self.seed, self.night_dir = open_store(queue, seed), shard, seed, Path(night_dir)
        self.worker = f"{_safe(socket.gethostname())}-{os.getpid()}-{secrets.token_hex(3)}"
        self._joined = False
        self._ran: dict[str, set[int]] = {}

    # ------------------------------------------------------------------ joining and leaving

    def join(self) -> None:
        """Take this shard's liveness lock, then seed the queue or check it is this night's."""
        where = self.store.where
        try:
            self.store.enter(self.worker, {"shard": self.shard, "host": socket.gethostname(), "pid": os.getpid()})
            self._joined = True
            with self.store.locked() as text:
                q = self._parse(text)
                if q is None:
                    self.store.write(self.seed.model_copy(update={"seeded_by": self.shard}).model_dump_json(indent=1))
                elif q.digest != self.seed.digest or q.date != self.seed.date:
                    raise ChaosError(
                        f"{where}: this queue was seeded for suite {q.suite!r}, night {q.date} (cells {q.digest}); "
                        f"shard {self.shard} runs suite {self.seed.suite!r}, night {self.seed.date} (cells {self.seed.digest})",
                        hint="give each night (and suite) its own --shard-queue folder",
                    )
        except OSError as exc:
            self.close()
            raise _unusable(where, exc) from None
        except ChaosError:
            self.close()
            raise

    def close(self) -> None:
        """Leave: claims not done go back to the queue; then the liveness lock is dropped."""
        if not self._joined:
            self.store.leave()
            return
        with contextlib.suppress(Exception), self._locked() as q:  # leaving must not fail: the lock going is what counts
            self._give_back(q)
        self.store.leave()
        self._joined = False

    def _parse(self, text: str | None) -> QueueFile | None:
        try:
            return QueueFile.model_validate_json(text) if text is not None else None
        except (ValidationError, ValueError) as exc:
            raise ChaosError(
                f"{self.store.where}: not a chaos shard queue ({type(exc).__name__})", hint="give the night an empty queue"
            ) from None

    @contextlib.contextmanager
    def _locked(self, *, write: bool = True) -> Iterator[QueueFile]:
        """The queue, locked until the block ends; written back then unless ``write=False`` (a read)."""
        with self.store.locked() as text:
            q = self._parse(text)
            if q is None:
                raise ChaosError(f"{self.store.where}: the shard queue is gone (removed while this shard ran)")
            yield q
            if write:
                self.store.write(q.model_dump_json(indent=1))

    def _give_back(self, q: QueueFile, scenario: str | None = None) -> None:
        """This shard's claims not done (of ``scenario``, or all) back to pending."""
        for c in q.cells:
            if c.state == "claimed" and c.worker == self.worker and scenario in (None, c.scenario):
                c.state, c.worker = "pending", None

    def _requeue_dead(self, q: QueueFile) -> None:
        """Claims whose worker's liveness lock is free (the worker is gone) back to pending."""
        dead: dict[str, bool] = {}
        for c in q.cells:
            if c.state == "claimed" and c.worker and c.worker != self.worker:
                if c.worker not in dead:
                    dead[c.worker] = not self.store.alive(c.worker)
                if dead[c.worker]:
                    c.requeued_from.append(c.worker)
                    c.state, c.worker = "pending", None

    # ------------------------------------------------------------------ claiming

    def claim(self, scenario: str) -> int | None:
        """Claim the next pending cell of ``scenario`` (re-queueing dead shards' claims first); its
        index, or None if every cell of it is done or claimed by a live shard."""
        with self._locked() as q:
            self._requeue_dead(q)
            c = next((c for c in q.cells if c.scenario == scenario and c.state == "pending"), None)
            if c is not None:
                c.state, c.shard, c.worker, c.host, c.pid = "claimed", self.shard, self.worker, socket.gethostname(), os.getpid()
                c.claims += 1
            return c.index if c is not None else None

    def held(self, scenario: str) -> list[int]:
        """This shard's claims of ``scenario`` not yet done, in queue order (a read: nothing written)."""
        with self._locked(write=False) as q:
            return [c.index for c in q.cells if c.scenario == scenario and c.state == "claimed" and c.worker == self.worker]

    def claims(self, scenario: str, cells: list[Cell]) -> Iterator[Cell]:
        """The cells this shard is to run of ``scenario``: those it already holds, then each next
        one it claims, until the queue has none of ``scenario`` left (the caller marks each ``done``)."""
        by_index = {c.index: c for c in cells}
        while True:
            held = self.held(scenario)
            index = held[0] if held else self.claim(scenario)
            if index is None:
                return
            yield by_index[index]

    def done(self, scenario: str, cell: Cell, failure: str | None) -> None:
        """``cell`` is finished (its trials journaled and synced): credited here first, then done."""
        line = Credit(scenario=scenario, index=cell.index, cell_id=cell.id, failure=failure).model_dump_json() + "\n"
        fd = os.open(self.night_dir / CREDITS, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line.encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        self._ran.setdefault(scenario, set()).add(cell.index)
        with self._locked() as q:
            for c in q.cells:
                if c.scenario == scenario and c.index == cell.index and c.worker == self.worker:
                    c.state = "done"

    def release(self, scenario: str) -> None:
        """Give this shard's unfinished claims of ``scenario`` back (its run of it was refused)."""
        with self._locked() as q:
            self._give_back(q, scenario)

    def ran(self, scenario: str) -> set[int]:
        """The cells of ``scenario`` this shard finished (in this process)."""
        return set(self._ran.get(scenario, set()))

    # ------------------------------------------------------------------ the end of the night

    def next_step(self, skip: set[str]) -> tuple[str, str] | None:
        """What this shard does once its pass over the suite is over: ``("run", scenario)`` a
        scenario with pending cells (not one in ``skip``: this shard could not run it),
        ``("wait", worker)`` a live shard still holds a claim, or None: the queue is finished."""
        with self._locked() as q:
            self._requeue_dead(q)
            pending = next((c.scenario for c in q.cells if c.state == "pending" and c.scenario not in skip), None)
            if pending is not None:
                return ("run", pending)
            busy = next((c.worker for c in q.cells if c.state == "claimed" and c.worker and c.worker != self.worker), None)
            return ("wait", busy) if busy else None

    def wait_for(self, worker: str) -> None:
        """Block until ``worker`` exits (its liveness lock is free): woken by the lock, no polling."""
        self.store.wait(worker)


def credits(night_dir: Path) -> list[Credit]:
    """The cells a queue shard's night folder says it finished (a torn last line is dropped: its
    cell was never marked done, so another shard ran it)."""
    path = Path(night_dir) / CREDITS
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for n, raw in enumerate(data.split(b"\n")[:-1], 1):
        try:
            out.append(Credit.model_validate_json(raw))
        except ValidationError:
            raise ChaosError(f"{path}:{n}: not a queue credit line", hint="the shard's queued.jsonl was edited") from None
    return out
