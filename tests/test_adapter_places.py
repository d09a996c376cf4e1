"""A new adapter costs what CONTRIBUTING says (issue 23): its ``TargetInfo``, its racer-side module,
its workloads, its tests, and the few places the table in "Adding a framework adapter" lists.

The test registers a made-up framework's ``TargetInfo`` (``register_target``, undone after) and checks
that every per-framework reader of chaos handles it with nothing else edited: scenario field checks,
blame, shard estimates, AA's recovery-call reasons, scripts/compare_results.py and CI's environments.
The shipped adapters are checked against the one place that cannot read ``TargetInfo`` (pyproject's
mypy overrides), and CONTRIBUTING against the places that remain.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

import chaos
from chaos.kinds import kind_names, property_names
from chaos.kinds.approval import recovery_call
from chaos.racer.protocol import ErrorInfo
from chaos.running.blame import blame_error
from chaos.running.shard import estimate_cost
from chaos.scenario.model import ScenarioError, parse_scenario
from chaos.targets import BRANCHES, BREAKPOINTS, PACKAGES, TARGETS, TargetInfo, ci_specs, register_target
from chaos.targets.base import RacerHalf, load_racer_half

ROOT = Path(__file__).resolve().parents[1]
CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text()

FAKE = TargetInfo(
    framework="fakeflow",
    module="fakeflow_adapter",  # never imported here: nothing below starts a racer
    about="a made-up framework: checks that its TargetInfo is all chaos needs",
    backends=("file",),
    workloads={"three_step": "a -> b -> c", "gate_after_interrupt": "pre -> gate -> end"},
    kinds=("kill_sweep", "stray_resume"),
    properties=("EO", "PC"),
    distributions=("fakeflow",),
    boundaries="save(step):before/after",
    unsupported={"durability": "fakeflow saves synchronously"},
    import_name="fakeflow.core",
    packages=("fakeflow", "fakeflow_ext"),
    trial_s=7.5,
    recovery_calls={"none": "fakeflow.resume()", "input": "fakeflow.start()", "command": "fakeflow.resume(answer)"},
    open_cases={"sweep-gate": "made up: fakeflow saves the gate from a thread"},
    ci_versions=("", "0.9"),
)


@pytest.fixture
def fake():
    undo = register_target(FAKE)
    try:
        yield TARGETS["fakeflow"]
    finally:
        undo()
    assert "fakeflow" not in TARGETS


def test_register_target_is_undone():
    undo = register_target(FAKE)
    assert TARGETS["fakeflow"] is FAKE
    undo()
    assert "fakeflow" not in TARGETS
    lg = TARGETS["langgraph"]
    undo = register_target(FAKE.__class__(**{**lg.__dict__, "about": "replaced"}))
    assert TARGETS["langgraph"].about == "replaced"
    undo()
    assert TARGETS["langgraph"] is lg


def test_scenario_fields_are_checked_for_the_new_framework(fake):
    ok = parse_scenario(
        "name: f\nkind: kill_sweep\nworkload: three_step\nresume: none\ntarget: {framework: fakeflow, backend: file}\n",
        "f.yaml",
    )
    assert ok.target.framework == "fakeflow"
    # what LangGraph's adapter alone reads, and durability (declared unsupported), are refused at load
    assert set(fake.unread_fields) >= {"answers", "resume:app", "target.guard", "target.durability"}
    with pytest.raises(ScenarioError) as err:
        parse_scenario(
            "name: f\nkind: kill_sweep\nworkload: three_step\nresume: none\n"
            "target: {framework: fakeflow, backend: file, durability: exit}\n",
            "f.yaml",
        )
    assert "fakeflow does not read" in str(err.value) and "fakeflow saves synchronously" in str(err.value)
    with pytest.raises(ScenarioError, match="backend"):
        parse_scenario(
            "name: f\nkind: kill_sweep\nworkload: three_step\nresume: none\ntarget: {framework: fakeflow, backend: sqlite}\n",
            "f.yaml",
        )


def _raised_in(module: str, *modules: str) -> ErrorInfo:
    frames = [{"module": m, "file": f"/x/{m.replace('.', '/')}.py", "line": 1, "func": "f"} for m in modules]
    return {"type": "FakeflowError", "message": "boom", "module": module, "where": "", "frames": frames}  # type: ignore[typeddict-item]


def test_blame_knows_the_new_frameworks_packages(fake):
    # raised inside the framework's second package, called from chaos's adapter: the framework's (a verdict)
    err = _raised_in("fakeflow_ext.errors", "chaos.targets.fakeflow", "fakeflow_ext.engine")
    assert blame_error(err, "fakeflow").party == "framework"
    # the same error where fakeflow_ext is not the framework's: the app's code, the trial invalid
    assert blame_error(err, "crewai").party == "app"


def test_shard_estimates_read_trial_s(fake):
    text = (
        "name: f\nkind: stray_resume\nworkload: gate_after_interrupt\nresume: 'command:true'\ntarget: {{framework: {fw}, backend: file}}\n"
    )
    fast = estimate_cost(parse_scenario(text.format(fw="pydantic_graph"), "f.yaml"))
    slow = estimate_cost(parse_scenario(text.format(fw="fakeflow"), "f.yaml"))
    assert slow > fast  # 7.5 s a trial against pydantic-graph's 1.0


def test_aa_names_the_new_frameworks_recovery_call(fake):
    assert recovery_call("fakeflow", "none") == "fakeflow.resume()"
    assert recovery_call("fakeflow", "unknown form") == "fakeflow.resume(answer)"
    assert recovery_call("pydantic_graph", "none") == "the recovery call"  # declares none: neutral words


def test_ci_builds_the_new_frameworks_environments(fake):
    assert ci_specs()[-2:] == ["fakeflow", "fakeflow:0.9"]
    assert "ci_specs" in (ROOT / ".ci" / "envs.sh").read_text()  # the default specs are read, not listed


def test_host_checks_and_the_racer_image_read_the_new_frameworks_distributions(fake):
    from chaos.remote.hostcheck import probe
    from chaos.remote.images import racer_dists

    assert "'fakeflow'" in probe() and "'crewai'" in probe() and "'psycopg'" in probe()  # every framework's, and the drivers
    # the image carries the frameworks installed here only: LangGraph's, with its Postgres drivers, as before
    assert "fakeflow" not in racer_dists()
    assert set(racer_dists()) >= {
        "langgraph",
        "langgraph-checkpoint-sqlite",
        "langgraph-checkpoint-postgres",
        "psycopg",
        "psycopg-binary",
        "psycopg-pool",
    }


def _load_compare_results(monkeypatch):
    spec = importlib.util.spec_from_file_location("compare_results_under_test", ROOT / "scripts" / "compare_results.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, mod)
    spec.loader.exec_module(mod)
    return mod


def _compare_results(monkeypatch, tmp_path):
    mod = _load_compare_results(monkeypatch)
    (tmp_path / "scenarios").mkdir()
    for f in (ROOT / "scenarios").glob("*.yaml"):
        (tmp_path / "scenarios" / f.name).write_text(f.read_text())
    monkeypatch.setattr(mod, "REPO", tmp_path)
    return mod


def test_compare_results_covers_the_new_framework(fake, monkeypatch, tmp_path):
    cr = _compare_results(monkeypatch, tmp_path)
    assert "fakeflow" not in cr.contract_frameworks()
    assert "no contract scenario" in cr.excluded()["contract_fakeflow.yaml"]
    (tmp_path / "scenarios" / "contract_fakeflow.yaml").write_text(
        (ROOT / "scenarios" / "contract_autogen.yaml").read_text().replace("autogen", "fakeflow")
    )
    assert cr.deterministic_cases("fakeflow") == ["sweep-three-step", "stray-completed", "recovery"]
    for entries in (cr.default_entries(), cr.full_entries()):
        (mine,) = [e for e in entries if e.file == "contract_fakeflow.yaml"]
        assert [c["name"] for c in mine.overrides["matrix"]["case"]] == ["sweep-three-step", "stray-completed", "recovery"]
    assert "sweep-gate: made up" in cr.excluded()["contract_fakeflow cases"]


def test_the_shipped_contract_comparison_is_unchanged(monkeypatch):
    """The generic reading gives the case lists compare_results listed by hand before issue 23."""
    cr = _load_compare_results(monkeypatch)
    assert cr.deterministic_cases("langgraph") == [
        "fork-checkpoint",
        "fork-checkpoint-memory",
        "fork-explicit",
        "stray-completed",
        "stray-waiting",
        "stray-waiting-memory",
        "stray-waiting-by-id",
        "invalid-type",
        "invalid-reducer",
        "recovery-sync",
    ]
    assert cr.deterministic_cases("crewai") == ["persist-three-step", "persist-gate", "stray-completed"]
    for fw in ("llamaindex", "pydantic_graph", "autogen"):
        assert cr.deterministic_cases(fw) == ["sweep-three-step", "sweep-gate", "stray-completed", "recovery"]


# -- the places that remain ------------------------------------------------------------------------

INSTALLED_WITH_CHAOS = {"langgraph"}  # in the orchestrator's own environment (pyproject's langgraph extra)


@pytest.mark.parametrize("framework", sorted(set(TARGETS) - INSTALLED_WITH_CHAOS))
def test_mypy_overrides_name_each_frameworks_imported_packages(framework):
    """pyproject.toml cannot read TargetInfo: mypy's ``ignore_missing_imports`` names the imported
    module, not the importer, so an inline ``# mypy:`` comment in the adapter cannot set it."""
    overrides = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]["overrides"]
    ignored = {m.removesuffix(".*") for o in overrides if o.get("ignore_missing_imports") for m in o["module"]}
    imported = {  # by the framework's package and its workloads modules (<framework>*.py)
        line.split()[1].split(".")[0]
        for f in [*(ROOT / "chaos" / "targets" / framework).glob("*.py"), *(ROOT / "chaos" / "workloads").glob(f"{framework}*.py")]
        for line in f.read_text().splitlines()
        if line.strip().startswith(("import ", "from "))
    }
    # a package installed beside chaos (langgraph-sdk comes with langgraph) is found by mypy: no override
    absent = {p for p in imported & set(TARGETS[framework].top_packages()) if importlib.util.find_spec(p) is None}
    missing = absent - ignored
    assert not missing, f"pyproject.toml [tool.mypy.overrides]: add {sorted(missing)}"


