"""``chaos repro`` for ADK: a violating kill-sweep trial as a standalone script (no chaos in it).

Why here: the script is ADK's code, so it lives with the ADK package; ``chaos.repro`` finds it
through ``TargetInfo.repro`` and writes what ``script`` returns. Standard library only (it writes
text). ``script`` promises: for an EO violation of a kill sweep of ``three_step`` or
``gate_after_interrupt`` on ``sqlite`` or ``db_sqlite``, a script that runs the app in a forked child
whose session service (or tool) SIGKILLs its own process at the trial's boundary (named as chaos
names it, with its occurrence), confirms the kill from the exit status, resumes in a fresh process
state as the scenario did, and counts the effects (one fsynced line each): exit 1 and
``REPRODUCED`` when an effect fired twice, else 0. Anything else raises ``ValueError`` with why.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chaos.repro import ReproFacts

WORKLOADS = {"three_step": ["a", "b", "c"], "gate_after_interrupt": ["pre", "gate", "end"]}
BACKENDS = ("sqlite", "db_sqlite")
PINS = ("google-adk",)


def script(facts: ReproFacts) -> tuple[str, str]:
    """(summary, script text) for one kill-sweep trial (``chaos.repro.ScriptWriter``)."""
    workload, backend, point = facts.workload, facts.backend, facts.point
    if facts.property != "EO":
        raise ValueError("the ADK repro writes an EO violation of a kill sweep only")
    if workload not in WORKLOADS:
        raise ValueError(f"the ADK repro writes the built-ins {' and '.join(WORKLOADS)} only, not {workload}")
    if backend not in BACKENDS:
        raise ValueError(f"the ADK repro writes the SQLite session services only ({', '.join(BACKENDS)}), not {backend}")
    if not isinstance(point, str) or not re.fullmatch(r"[A-Za-z0-9_(),=:.#-]{1,200}", point) or " >> " in point:
        raise ValueError("the ADK repro needs a kill point of one crash (crash_depth 1)")
    resume = facts.resume
    if resume != "none" and not resume.startswith("command:"):
        raise ValueError(f"the ADK repro writes resume none or command:<value>, not {resume}")
    params = {
        "PLAN": WORKLOADS[workload],
        "CONFIRM": workload == "gate_after_interrupt",
        "BACKEND": backend,
        "KILL_AT": point,
        "RESUME": resume,
        "FOUND_IN": {"trial": facts.trial_id},
        "VERSIONS": {k: v for k, v in facts.versions.items() if k in ("python", *PINS)},
    }
    text = re.sub(r"@([A-Z_]+)@", lambda m: repr(params[m.group(1)]) if m.group(1) in params else m.group(0), _SCRIPT)
    summary = "ADK runs a tool again when an invocation killed after the tool's effect is resumed"
    return summary, text


_SCRIPT = '''"""Reproduction: Google ADK runs a tool again after a crash and a resume of the invocation.

