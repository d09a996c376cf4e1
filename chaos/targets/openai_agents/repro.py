"""``chaos repro`` for the Agents SDK: an EO violation of a kill sweep as a standalone script
(the SDK only, no chaos), for an upstream report (standard library only).

``repro_script(scenario, point, prop)`` returns ``(summary, script text, pins)`` or raises
``ValueError`` saying what it cannot write (``chaos.repro`` turns that into its one-line refusal).
Scope: the built-in ``gate_after_interrupt``, an EO (or, with the SDK's ``SQLiteSession``, PC)
violation at a kill point (``effect(task=pre|gate|end):after``, ``save_state(final_output):before``;
with backend ``sqlite_session`` also the session's writes, ``session.add_items(n=N,kind=K):before|after#M``). The script: a forked child runs to the approval, saves
``to_state().to_json()`` to a file, restores it, approves and runs, and SIGKILLs itself at the
point's M-th pass (before it would save), as chaos's victim does; the parent confirms the kill,
restores the same file in a fresh process and approves again (with the same session; killed before
the approval was saved, it continues from the session), and counts the tools' effects (one fsynced
line each) and the session's outputs per call id. It exits 1 printing ``REPRODUCED`` when a tool
fired twice or the session holds two outputs for one call.
Whatever the cell's blob store (file, SQLite row, Postgres row), the script keeps the blob in a
file: the finding does not depend on where the app keeps it. A race's CO violation (``race_script``): the run pauses and saves once; k forked processes,
released together, each restore the saved state, approve and run.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chaos.repro import ReproFacts

POINTS = re.compile(r"^(effect\(task=(pre|gate|end)\):after|save_state\(final_output\):before)#(1)$")
# the SDK session's writes (backend sqlite_session): the boundary's name and the pass it was killed at
SESSION_POINTS = re.compile(r"^(session\.add_items\(n=\d+,kind=[a-z_+]+\):(?:before|after))#(\d+)$")

SCRIPT = '''"""@SUMMARY@

Standalone: needs only openai-agents (@VERSION@); no network, no API key (the SDK's ScriptedModel).
Found by chaos (trial @TRIAL@, @WHERE@). Exit 1 and REPRODUCED when the approved tool fired
twice (after a crash and a resume of the saved state, or by processes approving it at once), or the
session holds two outputs for its call.
"""
import asyncio, collections, json, os, shutil, signal, sys, tempfile
from agents import Agent, Runner, RunState, SQLiteSession, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)
WORK = tempfile.mkdtemp(prefix="openai-agents-repro-")
STATE, LEDGER = os.path.join(WORK, "state.json"), os.path.join(WORK, "effects.txt")
SESSION_DB = os.path.join(WORK, "session.sqlite") if @SESSION@ else None
KILL_AT, KILL_NTH, PASSES = None, @NTH@, collections.Counter()
RACE_K = @RACE_K@  # > 1: no kill; k processes approve the one saved state at once
PLAN = [("pre", "call_pre"), ("gate", "call_gate"), ("end", "call_end")]


def respond(call):
    done = {i.get("call_id") for i in call.input if isinstance(i, dict) and i.get("type") == "function_call_output"}
    for name, cid in PLAN:
        if cid not in done:
            return [function_call(name, {}, call_id=cid)]
    return [assistant_message("done")]


def passed(name):
    """A boundary passed: SIGKILL this process at the chosen pass of the chosen one."""
    PASSES[name] += 1
    if name == KILL_AT and PASSES[name] == KILL_NTH:
        os.kill(os.getpid(), signal.SIGKILL)


def effect(task):
    fd = os.open(LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (task + "\\n").encode()); os.fsync(fd); os.close(fd)
    passed(f"effect(task={task}):after")


class Session(SQLiteSession):
    """The SDK's SQLiteSession, each write named by what it writes."""

    async def add_items(self, items):
        kinds = "+".join(sorted({str(i.get("type") or i.get("role") or "item") for i in items}))
        passed(f"session.add_items(n={len(items)},kind={kinds}):before")
        await super().add_items(items)
        passed(f"session.add_items(n={len(items)},kind={kinds}):after")


def session():
    return Session("thread", SESSION_DB) if SESSION_DB else None


def tool(name, approval=False):
    async def body() -> str:
        effect(name)
        return name + " done"
    return function_tool(body, name_override=name, needs_approval=approval)


def agent():
    model = ScriptedModel([ModelStep.respond(respond)] * 32)
    return Agent(name="approver", model=model, tools=[tool("pre"), tool("gate", True), tool("end")])


def save(result):
    if not result.interruptions:
        passed("save_state(final_output):before")
    tmp = f"{STATE}.{os.getpid()}.tmp"  # one per process: racing savers each rename their own
    with open(tmp, "w") as f:
        json.dump(result.to_state().to_json(), f)
    os.replace(tmp, STATE)


async def pause():
    save(await Runner.run(agent(), "go", session=session()))


async def approve():
    a = agent()
    state = await RunState.from_json(a, json.load(open(STATE)))
    for item in state.get_interruptions():
        state.approve(item)
    save(await Runner.run(a, state, session=session()))


async def from_session():
    """Killed before the approval was saved: the app continues the conversation its session holds."""
    save(await Runner.run(agent(), [], session=session()))


async def life():
    """The run's whole life in one process: to the approval (saved), then approved."""
    await pause()
    await approve()


def child(fn):
    """Run ``fn`` in this forked child and leave (never through the parent's clean-up)."""
    try:
        asyncio.run(fn())
    except BaseException:
        import traceback

        traceback.print_exc()
        os._exit(1)
    os._exit(0)


def in_child(fn, kill_at=None):
    pid = os.fork()
    if pid == 0:
        global KILL_AT
        KILL_AT = kill_at
        child(fn)
    return os.waitpid(pid, 0)[1]


def session_outputs():
    if not SESSION_DB:
        return {}
    items = asyncio.run(SQLiteSession("thread", SESSION_DB).get_items())
    return dict(collections.Counter(i.get("call_id") for i in items if i.get("type") == "function_call_output"))


def race(k):
    """k processes restore the one saved state and approve it at once (released together by a pipe)."""
    r, w = os.pipe()
    pids = []
    for _ in range(k):
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)
            child(approve)
        pids.append(pid)
    os.close(r)
    os.write(w, b"go" * k)
    os.close(w)
    for pid in pids:
        os.waitpid(pid, 0)


