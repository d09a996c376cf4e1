"""``chaos repro RUN_DIR TRIAL_ID``: a violation as a standalone script an upstream maintainer can run.

Why: a violation found by chaos cannot be filed upstream if reproducing it needs chaos. This
module turns one violating trial of a stored run into ``repro_<trial>.py``, which needs only the
framework and its saver, plus ``repro_<trial>.md`` (versions, what it shows, how to run it), in
the style of a minimal bug report.

What it promises:

* Scope: LangGraph's built-in workloads ``three_step`` and ``gate_after_interrupt`` on SQLite. An
  EO violation of a kill sweep becomes: a forked child runs the graph with a saver subclass that
  SIGKILLs its own process at the trial's boundary (named as chaos names it, with its occurrence),
  the parent confirms the kill from the exit status, resumes in a fresh saver on the same file
  with the scenario's resume form, and counts the effects (one fsynced line each). An FD
  violation of a fork (LangGraph issue 6663) becomes: answer the interrupt with v1, resume from
  the interrupt's checkpoint with v2, and see which value the gate fired with.
* The script exits 1 and prints ``REPRODUCED`` when it sees the violation, 0 when it does not.
* A trial that violated nothing, a trial id the run does not have, or a workload, backend or kind
  it cannot express is a ``ChaosError`` naming the trial (exit 3); nothing is written then.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chaos.kinds import get_kind
from chaos.racer.errors import ChaosError
from chaos.scenario.model import Cell

__all__ = ["ReproError", "write_repro"]

WORKLOADS = ("three_step", "gate_after_interrupt")


class ReproError(ChaosError):
    """A repro that cannot be written: names the run folder and trial."""


@dataclass
class Repro:
    script: Path
    markdown: Path
    property: str
    summary: str


def _trial(run_dir: Path, trial_id: str) -> tuple[Cell, dict[str, Any]]:
    """The trial's cell (from run.json's scenario, expanded) and its journal record.

    The trial id must be one the run's scenario expands to (``load_run`` checks every journaled
    id against it) and of a shape chaos makes, so the file names it makes stay in the folder."""
    from chaos.running.runfolder import TRIAL_ID, load_run

    if not TRIAL_ID.match(trial_id):
        raise ReproError(
            f"{run_dir}: {trial_id!r} is not a trial id (c000-t0001, c000-p003-r000)", hint="take one from a verdict's evidence"
        )
    if not (run_dir / "journal.jsonl").is_file():
        raise ReproError(f"{run_dir}: not a run folder (no journal.jsonl)", hint="name a folder `chaos run` wrote")
    stored = load_run(run_dir)
    if trial_id not in stored.records:
        raise ReproError(f"{run_dir}: no trial {trial_id!r} in its journal", hint="take a trial id from a verdict's evidence")
    cell = next((c for c in stored.cells if c.index == stored.records.cell_of(trial_id)), None)
    if cell is None:
        raise ReproError(f"{run_dir}: trial {trial_id!r} is of no cell the run's scenario expands to")
    return cell, stored.records.raw(trial_id)


def _violation(run_dir: Path, trial_id: str, cell: Cell) -> dict[str, Any]:
    """The violated verdict of ``cell`` (results.json) whose evidence names the trial."""
    from chaos.records import RunResults

    try:
        results = RunResults.model_validate_json((run_dir / "results.json").read_bytes())
    except (OSError, ValueError) as exc:
        raise ReproError(f"{run_dir / 'results.json'}: not a results file chaos wrote ({str(exc).splitlines()[0][:120]})") from None
    for c in results.cells:
        if c.cell_index != cell.index:
            continue
        for v in c.verdicts:
            if v.status == "violated" and trial_id in v.evidence.trial_ids and v.property in ("EO", "FD"):
                return {"property": v.property, "reason": v.reason}
    raise ReproError(
        f"{run_dir}: trial {trial_id} violated nothing a repro can show (EO of a kill sweep, FD of a fork)",
        hint="take a trial id from the evidence of a violated EO or FD verdict",
    )


_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]{0,40}$")  # a release number; anything else is dropped, never pasted


def _versions(run_dir: Path) -> dict[str, str]:
    """The recorded versions that look like release numbers (a crafted run.json's others are left out)."""
    from chaos.running.runfolder import read_meta

    versions = read_meta(run_dir).versions or {}
    keep = ("python", "langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite")
    return {k: v for k in keep if isinstance(v := versions.get(k), str) and _VERSION.match(v)}


def write_repro(run_dir: str | Path, trial_id: str, out: str | Path | None = None) -> Repro:
    """Write ``repro_<trial>.py`` and ``.md`` into ``out`` (default: the run folder).

    Everything read from the run folder is untrusted (a run folder is an artifact people download):
    the trial must be one the scenario expands to, the cell's settings come from the validated
    scenario, every value the script uses is a Python literal (``repr``) substituted in one pass,
    and the docstring holds none of them."""
    folder = Path(run_dir)
    if not (folder / "results.json").is_file():
        raise ReproError(f"{folder}: no results.json (not a finished run folder)", hint="name a folder `chaos run` wrote")
    cell, trial = _trial(folder, trial_id)
    verdict = _violation(folder, trial_id, cell)
    sc = cell.scenario
    where = f"{folder}: trial {trial_id}"
    framework, workload, backend = sc.target.framework, sc.workload, sc.target.backend
    if framework != "langgraph":
        return _framework_repro(folder, trial_id, cell, trial, verdict, out)
    if workload not in WORKLOADS:
        raise ReproError(f"{where}: repro writes LangGraph's {' and '.join(WORKLOADS)} only, not {framework} {workload}")
    if backend != "sqlite":
        raise ReproError(f"{where}: repro writes the SQLite saver only, not {backend}")
    resume = str(sc.resume)
    if sc.target.guard not in (None, "none", "stock"):  # target.guard: the script would run stock, not the guard
        raise ReproError(
            f"{where}: repro writes stock LangGraph only; this cell ran with guard {sc.target.guard!r}, which the script would leave out"
        )
    if resume.startswith("app:"):
        raise ReproError(f"{where}: a team's recovery (resume: app:...) cannot be written without chaos")
    params: dict[str, Any] = {
        "WORKLOAD": workload,
        "DURABILITY": sc.target.durability,
        "RESUME": resume,
        "FOUND_IN": {"trial": trial_id, "run": str(folder)},
    }
    point = trial.get("point")
    if verdict["property"] == "EO":
        if get_kind(sc.kind).section != "sweep" or not isinstance(point, str) or not point:
            raise ReproError(f"{where}: EO repro needs a kill-sweep trial with a kill point")
        if " >> " in point:
            raise ReproError(f"{where}: a crash during recovery (crash_depth >= 2) cannot be written as a standalone script yet")
        params["KILL_AT"] = point
        body = _EO
        summary = "LangGraph fires an effect twice after a crash at a checkpoint boundary and a resume"
    else:
        if "FD" not in get_kind(sc.kind).properties or workload != "gate_after_interrupt":
            raise ReproError(f"{where}: FD repro writes a fork of gate_after_interrupt only")
        fork_via = sc.fork_via
        if fork_via != "checkpoint":
            raise ReproError(f"{where}: FD repro writes a fork via the plain checkpoint address only, not {fork_via}")
        body = _FD
        summary = "LangGraph replays the first answer when a thread is resumed from the interrupt's checkpoint with another (issue 6663)"
    versions = _versions(folder)
    params["VERSIONS"] = versions
    text = _HEADER.replace("@SUMMARY@", summary) + body

    def literal(m: re.Match[str]) -> str:  # one pass: a value can never be read as another placeholder
        return repr(params[m.group(1)]) if m.group(1) in params else m.group(0)

    text = re.sub(r"@([A-Z_]+)@", literal, text)
    target = Path(out) if out is not None else folder
    target.mkdir(parents=True, exist_ok=True)
    script = target / f"repro_{trial_id}.py"  # trial_id matched TRIAL_ID: letters, digits and dashes only
    script.write_text(text)
    md = target / f"repro_{trial_id}.md"
    md.write_text(_markdown(summary, verdict, sc, trial_id, point, versions, script.name))
    return Repro(script=script, markdown=md, property=verdict["property"], summary=summary)


def _framework_repro(
    folder: Path, trial_id: str, cell: Cell, trial: dict[str, Any], verdict: dict[str, Any], out: str | Path | None
) -> Repro:
    """A framework's own repro writer (``TargetInfo.repro``: ``script(facts)``), for a framework other than LangGraph."""
    import importlib

    from chaos.targets import get_target

    sc = cell.scenario
    where = f"{folder}: trial {trial_id}"
    ref = get_target(sc.target.framework).repro
    if not ref:
        raise ReproError(f"{where}: repro writes no {sc.target.framework} script (its adapter declares no repro writer)")
    facts = {
        "workload": sc.workload,
        "backend": sc.target.backend,
        "resume": str(sc.resume),
        "kind_section": get_kind(sc.kind).section,
        "property": verdict["property"],
        "point": trial.get("point"),
        "found_in": {"trial": trial_id, "run": str(folder)},
        "versions": _versions(folder),
    }
    try:
        summary, text, install = importlib.import_module(ref).script(facts)
    except ValueError as exc:
        raise ReproError(f"{where}: {exc}") from None
    target = Path(out) if out is not None else folder
    target.mkdir(parents=True, exist_ok=True)
    script = target / f"repro_{trial_id}.py"  # trial_id matched TRIAL_ID: letters, digits and dashes only
    script.write_text(text)
    md = target / f"repro_{trial_id}.md"
    md.write_text(
        f"# {summary}\n\n```sh\npython -m venv venv && venv/bin/pip install {install}\nvenv/bin/python {script.name}"
        f"     # exit 1 and REPRODUCED: the bug; exit 0: not reproduced\n```\n\nWhat it shows ({verdict['property']}): "
        f"{_md(verdict['reason'])}\n\n- kill point: {_md(trial.get('point'))}\n\nWritten by `chaos repro` from trial `{trial_id}`; "
        "the script needs no chaos.\n"
    )
    return Repro(script=script, markdown=md, property=verdict["property"], summary=summary)


def _md(text: Any) -> str:
    """A value from the run folder as inert markdown text: one line, no HTML, no link or image, no
    code span it could close (``<>&`` as entities; backslash, backticks and brackets escaped)."""
    out = html.escape(" ".join(str(text).split())[:500], quote=False)
    return re.sub(r"([\\`\[\]])", r"\\\1", out)


def _version_line(versions: dict[str, str | None]) -> str:
    keep = ("python", "langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite")
    return ", ".join(f"{k} {versions[k]}" for k in keep if versions.get(k))


def _markdown(summary: str, verdict: dict[str, Any], sc: Any, trial_id: str, point: Any, versions: dict, name: str) -> str:
    pins = " ".join(f"{k}=={versions[k]}" for k in ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite") if versions.get(k))
    at = f"\n- kill point: {_md(point)} (occurrence of the saver call or effect, as the script names it)" if point else ""
    return f"""# {summary}

Versions: {_version_line(versions) or "see run.json"}.

```sh
python -m venv venv && venv/bin/pip install {pins or "langgraph langgraph-checkpoint-sqlite"}
venv/bin/python {name}     # exit 1 and REPRODUCED: the bug; exit 0: not reproduced
```

What it shows ({verdict["property"]}): {_md(verdict["reason"])}

- workload: `{sc.workload}` (a StateGraph whose nodes each append one line to an effects file,
  fsynced, standing for an irreversible effect: a payment, an e-mail)
- saver: `SqliteSaver` on a file; durability `{sc.target.durability}`; resume {_md(sc.resume)}{at}
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
