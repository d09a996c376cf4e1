"""A run's trial records, read from its journal on demand instead of held in memory.

Why it exists: a 64-racer trial record is about 200 kB of JSON and close to a megabyte as Python
objects, so an orchestrator that kept every record for the final analysis grew by that much per
trial (a 1,000-trial soak: most of a gigabyte). The journal already holds every record, fsynced, so
the run keeps only where each one is and reads a cell's records back when it analyses that cell.

What it promises:

* ``StoredTrials(path)`` scans the journal once: every complete line is validated as a
  ``TrialRecord`` (a damaged line anywhere but last is a ``ChaosError`` naming file, line and
  field; a torn last line is dropped and reported by ``torn``) and only its place is kept: trial
  id, cell index, byte offset and length. Memory is a few dozen bytes per trial.
* Iterating gives the records in journal order, one at a time, each read and parsed again from
  disk; ``of_cell(i)`` gives one cell's records sorted by trial id (so a resumed run analyses as an
  uninterrupted one); ``get(trial_id)`` one record; ``ids()`` the trial ids.
* Records are slimmed as they are read (``slim``): each racer's raw result keeps its scalar fields
  and ``versions``; boundary traces, outcomes and inspections stay in the journal. Analysis and the
  reports read nothing else.
* ``later duplicates win``: if a trial id appears twice (a rerun that journaled a dry run it reused),
  the last complete line is the record.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from chaos.racer.errors import ChaosError
from chaos.records import TrialRecord

KEPT_RESULT_FIELDS = {"versions"}  # structured result fields that analysis reads (the releases a racer ran)


def slim(rec: TrialRecord) -> TrialRecord:
    """``rec`` without what only the journal needs: each racer's raw result keeps its scalar fields
    (timings, status, ids) and ``KEPT_RESULT_FIELDS``; its boundary trace, outcomes and inspections
    are dropped. A 64-racer trial shrinks several times over."""
    racers = []
    for o in rec.racers:
        if o.result:
            o = o.model_copy(
                update={
                    "result": {
                        k: v for k, v in o.result.items() if k in KEPT_RESULT_FIELDS or v is None or isinstance(v, (bool, int, float, str))
                    }
                }
            )
        racers.append(o)
    return rec.model_copy(update={"racers": racers})


@dataclass(frozen=True)
class Place:
    """Where one record is in the journal."""

    trial_id: str
    cell_index: int
    lineno: int
    offset: int
    length: int


class StoredTrials:
    """The validated records of one journal, read back one at a time (see the module docstring)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.torn = False
        self._places: dict[str, Place] = {}
        self._scan()

    # ------------------------------------------------------------------ scanning

    def _scan(self) -> None:
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ChaosError(f"{self.path}: cannot read the journal: {exc.strerror or exc}") from None
        with f:
            offset, lineno = 0, 0
            for raw in f:
                lineno += 1
                here, offset = offset, offset + len(raw)
                if not raw.strip():
                    continue
                if not raw.endswith(b"\n"):
                    self.torn = True  # the write did not finish: never trust it, even if it parses
                    continue
                rec = self._parse(raw, lineno)
                self._places.pop(rec.trial_id, None)  # a later line for the same trial wins, in its place
                self._places[rec.trial_id] = Place(rec.trial_id, rec.cell_index, lineno, here, len(raw))

    def _parse(self, raw: bytes, lineno: int) -> TrialRecord:
        try:
            return TrialRecord.model_validate_json(raw)
        except ValidationError as exc:
            e = exc.errors()[0]
            if e["type"].startswith("json") or not e["loc"]:
                kind = {list: "list", str: "string", int: "number", float: "number", bool: "boolean", type(None): "null"}
                why = e["msg"] if e["type"].startswith("json") else f"a JSON {kind.get(type(e['input']), 'value')}, not an object"
                raise ChaosError(
                    f"{self.path}:{lineno}: journal line is not a JSON record ({why[:120]})",
                    hint="the journal is damaged; move the line away or start a new run",
                ) from None
            field = ".".join(map(str, e["loc"]))
            raise ChaosError(
                f"{self.path}:{lineno}: not a trial record: {field}: {e['msg']}",
                hint="the journal is damaged; move the line away or start a new run",
            ) from None

    # ------------------------------------------------------------------ reading

    def _read(self, places: list[Place]) -> Iterator[TrialRecord]:
        if not places:
            return
        with open(self.path, "rb") as f:
            for p in places:
                f.seek(p.offset)
                yield slim(self._parse(f.read(p.length), p.lineno))

    def __iter__(self) -> Iterator[TrialRecord]:
        return self._read(sorted(self._places.values(), key=lambda p: p.offset))

    def __len__(self) -> int:
        return len(self._places)

    def __contains__(self, trial_id: object) -> bool:
        return trial_id in self._places

    def ids(self) -> set[str]:
        return set(self._places)

    def cells(self) -> set[int]:
        return {p.cell_index for p in self._places.values()}

    def of_cell(self, index: int) -> Iterator[TrialRecord]:
        return self._read(sorted((p for p in self._places.values() if p.cell_index == index), key=lambda p: p.trial_id))

    def cell_of(self, trial_id: str) -> int:
        return self._places[trial_id].cell_index

    def line_of(self, trial_id: str) -> int:
        """The journal line that holds ``trial_id``'s record (1-based)."""
        return self._places[trial_id].lineno

    def raw(self, trial_id: str) -> dict:
        """The record as journaled, unslimmed (to copy it into another journal)."""
        p = self._places[trial_id]
        with open(self.path, "rb") as f:
            f.seek(p.offset)
            return json.loads(f.read(p.length))

    def get(self, trial_id: str) -> TrialRecord | None:
        p = self._places.get(trial_id)
        return next(self._read([p])) if p else None
