"""Plain typed records: what a trial did, what a cell showed, what a run concluded.

Everything here serialises to JSON and back; the journal, results.json, run.json, a night's
summary.json and the reports are made of these, so files are the debugger. Verdicts are values
(``holds`` / ``violated`` / ``unknown`` with a reason and evidence), never log lines.

run.json (``RunMeta``) and summary.json (``NightSummary``) are read back from folders older
chaos versions wrote: they accept keys they do not know (and keep them), and ``RunMeta`` writes
back only the keys that were set, so a file keeps the keys it had.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from chaos.racer.protocol import ActionOutcome, ErrorInfo, Fired, InspectResult, OutcomeStatus, RacerResult, TraceEntry

Status = Literal["holds", "violated", "unknown"]
_Shape = TypeVar("_Shape")


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Op(Record):
    """One Jepsen-style history entry: invoke, then ok / fail (definite refusal) / info (unknown)."""

    racer_id: str
    type: Literal["invoke", "ok", "fail", "info"]
    f: str
    value: object = None
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
    result: dict[str, Any] | None = None  # the racer's result file (``RacerResult``), None if it wrote none
    # whose fault its failure was (``chaos.running.blame``): None if it did not fail or chaos killed it
    blame: Literal["framework", "app", "environment", "harness", "injected"] | None = None
    blame_reason: str | None = None
    blame_traceback: str | None = None  # an app error's traceback (for the console and the report)

    # typed readers of ``result`` (a killed or crashed racer has none: empty answers, never a KeyError)

    @property
    def racer_result(self) -> RacerResult:
        """The racer's result file as its protocol type (``{}`` if it wrote none)."""
        return cast(RacerResult, self.result or {})

    @property
    def outcomes(self) -> list[ActionOutcome]:
        """The outcome of each action the racer performed, in order."""
        return self.racer_result.get("outcomes") or []

    @property
    def last_outcome(self) -> ActionOutcome | None:
        """The outcome of the racer's last performed action (None if it performed none)."""
        outs = self.outcomes
        return outs[-1] if outs else None

    @property
    def gated_task(self) -> str | None:
        return self.racer_result.get("gated_task")

    @property
    def workload_meta(self) -> dict[str, Any]:
        return self.racer_result.get("workload_meta") or {}

    @property
    def inspect_before(self) -> InspectResult | None:
        return self.racer_result.get("inspect_before")

    @property
    def inspect_after(self) -> InspectResult | None:
        return self.racer_result.get("inspect_after")

    @property
    def harness_error(self) -> ErrorInfo | None:
        """Why the racer itself could not run (``status: harness_error``), if it could not."""
        return self.racer_result.get("error")

    @property
    def fired(self) -> list[Fired]:
        """Every effect the racer fired, in order (``[]`` if it wrote no result)."""
        return self.racer_result.get("fired") or []

    @property
    def trace(self) -> list[TraceEntry]:
        """Every boundary the racer passed, armed or not (``[]`` if it wrote no result)."""
        return self.racer_result.get("trace") or []

    @property
    def versions(self) -> dict[str, str | None]:
        """The distributions' versions the racer ran (``{}`` if it wrote no result)."""
        return self.racer_result.get("versions") or {}

    @property
    def labelled(self) -> dict[str, ActionOutcome]:
        """The outcomes of the racer's labelled actions, by label (a later one wins a repeated label)."""
        return {label: o for o in self.outcomes if (label := label_of(o))}

    def outcome(self, label: str) -> ActionOutcome | None:
        """The outcome of the action labelled ``label`` (None if the racer did not perform it)."""
        return self.labelled.get(label)


def label_of(o: ActionOutcome) -> str | None:
    """The label a kind gave the action of ``o`` (None if it gave none, or the racer did not echo it)."""
    action = o.get("action")
    return action.get("label") if action else None


def status_of(o: ActionOutcome | None) -> OutcomeStatus | None:
    """The status of an outcome that may not exist (an action not performed): None then."""
    return o.get("status") if o else None


