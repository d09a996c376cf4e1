"""Nightly: run a suite into ``reports/nightly/<date>/`` and say what changed since the last night.

``run_nightly`` loads the whole suite first (a bad entry stops it before anything runs), then runs
each scenario with its overrides into ``<night>/<scenario>/<timestamp>/`` (a normal run folder,
with its own report.html and junit.xml). A scenario whose run fails for a reason outside the
framework is recorded as failed and the others go on; an interrupted run stops the night. While a
run's cells go on, the later entries' preflights are checked in the background, one check at a
time and never beside a race (``chaos.running.preflight.Ahead``), so the next run mostly finds
them passed instead of spending seconds of cold interpreters between two runs.

At the end the night gets summary.json (the CI summary: verdicts per run and cell, saturation, the
comparison with the previous night), junit.xml (every run), index.html, saturation.png and
trend.png. The previous night is the newest earlier folder beside this one that has a
summary.json (``chaos.records.NightSummary``). A *regression* is a property that is violated tonight and was not last night
(holds or unknown before); ``holds -> unknown`` is reported as lost coverage, not a regression.

Exit codes: 3 a run failed or the night was interrupted; else 4 a verdict regressed since the
previous night; else as a single run: 1 a violation, 2 an unknown verdict, 0 everything holds.

A night is resumable: night.json (written before its first run) says which suite, date and shard
it is, and the nightly process holds the night folder's lock (``chaos.running.folderlock``) while
it runs. ``resume_nightly`` continues a night that was killed (even by SIGKILL): every entry whose
run folder finished is kept as it is, a run folder that did not finish is resumed from its journal
(``chaos run --resume``), an entry with no run folder runs; a queue shard's night is not resumed
(its unfinished cells went back to the queue). ``partial_night`` renders a night that
has no summary.json yet (``chaos report``), without writing one: a night is complete or has none.

A night is one suite's measurement: night.json records each entry's digest (the scenario it
expands to) and summary.json the suite's; a resume whose suite changed since (an entry changed,
added or removed), or whose night.json names a suite that does not list the night's runs, is
refused, naming the entries. A night folder may come from anywhere: night.json and earlier nights'
summary.json are read as untrusted (``chaos.inputfile``: no link followed, never blocking, capped
before reading); a damaged one is one line naming the file, never "internal error".
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from chaos.inputfile import printable, read_bytes, read_text
from chaos.kinds import get_kind
from chaos.racer.errors import ChaosError
from chaos.records import CellRef, NightCell, NightRun, NightSummary, RunResults, SaturationMove, Trend, VerdictChange
from chaos.running.analysis import analyse_loaded, write_reports, write_results
from chaos.running.cellqueue import CellQueue, queue_name, seed_of
from chaos.running.folderlock import FolderLock
from chaos.running.nights import PLAN, earlier_nights, previous_night
from chaos.running.options import RunOptions
from chaos.running.orchestrator import execute, run_loaded
from chaos.running.preflight import Ahead
from chaos.running.resume import resume_run
from chaos.running.runfolder import META, RunFolder, load_run, new_folder, now_iso, read_meta, write_atomic
from chaos.running.shard import TIMINGS, Shard, ShardPlan, measured_timings, plan_suite
from chaos.running.signals import Interrupted, stop_on_signals
from chaos.scenario.model import Cell, expand
from chaos.scenario.suite import LoadedSuite, SuiteItem, load_suite

EXIT_REGRESSION = 4
NIGHT = "night.json"  # what resuming a night needs (NightStart); the date is the folder's name
HISTORY = 14  # nights shown in the trend
SATURATION_STEP = 0.10  # a saturation change at least this large is called out


@dataclass
class NightlyOptions:
    out: Path = Path("reports/nightly")
    date: str | None = None
    on_scenario: Callable[[int, int, str], None] | None = None
    on_trial: Callable[[Any], None] | None = None
    on_cell_start: Callable[[Any, int], None] | None = None
    shard: Shard | None = None  # run one shard's cells (``chaos.running.shard``); ``chaos merge`` joins them
    queue: str | None = None  # with ``shard``: pull cells from this shared queue folder or Postgres DSN (``chaos.running.cellqueue``)
    timings: Path | None = None  # where earlier timings are (default: ``out``): a shard plan balances by them
    on_start: Callable[[], None] | None = None  # once the suite is loaded, before anything is written (reaping)
    jobs: int | None = None  # each run's independent trials at once (``--jobs``); None: what the machine has


SUMMARY_MAX = 64 << 20  # bytes of a night's summary.json read (nightly_full's is well under 1 MiB)
NIGHT_MAX = 64 << 10  # bytes of night.json read


class NightStart(BaseModel):
    """night.json: written before a night's first run, so a killed night can be resumed."""

    model_config = ConfigDict(extra="forbid")

    suite_file: str  # absolute: a resume may start from another folder
    suite_digest: str | None = None  # ``suite_digest``: a resume with another suite is refused (None: an older chaos wrote it)
    entries: dict[str, str] | None = None  # scenario -> ``entry_digests``: what changed, named when refused
    started: str | None = None
    shard: str | None = None  # "I/N": the plan is the night's shard.json
    queue: str | None = None  # the shard pulled its cells from this queue folder


