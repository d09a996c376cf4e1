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
  the cell's own. Trials never share a launcher across threads. A kind whose independent trials
  follow work that must come first (a sweep's dry run) says so (``RunContext.expect_independent``):
  the other slots' fork servers then start at once (``FanOut.start_ahead``; a launcher that
  ``StartsAhead``), importing the framework on the cores the dry run leaves idle, instead of in the
  parallel part, where each slot's first trial waited for its own (2.3 s of CPU for LangGraph).
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
* ``default_jobs()``: what the machine has, the same on every run of it: the cores this process
  may use (its CPU affinity, capped by its cgroup's CPU quota), capped by its memory (the machine's,
  or its cgroup's limit) at ``JOB_MEMORY_MB`` per slot (a fork server and a trial's racers). Not the
  load average: a default that moved with what other sessions ran made two runs of one scenario
  differ in how they ran. ``CHAOS_JOBS`` in the environment replaces that default (``wanted_jobs``):
  where something else already keeps every core busy (a CI step running several runs at once, a
  test suite on pytest-xdist's workers), a second slot only imports the framework a second time.
  A framework whose trials mostly wait on itself (``TargetInfo.trials_wait``: the Agent Server)
  gets two jobs a core by default (``default_jobs(per_core=2)``, asked by the execution per cell).
  ``parse_jobs`` refuses 0, a negative or a non-integer value with one line
  saying what to give.
"""

from __future__ import annotations

import contextlib
import math
import os
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
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
CGROUP = Path("/sys/fs/cgroup")  # where the cgroup file systems are mounted


def machine_cpus(cgroup: Path = CGROUP) -> int:
    """The cores this process may run on, at least 1: its affinity (e.g. a container's ``--cpuset-cpus``),
    capped by its cgroups' CPU quota (``--cpus``: a quota of 1.5 cores is 2 jobs, rounded up)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = cgroup_cpus(cgroup)
    return max(1, min(cpus, quota) if quota is not None else cpus)


def machine_mb(cgroup: Path = CGROUP) -> int | None:
    """The memory this process may use, in MB: the machine's, capped by its cgroups' limit (None when
    neither can be read). The machine's size, not what is free now: the default must not move."""
    total = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) // 1024
    limits = [
        v for v in _cgroup_numbers(cgroup, "", "memory.max") + _cgroup_numbers(cgroup, "memory", "memory.limit_in_bytes") if v < 1 << 60
    ]
    if limits:  # (v1 writes "no limit" as a number near 2**63)
        limit = min(limits) // (1024 * 1024)
        total = limit if total is None else min(total, limit)
    return total


def cgroup_cpus(cgroup: Path = CGROUP) -> int | None:
    """The cores this process's cgroups allow (the tightest quota over its period, rounded up), None if unlimited."""
    quotas: list[float] = []
    for text in _cgroup_texts(cgroup, "", "cpu.max"):  # v2: "<quota> <period>", or "max <period>"
        quota, _, period = text.partition(" ")
        with contextlib.suppress(ValueError, ZeroDivisionError):
            quotas.append(int(quota) / int(period))
    v1 = zip(_cgroup_numbers(cgroup, "cpu", "cpu.cfs_quota_us"), _cgroup_numbers(cgroup, "cpu", "cpu.cfs_period_us"), strict=False)
    quotas += [q / p for q, p in v1 if q > 0 and p > 0]  # v1: a quota of -1 is no limit
    return max(1, math.ceil(min(quotas))) if quotas else None


def _cgroup_texts(cgroup: Path, controller: str, name: str) -> list[str]:
    """File ``name`` of every cgroup this process is in for ``controller`` ("": cgroup v2's one tree),
    its own and each parent's (a limit holds below where it is set), as mounted under ``cgroup``."""
    base = cgroup / controller if controller else cgroup
    own: list[Path] = []
    with contextlib.suppress(OSError):
        for entry in Path("/proc/self/cgroup").read_text().splitlines():
            _, names, path = entry.split(":", 2)
            if (controller in names.split(",")) if controller else names == "":
                own.append(base / path.lstrip("/"))
    folders = {d for p in own for d in (p, *p.parents) if d.is_relative_to(base)} | {base}  # a container sees its own at the root
    out = []
    for d in folders:
        with contextlib.suppress(OSError):
            out.append((d / name).read_text().strip())
    return out


def _cgroup_numbers(cgroup: Path, controller: str, name: str) -> list[int]:
    """The numbers in file ``name`` of this process's cgroups (``_cgroup_texts``; "max" and the unreadable left out)."""
    out = []
    for text in _cgroup_texts(cgroup, controller, name):
        with contextlib.suppress(ValueError):
            out.append(int(text))
    return out


def default_jobs(cgroup: Path = CGROUP, per_core: int = 1) -> int:
    """What the machine has: the cores this process may use (``machine_cpus``), ``per_core`` jobs each
    (2 for trials that mostly wait on the framework itself: ``TargetInfo.trials_wait``), capped by its
    memory at ``JOB_MEMORY_MB`` per job (``machine_mb``). The same on every run of a machine, whatever
    its load: ``--jobs N`` asks for another number."""
    jobs = machine_cpus(cgroup) * per_core
    mb = machine_mb(cgroup)
    if mb is not None:
        jobs = min(jobs, max(1, mb // JOB_MEMORY_MB))
    return max(1, min(jobs, MAX_JOBS))


JOBS_ENV = "CHAOS_JOBS"  # the default number of jobs, where it is set (``wanted_jobs``)


def wanted_jobs(per_core: int = 1) -> int:
    """The jobs of a run that did not say (no ``--jobs``): ``CHAOS_JOBS`` where it is set (refused as
    ``--jobs`` refuses a bad value, naming the variable), else what the machine has (``default_jobs``,
    ``per_core`` jobs a core)."""
    value = os.environ.get(JOBS_ENV, "").strip()
    return parse_jobs(value, JOBS_ENV) if value else default_jobs(per_core=per_core)


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
    kills every racer of the run; ``start_ahead`` starts the other slots' fork servers now, without
    waiting for them (``RunContext.expect_independent``)."""

    jobs: int
    slot: Callable[[int], C]
    abort: Callable[[], object]
    pool: JobPool
    start_ahead: Callable[[], object] = lambda: None


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
