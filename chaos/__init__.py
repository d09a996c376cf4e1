"""chaos: a crash-injection and race harness for agent-workflow frameworks.

The package is split in two halves that never import each other's heavy parts:

* the orchestrator side (scenario, orchestrator, analysis, report, cli) uses pydantic, PyYAML,
  rich and psutil;
* the racer side (racer, barrier, ledger, targets, workloads) needs only the standard library,
  the framework under test and its database driver, so it runs unchanged in another virtual
  environment, in a container or on a remote host.

Importing ``chaos`` itself is therefore free of third-party imports.
"""

__version__ = "0.1.0"
