"""Shards: split a suite's cells over N machines, deterministically and balanced by cost.

Why: a nightly that outgrows one machine is spread by the engines teams already run (a CI matrix,
a Kubernetes Indexed Job), each running today's orchestrator on a part of the cells, then
``chaos merge`` (``chaos.running.merge``) puts the parts back together. For that to be right every
shard must compute the same split without talking to the others.

What it promises:

* ``parse_shard("I/N")`` reads a ``--shard`` value (1 <= I <= N); anything else is a one-line
  ``ChaosError`` (exit 3).
* ``plan_suite`` / ``plan_cells`` assign every cell (stable id: scenario name + cell id) to exactly
  one shard: longest cost first, each to the least loaded shard (ties: the lower shard, then the
  stable id). The result is a pure function of the cells and their costs, so N shards given the same
  suite and the same timings together run exactly the cells of the unsharded suite, each once.
* A cell keeps its index in the full expansion, and trial seeds derive from the root seed, the cell
  id and the trial id (``chaos.scenario.seeds``), so a cell's trials have the same seeds whichever
  shard runs it and whichever other cells run beside it.
* Costs are recorded seconds (``timings.json`` of an earlier night: the sum of its trials' wall
  time per cell) where known, else ``estimate_cost`` from the scenario (kind, trials, k, kill
  points, framework, placement). ``ShardPlan.digest`` fingerprints the assignment: ``chaos merge``
  refuses shards whose plans differ (e.g. run with different timings).
* Queue mode (``mode: queue``, ``chaos.running.cellqueue``): no cell is assigned up front (every
  ``PlannedCell.shard`` is 0), so the digest fingerprints the cell set, and the shards' actual
  assignment is what each one's ``queued.jsonl`` says it finished.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Literal

from pydantic import Field

from chaos.racer.errors import ChaosError
from chaos.records import FileRecord, Record
from chaos.running.nights import nights
from chaos.scenario.model import Cell, Scenario, expand
from chaos.scenario.suite import LoadedSuite

SHARD_RE = re.compile(r"^([0-9]+)/([0-9]+)$", re.ASCII)  # ASCII digits, no spaces: what a user types is what CI logs
TIMINGS = "timings.json"
MAX_SHARDS = 10_000

# rough seconds per trial by framework: each adapter's ``TargetInfo.trial_s`` (1.5 for one chaos does not know)
PLACEMENT_S = {"local": 0.0, "docker": 2.0}  # hosts: 1.5 per trial
SWEEP_POINTS = 8  # kill points a sweep finds when the scenario does not list them (its dry run decides)


class Shard(Record):
    """One shard of N (1-based): ``--shard 2/4``."""

    index: int
    of: int

    def __str__(self) -> str:
        return f"{self.index}/{self.of}"


class PlannedCell(Record):
    index: int  # in the scenario's full expansion
    cell_id: str
    cost_s: float
    recorded: bool  # the cost is an earlier night's measured time, not an estimate
    shard: int  # 0: queue mode, whichever shard claims it


class PlannedRun(Record):
    """One suite entry: its scenario as the suite overrode it, and where each of its cells runs."""

    scenario: str
    file: str
    overrides: dict = Field(default_factory=dict)
    spec: dict  # the scenario (after overrides) as JSON: a merge can rebuild any cell from it
    cells: list[PlannedCell]


class ShardPlan(FileRecord):
    """shard.json of a shard's night folder: which shard it is and the whole suite's plan."""

    shard: Shard
    mode: Literal["static", "queue"] = "static"  # queue: cells are pulled from a shared queue (``chaos.running.cellqueue``)
    queue: str | None = None  # the queue folder, in queue mode
    suite: str | None = None
    about: str | None = None
    suite_file: str | None = None
    date: str
    costs_from: str | None = None  # the timings.json used, None: estimates only
    digest: str
    runs: list[PlannedRun]

    def cells_of(self, shard: int, scenario: str) -> set[int]:
        return {c.index for r in self.runs if r.scenario == scenario for c in r.cells if c.shard == shard}

    def loads(self) -> list[float]:
        """Each shard's planned seconds, shard 1 first."""
        load = [0.0] * self.shard.of
        for r in self.runs:
            for c in r.cells:
                load[c.shard - 1] += c.cost_s
        return load


def parse_shard(text: str) -> Shard:
    m = SHARD_RE.match(text or "")
    if not m:
        raise ChaosError(f"--shard {text!r}: expected I/N, e.g. 1/4 (shard I of N, counted from 1)")
    i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or n > MAX_SHARDS:
        raise ChaosError(f"--shard {text!r}: N must be between 1 and {MAX_SHARDS}")
    if not 1 <= i <= n:
        raise ChaosError(f"--shard {text!r}: I must be between 1 and {n} (shards are counted from 1)")
    return Shard(index=i, of=n)


def estimate_cost(scenario: Scenario) -> float:
    """Seconds one cell of ``scenario`` is guessed to take (used when no night measured it)."""
    from chaos.kinds import get_kind
    from chaos.targets import TARGETS

    info = TARGETS.get(scenario.target.framework)
    per_trial = (info.trial_s if info is not None else 1.5) + 0.1 * scenario.racers.k + scenario.jitter_ms / 1000
    placement = scenario.racers.placement
    per_trial += PLACEMENT_S.get(placement, 1.5) if isinstance(placement, str) else 1.5
    trials = scenario.trials
    try:
        section = get_kind(scenario.kind).section
    except KeyError:
        section = "contract"
    if section == "sweep":  # a dry run, then every kill point `trials` times, each a kill and a resume
        points = len(scenario.kill_points) or SWEEP_POINTS
        return per_trial * (1 + 2 * points * trials)
    return per_trial * trials


