"""The racer side stands alone: it imports with only the standard library, and it is what ships.

A racer runs in the framework's environment, in a container or on an SSH host, where none of the
orchestrator's packages (pydantic, PyYAML, rich, psutil, ...) are installed. So ``chaos/racer/``,
``chaos/targets/`` (the registry, base and common code) and ``chaos/workloads/`` (the context),
with ``chaos/__init__.py``, must import with every other top-level package refused; the racer's
entry point must not pull in the orchestrator side; and the set copied to an SSH host must be the
whole folder, enough to import on its own. The framework adapters (``chaos/targets/langgraph/session.py``
and the like) import their framework and are checked by the framework tests instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import chaos
from chaos.launchers.ssh import racer_files

CHAOS = Path(chaos.__file__).resolve().parent
RACER_SIDE = ("racer", "targets", "workloads")
ORCHESTRATOR_SIDE = (
    "chaos.running",
    "chaos.reports",
    "chaos.scenario",
    "chaos.kinds",
    "chaos.verdicts",
    "chaos.cli",
    "chaos.launchers",
    "chaos.remote",
    "chaos.records",
    "chaos.envs",
)
ORCHESTRATOR_PACKAGES = ("pydantic", "yaml", "rich", "typer", "psutil", "paramiko", "docker", "jinja2", "matplotlib")

# Run in a fresh interpreter: put a chaos folder first on the path, refuse every top-level module
# that is neither standard library nor chaos (nor one of the names allowed on the command line,
# imported before the refusal starts), import the modules asked for, and say what happened.
PROBE = r"""
import importlib, json, sys, traceback
root, allowed, modules = sys.argv[1], set(json.loads(sys.argv[2])), json.loads(sys.argv[3])
sys.path.insert(0, root)
for name in sorted(allowed):
    importlib.import_module(name)

class RefuseThirdParty:
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in sys.stdlib_module_names or top == "chaos" or top in allowed:
            return None
        raise ModuleNotFoundError(f"refused: {name!r} is neither the standard library nor chaos", name=name)

before = set(sys.modules)
sys.meta_path.insert(0, RefuseThirdParty())
failed = {}
for name in modules:
    try:
        importlib.import_module(name)
    except BaseException:
        failed[name] = traceback.format_exc(limit=-3)
import chaos
print(json.dumps({"chaos": chaos.__file__, "failed": failed, "loaded": sorted(set(sys.modules) - before)}))
"""


def probe(modules: list[str], *, root: Path | None = None, allow: tuple[str, ...] = (), isolated: bool = False) -> dict:
    cmd = [sys.executable, *(["-I"] if isolated else []), "-c", PROBE, str(root or CHAOS.parent), json.dumps(allow), json.dumps(modules)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def racer_side_modules() -> list[str]:
    """Every module of chaos.racer, and the framework-free core of chaos.targets and chaos.workloads."""
    racer = [f"chaos.racer.{f.stem}" for f in sorted((CHAOS / "racer").glob("*.py")) if f.stem not in ("__init__", "__main__", "ledger_pg")]
    return [
        "chaos",
        "chaos.racer",
        *racer,
        "chaos.targets",
        "chaos.targets.base",
        "chaos.targets.common",
        "chaos.targets.langgraph.custom_saver",
        "chaos.targets.langgraph.savers",
        "chaos.workloads",
    ]


def orchestrator_modules(loaded: list[str]) -> list[str]:
    return [m for m in loaded if m.startswith(ORCHESTRATOR_SIDE) or m.partition(".")[0] in ORCHESTRATOR_PACKAGES]


def test_the_racer_side_imports_with_every_third_party_package_refused():
    out = probe(racer_side_modules())
    assert out["failed"] == {}, "\n".join(out["failed"].values())
    assert Path(out["chaos"]).resolve() == CHAOS / "__init__.py"  # this checkout's chaos, not an installed one
    assert orchestrator_modules(out["loaded"]) == []


def test_the_postgres_ledger_needs_only_its_database_driver():
    # the one racer module with a third-party import: psycopg, the driver of the Postgres ledger
    out = probe(["chaos.racer.ledger_pg"], allow=("psycopg",))
    assert out["failed"] == {}, "\n".join(out["failed"].values())
    assert orchestrator_modules(out["loaded"]) == []


def test_the_racers_entry_point_loads_nothing_of_the_orchestrator():
    out = probe(["chaos.racer.main"])
    assert out["failed"] == {}, "\n".join(out["failed"].values())
    loaded_chaos = [m for m in out["loaded"] if m.startswith("chaos.")]
    assert "chaos.racer.main" in loaded_chaos
    assert orchestrator_modules(out["loaded"]) == []
    assert all(m.startswith(("chaos.racer", "chaos.targets", "chaos.workloads")) for m in loaded_chaos), loaded_chaos


def test_what_ships_to_an_ssh_host_is_the_whole_racer_side_and_imports_on_its_own(tmp_path):
    shipped = racer_files()
    on_disk = {"chaos/__init__.py"} | {
        f"chaos/{f.relative_to(CHAOS).as_posix()}" for pkg in RACER_SIDE for f in (CHAOS / pkg).rglob("*.py")
    }
    assert set(shipped) == on_disk
    # copied alone into an empty folder (as on a host), in an isolated interpreter, it imports
    for rel, content in shipped.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(content)
    out = probe(racer_side_modules(), root=tmp_path, isolated=True)
    assert out["failed"] == {}, "\n".join(out["failed"].values())
    assert Path(out["chaos"]).resolve() == (tmp_path / "chaos" / "__init__.py").resolve()


def test_chaos_saver_factories_are_racer_side_and_keep_their_scenario_name():
    """``target.saver: chaos.savers:mysql`` names factories that run in racers: they ship to SSH hosts
    (``chaos/targets/langgraph/savers.py``), and a racer reads the ``chaos.savers`` name as that module, since
    a host gets no ``chaos/savers.py``; the alias module locally re-exports the same functions."""
    import chaos.savers
    import chaos.targets.langgraph.savers
    from chaos.targets.langgraph.custom_saver import saver_ref

    shipped = racer_files()
    assert "chaos/targets/langgraph/savers.py" in shipped and "chaos/savers.py" not in shipped
    for name in chaos.savers.__all__:
        assert getattr(chaos.savers, name) is getattr(chaos.targets.langgraph.savers, name)
        module, _, attr = saver_ref(f"chaos.savers:{name}").partition(":")
        assert module == "chaos.targets.langgraph.savers" and hasattr(chaos.targets.langgraph.savers, attr)
    assert saver_ref("tests.kits.savers:raises") == "tests.kits.savers:raises"
    out = probe(["chaos.savers"])  # the alias itself is standard library only
    assert out["failed"] == {}, "\n".join(out["failed"].values())