def test_contributing_lists_the_places_that_remain():
    section = CONTRIBUTING[CONTRIBUTING.index("## Adding a framework adapter") : CONTRIBUTING.index("## Adding a launcher")]
    for gone in ("FRAMEWORK_PACKAGES", "FRAMEWORK_S", "RECOVERY_CALLS", "_unread(", "_PROBE", "chaos/targets/<framework>.py"):
        assert gone not in section, gone
    for field in ("packages", "trial_s", "recovery_calls", "open_cases", "ci_versions", "distributions", "drivers"):
        assert f"`{field}`" in section, field
    for place in ("tool.mypy.overrides", "contract_<framework>.yaml", "contract_all.yaml", "chaos/targets/<framework>/", "session.py"):
        assert place in section, place
    # the list is proved by the test that writes a framework as one package and runs it
    assert "test_an_eighth_framework_is_one_package_and_nothing_else" in section
    assert "register_package" in section and "RacerHalf" in section
    table = section[section.index("| Place |") :]
    assert "hostcheck" not in table  # it reads TARGETS now


# -- the racer half is a protocol -----------------------------------------------------------------


@pytest.mark.parametrize("framework", list(PACKAGES))
def test_every_frameworks_racer_module_is_a_racer_half(framework):
    """What a racer and the fork server use of an adapter module is declared (``RacerHalf``), not
    probed: every registered package's ``session`` has it, with neutral values where it has nothing."""
    info = TARGETS[framework]
    assert info.module == f"{PACKAGES[framework]}.session"
    adapter = load_racer_half(info.module)
    assert isinstance(adapter, RacerHalf)
    assert all(isinstance(m, str) for m in (*adapter.PRELOAD, *adapter.PRELOAD_OPTIONAL))


