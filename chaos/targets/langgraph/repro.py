"""LangGraph's standalone repro scripts (``chaos repro``; ``WritesRepro`` of ``chaos.targets.langgraph.hooks``).

Scope: LangGraph's built-in workloads ``three_step`` and ``gate_after_interrupt`` on SQLite. An EO
violation of a kill sweep becomes: a forked child runs the graph with a saver subclass that
SIGKILLs its own process at the trial's boundary (named as chaos names it, with its occurrence),
the parent confirms the kill from the exit status, resumes in a fresh saver on the same file with
the scenario's resume form, and counts the effects (one fsynced line each). An FD violation of a
fork (LangGraph issue 6663) becomes: answer the interrupt with v1, resume from the interrupt's
checkpoint with v2, and see which value the gate fired with. The script exits 1 and prints
``REPRODUCED`` when it sees the violation, 0 when it does not; it needs only LangGraph and its
SQLite saver. A workload, backend, guard, resume or kind it cannot express is one line saying so
(``chaos.repro`` raises it naming the trial).

Every value the script uses is a Python literal (``repr``) substituted in one pass, and the
docstring holds none of them: the run folder it was read from is untrusted.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from chaos.kinds import get_kind
from chaos.kinds.fork import ForkOptions
from chaos.targets.hooks import ReproScript
from chaos.targets.langgraph.options import Options

if TYPE_CHECKING:
    from chaos.scenario.model import Cell, Scenario

WORKLOADS = ("three_step", "gate_after_interrupt")
# the recorded releases the script names (and the markdown pins)
PINNED = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite")


def write(
    cell: Cell, trial: Mapping[str, Any], violated: tuple[str, str], versions: Mapping[str, str], found_in: Mapping[str, str]
) -> ReproScript | str:
    """The script for ``trial`` of ``cell`` showing ``violated`` (property, reason); else why it cannot be written."""
    sc = cell.scenario
    workload, backend, opts = sc.workload, sc.target.backend, Options.of(sc)
    if workload not in WORKLOADS:
        return f"repro writes LangGraph's {' and '.join(WORKLOADS)} only, not {sc.target.framework} {workload}"
    if backend != "sqlite":
        return f"repro writes the SQLite saver only, not {backend}"
    resume = str(sc.resume)
    if opts.guard not in (None, "none", "stock"):  # target.guard: the script would run stock, not the guard
        return f"repro writes stock LangGraph only; this cell ran with guard {opts.guard!r}, which the script would leave out"
    if resume.startswith("app:"):
        return "a team's recovery (resume: app:...) cannot be written without chaos"
    params: dict[str, Any] = {"WORKLOAD": workload, "DURABILITY": opts.durability, "RESUME": resume, "FOUND_IN": dict(found_in)}
    point = trial.get("point")
    if violated[0] == "EO":
        if get_kind(sc.kind).section != "sweep" or not isinstance(point, str) or not point:
            return "EO repro needs a kill-sweep trial with a kill point"
        if " >> " in point:
            return "a crash during recovery (crash_depth >= 2) cannot be written as a standalone script yet"
        params["KILL_AT"] = point
        body = _EO
        summary = "LangGraph fires an effect twice after a crash at a checkpoint boundary and a resume"
    else:
        if "FD" not in get_kind(sc.kind).properties or workload != "gate_after_interrupt":
            return "FD repro writes a fork of gate_after_interrupt only"
        fork_via = ForkOptions.of(sc).fork_via
        if fork_via != "checkpoint":
            return f"FD repro writes a fork via the plain checkpoint address only, not {fork_via}"
        body = _FD
        summary = "LangGraph replays the first answer when a thread is resumed from the interrupt's checkpoint with another (issue 6663)"
    kept = {k: versions[k] for k in ("python", *PINNED) if k in versions}
    params["VERSIONS"] = kept
    text = _HEADER.replace("@SUMMARY@", summary) + body

    def literal(m: re.Match[str]) -> str:  # one pass: a value can never be read as another placeholder
        return repr(params[m.group(1)]) if m.group(1) in params else m.group(0)

    text = re.sub(r"@([A-Z_]+)@", literal, text)
    trial_id = found_in["trial"]
    markdown = _markdown(summary, violated, sc, trial_id, point, kept, f"repro_{trial_id}.py")
    return ReproScript(script=text, markdown=markdown, summary=summary)


def _md(text: Any) -> str:
    """A value from the run folder as inert markdown text: one line, no HTML, no link or image, no
    code span it could close (``<>&`` as entities; backslash, backticks and brackets escaped)."""
    out = html.escape(" ".join(str(text).split())[:500], quote=False)
    return re.sub(r"([\\`\[\]])", r"\\\1", out)


def _version_line(versions: Mapping[str, str]) -> str:
    keep = ("python", *PINNED)
    return ", ".join(f"{k} {versions[k]}" for k in keep if versions.get(k))


def _markdown(
    summary: str, violated: tuple[str, str], sc: Scenario, trial_id: str, point: Any, versions: Mapping[str, str], name: str
) -> str:
    pins = " ".join(f"{k}=={versions[k]}" for k in PINNED if versions.get(k))
    at = f"\n- kill point: {_md(point)} (occurrence of the saver call or effect, as the script names it)" if point else ""
    return f"""# {summary}

