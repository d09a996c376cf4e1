"""The Agent Server's cost: its start-up, and a race trial through it beside an in-process race of the same graph.

One run, three measurements, printed with the load average at start and end:

1. start-up: ``AgentServer.start()`` until ``/ok`` answers and the graphs are served (wall), and the
   server's CPU at that moment (user + system of its process group, from /proc);
2. a race trial through the server (``langgraph_server``, ``gate_after_interrupt``, k=4, enqueue):
   median trial wall time from the journal, and CPU per trial (this process plus its children);
3. the same race in process (``langgraph``, SQLite, the same graph, k=4): the same two numbers;

then the ratio of 2 to 3 (wall and CPU). Usage: ``python bench/agent_server.py [--trials 5]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

import psutil

from chaos.envs import python_for
from chaos.running.journal import read_journal
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_scenario
from chaos.targets.langgraph_server.host import AgentServer, builtin_config

RACE = """\
name: {name}
kind: race
target: {{framework: {framework}, backend: {backend}}}
workload: gate_after_interrupt
resume: "command:true"
{params}racers: {{k: 4}}
trials: {trials}
seed: 11
timeout_s: 120
"""


def cpu_s() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def startup(tmp: Path) -> tuple[float, float]:
    s = AgentServer(python_for("langgraph_server"), tmp / "srv", builtin_config(("gate_after_interrupt",)))
    t0 = time.monotonic()
    s.start()
    wall = time.monotonic() - t0
    assert s.proc is not None
    procs = [psutil.Process(s.proc.pid), *psutil.Process(s.proc.pid).children(recursive=True)]
    cpu = sum(p.cpu_times().user + p.cpu_times().system for p in procs)
    s.stop()
    return wall, cpu


def race(tmp: Path, name: str, framework: str, backend: str, trials: int, params: str = "") -> tuple[float, float, int]:
    path = tmp / f"{name}.yaml"
    path.write_text(textwrap.dedent(RACE.format(name=name, framework=framework, backend=backend, trials=trials, params=params)))
    c0 = cpu_s()
    out = run_scenario(path, RunOptions(out=tmp / "reports"))
    cpu = cpu_s() - c0
    records, _ = read_journal(out.run_dir / "journal.jsonl")
    walls = [r["wall_s"] for r in records if r.get("valid") and r.get("wall_s")]
    return statistics.median(walls), cpu / max(len(records), 1), len(walls)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        python_for("langgraph_server")  # built before anything is timed
        wall, cpu = startup(tmp)
        print(f"server start-up: {wall:.2f} s wall, {cpu:.2f} s CPU (until /ok and the graphs served)")
        s_wall, s_cpu, s_n = race(
            tmp, "through_server", "langgraph_server", "inmem", args.trials, "workload_params: {multitask_strategy: enqueue}\n"
        )
        print(
            f"race k=4 through the server: {s_wall:.3f} s median trial wall ({s_n} valid), {s_cpu:.2f} s CPU per trial (server start included once)"
        )
        p_wall, p_cpu, p_n = race(tmp, "in_process", "langgraph", "sqlite", args.trials)
        print(f"race k=4 in process (SQLite): {p_wall:.3f} s median trial wall ({p_n} valid), {p_cpu:.2f} s CPU per trial")
        print(f"ratio server / in process: {s_wall / p_wall:.1f}x wall, {s_cpu / p_cpu:.1f}x CPU")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