@dataclass
class RunEntry:
    scenario: str
    file: str
    overrides: dict
    run_dir: Path | None = None
    results: RunResults | None = None
    error: str | None = None
    interrupted: bool = False
    kept: bool = False  # a resumed night: this entry's run had finished before, and was kept as it was


@dataclass
class NightlyOutcome:
    night_dir: Path
    night: NightSummary
    entries: list[RunEntry] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, object]:
        """The night's summary.json as a JSON object."""
        return self.night.to_json()

    @property
    def exit_code(self) -> int:
        return self.night.exit_code


# --------------------------------------------------------------------------------- nights


def prepare_night_dir(out: Path, date: str | None) -> Path:
    date = date or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
    try:
        _dt.date.fromisoformat(date)
    except ValueError:
        raise ChaosError(f"--date {date!r}: not a date; use YYYY-MM-DD") from None
    return new_folder(Path(out), date)


def entry_digests(loaded: LoadedSuite) -> dict[str, str]:
    """Each suite entry's digest (scenario name -> 16 hex of the SHA-256 of the scenario it expands
    to, overrides applied): what a resume compares, entry by entry."""
    return {it.scenario.name: hashlib.sha256(it.scenario.model_dump_json().encode()).hexdigest()[:16] for it in loaded.items}


def suite_digest(entries: dict[str, str]) -> str:
    """The digest of a whole suite (its entries' digests, in suite order): summary.json records it."""
    return hashlib.sha256(json.dumps(list(entries.items())).encode()).hexdigest()[:16]


def read_summary(night_dir: Path) -> NightSummary:
    """A night's summary.json (one an older chaos wrote, too), read as untrusted (no link followed,
    never blocking, a regular file of at most ``SUMMARY_MAX`` bytes); a damaged or wrong-shaped one
    is one ChaosError naming the file (and field)."""
    path = Path(night_dir) / "summary.json"
    hint = "a night folder's summary.json is what chaos nightly wrote; move that night away (or fix the file)"
    if not path.exists() and not path.is_symlink():
        raise ChaosError(f"{night_dir}: not a nightly folder (no summary.json)")
    text = read_text(path, "night summary", SUMMARY_MAX, nofollow=True)
    try:
        return NightSummary.model_validate(json.loads(text))
    except ValidationError as exc:
        e = exc.errors()[0]
        raise ChaosError(f"{path}: {'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}", hint=hint) from None
    except (ValueError, RecursionError) as exc:
        raise ChaosError(f"{path}: not readable JSON ({type(exc).__name__})", hint=hint) from None


# ------------------------------------------------------------------------------- summary


