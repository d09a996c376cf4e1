"""Preflight: a user's workload is built and run once, without faults, before any trial.

Why: a graph that is wired wrong cannot be measured, and measuring it anyway blames the framework
for the user's mistake (a graph compiled with its own ``InMemorySaver`` gave LIVENESS VIOLATED; one
without a checkpointer died inside chaos; a factory that raised printed "1 errored" with the reason
only in report.md). So before the run folder is written, one racer in the racers' Python builds the
workload from the scenario's ``package.module:factory`` and runs it whole: ``run``, then, when the
scenario resumes with a command, the answer to each interrupt it stops at. What it did is checked:

* the factory builds (else: its exception, the traceback's last line);
* the framework's own check of the run (``chaos.targets.hooks.ChecksDryRun``; LangGraph: a
  checkpoint write passed the instrumented saver, not its own saver, not no checkpointer);
* the uninterrupted run and the answers are accepted (no exception in the user's code), unless
  the kind's workloads raise by design (``Kind.clean_run``: ``invalid_state``);
* the gated effect is named by its label: a ``gated_task`` naming a node that fired effects (instead
  of an effect label) is refused; and for a kind that counts the gated effect's fires (race, stray
  repeat: ``Kind.counts_gated``) an answer whose branch fires none is refused (it would measure
  nothing). Elsewhere an answer that takes a branch firing no gated effect (a rejection) is a
  normal run.

* LangGraph's static breakpoints (``interrupt_before`` / ``interrupt_after``) are pauses like
  ``interrupt()``: the run approves each with ``invoke(None)`` (under ``resume: none | input |
  app`` too, whose plan is to approve them), and the gated-effect check names the breakpoint it
  approved. An answer plan that answered nothing, or only rejected (an ``update_state`` edit),
  approved nothing, so no gated effect is expected after it.

* effects fire inside a running task: no ledger row of the run is marked ``outside_task`` (an
  effect fired from a thread the node started, or after the graph returned, cannot be attributed
  to a step, so no verdict could say which step fired it).
* an ``effect_fault`` names an effect the run fires (a fault on an effect that never fires would
  leave every trial invalid).

A run that does not end within ``timeout_s`` checks nothing (a hang is measured by the trials,
which record it as hung). A failure raises ``TargetError`` (exit 3) naming the scenario file, the factory and what to
change; nothing is written and no trial counts. Built-in workloads are wired by chaos and skip
this, unless the scenario injects an ``effect_fault`` (its effect must be one the workload fires). ``wiring_problem`` is the pure check of one racer result, ``preflight_run`` runs the racer.

Before that, and for every cell, the racers' Python must be able to import what the scenario names
(``preflight_cells``, called by ``chaos.running.orchestrator`` before any folder is written): the
workload factory (``preflight``), the adapter's own checks (``target_preflight``: DBOS's environment,
params and system database), what the framework's package asks to load first (``ChecksModules``:
LangGraph's custom saver and guard), and v2's release when a kind deploys one (``deployed_python``); each is
checked once per interpreter and refused in one line naming the scenario file.

The checks are planned first (``Check``: what it checks, once per process, and how), then run
``jobs`` at a time (``run_checks``): each is a cold interpreter importing the framework, seconds of
one core (a CrewAI example's five: 20 s in a row on two idle cores). Which failure is said does not
depend on their timing: the first in the plan's order (a cell's import before its run, the cells in
order), as when they ran one after another; a later check may have run for nothing. Their processes
are the preflight's own (``_Children``): none outlives it, also when it is interrupted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, cast

from chaos.envs import python_for, racer_env
from chaos.kinds import get_kind
from chaos.kinds.baseline import baseline_actions
from chaos.launchers import racer_tmp
from chaos.racer.errors import EnvironmentProblem, TargetError
from chaos.racer.ledger import SqliteLedger
from chaos.racer.ledger_rows import of_task
from chaos.racer.protocol import RacerResult, RacerSpec
from chaos.scenario.model import Cell
from chaos.targets import TARGETS, ChecksDryRun, ChecksModules, ValidatesScenario, get_target, hooks_of

_passed: set[tuple[str, ...]] = set()  # the checks that passed in this process (``Check.key``)


def _fired_label(key: str, gated: str) -> bool:
    return of_task(key, gated)


def wiring_problem(cell: Cell, result: dict[str, Any], rows: list[dict] | None = None) -> str | None:
    """What is wrong with the workload's wiring, as one sentence saying what to change; None when
    the baseline run shows none. A pure function of the racer's result and its ledger ``rows``."""
    s = cell.scenario
    if result.get("status") != "ok":
        err = result.get("error") or {}
        return f"raised while being built or opened: {err.get('type')}: {err.get('message')} ({err.get('where') or '?'})"
    outcomes: list[dict] = result.get("outcomes") or []
    checks = hooks_of(s.target.framework)
    problem = checks.dry_run_problem(cell, cast(RacerResult, result)) if isinstance(checks, ChecksDryRun) else None
    if problem is not None:  # the framework's own check (LangGraph: its checkpoints pass ctx.checkpointer)
        return problem
    for o in outcomes if get_kind(s.kind).clean_run else []:
        if o.get("status") == "error":
            err = o.get("error") or {}
            action = o.get("action") or {}
            what = (
                f"did not accept the answer {action.get('value')!r}"
                if action.get("op") == "resume"
                else "raised in an uninterrupted run (no fault injected)"
            )
            return (
                f"{what}: {err.get('type')}: {err.get('message', '')[:300]} ({err.get('where') or '?'}): "
                "fix the workload or the scenario's resume value"
            )
    outside = [r for r in rows or [] if r.get("outside_task")]
    if outside:
        keys = ", ".join(sorted({str(r["effect_key"]) for r in outside}))
        return (
            f"fired {len(outside)} effect(s) outside a running task ({keys}): an effect fired from a thread the node "
            "started (or after the graph returned) cannot be attributed to a step: call ctx.effect in the node itself, "
            "before it returns"
        )
    if s.effect_fault is not None:
        labels = sorted({k.partition(":")[0] for o in outcomes for k in o.get("fired") or []})
        if s.effect_fault.task not in labels:
            return (
                f"fires no effect {s.effect_fault.task!r} in an uninterrupted run, so effect_fault.task can never fire "
                f"(effects fired: {', '.join(labels) or 'none'}): name one of them, or a workload that calls ctx.effect"
            )
    gated = result.get("gated_task")
    answered = [o for o in outcomes if (o.get("action") or {}).get("op") == "resume" and _approved(o)]
    if gated and answered:
        fired_after = [k for o in answered for k in o.get("fired") or []]
        if not any(_fired_label(k, gated) for k in fired_after):
            fired_all = sorted({k.partition(":")[0] for o in outcomes for k in o.get("fired") or []})
            bp = next((o["breakpoint"] for o in outcomes if o.get("breakpoint")), None)
            when = (
                f"the static breakpoint {bp.get('when')} {', '.join(bp.get('nodes') or [])} was approved (invoke(None))"
                if bp
                else "the interrupt was answered"
            )
            nodes = {str(r.get("node") or r.get("task")) for r in rows or []} - set(fired_all)
            if gated in nodes:
                return (
                    f"gated_task {gated!r} never fired as an effect after {when} "
                    f"(effects fired: {', '.join(fired_all) or 'none'}): {gated!r} is a node, not an effect label: set "
                    "gated_task to the label the gated node passes to ctx.effect"
                )
            if get_kind(s.kind).counts_gated:
                value = (answered[0].get("action") or {}).get("value")
                return (
                    f"answered {value!r}, the run fired no {gated!r} effect (effects after the answer: "
                    f"{', '.join(sorted(set(fired_after))) or 'none'}): kind {s.kind} counts fires of the gated effect, so "
                    f"an answer whose branch fires none (a rejection, say) measures nothing: resume with the answer that "
                    f"fires it (or, if {value!r} should fire it, set gated_task to the label the gated node passes to ctx.effect)"
                )
            # a branch that fires no gated effect (a rejection) is an ordinary run for the other kinds
    return None


