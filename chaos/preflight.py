"""Preflight: a user's workload factory must import where racers run, before any trial starts.

``chaos validate`` only locates a ``package.module:factory`` and parses it (the orchestrator never
executes a user's code). ``chaos run`` goes one step further, in the racer's own interpreter: one
short-lived ``python -m chaos.racer --check-workload REF`` imports the factory there, so a module
whose imports fail stops the run with one line naming the scenario file and the workload, instead
of every trial coming back as a harness error. Built-in workloads need no check.
"""

from __future__ import annotations

import subprocess

from chaos.errors import TargetError

CHECK_TIMEOUT_S = 120


def check_workloads(cells: list, scenario_file: str, paths: list[str]) -> None:
    """Raise TargetError for the first user workload that does not import in its racer interpreter."""
    from chaos.envs import python_for, racer_env
    from chaos.targets import get_target

    seen: set[tuple] = set()
    for cell in cells:
        s = cell.scenario
        if s.workload in get_target(s.target.framework).workloads:
            continue
        key = (s.target.framework, s.target.version, s.workload)
        if key in seen:
            continue
        seen.add(key)
        python = python_for(s.target.framework, s.target.version)
        argv = [python, "-m", "chaos.racer", "--check-workload", s.workload, *paths]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=racer_env(python),
                                  stdin=subprocess.DEVNULL, timeout=CHECK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise TargetError(f"{scenario_file}: workload: importing {s.workload!r} took over {CHECK_TIMEOUT_S}s",
                              hint="a workload module must not block at import time") from None
        if proc.returncode != 0:
            lines = (proc.stdout.strip() or proc.stderr.strip() or f"exit {proc.returncode}").splitlines()
            raise TargetError(f"{scenario_file}: workload: {s.workload!r} does not import in the racer's Python: {lines[-1]}",
                              hint="fix the module or its imports; `chaos validate` checks only that it exists")
