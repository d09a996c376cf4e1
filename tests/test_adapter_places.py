"""A new adapter costs what CONTRIBUTING says (issue 23): its ``TargetInfo``, its racer-side module,
its workloads, its tests, and the few places the table in "Adding a framework adapter" lists.

The test registers a made-up framework's ``TargetInfo`` (``register_target``, undone after) and checks
that every per-framework reader of chaos handles it with nothing else edited: scenario field checks,
blame, shard estimates, AA's recovery-call reasons, scripts/compare_results.py and CI's environments.
The shipped adapters are checked against the one place that cannot read ``TargetInfo`` (pyproject's
mypy overrides), and CONTRIBUTING against the places that remain.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from chaos.kinds.approval import recovery_call
from chaos.racer.protocol import ErrorInfo
from chaos.running.blame import blame_error
from chaos.running.shard import estimate_cost
from chaos.scenario.model import ScenarioError, parse_scenario
from chaos.targets import TARGETS, TargetInfo, ci_specs, register_target

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
    imported = {
        line.split()[1].split(".")[0]
        for folder in ("targets", "workloads")  # the adapter, its workloads and their helper modules (<framework>_*.py)
        for f in (ROOT / "chaos" / folder).glob(f"{framework}*.py")
        for line in f.read_text().splitlines()
        if line.strip().startswith(("import ", "from "))
    }
    # a package installed beside chaos (langgraph-sdk comes with langgraph) is found by mypy: no override
    absent = {p for p in imported & set(TARGETS[framework].top_packages()) if importlib.util.find_spec(p) is None}
    missing = absent - ignored
    assert not missing, f"pyproject.toml [tool.mypy.overrides]: add {sorted(missing)}"


def test_contributing_lists_the_places_that_remain():
    section = CONTRIBUTING[CONTRIBUTING.index("## Adding a framework adapter") : CONTRIBUTING.index("## Adding a launcher")]
    for gone in ("FRAMEWORK_PACKAGES", "FRAMEWORK_S", "RECOVERY_CALLS", "_unread("):
        assert gone not in section, gone
    for field in ("packages", "trial_s", "recovery_calls", "open_cases", "ci_versions"):
        assert f"`{field}`" in section, field
    for place in ("tool.mypy.overrides", "contract_<framework>.yaml", "contract_all.yaml"):
        assert place in section, place