def _approved(o: dict) -> bool:
    """Did this answer approve anything? A plan that answered nothing (no static breakpoint to
    approve, an empty plan) did not, nor one whose every answer was an edit (``{"update": ...}``:
    a rejection as LangGraph's customer-support tutorial writes it, which skips the gated tool)."""
    if "answered" not in o:
        return True
    return any(not (isinstance(v, dict) and "update" in v) for _key, v in o["answered"])


def _ledger_rows(path: Path) -> list[dict]:
    """The preflight run's effect rows (none when it fired nothing and wrote no ledger)."""
    if not path.exists():
        return []
    ledger = SqliteLedger(str(path))
    try:
        return ledger.rows(run_id="preflight")
    finally:
        ledger.close()


def preflight_spec(cell: Cell, folder: Path, version: str = "v1") -> RacerSpec:
    """One racer's spec for the baseline run, every file in ``folder`` (a Postgres backend is run
    on SQLite here, sync or async as asked: the wiring does not depend on it and no database is
    needed yet)."""
    s = cell.scenario
    target: dict[str, Any] = s.target.model_dump()
    if target.get("backend") in ("postgres", "postgres_pool"):
        target["backend"] = "sqlite"
    elif target.get("backend") == "postgres_async":
        target["backend"] = "sqlite_async"
    store = {} if target.get("backend") == "memory" else {"path": str(folder / "checkpoints.sqlite")}
    (folder / "barriers").mkdir()
    spec: dict[str, Any] = {
        "run_id": "preflight",
        "cell_id": cell.id,
        "trial_id": "preflight",
        "racer_id": "preflight",
        "target": target,
        "distributions": list(get_target(s.target.framework).distributions),
        "workload": s.workload,
        "workload_params": s.workload_params,
        "workload_version": version,
        "thread_id": "preflight",
        "store": store,
        "ledger": {"kind": "sqlite", "path": str(folder / "ledger.sqlite")},
        "barrier": {"dir": str(folder / "barriers"), "armed": []},
        "actions": baseline_actions(cell),
        "inspect_after": True,  # where the run ended, for the framework's own check (ChecksDryRun)
        "result_path": str(folder / "result-preflight.json"),
    }
    return cast(RacerSpec, spec)