def _cells(results: RunResults) -> list[NightCell]:
    return [
        NightCell(
            cell_id=c.cell_id,
            kind=c.kind,
            framework=c.framework,
            backend=c.backend,
            k=c.k,
            jitter_ms=c.jitter_ms,
            valid_trials=c.valid_trials,
            trials=c.trials,
            saturation=c.saturation,
            failure=c.failure,
            verdicts={v.property: v.status for v in c.verdicts},
            reasons={v.property: v.reason for v in c.verdicts},
        )
        for c in results.cells
    ]


def _run_summary(e: RunEntry, night_dir: Path) -> NightRun:
    r = e.results
    return NightRun(
        scenario=e.scenario,
        file=e.file,
        overrides=e.overrides,
        run_dir=str(e.run_dir.relative_to(night_dir)) if e.run_dir else None,
        error=e.error,
        interrupted=e.interrupted,
        exit_code=3 if e.error or r is None else r.exit_code,
        verdict_counts=r.verdict_counts if r else {"holds": 0, "violated": 0, "unknown": 0},
        cells=_cells(r) if r else [],
        load=_run_load(e.run_dir),
    )


def _run_load(run_dir: Path | None) -> dict | None:
    """The machine's load while the run ran (from its run.json), to compare nights at similar load."""
    if run_dir is None:
        return None
    try:
        load = read_meta(run_dir).load
    except ChaosError:
        return None
    if load is None:
        return None
    return {"end": None, **load.model_dump(mode="json", exclude_unset=True)}  # a run killed mid-way has no end


def compare(prev: NightSummary | None, cur: NightSummary) -> Trend:
    """What changed between two night summaries: regressions, lost coverage, fixes, saturation moves."""
    out = Trend()
    if prev is None:
        return out

    def index(s: NightSummary) -> dict[tuple[str, str], tuple[NightRun, NightCell]]:
        return {(r.scenario, c.cell_id): (r, c) for r in s.runs for c in r.cells}

    before, now = index(prev), index(cur)
    for key, (run, cell) in now.items():
        if key not in before:
            out.new.append(CellRef(scenario=key[0], cell_id=key[1]))
            continue
        _, old = before[key]
        for prop, status in cell.verdicts.items():
            was = old.verdicts.get(prop)
            if was is None or was == status:
                continue
            item = VerdictChange(
                scenario=key[0], cell_id=key[1], property=prop, was=was, now=status, reason=cell.reasons.get(prop, ""), run_dir=run.run_dir
            )
            out.changed.append(item)
            if status == "violated":
                out.regressions.append(item)
            elif was == "holds" and status == "unknown":
                out.lost.append(item)
            elif was == "violated" or (was == "unknown" and status == "holds"):
                out.improvements.append(item)
        s0, s1 = old.saturation, cell.saturation
        if s0 is not None and s1 is not None:
            out.saturation.append(
                SaturationMove(
                    scenario=key[0],
                    cell_id=key[1],
                    was=s0,
                    now=s1,
                    delta=s1 - s0,
                    k=cell.k,
                    k_was=old.k,
                    notable=abs(s1 - s0) >= SATURATION_STEP,
                )
            )
    for key in before:
        if key not in now:
            out.removed.append(CellRef(scenario=key[0], cell_id=key[1]))
    return out


def night_exit_code(runs: list[NightRun], trend: Trend, interrupted: bool) -> int:
    if interrupted or any(r.exit_code == 3 for r in runs):
        return 3
    if trend.regressions:
        return EXIT_REGRESSION
    codes = {r.exit_code for r in runs}
    return 1 if 1 in codes else 2 if 2 in codes else 0


