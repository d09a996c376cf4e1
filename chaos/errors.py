"""The errors a user of chaos can catch, in one public place.

Why: ``chaos.run`` and friends (``chaos/api.py``) raise ``ChaosError`` for bad input, a broken
environment or a damaged run folder, but the class is defined where the racer side can use it
(``chaos/racer/errors.py``, standard library only), and the subclasses for run folders, hosts,
baselines and repros live beside the code that raises them. A user should not need to know that;
as Hypothesis's ``hypothesis.errors`` does, this module names every error type chaos raises on
purpose, and ``__all__`` is the promise::

    from chaos.errors import ChaosError, ScenarioError

    try:
        chaos.run("scenarios/consume_once_k4.yaml")
    except ScenarioError as exc:   # the scenario file: exc.message names the file and field
        ...
    except ChaosError as exc:      # anything else chaos refuses: exit code 3 on the command line
        ...

Every type here is a ``ChaosError``: one line naming the file, field, host or service at fault
(``.message``) and, often, what to do (``.hint``). What the framework under test did is never an
exception: it is in the verdicts.

Importing this module stays cheap: the base types come from the standard-library racer module;
the subclasses defined on the orchestrator side (which import pydantic and friends) are loaded on
first use (PEP 562), as ``chaos/__init__.py`` does for the public functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chaos.racer.errors import ChaosError, EnvironmentProblem, ScenarioError, TargetError

__all__ = [
    "BaselineError",
    "ChaosError",
    "DockerError",
    "EnvironmentProblem",
    "FolderBusy",
    "ForkServerGone",
    "HostError",
    "InventoryError",
    "ReproError",
    "RunFailed",
    "ScenarioError",
    "TargetError",
]

# error type -> the module that defines it (imported only when the name is first used)
_LAZY = {
    "BaselineError": "chaos.accepted",  # a baseline (accepted verdicts) file that cannot be used
    "DockerError": "chaos.launchers.docker",  # the docker engine refused or is unreachable
    "FolderBusy": "chaos.running.folderlock",  # another live chaos process runs this folder
    "ForkServerGone": "chaos.launchers.warm.client",  # a warm fork server exited or went silent
    "HostError": "chaos.remote.ssh_session",  # an SSH host that cannot be used
    "InventoryError": "chaos.remote.inventory",  # an inventory (hosts/*.yaml) that cannot be used
    "ReproError": "chaos.repro",  # a repro that cannot be written
    "RunFailed": "chaos.running.failure",  # the run stopped on a fault outside the framework
}

if TYPE_CHECKING:
    from chaos.accepted import BaselineError
    from chaos.launchers.docker import DockerError
    from chaos.launchers.warm.client import ForkServerGone
    from chaos.remote.inventory import InventoryError
    from chaos.remote.ssh_session import HostError
    from chaos.repro import ReproError
    from chaos.running.failure import RunFailed
    from chaos.running.folderlock import FolderBusy


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'chaos.errors' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
