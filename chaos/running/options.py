"""What a run is asked to do (``RunOptions``) and what it hands back (``RunOutcome``).

Why: the command line, the public API (``chaos.RunOptions``), the pytest plugin, a nightly, a
resume and a rerun all start runs; they share these two types, which import nothing of the run
path itself, so every module of it can name them without importing another.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from chaos.records import RunResults, TrialRecord
from chaos.scenario.model import Cell


class CellSource(Protocol):
    """Where a queue shard's cells come from (``chaos.running.cellqueue.CellQueue``)."""

    def claims(self, scenario: str, cells: list[Cell]) -> Iterator[Cell]: ...

    def done(self, scenario: str, cell: Cell, failure: str | None) -> None: ...

    def ran(self, scenario: str) -> set[int]: ...


@dataclass
class RunOptions:
    out: Path = Path("reports")
    seed: int | None = None
    trials: int | None = None
    keep_work: bool = False
    work_in: Path | None = None  # make the work folder here (e.g. /dev/shm), not in the run folder: chaos.running.workdir
    racers: str | None = None  # "warm" | "cold": how racers start, overriding the scenario
    on_trial: Callable[[TrialRecord], None] | None = None
    on_cell_start: Callable[[Cell, int], None] | None = None
    only: set[str] | None = None  # run just these trial ids (``chaos run --only``)
    cells: set[int] | None = None  # run just these cells (by index in the full expansion): a shard's part
    shard: str | None = None  # "I/N": recorded in run.json so analysis reads just those cells
    queue: CellSource | None = None  # queue mode: run the cells claimed from it, one at a time, instead of ``cells``
    jobs: int | None = None  # independent trials at once (``--jobs``, ``chaos.running.jobs``); None: CHAOS_JOBS, else what the machine has

    def __post_init__(self) -> None:
        from chaos.running.jobs import parse_jobs, wanted_jobs

        # 0, a negative or a non-integer count is refused before anything runs, given here or in CHAOS_JOBS
        if self.jobs is not None:
            self.jobs = parse_jobs(self.jobs, "jobs")
        else:
            wanted_jobs()


@dataclass
class RunOutcome:
    run_dir: Path
    results: RunResults
    interrupted: bool = False
    cells: list[Cell] = field(default_factory=list)
    signals: list[str] = field(default_factory=list)  # what interrupted it ("SIGTERM", "SIGINT"): chaos.run delivers it again