def deployed_cell(cell: Cell) -> Cell:
    """``cell`` with v2's workload and params in place of v1's (``Scenario.deployed``)."""
    workload, params = cell.scenario.deployed
    return cell.model_copy(update={"scenario": cell.scenario.model_copy(update={"workload": workload, "workload_params": params})})


@dataclass(frozen=True)
class Check:
    """One check of the preflight: ``key`` says what it checks (each passes once per process, the
    first time a plan names it), ``run`` runs it, raising ``TargetError`` or ``EnvironmentProblem``
    when it fails; it returns whether it passed (False: it showed nothing, such as a run that hung,
    and a later plan checks it again). ``run_checks`` remembers what passed."""

    key: tuple[str, ...]
    run: Callable[[_Children], bool]


class _Children:
    """The processes a preflight runs, so that none outlives it: ``kill`` ends those still running
    and refuses new ones (the preflight was interrupted, or failed while others ran beside it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.live: set[subprocess.Popen[str]] = set()
        self.closed = False

    def run(self, cmd: list[str], env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        """``subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)``, killable."""
        with self.lock:
            if self.closed:
                raise TargetError("the preflight was stopped")
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            self.live.add(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException:  # the timeout, or the preflight stopped: the process goes with it
            proc.kill()
            proc.communicate()
            raise
        finally:
            with self.lock:
                self.live.discard(proc)
        return subprocess.CompletedProcess(cmd, proc.returncode, out, err)

    def kill(self) -> None:
        with self.lock:
            self.closed = True
            for proc in self.live:
                proc.kill()


def run_checks(checks: list[Check], jobs: int = 1) -> None:
    """Every check not run before (in this process or earlier in ``checks``), ``jobs`` at a time;
    the first failure in the list's order is raised, whatever the order they ended in."""
    todo: dict[tuple[str, ...], Check] = {}  # the first check of each key, in order
    for c in checks:
        if c.key not in _passed:
            todo.setdefault(c.key, c)
    children = _Children()
    if jobs <= 1 or len(todo) <= 1:
        for key, check in todo.items():
            if check.run(children):
                _passed.add(key)
        return
    pool = ThreadPoolExecutor(max_workers=min(jobs, len(todo)), thread_name_prefix="chaos-preflight")
    try:
        futures = {key: pool.submit(check.run, children) for key, check in todo.items()}
        for key, future in futures.items():
            if future.result():  # the first failure in order; the others' outcome no longer matters
                _passed.add(key)
    finally:
        children.kill()  # (all ended already, unless a check failed or this thread was interrupted)
        pool.shutdown(wait=True, cancel_futures=True)


