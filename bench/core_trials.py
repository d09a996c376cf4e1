"""Wall time per trial of a race trial and of a kill-sweep trial, and the run's peak memory.

Usage: python bench/core_trials.py [--race-trials 5] [--sweep-trials 1] [--out /tmp/chaos-bench] [--racers warm|cold]

Runs two small scenarios with the real orchestrator (warm racers, the default, or ``--racers
cold``) and prints, per kind: trials, median / p90 / max wall seconds per trial (from the
journal), total wall time, and peak RSS of the orchestrator and of its largest racer. Prints
numbers only; nothing here asserts a speed.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's chaos, not an installed one

from chaos.running.journal import read_journal
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_scenario

RACE = """\
name: bench_race_k4
kind: race
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: gate_after_interrupt
resume: "command:true"
racers: {k: 4}
trials: %d
seed: 1
"""

SWEEP = """\
name: bench_sweep
kind: kill_sweep
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: three_step
resume: none
trials: %d
seed: 1
"""


def measure(name: str, text: str, out: Path, racers: str | None = None) -> None:
    path = out / f"{name}.yaml"
    path.write_text(textwrap.dedent(text))
    t0 = time.monotonic()
    run = run_scenario(path, RunOptions(out=out / "reports", racers=racers))
    total = time.monotonic() - t0
    records, _ = read_journal(run.run_dir / "journal.jsonl")
    walls = sorted(r["wall_s"] for r in records if not r["trial_id"].endswith("-dry"))
    p90 = walls[min(len(walls) - 1, int(0.9 * len(walls)))]
    print(
        f"{name:14s} trials={len(walls):4d} median={statistics.median(walls):.3f}s p90={p90:.3f}s "
        f"max={walls[-1]:.3f}s total={total:.1f}s trials/s={len(walls) / total:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--race-trials", type=int, default=5)
    ap.add_argument("--sweep-trials", type=int, default=1)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--racers", choices=("warm", "cold"), default=None, help="how racers start (default: warm)")
    a = ap.parse_args()
    out = a.out or Path(tempfile.mkdtemp(prefix="chaos-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    with open("/proc/loadavg") as f:
        print(f"load average at start: {f.read().split()[:3]}")
    measure("race_k4", RACE % a.race_trials, out, a.racers)
    measure("kill_sweep", SWEEP % a.sweep_trials, out, a.racers)
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: orchestrator {me:.0f} MiB, largest racer (or warm server with its racers' max) {kids:.0f} MiB")
    print(f"run folders under {out}")


if __name__ == "__main__":
    main()
