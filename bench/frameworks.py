"""Per framework: import time and cold-trial time, in each framework's own racer environment.

Usage: python bench/frameworks.py [--repeats 3] [framework ...]

* import: ``python -c "import <what its racers import>"`` in the framework's env (wall seconds, fresh
  process each time, so it includes interpreter start-up).
* racer: one cold racer (``python -m chaos.racer.main``) that opens the ledger and the session and runs
  ``three_step`` to the end with nothing armed: the cost of one process of a trial.
* sweep trial: the median wall seconds per kill trial (victim + resume racer) of a one-point
  kill sweep run by the real orchestrator, from its journal.

Prints numbers only; nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chaos.envs import python_for, racer_env
from chaos.running.journal import read_journal
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_scenario

# backend, kill point, and what a racer of the framework imports (the cost measured as "import")
FRAMEWORKS = {
    "langgraph": ("sqlite", "effect(task=b)", "import langgraph.graph, langgraph.checkpoint.sqlite"),
    "crewai": ("sqlite", "effect(task=b)", "import crewai.flow.flow, crewai.flow.persistence"),
    "llamaindex": ("file", "effect(task=b)", "import workflows"),
    "pydantic_graph": ("file", "effect(task=b)", "import pydantic_graph.persistence.file"),
    "autogen": ("file", "effect(task=b)", "import autogen_agentchat.teams, autogen_ext.models.replay"),
    "agent_framework": ("file", "effect(task=b)", "import agent_framework, agent_framework._workflows._checkpoint_encoding"),
    # the SDK's session is what persists a three_step run turn by turn (the app's blob is saved at its end)
    "openai_agents": ("sqlite_session", "effect(task=b)", "import agents, agents.testing"),
}


def timed(cmd: list[str], env: dict) -> float:
    t = time.monotonic()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    return time.monotonic() - t


def cold_racer(fw: str, python: str, backend: str, work: Path, i: int) -> float:
    d = work / f"{fw}-racer-{i}"
    (d / "barriers").mkdir(parents=True)
    spec = {
        "run_id": "bench",
        "cell_id": "bench",
        "trial_id": f"t{i}",
        "racer_id": "dry",
        "target": {"framework": fw, "backend": backend, "durability": "sync", "version": None},
        "workload": "three_step",
        "workload_params": {},
        "thread_id": f"bench-{fw}-{i}",
        "store": {"path": str(d / "checkpoints.sqlite")},
        "ledger": {"kind": "sqlite", "path": str(d / "ledger.sqlite")},
        "barrier": {"dir": str(d / "barriers"), "armed": []},
        "actions": [{"op": "run"}],
        "result_path": str(d / "result.json"),
    }
    (d / "spec.json").write_text(json.dumps(spec))
    secs = timed([python, "-m", "chaos.racer.main", str(d / "spec.json")], racer_env(python))
    result = json.loads((d / "result.json").read_text())
    status = (result.get("outcomes") or [{}])[-1].get("status")
    if status != "done":
        raise SystemExit(f"{fw}: the cold racer did not finish three_step: {status} {result.get('error')}")
    return secs


def sweep_trial(fw: str, backend: str, point: str, work: Path) -> float:
    path = work / f"{fw}.yaml"
    path.write_text(
        textwrap.dedent(f"""\
        name: bench_{fw}
        kind: kill_sweep
        target: {{framework: {fw}, backend: {backend}}}
        workload: three_step
        resume: none
        trials: 1
        seed: 1
        kill_points: ["{point}"]
        """)
    )
    out = run_scenario(path, RunOptions(out=work / "reports"))
    raw, _ = read_journal(out.run_dir / "journal.jsonl")
    walls = [r["wall_s"] for r in raw if not r["trial_id"].endswith("-dry")]
    return statistics.median(walls)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("frameworks", nargs="*", default=list(FRAMEWORKS))
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="chaos-bench-fw-"))
    print(f"{'framework':<15} {'import s (min/med)':>20} {'cold racer s (min/med)':>24} {'sweep trial s':>14}")
    for fw in args.frameworks:
        backend, point, imports_stmt = FRAMEWORKS[fw]
        python = python_for(fw)
        env = racer_env(python)
        imports = [timed([python, "-c", imports_stmt], env) for _ in range(args.repeats)]
        racers = [cold_racer(fw, python, backend, work, i) for i in range(args.repeats)]
        trial = sweep_trial(fw, backend, point, work)
        print(
            f"{fw:<15} {min(imports):>9.2f} / {statistics.median(imports):<8.2f}"
            f" {min(racers):>11.2f} / {statistics.median(racers):<10.2f} {trial:>12.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