def build_summary(night_dir: Path, head: dict[str, Any], entries: list[RunEntry], interrupted: bool) -> NightSummary:
    runs = [_run_summary(e, night_dir) for e in entries]
    prev_dir = previous_night(night_dir)
    try:
        prev = read_summary(prev_dir) if prev_dir else None
    except ChaosError as exc:  # tonight's runs are done and kept: say how to finish the night
        raise ChaosError(
            f"the previous night {exc.message}",
            hint=f"move {prev_dir} away (or fix its summary.json), then `chaos nightly --resume {night_dir}`: tonight's runs are kept",
        ) from None
    summary = NightSummary(**head, date=night_dir.name, interrupted=interrupted, runs=runs, previous=prev_dir.name if prev_dir else None)
    summary.verdict_counts = {s: sum(r.verdict_counts.get(s, 0) for r in runs) for s in ("holds", "violated", "unknown")}
    summary.trend = compare(prev, summary)
    summary.exit_code = night_exit_code(runs, summary.trend, interrupted)
    return summary


def history(night_dir: Path, current: NightSummary) -> list[dict]:
    """The last nights (oldest first, this one last): date, verdict counts, saturation per race cell."""

    def point(s: NightSummary) -> dict:
        return {
            "date": s.date,
            "exit_code": s.exit_code,
            "verdict_counts": s.verdict_counts,
            "regressions": len(s.trend.regressions),
            "saturation": {f"{r.scenario} {c.cell_id}": c.saturation for r in s.runs for c in r.cells if c.saturation is not None},
        }

    past = []
    for d in earlier_nights(night_dir):
        try:
            past.append(read_summary(d))
        except ChaosError as exc:
            raise ChaosError(
                f"an earlier night {exc.message}",
                hint=f"move {d} away (or fix its summary.json), then `chaos nightly --resume {night_dir}`: tonight's runs are kept",
            ) from None
    return [point(s) for s in past[-(HISTORY - 1) :]] + [point(current)]


# --------------------------------------------------------------------------------- files


def write_night(night_dir: Path, summary: NightSummary, entries: list[RunEntry]) -> None:
    """summary.json (atomically), the night's junit.xml and its pages."""
    from chaos.reports.html import write_nightly_html
    from chaos.reports.junit import write_junit

    write_atomic(night_dir / "summary.json", json.dumps(summary.to_json(), indent=2, default=str))
    # what each cell took tonight: the next sharded night balances its shards by it
    timings = measured_timings([(e.scenario, e.run_dir) for e in entries])
    write_atomic(night_dir / TIMINGS, json.dumps(timings, indent=2, sort_keys=True))
    write_junit(night_dir / "junit.xml", [e.results for e in entries if e.results], name=f"chaos nightly {summary.date}")
    write_nightly_html(night_dir, summary.to_json(), entries, history(night_dir, summary))


def run_nightly(suite_path: str | Path, opts: NightlyOptions | None = None) -> NightlyOutcome:
    opts = opts or NightlyOptions()
    loaded: LoadedSuite = load_suite(suite_path)  # every entry checked before anything runs
    plan: ShardPlan | None = None
    if opts.queue is not None and opts.shard is None:
        raise ChaosError(f"--shard-queue {opts.queue}: give --shard I/N too (which shard this is, of how many `chaos merge` joins)")
    if opts.shard is not None:  # planned before the folder exists: bad timings leave nothing behind
        date = opts.date or _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d")
        timings = opts.timings if opts.timings is not None else Path(opts.out)
        plan = plan_suite(loaded, opts.shard, date, timings, queue=queue_name(opts.queue) if opts.queue else None)
    queue: CellQueue | None = None
    if plan is not None and opts.queue is not None:  # joined before the folder exists: a bad queue leaves nothing behind
        queue = CellQueue(opts.queue, str(plan.shard), seed_of(plan), Path(opts.out))
        queue.join()
    try:
        if opts.on_start:
            opts.on_start()
        night_dir = prepare_night_dir(Path(opts.out), plan.date if plan else opts.date)
        if queue is not None:
            queue.night_dir = night_dir
        with FolderLock(night_dir, "run the night"):
            digests = entry_digests(loaded)
            head: dict[str, object] = {
                "suite": loaded.suite.name,
                "about": loaded.suite.about,
                "suite_file": str(suite_path),
                "suite_digest": suite_digest(digests),
                "started": now_iso(),
            }
            start = NightStart(
                suite_file=str(Path(suite_path).resolve()),
                suite_digest=head["suite_digest"],
                entries=digests,
                started=head["started"],
                shard=str(plan.shard) if plan else None,
                queue=plan.queue if plan else None,
            )
            write_atomic(night_dir / NIGHT, start.model_dump_json(indent=2))
            if plan is not None:
                head["shard"] = str(plan.shard)
                write_atomic(night_dir / PLAN, json.dumps(plan.model_dump(mode="json"), indent=2))  # first: a merge knows a dead shard
            return _run_entries(night_dir, loaded, plan, head, opts, resuming=False, queue=queue)
    finally:
        if queue is not None:
            queue.close()