def test_a_module_that_is_no_racer_half_is_named_with_what_it_lacks():
    with pytest.raises(TypeError, match=r"adapter module chaos.targets.common lacks open_session, PRELOAD, PRELOAD_OPTIONAL, prewarm"):
        load_racer_half("chaos.targets.common")


# -- a fact is said once ----------------------------------------------------------------------------


@pytest.mark.parametrize("framework", list(PACKAGES))
def test_every_unsupported_key_is_one_that_code_reads(framework):
    """``unsupported`` is data, so each key is one that code looks up: a kind, property or feature
    (``supports``), ``durability`` (the unread field's reason), an answer plan (the scenario check
    reads ``answers`` and ``answers on <backend>``), or a key the adapter's own session raises as its
    ``Unsupported`` reason. Prose about the framework goes in a comment beside the table."""
    info = TARGETS[framework]
    read_generically = {*property_names(), *kind_names(), BRANCHES, BREAKPOINTS, "durability", "answers"}
    read_generically |= {f"answers on {b}" for b in info.backends}
    own_code = "\n".join(f.read_text() for f in (ROOT / "chaos" / "targets" / framework).glob("*.py") if f.name != "__init__.py")
    for key in info.unsupported:
        assert key in read_generically or f'unsupported["{key}"]' in own_code, f"{framework}: unsupported[{key!r}] is read by no code"


