"""``chaos repro`` for the Agent Framework: a kill sweep's EO violation as a script with no chaos in it.

Why: a maintainer of microsoft/agent-framework needs a file they can run with only
``agent-framework-core`` installed. ``chaos.repro`` calls ``script`` (through
``TargetInfo.repro``) with the violating trial's facts and writes what it returns; this module
never reads a run folder and imports nothing of the framework (it only writes text).

The script: the built-in workflow (``three_step`` or ``gate_after_interrupt``) in plain Agent
Framework code over ``FileCheckpointStorage`` in a temporary folder; a child process runs it (and
answers the request, for ``command`` resumes) with a storage whose saves, rename and effects are
named as chaos names them, and SIGKILLs itself at the trial's boundary (with its occurrence); the
parent confirms the kill from the exit status, then a fresh process restores the newest checkpoint
and runs on (answering a pending request with the scenario's value), and every effect is counted
(one fsynced line each). It prints ``REPRODUCED`` and exits 1 when an effect fired twice, else 0.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chaos.repro import ReproFacts

WORKLOADS = ("three_step", "gate_after_interrupt")
PINS = ("agent-framework-core",)


def script(facts: ReproFacts) -> tuple[str, str]:
    """``(summary, script text)`` for the trial; ``ValueError`` with the reason when it cannot be written."""
    property, workload, resume, point, versions = facts.property, facts.workload, facts.resume, facts.point, facts.versions
    if property != "EO":
        raise ValueError(f"the Agent Framework repro writes a kill sweep's EO violation only, not {property}")
    if workload not in WORKLOADS:
        raise ValueError(f"the Agent Framework repro writes the built-in {' and '.join(WORKLOADS)} only, not {workload}")
    if not point or " >> " in point or not re.match(r"^(save|effect)\(.*\):(before|tmp|after)#\d+$", point):
        raise ValueError(f"kill point {point!r} is not one boundary the script can name")
    answer: Any = None
    if resume.startswith("command:"):
        answer = resume.split(":", 1)[1]
    elif resume != "none":
        raise ValueError(f"resume {resume!r}: the script answers a request (command:<value>) or runs on (none)")
    label, _, nth = point.rpartition("#")
    params = {"WORKLOAD": workload, "KILL_AT": label, "NTH": int(nth), "ANSWER": answer, "VERSIONS": versions}
    text = _SCRIPT
    for key, value in params.items():
        text = text.replace(f"@{key}@", repr(value))
    summary = "Agent Framework runs an executor's effect again after a crash before its superstep's checkpoint and a restore"
    return summary, text


_SCRIPT = '''"""Agent Framework: an executor's effect fires again after a SIGKILL before the superstep's checkpoint.