def run():
    if RACE_K > 1:
        in_child(pause)
        race(RACE_K)
        return verdict()
    status = in_child(life, @POINT_NAME@)
    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
        print("the approving process was not killed at", @POINT_NAME@); return 2
    if os.path.exists(STATE):
        in_child(approve)  # a fresh process resumes the saved state, as the app would
    elif SESSION_DB:
        in_child(from_session)  # nothing saved yet: the app continues from the SDK's session
    else:
        print("killed before the approval was saved: nothing to resume"); return 2
    return verdict()


def verdict():
    effects = open(LEDGER).read().split()
    outputs = session_outputs()
    print(f"gate fired {effects.count('gate')} time(s); effects: {effects}")
    if SESSION_DB:
        print(f"the session's tool outputs per call id: {outputs}")
    twice = sorted({e for e in effects if effects.count(e) > 1} | {c for c, n in outputs.items() if n > 1})
    if twice:
        print(f"fired or recorded more than once: {', '.join(twice)}")
        print("REPRODUCED"); return 1
    return 0


def main():
    try:
        return run()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)  # the saved state and effects live only as long as the script


if __name__ == "__main__":
    sys.exit(main())
'''


def script(facts: ReproFacts) -> tuple[str, str]:
    """The standalone script for one violating trial: ``(summary, text)``."""
    trial_id, point, versions = facts.trial_id, facts.point, facts.versions
    if facts.kind == "race":
        return race_script(facts)
    session = facts.backend == "sqlite_session"
    if facts.property not in ("EO", "PC") or facts.workload != "gate_after_interrupt":
        raise ValueError(
            f"repro writes the Agents SDK's EO and PC violations of gate_after_interrupt only, not {facts.property} of {facts.workload}"
        )
    m = POINTS.match(str(point or "")) or (SESSION_POINTS.match(str(point or "")) if session else None)
    if m is None:
        raise ValueError(
            "repro writes a kill at a tool's effect or a save (effect(task=pre|gate|end):after#1, save_state(final_output):before#1"
            + (", session.add_items(...):before|after#N" if session else "")
            + f"), not {point!r}"
        )
    if m.re is POINTS and m.group(2) == "pre" and not session:
        raise ValueError(
            "a kill at pre's effect (before the approval is saved) is written with the SDK's SQLiteSession only (backend "
            "sqlite_session): the script keeps no other session"
        )
    summary = "The Agents SDK runs an approved tool again when a saved RunState is resumed after a crash before the app saved the new state"
    if session:
        summary += " (the SDK's SQLiteSession holding the conversation)"
    version = versions.get("openai-agents", "")
    text = SCRIPT
    for key, value in {
        "@SUMMARY@": summary,
        "@VERSION@": version or "any",
        "@TRIAL@": trial_id,
        "@POINT@": m.group(1),
        "@POINT_NAME@": repr(m.group(1)),
        "@NTH@": m.group(m.lastindex or 1),
        "@WHERE@": f"kill point {m.group(1)}, pass {m.group(m.lastindex or 1)}",
        "@SESSION@": repr(session),
        "@RACE_K@": "0",
    }.items():
        text = text.replace(key, value)
    return summary, text


def race_script(facts: ReproFacts) -> tuple[str, str]:
    """A race's CO violation: k processes restoring the one saved state and approving it at once."""
    if facts.property != "CO" or facts.workload != "gate_after_interrupt" or facts.k < 2:
        raise ValueError(
            f"repro writes a race's CO violation of gate_after_interrupt with k >= 2, not {facts.property} of {facts.workload}"
        )
    session = facts.backend == "sqlite_session"
    summary = f"{facts.k} processes restoring one saved Agents SDK RunState and approving it each run the approved tool"
    if session:
        summary += " (the SDK's SQLiteSession holding the conversation)"
    text = SCRIPT
    for key, value in {
        "@SUMMARY@": summary,
        "@VERSION@": facts.versions.get("openai-agents", "") or "any",
        "@TRIAL@": facts.trial_id,
        "@WHERE@": f"a race of k={facts.k}",
        "@POINT_NAME@": "None",
        "@NTH@": "0",
        "@SESSION@": repr(session),
        "@RACE_K@": str(facts.k),
    }.items():
        text = text.replace(key, value)
    return summary, text