def test_an_adapters_cannot_text_is_its_infos():
    """ "Cannot fork" is written once, in the table, and raised from there."""
    for framework in ("autogen", "llamaindex", "pydantic_graph"):
        session = (ROOT / "chaos" / "targets" / framework / "session.py").read_text()
        assert 'INFO.unsupported["fork"]' in session and "UNSUPPORTED_OPS" not in session, framework


# -- nothing else names a framework ----------------------------------------------------------------

# shared modules that still name a framework in code, each with who removes it. The list only shrinks:
# a module that no longer names one must leave it (the test below fails on a stale line), and it may
# not grow beyond its size at issue 35's start. The goal is one line, chaos/repro.py's.
NAMES_A_FRAMEWORK = {
    # empty: repro scripts are written by each framework's package (chaos.targets.hooks.WritesRepro),
    # the scenario, preflight and double-texting checks ask the framework's hooks, and "no guard" is
    # chaos.targets.NO_GUARD
}
NAMES_A_FRAMEWORK_AT_START = 8  # issue 35's count (7 shared modules + chaos/reports/guards.py); never more


def _owners() -> dict[str, set[str]]:
    """Each framework name and top-level package -> the frameworks that declare it (``pydantic_ai``:
    DBOS and pydantic-graph; ``langgraph``: LangGraph and the Agent Server, built on it)."""
    owners: dict[str, set[str]] = {}
    for fw in TARGETS:
        for name in {fw, *TARGETS[fw].top_packages()}:
            owners.setdefault(name, set()).add(fw)
    return owners


def _names_in(path: Path) -> set[str]:
    """The framework names and packages ``path`` quotes or imports (AST: docstrings and comments that
    mention one in prose do not count; a ``chaos.targets.<framework>`` module names that framework)."""
    owners = _owners()

    def of(text: str) -> set[str]:
        if text.startswith("chaos.targets."):
            fw = text.split(".")[2].split(":")[0]
            return {fw} if fw in TARGETS else set()
        return {n for n in (text, text.split(".")[0] if "." in text else text) if n in owners}

    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named.update(n for a in node.names for n in of(a.name))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            named |= of(node.module)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "\n" not in node.value:
            named |= of(node.value)
    return named


def _may_name(path: str, name: str) -> bool:
    """A framework's name or package may appear in the package of each framework that declares it,
    in the workloads and in the registry."""
    return (
        path.startswith("chaos/workloads/")
        or path == "chaos/targets/__init__.py"
        or any(path.startswith(f"chaos/targets/{fw}/") for fw in _owners()[name])
    )


