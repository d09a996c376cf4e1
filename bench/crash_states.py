"""Per kill point: a sweep in kill mode against the same sweep with recorded crash states, side by side.

Usage: python bench/crash_states.py [--rounds 2] [--cases three_step,email,chains,power_loss] [--out DIR]

Each case is one scenario whose matrix is ``crash_states: [kill, recorded]`` (the same sweep, the
same seed, in one process, cell after cell), run ``--rounds`` times. Per cell it prints the wall
time per kill point: the span of the cell's trials after its dry run (kill mode: every victim, kill
and resume; recorded: the recording, the copies and the parallel resumers) divided by its points,
the median over rounds; for kill mode also the median trial, for recorded mode the recording's
wall and the median recovery trial. Then the ratio kill / recorded, and the points (by name) whose
outcomes over the rounds differ between the modes, marking those whose outcome already varies
between kill mode's own rounds (open: a write on a background thread races the kill). The load average is printed at start and end. Numbers only.

Cases: ``three_step`` (LangGraph, SQLite, durability sync, resume none), ``email``
(examples/email_assistant stock sweep: answers accept, accept), ``power_loss`` (three_step with
``fault: power_loss``: the store on the lazy filesystem; recorded states are its durable images:
``chaos.kinds.durable_states``) and ``chains`` (three_step with
``crash_depth: 2``, narrowed to b's effect and the writes around it: a "point" is a chain ``P1 >> P2``;
kill mode's span includes its discoveries, recorded mode's its recovering recordings, which are
its discoveries: ``chaos.kinds.crash_chains``). An outcome is a point's effects, distribution,
durable checkpoints and verdicts (DU, CV among them).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))  # this checkout's chaos, not an installed one

from chaos.kinds.crash_states import is_recording  # noqa: E402
from chaos.running.journal import read_journal  # noqa: E402
from chaos.running.options import RunOptions  # noqa: E402
from chaos.running.orchestrator import run_scenario  # noqa: E402

CASES = {
    "three_step": """\
name: bench_crash_states_three_step
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 1
matrix:
  crash_states: [kill, recorded]
""",
    "email": """\
name: bench_crash_states_email
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: examples.email_assistant.app:stock
resume: "command:accept"
answers: [accept, accept]
trials: 1
seed: 12
matrix:
  crash_states: [kill, recorded]
""",
    "power_loss": """\
name: bench_crash_states_power_loss
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
fault: power_loss
trials: 1
seed: 1
matrix:
  crash_states: [kill, recorded]
""",
    "chains": """\
name: bench_crash_states_chains
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: 1
seed: 1
crash_depth: 2
kill_points: ["effect(task=b)", "put_writes(node=b", "put(step=2"]
recovery_kill_points: ["effect(task=b)", "put_writes(node=b", "put(step=2"]
matrix:
  crash_states: [kill, recorded]
""",
}


def load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def cell_numbers(records: list[dict], cell_id: str) -> dict:
    # all but the cell's own dry run (a chain's discovery is part of the sweep's work)
    mine = [r for r in records if r["cell_id"] == cell_id and not (r["trial_id"].endswith("-dry") and r.get("point") is None)]
    points = [r for r in mine if r.get("point") is not None and not r["trial_id"].endswith("-dry") and not is_recording(r["trial_id"])]
    recs = [r for r in mine if is_recording(r["trial_id"]) or (r["trial_id"].endswith("-dry") and "crash_state" in r["observations"])]
    span = max(r["t_start_wall"] + r["wall_s"] for r in mine) - min(r["t_start_wall"] for r in mine)
    return {
        "points": len(points),
        "per_point": span / max(1, len(points)),
        "trial": statistics.median(r["wall_s"] for r in points),
        "recording": sum(r["wall_s"] for r in recs),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cases", default="three_step,email")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    os.environ["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])
    out = a.out or Path(tempfile.mkdtemp(prefix="chaos-bench-crash-states-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"crash states benchmark: {os.cpu_count()} CPUs, load average at start {load()}")
    for case in a.cases.split(","):
        path = out / f"{case}.yaml"
        path.write_text(CASES[case])
        got: dict[str, list[dict]] = {"crash_states=kill": [], "crash_states=recorded": []}
        outcomes: dict[str, dict[str, set]] = {"kill": {}, "recorded": {}}  # point -> the outcomes seen over rounds
        t0 = time.monotonic()
        for _ in range(a.rounds):
            run = run_scenario(path, RunOptions(out=out / "reports"))
            records, _ = read_journal(run.run_dir / "journal.jsonl")
            for cell in got:
                got[cell].append(cell_numbers(records, cell))
            for c in run.results.cells:  # by point name: each cell's dry run orders its boundaries itself
                for p in c.points:
                    seen = (
                        json.dumps(p.effect_counts, sort_keys=True),
                        json.dumps(p.distribution),
                        tuple(p.durable_checkpoints),
                        tuple((v.property, v.status) for v in p.verdicts),
                    )
                    outcomes[c.axes["crash_states"]].setdefault(p.point, set()).add(seen)
        ko, ro = outcomes["kill"], outcomes["recorded"]
        open_in_kill = {p for p, seen in ko.items() if len(seen) > 1}
        differ = sorted(n for n in ko.keys() | ro.keys() if ko.get(n) != ro.get(n))
        k = got["crash_states=kill"]
        r = got["crash_states=recorded"]
        kp, rp = statistics.median(x["per_point"] for x in k), statistics.median(x["per_point"] for x in r)
        print(f"{case}: {k[0]['points']} kill points, {a.rounds} round(s), {time.monotonic() - t0:.1f}s")
        print(f"  kill mode     {kp * 1000:8.1f} ms per kill point (median trial {statistics.median(x['trial'] for x in k) * 1000:.1f} ms)")
        print(
            f"  recorded mode {rp * 1000:8.1f} ms per kill point (recording {statistics.median(x['recording'] for x in r) * 1000:.0f} ms, "
            f"median recovery trial {statistics.median(x['trial'] for x in r) * 1000:.1f} ms)"
        )
        print(
            f"  kill / recorded: {kp / rp:.2f}x; points whose outcomes (effects, distribution, durable checkpoints, verdicts) over the "
            f"rounds differ between the modes: {len(differ)} of {len(ko)} ({len([n for n in differ if n in open_in_kill])} of them "
            f"vary between kill mode's own rounds); load average {load()}"
        )
        for name in differ:
            print(f"    {'open in kill mode ' if name in open_in_kill else 'differs          '} {name}")
    print(f"load average at end {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
