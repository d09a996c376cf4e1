"""``chaos merge``: join the night folders of a sharded nightly into one night.

Why: each shard (``chaos nightly --shard I/N``) ran part of the cells on its own machine; the team
wants one night: one summary.json, index.html, junit.xml and trend, as if one machine had run it.

What it promises:

* Every shard folder holds shard.json (``chaos.running.shard.ShardPlan``), written before its first
  trial: which shard it is and the whole plan. Folders whose plans differ (another suite, other
  timings) are refused with a one-line error naming the folder; so are two folders of one shard.
* For each suite entry the merge writes one whole run folder in the merged night: run.json for
  every planned cell, the shard journals joined, results and reports analysed from them by the
  same rules as ``chaos analyze``. Cells keep their index and trial ids, so the verdicts are the
  ones an unsharded night would compute from the same trials.
* A shard that is *missing* (no folder given) or *failed* (no summary.json: it died; or its run of
  the entry was interrupted or refused) is named: each of its cells is a failed cell whose verdicts
  are unknown (a violation its trials did find stays violated), never absent; the entry carries
  the reason as its error, so the night exits 3. Nothing a shard recorded is dropped.
* The merged night is compared with the previous night in ``--out`` exactly as an unsharded one
  (``chaos.running.nightly.build_summary``); summary.json lists the shards (``ShardNote``).
* Queue-mode shards (``chaos.running.cellqueue``) have no assignment up front: each cell is
  credited to the shard whose queued.jsonl says it finished it (the lowest, if two did), and only
  that shard's trials of it are merged; a dead shard's other trials (the cell it was killed in,
  which another shard ran again) are left out. A shard that died is named, but its finished cells
  count; only a cell no shard finished is failed (unknown, exit 3).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from chaos.racer.errors import ChaosError
from chaos.records import CellVersions, NightSummary, RunCell, RunMeta, ShardNote
from chaos.running.cellqueue import CREDITS, credits
from chaos.running.folderlock import refuse_if_live
from chaos.running.nightly import NightlyOutcome, RunEntry, build_summary, prepare_night_dir, read_plan, read_summary, write_night
from chaos.running.nights import PLAN
from chaos.running.runfolder import RunFolder, check_trial_ids, now_iso, read_meta
from chaos.running.shard import PlannedRun, ShardPlan, digest
from chaos.running.stored import StoredTrials
from chaos.scenario.model import Scenario, expand


class _Shard:
    """One shard as found: its plan, its summary (None: it did not finish), its run folders."""

    def __init__(self, folder: Path, plan: ShardPlan):
        self.folder, self.plan = folder, plan
        self.summary: NightSummary | None = None
        self.failed: str | None = None
        if not (folder / "summary.json").exists():
            self.failed = f"it did not finish (no summary.json in {folder})"
        else:
            self.summary = read_summary(folder)
            if self.summary.shard is not None and self.summary.shard != str(plan.shard):
                raise ChaosError(f"{folder / 'summary.json'}: shard: {self.summary.shard!r}, but its {PLAN} says {plan.shard}")
            if self.summary.interrupted:
                self.failed = f"it was interrupted ({folder})"

    def run_dir(self, scenario: str) -> Path | None:
        """The shard's run folder of ``scenario`` (for a shard that died: the newest one it began)."""
        if self.summary is not None:
            run = next((r for r in self.summary.runs if r.scenario == scenario), None)
            return self._inside(scenario, run.run_dir) if run and run.run_dir else None
        begun = sorted(p.parent for p in (self.folder / scenario).glob("*/run.json")) if (self.folder / scenario).is_dir() else []
        return self._inside(scenario, str(begun[-1].relative_to(self.folder))) if begun else None

    def _inside(self, scenario: str, run_dir: str) -> Path:
        """``run_dir`` (from summary.json) as a folder of this shard's ``<scenario>/``: a path that
        leaves it (``..``, an absolute path, a symlink to another shard) is refused."""
        path = self.folder / run_dir
        home = (self.folder / scenario).resolve()
        if path.resolve().parent != home or not path.is_dir():
            raise ChaosError(
                f"{self.folder / 'summary.json'}: run_dir {run_dir!r} of {scenario!r} is not a run folder under {self.folder / scenario}",
                hint="a shard's runs live in its own folder; the summary was edited",
            )
        return path

    def run_error(self, scenario: str) -> str | None:
        if self.summary is None:
            return None
        run = next((r for r in self.summary.runs if r.scenario == scenario), None)
        if run is None:
            return None
        if run.error:
            return run.error
        return "its run was interrupted" if run.interrupted else None


