"""Shapes shared by racer-side adapters (standard library only).

``perform(action)`` takes ``{"op": "run" | "resume", "form": "none" | "input" | "command",
"value": ...}`` and returns an *outcome*::

    {"status": "done" | "interrupted" | "error",
     "error": {"type": ..., "message": ...} | None,
     "interrupts": [...],          # pending interrupts after the call, if any
     "observed": {...}}            # values the workload's nodes saw (e.g. the resume value)

``inspect()`` returns the durable state of the thread as the framework reports it::

    {"checkpoints": int, "head_step": int | None, "next": [...],
     "completed_tasks": [...],     # tasks recorded complete (the durable frontier)
     "pending_interrupts": int, "error": {...} | None}
"""

from __future__ import annotations

import traceback
from typing import Any


def error_of(exc: BaseException) -> dict:
    """A JSON-safe description of an exception."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""
    return {"type": type(exc).__name__, "module": type(exc).__module__, "message": str(exc)[:2000], "where": where}


def jsonable(value: Any) -> Any:
    """Best-effort plain JSON form of a framework value."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return repr(value)[:500]
