"""Every built-in LangGraph workload, by name: the table the LangGraph adapter builds from.

Why a module of its own: the built-ins live in ``chaos.workloads.langgraph`` (the basic graphs and
the workload types) and in sibling modules (agents sharing state, parallel branches, upgrade pairs,
a growing state) that build with those types. Gathering them here, and not at the bottom of
``chaos.workloads.langgraph``, keeps the siblings and that module from importing each other.
"""

from __future__ import annotations

from chaos.workloads.growing_langgraph import GROWING
from chaos.workloads.langgraph import GRAPHS
from chaos.workloads.parallel_langgraph import PARALLEL
from chaos.workloads.shared_langgraph import SHARED
from chaos.workloads.upgrade_langgraph import UPGRADE_PAIRS

# agents sharing state (the shared_state kind); parallel branches (Send fan-out, parallel tool calls,
# a step that stops at an interrupt); v1/v2 pairs of one approval workflow (a deploy between pause and
# resume); a state that grows every step (a message list, for checkpoint sizes and their bounds)
BUILTIN = {**GRAPHS, **SHARED, **PARALLEL, **UPGRADE_PAIRS, **GROWING}
