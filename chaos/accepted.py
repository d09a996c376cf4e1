"""Accepted violations: a baseline file a team commits, so CI fails on a new violation only.

Why: a pull-request CI cannot wait for a framework to fix a known violation (FI on LangGraph, say),
yet it must still fail on a new one. A baseline names the violations a team has accepted, each
with its reason and an optional expiry date::

    accepted:
      - property: FI
        framework: langgraph          # or cell: c001-*  (a cell id, glob patterns allowed)
        reason: no fork discriminator in LangGraph's API (our issue #12)
        expires: 2027-06-30           # optional: from this day on the entry accepts nothing
      - property: EO
        scenario: kill_point_sweep    # optional: only this scenario's cells
        cell: default
        reason: duplicate charge after a kill between the effect and the checkpoint; retried by the PSP

What it promises:

* ``load_baseline(path)`` is strict: an unknown key, a duplicate key, an unknown property, a missing
  reason, an entry that names neither a cell nor a framework, or a date that is not YYYY-MM-DD is a
  ``BaselineError`` naming the file and field (exit 3). It reads only a regular file of at most
  ``MAX_BASELINE_BYTES`` (a FIFO or ``/dev/zero`` is refused before any read) with at most
  ``MAX_ENTRIES`` entries (``chaos.inputfile``).
* ``apply_baseline(results, baseline, today)`` never changes the results: it returns a separate
  ``BaselineReport`` (``baseline.json`` in the run folder) saying which violations are accepted
  (with the entry's reason), which are new, which entries are stale (their cells now hold) or
  expired, and the exit code the run has under the baseline: accepted violations count as holding.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chaos.racer.errors import ChaosError
from chaos.records import RunResults

__all__ = ["Baseline", "BaselineEntry", "BaselineError", "BaselineReport", "apply_baseline", "load_baseline"]


# caps: a baseline is a short file a team reviews; past these, loading took seconds per megabyte
MAX_BASELINE_BYTES = 256_000
MAX_ENTRIES = 1_000
MAX_TEXT = 10_000
MAX_NAME = 300


class BaselineError(ChaosError):
    """A baseline file that cannot be used: names the file and field."""


class BaselineEntry(BaseModel):
    """One accepted violation: a property, where (cell and/or framework, optionally a scenario), why, until when."""

    model_config = ConfigDict(extra="forbid")

    property: str = Field(max_length=32)
    reason: str = Field(min_length=1, max_length=MAX_TEXT)
    cell: str | None = Field(None, max_length=MAX_NAME)
    framework: str | None = Field(None, max_length=MAX_NAME)
    scenario: str | None = Field(None, max_length=MAX_NAME)
    expires: dt.date | None = None

    @field_validator("property")
    @classmethod
    def _known_property(cls, v: str) -> str:
        from chaos.kinds import property_names

        if v not in (names := property_names()):
            raise ValueError(f"unknown property {v!r}; properties are: {', '.join(names)}")
        return v

    @model_validator(mode="after")
    def _somewhere(self) -> BaselineEntry:
        if self.cell is None and self.framework is None:
            raise ValueError("name the cell (a cell id or glob) or the framework the violation is accepted in")
        return self

    def label(self) -> str:
        where = " ".join(f"{k}={v}" for k, v in (("scenario", self.scenario), ("framework", self.framework), ("cell", self.cell)) if v)
        return f"{self.property} ({where})"

    def matches(self, scenario: str, cell_id: str, framework: str, prop: str) -> bool:
        return (
            prop == self.property
            and (self.scenario is None or self.scenario == scenario)
            and (self.framework is None or self.framework == framework)
            and (self.cell is None or fnmatch.fnmatchcase(cell_id, self.cell))
        )

    def expired(self, today: dt.date) -> bool:
        return self.expires is not None and today >= self.expires


class Baseline(BaseModel):
    model_config = ConfigDict(extra="forbid")

    about: str | None = Field(None, max_length=MAX_TEXT)
    accepted: list[BaselineEntry] = Field(default_factory=list, max_length=MAX_ENTRIES)
    _file: str = "<baseline>"


class Accepted(BaseModel):
    cell_id: str
    property: str
    reason: str
    entry: int  # index in the baseline's ``accepted`` list
    expires: dt.date | None = None


class NewViolation(BaseModel):
    cell_id: str
    property: str
    reason: str


class EntryNote(BaseModel):
    entry: int
    label: str
    note: str


class BaselineReport(BaseModel):
    """What a baseline made of a run (``baseline.json``); results.json is left as analysed."""

    baseline: str
    today: dt.date
    accepted: list[Accepted] = Field(default_factory=list)
    new: list[NewViolation] = Field(default_factory=list)
    stale: list[EntryNote] = Field(default_factory=list)  # matched verdicts all hold now: remove the entry
    expired: list[EntryNote] = Field(default_factory=list)  # would accept a violation, but its date has passed
    exit_code: int

    def accepted_reasons(self) -> dict[tuple[str, str], str]:
        """(cell id, property) -> the reason it was accepted, for JUnit and ``assert_holds``."""
        return {(a.cell_id, a.property): a.reason for a in self.accepted}

    def lines(self) -> list[str]:
        """What a person reads: one line per accepted violation, new violation, stale and expired entry."""
        out = [f"accepted: {a.cell_id} {a.property}: {a.reason}" for a in self.accepted]
        out += [f"NEW violation: {n.cell_id} {n.property}: {n.reason}" for n in self.new]
        out += [f"stale baseline entry {s.entry} {s.label}: {s.note}" for s in self.stale]
        out += [f"expired baseline entry {e.entry} {e.label}: {e.note}" for e in self.expired]
        return out


def _field(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def load_baseline(path: str | Path) -> Baseline:
    """Read and validate a baseline file; a ``BaselineError`` names the file and the field at fault."""
    from chaos.inputfile import read_text, strict_yaml

    p = Path(path)
    text = read_text(p, "baseline", MAX_BASELINE_BYTES, error=BaselineError, hint="name the baseline YAML file")
    data = strict_yaml(text, str(p), "baseline", error=BaselineError)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise BaselineError(f"{p}: a baseline is a mapping with an 'accepted:' list, not a {type(data).__name__}")
    try:
        baseline = Baseline.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key (keys: property, reason, cell, framework, scenario, expires)"
            if len(err["loc"]) == 1:
                msg = "unknown key (keys: about, accepted)"
        raise BaselineError(f"{p}: {_field(tuple(err['loc']))}: {msg}", hint="fix the baseline file") from None
    baseline._file = str(p)
    return baseline


def apply_baseline(results: RunResults, baseline: Baseline, today: dt.date | None = None) -> BaselineReport:
    """Judge ``results`` against ``baseline`` without changing them."""
    today = today or dt.date.today()
    accepted: list[Accepted] = []
    new: list[NewViolation] = []
    used: set[int] = set()
    expired_hits: dict[int, list[str]] = {}
    holding: dict[int, int] = {}
    for c in results.cells:
        for v in c.verdicts:
            hits = [i for i, e in enumerate(baseline.accepted) if e.matches(results.scenario, c.cell_id, c.framework, v.property)]
            if v.status == "holds":
                for i in hits:
                    holding[i] = holding.get(i, 0) + 1
            if v.status != "violated":
                continue
            live = [i for i in hits if not baseline.accepted[i].expired(today)]
            for i in hits:
                if i not in live:
                    expired_hits.setdefault(i, []).append(c.cell_id)
            if live:
                e = baseline.accepted[live[0]]
                used.update(live)
                accepted.append(Accepted(cell_id=c.cell_id, property=v.property, reason=e.reason, entry=live[0], expires=e.expires))
            else:
                new.append(NewViolation(cell_id=c.cell_id, property=v.property, reason=v.reason))
    stale = [
        EntryNote(entry=i, label=e.label(), note=f"accepts no violation here: {holding[i]} matching verdict(s) hold now; remove the entry")
        for i, e in enumerate(baseline.accepted)
        if i in holding and i not in used and i not in expired_hits
    ]
    expired = [
        EntryNote(
            entry=i,
            label=baseline.accepted[i].label(),
            note=f"expired {baseline.accepted[i].expires}; no longer accepts {', '.join(cells)}",
        )
        for i, cells in sorted(expired_hits.items())
    ]
    return BaselineReport(
        baseline=baseline._file,
        today=today,
        accepted=accepted,
        new=new,
        stale=stale,
        expired=expired,
        exit_code=_exit_code(results, {(a.cell_id, a.property) for a in accepted}),
    )


def _exit_code(results: RunResults, accepted: set[tuple[str, str]]) -> int:
    """The run's exit code with accepted violations counted as holding (a failed run stays 3)."""
    if results.exit_code == 3:
        return 3
    statuses = [
        "holds" if (c.cell_id, v.property) in accepted and v.status == "violated" else v.status for c in results.cells for v in c.verdicts
    ]
    if "violated" in statuses:
        return 1
    if "unknown" in statuses or any(c.failure for c in results.cells):
        return 2
    return 0


def write_baseline_report(run_dir: Path, report: BaselineReport, results: RunResults) -> None:
    """baseline.json beside results.json, and junit.xml again with the accepted ones skipped."""
    from chaos.racer.redact import redact_obj
    from chaos.reports.junit import write_junit
    from chaos.running.runfolder import write_atomic  # masked, atomic: as every file of a run folder

    write_atomic(run_dir / "baseline.json", report.model_dump_json(indent=2) + "\n")
    red = RunResults.model_validate(redact_obj(results.model_dump(mode="json"), keep_numbers=True))
    write_junit(run_dir / "junit.xml", [red], accepted=report.accepted_reasons())


def accept(results: RunResults, baseline: Baseline | str | Path, today: dt.date | None = None) -> BaselineReport:
    """Apply a baseline to a run's results: ``results.assert_holds`` then counts accepted violations
    as holding, and the run folder (if known) gets baseline.json and a junit.xml with them skipped."""
    loaded = baseline if isinstance(baseline, Baseline) else load_baseline(baseline)
    report = apply_baseline(results, loaded, today)
    results._accepted = report.accepted_reasons()
    if results.run_dir is not None and results.run_dir.is_dir():
        write_baseline_report(results.run_dir, report, results)
    return report