def test_no_shared_module_names_a_framework_in_code():
    """Like a kind's name, a framework's name or top-level package (``TARGETS``: ``framework``,
    ``top_packages()``), quoted or imported, appears only in its own package, chaos/workloads/ and
    chaos/targets/__init__.py: adding an eighth framework edits no shared module."""
    offenders: dict[str, list[str]] = {}
    for f in sorted((ROOT / "chaos").rglob("*.py")):
        rel = f.relative_to(ROOT).as_posix()
        bad = sorted(n for n in _names_in(f) if not _may_name(rel, n))
        if bad:
            offenders[rel] = bad
    assert sorted(set(offenders) - set(NAMES_A_FRAMEWORK)) == [], offenders  # a new module naming a framework
    assert sorted(set(NAMES_A_FRAMEWORK) - set(offenders)) == []  # cleaned: take its line off the list
    assert len(NAMES_A_FRAMEWORK) <= NAMES_A_FRAMEWORK_AT_START


def test_the_framework_names_check_sees_what_it_should(tmp_path):
    """The check is not vacuous: an import, a quoted name and a quoted module path each count; prose does not."""
    cases = {
        "import crewai\n": {"crewai"},
        "from langgraph.checkpoint.postgres import PostgresSaver\n": {"langgraph"},
        "from pydantic_ai import Agent\n": {"pydantic_ai"},
        "FW = 'dbos'\n": {"dbos"},
        "M = 'chaos.targets.autogen.session'\n": {"autogen"},
        '"""Like LangGraph\'s saver, or ``langgraph``: prose."""\n': set(),
    }
    for i, (text, expected) in enumerate(cases.items()):
        (tmp_path / f"m{i}.py").write_text(text)
        assert _names_in(tmp_path / f"m{i}.py") == expected, text


# -- an eighth framework is one package -------------------------------------------------------------

JOTFLOW_INIT = '''
"""jotflow: a made-up framework, written as a chaos adapter package would be (the light half)."""

from chaos.targets import TargetInfo

INFO = TargetInfo(
    framework="jotflow",
    module="jotflow_chaos.session",
    about="jotflow: steps run in order; after each, the steps done are saved to a JSON file",
    backends=("file",),
    workloads={"three_step": "a -> b -> c, one effect each"},
    kinds=("kill_sweep",),
    properties=("EO", "PC", "LIVENESS"),
    distributions=(),
    boundaries="save(after=<step>):before/after, effect(task):after",
    unsupported={"durability": "jotflow saves after every step, synchronously"},
    import_name="jotflow_chaos",
)
'''

JOTFLOW_SESSION = '''
"""jotflow's racer half: the framework itself (a few lines) and the adapter over it."""

from chaos.racer.protocol import Action, ActionOutcome, InspectResult
from chaos.targets.base import Unsupported
from chaos.targets.common import EffectRecorder, JsonFileStore, outcome, store_file
from chaos.workloads import workload_context


class Flow:
    """The framework: run the steps not yet done, saving the list of done steps after each."""

    def __init__(self, steps, store):
        self.steps, self.store, self.running = steps, store, None

    def run(self, resume):
        done = list((self.store.load() or {}).get("done", [])) if resume else []
        for name, step in self.steps:
            if name not in done:
                self.running = name
                step()
                done.append(name)
                self.store.save(f"after={name}", {"done": done})
        self.running = None


def three_step(ctx):
    return [(name, lambda name=name: ctx.effect(name)) for name in ("a", "b", "c")]


WORKLOADS = {"three_step": three_step}


class JotSession:
    gated_task = None
    meta: dict = {}

    def __init__(self, spec, barrier, ledger):
        self.recorder = EffectRecorder(barrier, ledger, spec["thread_id"])
        store = JsonFileStore(store_file(spec, ".jot.json"), barrier)
        self.flow = Flow(WORKLOADS[spec["workload"]](workload_context(spec, self.recorder)), store)
        self.recorder.where = lambda: {"node": self.flow.running, "namespace": "", "task_id": self.flow.running, "outside_task": False}

    @property
    def fired(self):
        return self.recorder.fired

    def perform(self, action: Action) -> ActionOutcome:
        op, form = action.get("op", "run"), action.get("form", "input")
        if op not in ("run", "resume") or form not in ("none", "input"):
            raise Unsupported(f"jotflow runs and resumes only (asked {op} {form})")
        self.recorder.begin_action()
        self.flow.run(resume=op == "resume" and form == "none")
        return outcome("done", self.recorder.observed)

    def inspect(self) -> InspectResult:
        done = (self.flow.store.load() or {}).get("done", [])
        names = [name for name, _ in self.flow.steps]
        return {
            "checkpoints": len(done),
            "completed_tasks": list(done),
            "completed_task_ids": list(done),
            "completed_by_namespace": {"": list(done)},
            "next": [n for n in names if n not in done],
            "pending_interrupts": 0,
            "ended": len(done) == len(names),
            "values": {"done": done},
            "error": None,
        }

    def close(self):
        pass


def open_session(spec, barrier, ledger):
    return JotSession(spec, barrier, ledger)


PRELOAD = ("jotflow_chaos",)
PRELOAD_OPTIONAL = ()


def prewarm(only=None):
    pass
'''


