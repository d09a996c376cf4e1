"""Filesystem barriers: the only synchronisation between the orchestrator and its racers.

Protocol (racer side, standard library only):

1. A racer reaches a persistence boundary and calls ``BarrierClient.hit(name)``. The boundary is
   named by content (``put(step=1,source=loop):before``) and numbered by occurrence (``#1``), so
   names do not shift with thread scheduling.
2. If the boundary is armed, the racer writes an *arrival file* atomically (write, rename)
   into the trial's barrier folder and then stops its **whole process** with SIGSTOP. Frameworks
   persist on background threads, so blocking only the arriving thread would let the rest of the
   process run past the barrier; a stopped process cannot.
3. The orchestrator observes the arrival (the file, and the process state ``stopped``) and decides:
   SIGCONT releases the racer, SIGKILL crashes it exactly there.

The start gate of a race is the same protocol with the barrier name ``gate``: every racer arrives
and stops, and the orchestrator continues them all at once. ``hold`` is the same again for a racer
started ahead of its turn (a sweep's resume racer starts while its victim runs and holds before
it opens the framework's store; the orchestrator continues it once the victim's kill is confirmed).
``afterwards`` is where a racer whose spec has ``afterwards`` actions stops once its own are done,
its session still open, until the orchestrator has seen every other racer of the trial end (a
race's read of the checkpoint tree, by a racer that is there already instead of a new one).

Arrivals are serialised inside a racer (one lock), so two threads never stand at a barrier at the
same time. Every boundary a racer passes is also recorded in its trace, armed or not: the dry run
of a kill sweep is just a racer with nothing armed. An arrival while another thread of the racer is
inside a store write (past its ``:before``, not at its ``:after``) names that write (``writing``):
a crash state there depends on how the threads happened to run (``chaos.kinds.crash_states``).

A *mark* (``BarrierClient.mark``) is a timestamp that is no boundary: it is never armed, never in the
trace and never a kill point, so adding one changes no sweep. Adapters mark what a measurement
needs to time but a crash there would add nothing: ``read`` (the thread's state was read; the race
window starts at the resume's first read).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field

from chaos.racer.protocol import BarrierSpec, ErrorInfo, MarkEntry, TraceEntry
from chaos.racer.redact import redact, redact_obj

GATE = "gate"
HOLD = "hold"
AFTERWARDS = "afterwards"
ARRIVAL_SUFFIX = ".arrival"
ECHO_PREFIX = "@@chaos-barrier "


def write_atomic(path: str, data: bytes, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so a reader sees either nothing or all of it.

    The rename makes the file appear whole to every reader on this machine, also after the writer
    is SIGKILLed (the page cache outlives the process). ``durable`` adds an fsync, which only
    protects against losing the machine itself: arrival and result files, read by an orchestrator
    that would lose the trial with the machine anyway, skip it (a few ms per file on the hot path).
    """
    tmp = f"{path}.tmp{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)


