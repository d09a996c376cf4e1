"""The least a kill-sweep trial can cost on this machine, with real processes and a real SIGKILL.

``bench/racers.py --cases sweep`` says what chaos spends on a trial; this says what any harness
would have to spend on the same trial, so the two can be read side by side (``floor`` mode). It
is not chaos and keeps none of chaos's evidence: no trace, no inspections, no result records, no
orchestrator, no fork server protocol. What it keeps is what makes a trial a trial:

* the same workload (chaos's ``three_step`` factory: a -> b -> c, one effect each, SQLite saver,
  durability sync) run as chaos's LangGraph adapter runs it, with the workload's own
  ``max_concurrency`` (``three_step`` pins 1, so LangGraph's background executor has one worker
  and runs the saver's writes in the order they were asked for: ``config_of``), on a fresh store
  and a fresh effect ledger per trial (SQLite, WAL, ``synchronous=NORMAL`` as chaos's ledger), on
  the same disk;
* a victim and a resumer that are *separate fresh processes*, forked from a parent that has
  imported LangGraph, built the workload once and frozen its heap. Before the trial's clock
  starts the victim has opened the trial's store and ledger and built the workload over them, and
  the resumer has built the workload once in memory (the best a pool of pre-forked, pre-built
  racers can do: forks and the victim's setup are off the trial's path; the resumer touches the
  store only after the crash, as chaos's does). The clock covers the victim's run to its kill
  point, the kill, and the resume: open the store, build, read the thread, continue it;
* a barrier on every ``put`` / ``put_writes`` of the saver (before and after) and after every
  effect, named by chaos's own ``chaos.targets.langgraph.saver_boundaries`` and numbered by occurrence as
  chaos's barrier numbers them, where the victim stops itself with SIGSTOP at its kill point
  (the same 21 kill points as chaos's sweep, in turn); the parent sees the stop
  (``waitpid(WUNTRACED)``), SIGKILLs it and reaps it;
* the resumer opens the store, reads the thread's state, resumes it with no new input (chaos's
  resume ``none``, the same config) and reports the trial's effect ledger over a pipe: its rows
  per effect, the victim's and its own (what chaos's trial record holds); the trial ends when the
  parent has them. The outcomes per kill point (with how many repeats ended each way) are
  printed, so ``bench/racers.py`` can show that the floor ran the same trials as chaos: the same
  ledger at each kill point, every repeat.

Prints one JSON line (the fields ``bench/racers.py`` prints for a mode). Usage (normally through
``bench/racers.py --modes floor``): ``python bench/floor_harness.py --trials 42 --work DIR``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import signal
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

from chaos.targets.langgraph.saver_boundaries import put_name, writes_name  # noqa: E402
from chaos.workloads import WorkloadContext  # noqa: E402
from chaos.workloads.langgraph import three_step  # noqa: E402

CONFIG = {"configurable": {"thread_id": "floor"}}


class Barriers:
    """The boundaries one process crosses, named as chaos names them (``put(step=0,source=loop):before#1``,
    by content and occurrence, so the kill point is the same whichever thread crosses first); the
    victim stops itself at ``stop_at``."""

    stop_at = ""
    crossed: list[str] = []
    counts: dict[str, int] = {}

    lock = threading.Lock()

    @classmethod
    def cross(cls, name: str) -> None:
        with cls.lock:  # threads cross one at a time, as chaos's barrier has them
            n = cls.counts[name] = cls.counts.get(name, 0) + 1
            bid = f"{name}#{n}"
            cls.crossed.append(bid)
            if bid == cls.stop_at:
                # thread-directed, as chaos's barrier: a process-directed SIGSTOP may be taken by another
                # thread while this one runs on into the write it guards. The parent SIGKILLs us here.
                signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)


def outcome_of(counts: dict[str, int]) -> str:
    """A trial's effect ledger as ``bench/racers.py`` (``outcome_of``) spells chaos's: rows per effect,
    ``a x2, b x1, c x1``, or ``nothing``."""
    return ", ".join(f"{k} x{n}" for k, n in sorted(counts.items())) or "nothing"


class BarrierSaver(SqliteSaver):
    """LangGraph's SQLite saver with a barrier before and after each write, named by chaos's own
    ``saver_boundaries`` (the names chaos's instrumented saver uses, so the kill points are the same)."""

    def put(self, config, checkpoint, metadata, new_versions):
        name = put_name(metadata)
        Barriers.cross(name + ":before")
        out = super().put(config, checkpoint, metadata, new_versions)
        Barriers.cross(name + ":after")
        return out

    def put_writes(self, config, writes, task_id, task_path=""):
        name = writes_name(writes, task_path)
        Barriers.cross(name + ":before")
        out = super().put_writes(config, writes, task_id, task_path)
        Barriers.cross(name + ":after")
        return out


def open_trial(folder: str):
    """The trial's store and ledger, and the workload built over them (as a racer builds it)."""
    conn = sqlite3.connect(os.path.join(folder, "checkpoints.sqlite"), check_same_thread=False, timeout=60)  # as chaos opens it
    ledger = sqlite3.connect(os.path.join(folder, "ledger.sqlite"), isolation_level=None)
    ledger.execute("PRAGMA journal_mode=WAL")
    ledger.execute("PRAGMA synchronous=NORMAL")
    ledger.execute("CREATE TABLE IF NOT EXISTS effects (task TEXT)")

    def effect(task, value=None, once=False):
        ledger.execute("INSERT INTO effects VALUES (?)", (task,))
        Barriers.cross(f"effect(task={task}):after")

    saver = BarrierSaver(conn)
    saver.setup()
    workload = three_step(WorkloadContext(checkpointer=saver, effect_hook=effect))
    return workload.graph, workload.input, config_of(workload), conn, ledger


def config_of(workload) -> dict:
    """The run's config as chaos's LangGraph adapter builds it: the thread, and the workload's own
    ``max_concurrency`` (``three_step`` pins 1). Without it LangGraph's background executor runs
    ``put_writes`` and ``put`` on threads of their own, concurrently, and at four kill points (the
    first ``put_writes`` before and after, ``put(step=1)`` and ``put(step=3)`` before) whether the
    other write had committed when the victim stopped is the scheduler's choice: a different trial
    from chaos's, where one worker runs them in order and every point has one outcome."""
    config: dict = {"configurable": dict(CONFIG["configurable"])}
    if workload.max_concurrency:
        config["max_concurrency"] = workload.max_concurrency
    return config


def child(role: str, folder: str, point: str = "") -> tuple[int, int, int]:
    """Fork a victim or a resumer of the trial in ``folder``; it gets ready, says so (one byte up),
    then waits for its turn (one byte down). Ready: the victim has opened the store and the ledger
    and built the workload over them; the resumer, which must not touch the store before the crash
    (as chaos's resume racer, which holds before it opens it), has built the workload once over an
    in-memory saver, so its first-touch page copies and caches are behind it. Returns (pid, to it,
    from it)."""
    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(down_w)
        os.close(up_r)
        if role == "victim":
            graph, first_input, config, conn, ledger = open_trial(folder)
        else:
            three_step(WorkloadContext(checkpointer=InMemorySaver(), effect_hook=lambda *a, **k: None))
        os.write(up_w, b"r")
        os.read(down_r, 1)
        if role != "victim":
            graph, first_input, config, conn, ledger = open_trial(folder)
        if role == "victim":
            Barriers.stop_at = point
            graph.invoke(first_input, config, durability="sync")
        else:  # chaos's resume "none": read the thread, continue it with no new input
            graph.get_state(config)
            try:
                graph.invoke(None, config, durability="sync")
            except Exception:  # LangGraph's own answer (EmptyInputError before the first checkpoint): counted as is
                pass
        rows = ledger.execute("SELECT task, count(*) FROM effects GROUP BY task ORDER BY task").fetchall()
        conn.close()
        ledger.close()
        os.write(up_w, json.dumps(dict(rows)).encode())
        os._exit(0)
    os.close(down_r)
    os.close(up_w)
    return pid, down_w, up_r


def cpu_s() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=42)
    ap.add_argument("--work", default=None, help="folder for the trials' stores (default: the system temp folder)")
    args = ap.parse_args(argv)
    base = tempfile.mkdtemp(prefix="chaos-floor-", dir=args.work)
    try:
        # warm up as a fork server does: one whole run (counting the boundaries), then freeze the heap
        graph, first_input, config, conn, ledger = open_trial(tempfile.mkdtemp(dir=base))
        graph.invoke(first_input, config, durability="sync")
        points, Barriers.crossed, Barriers.counts = list(Barriers.crossed), [], {}
        conn.close()
        ledger.close()
        gc.collect()
        gc.freeze()
        walls, fired, killed = [], [], 0
        per_point: dict[str, dict[str, int]] = {}
        cpu0, t0 = cpu_s(), time.monotonic()
        for t in range(args.trials):
            folder = tempfile.mkdtemp(dir=base)
            victim, to_victim, from_victim = child("victim", folder, points[t % len(points)])
            resumer, to_resumer, from_resumer = child("resume", folder)
            os.read(from_victim, 1)
            os.read(from_resumer, 1)  # both ready: the trial's clock starts
            start = time.monotonic()
            os.write(to_victim, b"g")
            _, status = os.waitpid(victim, os.WUNTRACED)
            if os.WIFSTOPPED(status):
                os.kill(victim, signal.SIGKILL)
                _, status = os.waitpid(victim, 0)
                killed += os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
            os.write(to_resumer, b"g")
            said = os.read(from_resumer, 4096)  # one write well under PIPE_BUF: whole or nothing
            counts: dict[str, int] | None = json.loads(said) if said else None
            fired.append(sum(counts.values()) if counts is not None else -1)
            outcome = outcome_of(counts) if counts is not None else "no answer"
            at = per_point.setdefault(points[t % len(points)], {})
            at[outcome] = at.get(outcome, 0) + 1
            walls.append(time.monotonic() - start)
            os.waitpid(resumer, 0)
            for fd in (to_victim, from_victim, to_resumer, from_resumer):
                os.close(fd)
        elapsed, cpu = time.monotonic() - t0, cpu_s() - cpu0
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(
        json.dumps(
            {
                "mode": "floor",
                "trials": len(walls),
                "valid": sum(f >= 0 for f in fired),  # the resumer reported the ledger's count
                "fired": {str(n): fired.count(n) for n in sorted(set(fired))},  # LangGraph's own outcome, not judged here
                # per kill point (in the order a run crosses them): the trial's effect ledger once the resume
                # ended, the victim's rows and the resumer's counted per effect ("a x2, b x1, c x1"), and how
                # many repeats ended so
                "per_point": per_point,
                "killed": killed,
                "boundaries": len(points),
                "trials_per_s": len(walls) / elapsed,
                "median_wall_ms": statistics.median(walls) * 1000,
                "cpu_per_trial_ms": cpu / len(walls) * 1000,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
