"""The e-mail assistant as a team deploys it behind LangGraph's Agent Server: graph factories for langgraph.json.

Why: many teams never call ``graph.invoke``; they name a graph in ``langgraph.json``
(``"graphs": {"assistant": "./served.py:stock"}``) and answer approvals through the runs API.
chaos serves the factory a scenario names (``workload: examples.email_assistant.served:stock``) as
graph ``app`` of a real ``langgraph dev`` server (target ``langgraph_server``), and its clients
drive it through ``langgraph-sdk`` only (``scenarios/server.yaml``).

What it promises: ``stock`` and ``fixed`` are the very graphs of ``app.py`` (same nodes, same
approvals, same bugs and fixes), compiled with no checkpointer (the server supplies its own), their
effects counted by ``chaos.workloads.effect`` / ``effect_once`` from inside the
server's worker, tagged with the client whose run fired them. Each factory takes the run's config,
as the server calls it, and needs no chaos context.
"""

from __future__ import annotations

from typing import Any

from chaos.workloads import WorkloadContext, effect, effect_once
from examples.email_assistant import app


def _count(task: str, value: Any = None, once: bool = False) -> None:
    """The effect hook: the server-side ledger, with its idempotency key when ``once``."""
    (effect_once if once else effect)(task, value)


def _graph(fixed: bool) -> Any:
    return app.build(WorkloadContext(checkpointer=None, effect_hook=_count), fixed=fixed)


def stock(config: Any = None) -> Any:
    """The assistant as written (``app.stock``'s graph), for langgraph.json."""
    return _graph(fixed=False)


def fixed(config: Any = None) -> Any:
    """The assistant fixed (``app.fixed``'s graph: one approval per task, idempotency keys), for langgraph.json."""
    return _graph(fixed=True)