def read_plan(folder: Path) -> ShardPlan:
    """The shard plan a sharded night wrote before its first run (``shard.json``); a missing or
    damaged one is a ChaosError naming the file."""
    path = Path(folder) / PLAN
    try:
        return ShardPlan.model_validate(json.loads(path.read_text()))
    except FileNotFoundError:
        raise ChaosError(
            f"{folder}: not a shard folder (no {PLAN})", hint="give the night folders `chaos nightly --shard I/N` wrote"
        ) from None
    except ValidationError as exc:
        e = exc.errors()[0]
        raise ChaosError(f"{path}: {'.'.join(map(str, e['loc']))}: {e['msg']}") from None
    except (OSError, ValueError) as exc:
        raise ChaosError(f"{path}: not readable JSON ({type(exc).__name__})") from None


def night_start(night_dir: Path) -> NightStart:
    """night.json of a night (what ``run_nightly`` wrote before its first run); a missing or
    damaged one is a ChaosError naming the file (and field)."""
    night_dir = Path(night_dir)
    if not night_dir.is_dir():
        raise ChaosError(f"{night_dir}: no such night folder")
    path = night_dir / NIGHT
    if not path.exists() and not path.is_symlink():
        raise ChaosError(f"{night_dir}: not a night chaos can resume (no {NIGHT})", hint="give the <date> folder `chaos nightly` made")
    data = read_bytes(path, "night", NIGHT_MAX, nofollow=True)  # untrusted: no link, no FIFO, capped before reading
    try:
        return NightStart.model_validate_json(data)
    except ValidationError as exc:
        e = exc.errors()[0]
        raise ChaosError(f"{path}: {'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}") from None


def check_same_suite(night_dir: Path, start: NightStart, loaded: LoadedSuite) -> None:
    """Refuse to resume ``night_dir`` with a suite other than the one it started with: entries
    changed, added or removed since (named), or run folders of scenarios the suite does not list
    (night.json names another suite file). One night is one suite's measurement."""
    now = entry_digests(loaded)
    where = f"{night_dir / NIGHT}: suite {start.suite_file}"
    hint = "run it as a new night (`chaos nightly SUITE`), or put the suite back as it was when the night started"
    if start.entries is not None and start.entries != now:
        was = start.entries
        parts = [
            f"{label}: {', '.join(names)}"
            for label, names in (
                ("changed", sorted(k for k in now.keys() & was.keys() if now[k] != was[k])),
                ("added", sorted(now.keys() - was.keys())),
                ("removed", sorted(was.keys() - now.keys())),
            )
            if names
        ]
        raise ChaosError(f"{where} is not the suite this night started with ({'; '.join(parts) or 'reordered'})", hint=hint)
    strangers = sorted(
        d.name
        for d in night_dir.iterdir()
        if d.is_dir() and not d.is_symlink() and d.name not in now and _stored_run(night_dir, d.name) is not None
    )
    if strangers:
        raise ChaosError(
            f"{where} does not list the runs this night holds ({', '.join(printable(n) for n in strangers[:5])}): "
            "night.json names another suite",
            hint=hint,
        )


