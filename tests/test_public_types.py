"""A team bringing its own app imports the types it needs from one documented place,
``chaos.workloads``, whatever its framework, and importing that place costs nothing: the racer
side stays standard-library only, and each framework's types load (with their framework) only
when the app names them, in that framework's own environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import chaos.workloads
from chaos.envs import chaos_root, python_for

TYPES = {
    "langgraph": ["WorkloadContext", "LangGraphWorkload", "Breakpoint", "Edit"],
    "pydantic_graph": ["WorkloadContext", "PGWorkload", "PGRun", "Deps"],
    "crewai": ["WorkloadContext", "CrewWorkload", "CrewRun"],
    "llamaindex": ["WorkloadContext", "LlamaWorkload", "LlamaThread"],
    "autogen": ["WorkloadContext", "AutoGenWorkload", "AutoGenThread"],
    "dbos": ["WorkloadContext", "DBOSWorkload", "DBOSThread"],
}


def _python(code: str, python: str = sys.executable) -> str:
    env = {**os.environ, "PYTHONPATH": chaos_root()}
    return subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, check=True).stdout


def test_every_public_type_is_named_in_one_place():
    named = {n for names in TYPES.values() for n in names}
    assert named <= set(chaos.workloads.__all__)
    assert named <= set(dir(chaos.workloads))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        chaos.workloads.Nope  # noqa: B018


def test_importing_the_public_place_imports_no_framework_and_no_third_party_package():
    loaded = json.loads(_python("import sys, chaos.workloads; print(__import__('json').dumps(sorted(sys.modules)))"))
    heavy = {"langgraph", "crewai", "workflows", "pydantic_graph", "autogen_agentchat", "dbos", "pydantic", "yaml"}
    assert not heavy & {m.split(".")[0] for m in loaded}


@pytest.mark.parametrize("framework", sorted(TYPES))
def test_an_app_names_its_frameworks_types_from_chaos_workloads(framework):
    names = TYPES[framework]
    code = f"from chaos.workloads import {', '.join(names)}; print(' '.join(f'{{t.__module__}}.{{t.__name__}}' for t in ({', '.join(names)},)))"
    got = _python(code, python_for(framework)).split()
    assert got[0] == "chaos.workloads.WorkloadContext"
    assert got[1:] == [f"chaos.workloads.{framework}.{n}" for n in names[1:]]
