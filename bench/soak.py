"""Soak: does the orchestrator hold steady over many racers and many trials?

Runs ``bench/soak.yaml`` (64 racers per trial, 1,000 trials) in process, or a reduced version
(``--k``, ``--trials``), and prints what the orchestrator holds before, during and after the run:
open file descriptors, child processes, threads, resident memory; then the racers of the run still
alive, its work folder and its registry entry (all must be gone). Numbers, not assertions: read
them. ``--json`` prints one JSON object instead.

    python bench/soak.py --trials 20            # 64 racers x 20 trials
    python bench/soak.py --k 1 --trials 1000    # 1 racer x 1,000 short trials
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import psutil
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from chaos.running import registry  # noqa: E402
from chaos.running.options import RunOptions  # noqa: E402
from chaos.running.orchestrator import run_scenario  # noqa: E402


def snapshot() -> dict:
    me = psutil.Process()
    return {
        "fds": len(os.listdir("/proc/self/fd")),
        "children": len(me.children(recursive=True)),
        "threads": me.num_threads(),
        "rss_mb": round(me.memory_info().rss / 2**20, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default=str(ROOT / "bench" / "soak.yaml"))
    ap.add_argument("--k", type=int, default=None, help="racers per trial (default: the scenario's, 64)")
    ap.add_argument("--trials", type=int, default=None, help="trials (default: the scenario's, 1000)")
    ap.add_argument("--out", default=None, help="reports folder (default: a temporary one)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--trace", action="store_true", help="tracemalloc from the 10%% mark to the last trial; print the 12 sites that grew most"
    )
    args = ap.parse_args()

    data = yaml.safe_load(Path(args.scenario).read_text())
    if args.k is not None:
        data["racers"]["k"] = args.k
        data["name"] = f"{data['name']}_k{args.k}"
    tmp = tempfile.TemporaryDirectory(prefix="chaos-soak-")
    scenario = Path(tmp.name) / f"{data['name']}.yaml"
    scenario.write_text(yaml.safe_dump(data))
    out = Path(args.out) if args.out else Path(tmp.name) / "reports"

    samples: list[dict] = []
    t0 = time.monotonic()
    total = args.trials or data.get("trials", 1)
    traced: dict = {}

    def on_trial(rec) -> None:
        samples.append({**snapshot(), "t_s": round(time.monotonic() - t0, 1), "valid": rec.valid})
        if args.trace and len(samples) == max(1, total // 10):
            tracemalloc.start(8)
            traced["start"] = tracemalloc.take_snapshot()
        if args.trace and len(samples) == total and "start" in traced:
            traced["end"] = tracemalloc.take_snapshot()
            tracemalloc.stop()
        if not args.json:
            s = samples[-1]
            print(
                f"  trial {len(samples):5d}: fds {s['fds']:3d} children {s['children']:3d} threads {s['threads']:2d} "
                f"rss {s['rss_mb']:6.1f} MB  {s['t_s']:7.1f}s  {'valid' if rec.valid else 'INVALID: ' + str(rec.invalid_reason)}",
                flush=True,
            )

    before = snapshot()
    outcome = run_scenario(scenario, RunOptions(out=out, trials=args.trials, on_trial=on_trial))
    wall = time.monotonic() - t0
    after = snapshot()
    run_id = outcome.results.run_id
    mid = samples[len(samples) // 10] if samples else after  # after warm-up: imports and caches are in
    report = {
        "scenario": data["name"],
        "k": data["racers"]["k"],
        "trials": len(samples),
        "wall_s": round(wall, 1),
        "s_per_trial": round(wall / max(1, len(samples)), 2),
        "before": before,
        "after_warmup": mid,
        "after": after,
        "max_during": {k: max(s[k] for s in samples) for k in ("fds", "children", "threads", "rss_mb")} if samples else {},
        "racers_alive_after": len(registry.racer_processes(run_id)),
        "work_folder_left": (outcome.run_dir / "work").exists(),
        "registry_entry_left": registry.entry_path(run_id).exists(),
        "summary": outcome.results.summary.model_dump(),
        "saturation": outcome.results.cells[0].saturation,
        "fires": outcome.results.cells[0].fires,
        "interrupted": outcome.interrupted,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if "end" in traced:
        stats = traced["end"].compare_to(traced["start"], "lineno")
        report["traced_growth_kb"] = round(sum(s.size_diff for s in stats) / 1024, 1)
        report["traced_top"] = [f"{s.size_diff / 1024:+.1f} kB {s.traceback[0]}" for s in stats[:12]]
        chains = traced["end"].compare_to(traced["start"], "traceback")[:3]
        report["traced_chains"] = [[f"{c.size_diff / 1024:+.1f} kB"] + [str(f) for f in c.traceback] for c in chains]
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"\nsoak {report['scenario']}: k={report['k']}, {report['trials']} trials in {report['wall_s']} s "
            f"({report['s_per_trial']} s/trial)"
        )
        for label in ("before", "after_warmup", "after"):
            s = report[label]
            print(f"  {label:13s} fds {s['fds']:3d}  children {s['children']:3d}  threads {s['threads']:2d}  rss {s['rss_mb']:6.1f} MB")
        print(
            f"  max during    {report['max_during']}; peak RSS over the whole run (analysis and reports included) "
            f"{report['peak_rss_mb']} MB"
        )
        if "traced_top" in report:
            print(f"  traced Python allocations grew {report['traced_growth_kb']} kB from the 10% mark to the last trial; top sites:")
            for line in report["traced_top"]:
                print(f"    {line}")
            for chain in report["traced_chains"]:
                print(f"  call chain of {chain[0]}: " + " <- ".join(reversed(chain[1:])))
        print(
            f"  racers alive after: {report['racers_alive_after']}; work folder left: {report['work_folder_left']}; "
            f"registry entry left: {report['registry_entry_left']}"
        )
        print(f"  trials: {report['summary']}; saturation {report['saturation']}, fires {report['fires']}")
        if report["interrupted"]:
            print("  the run was INTERRUPTED (SIGINT/SIGTERM): numbers cover the trials journaled before it stopped")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