def resume_nightly(night_dir: str | Path, opts: NightlyOptions | None = None) -> NightlyOutcome:
    """Continue a killed night in its own folder: finished runs kept, the others resumed or run."""
    opts = opts or NightlyOptions()
    night_dir = Path(night_dir)
    start = night_start(night_dir)
    if start.queue:
        raise ChaosError(
            f"{night_dir}: a queue shard's night is not resumed: the cells it did not finish went back to the queue {start.queue}",
            hint="the other shards finish them; merge this folder with theirs as it is",
        )
    with FolderLock(night_dir, "resume the night"):
        suite_path = start.suite_file
        loaded = load_suite(suite_path)
        check_same_suite(night_dir, start, loaded)
        plan: ShardPlan | None = None
        if start.shard:
            plan = read_plan(night_dir)
        if opts.on_start:
            opts.on_start()
        head: dict[str, object] = {
            "suite": loaded.suite.name,
            "about": loaded.suite.about,
            "suite_file": suite_path,
            "suite_digest": suite_digest(entry_digests(loaded)),
            "started": start.started,
        }
        if plan is not None:
            head["shard"] = str(plan.shard)
        return _run_entries(night_dir, loaded, plan, head, opts, resuming=True)


def _stored_run(night_dir: Path, scenario: str) -> Path | None:
    """The newest run folder of ``scenario`` in the night (None: it never started one)."""
    d = night_dir / scenario
    if not d.is_dir() or d.is_symlink():
        return None
    found = sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink() and (p / META).is_file())
    return found[-1] if found else None


def _kept(e: RunEntry, run_dir: Path) -> bool:
    """Fill ``e`` from a run folder that finished (its verdicts, re-scored from its journal); False
    if it did not finish (interrupted, failed, killed), so it must be resumed."""
    meta, scenario, cells, records, _ = load_run(run_dir)
    if not meta.finished or meta.interrupted or meta.failed:
        return False
    e.run_dir, e.results, e.kept = run_dir, analyse_loaded(meta, scenario, cells, records), True
    return True


def _run_entries(
    night_dir: Path,
    loaded: LoadedSuite,
    plan: ShardPlan | None,
    head: dict[str, object],
    opts: NightlyOptions,
    *,
    resuming: bool,
    queue: CellQueue | None = None,
) -> NightlyOutcome:
    entries: list[RunEntry] = []
    interrupted = False
    ahead: Ahead | None = None  # the later entries' preflights, checked during this entry's cells
    try:
        with stop_on_signals():  # between runs; each run handles the signals that land inside it
            if queue is not None and plan is not None:
                interrupted = _run_queue(night_dir, loaded, plan, queue, opts, entries)
            todo = _planned(loaded, plan) if queue is None else []  # (a queue shard's night ran above)
            ahead = Ahead([_cells_of(item, mine) for _, item, mine in todo]) if len(todo) > 1 and not resuming else None
            for i, (n, item, mine) in enumerate(todo):
                e = RunEntry(scenario=item.scenario.name, file=str(item.file), overrides=item.overrides)
                entries.append(e)
                if opts.on_scenario:
                    opts.on_scenario(n, len(loaded.items), item.scenario.name)
                if ahead is not None:
                    ahead.past(i)  # what it checked has passed; this run's preflight checks the rest
                run_opts = RunOptions(
                    out=night_dir,
                    on_trial=opts.on_trial,
                    on_cell_start=partial(_cell_starts, ahead, opts.on_cell_start),
                    cells=mine,
                    shard=str(plan.shard) if plan else None,
                    jobs=opts.jobs,
                )
                try:
                    stored = _stored_run(night_dir, item.scenario.name) if resuming else None
                    if stored is not None and _kept(e, stored):
                        continue
                    if stored is not None:  # started and cut short: only its unfinished trials run
                        outcome = resume_run(stored, RunOptions(on_trial=opts.on_trial, on_cell_start=opts.on_cell_start, jobs=opts.jobs))
                    else:
                        outcome = run_loaded(item.scenario, item.file, run_opts)
                except ChaosError as exc:
                    e.error = exc.message
                    continue
                e.run_dir, e.results, e.interrupted = outcome.run_dir, outcome.results, outcome.interrupted
                if outcome.interrupted:
                    interrupted = True
                    break
    except (Interrupted, KeyboardInterrupt):
        interrupted = True
        if entries and entries[-1].results is None and entries[-1].error is None:
            entries[-1].error = "interrupted before its run folder was written"
    finally:
        if ahead is not None:
            ahead.stop()
    head["finished"] = now_iso()
    summary = build_summary(night_dir, head, entries, interrupted)
    write_night(night_dir, summary, entries)
    return NightlyOutcome(night_dir=night_dir, night=summary, entries=entries)