def merge_nights(folders: list[Path], out: Path) -> NightlyOutcome:
    if not folders:
        raise ChaosError("chaos merge: give the shard night folders to merge")
    shards: dict[int, _Shard] = {}
    first: ShardPlan | None = None
    for folder in map(Path, folders):
        if not folder.is_dir():
            raise ChaosError(
                f"{folder}: no such shard folder", hint="a shard that never ran is simply left out: its cells come out unknown"
            )
        refuse_if_live(folder, "merge it")  # a shard still running: its night is not over
        plan = read_plan(folder)
        if first is None:
            first = plan
        elif plan.date != first.date:
            raise ChaosError(
                f"{folder}: shard {plan.shard} is of the night of {plan.date}, {folders[0]} of {first.date}",
                hint="merge the shards of one night",
            )
        elif plan.digest != first.digest or plan.shard.of != first.shard.of:
            raise ChaosError(
                f"{folder}: shard {plan.shard} was planned differently from {folders[0]} (plan {plan.digest} vs {first.digest})",
                hint="run every shard of a night from the same suite with the same --timings",
            )
        if plan.digest != digest(plan.runs, plan.shard.of, plan.mode):
            raise ChaosError(f"{folder / PLAN}: digest: {plan.digest} is not the digest of its plan", hint="the shard.json was edited")
        if plan.shard.index in shards:
            raise ChaosError(f"{folder}: shard {plan.shard} is given twice (also {shards[plan.shard.index].folder})")
        shards[plan.shard.index] = _Shard(folder, plan)
    assert first is not None
    n = first.shard.of
    credited: dict[tuple[str, int], str] = {}
    if first.mode == "queue":  # the actual assignment: who finished each cell
        first, credited = _credited(first, shards)
    sources = _check_shards(first, shards, credited)  # every input judged before anything is written

    notes: list[ShardNote] = []
    for i in range(1, n + 1):
        planned = sum(1 for r in first.runs for c in r.cells if c.shard == i)
        s = shards.get(i)
        if s is None:
            notes.append(ShardNote(shard=f"{i}/{n}", status="missing", reason="no folder was given for it", cells=planned))
        else:
            reason = s.failed or ""
            if s.failed and first.mode == "queue":
                reason += "; its unfinished cells went back to the queue, its finished ones count"
            notes.append(
                ShardNote(shard=f"{i}/{n}", status="failed" if s.failed else "ok", folder=str(s.folder), reason=reason, cells=planned)
            )

    night_dir = prepare_night_dir(Path(out), first.date)
    try:  # a night is complete or absent: whatever stops the merge takes the half-made folder away
        return _write_merged(first, shards, sources, notes, night_dir, credited)
    except BaseException:
        shutil.rmtree(night_dir, ignore_errors=True)
        raise


def _write_merged(
    first: ShardPlan,
    shards: dict[int, _Shard],
    sources: dict[str, list[_Source]],
    notes: list[ShardNote],
    night_dir: Path,
    credited: dict[tuple[str, int], str],
) -> NightlyOutcome:
    n = first.shard.of
    entries = [_merge_run(run, shards, n, night_dir, sources[run.scenario], first.mode, credited) for run in first.runs]
    started = [s.summary.started for s in shards.values() if s.summary and s.summary.started]
    head = {
        "suite": first.suite,
        "about": first.about,
        "suite_file": first.suite_file,
        "started": min(started) if started else None,
        "finished": now_iso(),
        "shards": notes,
    }
    interrupted = any(s.summary is not None and s.summary.interrupted for s in shards.values())
    if first.mode == "queue":  # an interrupted queue shard's cells went back to the queue: only a cell left over counts
        interrupted = interrupted and any(c.shard == 0 for r in first.runs for c in r.cells)
    summary = build_summary(night_dir, head, entries, interrupted)
    write_night(night_dir, summary, entries)
    return NightlyOutcome(night_dir=night_dir, night=summary, entries=entries)