def error_of(o: ActionOutcome | None) -> ErrorInfo | None:
    """The error an outcome that may not exist ended in (None if it raised nothing or was not performed)."""
    return o.get("error") if o else None


def error_field(err: ErrorInfo | None, key: Literal["type", "module", "message", "where", "refused_by"]) -> str | None:
    """One field of an error that may not exist (None then, or if the error lacks it)."""
    return err.get(key) if err else None


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
    # a failure that was not the framework's (``chaos.running.blame``): it makes the trial invalid
    fault: Literal["app", "environment", "harness"] | None = None
    retry_of: str | None = None  # the trial an environment fault made this one repeat
    fault_fired: bool | None = None
    history: list[Op] = Field(default_factory=list)
    barriers: list[BarrierEvent] = Field(default_factory=list)
    racers: list[RacerOutcome] = Field(default_factory=list)
    ledger: list[dict[str, Any]] = Field(default_factory=list)
    observations: dict[str, Any] = Field(default_factory=dict)
    errors: list[str] = Field(default_factory=list)
    t_start_wall: float
    wall_s: float

    # typed readers of ``observations`` a kind stored whole from a racer's result (absent: ``{}``)

    def observed(self, key: str, shape: type[_Shape]) -> _Shape:
        """The observation the kind stored under ``key``, read as ``shape`` (a ``TypedDict`` the kind
        declares for what it writes there); ``{}`` if it stored none (or stored an empty value)."""
        return cast(_Shape, self.observations.get(key) or {})

    def observed_outcome(self, key: str) -> ActionOutcome:
        """The action outcome the kind stored under ``key`` (``{}`` if it stored none)."""
        return self.observed(key, ActionOutcome)

    def observed_inspect(self, key: str) -> InspectResult:
        """The inspect result (the thread's durable state) the kind stored under ``key`` (``{}`` if none)."""
        return self.observed(key, InspectResult)


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
    vacuous: bool = False  # unknown only because nothing it speaks of happened (no effect fired at the point)


class PointResult(Record):
    """One kill point of a sweep (a boundary), over its repeats."""

    point: str
    trials: int
    reached: int
    effect_counts: dict[str, list[int]] = Field(default_factory=dict)
    durable_checkpoints: list[int | None] = Field(default_factory=list)
    resume_outcomes: list[str] = Field(default_factory=list)
    duplicates: list[str] = Field(default_factory=list)  # effect keys fired more often than in the baseline (at most once)
    lost: list[str] = Field(default_factory=list)  # effect keys of the baseline a completed recovery never fired (at least once)
    # effect identities the baseline never fires that a trial fired; identities declared by the team
    # (``task@key``) whose payload differs from every payload the baseline gave them
    extra: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    # repeats per outcome ("exactly once", "duplicated w1, w2", ...): with parallel branches one kill point ends several ways
    distribution: dict[str, int] = Field(default_factory=dict)


class Baseline(Record):
    """What one uninterrupted run of the workload fired (a sweep's dry run): the expected effects."""

    trial_id: str
    effects: dict[str, int] = Field(default_factory=dict)  # effect key -> rows in the run
    workflow_duplicates: dict[str, int] = Field(default_factory=dict)  # keys fired more than once with no crash at all
    # the payloads (values) of each identity the team declared (``task@key``): a recovery's other payload is a finding
    payloads: dict[str, list[str | None]] = Field(default_factory=dict)
    # the pause the run stopped at unanswered (a team's driver without a plan answers only in a recovery):
    # what a recovery fires past it is not 'an effect the uninterrupted run never fires'
    stopped_at: str | None = None
    # the pause an answer given after a restore (in a fresh process, as a restarted app) left the run
    # waiting at again: "the approval was answered and the same question came back" (chaos.kinds.baseline)
    asked_again: str | None = None


