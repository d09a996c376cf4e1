"""Where a run's work folder lives: in the run folder (default) or under a folder the user names.

The work folder holds every trial's files: the framework's checkpoint database, barrier arrival
files, racer results and logs (the run folder keeps the journal, the ledger and the reports).
``chaos run --work-in /dev/shm`` puts it on tmpfs.

Why that keeps what a kill sweep measures: every fault chaos injects kills processes, never the
machine. Data a process has written before it is SIGKILLed sits in the kernel's page cache and is
read back by the next process on either file system; an fsync's only effect is to wait for the
disk, which matters for power loss alone. The framework keeps its own settings either way (its
``synchronous`` mode, its WAL, its commits and fsync calls all happen; on tmpfs an fsync returns at
once). A sweep kills at deterministic barriers, so its per-boundary results do not depend on how
long a commit takes (``tests/test_sweep.py`` runs the full kill sweep of ``three_step`` on disk
and on tmpfs and compares every boundary).

Why it is not the default: a race's outcome depends on timing, and an fsync of a few
milliseconds on disk is part of the window racers contend over. On tmpfs that window shrinks, so
race cells measure a faster store than the one users run: results hold for tmpfs, not for disk.
The same holds for a sweep whose framework writes in the background (LangGraph durability
``async``/``exit``): whether a background commit finished when the process stopped at a barrier is
a matter of timing there. Use it for sweeps in ``sync`` durability, or compare cells only with
cells run the same way (run.json records ``work_dir``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from chaos.racer.errors import ChaosError
from chaos.racer.redact import redact_file_text


def check_work_in(work_in: Path | str) -> Path:
    """``work_in`` resolved, if chaos can make folders in it; else a one-line ChaosError.

    Checked by making (and removing) a folder there, before any run folder exists: a folder that
    exists but refuses new entries (``/proc``, a read-only mount) fails here, not mid-run."""
    base = Path(work_in)
    hint = "name an existing, writable folder, e.g. /dev/shm (tmpfs)"
    if not base.is_dir():
        raise ChaosError(f"--work-in {base}: no such folder", hint=hint)
    try:
        probe = tempfile.mkdtemp(prefix=".chaos-probe-", dir=base)
        Path(probe).rmdir()
    except OSError as exc:
        raise ChaosError(f"--work-in {base}: cannot make folders there: {exc.strerror or exc}", hint=hint) from None
    return base.resolve()


def work_folder(run_dir: Path, run_id: str, work_in: Path | str | None) -> Path:
    """The run's work folder: ``<run_dir>/work``, or ``<work_in>/chaos-work-<run_id>``."""
    if work_in is None:
        return Path(run_dir) / "work"
    return check_work_in(work_in) / f"chaos-work-{run_id}"


SCRUBBED = (".json", ".log", ".txt")


def scrub(work_dir: Path) -> int:
    """Mask secrets in the text files a kept work folder holds (racer specs carry the DSN; logs
    and results may quote it); returns how many files changed. Run after every racer is dead, so
    no racer reads a masked spec. Databases (checkpoints.sqlite) are the framework's own state and
    are left as they are."""
    changed = 0
    for f in Path(work_dir).rglob("*"):
        if f.suffix not in SCRUBBED or not f.is_file() or f.is_symlink():
            continue
        try:
            text = f.read_text(errors="surrogateescape")
            clean = redact_file_text(f.name, text)  # a spec or result stays valid JSON
            if clean != text:
                f.write_text(clean, errors="surrogateescape")
                changed += 1
        except OSError:
            continue  # a file that vanished or cannot be rewritten: the others still are
    return changed
