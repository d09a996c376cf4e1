"""Queue-mode shards against static shards when the cost estimates are wrong: wall time of the slowest.

Why: a static split (``--shard I/N``) is decided up front from recorded timings or estimates, so a
wrong number puts the long cells on one shard and that shard is the night's wall time; in queue
mode (``--shard-queue DIR``) a shard that finishes early takes more cells. This program measures
both on the same small suite with the same wrong timings, two shards each, run side by side as two
real ``chaos nightly`` processes, and prints every shard's wall time and the slowest. Each shard is
pinned to a core of its own (``--no-pin``: not), as shards on two machines would be: unpinned on
one machine, a shard that finishes early hands its core to the other, which hides the imbalance.
It prints numbers; it asserts nothing (see bench/README.md).

The suite: LangGraph SQLite ``three_step`` kill sweeps (two cells, ``--sweep-trials`` repeats of
two kill points each: the long cells) and stray resumes (two cells, one trial: the short ones).
The timings.json handed to both modes says the opposite (a stray resume 10 s, a sweep 5 s), as a
night measured under other conditions might, so the static plan gives both sweeps to one shard.

    python bench/queue_shards.py [--sweep-trials 40] [--rounds 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATE = "2026-01-06"

SWEEP = """name: bench_sweep
kind: kill_sweep
target: {{framework: langgraph, backend: sqlite, durability: sync}}
workload: three_step
trials: {trials}
seed: 5
kill_points: ["effect(task=b)", "effect(task=c)"]
matrix:
  resume: [none, "command:true"]
"""
STRAY = """name: bench_stray
kind: stray_resume
target: {framework: langgraph, backend: sqlite, durability: sync}
workload: gate_after_interrupt
resume: "command:approve"
trials: 1
seed: 6
matrix:
  workload: [gate_after_interrupt, two_gates]
"""
# what an earlier night "measured": wrong, so the static plan puts both sweeps on one shard
WRONG = {
    "bench_sweep": {"resume=none": 5.0, "resume=command:true": 5.0},
    "bench_stray": {"workload=gate_after_interrupt": 10.0, "workload=two_gates": 1.0},
}


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def write_suite(d: Path, sweep_trials: int) -> Path:
    (d / "sweep.yaml").write_text(SWEEP.format(trials=sweep_trials))
    (d / "stray.yaml").write_text(STRAY)
    (d / "timings.json").write_text(json.dumps(WRONG))
    suite = d / "suite.yaml"
    suite.write_text("name: bench_queue\nscenarios:\n  - file: sweep.yaml\n  - file: stray.yaml\n")
    return suite


def run_pair(suite: Path, d: Path, mode: str, pin: bool) -> list[tuple[float, int, int]]:
    """Two shards of ``mode`` at once: each one's (wall seconds, exit code, cells it ran)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CHAOS_STATE_DIR": str(d / "state")}
    procs = []
    (d / mode).mkdir(exist_ok=True)
    for i in (1, 2):
        out = d / mode / f"s{i}"
        cmd = [sys.executable, "-m", "chaos", "nightly", str(suite), "--out", str(out), "--date", DATE, "-q"]
        cmd += ["--shard", f"{i}/2", "--timings", str(d / "timings.json")]
        if mode == "queue":
            cmd += ["--shard-queue", str(d / mode / "queue")]
        cpus = {(i - 1) % (os.cpu_count() or 1)} if pin else None  # one core each: two machines, as shards run
        procs.append(
            (
                time.monotonic(),
                out,
                subprocess.Popen(
                    cmd,
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    preexec_fn=(lambda c=cpus: os.sched_setaffinity(0, c)) if cpus else None,
                ),
            )
        )
    results = []
    for t0, out, p in procs:
        _, err = p.communicate(timeout=3600)
        wall = time.monotonic() - t0
        if p.returncode not in (0, 1, 2):
            print(f"  {mode} shard {out.name} exit {p.returncode}: {err.decode()[-400:]}", file=sys.stderr)
        summary = json.loads((out / DATE / "summary.json").read_text()) if (out / DATE / "summary.json").exists() else {"runs": []}
        results.append((wall, p.returncode, sum(len(r["cells"]) for r in summary["runs"])))
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sweep-trials", type=int, default=40, help="repeats per kill point of each long (sweep) cell")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-pin", action="store_true", help="let both shards use every core (default: shard i on core i only)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the night folders here")
    args = ap.parse_args()
    print(f"load average at start: {load()} ({os.cpu_count()} cores)")
    for r in range(args.rounds):
        d = Path(tempfile.mkdtemp(prefix="chaos-bench-queue-")) if args.keep is None else args.keep / f"round{r}"
        d.mkdir(parents=True, exist_ok=True)
        try:
            suite = write_suite(d, args.sweep_trials)
            for mode in ("static", "queue"):
                before = load()
                res = run_pair(suite, d, mode, not args.no_pin)
                shards = ", ".join(f"shard {i + 1}: {w:.1f} s ({n} cells, exit {c})" for i, (w, c, n) in enumerate(res))
                print(f"round {r + 1} {mode:6s}: slowest shard {max(w for w, _, _ in res):.1f} s; {shards}; load {before} -> {load()}")
        finally:
            if args.keep is None:
                shutil.rmtree(d, ignore_errors=True)
    print(f"load average at end: {load()}")


if __name__ == "__main__":
    main()