class RaceWindow(Record):
    """The race window of a cell (kind ``race``, docs/contract.md): per racer that fired, from its
    first read of the pending interrupt to the commit of its resumed checkpoint; and the saturation
    it predicts at a jitter, beside which the report puts the measured one."""

    n: int  # windows measured (firing racers of valid trials)
    median_ms: float
    p10_ms: float
    p90_ms: float
    min_ms: float
    max_ms: float
    read_offset_median_ms: float | None = None  # gate opening -> first read, jitter left out
    read_offset_p90_ms: float | None = None
    read_source: str = ""  # "read" (the adapter's mark) or "invoke" (the resume's start: an upper bound)
    predicted_saturation: float | None = None  # at the cell's jitter
    predicted_by_jitter_ms: dict[str, float | None] = Field(default_factory=dict)


class CrashStates(Record):
    """How a sweep cell made its kill points' crash states (``crash_states``, ``chaos.kinds.crash_states``):
    the mode asked for, the mode used (``mixed``: some points fell back to a kill), and why a
    point or the whole cell was not recorded."""

    asked: str
    used: str
    reason: str | None = None
    recorded: int = 0  # point trials recovered from a crash state one recording captured
    killed: int = 0  # point trials whose own victim was SIGKILLed there (kill mode)


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
    guard: str | None = None  # target.guard (a framework option): None or a NO_GUARD value is stock
    wall_s_median: float | None = None  # median wall time of a valid trial (a guard's overhead: chaos.reports.guards)
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
    window: RaceWindow | None = None  # kind race: the vulnerable window and the saturation it predicts
    points: list[PointResult] = Field(default_factory=list)
    baseline: Baseline | None = None  # sweeps: the crash-free run the crash verdicts are judged against
    summary: dict[str, Any] = Field(default_factory=dict)  # kind-specific tallies (fork, stray, ...)
    app_errors: list[str] = Field(default_factory=list)  # the first distinct app errors: reason, then traceback
    notes: list[str] = Field(default_factory=list)  # what the verdicts rest on that the user should know (effects outside a task)
    store_size: dict[str, object] | None = None  # sweeps: the uninterrupted run's checkpoint sizes and growth (chaos.kinds.growth)
    crash_states: CrashStates | None = None  # sweeps asked for crash_states other than kill: what was used, and why
    verdicts: list[Verdict] = Field(default_factory=list)
    failure: str | None = None


class TrialSummary(Record):
    """How far the run's trials can be trusted: each trial (dry runs included) is counted once as
    valid, hung (a racer exceeded timeout_s and was killed), errored (a harness error or a racer
    that crashed), environment (a lost database, a full disk, no memory, a racer killed by a signal
    chaos did not send: retried within ``env_retries``; ``retried`` counts the repeats), app_error
    (the user's code raised) or unknown (invalid for another reason, e.g. a barrier never reached).
    The injector's own evidence: trials whose fault fired, and kills confirmed by the exit status."""

    trials: int = 0
    valid: int = 0
    unknown: int = 0
    hung: int = 0
    errored: int = 0
    environment: int = 0
    app_error: int = 0
    retried: int = 0
    fault_fired: int = 0
    fault_not_fired: int = 0
    kills_confirmed: int = 0
    kills_unconfirmed: int = 0
    recorded_states: int = 0  # sweep trials recovered from a recorded crash state: no kill of their own to confirm


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
    # (cell id, property) -> reason, for violations a baseline accepts (chaos.accepted); never in the JSON
    _accepted: dict[tuple[str, str], str] = PrivateAttr(default_factory=dict)

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

    def accepted(self, prop: str | None = None) -> list[CellVerdict]:
        """The violations a baseline accepts (empty unless one was applied, e.g. by the pytest plugin)."""
        return [cv for cv in self.violations(prop) if (cv.cell_id, cv.verdict.property) in self._accepted]

    def assert_holds(self, prop: str | None = None) -> None:
        """Raise ``AssertionError`` unless ``prop`` (every property, if None) holds in every cell
        that judges it. ``unknown`` is not ``holds``, and a property no cell judged does not hold;
        a violation an applied baseline accepts counts as holding. The message names the property,
        each failing cell with its status, reason and trial ids, and the run folder."""
        what = prop or "every property"
        where = f"run {self.run_id} ({self.run_dir or 'run folder not known'})"
        judged = self.verdicts(prop)
        if not judged:
            raise AssertionError(
                f"{what}: no cell judged it in {where}; properties judged: "
                f"{', '.join(sorted({cv.verdict.property for cv in self.verdicts()})) or 'none'}"
            )
        failing = [cv for cv in judged if cv.verdict.status != "holds" and cv not in self.accepted()]
        if failing:
            lines = [
                f"  cell {cv.cell_id}: {cv.verdict.property} {cv.verdict.status}: {cv.verdict.reason}"
                + (f" (trials {', '.join(cv.verdict.evidence.trial_ids[:10])})" if cv.verdict.evidence.trial_ids else "")
                for cv in failing
            ]
            raise AssertionError(f"{what} does not hold in {len(failing)} of {len(judged)} verdict(s) of {where}:\n" + "\n".join(lines))


