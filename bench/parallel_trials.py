"""Benchmark: one sweep cell end to end with ``--jobs 1`` against ``--jobs N`` (``chaos.running.jobs``).

``bench/racers.py --cases sweep,email_sweep --jobs 1,2`` calls this. Per case it runs the same cell
through ``run_loaded`` once per jobs value (after one unmeasured warm-up run: the process's
one-time costs would otherwise land on whichever row came first) and prints, against the first
value:

    sweep jobs 2 vs jobs 1: 0.55x wall; outcomes equal at 21/21 points

``<R>x wall`` is the second run's wall over the first's, each from ``run_loaded``'s call to its
return (the dry run, every slot's fork server start, the report: what a user waits for). A point's
outcome is what results.json says of it: the effect counts of its trials, the durable checkpoints
at the kill, the resume outcomes and its verdicts; ``equal`` compares them point by point, so a
parallel run that changed any deterministic point's result shows here. Points whose crash state
depends on thread scheduling (``chaos.kinds.crash_states.racing_points`` of either run's dry run:
another thread inside a store write there) are counted apart, as racing: timing by nature. Each row also says its CPU
(the orchestrator, the fork servers and their racers) and so how many cores it kept busy: on a
machine other sessions load, Linux shares the CPU per session (autogroup), and a second job then
buys nothing, which the cores-busy figure shows. Numbers, not assertions.

A second figure is the **cell's** wall in a run whose fork servers are up: the same run with a
short sweep cell of the same framework first (``servers-up``: only the kill points whose name
contains ``effect(``, at least two, so every slot's server starts), and the measured cell's span
from its dry run's start to its last trial's end (the journal's ``t_start_wall`` and ``wall_s``).
A fork server is the run's, not the cell's: every cell of its framework in the run (a night's
scenario, a matrix) forks from it, so only a run's first cell of a framework pays its import. The
line says both::

    sweep jobs 2 vs jobs 1: 0.87x wall; outcomes equal at 21/21 points
    sweep cell (servers up) jobs 2 vs jobs 1: 0.58x wall; outcomes equal at 21/21 points

Cases: ``sweep`` (LangGraph's ``three_step`` on SQLite, durability sync, resume none, 21 kill
points, ``--jobs-trials`` repeats each) and ``email_sweep`` (``examples/email_assistant``'s stock
sweep cell, kill mode, as a user runs it).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chaos.kinds.crash_states import racing_points
from chaos.records import RunResults
from chaos.running.options import RunOptions
from chaos.running.orchestrator import run_loaded
from chaos.scenario.model import Scenario, expand, load_scenario

ROOT = Path(__file__).resolve().parent.parent
EMAIL_STOCK = ROOT / "examples" / "email_assistant" / "scenarios" / "stock.yaml"
EMAIL_SWEEP_CELL = "case=sweep"
JOB_CASES = ("sweep", "email_sweep")


def cpu_s() -> float:
    """CPU seconds of this process and every descendant it reaped (fork servers, their racers)."""
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


SERVERS_UP = "servers-up"  # the short cell a ``servers_up`` run starts with
SERVERS_UP_POINTS = ["effect("]  # its kill points: the effects' (at least two: every slot's server starts)


def sweep_scenario(trials: int, servers_up: bool = False) -> Scenario:
    """The ``sweep`` case as one cell: three_step's 21 kill points, ``trials`` repeats each; with
    ``servers_up``, after a short cell of the same sweep (``SERVERS_UP``) that starts the fork servers."""
    matrix = {"case": [{"name": SERVERS_UP, "kill_points": SERVERS_UP_POINTS}, {"name": "sweep"}]} if servers_up else {}
    return Scenario.model_validate(
        {
            "name": "bench_jobs_sweep",
            "kind": "kill_sweep",
            "target": {"framework": "langgraph", "backend": "sqlite", "durability": "sync"},
            "workload": "three_step",
            "resume": "none",
            "trials": trials,
            "seed": 20261203,
            "matrix": matrix,
        }
    )


def email_scenario(servers_up: bool = False) -> Scenario:
    """The e-mail assistant's stock scenario; with ``servers_up``, its sweep case is preceded by a
    short copy of itself (``SERVERS_UP``) that starts the fork servers."""
    scen = load_scenario(EMAIL_STOCK)
    if not servers_up:
        return scen
    cases = scen.matrix["case"]
    sweep = next(c for c in cases if c.get("name") == EMAIL_SWEEP_CELL.removeprefix("case="))
    first = {**sweep, "name": SERVERS_UP, "kill_points": SERVERS_UP_POINTS}
    return scen.model_copy(update={"matrix": {**scen.matrix, "case": [first, *cases]}})


def cell_span(recs: list[dict], cell_id: str) -> float:
    """Seconds from the cell's first trial's start (its dry run) to its last trial's end."""
    mine = [r for r in recs if r["cell_id"] == cell_id]
    return max(r["t_start_wall"] + r["wall_s"] for r in mine) - min(r["t_start_wall"] for r in mine)


