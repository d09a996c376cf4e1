"""The orchestrator half of the crewai package: the capabilities of ``chaos.targets.hooks`` it has.

* ``dry_run_problem`` (``ChecksDryRun``): CrewAI persists no "finished" mark, so chaos counts a
  flow finished once one of the workload's ``ends`` completed (``CrewWorkload.ends``; default: the
  last of ``methods``). A flow whose uninterrupted run returned from ``kickoff`` without completing
  one of them (a router that ends in a branch ``ends`` does not name) would be judged waiting at
  every point after the pause (LIVENESS violated, though the run is over): the preflight refuses it,
  naming the method the run finished in and the ends chaos counts.

Orchestrator side: never imported by a racer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chaos.racer.protocol import RacerResult
    from chaos.scenario.model import Cell

__all__ = ["dry_run_problem"]


def dry_run_problem(cell: Cell, result: RacerResult) -> str | None:
    """The uninterrupted run finished (its last call returned, no pause pending) in a method that is
    not one of the workload's ``ends``: one sentence naming both and what to change; else None."""
    outcomes = result.get("outcomes") or []
    after = result.get("inspect_after") or {}
    if not outcomes or outcomes[-1].get("status") != "done" or after.get("ended", True):
        return None  # paused, failed (said elsewhere), or ended where chaos counts an end
    if after.get("pending_interrupts"):
        return None
    declared = (result.get("workload_meta") or {}).get("ends")
    ends = [str(m) for m in declared] if isinstance(declared, list) else []
    saved = after.get("saved_methods") or []
    last = saved[-1] if saved else " + ".join(after.get("completed_tasks") or []) or "?"
    return (
        f"finished its uninterrupted run in method {last!r}, which is not one of its ends ({', '.join(ends) or 'none'}; "
        "CrewWorkload.ends defaults to the last of methods): the baseline finished somewhere chaos does not count as "
        "an end, so every trial would be judged still waiting: name every method the flow can finish in in "
        "CrewWorkload.ends"
    )
