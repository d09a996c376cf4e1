"""Parallel trials: a cell's independent trials, several at a time, each in a job slot of its own.

Why: a sweep's kill points are independent by construction (each trial has its own work folder,
store, thread id and ledger rows, and its seed derives from its own id), yet a run executed them
one after another on one core whatever the machine had. ``chaos run --jobs N`` runs them N at a time.

What it promises:

* A kind declares which of its trials are independent as data: it hands their plans (``Task``:
  a trial's attempts, given the context to run them with) to ``RunContext.independent``. Nothing
  else runs in parallel: a dry run, a recording, a race (whose racers need their windows) stay one
  at a time in the cell's own loop.
* Each slot has its own context (``FanOut.slot``): its own launchers, so its own fork server
  (named apart: ``job<i>/forkserver-<framework>.log``, its racers' temp folder beside it); slot 0 is
  the cell's own. Trials never share a launcher across threads.
* Records come back to the caller's thread as they end (completion order), so the one journal
  writer stays the cell loop (``chaos.running.execution``): each record is appended there, signals
  disarmed, as with one job. Analysis reads a cell's records by trial id (``StoredTrials.of_cell``),
  so the order of the lines does not change a verdict, and ``--resume`` skips by trial id as ever.
* When the caller stops early (Ctrl-C / SIGTERM raising in its thread, a cell failing, a fault of
  the run), no slot starts another trial, the run's racers are killed (``FanOut.abort``) so running
  trials end at once, and every slot is idle again before the caller goes on to clean up: no
  trial outlives the cell, no racer the run. The slots' threads (``JobPool``) live until the run's
  clean-up, which closes them after reaping the racers. A record that ended but was not journaled is run
  again by ``--resume`` (its ledger rows are set aside first, as for one job).
* ``default_jobs()``: the cores this process may use that the last minute's load left idle,
  capped by the memory available at ``JOB_MEMORY_MB`` per slot (a fork server and a trial's racers). ``parse_jobs`` refuses 0, a
  negative or a non-integer value with one line saying what to give.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Generic, TypeVar, cast

from chaos.racer.errors import ChaosError

# a slot's context and what a task yields: ``chaos.running.trial.RunContext`` and ``TrialRecord``
# (generic here, so the run path's types name this module and it names none of theirs)
C = TypeVar("C")
R = TypeVar("R")

# what one job slot holds at once: its fork server (a framework imported, ~150 MB) and one trial's
# victim and resumer (forked from it, ~100 MB each of their own); measured with LangGraph on SQLite
JOB_MEMORY_MB = 400
MAX_JOBS = 256


def machine_cpus() -> int:
    """The cores this process may run on (its affinity, e.g. a CI container's limit), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def available_mb() -> int | None:
    """The memory available now, in MB (None when it cannot be read)."""
    try:
        import psutil

        return int(psutil.virtual_memory().available // (1024 * 1024))
    except Exception:
        return None


def idle_cpus(cpus: int) -> int:
    """The cores nobody else keeps busy: ``cpus`` less the last minute's load average (rounded), at least 1.

    Why: Linux shares the CPU per session (autogroup), so on a machine other sessions keep busy a run
    gets its share whatever number of jobs it runs, and each extra slot only adds its fork server's
    start (measured on this 2-core machine at load 30: ``--jobs 2`` took 1.83x the wall of ``--jobs 1``)."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return cpus
    return max(1, min(cpus, cpus - int(load + 0.5)))


def default_jobs() -> int:
    """What the machine has: its idle cores (``idle_cpus``), capped by the memory available at
    ``JOB_MEMORY_MB`` per job. ``--jobs N`` asks for N whatever the load."""
    jobs = idle_cpus(machine_cpus())
    mb = available_mb()
    if mb is not None:
        jobs = min(jobs, max(1, mb // JOB_MEMORY_MB))
    return max(1, min(jobs, MAX_JOBS))


def parse_jobs(value: object, option: str = "--jobs") -> int:
    """``value`` as a number of jobs (an integer from 1 to ``MAX_JOBS``), else a ``ChaosError`` naming it."""
    text = str(value).strip()
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError
        n = int(value) if isinstance(value, int | float) else int(text, 10)
    except ValueError:
        raise ChaosError(
            f"{option} {text!r}: not a whole number; give how many trials run at once, from 1 to {MAX_JOBS}"
            f" (leave it out for what the machine has: {default_jobs()} here)"
        ) from None
    if not 1 <= n <= MAX_JOBS:
        raise ChaosError(f"{option} {n}: trials at once must be between 1 and {MAX_JOBS} (1 runs them one after another)")
    return n


class JobPool:
    """The threads that run a run's job slots, one per slot, alive from the slot's first trial to the
    run's clean-up (``close``).

    Why threads that outlive a cell: a fork server (and a cold racer) dies with the *thread* that
    started it, not the process (its parent-death signal, ``PR_SET_PDEATHSIG``, follows the creating
    thread). A slot's fork server is started by its first trial, in its slot's thread; a thread per
    cell would take it down at the end of every cell (measured: 8 to 16 s to start it again on 2
    loaded cores, per cell). So slot ``i`` always runs in thread ``i``, which waits between cells."""

    def __init__(self) -> None:
        self.inboxes: list[queue.SimpleQueue[Callable[[], None] | None]] = []
        self.threads: list[threading.Thread] = []

    def submit(self, slot: int, work: Callable[[], None]) -> None:
        """Run ``work`` in slot ``slot``'s thread (started on first use)."""
        while len(self.threads) <= slot:
            inbox: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
            t = threading.Thread(target=self._serve, args=(inbox,), name=f"chaos-job-{len(self.threads)}", daemon=True)
            self.inboxes.append(inbox)
            self.threads.append(t)
            t.start()
        self.inboxes[slot].put(work)

    @staticmethod
    def _serve(inbox: queue.SimpleQueue[Callable[[], None] | None]) -> None:
        while (work := inbox.get()) is not None:
            work()

    def close(self) -> None:
        """Stop every slot's thread (each idle by now: ``run_independent`` waits for its slots) and join it."""
        for inbox in self.inboxes:
            inbox.put(None)
        for t in self.threads:
            t.join()
        self.inboxes.clear()
        self.threads.clear()


@dataclass(frozen=True)
class FanOut(Generic[C]):
    """How a cell's independent trials may run at once: ``jobs`` slots, ``slot(i)`` the context of
    slot ``i`` (its own launchers; slot 0 is the cell's), run in ``pool``'s thread ``i``; ``abort``
    kills every racer of the run."""

    jobs: int
    slot: Callable[[int], C]
    abort: Callable[[], object]
    pool: JobPool


_END = object()


def run_independent(ctx: C, tasks: list[Callable[[C], Iterator[R]]], fan: FanOut[C] | None) -> Iterator[R]:
    """Every task's records: one after another with ``ctx`` when there is no fan-out (or one job,
    or one task), else ``fan.jobs`` at a time in the pool's slot threads, each with its slot's
    context, yielded in this thread as they end. Stopping the iteration early stops the slots (see
    the module's promise): this returns only once every slot is idle again."""
    if fan is None or fan.jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield from task(ctx)
        return
    width = min(fan.jobs, len(tasks))
    slots = [fan.slot(i) for i in range(width)]  # made here, in the caller's thread: launchers are not shared
    pending = iter(tasks)
    take = threading.Lock()
    stop = threading.Event()
    out: queue.SimpleQueue[object] = queue.SimpleQueue()

    def work(slot: C) -> None:
        try:
            while not stop.is_set():
                with take:
                    task = next(pending, None)
                if task is None:
                    return
                for rec in task(slot):
                    out.put(rec)
                    if stop.is_set():
                        return
        except BaseException as exc:  # handed to the caller's thread, which raises it
            stop.set()
            out.put(exc)
        finally:
            out.put(_END)

    for i, slot in enumerate(slots):
        fan.pool.submit(i, partial(work, slot))
    ended = 0
    try:
        while ended < width:
            try:
                item = out.get(timeout=1.0)  # a signal raises here too (its handler runs in this thread)
            except queue.Empty:
                continue
            if item is _END:
                ended += 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield cast(R, item)  # everything else was handled above
    finally:
        if ended < width:  # stopped early: no slot starts another trial, and running ones end now
            stop.set()
            fan.abort()
            while ended < width:
                if out.get() is _END:
                    ended += 1