Versions: {_version_line(versions) or "see run.json"}.

```sh
python -m venv venv && venv/bin/pip install {pins or "langgraph langgraph-checkpoint-sqlite"}
venv/bin/python {name}     # exit 1 and REPRODUCED: the bug; exit 0: not reproduced
```

What it shows ({violated[0]}): {_md(violated[1])}

- workload: `{sc.workload}` (a StateGraph whose nodes each append one line to an effects file,
  fsynced, standing for an irreversible effect: a payment, an e-mail)
- saver: `SqliteSaver` on a file; durability `{Options.of(sc).durability}`; resume {_md(sc.resume)}{at}
- expected: every effect once (a step recorded complete is not run again; a fork runs with the new answer)

Written by `chaos repro` from trial `{trial_id}`; the script needs no chaos.
"""


_HEADER = '''"""Reproduction: @SUMMARY@.

Found by chaos (FOUND_IN: which trial of which run); this script needs only LangGraph and its
SQLite saver. VERSIONS: the releases it was found with.
Exit status 1 and "REPRODUCED": the bug; 0: not reproduced.
"""

FOUND_IN = @FOUND_IN@
VERSIONS = @VERSIONS@
'''

_COMMON = '''
import operator
import os
import shutil
import signal
import sqlite3
import sys
import tempfile
from collections import Counter
from typing import Annotated, Any, TypedDict

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

WORKLOAD = @WORKLOAD@
DURABILITY = @DURABILITY@
RESUME = @RESUME@  # none: invoke(None); input: invoke(the input again); command:<v>: Command(resume=v)
WORKDIR = tempfile.mkdtemp(prefix="langgraph-repro-")
DB = os.path.join(WORKDIR, "checkpoints.sqlite")
EFFECTS = os.path.join(WORKDIR, "effects.log")  # one line per irreversible effect, fsynced
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "t1"}, "max_concurrency": 1}
INVOKE = {} if DURABILITY == "default" else {"durability": DURABILITY}

# @BOUNDARY@


def effect(task: str, value: Any = None) -> None:
    """An irreversible effect (a payment, an e-mail): recorded durably before the node returns."""
    with open(EFFECTS, "a") as f:
        f.write(f"{task}\\t{value!r}\\n")
        f.flush()
        os.fsync(f.fileno())
    boundary(f"effect(task={task}):after")


class StepState(TypedDict, total=False):
    log: Annotated[list, operator.add]


class GateState(TypedDict, total=False):
    log: Annotated[list, operator.add]
    approved: Any


def build(saver):
    if WORKLOAD == "three_step":
        g = StateGraph(StepState)

        def make(name):
            def node(state):
                effect(name)
                return {"log": [name]}

            return node

        for name in ("a", "b", "c"):
            g.add_node(name, make(name))
        g.add_edge(START, "a")
        g.add_edge("a", "b")
        g.add_edge("b", "c")
        g.add_edge("c", END)
        return g.compile(checkpointer=saver)
    g = StateGraph(GateState)

    def pre(state):
        effect("pre")
        return {"log": ["pre"]}

    def gate(state):
        value = interrupt({"question": "approve?"})
        effect("gate", value)
        return {"log": ["gate"], "approved": value}

    def end(state):
        effect("end")
        return {"log": ["end"]}

    g.add_node("pre", pre)
    g.add_node("gate", gate)
    g.add_node("end", end)
    g.add_edge(START, "pre")
    g.add_edge("pre", "gate")
    g.add_edge("gate", "end")
    g.add_edge("end", END)
    return g.compile(checkpointer=saver)


def open_saver(cls=SqliteSaver):
    conn = sqlite3.connect(DB, check_same_thread=False, timeout=60)
    saver = cls(conn)
    saver.setup()
    return saver


def effects() -> list[str]:
    if not os.path.exists(EFFECTS):
        return []
    with open(EFFECTS) as f:
        return [line.split("\\t")[0] for line in f.read().splitlines()]
'''

_EO = (
    _COMMON.replace(
        "# @BOUNDARY@\n",
        '''KILL_AT = @KILL_AT@  # the boundary the first process dies at (#n: its n-th occurrence)
ARMED = True
SEEN: Counter = Counter()


def boundary(label: str) -> None:
    """Each saver call and effect passes here; at KILL_AT the process is SIGKILLed (a crash)."""
    SEEN[label] += 1
    if ARMED and f"{label}#{SEEN[label]}" == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)


def node_of(task_path: Any) -> str:
    text = str(task_path or "")
    return (text.split(", ")[-1].strip("()'\\" ") or "-") if text else "-"


class CrashingSaver(SqliteSaver):
    def put(self, config, checkpoint, metadata, new_versions):
        name = f"put(step={(metadata or {}).get('step')},source={(metadata or {}).get('source')})"
        boundary(name + ":before")
        out = super().put(config, checkpoint, metadata, new_versions)
        boundary(name + ":after")
        return out

    def put_writes(self, config, writes, task_id, task_path=""):
        name = f"put_writes(node={node_of(task_path)},channels={'+'.join(str(w[0]) for w in writes)})"
        boundary(name + ":before")
        out = super().put_writes(config, writes, task_id, task_path)
        boundary(name + ":after")
        return out


def resume_payload():
    form, _, value = RESUME.partition(":")
    if form == "command":
        return Command(resume={"true": True, "false": False}.get(value, value))
    return {"log": []} if form == "input" else None
''',
    )
    + '''

def first_process() -> None:
    """The run that crashes: start the graph (answer its interrupt, if the resume form is a command)."""
    graph = build(open_saver(CrashingSaver))
    out = graph.invoke({"log": []}, CONFIG, **INVOKE)
    if RESUME.startswith("command:") and "__interrupt__" in out:
        graph.invoke(resume_payload(), CONFIG, **INVOKE)
    os._exit(0)  # never reached when KILL_AT is on the run's path


def main() -> int:
    global ARMED
    pid = os.fork()
    if pid == 0:
        try:
            first_process()
        finally:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    if not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
        print(f"the first process was not killed at {KILL_AT} (status {status}): not reproduced")
        return 0
    before = Counter(effects())
    print(f"crashed at {KILL_AT}; effects before the crash: {dict(before)}")
    ARMED = False
    graph = build(open_saver())  # a fresh process would do the same: new connection, same file
    graph.invoke(resume_payload(), CONFIG, **INVOKE)
    after = Counter(effects())
    print(f"effects after the resume ({RESUME}): {dict(after)}")
    twice = {task: n for task, n in after.items() if n > 1}
    if twice:
        print(f"REPRODUCED: effect(s) fired more than once across the crash and the resume: {twice}")
        return 1
    print("not reproduced: every effect fired at most once")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(WORKDIR, ignore_errors=True)  # the checkpoints and effects log live only as long as the script
'''
)

_FD = (
    _COMMON.replace(
        "# @BOUNDARY@\n",
        '''V1, V2 = "v1", "v2"


def boundary(label: str) -> None:
    """No crash in this reproduction."""
''',
    )
    + """

