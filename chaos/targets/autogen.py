"""AutoGen AgentChat adapter (racer side): a round-robin team saved after every turn.

AgentChat's persistence API is ``team.save_state()`` / ``team.load_state(state)``: a dict the
application stores. Its docs warn that saving while a team runs may be inconsistent and advise
saving after it stops, so this adapter runs the team one turn at a time (``max_turns=1``) and
saves the team's state after each turn into a JSON file replaced atomically. Barriers:
``save(turn=<agent>):before/after``. The saved document also carries what the application knows
then: the tasks whose turns finished (the durable frontier), whether the team waits for a human
(the asking agent spoke), whether the run ended (the last agent spoke).

A workload with ``tamper`` (``invalid_type``) has the store write a schema-breaking value into the
saved team state from a given agent's turn on (``set_path``), below the framework.

Resume forms: ``none`` -> ``load_state`` + ``run()`` with no task (AgentChat's "continue");
``input`` -> a new team run with the original task on a fresh team; ``command`` -> ``load_state`` +
``run(task=<the human's answer>)``.
"""

from __future__ import annotations

from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger
from chaos.racer.protocol import Action, ActionOutcome, InspectResult, RacerSpec
from chaos.targets.base import NothingSaved, error_of
from chaos.targets.common import AsyncSession, outcome
from chaos.workloads import build_workload

MAX_TURNS_PER_ACTION = 32


UNSUPPORTED_OPS = "AgentChat has no checkpoint ids or fork operation (save_state returns the latest state)"


class NoSavedState(NothingSaved):
    """Resume asked for, but no team state was ever saved for this run."""


def set_path(doc: Any, path: str, value: Any) -> None:
    """Set ``value`` at a dotted ``path`` (list items by index) of a JSON document, in place."""
    *head, last = path.split(".")
    for part in head:
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    if isinstance(doc, list):
        doc[int(last)] = value
    else:
        doc[last] = value


class AutoGenSession(AsyncSession):
    unsupported_ops = UNSUPPORTED_OPS
    store_suffix = ".team.json"

    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from autogen_agentchat.teams import RoundRobinGroupChat

        from chaos.workloads.autogen import BUILTIN, AutoGenWorkload

        super().__init__(spec, barrier, ledger)
        self.workload = built = build_workload(spec, self.recorder, BUILTIN, AutoGenWorkload)
        self.team = RoundRobinGroupChat(built.participants, max_turns=1)
        self.completed: list[str] = []

    async def _turns(self, task: Any) -> ActionOutcome:
        w = self.workload
        for _ in range(MAX_TURNS_PER_ACTION):
            result = await self.team.run(task=task)
            task = None
            speakers = [m.source for m in result.messages if m.source != "user"]
            speaker = speakers[-1] if speakers else "user"
            if speaker in w.tasks:
                self.completed.append(w.tasks[speaker])
            ended, awaiting = speaker == w.last, speaker == w.pause_after
            self.seq += 1
            state = await self.team.save_state()
            if w.tamper and w.tamper[0] in self.completed:
                set_path(state, w.tamper[1], w.tamper[2])
            self.store.save(
                f"turn={speaker}",
                {"seq": self.seq, "completed": list(self.completed), "awaiting_input": awaiting, "ended": ended, "team": state},
            )
            if ended:
                return outcome("done", self.recorder.observed)
            if awaiting:
                return outcome("interrupted", self.recorder.observed, interrupts=[speaker])
        raise RuntimeError(f"the team did not end within {MAX_TURNS_PER_ACTION} turns")

    async def _perform(self, action: Action) -> ActionOutcome:
        from autogen_agentchat.messages import TextMessage

        op, form = action.get("op", "run"), action.get("form", "input")
        if op == "run" or form == "input":
            self.seq = (self.store.load() or {}).get("seq", 0)
            self.completed = []
            return await self._turns(self.workload.task)
        doc = self.store.load()
        if doc is None:
            raise NoSavedState(
                "nothing to continue: the kill came before the first save, and AgentChat persists nothing itself "
                f"(the application saves team.save_state() after a turn; none at {self.store.path.name})"
            )
        self.seq, self.completed = doc["seq"], list(doc["completed"])
        if form == "none" and doc.get("awaiting_input"):
            return outcome("interrupted", self.recorder.observed, interrupts=["awaiting human"])
        await self.team.load_state(doc["team"])
        if form == "none":
            return await self._turns(None)
        if form == "command":
            return await self._turns(TextMessage(content=str(action.get("value")), source="user"))
        raise ValueError(f"unknown resume form {form!r}")

    def inspect(self) -> InspectResult:
        try:
            doc = self.store.load()
        except Exception as exc:
            return {"checkpoints": None, "error": error_of(exc)}
        if doc is None:
            return {
                "checkpoints": 0,
                "head_step": None,
                "next": [],
                "completed_tasks": [],
                "pending_interrupts": 0,
                "ended": False,
                "error": None,
            }
        awaiting = bool(doc.get("awaiting_input"))
        return {
            "checkpoints": doc["seq"],
            "head_step": doc["seq"],
            "next": [] if doc.get("ended") else ["human"] if awaiting else ["next speaker"],
            "completed_tasks": sorted(set(doc["completed"])),
            "pending_interrupts": 1 if awaiting else 0,
            "ended": bool(doc.get("ended")),
            "values": doc.get("team"),
            "error": None,
        }

    def close(self) -> None:
        self.aio.close()


def open_session(spec: RacerSpec, barrier: BarrierClient, ledger: Ledger) -> AutoGenSession:
    return AutoGenSession(spec, barrier, ledger)


# For warm racers (chaos.racer.forkserver): importing AgentChat starts no thread, sets no event loop and
# opens nothing. The team (and its runtime) is made by the racer, never here.
PRELOAD = ("autogen_agentchat.teams", "autogen_agentchat.messages", "chaos.workloads.autogen")


def prewarm(only: str | None = None) -> None:
    """Build each built-in workload's agents once (replayed model clients; nothing runs)."""
    from chaos.targets.common import prewarm_workloads
    from chaos.workloads.autogen import BUILTIN

    prewarm_workloads("autogen", BUILTIN, only)
