"""The one owner of a run folder: create it, write its run.json, point ``latest``, load it, mark it.

Why: run, rerun, resume, nightly and the registry's reaper all touch a run folder's metadata.
When each wrote run.json its own way, some skipped the redaction and the atomic replace. Here is
the only code that writes run.json, so every write is both:

* redacted first (``chaos.racer.redact``): no password or DSN secret reaches the file;
* atomic (temporary file in the same folder, then ``os.replace``): a crash leaves the old
  run.json or the new one, never half of one.

What it promises: ``RunFolder.create`` makes ``<out>/<scenario>/<stamp>[-n]/`` (refusing an ``out``
whose parent is missing); ``save`` writes ``RunMeta`` (``chaos.records``) as it always was
(same keys, same values); ``mark_ended`` records how the run ended; ``link_latest`` points
``<out>/<scenario>/latest`` at it (atomically too); ``load_run`` reads a stored run back, and every
way a stored run can be damaged is a ``ChaosError`` naming the file (and field);
``mark_reaped`` is what the reaper records for a run whose orchestrator died. A folder made by
``create`` is locked (``chaos.running.folderlock``) before its run.json exists, until ``execute``
takes the lock over: no other process ever finds it unlocked while it is being executed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from chaos.racer.errors import ChaosError, EnvironmentProblem
from chaos.racer.redact import redact_file_text, redact_obj
from chaos.records import CellVersions, RunLoad, RunMeta
from chaos.running.folderlock import FolderLock
from chaos.running.stored import StoredTrials
from chaos.scenario.model import Cell, Scenario, expand

META = "run.json"


def now_iso() -> str:
    """The current UTC time as run.json writes it."""
    return _dt.datetime.now(_dt.UTC).isoformat()


def stamp() -> str:
    """A run folder's name: the UTC time to the second."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S")


def load_average() -> float | None:
    """The 1-minute load average: saturation at jitter > 0 moves with it, so every run records it
    at its start and end (run.json ``load``) and the reports show it beside the numbers."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically (a temporary file beside it, then ``os.replace``),
    secrets masked first (``redact_file_text``): every file of a run folder is written here, so a
    new field or a new report is masked without asking for it. The JSON files written here are
    chaos's typed records: their numbers are counts and stay numbers (run.json's user settings
    are masked whole before, numbers too: ``write_meta``)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(redact_file_text(path.name, text, keep_numbers=True))
    os.replace(tmp, path)


def new_folder(out: Path, name: str) -> Path:
    """A new, empty ``<out>/<name>`` (``<name>-2``, ``-3``, ... if taken; parents made as needed).

    ``out`` itself is made only if its parent exists: a mistyped ``--out`` is refused, not created."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise EnvironmentProblem(f"output folder {out}: it is a file, not a folder", hint="pass --out a folder")
    try:
        if not out.exists():
            if not out.parent.exists():
                raise EnvironmentProblem(
                    f"output folder {out}: its parent {out.parent} does not exist", hint="create it or pass --out to an existing folder"
                )
            out.mkdir()
        folder = out / name
        n = 1
        while folder.exists():
            n += 1
            folder = out / f"{name}-{n}"
        folder.mkdir(parents=True)
    except OSError as exc:
        raise EnvironmentProblem(
            f"output folder {out}: cannot make the run folder: {exc.strerror or exc}", hint="pass --out a writable folder"
        ) from None
    return folder


def create_run_dir(out: Path, name: str, at: str) -> Path:
    """A new, empty run folder ``<out>/<scenario name>/<at>`` (``-2``, ``-3``, ... if taken)."""
    return new_folder(Path(out), f"{name}/{at}")


def discard(run_dir: Path) -> None:
    """Remove a run folder that holds nothing measured, and its scenario folder if now empty."""
    run_dir = Path(run_dir)
    shutil.rmtree(run_dir, ignore_errors=True)
    with contextlib.suppress(OSError):
        run_dir.parent.rmdir()  # only if empty: other runs of the scenario stay


def write_meta(run_dir: Path, meta: RunMeta | dict[str, Any]) -> None:
    """run.json, secrets redacted, replaced atomically (a crash leaves the old or the new one)."""
    data = meta.to_json() if isinstance(meta, RunMeta) else meta
    write_atomic(Path(run_dir) / META, json.dumps(redact_obj(data), indent=2, default=str))