def preflight_run(cell: Cell, scenario_file: str | None, python: str, paths: list[str], version: str = "v1") -> Check:
    """Build and run ``cell``'s user workload once in the racers' Python (at ``version``: the
    factory's ``ctx.version``); raise ``TargetError`` naming the file, the factory and what to
    change when its wiring is wrong. Once per distinct workload configuration in a process."""
    s = cell.scenario
    key = json.dumps(
        [python, s.workload, s.workload_params, s.target.model_dump(), s.resume, version, s.effect_fault],
        sort_keys=True,
        default=str,
    )
    where = f"{scenario_file or 'scenario'}: workload {s.workload!r}"
    if version != "v1":
        field = "upgrade_to.workload" if cell.scenario.upgrade_to.workload else "workload"
        where = f"{scenario_file or 'scenario'}: {field} {s.workload!r} at ctx.version {version!r} (the deployed version)"

    def run(children: _Children) -> bool:
        with tempfile.TemporaryDirectory(prefix="chaos-preflight-") as tmp:
            folder = Path(tmp)
            spec = preflight_spec(cell, folder, version)
            (folder / "spec.json").write_text(json.dumps(spec))
            env = {**racer_env(python, paths), "TMPDIR": racer_tmp(folder)}
            try:
                proc = children.run([python, "-m", "chaos.racer.main", str(folder / "spec.json")], env, s.timeout_s)
            except subprocess.TimeoutExpired:
                return False  # a run that hangs shows nothing about its wiring: the trials record it as hung
            result_path = folder / "result-preflight.json"
            if not result_path.exists():
                last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
                raise TargetError(f"{where}: the preflight racer wrote no result: {last}")
            result = json.loads(result_path.read_text())
            rows = _ledger_rows(folder / "ledger.sqlite")
        problem = wiring_problem(cell, result, rows)
        if problem is not None:
            raise TargetError(f"{where} {problem}", hint="the preflight runs it once without faults before any trial; nothing was counted")
        return True

    return Check(("run", key), run)


# ----------------------------------------------------------------- what the racers' Python imports


def workload_paths(scenario_file: str | None) -> list[str]:
    """Where a user's ``package.module:factory`` is looked up: the working folder and the scenario's."""
    paths = [os.getcwd()]
    if scenario_file:
        paths.append(str(Path(scenario_file).resolve().parent))
    return paths


def preflight_cells(cells: list[Cell], scenario_file: str, jobs: int = 1) -> None:
    """Every cell's workload, saver, guard (and v2's release and workload, for a kind that deploys
    one) checked in the racers' Python before anything is written, ``jobs`` checks at a time; the
    first problem in the cells' order is raised (``run_checks``)."""
    run_checks(planned_checks(cells, scenario_file), jobs)


def planned_checks(cells: list[Cell], scenario_file: str) -> list[Check]:
    """The checks of ``cells``, in the order their problems are said (the racers' environments are
    built on the way: a release that does not install is an ``EnvironmentProblem``, exit 3)."""
    checks: list[Check] = []
    for cell in cells:
        t, t2 = cell.scenario.target, cell.scenario.deployed_target
        v2_python = deployed_python(cell, scenario_file) if t2 != t else None  # a release that does not install: exit 3
        checks += preflight(cell, scenario_file, python_for(t.framework, t.version, t.requirements), v2_python)
    return checks