@pytest.mark.parametrize("start", ["warm", "cold"])
def test_an_eighth_framework_is_one_package_and_nothing_else(tmp_path, monkeypatch, start):
    """CONTRIBUTING's list, proved: a made-up framework written as ONE package outside chaos (its
    ``__init__`` with ``INFO``, its ``session`` with the racer half over a few lines of plain Python
    that saves JSON), registered by name, runs a real kill sweep with real racers and SIGKILLs, to
    valid trials and verdicts. Nothing in chaos is edited: racers import the adapter the spec names."""
    from chaos.targets import register_package
    from chaos.targets.base import load_racer_half

    package = tmp_path / "jotflow_chaos"
    package.mkdir()
    (package / "__init__.py").write_text(JOTFLOW_INIT.lstrip())
    (package / "session.py").write_text(JOTFLOW_SESSION.lstrip())
    monkeypatch.syspath_prepend(str(tmp_path))  # the orchestrator imports its light half; racers get the scenario's folder
    undo = register_package("jotflow", "jotflow_chaos")
    try:
        assert isinstance(load_racer_half(TARGETS["jotflow"].module), RacerHalf)
        scenario = tmp_path / "jot.yaml"
        scenario.write_text(
            "name: jot\nkind: kill_sweep\ntarget: {framework: jotflow, backend: file}\nworkload: three_step\n"
            f"resume: none\ntrials: 1\nseed: 5\ntimeout_s: 60\nracers: {{start: {start}}}\n"
        )
        results = chaos.run(scenario, out=tmp_path / "reports")
    finally:
        undo()
        for name in [m for m in sys.modules if m.split(".")[0] == "jotflow_chaos"]:
            del sys.modules[name]  # the next test's made-up package is its own
    assert "jotflow" not in TARGETS and "jotflow" not in PACKAGES
    (cell,) = results.cells
    assert [p.point for p in cell.points] == [
        f"{b}#1" for step in "abc" for b in (f"effect(task={step}):after", f"save(after={step}):before", f"save(after={step}):after")
    ]
    assert cell.trials == cell.valid_trials == 9 and cell.errored_trials == cell.unknown_trials == 0
    assert results.summary.kills_confirmed >= 9  # a real SIGKILL at each point, confirmed by its exit status
    verdicts = {v.property: v for v in cell.verdicts}
    # killed after b's effect and before b is saved, the resume runs b again: jotflow is at least once
    assert verdicts["EO"].status == "violated" and "b" in verdicts["EO"].reason, verdicts["EO"].reason
    after_b = next(p for p in cell.points if p.point.startswith("effect(task=b)"))
    assert after_b.effect_counts == {"a": [1], "b": [2], "c": [1]}
    # what the saved list says is done never runs again, and every resume finishes the run
    assert verdicts["PC"].status == "holds" and verdicts["LIVENESS"].status == "holds"