def point_outcomes(results: RunResults) -> dict[str, Any]:
    """Each kill point's outcome as results.json states it (cell id and point -> its facts)."""
    out: dict[str, Any] = {}
    for c in results.cells:
        for p in c.points:
            out[f"{c.cell_id} @ {p.point}"] = (
                p.effect_counts,
                p.durable_checkpoints,
                p.resume_outcomes,
                [(v.property, v.status) for v in p.verdicts],
            )
    return out


def run_case(case: str, jobs: int, base: Path, trials: int, servers_up: bool = False) -> dict:
    """One run of ``case``'s sweep cell with ``jobs``: its wall and its points' outcomes; with
    ``servers_up`` after a short cell that starts the fork servers, and the measured cell's span."""
    path: str | Path
    measured = "case=sweep" if servers_up else None
    if case == "sweep":
        scen, path = sweep_scenario(trials, servers_up), "bench_jobs_sweep.yaml"
        cells = None
    else:
        scen, path = email_scenario(servers_up), EMAIL_STOCK
        wanted = {EMAIL_SWEEP_CELL, f"case={SERVERS_UP}"} if servers_up else {EMAIL_SWEEP_CELL}
        cells = {c.index for c in expand(scen, path=str(EMAIL_STOCK)) if c.id in wanted}
        measured = EMAIL_SWEEP_CELL if servers_up else None
    m0, c0 = time.monotonic(), cpu_s()
    outcome = run_loaded(scen, path, RunOptions(out=base, jobs=jobs, cells=cells))
    wall, cpu = time.monotonic() - m0, cpu_s() - c0
    recs = [json.loads(line) for line in (outcome.run_dir / "journal.jsonl").read_text().splitlines()]
    if measured is not None:  # the measured cell alone: its span, its trials, its points
        wall = cell_span(recs, measured)
        recs = [r for r in recs if r["cell_id"] == measured]
        outcome.results.cells[:] = [c for c in outcome.results.cells if c.cell_id == measured]
    kills = [r for r in recs if r.get("point")]
    # the points whose crash state depends on thread scheduling (another thread inside a store write
    # there, in the dry run's trace: ``crash_states.racing_points``): timing by nature, not deterministic
    dry = [r for r in recs if str(r["trial_id"]).endswith("-dry") and r.get("racers")]
    racing = {
        f"{c.cell_id} @ {point}"
        for c in outcome.results.cells
        for r in dry
        if r["cell_id"] == c.cell_id
        for point in racing_points(r["racers"][0].get("result", {}).get("trace") or [])
    }
    return {
        "case": f"{case} cell (servers up)" if servers_up else case,
        "jobs": jobs,
        "wall_s": wall,
        "cpu_s": None if servers_up else cpu,  # a servers-up run's CPU is the whole run's, not the cell's
        "trials": len(recs),
        "kill_trials": len(kills),
        "valid": sum(r["valid"] for r in kills),
        "trial_wall_s": sum(r["wall_s"] for r in recs),
        "outcomes": point_outcomes(outcome.results),
        "racing": racing,
        "verdicts": {c.cell_id: [(v.property, v.status) for v in c.verdicts] for c in outcome.results.cells},
    }


def compare(rows: list[dict]) -> list[str]:
    """The lines for one case: each row, then each later jobs value against the first."""
    case = rows[0]["case"]
    lines = [
        f"{case} jobs {r['jobs']}: {r['kill_trials']} kill trials ({r['valid']} valid) in {r['wall_s']:.1f} s wall "
        f"(the trials' own time {r['trial_wall_s']:.1f} s)"
        + ("" if r["cpu_s"] is None else f"; CPU {r['cpu_s']:.1f} s, so {r['cpu_s'] / r['wall_s']:.2f} cores busy on average")
        for r in rows
    ]
    first = rows[0]
    for r in rows[1:]:
        lines.append(
            f"{case} jobs {r['jobs']} vs jobs {first['jobs']}: {r['wall_s'] / first['wall_s']:.2f}x wall; " + agreement(first, r)[1]
        )
        lines += differences(first, r)
    return lines