def link_latest(run_dir: Path) -> None:
    """Point ``latest`` beside the run folder at it (a relative symlink, replaced atomically),
    unless it points at a newer run (a later start: folder names are start times), so ``latest`` is
    the newest run, not the last one to finish (an old run resumed, a long run ending after a short one)."""
    link = run_dir.parent / "latest"
    with contextlib.suppress(OSError):
        current = os.readlink(link)
        if "/" not in current and (run_dir.parent / current).is_dir() and _started(current) > _started(run_dir.name):
            return
    tmp = run_dir.parent / f".latest.{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, link)


def _started(name: str) -> tuple[str, int]:
    """Where a run folder's name sorts by start: its stamp, then its ``-N`` (a second run that second)."""
    stamp_part, _, rest = name.partition("-")
    n = rest.split("-", 1)[0]
    return stamp_part, int(n) if n.isdigit() else 0


@dataclass
class RunFolder:
    """A run folder and its metadata: every change to run.json goes through ``save``."""

    path: Path
    meta: RunMeta
    lock: FolderLock | None = field(default=None, repr=False, compare=False)  # held from creation until ``execute`` takes over

    @classmethod
    def create(cls, out: Path, name: str, meta_for: Any, *, suffix: str = "", hold: bool = False) -> RunFolder:
        """Make the folder, build its metadata (``meta_for(run_dir) -> RunMeta``: the run id names
        the folder) and write run.json at once, so a folder never stands without one for long.
        ``hold``: lock the folder first, for ``execute`` to take over (``release`` drops it)."""
        path = create_run_dir(Path(out), name, stamp() + suffix)
        lock = None
        try:
            if hold:  # before run.json: no one finds it unlocked and resumes it
                lock = FolderLock(path).acquire()
            folder = cls(path=path, meta=meta_for(path), lock=lock)
            folder.save()
        except BaseException:  # no run.json, no folder: nothing half-written stays behind
            if lock is not None:
                lock.release()
            discard(path)
            raise
        return folder

    def release(self) -> None:
        """Drop the lock taken at creation (``execute`` holds its own while it runs)."""
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def discard(self) -> None:
        """Remove the folder of a run that failed before its first trial (nothing was measured)."""
        discard(self.path)

    def mark_failed(self, reason: str) -> None:
        """Record that the run failed (one line, secrets masked on save) and when; then save."""
        self.meta.failed = reason
        self.meta.stopped = now_iso()
        self.save()

    def save(self) -> None:
        write_meta(self.path, self.meta)

    def link_latest(self) -> None:
        link_latest(self.path)

    def mark_ended(
        self, *, interrupted: bool, signals: list[str], failures: dict[int, str], cell_versions: dict[str, CellVersions]
    ) -> None:
        """Record how the run ended (finished, or interrupted and by which signals), which cells
        failed and why, and what each cell's racers ran; then save."""
        m = self.meta
        t = now_iso()
        m.finished = None if interrupted else t
        m.stopped = t
        load = m.load if m.load is not None else RunLoad(cpus=os.cpu_count())
        load.end = load_average()
        m.load = load
        m.interrupted = interrupted
        if signals:
            m.signals = list(signals)
        m.failures = {str(k): v for k, v in failures.items()}
        m.cell_versions = cell_versions
        self.save()


class StoredRun(NamedTuple):
    """A stored run as ``load_run`` reads it (unpacks as ``meta, scenario, cells, records, torn``)."""

    meta: RunMeta
    scenario: Scenario
    cells: list[Cell]
    records: StoredTrials
    torn: bool


def _field_error(meta_path: Path, prefix: str, exc: Any) -> ChaosError:
    e = exc.errors()[0]
    where = ".".join(map(str, e["loc"]))
    return ChaosError(f"{meta_path}: {prefix}{where}: {e['msg']}")


def read_meta(run_dir: Path) -> RunMeta:
    """run.json of ``run_dir``; a damaged one is a ChaosError naming the file (and field)."""
    from pydantic import ValidationError

    meta_path = Path(run_dir) / META
    try:
        raw = json.loads(meta_path.read_text())
    except FileNotFoundError:
        raise ChaosError(f"{run_dir}: not a run folder (no run.json)") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise ChaosError(f"{meta_path}: not readable JSON ({str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__})") from None
    if not isinstance(raw, dict):
        raise ChaosError(f"{meta_path}: expected a JSON object, got {type(raw).__name__}")
    for key, typ in (("run_id", str), ("scenario", dict)):
        if not isinstance(raw.get(key), typ):
            raise ChaosError(f"{meta_path}: field {key!r} is missing or not a {typ.__name__}")
    try:
        return RunMeta.model_validate(raw)
    except ValidationError as exc:
        raise _field_error(meta_path, "", exc) from None


