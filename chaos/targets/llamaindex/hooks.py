"""The orchestrator half of the llamaindex package: the capabilities of ``chaos.targets.hooks`` it has.

* ``dry_run_problem`` (``ChecksDryRun``): LlamaIndex's ``Context.to_dict`` skips the state keys it
  knows it cannot serialise (``UnserializableKeyWarning``: a ``FunctionAgent``'s ``memory``), and
  a run restored from that document fails when it reads one (``ValueError: Path 'memory' not found
  in state``). The app is wired right (by hand, the same agent answered in its own process
  finishes); it is the framework that drops the state. The preflight refuses such a run with that
  sentence, naming the key and what a team can do, instead of "did not accept the answer: fix the
  workload".

Orchestrator side: never imported by a racer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chaos.racer.protocol import RacerResult
    from chaos.scenario.model import Cell

__all__ = ["dry_run_problem"]


def dry_run_problem(cell: Cell, result: RacerResult) -> str | None:
    """A restored run that failed reading a state key LlamaIndex left out of the saved context: one
    sentence naming LlamaIndex's behaviour and the way round it; else None."""
    for o in result.get("outcomes") or []:
        err: dict[str, object] = dict(o.get("error") or {})
        message = str(err.get("message") or "")
        lost = [k for k in o.get("dropped_state") or [] if f"'{k}'" in message or f'"{k}"' in message]
        if o.get("status") != "error" or not lost:
            continue
        keys = ", ".join(repr(k) for k in lost)
        return (
            f"cannot be measured: LlamaIndex dropped the state key {keys} when the context was saved (Context.to_dict "
            "skips it as a known unserializable key, UnserializableKeyWarning), and the run restored from that save "
            f"failed reading it ({err.get('type')}: {message[:200]}). This is the framework's behaviour, not a wiring "
            "error (a FunctionAgent's memory is not saved with its context): every recovery from a save would fail "
            "the same way. To measure the app, resume with its own driver (resume: app:package.module:recover) that "
            f"sets {keys} again on the restored run's context before answering, as LlamaIndex's warning asks"
        )
    return None