def agreement(first: dict, r: dict) -> tuple[int, str]:
    """How many points of run ``r`` have the outcome they have in run ``first``, and the words
    ``outcomes equal at <a>/<b> points`` (racing points counted apart)."""
    mine: Mapping[str, Any] = r["outcomes"]
    theirs: Mapping[str, Any] = first["outcomes"]
    points = sorted(set(mine) | set(theirs))
    equal = [p for p in points if mine.get(p) == theirs.get(p)]
    racing = set(first["racing"]) | set(r["racing"])
    steady = [p for p in points if p not in racing]
    return len(equal), (
        f"outcomes equal at {len(equal)}/{len(points)} points"
        + (f" ({len([p for p in steady if p in equal])}/{len(steady)} deterministic, {len(racing & set(points))} racing)" if racing else "")
        + ("" if r["verdicts"] == first["verdicts"] else "; cell verdicts DIFFER")
    )


def differences(first: dict, r: dict, most: int = 5, *, steady_only: bool = False) -> list[str]:
    """The first ``most`` points whose outcome differs between the two runs, each with both outcomes
    (with ``steady_only``, only deterministic points: a racing point's crash state moves by nature)."""
    mine: Mapping[str, Any] = r["outcomes"]
    theirs: Mapping[str, Any] = first["outcomes"]
    racing = set(first["racing"]) | set(r["racing"])
    points = sorted(p for p in set(mine) | set(theirs) if mine.get(p) != theirs.get(p) and not (steady_only and p in racing))
    return [
        f"   differs at {p}{' (racing)' if p in racing else ''}: jobs {first['jobs']} {theirs.get(p)} / jobs {r['jobs']} {mine.get(p)}"
        for p in points[:most]
    ]


def over_rounds(rounds: list[list[dict]]) -> list[str]:
    """The summary of several rounds of one case (each round: one row per jobs value, run one after
    another): per later jobs value the median of the rounds' wall ratios, each round's ratio, and
    the outcomes of every round's run against round 1's first (so a point that moved in any round
    shows). On a shared or virtual machine one run's wall moves by a fifth from run to run: a
    ratio of medians over alternating rounds is the figure to quote, not one round's."""
    case, first = rounds[0][0]["case"], rounds[0][0]
    lines = []
    for i, r in enumerate(rounds[0][1:], start=1):
        ratios = [rows[i]["wall_s"] / rows[0]["wall_s"] for rows in rounds]
        walls = {j: statistics.median(rows[k]["wall_s"] for rows in rounds) for k, j in ((0, first["jobs"]), (i, r["jobs"]))}
        runs = [rows[k] for rows in rounds for k in (0, i)][1:]  # every run but the reference itself
        worst = min((agreement(first, other) for other in runs), key=lambda a: a[0])[1]
        lines.append(
            f"{case} jobs {r['jobs']} vs jobs {first['jobs']}: {statistics.median(ratios):.2f}x wall, median of {len(rounds)} rounds "
            f"({', '.join(f'{x:.2f}' for x in ratios)}; median wall {walls[first['jobs']]:.2f} s vs {walls[r['jobs']]:.2f} s); "
            f"{worst} in the least agreeing of {len(runs)} runs against round 1's jobs {first['jobs']}"
        )
        for other in runs:  # a deterministic point that moved, in any round
            lines += differences(first, other, 2, steady_only=True)
    return lines


def jobs_bench(cases: list[str], jobs: list[int], base: Path, trials: int = 2, rounds: int = 1) -> dict[str, list[dict]]:
    """Every case of ``cases`` that is a sweep cell, once per value of ``jobs`` (``rounds`` times,
    the values alternating within each round); prints its lines, and with several rounds their medians."""
    everything: dict[str, list[dict]] = {}
    for case in [c for c in cases if c in JOB_CASES]:
        t0 = time.monotonic()
        run_case(case, jobs[0], base / f"{case}-jobs-warm-up", 1 if case == "sweep" else trials)
        shutil.rmtree(base / f"{case}-jobs-warm-up", ignore_errors=True)
        print(
            f"\n== {case}: the sweep cell end to end with --jobs {', '.join(map(str, jobs))} ({os.cpu_count()} CPUs, load {os.getloadavg()})"
        )
        print(f"(an unmeasured warm-up run first, {time.monotonic() - t0:.1f} s)")
        for servers_up in (False, True):
            every: list[list[dict]] = []
            for n in range(rounds):
                rows = []
                for j in jobs:
                    d = base / f"{case}-jobs{j}{'-servers-up' if servers_up else ''}-{n}"
                    rows.append(run_case(case, j, d, trials, servers_up))
                    shutil.rmtree(d, ignore_errors=True)
                every.append(rows)
                if rounds == 1:
                    for line in compare(rows):
                        print(line)
                else:
                    print(f"round {n + 1}: " + ", ".join(f"jobs {r['jobs']} {r['wall_s']:.2f} s" for r in rows))
            if rounds > 1:
                for line in over_rounds(every):
                    print(line)
            everything[every[0][0]["case"]] = [r for rows in every for r in rows]
    return everything