def gate_values() -> list[str]:
    with open(EFFECTS) as f:
        return [line.split("\\t")[1] for line in f.read().splitlines() if line.startswith("gate\\t")]


def main() -> int:
    graph = build(open_saver())
    graph.invoke({"log": []}, CONFIG, **INVOKE)  # stops at the gate's interrupt()
    at_interrupt = next(s for s in graph.get_state_history(CONFIG) if s.next == ("gate",) and s.tasks and s.tasks[0].interrupts)
    graph.invoke(Command(resume=V1), CONFIG, **INVOKE)  # the human answers v1; the gate fires with v1
    print(f"answered {V1!r}: gate fired with {gate_values()}")
    # fork: resume from the interrupt's checkpoint with another answer
    graph.invoke(Command(resume=V2), at_interrupt.config, **INVOKE)
    values = gate_values()
    print(f"forked from checkpoint {at_interrupt.config['configurable']['checkpoint_id']} with {V2!r}: gate fired with {values}")
    if len(values) >= 2 and values[-1] != repr(V2):
        print(f"REPRODUCED: the fork answered {V2!r} but the gate fired with {values[-1]} (the first answer replayed)")
        return 1
    print("not reproduced: the fork ran with its own answer")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        shutil.rmtree(WORKDIR, ignore_errors=True)  # the checkpoints and effects log live only as long as the script
"""
)