def load_run(run_dir: Path) -> StoredRun:
    """A stored run: its metadata, scenario, cells and journaled records (torn line dropped), the
    records as ``StoredTrials`` (validated now, read back from the journal when iterated).

    Every way a stored run can be damaged is a ChaosError naming the file (and line, and field)."""
    from pydantic import ValidationError

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ChaosError(f"{run_dir}: no such run folder")
    meta = read_meta(run_dir)
    try:
        scenario = Scenario.model_validate(meta.scenario)
        cells = expand(scenario, path=str(run_dir / META), check=False)
    except ValidationError as exc:
        raise _field_error(run_dir / META, "scenario.", exc) from None
    if meta.shard:  # a shard's run analyses as it ran: just its cells
        ran = {c.index for c in meta.cells}
        cells = [c for c in cells if c.index in ran]
    records = StoredTrials(run_dir / "journal.jsonl")  # every line validated; read back on demand
    check_trial_ids(cells, records)
    return StoredRun(meta, scenario, cells, records, records.torn)


# the trial ids the kinds make: c<cell>-dry, c<cell>-t<trial>, c<cell>-p<point>-r<repeat>; a crash
# during recovery: c<cell>-p<point>-q<recovery point>...-r<repeat>, its discovery c<cell>-p<point>...-dry
_SAFE_ID = re.compile(r"^c\d{3,}-[a-z0-9-]{1,200}$")
TRIAL_ID = re.compile(r"^c(\d{3,})-(?:(?:p\d{3,}(?:-q\d{3,})*-)?dry|t(\d{4,})|p\d{3,}(?:-q\d{3,})*-r(\d{3,}))$")


def check_trial_ids(cells: list[Cell], records: StoredTrials) -> None:
    """Refuse a journaled record that is not one of the run's trials: a cell the scenario does not
    expand to, a record whose id names another cell, or a trial / repeat number past the cell's
    ``trials`` (a forged 64th record of a 63-trial cell was counted), or an id that is not a plain
    ``c<cell>-...`` name of lowercase letters, digits and dashes. Other ids of that alphabet pass."""
    by_index = {c.index: c for c in cells}
    for trial_id in sorted(records.ids()):
        index = records.cell_of(trial_id)
        where = f"{records.path}:{records.line_of(trial_id)}"
        hint = "the journal does not match its run.json; move the line away"
        if not _SAFE_ID.match(trial_id):  # never a path, markup or code: ids name files and land in reports
            raise ChaosError(f"{where}: {trial_id[:80]!r} is not a trial id chaos makes (c000-t0000, c000-p000-r000)", hint=hint)
        cell = by_index.get(index)
        if cell is None:
            raise ChaosError(f"{where}: trial {trial_id!r} names cell {index}; the scenario has cells 0-{len(cells) - 1}", hint=hint)
        m = TRIAL_ID.match(trial_id)
        if m is None:
            continue
        if int(m.group(1)) != index:
            raise ChaosError(f"{where}: trial {trial_id!r} is recorded for cell {index}", hint=hint)
        n = m.group(2) or m.group(3)
        if n is not None and int(n) >= cell.scenario.trials:
            raise ChaosError(
                f"{where}: trial {trial_id!r} is not one the scenario expands to (cell {index} has {cell.scenario.trials} trial(s))",
                hint=hint,
            )


def mark_reaped(run_dir: Path | str) -> None:
    """The reaper's note on a run whose orchestrator died: interrupted, and when it was reaped.

    Read as a plain JSON object, not a ``RunMeta``: the reaper marks whatever run.json the dead run
    left (even one too young to have its scenario). A finished run, or a run.json that cannot be
    read, is left as it is."""
    meta_path = Path(run_dir) / META
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError):
        return
    if not isinstance(meta, dict) or meta.get("finished"):
        return
    meta["interrupted"] = True
    meta["reaped"] = now_iso()
    write_meta(Path(run_dir), meta)