def _merge_run(
    run: PlannedRun,
    shards: dict[int, _Shard],
    n: int,
    night_dir: Path,
    checked: list[_Source],
    mode: str = "static",
    credited: dict[tuple[str, int], str] | None = None,
) -> RunEntry:
    """One suite entry: its shards' run folders joined into one run folder of the merged night."""
    from chaos.running.analysis import analyse_loaded, write_results

    entry = RunEntry(scenario=run.scenario, file=run.file, overrides=run.overrides)
    failures: dict[int, str] = {}
    errors: list[str] = []
    sources: list[tuple[int, Path]] = []
    absent = False  # a shard that should have run cells of this entry never reported on them
    for i in sorted({c.shard for c in run.cells}):
        s = shards.get(i)
        why: str | None
        if mode == "queue":  # credited cells are whole whatever became of their shard; uncredited ones are not
            rd = next((src.run_dir for src in checked if src.shard == i), None)
            if i == 0:
                why, absent = "no queue shard finished it (every shard that took it ended or died first)", True
                errors.append(why)
                failures.update({c.index: why for c in run.cells if c.shard == 0})
            elif rd is not None:
                sources.append((i, rd))
            continue
        if s is None:
            why, absent = f"shard {i}/{n} is missing (no folder was given for it)", True
        else:
            why = f"shard {i}/{n}: {s.failed}" if s.failed else None
            absent = absent or bool(s.failed)
            err = s.run_error(run.scenario)
            if err and not why:
                why = f"shard {i}/{n}: {err}"
            rd = next((src.run_dir for src in checked if src.shard == i), None)
            if rd is not None:
                sources.append((i, rd))
        if why:
            errors.append(why)
            for c in run.cells:
                if c.shard == i:
                    failures[c.index] = why
    if errors:
        entry.error = "; ".join(dict.fromkeys(errors))
    if not sources and not absent:
        return entry  # every shard refused this entry before running it: as an unsharded night reports it

    scenario = Scenario.model_validate(run.spec)
    cells = expand(scenario, check=False)
    metas = []
    for _, rd in sources:
        try:
            metas.append(read_meta(rd))
        except ChaosError as exc:
            entry.error = "; ".join(filter(None, [entry.error, exc.message]))
    if mode == "queue":  # each cell's failure as its shard credited it (a dead shard's run.json never said)
        failures.update({c.index: why for c in run.cells if (why := (credited or {}).get((run.scenario, c.index)))})
    for m in metas if mode != "queue" else []:
        failures.update({int(k): v for k, v in m.failures.items() if int(k) not in failures})
    for src in checked:  # trials a shard planned but its journal does not hold: named, never silently fewer
        for index, note in src.lost.items():
            if index not in failures:
                failures[index] = f"shard {src.shard}/{n}: {note}"
                lost = f"shard {src.shard}/{n} lost trials of cell {index}"
                entry.error = "; ".join(filter(None, [entry.error, lost]))  # the night is not whole: exit 3

    def meta_for(run_dir: Path) -> RunMeta:
        return RunMeta(
            run_id=f"{scenario.name}-{run_dir.name}-{secrets.token_hex(3)}",
            scenario_file=run.file,
            scenario=run.spec,
            cells=[RunCell(index=c.index, id=c.id, axes=c.axes) for c in cells],
            seed=scenario.seed,
            versions=metas[0].versions if metas else {},
            host=metas[0].host if metas else None,
            platform=metas[0].platform if metas else None,
            load=metas[0].load if metas else None,
            argv=[],
            started=min((m.started for m in metas if m.started), default=None),
            finished=None,
            interrupted=False,
            merged_from=[str(rd) for _, rd in sources],
        )

    folder = RunFolder.create(night_dir, scenario.name, meta_for)
    with open(folder.path / "journal.jsonl", "wb") as joined:
        for i, rd in sources:
            part = rd / "journal.jsonl"
            if part.exists():
                lines = _complete_lines(part)
                joined.write(lines if mode != "queue" else _lines_of(lines, {c.index for c in run.cells if c.shard == i}))
        joined.flush()
        os.fsync(joined.fileno())
    cell_versions: dict[str, CellVersions] = {}
    for m in metas:
        cell_versions.update(m.cell_versions)
    interrupted = any(m.interrupted for m in metas)
    folder.mark_ended(interrupted=interrupted, signals=[], failures=failures, cell_versions=cell_versions)
    records = StoredTrials(folder.path / "journal.jsonl")
    check_trial_ids(cells, records)
    results = analyse_loaded(folder.meta, scenario, cells, records)
    write_results(folder.path, results, folder.meta, records)
    folder.link_latest()
    entry.run_dir, entry.results, entry.interrupted = folder.path, results, interrupted
    return entry


