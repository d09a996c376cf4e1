"""``chaos repro`` for the Agents SDK: an EO violation of a kill sweep as a standalone script
(the SDK only, no chaos), for an upstream report (standard library only).

``repro_script(scenario, point, prop)`` returns ``(summary, script text, pins)`` or raises
``ValueError`` saying what it cannot write (``chaos.repro`` turns that into its one-line refusal).
Scope: the built-in ``gate_after_interrupt``, an EO violation at a kill point of the approved run
(``effect(task=gate|end):after``, ``save_state(final_output):before``). The script: a first process
runs to the approval and saves ``to_state().to_json()`` to a file; a forked child restores it,
approves and runs, and SIGKILLs itself at the point (before it would save); the parent confirms the
kill, restores the same file in a fresh process and approves again, and counts the gate's effects
(one fsynced line each). It exits 1 printing ``REPRODUCED`` when the gate fired twice.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chaos.repro import ReproFacts

POINTS = re.compile(r"^(effect\(task=(gate|end)\):after|save_state\(final_output\):before)#1$")

SCRIPT = '''"""@SUMMARY@

Standalone: needs only openai-agents (@VERSION@); no network, no API key (the SDK's ScriptedModel).
Found by chaos (trial @TRIAL@, kill point @POINT@). Exit 1 and REPRODUCED when the approved tool
fired twice after a crash and a resume of the saved state.
"""
import asyncio, json, os, shutil, signal, sys, tempfile
from agents import Agent, Runner, RunState, function_tool, set_tracing_disabled
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

set_tracing_disabled(True)
WORK = tempfile.mkdtemp(prefix="openai-agents-repro-")
STATE, LEDGER = os.path.join(WORK, "state.json"), os.path.join(WORK, "effects.txt")
KILL_AT = os.environ.get("KILL_AT")
PLAN = [("pre", "call_pre"), ("gate", "call_gate"), ("end", "call_end")]


def respond(call):
    done = {i.get("call_id") for i in call.input if isinstance(i, dict) and i.get("type") == "function_call_output"}
    for name, cid in PLAN:
        if cid not in done:
            return [function_call(name, {}, call_id=cid)]
    return [assistant_message("done")]


def effect(task):
    fd = os.open(LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (task + "\\n").encode()); os.fsync(fd); os.close(fd)
    if KILL_AT == f"effect(task={task}):after":
        os.kill(os.getpid(), signal.SIGKILL)


def tool(name, approval=False):
    async def body() -> str:
        effect(name)
        return name + " done"
    return function_tool(body, name_override=name, needs_approval=approval)


def agent():
    model = ScriptedModel([ModelStep.respond(respond)] * 32)
    return Agent(name="approver", model=model, tools=[tool("pre"), tool("gate", True), tool("end")])


def save(result):
    if KILL_AT == "save_state(final_output):before" and not result.interruptions:
        os.kill(os.getpid(), signal.SIGKILL)
    with open(STATE + ".tmp", "w") as f:
        json.dump(result.to_state().to_json(), f)
    os.replace(STATE + ".tmp", STATE)


async def pause():
    save(await Runner.run(agent(), "go"))


async def approve():
    a = agent()
    state = await RunState.from_json(a, json.load(open(STATE)))
    for item in state.get_interruptions():
        state.approve(item)
    save(await Runner.run(a, state))


def in_child(fn, kill_at=None):
    pid = os.fork()
    if pid == 0:
        global KILL_AT
        KILL_AT = kill_at
        asyncio.run(fn())
        os._exit(0)
    return os.waitpid(pid, 0)[1]


def run():
    in_child(pause)
    status = in_child(approve, @POINT_NAME@)
    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
        print("the approving process was not killed at", @POINT_NAME@); return 2
    in_child(approve)  # a fresh process resumes the saved state, as the app would
    fired = open(LEDGER).read().split().count("gate")
    print(f"gate fired {fired} time(s); effects: {open(LEDGER).read().split()}")
    if fired > 1:
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
    if facts.property != "EO" or facts.workload != "gate_after_interrupt":
        raise ValueError(
            f"repro writes the Agents SDK's EO violations of gate_after_interrupt only, not {facts.property} of {facts.workload}"
        )
    if facts.backend == "sqlite_session":
        raise ValueError("repro writes the app's blob store only; with the SDK's SQLiteSession it is not written yet")
    m = POINTS.match(str(point or ""))
    if m is None:
        raise ValueError(
            f"repro writes a kill in the approved run only (effect(task=gate|end):after#1, save_state(final_output):before#1), not {point!r}"
        )
    summary = "The Agents SDK runs an approved tool again when a saved RunState is resumed after a crash before the app saved the new state"
    version = versions.get("openai-agents", "")
    text = SCRIPT
    for key, value in {
        "@SUMMARY@": summary,
        "@VERSION@": version or "any",
        "@TRIAL@": trial_id,
        "@POINT@": m.group(1),
        "@POINT_NAME@": repr(m.group(1)),
    }.items():
        text = text.replace(key, value)
    return summary, text
