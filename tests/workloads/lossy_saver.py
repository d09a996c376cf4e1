"""A team's graph over a "best-effort" saver: it swallows a failed write (logs it, goes on).

``swallowing_three_step``: a -> b -> c (one effect each), compiled with a saver that delegates to
``ctx.checkpointer`` but catches any exception of ``put`` / ``put_writes`` and returns as if the
write had happened, as savers that "never let persistence break the agent" do. When its database
connection is lost mid-run the run still finishes, and what it reported saved is not in the
store: the silent loss ``fault: db_disconnect`` must catch (CL violated).
"""

from __future__ import annotations

import logging
import operator
from typing import Annotated, Any, TypedDict


class S(TypedDict, total=False):
    log: Annotated[list, operator.add]


def _swallowing(inner: Any) -> Any:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    class Swallowing(BaseCheckpointSaver):
        def __init__(self) -> None:
            super().__init__(serde=inner.serde)

        def get_tuple(self, config):
            return inner.get_tuple(config)

        def list(self, config, **kw):
            return inner.list(config, **kw)

        def get_next_version(self, current, channel):
            return inner.get_next_version(current, channel)

        def put(self, config, checkpoint, metadata, new_versions):
            try:
                return inner.put(config, checkpoint, metadata, new_versions)
            except Exception as exc:  # the bug under test: the write is lost, the run goes on
                logging.getLogger("lossy_saver").warning("put failed: %s", exc)
                c = config["configurable"]
                return {
                    "configurable": {
                        "thread_id": c["thread_id"],
                        "checkpoint_ns": c.get("checkpoint_ns", ""),
                        "checkpoint_id": checkpoint["id"],
                    }
                }

        def put_writes(self, config, writes, task_id, task_path=""):
            try:
                inner.put_writes(config, writes, task_id, task_path)
            except Exception as exc:
                logging.getLogger("lossy_saver").warning("put_writes failed: %s", exc)

    return Swallowing()


def swallowing_three_step(ctx):
    from langgraph.graph import END, START, StateGraph

    def make(name: str):
        def node(state: S) -> dict:
            ctx.effect(name)
            return {"log": [name]}

        return node

    g = StateGraph(S)
    for name in ("a", "b", "c"):
        g.add_node(name, make(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    return g.compile(checkpointer=_swallowing(ctx.checkpointer))