Standalone reproduction (no chaos): pip install agent-framework-core, then python this_file.py.
A child process runs the workflow over FileCheckpointStorage and SIGKILLs itself at one boundary
(a save before it starts, with the temporary file written but not renamed, after the rename; or right
after an executor's effect); a fresh process restores the newest checkpoint and runs on. Exit 1 and
REPRODUCED when an effect fired more often than in a run without the crash.
"""

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from agent_framework import Executor, FileCheckpointStorage, WorkflowBuilder, WorkflowContext, handler, response_handler

WORKLOAD = @WORKLOAD@
KILL_AT = @KILL_AT@
NTH = @NTH@
ANSWER = @ANSWER@
FOUND_WITH = @VERSIONS@
COUNTS = {}


def hit(label):
    COUNTS[label] = COUNTS.get(label, 0) + 1
    if os.environ.get("REPRO_KILL") == "1" and label == KILL_AT and COUNTS[label] == NTH:
        os.kill(os.getpid(), signal.SIGKILL)


def effect(folder, task, value=None):
    fd = os.open(os.path.join(folder, "effects.txt"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, f"{task}{'' if value is None else ':' + str(value)}\\n".encode())
    os.fsync(fd)
    os.close(fd)
    hit(f"effect(task={task}):after")


@dataclass
class Approval:
    prompt: str
    step: str = "gate"


class Step(Executor):
    def __init__(self, id, folder, last=False):
        super().__init__(id=id)
        self.folder, self.last = folder, last

    @handler
    async def run(self, message: str, ctx: WorkflowContext[str, str]) -> None:
        effect(self.folder, self.id)
        if self.last:
            await ctx.yield_output(message + ">" + self.id)
        else:
            await ctx.send_message(message + ">" + self.id)


class Gate(Executor):
    def __init__(self, id, folder):
        super().__init__(id=id)
        self.folder = folder

    @handler
    async def ask(self, message: str, ctx: WorkflowContext[str]) -> None:
        await ctx.request_info(Approval(prompt="approve " + message + "?"), object)

    @response_handler
    async def on_answer(self, original: Approval, answer: object, ctx: WorkflowContext[str]) -> None:
        effect(self.folder, self.id, answer)
        await ctx.send_message(original.step + "=" + str(answer))


def build(folder):
    if WORKLOAD == "three_step":
        chain = [Step("a", folder), Step("b", folder), Step("c", folder, last=True)]
    else:
        chain = [Step("pre", folder), Gate("gate", folder), Step("end", folder, last=True)]
    b = WorkflowBuilder(start_executor=chain[0], name=WORKLOAD)
    for x, y in zip(chain, chain[1:]):
        b = b.add_edge(x, y)
    return b.build()


def targets(wf, m):
    if m.target_id:
        return [m.target_id]
    return sorted({t for g in wf.edge_groups if m.source_id in g.source_executor_ids for t in g.target_executor_ids})


def describe(wf, cp):
    """What a checkpoint records, named as chaos names it (entry=, responses=, superstep=N,...)."""
    msgs = [m for batch in cp.messages.values() for m in batch]
    nxt = sorted({t for m in msgs for t in targets(wf, m)})
    if msgs and all(str(m.source_id).startswith("internal:") for m in msgs):
        kind = "responses" if any(str(getattr(m.type, "value", m.type)) == "response" for m in msgs) else "entry"
        return kind + "=" + "+".join(nxt)
    pending = sorted({e.source_executor_id for e in cp.pending_request_info_events.values()})
    parts = [f"superstep={cp.iteration_count}"]
    if nxt:
        parts.append("next=" + "+".join(nxt))
    if pending:
        parts.append("pending=" + "+".join(pending))
    if not nxt and not pending:
        parts.append("idle")
    return ",".join(parts)


def storage(folder, wf):
    from agent_framework._workflows import _checkpoint

    naming = {}
    real_replace = os.replace

    def replace(src, dst, *a, **kw):  # FileCheckpointStorage renames its temporary file here
        if str(dst) in naming:
            hit(naming[str(dst)] + ":tmp")
        return real_replace(src, dst, *a, **kw)

    _checkpoint.os.replace = replace  # only in this process (the child that is killed, or the resumer)

    class Named(FileCheckpointStorage):
        async def save(self, checkpoint):
            name = "save(" + describe(wf, checkpoint) + ")"
            naming[str(self._validate_file_path(checkpoint.checkpoint_id))] = name
            hit(name + ":before")
            out = await super().save(checkpoint)
            hit(name + ":after")
            return out

    return Named(os.path.join(folder, "checkpoints"), allowed_checkpoint_types=["__main__:Approval"])


async def newest(st):
    cps = await st.list_checkpoints(workflow_name=WORKLOAD)
    return max(cps, key=lambda c: c.timestamp) if cps else None


async def victim(folder):
    wf = build(folder)
    st = storage(folder, wf)
    result = await wf.run("order-1", checkpoint_storage=st)
    requests = [e.request_id for e in result if e.type == "request_info"]
    if requests and ANSWER is not None:
        wf = build(folder)
        head = await newest(st)
        await wf.run(checkpoint_id=head.checkpoint_id, responses={requests[0]: ANSWER}, checkpoint_storage=st)


async def resumer(folder):
    wf = build(folder)
    st = storage(folder, wf)
    head = await newest(st)
    if head is None:
        print("nothing was saved before the kill: nothing to resume")
        return
    pending = list(head.pending_request_info_events)
    if pending and not any(head.messages.values()):
        if ANSWER is not None:
            await wf.run(checkpoint_id=head.checkpoint_id, responses={pending[0]: ANSWER}, checkpoint_storage=st)
    elif any(head.messages.values()):
        await wf.run(checkpoint_id=head.checkpoint_id, checkpoint_storage=st)


def counts(folder):
    path = os.path.join(folder, "effects.txt")
    lines = open(path).read().split() if os.path.exists(path) else []
    return {k: lines.count(k) for k in sorted(set(lines))}


def main():
    if len(sys.argv) == 3:
        asyncio.run(victim(sys.argv[2]) if sys.argv[1] == "victim" else resumer(sys.argv[2]))
        return 0
    base = tempfile.mkdtemp(prefix="agent-framework-repro-")
    try:
        return compare(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)  # the checkpoints and effects live only as long as the script


def compare(base):
    """The run without a crash, then with a kill at the boundary and a restore: 1 if the crash fired more."""
    clean = os.path.join(base, "clean")
    crash = os.path.join(base, "crash")
    os.makedirs(clean)
    os.makedirs(crash)
    subprocess.run([sys.executable, __file__, "victim", clean], check=True)
    expected = counts(clean)
    child = subprocess.run([sys.executable, __file__, "victim", crash], env={**os.environ, "REPRO_KILL": "1"})
    if child.returncode != -signal.SIGKILL:
        print(f"the child was not killed at {KILL_AT}#{NTH} (exit {child.returncode}): boundary not reached")
        return 0
    print(f"killed at {KILL_AT}#{NTH}; effects so far: {counts(crash)}")
    subprocess.run([sys.executable, __file__, "resume", crash], check=True)
    got = counts(crash)
    dup = {k: v for k, v in got.items() if v > expected.get(k, 0)}
    print(f"without the crash: {expected}; with it and a restore: {got}")
    if dup:
        print(f"REPRODUCED: fired more often than without the crash: {dup}")
        return 1
    print("not reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''
