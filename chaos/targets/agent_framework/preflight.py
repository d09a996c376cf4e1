"""The Agent Framework adapter's checks before any trial (``python -m chaos.targets.agent_framework.preflight SPEC``).

Why: three kinds of bad input would otherwise surface inside the trials, or not at all. A workflow
factory that does not build fails every racer alike. A checkpoint type outside the storage's
allow-list is worse: the framework logs the failed save and runs on ("Note that this does not fail
the workflow run"), so a run that pauses reports its pending request while no checkpoint records
it, and every resume finds an older state. A storage folder that cannot be written is swallowed the
same way. This module runs in the racers' Python once per configuration (``TargetInfo.preflight``);
it exits 0 when racers can start, else prints one line saying what to change and exits 2 (the
orchestrator refuses the scenario, exit 3).

What it does: imports ``agent_framework``; checks ``workload_params`` (``storage``: a
``package.module:factory``; ``allowed_types``: ``module:qualname`` strings); builds the workload
(its factory with a no-op effect hook, then ``build()``); runs it once to its first pause or its
end over the storage it will use, in a temporary folder, and refuses any save the framework
swallowed, naming the type the allow-list lacks or the folder it could not write.

``SPEC`` is JSON: ``{"target": {...}, "workload": ..., "workload_params": {...}}``. Standard
library only, until ``agent_framework`` is imported.
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from chaos.targets.preflight import environment_problem, run

TYPE_REF = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def params_problem(params: dict[str, Any]) -> str | None:
    """What is wrong with ``workload_params`` as one sentence; None when nothing is."""
    allowed = params.get("allowed_types", [])
    if not isinstance(allowed, list) or not all(isinstance(t, str) and TYPE_REF.match(t) for t in allowed):
        return f"workload_params.allowed_types is {allowed!r}: use a list of 'module:qualname' strings (e.g. my_app.models:Ticket)"
    storage = params.get("storage")
    if storage is not None and (not isinstance(storage, str) or ":" not in storage):
        return f"workload_params.storage is {storage!r}: name a package.module:factory that takes the storage folder and returns a CheckpointStorage"
    return None


def blocked_type(message: str) -> str | None:
    """The ``module:qualname`` a failed save names as blocked by the allow-list, if it does."""
    m = re.search(r"blocked for type '([^']+)'", message)
    return m.group(1) if m else None


async def run_once(spec: dict[str, Any], folder: Path) -> str | None:
    """Build the workload and run it to its first pause or end over its storage in ``folder``."""
    from chaos.targets.agent_framework.storage import watch_saves
    from chaos.workloads import WorkloadContext, import_factory
    from chaos.workloads.agent_framework import BUILTIN, AFWorkload

    params = dict(spec.get("workload_params") or {})
    name = str(spec.get("workload") or "")
    ctx = WorkloadContext(checkpointer=None, effect_hook=lambda task, value=None, once=False, key=None: None, params=params)
    try:
        built = (BUILTIN.get(name) or import_factory(name))(ctx)
        if not isinstance(built, AFWorkload):
            return f"workload {name!r} returned {type(built).__name__}: return chaos.workloads.AFWorkload(build=..., input=..., name=...)"
        workflow = built.build()
    except Exception as exc:
        return f"workload {name!r} does not build its workflow: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    allowed = [*built.allowed_types, *params.get("allowed_types", [])]
    own = params.get("storage")
    try:
        if own:
            storage = import_factory(str(own))(folder)
        else:
            from agent_framework import FileCheckpointStorage

            storage = FileCheckpointStorage(folder, allowed_checkpoint_types=allowed)
    except Exception as exc:
        return f"workload_params.storage {own!r} does not build a storage over {folder}: {type(exc).__name__}: {exc}"
    saves = watch_saves()
    try:
        await workflow.run(built.input, checkpoint_storage=storage)
    except Exception:
        pass  # the workflow's own failure is the trials' to measure; only swallowed saves are bad input
    for failed in saves.failed:
        blocked = blocked_type(failed["message"])
        if blocked:
            return (
                f"workload {name!r}: a checkpoint holds {blocked!r}, outside the storage's allow-list, and the framework skips "
                "that save silently: add it to AFWorkload.allowed_types (or workload_params.allowed_types)"
            )
        return f"workload {name!r}: the framework could not save a checkpoint and ran on: {failed['message'][:300]}"
    return None


def folder_problem(folder: Path) -> str | None:
    """The folder checkpoints are written to must take a file (write, rename, remove)."""
    try:
        probe = folder / ".chaos-probe.tmp"
        probe.write_bytes(b"{}")
        probe.replace(folder / ".chaos-probe.json")
        (folder / ".chaos-probe.json").unlink()
    except OSError as exc:
        return f"the checkpoint storage folder {folder} cannot be written ({exc.strerror or exc}): give the storage a writable folder"
    return None


def check(spec: dict[str, Any], target: dict[str, Any]) -> str | None:
    try:
        import agent_framework  # noqa: F401
    except Exception as exc:  # the version the cell asked for is the one to build again
        return environment_problem("agent_framework", target, "agent_framework", exc)
    problem = params_problem(dict(spec.get("workload_params") or {}))
    if problem is None:
        with tempfile.TemporaryDirectory(prefix="chaos-af-preflight-") as tmp:
            folder = Path(tmp)
            problem = folder_problem(folder) or asyncio.run(run_once(spec, folder))
    return problem


def main(argv: list[str]) -> int:
    return run(argv, check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