def _lines_of(data: bytes, cells: set[int]) -> bytes:
    """The journal lines of ``cells`` only (a queue shard's journal also holds the cell it was
    killed in, which another shard ran again and is credited with)."""
    return b"".join(line for line in data.splitlines(keepends=True) if line.strip() and json.loads(line).get("cell_index") in cells)


def _complete_lines(path: Path) -> bytes:
    """A shard's journal without a torn last line (a shard killed mid-write leaves one): every
    complete record is kept; the torn one was never counted by the shard either."""
    data = path.read_bytes()
    return data if not data or data.endswith(b"\n") else data[: data.rfind(b"\n") + 1]


# ---------------------------------------------------------------------------- checking the inputs

# what must agree between shards of one night: a night measured with two chaos or framework releases
# is two measurements, not one (the interpreter's patch release and the host may differ)
_UNCOMPARED = {"python"}
_TRIAL_NO = re.compile(r"-t(\d{4,})$")


@dataclass
class _Source:
    """One shard's run folder of one suite entry, checked."""

    shard: int
    run_dir: Path
    lost: dict[int, str] = field(default_factory=dict)  # cell index -> what its journal lacks


def _check_shards(
    plan: ShardPlan, shards: dict[int, _Shard], credited: dict[tuple[str, int], str] | None = None
) -> dict[str, list[_Source]]:
    """Judge every shard's run folders against the plan before anything is written: each folder is
    the shard's own (``run_dir`` stays in it), no two shards hand in the same run, the chaos and
    framework releases agree, and every journaled trial is one the plan gave that shard, of a shape
    the scenario expands to, and in no other shard's journal. Trials a race cell lacks are noted."""
    out: dict[str, list[_Source]] = {}
    run_ids: dict[str, Path] = {}
    versions: tuple[Path, dict[str, str | None]] | None = None
    for run in plan.runs:
        cells = {c.index: c for c in expand(Scenario.model_validate(run.spec), check=False)}
        seen: dict[str, int] = {}
        out[run.scenario] = []
        for i, s in sorted(shards.items()):
            rd = s.run_dir(run.scenario)
            if rd is None:
                continue
            src = _Source(shard=i, run_dir=rd)
            out[run.scenario].append(src)
            try:
                meta = read_meta(rd)
            except ChaosError:
                continue  # named as the entry's error when merged
            if meta.run_id in run_ids:
                raise ChaosError(
                    f"{rd}: run {meta.run_id} is also in {run_ids[meta.run_id]}: shard {i}/{plan.shard.of} is a copy of another",
                    hint="give each shard's own folder",
                )
            run_ids[meta.run_id] = rd
            mine = {k: v for k, v in (meta.versions or {}).items() if k not in _UNCOMPARED}
            if versions is None:
                versions = (rd, mine)
            else:
                other_dir, other = versions
                differ = sorted(k for k in set(mine) & set(other) if mine[k] != other[k])
                if differ:
                    k = differ[0]
                    raise ChaosError(
                        f"{rd}: ran {k} {mine[k]}, {other_dir} ran {k} {other[k]}: shards of one night run the same releases",
                        hint="run every shard from the same chaos and framework environments",
                    )
            planned = plan.cells_of(i, run.scenario)
            records = StoredTrials(rd / "journal.jsonl")  # every line validated: a damaged one is refused here
            for trial_id in sorted(records.ids()):
                index = records.cell_of(trial_id)
                where = f"{records.path}:{records.line_of(trial_id)}"
                if index not in planned and plan.mode == "queue":
                    continue  # a cell it did not finish (killed in it, or another shard is credited): left out
                if index not in planned:
                    raise ChaosError(
                        f"{where}: trial {trial_id!r} is of cell {index}, which the plan gives to no cell of shard {i}/{plan.shard.of}",
                        hint="a shard's journal holds only its own cells; the folder was copied or edited",
                    )
                if trial_id in seen:
                    raise ChaosError(f"{where}: trial {trial_id!r} is also in shard {seen[trial_id]}'s journal")
                seen[trial_id] = i
            check_trial_ids(list(cells.values()), records)
            judged = _judged(rd)  # what the shard's own results.json counted per cell (None: it wrote none)
            if plan.mode == "queue":  # credited cells were journaled and synced before the credit
                failed = {str(k): why for (sc, k), why in (credited or {}).items() if sc == run.scenario}
                src.lost = _lost(planned, cells, records, failed, judged)
            elif s.failed is None and not s.run_error(run.scenario):
                src.lost = _lost(planned, cells, records, meta.failures, judged)
                if records.torn:
                    for index in planned:
                        src.lost.setdefault(index, "its journal ends in a torn line (a trial cut off as it was written)")
    return out


