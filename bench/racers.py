"""Benchmark: what the harness costs per trial with cold racers, warm racers and a naive harness.

Runs the same cells three ways and prints, per case: trials per second, median wall time per
trial, CPU per trial, peak memory (PSS of every racer process plus the fork server, sampled when
all racers stand at the start gate), the release spread of races, and warm/naive ratios.

* ``cold``: chaos with a fresh ``python -m chaos.racer.main`` per racer (``--racers cold``).
* ``warm``: chaos with racers forked from ``chaos.racer.forkserver`` (the default), which keeps
  racers pre-forked in a pool (``--pool``: its size; default the server's).
* ``nopool``: the same with every racer forked when asked for (``--pool 0``), the path before the pool.
* ``naive``: the published hand probes' style: a fresh ``python`` per racer, READY/GO files
  polled every 5 ms, ``subprocess`` waits (``bench/naive_racer.py``), same workload and ledger.
* ``floor`` (sweep only): not a harness but the least any harness could spend on the same trial
  with real processes and a real SIGKILL (``bench/floor_harness.py``): two pre-forked processes of a
  parent that built the workload, a SIGSTOP in the saver, no evidence kept. ``warm vs floor`` says
  how much of a trial is chaos's own, and ``floor vs warm`` whether the two ran the same trial: per
  kill point, the effect ledger once the resume ended, every repeat of both (``fidelity_vs_floor``).

* ``recorded`` (``sweep``, ``email_sweep``): chaos with ``crash_states: recorded``
  (``chaos.kinds.crash_states``): one recording frozen at every kill point, its store files and
  ledger rows copied per point, a fresh warm resumer per copy, at most ``--jobs`` (``RunContext.width``) at once,
  while the recording runs on. Its cost per kill point is the cell's span after the dry run (the
  recording and every recovery) over its point trials: ``recorded vs floor`` sets it against the
  floor's median trial, and ``floor vs recorded`` compares the per-point ledgers as for ``warm``.
  On ``email_sweep`` the cell says what it used: the e-mail assistant's dry run writes from two
  threads at once, so the sweep runs in kill mode and the line says why.

The modes are a table (``MODES``): a mode is a runner and the cases it runs, so a new one is one
function and one entry.

Cases: ``race4`` and ``race16`` (a race trial at k=4 / k=16 on SQLite), ``sweep`` (a kill-sweep
trial on SQLite: run to a barrier, SIGKILL, resume in a fresh racer, read the ledger; cycling
over all 21 boundaries of ``three_step``), ``matrix`` (the SQLite half of the reference matrix,
``scenarios/consume_once_matrix.yaml``, 200 trials, through the orchestrator end to end);
``dbos_sweep`` and ``dbos_race`` (k=3) the same on DBOS's SQLite system database, racers in the
``dbos`` environment (warm and naive only: the floor harness is LangGraph's); ``af_sweep`` and
``af_race`` (k=3) the same on the Agent Framework's FileCheckpointStorage, in its environment; ``email_sweep``
(``examples/email_assistant``'s stock sweep, its kill_sweep cell end to end through the orchestrator,
warm or cold: wall per kill point and in total).
``--profile`` adds a cProfile of the orchestrator over the warm cases and a per-phase breakdown
of the racers' own time. ``--jobs 1,2`` also runs the ``sweep`` and ``email_sweep`` cells end to end
once per jobs value and prints ``sweep jobs 2 vs jobs 1: <R>x wall; outcomes equal at <a>/<b> points``
(``bench/parallel_trials.py``). Numbers, not assertions: see bench/README.md.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from parallel_trials import jobs_bench  # noqa: E402  (bench/, beside this file)

from chaos.kinds.race import race_trial  # noqa: E402
from chaos.kinds.sweep import dry_run, kill_trial  # noqa: E402
from chaos.launchers.local import LocalLauncher  # noqa: E402
from chaos.launchers.warm.client import WarmLauncher  # noqa: E402
from chaos.racer.barrier import read_arrivals  # noqa: E402
from chaos.racer.errors import ChaosError  # noqa: E402
from chaos.racer.ledger import SqliteLedger  # noqa: E402
from chaos.running.jobs import parse_jobs  # noqa: E402
from chaos.running.options import RunOptions  # noqa: E402
from chaos.running.orchestrator import run_loaded, run_scenario  # noqa: E402
from chaos.running.trial import RunContext, TrialRun  # noqa: E402
from chaos.scenario.model import Scenario, expand, load_scenario  # noqa: E402

NAIVE_RACER = str(ROOT / "bench" / "naive_racer.py")
FLOOR_HARNESS = str(ROOT / "bench" / "floor_harness.py")
NAIVE_POLL_S = 0.005
JITTER_MS = 0.0  # races: the scenario's jitter_ms (--jitter)
POOL: int | None = None  # warm: the fork server's pool of pre-forked racers (--pool; None: its default)
MEMORY_SAMPLES = 3  # gates at which every racer's memory is read (the first ones of a case)
TICK = os.sysconf("SC_CLK_TCK")


# ------------------------------------------------------------------------------ measuring


def cpu_s() -> float:
    """CPU seconds of this process and every descendant it has reaped (racers via the server)."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def own_cpu_s() -> float:
    """CPU seconds of this process alone (the orchestrator)."""
    a = resource.getrusage(resource.RUSAGE_SELF)
    return a.ru_utime + a.ru_stime