class Ahead:
    """The preflights of runs that have not started yet, checked in the background while another
    run's trials go on (``chaos nightly``: every later entry's, in the suite's order, during this
    entry's cells).

    Why: a preflight is cold interpreters importing the framework, seconds each (a CrewAI example's
    three runs: 10 s; the Agents SDK's nine back-end checks: 9 s), and in a night they ran between
    two runs while the cores were idle: 179 s of a 21-minute night on 2 cores. Ahead of time they
    cost a core the running cells leave over.

    What it promises:

    * **Nothing changes in what a preflight says.** It only adds to the checks that passed in this
      process (``run_checks``' memory); a check that fails or shows nothing here is forgotten, and
      the run's own preflight checks it again and says the first problem in the cells' order, as
      without it. One check at a time, each as the run's own would run it.
    * **Never beside a race.** ``hold`` lets the check under way end and starts no other until
      ``go``: the nightly holds it before a cell whose kind keeps its racers' timing windows
      (``Kind.keeps_windows``), so no race trial shares the cores with it.
    * **A started run's checks are its own.** ``past(i)``: the entry at ``i`` starts now (its own
      preflight checks what is left, with its own ``--jobs``); no check of it or of an entry before
      it starts here any more.
    * **No process outlives it.** ``stop`` kills the check under way and joins the thread (the night
      ended, was interrupted or failed).
    """

    def __init__(self, entries: list[tuple[list[Cell], str]]) -> None:
        self.entries = entries  # each later run's cells and scenario file, in the order they run
        self.children = _Children()
        self.cond = threading.Condition()
        self.open = False  # a check may start (``go``)
        self.busy = False  # a check (or a plan, which may build an environment) is under way
        self.stopped = False
        self.started = -1  # the last entry whose run has started (``past``)
        self.thread = threading.Thread(target=self._check_all, name="chaos-preflight-ahead", daemon=True)
        self.thread.start()

    def go(self) -> None:
        """Checks may start (again)."""
        with self.cond:
            self.open = True
            self.cond.notify_all()

    def hold(self) -> None:
        """Start no check until ``go``; return once the one under way (if any) has ended."""
        with self.cond:
            self.open = False
            self.cond.wait_for(lambda: not self.busy)

    def past(self, index: int) -> None:
        """The run of entry ``index`` starts: no check of it, or of an earlier one, starts here any more."""
        with self.cond:
            self.started = max(self.started, index)

    def stop(self) -> None:
        """End it now: the check under way is killed, no other starts; returns once its thread has."""
        with self.cond:
            self.stopped = True
            self.cond.notify_all()
        self.children.kill()
        self.thread.join()

    def _step(self, index: int, work: Callable[[], object]) -> bool:
        """Run ``work`` for entry ``index`` once checks may start, unless that entry's run started
        first (False: stopped); whatever it raises is forgotten."""
        with self.cond:
            self.cond.wait_for(lambda: self.open or self.stopped)
            if self.stopped:
                return False
            if index <= self.started:
                return True
            self.busy = True
        try:
            work()
        except Exception:  # the run's own preflight runs it again and says the problem, in order
            pass
        finally:
            with self.cond:
                self.busy = False
                self.cond.notify_all()
        return True

    def _check_all(self) -> None:
        for index, (cells, scenario_file) in enumerate(self.entries):
            checks: list[Check] = []
            if not self._step(index, lambda: checks.extend(planned_checks(cells, scenario_file))):  # noqa: B023 (called at once)
                return
            for check in checks:
                if not self._step(index, partial(self._check, check)):
                    return

    def _check(self, check: Check) -> None:
        if check.key not in _passed and check.run(self.children):  # (not passed by an earlier entry's, or a run's own)
            _passed.add(check.key)


@contextlib.contextmanager
def racer_side(python: str, paths: list[str]) -> Iterator[dict[str, str]]:
    """The environment of a preflight's process in the racers' Python, with a temp folder of its own
    (``TMPDIR``) removed after it: what a framework leaves there (CrewAI's ``crewai:<md5>.lock``)
    goes with it, never into the user's temp folder, as for a launcher's racers (``racer_tmp``)."""
    with tempfile.TemporaryDirectory(prefix="chaos-preflight-") as tmp:
        yield {**racer_env(python, paths), "TMPDIR": tmp}


def _module_preflight(what: str, module: str, ref: str, scenario_file: str | None, python: str, hint: str, reads: str = "") -> Check:
    """Run ``python -m <module> <ref>`` in the racers' Python (once per interpreter, ref and
    ``reads``: what else the check depends on, such as the store it opens); a failure is refused in
    one line naming the scenario file, with the exit's last stderr line."""
    key = ("module", python, what, ref + reads)

    def run(children: _Children) -> bool:
        nonce = secrets.token_hex(8)  # said only once the check ran to its end: an exit status 0 alone is not trusted
        with racer_side(python, workload_paths(scenario_file)) as env:
            proc = children.run([python, "-c", _RUN_TO_THE_END, module, ref, nonce], env, 300)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            raise TargetError(f"{scenario_file or 'scenario'}: {last}", hint=hint)
        if f"chaos-preflight-done {nonce}" not in proc.stdout:
            raise TargetError(
                f"{scenario_file or 'scenario'}: the {what} {ref!r} ended the process (exit status 0) before its check finished "
                "(os._exit or sys.exit in the factory?): every racer would stop the same way",
                hint=hint,
            )
        return True

    return Check(key, run)


# runs ``python -m MODULE REF`` and then says it got to the end (a factory that calls os._exit(0)
# ends the process with status 0 before the check returns: that is no pass)
_RUN_TO_THE_END = """
import runpy, sys
module, ref, nonce = sys.argv[1:4]
sys.argv = [module, ref]
try:
    runpy.run_module(module, run_name="__main__", alter_sys=True)
except SystemExit as exc:
    if exc.code not in (None, 0):
        raise
sys.stdout.write("\\nchaos-preflight-done " + nonce + "\\n")
sys.stdout.flush()
"""