# ------------------------------------------------------------------------------- run.json


class FileRecord(BaseModel):
    """A record stored in a metadata file older versions also wrote: unknown keys are kept."""

    model_config = ConfigDict(extra="allow")


class RunCell(FileRecord):
    index: int
    id: str
    axes: dict[str, object] = Field(default_factory=dict)


class RunLoad(FileRecord):
    """The machine's 1-minute load average at the run's start and end, and its CPU count."""

    cpus: int | None = None
    start: float | None = None
    end: float | None = None


class RerunOf(FileRecord):
    run_dir: str
    run_id: str | None = None
    trial_ids: list[str] = Field(default_factory=list)


class CellVersions(FileRecord):
    """A cell's framework version: the one its scenario asked for (None: installed), and what ran."""

    asked: str | None = None
    ran: dict[str, str | None] = Field(default_factory=dict)


class ResumeNote(FileRecord):
    """One ``chaos run --resume`` of the run: what it found and set aside before continuing."""

    at: str
    journaled_trials: int
    torn_line_dropped: bool
    torn_bytes: int
    aborted_ledger_rows: int
    reaped_racers: int
    reaped_containers: int


class RunMeta(FileRecord):
    """run.json: what a run is (scenario, cells, seed, versions, machine) and how it went.

    Written when the run folder is created, again once storage is known, and when the run ends;
    ``finished`` is None until the run ends (and stays None for an interrupted run). Only keys
    that were set are written (``to_json``), so a run, a rerun and a resumed run each keep the
    keys they always wrote."""

    run_id: str
    scenario_file: str | None = None
    scenario: dict[str, object]
    cells: list[RunCell] = Field(default_factory=list)
    seed: int | None = None
    rerun_of: RerunOf | None = None
    versions: dict[str, str | None] = Field(default_factory=dict)
    host: str | None = None
    platform: str | None = None
    load: RunLoad | None = None
    argv: list[str] = Field(default_factory=list)
    started: str | None = None
    finished: str | None = None
    interrupted: bool = False
    work_dir: str | None = None  # where the trials' files were, when not in the run folder (``--work-in``)
    storage: dict[str, object] | None = None  # the run's ledger and Postgres schema, DSNs redacted
    stopped: str | None = None
    signals: list[str] | None = None
    failures: dict[str, str] = Field(default_factory=dict)  # cell index -> why the cell failed
    cell_versions: dict[str, CellVersions] = Field(default_factory=dict)
    comparison: list[dict[str, object]] | None = None  # a rerun: the stored verdicts its trials changed (or not)
    resumes: list[ResumeNote] = Field(default_factory=list)
    reaped: str | None = None  # when a later chaos command reaped what the dead run left
    failed: str | None = None  # the run itself failed (disk, database, a bug): the one-line reason
    shard: str | None = None  # "I/N": the run ran only the cells listed (``chaos.running.shard``)
    merged_from: list[str] = Field(default_factory=list)  # ``chaos merge``: the shard run folders it joined

    def to_json(self) -> dict[str, object]:
        """The JSON object run.json holds: the keys that were set (and unknown keys read from it)."""
        return self.model_dump(mode="json", exclude_unset=True)

    # read like the JSON object it was before it had a model (``meta["run_id"]``, ``meta.get("load")``)

    def __getitem__(self, key: str) -> object:
        return self.to_json()[key]

    def get(self, key: str, default: object = None) -> object:
        return self.to_json().get(key, default)