def _planned(loaded: LoadedSuite, plan: ShardPlan | None) -> list[tuple[int, SuiteItem, set[int] | None]]:
    """The suite's entries this night runs, in order, each with its index and the cells of it this
    shard runs (None: all of them); an entry whose every cell runs on another shard is left out."""
    out = []
    for n, item in enumerate(loaded.items):
        mine = plan.cells_of(plan.shard.index, item.scenario.name) if plan else None
        if mine is None or mine:
            out.append((n, item, mine))
    return out


def _cells_of(item: SuiteItem, mine: set[int] | None) -> tuple[list[Cell], str]:
    """The cells of a suite entry this shard runs (all, or ``mine``) and its scenario file: what its
    preflight checks (``chaos.running.preflight.Ahead``); no cell if it does not expand (its own run
    says why)."""
    try:
        cells = [c for c in expand(item.scenario, path=str(item.file)) if mine is None or c.index in mine]
    except ChaosError:
        cells = []
    return cells, str(item.file)


def _cell_starts(ahead: Ahead | None, then: Callable[[Any, int], None] | None, cell: Cell, total: int) -> None:
    """A cell of a night's run starts: the later entries' preflights (``ahead``) are held while it
    keeps its racers' timing windows (a race), else they go on; then the caller's own callback."""
    if ahead is not None:
        if get_kind(cell.scenario.kind).keeps_windows:
            ahead.hold()
        else:
            ahead.go()
    if then is not None:
        then(cell, total)


def _run_queue(
    night_dir: Path, loaded: LoadedSuite, plan: ShardPlan, queue: CellQueue, opts: NightlyOptions, entries: list[RunEntry]
) -> bool:
    """A queue shard's night (``chaos.running.cellqueue``): each entry in suite order, running the
    cells it claims until the queue has none of it left; then, while the queue is not finished,
    the cells dead shards left (in this shard's run folder of that entry) or a wait for the live
    ones. ``entries`` gets one entry per scenario it ran cells of, in suite order. True: interrupted."""
    items = {it.scenario.name: (n, it) for n, it in enumerate(loaded.items)}
    mine: dict[str, RunEntry] = {}
    skip: set[str] = set()  # entries this shard could not run: left to the others

    def run(name: str) -> bool:
        if queue.claim(name) is None:  # claimed before the run folder exists: no folder without a cell
            return False
        n, item = items[name]
        e = mine.setdefault(name, RunEntry(scenario=name, file=str(item.file), overrides=item.overrides))
        if opts.on_scenario:
            opts.on_scenario(n, len(loaded.items), name)
        run_opts = RunOptions(
            out=night_dir, on_trial=opts.on_trial, on_cell_start=opts.on_cell_start, shard=str(plan.shard), queue=queue, jobs=opts.jobs
        )
        try:
            if e.run_dir is None:
                outcome = run_loaded(item.scenario, item.file, run_opts)
            else:  # cells a dead shard left: run in this shard's run folder of the entry
                folder = RunFolder(path=e.run_dir, meta=read_meta(e.run_dir))
                outcome = execute(folder, item.scenario, expand(item.scenario, path=str(item.file)), run_opts)
        except ChaosError as exc:
            e.error = "; ".join(filter(None, [e.error, exc.message]))
            queue.release(name)
            skip.add(name)
            return False
        e.run_dir, e.results, e.interrupted = outcome.run_dir, outcome.results, outcome.interrupted
        return outcome.interrupted

    try:
        for item in loaded.items:
            if run(item.scenario.name):
                return True
        while (step := queue.next_step(skip)) is not None:
            if step[0] == "wait":
                queue.wait_for(step[1])  # a live shard's claim: it finishes it, or dies and it comes back
            elif run(step[1]):
                return True
        return False
    finally:
        entries.extend(sorted(mine.values(), key=lambda e: items[e.scenario][0]))