def deployed_python(cell: Cell, scenario_file: str) -> str:
    """The interpreter of v2's release (``upgrade_to.target``), built once; a release or requirement
    that does not install is one line naming the field, before any trial (exit 3)."""
    t = cell.scenario.deployed_target
    try:
        return python_for(t.framework, t.version, t.requirements)
    except EnvironmentProblem as exc:
        asked = " ".join([f"{t.framework} {t.version or 'default'}", *t.requirements])
        raise EnvironmentProblem(
            f"{scenario_file}: upgrade_to.target ({asked}) does not install: {exc.message}",
            hint="name a release and requirements that exist on PyPI and install together",
        ) from None


def target_preflight(cell: Cell, scenario_file: str | None, python: str) -> list[Check]:
    """The adapter's own checks (``TargetInfo.preflight``: its environment imports the framework, its
    workload_params agree, its store opens), run once per configuration in the racers' Python."""
    info = TARGETS.get(cell.scenario.target.framework)
    if info is None or not info.preflight:
        return []
    spec = json.dumps(
        {"target": cell.scenario.target.model_dump(), "workload": cell.scenario.workload, "workload_params": cell.scenario.workload_params},
        sort_keys=True,
        default=str,
    )
    check = _module_preflight(
        "target",
        info.preflight,
        spec,
        scenario_file,
        python,
        hint=f"the {info.framework} adapter checks this before any trial; nothing was run",
        # the store it opens is the run's (CHAOS_PG_DSN): a check passed for one database says nothing of another
        reads=hashlib.sha256(os.environ.get("CHAOS_PG_DSN", "").encode()).hexdigest(),
    )
    return [check]


def preflight(cell: Cell, scenario_file: str | None, python: str, v2_python: str | None = None) -> list[Check]:
    """What must hold before ``cell`` runs, in the order it is said: a user's workload factory must
    import in the racers' interpreter, and its wiring must be right. A kind that deploys v2 of the
    workload (``Kind.deploys``) gets v2 checked the same way, in v2's interpreter when the deploy is
    also a library release (``v2_python``)."""
    checks = target_preflight(cell, scenario_file, python)
    modules = hooks_of(cell.scenario.target.framework)
    for check in modules.module_checks(cell) if isinstance(modules, ChecksModules) else []:  # a team's saver, a guard
        checks.append(_module_preflight(check.what, check.module, check.ref, scenario_file, python, hint=check.hint))
    checks += _preflight_workload(cell, scenario_file, python, "workload", "v1")
    if get_kind(cell.scenario.kind).deploys:
        field = "upgrade_to.workload" if cell.scenario.upgrade_to.workload else "workload"
        checks += _preflight_workload(deployed_cell(cell), scenario_file, v2_python or python, field, "v2")
    return checks


def _preflight_workload(cell: Cell, scenario_file: str | None, python: str, field: str, version: str) -> list[Check]:
    """The workload factory imports in ``python`` (once), then its wiring is checked (``preflight_run``)."""
    ref = cell.scenario.workload
    info = TARGETS.get(cell.scenario.target.framework)
    paths = workload_paths(scenario_file)
    if info is None or ref in info.workloads:
        if info is not None and cell.scenario.effect_fault is not None:  # the faulted effect must be one the workload fires
            return [preflight_run(cell, scenario_file, python, paths)]
        return []
    rules = hooks_of(cell.scenario.target.framework)
    if isinstance(rules, ValidatesScenario) and rules.owns_workload(ref):  # the framework's own form loads in the run
        return [preflight_run(cell, scenario_file, python, paths, version)]
    key = ("import", python, ref)

    def imports(children: _Children) -> bool:
        code = "import sys; from chaos.workloads import import_factory; import_factory(sys.argv[1])"
        with racer_side(python, paths) as env:
            proc = children.run([python, "-c", code, ref], env, 300)
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["?"])[-1]
            raise TargetError(
                f"{scenario_file or 'scenario'}: {field}: {ref!r} does not import in the racers' Python: {last}",
                hint="check the module path and that it is importable from the scenario's folder",
            )
        return True

    return [Check(key, imports), preflight_run(cell, scenario_file, python, paths, version)]
