"""Plain typed records: what a trial did, what a cell showed, what a run concluded.

Everything here serialises to JSON and back; the journal, results.json and the reports are made
of these, so files are the debugger. Verdicts are values (``holds`` / ``violated`` / ``unknown``
with a reason and evidence), never log lines.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

Status = Literal["holds", "violated", "unknown"]


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Op(Record):
    """One Jepsen-style history entry: invoke, then ok / fail (definite refusal) / info (unknown)."""

    racer_id: str
    type: Literal["invoke", "ok", "fail", "info"]
    f: str
    value: Any = None
    t_mono_ns: int | None = None
    detail: str | None = None


class BarrierEvent(Record):
    racer_id: str
    barrier: str
    action: Literal["arrived", "released", "killed"]
    t_mono_ns: int


class RacerOutcome(Record):
    racer_id: str
    role: str
    pid: int | None = None
    host: str | None = None
    exit_code: int | None = None
    signal: int | None = None
    status: Literal["ok", "harness_error", "killed", "timeout", "crashed", "not_started"]
    kill_confirmed: bool | None = None
    result: dict[str, Any] | None = None


class TrialRecord(Record):
    """Everything one trial did, appended to the journal as it ends."""

    run_id: str
    cell_index: int
    cell_id: str
    trial_id: str
    point: str | None = None
    rep: int = 0
    seed: int
    kind: str
    thread_id: str
    valid: bool
    invalid_reason: str | None = None
    fault_fired: bool | None = None
    history: list[Op] = Field(default_factory=list)
    barriers: list[BarrierEvent] = Field(default_factory=list)
    racers: list[RacerOutcome] = Field(default_factory=list)
    ledger: list[dict[str, Any]] = Field(default_factory=list)
    observations: dict[str, Any] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    t_start_wall: float
    wall_s: float


class Evidence(Record):
    trial_ids: list[str] = Field(default_factory=list)
    points: list[str] = Field(default_factory=list)
    ledger_seqs: list[int] = Field(default_factory=list)
    note: str = ""


class Verdict(Record):
    property: str
    status: Status
    reason: str
    evidence: Evidence = Field(default_factory=Evidence)


class PointResult(Record):
    """One kill point of a sweep (a boundary), over its repeats."""

    point: str
    trials: int
    reached: int
    effect_counts: dict[str, list[int]] = Field(default_factory=dict)
    durable_checkpoints: list[int | None] = Field(default_factory=list)
    resume_outcomes: list[str] = Field(default_factory=list)
    duplicates: list[str] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)


class CellResult(Record):
    cell_index: int
    cell_id: str
    axes: dict[str, Any]
    kind: str
    framework: str
    backend: str
    durability: str
    k: int
    jitter_ms: float
    resume: str
    workload: str
    version: str | None = None  # the framework version the scenario asked for (None: installed)
    versions: dict[str, str | None] = Field(default_factory=dict)  # what the racers actually ran
    trials: int
    valid_trials: int
    unknown_trials: int
    errored_trials: int
    saturation: float | None = None
    fires: dict[str, int] = Field(default_factory=dict)
    fires_per_trial: list[int | None] = Field(default_factory=list)
    max_fires: int | None = None
    racer_errors: int = 0
    release_spread_ms: dict[str, float] | None = None
    points: list[PointResult] = Field(default_factory=list)
    summary: dict[str, Any] = Field(default_factory=dict)  # kind-specific tallies (fork, stray, ...)
    verdicts: list[Verdict] = Field(default_factory=list)
    failure: str | None = None


class TrialSummary(Record):
    """How far the run's trials can be trusted: each trial (dry runs included) is counted once as
    valid, hung (a racer exceeded timeout_s and was killed), errored (a harness error or a racer
    that crashed) or unknown (invalid for another reason, e.g. a barrier never reached). The
    injector's own evidence: trials whose fault fired, and kills confirmed by the exit status."""

    trials: int = 0
    valid: int = 0
    unknown: int = 0
    hung: int = 0
    errored: int = 0
    fault_fired: int = 0
    fault_not_fired: int = 0
    kills_confirmed: int = 0
    kills_unconfirmed: int = 0


class CellVerdict(NamedTuple):
    """One cell's verdict on one property, as ``RunResults.verdicts()`` lists it."""

    cell_id: str
    verdict: Verdict


class RunResults(Record):
    """What a run concluded (results.json). ``exit_code`` is the code ``chaos run`` exits with: 0
    every verdict holds, 1 a violation, 2 some verdict unknown (none violated), 3 the run failed or
    was interrupted. The reading helpers below change nothing that is serialised."""

    run_id: str
    scenario: str
    seed: int
    exit_code: int
    verdict_counts: dict[str, int]
    cells: list[CellResult]
    summary: TrialSummary = Field(default_factory=TrialSummary)
    _run_dir: Path | None = PrivateAttr(default=None)

    @property
    def run_dir(self) -> Path | None:
        """The run folder these results came from (set by ``chaos.run``/``rerun``/``analyze``; never in the JSON)."""
        return self._run_dir

    def verdicts(self, prop: str | None = None) -> list[CellVerdict]:
        """Every cell's verdicts, in cell order; only those on ``prop`` (``"CO"``, ``"EO"``, ...) if given."""
        return [CellVerdict(c.cell_id, v) for c in self.cells for v in c.verdicts if prop is None or v.property == prop]

    def violations(self, prop: str | None = None) -> list[CellVerdict]:
        """The verdicts that are ``violated``: what the framework was caught doing."""
        return [cv for cv in self.verdicts(prop) if cv.verdict.status == "violated"]

    def unknowns(self, prop: str | None = None) -> list[CellVerdict]:
        """The verdicts that are ``unknown``: what the run could not judge, each with its reason."""
        return [cv for cv in self.verdicts(prop) if cv.verdict.status == "unknown"]

    def assert_holds(self, prop: str | None = None) -> None:
        """Raise ``AssertionError`` unless ``prop`` (every property, if None) holds in every cell
        that judges it. ``unknown`` is not ``holds``, and a property no cell judged does not hold.
        The message names the property, each failing cell with its status, reason and trial ids,
        and the run folder."""
        what = prop or "every property"
        where = f"run {self.run_id} ({self.run_dir or 'run folder not known'})"
        judged = self.verdicts(prop)
        if not judged:
            raise AssertionError(
                f"{what}: no cell judged it in {where}; properties judged: "
                f"{', '.join(sorted({cv.verdict.property for cv in self.verdicts()})) or 'none'}"
            )
        failing = [cv for cv in judged if cv.verdict.status != "holds"]
        if failing:
            lines = [
                f"  cell {cv.cell_id}: {cv.verdict.property} {cv.verdict.status}: {cv.verdict.reason}"
                + (f" (trials {', '.join(cv.verdict.evidence.trial_ids[:10])})" if cv.verdict.evidence.trial_ids else "")
                for cv in failing
            ]
            raise AssertionError(f"{what} does not hold in {len(failing)} of {len(judged)} verdict(s) of {where}:\n" + "\n".join(lines))