def read_timings(path: Path | None) -> tuple[dict[str, dict[str, float]], str | None]:
    """Recorded seconds per scenario and cell id from ``path`` (a timings.json, a night folder, or a
    folder of nights: its newest night that has one). Nothing there: ``({}, None)``."""
    if path is None:
        return {}, None
    path = Path(path)
    candidates: list[Path] = []
    if path.is_file():
        candidates = [path]
    elif (path / TIMINGS).is_file():
        candidates = [path / TIMINGS]
    elif path.is_dir():
        candidates = [d / TIMINGS for d in reversed(nights(path)) if (d / TIMINGS).is_file()][:1]
    if not candidates:
        return {}, None
    try:
        data = json.loads(candidates[0].read_text())
    except (OSError, ValueError) as exc:
        raise ChaosError(f"{candidates[0]}: not readable JSON ({type(exc).__name__})", hint="delete it or pass another --timings") from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ChaosError(f"{candidates[0]}: expected {{scenario: {{cell id: seconds}}}}", hint="delete it or pass another --timings")
    return {s: {c: float(t) for c, t in v.items() if isinstance(t, (int, float))} for s, v in data.items()}, str(candidates[0])


def assign(costs: list[tuple[str, float]], n: int) -> dict[str, int]:
    """Longest processing time first: each key (largest cost first, ties by key) to the least loaded
    shard (ties: the lowest). Returns key -> shard (1-based)."""
    load = [0.0] * n
    out: dict[str, int] = {}
    for key, cost in sorted(costs, key=lambda kc: (-kc[1], kc[0])):
        s = min(range(n), key=lambda i: (load[i], i))
        load[s] += cost
        out[key] = s + 1
    return out


def _key(scenario: str, cell_id: str) -> str:
    return f"{scenario}\x1f{cell_id}"


def plan_runs(
    entries: list[tuple[Scenario, str, dict]], n: int, timings: dict[str, dict[str, float]], *, queue: bool = False
) -> list[PlannedRun]:
    """Every cell of every (scenario, file, overrides) entry, each assigned to one of n shards
    (``queue``: to none, shard 0: the shards pull them from a queue)."""
    expanded: list[tuple[Scenario, str, dict, list[Cell]]] = [(s, f, o, expand(s, check=False)) for s, f, o in entries]
    costs: dict[str, tuple[float, bool]] = {}
    for s, _, _, cells in expanded:
        for c in cells:
            known = timings.get(s.name, {}).get(c.id)
            costs[_key(s.name, c.id)] = (round(known, 3), True) if known is not None else (round(estimate_cost(c.scenario), 3), False)
    where = assign([(k, v[0]) for k, v in costs.items()], n)
    runs = []
    for s, f, o, cells in expanded:
        planned = [
            PlannedCell(
                index=c.index,
                cell_id=c.id,
                cost_s=costs[_key(s.name, c.id)][0],
                recorded=costs[_key(s.name, c.id)][1],
                shard=0 if queue else where[_key(s.name, c.id)],
            )
            for c in cells
        ]
        runs.append(PlannedRun(scenario=s.name, file=f, overrides=o, spec=s.model_dump(mode="json"), cells=planned))
    return runs


def digest(runs: list[PlannedRun], n: int, mode: str = "static") -> str:
    """A fingerprint of the assignment and of every scenario it runs (costs aside); in queue mode,
    of the cell set (every cell's shard is 0)."""
    body = [[n] if mode == "static" else [n, mode]] + [[r.scenario, r.spec, [[c.index, c.cell_id, c.shard] for c in r.cells]] for r in runs]
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:16]


def plan_suite(loaded: LoadedSuite, shard: Shard, date: str, timings_from: Path | None, queue: str | None = None) -> ShardPlan:
    timings, source = read_timings(timings_from)
    runs = plan_runs([(it.scenario, str(it.file), dict(it.overrides)) for it in loaded.items], shard.of, timings, queue=queue is not None)
    mode: Literal["static", "queue"] = "queue" if queue is not None else "static"
    return ShardPlan(
        shard=shard,
        mode=mode,
        queue=queue,
        suite=loaded.suite.name,
        about=loaded.suite.about,
        suite_file=str(loaded.path),
        date=date,
        costs_from=source,
        digest=digest(runs, shard.of, mode),
        runs=runs,
    )


def plan_cells(scenario: Scenario, shard: Shard) -> set[int]:
    """The cell indices of ``scenario`` that shard ``shard`` runs (``chaos run --shard``: estimates)."""
    (run,) = plan_runs([(scenario, "", {})], shard.of, {})
    return {c.index for c in run.cells if c.shard == shard.index}


def measured_timings(runs: list[tuple[str, Path | None]]) -> dict[str, dict[str, float]]:
    """Seconds per scenario and cell id, summed from each run folder's journal (its trials' wall time)."""
    from chaos.running.stored import StoredTrials

    out: dict[str, dict[str, float]] = {}
    for scenario, run_dir in runs:
        if run_dir is None or not (run_dir / "journal.jsonl").exists():
            continue
        try:
            records = StoredTrials(run_dir / "journal.jsonl")
        except ChaosError:
            continue  # a damaged journal: its run says so elsewhere; no timing from it
        cell: dict[str, float] = out.setdefault(scenario, {})
        for rec in records:
            cell[rec.cell_id] = round(cell.get(rec.cell_id, 0.0) + rec.wall_s, 3)
    return out