def partial_night(night_dir: str | Path, *, rescore: bool = False) -> NightlyOutcome:
    """A night with no summary.json (its nightly was killed), rendered from the run folders it has:
    each run's reports (``rescore``: results.json too), the night's junit.xml and index.html, as
    an interrupted night (exit 3). No summary.json is written: only a finished night has one, so a
    merge or the next night never takes this one for complete."""
    from chaos.reports.html import write_nightly_html
    from chaos.reports.junit import write_junit

    night_dir = Path(night_dir)
    start = night_start(night_dir)
    entries = []
    for d in sorted(p for p in night_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
        run_dir = _stored_run(night_dir, d.name)
        if run_dir is None:
            continue
        meta, scenario, cells, records, _ = load_run(run_dir)
        e = RunEntry(scenario=scenario.name, file=meta.scenario_file or "", overrides={}, run_dir=run_dir)
        e.results = analyse_loaded(meta, scenario, cells, records)
        e.interrupted = not meta.finished or bool(meta.interrupted)
        if e.interrupted:  # killed with its night: it did not finish either
            e.results.exit_code = 3
        (write_results if rescore else write_reports)(run_dir, e.results, meta, records)
        entries.append((meta.started or "", e))
    runs = [e for _, e in sorted(entries, key=lambda x: x[0])]
    head = {"suite_file": start.suite_file, "suite_digest": start.suite_digest, "started": start.started, "shard": start.shard}
    summary = build_summary(night_dir, head, runs, True)
    write_junit(night_dir / "junit.xml", [e.results for e in runs if e.results], name=f"chaos nightly {summary.date} (unfinished)")
    write_nightly_html(night_dir, summary.to_json(), runs, history(night_dir, summary))
    return NightlyOutcome(night_dir=night_dir, night=summary, entries=runs)


def _run_dir_of(night_dir: Path, scenario: str, run_dir: str) -> Path:
    """summary.json's ``run_dir`` of ``scenario`` as a run folder of this night (``<scenario>/<stamp>``):
    one that leaves the night (``..``, an absolute path, a symlink) is refused, never read or rewritten."""
    path = night_dir / run_dir
    if path.resolve().parent != (night_dir / scenario).resolve() or not path.is_dir():
        raise ChaosError(
            f"{night_dir / 'summary.json'}: run_dir {run_dir!r} of {scenario!r} is not a run folder under {night_dir / scenario}",
            hint="summary.json was edited; a night's runs live in its own folder",
        )
    return path


def rerender_night(night_dir: Path, *, rescore: bool = False) -> NightlyOutcome:
    """A stored night rendered again from its runs' journals (``rescore`` also rewrites results.json)."""

    night_dir = Path(night_dir)
    old = read_summary(night_dir)
    entries = []
    for r in old.runs:
        e = RunEntry(scenario=r.scenario, file=r.file, overrides=r.overrides or {}, error=r.error, interrupted=bool(r.interrupted))
        if r.run_dir:
            e.run_dir = _run_dir_of(night_dir, r.scenario, r.run_dir)
            meta, scenario, cells, records, _ = load_run(e.run_dir)
            e.results = analyse_loaded(meta, scenario, cells, records)
            (write_results if rescore else write_reports)(e.run_dir, e.results, meta, records)
        entries.append(e)
    head = {k: getattr(old, k) for k in ("suite", "about", "suite_file", "suite_digest", "started", "finished", "shard", "shards")}
    summary = build_summary(night_dir, head, entries, bool(old.interrupted))
    write_night(night_dir, summary, entries)
    return NightlyOutcome(night_dir=night_dir, night=summary, entries=entries)
