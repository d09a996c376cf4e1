"""``upgrade``: pause a thread under v1 of the workload, deploy v2, resume it there -> UP.

Why: a real outage is rarely a clean restart of the same code. A thread waits at an interrupt for
days while the team deploys; the process that resumes it runs the new graph over a checkpoint the
old one wrote (the seed on state drift after restart, cause 5; LangGraph issues 8629 and 8618).
Does the framework refuse such a thread loudly, carry it to what v2 would give, or resume it
silently wrong?

Per trial, each racer a fresh process on a durable backend:

* ``v1`` builds the workload at version v1 (``ctx.version == "v1"``) and runs it until it parks at
  its interrupt; with ``kill_points``, it runs its whole life armed at one boundary instead and is
  SIGKILLed there (a kill point per boundary naming one of them, found by a v1 dry run);
* ``v2`` builds the deployed workload (``upgrade_to``: another factory, or the same one at
  ``ctx.version == "v2"``) on the same thread, looks at it, answers the interrupt(s) as the scenario
  says (``resume: command:<value>``, ``answers``), and looks again;
* ``scratch`` is v2 alone, on a thread of its own: v2 run from the start and answered the same way
  (the crash-free baseline of the deployed code); with a kill point, v2 killed at the same point by
  its ``twin`` racer and resumed under v2, so the comparison isolates the deploy from the crash
  (a duplicate the crash alone causes is the sweep's to judge, not UP's). A kill point v2 never
  reaches has no twin: its trial is invalid with that reason.

UP (upgrade safety), per valid trial, one of three outcomes:

* **refused**: the resume raised, fired no effect and wrote no checkpoint: the paused thread is
  refused loudly (the error is named; whether it names the version change is for the reader). Holds:
  nothing was done wrong, and the team sees the thread needs migrating.
* **left for v1**: the framework ran nothing of the thread under v2, by its own version check,
  and reported both versions (DBOS: the workflow's recorded application version is not the
  resuming process's, so its recovery and its queue leave the workflow for an executor of the
  recorded version, as DBOS documents): no effect fired, no checkpoint written. Holds: nothing was
  done wrong, the thread is intact for v1's code; whether a v1 executor is left to finish it is the
  team's deploy, not judged here.
* **resumed as v2**: the resume ended as v2 alone ends (same status), with the same effects
  (v1's before the pause plus v2's after it, as a multiset of effect keys) and the same state
  values (ids a framework mints per run, a mapping's string ``id``, left out). Holds.
* **resumed wrong**: anything else: a node of v2's path never ran (skipped), ran twice, acted on a
  ``None``/default/ill-typed value, or the resume failed midway after doing something (a
  ``KeyError`` in a node). Violated, with the differing effects, values and error as evidence.

An error raised by the app's own code in the ``v2`` racer is the measurement here (v2's code running
on v1's state), so it does not make the trial invalid; in ``v1`` or ``scratch`` it does (the
workload itself is broken). A trial whose v1 never parked (or never reached its kill point), or
whose v2 alone did not finish, is invalid with the reason; UP with no valid trial is unknown.

A deploy can be a library release too (``upgrade_to.target``: the framework's release, a saver's
release, or both): v1 runs in the environment of the scenario's target, v2, its twin and v2 alone
in the new release's (``RunContext.deploy_launcher``); each racer's reported versions are kept.

What it needs from an adapter: ``run``, ``resume`` (command), ``inspect`` (values, checkpoint),
``ctx.version`` passed to the factory. Scenario fields: ``resume`` (command), ``answers``,
``upgrade_to``, ``kill_points``, ``trials``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Annotated, Any, Literal, TypedDict, cast

from pydantic import BaseModel, ConfigDict, Field, field_validator

from chaos.envs import requirement_names
from chaos.kinds.base import Checker, Kind, KindOptions, Property, needs_command_resume
from chaos.kinds.baseline import MAX_ANSWERS, answer_action, baseline_actions
from chaos.kinds.checking import base_fields, verdict
from chaos.kinds.phases import in_process, independent_trials
from chaos.kinds.sweep import dry_runs, fresh, point_tasks, points_of
from chaos.launchers import RacerHandle
from chaos.racer.protocol import ActionOutcome, ActionSpec, RacerSpec, TargetSpec
from chaos.records import CellResult, RacerOutcome, TrialRecord, Verdict, error_field, error_of
from chaos.running.trial import RunContext, TrialRun
from chaos.scenario.model import MAX_NAME, Cell, Scenario

Outcome = Literal["refused", "left for v1", "resumed as v2", "resumed wrong"]


class NextTarget(BaseModel):
    """A library release between pause and resume (issue 26): the framework release and extra
    requirements (a saver's release) the resuming racers run with, in an environment of their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: str | None = Field(None, description="v2's framework release (default: the scenario's target.version)")
    requirements: list[Annotated[str, Field(max_length=MAX_NAME * 3)]] | None = Field(
        None, max_length=32, description="v2's extra pip requirements (default: the scenario's target.requirements)"
    )


class NextVersion(BaseModel):
    """The workload a resume runs after a deploy (built with ``ctx.version == "v2"``): by default the
    scenario's own factory and params, so one factory that reads ``ctx.version`` is a pair. With
    ``target``, v2 also runs another release of the framework or the saver."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workload: str | None = Field(
        None, max_length=MAX_NAME * 3, description="v2's factory: a built-in name or package.module:factory (default: workload)"
    )
    workload_params: dict[str, Any] | None = Field(None, description="v2's params (default: workload_params)")
    target: NextTarget | None = Field(
        None, description="v2's release: {version, requirements} of the framework and its saver (default: v1's)"
    )

    @field_validator("workload_params")
    @classmethod
    def _params_finite(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        from chaos.scenario.model import finite

        if v is not None:
            finite(v, "workload_params")
        return v


class UpgradeOptions(KindOptions):
    """What a deploy between pause and resume reads: the v2 it deploys."""

    upgrade_to: NextVersion = Field(
        default_factory=NextVersion,
        description="a deploy between pause and resume: the workload the resuming process runs, built with ctx.version "
        "'v2' (v1 is workload, built with ctx.version 'v1'); left out: the same factory and params at v2",
    )

    def check(self, scenario: Scenario) -> None:
        """``upgrade_to.target`` is read by a kind that deploys v2 only, and is a target as valid as v1's."""
        from chaos.kinds import all_kinds, get_kind

        if self.upgrade_to.target is None:
            return
        if not get_kind(scenario.kind).deploys:
            deployers = ", ".join(k.name for k in all_kinds() if k.deploys)
            raise ValueError(f"upgrade_to.target: kind {scenario.kind} deploys no second release; kinds that do: {deployers}")
        scenario.deployed_target  # noqa: B018  # v2's release, validated as a target: raises ValueError


UP = Property("UP", "upgrade safety", "upgrade-between-pause-and-resume-up-kind-upgrade")


class Upgrade(Kind):
    name = "upgrade"
    about = "pause under v1, deploy v2, resume: refused loudly, resumed as v2 would run, or silently wrong?"
    properties = ("UP",)
    checks = (Checker(UP, lambda cell, records: check_up(cell, records)),)
    fields = ("resume", "answers", "upgrade_to", "kill_points", "trials")
    deploys = True
    section = "contract"
    title = "Upgrade between pause and resume"
    Options = UpgradeOptions

    def validate(self, scenario: Scenario) -> None:
        needs_command_resume(self.name, scenario)
        from chaos.targets import get_target

        if scenario.target.backend in get_target(scenario.target.framework).in_process_backends:
            raise ValueError(
                f"a deploy resumes in a fresh process, and backend {scenario.target.backend!r} keeps nothing across "
                "processes: use a durable backend (sqlite, postgres)"
            )

    def run_cell(self, ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
        if in_process(cell):  # validate refuses it; a matrix axis may still bring one
            return iter(())
        if cell.scenario.kill_points:
            return _kill_cell(ctx, cell, skip)
        return independent_trials(ctx, cell, skip, lambda run: upgrade_trial(run, None))

    def summary(self, cell: Cell, records: Iterable[TrialRecord]) -> tuple[CellResult, list[TrialRecord]]:
        recs = list(records)
        return upgrade_summary(cell, recs), recs

    def explain(self, rec: TrialRecord) -> list[str]:
        outcome, why = trial_up(rec)
        return [why] if outcome == "resumed wrong" else []


KIND = Upgrade()


# ------------------------------------------------------------------------------------ trials


def _at(spec: RacerSpec, workload: str, params: dict[str, Any], version: str, thread_id: str | None = None, *, s: Scenario) -> RacerSpec:
    spec["workload"], spec["workload_params"], spec["workload_version"] = workload, params, version
    if thread_id is not None:
        spec["thread_id"] = thread_id
    if version == "v2" and UpgradeOptions.of(s).upgrade_to.target is not None:  # a library release: v2's target, its versions reported
        from chaos.targets import get_target

        t = s.deployed_target
        spec["target"] = cast(TargetSpec, t.model_dump())
        spec["distributions"] = [*get_target(t.framework).distributions, *requirement_names(t.requirements)]
    return spec


def _v2_start(run: TrialRun, spec: RacerSpec) -> RacerHandle:
    """Start a racer of v2: in v2's own environment when the deploy is a library release (the
    trial still owns the handle: its cleanup kills it if it is left running)."""
    launcher = run.ctx.deploy_launcher
    if launcher is None:
        return run.start([spec])[0]
    (h,) = launcher.start_group([dict(spec)], str(run.dir))
    run.handles.append(h)
    return h


def _forget_v2(run: TrialRun) -> None:
    """The deploy launcher keeps no handle of a finished trial (the cell's own launcher forgets its own)."""
    forget = getattr(run.ctx.deploy_launcher, "forget", None)
    if forget is not None:
        forget([h for h in run.handles if h.state() == "exited"])


def _answers(s: Scenario, first: ActionSpec) -> list[ActionSpec]:
    """``first``, then the answers to any further interrupt (the plan answers them all itself)."""
    more: list[ActionSpec] = [] if s.answers is not None else [{**answer_action(s), "if": "interrupted"} for _ in range(MAX_ANSWERS - 1)]
    return [first, *more]


def _kill_cell(ctx: RunContext, cell: Cell, skip: set[str]) -> Iterator[TrialRecord]:
    """One v1 dry run finds the boundaries; each kept one is a kill point, ``trials`` repeats each,
    independent of each other as a sweep's are (``--jobs`` at a time)."""
    if fresh(ctx, cell):
        ctx.expect_independent()  # the other job slots' fork servers start while the dry run runs
    dry = yield from dry_runs(ctx, cell)
    if dry is None or not dry.valid:
        return
    yield from ctx.independent(point_tasks(cell, skip, points_of(cell, dry.observations["boundaries"]), _at_point))


def _at_point(point: str) -> Callable[[TrialRun], TrialRecord]:
    return lambda run: upgrade_trial(run, point)


def _collect(run: TrialRun, h: RacerHandle, role: str) -> RacerOutcome:
    hung = run.wait_exit([h])
    return run.collect(h, role, role, hung=bool(hung))


class AskedRelease(TypedDict, total=False):
    """What a side's target asked for: its version (None: installed) and extra requirements."""

    version: str | None
    requirements: list[str]


class VersionSide(TypedDict, total=False):
    """``observations["versions"]["v1"]`` / ``["v2"]``: a side's workload and parameters, and (when the
    scenario upgrades the framework) the release it asked for and the one it ran (None: killed first)."""

    workload: str
    params: dict[str, Any]
    asked: AskedRelease
    release: dict[str, str | None] | None


def _fired(out: RacerOutcome | None) -> list[str]:
    return [f["effect_key"] for f in out.fired] if out is not None else []


def _last(out: RacerOutcome) -> ActionOutcome:
    return out.last_outcome or ActionOutcome()


def _kill(run: TrialRun, spec: RacerSpec, point: str, *, v2: bool = False) -> tuple[list[str], str | None]:
    """Run ``spec`` armed at ``point`` and SIGKILL it there: (the effects it fired, why not, or None)."""
    before = {r["seq"] for r in run.ctx.read_ledger(run.trial_id)}
    h = _v2_start(run, spec) if v2 else run.start([spec])[0]
    rid = spec["racer_id"]
    if not run.wait_arrival(h, point):
        _collect(run, h, rid)
        return [], f"{rid} never reached {point}"
    status = run.kill(h, point)
    out = run.collect(h, rid, "run", killed_on_purpose=True)
    fired = [r["effect_key"] for r in run.ctx.read_ledger(run.trial_id) if r["seq"] not in before]
    if not out.kill_confirmed:
        return fired, f"kill of {rid} at {point} not confirmed (exit {status})"
    return fired, None


def upgrade_trial(run: TrialRun, point: str | None) -> TrialRecord:
    """Pause (or kill at ``point``) under v1; resume under v2; and the same under v2 alone."""
    s = run.cell.scenario
    v2_workload, v2_params = s.deployed
    run.measures_app.add("v2")
    twin = f"{run.thread_id}-v2"
    run.observations["versions"] = {
        "v1": {"workload": s.workload, "params": s.workload_params},
        "v2": {"workload": v2_workload, "params": v2_params},
    }
    first: ActionSpec = {**answer_action(s), "label": "resume", "keep_going": True}
    if point is None:
        # 1. v1 runs until it parks at the interrupt
        (h1,) = run.start([run.spec("v1", actions=[{"op": "run", "label": "park"}], inspect_after=True)])
        v1 = _collect(run, h1, "v1")
        v1_versions = v1.racer_result.get("versions")
        park = v1.outcome("park") or ActionOutcome()
        run.observations["v1"] = {"status": park.get("status"), "fired": _fired(v1), "after": v1.inspect_after}
        if v1.status != "ok" or park.get("status") != "interrupted":
            why = (v1.blame_reason or v1.status) if v1.status != "ok" else f"ended {park.get('status')}"
            return run.record(valid=False, invalid_reason=f"v1 never parked at an interrupt ({why})", fault_fired=False)
        baseline: list[ActionSpec] = baseline_actions(run.cell)
        scratch_fired_before: list[str] = []
    else:
        # 1. v1 runs its whole life armed at the point and is killed there; so is v2 alone (the
        #    twin: what the same crash does without a deploy), on a thread of its own
        first["only_if_durable"] = True
        life: list[ActionSpec] = [{"op": "run"}, {**answer_action(s), "if": "interrupted"}]
        fired, missed = _kill(run, run.spec("v1", actions=life, armed=(point,)), point)
        v1_versions = None  # a killed racer reports nothing; its environment is the scenario's target
        run.observations["v1"] = {"killed_at": point, "fired": fired}
        run.observations["kill"] = {"point": point, "confirmed": missed is None}
        if missed:
            return run.record(valid=False, invalid_reason=missed, fault_fired=False)
        twin_fired, missed = _kill(
            run, _at(run.spec("twin", actions=life, armed=(point,)), v2_workload, v2_params, "v2", twin, s=s), point, v2=True
        )
        if missed:
            return run.record(valid=False, invalid_reason=f"{missed}: v2 has no twin of this kill point", fault_fired=True)
        baseline, scratch_fired_before = _answers(s, first), twin_fired

    # 2. v2 resumes the thread; v2 alone on its own thread (from scratch, or resuming its twin kill)
    deploy = _at(run.spec("v2", actions=_answers(s, first), inspect_before=True, inspect_after=True), v2_workload, v2_params, "v2", s=s)
    v2 = _collect(run, _v2_start(run, deploy), "v2")
    scratch_spec = _at(run.spec("scratch", actions=baseline, inspect_after=True), v2_workload, v2_params, "v2", twin, s=s)
    scratch = _collect(run, _v2_start(run, scratch_spec), "scratch")
    _forget_v2(run)
    if UpgradeOptions.of(s).upgrade_to.target is not None:  # the releases asked for, and those each side ran (their own report)
        for side, t, ran in (("v1", s.target, v1_versions), ("v2", s.deployed_target, v2.racer_result.get("versions"))):
            run.observations["versions"][side].update(asked={"version": t.version, "requirements": list(t.requirements)}, release=ran)

    res = v2.racer_result
    resume = v2.outcome("resume")
    last = _last(v2)
    run.observations["v2"] = {
        "performed": resume is not None,
        "status": last.get("status"),
        "error": last.get("error") or error_of(resume),
        "fired": _fired(v2),
        "before": res.get("inspect_before"),
        "after": res.get("inspect_after"),
        "blame": v2.blame_reason,
        # the framework's version check (DBOS): the version the thread recorded, and the resuming process's
        "left_for_version": last.get("left_for_version"),
        "app_version": last.get("app_version"),
    }
    s_last, scratch_after = _last(scratch), scratch.inspect_after
    run.observations["scratch"] = {
        "how": "from scratch" if point is None else f"killed at {point} and resumed",
        "status": s_last.get("status"),
        "error": s_last.get("error"),
        "fired": scratch_fired_before + _fired(scratch),
        "values": scratch_after.get("values") if scratch_after else None,
    }
    if v2.status != "ok":
        return run.record(valid=False, invalid_reason=f"the v2 racer {v2.status}: {run.history[-1].detail}", fault_fired=True)
    if point is not None and resume is None:
        return run.record(
            valid=False, invalid_reason=f"nothing of v1's run was durable at {point}: there is no thread to upgrade", fault_fired=True
        )
    if scratch.status != "ok" or s_last.get("status") == "error":
        why = scratch.blame_reason or error_field(s_last.get("error"), "type") or scratch.status
        return run.record(valid=False, invalid_reason=f"v2 alone did not finish ({why}): v2 itself is broken", fault_fired=True)
    return run.record(valid=True, fault_fired=True)


# ------------------------------------------------------------------------------------ check


def _fmt_counts(c: Counter) -> str:
    return ", ".join(f"{k} x{n}" if n > 1 else str(k) for k, n in sorted(c.items())) or "nothing"


def comparable(v: object) -> object:
    """``v`` without the ids a framework mints per run (a mapping's string ``id``: a message's
    ``lc_run--<uuid>``), which differ between any two runs and say nothing about the resume."""
    if isinstance(v, dict):
        return {k: comparable(x) for k, x in v.items() if not (k == "id" and isinstance(x, str))}
    if isinstance(v, list):
        return [comparable(x) for x in v]
    return v


def _short(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


def _values_diff(got: object, want: object) -> list[str]:
    got, want = comparable(got), comparable(want)
    if not isinstance(got, dict) or not isinstance(want, dict):
        return [] if got == want else [f"values {_short(got)} (v2 alone: {_short(want)})"]
    out = []
    for k in sorted(set(got) | set(want), key=str):
        if k not in got:
            out.append(f"{k} missing (v2 alone: {_short(want[k])})")
        elif k not in want:
            out.append(f"{k}={_short(got[k])} left over (v2 alone has none)")
        elif got[k] != want[k]:
            out.append(f"{k}={_short(got[k])} (v2 alone: {_short(want[k])})")
    return out


def release_change(o: dict[str, Any]) -> str:
    """``langgraph 1.0.10 -> 1.2.24``: the distributions whose version differs between the releases
    v1 and v2 ran (their own report; a killed v1 reports none, so v2's side alone is named), or ''."""
    vs = cast(dict[str, VersionSide], o.get("versions") or {})
    side1, side2 = vs.get("v1") or VersionSide(), vs.get("v2") or VersionSide()
    ran1, ran2 = side1.get("release"), side2.get("release")
    if not ran2:
        return ""
    if not ran1:  # killed before it could report: what it was asked to run
        asked = side1.get("asked") or AskedRelease()
        v1 = " ".join(str(x) for x in (asked.get("version") or "default", *(asked.get("requirements") or ())))
        return f"v1 (killed before it reported) asked release {v1}; v2 ran " + ", ".join(f"{d} {v}" for d, v in ran2.items() if v)
    changed = [f"{d} {ran1.get(d) or 'absent'} -> {ran2.get(d) or 'absent'}" for d in sorted({*ran1, *ran2}) if ran1.get(d) != ran2.get(d)]
    return ", ".join(changed) or "the same releases on both sides"


def trial_up(rec: TrialRecord) -> tuple[Outcome, str]:
    """(outcome, reason) of UP in one valid trial."""
    outcome, why = _trial_up(rec)
    change = release_change(rec.observations)
    return outcome, (f"{why} [{change}]" if change else why)


def _trial_up(rec: TrialRecord) -> tuple[Outcome, str]:
    o = rec.observations
    v1, v2, scratch = o.get("v1") or {}, o.get("v2") or {}, o.get("scratch") or {}
    err = v2.get("error") or {}
    err_text = f"{err.get('type')}: {str(err.get('message'))[:120]}" if err else ""
    after, before = v2.get("after") or {}, v2.get("before") or {}
    moved = after.get("checkpoint") != before.get("checkpoint") or after.get("durable_checkpoints") != before.get("durable_checkpoints")
    if v2.get("status") in ("error", "refused") and not v2.get("fired") and not moved:  # refused: by a guard
        return "refused", f"refused loudly ({err_text}): no effect fired, no checkpoint written"
    if v2.get("left_for_version") and not v2.get("fired") and not moved:  # the framework's own version check
        return "left for v1", (
            f"left for v1: the thread recorded application version {v2['left_for_version']!r} and the resuming process runs "
            f"{v2.get('app_version')!r}, so the framework ran nothing of it under v2 and left it "
            f"{(after.get('workflow_status') or 'as it was')} for an executor of {v2['left_for_version']!r}: "
            "no effect fired, no checkpoint written"
        )
    got = Counter(list(v1.get("fired") or []) + list(v2.get("fired") or []))
    want = Counter(scratch.get("fired") or [])
    diffs = []
    skipped, twice = want - got, got - want
    for key in sorted(skipped):  # the same step fired with another value: it acted on what v2 would not have
        task = key.partition(":")[0]
        other = next((k for k in sorted(twice) if k.partition(":")[0] == task), None)
        if other is not None:
            diffs.append(f"{task} acted on another value: fired {other} where v2 alone fires {key}")
            skipped[key] -= 1
            twice[other] -= 1
    skipped, twice = +skipped, +twice
    if skipped:
        diffs.append(f"never fired {_fmt_counts(skipped)}")
    if twice:
        diffs.append(f"fired {_fmt_counts(twice)} beyond what v2 alone fires")
    if v2.get("status") != scratch.get("status"):
        diffs.append(
            f"ended {v2.get('status')}" + (f" ({err_text}) after firing {_fmt_counts(Counter(v2.get('fired') or []))}" if err else "")
        )
    if not err:
        diffs += _values_diff(after.get("values"), scratch.get("values"))
    if diffs:
        how = "resumed, then failed midway" if err else "resumed silently wrong"
        return "resumed wrong", f"{how}: " + "; ".join(diffs)[:600]
    return (
        "resumed as v2",
        f"resumed to what v2 alone gives ({scratch.get('how', 'from scratch')}: {v2.get('status')}; fired {_fmt_counts(got)})",
    )


def up_verdict(valid: list[TrialRecord], n: int) -> Verdict:
    if not valid:
        return verdict("UP", "unknown", f"no valid trial of {n}")
    per = [(r, *trial_up(r)) for r in valid]
    bad = [(r, why) for r, out, why in per if out == "resumed wrong"]
    if bad:
        return verdict("UP", "violated", f"{len(bad)}/{len(valid)} trials: {bad[0][1]}", trial_ids=[r.trial_id for r, _ in bad])
    outcomes = Counter(out for _, out, _ in per)
    counts = ", ".join(f"{out} {n}" for out, n in sorted(outcomes.items()))
    return verdict("UP", "holds", f"all {len(valid)} trials ({counts}): {per[0][2]}", trial_ids=[r.trial_id for r in valid])


def upgrade_summary(cell: Cell, records: list[TrialRecord]) -> CellResult:
    """The cell's numbers: each valid trial's outcome (refused, resumed as v2, resumed wrong), and the invalid ones."""
    trials = [r for r in records if not r.trial_id.endswith("-dry")]
    valid = [r for r in trials if r.valid]
    result = CellResult(**base_fields(cell, trials))
    result.summary = {
        "outcome": dict(Counter(trial_up(r)[0] for r in valid)),
        "invalid": dict(Counter(r.invalid_reason for r in trials if not r.valid)),
    }
    return result


def check_up(cell: Cell, records: list[TrialRecord]) -> Verdict:
    """UP over the cell's trials (``up_verdict``); unknown when v1's dry run failed before any trial."""
    trials = [r for r in records if not r.trial_id.endswith("-dry")]
    dry = next((r for r in records if r.trial_id.endswith("-dry") and not r.valid), None)
    if not trials and dry is not None:
        return verdict("UP", "unknown", f"the v1 dry run failed: {dry.invalid_reason}")
    return up_verdict([r for r in trials if r.valid], len(trials))