# --------------------------------------------------------------------------- summary.json


class NightCell(FileRecord):
    """One cell of one run in a night's summary."""

    cell_id: str
    kind: str
    framework: str
    backend: str
    k: int
    jitter_ms: float
    valid_trials: int
    trials: int
    saturation: float | None = None
    failure: str | None = None
    verdicts: dict[str, str] = Field(default_factory=dict)  # property -> status
    reasons: dict[str, str] = Field(default_factory=dict)  # property -> reason


class NightRun(FileRecord):
    """One scenario of a night: where its run folder is (relative), how it ended, its cells."""

    scenario: str
    file: str
    overrides: dict[str, object] = Field(default_factory=dict)
    run_dir: str | None = None
    error: str | None = None
    interrupted: bool = False
    exit_code: int
    verdict_counts: dict[str, int] = Field(default_factory=dict)
    cells: list[NightCell] = Field(default_factory=list)
    load: dict[str, object] | None = None  # the run's run.json ``load``


class CellRef(FileRecord):
    scenario: str
    cell_id: str


class VerdictChange(CellRef):
    property: str
    was: str
    now: str
    reason: str = ""
    run_dir: str | None = None


class SaturationMove(CellRef):
    was: float
    now: float
    delta: float
    k: int | None = None
    k_was: int | None = None
    notable: bool = False


class Trend(FileRecord):
    """What changed since the previous night (``chaos.running.nightly.compare``)."""

    regressions: list[VerdictChange] = Field(default_factory=list)
    lost: list[VerdictChange] = Field(default_factory=list)
    improvements: list[VerdictChange] = Field(default_factory=list)
    changed: list[VerdictChange] = Field(default_factory=list)
    new: list[CellRef] = Field(default_factory=list)
    removed: list[CellRef] = Field(default_factory=list)
    saturation: list[SaturationMove] = Field(default_factory=list)


class ShardNote(FileRecord):
    """One shard as ``chaos merge`` found it: ok, failed (it did not finish) or missing."""

    shard: str
    status: Literal["ok", "failed", "missing"]
    folder: str | None = None
    reason: str = ""
    cells: int = 0  # cells the plan gave it


class NightSummary(FileRecord):
    """summary.json of a nightly folder: the suite, every run's verdicts, the trend, the exit code."""

    suite: str | None = None
    about: str | None = None
    suite_file: str | None = None
    suite_digest: str | None = None  # the suite's digest (chaos.running.nightly.suite_digest): one night, one suite
    started: str | None = None
    finished: str | None = None
    date: str
    interrupted: bool = False
    runs: list[NightRun] = Field(default_factory=list)
    previous: str | None = None
    verdict_counts: dict[str, int] = Field(default_factory=dict)
    trend: Trend = Field(default_factory=Trend)
    exit_code: int = 0
    shard: str | None = None  # "I/N": this folder is one shard of a night (its shard.json has the plan)
    shards: list[ShardNote] = Field(default_factory=list)  # a merged night: how each shard came in

    def to_json(self) -> dict[str, Any]:
        """summary.json; an unsharded night's has the keys it always had (no ``shard``/``shards``;
        ``suite_digest`` only once a chaos that records it wrote the night)."""
        data = self.model_dump(mode="json")
        for key in ("shard", "shards", "suite_digest"):
            if not data[key]:
                del data[key]
        return data
