"""Where the milliseconds of one warm kill-sweep trial go: a timeline, orchestrator and racers.

``bench/racers.py`` says how long a trial takes; this says what it spends the time on. It runs
warm kill-sweep trials of ``three_step`` (SQLite, durability sync, resume none, cycling over all
21 boundaries) exactly as ``bench/racers.py --cases sweep`` does, stamps every step the
orchestrator takes (``TrialRun`` methods, timed from outside: nothing is changed) and lines them
up with the stamps the racers record themselves (the same monotonic clock), then prints the
median of each step. ``--profile`` adds cProfile of the orchestrator; ``--work /dev/shm`` puts the
trial folders on tmpfs. Numbers, not assertions: quote them with the load average printed.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from racers import context, print_profile, scenario  # noqa: E402

from chaos.kinds.sweep import dry_run, kill_trial  # noqa: E402
from chaos.launchers.warm.client import WarmLauncher  # noqa: E402
from chaos.running.trial import TrialRun  # noqa: E402
from chaos.scenario.model import expand  # noqa: E402

STEPS = ("start", "wait_arrival", "kill", "release", "collect", "wait_exit", "record", "cleanup")


def timed_trial_run(stamps: list[tuple[str, int, int]]) -> type:
    """A TrialRun whose steps note (name, start ns, end ns) into ``stamps``."""

    class Timed(TrialRun):
        pass

    for name in STEPS:
        orig = getattr(TrialRun, name, None)
        if orig is None:
            continue  # an older TrialRun (the benchmark also runs against other checkouts)

        def wrap(self, *a, _orig=orig, _name=name, **k):
            t = time.monotonic_ns()
            try:
                return _orig(self, *a, **k)
            finally:
                stamps.append((_name, t, time.monotonic_ns()))

        setattr(Timed, name, wrap)
    return Timed


def one_trial(ctx, cell, point: str, trial_id: str) -> dict[str, float | None]:
    stamps: list[tuple[str, int, int]] = []
    t0 = time.monotonic_ns()
    run = timed_trial_run(stamps)(ctx, cell, trial_id, point=point)
    t_init = time.monotonic_ns()
    try:
        rec = kill_trial(run, point)
    finally:
        run.cleanup()
    t_end = time.monotonic_ns()
    ms = lambda a, b: (b - a) / 1e6  # noqa: E731
    out: dict[str, float | None] = {"trial total": ms(t0, t_end), "orch: TrialRun init (mkdir)": ms(t0, t_init)}
    seen: dict[str, int] = defaultdict(int)
    for name, a, b in stamps:
        seen[name] += 1
        label = f"orch: {name}#{seen[name]}"
        out[label] = (out.get(label) or 0.0) + ms(a, b)
    if not rec.valid:
        out["invalid"] = 1.0
        return out
    resume = next(o for o in rec.racers if o.role == "resume")
    start1 = next(a for n, a, b in stamps if n == "start")
    arrival = next(b.t_mono_ns for b in rec.barriers if b.racer_id == "victim" and b.action == "arrived")
    out["victim: asked -> stands at its barrier"] = ms(start1, arrival)
    res = resume.result or {}
    start2 = [a for n, a, b in stamps if n == "start"][1]
    g = res.get
    if g("t_start_mono_ns") and g("t_ledger_mono_ns"):
        out["resume: asked -> racer code runs"] = ms(start2, g("t_start_mono_ns"))
        out["resume: open ledger"] = ms(g("t_start_mono_ns"), g("t_ledger_mono_ns"))
        killed = next(b for n, a, b in stamps if n == "kill")
        if g("t_unheld_mono_ns"):  # started with the victim, held until the kill was confirmed
            arrived_hold = next((b.t_mono_ns for b in rec.barriers if b.racer_id == "resume" and b.action == "arrived"), None)
            if arrived_hold:
                out["resume: stands at its hold, ms before the kill is confirmed"] = ms(arrived_hold, killed)
            out["resume: kill confirmed -> racer continues"] = ms(killed, g("t_unheld_mono_ns"))
            ready_from = g("t_unheld_mono_ns")
        else:
            out["resume: kill confirmed -> racer code runs"] = ms(killed, g("t_start_mono_ns"))
            ready_from = g("t_ledger_mono_ns")
        out["resume: saver + workload"] = ms(ready_from, g("t_ready_mono_ns"))
        out["resume: inspect before"] = ms(g("t_ready_mono_ns"), g("t_inspected_mono_ns"))
        out["resume: action"] = ms(g("t_invoke_mono_ns"), g("t_return_mono_ns"))
        out["resume: inspect after"] = g("inspect_after_ms")
        out["resume: close"] = g("close_ms")
        out["resume: kill confirmed -> end"] = ms(killed, g("t_end_mono_ns"))
        waited = next(b for n, a, b in stamps if n == "wait_exit")
        out["resume: end -> orchestrator sees exit"] = ms(g("t_end_mono_ns"), waited)
    return out


def dry_phases(ctx, cell, n: int) -> dict[str, float]:
    """The victim's path up to its barrier, measured on unarmed runs (a killed victim writes no result)."""
    acc: dict[str, list[float]] = defaultdict(list)
    for i in range(n):
        rec = dry_run(ctx, cell.model_copy(update={"index": 900 + i}))
        r = rec.racers[0].result or {}
        trace = r.get("trace") or []
        ms = lambda a, b: (b - a) / 1e6  # noqa: E731
        acc["dry: open ledger"].append(ms(r["t_start_mono_ns"], r["t_ledger_mono_ns"]))
        acc["dry: saver + workload"].append(ms(r["t_ledger_mono_ns"], r["t_ready_mono_ns"]))
        acc["dry: invoke -> first boundary"].append(ms(r["t_invoke_mono_ns"], trace[0]["t_mono_ns"]))
        acc["dry: whole run (21 boundaries)"].append(ms(r["t_invoke_mono_ns"], r["t_return_mono_ns"]))
        acc["dry: close"].append(r["close_ms"])
    return {k: statistics.median(v) for k, v in acc.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=42)
    ap.add_argument("--work", type=Path, default=None, help="folder for the trials (default: system temp, on disk)")
    ap.add_argument("--profile", action="store_true", help="also cProfile the orchestrator over the trials")
    args = ap.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="chaos-sweepprof-", dir=args.work))
    import chaos

    print(f"sweep timeline: load average at start {os.getloadavg()}, work folder {base}, chaos from {Path(chaos.__file__).parent}")
    launcher = WarmLauncher(log_dir=base)
    ctx, ledger = context(base, launcher)
    try:
        t = time.monotonic()
        launcher.server("langgraph", str(base / "work" / "x"))
        print(f"warm server start {time.monotonic() - t:.2f} s")
        cell = expand(scenario("kill_sweep"), check=False)[0]
        points = dry_run(ctx, cell).observations["boundaries"]
        dry = dry_phases(ctx, cell, 5)
        prof = cProfile.Profile() if args.profile else None
        rows: list[dict[str, float | None]] = []  # None: a stamp the racer did not write
        if prof:
            prof.enable()
        for i in range(args.trials):
            rows.append(one_trial(ctx, cell, points[i % len(points)], f"c000-p{i % len(points):03d}-r{i // len(points):03d}"))
        if prof:
            prof.disable()
    finally:
        launcher.reap()
        ledger.close()
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    print(f"\n{len(rows)} trials ({sum('invalid' in r for r in rows)} invalid); median ms per step:")
    for k in keys:
        vals = [v for r in rows if (v := r.get(k)) is not None]
        if vals:
            print(f"  {k:45} {statistics.median(vals):8.2f}   (p90 {sorted(vals)[int(len(vals) * 0.9) - 1]:.2f})")
    for k, v in dry.items():
        print(f"  {k:45} {v:8.2f}")
    if prof:
        print_profile(prof, f"sweep timeline, {len(rows)} trials", 25)
    print(f"\nload average at end {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