@dataclass
class BarrierClient:
    """The racer's end of the barrier protocol."""

    directory: str
    racer_id: str
    armed: frozenset[str] = frozenset()
    # boundaries whose id contains one of these stop the racer too ("": every boundary): a racer
    # armed at boundaries not known in advance (a recovery recorded at each of its own: chaos.kinds.crash_chains)
    armed_like: tuple[str, ...] = ()
    echo: bool = False
    trace: list[TraceEntry] = field(default_factory=list)
    marks: list[MarkEntry] = field(default_factory=list)
    # store calls of this racer that raised (``failed``): every later arrival record carries them
    store_errors: list[dict] = field(default_factory=list)
    _counts: dict[str, int] = field(default_factory=dict)
    _arrivals: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _writing: dict[str, str] = field(default_factory=dict)  # thread -> the store write it is inside (its ``:before``)

    @classmethod
    def from_spec(cls, spec: BarrierSpec, racer_id: str) -> BarrierClient:
        return cls(
            directory=spec["dir"],
            racer_id=racer_id,
            armed=frozenset(spec.get("armed", ())),
            armed_like=tuple(spec.get("armed_like", ())),
            echo=bool(spec.get("echo", False)),
            _counts=dict(spec.get("counts") or {}),
        )

    def hit(self, name: str) -> str:
        """A boundary is reached. Returns its id (``name#occurrence``); stops here if armed."""
        with self._lock:
            occurrence = self._counts.get(name, 0) + 1
            self._counts[name] = occurrence
            bid = f"{name}#{occurrence}"
            thread = threading.current_thread().name
            self.trace.append({"barrier": bid, "thread": thread, "t_mono_ns": time.monotonic_ns()})
            if name.endswith(":after"):
                self._writing.pop(thread, None)
            if bid in self.armed or (self.armed_like and any(w in bid for w in self.armed_like)):
                self._arrive(bid)
            if name.endswith(":before"):
                self._writing[thread] = bid
        return bid

    def failed(self, name: str, error: ErrorInfo) -> None:
        """A store call (``name``, a boundary without ``:before``/``:after``) raised ``error``
        (``error_of``). A framework may swallow it or raise it later, on another thread, or never
        (the racer is killed at its next barrier first); the arrival record at that barrier still
        tells the orchestrator that the store may lack what the racer passed before the kill."""
        with self._lock:  # an arrival in progress keeps its record whole: the error is in the next one
            if len(self.store_errors) < 16:  # masked whole: an arrival file is kept with the work folder
                self.store_errors.append(redact_obj({"call": name, **error}, keep_numbers=True))
            self._writing.pop(threading.current_thread().name, None)  # the write is over: no ``:after`` comes

    def mark(self, name: str) -> None:
        """Record when ``name`` happened (monotonic and wall clock); never stops, never a boundary.
        At most the first 64 marks are kept: a racer needs only its first reads."""
        if len(self.marks) < 64:
            self.marks.append({"mark": name, "t_mono_ns": time.monotonic_ns(), "t_wall_ns": time.time_ns()})

    def gate(self) -> None:
        """Wait at the start gate until the orchestrator opens it."""
        with self._lock:
            self._arrive(GATE)

    def hold(self) -> None:
        """Wait, before touching the framework's store, until the orchestrator says it is our turn."""
        with self._lock:
            self._arrive(HOLD)

    def afterwards(self) -> None:
        """Wait, its own actions done and its session open, until the orchestrator continues it to
        perform its ``afterwards`` actions (once every other racer of the trial has ended)."""
        with self._lock:
            self._arrive(AFTERWARDS)

    def _arrive(self, bid: str) -> None:
        self._arrivals += 1
        record = {
            "racer_id": self.racer_id,
            "barrier": bid,
            "pid": os.getpid(),
            "thread": threading.current_thread().name,
            "t_wall": time.time(),
            "t_mono_ns": time.monotonic_ns(),
            # the evidence the store at a kill here is judged against: what this racer passed, what failed
            # (masked: an effect label may carry a secret, and arrival files stay with a kept work folder)
            "passed": [redact(t["barrier"]) for t in self.trace[-256:]],
            "store_errors": list(self.store_errors),
        }
        me = threading.current_thread().name
        writing = [f"{redact(b)} on {t}" for t, b in self._writing.items() if t != me]
        if writing:
            record["writing"] = writing
        payload = json.dumps(record).encode()
        name = f"{self.racer_id}.{self._arrivals:05d}{ARRIVAL_SUFFIX}"
        write_atomic(os.path.join(self.directory, name), payload, durable=False)
        if self.echo:
            sys.stdout.write(ECHO_PREFIX + payload.decode() + "\n")
            sys.stdout.flush()
        # Freeze the whole process, every thread, until SIGCONT (release) or SIGKILL (crash).
        # The stop must be thread-directed: a process-directed SIGSTOP may be dequeued by another
        # thread while this one returns to user code and runs on into the very write the barrier
        # guards (seen: a checkpoint committed "before" its own put). tgkill to ourselves is
        # handled on the way out of the syscall, before another Python instruction runs.
        signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)


def read_arrivals(directory: str, racer_id: str | None = None) -> list[dict]:
    """Every arrival recorded in ``directory`` (optionally of one racer), in arrival order."""
    try:
        names = sorted(n for n in os.listdir(directory) if n.endswith(ARRIVAL_SUFFIX))
    except FileNotFoundError:
        return []
    out = []
    for n in names:
        if racer_id is not None and not n.startswith(racer_id + "."):
            continue
        try:
            with open(os.path.join(directory, n), "rb") as f:
                out.append(json.loads(f.read()))
        except (OSError, ValueError):
            continue  # a rename is atomic, so this is a file removed under us: ignore it
    return out
