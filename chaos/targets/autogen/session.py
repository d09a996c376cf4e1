"""AutoGen AgentChat adapter (racer side): a team saved after every turn.

AgentChat's persistence API is ``team.save_state()`` / ``team.load_state(state)``: a dict the
application stores. Its docs warn that saving while a team runs may be inconsistent and advise
saving after it stops, so this adapter runs the team one turn at a time (``max_turns=1``) and
saves the team's state after each turn into a JSON file replaced atomically. Barriers:
``save(turn=<agent>):before/after``. The saved document also carries what the application knows
then: the tasks whose turns finished (the durable frontier), whether the team waits for a human
(the asking agent spoke), whether the run ended (the last agent spoke).

A workload with ``tamper`` (``invalid_type``) has the store write a schema-breaking value into the
saved team state from a given agent's turn on (``set_path``), below the framework.

The team is the workload's (``AutoGenWorkload.team(max_turns=1)``: a ``RoundRobinGroupChat``, a
``Swarm``, ...) or a ``RoundRobinGroupChat`` of its participants. The run waits for a human after a
turn by ``pause_after`` or after a ``HandoffMessage`` to the human (``user``); it has ended after a
turn by ``last``, or, with no ``last``, when the team's own termination condition stopped it with no
handoff to the human (a team with several ends is judged by its own condition). Every effect row
names its turn (``turn3``) and ``inspect`` reports the turns saved (``completed_task_ids``), so an
agent's next turn is progress and the same turn run again after a crash is not.

Resume forms: ``none`` -> ``load_state`` + ``run()`` with no task (AgentChat's "continue");
``input`` -> a new team run with the original task on a fresh team; ``command`` -> ``load_state`` +
``run(task=<the human's answer>)``: a ``HandoffMessage`` back to the agent that handed off, else a
``TextMessage`` from ``user``; with ``answers`` (a plan), the n-th pause gets the n-th answer,
pause after pause, the pause's number read from the saved document; ``app`` -> the team's own
``recover(ctx, thread)`` (``chaos.workloads.autogen.AutoGenThread``), called again at each pause
the run reaches while an ``answers`` plan has an answer for it (``thread.answer``). A saved run that ended is
nothing to resume, answered or not (outcome ``done`` with ``nothing_to_resume``): a loaded finished
team would go round again.

A task given to a team that waits for a human is its answer: an approval, listed in the action's
outcome (``approvals``), whoever gives it (the adapter by the plan, or a team's own driver through
``thread.run(task)``); ``run()`` with no task on a waiting team is a recovery, and on a round-robin
team it goes on to the next agent, past the pause, so approval authority (AA) is judged.
"""

from __future__ import annotations

from typing import Any

from chaos.racer.barrier import BarrierClient
from chaos.racer.ledger import Ledger, Where
from chaos.racer.protocol import Action, ActionOutcome, InspectResult, RacerSpec
from chaos.targets.autogen import INFO
from chaos.targets.base import NothingSaved, Unsupported, error_of
from chaos.targets.common import AsyncSession, answer_by_plan, answer_when_asked, call_recovery, outcome, recover_by_plan, recovery_context
from chaos.workloads import WorkloadContext, build_workload