Found by chaos (FOUND_IN); this script needs only google-adk (and aiosqlite / SQLAlchemy for the
database session service). An LlmAgent with a scripted model calls tools in PLAN (the confirmed one
with require_confirmation=True), each appending one fsynced line to an effects file. A child process
SIGKILLs itself at KILL_AT (a session-service write, named append(author=A,kind=K):before/after with
its occurrence, or effect(task=T):after right after a tool's effect); a fresh process then resumes
as RESUME says (none: run_async(invocation_id=...); command:<v>: answer the pending confirmation
with the invocation id). Exit status 1 and "REPRODUCED": some effect fired twice; 0: not reproduced.
"""

FOUND_IN = @FOUND_IN@
VERSIONS = @VERSIONS@
PLAN = @PLAN@
CONFIRM = @CONFIRM@
BACKEND = @BACKEND@
KILL_AT = @KILL_AT@
RESUME = @RESUME@

import asyncio
import os
import shutil
import signal
import sys
import tempfile
from collections import Counter

from google.adk.agents import LlmAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.tools import FunctionTool, ToolContext
from google.genai import types

WORKDIR = tempfile.mkdtemp(prefix="adk-repro-")
EFFECTS = os.path.join(WORKDIR, "effects.txt")
DB = os.path.join(WORKDIR, "sessions.db")
SEEN: Counter = Counter()


def boundary(label: str) -> None:
    SEEN[label] += 1
    if os.environ.get("ARMED") and f"{label}#{SEEN[label]}" == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)


def effect(task: str, value=None) -> None:
    with open(EFFECTS, "a") as f:
        f.write(f"{task}:{value}\\n" if value is not None else f"{task}\\n")
        f.flush()
        os.fsync(f.fileno())
    boundary(f"effect(task={task}):after")


class Scripted(BaseLlm):
    model: str = "scripted"

    async def generate_content_async(self, llm_request, stream=False):
        done = set()
        for c in llm_request.contents:
            for p in c.parts or []:
                fr = p.function_response
                if fr is not None and fr.name in PLAN and "error" not in (fr.response or {}):
                    done.add(fr.name)
        nxt = next((t for t in PLAN if t not in done), None)
        part = types.Part(text="done") if nxt is None else types.Part(function_call=types.FunctionCall(name=nxt, args={}))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def tool(name: str) -> FunctionTool:
    def run(tool_context: ToolContext) -> dict:
        conf = tool_context.tool_confirmation
        effect(name, conf.payload if conf is not None else None)
        return {"ok": name}

    run.__name__ = name
    run.__doc__ = f"Step {name}."
    return FunctionTool(run, require_confirmation=CONFIRM and name == PLAN[1])


def name_of(event) -> str:
    parts = (event.content.parts if event.content else None) or []
    kind = "empty"
    for p in parts:
        if p.function_call is not None:
            kind = f"call:{p.function_call.name}"
            break
        if p.function_response is not None:
            kind = f"response:{p.function_response.name}"
            break
        if p.text:
            kind = "text"
            break
    delta = ",delta" if event.actions is not None and event.actions.state_delta else ""
    return f"append(author={event.author},kind={kind}{delta})"


def service():
    if BACKEND == "sqlite":
        from google.adk.sessions.sqlite_session_service import SqliteSessionService as Base

        args = (DB,)
    else:
        from google.adk.sessions.database_session_service import DatabaseSessionService as Base

        args = (f"sqlite+aiosqlite:///{DB}",)

    class Killing(Base):
        async def create_session(self, **kw):
            boundary("create_session:before")
            out = await super().create_session(**kw)
            boundary("create_session:after")
            return out

        async def append_event(self, session, event):
            if event.partial:
                return await super().append_event(session, event)
            boundary(name_of(event) + ":before")
            out = await super().append_event(session, event)
            boundary(name_of(event) + ":after")
            return out

    return Killing(*args)


def runner():
    agent = LlmAgent(name="agent", model=Scripted(), instruction="Run the steps.", tools=[tool(t) for t in PLAN])
    app = App(name="repro", root_agent=agent, resumability_config=ResumabilityConfig(is_resumable=True))
    svc = service()
    return Runner(app=app, session_service=svc), svc


def pending(events):
    calls = {}
    for ev in events:
        for p in (ev.content.parts if ev.content else None) or []:
            if p.function_call is not None and p.function_call.name == "adk_request_confirmation":
                calls[p.function_call.id] = ev.invocation_id
            if p.function_response is not None and p.function_response.name == "adk_request_confirmation":
                calls.pop(p.function_response.id, None)
    return next(iter(calls.items()), None)


async def answer(r, svc):
    s = await svc.get_session(app_name="repro", user_id="u", session_id="s")
    call = pending(s.events)
    if call is None:
        return False
    fr = types.FunctionResponse(id=call[0], name="adk_request_confirmation", response={"confirmed": True, "payload": RESUME.split(":", 1)[1]})
    async for _ in r.run_async(user_id="u", session_id="s", invocation_id=call[1], new_message=types.Content(role="user", parts=[types.Part(function_response=fr)])):
        pass
    return True


async def first() -> None:
    r, svc = runner()
    await svc.create_session(app_name="repro", user_id="u", session_id="s")
    async for _ in r.run_async(user_id="u", session_id="s", new_message=types.Content(role="user", parts=[types.Part(text="go")])):
        pass
    if RESUME.startswith("command:"):
        await answer(r, svc)


async def resume() -> None:
    r, svc = runner()
    s = await svc.get_session(app_name="repro", user_id="u", session_id="s")
    if s is None or not s.events:
        return
    if pending(s.events) is None:
        async for _ in r.run_async(user_id="u", session_id="s", invocation_id=s.events[-1].invocation_id):
            pass
    if RESUME.startswith("command:"):
        await answer(r, svc)


def main() -> int:
    try:
        return reproduce()
    finally:
        shutil.rmtree(WORKDIR, ignore_errors=True)  # the parent cleans up; the child was killed


def reproduce() -> int:
    pid = os.fork()
    if pid == 0:
        os.environ["ARMED"] = "1"
        asyncio.run(first())
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
        print(f"the run never reached {KILL_AT}: not reproduced (exit status {status})")
        return 0
    print(f"killed at {KILL_AT}; resuming ({RESUME})")
    asyncio.run(resume())
    lines = open(EFFECTS).read().split() if os.path.exists(EFFECTS) else []
    counts = Counter(lines)
    print("effects:", dict(counts))
    twice = sorted(k for k, n in counts.items() if n > 1)
    if twice:
        print(f"REPRODUCED: {', '.join(twice)} fired more than once")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
