"""Every framework's racers start warm: forked from a server that imported the framework once.

What a user sees: with the default (warm) racers, a CrewAI, LlamaIndex, pydantic-graph or AutoGen
racer runs the built-in ``three_step`` to the end like a cold one, its effects carry its own pid,
it imports no module its server had not (each would be compiled again in every racer),
and the server it was forked from holds the framework's modules, one thread (no native pool
either: CrewAI's numpy/OpenBLAS is kept to the calling thread) and no descriptor besides its
protocol's, so its next fork is still safe.

And whoever drives a launcher (``chaos run``, or a test or benchmark that starts racers itself), a
CrewAI racer's lock files (``crewai:<md5>.lock``, in the temp folder) end up in the launcher's own
folder, never in the caller's temp folder (``/tmp``): warm or cold, the racers get a ``TMPDIR`` there.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from kits.warmkit import spec

from chaos.envs import python_for, racer_env
from chaos.launchers.local import LocalLauncher
from chaos.launchers.warm.client import WarmLauncher
from chaos.running.trial import wait_until

FRAMEWORKS = {  # framework: (backend, a module its racers need, preloaded by the server)
    "crewai": ("sqlite", "crewai.flow.flow"),
    "llamaindex": ("file", "workflows"),
    "pydantic_graph": ("file", "pydantic_graph.persistence.file"),
    "autogen": ("file", "autogen_agentchat.teams"),
}


@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_a_warm_racer_of_each_framework_runs_three_step_and_the_server_stays_fork_safe(tmp_path, framework):
    backend, module = FRAMEWORKS[framework]
    python = python_for(framework)
    launcher = WarmLauncher(python=python, env=racer_env(python), log_dir=tmp_path)
    try:
        s = spec(tmp_path, "dry")
        s["target"] = {"framework": framework, "backend": backend, "durability": "sync", "version": None}
        (h,) = launcher.start_group([s], str(tmp_path))
        assert wait_until(lambda: h.state() == "exited", 300), h.log_tail()
        assert h.exit_status().code == 0, h.log_tail()
        result = h.result()
        assert result["status"] == "ok", result.get("error")
        assert result["outcomes"][-1]["status"] == "done", result["outcomes"][-1]
        assert all(v for v in result["versions"].values()), result["versions"]  # read once, by the server
        # the server imported everything it runs: a racer reads and compiles no module again
        assert result["late_imports"] == [], result["late_imports"]
        rows = sqlite3.connect(tmp_path / "ledger.sqlite").execute("SELECT task, pid FROM effects ORDER BY seq").fetchall()
        assert [t for t, _ in rows] == ["a", "b", "c"]
        client = launcher.client
        assert {p for _, p in rows} == {h.pid} and h.pid != client.pid
        st = client.request("status")
        assert module in st["preloaded"], st["preloaded"]
        assert st["threads"] == 1 and st["fork_unsafe"] is None, st
        assert st["children"] == {}
        assert len(list(Path(f"/proc/{client.pid}/task").iterdir())) == 1  # no native thread either
    finally:
        launcher.reap()


def test_a_server_whose_imports_leave_a_native_thread_refuses_to_start_and_says_which(tmp_path):
    """CrewAI imports numpy; with OpenBLAS allowed two threads its pool starts at import. Python's
    threading does not see it; the server does, and will not fork such a process."""
    from chaos.racer.errors import EnvironmentProblem

    python = python_for("crewai")
    env = dict(racer_env(python), OPENBLAS_NUM_THREADS="2")
    launcher = WarmLauncher(python=python, env=env, log_dir=tmp_path)
    try:
        with pytest.raises(EnvironmentProblem) as err:
            launcher.server("crewai", str(tmp_path / "work"))
        assert "native thread" in str(err.value) and "not safe to fork" in str(err.value)
        assert "--racers cold" in (err.value.hint or "")
    finally:
        launcher.reap()


@pytest.mark.parametrize("start", ["warm", "cold"])
def test_a_crewai_racer_leaves_its_lock_files_in_the_launchers_folder_not_in_the_callers_temp_folder(tmp_path, start):
    python = python_for("crewai")
    callers_tmp = tmp_path / "machine-tmp"  # the caller's temp folder, /tmp on a CI machine
    callers_tmp.mkdir()
    env = dict(racer_env(python), TMPDIR=str(callers_tmp))
    work = tmp_path / "work"  # a run's work folder: one folder per trial in it
    trial = work / "t0"
    trial.mkdir(parents=True)
    launcher = WarmLauncher(python=python, env=env) if start == "warm" else LocalLauncher(python=python, env=env)
    try:
        s = spec(trial, "r0")
        s["target"] = {"framework": "crewai", "backend": "sqlite", "durability": "sync", "version": None}
        (h,) = launcher.start_group([s], str(trial))
        assert wait_until(lambda: h.state() == "exited", 300), h.log_tail()
        assert h.exit_status().code == 0 and h.result()["outcomes"][-1]["status"] == "done", h.log_tail()
    finally:
        launcher.reap()
    assert not list(callers_tmp.glob("crewai:*.lock"))
    # the racer did lock its store by name: the lock file is in the run's work folder, and goes with it
    assert list((work / "tmp").glob("crewai:*.lock"))


def test_a_llamaindex_server_with_llama_index_core_preloads_it_and_stays_fork_safe(tmp_path):
    """Where a scenario's requirements bring llama-index-core (agents: ``FunctionAgent``), the
    server imports it (and its default tokenizer, and the aiosqlite dialect ``Memory`` opens) once,
    instead of every racer paying ~1.5 s of imports in its build; numpy's OpenBLAS stays at the
    calling thread, so the server still holds one thread and nothing else."""
    python = python_for("llamaindex", extra=["llama-index-core==0.14.25"])
    launcher = WarmLauncher(python=python, env=racer_env(python), log_dir=tmp_path)
    try:
        client = launcher.server("llamaindex", str(tmp_path / "work"))
        st = client.request("status")
        assert {"llama_index.core", "llama_index.core.agent.workflow", "aiosqlite"} <= set(st["preloaded"]), st["preloaded"]
        assert st["threads"] == 1 and st["fork_unsafe"] is None, st
        assert len(list(Path(f"/proc/{client.pid}/task").iterdir())) == 1  # no native thread either
    finally:
        launcher.reap()
