"""Run a scenario for real from a test, and look for anything it left behind.

``run_text`` writes a scenario (YAML text, dedented) into a test's folder and runs it through
``run_scenario`` as ``chaos run`` would; ``racers_alive`` finds racer processes still standing.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import psutil

from chaos.running.options import RunOptions, RunOutcome
from chaos.running.orchestrator import run_scenario


def write_scenario(directory: Path, text: str, name: str = "scenario.yaml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def run_text(tmp_path: Path, text: str, **opts) -> RunOutcome:
    path = write_scenario(tmp_path, text)
    return run_scenario(path, RunOptions(out=tmp_path / "reports", **opts))


def racers_alive(marker: str) -> list[psutil.Process]:
    """Racer processes whose command line mentions ``marker`` (a run folder).

    Cold racers are ``python -m chaos.racer.main <run>/work/.../spec.json``; warm racers are forks of
    ``python -m chaos.racer.forkserver ... --label <run>/work`` and keep its command line, so both the
    server and its racers are found.
    """
    out = []
    for p in psutil.process_iter(["cmdline", "status"]):
        try:
            cmd = " ".join(p.info["cmdline"] or [])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        racer = "chaos.racer.main" in cmd or "chaos.racer.forkserver" in cmd
        if racer and marker in cmd and p.info["status"] != psutil.STATUS_ZOMBIE:
            out.append(p)
    return out


def small_sweep(directory: Path, name: str):
    """A one-point LangGraph sweep (``three_step`` killed after b: EO violated), run for real; its
    results (``run_dir``: the finished run folder), for the stories that forge or download a run folder."""
    import chaos

    path = write_scenario(
        directory,
        f"""\
        name: {name}
        kind: kill_sweep
        target: {{framework: langgraph, backend: sqlite, durability: sync}}
        workload: three_step
        resume: none
        kill_points: ["effect(task=b)"]
        trials: 1
        seed: 3
        """,
    )
    return chaos.run(path, out=directory / "reports")
