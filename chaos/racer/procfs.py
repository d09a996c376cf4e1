"""Process states read from /proc (standard library only, so it runs on racer hosts too).

The barrier protocol needs to know that a racer is *stopped*: every one of its threads, not just
the leader, since a thread that has not yet stopped can still commit the write the barrier guards.
"""

from __future__ import annotations

import os


def proc_state(pid: int, task: int | None = None) -> str | None:
    """The one-letter state of ``pid`` (or one of its threads) from /proc, or None if gone."""
    path = f"/proc/{pid}/stat" if task is None else f"/proc/{pid}/task/{task}/stat"
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    i = data.rfind(b")")
    return data[i + 2 : i + 3].decode()


def all_threads_stopped(pid: int) -> bool:
    """True when every thread of ``pid`` is in the stopped state (a group stop has completed)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return False
    return bool(tasks) and all(proc_state(pid, int(t)) in ("T", "t") for t in tasks)
