"""Per-trial cost of the lazy filesystem: the same kill sweep on a plain folder and on the lazy mount.

Usage: python bench/lazyfs.py [--trials 2] [--framework langgraph --backend sqlite] [--out DIR]

One run of one scenario whose matrix is ``fault: [kill, power_loss]`` (the same sweep, the same
machine, interleaved by nothing but cell order): the ``kill`` cell keeps each trial's store in a
plain folder, the ``power_loss`` cell on the lazy filesystem (FUSE, its own process), plus the drop
after each kill. Prints, per cell, the median and p90 wall seconds of a kill trial (from the
journal), and the ratio lazy / plain of the medians, with the load average at start and end.
Also the lazy filesystem's own start-up (mount to ready). Prints numbers only; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's chaos, not an installed one

from chaos.lazyfs import LazyMount, missing
from chaos.running.journal import read_journal
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_scenario

SWEEP = """\
name: bench_lazyfs
kind: kill_sweep
target: {{framework: {framework}, backend: {backend}}}
workload: three_step
resume: none
trials: {trials}
seed: 1
matrix:
  fault: [kill, power_loss]
"""


def load() -> list[str]:
    with open("/proc/loadavg") as f:
        return f.read().split()[:3]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=2, help="repeats per kill point")
    ap.add_argument("--framework", default="langgraph")
    ap.add_argument("--backend", default="sqlite")
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args()
    if missing():
        print(f"no lazy filesystem here: {missing()}")
        return 3
    out = a.out or Path(tempfile.mkdtemp(prefix="chaos-bench-lazyfs-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"load average at start: {load()}")
    starts = []
    for i in range(3):
        t0 = time.monotonic()
        with LazyMount(out / f"m{i}.below", out / f"m{i}"):
            starts.append(time.monotonic() - t0)
    print(f"lazy filesystem start (mount to ready) + stop: median {statistics.median(starts):.3f}s over 3")
    path = out / "bench_lazyfs.yaml"
    path.write_text(SWEEP.format(framework=a.framework, backend=a.backend, trials=a.trials))
    t0 = time.monotonic()
    run = run_scenario(path, RunOptions(out=out / "reports"))
    total = time.monotonic() - t0
    records, _ = read_journal(run.run_dir / "journal.jsonl")
    medians = {}
    for cell in ("fault=kill", "fault=power_loss"):
        walls = sorted(r["wall_s"] for r in records if r["cell_id"] == cell and not r["trial_id"].endswith("-dry"))
        if not walls:
            print(f"{cell}: no trial")
            continue
        medians[cell] = statistics.median(walls)
        p90 = walls[min(len(walls) - 1, int(0.9 * len(walls)))]
        lost = [
            r["observations"].get("fault", {}).get("lost_ops", 0)
            for r in records
            if r["cell_id"] == cell and r["observations"].get("fault")
        ]
        extra = f" lost ops per trial: median {statistics.median(lost)}" if lost else ""
        print(f"{cell:18s} trials={len(walls):3d} median={medians[cell]:.3f}s p90={p90:.3f}s{extra}")
    if len(medians) == 2:
        print(f"per-trial cost ratio lazy / plain (medians): {medians['fault=power_loss'] / medians['fault=kill']:.2f}x")
    print(f"run total {total:.1f}s; load average at end: {load()}")
    print(json.dumps({"run_dir": str(run.run_dir)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