def proc_cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        data = f.read()
    fields = data[data.rfind(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Measured:
    """A launcher wrapper that samples memory when a gate opens and notes when racers were asked for."""

    def __init__(self, inner):
        self.inner = inner
        self.peak_pss_kb = 0
        self.peak_rss_kb = 0
        self.spawned_ns: dict[str, int] = {}
        self.gates = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def start_group(self, specs, workdir):
        now = time.monotonic_ns()
        for s in specs:
            self.spawned_ns[s["result_path"]] = now
        return self.inner.start_group(specs, workdir)

    def open_gate(self, handles):
        self.gates += 1
        if self.gates > MEMORY_SAMPLES:  # reading smaps costs ms per process: sample a few gates only
            return self.inner.open_gate(handles)
        pids = [h.pid for h in handles if h.pid]
        client = getattr(self.inner, "client", None)
        if client is not None:
            pids.append(client.pid)
        self.peak_pss_kb = max(self.peak_pss_kb, sum(pss_kb(p) for p in pids))
        self.peak_rss_kb = max(self.peak_rss_kb, sum(rss_kb(p) for p in pids))
        return self.inner.open_gate(handles)


def proc_work(pid: int) -> tuple[int, int] | None:
    """(minor page faults, ns on CPU) of a live process so far (Linux /proc), None if gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
        with open(f"/proc/{pid}/schedstat") as g:
            ns = int(g.read().split()[0])
    except (OSError, ValueError):
        return None
    return int(data[data.rfind(b")") + 2 :].split()[7]), ns


class Probed(TrialRun):
    """A TrialRun that notes, per killed racer, its minor faults and CPU from the moment its start
    returned to the moment it is killed at its barrier: a victim's own work, which the machine's
    load inflates much less than wall time (the pool's gain shows here first). A freshly forked racer
    may run a little before its start returns, so its numbers are slightly low: conservative."""

    victim_work: ClassVar[list[tuple[int, float]]] = []
    _at_start: dict[int, tuple[int, int] | None]

    def start(self, specs):
        handles = super().start(specs)
        if not hasattr(self, "_at_start"):
            self._at_start = {}
        self._at_start.update({h.pid: proc_work(h.pid) for h in handles if h.pid})
        return handles

    def kill(self, h, barrier=None):
        a, b = self._at_start.get(h.pid), proc_work(h.pid) if h.pid else None
        if a and b:
            self.victim_work.append((b[0] - a[0], (b[1] - a[1]) / 1e6))
        return super().kill(h, barrier)


# the cases and what they run: (framework, kind, k of a race)
CASES: dict[str, tuple[str, str, int]] = {
    "race4": ("langgraph", "race", 4),
    "race16": ("langgraph", "race", 16),
    "sweep": ("langgraph", "kill_sweep", 0),
    "dbos_race": ("dbos", "race", 3),
    "dbos_sweep": ("dbos", "kill_sweep", 0),
    "af_race": ("agent_framework", "race", 3),
    "af_sweep": ("agent_framework", "kill_sweep", 0),
    "adk_race": ("adk", "race", 4),
    "adk_sweep": ("adk", "kill_sweep", 0),
}


def scenario(kind: str, framework: str = "langgraph", **over) -> Scenario:
    target = (
        {"framework": framework, "backend": "sqlite"}
        if framework in ("dbos", "adk")  # no durability modes: every write is a committed transaction
        else {"framework": framework, "backend": "file"}
        if framework == "agent_framework"
        else {"framework": framework, "backend": "sqlite", "durability": "sync"}
    )
    data = {
        "name": "bench",
        "kind": kind,
        "target": target,
        "seed": 424242,
        "timeout_s": 300,
    }
    if kind == "race":
        data.update(workload="gate_after_interrupt", resume="command:yes" if framework == "adk" else "command:true")
    else:
        data.update(workload="three_step", resume="none")
    data.update(over)
    return Scenario.model_validate(data)


def context(base: Path, launcher) -> tuple[RunContext, SqliteLedger]:
    run_id = "bench-" + secrets.token_hex(3)
    base.mkdir(parents=True, exist_ok=True)
    ledger_path = base / "ledger.sqlite"
    ledger = SqliteLedger(str(ledger_path))
    (base / "work").mkdir(exist_ok=True)
    ctx = RunContext(
        run_id=run_id,
        run_dir=base,
        work_dir=base / "work",
        root_seed=424242,
        launcher=launcher,
        ledger_config={"kind": "sqlite", "path": str(ledger_path)},
        read_ledger=lambda trial_id: ledger.rows(run_id=run_id, trial_id=trial_id),
        store_for=lambda cell, trial_id, d: {"path": str((d / "checkpoints.sqlite").resolve())},
    )
    return ctx, ledger


# ------------------------------------------------------------------------------ chaos modes


def chaos_case(case: str, mode: str, trials: int, base: Path, profile: cProfile.Profile | None = None) -> dict:
    if mode in ("warm", "nopool"):  # nopool: warm racers each forked on request, the path before the pool
        from chaos.envs import python_for

        python = python_for(CASES[case][0])  # the framework's own environment (LangGraph's: this one)
        inner: WarmLauncher | LocalLauncher = WarmLauncher(python=python, log_dir=base, pool=0 if mode == "nopool" else POOL)
    else:
        inner = LocalLauncher()
    launcher = Measured(inner)
    ctx, ledger = context(base, launcher)
    cpu0, m0 = cpu_s(), time.monotonic()
    server = {}
    if isinstance(inner, WarmLauncher):  # the one-time cost: start the server before the clock of the trials runs
        client = inner.server(CASES[case][0], str(base / "work" / "x"))
        server = {
            "start_wall_s": time.monotonic() - m0,
            "start_cpu_s": proc_cpu_s(client.pid),
            "rss_mib": rss_kb(client.pid) / 1024,
            "pss_mib": pss_kb(client.pid) / 1024,
        }
    walls, recs = [], []
    points: list[str] = []
    framework, kind, k = CASES[case]
    if kind == "kill_sweep":
        cell = expand(scenario("kill_sweep", framework), check=False)[0]
        dry = dry_run(ctx, cell)
        points = dry.observations["boundaries"]
    else:
        cell = expand(scenario("race", framework, racers={"k": k, "placement": "local"}, jitter_ms=JITTER_MS), check=False)[0]
    cpu1 = cpu_s()
    if profile:
        profile.enable()
    t_start = time.monotonic()
    for t in range(trials):
        ts = time.monotonic()
        if kind == "kill_sweep":
            point = points[t % len(points)]
            run: TrialRun = Probed(ctx, cell, f"c000-p{t % len(points):03d}-r{t // len(points):03d}", point=point)
            try:
                rec = kill_trial(run, point)
            finally:
                run.cleanup()
        else:
            run = TrialRun(ctx, cell, f"c000-t{t:04d}", rep=t)
            try:
                rec = race_trial(run)
            finally:
                run.cleanup()
        walls.append(time.monotonic() - ts)
        recs.append(rec)
    elapsed = time.monotonic() - t_start
    if profile:
        profile.disable()
    launcher.reap()  # warm: the server exits and is reaped, so its racers' CPU is counted below
    ledger.close()
    cpu = cpu_s() - cpu0 - (cpu1 - cpu0) - server.get("start_cpu_s", 0.0)
    out = summary(mode, walls, elapsed, cpu, recs, launcher.peak_pss_kb, launcher.peak_rss_kb)
    out["server"] = server
    out["phases"] = phases(recs, launcher.spawned_ns)
    if Probed.victim_work:
        out["phases"]["victim start -> barrier: minor faults"] = statistics.median(f for f, _ in Probed.victim_work)
        out["phases"]["victim start -> barrier: CPU"] = round(statistics.median(c for _, c in Probed.victim_work), 2)
        Probed.victim_work = []
    forks = getattr(inner, "fork_ms", None)
    if forks:
        out["phases"]["fork in the server (of launch)"] = round(statistics.median(forks), 2)
    out["fidelity"] = fidelity_view(case, recs)
    return out


def summary(mode, walls, elapsed, cpu, recs, pss, rss) -> dict:
    spreads = [r.observations.get("release_spread_ms") for r in recs if r.observations.get("release_spread_ms") is not None]
    return {
        "mode": mode,
        "trials": len(walls),
        "valid": sum(bool(getattr(r, "valid", r.get("valid") if isinstance(r, dict) else False)) for r in recs),
        "trials_per_s": len(walls) / elapsed if elapsed else None,
        "median_wall_ms": statistics.median(walls) * 1000,
        "cpu_per_trial_ms": cpu / len(walls) * 1000,
        "peak_pss_mib": pss / 1024,
        "peak_rss_mib": rss / 1024,
        "release_spread_ms": {"median": statistics.median(spreads), "max": max(spreads)} if spreads else None,
    }


def phases(recs, spawned_ns: dict[str, int]) -> dict:
    """Median milliseconds per phase of a racer's life, over every racer of every trial."""
    acc: dict[str, list[float]] = {}

    def add(name, a, b):
        if a and b:
            acc.setdefault(name, []).append((b - a) / 1e6)

    for rec in recs:
        for r in rec.racers:
            res = r.result or {}
            path = next((p for p in spawned_ns if p.endswith(f"/result-{r.racer_id}.json") and f"/{rec.trial_id}/" in p), None)
            add("launch (asked -> racer code runs)", spawned_ns.get(path) if path else None, res.get("t_start_mono_ns"))
            if res.get("t_unheld_mono_ns") and res.get("t_ledger_mono_ns"):  # a sweep's resume racer, held until its turn
                acc.setdefault("setup (ledger, saver, workload)", []).append(
                    (res["t_ledger_mono_ns"] - res["t_start_mono_ns"] + res["t_ready_mono_ns"] - res["t_unheld_mono_ns"]) / 1e6
                )
            else:
                add("setup (ledger, saver, workload)", res.get("t_start_mono_ns"), res.get("t_ready_mono_ns"))
            add("gate (ready -> released)", res.get("t_ready_mono_ns"), res.get("t_released_mono_ns"))
            add("action (invoke -> return)", res.get("t_invoke_mono_ns"), res.get("t_return_mono_ns"))
            add("finish (return -> end)", res.get("t_return_mono_ns"), res.get("t_end_mono_ns"))
    return {k: round(statistics.median(v), 2) for k, v in acc.items()}


def outcome_of(counts: Mapping[str, int]) -> str:
    """A trial's effect ledger once its resume ended, the victim's rows and the resumer's, counted
    per effect: ``a x2, b x1, c x1`` (``nothing``: no row). ``bench/floor_harness.py`` spells its own
    trials the same way (its ``outcome_of``), so the two are compared string for string."""
    return ", ".join(f"{k} x{n}" for k, n in sorted(counts.items())) or "nothing"


def fidelity_view(case: str, recs) -> dict:
    """Sweeps: per kill point, how many valid repeats ended with each ledger (``outcome_of``); every
    repeat is kept, so a point whose repeats differ shows as such. Races: the gated effect's fires."""
    if CASES[case][1] == "kill_sweep":
        view: dict[str, dict[str, int]] = {}
        for r in recs:
            if r.valid:
                at = view.setdefault(r.point, {})
                o = outcome_of(Counter(row["effect_key"] for row in r.ledger))
                at[o] = at.get(o, 0) + 1
        return view
    fires = [r.observations.get("fires") for r in recs if r.valid]
    return {
        "fires": dict(sorted(Counter(fires).items())),
        "mean_fires": statistics.mean(fires) if fires else None,
        "sd_fires": statistics.pstdev(fires) if len(fires) > 1 else 0.0,
    }


def recorded_case(case: str, trials: int, base: Path, profile: cProfile.Profile | None = None) -> dict:
    """The sweep case with ``crash_states: recorded`` (``chaos.kinds.crash_states``): the kill_sweep
    kind's own ``run_cell`` with warm racers, the dry run, then one recording frozen at every kill
    point and a fresh resumer per point on a copy of its crash state. ``trials`` kill-point trials
    as the other modes run (rounded up to whole sweeps: repeats per point). There is no per-trial
    wall to take a median of (the recoveries overlap each other and the recording), so the row's
    ``median_wall_ms`` is the cell's cost per kill point: the span from the end of the dry run to
    the end of the last recovery (the recording, its copies, every recovery) over the point trials;
    CPU likewise per point trial."""
    from chaos.envs import python_for
    from chaos.kinds import crash_states, get_kind

    if case == "email_sweep":
        return email_sweep_case("recorded", base, profile, over={"crash_states": "recorded"}, racers="warm")
    framework, _, _ = CASES[case]
    inner = WarmLauncher(python=python_for(framework), log_dir=base, pool=POOL)
    launcher = Measured(inner)
    ctx, ledger = context(base, launcher)
    ctx.copy_ledger = ledger.copy_rows
    client = inner.server(framework, str(base / "work" / "x"))  # the one-time start, off the clock as warm's
    start_cpu = proc_cpu_s(client.pid)  # and off the CPU: it is counted when the server is reaped
    reps = max(1, -(-trials // 21))  # three_step crosses 21 boundaries
    cell = expand(scenario("kill_sweep", framework, crash_states="recorded", trials=reps), check=False)[0]
    recs, recordings, dries, dry_end = [], [], [], 0.0
    cpu0, own0 = cpu_s(), own_cpu_s()
    if profile:
        profile.enable()
    for rec in get_kind("kill_sweep").run_cell(ctx, cell, set()):
        if rec.trial_id.endswith("-dry"):
            dries.append(rec)
            dry_end, cpu0, own0 = time.monotonic(), cpu_s(), own_cpu_s()
        elif crash_states.is_recording(rec.trial_id):
            recordings.append(rec)
        else:
            recs.append(rec)
    span, own = time.monotonic() - dry_end, own_cpu_s() - own0
    if profile:
        profile.disable()
    launcher.reap()
    ledger.close()
    cpu = cpu_s() - cpu0 - start_cpu
    n = max(1, len(recs))
    out = summary("recorded", [span / n] * n, span, cpu, recs, launcher.peak_pss_kb, launcher.peak_rss_kb)
    killed = [r.point for r in recs if r.observations.get("crash_state") is None]
    cs = crash_states.summary(cell, [*dries, *recordings, *recs])
    out.update(
        per_point_span=True,
        orchestrator_cpu_ms=own / n * 1000,  # of cpu_per_trial_ms: this process's own (the rest: the fork server and racers)
        recording_ms=sum(r.wall_s for r in recordings) * 1000,
        median_recovery_ms=statistics.median(r.wall_s for r in recs) * 1000 if recs else None,
        crash_states=f"{cs.used}" + (f" ({cs.reason})" if cs and cs.reason else "") if cs else "kill",
        killed_points=killed,
    )
    out["phases"] = phases(recs, launcher.spawned_ns)
    out["fidelity"] = fidelity_view(case, recs)
    return out


# ------------------------------------------------------------------------------ floor


def floor_case(trials: int, base: Path) -> dict:
    """The sweep trial at the least any harness could spend on it (``bench/floor_harness.py``)."""
    base.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, FLOOR_HARNESS, "--trials", str(trials), "--work", str(base)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------ naive


def naive_case(case: str, trials: int, base: Path) -> dict:
    from chaos.envs import python_for

    ctx, ledger = context(base, None)
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONDONTWRITEBYTECODE="1")
    framework, kind, k = CASES[case]
    python = python_for(framework)  # a fresh interpreter of the framework's environment per racer
    cpu0 = cpu_s()
    walls, recs, peak_pss, peak_rss = [], [], 0, 0
    points: list[str] = []
    if kind == "kill_sweep":
        cell = expand(scenario("kill_sweep", framework), check=False)[0]
        run = TrialRun(ctx, cell, "c000-dry")
        s = run.spec("dry", actions=[{"op": "run"}])
        _naive_run(env, run, [s], python)[0].wait()
        points = [t["barrier"] for t in json.loads(Path(s["result_path"]).read_text())["trace"]]
    else:
        cell = expand(scenario("race", framework, racers={"k": k, "placement": "local"}, jitter_ms=JITTER_MS), check=False)[0]
    cpu1 = cpu_s()
    t_start = time.monotonic()
    for t in range(trials):
        ts = time.monotonic()
        if kind == "kill_sweep":
            point = points[t % len(points)]
            run = TrialRun(ctx, cell, f"n-p{t:03d}", point=point)
            (victim,) = _naive_run(env, run, [run.spec("victim", actions=[{"op": "run"}], armed=(point,))], python)
            while not read_arrivals(str(run.barrier_dir), "victim") and victim.poll() is None:
                time.sleep(NAIVE_POLL_S)
            victim.kill()
            victim.wait()
            resume = run.spec("resume", actions=[{"op": "resume", "form": "none"}], inspect_before=True, inspect_after=True)
            (res,) = _naive_run(env, run, [resume], python)
            res.wait()
            rows = ctx.read_ledger(run.trial_id)
            recs.append({"valid": res.returncode == 0, "point": point, "ledger": rows})
        else:
            run = TrialRun(ctx, cell, f"n-t{t:04d}")
            (park,) = _naive_run(env, run, [run.spec("park", actions=[{"op": "run"}])], python)
            park.wait()
            go = run.dir / "GO"
            specs: list[dict[str, Any]] = [
                dict(
                    run.spec(f"r{i}", actions=[{"op": "resume", "form": "command", "value": True}], gate=True),
                    ready=str(run.dir / f"READY-{i}"),
                    go=str(go),
                )
                for i in range(k)
            ]
            procs = _naive_run(env, run, specs, python)
            while not all(os.path.exists(s["ready"]) for s in specs) and all(p.poll() is None for p in procs):
                time.sleep(NAIVE_POLL_S)
            if t < MEMORY_SAMPLES:
                peak_pss = max(peak_pss, sum(pss_kb(p.pid) for p in procs))
                peak_rss = max(peak_rss, sum(rss_kb(p.pid) for p in procs))
            go.write_text("go")
            for p in procs:
                p.wait()
            results = [json.loads(Path(s["result_path"]).read_text()) for s in specs if Path(s["result_path"]).exists()]
            released = [r.get("t_released_mono_ns") for r in results if r.get("t_released_mono_ns")]
            rows = ctx.read_ledger(run.trial_id)
            recs.append(
                {
                    "valid": all(p.returncode == 0 for p in procs),
                    "fires": sum(r["task"] == "gate" for r in rows),
                    "release_spread_ms": (max(released) - min(released)) / 1e6 if len(released) == k else None,
                }
            )
        shutil.rmtree(run.dir, ignore_errors=True)
        walls.append(time.monotonic() - ts)
    elapsed = time.monotonic() - t_start
    ledger.close()
    cpu = cpu_s() - cpu1

    class R:  # the summary reads observations/valid off trial records
        def __init__(self, d):
            self.valid = d["valid"]
            self.observations = d

    out = summary("naive", walls, elapsed, cpu, [R(d) for d in recs], peak_pss, peak_rss)
    del cpu0
    return out


def _naive_run(env, run: TrialRun, specs: Sequence[Mapping[str, Any]], python: str = sys.executable) -> list[subprocess.Popen]:
    procs = []
    for s in specs:
        path = run.dir / f"spec-{s['racer_id']}.json"
        path.write_text(json.dumps(s))
        log = open(run.dir / f"racer-{s['racer_id']}.log", "wb")
        procs.append(subprocess.Popen([python, NAIVE_RACER, str(path)], stdout=log, stderr=subprocess.STDOUT, env=env))
        log.close()
    return procs


# ------------------------------------------------------------------------------ matrix


def matrix_case(mode: str, base: Path, profile: cProfile.Profile | None = None) -> dict:
    cpu0, m0 = cpu_s(), time.monotonic()
    if profile:
        profile.enable()
    outcome = run_scenario(ROOT / "scenarios" / "consume_once_matrix.yaml", RunOptions(out=base, racers=mode))
    if profile:
        profile.disable()
    wall = time.monotonic() - m0
    recs = [json.loads(line) for line in (outcome.run_dir / "journal.jsonl").read_text().splitlines()]
    return {
        "mode": mode,
        "trials": len(recs),
        "valid": sum(r["valid"] for r in recs),
        "wall_s": wall,
        "trials_per_s": len(recs) / wall,
        "median_wall_ms": statistics.median(r["wall_s"] for r in recs) * 1000,
        "cpu_per_trial_ms": (cpu_s() - cpu0) / len(recs) * 1000,
        "saturation": {c.cell_id: c.saturation for c in outcome.results.cells},
    }


# ------------------------------------------------------------------------------ the e-mail assistant's stock sweep

EMAIL_STOCK = ROOT / "examples" / "email_assistant" / "scenarios" / "stock.yaml"
EMAIL_SWEEP_CELL = "case=sweep"  # stock.yaml's kill-point sweep (its other cells race and repeat a stray answer)


def email_sweep_case(
    mode: str, base: Path, profile: cProfile.Profile | None = None, over: Mapping[str, Any] | None = None, racers: str | None = None
) -> dict:
    """``examples/email_assistant``'s stock sweep as a user runs it, end to end through
    ``run_loaded`` (the dry run, every kill point, the report), just its ``kill_sweep`` cell; racers
    started as ``racers`` says (``warm``, ``cold``; default: ``mode``, the row's label). Today every
    kill point is a victim killed there and a fresh resumer (kill mode). ``over``: scenario fields a
    mode sets on the sweep's case (issue 27's recorded crash states: ``over={"crash_states": "recorded"}, racers="warm"``). Per kill point: each kill trial's own ``wall_s`` from
    the journal; total: the call's wall, from before loading to its return (the warm server's start
    and the report included, as a user waits for them)."""
    cpu0, m0 = cpu_s(), time.monotonic()
    scen = load_scenario(EMAIL_STOCK)
    if over:  # on the sweep's own case (the file's other cases are kinds that may not read them)
        data = scen.model_dump()
        data["matrix"]["case"] = [{**c, **over} if c.get("name") == "sweep" else c for c in data["matrix"]["case"]]
        scen = Scenario.model_validate(data)
    (index,) = [c.index for c in expand(scen, path=str(EMAIL_STOCK)) if c.id == EMAIL_SWEEP_CELL]
    if profile:
        profile.enable()
    outcome = run_loaded(scen, EMAIL_STOCK, RunOptions(out=base, racers=racers or mode, cells={index}))
    if profile:
        profile.disable()
    wall = time.monotonic() - m0
    recs = [json.loads(line) for line in (outcome.run_dir / "journal.jsonl").read_text().splitlines()]
    kills = [r for r in recs if r.get("point")]
    per_point = {r["point"]: r["wall_s"] * 1000 for r in kills}
    (cell,) = outcome.results.cells
    cs = cell.crash_states  # what the cell used and why (None: it asked for kill mode)
    return {
        "crash_states": None if cs is None else {"asked": cs.asked, "used": cs.used, "reason": cs.reason},
        "mode": mode,
        "kill_points": len(kills),
        "valid": sum(r["valid"] for r in kills),
        "trials": len(recs),  # the dry run too
        "wall_s": wall,
        "kill_wall_s": sum(r["wall_s"] for r in kills),
        "median_point_ms": statistics.median(per_point.values()) if per_point else None,
        "max_point_ms": max(per_point.values()) if per_point else None,
        "cpu_s": cpu_s() - cpu0,
        "per_point_ms": per_point,
    }


def print_email_sweep(rows: list[dict]) -> None:
    print(f"\n== {CASE_TITLES['email_sweep']}")
    for r in rows:
        print(
            f"{r['mode']:6} {r['kill_points']} kill points ({r['valid']} valid) in {r['wall_s']:.1f} s wall end to end "
            f"({r['wall_s'] / max(r['kill_points'], 1) * 1000:.0f} ms per kill point), the kill trials {r['kill_wall_s']:.1f} s of it: "
            f"median {fmt(r['median_point_ms'])} ms, max {fmt(r['max_point_ms'])} ms per kill point; CPU {r['cpu_s']:.1f} s"
        )
        if (cs := r.get("crash_states")) is not None:  # asked for recorded: what the cell used, and why not, in its words
            print(
                f"   {r['mode']}: asked for crash_states {cs['asked']}, the cell used {cs['used']}"
                + (f": {cs['reason']}" if cs["reason"] else "")
            )
    by = {r["mode"]: r for r in rows}
    for mode, r in by.items():
        if mode != "warm" and "warm" in by:
            w = by["warm"]
            print(
                f"   {mode} vs warm (kill mode): {w['wall_s'] / r['wall_s']:.2f}x as fast end to end "
                f"({r['wall_s']:.1f} s vs {w['wall_s']:.1f} s), {w['median_point_ms'] / r['median_point_ms']:.2f}x per kill point (median)"
                + (" (both ran in kill mode: not a recorded mode's gain)" if (r.get("crash_states") or {}).get("used") == "kill" else "")
            )


# ------------------------------------------------------------------------------ modes

Runner = Callable[[str, int, Path, "cProfile.Profile | None"], dict]
TRIAL_CASES = frozenset(CASES)  # the cases run trial by trial here; matrix and email_sweep run whole scenarios


@dataclass(frozen=True)
class Mode:
    """One way to run a case, as ``--modes`` names it. A new mode is one runner and one entry in
    ``MODES``: the argument check, which cases it runs, its trial count, its profile and its lines
    against the floor all read the entry (issue 27's ``recorded``: ``recorded_case``)."""

    about: str
    run: Runner  # (case, trials, work folder, a profile or None) -> the row the case's printer prints
    cases: frozenset[str]  # the cases it runs; any other case skips it
    warm_trials: bool = False  # takes --warm-trials; else --cold-trials (halved for race16)
    profiled: bool = False  # --profile: the orchestrator profiled over it
    vs_floor: bool = False  # sweep: printed against the floor (wall, CPU, the same trial at every kill point)


def _chaos(mode: str) -> Runner:
    def run(case: str, trials: int, base: Path, profile: cProfile.Profile | None) -> dict:
        if case == "email_sweep":
            return email_sweep_case(mode, base, profile)
        return chaos_case(case, mode, trials, base, profile)

    return run


MODES: dict[str, Mode] = {
    "warm": Mode(
        "chaos, racers forked from the fork server, the default",
        _chaos("warm"),
        TRIAL_CASES | {"email_sweep"},
        warm_trials=True,
        profiled=True,
        vs_floor=True,
    ),
    "nopool": Mode("chaos, warm racers each forked when asked for, --pool 0", _chaos("nopool"), TRIAL_CASES, warm_trials=True),
    "recorded": Mode(
        "chaos, crash_states: recorded: one recording frozen at every kill point, a warm resumer per point on a copy",
        recorded_case,
        frozenset({"sweep", "email_sweep"}),
        warm_trials=True,
        profiled=True,
        vs_floor=True,
    ),
    "floor": Mode(
        "not a harness: the least any harness spends on the sweep trial, bench/floor_harness.py",
        lambda case, trials, base, profile: floor_case(trials, base),
        frozenset({"sweep"}),  # the floor harness is LangGraph's three_step
        warm_trials=True,
    ),
    "cold": Mode("chaos, a fresh python -m chaos.racer.main per racer", _chaos("cold"), TRIAL_CASES | {"email_sweep"}),
    "naive": Mode(
        "the hand probes' style: a fresh python per racer, files polled",
        lambda case, trials, base, profile: naive_case(case, trials, base),
        TRIAL_CASES,
    ),
}

CASE_TITLES = {
    "race4": "race trial, k=4, SQLite",
    "race16": "race trial, k=16, SQLite",
    "sweep": "kill-sweep trial (three_step, sync, resume none), SQLite",
    "dbos_race": "DBOS race trial, k=3 (gate_after_interrupt, command:true), SQLite system database",
    "dbos_sweep": "DBOS kill-sweep trial (three_step, resume none), SQLite system database",
    "af_race": "Agent Framework race trial, k=3 (gate_after_interrupt, command:true), FileCheckpointStorage",
    "af_sweep": "Agent Framework kill-sweep trial (three_step, resume none), FileCheckpointStorage",
    "adk_race": "ADK race trial, k=4 (gate_after_interrupt, command:yes), SqliteSessionService",
    "adk_sweep": "ADK kill-sweep trial (three_step, resume none), SqliteSessionService",
    "email_sweep": "e-mail assistant stock sweep (examples/email_assistant/scenarios/stock.yaml, its kill_sweep cell), through the orchestrator",
}


# ------------------------------------------------------------------------------ printing


def fmt(v, unit="") -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.1f}{unit}" if v >= 10 else f"{v:.2f}{unit}"
    return f"{v}{unit}"


def print_case(name: str, rows: list[dict]) -> None:
    print(f"\n== {name}")
    print(
        f"{'mode':6} {'trials':>6} {'valid':>5} {'trials/s':>9} {'median ms':>10} {'CPU/trial ms':>13} {'peak PSS MiB':>13} "
        f"{'peak RSS MiB':>13} {'release spread ms (median/max)':>31}"
    )
    for r in rows:
        rs = r.get("release_spread_ms")
        spread = f"{rs['median']:.2f} / {rs['max']:.2f}" if rs else "-"
        print(
            f"{r['mode']:6} {r['trials']:>6} {r['valid']:>5} {fmt(r['trials_per_s']):>9} {fmt(r['median_wall_ms']):>10} "
            f"{fmt(r['cpu_per_trial_ms']):>13} {fmt(r.get('peak_pss_mib')):>13} {fmt(r.get('peak_rss_mib')):>13} {spread:>31}"
        )
    by = {r["mode"]: r for r in rows}
    if "warm" in by and by["warm"].get("server"):
        s = by["warm"]["server"]
        print(
            f"   warm server start (once per run and framework): {s['start_wall_s']:.2f} s wall, {s['start_cpu_s']:.2f} s CPU, "
            f"RSS {s['rss_mib']:.0f} MiB (PSS {s['pss_mib']:.0f} MiB)"
        )
    for other in ("naive", "cold", "nopool"):
        if "warm" in by and other in by:
            w, o = by["warm"], by[other]
            print(
                f"   warm vs {other}: {o['median_wall_ms'] / w['median_wall_ms']:.1f}x faster per trial (median wall), "
                f"{w['trials_per_s'] / o['trials_per_s']:.1f}x the trials/s, "
                f"{o['cpu_per_trial_ms'] / w['cpu_per_trial_ms']:.1f}x less CPU"
            )
    if "floor" in by:
        for mode in (m for m in by if MODES[m].vs_floor):
            print_vs_floor(mode, by[mode], by["floor"])
    for r in rows:
        if r.get("phases"):
            print(f"   {r['mode']} racer phases, median ms: " + ", ".join(f"{k} {v}" for k, v in r["phases"].items()))
    if "warm" in by and "cold" in by and by["warm"].get("fidelity") and by["cold"].get("fidelity"):
        fw, fc = by["warm"]["fidelity"], by["cold"]["fidelity"]
        if "fires" in fw:
            print(
                f"   fidelity: fires cold {fc['fires']} (mean {fmt(fc['mean_fires'])}, sd {fmt(fc['sd_fires'])}) | "
                f"warm {fw['fires']} (mean {fmt(fw['mean_fires'])}, sd {fmt(fw['sd_fires'])})"
            )
        else:  # the same ledgers at a point, whatever the repeats per ledger
            common = [p for p in fc if p in fw]
            same = sum(set(fc[p]) == set(fw[p]) for p in common)
            print(f"   fidelity: per-boundary effect counts equal cold vs warm at {same}/{len(common)} common kill points")


def print_vs_floor(mode: str, row: dict, floor: dict) -> None:
    """``<mode> vs floor``: the mode's wall and CPU per trial against the floor's, and whether the two
    ran the same trials (``fidelity_vs_floor``). A recorded row's wall is its cost per kill point
    (``recorded_case``), printed as such."""
    if row.get("per_point_span"):
        print(
            f"   {mode} vs floor: {row['median_wall_ms'] / floor['median_wall_ms']:.2f}x the floor's median wall "
            f"({row['median_wall_ms']:.1f} ms per kill point: the recording and every recovery, end of the dry run to the last "
            f"recovery's end, over {row['trials']} point trials; the floor's median trial {floor['median_wall_ms']:.1f} ms; half the "
            f"floor is {floor['median_wall_ms'] / 2:.1f} ms), {row['cpu_per_trial_ms'] / floor['cpu_per_trial_ms']:.1f}x its CPU (the orchestrator's own "
            f"{row['orchestrator_cpu_ms']:.1f} ms of {row['cpu_per_trial_ms']:.1f} ms per point); "
            f"recording {row['recording_ms']:.0f} ms, median recovery trial {fmt(row['median_recovery_ms'])} ms (from its state's copy: the wait for a slot too); crash states "
            f"{row['crash_states']}"
        )
    else:
        print(
            f"   {mode} vs floor: {row['median_wall_ms'] / floor['median_wall_ms']:.1f}x the floor's median wall "
            f"({row['median_wall_ms'] - floor['median_wall_ms']:.1f} ms per trial is chaos's own), "
            f"{row['cpu_per_trial_ms'] / floor['cpu_per_trial_ms']:.1f}x its CPU; the floor: {floor['killed']}/{floor['trials']} "
            f"victims SIGKILLed at their barrier, {floor['boundaries']} boundaries"
        )
    if row.get("fidelity") and "per_point" in floor:
        for line in fidelity_vs_floor(mode, row["fidelity"], floor["per_point"]):
            print("   " + line)


def fidelity_vs_floor(mode: str, mine: Mapping[str, Mapping[str, int]], floor: Mapping[str, Mapping[str, int]]) -> list[str]:
    """The same trial? Per kill point, the effect ledger once the resume ended (``outcome_of``) in
    every repeat of the mode and of the floor. A point *agrees* when every repeat of both ended with
    one and the same ledger; it is *open* when the repeats of either harness differ among themselves
    (which ledger is the scheduler's choice: printed with repeats per ledger); it *differs* when each
    harness is single-valued and the two are not the same. A point with valid trials in only one
    (too few trials to reach it in the other, or no valid one) is named apart."""

    def dist(d: Mapping[str, int]) -> str:
        return "{" + "; ".join(f"{o}: {n}" for o, n in sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))) + "}"

    def reps(view: Mapping[str, Mapping[str, int]]) -> str:
        ns = sorted({sum(d.values()) for d in view.values()})
        return "-" if not ns else str(ns[0]) if ns[0] == ns[-1] else f"{ns[0]}-{ns[-1]}"

    points = [p for p in floor if p in mine]  # in the order a run crosses them
    agree = [p for p in points if len(mine[p]) == 1 and set(mine[p]) == set(floor[p])]
    open_ = [p for p in points if len(mine[p]) > 1 or len(floor[p]) > 1]
    differ = [p for p in points if p not in agree and p not in open_]
    lone = [(p, "the floor") for p in floor if p not in mine] + [(p, mode) for p in mine if p not in floor]
    lines = [
        f"floor vs {mode}: the effect ledger once the resume ended (the victim's rows and the resumer's, per effect) is one "
        f"and the same in every repeat of both at {len(agree)}/{len(points)} kill points "
        f"(repeats per point: {mode} {reps(mine)}, floor {reps(floor)}); open (a harness's own repeats differ) at "
        f"{len(open_)}, different at {len(differ)}" + (f"; {len(lone)} kill points have valid trials in only one" if lone else "")
    ]
    lines += [f"  open at {p}: {mode} {dist(mine[p])}, floor {dist(floor[p])}" for p in open_]
    lines += [f"  different at {p}: {mode} {dist(mine[p])}, floor {dist(floor[p])}" for p in differ]
    lines += [f"  valid trials only in {who} at {p}" for p, who in lone]
    return lines


def print_profile(prof: cProfile.Profile, title: str, n: int = 18) -> None:
    s = io.StringIO()
    st = pstats.Stats(prof, stream=s)
    st.strip_dirs().sort_stats("tottime").print_stats(n)
    print(f"\n== orchestrator profile ({title}), top {n} by own time")
    lines = s.getvalue().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("ncalls")), 0)
    print("\n".join(lines[start : start + n + 1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--cases",
        default="race4,race16,sweep,matrix",
        help="comma list of race4, race16, sweep, matrix, dbos_race, dbos_sweep, af_race, af_sweep, email_sweep (examples/email_assistant's stock sweep)",
    )
    ap.add_argument(
        "--modes",
        default="warm,nopool,floor,cold,naive",
        help="comma list of: " + "; ".join(f"{m} ({mode.about}; cases: {', '.join(sorted(mode.cases))})" for m, mode in MODES.items()),
    )
    ap.add_argument("--warm-trials", type=int, default=30, help="trials per case for warm racers")
    ap.add_argument("--cold-trials", type=int, default=4, help="trials per case for cold and naive racers")
    ap.add_argument("--matrix-modes", default="warm", help="modes to run the 200-trial matrix with (cold takes about an hour)")
    ap.add_argument("--profile", action="store_true", help="cProfile the orchestrator over the warm cases")
    ap.add_argument("--json", type=Path, help="also write every number to this file")
    ap.add_argument(
        "--work",
        type=Path,
        default=None,
        help="folder for the trials' databases and files (default: the system temp folder, on disk; "
        "/dev/shm shows the cost without fsync latency)",
    )
    ap.add_argument("--jitter", type=float, default=0.0, help="jitter_ms of the race cases (timing-sensitive: 25)")
    ap.add_argument("--pool", type=int, default=None, help="warm: pre-forked racers in the fork server (0: none, the old path)")
    ap.add_argument(
        "--jobs",
        default=None,
        metavar="N,M",
        help="also run the sweep and email_sweep cells end to end with each --jobs value, and compare wall and outcomes (bench/parallel_trials.py)",
    )
    ap.add_argument("--jobs-trials", type=int, default=2, help="repeats per kill point of the sweep cell that --jobs runs")
    ap.add_argument(
        "--jobs-rounds",
        type=int,
        default=1,
        help="run each --jobs comparison this many times, the values alternating, and print the median ratio (one run's wall moves by a fifth here)",
    )
    args = ap.parse_args(argv)
    try:
        jobs = [parse_jobs(j) for j in args.jobs.split(",")] if args.jobs else []
    except ChaosError as exc:
        ap.error(exc.message)
    global JITTER_MS, POOL
    JITTER_MS, POOL = args.jitter, args.pool
    cases = [c for c in args.cases.split(",") if c]
    modes = [m for m in args.modes.split(",") if m]
    known_cases = ["matrix", *CASE_TITLES]
    for what, asked, known in (("case", cases, known_cases), ("mode", modes, list(MODES))):
        if bad := [x for x in asked if x not in known]:
            ap.error(f"unknown {what} {', '.join(bad)} (known: {', '.join(known)})")
    tmp = Path(tempfile.mkdtemp(prefix="chaos-bench-", dir=args.work))
    print(f"chaos racer benchmark: {os.cpu_count()} CPUs, load average at start {os.getloadavg()}")
    print(f"python {sys.version.split()[0]}, work folder {tmp}")
    everything: dict = {"load_start": os.getloadavg(), "cases": {}}
    try:
        for case in cases:
            if case == "matrix":
                rows = []
                for mode in [m for m in args.matrix_modes.split(",") if m]:
                    prof = cProfile.Profile() if args.profile and mode == "warm" else None
                    rows.append(matrix_case(mode, tmp / f"matrix-{mode}", prof))
                    if prof:
                        print_profile(prof, "matrix, warm, whole run_scenario")
                print("\n== matrix: scenarios/consume_once_matrix.yaml (SQLite half, 20 cells x 10 trials) via run_scenario")
                for r in rows:
                    print(
                        f"{r['mode']:6} {r['trials']} trials ({r['valid']} valid) in {r['wall_s']:.1f} s wall: "
                        f"{r['trials_per_s']:.2f} trials/s, "
                        f"median {r['median_wall_ms']:.0f} ms/trial, CPU {r['cpu_per_trial_ms']:.0f} ms/trial"
                    )
                    sat = r["saturation"]
                    print("   saturation per cell: " + ", ".join(f"{k}:{fmt(v)}" for k, v in sat.items()))
                everything["cases"][case] = rows
                continue
            rows = []
            if case == "email_sweep":
                # off the clock: the process's one-time costs (measured: the first row of a run took 4-6 s
                # longer end to end, whichever mode it was), so the rows compare the modes, not their order
                t0 = time.monotonic()
                email_sweep_case("warm", tmp / "email-warm-up", racers="warm")
                shutil.rmtree(tmp / "email-warm-up", ignore_errors=True)
                print(f"(email_sweep: an unmeasured warm-up run first, {time.monotonic() - t0:.1f} s)")
            for mode in (m for m in modes if case in MODES[m].cases):
                spec = MODES[mode]
                n = args.warm_trials if spec.warm_trials else args.cold_trials
                if case == "race16" and not spec.warm_trials:
                    n = max(1, n // 2)
                d = tmp / f"{case}-{mode}"
                prof = cProfile.Profile() if args.profile and spec.profiled else None
                rows.append(spec.run(case, n, d, prof))
                if prof:
                    print_profile(prof, f"{case}, {mode}, {n} trials")
                shutil.rmtree(d, ignore_errors=True)
            if case == "email_sweep":
                print_email_sweep(rows)
            else:
                print_case(CASE_TITLES[case], rows)
            everything["cases"][case] = rows
        if jobs:
            everything["jobs"] = jobs_bench(cases, jobs, tmp, args.jobs_trials, args.jobs_rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    everything["load_end"] = os.getloadavg()
    print(f"\nload average at end {os.getloadavg()}")
    if args.json:
        args.json.write_text(json.dumps(everything, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
