"""Power-loss and torn-write crash states from one recording: the durable image of the store, as ALICE's persistence model takes it.

Why: a ``fault: power_loss`` sweep keeps each trial's store on chaos's lazy filesystem
(``chaos.lazyfs.fs``), which writes to its folder *below* only what was fsynced (metadata goes
straight through). What a power loss at a kill point leaves is therefore that folder as it stands
there, and it needs no kill: a recording victim frozen at the point (``chaos.kinds.crash_states``)
has made exactly the same writes and fsyncs as a victim killed there. So at each stop chaos asks
the filesystem for its durable image of the recording's store folder (``durable_image``: a copy of
the folder below, taken under the filesystem's lock, dropping nothing, so the recording goes on)
together with its account of what a power loss there would lose, the very answer ``power_loss``
gives a kill-mode trial. ``fault: torn`` is the same image plus the kept half of the last pending
write (any file but SQLite's ``-shm``), which the filesystem writes into the copy, not below:
``torn``'s answer, with the same write named.

The point's recovery then runs as a faulted trial's does, on a plain folder: the image is the
point trial's store (``run.store`` names the copy in the trial's own folder, same file name), and
``observations["fault"]`` holds the filesystem's account, so DU and CV (``chaos.kinds.faults``)
judge it exactly as they judge a killed trial.

What it promises: a recorded power-loss state is byte for byte the folder below the lazy
filesystem at that barrier of that run, which is what ``power_loss`` leaves a resumer after a
SIGKILL there (a torn state: with the same torn write, since a kill adds only ``-shm`` writes,
which ``torn`` never tears). One difference in the account, none in the bytes: SQLite's ``-shm`` is shared
memory, and the kernel hands a killed process's dirty ``-shm`` pages to the filesystem when it
closes the file, after the kill; a frozen process has not closed it. So the ``-shm`` writes a
recorded state's account lists may be fewer than a kill's; DU and CV read no ``-shm`` write
(it holds no durable state, and is never synced), and what is lost of every other file is the same.
Measured equal to kill mode at every point, both faults (``tests/test_recorded_power.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chaos.kinds.sweep_options import SweepOptions
from chaos.running.trial import TrialRun
from chaos.scenario.model import Cell

DURABLE_FAULTS = ("power_loss", "torn")  # the faults whose crash state is the lazy filesystem's durable image


def durable_fault(cell: Cell) -> str | None:
    """The cell's fault when its recorded crash states are durable images (None: the files as they stand)."""
    fault = SweepOptions.of(cell.scenario).fault
    return fault if fault in DURABLE_FAULTS else None


def not_capturable(run: TrialRun) -> str | None:
    """Why the recording ``run`` has no durable image to take (None: it has)."""
    if run.ctx.lazy is None:
        return "no lazy filesystem under the store: no durable image to copy"
    store = run.store.get("path")
    if not store or Path(store).parent != run.ctx.lazy.mount / run.store_folder:
        return "the store is not in the trial's folder on the lazy filesystem: no durable image to copy"
    return None


def capture(run: TrialRun, dest: Path) -> dict[str, Any] | str:
    """Copy the durable image of the recording's store folder into ``dest`` (a plain folder) and
    return what the fault there would lose (``observations["fault"]`` of the point's trial); or why
    it could not (the filesystem did not answer: the point runs in kill mode, whose trial then says so)."""
    assert run.ctx.lazy is not None  # not_capturable said so
    try:
        return run.ctx.lazy.durable_image(run.store_folder, dest, torn=durable_fault(run.cell) == "torn")
    except Exception as exc:  # the filesystem process died or refused: not the framework's fault
        return f"not recorded: the lazy filesystem did not copy its durable image ({type(exc).__name__}: {str(exc)[:200]})"


def restore(run: TrialRun, report: dict[str, Any]) -> None:
    """Make the point trial ``run`` (its folder holding the image) recover as a power_loss trial:
    its store is the copy in its own folder, and its fault account the recording's at the point."""
    name = Path(str(run.store["path"])).name
    run.store = {**run.store, "path": str(run.dir / name)}
    run.observations["fault"] = report