MAX_TURNS_PER_ACTION = 32
FINISHED = (
    "the saved run had ended: nothing to resume (the driver does not run a finished run again; AgentChat would load it and go round again)"
)
ADDRESSED = "an answer cannot be addressed to one pause: AgentChat's next task carries no pause id, it goes to whoever speaks next (resume_by: interrupt is LangGraph's)"
MAX_ANSWERS = 100  # pauses a plan answers in one call (a team that always asks again)


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
    unsupported_ops = INFO.unsupported["fork"]  # run and resume only: no checkpoints to list, address or fork from
    store_suffix = ".team.json"

    def __init__(self, spec: RacerSpec, barrier: BarrierClient, ledger: Ledger):
        from autogen_agentchat.teams import RoundRobinGroupChat

        from chaos.workloads.autogen import BUILTIN, AutoGenWorkload

        super().__init__(spec, barrier, ledger)
        self.recorder.where = self._where
        self.spec = spec
        self.workload = built = build_workload(spec, self.recorder, BUILTIN, AutoGenWorkload)
        if built.team is not None:
            self.team = built.team(1)
        elif built.participants:
            self.team = RoundRobinGroupChat(built.participants, max_turns=1)
        else:
            raise TypeError("an AutoGenWorkload needs participants or team (a callable team(max_turns))")
        self.completed: list[str] = []
        self.turns: list[str] = []  # the turns recorded complete (turn1, turn2, ...): their identities
        self.pauses = 0
        self.awaiting = False  # the team, as loaded or last run, waits for a human
        self.last: ActionOutcome | None = None  # what the last run of turns returned (for app recoveries)

    def _where(self) -> Where:
        """The turn running now: the one after the last saved (each turn is saved once it ends)."""
        return {"node": None, "namespace": None, "task_id": f"turn{len(self.turns) + 1}", "outside_task": False}

    def _begin(self, doc: dict | None) -> None:
        """Pick up the run where ``doc`` (the saved document, None for a new run) left it. A team
        whose run had ended goes round again from its first turn when run on: its turns count
        from the first again (the same turns, run twice)."""
        self.completed = [] if doc is None else list(doc["completed"])
        self.turns = [] if doc is None or doc.get("ended") else list(doc.get("turns") or [])
        self.pauses = 0 if doc is None else int(doc.get("pauses", 1 if doc.get("awaiting_input") else 0))
        self.awaiting = bool((doc or {}).get("awaiting_input"))
        if doc is not None:
            self.seq = doc["seq"]

    async def _turns(self, task: Any) -> ActionOutcome:
        from autogen_agentchat.messages import BaseChatMessage, HandoffMessage

        w = self.workload
        if task is not None and self.awaiting:  # a task given to a team that waits for a human is its answer
            self.recorder.note_approval()
        for _ in range(MAX_TURNS_PER_ACTION):
            result = await self.team.run(task=task)
            task = None
            said = [m for m in result.messages if isinstance(m, BaseChatMessage) and m.source != w.human]
            spoke = [m for m in result.messages if getattr(m, "source", "user") not in ("user", w.human)]
            speaker = spoke[-1].source if spoke else "user"
            last_said = said[-1] if said else None
            handoff = last_said.source if isinstance(last_said, HandoffMessage) and last_said.target == w.human else None
            stopped = bool(result.stop_reason) and not str(result.stop_reason).startswith("Maximum number of turns")
            if speaker in w.tasks:
                self.completed.append(w.tasks[speaker])
            awaiting = self.awaiting = speaker == w.pause_after or handoff is not None
            ended = not awaiting and (speaker == w.last or (w.last is None and stopped))
            self.seq += 1
            self.turns.append(f"turn{len(self.turns) + 1}")
            if awaiting:
                self.pauses += 1
            state = await self.team.save_state()
            if w.tamper and w.tamper[0] in self.completed:
                set_path(state, w.tamper[1], w.tamper[2])
            self.store.save(
                f"turn={speaker}",
                {
                    "seq": self.seq,
                    "completed": list(self.completed),
                    "turns": list(self.turns),
                    "awaiting_input": awaiting,
                    "handoff_from": handoff,
                    "question": getattr(last_said, "content", None) if awaiting else None,
                    "pauses": self.pauses,
                    "ended": ended,
                    "stop_reason": result.stop_reason,
                    "team": state,
                },
            )
            if ended:
                self.last = outcome("done", self.recorder.observed)
                return self.last
            if awaiting:
                self.last = outcome("interrupted", self.recorder.observed, interrupts=[speaker])
                return self.last
        raise RuntimeError(f"the team did not end within {MAX_TURNS_PER_ACTION} turns")

    def _answer(self, doc: dict, value: Any) -> Any:
        """The human's answer as the app sends it: back to the agent that handed off, else a user message."""
        from autogen_agentchat.messages import HandoffMessage, TextMessage

        if doc.get("handoff_from"):
            return HandoffMessage(source=self.workload.human, target=doc["handoff_from"], content=str(value))
        return TextMessage(content=str(value), source="user")

    def _saved(self) -> dict:
        doc = self.store.load()
        if doc is None:
            raise NoSavedState(
                "nothing to continue: the kill came before the first save, and AgentChat persists nothing itself "
                f"(the application saves team.save_state() after a turn; none at {self.store.path.name})"
            )
        return doc

    async def _perform(self, action: Action) -> ActionOutcome:
        op, form = action.get("op", "run"), action.get("form", "input")
        if action.get("interrupt"):
            raise Unsupported(ADDRESSED)
        if op == "run" or form == "input":
            self._begin(None)
            self.seq = (self.store.load() or {}).get("seq", 0)
            return await self._turns(self.workload.task)
        if form == "app":
            return await self._recover(action.get("recover") or "", action.get("plan"))
        doc = self._saved()
        self._begin(doc)
        if doc.get("ended"):  # a finished run is not run again, answered or not: nothing to resume
            await self.team.load_state(doc["team"])  # read as a resume would: a refusal is the framework's
            return outcome("done", self.recorder.observed, nothing_to_resume=FINISHED)
        if "answers" in action:
            return await self._answer_plan(action, doc)
        if form == "none" and doc.get("awaiting_input"):
            return outcome("interrupted", self.recorder.observed, interrupts=["awaiting human"])
        await self.team.load_state(doc["team"])
        if form == "none":
            return await self._turns(None)
        if form == "command" and action.get("asked_only"):  # the team goes on first when it was not asking
            return await answer_when_asked(
                doc,
                action.get("value"),
                go_on=lambda d: self._turns(None),
                answer=lambda d, value: self._turns(self._answer(d, value)),
                saved=self._saved,
                recorder=self.recorder,
            )
        if form == "command":
            return await self._turns(self._answer(doc, action.get("value")))
        raise ValueError(f"unknown resume form {form!r}")

    async def _answer_plan(self, action: Action, doc: dict) -> ActionOutcome:
        """Answer pause after pause (``answer_by_plan``, ``chaos.targets.common``); the pause's number
        is read from the saved document, the team's state loaded once before the first call."""
        await self.team.load_state(doc["team"])

        async def answer(d: dict, value: Any) -> ActionOutcome:
            return await self._turns(self._answer(d, value))

        return await answer_by_plan(
            action.get("answers"),
            doc,
            pause_number=lambda: self.pauses,
            workload_answer=self.workload.answer,
            workload_type="AutoGenWorkload",
            no_question="",
            go_on=lambda d: self._turns(None),
            answer=answer,
            saved=self._saved,
            recorder=self.recorder,
            waiting="awaiting human",
            most=MAX_ANSWERS,
        )

    async def _recover(self, ref: str, plan: list[Any] | None = None) -> ActionOutcome:
        """The team's own recovery: ``recover(ctx, thread)`` from ``package.module:recover``, once or
        once per pause an answer plan answers (``recover_by_plan``, ``chaos.targets.common``)."""
        return await recover_by_plan(
            ref,
            plan,
            load=self.store.load,
            recorder=self.recorder,
            once=self._recover_once,
            waiting="awaiting human",
            most=MAX_ANSWERS,
        )

    async def _recover_once(self, ref: str, doc: dict | None, plan: list[Any], answer: Any) -> ActionOutcome:
        from chaos.workloads.autogen import AutoGenThread

        self._begin(doc)
        self.last = None
        thread = AutoGenThread(
            thread_id=self.thread_id,
            team=self.team,
            task=self.workload.task,
            saved=(doc or {}).get("team"),
            awaiting_input=bool((doc or {}).get("awaiting_input")),
            handoff_from=(doc or {}).get("handoff_from"),
            question=(doc or {}).get("question"),
            pauses=self.pauses,
            ended=bool((doc or {}).get("ended")),
            run=self._turns,
            answers=plan,
            answer=answer,
        )
        failed = await call_recovery(ref, self._context, thread, self.recorder)
        if failed is not None:
            return failed
        if self.last is not None:
            self.last["recovered_by"] = ref
            return self.last
        if doc is None:
            raise NoSavedState("nothing to continue: the recovery ran no turn, and no team state was ever saved")
        waiting = bool(doc.get("awaiting_input"))  # the recovery ran nothing: the run is as it was saved
        return outcome("interrupted" if waiting else "done", self.recorder.observed, recovered_by=ref, ran=False)

    def _context(self) -> WorkloadContext:
        return recovery_context(self.spec, self.recorder, self.thread_id)

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
                "completed_task_ids": [],
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
            "completed_task_ids": list(doc.get("turns") or []),
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
PRELOAD_OPTIONAL: tuple[str, ...] = ()  # every module its racers import is there whatever the backend


def prewarm(only: str | None = None) -> None:
    """Build each built-in workload's agents once (replayed model clients; nothing runs)."""
    from chaos.targets.common import prewarm_workloads
    from chaos.workloads.autogen import BUILTIN

    prewarm_workloads("autogen", BUILTIN, only)