def _judged(run_dir: Path) -> dict[int, int] | None:
    """Trials per cell as the shard's own results.json counted them (None: no readable results.json)."""
    try:
        data = json.loads((run_dir / "results.json").read_text())
        return {int(c["cell_index"]): int(c["trials"]) for c in data.get("cells", [])}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _lost(planned: set[int], cells: dict, records: StoredTrials, failed: dict[str, str], judged: dict[int, int] | None) -> dict[int, str]:
    """Cells of a finished shard whose journal holds fewer trials than the shard judged.

    The count a cell must have is the shard's own: its results.json's ``trials`` per cell (a kind
    decides how many trials a cell runs: a sweep's dry run, shared_state's schedules, an upgrade's
    points, none for a case the framework does not support). Without a results.json (a queue shard
    that died after its credits) only a race cell's count is known beforehand: the scenario's
    ``trials``, numbered ``-tNNNN``."""
    from chaos.kinds import get_kind

    have: dict[int, int] = {}
    numbered: dict[int, set[int]] = {}
    for trial_id in records.ids():
        index = records.cell_of(trial_id)
        have[index] = have.get(index, 0) + 1
        m = _TRIAL_NO.search(trial_id)
        if m:
            numbered.setdefault(index, set()).add(int(m.group(1)))
    lost = {}
    for index in sorted(planned):
        cell = cells.get(index)
        if cell is None or str(index) in failed:
            continue  # a failed cell says why itself
        if judged is not None:
            if index in judged and have.get(index, 0) < judged[index]:
                lost[index] = (
                    f"its journal holds {have.get(index, 0)} of the {judged[index]} trials its results.json counted; the others were lost"
                )
        elif get_kind(cell.scenario.kind).section == "saturation" and len(numbered.get(index, ())) < cell.scenario.trials:
            n = len(numbered.get(index, ()))
            lost[index] = f"its journal holds {n} of the cell's {cell.scenario.trials} trials; the others were lost"
    return lost


def _credited(plan: ShardPlan, shards: dict[int, _Shard]) -> tuple[ShardPlan, dict[tuple[str, int], str]]:
    """A queue-mode plan with each cell given to the shard credited with it (0: none), and the
    credited cells' own failures. A credit for a cell the plan does not have is refused."""
    cells = {(r.scenario, c.index): c.cell_id for r in plan.runs for c in r.cells}
    owner: dict[tuple[str, int], int] = {}
    failures: dict[tuple[str, int], str] = {}
    for i, s in sorted(shards.items()):
        for cr in credits(s.folder):
            key = (cr.scenario, cr.index)
            if cells.get(key) != cr.cell_id:
                raise ChaosError(
                    f"{s.folder / CREDITS}: cell {cr.index} {cr.cell_id!r} of {cr.scenario!r} is not a cell of the plan",
                    hint="a shard's queued.jsonl lists the cells it finished; the file was edited or copied",
                )
            if key not in owner:
                owner[key] = i
                if cr.failure:
                    failures[key] = cr.failure
    out = plan.model_copy(deep=True)
    for r in out.runs:
        for c in r.cells:
            c.shard = owner.get((r.scenario, c.index), 0)
    return out, failures
