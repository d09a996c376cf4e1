"""chaos: a crash-injection and race harness for agent-workflow frameworks.

The public API is what ``__all__`` names; everything else in the package is internal and may
change between releases::

    import chaos

    results = chaos.run("scenarios/consume_once_k4.yaml", out="reports", trials=2)
    results.assert_holds("CO")          # AssertionError naming the cells, reasons and run folder

The package is split in two halves that never import each other's heavy parts:

* the orchestrator side (scenario, running, kinds, launchers, remote, reports, cli) uses pydantic,
  PyYAML, rich and psutil;
* the racer side (``chaos.racer``, ``chaos.targets``, ``chaos.workloads``) needs only the standard
  library, the framework under test and its database driver, so it runs unchanged in another
  virtual environment, in a container or on a remote host, and this file ships with it.

Importing ``chaos`` itself is therefore free of third-party imports: the public names are
imported on first use (PEP 562 ``__getattr__``), from the modules listed in ``_PUBLIC``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "RunOptions",
    "RunResults",
    "Verdict",
    "WorkloadContext",
    "__version__",
    "analyze",
    "load_scenario",
    "rerun",
    "run",
]

# public name -> the module that defines it (imported only when the name is first used)
_PUBLIC = {
    "run": "chaos.api",
    "rerun": "chaos.api",
    "analyze": "chaos.api",
    "load_scenario": "chaos.api",
    "RunOptions": "chaos.running.options",
    "RunResults": "chaos.records",
    "Verdict": "chaos.records",
    "WorkloadContext": "chaos.workloads",
}

if TYPE_CHECKING:
    from chaos.api import analyze, load_scenario, rerun, run
    from chaos.records import RunResults, Verdict
    from chaos.running.options import RunOptions
    from chaos.workloads import WorkloadContext


def __getattr__(name: str) -> Any:
    # imported here, not at the top: ``import chaos`` alone loads no other module (the pytest plugin's promise)
    from chaos.racer.lazy import lazy_attribute

    return lazy_attribute(__name__, _PUBLIC, globals(), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
