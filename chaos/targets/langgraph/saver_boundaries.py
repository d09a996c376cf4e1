"""The boundary names of a LangGraph checkpoint saver's writes, spelled once.

Why: the built-in backends (``chaos.targets.langgraph.session.instrument``) and a team's own saver
(``chaos.targets.langgraph.custom_saver.wrap``) must name the same write the same way, so every kind, kill
point and report reads alike whatever saver ran. Both import this module; neither imports the other
for it (that was an import loop over a private helper).
"""

from __future__ import annotations

from typing import Any


def node_of(task_path: Any) -> str:
    """The node a task path names (its last element), ``-`` for the run's own input writes."""
    text = str(task_path or "")
    if not text:
        return "-"
    return text.split(", ")[-1].strip("()'\" ") or "-"


def put_name(metadata: Any) -> str:
    """``put(step=N,source=S)``: a checkpoint, named by its metadata."""
    md = metadata or {}
    return f"put(step={md.get('step')},source={md.get('source')})"


def writes_name(writes: Any, task_path: Any) -> str:
    """``put_writes(node=X,channels=a+b)``: a task's pending writes."""
    channels = "+".join(str(w[0]) for w in writes)
    return f"put_writes(node={node_of(task_path)},channels={channels})"
